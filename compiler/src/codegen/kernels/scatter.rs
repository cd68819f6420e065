//! Scatter, as XLA's scatter emitter does it: a first kernel copies the operands into the
//! outputs, a second runs one thread per update element, computes the element's target index,
//! skips it when the update window would leave the operand (XLA's bounds rule), and combines
//! it into the output: `atom.global.add`/`min`/`max` where PTX has the combiner for the type, a
//! compare-and-swap loop otherwise, a plain store for a combiner that returns the update
//! ("overwrite": the last writer wins, as on XLA), and a plain read-modify-write when the
//! scatter promises `unique_indices` (no two threads meet, so the result is deterministic).
//!
//! What no per-element atomic can combine (variadic scatters without unique indices, elements
//! narrower than 32 bits, complex elements) keeps the gather form: one thread per output
//! element applying every matching update in order (deterministic, but quadratic).
// Every kernel file reads the shared scaffolding and its imports from `mod.rs`.
use super::*;
use hlo::ComputationId;
use ptx::{Address, AddressBase, Modifier, Operand, ReduceOp};

use crate::codegen::builder::{t, RegKind};
use crate::codegen::fill::{fill_word, OutputFill};

/// The index geometry of one scatter (HLO's dimension numbers, resolved).
struct Geometry {
    operands: Vec<InstrId>,
    indices: InstrId,
    updates: Vec<InstrId>,
    odims: Vec<u64>,
    idims: Vec<u64>,
    udims: Vec<u64>,
    /// `update_window_dims`.
    window_dims: Vec<usize>,
    /// `scatter_dims_to_operand_dims`.
    to_operand: Vec<usize>,
    /// `index_vector_dim`.
    ivd: usize,
    /// `input_batching_dims` and `scatter_indices_batching_dims`.
    in_batch: Vec<usize>,
    idx_batch: Vec<usize>,
    /// Operand dimensions that are window dimensions, in order.
    window_operand: Vec<usize>,
    /// Window size per operand dimension (1 for inserted and batching dimensions).
    wsize: Vec<u64>,
    /// Update dimensions that are scatter (not window) dimensions, and their sizes.
    scatter_dims: Vec<usize>,
    sdims: Vec<u64>,
    comb: ComputationId,
}

fn geometry(site: &KernelSite<'_, '_>) -> Result<Geometry, CodegenError> {
    let comp = site.comp;
    let instr = site.instr()?;
    let nops = instr.operands.len();
    if nops < 3 || nops % 2 == 0 {
        return Err(site.unsupported("scatter needs n operands, indices and n updates"));
    }
    let n = (nops - 1) / 2;
    let operands = instr.operands[..n].to_vec();
    let indices = instr.operands[n];
    let updates = instr.operands[n + 1..].to_vec();
    let shape_of = |id: InstrId| operand_dims(comp, instr, id);
    let odims = shape_of(operands[0])?;
    let idims = shape_of(indices)?;
    let udims = shape_of(updates[0])?;
    check_size(comp, instr, odims.iter().product())?;
    check_size(comp, instr, udims.iter().product())?;
    let dn = instr
        .attrs
        .scatter_dimension_numbers
        .clone()
        .ok_or_else(|| site.unsupported("scatter without dimension numbers"))?;
    let to_u = |v: &[i64]| -> Vec<usize> { v.iter().map(|&x| x.max(0) as usize).collect() };
    let window_dims = to_u(&dn.update_window_dims);
    let inserted = to_u(&dn.inserted_window_dims);
    // Batching dimensions (HLO spec): operand dimension `input_batching_dims[k]` is addressed at
    // the update's position along index dimension `scatter_indices_batching_dims[k]`, with window
    // size 1, like an inserted window dimension.
    let in_batch = to_u(&dn.input_batching_dims);
    let idx_batch = to_u(&dn.scatter_indices_batching_dims);
    if in_batch.len() != idx_batch.len() || idx_batch.iter().any(|&d| d >= idims.len()) {
        return Err(site.unsupported("batching dimension counts or indices differ"));
    }
    let window_operand: Vec<usize> = (0..odims.len())
        .filter(|d| !inserted.contains(d) && !in_batch.contains(d))
        .collect();
    let mut wsize = vec![1u64; odims.len()];
    for (j, &d) in window_operand.iter().enumerate() {
        let wd = *window_dims
            .get(j)
            .ok_or_else(|| site.unsupported("update_window_dims mismatch"))?;
        wsize[d] = *udims
            .get(wd)
            .ok_or_else(|| site.unsupported("update_window_dims out of range"))?;
    }
    let scatter_dims: Vec<usize> = (0..udims.len())
        .filter(|d| !window_dims.contains(d))
        .collect();
    let sdims: Vec<u64> = scatter_dims.iter().map(|&d| udims[d]).collect();
    // Only checked: every operand is an array (the combiner reads the types from the values).
    elem_types(comp, instr, &operands, "bad operand")?;
    let comb = instr
        .attrs
        .to_apply
        .ok_or_else(|| site.unsupported("scatter without to_apply"))?;
    Ok(Geometry {
        operands,
        indices,
        updates,
        odims,
        idims,
        udims,
        window_dims,
        to_operand: to_u(&dn.scatter_dims_to_operand_dims),
        ivd: dn.index_vector_dim.max(0) as usize,
        in_batch,
        idx_batch,
        window_operand,
        wsize,
        scatter_dims,
        sdims,
        comb,
    })
}

