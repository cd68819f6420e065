//! Wire field numbers that code outside this crate needs by number: the fields a loader leaves in
//! wire form ([`crate::decode_except`]) and streams over. Each constant names its message
//! and field in [`ALL`], and a test checks every one against the compiled descriptor pool, so a
//! renumbering in the `.proto` files cannot leave a hand-typed copy behind.

/// Declares each constant and its row in [`ALL`] from one line, so no constant can miss the check.
macro_rules! field_numbers {
    ($($(#[$doc:meta])* $name:ident = $message:literal . $field:literal : $number:literal;)*) => {
        $($(#[$doc])* pub const $name: u32 = $number;)*

        /// Every constant of this module: (constant, message full name, field name, number).
        pub const ALL: &[(&str, &str, &str, u32)] =
            &[$((stringify!($name), $message, $field, $name),)*];
    };
}

field_numbers! {
    /// The embedded module, which the runtime checks by streaming over it.
    EXECUTABLE_HLO_MODULE_WITH_CONFIG = "xla.gpu.GpuExecutableProto"."hlo_module_with_config": 1;
    /// The entry thunk sequence, which the runtime decodes one thunk at a time.
    EXECUTABLE_THUNKS = "xla.gpu.GpuExecutableProto"."thunks": 13;
    /// The module inside `hlo_module_with_config`.
    MODULE_WITH_CONFIG_HLO_MODULE = "xla.HloModuleProtoWithConfig"."hlo_module": 1;
    /// Its config (replica and partition counts).
    MODULE_WITH_CONFIG_CONFIG = "xla.HloModuleProtoWithConfig"."config": 2;
    /// A module's computations, streamed one at a time.
    MODULE_COMPUTATIONS = "xla.HloModuleProto"."computations": 3;
    /// A computation's name, read from the wire so it can be borrowed from the bytes.
    COMPUTATION_NAME = "xla.HloComputationProto"."name": 1;
    /// A computation's instructions, streamed one at a time.
    COMPUTATION_INSTRUCTIONS = "xla.HloComputationProto"."instructions": 2;
    /// A computation's execution thread, read from the wire as its name is.
    COMPUTATION_EXECUTION_THREAD = "xla.HloComputationProto"."execution_thread": 8;
    /// An instruction's name, read to locate an instruction that does not decode.
    INSTRUCTION_NAME = "xla.HloInstructionProto"."name": 1;
}

#[cfg(test)]
mod tests {
    use super::ALL;

    #[test]
    fn every_constant_is_the_descriptors_number() {
        let pool = crate::descriptor_pool();
        let mut wrong = Vec::new();
        for &(constant, message, field, number) in ALL {
            let found = pool
                .get_message_by_name(message)
                .and_then(|m| m.get_field_by_name(field))
                .map(|f| f.number());
            if found != Some(number) {
                wrong.push(format!(
                    "{constant} = {number}, but {message}.{field} is {found:?} in the schema"
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn constants_are_distinct_per_message() {
        let mut seen = std::collections::HashSet::new();
        for &(constant, message, _, number) in ALL {
            assert!(
                seen.insert((message, number)),
                "{constant}: {message} field {number} has two constants"
            );
        }
    }
}
