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
