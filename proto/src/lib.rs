//! The artifact schema: the protobuf messages that are the compatibility contract between the
//! ahead-of-time compiler and the runtime (`xla.gpu.GpuExecutableProto` and everything it reaches),
//! the GPU target configs both read (`stream_executor.GpuTargetConfigProto`), and the compat field
//! option (`xla.compat.ignorable`) that tells tools which fields older runtimes may drop.
//!
//! The `.proto` files under `proto/` are compiled at build time with protox (no protoc binary) into
//! prost types, and the encoded descriptor set is kept, custom options included, for reflection
//! ([`descriptor_pool`]), dynamic messages and the text format ([`to_text_format`],
//! [`parse_text_format`]).
//!
//! This crate owns no behaviour beyond encoding: it must not know how the compiler produces these
//! messages or how the runtime interprets them.
//!
//! # The face
//!
//! Modules are private; the crate root re-exports what the compiler, the runtime, the harness
//! and `schema_history` use:
//! - the contract facts both sides read: ABI and toolkit [`Version`]s, the compute-capability
//!   bounds ([`check_compute_capability`]), the [`WireClass`] of a field type, the custom-call
//!   targets of XLA:CPU that no GPU side runs ([`cpu_custom_call_library`]);
//! - target configs ([`load_target_config`], [`parse_target_config`]);
//! - bounded decoding ([`decode_limited`], [`decode_except`], which leaves chosen fields in wire
//!   form to stream over with [`WireFields`]), reflection and the text format.
//!
//! Four modules stay public because each is a namespace, not an implementation detail:
//! - [`xla`] and [`stream_executor`]: the prost types generated from the `.proto` files, one
//!   module per protobuf package (`xla.gpu` is [`xla::gpu`]), as prost lays them out;
//! - [`rollout`]: the staged-rollout table, one constant per move (`rollout::PARTITIONS`);
//! - [`fields`]: the wire field numbers, one constant per field, checked against the descriptors.
#![forbid(unsafe_code)]

mod contract;
mod conv_thunk;
pub mod fields;
mod gemm;
mod reflect;
pub mod rollout;
mod scan;
mod target;
mod text;
mod wire;

pub use contract::{
    check_compute_capability, cpu_custom_call_library, CapabilityOutOfRange, Version, WireClass,
    COMPUTE_CAPABILITY_MAJOR, COMPUTE_CAPABILITY_MINOR, CPU_TARGET_ADVICE,
};
pub use reflect::{
    descriptor_pool, field_is_ignorable, map_enum_values, message_descriptor, to_dynamic,
    undeclared_fields, DESCRIPTOR_SET, IGNORABLE_EXTENSION, ROOT_MESSAGE,
};
pub use scan::string_literal_end;
pub use target::{load_target_config, parse_target_config, TargetConfigError};
pub use text::{parse_text_format, parse_text_format_dynamic, to_text_format, TextFormatError};
pub use wire::{
    decode_except, Field as WireField, Fields as WireFields, Split, Value as WireValue,
};

/// Re-exported so that users of the generated types need no direct prost dependency.
pub use prost;
pub use prost_reflect;

/// Generated types of the `xla` package and its sub-packages.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod xla {
    include!(concat!(env!("OUT_DIR"), "/xla.rs"));

    /// `xla.gpu`: the executable and its thunks.
    pub mod gpu {
        include!(concat!(env!("OUT_DIR"), "/xla.gpu.rs"));
        pub use crate::conv_thunk::ConvolutionThunkProto;
    }

    /// `xla.buffer_assignment`: slices of buffer allocations.
    pub mod buffer_assignment {
        include!(concat!(env!("OUT_DIR"), "/xla.buffer_assignment.rs"));
    }
}

/// Generated types of the `stream_executor` package: compute capabilities, device descriptions,
/// target configs and ABI versions.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod stream_executor {
    include!(concat!(env!("OUT_DIR"), "/stream_executor.rs"));

    /// `stream_executor.dnn`: the convolution kinds and activations of cuDNN thunks.
    pub mod dnn {
        include!(concat!(env!("OUT_DIR"), "/stream_executor.dnn.rs"));
    }
}

