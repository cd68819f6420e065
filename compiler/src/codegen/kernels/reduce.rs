//! Reductions: one block per output element, thread-strided accumulation and a shared-memory
//! tree (warp shuffles for the last steps). The tree holds one 8-byte slot per thread and
//! component, two for a `c128` component (see `lanes`).
//!
//! A row reduction whose input reads f32/f64 parameters element-wise takes its row in vectors
//! (`Vectorized`: each thread a run of 4 f32 or 2 f64 consecutive elements, one pointer per
//! parameter stepped along the row, loads at fixed offsets from it), as XLA's reduction
//! emitter vectorizes; a row kernel whose rows are short enough holds its elements across the
//! row's reductions and output (`held_reduce`, see `row.rs`).
// Every kernel file reads the shared scaffolding and its imports from `mod.rs`.
use super::*;

/// Elements of a row each thread reduces before the tree, as XLA's `GetReductionTiling`
/// tiles a row reduction (`{1, 1, 16}`); the block shrinks to fit (see [`ReduceSpec::block`]).
pub(in crate::codegen) const ROW_TILE: u64 = 16;

/// What a block reduction needs to know about one `reduce` instruction.
pub(in crate::codegen) struct ReduceSpec {
    pub(super) inputs: Vec<InstrId>,
    pub(super) inits: Vec<InstrId>,
    pub(super) axes: ReduceAxes,
    /// Dimensions of the result (the kept dimensions).
    pub out_dims: Vec<u64>,
    /// Elements reduced into each result element.
    pub total_red: u64,
    pub(super) f_red: hlo::ComputationId,
    pub(super) types: Vec<P>,
}

impl ReduceSpec {
    /// Reads and checks reduce `id` of `comp`.
    pub(in crate::codegen) fn new(
        comp: &Computation,
        id: InstrId,
    ) -> Result<ReduceSpec, CodegenError> {
        let instr = instr_of(comp, id)?;
        let err = |e: &str| unsupported(comp, instr, e);
        let n = instr.operands.len() / 2;
        if n == 0 {
            return Err(err("reduce without operands"));
        }
        let inputs: Vec<InstrId> = instr.operands[..n].to_vec();
        let inits: Vec<InstrId> = instr.operands[n..].to_vec();
        let in_shape = &comp.get(inputs[0]).ok_or_else(|| err("bad operand"))?.shape;
        let in_dims = dims_of(in_shape);
        check_size(comp, instr, in_dims.iter().product())?;
        let axes = ReduceAxes::new(instr, in_dims);
        if axes.red.iter().any(|&d| d >= axes.in_dims.len()) {
            return Err(err("reduced dimension out of range"));
        }
        let out_dims: Vec<u64> = axes
            .kept
            .iter()
            .filter_map(|&d| axes.in_dims.get(d).copied())
            .collect();
        let total_red = axes.total;
        let f_red = instr
            .attrs
            .to_apply
            .ok_or_else(|| err("reduce without to_apply"))?;
        let types = elem_types(comp, instr, &inits, "bad init")?;
        Ok(ReduceSpec {
            inputs,
            inits,
            axes,
            out_dims,
            total_red,
            f_red,
            types,
        })
    }

    /// Threads per block: a power of two covering the reduced elements at [`ROW_TILE`] per
    /// thread, 32 to 256 (XLA's reduction tiling: a row reduction gives each thread 16
    /// elements along the row, so a row of 512 is one warp's, reduced by shuffles alone,
    /// instead of 256 threads holding two elements each and a shared-memory tree). The row
    /// kernel uses the largest block of its reductions: the same block, and so the same
    /// summation order, as each one's own kernel whenever they reduce rows of one length.
    pub(in crate::codegen) fn block(&self, req: &KernelRequest<'_>) -> u32 {
        let block = block_for(
            req,
            (self
                .total_red
                .div_ceil(ROW_TILE)
                .next_power_of_two()
                .clamp(32, u64::from(BLOCK))) as u32,
        );
        if block.is_power_of_two() {
            block
        } else {
            32
        }
    }

    /// Shared memory bytes the tree needs for `block` threads.
    pub(in crate::codegen) fn shared_bytes(&self, block: u32) -> u64 {
        let lanes: u64 = self.types.iter().map(|&t| lanes(t)).sum();
        lanes * u64::from(block) * 8
    }

