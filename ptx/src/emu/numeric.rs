//! Numeric semantics of PTX instructions, on raw bit patterns (`u64` holding the value
//! zero-extended).
//!
//! Choices where PTX leaves things unspecified or approximate:
//! * Integer division by zero does not trap: `div.u` gives all ones, `rem.u` gives the dividend,
//!   `div.s` gives -1 (all ones) and `rem.s` the dividend (what current NVIDIA hardware returns);
//!   `div.s` of MIN by -1 wraps to MIN, `rem.s` gives 0.
//! * `.approx` operations (`rcp`, `sqrt`, `rsqrt`, `ex2`, `lg2`, `sin`, `cos`, `tanh`, `div.approx`,
//!   `div.full`) are computed in f64 and rounded to nearest once, which is within every ULP bound
//!   the PTX ISA documents for them (the hardware is less accurate; tests compare with
//!   tolerances). `.ftz` flushes subnormal inputs and outputs to sign-preserving zero.
//! * Directed rounding (`.rz/.rm/.rp`) of f32/f16/bf16 arithmetic is exact: the exact result is
//!   represented as an unevaluated f64 pair `hi + lo` (error-free transforms: TwoSum, exact f64
//!   products, fma residuals) and rounded to the target format by [`round_pair`]. For f64 the
//!   error term comes from the same transforms in f64 (exact for add/sub/mul/div/sqrt;
//!   fma's error term is approximate in rare cancellation cases).
//! * NaN results are the canonical NaN (`0x7fffffff` for f32, `0x7fff` f16, `0x7fff` bf16,
//!   `0x7fffffffffffffff` f64), as on NVIDIA hardware.
use half::{bf16, f16};
use std::cmp::Ordering;

/// IEEE rounding mode of a floating-point result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rnd {
    /// To nearest, ties to even (`.rn`, the default).
    Rn,
    /// Toward zero (`.rz`).
    Rz,
    /// Toward -inf (`.rm`).
    Rm,
    /// Toward +inf (`.rp`).
    Rp,
}

/// A floating-point format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fmt {
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
}

impl Fmt {
    /// Width in bits.
    pub fn bits(self) -> u32 {
        match self {
            Fmt::F16 | Fmt::Bf16 => 16,
            Fmt::F32 => 32,
            Fmt::F64 => 64,
        }
    }
    fn sign(self) -> u64 {
        1u64 << (self.bits() - 1)
    }
    fn exp_mask(self) -> u64 {
        match self {
            Fmt::F16 => 0x7c00,
            Fmt::Bf16 => 0x7f80,
            Fmt::F32 => 0x7f80_0000,
            Fmt::F64 => 0x7ff0_0000_0000_0000,
        }
    }
    /// Canonical NaN.
    pub fn nan(self) -> u64 {
        match self {
            Fmt::F16 => 0x7fff,
            Fmt::Bf16 => 0x7fff,
            Fmt::F32 => 0x7fff_ffff,
            Fmt::F64 => 0x7fff_ffff_ffff_ffff,
        }
    }
    /// Bits → f64 (exact).
    #[inline]
    pub fn to_f64(self, b: u64) -> f64 {
        match self {
            Fmt::F16 => f16::from_bits(b as u16).to_f64(),
            Fmt::Bf16 => bf16::from_bits(b as u16).to_f64(),
            Fmt::F32 => f32::from_bits(b as u32) as f64,
            Fmt::F64 => f64::from_bits(b),
        }
    }
    /// f64 → bits, rounded to nearest even.
    #[inline]
    pub fn from_f64_rn(self, v: f64) -> u64 {
        if v.is_nan() {
            return self.nan();
        }
        match self {
            Fmt::F16 => f16::from_f64(v).to_bits() as u64,
            Fmt::Bf16 => bf16::from_f64(v).to_bits() as u64,
            Fmt::F32 => (v as f32).to_bits() as u64,
            Fmt::F64 => v.to_bits(),
        }
    }
    /// Is the value a NaN?
    #[inline]
    pub fn is_nan(self, b: u64) -> bool {
        let m = self.exp_mask();
        (b & m) == m && (b & (self.sign() - 1) & !m) != 0
    }
    /// Is the value subnormal (nonzero with a zero exponent)?
    #[inline]
    pub fn is_subnormal(self, b: u64) -> bool {
        (b & self.exp_mask()) == 0 && (b & (self.sign() - 1)) != 0
    }
    /// Flushes a subnormal to sign-preserving zero.
    #[inline]
    pub fn ftz(self, b: u64) -> u64 {
        if self.is_subnormal(b) {
            b & self.sign()
        } else {
            b
        }
    }
    /// Next representable value toward +inf.
    pub fn next_up(self, b: u64) -> u64 {
        let s = self.sign();
        if self.is_nan(b) || b == self.exp_mask() {
            return b;
        }
        if b == s {
            return 1; // -0 → smallest positive subnormal
        }
        if b & s == 0 {
            b + 1
        } else {
            b - 1
        }
    }
    /// Next representable value toward -inf.
    pub fn next_down(self, b: u64) -> u64 {
        let s = self.sign();
        if self.is_nan(b) || b == (s | self.exp_mask()) {
            return b;
        }
        if b == 0 {
            return s | 1;
        }
        if b & s == 0 {
            b - 1
        } else {
            b + 1
        }
    }
}

