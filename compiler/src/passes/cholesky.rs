//! `cholesky` becomes ops the rest of the compiler already handles (XLA:CPU's
//! `CholeskyExpander` does the same; XLA:GPU's `GpusolverRewriter` calls cuSOLVER `potrf`,
//! which this compiler does with [`to_potrf`] behind `CompileOptions::emit_cusolver_potrf`).
//!
//! The meaning kept is XLA:GPU's, so both forms and the evaluator agree:
//! - only the named triangle is read, and it receives the factor (`a = l lᴴ` for `lower=true`,
//!   `a = uᴴ u` otherwise); the diagonal is read as real;
//! - the other triangle keeps the operand's values, as cuSOLVER's in-place `potrf` leaves them
//!   (XLA calls them implementation-defined; XLA:CPU's expander writes zeros there);
//! - a matrix whose leading minor of some order is not positive definite (a pivot `<= 0` or
//!   NaN, cuSOLVER's `info > 0`) becomes all NaN (`NaN + NaN i` for complex), per batch element.
//!
//! [`run`] expands each cholesky as LAPACK's unblocked left-looking `xPOTF2`, a `while` over the
//! columns `j` of every batch element at once: `v = a[:, j] - L conj(L[j, :])ᵀ` (a product
//! broadcast and reduced; the columns of `L` from `j` on are still zero), the pivot
//! `d = sqrt(v[j])`, and column `j` of `L` becomes `v / d` below the diagonal and `d` on it. An
//! upper factor is the lower one of the transposed operand, transposed back (XLA's expander
//! does the same; for complex operands this factors `conj(a)`, whose factor transposed is `lᴴ`).
//! Complex operands run on their real and imaginary parts (no complex reduce is needed).
use hlo::Layout;
use hlo::{Attrs, ComparisonDirection, LiteralValue, OutputOperandAlias};
use hlo::{ComputationId, HloModule, InstrId, Instruction, Opcode, PrimitiveType, Shape};

use crate::error::CompileError;
use crate::passes::emit::{push_computation, zero, Emit};
use crate::passes::rebuild::rebuild;
use crate::unsupported::UnsupportedExpansion;

/// The handler XLA:GPU and JAX call for a Cholesky factorization (runtimes from stage 1 of
/// [`proto::rollout::CUSOLVER_POTRF`] on).
pub const POTRF_TARGET: &str = "cusolver_potrf_ffi";

/// Expands every cholesky of every computation into a column loop (see the module doc).
pub fn run(module: &mut HloModule) -> Result<(), CompileError> {
    for_each_cholesky(module, "chol.", |module, p, like| {
        let lp = add_loop_computations(module, p, like);
        Box::new(move |e: &mut Emit<'_>, a: InstrId| expand(e, p, a, &lp))
    })
}

/// Lowers every cholesky to a `cusolver_potrf_ffi` custom call (typed FFI, column-major
/// operand, `info` per matrix) whose factor is replaced by NaN where `info != 0`: XLA:GPU's
/// `GpusolverRewriter` and JAX's CUDA lowering, with `lower` as the handler's attribute.
pub fn to_potrf(module: &mut HloModule) -> Result<(), CompileError> {
    for_each_cholesky(module, "potrf.", |_, p, _| {
        Box::new(move |e: &mut Emit<'_>, a: InstrId| potrf_call(e, p, a))
    })
}

type Expansion<'p> = Box<dyn Fn(&mut Emit<'_>, InstrId) -> InstrId + 'p>;

/// Replaces each cholesky of each computation with what `make` builds for it (`make` may add
/// computations to the module first).
fn for_each_cholesky(
    module: &mut HloModule,
    prefix: &'static str,
    make: impl for<'p> Fn(&mut HloModule, &'p Problem, &Instruction) -> Expansion<'p>,
) -> Result<(), CompileError> {
    for index in 0..module.computations.len() {
        let comp = &module.computations[index];
        if !comp.instructions.iter().any(is_cholesky) {
            continue;
        }
        let comp = comp.clone();
        let problems: Vec<(InstrId, Problem)> = comp
            .iter()
            .filter(|(_, i)| is_cholesky(i))
            .map(|(id, old)| Ok((id, Problem::of(&comp.name, old)?)))
            .collect::<Result<_, CompileError>>()?;
        let mut expansions = Vec::new();
        for (id, p) in &problems {
            let like = comp.get(*id).ok_or_else(|| {
                CompileError::Internal(format!("cholesky {id:?} vanished from {}", comp.name))
            })?;
            expansions.push((*id, make(module, p, like)));
        }
        let new = rebuild(&comp, |r, id, old| {
            let Some((_, expand)) = expansions.iter().find(|(at, _)| *at == id) else {
                return r.keep(old).map(Some);
            };
            let operands = r.operands(old)?;
            let mut push = |i| r.push(i);
            let mut e = Emit::new(old, prefix, &mut push);
            Ok(Some(expand(&mut e, operands[0])))
        })?;
        module.computations[index] = new;
    }
    Ok(())
}