    /// The init values in fresh registers: the accumulator every fold starts from.
    pub(in crate::codegen) fn init_acc(
        &self,
        e: &mut Emitter<'_>,
        ctx: &Ctx<'_>,
    ) -> Result<Vec<Val>, CodegenError> {
        let mut init_vals = Vec::with_capacity(self.inits.len());
        for &i in &self.inits {
            init_vals.push(e.emit1(ctx, i, &[])?);
        }
        e.fresh_copy(&init_vals)
    }

    /// The input index of reduced element `k` of result element `oidx`.
    pub(in crate::codegen) fn input_index(
        &self,
        e: &mut Emitter<'_>,
        oidx: &[Ix],
        k: Reg,
    ) -> Result<Vec<Ix>, CodegenError> {
        self.axes
            .input_index(e, oidx, k)
            .ok_or_else(|| CodegenError::Invalid("reduce result index of the wrong rank".into()))
    }

    /// The inputs' values (one per component) at input index `idx`.
    pub(in crate::codegen) fn input_values(
        &self,
        e: &mut Emitter<'_>,
        ctx: &Ctx<'_>,
        idx: &[Ix],
    ) -> Result<Vec<Val>, CodegenError> {
        let mut xs = Vec::with_capacity(self.inputs.len());
        for &i in &self.inputs {
            xs.push(e.emit1(ctx, i, idx)?);
        }
        Ok(xs)
    }

    /// `acc = to_apply(acc, xs)`: one step of the reduction.
    pub(in crate::codegen) fn fold(
        &self,
        e: &mut Emitter<'_>,
        acc: &[Val],
        xs: &[Val],
    ) -> Result<(), CodegenError> {
        let mut args = acc.to_vec();
        args.extend(xs.iter().copied());
        let new = e.inline_scalar(self.f_red, &args)?;
        e.update(acc, &new)
    }
}

/// The 8-byte shared-memory regions (of one slot per thread each) a component of type `ty`
/// takes in the tree: 2 for `c128` (real parts, then imaginary parts, each an `f64`), 1 for
/// the rest. A `c64` element fits one 8-byte slot as it is in memory.
fn lanes(ty: P) -> u64 {
    if ty == P::C128 {
        2
    } else {
        1
    }
}

/// The first region of each component (the running sum of [`lanes`]).
fn regions(types: &[P]) -> Vec<u64> {
    types
        .iter()
        .scan(0, |next, &t| {
            let r = *next;
            *next += lanes(t);
            Some(r)
        })
        .collect()
}

/// Stores component value `v` in the tree at `addr` (its slot in its first region); a `c128`
/// value's imaginary part goes to the next region, `region` bytes further.
fn store_slot(e: &mut Emitter<'_>, addr: Reg, region: i64, v: Val) -> Result<(), CodegenError> {
    match (v.ty, v.im) {
        (P::C128, Some(im)) => {
            let part = |reg| Val {
                ty: P::F64,
                reg,
                im: None,
            };
            scalar::store(&mut e.b, StateSpace::Shared, addr, part(v.reg))?;
            let next = e.b.bin(O::Add, &[], Type::S64, addr.into(), Src::I(region));
            scalar::store(&mut e.b, StateSpace::Shared, next, part(im))?;
            Ok(())
        }
        _ => Ok(scalar::store(&mut e.b, StateSpace::Shared, addr, v)?),
    }
}

/// Loads a component value of type `ty` stored by [`store_slot`].
fn load_slot(e: &mut Emitter<'_>, addr: Reg, region: i64, ty: P) -> Result<Val, CodegenError> {
    if ty != P::C128 {
        return Ok(scalar::load(&mut e.b, StateSpace::Shared, ty, addr)?);
    }
    let re = scalar::load(&mut e.b, StateSpace::Shared, P::F64, addr)?.reg;
    let next = e.b.bin(O::Add, &[], Type::S64, addr.into(), Src::I(region));
    let im = scalar::load(&mut e.b, StateSpace::Shared, P::F64, next)?.reg;
    Ok(crate::codegen::complex::make(ty, re, im))
}