/// Every kernel thunk of a thunk sequence, nested sequences (sequential, while condition and
/// body, conditional branches) included, in program order.
pub fn kernel_thunks_mut(
    thunks: &mut [xla::gpu::ThunkProto],
) -> Vec<&mut xla::gpu::KernelThunkProto> {
    use xla::gpu::thunk_proto::Impl;
    fn go<'a>(
        thunks: &'a mut [xla::gpu::ThunkProto],
        out: &mut Vec<&'a mut xla::gpu::KernelThunkProto>,
    ) {
        for t in thunks {
            match t.r#impl.as_mut() {
                Some(Impl::KernelThunk(k)) => out.push(k),
                Some(Impl::SequentialThunk(s)) => go(&mut s.thunks, out),
                Some(Impl::WhileThunk(w)) => {
                    for s in [&mut w.condition_thunk_sequence, &mut w.body_thunk_sequence]
                        .into_iter()
                        .flatten()
                    {
                        go(&mut s.thunks, out);
                    }
                }
                Some(Impl::ConditionalThunk(c)) => {
                    for b in &mut c.branch_thunks {
                        go(&mut b.thunks, out);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    go(thunks, &mut out);
    out
}

/// Decodes a message from protobuf binary, refusing input larger than `limit` bytes before
/// decoding anything.
pub fn decode_limited<M: prost::Message + Default>(
    bytes: &[u8],
    limit: usize,
) -> Result<M, DecodeError> {
    if bytes.len() > limit {
        return Err(DecodeError::TooLarge {
            size: bytes.len(),
            limit,
        });
    }
    M::decode(bytes).map_err(DecodeError::Malformed)
}

/// Why bytes could not be decoded into a message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input is larger than the caller's limit.
    #[error("serialized message is {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// Size of the input in bytes; nothing of it was decoded.
        size: usize,
        /// The `limit` the caller passed ([`decode_limited`], [`decode_except`]).
        limit: usize,
    },
    /// The bytes are not a valid encoding of the message.
    #[error("malformed protobuf: {}", describe_decode_error(.0))]
    Malformed(#[source] prost::DecodeError),
    /// Valid protobuf that this loader refuses to stream (see [`decode_except`]).
    #[error("unsupported encoding: {0}")]
    Unsupported(String),
}

/// Frames of a decode error's field path kept at each end when the middle is elided.
const DECODE_PATH_ENDS: usize = 3;

/// prost's description of a decode failure, made readable: fields named as in the `.proto`
/// (prost prints the Rust identifier `r#impl` for the `impl` oneof), and a field path longer than
/// a few frames (deep nesting: one frame per level, 200 levels of a hostile artifact gave a
/// 10 KB message) elided in the middle, with the count of frames left out.
pub fn describe_decode_error(e: &prost::DecodeError) -> String {
    let text = e.to_string().replace("r#", "");
    const PREFIX: &str = "failed to decode Protobuf message: ";
    let Some(rest) = text.strip_prefix(PREFIX) else {
        return text;
    };
    let parts: Vec<&str> = rest.split(": ").collect();
    // The frames are `Message.field`; the last part is the description.
    let Some((description, frames)) = parts.split_last() else {
        return text;
    };
    if frames.len() <= 2 * DECODE_PATH_ENDS + 1 {
        return text;
    }
    let (head, tail) = (
        frames.get(..DECODE_PATH_ENDS).unwrap_or_default(),
        frames
            .get(frames.len() - DECODE_PATH_ENDS..)
            .unwrap_or_default(),
    );
    format!(
        "{PREFIX}{}: … ({} more fields): {}: {description}",
        head.join(": "),
        frames.len() - 2 * DECODE_PATH_ENDS,
        tail.join(": ")
    )
}