/// Rounds the exact value `hi + lo` (with `|lo|` at most half an f64 ulp of `hi`, `lo` only
/// contributing its sign and tie-breaking) to `fmt` with rounding mode `rnd`.
pub fn round_pair(hi: f64, lo: f64, fmt: Fmt, rnd: Rnd) -> u64 {
    if hi.is_nan() {
        return fmt.nan();
    }
    let r = fmt.from_f64_rn(hi);
    let rv = fmt.to_f64(r);
    // Sign of (exact - rv).
    let c = if fmt == Fmt::F64 || hi == rv {
        lo.partial_cmp(&0.0).unwrap_or(Ordering::Equal)
    } else if hi > rv {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    if c == Ordering::Equal {
        return r;
    }
    let other = if c == Ordering::Greater {
        fmt.next_up(r)
    } else {
        fmt.next_down(r)
    };
    match rnd {
        Rnd::Rn => {
            if fmt == Fmt::F64 {
                return r;
            }
            // Double rounding only matters when hi sits exactly on a midpoint.
            let ov = fmt.to_f64(other);
            if rv.is_finite() && ov.is_finite() && (hi - rv).abs() == (ov - hi).abs() && lo != 0.0 {
                let lo_dir = if lo > 0.0 {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
                if lo_dir == c {
                    return other;
                }
            }
            r
        }
        Rnd::Rz => {
            let neg = (r & fmt.sign()) != 0;
            let toward_zero = (!neg && c == Ordering::Less) || (neg && c == Ordering::Greater);
            if toward_zero && (r & (fmt.sign() - 1)) != 0 {
                other
            } else {
                r
            }
        }
        Rnd::Rm => {
            if c == Ordering::Less {
                other
            } else {
                r
            }
        }
        Rnd::Rp => {
            if c == Ordering::Greater {
                other
            } else {
                r
            }
        }
    }
}

#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// Binary floating-point arithmetic operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FOp {
    /// a + b
    Add,
    /// a - b
    Sub,
    /// a * b
    Mul,
    /// a / b (IEEE, correctly rounded)
    Div,
}

/// Exact result of `a op b` as an f64 pair (inputs are exact f64 images of f16/bf16/f32).
fn exact_pair(op: FOp, a: f64, b: f64) -> (f64, f64) {
    match op {
        FOp::Add => two_sum(a, b),
        FOp::Sub => two_sum(a, -b),
        FOp::Mul => {
            let p = a * b;
            if !p.is_finite() {
                return (p, 0.0);
            }
            (p, a.mul_add(b, -p))
        }
        FOp::Div => {
            let q = a / b;
            if !q.is_finite() || q == 0.0 {
                return (q, 0.0);
            }
            let r = (-q).mul_add(b, a);
            (q, r / b)
        }
    }
}

/// Floating-point `a op b` in `fmt` with rounding `rnd`; `ftz` flushes subnormal inputs and
/// results (f32 only in PTX, honoured for any format here).
pub fn fbin(op: FOp, fmt: Fmt, rnd: Rnd, ftz: bool, a: u64, b: u64) -> u64 {
    let (a, b) = if ftz {
        (fmt.ftz(a), fmt.ftz(b))
    } else {
        (a, b)
    };
    let r = if fmt == Fmt::F32 && rnd == Rnd::Rn {
        let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
        let v = match op {
            FOp::Add => x + y,
            FOp::Sub => x - y,
            FOp::Mul => x * y,
            FOp::Div => x / y,
        };
        if v.is_nan() {
            fmt.nan()
        } else {
            v.to_bits() as u64
        }
    } else if fmt == Fmt::F64 && rnd == Rnd::Rn {
        let (x, y) = (f64::from_bits(a), f64::from_bits(b));
        let v = match op {
            FOp::Add => x + y,
            FOp::Sub => x - y,
            FOp::Mul => x * y,
            FOp::Div => x / y,
        };
        if v.is_nan() {
            fmt.nan()
        } else {
            v.to_bits()
        }
    } else {
        let (x, y) = (fmt.to_f64(a), fmt.to_f64(b));
        let (hi, lo) = exact_pair(op, x, y);
        round_pair(hi, lo, fmt, rnd)
    };
    if ftz {
        fmt.ftz(r)
    } else {
        r
    }
}

/// `fbin(FOp::Add, Fmt::F32, Rnd::Rn, true, a, b)` (what `atom.add.f32` and `red.add.f32`
/// compute: subnormals flushed) in native f32, for the atomics' whole-warp path.
#[inline(always)]
pub fn f32_add_ftz(a: u64, b: u64) -> u64 {
    let ftz = |v: u32| {
        if v & 0x7f80_0000 == 0 {
            v & 0x8000_0000
        } else {
            v
        }
    };
    let s = f32::from_bits(ftz(a as u32)) + f32::from_bits(ftz(b as u32));
    if s.is_nan() {
        0x7fff_ffff
    } else {
        u64::from(ftz(s.to_bits()))
    }
}

/// Fused multiply-add `a * b + c` rounded once.
pub fn ffma(fmt: Fmt, rnd: Rnd, ftz: bool, a: u64, b: u64, c: u64) -> u64 {
    let (a, b, c) = if ftz {
        (fmt.ftz(a), fmt.ftz(b), fmt.ftz(c))
    } else {
        (a, b, c)
    };
    let r = match fmt {
        Fmt::F32 if rnd == Rnd::Rn => {
            let v = f32::from_bits(a as u32)
                .mul_add(f32::from_bits(b as u32), f32::from_bits(c as u32));
            if v.is_nan() {
                fmt.nan()
            } else {
                v.to_bits() as u64
            }
        }
        Fmt::F64 => {
            let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
            let s = x.mul_add(y, z);
            if s.is_nan() {
                return fmt.nan();
            }
            if rnd == Rnd::Rn || !s.is_finite() {
                s.to_bits()
            } else {
                // Approximate error term: (x*y - s) + z via the exact product error.
                let p = x * y;
                let pe = x.mul_add(y, -p);
                let (t, te) = two_sum(p, -s);
                let lo = ((t + z) + te) + pe;
                round_pair(s, lo, fmt, rnd)
            }
        }
        _ => {
            let (x, y, z) = (fmt.to_f64(a), fmt.to_f64(b), fmt.to_f64(c));
            // x*y is exact in f64 for f32/f16/bf16 inputs.
            let p = x * y;
            let (hi, lo) = if p.is_finite() {
                two_sum(p, z)
            } else {
                (p + z, 0.0)
            };
            if !hi.is_finite() {
                fmt.from_f64_rn(hi)
            } else {
                round_pair(hi, lo, fmt, rnd)
            }
        }
    };
    if ftz {
        fmt.ftz(r)
    } else {
        r
    }
}

/// Correctly rounded square root.
pub fn fsqrt(fmt: Fmt, rnd: Rnd, ftz: bool, a: u64) -> u64 {
    let a = if ftz { fmt.ftz(a) } else { a };
    let x = fmt.to_f64(a);
    let r = if fmt == Fmt::F32 && rnd == Rnd::Rn {
        let v = f32::from_bits(a as u32).sqrt();
        if v.is_nan() {
            fmt.nan()
        } else {
            v.to_bits() as u64
        }
    } else {
        let s = x.sqrt();
        if !s.is_finite() || s == 0.0 {
            fmt.from_f64_rn(s)
        } else {
            let res = (-s).mul_add(s, x);
            round_pair(s, res / (2.0 * s), fmt, rnd)
        }
    };
    if ftz {
        fmt.ftz(r)
    } else {
        r
    }
}

/// Unary approximate function kinds (`.approx`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approx {
    /// 1/x
    Rcp,
    /// sqrt(x)
    Sqrt,
    /// 1/sqrt(x)
    Rsqrt,
    /// 2^x
    Ex2,
    /// log2(x)
    Lg2,
    /// sin(x)
    Sin,
    /// cos(x)
    Cos,
    /// tanh(x)
    Tanh,
}

