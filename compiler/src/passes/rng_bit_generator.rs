//! `rng-bit-generator` becomes elementwise integer ops, as XLA's `RngBitGeneratorExpander`
//! expands it (`xla/hlo/builder/lib/prng.cc`), so the runtime needs nothing new and the bits
//! are XLA's, bit for bit (`hlo_eval::rng` is the independent reference; both match XLA:CPU).
//!
//! XLA builds each generator from whole-array ops and a final concatenate/reshape that
//! interleaves the words of a block. Here every output element computes its own block from
//! `iota`s and takes its word, so the expansion is one elementwise expression that fuses into
//! one loop kernel (a block is recomputed by each element that takes a word of it: 2x for
//! ThreeFry, 4x for Philox, cheap next to memory traffic):
//!
//! - ThreeFry-2x32 (20 rounds): the counter is the state's element 1 plus the element's
//!   position in XLA's half shape (the first even dimension, else the largest, halved: output
//!   position `j` along it is word `j % 2` of draw `j / 2`); 64-bit outputs use both words of
//!   their own draw. The state's counter advances by the number of draws.
//! - Philox-4x32 (10 rounds; also `rng_default`, XLA:GPU's choice): block `i` is the 128-bit
//!   counter (state elements 1 and 2, or 1 and 0 for a 2-element state) plus `i`; element `j`
//!   takes word `j % 4` of block `j / 4` (64-bit outputs: word pair `j % 2` of block `j / 2`).
//!   The counter advances by the number of blocks, with the carry into its high half.
//!
//! Outputs narrower than 32 bits keep the low bits of a 32-bit draw (XLA's convert), signed ones
//! the same bits. A state or output type XLA cannot generate is a compile error.
use hlo::{
    ArrayLiteral, Attrs, ComparisonDirection, ConstantLiteral, LiteralValue, RandomAlgorithm,
};
use hlo::{HloModule, InstrId, Instruction, Opcode, PrimitiveType as P, Shape};

use crate::error::CompileError;
use crate::passes::emit::Emit;
use crate::passes::rebuild::{for_each_computation, rebuild, Scope};
use crate::unsupported::UnsupportedExpansion;

/// Expands every `rng-bit-generator` of every computation.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    for_each_computation(module, Scope::All, |_, comp| {
        let is_rng = |i: &Instruction| i.opcode == Opcode::RngBitGenerator;
        if !comp.instructions.iter().any(is_rng) {
            return Ok(None);
        }
        let new = rebuild(comp, |r, _, old| {
            if !is_rng(old) {
                return r.keep(old).map(Some);
            }
            let g = Generator::of(&comp.name, old)?;
            let operands = r.operands(old)?;
            let state = *operands.first().ok_or_else(|| {
                CompileError::unsupported(&comp.name, old, UnsupportedExpansion::RngState)
            })?;
            let mut push = |i| r.push(i);
            let mut e = E {
                e: Emit::new(old, "rng", &mut push),
                dims: g.dims.clone(),
            };
            Ok(Some(g.expand(&mut e, state)))
        })?;
        Ok(Some(new))
    })
}

/// One instruction's generator: algorithm, state size, output type and dimensions.
struct Generator {
    algorithm: RandomAlgorithm,
    state_len: i64,
    ty: P,
    dims: Vec<i64>,
}

impl Generator {
    fn of(comp: &str, old: &Instruction) -> Result<Generator, CompileError> {
        let refuse = |why: UnsupportedExpansion| CompileError::unsupported(comp, old, why);
        let parts = old.shape.tuple_shapes().unwrap_or(&[]);
        let (Some(state), Some(out)) = (parts.first(), parts.get(1)) else {
            return Err(refuse(UnsupportedExpansion::RngResult));
        };
        let (Some(state), Some(out)) = (state.as_array(), out.as_array()) else {
            return Err(refuse(UnsupportedExpansion::RngResultArrays));
        };
        let algorithm = match old.attrs.rng_algorithm {
            Some(RandomAlgorithm::ThreeFry) => RandomAlgorithm::ThreeFry,
            _ => RandomAlgorithm::Philox,
        };
        let state_len = state.dims.first().copied().unwrap_or(0);
        let state_ok = state.element_type == P::U64
            && state.dims.len() == 1
            && match algorithm {
                RandomAlgorithm::ThreeFry => state_len == 2,
                _ => matches!(state_len, 2 | 3),
            };
        if !state_ok {
            return Err(refuse(UnsupportedExpansion::RngStateShape {
                algorithm,
                found: Shape::Array(state.clone()),
            }));
        }
        let ty = out.element_type;
        if ty == P::Pred || ty.is_complex() || !matches!(ty.bit_width(), 8 | 16 | 32 | 64) {
            return Err(refuse(UnsupportedExpansion::RngBits(ty)));
        }
        Ok(Generator {
            algorithm,
            state_len,
            ty,
            dims: out.dims.clone(),
        })
    }