/// How the per-update kernel combines an update into its output element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Combine {
    /// The combiner returns the update: a plain store (last writer wins).
    Overwrite,
    /// `atom.global.<op>` of the element type.
    Atomic(ReduceOp),
    /// A compare-and-swap loop on the element's 32 or 64 bits.
    Cas,
    /// `unique_indices`: load, combine, store (no two threads share an element).
    ReadModifyWrite,
}

/// The combining strategy for a scatter of `n` operands of element type `ty` (`None`: the
/// gather kernel).
fn strategy(
    module: &hlo::HloModule,
    comb: ComputationId,
    ty: P,
    n: usize,
    unique: bool,
) -> Option<Combine> {
    let c = module.get(comb)?;
    let root = c.get(c.root)?;
    let param = |id: InstrId| c.params.iter().position(|&p| p == id);
    if n == 1 && c.params.len() == 2 && param(c.root) == Some(1) && !ty.is_complex() {
        return Some(Combine::Overwrite);
    }
    if unique {
        return Some(Combine::ReadModifyWrite);
    }
    if n != 1 || ty.is_complex() || !matches!(ty.byte_size(), 4 | 8) {
        return None;
    }
    let both_params = root.operands.len() == 2 && {
        let mut ps: Vec<Option<usize>> = root.operands.iter().map(|&o| param(o)).collect();
        ps.sort();
        ps == [Some(0), Some(1)]
    };
    let int = matches!(ty, P::S32 | P::U32 | P::S64 | P::U64);
    let atomic = match root.opcode {
        H::Add if both_params && (int || matches!(ty, P::F32 | P::F64)) => Some(ReduceOp::Add),
        H::Maximum if both_params && int => Some(ReduceOp::Max),
        H::Minimum if both_params && int => Some(ReduceOp::Min),
        _ => None,
    };
    Some(atomic.map_or(Combine::Cas, Combine::Atomic))
}

