//! `triangular-solve` becomes ops the rest of the compiler already handles, as XLA:CPU's
//! `TriangularSolveExpander` does (XLA:GPU calls cuBLAS trsm instead; expanding here keeps the
//! runtime unchanged, so runtimes that predate triangular-solve run the artifacts):
//!
//! 1. every option combination is reduced to one problem, `L x = b'` with `L` lower triangular:
//!    `x op(a) = b` is `op(a)^T x^T = b^T` (`b` transposed in, the result transposed out);
//!    `op(a)` is `a` transposed when `transpose_a` is `TRANSPOSE` or `ADJOINT`, and for
//!    `ADJOINT` on complex values also conjugated (`complex(real(a), -imag(a))`);
//!    an upper-triangular matrix is reversed along both matrix dimensions (which makes it lower),
//!    with `b'`'s rows reversed in and the result's reversed out;
//! 2. the strictly lower triangle is kept by a mask (JAX passes whole matrices whose other
//!    triangle holds garbage: only the named triangle may be read) and the diagonal taken apart
//!    (ones for `unit_diagonal`, which is then not read);
//! 3. a `while` over the rows does forward substitution for every batch element and column at
//!    once: row `i` of `x` is `(b'_i - sum_j L_ij x_j) / d_i`, where the unsolved rows of `x`
//!    are still zero, then `dynamic-update-slice`d in.
//!
//! Complex operands use the same loop on complex arithmetic (multiply, the `add` reducer,
//! Smith's division by the diagonal).
use hlo::{Attrs, ComparisonDirection, LiteralValue, Transpose, TriangularSolveOptions};
use hlo::{ComputationId, HloModule, InstrId, Instruction, Opcode, PrimitiveType, Shape};

use crate::error::CompileError;
use crate::passes::emit::{push_computation, zero, Emit};
use crate::passes::rebuild::rebuild;
use crate::unsupported::UnsupportedExpansion;

/// Expands every triangular-solve of every computation.
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    for index in 0..module.computations.len() {
        let comp = &module.computations[index];
        if !comp.instructions.iter().any(is_solve) {
            continue;
        }
        let comp = comp.clone();
        // The loops' computations first (the rebuild below sees the module only through ids).
        let mut loops = Vec::new();
        for (id, old) in comp.iter().filter(|(_, i)| is_solve(i)) {
            let p = Problem::of(&comp.name, old)?;
            loops.push((id, add_loop_computations(module, &p, old), p));
        }
        let new = rebuild(&comp, |r, id, old| {
            let Some((_, l, p)) = loops.iter().find(|(at, _, _)| *at == id) else {
                return r.keep(old).map(Some);
            };
            let operands = r.operands(old)?;
            let mut push = |i| r.push(i);
            let mut e = Emit::new(old, "trsm.", &mut push);
            Ok(Some(expand(&mut e, p, &operands, l)))
        })?;
        module.computations[index] = new;
    }
    Ok(())
}

fn is_solve(i: &Instruction) -> bool {
    i.opcode == Opcode::TriangularSolve
}

/// One triangular-solve, normalized: `L x = b'` for `x` of `[batch..., n, m]`.
struct Problem {
    ty: PrimitiveType,
    batch: Vec<i64>,
    n: i64,
    m: i64,
    o: TriangularSolveOptions,
    /// `a` is transposed before use (`op(a)`, and once more for the right side).
    transpose: bool,
    /// The matrix then holds its values in the upper triangle: reverse it.
    reverse: bool,
}

impl Problem {
    fn of(comp: &str, old: &Instruction) -> Result<Problem, CompileError> {
        let refuse = |why: UnsupportedExpansion| CompileError::unsupported(comp, old, why);
        let o = old
            .attrs
            .triangular_solve
            .ok_or_else(|| refuse(UnsupportedExpansion::TriangularSolveOptions))?;
        let ty = old
            .shape
            .element_type()
            .ok_or_else(|| refuse(UnsupportedExpansion::TupleResult))?;
        let dims = old.shape.dims().to_vec();
        let r = dims.len();
        if r < 2 {
            return Err(refuse(UnsupportedExpansion::TriangularSolveRank));
        }
        let (rows, cols) = (dims[r - 2], dims[r - 1]);
        let op_transposed = !matches!(o.transpose_a, Some(Transpose::NoTranspose) | None);
        // The right side transposes op(a) once more: a is transposed when exactly one holds.
        let right = !o.left_side;
        let transpose = op_transposed != right;
        let (n, m) = if o.left_side {
            (rows, cols)
        } else {
            (cols, rows)
        };
        Ok(Problem {
            ty,
            batch: dims[..r - 2].to_vec(),
            n,
            m,
            o,
            transpose,
            reverse: o.lower == transpose,
        })
    }

    fn nb(&self) -> usize {
        self.batch.len()
    }

