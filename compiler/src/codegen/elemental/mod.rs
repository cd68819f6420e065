//! The elemental emitter: code that computes the value of any instruction of a fused
//! computation at one multi-index, recursively from its operands (as XLA's elemental IR emitter
//! does). Values already computed at the same index are reused (a scoped cache: values computed
//! inside a loop body or a branch are forgotten when it closes).
//!
//! Covers elementwise operations, broadcast, reshape/bitcast, transpose, slice, reverse, pad,
//! concatenate, iota, constants, convert/bitcast-convert, compare/select/clamp, dynamic-slice,
//! dynamic-update-slice (clamped starts), gather (clamped starts), reduce and reduce-window as
//! per-element loops with the reducer inlined, convolution as a per-element loop over the window
//! and the input features (`convolution.rs`), map, call, tuple and get-tuple-element.
use std::collections::HashMap;

use hlo::{
    Computation, ComputationId, ConstantLiteral, InstrId, Instruction, LiteralValue, WindowDim,
};
use hlo::{HloModule, Opcode as H, PrimitiveType as P, Shape};
use ptx::{CmpOp, Opcode as O, StateSpace, Type, VarDecl};

use super::builder::{global_bytes, Builder, Reg, Src};
use super::scalar::{self, Val};
use super::CodegenError;

mod bitcast;
mod index;
mod index_map;

/// One index component: a `.b32` register or a compile-time constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ix {
    /// A register.
    R(Reg),
    /// A constant.
    C(u32),
}

impl Ix {
    /// As a source operand.
    pub fn src(self) -> Src {
        match self {
            Ix::R(r) => Src::R(r),
            Ix::C(c) => Src::I(i64::from(c)),
        }
    }
}

/// Where a computation's parameters come from.
#[derive(Debug, Clone)]
pub enum ParamSrc<'a> {
    /// Kernel buffers (global pointers), indexed by parameter number.
    Buffers(Vec<Reg>),
    /// Scalar values (inlined reducers, comparators, map bodies).
    Values(Vec<Vec<Val>>),
    /// Operands of a `call` in the calling context.
    Caller(&'a Ctx<'a>, Vec<InstrId>),
}

/// A computation being emitted, with its parameter source.
#[derive(Debug, Clone)]
pub struct Ctx<'a> {
    /// The computation.
    pub comp: &'a Computation,
    /// Its parameters.
    pub params: ParamSrc<'a>,
    /// Unique id (cache key).
    pub id: u32,
}

type Key = (u32, InstrId, Vec<Ix>);

/// Deepest chain of operands [`Emitter::emit`] follows before it fails with
/// [`CodegenError::TooDeep`]. Fusion already cuts chains at [`crate::fusion::MAX_FUSION_DEPTH`],
/// so only an inlined computation (a reducer, comparator or map body) with a chain this long
/// reaches it. Each level runs on a stack grown on the heap when needed (`stacker`): a debug
/// build uses about 35 KB of stack per level, so this bounds that memory to about 70 MB.
pub const MAX_EXPRESSION_DEPTH: usize = 2048;

/// Stack left below which [`Emitter::emit`] continues on a new heap-allocated segment, and that
/// segment's size: several levels of the emitter's largest (debug) frames fit in each.
const STACK_RED_ZONE: usize = 256 * 1024;
const STACK_SEGMENT: usize = 4 * 1024 * 1024;

/// The emitter state for one kernel.
#[derive(Debug)]
pub struct Emitter<'m> {
    /// The instruction builder.
    pub b: Builder,
    /// The module (for called computations).
    pub module: &'m HloModule,
    /// Module-scope constant tables.
    pub globals: Vec<VarDecl>,
    scopes: Vec<HashMap<Key, Vec<Val>>>,
    /// Values that stand for an instruction at every index the kernel reads it at: the
    /// reductions of a row kernel, computed once per row (see `row.rs`).
    row_values: HashMap<(u32, InstrId), Vec<Val>>,
    next_ctx: u32,
    /// What [`Emitter::delinearize`] made (multi-index, dimensions, linear index), for reuse.
    delinearized: Vec<(Vec<Ix>, Vec<u64>, Ix)>,
    name: String,
    /// How many [`Emitter::emit`] calls are active (the operand chain being followed).
    depth: usize,
}

/// The dimensions of an array shape as u64.
pub fn dims_of(shape: &Shape) -> Vec<u64> {
    shape.dims().iter().map(|&d| d.max(0) as u64).collect()
}

/// Element type of an array shape.
pub fn elem(shape: &Shape) -> Option<P> {
    shape.element_type()
}

/// The dimensions of a `reduce` over an input of dimensions `in_dims`: which are reduced
/// (as the `dimensions` attribute lists them), which are kept (the result's, in order), and
/// how an input index is put together from a result index and a reduced element's number.
/// The emitter's reduce (inside a loop kernel) and the block reduction both go through it, so
/// they read the reduced elements in one order.
pub(in crate::codegen) struct ReduceAxes {
    /// The input's dimensions.
    pub in_dims: Vec<u64>,
    /// Reduced input dimensions.
    pub red: Vec<usize>,
    /// Kept input dimensions.
    pub kept: Vec<usize>,
    /// Sizes of the reduced dimensions (1 for one out of range).
    pub red_dims: Vec<u64>,
    /// Elements reduced into each result element.
    pub total: u64,
}

