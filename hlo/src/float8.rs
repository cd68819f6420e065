//! The two 8-bit float types with host values, `f8e4m3fn` and `f8e5m2` (OCP FP8, the formats
//! H100's tensor cores take and `jnp.float8_e4m3fn` / `jnp.float8_e5m2` hold), their encoding and
//! XLA's conversion rule.
//!
//! A conversion to an 8-bit float is the value correctly rounded (ties to even) as if the
//! format's exponent were unbounded above, then: a result above the largest finite value is
//! NaN for `f8e4m3fn` (it has no infinity) and infinity for `f8e5m2`; NaN stays NaN (XLA's
//! patterns `0x7f` and `0x7e`, sign kept); infinity is NaN for `f8e4m3fn`. This is what ml_dtypes
//! and XLA:CPU compute (checked on every `f16` value and on `f32` values either side of each
//! rounding boundary: `hlo/tests/float8.rs`), and what XLA:GPU's `FpTrunc` intrinsic and the
//! hardware `cvt` with its infinity fix-up compute. It rounds once from the source value: a
//! conversion through `f16` would round ties of the `f8` grid that the `f16` rounding created
//! (`1.0625 + 2^-12` is `1.125` in `f8e4m3fn`, not `1.0`).
use std::fmt;

/// The parameters of an 8-bit float format, for code that encodes or decodes it elsewhere (the
/// compiler's PTX conversions read the same numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Float8Format {
    /// Exponent field width.
    pub exponent_bits: u32,
    /// Mantissa field width (without the implicit bit).
    pub mantissa_bits: u32,
    /// Exponent bias.
    pub bias: i32,
    /// True when the all-ones exponent encodes infinity and NaN (IEEE-like, `f8e5m2`); false
    /// when only `S.1111.111` is NaN and there is no infinity (`f8e4m3fn`).
    pub has_infinity: bool,
}

impl Float8Format {
    /// `f8e4m3fn`: 4 exponent bits, 3 mantissa bits, bias 7, no infinity, max 448.
    pub const E4M3FN: Float8Format = Float8Format {
        exponent_bits: 4,
        mantissa_bits: 3,
        bias: 7,
        has_infinity: false,
    };
    /// `f8e5m2`: 5 exponent bits, 2 mantissa bits, bias 15, IEEE infinities and NaNs, max 57344.
    pub const E5M2: Float8Format = Float8Format {
        exponent_bits: 5,
        mantissa_bits: 2,
        bias: 15,
        has_infinity: true,
    };

    /// The smallest normal exponent (`1 - bias`); subnormals share its quantum.
    pub fn min_exponent(self) -> i32 {
        1 - self.bias
    }

    /// The largest finite value (448 or 57344).
    pub fn max_finite(self) -> f64 {
        let top_field = (1i32 << self.exponent_bits) - if self.has_infinity { 2 } else { 1 };
        let mantissa_max = if self.has_infinity {
            (1 << self.mantissa_bits) - 1
        } else {
            (1 << self.mantissa_bits) - 2 // all ones is NaN
        };
        let significand = 1.0 + f64::from(mantissa_max) / f64::from(1u32 << self.mantissa_bits);
        significand * pow2(top_field - self.bias)
    }

    /// The NaN pattern XLA writes, without sign (`0x7f` for `f8e4m3fn`, `0x7e` for `f8e5m2`).
    pub fn nan_bits(self) -> u8 {
        if self.has_infinity {
            self.infinity_bits() | (1 << (self.mantissa_bits - 1))
        } else {
            0x7f
        }
    }

    /// The pattern of an overflowed value, without sign: infinity where the format has one,
    /// otherwise NaN.
    pub fn infinity_bits(self) -> u8 {
        if self.has_infinity {
            (((1u32 << self.exponent_bits) - 1) << self.mantissa_bits) as u8
        } else {
            0x7f
        }
    }

    /// `x` converted (the module docs' rule), as the format's bits.
    pub fn encode(self, x: f64) -> u8 {
        let sign = if x.is_sign_negative() { 0x80 } else { 0 };
        if x.is_nan() {
            return sign | self.nan_bits();
        }
        let a = x.abs();
        if a.is_infinite() {
            return sign | self.infinity_bits();
        }
        let m = self.mantissa_bits as i32;
        // The quantum at `a`: 2^(e - m) with e the exponent of `a`, never below the subnormals'.
        let e = exponent_of(a).max(self.min_exponent());
        let quantum = pow2(e - m);
        let r = (a / quantum).round_ties_even() * quantum; // both steps exact
        if r > self.max_finite() {
            return sign | self.infinity_bits();
        }
        sign | self.encode_exact(r)
    }

    /// The bits of a non-negative value the format holds exactly.
    fn encode_exact(self, r: f64) -> u8 {
        if r == 0.0 {
            return 0;
        }
        let m = self.mantissa_bits as i32;
        let e = exponent_of(r);
        if e < self.min_exponent() {
            return (r / pow2(self.min_exponent() - m)) as u8;
        }
        let field = (e + self.bias) as u32;
        let mantissa = (r / pow2(e - m)) as u32 - (1 << m);
        ((field << m) | mantissa) as u8
    }

