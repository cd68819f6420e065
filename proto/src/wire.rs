//! Decoding with some length-delimited fields left in their wire form.
//!
//! A loader that only *checks* a large embedded message (the runtime and the executable's
//! embedded HLO module) should not materialise it: prost's structs for it can be many times the
//! size of its bytes. [`decode_except`] decodes a message with the chosen fields skipped and
//! returns their payloads as slices of the input, to be streamed over with [`Fields`].
//!
//! Semantics are protobuf's: the other fields are merged in order exactly as `M::decode` would
//! (a message's encoding is the concatenation of its fields, and merging runs of fields one after
//! the other is decoding them together); a skipped field that occurs several times keeps every
//! payload in order (for a message field, their concatenation is the merged message).

use std::borrow::Cow;

use crate::DecodeError;

/// A message decoded by [`decode_except`], and the payloads of the fields it skipped.
#[derive(Debug)]
pub struct Split<'a, M> {
    /// The message without the skipped fields.
    pub message: M,
    /// `(field number, payload)` of each skipped occurrence, in input order.
    pub skipped: Vec<(u32, &'a [u8])>,
}

impl<'a, M> Split<'a, M> {
    /// The payload of skipped field `number`: its occurrences concatenated (borrowed when there
    /// is just one), `None` when it does not occur.
    pub fn payload(&self, number: u32) -> Option<Cow<'a, [u8]>> {
        let mut parts = self.occurrences(number);
        let first = parts.next()?;
        match parts.next() {
            None => Some(Cow::Borrowed(first)),
            Some(second) => {
                let mut all = first.to_vec();
                all.extend_from_slice(second);
                for p in parts {
                    all.extend_from_slice(p);
                }
                Some(Cow::Owned(all))
            }
        }
    }

    /// The payload of each occurrence of skipped field `number`, in input order (for a repeated
    /// field: its elements).
    pub fn occurrences(&self, number: u32) -> impl Iterator<Item = &'a [u8]> + '_ {
        self.skipped
            .iter()
            .filter(move |(n, _)| *n == number)
            .map(|&(_, b)| b)
    }
}

/// Decodes `bytes` as `M` except the length-delimited fields numbered in `skip`, whose payloads
/// are returned as slices of `bytes`. Refuses input larger than `limit` first, like
/// [`crate::decode_limited`]. A malformed top level (or a skipped field with a wire type other
/// than length-delimited) gives the error `M::decode` gives for the same bytes.
pub fn decode_except<'a, M: prost::Message + Default>(
    bytes: &'a [u8],
    limit: usize,
    skip: &[u32],
) -> Result<Split<'a, M>, DecodeError> {
    if bytes.len() > limit {
        return Err(DecodeError::TooLarge {
            size: bytes.len(),
            limit,
        });
    }
    let mut message = M::default();
    let mut skipped = Vec::new();
    let mut run = 0usize;
    let mut fields = Fields::new(bytes);
    loop {
        let field = match fields.next() {
            None => break,
            Some(Ok(f)) => f,
            // Let prost report (or accept) what this scanner refuses: same semantics, same errors.
            Some(Err(())) => return full_decode(bytes),
        };
        if !skip.contains(&field.number) {
            continue;
        }
        let Value::Bytes(payload) = field.value else {
            return full_decode(bytes);
        };
        message
            .merge(&bytes[run..field.start])
            .map_err(DecodeError::Malformed)?;
        skipped.push((field.number, payload));
        run = field.end;
    }
    message
        .merge(&bytes[run..])
        .map_err(DecodeError::Malformed)?;
    Ok(Split { message, skipped })
}

/// The fallback: prost decodes everything; the skipped fields are re-encoded on their own.
#[cold]
fn full_decode<'a, M: prost::Message + Default>(bytes: &[u8]) -> Result<Split<'a, M>, DecodeError> {
    M::decode(bytes).map_err(DecodeError::Malformed)?;
    // `M::decode` accepted what the scanner refused (a group, or a skipped field with another
    // wire type): nothing in this project's schemas does that, so refuse it plainly.
    Err(DecodeError::Unsupported(
        "a top-level field encoding this loader does not stream (a group, or a message field with a non-length-delimited wire type)".into(),
    ))
}

/// A field's value in wire form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 2: the payload.
    Bytes(&'a [u8]),
    /// Wire type 5.
    Fixed32(u32),
}

impl Value<'_> {
    /// A varint's value as `i64` (two's complement, as protobuf's `int64`/`int32`).
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Varint(v) => Some(v as i64),
            _ => None,
        }
    }
}

/// One field of a message in wire form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field<'a> {
    /// The field number.
    pub number: u32,
    /// Its value as the wire type gives it; a length-delimited one borrows from the input.
    pub value: Value<'a>,
    /// Byte offset of its key in the message.
    pub start: usize,
    /// Byte offset one past its value.
    pub end: usize,
}

