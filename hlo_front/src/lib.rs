//! The front ends beyond HLO text, all building the same [`hlo::HloModule`]: StableHLO as MLIR
//! text and as portable bytecode (VHLO), with CHLO lowered and Shardy (`sdy`) shardings
//! imported ([`parse_stablehlo`], [`parse_bytecode`], [`parse_sdy_mesh`]), serialized JAX
//! `Exported` ([`read_exported`]), and [`read_module`], the one place a module file's format is
//! detected and read (HLO text through `hlo_text`, `HloModuleProto` through `hlo::convert`),
//! which every CLI uses.
#![forbid(unsafe_code)]

// The public face is the `pub use` list below, by front end; the modules are how the crate is
// kept. Names that would be ambiguous at the root say their front end (`parse_stablehlo`,
// `parse_sdy_mesh`, `read_exported`).
mod input;
mod jax_export;
mod sdy;
mod stablehlo;

// Reading a module file of any format: detection by extension and content, bounded reads.
pub use input::{
    check_supported, format_of, parse_as, read_bounded, read_module, sniff, Content, Format,
    InputError, MAX_MODULE_BYTES, UNSUPPORTED_OPCODES,
};
// Serialized JAX `Exported` (`jax.export`).
pub use jax_export::{
    read as read_exported, Aval, DType, Dim, DisabledCheck, Exported, ExportedError, PyTree,
    Sharding as ExportedSharding, MAX_TREE_DEPTH, MAX_TREE_NODES,
};
// Shardy (`sdy`) meshes and shardings, as JAX writes them.
pub use sdy::{
    canonical_iota, parse_manual_axes as parse_sdy_manual_axes, parse_mesh as parse_sdy_mesh,
    parse_per_value as parse_sdy_per_value, parse_tensor_sharding as parse_sdy_sharding,
    to_hlo_sharding as sdy_to_hlo_sharding, Mesh as SdyMesh, Meshes as SdyMeshes, SdyError,
    TensorSharding as SdyTensorSharding,
};
// StableHLO as portable bytecode (VHLO).
pub use stablehlo::bytecode::{
    functions_as_text, parse_bytecode, to_stablehlo_text, to_stablehlo_text_adapted, vhlo_ops,
    BytecodeError, FunctionTexts, MainAdapter, MAX_ATTR_DEPTH, MAX_BYTECODE_VERSION,
    MAX_NESTING as MAX_BYTECODE_NESTING, MAX_VHLO_VERSION,
};
// StableHLO as MLIR text (CHLO lowered, Shardy imported).
pub use stablehlo::{
    chlo_ops, parse_module as parse_stablehlo,
    parse_module_unverified as parse_stablehlo_unverified, supported_ops as stablehlo_ops,
    MAX_CONSTANT_ELEMENTS, MAX_NESTING, MAX_RANK,
};