    fn expand(&self, e: &mut E<'_>, state: InstrId) -> InstrId {
        let key = e.state_word(state, 0);
        let (new_state, bits) = match self.algorithm {
            RandomAlgorithm::ThreeFry => self.threefry(e, state, key),
            _ => self.philox(e, state, key),
        };
        // The draw is u32 (u64 for 64-bit outputs); narrower types keep the low bits, signed
        // ones reinterpret.
        let wide = if self.ty.bit_width() == 64 {
            P::U64
        } else {
            P::U32
        };
        let unsigned = match self.ty.bit_width() {
            8 => P::U8,
            16 => P::U16,
            _ => wide,
        };
        let bits = if unsigned == wide {
            bits
        } else {
            e.op(Opcode::Convert, e.array(unsigned), vec![bits])
        };
        let bits = if unsigned == self.ty {
            bits
        } else {
            e.op(Opcode::BitcastConvert, e.array(self.ty), vec![bits])
        };
        let shape = Shape::Tuple(vec![
            Shape::array(P::U64, vec![self.state_len]),
            e.array(self.ty),
        ]);
        e.op(Opcode::Tuple, shape, vec![new_state, bits])
    }

    /// XLA's half shape for 32-bit draws (`SplitShapeIntoHalves`): the split dimension.
    fn split_dim(&self) -> Option<usize> {
        if self.dims.is_empty() {
            return None;
        }
        self.dims.iter().position(|d| d % 2 == 0).or_else(|| {
            let max = self.dims.iter().copied().max().unwrap_or(0);
            self.dims.iter().position(|&d| d == max)
        })
    }

    fn threefry(&self, e: &mut E<'_>, state: InstrId, key: InstrId) -> (InstrId, InstrId) {
        let counter = e.state_word(state, 1);
        let key_words = e.split64(key, true);
        let key_words = [
            e.broadcast(key_words[0], P::U32),
            e.broadcast(key_words[1], P::U32),
        ];
        let base = e.broadcast(counter, P::U64);
        if self.ty.bit_width() == 64 {
            let offset = e.linear(&self.dims, None);
            let input = e.bin(Opcode::Add, P::U64, base, offset);
            let words = e.split64(input, false);
            let out = threefry2x32(e, words, key_words);
            let bits = e.join64(out);
            let count = self.dims.iter().product::<i64>();
            return (self.threefry_state(e, key, counter, count), bits);
        }
        let split = self.split_dim();
        let mut half = self.dims.clone();
        if let Some(s) = split {
            half[s] = (half[s] + 1) / 2;
        }
        let offset = e.linear(&half, split);
        let input = e.bin(Opcode::Add, P::U64, base, offset);
        let words = e.split64(input, false);
        let out = threefry2x32(e, words, key_words);
        let bits = match split {
            // Output position j along the split dimension takes word j % 2.
            Some(s) => {
                let j = e.iota(P::U64, s);
                let two = e.splat(P::U64, 2);
                let part = e.bin(Opcode::Remainder, P::U64, j, two);
                let zero = e.splat(P::U64, 0);
                let first = e.compare(part, zero, ComparisonDirection::Eq);
                e.op(Opcode::Select, e.array(P::U32), vec![first, out[0], out[1]])
            }
            None => out[0],
        };
        let count = half.iter().product::<i64>().max(1);
        (self.threefry_state(e, key, counter, count), bits)
    }

    fn threefry_state(&self, e: &mut E<'_>, key: InstrId, counter: InstrId, n: i64) -> InstrId {
        let step = e.scalar(P::U64, LiteralValue::Int(i128::from(n)));
        let next = e.op(Opcode::Add, Shape::scalar(P::U64), vec![counter, step]);
        e.vector(&[key, next])
    }