/// The thread's share of result element `oidx` of `spec` into `acc`: elements `tid`,
/// `tid + block`, ... in order (thread 0 combines the init value already in `acc` with its
/// first; any other thread starts from its first element).
fn accumulate_strided(
    e: &mut Emitter<'_>,
    ctx: &Ctx<'_>,
    spec: &ReduceSpec,
    oidx: &[Ix],
    tid: Reg,
    block: u32,
    acc: &[Val],
) -> Result<(), CodegenError> {
    let total_red = spec.total_red;
    let k0 = e.b.mov(Type::B32, tid.into());
    let not_first = e.b.setp(CmpOp::Ne, Type::U32, tid.into(), Src::I(0));
    let has =
        e.b.setp(CmpOp::Lt, Type::U32, tid.into(), Src::I(total_red as i64));
    let own = e.b.pand(not_first, has);
    e.when(own, |e| {
        let full = spec.input_index(e, oidx, tid)?;
        let xs = spec.input_values(e, ctx, &full)?;
        e.update(acc, &xs)?;
        e.b.add_u32_to(k0, tid.into(), Src::I(i64::from(block)));
        Ok(())
    })?;
    thread_loop_by4(e, k0, block, total_red, |e, k| {
        let full = spec.input_index(e, oidx, k)?;
        let xs = spec.input_values(e, ctx, &full)?;
        spec.fold(e, acc, &xs)
    })
}

/// A row reduction whose input reads kernel parameters at the reduced element's own index
/// (through element-wise instructions: logsumexp's `exp(x - max)`, a plain sum): each thread
/// takes `width` consecutive elements at a time, as XLA's reduction emitter vectorizes a row,
/// from one pointer per parameter that steps by `width * block` elements, instead of an index,
/// an address and a load per element. Thread `t` reduces elements `width * t .. width * t +
/// width`, then the same `width * block` further on, in order.
///
/// The `width` elements are loaded one by one at fixed offsets from the pointer, not with one
/// `ld.global.v4`: the emulator runs a vector load lane by lane (its whole-warp path takes
/// scalar accesses), which cost more host time than the three loads it saves (logsumexp:
/// 37 ms of CPU time with `ld.v4`, 27-30 ms with four loads). Vector loads read the same
/// elements in the same order, so switching gives the same results; it also needs each
/// buffer aligned to a vector, which a contiguous slice of a buffer (aliased, not copied) need
/// not be, so it needs a check of the pointers and this loop as the fallback.
struct Vectorized {
    width: u32,
    /// The parameters read so: instruction, buffer, element type.
    params: Vec<(InstrId, Reg, P)>,
}

impl Vectorized {
    /// The plan for `spec` in a block of `block` threads, when there is one: the reduced
    /// dimensions are the trailing ones in order (so reduced element `k` of result `o` is
    /// input element `o * total + k`), parameters of the input's dimensions that are f32 or
    /// f64 are read through element-wise instructions only, the row length is a multiple of
    /// the width, and every thread of the block gets at least one vector (so the tree combines
    /// the same threads as the element-wise loop does).
    fn plan(ctx: &Ctx<'_>, spec: &ReduceSpec, block: u32) -> Option<Vectorized> {
        let ParamSrc::Buffers(ptrs) = &ctx.params else {
            return None;
        };
        let axes = &spec.axes;
        let rank = axes.in_dims.len();
        let nred = axes.red.len();
        if nred == 0 || nred > rank || !axes.red.iter().copied().eq(rank - nred..rank) {
            return None;
        }
        let comp = ctx.comp;
        let mut params = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<InstrId> = spec.inputs.clone();
        while let Some(id) = stack.pop() {
            let Some(i) = comp.get(id) else { continue };
            if !seen.insert(id) || dims_of(&i.shape) != axes.in_dims {
                continue;
            }
            let op = i.opcode;
            if op == H::Parameter {
                let ty = elem(&i.shape);
                let ptr = usize::try_from(i.parameter_number().unwrap_or(-1))
                    .ok()
                    .and_then(|n| ptrs.get(n));
                if let (Some(ty @ (P::F32 | P::F64)), Some(&ptr)) = (ty, ptr) {
                    params.push((id, ptr, ty));
                }
            } else if (op.is_elementwise_unary() && !matches!(op, H::Real | H::Imag))
                || op.is_elementwise_binary()
                || matches!(op, H::Select | H::Clamp | H::Compare | H::Convert)
            {
                stack.extend(i.operands.iter().rev());
            }
        }
        let widest = params.iter().map(|p| p.2.byte_size()).max()?;
        let mut width = (16 / widest.max(1)).min(4) as u32;
        while width > 1 && spec.total_red % u64::from(width) != 0 {
            width /= 2;
        }
        if width < 2 || spec.total_red / u64::from(width) < u64::from(block) {
            return None;
        }
        Some(Vectorized { width, params })
    }