    /// `[batch..., extra...]` of the element type.
    fn shape(&self, extra: &[i64]) -> Shape {
        Shape::array(self.ty, [self.batch.as_slice(), extra].concat())
    }

    /// The loop state: counter, `L`, diagonal, `b'`, `x`.
    fn state(&self) -> Shape {
        Shape::Tuple(vec![
            Shape::scalar(PrimitiveType::S32),
            self.shape(&[self.n, self.n]),
            self.shape(&[self.n]),
            self.shape(&[self.n, self.m]),
            self.shape(&[self.n, self.m]),
        ])
    }
}

/// The part type of a complex element type.
fn part_type(ty: PrimitiveType) -> Option<PrimitiveType> {
    match ty {
        PrimitiveType::C64 => Some(PrimitiveType::F32),
        PrimitiveType::C128 => Some(PrimitiveType::F64),
        _ => None,
    }
}

/// Swaps the last two of `rank` dimensions.
fn swap_last(rank: usize) -> Vec<i64> {
    let mut p: Vec<i64> = (0..rank as i64).collect();
    p.swap(rank - 2, rank - 1);
    p
}

fn one(ty: PrimitiveType) -> LiteralValue {
    if ty.is_float() {
        LiteralValue::Float(1.0)
    } else {
        LiteralValue::Int(1)
    }
}

/// The computations one solve's loop calls.
struct Loop {
    cond: ComputationId,
    body: ComputationId,
    add: ComputationId,
}

/// Replaces a triangular-solve (operands `a`, `b` as new handles) with the normalization, the
/// loop and the way back; the last instruction keeps the solve's name.
fn expand(e: &mut Emit<'_>, p: &Problem, operands: &[InstrId], lp: &Loop) -> InstrId {
    let (a, b) = (operands[0], operands[1]);
    let (nb, n, m) = (p.nb(), p.n, p.m);
    let (sq, nm) = (p.shape(&[n, n]), p.shape(&[n, m]));
    let mut l = a;
    if p.transpose {
        l = e.with_dims(Opcode::Transpose, sq.clone(), a, swap_last(nb + 2));
    }
    if let (Some(Transpose::Adjoint), Some(part)) = (p.o.transpose_a, part_type(p.ty)) {
        // ADJOINT conjugates too (on either side: (conj a)^T transposed is conj a).
        let ps = Shape::array(part, [p.batch.as_slice(), &[n, n]].concat());
        let re = e.plain(Opcode::Real, ps.clone(), vec![l]);
        let im = e.plain(Opcode::Imag, ps.clone(), vec![l]);
        let im = e.plain(Opcode::Negate, ps, vec![im]);
        l = e.plain(Opcode::Complex, sq.clone(), vec![re, im]);
    }
    let mut rhs = b;
    if !p.o.left_side {
        rhs = e.with_dims(Opcode::Transpose, nm.clone(), b, swap_last(nb + 2));
    }
    if p.reverse {
        l = e.with_dims(Opcode::Reverse, sq, l, vec![nb as i64, nb as i64 + 1]);
        rhs = e.with_dims(Opcode::Reverse, nm.clone(), rhs, vec![nb as i64]);
    }
    let (l, d) = split_diagonal(e, p, l, lp.add);
    let z = e.constant(p.ty, zero(p.ty));
    let x0 = e.with_dims(Opcode::Broadcast, nm.clone(), z, vec![]);
    let i0 = e.constant(PrimitiveType::S32, LiteralValue::Int(0));
    let init = e.plain(Opcode::Tuple, p.state(), vec![i0, l, d, rhs, x0]);
    let attrs = Attrs {
        condition: Some(lp.cond),
        body: Some(lp.body),
        ..Attrs::default()
    };
    let w = e.op(Opcode::While, p.state(), vec![init], attrs);
    let (reverse, transpose) = (p.reverse, !p.o.left_side);
    let name = e.like.name.clone();
    if !reverse && !transpose {
        e.next_name = Some(name.clone());
    }
    let mut x = e.gte(nm.clone(), w, 4);
    if reverse {
        if !transpose {
            e.next_name = Some(name.clone());
        }
        x = e.with_dims(Opcode::Reverse, nm, x, vec![nb as i64]);
    }
    if transpose {
        e.next_name = Some(name);
        x = e.with_dims(Opcode::Transpose, p.shape(&[m, n]), x, swap_last(nb + 2));
    }
    x
}