/// The kernels of the root `scatter` (outputs 0..n): the operands written into the outputs
/// (a memset for a broadcast constant, as XLA's constant initializer; a copy kernel
/// otherwise) and the per-update kernel, or the gather kernel where no per-element combine
/// applies.
pub fn scatter_kernel(
    site: KernelSite<'_, '_>,
) -> Result<(Vec<EmittedKernel>, Vec<OutputFill>), CodegenError> {
    let g = geometry(&site)?;
    let instr = site.instr()?;
    let ty = elem_types(site.comp, instr, &g.operands[..1], "bad operand")?[0];
    let unique = instr.attrs.unique_indices == Some(true);
    let Some(mode) = strategy(site.req.module, g.comb, ty, g.operands.len(), unique) else {
        return Ok((vec![gather_kernel(site, &g)?], Vec::new()));
    };
    let mut fills = Vec::new();
    let mut targets: Vec<(InstrId, usize)> = Vec::new();
    for (output, &o) in g.operands.iter().enumerate() {
        match fill_word(site.comp, o) {
            Some(word) => fills.push(OutputFill { output, word }),
            None => targets.push((o, output)),
        }
    }
    let mut kernels = Vec::with_capacity(2);
    if !targets.is_empty() {
        let name = format!("{}_init", site.name);
        kernels.push(loop_kernel(site.req, site.comp, &name, &targets)?);
    }
    kernels.push(update_kernel(site, &g, mode)?);
    Ok((kernels, fills))
}

/// The target of one update element: whether its window lies inside the operand, and the
/// row-major output position (meaningful only when it does).
fn target(
    e: &mut Emitter<'_>,
    ctx: &Ctx<'_>,
    site: &KernelSite<'_, '_>,
    g: &Geometry,
    uidx: &[Ix],
) -> Result<(Option<Reg>, Ix), CodegenError> {
    let sidx: Vec<Ix> = g.scatter_dims.iter().map(|&d| uidx[d]).collect();
    let coords = with_zero_at(&sidx, g.idims.len(), g.ivd);
    let mut ok: Option<Reg> = None;
    let mut full = Vec::with_capacity(g.odims.len());
    for (d, &od) in g.odims.iter().enumerate() {
        let start = match start_index(e, ctx, site, g, &coords, d)? {
            Some(start) => start,
            // A window-only dimension starts at 0: it fits unless the window is larger.
            None if g.wsize[d] <= od => {
                full.push(window_offset(g, uidx, d));
                continue;
            }
            None => e.b.mov(Type::B64, Src::I(0)),
        };
        // XLA's rule: the whole window must fit, start in [0, od - wsize] (unsigned: a
        // negative start is huge); otherwise the update element is skipped.
        let fits = if g.wsize[d] > od {
            e.b.setp(CmpOp::Lt, Type::U64, start.into(), Src::I(0))
        } else {
            e.b.setp(
                CmpOp::Le,
                Type::U64,
                start.into(),
                Src::I((od - g.wsize[d]) as i64),
            )
        };
        ok = Some(e.b.pand_acc(ok, fits));
        let s32 = e.b.cvt(None, Type::U32, Type::U64, start.into());
        let w = window_offset(g, uidx, d);
        full.push(e.ix_add(Ix::R(s32), w));
    }
    let lin = e.linearize(&full, &g.odims);
    Ok((ok, lin))
}

/// The start of the update window along operand dimension `d` (u64), from the scatter
/// indices or a batching dimension; `None` for a window-only dimension (it starts at 0, and
/// the callers differ in what that means for the bounds check).
fn start_index(
    e: &mut Emitter<'_>,
    ctx: &Ctx<'_>,
    site: &KernelSite<'_, '_>,
    g: &Geometry,
    coords: &[Ix],
    d: usize,
) -> Result<Option<Reg>, CodegenError> {
    if let Some(k) = g.to_operand.iter().position(|&x| x == d) {
        let mut c = coords.to_vec();
        if g.ivd < c.len() {
            c[g.ivd] = Ix::C(k as u32);
        }
        let v = e.emit1(ctx, g.indices, &c)?;
        let start = scalar::to_index64(&mut e.b, v).map_err(|m| site.unsupported(m.to_string()))?;
        return Ok(Some(start));
    }
    Ok(g.in_batch.iter().position(|&x| x == d).map(|k| {
        let c = e.ix_reg(coords[g.idx_batch[k]]);
        e.b.cvt(None, Type::U64, Type::U32, c.into())
    }))
}

/// The position inside the update window along operand dimension `d` (0 for inserted and
/// batching dimensions).
fn window_offset(g: &Geometry, uidx: &[Ix], d: usize) -> Ix {
    g.window_operand
        .iter()
        .position(|&x| x == d)
        .map_or(Ix::C(0), |j| uidx[g.window_dims[j]])
}

