//! `stablehlo.custom_call @ApproxTopK`: `jax.lax.approx_max_k` / `approx_min_k`.
//!
//! It is the one custom call whose meaning StableHLO's compatibility guarantee covers, and XLA
//! does not run it as a custom call: its StableHLO translation (`mlir_hlo_to_hlo.cc`) checks the
//! operands and the backend config (constraints C1-C8 there) and expands it. Lowered for a GPU,
//! JAX sets `is_fallback = true`, which XLA expands as `ApproxTopKFallback`
//! (`xla/hlo/builder/lib/approx_topk.cc`): the exact top `k'` by sorting along the reduction
//! dimension with the call's comparator and slicing, or, when `k'` is 1, a reduction that keeps
//! the operand tuple the comparator prefers. `k'` is the output size XLA's
//! `ApproxTopKReductionOutputSize` gives (`top_k` when `aggregate_to_topk`; otherwise the size
//! TPU's partial reduction would leave), and is what the result types say. Without
//! `is_fallback` XLA calls TPU's `PartialReduce` whenever there is something to reduce; only
//! the cases where it does not are expanded here, the others are refused.

use super::*;

/// The backend config of an `ApproxTopK` call.
#[derive(Clone, Copy)]
struct Config {
    top_k: i64,
    reduction_dim: i64,
    recall_target: f32,
    aggregate_to_topk: bool,
    reduction_input_size_override: i64,
    is_fallback: bool,
}

/// TPU's tiling of the reduction dimension, which decides the approximate output size.
const LANE_TILING: u64 = 128;
const CHUNK_TILING: u64 = 1024;

/// An array of `s`'s element type with dimensions `dims`.
fn like(s: &Shape, dims: Vec<i64>) -> Shape {
    Shape::array(s.element_type().unwrap_or(PrimitiveType::F32), dims)
}

fn log2_floor(v: u64) -> u32 {
    v.checked_ilog2().unwrap_or(0)
}

fn log2_ceil(v: u64) -> u32 {
    match v {
        0 | 1 => 0,
        _ => (v - 1).ilog2() + 1,
    }
}

/// XLA's `ApproxTopKReductionOutputSize`: the size of the reduction dimension in the results
/// and log2 of the reduction TPU's partial reduce would apply (0: none), or why the arguments
/// are out of range.
fn output_size(input: u64, rank: usize, c: &Config) -> std::result::Result<(u64, u32), String> {
    let top_k = u64::try_from(c.top_k).map_err(|_| format!("top_k {} < 1", c.top_k))?;
    if top_k == 0 {
        return Err("top_k 0 < 1".into());
    }
    if c.aggregate_to_topk {
        return Ok((top_k, 0));
    }
    let tiling = if rank == 1 { CHUNK_TILING } else { LANE_TILING };
    if input <= tiling {
        return Ok((input, 0));
    }
    let logical = match u64::try_from(c.reduction_input_size_override) {
        Ok(o) if o < input => {
            return Err(format!(
                "reduction_input_size_override {o} is less than the reduced dimension, {input}"
            ))
        }
        Ok(o) => o,
        Err(_) => input,
    };
    if top_k == 1 {
        return Ok((tiling, log2_ceil(logical.div_ceil(tiling))));
    }
    if c.recall_target == 1.0 {
        return Ok((input, 0));
    }
    // M = (1 - K) / ln(recall): windows enough that K values rarely share one.
    let m = ((1.0 - top_k as f64) / f64::from(c.recall_target).ln()) as u64;
    let m = m.max(tiling).min(logical);
    let log2_reduction = log2_floor(logical / m.max(1));
    if log2_reduction == 0 {
        return Ok((input, 0));
    }
    let log2_reduction = log2_reduction.min(log2_ceil(input / tiling));
    let windows = input.div_ceil(tiling).div_ceil(1 << log2_reduction);
    Ok((windows * tiling, log2_reduction))
}