fn is_cholesky(i: &Instruction) -> bool {
    i.opcode == Opcode::Cholesky
}

/// One cholesky: `[batch..., n, n]` of `ty`.
struct Problem {
    ty: PrimitiveType,
    batch: Vec<i64>,
    n: i64,
    lower: bool,
}

impl Problem {
    fn of(comp: &str, old: &Instruction) -> Result<Problem, CompileError> {
        let refuse = |why: UnsupportedExpansion| CompileError::unsupported(comp, old, why);
        let ty = old
            .shape
            .element_type()
            .ok_or_else(|| refuse(UnsupportedExpansion::TupleResult))?;
        let dims = old.shape.dims();
        let r = dims.len();
        if r < 2 || dims[r - 1] != dims[r - 2] {
            return Err(refuse(UnsupportedExpansion::CholeskyShape));
        }
        Ok(Problem {
            ty,
            batch: dims[..r - 2].to_vec(),
            n: dims[r - 1],
            lower: old.attrs.cholesky.unwrap_or_default().lower,
        })
    }

    fn nb(&self) -> usize {
        self.batch.len()
    }

    /// 2 for complex operands (real and imaginary part), else 1.
    fn parts(&self) -> usize {
        if self.ty.is_complex() {
            2
        } else {
            1
        }
    }

    /// The type the loop computes in (a complex type's component).
    fn real(&self) -> PrimitiveType {
        self.ty.complex_component()
    }

    /// `[batch..., extra...]` of `ty`.
    fn shape_of(&self, ty: PrimitiveType, extra: &[i64]) -> Shape {
        Shape::array(ty, [self.batch.as_slice(), extra].concat())
    }

    /// `[batch..., extra...]` of the computing type.
    fn shape(&self, extra: &[i64]) -> Shape {
        self.shape_of(self.real(), extra)
    }

    /// The batch dimensions' indices.
    fn batch_dims(&self) -> Vec<i64> {
        (0..self.nb() as i64).collect()
    }

    /// The loop state: column, the operand's parts, the factor's parts, and `ok` per matrix.
    fn state(&self) -> Shape {
        let sq = self.shape(&[self.n, self.n]);
        let mut s = vec![Shape::scalar(PrimitiveType::S32)];
        s.extend(std::iter::repeat_n(sq, 2 * self.parts()));
        s.push(self.shape_of(PrimitiveType::Pred, &[]));
        Shape::Tuple(s)
    }
}

/// Swaps the last two of `rank` dimensions.
fn swap_last(rank: usize) -> Vec<i64> {
    let mut p: Vec<i64> = (0..rank as i64).collect();
    p.swap(rank - 2, rank - 1);
    p
}

/// The computations one cholesky's loop calls.
struct Loop {
    cond: ComputationId,
    body: ComputationId,
}