    /// [`accumulate_strided`]'s share in vectors: the same first-element rule, then the
    /// thread's vectors in order.
    #[allow(clippy::too_many_arguments)]
    fn accumulate(
        &self,
        e: &mut Emitter<'_>,
        ctx: &Ctx<'_>,
        spec: &ReduceSpec,
        oidx: &[Ix],
        tid: Reg,
        block: u32,
        acc: &[Val],
    ) -> Result<(), CodegenError> {
        let w = self.width;
        let total = spec.total_red;
        // Element `width * tid` of this result's row, and the parameters' pointers to it.
        let out_dims: Vec<u64> = spec.out_dims.clone();
        let o = e.linearize(oidx, &out_dims);
        let c = e.b.mul_lo(Type::U32, tid.into(), Src::I(i64::from(w)));
        let start = match o {
            Ix::C(0) => c,
            Ix::C(k) => e.b.bin(
                O::Add,
                &[],
                Type::U32,
                c.into(),
                Src::I(i64::from(k) * total as i64),
            ),
            Ix::R(r) => e.b.mad_lo_u32(r.into(), Src::I(total as i64), c.into()),
        };
        let ptrs: Vec<Reg> = self
            .params
            .iter()
            .map(|&(_, base, ty)| {
                let off =
                    e.b.mul_wide_u32(start.into(), Src::I(ty.byte_size() as i64));
                e.b.bin(O::Add, &[], Type::S64, base.into(), off.into())
            })
            .collect();
        let step = i64::from(w) * i64::from(block);
        // The first vector: every thread has one (see `plan`); thread 0 combines the init
        // value with its first element, the others start from theirs.
        // (In a cache scope of its own: `c` is one register stepped along the row, so what
        // was computed at it must not be found again at the next vector.)
        e.push();
        let r = self.first(e, ctx, spec, oidx, tid, c, &ptrs, acc);
        e.pop();
        r?;
        self.advance(e, c, &ptrs, step);
        // The rest, one vector per iteration.
        let top = e.b.label();
        let end = e.b.label();
        e.b.place(&top);
        let done =
            e.b.setp(CmpOp::Ge, Type::U32, c.into(), Src::I(total as i64));
        e.b.bra_div(done, false, &end);
        e.push();
        let r = self
            .load(e, ctx, spec, oidx, c, &ptrs)
            .and_then(|xs| self.combine(e, spec, acc, &xs));
        e.pop();
        r?;
        self.advance(e, c, &ptrs, step);
        e.b.bra(None, &top);
        e.b.place(&end);
        Ok(())
    }

    /// The thread's first vector into `acc`: thread 0 combines the init value with its first
    /// element, the others start from theirs; then the rest of the vector.
    #[allow(clippy::too_many_arguments)]
    fn first(
        &self,
        e: &mut Emitter<'_>,
        ctx: &Ctx<'_>,
        spec: &ReduceSpec,
        oidx: &[Ix],
        tid: Reg,
        c: Reg,
        ptrs: &[Reg],
        acc: &[Val],
    ) -> Result<(), CodegenError> {
        let xs = self.load(e, ctx, spec, oidx, c, ptrs)?;
        let (head, rest) = xs
            .split_first()
            .ok_or_else(|| CodegenError::Invalid("an empty vector".into()))?;
        let first = e.b.setp(CmpOp::Eq, Type::U32, tid.into(), Src::I(0));
        let others = e.b.pnot(first);
        e.when(others, |e| e.update(acc, head))?;
        e.when(first, |e| spec.fold(e, acc, head))?;
        self.combine(e, spec, acc, rest)
    }