/// An `.approx` unary function: evaluated in f64 and rounded to nearest once.
pub fn fapprox(f: Approx, fmt: Fmt, ftz: bool, a: u64) -> u64 {
    let a = if ftz { fmt.ftz(a) } else { a };
    let x = fmt.to_f64(a);
    let v = match f {
        Approx::Rcp => 1.0 / x,
        Approx::Sqrt => x.sqrt(),
        Approx::Rsqrt => 1.0 / x.sqrt(),
        // Same bits as `x.exp2()` (rounded to f32 below), without libm: see `exp2`.
        Approx::Ex2 if fmt == Fmt::F32 => f64::from(super::exp2::ex2_f32(x as f32)),
        Approx::Ex2 => x.exp2(),
        Approx::Lg2 => x.log2(),
        Approx::Sin => x.sin(),
        Approx::Cos => x.cos(),
        Approx::Tanh => x.tanh(),
    };
    let r = fmt.from_f64_rn(v);
    if ftz {
        fmt.ftz(r)
    } else {
        r
    }
}

/// `min`/`max` of floats: a NaN operand yields the other operand (both NaN → canonical NaN)
/// unless `nan_prop` (`.NaN`), which yields canonical NaN; -0 is less than +0.
pub fn fminmax(fmt: Fmt, max: bool, ftz: bool, nan_prop: bool, a: u64, b: u64) -> u64 {
    let (a, b) = if ftz {
        (fmt.ftz(a), fmt.ftz(b))
    } else {
        (a, b)
    };
    let (an, bn) = (fmt.is_nan(a), fmt.is_nan(b));
    if an || bn {
        if nan_prop || (an && bn) {
            return fmt.nan();
        }
        return if an { b } else { a };
    }
    let (x, y) = (fmt.to_f64(a), fmt.to_f64(b));
    let pick_a = if x == y {
        // Zeros of different sign: min → negative one, max → positive one.
        let a_neg = (a & fmt.sign()) != 0;
        if max {
            !a_neg
        } else {
            a_neg
        }
    } else if max {
        x > y
    } else {
        x < y
    };
    if pick_a {
        a
    } else {
        b
    }
}

