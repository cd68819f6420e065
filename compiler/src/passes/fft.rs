//! `fft` as dots with twiddle-factor matrices, the form every runtime in the forward window
//! runs, while `CompileOptions::emit_fft_thunk` is off (runtimes older than stage 1 of
//! [`proto::rollout::FFT_THUNK`] do not know the FFT thunk). Each transformed dimension of length `n` is one contraction with a constant
//! `W[j, k] = exp(∓2πi·jk/n)` (IFFT's `1/n` folded in), followed by a transpose that puts the
//! new dimension back in place; the complex dots then go through [`super::complex_dot`] to the
//! real gemm. RFFT's last dimension is two real dots (cos and −sin matrices, `n/2+1` columns)
//! made complex; IRFFT's last dimension reads the `n/2+1` half spectrum with the Hermitian
//! weights (1 for DC and Nyquist, 2 for the rest) folded into real cos and −sin matrices, so
//! the imaginary parts of DC and Nyquist drop out as a real signal requires.
//!
//! Numerics: a DFT sums `n` products per output, so its error grows as `O(n·eps)` against
//! `O(log n·eps)` for an FFT (docs/compiler.md "fft"); the twiddles are exact to the element
//! type (`jk mod n` reduced in integers, the angle in f64). Cost is `n` multiply-adds per output
//! element instead of `O(log n)`, and the matrix is a constant of `n·m` elements, so lengths
//! whose matrix passes [`MAX_TWIDDLE_ELEMENTS`] are refused with a message naming the option.
use hlo::{ArrayLiteral, Attrs, ConstantLiteral, DotDimensionNumbers, FftType, LiteralValue};
use hlo::{InstrId, Instruction, Opcode, PrimitiveType, Shape};

use crate::error::CompileError;
use crate::passes::emit::Emit;
use crate::passes::rebuild::{for_each_computation, rebuild, Scope};
use crate::unsupported::UnsupportedExpansion;

/// The largest twiddle matrix (elements) the fallback embeds: 1024×1024, 8 MiB as c64.
pub const MAX_TWIDDLE_ELEMENTS: u64 = 1 << 20;

/// Rewrites every `fft` of every computation.
pub fn run(module: &mut hlo::HloModule) -> Result<(), CompileError> {
    for_each_computation(module, Scope::All, |_, comp| {
        if !comp.instructions.iter().any(|i| i.opcode == Opcode::Fft) {
            return Ok(None);
        }
        let new = rebuild(comp, |r, _, old| {
            if old.opcode != Opcode::Fft {
                return r.keep(old).map(Some);
            }
            let operands = r.operands(old)?;
            let refuse =
                |why: UnsupportedExpansion| CompileError::unsupported(&comp.name, old, why);
            let (&[x], Some(t), Some(len)) = (
                operands.as_slice(),
                old.attrs.fft_type,
                old.attrs.fft_length.as_ref(),
            ) else {
                return Err(refuse(UnsupportedExpansion::FftParts));
            };
            let in_shape = r
                .instrs()
                .get(x.index())
                .map(|i| i.shape.clone())
                .ok_or_else(|| CompileError::Internal(format!("{}: operand missing", old.name)))?;
            for &n in len {
                let m = if t == FftType::Fft || t == FftType::Ifft {
                    n
                } else {
                    n / 2 + 1
                };
                if (n as u64).saturating_mul(m as u64) > MAX_TWIDDLE_ELEMENTS {
                    return Err(refuse(UnsupportedExpansion::FftTwiddles {
                        length: n,
                        columns: m,
                    }));
                }
            }
            let mut push = |i| r.push(i);
            Ok(Some(expand(old, x, &in_shape, t, len, &mut push)))
        })?;
        Ok(Some(new))
    })
}

/// `exp(sign·2πi·m/n)` for the integer `m` (already reduced mod `n`).
fn twiddle(m: u64, n: u64, sign: f64) -> (f64, f64) {
    let (s, c) = (sign * std::f64::consts::TAU * m as f64 / n as f64).sin_cos();
    (c, s)
}

struct Builder<'e, 'a> {
    e: &'e mut Emit<'a>,
    /// The real element type (f32 / f64).
    real: PrimitiveType,
}

impl Builder<'_, '_> {
    fn complex(&self) -> PrimitiveType {
        if self.real == PrimitiveType::F64 {
            PrimitiveType::C128
        } else {
            PrimitiveType::C64
        }
    }

    /// A `[rows, cols]` constant of `ty` from `f(j, k)` (re, im; im ignored for a real type).
    fn matrix(
        &mut self,
        ty: PrimitiveType,
        rows: i64,
        cols: i64,
        f: impl Fn(u64, u64) -> (f64, f64),
    ) -> InstrId {
        let mut values = Vec::with_capacity((rows * cols) as usize);
        for j in 0..rows as u64 {
            for k in 0..cols as u64 {
                let (re, im) = f(j, k);
                values.push(if ty.is_complex() {
                    LiteralValue::Complex(re, im)
                } else {
                    LiteralValue::Float(re)
                });
            }
        }
        let attrs = Attrs {
            literal: Some(ConstantLiteral::Array(ArrayLiteral { values })),
            ..Attrs::default()
        };
        self.e.op(
            Opcode::Constant,
            Shape::array(ty, vec![rows, cols]),
            vec![],
            attrs,
        )
    }