    fn philox(&self, e: &mut E<'_>, state: InstrId, key: InstrId) -> (InstrId, InstrId) {
        let (lo, hi) = if self.state_len >= 3 {
            (e.state_word(state, 1), e.state_word(state, 2))
        } else {
            (e.state_word(state, 1), key)
        };
        let per_block: i64 = if self.ty.bit_width() == 64 { 2 } else { 4 };
        let n = self.dims.iter().product::<i64>();
        let blocks = (n + per_block - 1) / per_block;
        let j = e.linear(&self.dims, None);
        let pb = e.splat(P::U64, per_block);
        let block = e.bin(Opcode::Divide, P::U64, j, pb);
        let word = e.bin(Opcode::Remainder, P::U64, j, pb);
        let lo_b = e.broadcast(lo, P::U64);
        let hi_b = e.broadcast(hi, P::U64);
        let (clo, chi) = add128(e, lo_b, hi_b, block);
        let lo_w = e.split64(clo, false);
        let hi_w = e.split64(chi, false);
        let key_words = e.split64(key, true);
        let key_words = [
            e.broadcast(key_words[0], P::U32),
            e.broadcast(key_words[1], P::U32),
        ];
        let w = philox4x32(e, [lo_w[0], lo_w[1], hi_w[0], hi_w[1]], key_words);
        let bits = if per_block == 2 {
            let a = e.join64([w[0], w[1]]);
            let b = e.join64([w[2], w[3]]);
            let zero = e.splat(P::U64, 0);
            let first = e.compare(word, zero, ComparisonDirection::Eq);
            e.op(Opcode::Select, e.array(P::U64), vec![first, a, b])
        } else {
            let mut pick = w[3];
            for k in (0..3).rev() {
                let kk = e.splat(P::U64, k);
                let is_k = e.compare(word, kk, ComparisonDirection::Eq);
                pick = e.op(
                    Opcode::Select,
                    e.array(P::U32),
                    vec![is_k, w[k as usize], pick],
                );
            }
            pick
        };
        // The counter advances by the number of blocks, with the carry.
        let step = e.scalar(P::U64, LiteralValue::Int(i128::from(blocks)));
        let (nlo, nhi) = add128_scalar(e, lo, hi, step);
        let new_state = if self.state_len >= 3 {
            e.vector(&[key, nlo, nhi])
        } else {
            e.vector(&[key, nlo])
        };
        (new_state, bits)
    }
}

/// ThreeFry-2x32, 20 rounds, on u32 arrays.
fn threefry2x32(e: &mut E<'_>, input: [InstrId; 2], key: [InstrId; 2]) -> [InstrId; 2] {
    const ROTATIONS: [i64; 8] = [13, 15, 26, 6, 17, 29, 16, 24];
    let parity = e.splat(P::U32, 0x1BD1_1BDA);
    let k2 = e.bin(Opcode::Xor, P::U32, parity, key[0]);
    let k2 = e.bin(Opcode::Xor, P::U32, k2, key[1]);
    let ks = [key[0], key[1], k2];
    let mut x = [
        e.bin(Opcode::Add, P::U32, input[0], ks[0]),
        e.bin(Opcode::Add, P::U32, input[1], ks[1]),
    ];
    for block in 0..5usize {
        let rotations = if block % 2 == 0 {
            &ROTATIONS[..4]
        } else {
            &ROTATIONS[4..]
        };
        for &r in rotations {
            x[0] = e.bin(Opcode::Add, P::U32, x[0], x[1]);
            let left = e.splat(P::U32, r);
            let right = e.splat(P::U32, 32 - r);
            let hi = e.bin(Opcode::ShiftLeft, P::U32, x[1], left);
            let lo = e.bin(Opcode::ShiftRightLogical, P::U32, x[1], right);
            let rot = e.bin(Opcode::Or, P::U32, hi, lo);
            x[1] = e.bin(Opcode::Xor, P::U32, x[0], rot);
        }
        x[0] = e.bin(Opcode::Add, P::U32, x[0], ks[(block + 1) % 3]);
        let x1 = e.bin(Opcode::Add, P::U32, x[1], ks[(block + 2) % 3]);
        let inc = e.splat(P::U32, block as i64 + 1);
        x[1] = e.bin(Opcode::Add, P::U32, x1, inc);
    }
    x
}