impl ReduceAxes {
    /// The axes of reduce `instr` over an input of dimensions `in_dims` (negative dimension
    /// numbers read as 0; range checks are the caller's).
    pub(in crate::codegen) fn new(instr: &Instruction, in_dims: Vec<u64>) -> ReduceAxes {
        let red: Vec<usize> = instr
            .attrs
            .dimensions
            .clone()
            .unwrap_or_default()
            .iter()
            .map(|&d| d.max(0) as usize)
            .collect();
        let kept: Vec<usize> = (0..in_dims.len()).filter(|d| !red.contains(d)).collect();
        let red_dims: Vec<u64> = red
            .iter()
            .map(|&d| in_dims.get(d).copied().unwrap_or(1))
            .collect();
        let total = red_dims.iter().product();
        ReduceAxes {
            in_dims,
            red,
            kept,
            red_dims,
            total,
        }
    }

    /// The input index of reduced element `k` of result element `oidx`; `None` when `oidx`
    /// has fewer entries than there are kept dimensions. Out-of-range reduced dimensions are
    /// skipped.
    pub(in crate::codegen) fn input_index(
        &self,
        e: &mut Emitter<'_>,
        oidx: &[Ix],
        k: Reg,
    ) -> Option<Vec<Ix>> {
        let ridx = e.delinearize(Ix::R(k), &self.red_dims);
        let mut full = vec![Ix::C(0); self.in_dims.len()];
        for (j, &d) in self.kept.iter().enumerate() {
            *full.get_mut(d)? = *oidx.get(j)?;
        }
        for (&d, &r) in self.red.iter().zip(&ridx) {
            if let Some(slot) = full.get_mut(d) {
                *slot = r;
            }
        }
        Some(full)
    }
}

/// Instruction `id` of `comp`. Ids come from the computation itself (its operands, its root,
/// the fusion planner's groups), so a missing one is the code generator's bug, not the input's:
/// an internal error, not an unsupported construct.
pub fn instr_of(comp: &Computation, id: InstrId) -> Result<&Instruction, CodegenError> {
    comp.get(id)
        .ok_or_else(|| CodegenError::Invalid(format!("no instruction {id:?}")))
}

/// Error naming an instruction.
pub fn unsupported(
    comp: &Computation,
    instr: &Instruction,
    reason: impl Into<String>,
) -> CodegenError {
    CodegenError::Unsupported {
        computation: comp.name.clone(),
        instruction: instr.name.clone(),
        loc: instr.loc,
        opcode: instr.opcode.name().to_string(),
        reason: reason.into(),
    }
}

