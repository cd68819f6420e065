//! Reflection over the compiled schema.
use std::sync::OnceLock;

use prost_reflect::{DescriptorPool, DynamicMessage, FieldDescriptor, MessageDescriptor, Value};

/// The encoded `FileDescriptorSet` of every `.proto` file of the schema (with imports and source
/// info), byte-exact as protox produced it, so custom options survive.
pub static DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/descriptor_set.bin"));

/// Full name of the root of the compatibility contract.
pub const ROOT_MESSAGE: &str = "xla.gpu.GpuExecutableProto";

/// Full name of the field option that marks a field as safe for older runtimes to drop.
pub const IGNORABLE_EXTENSION: &str = "xla.compat.ignorable";

/// The descriptor pool of the schema, decoded once.
pub fn descriptor_pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| match DescriptorPool::decode(DESCRIPTOR_SET) {
        Ok(pool) => pool,
        // The set is produced by this crate's build script from the checked-in schema; a failure
        // here is a build defect, not an input error.
        Err(e) => unreachable!("embedded descriptor set does not decode: {e}"),
    })
}

/// The descriptor of a generated message type.
pub fn message_descriptor<M: prost::Name>() -> MessageDescriptor {
    match descriptor_pool().get_message_by_name(&M::full_name()) {
        Some(d) => d,
        None => unreachable!("generated type {} missing from the pool", M::full_name()),
    }
}

/// Converts a generated message into a dynamic one (through its binary encoding).
pub fn to_dynamic<M: prost::Message + prost::Name>(message: &M) -> DynamicMessage {
    let bytes = message.encode_to_vec();
    match DynamicMessage::decode(message_descriptor::<M>(), bytes.as_slice()) {
        Ok(m) => m,
        Err(e) => unreachable!("re-decoding a generated {} failed: {e}", M::full_name()),
    }
}

/// Whether a field carries `[(xla.compat.ignorable) = true]`.
pub fn field_is_ignorable(field: &FieldDescriptor) -> bool {
    let Some(ext) = descriptor_pool().get_extension_by_name(IGNORABLE_EXTENSION) else {
        return false;
    };
    let options = field.options();
    if !options.has_extension(&ext) {
        return false;
    }
    matches!(options.get_extension(&ext).as_ref(), Value::Bool(true))
}

/// Replaces every value of the enum `enum_name` (full name) that `message` carries, at any depth
/// (singular and repeated fields, map values, oneof members), by `map` of it, through reflection
/// over the schema; returns how many values changed. A writer that renumbers an enum's values
/// calls this once on what it built instead of once per field that holds the enum, so a field
/// added to the schema later is covered without a new call site. `message` is left as it was
/// when nothing changes (or on an error, which a message this crate's types encoded cannot give:
/// its encoding decodes with the same schema).
pub fn map_enum_values<M: prost::Message + prost::Name + Default>(
    message: &mut M,
    enum_name: &str,
    mut map: impl FnMut(i32) -> i32,
) -> Result<usize, prost::DecodeError> {
    use prost_reflect::Kind;
    let mut dynamic = DynamicMessage::decode(
        message_descriptor::<M>(),
        message.encode_to_vec().as_slice(),
    )?;
    let is_the_enum = |kind: &Kind| matches!(kind, Kind::Enum(e) if e.full_name() == enum_name);
    let mut changed = 0;
    let mut apply = |n: &mut i32| {
        let m = map(*n);
        if m != *n {
            *n = m;
            changed += 1;
        }
    };
    // Iterative: nesting depth is the message's (while bodies, tuple shapes), never the stack's.
    let mut stack = vec![&mut dynamic];
    while let Some(m) = stack.pop() {
        for (field, value) in m.fields_mut() {
            // The kind of the values a list or a map holds (for a map: its value field's).
            let kind = match field.kind() {
                Kind::Message(entry) if field.is_map() => entry.map_entry_value_field().kind(),
                kind => kind,
            };
            let values: Vec<&mut Value> = match value {
                Value::List(items) => items.iter_mut().collect(),
                Value::Map(entries) => entries.values_mut().collect(),
                v => vec![v],
            };
            for v in values {
                match v {
                    Value::EnumNumber(n) if is_the_enum(&kind) => apply(n),
                    Value::Message(child) => stack.push(child),
                    _ => {}
                }
            }
        }
    }
    if changed > 0 {
        *message = M::decode(prost::Message::encode_to_vec(&dynamic).as_slice())?;
    }
    Ok(changed)
}