    /// The input values of elements `c .. c + width` (one list per element): the loads
    /// stand for the parameters' elements there, and the input's instructions are emitted on
    /// top of them.
    fn load(
        &self,
        e: &mut Emitter<'_>,
        ctx: &Ctx<'_>,
        spec: &ReduceSpec,
        oidx: &[Ix],
        c: Reg,
        ptrs: &[Reg],
    ) -> Result<Vec<Vec<Val>>, CodegenError> {
        let n = self.width as usize;
        let mut idxs = Vec::with_capacity(n);
        for i in 0..n {
            let k = if i == 0 {
                c
            } else {
                e.b.bin(O::Add, &[], Type::U32, c.into(), Src::I(i as i64))
            };
            idxs.push(spec.input_index(e, oidx, k)?);
        }
        for (&(id, _, ty), &ptr) in self.params.iter().zip(ptrs) {
            let (mt, kind) = if ty == P::F64 {
                (Type::F64, crate::codegen::builder::RegKind::F64)
            } else {
                (Type::F32, crate::codegen::builder::RegKind::F32)
            };
            for (i, idx) in idxs.iter().enumerate() {
                let at = (i * ty.byte_size() as usize) as i64;
                let reg = e.b.ld_at(StateSpace::Global, mt, kind, ptr, at);
                e.preset(ctx.id, id, idx.clone(), vec![Val { ty, reg, im: None }]);
            }
        }
        let mut out = Vec::with_capacity(n);
        for idx in &idxs {
            let mut xs = Vec::with_capacity(spec.inputs.len());
            for &i in &spec.inputs {
                xs.push(e.emit1(ctx, i, idx)?);
            }
            out.push(xs);
        }
        Ok(out)
    }

    /// Folds the element values `xs` into `acc`, in order.
    fn combine(
        &self,
        e: &mut Emitter<'_>,
        spec: &ReduceSpec,
        acc: &[Val],
        xs: &[Vec<Val>],
    ) -> Result<(), CodegenError> {
        for x in xs {
            spec.fold(e, acc, x)?;
        }
        Ok(())
    }

    /// Steps the element number and the pointers by `step` elements.
    fn advance(&self, e: &mut Emitter<'_>, c: Reg, ptrs: &[Reg], step: i64) {
        e.b.add_u32_to(c, c.into(), Src::I(step));
        for (&(_, _, ty), &p) in self.params.iter().zip(ptrs) {
            let bytes = step * ty.byte_size() as i64;
            e.b.op_to(
                p,
                O::Add,
                vec![crate::codegen::builder::t(Type::S64)],
                &[p.into(), Src::I(bytes)],
            );
        }
    }
}

/// One of the chunks of a row a thread holds (see `row.rs`): its column number `col`, the
/// column index `idx` (`col` over the column dimensions), and for a chunk that runs past the
/// row's end the predicate of the threads inside it (`col` is then clamped to the last
/// column, so that the values may be computed, though not used, by every thread).
pub(in crate::codegen) struct HeldChunk {
    /// The column number.
    pub col: Reg,
    /// The column index.
    pub idx: Vec<Ix>,
    /// Whether the thread's column is inside the row (`None`: every thread's is).
    pub valid: Option<Reg>,
}

impl ReduceSpec {
    /// Whether the reduction reads an input of dimensions `dims` and reduces its trailing
    /// dimensions in order, so that reduced element `k` of result `o` is the input's element at
    /// `o` followed by `k` over the reduced dimensions.
    pub(in crate::codegen) fn reduces_suffix_of(&self, dims: &[u64]) -> bool {
        let rank = self.axes.in_dims.len();
        let nred = self.axes.red.len();
        self.axes.in_dims == dims
            && nred <= rank
            && self.axes.red.iter().copied().eq(rank - nred..rank)
    }
}