/// Comparison operator of `setp`/`set`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    /// ==
    Eq,
    /// !=
    Ne,
    /// <
    Lt,
    /// <=
    Le,
    /// >
    Gt,
    /// >=
    Ge,
    /// unsigned < (integers)
    Lo,
    /// unsigned <=
    Ls,
    /// unsigned >
    Hi,
    /// unsigned >=
    Hs,
    /// == or unordered
    Equ,
    /// != or unordered
    Neu,
    /// < or unordered
    Ltu,
    /// <= or unordered
    Leu,
    /// > or unordered
    Gtu,
    /// >= or unordered
    Geu,
    /// both numbers
    Num,
    /// either NaN
    Nan,
}

/// Float comparison with PTX's ordered/unordered rules.
#[inline]
pub fn fcmp(cmp: Cmp, fmt: Fmt, ftz: bool, a: u64, b: u64) -> bool {
    let (a, b) = if ftz {
        (fmt.ftz(a), fmt.ftz(b))
    } else {
        (a, b)
    };
    let (x, y) = (fmt.to_f64(a), fmt.to_f64(b));
    let unord = x.is_nan() || y.is_nan();
    match cmp {
        Cmp::Eq => x == y,
        Cmp::Ne => !unord && x != y,
        Cmp::Lt | Cmp::Lo => x < y,
        Cmp::Le | Cmp::Ls => x <= y,
        Cmp::Gt | Cmp::Hi => x > y,
        Cmp::Ge | Cmp::Hs => x >= y,
        Cmp::Equ => unord || x == y,
        Cmp::Neu => x != y,
        Cmp::Ltu => unord || x < y,
        Cmp::Leu => unord || x <= y,
        Cmp::Gtu => unord || x > y,
        Cmp::Geu => unord || x >= y,
        Cmp::Num => !unord,
        Cmp::Nan => unord,
    }
}

/// Sign-extends the low `bits` of `v`.
#[inline(always)]
pub fn sext(v: u64, bits: u32) -> i64 {
    let sh = 64 - bits;
    ((v << sh) as i64) >> sh
}