/// The numbers of the fields that messages of type `target` (full name) carry in `bytes`, an
/// encoding of `root`, at any depth, and that the schema does not declare: what a newer writer
/// added (a thunk kind a newer compiler emits, for `xla.gpu.ThunkProto`). Ascending, each once.
///
/// A walk over the wire form with the descriptors, not a decode: nothing is materialised, payloads
/// are borrowed and only fields of message type are entered, so it costs a pass over `bytes` and
/// no memory beyond the nesting. Fields of `bytes` that do not parse end the walk of their
/// message (the caller decoded the same bytes already; this only looks for names to report).
pub fn undeclared_fields(bytes: &[u8], root: &MessageDescriptor, target: &str) -> Vec<u32> {
    use prost_reflect::Kind;
    let mut found = std::collections::BTreeSet::new();
    // Iterative, with prost's own recursion limit as the bound: bytes prost decoded nest no
    // deeper than that, and hostile ones cannot grow the stack.
    const MAX_DEPTH: usize = 100;
    let mut stack = vec![(crate::wire::Fields::new(bytes), root.clone())];
    while let Some((mut fields, message)) = stack.pop() {
        let Some(Ok(field)) = fields.next() else {
            continue;
        };
        let is_target = message.full_name() == target;
        let descriptor = message.get_field(field.number);
        stack.push((fields, message));
        match (descriptor, field.value) {
            (None, _) if is_target => {
                found.insert(field.number);
            }
            (Some(d), crate::wire::Value::Bytes(payload)) if stack.len() < MAX_DEPTH => {
                if let Kind::Message(child) = d.kind() {
                    stack.push((crate::wire::Fields::new(payload), child));
                }
            }
            _ => {}
        }
    }
    found.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xla::gpu::{thunk_proto::Impl, SequentialThunkProto, ThunkProto};
    use prost::Message;

    const THUNK: &str = "xla.gpu.ThunkProto";

    #[test]
    fn undeclared_thunk_fields_are_found_at_any_depth() {
        // A sequential thunk holding a thunk whose only field is number 99 (empty message), then
        // a declared kind; and at the top level field 98.
        let inner = ThunkProto {
            r#impl: Some(Impl::SequentialThunk(SequentialThunkProto {
                thunks: vec![],
            })),
            ..Default::default()
        };
        let mut sequential = vec![0x0a, 0x03, 0x9a, 0x06, 0x00]; // thunks = 1: {99: ""}
        let inner_bytes = inner.encode_to_vec();
        sequential.push(0x0a);
        sequential.push(inner_bytes.len() as u8);
        sequential.extend_from_slice(&inner_bytes);
        let mut outer = vec![0x12, sequential.len() as u8]; // sequential_thunk = 2
        outer.extend_from_slice(&sequential);
        outer.extend_from_slice(&[0x92, 0x06, 0x00]); // field 98, empty
        let root = message_descriptor::<ThunkProto>();
        assert_eq!(undeclared_fields(&outer, &root, THUNK), vec![98, 99]);
        assert_eq!(
            undeclared_fields(&inner_bytes, &root, THUNK),
            Vec::<u32>::new()
        );
    }

    #[test]
    fn malformed_bytes_end_the_walk_without_a_panic() {
        let root = message_descriptor::<ThunkProto>();
        assert_eq!(
            undeclared_fields(&[0x92, 0x06], &root, THUNK),
            Vec::<u32>::new()
        );
        assert_eq!(
            undeclared_fields(&[0xff; 12], &root, THUNK),
            Vec::<u32>::new()
        );
    }
}
