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