/// Keeps the low `bits` of `v`.
#[inline(always)]
pub fn trunc(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// Integer comparison (`signed` selects the interpretation of lt/le/gt/ge).
#[inline]
pub fn icmp(cmp: Cmp, bits: u32, signed: bool, a: u64, b: u64) -> bool {
    let o = if signed {
        sext(a, bits).cmp(&sext(b, bits))
    } else {
        trunc(a, bits).cmp(&trunc(b, bits))
    };
    let ou = trunc(a, bits).cmp(&trunc(b, bits));
    match cmp {
        Cmp::Eq | Cmp::Equ => o == Ordering::Equal,
        Cmp::Ne | Cmp::Neu => o != Ordering::Equal,
        Cmp::Lt | Cmp::Ltu => o == Ordering::Less,
        Cmp::Le | Cmp::Leu => o != Ordering::Greater,
        Cmp::Gt | Cmp::Gtu => o == Ordering::Greater,
        Cmp::Ge | Cmp::Geu => o != Ordering::Less,
        Cmp::Lo => ou == Ordering::Less,
        Cmp::Ls => ou != Ordering::Greater,
        Cmp::Hi => ou == Ordering::Greater,
        Cmp::Hs => ou != Ordering::Less,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

/// Integer division with PTX's (hardware) results for division by zero and overflow.
#[inline]
pub fn idiv(bits: u32, signed: bool, rem: bool, a: u64, b: u64) -> u64 {
    if signed {
        let (x, y) = (sext(a, bits), sext(b, bits));
        let r = if y == 0 {
            if rem {
                x
            } else {
                -1
            }
        } else if bits == 64 {
            if rem {
                x.wrapping_rem(y)
            } else {
                x.wrapping_div(y)
            }
        } else if rem {
            x % y
        } else {
            x / y
        };
        trunc(r as u64, bits)
    } else {
        let (x, y) = (trunc(a, bits), trunc(b, bits));
        if y == 0 {
            if rem {
                x
            } else {
                trunc(u64::MAX, bits)
            }
        } else if rem {
            x % y
        } else {
            x / y
        }
    }
}

/// High half of the double-width product (`mul.hi`).
#[inline]
pub fn mul_hi(bits: u32, signed: bool, a: u64, b: u64) -> u64 {
    if signed {
        let p = (sext(a, bits) as i128) * (sext(b, bits) as i128);
        trunc((p >> bits) as u64, bits)
    } else {
        let p = (trunc(a, bits) as u128) * (trunc(b, bits) as u128);
        trunc((p >> bits) as u64, bits)
    }
}

/// Double-width product (`mul.wide`), result `2*bits` wide.
#[inline]
pub fn mul_wide(bits: u32, signed: bool, a: u64, b: u64) -> u64 {
    if signed {
        (sext(a, bits).wrapping_mul(sext(b, bits))) as u64
    } else {
        trunc(a, bits).wrapping_mul(trunc(b, bits))
    }
}

/// Bit-field extract (`bfe`).
pub fn bfe(bits: u32, signed: bool, a: u64, pos: u64, len: u64) -> u64 {
    let pos = (pos & 0xff) as u32;
    let len = (len & 0xff) as u32;
    let a = trunc(a, bits);
    let msb = bits - 1;
    let sbit = if !signed || len == 0 {
        false
    } else {
        let i = (pos + len - 1).min(msb);
        (a >> i) & 1 == 1
    };
    let mut d = 0u64;
    for i in 0..bits {
        let bit = if i < len && pos + i <= msb {
            (a >> (pos + i)) & 1 == 1
        } else {
            sbit
        };
        if bit {
            d |= 1 << i;
        }
    }
    d
}

/// Bit-field insert (`bfi`): insert the low `len` bits of `a` into `b` at `pos`.
pub fn bfi(bits: u32, a: u64, b: u64, pos: u64, len: u64) -> u64 {
    let pos = (pos & 0xff) as u32;
    let len = (len & 0xff) as u32;
    let mut d = trunc(b, bits);
    for i in 0..len {
        let p = pos + i;
        if p >= bits {
            break;
        }
        d = (d & !(1 << p)) | (((a >> i) & 1) << p);
    }
    d
}

/// Mode of `prmt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrmtMode {
    /// Generic selector (4 nibbles).
    Default,
    /// `.f4e` forward 4 extract.
    F4e,
    /// `.b4e` backward 4 extract.
    B4e,
    /// `.rc8` replicate 8.
    Rc8,
    /// `.ecl` edge clamp left.
    Ecl,
    /// `.ecr` edge clamp right.
    Ecr,
    /// `.rc16` replicate 16.
    Rc16,
}

/// Byte permute (`prmt.b32`).
pub fn prmt(mode: PrmtMode, a: u64, b: u64, c: u64) -> u64 {
    let bytes = ((b as u32 as u64) << 32) | (a as u32 as u64);
    let byte = |i: u64| (bytes >> ((i & 7) * 8)) & 0xff;
    let c = c as u32;
    let sel: [u64; 4] = match mode {
        PrmtMode::Default => {
            let mut out = 0u64;
            for k in 0..4 {
                let s = ((c >> (4 * k)) & 0xf) as u64;
                let mut v = byte(s & 7);
                if s & 8 != 0 {
                    v = if v & 0x80 != 0 { 0xff } else { 0 };
                }
                out |= v << (8 * k);
            }
            return out;
        }
        PrmtMode::F4e => {
            let s = (c & 3) as u64;
            [s, s + 1, s + 2, s + 3]
        }
        PrmtMode::B4e => {
            let s = (c & 3) as u64;
            [
                s,
                s.wrapping_sub(1) & 7,
                s.wrapping_sub(2) & 7,
                s.wrapping_sub(3) & 7,
            ]
        }
        PrmtMode::Rc8 => {
            let s = (c & 3) as u64;
            [s; 4]
        }
        PrmtMode::Ecl => match c & 3 {
            0 => [0, 1, 2, 3],
            1 => [1, 1, 2, 3],
            2 => [2, 2, 2, 3],
            _ => [3, 3, 3, 3],
        },
        PrmtMode::Ecr => match c & 3 {
            0 => [0, 0, 0, 0],
            1 => [0, 1, 1, 1],
            2 => [0, 1, 2, 2],
            _ => [0, 1, 2, 3],
        },
        PrmtMode::Rc16 => {
            if c & 1 == 0 {
                [0, 1, 0, 1]
            } else {
                [2, 3, 2, 3]
            }
        }
    };
    let mut out = 0u64;
    for (k, s) in sel.iter().enumerate() {
        out |= byte(*s) << (8 * k);
    }
    out
}

/// Three-input logic operation (`lop3.b32`) with truth table `lut`.
#[inline]
pub fn lop3(a: u64, b: u64, c: u64, lut: u8) -> u64 {
    let mut r = 0u64;
    for i in 0..8u8 {
        if lut & (1 << i) != 0 {
            let ma = if i & 4 != 0 { a } else { !a };
            let mb = if i & 2 != 0 { b } else { !b };
            let mc = if i & 1 != 0 { c } else { !c };
            r |= ma & mb & mc;
        }
    }
    r & 0xffff_ffff
}

/// Funnel shift (`shf.l`/`shf.r`, `.clamp` or `.wrap`) of the 64-bit value `b:a`.
#[inline]
pub fn shf(left: bool, clamp: bool, a: u64, b: u64, n: u64) -> u64 {
    let n = if clamp {
        (n as u32).min(32)
    } else {
        (n as u32) & 31
    } as u64;
    let v = ((b as u32 as u64) << 32) | (a as u32 as u64);
    if left {
        ((v << n) >> 32) & 0xffff_ffff
    } else {
        (v >> n) & 0xffff_ffff
    }
}

/// Shift left (`shl`): amounts ≥ width give 0.
#[inline(always)]
pub fn shl(bits: u32, a: u64, n: u64) -> u64 {
    let n = trunc(n, 32);
    if n >= bits as u64 {
        0
    } else {
        trunc(a << n, bits)
    }
}

/// Shift right (`shr`): logical for unsigned/bit types, arithmetic for signed; clamped.
#[inline(always)]
pub fn shr(bits: u32, signed: bool, a: u64, n: u64) -> u64 {
    // A count of `bits` or more shifts every bit out: zero, or the sign everywhere. (The count
    // used to be clamped at `bits - 1` for unsigned shifts too, so `shr.u16 x, 16` gave the top
    // bit instead of 0; the 32- and 64-bit forms never came here.)
    let n = trunc(n, 32);
    if signed {
        let n = n.min(bits as u64 - 1);
        trunc((sext(a, bits) >> n) as u64, bits)
    } else if n >= bits as u64 {
        0
    } else {
        trunc(a, bits) >> n
    }
}

/// Index of the most significant non-sign bit (`bfind`), or all ones when none; `shiftamt`
/// returns `bits-1-index` instead.
pub fn bfind(bits: u32, signed: bool, shiftamt: bool, a: u64) -> u64 {
    let mut v = trunc(a, bits);
    if signed && sext(a, bits) < 0 {
        v = trunc(!v, bits);
    }
    if v == 0 {
        return 0xffff_ffff;
    }
    let idx = 63 - v.leading_zeros() as u64;
    if shiftamt {
        bits as u64 - 1 - idx
    } else {
        idx
    }
}

/// Integer rounding mode of a float → integer (or float → integral float) conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IRnd {
    /// Nearest even (`.rni`).
    Rni,
    /// Toward zero (`.rzi`).
    Rzi,
    /// Toward -inf (`.rmi`).
    Rmi,
    /// Toward +inf (`.rpi`).
    Rpi,
}

/// Rounds to an integral value.
pub fn round_int(x: f64, r: IRnd) -> f64 {
    match r {
        IRnd::Rni => x.round_ties_even(),
        IRnd::Rzi => x.trunc(),
        IRnd::Rmi => x.floor(),
        IRnd::Rpi => x.ceil(),
    }
}

/// An integer type: width and signedness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntTy {
    /// Width in bits (8, 16, 32, 64).
    pub bits: u32,
    /// Two's complement (`.s`) rather than unsigned (`.u`, `.b`): decides the range.
    pub signed: bool,
}

