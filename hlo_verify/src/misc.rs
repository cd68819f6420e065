//! Everything else with a fixed rule: FFT, tokens, ids, linear algebra and top-k.

use super::error::ShapeError;
use super::infer::*;
use hlo::*;
use hlo::{ArrayShape, PrimitiveType, Shape};

/// FFT, tokens, dependencies, ids, linear algebra and top-k.
pub(super) fn infer(cx: &Inst<'_>) -> R<Option<Shape>> {
    use Opcode::*;
    let Inst { opcode, ops, a, .. } = *cx;
    let out = match opcode {
        Fft => {
            count(ops, 1, opcode)?;
            let x = arr(ops, 0)?;
            let len = required(a.fft_length.as_ref(), opcode, "fft_length=")?;
            let t = required(a.fft_type, opcode, "fft_type=")?;
            fft_shape(x, len, t)?
        }
        AfterAll => Shape::Token,
        AddDependency => {
            count(ops, 2, opcode)?;
            ops.first()
                .map(|s| s.without_layout())
                .unwrap_or(Shape::Token)
        }
        OptimizationBarrier => {
            count(ops, 1, opcode)?;
            ops.first()
                .map(|s| s.without_layout())
                .unwrap_or(Shape::Token)
        }
        PartitionId | ReplicaId => {
            count(ops, 0, opcode)?;
            Shape::scalar(PrimitiveType::U32)
        }
        GetDimensionSize => {
            count(ops, 1, opcode)?;
            Shape::scalar(PrimitiveType::S32)
        }
        Cholesky => cholesky(cx)?,
        TriangularSolve => triangular_solve(cx)?,
        TopK => {
            count(ops, 1, opcode)?;
            let x = arr(ops, 0)?;
            let k = required(a.k, opcode, "k=")?;
            let mut dims = x.dims.clone();
            if let Some(l) = dims.last_mut() {
                if k > *l {
                    return fail(ShapeError::TopK { k, dim: *l });
                }
                *l = k;
            }
            Shape::Tuple(vec![
                array(x.element_type, dims.clone()),
                array(PrimitiveType::S32, dims),
            ])
        }
        _ => return Ok(None),
    };
    Ok(Some(out))
}

/// XLA's `InferCholeskyShape`: `a` is `[..., n, n]` of a floating or complex type; the result
/// is `a`'s shape.
fn cholesky(cx: &Inst<'_>) -> R<Shape> {
    let Inst { opcode, ops, .. } = *cx;
    count(ops, 1, opcode)?;
    let x = arr(ops, 0)?;
    let t = x.element_type;
    if !(t.is_float() || t.is_complex()) {
        return fail(ShapeError::CholeskyType(t));
    }
    let r = x.dims.len();
    if r < 2 || x.dims[r - 1] != x.dims[r - 2] {
        return fail(ShapeError::TriangularSolveA(x.clone()));
    }
    Ok(Shape::Array(x.clone()).without_layout())
}

/// XLA's `InferTriangularSolveShape`: `a` is `[..., n, n]`, `b` is `[..., n, m]` (left side)
/// or `[..., m, n]` with the same batch dimensions and element type (floating or complex), and
/// the result is `b`'s shape.
fn triangular_solve(cx: &Inst<'_>) -> R<Shape> {
    let Inst { opcode, ops, a, .. } = *cx;
    count(ops, 2, opcode)?;
    let options = required(a.triangular_solve, opcode, "transpose_a=")?;
    required(options.transpose_a, opcode, "transpose_a=")?;
    let (x, y) = (arr(ops, 0)?, arr(ops, 1)?);
    let t = x.element_type;
    if t != y.element_type || !(t.is_float() || t.is_complex()) {
        return fail(ShapeError::TriangularSolveType {
            a: t,
            b: y.element_type,
        });
    }
    let r = x.dims.len();
    if r < 2 || x.dims[r - 1] != x.dims[r - 2] {
        return fail(ShapeError::TriangularSolveA(x.clone()));
    }
    let (solved, need) = if options.left_side {
        (r - 2, "[..., n, m]")
    } else {
        (r - 1, "[..., m, n]")
    };
    if y.dims.len() != r || y.dims[..r - 2] != x.dims[..r - 2] || y.dims[solved] != x.dims[r - 1] {
        return fail(ShapeError::TriangularSolveB {
            a: x.clone(),
            b: y.clone(),
            left_side: options.left_side,
            need,
        });
    }
    Ok(Shape::Array(y.clone()).without_layout())
}

/// XLA's `InferFftShape`: 1 to 3 transformed (trailing) dimensions that match `fft_length`;
/// rfft keeps `n/2+1` of the last, irfft takes `n/2+1` and gives `n`.
fn fft_shape(x: &ArrayShape, len: &[i64], t: FftType) -> R<Shape> {
    let rank = x.dims.len();
    if len.is_empty() || len.len() > 3 || len.len() > rank || len.iter().any(|&n| n <= 0) {
        return fail(ShapeError::FftLength {
            length: len.to_vec(),
            rank,
        });
    }
    let first = rank - len.len();
    let complex = matches!(x.element_type, PrimitiveType::C64 | PrimitiveType::C128);
    let out_type = match t {
        FftType::Rfft => match x.element_type {
            PrimitiveType::F32 => PrimitiveType::C64,
            PrimitiveType::F64 => PrimitiveType::C128,
            t => return fail(ShapeError::RfftElementType(t)),
        },
        _ if !complex => {
            return fail(ShapeError::FftElementType {
                fft_type: t.name(),
                found: x.element_type,
            })
        }
        FftType::Irfft => x.element_type.complex_component(),
        FftType::Fft | FftType::Ifft => x.element_type,
    };
    let mut dims = x.dims.clone();
    for (k, &n) in len.iter().enumerate() {
        let dim = first + k;
        let last = k + 1 == len.len();
        let want = if last && t == FftType::Irfft {
            n / 2 + 1
        } else {
            n
        };
        if x.dims.get(dim) != Some(&want) {
            return fail(ShapeError::FftDimension {
                fft_type: t.name(),
                operand: x.clone(),
                length: len.to_vec(),
                dim,
                want,
            });
        }
        if last {
            if let Some(d) = dims.get_mut(dim) {
                *d = if t == FftType::Rfft { n / 2 + 1 } else { n };
            }
        }
    }
    Ok(array(out_type, dims))
}