/// Replaces a cholesky of `a` with the loop and the final selects; the last instruction keeps
/// the cholesky's name.
fn expand(e: &mut Emit<'_>, p: &Problem, a: InstrId, lp: &Loop) -> InstrId {
    let (nb, n, k) = (p.nb(), p.n, p.parts());
    let full = p.shape_of(p.ty, &[n, n]);
    let sq = p.shape(&[n, n]);
    let a = if p.lower {
        a
    } else {
        e.with_dims(Opcode::Transpose, full.clone(), a, swap_last(nb + 2))
    };
    let parts: Vec<InstrId> = if k == 2 {
        vec![
            e.plain(Opcode::Real, sq.clone(), vec![a]),
            e.plain(Opcode::Imag, sq.clone(), vec![a]),
        ]
    } else {
        vec![a]
    };
    let z = e.constant(p.real(), zero(p.real()));
    let l0 = e.with_dims(Opcode::Broadcast, sq.clone(), z, vec![]);
    let t = e.constant(PrimitiveType::Pred, LiteralValue::Bool(true));
    let pred_b = p.shape_of(PrimitiveType::Pred, &[]);
    let ok0 = e.with_dims(Opcode::Broadcast, pred_b.clone(), t, vec![]);
    let j0 = e.constant(PrimitiveType::S32, LiteralValue::Int(0));
    let mut init = vec![j0];
    init.extend(&parts);
    init.extend(std::iter::repeat_n(l0, k));
    init.push(ok0);
    let init = e.plain(Opcode::Tuple, p.state(), init);
    let attrs = Attrs {
        condition: Some(lp.cond),
        body: Some(lp.body),
        ..Attrs::default()
    };
    let w = e.op(Opcode::While, p.state(), vec![init], attrs);
    let ok = e.gte(pred_b, w, 1 + 2 * k as i64);
    let pred_sq = p.shape_of(PrimitiveType::Pred, &[n, n]);
    let ok = e.with_dims(Opcode::Broadcast, pred_sq.clone(), ok, p.batch_dims());
    let mask = e.triangle(n, ComparisonDirection::Ge);
    let mask = e.with_dims(
        Opcode::Broadcast,
        pred_sq,
        mask,
        vec![nb as i64, nb as i64 + 1],
    );
    let nan = e.constant(p.real(), LiteralValue::Float(f64::NAN));
    let nan = e.with_dims(Opcode::Broadcast, sq.clone(), nan, vec![]);
    let name = e.like.name.clone();
    let mut out = Vec::new();
    for (c, &part) in parts.iter().enumerate() {
        let l = e.gte(sq.clone(), w, (1 + k + c) as i64);
        let kept = e.plain(Opcode::Select, sq.clone(), vec![mask, l, part]);
        if k == 1 && p.lower {
            e.next_name = Some(name.clone());
        }
        out.push(e.plain(Opcode::Select, sq.clone(), vec![ok, kept, nan]));
    }
    if k == 2 {
        if p.lower {
            e.next_name = Some(name.clone());
        }
        out = vec![e.plain(Opcode::Complex, full.clone(), out)];
    }
    if p.lower {
        return out[0];
    }
    e.next_name = Some(name);
    e.with_dims(Opcode::Transpose, full, out[0], swap_last(nb + 2))
}

/// Adds the loop's condition, body and reducer to the module.
fn add_loop_computations(module: &mut HloModule, p: &Problem, like: &Instruction) -> Loop {
    let ty = Shape::scalar(p.real());
    let add = push_computation(module, like, "chol_add.", |e| {
        let x = e.param(ty.clone(), 0);
        let y = e.param(ty.clone(), 1);
        (vec![x, y], e.plain(Opcode::Add, ty.clone(), vec![x, y]))
    });
    let cond = push_computation(module, like, "chol_cond.", |e| {
        let s = e.param(p.state(), 0);
        let j = e.gte(Shape::scalar(PrimitiveType::S32), s, 0);
        let n = e.constant(PrimitiveType::S32, LiteralValue::Int(i128::from(p.n)));
        let pred = Shape::scalar(PrimitiveType::Pred);
        (vec![s], e.compare(pred, j, n, ComparisonDirection::Lt))
    });
    let body = push_computation(module, like, "chol_body.", |e| {
        let s = e.param(p.state(), 0);
        (vec![s], column(e, p, s, add))
    });
    Loop { cond, body }
}