impl IntTy {
    fn min(self) -> i128 {
        if self.signed {
            -(1i128 << (self.bits - 1))
        } else {
            0
        }
    }
    fn max(self) -> i128 {
        if self.signed {
            (1i128 << (self.bits - 1)) - 1
        } else {
            (1i128 << self.bits) - 1
        }
    }
    /// The value of raw bits.
    pub fn value(self, v: u64) -> i128 {
        if self.signed {
            sext(v, self.bits) as i128
        } else {
            trunc(v, self.bits) as i128
        }
    }
}

/// Float → integer conversion: rounds with `r`, saturates to the range, NaN → 0.
pub fn f2i(fmt: Fmt, ftz: bool, a: u64, r: IRnd, to: IntTy) -> u64 {
    let a = if ftz { fmt.ftz(a) } else { a };
    let x = fmt.to_f64(a);
    if x.is_nan() {
        return 0;
    }
    let v = round_int(x, r);
    let (lo, hi) = (to.min(), to.max());
    let i = if v <= lo as f64 {
        lo
    } else if v >= hi as f64 {
        hi
    } else {
        v as i128
    };
    trunc(i as u64, to.bits)
}

/// Integer → float conversion rounded with `r`.
pub fn i2f(from: IntTy, a: u64, fmt: Fmt, r: Rnd) -> u64 {
    let v = from.value(a);
    let hi = v as f64;
    let lo = (v - hi as i128) as f64;
    round_pair(hi, lo, fmt, r)
}