/// Iterates over the fields of one message's encoding, without decoding their values further.
/// Yields `Err(())` once (then stops) on malformed input or a group (wire types 3 and 4).
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    bytes: &'a [u8],
    pos: usize,
    failed: bool,
}

impl<'a> Fields<'a> {
    /// The fields of `bytes` (one message's encoding).
    pub fn new(bytes: &'a [u8]) -> Self {
        Fields {
            bytes,
            pos: 0,
            failed: false,
        }
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = *self.bytes.get(self.pos)?;
            self.pos += 1;
            if i == 9 && b > 1 {
                return None;
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    fn field(&mut self) -> Option<Field<'a>> {
        let start = self.pos;
        let key = self.varint()?;
        let number = u32::try_from(key >> 3).ok().filter(|&n| n != 0)?;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => Value::Fixed64(u64::from_le_bytes(self.take(8)?.try_into().ok()?)),
            2 => {
                let n = usize::try_from(self.varint()?).ok()?;
                Value::Bytes(self.take(n)?)
            }
            5 => Value::Fixed32(u32::from_le_bytes(self.take(4)?.try_into().ok()?)),
            _ => return None,
        };
        Some(Field {
            number,
            value,
            start,
            end: self.pos,
        })
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<Field<'a>, ()>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.bytes.len() {
            return None;
        }
        match self.field() {
            Some(f) => Some(Ok(f)),
            None => {
                self.failed = true;
                Some(Err(()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xla::gpu::GpuExecutableProto;
    use prost::Message;

    fn sample() -> GpuExecutableProto {
        GpuExecutableProto {
            module_name: "m".into(),
            hlo_module_with_config: Some(crate::xla::HloModuleProtoWithConfig {
                hlo_module: Some(crate::xla::HloModuleProto {
                    name: "h".into(),
                    entry_computation_id: 7,
                    ..Default::default()
                }),
                config: None,
            }),
            binary: vec![1, 2, 3],
            ..Default::default()
        }
    }

    #[test]
    fn skipping_a_field_decodes_the_rest_and_returns_its_payload() {
        let full = sample();
        let bytes = full.encode_to_vec();
        let split: Split<'_, GpuExecutableProto> = decode_except(&bytes, 1 << 20, &[1]).unwrap();
        let mut want = full.clone();
        let hlo = want.hlo_module_with_config.take().unwrap();
        assert_eq!(split.message, want);
        assert_eq!(split.payload(1).unwrap().as_ref(), hlo.encode_to_vec());
        assert!(split.payload(2).is_none());
    }

    #[test]
    fn repeated_occurrences_concatenate_into_the_merged_message() {
        let a = sample();
        let b = GpuExecutableProto {
            hlo_module_with_config: Some(crate::xla::HloModuleProtoWithConfig {
                hlo_module: Some(crate::xla::HloModuleProto {
                    id: 3,
                    ..Default::default()
                }),
                config: None,
            }),
            ..Default::default()
        };
        let mut bytes = a.encode_to_vec();
        bytes.extend(b.encode_to_vec());
        let split: Split<'_, GpuExecutableProto> = decode_except(&bytes, 1 << 20, &[1]).unwrap();
        let merged = GpuExecutableProto::decode(bytes.as_slice()).unwrap();
        let hlo = crate::xla::HloModuleProtoWithConfig::decode(split.payload(1).unwrap().as_ref())
            .unwrap();
        assert_eq!(Some(hlo), merged.hlo_module_with_config);
        assert_eq!(split.skipped.len(), 2);
    }

    #[test]
    fn malformed_input_gives_prost_s_error() {
        for bad in [
            &[0x0a, 0xff, 0xff][..],
            &[0x08],
            &[0x00, 0x01],
            &[0x12, 0x05, 0x01],
        ] {
            let want = GpuExecutableProto::decode(bad).unwrap_err().to_string();
            let got = decode_except::<GpuExecutableProto>(bad, 1 << 20, &[1]).unwrap_err();
            assert_eq!(got.to_string(), format!("malformed protobuf: {want}"));
        }
        assert!(matches!(
            decode_except::<GpuExecutableProto>(&[0; 8], 4, &[1]),
            Err(DecodeError::TooLarge { size: 8, limit: 4 })
        ));
    }

    #[test]
    fn fields_iterates_wire_values() {
        let bytes = sample().encode_to_vec();
        let numbers: Vec<u32> = Fields::new(&bytes).map(|f| f.unwrap().number).collect();
        assert_eq!(numbers, vec![1, 4, 8]);
        let mut f = Fields::new(&[0x08, 0x96, 0x01, 0x0b]);
        assert_eq!(f.next().unwrap().unwrap().value, Value::Varint(150));
        assert_eq!(f.next(), Some(Err(())));
        assert_eq!(f.next(), None);
    }
}