/// Update elements one thread of the per-update kernel combines: a run of consecutive
/// elements along the last update dimension when that is a window dimension mapped to the
/// operand's last dimension (XLA's vectorized scatter). The run shares the thread's index
/// arithmetic, its scatter index load and bounds check, and its output address: the elements
/// are consecutive in the update and in the output alike, and the bounds rule looks only at
/// the window's start. 8, 4 or 2 where the dimension's size allows, else 1.
fn run_length(g: &Geometry) -> u64 {
    let (Some(last), Some(out_last)) = (g.udims.len().checked_sub(1), g.odims.len().checked_sub(1))
    else {
        return 1;
    };
    let window = g.window_dims.iter().position(|&d| d == last);
    if window.and_then(|j| g.window_operand.get(j)) != Some(&out_last) {
        return 1;
    }
    let n = g.udims[last];
    [8, 4, 2].into_iter().find(|v| n % v == 0).unwrap_or(1)
}

/// One thread per run of update elements (see the module comment and [`run_length`]).
fn update_kernel(
    site: KernelSite<'_, '_>,
    g: &Geometry,
    mode: Combine,
) -> Result<EmittedKernel, CodegenError> {
    let KernelSite {
        req, comp, name, ..
    } = site;
    let total_u: u64 = g.udims.iter().product();
    let run = run_length(g);
    let threads = total_u / run;
    let outs: Vec<usize> = (0..g.operands.len()).collect();
    let mut f = Frame::new(req, comp, name, &outs);
    let ctx = f.ctx(comp);
    let out_ptrs = f.outputs.clone();
    // An atomic combine of an update read straight from a kernel input: each element is a load
    // and an atomic at a constant offset from the run's two addresses.
    let direct = match (mode, g.updates.as_slice()) {
        (Combine::Atomic(op), [u]) => comp
            .get(*u)
            .filter(|i| i.opcode == H::Parameter)
            .and_then(|i| f.inputs.get(usize::try_from(i.parameter_number()?).ok()?))
            .map(|&ptr| (op, ptr)),
        _ => None,
    };
    grid_stride(&mut f.e, false, threads, |e, i| {
        let first = e.ix_mul(Ix::R(i), run);
        let uidx = e.delinearize(first, &g.udims);
        let (ok, lin) = target(e, &ctx, &site, g, &uidx)?;
        let body = |e: &mut Emitter<'_>| -> Result<(), CodegenError> {
            if let Some((op, ptr)) = direct {
                let ty = elem_types(comp, site.instr()?, &g.updates, "bad update")?[0];
                let ua = e.elem_addr(ptr, first, ty);
                let oa = e.elem_addr(out_ptrs[0], lin, ty);
                let (mt, kind) = if ty.byte_size() == 8 {
                    (Type::B64, RegKind::B64)
                } else {
                    (Type::B32, RegKind::B32)
                };
                for j in 0..run {
                    let off = (j * ty.byte_size()) as i64;
                    let raw = ld_at(e, mt, kind, ua, off);
                    atom(e, op, atom_type(op, ty), (oa, off), raw, None);
                }
                return Ok(());
            }
            let last = uidx.len().saturating_sub(1);
            for j in 0..run {
                let mut uj = uidx.clone();
                if let Some(x) = uj.get_mut(last) {
                    *x = e.ix_add(*x, Ix::C(j as u32));
                }
                let mut ups = Vec::with_capacity(g.updates.len());
                for &u in &g.updates {
                    ups.push(e.emit1(&ctx, u, &uj)?);
                }
                let lj = e.ix_add(lin, Ix::C(j as u32));
                combine(e, g.comb, mode, &out_ptrs, lj, &ups)?;
            }
            Ok(())
        };
        match ok {
            Some(ok) => e.when(ok, body),
            None => body(e),
        }
    })?;
    Ok(f.finish_1d(req, threads, 0))
}