/// Integer → integer conversion (truncate or extend by the source type), optionally saturating
/// to the destination range.
pub fn i2i(from: IntTy, a: u64, to: IntTy, sat: bool) -> u64 {
    let v = from.value(a);
    let v = if sat { v.clamp(to.min(), to.max()) } else { v };
    trunc(v as u64, to.bits)
}

/// Float → float conversion: exact widening, or rounding with `r`; `ftz` and `sat` (clamp to
/// [0, 1], NaN → 0) applied to the result. `int_rnd` rounds to an integral value in the
/// destination format (`cvt.rni.f32.f32`).
pub fn f2f(from: Fmt, a: u64, to: Fmt, r: Rnd, int_rnd: Option<IRnd>, ftz: bool, sat: bool) -> u64 {
    let a = if ftz && from == Fmt::F32 {
        from.ftz(a)
    } else {
        a
    };
    let mut x = from.to_f64(a);
    if let Some(ir) = int_rnd {
        x = round_int(x, ir);
    }
    let mut b = round_pair(x, 0.0, to, r);
    if sat {
        b = saturate(to, b);
    }
    if ftz && to == Fmt::F32 {
        b = to.ftz(b);
    }
    b
}

/// `.sat` for floats: clamp to [0, 1], NaN → +0.
pub fn saturate(fmt: Fmt, b: u64) -> u64 {
    if fmt.is_nan(b) {
        return 0;
    }
    let x = fmt.to_f64(b);
    if x <= 0.0 {
        0
    } else if x >= 1.0 {
        fmt.from_f64_rn(1.0)
    } else {
        b
    }
}

