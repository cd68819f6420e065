//! Conversion between the IR and `xla.HloModuleProto` (what artifacts embed).
//!
//! [`to_proto`] is deterministic: instruction ids are assigned in program order across the
//! module, computation ids are computation indices, so the same module always gives the same
//! bytes. [`from_proto`] treats its input as untrusted (it reads artifacts): every id, opcode,
//! element type, shape and literal is validated, and the call graph must be acyclic; each problem
//! is a [`ConvertError`] naming the computation and instruction. [`check_proto`] runs the same
//! structural checks (ids, opcodes, shapes, call graph) with the same errors but builds no IR and
//! decodes no attributes: what a runtime that never executes the HLO needs.
//!
//! What the text format carries but the proto cannot (unmodelled attributes kept verbatim by the
//! parser, unmodelled layout or metadata text, elided constants) is refused by [`to_proto`] with
//! [`ConvertError::Unrepresentable`] rather than dropped, except metadata keys the proto has no
//! field for, which are debug information only and are dropped.
//!
//! The submodules split by direction and concern: `types` (element types), `shapes`, `literals`,
//! `dims` (the dimension-number attributes, both directions from one field list), `to_proto`,
//! `checks` (the structural walk both readers share; its wire-form source is `wire`) and
//! `from_proto`.

mod checks;
mod dims;
mod error;
mod from_proto;
mod literals;
mod shapes;
mod to_proto;
mod types;
mod wire;

pub use checks::{check_proto, check_proto_bytes, ProtoSummary};
pub use error::{ProtoError, ShapeProtoError, Unrepresentable};
pub use from_proto::from_proto;
pub use shapes::{check_shape, shape_from_proto, shape_to_proto};
pub use to_proto::to_proto;
pub use types::{element_type_from_proto, element_type_to_proto};

/// Why a module could not be converted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// Something in the IR has no representation in `HloModuleProto`.
    #[error("{computation}/{instruction}: {what} cannot be represented in HloModuleProto")]
    Unrepresentable {
        /// Computation name.
        computation: String,
        /// Instruction name (empty for module-level items).
        instruction: String,
        /// What cannot be represented.
        what: String,
    },
    /// The proto names an opcode this build does not know.
    #[error("{computation}/{instruction}: unknown opcode \"{opcode}\"")]
    UnknownOpcode {
        /// Computation name.
        computation: String,
        /// Instruction name.
        instruction: String,
        /// The opcode string from the proto.
        opcode: String,
    },
    /// The proto is inconsistent.
    #[error("{computation}/{instruction}: {message}")]
    Invalid {
        /// Computation name (or `<module>`).
        computation: String,
        /// Instruction name (empty for computation- or module-level problems).
        instruction: String,
        /// What is wrong, with the bad value and the bound.
        message: String,
    },
}

fn invalid(computation: &str, instruction: &str, message: impl Into<String>) -> ConvertError {
    ConvertError::Invalid {
        computation: computation.to_owned(),
        instruction: instruction.to_owned(),
        message: message.into(),
    }
}