/// [`block_reduce`] of row `ridx` from the elements a thread holds in `chunks` (a row of at
/// most [`ROW_TILE`] elements per thread): element `chunks[j]` is the thread's `j`-th, as the
/// strided loop would take them, so the result is the same; but the input's values are
/// computed in the caller's cache scope, and a later reduction or the row's output that reads
/// them at the same element reuses them instead of computing them again (softmax's `exp`).
#[allow(clippy::too_many_arguments)]
pub(in crate::codegen) fn held_reduce<'m, F>(
    e: &mut Emitter<'m>,
    ctx: &Ctx<'_>,
    spec: &ReduceSpec,
    ridx: &[Ix],
    chunks: &[HeldChunk],
    tid: Reg,
    my_slot: Reg,
    block: u32,
    at_thread0: F,
) -> Result<(), CodegenError>
where
    F: FnMut(&mut Emitter<'m>, &[Val]) -> Result<(), CodegenError>,
{
    let acc = spec.init_acc(e, ctx)?;
    for (j, chunk) in chunks.iter().enumerate() {
        let mut full = ridx.to_vec();
        full.extend(chunk.idx.iter().copied());
        let xs = spec.input_values(e, ctx, &full)?;
        let fold = |e: &mut Emitter<'m>| spec.fold(e, &acc, &xs);
        if j == 0 {
            // Thread 0 combines the init value with its first element (column 0 is in every
            // row); the other threads inside the row start from theirs.
            let not_first = e.b.setp(CmpOp::Ne, Type::U32, tid.into(), Src::I(0));
            let own = match chunk.valid {
                Some(v) => e.b.pand(not_first, v),
                None => not_first,
            };
            e.when(own, |e| e.update(&acc, &xs))?;
            let first = e.b.setp(CmpOp::Eq, Type::U32, tid.into(), Src::I(0));
            e.when(first, fold)?;
        } else {
            match chunk.valid {
                Some(v) => e.when(v, fold)?,
                None => fold(e)?,
            }
        }
    }
    combine_block(e, spec, tid, my_slot, block, &acc, at_thread0)
}

/// The block's reduction of result element `oidx` of `spec`: thread-strided accumulation, a
/// shared-memory tree and warp shuffles; then `at_thread0` runs in thread 0 with the result
/// components. `my_slot` is this thread's 8-byte slot of the tree's shared memory (in the first
/// region; see [`lanes`]).
#[allow(clippy::too_many_arguments)]
pub(in crate::codegen) fn block_reduce<'m, F>(
    e: &mut Emitter<'m>,
    ctx: &Ctx<'_>,
    spec: &ReduceSpec,
    oidx: &[Ix],
    tid: Reg,
    my_slot: Reg,
    block: u32,
    at_thread0: F,
) -> Result<(), CodegenError>
where
    F: FnMut(&mut Emitter<'m>, &[Val]) -> Result<(), CodegenError>,
{
    // Thread 0 starts from the init value; thread t > 0 from its first element (so the init
    // value is applied exactly once, whatever it is).
    let acc = spec.init_acc(e, ctx)?;
    match Vectorized::plan(ctx, spec, block) {
        Some(v) => v.accumulate(e, ctx, spec, oidx, tid, block, &acc)?,
        None => accumulate_strided(e, ctx, spec, oidx, tid, block, &acc)?,
    }
    combine_block(e, spec, tid, my_slot, block, &acc, at_thread0)
}

/// The tree and the shuffles of a block reduction of `spec` after each thread accumulated its
/// share into `acc` (threads `0 .. min(block, total)` hold one each); then `at_thread0` runs
/// in thread 0 with the result components.
pub(in crate::codegen) fn combine_block<'m, F>(
    e: &mut Emitter<'m>,
    spec: &ReduceSpec,
    tid: Reg,
    my_slot: Reg,
    block: u32,
    acc: &[Val],
    mut at_thread0: F,
) -> Result<(), CodegenError>
where
    F: FnMut(&mut Emitter<'m>, &[Val]) -> Result<(), CodegenError>,
{
    let (types, f_red) = (&spec.types, spec.f_red);
    let acc = acc.to_vec();
    let nvalid = u64::from(block).min(spec.total_red.max(1));
    // Shared-memory tree.
    // Component c's slots start at region `first[c]`; a region is `block` slots of 8 bytes.
    let first = regions(types);
    let region = i64::from(block) * 8;
    let comp_base = |e: &mut Emitter<'_>, c: usize, slot: Reg| -> Reg {
        e.b.bin(
            O::Add,
            &[],
            Type::S64,
            slot.into(),
            Src::I(first[c] as i64 * region),
        )
    };
    let mut nvalid = nvalid;
    if block > 32 {
        for (c, v) in acc.iter().enumerate() {
            let a = comp_base(e, c, my_slot);
            store_slot(e, a, region, *v)?;
        }
        let mut s = block / 2;
        while s >= 32 {
            e.b.barrier();
            let lim = u64::from(s).min(nvalid.saturating_sub(u64::from(s)));
            if lim > 0 {
                let active =
                    e.b.setp(CmpOp::Lt, Type::U32, tid.into(), Src::I(lim as i64));
                e.when(active, |e| {
                    let mut args = Vec::new();
                    for off in [0u64, u64::from(s) * 8] {
                        for (c, ty) in types.iter().enumerate() {
                            let a = comp_base(e, c, my_slot);
                            let a =
                                e.b.bin(O::Add, &[], Type::S64, a.into(), Src::I(off as i64));
                            args.push(load_slot(e, a, region, *ty)?);
                        }
                    }
                    let new = e.inline_scalar(f_red, &args)?;
                    for (c, v) in new.iter().enumerate() {
                        let a = comp_base(e, c, my_slot);
                        store_slot(e, a, region, *v)?;
                    }
                    Ok(())
                })?;
            }
            nvalid = nvalid.min(u64::from(s));
            s /= 2;
        }
        e.b.barrier();
    }
    // Warp 0 finishes with shuffles (all 32 lanes execute every shfl.sync).
    let warp0 = e.b.setp(CmpOp::Lt, Type::U32, tid.into(), Src::I(32));
    e.when(warp0, |e| {
        if block > 32 {
            let mut vals = Vec::new();
            for (c, ty) in types.iter().enumerate() {
                let a = comp_base(e, c, my_slot);
                vals.push(load_slot(e, a, region, *ty)?);
            }
            e.update(&acc, &vals)?;
        }
        let mut s = 16u32;
        while s > 0 {
            let lim = u64::from(s).min(nvalid.saturating_sub(u64::from(s)));
            if lim > 0 {
                let mut partner = Vec::new();
                for v in &acc {
                    partner.push(shfl_down(e, *v, s)?);
                }
                let combine = |e: &mut Emitter<'_>| {
                    let mut args = acc.clone();
                    args.extend(partner.iter().copied());
                    let new = e.inline_scalar(f_red, &args)?;
                    e.update(&acc, &new)
                };
                if lim == u64::from(s) {
                    // Every lane below `s` has a valid partner, and lanes at or above it
                    // compute values no lane that matters reads again (lane `i < s/2` next
                    // reads lane `i + s/2 < s`): combined unguarded, as XLA's warp reduction
                    // is, with no branch and no divergence. The combiner is scalar code, which
                    // cannot fault on the values the idle lanes hold.
                    combine(e)?;
                } else {
                    // Lanes in `lim..s` keep their value (their partner holds none).
                    let active =
                        e.b.setp(CmpOp::Lt, Type::U32, tid.into(), Src::I(lim as i64));
                    e.when(active, combine)?;
                }
            }
            nvalid = nvalid.min(u64::from(s));
            s /= 2;
        }
        let first = e.b.setp(CmpOp::Eq, Type::U32, tid.into(), Src::I(0));
        e.when(first, |e| at_thread0(e, &acc))
    })
}

