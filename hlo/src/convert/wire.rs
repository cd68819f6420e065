//! The wire-form source of the walk: an `HloModuleProtoWithConfig` read one computation header
//! and one instruction at a time.

// The field numbers read from the wire: `proto`'s constants, each checked against the schema.
use proto::fields::{
    COMPUTATION_EXECUTION_THREAD, COMPUTATION_INSTRUCTIONS, COMPUTATION_NAME, INSTRUCTION_NAME,
    MODULE_COMPUTATIONS,
};
use proto::xla as px;

use super::checks::{CompHead, Source, Visit};
use super::{invalid, ConvertError};

/// An `HloModuleProtoWithConfig` in wire form: the config and the module without its
/// computations are decoded; each computation's header, then each instruction, is decoded as
/// the walk reaches it. Every byte is decoded by prost at some point, so what prost would reject
/// is rejected.
pub(super) struct Wire<'p> {
    entry_id: i64,
    entry_name: String,
    config: Option<px::HloModuleConfigProto>,
    /// Whether frontend attributes are set at the legacy 18, and at XLA's 19 (non-empty).
    frontend_attributes_set: (bool, bool),
    /// Each computation: `id`, `root_id` and its encoding.
    computations: Vec<(i64, i64, &'p [u8])>,
}

pub(super) fn malformed(what: &str, e: impl std::fmt::Display) -> ConvertError {
    invalid("<module>", "", format!("{what} is not valid protobuf: {e}"))
}

impl<'p> Wire<'p> {
    /// `module` is the encoding of an `HloModuleProto` (every occurrence concatenated).
    pub(super) fn new(
        module: &'p [u8],
        config: Option<px::HloModuleConfigProto>,
    ) -> Result<Self, ConvertError> {
        use proto::decode_except;
        // Everything but the computations is decoded (so the bytes are checked as prost would),
        // and dropped once the entry's id and name are read.
        let split = decode_except::<px::HloModuleProto>(module, usize::MAX, &[MODULE_COMPUTATIONS])
            .map_err(|e| malformed("hlo_module", e))?;
        let mut computations = Vec::new();
        for bytes in split.occurrences(MODULE_COMPUTATIONS) {
            let head = decode_except::<px::HloComputationProto>(
                bytes,
                usize::MAX,
                &[COMPUTATION_INSTRUCTIONS],
            )
            .map_err(|e| malformed("hlo_module.computations", e))?;
            computations.push((head.message.id, head.message.root_id, bytes));
        }
        Ok(Wire {
            entry_id: split.message.entry_computation_id,
            frontend_attributes_set: super::checks::attributes_set(
                split.message.frontend_attributes_legacy.as_ref(),
                split.message.frontend_attributes.as_ref(),
            ),
            entry_name: split.message.entry_computation_name,
            config,
            computations,
        })
    }
}

impl<'p> Source<'p> for Wire<'p> {
    fn heads(&self) -> Result<Vec<CompHead<'p>>, ConvertError> {
        // Names borrow from the wire bytes (the decoded copies do not live long enough).
        self.computations
            .iter()
            .map(|&(id, root_id, bytes)| {
                Ok(CompHead {
                    id,
                    name: last_string(bytes, COMPUTATION_NAME)?,
                    root_id,
                    execution_thread: last_string(bytes, COMPUTATION_EXECUTION_THREAD)?,
                })
            })
            .collect()
    }
    fn instructions(&self, index: usize, visit: &mut Visit<'_, 'p>) -> Result<(), ConvertError> {
        use proto::prost::Message;
        let Some(&(_, _, bytes)) = self.computations.get(index) else {
            return Ok(());
        };
        for field in proto::WireFields::new(bytes) {
            let field = field.map_err(|()| malformed("hlo_module.computations", "bad field"))?;
            let (COMPUTATION_INSTRUCTIONS, proto::WireValue::Bytes(ib)) =
                (field.number, field.value)
            else {
                continue;
            };
            let ip = px::HloInstructionProto::decode(ib)
                .map_err(|e| malformed("hlo_module.computations.instructions", e))?;
            visit(last_string(ib, INSTRUCTION_NAME)?, &ip)?;
        }
        Ok(())
    }
    fn entry(&self) -> (i64, &str) {
        (self.entry_id, &self.entry_name)
    }
    fn config(&self) -> Option<&px::HloModuleConfigProto> {
        self.config.as_ref()
    }
    fn frontend_attributes_set(&self) -> (bool, bool) {
        self.frontend_attributes_set
    }
}

/// The last occurrence of string field `number` in a message's encoding ("" when absent), as
/// protobuf reads a repeated singular field.
pub(super) fn last_string(bytes: &[u8], number: u32) -> Result<&str, ConvertError> {
    let mut last: &[u8] = &[];
    for f in proto::WireFields::new(bytes) {
        let f = f.map_err(|()| malformed("hlo_module", "bad field"))?;
        if let (true, proto::WireValue::Bytes(b)) = (f.number == number, f.value) {
            last = b;
        }
    }
    std::str::from_utf8(last).map_err(|e| malformed("hlo_module", e))
}