impl Front<'_> {
    pub(super) fn lower_approx_top_k(&mut self, op: &Op) -> Result<Lowered> {
        let c = self.approx_top_k_config(op)?;
        let n = op.operands.len();
        if n == 0 || n % 2 != 0 {
            return Err(self.bad(op, "ApproxTopK takes an even number of operands"));
        }
        let inputs = op.operands[..n / 2].to_vec();
        let inits = op.operands[n / 2..].to_vec();
        if op.result_types.len() != inputs.len() {
            return Err(self.bad(op, "ApproxTopK: num_results does not match num_inputs"));
        }
        let shape0 = self.shape_of(inputs[0]).clone();
        let dims = shape0.dims().to_vec();
        let rank = dims.len();
        let rd = usize::try_from(c.reduction_dim)
            .ok()
            .filter(|&d| d < rank)
            .ok_or_else(|| self.bad(op, "ApproxTopK: reduction_dim out of range"))?;
        if !(c.recall_target > 0.0 && c.recall_target <= 1.0) {
            return Err(self.bad(op, "ApproxTopK: recall_target out of range"));
        }
        let input = u64::try_from(dims[rd]).unwrap_or(0);
        let (size, _) = output_size(input, rank, &c)
            .map_err(|why| self.bad(op, format!("ApproxTopK: {why}")))?;
        if size > input {
            return Err(self.bad(
                op,
                format!(
                    "ApproxTopK: top_k {size} is more than the {input} elements of dimension {rd}"
                ),
            ));
        }
        let size = i64::try_from(size).unwrap_or(i64::MAX);
        let mut scalars = Vec::with_capacity(inputs.len());
        for (i, (&x, &init)) in inputs.iter().zip(&inits).enumerate() {
            let (s, t) = (self.shape_of(x).clone(), self.shape_of(init).clone());
            if !s.is_array() || s.dims() != dims.as_slice() {
                return Err(self.bad(
                    op,
                    format!("ApproxTopK: input shape mismatch at position {i}"),
                ));
            }
            let et = s.element_type();
            if t.element_type() != et || !t.dims().is_empty() {
                return Err(self.bad(
                    op,
                    format!("ApproxTopK: init value {i} is not a scalar of its input's type"),
                ));
            }
            let mut want = dims.clone();
            want[rd] = size;
            let r = &op.result_types[i];
            if r.element_type() != et || r.dims() != want.as_slice() {
                return Err(self.bad(
                    op,
                    format!(
                        "ApproxTopK: result {i} is {r}, the expansion gives {}",
                        like(&s, want)
                    ),
                ));
            }
            scalars.push(Shape::scalar(et.unwrap_or(PrimitiveType::F32)));
        }
        let comparator = match op.get(&["called_computations"]) {
            Some(Attr::List(calls)) if calls.len() == 1 => match &calls[0] {
                Attr::Symbol(f) => self.func_id(&f.clone(), op.loc),
                _ => return Err(self.bad(op, "ApproxTopK: called_computations must be @functions")),
            },
            _ => return Err(self.bad(op, "ApproxTopK takes exactly 1 called_computation")),
        };
        // Whether TPU's partial reduce would run (XLA asks without aggregating).
        let partial = Config {
            aggregate_to_topk: false,
            ..c
        };
        let partial_reduce = match output_size(input, rank, &partial) {
            Ok((_, log2_reduction)) => log2_reduction > 0,
            Err(why) => return Err(self.bad(op, format!("ApproxTopK: {why}"))),
        };
        let results = if c.is_fallback {
            self.aggregate_to_top_k(op, &inputs, &inits, &scalars, rd, size, comparator)?
        } else if !partial_reduce {
            // Nothing for TPU's partial reduce to do: XLA aggregates or returns the operands.
            match c.aggregate_to_topk {
                true => {
                    self.aggregate_to_top_k(op, &inputs, &inits, &scalars, rd, size, comparator)?
                }
                false => inputs,
            }
        } else {
            return Err(self.bad(
                op,
                "ApproxTopK without is_fallback reduces with TPU's PartialReduce, which no GPU runs \
                 (JAX sets is_fallback when it lowers for a GPU)",
            ));
        };
        Ok(self.results(&results, op.loc))
    }

    /// The backend config (`mhlo.backend_config`), every entry checked as XLA does.
    fn approx_top_k_config(&self, op: &Op) -> Result<Config> {
        let Some(Attr::Dict(entries, _)) = op.get(&["mhlo.backend_config", "backend_config"])
        else {
            return Err(self.bad(op, "ApproxTopK needs a backend_config dictionary"));
        };
        let get = |name: &str| entries.iter().find(|(k, _)| k == name).map(|(_, v)| v);
        for (k, _) in entries {
            const KNOWN: [&str; 6] = [
                "top_k",
                "reduction_dim",
                "recall_target",
                "aggregate_to_topk",
                "reduction_input_size_override",
                "is_fallback",
            ];
            if !KNOWN.contains(&k.as_str()) {
                return Err(self.bad(
                    op,
                    format!("{k} is not a supported backend_config attribute for ApproxTopK"),
                ));
            }
        }
        let missing =
            |name: &str| self.bad(op, format!("Missing {name} attribute in backend_config"));
        let int = |name: &str| match get(name) {
            Some(Attr::Int(i)) => i64::try_from(*i).map_err(|_| {
                self.bad(
                    op,
                    format!("{name} attribute in backend_config must be of i64 type"),
                )
            }),
            Some(_) => Err(self.bad(
                op,
                format!("{name} attribute in backend_config must be of i64 type"),
            )),
            None => Err(missing(name)),
        };
        let boolean = |name: &str| match get(name) {
            Some(Attr::Bool(b)) => Ok(*b),
            Some(_) => Err(self.bad(
                op,
                format!("{name} attribute in backend_config must be of bool type"),
            )),
            None => Err(missing(name)),
        };
        let recall_target = match get("recall_target") {
            Some(Attr::Float(f)) => *f as f32,
            Some(_) => {
                return Err(self.bad(
                    op,
                    "recall_target attribute in backend_config must be of f32 type",
                ))
            }
            None => return Err(missing("recall_target")),
        };
        Ok(Config {
            top_k: int("top_k")?,
            reduction_dim: int("reduction_dim")?,
            recall_target,
            aggregate_to_topk: boolean("aggregate_to_topk")?,
            reduction_input_size_override: int("reduction_input_size_override")?,
            is_fallback: match get("is_fallback") {
                None => false,
                Some(_) => boolean("is_fallback")?,
            },
        })
    }

    /// XLA's `AggregateToTopKBuilder`: the first `size` operand tuples along `rd` in the
    /// comparator's order (a sort and slices), or for `size` 1 the preferred one (a reduction).
    #[allow(clippy::too_many_arguments)]
    fn aggregate_to_top_k(
        &mut self,
        op: &Op,
        inputs: &[InstrId],
        inits: &[InstrId],
        scalars: &[Shape],
        rd: usize,
        size: i64,
        comparator: ComputationId,
    ) -> Result<Vec<InstrId>> {
        let loc = op.loc;
        let shapes: Vec<Shape> = inputs.iter().map(|&x| self.shape_of(x).clone()).collect();
        let one = |s: &Shape| {
            let mut d = s.dims().to_vec();
            d[rd] = size;
            like(s, d)
        };
        if size == 1 {
            let to_apply = self.comparator_reduction(comparator, scalars, loc)?;
            let reduced: Vec<Shape> = shapes
                .iter()
                .map(|s| {
                    let d = s.dims().iter().enumerate().filter(|(i, _)| *i != rd);
                    like(s, d.map(|(_, &d)| d).collect())
                })
                .collect();
            let attrs = Attrs {
                dimensions: Some(vec![rd as i64]),
                to_apply: Some(to_apply),
                ..Attrs::default()
            };
            let operands = inputs.iter().chain(inits).copied().collect();
            let shape = match reduced.as_slice() {
                [s] => s.clone(),
                _ => Shape::Tuple(reduced.clone()),
            };
            let reduce = self.add(Opcode::Reduce, shape, operands, attrs, loc);
            let parts = self.elements(reduce, reduced.len(), loc);
            return Ok(parts
                .into_iter()
                .zip(&shapes)
                .map(|(p, s)| self.add(Opcode::Reshape, one(s), vec![p], Attrs::default(), loc))
                .collect());
        }
        let attrs = Attrs {
            dimensions: Some(vec![rd as i64]),
            to_apply: Some(comparator),
            ..Attrs::default()
        };
        let shape = match shapes.as_slice() {
            [s] => s.clone(),
            _ => Shape::Tuple(shapes.clone()),
        };
        let sorted = self.add(Opcode::Sort, shape, inputs.to_vec(), attrs, loc);
        let parts = self.elements(sorted, shapes.len(), loc);
        Ok(parts
            .into_iter()
            .zip(&shapes)
            .map(|(p, s)| {
                let slice = s
                    .dims()
                    .iter()
                    .enumerate()
                    .map(|(i, &d)| SliceDim {
                        start: 0,
                        limit: if i == rd { size } else { d },
                        stride: 1,
                    })
                    .collect();
                let attrs = Attrs {
                    slice: Some(slice),
                    ..Attrs::default()
                };
                self.add(Opcode::Slice, one(s), vec![p], attrs, loc)
            })
            .collect())
    }

    /// The `n` values of `id`: itself when `n` is 1, else its tuple's elements.
    fn elements(&mut self, id: InstrId, n: usize, loc: SourceLoc) -> Vec<InstrId> {
        match n {
            1 => vec![id],
            _ => (0..n).map(|i| self.gte(id, i, loc)).collect(),
        }
    }

    /// `values` as an op's results: one, or a tuple of them.
    fn results(&mut self, values: &[InstrId], loc: SourceLoc) -> Lowered {
        match values {
            [one] => Lowered::One(*one),
            _ => {
                let shapes = values.iter().map(|&v| self.shape_of(v).clone()).collect();
                let t = self.add(
                    Opcode::Tuple,
                    Shape::Tuple(shapes),
                    values.to_vec(),
                    Attrs::default(),
                    loc,
                );
                Lowered::Tuple(t, values.len())
            }
        }
    }
}