    /// The value of `bits` (exact in `f32` and `f64`).
    pub fn decode(self, bits: u8) -> f64 {
        let sign = if bits & 0x80 != 0 { -1.0 } else { 1.0 };
        let m = self.mantissa_bits;
        let field = i32::from((bits & 0x7f) >> m);
        let mantissa = f64::from(bits & ((1 << m) - 1));
        let top = (1i32 << self.exponent_bits) - 1;
        if !self.has_infinity && bits & 0x7f == 0x7f {
            return f64::NAN;
        }
        if self.has_infinity && field == top {
            return if mantissa == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            };
        }
        let quantum_exponent = field.max(1) - self.bias - m as i32;
        let significand = if field == 0 {
            mantissa
        } else {
            mantissa + f64::from(1u32 << m)
        };
        sign * significand * pow2(quantum_exponent)
    }
}

/// `2^e` for the exponents an 8-bit format uses (exact).
fn pow2(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// The binary exponent of a positive finite `f64` (`floor(log2 a)`); the subnormals of `f64`
/// answer -1023, below every 8-bit format's range.
fn exponent_of(a: f64) -> i32 {
    ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023
}

macro_rules! float8_type {
    ($name:ident, $format:expr, $text:literal) => {
        #[doc = concat!("An `", $text, "` value (its bits; see the module docs).")]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name(u8);

        impl $name {
            /// The format's parameters.
            pub const FORMAT: Float8Format = $format;

            /// The value with these bits.
            pub fn from_bits(bits: u8) -> $name {
                $name(bits)
            }

            /// The bits.
            pub fn to_bits(self) -> u8 {
                self.0
            }

            /// The value stored in one byte (as `f16::from_le_bytes` for two).
            pub fn from_le_bytes(bytes: [u8; 1]) -> $name {
                $name(bytes[0])
            }

            /// The byte the value is stored as.
            pub fn to_le_bytes(self) -> [u8; 1] {
                [self.0]
            }

            /// `x` converted (rounded once, ties to even; see the module docs for overflow).
            pub fn from_f64(x: f64) -> $name {
                $name(Self::FORMAT.encode(x))
            }

            /// `x` converted: [`Self::from_f64`] (every `f32` is an `f64`).
            pub fn from_f32(x: f32) -> $name {
                Self::from_f64(f64::from(x))
            }

            /// The value (exact).
            pub fn to_f64(self) -> f64 {
                Self::FORMAT.decode(self.0)
            }

            /// The value (exact).
            pub fn to_f32(self) -> f32 {
                self.to_f64() as f32
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:#04x})", self.to_f64(), self.0)
            }
        }
    };
}

float8_type!(F8E4M3FN, Float8Format::E4M3FN, "f8e4m3fn");
float8_type!(F8E5M2, Float8Format::E5M2, "f8e5m2");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_decodes_and_encodes_back() {
        for format in [Float8Format::E4M3FN, Float8Format::E5M2] {
            for bits in 0..=255u8 {
                let v = format.decode(bits);
                if v.is_nan() {
                    continue;
                }
                assert_eq!(format.encode(v), bits, "{format:?} {bits:#04x} = {v}");
            }
        }
    }

    #[test]
    fn the_formats_limits() {
        assert_eq!(Float8Format::E4M3FN.max_finite(), 448.0);
        assert_eq!(Float8Format::E5M2.max_finite(), 57344.0);
        assert_eq!(F8E4M3FN::from_bits(0x01).to_f64(), 2f64.powi(-9));
        assert_eq!(F8E5M2::from_bits(0x01).to_f64(), 2f64.powi(-16));
        assert_eq!(F8E5M2::from_bits(0x7c).to_f64(), f64::INFINITY);
        assert!(F8E4M3FN::from_bits(0xff).to_f64().is_nan());
    }

    #[test]
    fn rounding_and_overflow_follow_xla() {
        // Ties to even at the top of e4m3fn's range: 464 is halfway between 448 (mantissa 110)
        // and 480 (the NaN pattern's value), so it rounds to 448; past it, NaN.
        assert_eq!(F8E4M3FN::from_f64(464.0).to_f64(), 448.0);
        assert_eq!(F8E4M3FN::from_f64(464.01).to_bits(), 0x7f);
        assert_eq!(F8E4M3FN::from_f64(-1e9).to_bits(), 0xff);
        assert_eq!(F8E4M3FN::from_f64(f64::INFINITY).to_bits(), 0x7f);
        // e5m2: 61440 is halfway between 57344 (mantissa 11) and 65536: ties to even overflow.
        assert_eq!(F8E5M2::from_f64(61440.0).to_bits(), 0x7c);
        assert_eq!(F8E5M2::from_f64(61439.0).to_f64(), 57344.0);
        assert_eq!(F8E5M2::from_f64(f64::NAN).to_bits(), 0x7e);
        // Rounded once from the source, not through f16.
        assert_eq!(F8E4M3FN::from_f64(1.0625 + 2f64.powi(-12)).to_f64(), 1.125);
        // Subnormals and underflow: half the smallest subnormal is a tie to zero.
        assert_eq!(F8E4M3FN::from_f64(2f64.powi(-10)).to_bits(), 0);
        assert_eq!(F8E4M3FN::from_f64(-2f64.powi(-10)).to_bits(), 0x80);
        assert_eq!(F8E4M3FN::from_f64(1.5 * 2f64.powi(-9)).to_bits(), 0x02);
        assert_eq!(F8E4M3FN::from_f64(1e-300).to_bits(), 0);
    }
}