/// The loop body: column `j` of the factor from the columns before it; returns the next state.
fn column(e: &mut Emit<'_>, p: &Problem, s: InstrId, add: ComputationId) -> InstrId {
    let (nb, n, k) = (p.nb(), p.n, p.parts());
    let s32 = Shape::scalar(PrimitiveType::S32);
    let (sq, vec_n) = (p.shape(&[n, n]), p.shape(&[n]));
    let j = e.gte(s32.clone(), s, 0);
    let a: Vec<InstrId> = (0..k).map(|c| e.gte(sq.clone(), s, 1 + c as i64)).collect();
    let l: Vec<InstrId> = (0..k)
        .map(|c| e.gte(sq.clone(), s, (1 + k + c) as i64))
        .collect();
    let pred_b = p.shape_of(PrimitiveType::Pred, &[]);
    let ok = e.gte(pred_b.clone(), s, 1 + 2 * k as i64);
    let z = e.constant(PrimitiveType::S32, LiteralValue::Int(0));
    let row_at: Vec<InstrId> = [vec![z; nb], vec![j, z]].concat();
    let col_at: Vec<InstrId> = [vec![z; nb], vec![z, j]].concat();
    // Row j of L, repeated for every row i: rows[c][..., i, m] = L_c[..., j, m].
    let keep: Vec<i64> = [p.batch_dims(), vec![nb as i64 + 1]].concat();
    let rows: Vec<InstrId> = l
        .iter()
        .map(|&x| {
            let r = e.dynamic_slice(p.shape(&[1, n]), x, &row_at);
            let r = e.plain(Opcode::Reshape, vec_n.clone(), vec![r]);
            e.with_dims(Opcode::Broadcast, sq.clone(), r, keep.clone())
        })
        .collect();
    let mul = |e: &mut Emit<'_>, x, y| e.plain(Opcode::Multiply, sq.clone(), vec![x, y]);
    // (L conj(L[j,:])ᵀ)[i] = sum_m L[i,m] conj(L[j,m]): re = Lr·Rr + Li·Ri, im = Li·Rr - Lr·Ri.
    let mut products = vec![mul(e, l[0], rows[0])];
    if k == 2 {
        let ii = mul(e, l[1], rows[1]);
        products[0] = e.plain(Opcode::Add, sq.clone(), vec![products[0], ii]);
        let ir = mul(e, l[1], rows[0]);
        let ri = mul(e, l[0], rows[1]);
        products.push(e.plain(Opcode::Subtract, sq.clone(), vec![ir, ri]));
    }
    let v: Vec<InstrId> = (0..k)
        .map(|c| {
            let sum = e.reduce_sum(vec_n.clone(), products[c], nb as i64 + 1, add);
            let col = e.dynamic_slice(p.shape(&[n, 1]), a[c], &col_at);
            let col = e.plain(Opcode::Reshape, vec_n.clone(), vec![col]);
            e.plain(Opcode::Subtract, vec_n.clone(), vec![col, sum])
        })
        .collect();
    // The pivot v[j] (real), its test and its square root.
    let at_j: Vec<InstrId> = [vec![z; nb], vec![j]].concat();
    let d2 = e.dynamic_slice(p.shape(&[1]), v[0], &at_j);
    let d2 = e.plain(Opcode::Reshape, p.shape(&[]), vec![d2]);
    let zr = e.constant(p.real(), zero(p.real()));
    let zeros_b = e.with_dims(Opcode::Broadcast, p.shape(&[]), zr, vec![]);
    // `>` is false for NaN too: cuSOLVER's `info > 0` for a pivot `<= 0` or NaN.
    let positive = e.compare(pred_b.clone(), d2, zeros_b, ComparisonDirection::Gt);
    let ok = e.plain(Opcode::And, pred_b, vec![ok, positive]);
    let d = e.plain(Opcode::Sqrt, p.shape(&[]), vec![d2]);
    let d = e.with_dims(Opcode::Broadcast, vec_n.clone(), d, p.batch_dims());
    // Rows below j, and row j itself.
    let s32_n = Shape::array(PrimitiveType::S32, vec![n]);
    let iota = e.op(
        Opcode::Iota,
        s32_n.clone(),
        vec![],
        Attrs {
            iota_dimension: Some(0),
            ..Attrs::default()
        },
    );
    let jn = e.with_dims(Opcode::Broadcast, s32_n, j, vec![]);
    let pred_n = Shape::array(PrimitiveType::Pred, vec![n]);
    let pred_bn = p.shape_of(PrimitiveType::Pred, &[n]);
    let mask = |e: &mut Emit<'_>, dir| {
        let m = e.compare(pred_n.clone(), iota, jn, dir);
        e.with_dims(Opcode::Broadcast, pred_bn.clone(), m, vec![nb as i64])
    };
    let below = mask(e, ComparisonDirection::Gt);
    let diagonal = mask(e, ComparisonDirection::Eq);
    let zeros_n = e.with_dims(Opcode::Broadcast, vec_n.clone(), zr, vec![]);
    let mut next = vec![];
    for c in 0..k {
        let scaled = e.plain(Opcode::Divide, vec_n.clone(), vec![v[c], d]);
        let on = if c == 0 { d } else { zeros_n };
        let rest = e.plain(Opcode::Select, vec_n.clone(), vec![diagonal, on, zeros_n]);
        let col = e.plain(Opcode::Select, vec_n.clone(), vec![below, scaled, rest]);
        let col = e.plain(Opcode::Reshape, p.shape(&[n, 1]), vec![col]);
        next.push(e.plain(
            Opcode::DynamicUpdateSlice,
            sq.clone(),
            [vec![l[c], col], col_at.clone()].concat(),
        ));
    }
    let one = e.constant(PrimitiveType::S32, LiteralValue::Int(1));
    let j1 = e.plain(Opcode::Add, s32, vec![j, one]);
    let mut state = vec![j1];
    state.extend(&a);
    state.extend(next);
    state.push(ok);
    e.plain(Opcode::Tuple, p.state(), state)
}