/// `ld.global.<mt> d, [addr + off]` (raw bits).
fn ld_at(e: &mut Emitter<'_>, mt: Type, kind: RegKind, addr: Reg, off: i64) -> Reg {
    let d = e.b.reg(kind);
    e.b.raw(
        None,
        O::Ld,
        vec![Modifier::Space(StateSpace::Global), t(mt)],
        vec![
            Operand::Reg(d.reg()),
            Operand::Address(Address {
                base: AddressBase::Reg(addr.reg()),
                offset: off,
            }),
        ],
    );
    d
}

/// Combines the updates `ups` into output element `lin` of `outs` as `mode` says.
fn combine(
    e: &mut Emitter<'_>,
    comb: ComputationId,
    mode: Combine,
    outs: &[Reg],
    lin: Ix,
    ups: &[Val],
) -> Result<(), CodegenError> {
    match mode {
        Combine::Overwrite => store_at(e, outs[0], lin, ups[0]),
        Combine::ReadModifyWrite => {
            let mut args = Vec::with_capacity(2 * ups.len());
            for (&o, u) in outs.iter().zip(ups) {
                args.push(load_at(e, o, lin, u.ty)?);
            }
            args.extend_from_slice(ups);
            let new = e.inline_scalar(comb, &args)?;
            for (&o, v) in outs.iter().zip(new) {
                store_at(e, o, lin, v)?;
            }
            Ok(())
        }
        Combine::Atomic(op) => {
            let v = ups[0];
            let addr = e.elem_addr(outs[0], lin, v.ty);
            let raw = scalar::to_bits(&mut e.b, v)?;
            atom(e, op, atom_type(op, v.ty), (addr, 0), raw, None);
            Ok(())
        }
        Combine::Cas => cas_loop(e, comb, outs[0], lin, ups[0]),
    }
}

/// The `atom` type for `op` on elements of `ty` (4 or 8 bytes, not complex).
fn atom_type(op: ReduceOp, ty: P) -> Type {
    let wide = ty.byte_size() == 8;
    match (op, ty) {
        (ReduceOp::Cas, _) => {
            if wide {
                Type::B64
            } else {
                Type::B32
            }
        }
        (_, P::F32) => Type::F32,
        (_, P::F64) => Type::F64,
        (ReduceOp::Add, P::S64 | P::U64) => Type::U64,
        (_, P::S32) => Type::S32,
        (_, P::S64) => Type::S64,
        (_, P::U64) => Type::U64,
        _ => Type::U32,
    }
}

/// `atom.global.<op>.<ty> d, [addr + offset], b(, c)`: returns the old value's bits.
fn atom(
    e: &mut Emitter<'_>,
    op: ReduceOp,
    ty: Type,
    (addr, offset): (Reg, i64),
    b: Reg,
    c: Option<Reg>,
) -> Reg {
    let wide = matches!(ty, Type::B64 | Type::U64 | Type::S64 | Type::F64);
    let d = e.b.reg(if wide { RegKind::B64 } else { RegKind::B32 });
    let mut ops = vec![
        Operand::Reg(d.reg()),
        Operand::Address(Address {
            base: AddressBase::Reg(addr.reg()),
            offset,
        }),
        Operand::Reg(b.reg()),
    ];
    ops.extend(c.map(|c| Operand::Reg(c.reg())));
    e.b.raw(
        None,
        O::Atom,
        vec![
            Modifier::Space(StateSpace::Global),
            Modifier::Reduce(op),
            t(ty),
        ],
        ops,
    );
    d
}

