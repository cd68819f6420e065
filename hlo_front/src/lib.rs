//! The front ends beyond HLO text, all building the same [`hlo::HloModule`]: StableHLO as MLIR
//! text and as portable bytecode (VHLO), with CHLO lowered and Shardy (`sdy`) shardings
//! imported ([`stablehlo`], [`sdy`]), serialized JAX `Exported` ([`jax_export`]), and
//! [`input`], the one place a module file's format is detected and read (HLO text through
//! `hlo_text`, `HloModuleProto` through `hlo::convert`), which every CLI uses.
#![forbid(unsafe_code)]

pub mod input;
pub mod jax_export;
pub mod sdy;
pub mod stablehlo;
