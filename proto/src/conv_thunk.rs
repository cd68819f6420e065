//! `xla.gpu.ConvolutionThunkProto`, decoded from either of the two forms XLA has written.
//!
//! XLA changed the type of `operand_buffers` (2) and `result_buffers` (3) in place: zml/xla's
//! `thunk.proto` at 1e203b533f (November 2025) declares them `BufferAllocationSliceProto`, the
//! XLA inside jaxlib 0.10.2 `ShapedSliceProto` (a slice and the shape stored in it). Both are
//! length-delimited, so the field's wire type does not tell them apart; the *first* field inside
//! each element does: a bare slice's fields are all varints (`offset`, `size`,
//! `buffer_allocation_index`), a shaped slice's are both messages (`slice`, `shape`). This
//! schema declares XLA's current type; this hand-written decoder also reads the old form, as a
//! `ShapedSliceProto` without a shape, so an artifact of either vintage loads (this project's
//! hand-written golden v9 has the old form). An element that mixes the two is prost's wire-type
//! error.
//!
//! prost-build generates every other message; this one is mapped here with `extern_path`
//! (`proto/build.rs`). Encoding always writes XLA's current form.
use prost::bytes::{Buf, BufMut};
use prost::encoding::{self, message, DecodeContext, WireType};
use prost::DecodeError;

use crate::xla::buffer_assignment::BufferAllocationSliceProto;
use crate::xla::gpu::{GpuConvDescriptorProto, ShapedSliceProto};

/// XLA's cuDNN convolution thunk: two operands, one result, an optional scratch buffer of
/// `conv_descriptor.scratch_size` bytes. Staged rollout: added 2026-12-04, emitted only behind
/// `CompileOptions::emit_convolution_thunk`; until then the compiler emits a convolution kernel.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct ConvolutionThunkProto {
    pub conv_descriptor: Option<GpuConvDescriptorProto>,
    /// The operands' slices (XLA's `ShapedSliceProto`; an old-form element has no `shape`).
    pub operand_buffers: Vec<ShapedSliceProto>,
    /// The results' slices (as `operand_buffers`).
    pub result_buffers: Vec<ShapedSliceProto>,
    pub scratch_buffer: Option<BufferAllocationSliceProto>,
}

impl prost::Name for ConvolutionThunkProto {
    const NAME: &'static str = "ConvolutionThunkProto";
    const PACKAGE: &'static str = "xla.gpu";
    fn full_name() -> String {
        "xla.gpu.ConvolutionThunkProto".into()
    }
    fn type_url() -> String {
        "/xla.gpu.ConvolutionThunkProto".into()
    }
}

impl prost::Message for ConvolutionThunkProto {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        if let Some(d) = &self.conv_descriptor {
            message::encode(1, d, buf);
        }
        message::encode_repeated(2, &self.operand_buffers, buf);
        message::encode_repeated(3, &self.result_buffers, buf);
        if let Some(s) = &self.scratch_buffer {
            message::encode(4, s, buf);
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        const NAME: &str = "ConvolutionThunkProto";
        let r = match tag {
            1 => message::merge(
                wire_type,
                self.conv_descriptor.get_or_insert_with(Default::default),
                buf,
                ctx,
            )
            .map_err(|e| (e, "conv_descriptor")),
            2 => merge_either(wire_type, &mut self.operand_buffers, buf, ctx)
                .map_err(|e| (e, "operand_buffers")),
            3 => merge_either(wire_type, &mut self.result_buffers, buf, ctx)
                .map_err(|e| (e, "result_buffers")),
            4 => message::merge(
                wire_type,
                self.scratch_buffer.get_or_insert_with(Default::default),
                buf,
                ctx,
            )
            .map_err(|e| (e, "scratch_buffer")),
            _ => return encoding::skip_field(wire_type, tag, buf, ctx),
        };
        r.map_err(|(mut e, field)| {
            e.push(NAME, field);
            e
        })
    }

    fn encoded_len(&self) -> usize {
        self.conv_descriptor
            .as_ref()
            .map_or(0, |d| message::encoded_len(1, d))
            + message::encoded_len_repeated(2, &self.operand_buffers)
            + message::encoded_len_repeated(3, &self.result_buffers)
            + self
                .scratch_buffer
                .as_ref()
                .map_or(0, |s| message::encoded_len(4, s))
    }

    fn clear(&mut self) {
        *self = Self::default();
    }
}

/// One element of `operand_buffers` / `result_buffers`, in whichever form it was written.
fn merge_either(
    wire_type: WireType,
    out: &mut Vec<ShapedSliceProto>,
    buf: &mut impl Buf,
    ctx: DecodeContext,
) -> Result<(), DecodeError> {
    let mut e = EitherSlice::default();
    message::merge(wire_type, &mut e, buf, ctx)?;
    out.push(e.shaped);
    Ok(())
}