/// Philox-4x32, 10 rounds, on u32 arrays.
fn philox4x32(e: &mut E<'_>, mut x: [InstrId; 4], mut key: [InstrId; 2]) -> [InstrId; 4] {
    const W32A: i64 = 0x9E37_79B9;
    const W32B: i64 = 0xBB67_AE85;
    const M4X32A: i64 = 0xD251_1F53;
    const M4X32B: i64 = 0xCD9E_8D57;
    for round in 0..10 {
        let (hi0, lo0) = mul_hi_lo(e, x[0], M4X32A);
        let (hi1, lo1) = mul_hi_lo(e, x[2], M4X32B);
        let a = e.bin(Opcode::Xor, P::U32, hi1, x[1]);
        let a = e.bin(Opcode::Xor, P::U32, a, key[0]);
        let c = e.bin(Opcode::Xor, P::U32, hi0, x[3]);
        let c = e.bin(Opcode::Xor, P::U32, c, key[1]);
        x = [a, lo1, c, lo0];
        if round < 9 {
            let wa = e.splat(P::U32, W32A);
            let wb = e.splat(P::U32, W32B);
            key = [
                e.bin(Opcode::Add, P::U32, key[0], wa),
                e.bin(Opcode::Add, P::U32, key[1], wb),
            ];
        }
    }
    x
}

/// The high and low words of the 64-bit product of a u32 array and a constant.
fn mul_hi_lo(e: &mut E<'_>, x: InstrId, k: i64) -> (InstrId, InstrId) {
    let wide = e.op(Opcode::Convert, e.array(P::U64), vec![x]);
    let kk = e.splat(P::U64, k);
    let product = e.bin(Opcode::Multiply, P::U64, wide, kk);
    let [lo, hi] = e.split64(product, false);
    (hi, lo)
}

/// A 128-bit counter `(lo, hi)` plus a u64 array, with the carry (XLA's `Uint128AddUint64`).
fn add128(e: &mut E<'_>, lo: InstrId, hi: InstrId, n: InstrId) -> (InstrId, InstrId) {
    let sum = e.bin(Opcode::Add, P::U64, lo, n);
    let wrapped = e.compare(sum, lo, ComparisonDirection::Lt);
    let one = e.splat(P::U64, 1);
    let hi1 = e.bin(Opcode::Add, P::U64, hi, one);
    let hi = e.op(Opcode::Select, e.array(P::U64), vec![wrapped, hi1, hi]);
    (sum, hi)
}

/// [`add128`] on scalars.
fn add128_scalar(e: &mut E<'_>, lo: InstrId, hi: InstrId, n: InstrId) -> (InstrId, InstrId) {
    let s = Shape::scalar(P::U64);
    let sum = e.op(Opcode::Add, s.clone(), vec![lo, n]);
    let a = Attrs {
        comparison_direction: Some(ComparisonDirection::Lt),
        ..Attrs::default()
    };
    let wrapped = e.op_with(Opcode::Compare, Shape::scalar(P::Pred), vec![sum, lo], a);
    let one = e.scalar(P::U64, LiteralValue::Int(1));
    let hi1 = e.op(Opcode::Add, s.clone(), vec![hi, one]);
    let hi = e.op(Opcode::Select, s, vec![wrapped, hi1, hi]);
    (sum, hi)
}

/// Emits instructions named after the one they replace (`NAME.rngK`), over the output's
/// dimensions.
struct E<'a> {
    e: Emit<'a>,
    dims: Vec<i64>,
}