impl<'m> Emitter<'m> {
    /// A new emitter for kernel `name`.
    pub fn new(module: &'m HloModule, name: &str) -> Emitter<'m> {
        Emitter {
            b: Builder::new(name),
            module,
            globals: Vec::new(),
            scopes: vec![HashMap::new()],
            row_values: HashMap::new(),
            next_ctx: 0,
            delinearized: Vec::new(),
            name: name.to_string(),
            depth: 0,
        }
    }

    /// A fresh context id.
    pub fn ctx_id(&mut self) -> u32 {
        self.next_ctx += 1;
        self.next_ctx
    }

    /// From now on, instruction `id` of context `ctx` has value `v` wherever it is read (the
    /// caller guarantees it is only read at one index: a row kernel's current row).
    pub fn set_row_value(&mut self, ctx: u32, id: InstrId, v: Vec<Val>) {
        self.row_values.insert((ctx, id), v);
    }

    /// Instruction `id` of context `ctx` has value `v` at index `idx` in the current cache
    /// scope, as if [`Emitter::emit`] had computed it there: a parameter element that a
    /// row reduction loaded with its neighbours from one pointer (see the block reduction).
    pub fn preset(&mut self, ctx: u32, id: InstrId, idx: Vec<Ix>, v: Vec<Val>) {
        if let Some(top) = self.scopes.last_mut() {
            top.insert((ctx, id, idx), v);
        }
    }

    /// Forgets every value set by [`Emitter::set_row_value`].
    pub fn clear_row_values(&mut self) {
        self.row_values.clear();
    }

    /// Opens a cache scope.
    pub fn push(&mut self) {
        self.scopes.push(HashMap::new());
    }

    /// Closes a cache scope.
    pub fn pop(&mut self) {
        if self.scopes.len() > 1 {
            self.scopes.pop();
        }
    }

    // ---------------------------------------------------------------- index arithmetic
    // (`index.rs`: index components, linearize and delinearize)

    /// Address of element `lin` of `ty` from `base`.
    pub fn elem_addr(&mut self, base: Reg, lin: Ix, ty: P) -> Reg {
        let size = ty.byte_size() as i64;
        match lin {
            Ix::C(0) => base,
            Ix::C(c) => self.b.bin(
                O::Add,
                &[],
                Type::S64,
                base.into(),
                Src::I(i64::from(c) * size),
            ),
            Ix::R(r) => {
                let off = self.b.mul_wide_u32(r.into(), Src::I(size));
                self.b.bin(O::Add, &[], Type::S64, base.into(), off.into())
            }
        }
    }

    /// Where tap `k` of the window at output position `o` falls in the padded, lhs-dilated
    /// input: `o * stride + k * rhs_dilation - pad_low` (signed; may be out of range).
    /// Reduce-window and convolution address their input so.
    pub(in crate::codegen) fn window_tap(&mut self, o: Reg, k: Reg, w: &WindowDim) -> Reg {
        let a = self.b.mul_lo(Type::S32, o.into(), Src::I(w.stride));
        let kd = self.b.mul_lo(Type::S32, k.into(), Src::I(w.rhs_dilation));
        let p = self.b.bin(O::Add, &[], Type::S32, a.into(), kd.into());
        self.b
            .bin(O::Sub, &[], Type::S32, p.into(), Src::I(w.pad_low))
    }

    /// Undoes lhs dilation `ld` of tap position `p` (from [`Emitter::window_tap`]), whose
    /// in-range condition is `c`: with `ld > 1` only multiples of `ld` hit an input element, so
    /// `c` gains `p % ld == 0` and the position is `p / ld`. Returns the condition and the
    /// input position.
    pub(in crate::codegen) fn undilate(&mut self, p: Reg, ld: i64, c: Reg) -> (Reg, Reg) {
        if ld > 1 {
            let r = self.b.bin(O::Rem, &[], Type::S32, p.into(), Src::I(ld));
            let z = self.b.setp(CmpOp::Eq, Type::S32, r.into(), Src::I(0));
            let c = self.b.pand(c, z);
            (c, self.b.bin(O::Div, &[], Type::S32, p.into(), Src::I(ld)))
        } else {
            (c, p)
        }
    }

    // ---------------------------------------------------------------- control flow

    /// `for i in 0..n { body(i) }` with a fresh cache scope for the body.
    pub fn counted_loop<F>(&mut self, n: u64, mut body: F) -> Result<(), CodegenError>
    where
        F: FnMut(&mut Emitter<'m>, Reg) -> Result<(), CodegenError>,
    {
        if n == 0 {
            return Ok(());
        }
        let i = self.b.mov(Type::B32, Src::I(0));
        let top = self.b.label();
        let end = self.b.label();
        self.b.place(&top);
        self.push();
        let r = body(self, i);
        self.pop();
        r?;
        self.b.add_u32_to(i, i.into(), Src::I(1));
        let more = self
            .b
            .setp(CmpOp::Lt, Type::U32, i.into(), Src::I(n as i64));
        self.b.bra_div(more, false, &top);
        self.b.place(&end);
        Ok(())
    }

    /// Runs `body` only where `p` holds (fresh cache scope).
    pub fn when<F>(&mut self, p: Reg, body: F) -> Result<(), CodegenError>
    where
        F: FnOnce(&mut Emitter<'m>) -> Result<(), CodegenError>,
    {
        let skip = self.b.label();
        self.b.bra_div(p, true, &skip);
        self.push();
        let r = body(self);
        self.pop();
        r?;
        self.b.place(&skip);
        Ok(())
    }

    /// `p ? then() : otherwise()` with branches (each in its own cache scope).
    pub fn cond_value<F, G>(
        &mut self,
        p: Reg,
        ty: P,
        then: F,
        otherwise: G,
    ) -> Result<Val, CodegenError>
    where
        F: FnOnce(&mut Emitter<'m>) -> Result<Val, CodegenError>,
        G: FnOnce(&mut Emitter<'m>) -> Result<Val, CodegenError>,
    {
        let res = scalar::alloc(&mut self.b, ty)?;
        let l_else = self.b.label();
        let l_end = self.b.label();
        self.b.bra_div(p, true, &l_else);
        self.push();
        let v = then(self);
        self.pop();
        scalar::assign_val(&mut self.b, res, v?)?;
        self.b.bra(None, &l_end);
        self.b.place(&l_else);
        self.push();
        let v = otherwise(self);
        self.pop();
        scalar::assign_val(&mut self.b, res, v?)?;
        self.b.place(&l_end);
        Ok(res)
    }

    /// Copies values into fresh registers (mutable accumulators).
    pub fn fresh_copy(&mut self, vals: &[Val]) -> Result<Vec<Val>, CodegenError> {
        let mut out = Vec::with_capacity(vals.len());
        for v in vals {
            let r = scalar::alloc(&mut self.b, v.ty)?;
            scalar::assign_val(&mut self.b, r, *v)?;
            out.push(r);
        }
        Ok(out)
    }

    /// Assigns `new` to the accumulators `acc` (all read before any is written).
    pub fn update(&mut self, acc: &[Val], new: &[Val]) -> Result<(), CodegenError> {
        let regs = |v: &Val| [Some(v.reg), v.im];
        let aliased = new.iter().any(|n| {
            acc.iter().any(|a| {
                regs(a)
                    .iter()
                    .flatten()
                    .any(|r| regs(n).contains(&Some(*r)))
            })
        });
        let new = if aliased {
            self.fresh_copy(new)?
        } else {
            new.to_vec()
        };
        for (a, n) in acc.iter().zip(&new) {
            if a.reg != n.reg || a.im != n.im {
                scalar::assign_val(&mut self.b, *a, *n)?;
            }
        }
        Ok(())
    }

    /// Inlines a scalar computation (reducer, comparator, map body) on `args`.
    pub fn inline_scalar(
        &mut self,
        comp: ComputationId,
        args: &[Val],
    ) -> Result<Vec<Val>, CodegenError> {
        let module = self.module;
        let c = module
            .get(comp)
            .ok_or_else(|| CodegenError::Invalid(format!("no computation {comp:?}")))?;
        if c.params.len() != args.len() {
            return Err(CodegenError::Invalid(format!(
                "computation {} takes {} parameters, given {}",
                c.name,
                c.params.len(),
                args.len()
            )));
        }
        let ctx = Ctx {
            comp: c,
            params: ParamSrc::Values(args.iter().map(|v| vec![*v]).collect()),
            id: self.ctx_id(),
        };
        self.emit(&ctx, c.root, &[])
    }

    // ---------------------------------------------------------------- values

    /// The value(s) of instruction `id` of `ctx` at `idx` (one per leaf of its shape).
    pub fn emit(
        &mut self,
        ctx: &Ctx<'_>,
        id: InstrId,
        idx: &[Ix],
    ) -> Result<Vec<Val>, CodegenError> {
        if let Some(v) = self.row_values.get(&(ctx.id, id)) {
            return Ok(v.clone());
        }
        let key = (ctx.id, id, idx.to_vec());
        for s in self.scopes.iter().rev() {
            if let Some(v) = s.get(&key) {
                return Ok(v.clone());
            }
        }
        // The emitter recurses along operand chains: bound the depth, and run each level where
        // there is stack for it, so a deep expression is an error or works, never an overflow.
        if self.depth >= MAX_EXPRESSION_DEPTH {
            return Err(CodegenError::TooDeep {
                computation: ctx.comp.name.clone(),
                instruction: ctx
                    .comp
                    .get(id)
                    .map_or_else(|| format!("{id:?}"), |i| i.name.clone()),
                limit: MAX_EXPRESSION_DEPTH,
            });
        }
        self.depth += 1;
        let v = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            self.emit_uncached(ctx, id, idx)
        });
        self.depth -= 1;
        let v = v?;
        if let Some(top) = self.scopes.last_mut() {
            top.insert(key, v.clone());
        }
        Ok(v)
    }

    /// The single value of an array-shaped instruction.
    pub fn emit1(&mut self, ctx: &Ctx<'_>, id: InstrId, idx: &[Ix]) -> Result<Val, CodegenError> {
        let v = self.emit(ctx, id, idx)?;
        match v.as_slice() {
            [x] => Ok(*x),
            _ => {
                let instr = instr_of(ctx.comp, id)?;
                Err(unsupported(
                    ctx.comp,
                    instr,
                    "expected an array value, got a tuple",
                ))
            }
        }
    }

    fn operand(ctx: &Ctx<'_>, instr: &Instruction, k: usize) -> Result<InstrId, CodegenError> {
        instr
            .operands
            .get(k)
            .copied()
            .ok_or_else(|| unsupported(ctx.comp, instr, format!("missing operand {k}")))
    }

    fn shape_of<'c>(ctx: &'c Ctx<'_>, id: InstrId) -> Result<&'c Shape, CodegenError> {
        instr_of(ctx.comp, id).map(|i| &i.shape)
    }

    fn constant(
        &mut self,
        ctx: &Ctx<'_>,
        instr: &Instruction,
        idx: &[Ix],
    ) -> Result<Vec<Val>, CodegenError> {
        let ty = elem(&instr.shape)
            .ok_or_else(|| unsupported(ctx.comp, instr, "tuple constants are not supported"))?;
        let values = match &instr.attrs.literal {
            Some(ConstantLiteral::Array(a)) => &a.values,
            _ => {
                return Err(unsupported(
                    ctx.comp,
                    instr,
                    "constant without literal values",
                ))
            }
        };
        let err = |e: String| unsupported(ctx.comp, instr, e);
        if values.len() == 1 {
            let v = values.first().copied().unwrap_or(LiteralValue::Int(0));
            return Ok(vec![
                scalar::konst(&mut self.b, ty, v).map_err(|e| err(e.to_string()))?
            ]);
        }
        // A table in global memory.
        let mut bytes = Vec::with_capacity(values.len() * ty.byte_size() as usize);
        for v in values {
            if let Some(parts) = super::complex::literal_bytes(ty, *v) {
                bytes.extend(parts);
                continue;
            }
            let raw: u64 = match ty.float_bits(v.as_f64()) {
                Some(bits) => bits,
                None if ty == P::Pred => u64::from(v.as_bool()),
                None => v.as_i128() as u64,
            };
            bytes.extend_from_slice(&raw.to_le_bytes()[..ty.byte_size() as usize]);
        }
        let sym = format!("{}_const{}", self.name, self.globals.len());
        self.globals.push(global_bytes(&sym, &bytes));
        let base = self.b.symbol_addr(&sym);
        let dims = dims_of(&instr.shape);
        let lin = self.linearize(idx, &dims);
        let addr = self.elem_addr(base, lin, ty);
        Ok(vec![scalar::load(
            &mut self.b,
            StateSpace::Global,
            ty,
            addr,
        )
        .map_err(|e| err(e.to_string()))?])
    }

    /// A scalar integer operand as a clamped start index in [0, max].
    fn start_index(
        &mut self,
        ctx: &Ctx<'_>,
        instr: &Instruction,
        id: InstrId,
        max: u64,
    ) -> Result<Ix, CodegenError> {
        let v = self.emit1(ctx, id, &[])?;
        let w = scalar::to_index64(&mut self.b, v)
            .map_err(|e| unsupported(ctx.comp, instr, e.to_string()))?;
        let w = self.b.bin(O::Max, &[], Type::S64, w.into(), Src::I(0));
        let w = self
            .b
            .bin(O::Min, &[], Type::S64, w.into(), Src::I(max as i64));
        Ok(Ix::R(self.b.cvt(None, Type::U32, Type::U64, w.into())))
    }

    fn emit_uncached(
        &mut self,
        ctx: &Ctx<'_>,
        id: InstrId,
        idx: &[Ix],
    ) -> Result<Vec<Val>, CodegenError> {
        let instr = ctx.comp.get(id).ok_or_else(|| {
            CodegenError::Invalid(format!("no instruction {id:?} in {}", ctx.comp.name))
        })?;
        let err = |e: String| unsupported(ctx.comp, instr, e);
        let out_ty = elem(&instr.shape);
        let op = instr.opcode;
        let one = |v: Val| Ok(vec![v]);
        if op.is_elementwise_unary() && op != H::Copy {
            let x = self.emit1(ctx, Self::operand(ctx, instr, 0)?, idx)?;
            return one(scalar::unary(&mut self.b, op, x).map_err(|e| err(e.to_string()))?);
        }
        if op.is_elementwise_binary() {
            let x = self.emit1(ctx, Self::operand(ctx, instr, 0)?, idx)?;
            let y = self.emit1(ctx, Self::operand(ctx, instr, 1)?, idx)?;
            return one(scalar::binary(&mut self.b, op, x, y).map_err(|e| err(e.to_string()))?);
        }
        match op {
            H::Parameter => self.parameter(ctx, instr, idx),
            H::Constant => self.constant(ctx, instr, idx),
            H::Copy | H::OptimizationBarrier => self.emit(ctx, Self::operand(ctx, instr, 0)?, idx),
            H::Tuple => {
                let mut out = Vec::new();
                for &o in &instr.operands {
                    out.extend(self.emit(ctx, o, idx)?);
                }
                Ok(out)
            }
            H::GetTupleElement => {
                let o = Self::operand(ctx, instr, 0)?;
                let shapes = Self::shape_of(ctx, o)?
                    .tuple_shapes()
                    .ok_or_else(|| err("operand is not a tuple".into()))?
                    .to_vec();
                let k = instr.attrs.tuple_index.unwrap_or(-1);
                let k = usize::try_from(k).map_err(|_| err("bad tuple index".into()))?;
                if shapes.iter().any(|s| !s.is_array()) {
                    return Err(err("nested tuples are not supported".into()));
                }
                let all = self.emit(ctx, o, idx)?;
                all.get(k)
                    .map(|v| vec![*v])
                    .ok_or_else(|| err("tuple index out of range".into()))
            }
            H::Compare => {
                let x = self.emit1(ctx, Self::operand(ctx, instr, 0)?, idx)?;
                let y = self.emit1(ctx, Self::operand(ctx, instr, 1)?, idx)?;
                let dir = instr
                    .attrs
                    .comparison_direction
                    .ok_or_else(|| err("compare without direction".into()))?;
                one(
                    scalar::compare(&mut self.b, dir, instr.attrs.comparison_type, x, y)
                        .map_err(|e| err(e.to_string()))?,
                )
            }
            H::Select | H::Clamp => {
                let mut v = Vec::new();
                for k in 0..3 {
                    let o = Self::operand(ctx, instr, k)?;
                    let scalar_operand = Self::shape_of(ctx, o)?.rank() == 0;
                    v.push(self.emit1(ctx, o, if scalar_operand { &[] } else { idx })?);
                }
                let r = if op == H::Select {
                    scalar::select(&mut self.b, v[0], v[1], v[2])
                } else {
                    scalar::clamp(&mut self.b, v[0], v[1], v[2])
                };
                one(r.map_err(|e| err(e.to_string()))?)
            }
            H::ReducePrecision => {
                let x = self.emit1(ctx, Self::operand(ctx, instr, 0)?, idx)?;
                let e = instr.attrs.exponent_bits.unwrap_or(-1);
                let m = instr.attrs.mantissa_bits.unwrap_or(-1);
                one(scalar::reduce_precision(&mut self.b, x, e, m)
                    .map_err(|e| err(e.to_string()))?)
            }
            H::BitcastConvert if Self::bitcast_resizes(ctx, instr) => {
                let to = out_ty.ok_or_else(|| err("tuple result".into()))?;
                one(self.bitcast_resize(ctx, instr, idx, to)?)
            }
            H::Convert | H::BitcastConvert => {
                let x = self.emit1(ctx, Self::operand(ctx, instr, 0)?, idx)?;
                let to = out_ty.ok_or_else(|| err("tuple result".into()))?;
                let r = if op == H::Convert {
                    scalar::convert(&mut self.b, x, to)
                } else {
                    scalar::bitcast(&mut self.b, x, to)
                };
                one(r.map_err(|e| err(e.to_string()))?)
            }
            H::Complex => {
                let x = self.emit1(ctx, Self::operand(ctx, instr, 0)?, idx)?;
                let y = self.emit1(ctx, Self::operand(ctx, instr, 1)?, idx)?;
                one(scalar::binary(&mut self.b, op, x, y).map_err(|e| err(e.to_string()))?)
            }
            H::Broadcast
            | H::Reshape
            | H::Bitcast
            | H::Transpose
            | H::Slice
            | H::Reverse
            | H::DynamicSlice => self.index_mapped(ctx, instr, idx),
            H::Iota => {
                let d = instr.attrs.iota_dimension.unwrap_or(0);
                let d = usize::try_from(d).map_err(|_| err("bad iota dimension".into()))?;
                let i = *idx
                    .get(d)
                    .ok_or_else(|| err("iota dimension out of range".into()))?;
                let r = self.ix_reg(i);
                let to = out_ty.ok_or_else(|| err("tuple result".into()))?;
                let i = Val {
                    ty: P::U32,
                    reg: r,
                    im: None,
                };
                one(scalar::convert(&mut self.b, i, to).map_err(|e| err(e.to_string()))?)
            }
            H::Pad => self.pad(ctx, instr, idx),
            H::Concatenate => {
                let d = instr
                    .attrs
                    .dimensions
                    .as_ref()
                    .and_then(|v| v.first().copied())
                    .unwrap_or(0);
                let d = usize::try_from(d).map_err(|_| err("bad dimension".into()))?;
                self.concat(ctx, instr, idx, d, 0, 0)
            }
            H::DynamicUpdateSlice => self.dus(ctx, instr, idx),
            H::Gather => self.gather(ctx, instr, idx),
            H::Reduce => self.reduce(ctx, instr, idx),
            H::ReduceWindow => self.reduce_window(ctx, instr, idx),
            H::Convolution => self.convolution(ctx, instr, idx),
            H::Map => {
                let mut args = Vec::new();
                for &o in &instr.operands {
                    args.push(self.emit1(ctx, o, idx)?);
                }
                let f = instr
                    .attrs
                    .to_apply
                    .ok_or_else(|| err("map without to_apply".into()))?;
                self.inline_scalar(f, &args)
            }
            H::Call => {
                let f = instr
                    .attrs
                    .to_apply
                    .or_else(|| instr.attrs.calls.as_ref().and_then(|c| c.first().copied()))
                    .ok_or_else(|| err("call without to_apply".into()))?;
                let module = self.module;
                let callee = module
                    .get(f)
                    .ok_or_else(|| err("unknown called computation".into()))?;
                let sub = Ctx {
                    comp: callee,
                    params: ParamSrc::Caller(ctx, instr.operands.clone()),
                    id: self.ctx_id(),
                };
                self.emit(&sub, callee.root, idx)
            }
            _ => Err(err(format!(
                "{} is not supported by the GPU code generator",
                op.name()
            ))),
        }
    }

    fn pad(
        &mut self,
        ctx: &Ctx<'_>,
        instr: &Instruction,
        idx: &[Ix],
    ) -> Result<Vec<Val>, CodegenError> {
        let err = |e: &str| unsupported(ctx.comp, instr, e);
        let o = Self::operand(ctx, instr, 0)?;
        let pv = Self::operand(ctx, instr, 1)?;
        let in_dims = dims_of(Self::shape_of(ctx, o)?);
        let cfg = instr.attrs.padding.clone().unwrap_or_default();
        let ty = elem(&instr.shape).ok_or_else(|| err("tuple result"))?;
        let mut inb: Option<Reg> = None;
        let mut sub = Vec::with_capacity(in_dims.len());
        for (k, &n) in in_dims.iter().enumerate() {
            let p = cfg.get(k).copied().unwrap_or_default();
            let i = *idx.get(k).ok_or_else(|| err("rank mismatch"))?;
            if p.low == 0 && p.interior == 0 && p.high >= 0 {
                // Only high padding: in bounds when i < n.
                let ok = self
                    .b
                    .setp(CmpOp::Lt, Type::U32, self_src(i), Src::I(n as i64));
                inb = Some(match inb {
                    Some(q) => self.b.pand(q, ok),
                    None => ok,
                });
                let clamped = self.b.bin(
                    O::Min,
                    &[],
                    Type::U32,
                    i.src(),
                    Src::I(n.saturating_sub(1) as i64),
                );
                sub.push(Ix::R(clamped));
                continue;
            }
            let step = (p.interior + 1).max(1);
            let ir = self.ix_reg(i);
            let t = self.b.bin(O::Sub, &[], Type::S32, ir.into(), Src::I(p.low));
            let ge = self.b.setp(CmpOp::Ge, Type::S32, t.into(), Src::I(0));
            let hi = (n as i64 - 1) * step;
            let le = self.b.setp(CmpOp::Le, Type::S32, t.into(), Src::I(hi));
            let mut ok = self.b.pand(ge, le);
            let q = self.b.bin(O::Div, &[], Type::S32, t.into(), Src::I(step));
            if step > 1 {
                let r = self.b.bin(O::Rem, &[], Type::S32, t.into(), Src::I(step));
                let z = self.b.setp(CmpOp::Eq, Type::S32, r.into(), Src::I(0));
                ok = self.b.pand(ok, z);
            }
            inb = Some(match inb {
                Some(x) => self.b.pand(x, ok),
                None => ok,
            });
            sub.push(Ix::R(q));
        }
        let Some(inb) = inb else {
            return self.emit(ctx, o, &sub);
        };
        let v = self.cond_value(
            inb,
            ty,
            |e| e.emit1(ctx, o, &sub),
            |e| e.emit1(ctx, pv, &[]),
        )?;
        Ok(vec![v])
    }

    fn concat(
        &mut self,
        ctx: &Ctx<'_>,
        instr: &Instruction,
        idx: &[Ix],
        d: usize,
        k: usize,
        offset: u64,
    ) -> Result<Vec<Val>, CodegenError> {
        let err = |e: &str| unsupported(ctx.comp, instr, e);
        let o = Self::operand(ctx, instr, k)?;
        let n = dims_of(Self::shape_of(ctx, o)?)
            .get(d)
            .copied()
            .ok_or_else(|| err("dimension out of range"))?;
        let i = *idx.get(d).ok_or_else(|| err("rank mismatch"))?;
        let mut sub = idx.to_vec();
        let local = match i {
            Ix::C(c) => Ix::C(c.wrapping_sub(offset as u32)),
            Ix::R(r) => Ix::R(
                self.b
                    .bin(O::Sub, &[], Type::U32, r.into(), Src::I(offset as i64)),
            ),
        };
        sub[d] = local;
        if k + 1 >= instr.operands.len() {
            return self.emit(ctx, o, &sub);
        }
        let ty = elem(&instr.shape).ok_or_else(|| err("tuple result"))?;
        let p = self
            .b
            .setp(CmpOp::Lt, Type::U32, i.src(), Src::I((offset + n) as i64));
        let v = self.cond_value(
            p,
            ty,
            |e| e.emit1(ctx, o, &sub),
            |e| {
                let v = e.concat(ctx, instr, idx, d, k + 1, offset + n)?;
                v.first()
                    .copied()
                    .ok_or_else(|| CodegenError::Invalid("empty concat".into()))
            },
        )?;
        Ok(vec![v])
    }

    fn dus(
        &mut self,
        ctx: &Ctx<'_>,
        instr: &Instruction,
        idx: &[Ix],
    ) -> Result<Vec<Val>, CodegenError> {
        let err = |e: &str| unsupported(ctx.comp, instr, e);
        let o = Self::operand(ctx, instr, 0)?;
        let u = Self::operand(ctx, instr, 1)?;
        let dims = dims_of(&instr.shape);
        let udims = dims_of(Self::shape_of(ctx, u)?);
        let ty = elem(&instr.shape).ok_or_else(|| err("tuple result"))?;
        let mut inside: Option<Reg> = None;
        let mut sub = Vec::with_capacity(dims.len());
        for (k, &dim) in dims.iter().enumerate() {
            let s = Self::operand(ctx, instr, k + 2)?;
            let ud = udims.get(k).copied().ok_or_else(|| err("rank mismatch"))?;
            let st = self.start_index(ctx, instr, s, dim.saturating_sub(ud))?;
            let i = *idx.get(k).ok_or_else(|| err("rank mismatch"))?;
            let rel = self.b.bin(O::Sub, &[], Type::U32, i.src(), st.src());
            let ok = self
                .b
                .setp(CmpOp::Lt, Type::U32, rel.into(), Src::I(ud as i64));
            inside = Some(match inside {
                Some(p) => self.b.pand(p, ok),
                None => ok,
            });
            sub.push(Ix::R(rel));
        }
        let Some(inside) = inside else {
            return self.emit(ctx, u, &[]);
        };
        let v = self.cond_value(
            inside,
            ty,
            |e| e.emit1(ctx, u, &sub),
            |e| e.emit1(ctx, o, idx),
        )?;
        Ok(vec![v])
    }

    fn gather(
        &mut self,
        ctx: &Ctx<'_>,
        instr: &Instruction,
        idx: &[Ix],
    ) -> Result<Vec<Val>, CodegenError> {
        let err = |e: &str| unsupported(ctx.comp, instr, e);
        let o = Self::operand(ctx, instr, 0)?;
        let ind = Self::operand(ctx, instr, 1)?;
        let odims = dims_of(Self::shape_of(ctx, o)?);
        let idims = dims_of(Self::shape_of(ctx, ind)?);
        let dn = instr
            .attrs
            .gather_dimension_numbers
            .clone()
            .ok_or_else(|| err("gather without dimension numbers"))?;
        let slice = instr.attrs.gather_slice_sizes.clone().unwrap_or_default();
        let to_u = |v: &[i64]| -> Vec<usize> { v.iter().map(|&x| x.max(0) as usize).collect() };
        let offset_dims = to_u(&dn.offset_dims);
        let collapsed = to_u(&dn.collapsed_slice_dims);
        let start_map = to_u(&dn.start_index_map);
        let ivd = dn.index_vector_dim.max(0) as usize;
        let out_rank = idx.len();
        let batch: Vec<Ix> = (0..out_rank)
            .filter(|d| !offset_dims.contains(d))
            .map(|d| idx[d])
            .collect();
        // Index coordinates: batch positions fill the index dims other than ivd.
        let mut coords = Vec::with_capacity(idims.len());
        let mut bi = 0;
        for d in 0..idims.len() {
            if d == ivd {
                coords.push(Ix::C(0));
            } else {
                coords.push(*batch.get(bi).ok_or_else(|| err("index rank mismatch"))?);
                bi += 1;
            }
        }
        let mut start = vec![Ix::C(0); odims.len()];
        for (k, &d) in start_map.iter().enumerate() {
            let mut c = coords.clone();
            if ivd < c.len() {
                c[ivd] = Ix::C(k as u32);
            }
            let v = self.emit1(ctx, ind, &c)?;
            let w = scalar::to_index64(&mut self.b, v)
                .map_err(|e| unsupported(ctx.comp, instr, e.to_string()))?;
            let max = odims
                .get(d)
                .copied()
                .unwrap_or(0)
                .saturating_sub(slice.get(d).copied().unwrap_or(0).max(0) as u64);
            let w = self.b.bin(O::Max, &[], Type::S64, w.into(), Src::I(0));
            let w = self
                .b
                .bin(O::Min, &[], Type::S64, w.into(), Src::I(max as i64));
            let slot = start
                .get_mut(d)
                .ok_or_else(|| err("start_index_map out of range"))?;
            *slot = Ix::R(self.b.cvt(None, Type::U32, Type::U64, w.into()));
        }
        // Batching dimensions (as in the HLO spec): operand dimension `operand_batching_dims[k]`
        // starts at the output's position along index dimension
        // `start_indices_batching_dims[k]`; like a collapsed dimension it has slice size 1 and no
        // offset dimension in the output.
        let op_batch = to_u(&dn.operand_batching_dims);
        let idx_batch = to_u(&dn.start_indices_batching_dims);
        if op_batch.len() != idx_batch.len() {
            return Err(err("batching dimension counts differ"));
        }
        for (&od, &id) in op_batch.iter().zip(&idx_batch) {
            let c = *coords
                .get(id)
                .ok_or_else(|| err("start_indices_batching_dims out of range"))?;
            let slot = start
                .get_mut(od)
                .ok_or_else(|| err("operand_batching_dims out of range"))?;
            *slot = c;
        }
        let offset_operand: Vec<usize> = (0..odims.len())
            .filter(|d| !collapsed.contains(d) && !op_batch.contains(d))
            .collect();
        let mut sub = start;
        for (j, &d) in offset_operand.iter().enumerate() {
            let od = *offset_dims
                .get(j)
                .ok_or_else(|| err("offset_dims mismatch"))?;
            let i = *idx.get(od).ok_or_else(|| err("offset dim out of range"))?;
            sub[d] = self.ix_add(sub[d], i);
        }
        self.emit(ctx, o, &sub)
    }

    /// Reduced dims, kept dims and the input index for an output index and a reduced index.
    fn reduce(
        &mut self,
        ctx: &Ctx<'_>,
        instr: &Instruction,
        idx: &[Ix],
    ) -> Result<Vec<Val>, CodegenError> {
        let err = |e: &str| unsupported(ctx.comp, instr, e);
        let n = instr.operands.len() / 2;
        if n == 0 {
            return Err(err("reduce without operands"));
        }
        let inputs: Vec<InstrId> = instr.operands[..n].to_vec();
        let inits: Vec<InstrId> = instr.operands[n..].to_vec();
        let axes = ReduceAxes::new(instr, dims_of(Self::shape_of(ctx, inputs[0])?));
        let f = instr
            .attrs
            .to_apply
            .ok_or_else(|| err("reduce without to_apply"))?;
        let mut init_vals = Vec::new();
        for &i in &inits {
            init_vals.push(self.emit1(ctx, i, &[])?);
        }
        let acc = self.fresh_copy(&init_vals)?;
        self.counted_loop(axes.total, |e, k| {
            let full = axes
                .input_index(e, idx, k)
                .ok_or_else(|| err("rank mismatch"))?;
            let mut args = acc.clone();
            for &i in &inputs {
                args.push(e.emit1(ctx, i, &full)?);
            }
            let new = e.inline_scalar(f, &args)?;
            e.update(&acc, &new)
        })?;
        Ok(acc)
    }

    fn reduce_window(
        &mut self,
        ctx: &Ctx<'_>,
        instr: &Instruction,
        idx: &[Ix],
    ) -> Result<Vec<Val>, CodegenError> {
        let err = |e: &str| unsupported(ctx.comp, instr, e);
        let n = instr.operands.len() / 2;
        if n == 0 {
            return Err(err("reduce-window without operands"));
        }
        let inputs: Vec<InstrId> = instr.operands[..n].to_vec();
        let inits: Vec<InstrId> = instr.operands[n..].to_vec();
        let in_dims = dims_of(Self::shape_of(ctx, inputs[0])?);
        let window = instr
            .attrs
            .window
            .clone()
            .ok_or_else(|| err("reduce-window without window"))?;
        if window.dims.len() != in_dims.len() {
            return Err(err("window rank differs from operand rank"));
        }
        let f = instr
            .attrs
            .to_apply
            .ok_or_else(|| err("reduce-window without to_apply"))?;
        let mut init_vals = Vec::new();
        for &i in &inits {
            init_vals.push(self.emit1(ctx, i, &[])?);
        }
        let acc = self.fresh_copy(&init_vals)?;
        let wdims: Vec<u64> = window.dims.iter().map(|w| w.size.max(0) as u64).collect();
        let total: u64 = wdims.iter().product();
        self.counted_loop(total, |e, k| {
            let widx = e.delinearize(Ix::R(k), &wdims);
            let mut ok: Option<Reg> = None;
            let mut pos = Vec::with_capacity(in_dims.len());
            for (d, w) in window.dims.iter().enumerate() {
                let o = e.ix_reg(*idx.get(d).ok_or_else(|| err("rank mismatch"))?);
                let wi = e.ix_reg(widx[d]);
                let p = e.window_tap(o, wi, w);
                let ld = w.lhs_dilation.max(1);
                let ge = e.b.setp(CmpOp::Ge, Type::S32, p.into(), Src::I(0));
                let lt = e.b.setp(
                    CmpOp::Lt,
                    Type::S32,
                    p.into(),
                    Src::I(((in_dims[d] as i64) - 1) * ld + 1),
                );
                let in_range = e.b.pand(ge, lt);
                let (c, q) = e.undilate(p, ld, in_range);
                ok = Some(e.b.pand_acc(ok, c));
                pos.push(Ix::R(q));
            }
            let body = |e: &mut Emitter<'m>| -> Result<(), CodegenError> {
                let mut args = acc.clone();
                for &i in &inputs {
                    args.push(e.emit1(ctx, i, &pos)?);
                }
                let new = e.inline_scalar(f, &args)?;
                e.update(&acc, &new)
            };
            match ok {
                Some(p) => e.when(p, body),
                None => body(e),
            }
        })?;
        Ok(acc)
    }
}

fn self_src(i: Ix) -> Src {
    i.src()
}