/// This thread's 8-byte slot of the kernel's shared memory (`smem + 8 * tid`).
pub(in crate::codegen) fn shared_slot(e: &mut Emitter<'_>, tid: Reg) -> Reg {
    let smem = e.b.symbol_addr(SHARED_NAME);
    let tid_off = e.b.mul_wide_u32(tid.into(), Src::I(8));
    e.b.bin(O::Add, &[], Type::S64, smem.into(), tid_off.into())
}

/// A reduction kernel for `reduce` instruction `id`; `outputs` maps result components to
/// output leaves.
pub fn reduce_kernel(
    site: KernelSite<'_, '_>,
    outputs: &[(usize, usize)],
) -> Result<EmittedKernel, CodegenError> {
    let KernelSite {
        req,
        comp,
        name,
        id,
    } = site;
    let spec = ReduceSpec::new(comp, id)?;
    let block = spec.block(req);
    // (Declared even when the block is a single warp, which never touches it.)
    let shared = spec.shared_bytes(block);
    let outs: Vec<usize> = outputs.iter().map(|o| o.1).collect();
    let mut f = Frame::new(req, comp, name, &outs);
    let ctx = f.ctx(comp);
    let out_ptrs = f.outputs.clone();
    let tid = f.e.b.special(SpecialReg::Tid(Dim::X));
    let my_slot = shared_slot(&mut f.e, tid);
    let out_dims = spec.out_dims.clone();
    grid_stride(&mut f.e, true, out_dims.iter().product(), |e, o| {
        let oidx = e.delinearize(Ix::R(o), &out_dims);
        block_reduce(e, &ctx, &spec, &oidx, tid, my_slot, block, |e, acc| {
            for (k, &(c, _)) in outputs.iter().enumerate() {
                let v = *acc
                    .get(c)
                    .ok_or_else(|| CodegenError::Invalid("bad component".into()))?;
                store_at(e, out_ptrs[k], Ix::R(o), v)?;
            }
            Ok(())
        })?;
        e.b.barrier();
        Ok(())
    })?;
    Ok(f.finish_blocks(req, out_dims.iter().product(), block, shared))
}