impl E<'_> {
    fn array(&self, ty: P) -> Shape {
        Shape::array(ty, self.dims.clone())
    }

    fn op_with(
        &mut self,
        opcode: Opcode,
        shape: Shape,
        operands: Vec<InstrId>,
        attrs: Attrs,
    ) -> InstrId {
        self.e.op(opcode, shape, operands, attrs)
    }

    fn op(&mut self, opcode: Opcode, shape: Shape, operands: Vec<InstrId>) -> InstrId {
        self.op_with(opcode, shape, operands, Attrs::default())
    }

    fn bin(&mut self, opcode: Opcode, ty: P, a: InstrId, b: InstrId) -> InstrId {
        self.op(opcode, self.array(ty), vec![a, b])
    }

    fn compare(&mut self, a: InstrId, b: InstrId, d: ComparisonDirection) -> InstrId {
        let attrs = Attrs {
            comparison_direction: Some(d),
            ..Attrs::default()
        };
        self.op_with(Opcode::Compare, self.array(P::Pred), vec![a, b], attrs)
    }

    fn scalar(&mut self, ty: P, v: LiteralValue) -> InstrId {
        let attrs = Attrs {
            literal: Some(ConstantLiteral::Array(ArrayLiteral { values: vec![v] })),
            ..Attrs::default()
        };
        self.op_with(Opcode::Constant, Shape::scalar(ty), vec![], attrs)
    }

    /// A scalar broadcast to the output's dimensions.
    fn broadcast(&mut self, x: InstrId, ty: P) -> InstrId {
        let attrs = Attrs {
            dimensions: Some(vec![]),
            ..Attrs::default()
        };
        self.op_with(Opcode::Broadcast, self.array(ty), vec![x], attrs)
    }

    /// A constant array.
    fn splat(&mut self, ty: P, v: i64) -> InstrId {
        let c = self.scalar(ty, LiteralValue::Int(i128::from(v)));
        self.broadcast(c, ty)
    }

    fn iota(&mut self, ty: P, dim: usize) -> InstrId {
        let attrs = Attrs {
            iota_dimension: Some(dim as i64),
            ..Attrs::default()
        };
        self.op_with(Opcode::Iota, self.array(ty), vec![], attrs)
    }

    /// Element `k` of the u64 state, as a scalar.
    fn state_word(&mut self, state: InstrId, k: i64) -> InstrId {
        let attrs = Attrs {
            slice: Some(vec![hlo::SliceDim {
                start: k,
                limit: k + 1,
                stride: 1,
            }]),
            ..Attrs::default()
        };
        let s = self.op_with(
            Opcode::Slice,
            Shape::array(P::U64, vec![1]),
            vec![state],
            attrs,
        );
        self.op(Opcode::Reshape, Shape::scalar(P::U64), vec![s])
    }

    /// The u64 state from scalars.
    fn vector(&mut self, words: &[InstrId]) -> InstrId {
        let ones: Vec<InstrId> = words
            .iter()
            .map(|&w| self.op(Opcode::Reshape, Shape::array(P::U64, vec![1]), vec![w]))
            .collect();
        let attrs = Attrs {
            dimensions: Some(vec![0]),
            ..Attrs::default()
        };
        let shape = Shape::array(P::U64, vec![words.len() as i64]);
        self.op_with(Opcode::Concatenate, shape, ones, attrs)
    }

    /// The low and high u32 words of a u64 scalar (`scalar`) or array.
    fn split64(&mut self, x: InstrId, scalar: bool) -> [InstrId; 2] {
        let shape = |e: &Self, ty| {
            if scalar {
                Shape::scalar(ty)
            } else {
                e.array(ty)
            }
        };
        let lo = self.op(Opcode::Convert, shape(self, P::U32), vec![x]);
        let c = self.scalar(P::U64, LiteralValue::Int(32));
        let c = if scalar { c } else { self.broadcast(c, P::U64) };
        let hi = self.op(Opcode::ShiftRightLogical, shape(self, P::U64), vec![x, c]);
        let hi = self.op(Opcode::Convert, shape(self, P::U32), vec![hi]);
        [lo, hi]
    }

    /// `lo | hi << 32` of two u32 arrays.
    fn join64(&mut self, w: [InstrId; 2]) -> InstrId {
        let lo = self.op(Opcode::Convert, self.array(P::U64), vec![w[0]]);
        let hi = self.op(Opcode::Convert, self.array(P::U64), vec![w[1]]);
        let c = self.splat(P::U64, 32);
        let hi = self.bin(Opcode::ShiftLeft, P::U64, hi, c);
        self.bin(Opcode::Or, P::U64, lo, hi)
    }

    /// The u64 linear position of each output element in `over` (the output's dimensions, or
    /// XLA's half shape with dimension `halved` halved): `sum(iota_d * stride_d)` over the
    /// dimensions of size at least 2, the last fastest.
    fn linear(&mut self, over: &[i64], halved: Option<usize>) -> InstrId {
        let mut total = self.splat(P::U64, 0);
        let mut stride: i64 = 1;
        for d in (0..over.len()).rev() {
            if over[d] < 2 {
                continue;
            }
            let mut i = self.iota(P::U64, d);
            if halved == Some(d) {
                let two = self.splat(P::U64, 2);
                i = self.bin(Opcode::Divide, P::U64, i, two);
            }
            let s = self.splat(P::U64, stride);
            let term = self.bin(Opcode::Multiply, P::U64, i, s);
            total = self.bin(Opcode::Add, P::U64, total, term);
            stride = stride.saturating_mul(over[d]);
        }
        total
    }
}
