//! The HLO IR: shapes and primitive types ([`shape`]), host literals ([`literal`], [`complex`]),
//! instructions, computations and modules in arenas with typed handles ([`ir`], sharding
//! included), conversion to and from `HloModuleProto` ([`convert`]) and the excess-precision
//! rewrite both back ends run ([`precision`]).
//!
//! This is the part of HLO the runtime needs (it checks an artifact's embedded module and reads
//! its shapes), so it holds no front end, verifier or evaluator: those are the crates
//! `hlo_text` (HLO text), `hlo_front` (StableHLO, jax.export, format detection), `hlo_verify`
//! and `hlo_eval`, and `ci/crate_deps.sh` fails if the runtime ever reaches them. It knows
//! nothing of GPUs, thunks, buffer assignment or artifacts: the compiler and the runtime both use
//! it, and neither may leak its types into the other through here.
#![forbid(unsafe_code)]

pub mod complex;
pub mod complex_math;
pub mod convert;
pub mod ir;
pub mod literal;
pub mod precision;
pub mod shape;

pub use ir::{Computation, ComputationId, HloModule, InstrId, Instruction, Opcode};
pub use shape::{Layout, PrimitiveType, Shape, MAX_ELEMENTS};