/// `shfl.sync.down` of a value of any carrier (64-bit values in two halves, pred as 0/1).
fn shfl_down(e: &mut Emitter<'_>, v: Val, s: u32) -> Result<Val, CodegenError> {
    // A complex value: each part on its own.
    if let (Some(pt), Some(im)) = (crate::codegen::complex::part_type(v.ty), v.im) {
        let part = |reg| Val {
            ty: pt,
            reg,
            im: None,
        };
        let re = shfl_down(e, part(v.reg), s)?.reg;
        let im = shfl_down(e, part(im), s)?.reg;
        return Ok(crate::codegen::complex::make(v.ty, re, im));
    }
    let c = scalar::carrier(v.ty)?;
    let shfl = |e: &mut Emitter<'_>, r: Reg| -> Reg {
        let d = e.b.reg(r.kind);
        e.b.op_to(
            d,
            O::Shfl,
            vec![
                ptx::Modifier::Sync,
                ptx::Modifier::Shfl(ptx::ShflMode::Down),
                crate::codegen::builder::t(Type::B32),
            ],
            &[
                r.into(),
                Src::I(i64::from(s)),
                Src::I(0x1f),
                Src::I(0xffff_ffff),
            ],
        );
        d
    };
    let reg = match c {
        Type::Pred => {
            let u = e.b.selp(Type::U32, Src::I(1), Src::I(0), v.reg);
            let r = shfl(e, u);
            e.b.setp(CmpOp::Ne, Type::U32, r.into(), Src::I(0))
        }
        Type::S64 | Type::U64 | Type::F64 => {
            let bits = if c == Type::F64 {
                let b = e.b.reg(crate::codegen::builder::RegKind::B64);
                e.b.mov_to(b, Type::B64, v.reg.into());
                b
            } else {
                v.reg
            };
            let lo = e.b.cvt(None, Type::U32, Type::U64, bits.into());
            let hi = e.b.bin(O::Shr, &[], Type::U64, bits.into(), Src::I(32));
            let hi = e.b.cvt(None, Type::U32, Type::U64, hi.into());
            let lo = shfl(e, lo);
            let hi = shfl(e, hi);
            let lo = e.b.cvt(None, Type::U64, Type::U32, lo.into());
            let hi = e.b.cvt(None, Type::U64, Type::U32, hi.into());
            let hi = e.b.bin(O::Shl, &[], Type::B64, hi.into(), Src::I(32));
            let w = e.b.bin(O::Or, &[], Type::B64, hi.into(), lo.into());
            if c == Type::F64 {
                let f = e.b.reg(crate::codegen::builder::RegKind::F64);
                e.b.mov_to(f, Type::B64, w.into());
                f
            } else {
                w
            }
        }
        _ => shfl(e, v.reg),
    };
    // `carrier` above refused complex values, the only ones with an `im` part.
    Ok(Val {
        ty: v.ty,
        reg,
        im: None,
    })
}
