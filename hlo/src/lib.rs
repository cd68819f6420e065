//! HLO front end: the IR (arenas and typed handles), the text parser and printer, the shape
//! verifier, the reference evaluator and conversion to and from `HloModuleProto`.
//!
//! This crate knows nothing of GPUs, thunks, buffer assignment or artifacts: the compiler and the
//! runtime both use it, and neither may leak its types into the other through here.

pub mod ir;
pub mod shape;

pub use ir::{Computation, ComputationId, HloModule, InstrId, Instruction, Opcode};
pub use shape::{Layout, PrimitiveType, Shape};