/// `testp` property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestP {
    /// Finite.
    Finite,
    /// Infinite.
    Infinite,
    /// A number.
    Number,
    /// NaN.
    NotANumber,
    /// Normal.
    Normal,
    /// Subnormal.
    Subnormal,
}

/// `testp.<op>`.
pub fn testp(p: TestP, fmt: Fmt, a: u64) -> bool {
    let x = fmt.to_f64(a);
    match p {
        TestP::Finite => x.is_finite(),
        TestP::Infinite => x.is_infinite(),
        TestP::Number => !x.is_nan(),
        TestP::NotANumber => x.is_nan(),
        TestP::Normal => x.is_finite() && x != 0.0 && !fmt.is_subnormal(a),
        TestP::Subnormal => fmt.is_subnormal(a),
    }
}

/// `copysign`: magnitude of `b`, sign of `a` (PTX's operand order).
pub fn copysign(fmt: Fmt, a: u64, b: u64) -> u64 {
    let s = fmt.sign();
    (b & !s & (s | (s - 1))) | (a & s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shift count of the width or more shifts every bit out, at every width: zero for
    /// unsigned, the sign for signed (`shr.u16 x, 16` was the top bit).
    #[test]
    fn shr_by_the_width_or_more() {
        for bits in [8u32, 16, 32, 64] {
            let top = 1u64 << (bits - 1);
            for n in [u64::from(bits), u64::from(bits) + 1, 1000] {
                assert_eq!(shr(bits, false, top, n), 0, "shr.u{bits} by {n}");
                assert_eq!(
                    shr(bits, true, top, n),
                    trunc(u64::MAX, bits),
                    "shr.s{bits} by {n}"
                );
                assert_eq!(shr(bits, true, top >> 1, n), 0, "shr.s{bits} of a positive");
            }
            assert_eq!(shr(bits, false, top, u64::from(bits) - 1), 1);
        }
    }

    #[test]
    fn f32_add_ftz_is_fbin_with_ftz() {
        let vals: Vec<u64> = [
            0u32,
            0x8000_0000,
            1,
            0x8000_0001,
            0x007f_ffff,
            0x0080_0000,
            0x8080_0000,
            0x3f80_0000,
            0xbf80_0000,
            0x7f7f_ffff,
            0xff7f_ffff,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0001,
            0xffff_ffff,
            0x0080_0001,
            0x8080_0001,
            0x4049_0fdb,
        ]
        .into_iter()
        .map(u64::from)
        .collect();
        for &a in &vals {
            for &b in &vals {
                let want = fbin(FOp::Add, Fmt::F32, Rnd::Rn, true, a, b);
                assert_eq!(f32_add_ftz(a, b), want, "{a:#x} + {b:#x}");
            }
        }
    }

    #[test]
    fn directed_add() {
        let one = 1.0f32.to_bits() as u64;
        let tiny = 1e-30f32.to_bits() as u64;
        assert_eq!(fbin(FOp::Add, Fmt::F32, Rnd::Rn, false, one, tiny), one);
        assert_eq!(fbin(FOp::Add, Fmt::F32, Rnd::Rp, false, one, tiny), one + 1);
        assert_eq!(fbin(FOp::Add, Fmt::F32, Rnd::Rm, false, one, tiny), one);
        let m = (-1.0f32).to_bits() as u64;
        assert_eq!(
            fbin(
                FOp::Add,
                Fmt::F32,
                Rnd::Rm,
                false,
                m,
                (-1e-30f32).to_bits() as u64
            ),
            m + 1
        );
        assert_eq!(
            fbin(
                FOp::Add,
                Fmt::F32,
                Rnd::Rz,
                false,
                m,
                (-1e-30f32).to_bits() as u64
            ),
            m
        );
    }

    #[test]
    fn nan_check() {
        assert!(Fmt::F32.is_nan(f32::NAN.to_bits() as u64));
        assert!(!Fmt::F32.is_nan(f32::INFINITY.to_bits() as u64));
        assert!(Fmt::F16.is_nan(0x7e00));
        assert!(!Fmt::F16.is_nan(0x7c00));
        assert!(Fmt::F64.is_nan(f64::NAN.to_bits()));
    }
}
