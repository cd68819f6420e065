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
mod sharding;
mod to_proto;
mod types;
mod wire;

pub use checks::{check_proto, check_proto_bytes, ProtoSummary};
pub use error::{ProtoError, ShapeProtoError, Unrepresentable};
pub use from_proto::from_proto;
pub use shapes::{check_shape, shape_from_proto, shape_to_proto};
pub use to_proto::{program_shape_at_xla_numbers, to_proto, to_proto_with};
pub use types::{element_type_at_xla_number, element_type_from_proto, element_type_to_proto};

/// Where [`to_proto_with`] writes what is moving to XLA's numbers (issue 19, docs/artifact.md
/// "Every disagreement, classified"). Each is stage 1 of a staged rollout (docs/compatibility.md):
/// both readers ([`from_proto`], [`check_proto`]) take the legacy number or XLA's (the module's
/// frontend attributes never at both: [`ConvertError::BothNumbers`]; a config that uses XLA's 33
/// or 27 is read in XLA's schema, its 23 and 24 ignored), and the writer uses XLA's only when
/// asked, because a reader older than 2026-12-01 does not know it. `WriteOptions::default()` is
/// the legacy numbers, what [`to_proto`] writes; the compiler sets these from its
/// `CompileOptions`, whose defaults may flip on 2026-12-15 at the earliest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Write `HloModuleConfigProto.allow_spmd_sharding_propagation_to_parameters` / `_output` at
    /// XLA's 33 and 27 instead of 23 and 24 (XLA's `memory_space_assignment_config` and
    /// `phase_ordering_config`). A reader before 2026-12-01 would drop the lists.
    pub spmd_propagation_at_xla_numbers: bool,
    /// Write the module's `HloModuleProto.frontend_attributes` at XLA's 19 instead of 18 (XLA's
    /// `buffer_donor`). A reader before 2026-12-01 would drop them.
    pub frontend_attributes_at_19: bool,
    /// Write the element types `F4E2M1FN` and `F8E8M0FNU` as XLA's 32 and 33 instead of 30 and
    /// 31 (XLA's `S1` and `U1`), in every shape and literal of the module. A reader before
    /// 2026-12-01 refuses 32 and 33 (`unknown element type number 32`).
    pub narrow_floats_at_xla_numbers: bool,
    /// Leave out each dot's `PrecisionConfig.algorithm` (2), which readers before 2026-12-05
    /// drop silently (the compiler's staged rollout; every other writer keeps it).
    pub omit_dot_algorithm: bool,
}

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
    /// The module's frontend attributes are set (non-empty) at both XLA's 19 and the legacy 18
    /// (see [`WriteOptions`]): a writer sets one, so the module is not what any writer made.
    /// Only that field is refused so: the config's propagation lists are read at XLA's 33 and 27
    /// when either is set, and 23 and 24 are then XLA's own fields
    /// (`memory_space_assignment_config`, `phase_ordering_config`), valid next to them and
    /// ignored; element types have no two fields.
    #[error("<module>/: {message} sets both {field} ({number}) and its legacy number {legacy}; a module sets one")]
    BothNumbers {
        /// The message (`config`, `hlo_module`).
        message: &'static str,
        /// The field's name (XLA's, at `number`).
        field: &'static str,
        /// XLA's number.
        number: u32,
        /// The legacy number.
        legacy: u32,
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
