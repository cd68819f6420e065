//! Constant fills: an output that is only a broadcast scalar constant is written by a memset
//! thunk, not a kernel, as XLA's `BuildConstantInitializerThunk` writes a scatter's or a
//! reduction's constant initial value (`memzero_thunk` for zero, `memset32bit_value_thunk` for
//! a value whose bytes repeat one 32-bit word). Both thunk kinds are older than every runtime
//! in the compatibility window. On the emulated device a memset is a host fill at memory speed
//! where a kernel cost about 23 lane-instructions per element.
use hlo::{Computation, ConstantLiteral, InstrId, LiteralValue};
use hlo::{Opcode as H, PrimitiveType as P};

/// Output leaf `output` of a plan is filled with the 32-bit little-endian `word`, repeated,
/// before the plan's kernels run (a `memzero_thunk` when `word` is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputFill {
    /// The output leaf (as [`super::KernelArg::Output`] numbers them).
    pub output: usize,
    /// The repeated word.
    pub word: u32,
}

/// The word a memset repeats to write instruction `id` of `comp`, when `id` is a broadcast of
/// a scalar constant (or a scalar constant) whose element bytes are one 32-bit word repeated:
/// any zero; a 4-byte element; a 2- or 1-byte element repeated to 4 bytes when the array is a
/// whole number of words; an 8-byte element whose halves are equal. `None` otherwise (complex
/// elements, tuples, elided literals), and then a kernel computes the values.
pub fn fill_word(comp: &Computation, id: InstrId) -> Option<u32> {
    let instr = comp.get(id)?;
    let c = match (instr.opcode, instr.operands.as_slice()) {
        (H::Broadcast, [c]) => comp.get(*c)?,
        (H::Constant, []) => instr,
        _ => return None,
    };
    if c.opcode != H::Constant || c.shape.rank() != 0 {
        return None;
    }
    let ty = c.shape.element_type()?;
    let v = match &c.attrs.literal {
        Some(ConstantLiteral::Array(a)) => match a.values.as_slice() {
            [v] => *v,
            _ => return None,
        },
        _ => return None,
    };
    let raw = element_bits(ty, v)?;
    let bytes = instr.shape.byte_size();
    let word = match ty.byte_size() {
        1 => (raw as u32 & 0xff) * 0x0101_0101,
        2 => (raw as u32 & 0xffff) * 0x0001_0001,
        4 => raw as u32,
        8 if raw >> 32 == raw & 0xffff_ffff => raw as u32,
        _ => return None,
    };
    // A memset32 fills whole words; zero is a memzero of any size.
    (word == 0 || bytes % 4 == 0).then_some(word)
}

/// The bits of scalar `v` as an element of `ty` holds them (as a kernel's `mov` of the
/// constant would write them), zero-extended; `None` for the types left to a kernel.
fn element_bits(ty: P, v: LiteralValue) -> Option<u64> {
    if ty.is_float() {
        return ty.float_bits(v.as_f64());
    }
    Some(match ty {
        P::Pred => u64::from(v.as_bool()),
        P::S8 | P::U8 | P::S16 | P::U16 | P::S32 | P::U32 | P::S64 | P::U64 => v.as_i128() as u64,
        // Complex and sub-byte elements: a kernel writes them.
        _ => return None,
    })
}