/// The strictly lower triangle of `l` (the rest masked to zero) and its diagonal (ones for
/// `unit_diagonal`, which is then not read).
fn split_diagonal(
    e: &mut Emit<'_>,
    p: &Problem,
    l: InstrId,
    add: ComputationId,
) -> (InstrId, InstrId) {
    let (nb, n) = (p.nb() as i64, p.n);
    let sq = p.shape(&[n, n]);
    let pred_sq = Shape::array(PrimitiveType::Pred, [p.batch.as_slice(), &[n, n]].concat());
    let mat_dims = vec![nb, nb + 1];
    let z = e.constant(p.ty, zero(p.ty));
    let zeros = e.with_dims(Opcode::Broadcast, sq.clone(), z, vec![]);
    let below = e.triangle(n, ComparisonDirection::Gt);
    let below = e.with_dims(Opcode::Broadcast, pred_sq.clone(), below, mat_dims.clone());
    let strict = e.plain(Opcode::Select, sq.clone(), vec![below, l, zeros]);
    let dshape = p.shape(&[n]);
    let d = if p.o.unit_diagonal {
        let c = e.constant(p.ty, one(p.ty));
        e.with_dims(Opcode::Broadcast, dshape, c, vec![])
    } else {
        let eye = e.triangle(n, ComparisonDirection::Eq);
        let eye = e.with_dims(Opcode::Broadcast, pred_sq, eye, mat_dims);
        let diag = e.plain(Opcode::Select, sq, vec![eye, l, zeros]);
        // A row that holds only its diagonal element sums to that element exactly.
        e.reduce_sum(dshape, diag, nb + 1, add)
    };
    (strict, d)
}

/// Adds the loop's condition, body and their reducer to the module.
fn add_loop_computations(module: &mut HloModule, p: &Problem, like: &Instruction) -> Loop {
    let ty = Shape::scalar(p.ty);
    let add = push_computation(module, like, "trsm_add.", |e| {
        let x = e.param(ty.clone(), 0);
        let y = e.param(ty.clone(), 1);
        (vec![x, y], e.plain(Opcode::Add, ty.clone(), vec![x, y]))
    });
    let cond = push_computation(module, like, "trsm_cond.", |e| {
        let s = e.param(p.state(), 0);
        let i = e.gte(Shape::scalar(PrimitiveType::S32), s, 0);
        let n = e.constant(PrimitiveType::S32, LiteralValue::Int(i128::from(p.n)));
        let pred = Shape::scalar(PrimitiveType::Pred);
        (vec![s], e.compare(pred, i, n, ComparisonDirection::Lt))
    });
    let body = push_computation(module, like, "trsm_body.", |e| {
        let s = e.param(p.state(), 0);
        (vec![s], substitute_row(e, p, s, add))
    });
    Loop { cond, body, add }
}

/// The loop body: row `i` of `x` from the rows before it; returns the next state.
fn substitute_row(e: &mut Emit<'_>, p: &Problem, s: InstrId, add: ComputationId) -> InstrId {
    let (nb, n, m) = (p.nb(), p.n, p.m);
    let s32 = Shape::scalar(PrimitiveType::S32);
    let (sq, nm) = (p.shape(&[n, n]), p.shape(&[n, m]));
    let i = e.gte(s32.clone(), s, 0);
    let l = e.gte(sq, s, 1);
    let d = e.gte(p.shape(&[n]), s, 2);
    let b = e.gte(nm.clone(), s, 3);
    let x = e.gte(nm.clone(), s, 4);
    let z = e.constant(PrimitiveType::S32, LiteralValue::Int(0));
    let row_at: Vec<InstrId> = [vec![z; nb], vec![i, z]].concat();
    let row = e.dynamic_slice(p.shape(&[1, n]), l, &row_at);
    let row = e.plain(Opcode::Reshape, p.shape(&[n]), vec![row]);
    let keep: Vec<i64> = (0..=nb as i64).collect();
    let row = e.with_dims(Opcode::Broadcast, nm.clone(), row, keep);
    let products = e.plain(Opcode::Multiply, nm.clone(), vec![row, x]);
    let sum = e.reduce_sum(p.shape(&[m]), products, nb as i64, add);
    let bi = e.dynamic_slice(p.shape(&[1, m]), b, &row_at);
    let bi = e.plain(Opcode::Reshape, p.shape(&[m]), vec![bi]);
    let di_at: Vec<InstrId> = [vec![z; nb], vec![i]].concat();
    let di = e.dynamic_slice(p.shape(&[1]), d, &di_at);
    let di = e.plain(Opcode::Reshape, p.shape(&[]), vec![di]);
    let batch: Vec<i64> = (0..nb as i64).collect();
    let di = e.with_dims(Opcode::Broadcast, p.shape(&[m]), di, batch);
    let rest = e.plain(Opcode::Subtract, p.shape(&[m]), vec![bi, sum]);
    let xi = e.plain(Opcode::Divide, p.shape(&[m]), vec![rest, di]);
    let xi = e.plain(Opcode::Reshape, p.shape(&[1, m]), vec![xi]);
    let x = e.plain(
        Opcode::DynamicUpdateSlice,
        nm,
        [vec![x, xi], row_at].concat(),
    );
    let one = e.constant(PrimitiveType::S32, LiteralValue::Int(1));
    let next = e.plain(Opcode::Add, s32, vec![i, one]);
    e.plain(Opcode::Tuple, p.state(), vec![next, l, d, b, x])
}