    /// `x` (dims `dims`) contracted along `axis` with `w` (`[dims[axis], m]`), the new
    /// dimension of `m` put back at `axis`. Returns the result's dims.
    fn contract(
        &mut self,
        x: InstrId,
        dims: &[i64],
        axis: usize,
        w: InstrId,
        m: i64,
        ty: PrimitiveType,
    ) -> (InstrId, Vec<i64>) {
        let mut dot_dims: Vec<i64> = dims.to_vec();
        dot_dims.remove(axis);
        dot_dims.push(m);
        let attrs = Attrs {
            dot_dimension_numbers: Some(DotDimensionNumbers {
                lhs_contracting_dims: vec![axis as i64],
                rhs_contracting_dims: vec![0],
                ..DotDimensionNumbers::default()
            }),
            ..Attrs::default()
        };
        let dot = self.e.op(
            Opcode::Dot,
            Shape::array(ty, dot_dims.clone()),
            vec![x, w],
            attrs,
        );
        let mut out = dims.to_vec();
        out[axis] = m;
        if axis + 1 == dims.len() {
            return (dot, out);
        }
        // dot's dims: the others in order, then m; move m back to `axis`.
        let rank = dims.len() as i64;
        let last = rank - 1;
        let perm: Vec<i64> = (0..rank)
            .map(|d| match d {
                d if d < axis as i64 => d,
                d if d == axis as i64 => last,
                d => d - 1,
            })
            .collect();
        let t = self
            .e
            .with_dims(Opcode::Transpose, Shape::array(ty, out.clone()), dot, perm);
        (t, out)
    }

    /// A complex DFT along `axis` (inverse scaled by `1/n`).
    fn complex_axis(
        &mut self,
        x: InstrId,
        dims: &[i64],
        axis: usize,
        inverse: bool,
    ) -> (InstrId, Vec<i64>) {
        let n = dims[axis];
        let nu = n as u64;
        let (sign, scale) = if inverse {
            (1.0, 1.0 / n as f64)
        } else {
            (-1.0, 1.0)
        };
        let ty = self.complex();
        let w = self.matrix(ty, n, n, |j, k| {
            let (c, s) = twiddle((j * k) % nu, nu, sign);
            (c * scale, s * scale)
        });
        self.contract(x, dims, axis, w, n, ty)
    }
}

fn expand(
    old: &Instruction,
    x: InstrId,
    in_shape: &Shape,
    t: FftType,
    len: &[i64],
    push: &mut dyn FnMut(Instruction) -> InstrId,
) -> InstrId {
    let mut e = Emit::new(old, "fft", push);
    let in_ty = in_shape.element_type().unwrap_or(PrimitiveType::C64);
    let real = if in_ty.is_complex() {
        in_ty.complex_component()
    } else {
        in_ty
    };
    let mut b = Builder { e: &mut e, real };
    let mut dims = in_shape.dims().to_vec();
    let rank = dims.len();
    let first = rank - len.len();
    let last = rank - 1;
    let n_last = len[len.len() - 1];
    let nu = n_last as u64;
    let mut v = x;
    match t {
        FftType::Fft | FftType::Ifft => {
            for axis in first..rank {
                (v, dims) = b.complex_axis(v, &dims, axis, t == FftType::Ifft);
            }
        }
        FftType::Rfft => {
            let m = n_last / 2 + 1;
            let cos = b.matrix(real, n_last, m, |j, k| twiddle((j * k) % nu, nu, -1.0));
            let sin = b.matrix(real, n_last, m, |j, k| {
                let z = twiddle((j * k) % nu, nu, -1.0);
                (z.1, 0.0)
            });
            let (re, d) = b.contract(v, &dims, last, cos, m, real);
            let (im, _) = b.contract(v, &dims, last, sin, m, real);
            let ct = b.complex();
            v =
                b.e.plain(Opcode::Complex, Shape::array(ct, d.clone()), vec![re, im]);
            dims = d;
            for axis in first..last {
                (v, dims) = b.complex_axis(v, &dims, axis, false);
            }
        }
        FftType::Irfft => {
            for axis in first..last {
                (v, dims) = b.complex_axis(v, &dims, axis, true);
            }
            let h = dims[last];
            let weight = |k: u64| if k == 0 || 2 * k == nu { 1.0 } else { 2.0 } / n_last as f64;
            // x[j] = Σ_k w_k (Re X_k cos θ − Im X_k sin θ), θ = 2π jk/n: rows k, columns j.
            let cos = b.matrix(real, h, n_last, |k, j| {
                (weight(k) * twiddle((j * k) % nu, nu, 1.0).0, 0.0)
            });
            let msin = b.matrix(real, h, n_last, |k, j| {
                (-weight(k) * twiddle((j * k) % nu, nu, 1.0).1, 0.0)
            });
            let part_shape = Shape::array(real, dims.clone());
            let re = b.e.plain(Opcode::Real, part_shape.clone(), vec![v]);
            let im = b.e.plain(Opcode::Imag, part_shape, vec![v]);
            let (a, d) = b.contract(re, &dims, last, cos, n_last, real);
            let (c, _) = b.contract(im, &dims, last, msin, n_last, real);
            b.e.next_name = Some(old.name.clone());
            return b.e.plain(Opcode::Add, Shape::array(real, d), vec![a, c]);
        }
    }
    // The last instruction keeps the fft's name (so do its users' references in errors).
    let shape = old.shape.clone();
    b.e.next_name = Some(old.name.clone());
    b.e.plain(Opcode::Copy, shape, vec![v])
}
