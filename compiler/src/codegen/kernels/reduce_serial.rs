//! Reductions with one thread per result element, for the shapes where a block per result
//! element wastes the block: few elements reduced into each result (at most a warp's worth, so
//! most of a block-per-result kernel's threads would idle through its tree), or a column
//! reduction (the input's minor-most dimension kept) with many results. Each thread folds its
//! result's reduced elements in order, starting from the init value; adjacent threads take
//! adjacent results, so in a column reduction every warp's loads are adjacent elements. This is
//! XLA:GPU's choice too: a reduction its reduction emitter does not take is emitted as a loop
//! fusion, one thread per output element (its `IsReductionFromOrToContiguousDimensions` and
//! the elemental `reduce`).
use super::*;

/// Elements reduced into each result at or below which the serial kernel is used whatever the
/// axes: a warp's width.
const FEW: u64 = 32;

/// Results per reduced element from which a column reduction (minor-most input dimension kept)
/// is serial: the results alone then give the device as many threads as a block-per-result
/// kernel's trees would, each thread's loop being at most an eighth of the results.
const COLUMNS_PER_ROW: u64 = 8;

/// Whether `spec` is reduced by [`serial_reduce_kernel`] rather than a block per result.
pub(in crate::codegen) fn serial_fits(spec: &ReduceSpec) -> bool {
    let results: u64 = spec.out_dims.iter().product();
    let rank = spec.axes.in_dims.len();
    let minor_kept = rank > 0 && !spec.axes.red.contains(&(rank - 1));
    spec.total_red <= FEW
        || (minor_kept && results >= COLUMNS_PER_ROW.saturating_mul(spec.total_red))
}

/// A reduction kernel for `reduce` instruction `id`, a block per result element or one thread
/// per result element ([`serial_fits`]); `outputs` maps result components to output leaves.
pub fn reduction_kernel(
    site: KernelSite<'_, '_>,
    outputs: &[(usize, usize)],
) -> Result<EmittedKernel, CodegenError> {
    let spec = ReduceSpec::new(site.comp, site.id)?;
    if serial_fits(&spec) {
        serial_reduce_kernel(site, &spec, outputs)
    } else {
        super::reduce_kernel(site, outputs)
    }
}

/// One thread per result element: the init value, then every reduced element in order.
fn serial_reduce_kernel(
    site: KernelSite<'_, '_>,
    spec: &ReduceSpec,
    outputs: &[(usize, usize)],
) -> Result<EmittedKernel, CodegenError> {
    let KernelSite {
        req, comp, name, ..
    } = site;
    let outs: Vec<usize> = outputs.iter().map(|o| o.1).collect();
    let mut f = Frame::new(req, comp, name, &outs);
    let ctx = f.ctx(comp);
    let out_ptrs = f.outputs.clone();
    let out_dims = spec.out_dims.clone();
    let results: u64 = out_dims.iter().product();
    grid_stride(&mut f.e, false, results, |e, o| {
        let oidx = e.delinearize(Ix::R(o), &out_dims);
        let acc = spec.init_acc(e, &ctx)?;
        let k0 = e.b.mov(Type::B32, Src::I(0));
        thread_loop_by4(e, k0, 1, spec.total_red, |e, k| {
            let full = spec.input_index(e, &oidx, k)?;
            let xs = spec.input_values(e, &ctx, &full)?;
            spec.fold(e, &acc, &xs)
        })?;
        for (k, &(c, _)) in outputs.iter().enumerate() {
            let v = *acc
                .get(c)
                .ok_or_else(|| CodegenError::Invalid("bad component".into()))?;
            let ptr = *out_ptrs
                .get(k)
                .ok_or_else(|| CodegenError::Invalid("bad output".into()))?;
            store_at(e, ptr, Ix::R(o), v)?;
        }
        Ok(())
    })?;
    Ok(f.finish_1d(req, results, 0))
}