/// `old = out[lin]; loop { new = comb(old, u); seen = cas(out[lin], old, new); if seen == old
/// break; old = seen }`: XLA's CAS loop, on the element's own 32 or 64 bits.
fn cas_loop(
    e: &mut Emitter<'_>,
    comb: ComputationId,
    out: Reg,
    lin: Ix,
    u: Val,
) -> Result<(), CodegenError> {
    let ty = atom_type(ReduceOp::Cas, u.ty);
    let kind = if ty == Type::B64 {
        RegKind::B64
    } else {
        RegKind::B32
    };
    let addr = e.elem_addr(out, lin, u.ty);
    let old = e.b.ld(StateSpace::Global, ty, kind, addr);
    let top = e.b.label();
    e.b.place(&top);
    e.push();
    let r = (|| {
        let cur = scalar::from_bits(&mut e.b, u.ty, old)?;
        let new = e.inline_scalar(comb, &[cur, u])?;
        let nb = scalar::to_bits(&mut e.b, new[0])?;
        let seen = atom(e, ReduceOp::Cas, ty, (addr, 0), old, Some(nb));
        let again = e.b.setp(CmpOp::Ne, ty, seen.into(), old.into());
        e.b.mov_to(old, ty, seen.into());
        e.b.bra_div(again, false, &top);
        Ok(())
    })();
    e.pop();
    r
}

/// The gather form: one thread per output element applying every matching update in order
/// (deterministic; what no per-element atomic can do).
fn gather_kernel(site: KernelSite<'_, '_>, g: &Geometry) -> Result<EmittedKernel, CodegenError> {
    let KernelSite {
        req, comp, name, ..
    } = site;
    let total_s: u64 = g.sdims.iter().product();
    let total: u64 = g.odims.iter().product();
    let outs: Vec<usize> = (0..g.operands.len()).collect();
    let mut f = Frame::new(req, comp, name, &outs);
    let ctx = f.ctx(comp);
    let out_ptrs = f.outputs.clone();
    grid_stride(&mut f.e, false, total, |e, i| {
        let idx = e.delinearize(Ix::R(i), &g.odims);
        let mut cur = Vec::new();
        for &o in &g.operands {
            cur.push(e.emit1(&ctx, o, &idx)?);
        }
        let acc = e.fresh_copy(&cur)?;
        e.counted_loop(total_s, |e, s| {
            let sidx = e.delinearize(Ix::R(s), &g.sdims);
            let coords = with_zero_at(&sidx, g.idims.len(), g.ivd);
            let mut ok: Option<Reg> = None;
            let mut rel = Vec::with_capacity(g.odims.len());
            for (d, &od) in g.odims.iter().enumerate() {
                let start = match start_index(e, &ctx, &site, g, &coords, d)? {
                    Some(start) => start,
                    None => e.b.mov(Type::B64, Src::I(0)),
                };
                let fits = e.b.setp(
                    CmpOp::Le,
                    Type::U64,
                    start.into(),
                    Src::I(od.saturating_sub(g.wsize[d]) as i64),
                );
                let fits = if g.wsize[d] > od {
                    e.b.setp(CmpOp::Lt, Type::U64, start.into(), Src::I(0))
                } else {
                    fits
                };
                let ir = e.ix_reg(idx[d]);
                let i64v = e.b.cvt(None, Type::U64, Type::U32, ir.into());
                let r = e.b.bin(O::Sub, &[], Type::S64, i64v.into(), start.into());
                let inw =
                    e.b.setp(CmpOp::Lt, Type::U64, r.into(), Src::I(g.wsize[d] as i64));
                let c = e.b.pand(fits, inw);
                ok = Some(e.b.pand_acc(ok, c));
                rel.push(e.b.cvt(None, Type::U32, Type::U64, r.into()));
            }
            let Some(ok) = ok else { return Ok(()) };
            e.when(ok, |e| {
                let mut u = vec![Ix::C(0); g.udims.len()];
                for (j, &d) in g.scatter_dims.iter().enumerate() {
                    u[d] = sidx[j];
                }
                for (j, &d) in g.window_operand.iter().enumerate() {
                    u[g.window_dims[j]] = Ix::R(rel[d]);
                }
                let mut args = acc.clone();
                for &up in &g.updates {
                    args.push(e.emit1(&ctx, up, &u)?);
                }
                let new = e.inline_scalar(g.comb, &args)?;
                e.update(&acc, &new)
            })
        })?;
        for (k, v) in acc.iter().enumerate() {
            store_at(e, out_ptrs[k], Ix::R(i), *v)?;
        }
        Ok(())
    })?;
    Ok(f.finish_1d(req, total, 0))
}