/// Which form an element's fields have shown so far.
#[derive(Clone, Copy, PartialEq, Debug, Default)]
enum Form {
    #[default]
    Unknown,
    /// `BufferAllocationSliceProto`: varints at 1, 2, 3.
    Bare,
    /// `ShapedSliceProto`: messages at 1 and 2.
    Shaped,
}

/// A `ShapedSliceProto` that also accepts a bare slice's fields (decode only).
#[derive(Clone, PartialEq, Debug, Default)]
struct EitherSlice {
    shaped: ShapedSliceProto,
    form: Form,
}

impl EitherSlice {
    /// Records the form a field of `wire_type` implies; after a field of the other form it is
    /// prost's wire-type error (an element of neither message).
    fn see(&mut self, form: Form, wire_type: WireType) -> Result<(), DecodeError> {
        match self.form {
            Form::Bare if form != Form::Bare => {
                encoding::check_wire_type(WireType::Varint, wire_type)
            }
            Form::Shaped if form != Form::Shaped => {
                encoding::check_wire_type(WireType::LengthDelimited, wire_type)
            }
            _ => {
                self.form = form;
                Ok(())
            }
        }
    }
}

impl prost::Message for EitherSlice {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        self.shaped.encode_raw(buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match (tag, wire_type) {
            (1..=3, WireType::Varint) => {
                self.see(Form::Bare, wire_type)?;
                let s = self.shaped.slice.get_or_insert_with(Default::default);
                let field = match tag {
                    1 => &mut s.offset,
                    2 => &mut s.size,
                    _ => &mut s.buffer_allocation_index,
                };
                encoding::int64::merge(wire_type, field, buf, ctx)
            }
            (1, _) => {
                self.see(Form::Shaped, wire_type)?;
                let s = self.shaped.slice.get_or_insert_with(Default::default);
                message::merge(wire_type, s, buf, ctx)
            }
            (2, _) => {
                self.see(Form::Shaped, wire_type)?;
                let s = self.shaped.shape.get_or_insert_with(Default::default);
                message::merge(wire_type, s, buf, ctx)
            }
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        self.shaped.encoded_len()
    }

    fn clear(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    fn bare(offset: i64, size: i64, index: i64) -> BufferAllocationSliceProto {
        BufferAllocationSliceProto {
            offset,
            size,
            buffer_allocation_index: index,
        }
    }

    /// The old form's bytes: the same struct with bare slices at 2 and 3, as prost encodes it.
    fn old_form(
        operands: &[BufferAllocationSliceProto],
        result: &BufferAllocationSliceProto,
    ) -> Vec<u8> {
        let mut b = Vec::new();
        message::encode_repeated(2, operands, &mut b);
        message::encode(3, result, &mut b);
        b
    }

    #[test]
    fn the_old_form_reads_as_shaped_slices_without_shapes() {
        let got = ConvolutionThunkProto::decode(
            old_form(&[bare(0, 36, 0), bare(8, 16, 1)], &bare(0, 16, 2)).as_slice(),
        )
        .unwrap();
        let want = |s| ShapedSliceProto {
            slice: Some(s),
            shape: None,
        };
        assert_eq!(
            got.operand_buffers,
            vec![want(bare(0, 36, 0)), want(bare(8, 16, 1))]
        );
        assert_eq!(got.result_buffers, vec![want(bare(0, 16, 2))]);
    }

    #[test]
    fn the_current_form_round_trips() {
        let shape = crate::xla::ShapeProto {
            element_type: 11,
            dimensions: vec![2, 3],
            ..Default::default()
        };
        let p = ConvolutionThunkProto {
            conv_descriptor: Some(GpuConvDescriptorProto {
                scratch_size: 64,
                ..Default::default()
            }),
            operand_buffers: vec![ShapedSliceProto {
                slice: Some(bare(4, 24, 1)),
                shape: Some(shape.clone()),
            }],
            result_buffers: vec![ShapedSliceProto {
                slice: Some(bare(0, 24, 2)),
                shape: Some(shape),
            }],
            scratch_buffer: Some(bare(0, 64, 3)),
        };
        let bytes = p.encode_to_vec();
        assert_eq!(bytes.len(), p.encoded_len());
        assert_eq!(ConvolutionThunkProto::decode(bytes.as_slice()).unwrap(), p);
    }

    #[test]
    fn an_element_mixing_the_forms_is_refused() {
        // { offset: 8 (varint at 1), shape: {} (message at 2) }
        let element = [0x08, 0x08, 0x12, 0x00];
        let mut b = vec![0x12, element.len() as u8];
        b.extend_from_slice(&element);
        let e = ConvolutionThunkProto::decode(b.as_slice()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "failed to decode Protobuf message: ConvolutionThunkProto.operand_buffers: invalid wire type: LengthDelimited (expected Varint)"
        );
    }
}
