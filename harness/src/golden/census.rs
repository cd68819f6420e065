//! The census of an artifact: every schema construct it uses, by reflection.
//!
//! Walking the artifact as a `DynamicMessage` over the schema's descriptor pool yields, for every
//! field that is set (non-default), the message (`xla.gpu.KernelThunkProto`), the field
//! (`xla.gpu.KernelThunkProto.kernel_name`; oneof variants are fields, so a thunk kind appears as
//! `xla.gpu.ThunkProto.kernel_thunk`) and, for enum fields, the enum value
//! (`xla.PrimitiveType.F32`). Two constructs come from the data rather than the schema: the HLO
//! opcodes of the embedded module (`opcode:add`) and the custom-call targets the runtime must
//! resolve (`registry:NAME`).
use std::collections::BTreeSet;

use proto::prost_reflect::{DynamicMessage, Kind, ReflectMessage, Value};
use proto::xla::gpu::{thunk_proto::Impl, GpuExecutableProto, ThunkProto};

/// Deepest message nesting walked (the schema's own nesting is far shallower).
const MAX_DEPTH: usize = 64;

/// Every construct the artifact uses, sorted.
pub fn census_of(executable: &GpuExecutableProto) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk(&proto::to_dynamic(executable), &mut out, 0);
    if let Some(module) = executable
        .hlo_module_with_config
        .as_ref()
        .and_then(|m| m.hlo_module.as_ref())
    {
        for instr in module.computations.iter().flat_map(|c| &c.instructions) {
            out.insert(format!("opcode:{}", instr.opcode));
        }
    }
    let mut stack: Vec<&ThunkProto> = executable.thunks.iter().collect();
    while let Some(thunk) = stack.pop() {
        match &thunk.r#impl {
            Some(Impl::CustomCallThunk(c)) => {
                out.insert(format!("registry:{}", c.target_name));
            }
            Some(Impl::SequentialThunk(s)) => stack.extend(&s.thunks),
            Some(Impl::WhileThunk(w)) => {
                for seq in [&w.condition_thunk_sequence, &w.body_thunk_sequence]
                    .into_iter()
                    .flatten()
                {
                    stack.extend(&seq.thunks);
                }
            }
            Some(Impl::ConditionalThunk(c)) => {
                for seq in &c.branch_thunks {
                    stack.extend(&seq.thunks);
                }
            }
            _ => {}
        }
    }
    out
}

fn walk(message: &DynamicMessage, out: &mut BTreeSet<String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let desc = message.descriptor();
    out.insert(desc.full_name().to_owned());
    for (field, value) in message.fields() {
        out.insert(field.full_name().to_owned());
        let kind = field.kind();
        let mut visit = |v: &Value| match (v, &kind) {
            (Value::Message(m), _) => walk(m, out, depth + 1),
            (Value::EnumNumber(n), Kind::Enum(e)) => {
                out.insert(e.get_value(*n).map_or_else(
                    || format!("{}.<{n}>", e.full_name()),
                    |v| format!("{}.{}", e.full_name(), v.name()),
                ));
            }
            _ => {}
        };
        match value {
            Value::List(items) => items.iter().for_each(&mut visit),
            Value::Map(entries) => {
                // Map entries are messages in the schema; their value part is what can nest.
                for v in entries.values() {
                    if let Value::Message(m) = v {
                        walk(m, out, depth + 1);
                    }
                }
            }
            v => visit(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::xla::gpu::{CustomCallThunkProto, KernelThunkProto, SequentialThunkProto};

    #[test]
    fn census_names_fields_oneof_variants_enums_and_registry_targets() {
        let exe = GpuExecutableProto {
            module_name: "m".into(),
            thunks: vec![ThunkProto {
                thunk_info: None,
                r#impl: Some(Impl::SequentialThunk(SequentialThunkProto {
                    thunks: vec![
                        ThunkProto {
                            thunk_info: None,
                            r#impl: Some(Impl::KernelThunk(KernelThunkProto {
                                kernel_name: "k".into(),
                                args_shape: vec![proto::xla::ShapeProto {
                                    element_type: proto::xla::PrimitiveType::F32 as i32,
                                    ..Default::default()
                                }],
                                ..Default::default()
                            })),
                        },
                        ThunkProto {
                            thunk_info: None,
                            r#impl: Some(Impl::CustomCallThunk(CustomCallThunkProto {
                                target_name: "my_target".into(),
                                ..Default::default()
                            })),
                        },
                    ],
                })),
            }],
            ..Default::default()
        };
        let census = census_of(&exe);
        for want in [
            "xla.gpu.GpuExecutableProto",
            "xla.gpu.GpuExecutableProto.module_name",
            "xla.gpu.GpuExecutableProto.thunks",
            "xla.gpu.ThunkProto.sequential_thunk",
            "xla.gpu.ThunkProto.kernel_thunk",
            "xla.gpu.ThunkProto.custom_call_thunk",
            "xla.gpu.KernelThunkProto.kernel_name",
            "xla.ShapeProto.element_type",
            "xla.PrimitiveType.F32",
            "registry:my_target",
        ] {
            assert!(census.contains(want), "{want} missing from {census:#?}");
        }
        assert!(!census.contains("xla.gpu.ThunkProto.gemm_thunk"));
        assert!(
            !census.contains("xla.gpu.KernelThunkProto.shmem_bytes"),
            "unset fields are not used"
        );
    }
}