/// `select(info == 0, potrf(a), NaN)` with the call in JAX's CUDA form (see [`to_potrf`]).
fn potrf_call(e: &mut Emit<'_>, p: &Problem, a: InstrId) -> InstrId {
    let (nb, n) = (p.nb(), p.n);
    let full = p.shape_of(p.ty, &[n, n]);
    // Column-major matrices, batch-major: minor-to-major {nb, nb+1, nb-1, ..., 0}.
    let mut minor_to_major = vec![nb as i64, nb as i64 + 1];
    minor_to_major.extend((0..nb as i64).rev());
    let mut laid_out = full.clone();
    if let Shape::Array(x) = &mut laid_out {
        x.layout = Some(Layout::from_minor_to_major(minor_to_major));
    }
    let info = p.shape_of(PrimitiveType::S32, &[]);
    let call_shape = Shape::Tuple(vec![laid_out.clone(), info.clone()]);
    let attrs = Attrs {
        custom_call_target: Some(POTRF_TARGET.to_string()),
        api_version: Some("API_VERSION_TYPED_FFI".to_string()),
        backend_config: Some(format!("{{lower = {}}}", p.lower)),
        operand_layout_constraints: Some(vec![laid_out]),
        output_to_operand_aliasing: Some(vec![OutputOperandAlias {
            output_index: vec![0],
            operand: 0,
            operand_index: vec![],
        }]),
        ..Attrs::default()
    };
    let call = e.op(Opcode::CustomCall, call_shape, vec![a], attrs);
    let factor = e.gte(full.clone(), call, 0);
    let info = e.gte(info.clone(), call, 1);
    let z = e.constant(PrimitiveType::S32, LiteralValue::Int(0));
    let zeros = e.with_dims(
        Opcode::Broadcast,
        p.shape_of(PrimitiveType::S32, &[]),
        z,
        vec![],
    );
    let ok = e.compare(
        p.shape_of(PrimitiveType::Pred, &[]),
        info,
        zeros,
        ComparisonDirection::Eq,
    );
    let ok = e.with_dims(
        Opcode::Broadcast,
        p.shape_of(PrimitiveType::Pred, &[n, n]),
        ok,
        p.batch_dims(),
    );
    let nan = if p.ty.is_complex() {
        LiteralValue::Complex(f64::NAN, f64::NAN)
    } else {
        LiteralValue::Float(f64::NAN)
    };
    let nan = e.constant(p.ty, nan);
    let nans = e.with_dims(Opcode::Broadcast, full.clone(), nan, vec![]);
    e.next_name = Some(e.like.name.clone());
    e.plain(Opcode::Select, full, vec![ok, factor, nans])
}
