//! Reductions: `reduce` (variadic) and `reduce-window`.
//!
//! Both kernels first list, in order, which input element folds into which output element, then
//! fold with a [`Reducer`]: either a recognised built-in binary operation (the fast path, for a
//! single operand: floats accumulate in `f64` and are rounded once) or a callback that evaluates
//! the reducer computation on scalars.
use hlo::WindowDim;
use hlo::{element_count, next_index, strides, Array, Data, Wide};

use super::complex_ops::binary_one;
use super::elementwise::{binary_f, binary_p, binary_s, binary_u, BinaryOp};
use super::movement::{checked_count, dim_index, sizes, MAX_ELEMENTS};
use super::{invalid, Callback, EvalError};

/// How to combine an accumulator with an element.
pub enum Reducer<'a> {
    /// A computation recognised as `op(param0, param1)` with a single operand.
    Builtin(BinaryOp),
    /// A computation that returns its second parameter (scatter's "overwrite").
    Replace,
    /// Evaluate the computation: arguments are the accumulators then the elements (scalars),
    /// the result is the new accumulators.
    Custom(&'a mut Callback<'a>),
}

/// A scalar array holding element `i` of `a`.
pub(crate) fn element(op: &str, a: &Array, i: usize) -> Result<Array, EvalError> {
    let d = a
        .data()
        .take(&[i])
        .ok_or_else(|| invalid(op, "element position out of range"))?;
    Ok(Array::scalar(d)?)
}

fn check_scalars(op: &str, inputs: &[&Array], inits: &[&Array]) -> Result<(), EvalError> {
    if inputs.is_empty() || inputs.len() != inits.len() {
        return Err(invalid(
            op,
            format!("{} operands and {} init values", inputs.len(), inits.len()),
        ));
    }
    for (x, init) in inputs.iter().zip(inits) {
        if x.dims() != inputs[0].dims() {
            return Err(invalid(op, "operands have different dimensions"));
        }
        if init.rank() != 0 || init.dtype() != x.dtype() {
            return Err(invalid(
                op,
                format!(
                    "init value {} for a {} operand",
                    init.shape_string(),
                    x.dtype()
                ),
            ));
        }
    }
    Ok(())
}

/// Folds `inputs[pairs[k].1]` into element `pairs[k].0` of `start`, in order. `start` holds one
/// array per input (the initial accumulators, all of the same dimensions).
pub(crate) fn fold(
    op: &str,
    start: Vec<Array>,
    inputs: &[&Array],
    pairs: &[(usize, usize)],
    reducer: Reducer<'_>,
) -> Result<Vec<Array>, EvalError> {
    let out_dims = start
        .first()
        .map(|a| a.dims().to_vec())
        .ok_or_else(|| invalid(op, "no operands"))?;
    let n_out = element_count(&out_dims);
    if start.len() != inputs.len() {
        return Err(invalid(op, "accumulator and operand counts differ"));
    }
    match reducer {
        Reducer::Replace if inputs.len() == 1 => {
            let (_, mut acc) = start
                .into_iter()
                .next()
                .ok_or_else(|| invalid(op, "no operands"))?
                .into_parts();
            let (outs, ins): (Vec<usize>, Vec<usize>) = pairs.iter().copied().unzip();
            let vals = inputs[0]
                .data()
                .take(&ins)
                .ok_or_else(|| invalid(op, "position out of range"))?;
            acc.put(&outs, &vals)
                .ok_or_else(|| invalid(op, "position out of range"))?;
            Ok(vec![Array::new(out_dims, acc)?])
        }
        Reducer::Builtin(bop) if inputs.len() == 1 => {
            let x = inputs[0];
            let dtype = x.dtype();
            let bits = dtype.bit_width();
            let bad = || invalid(op, format!("{} is not defined for {dtype}", bop.name()));
            macro_rules! run {
                ($xs:expr, $acc:expr, $f:expr, $wrap:ident) => {{
                    let xs = $xs;
                    let mut acc = $acc;
                    for &(o, i) in pairs {
                        let (Some(a), Some(b)) = (acc.get(o).copied(), xs.get(i).copied()) else {
                            return Err(invalid(op, "position out of range"));
                        };
                        acc[o] = $f(a, b).ok_or_else(bad)?;
                    }
                    Data::$wrap(dtype, acc)
                }};
            }
            let first = start.first().ok_or_else(|| invalid(op, "no operands"))?;
            if first.dtype() != dtype {
                return Err(invalid(op, "accumulator and operand types differ"));
            }
            let data = match (x.data().to_wide(), first.data().to_wide()) {
                (Wide::F(xs), Wide::F(acc)) => {
                    run!(xs, acc, |a, b| binary_f(bop, a, b), from_wide_f)
                }
                (Wide::S(xs), Wide::S(acc)) => {
                    run!(xs, acc, |a, b| binary_s(bop, a, b, bits), from_wide_s)
                }
                (Wide::U(xs), Wide::U(acc)) => {
                    run!(xs, acc, |a, b| binary_u(bop, a, b, bits), from_wide_u)
                }
                (Wide::P(xs), Wide::P(acc)) => {
                    run!(xs, acc, |a, b| binary_p(bop, a, b), from_wide_p)
                }
                // Accumulated with `f64` parts and rounded once, as the real floats are.
                (Wide::C(xs), Wide::C(acc)) => {
                    run!(xs, acc, |a, b| binary_one(bop, a, b), from_complex)
                }
                _ => return Err(bad()),
            };
            Ok(vec![Array::new(out_dims, data)?])
        }
        Reducer::Builtin(_) | Reducer::Replace => Err(invalid(
            op,
            format!("built-in reducer with {} operands", inputs.len()),
        )),
        Reducer::Custom(f) => {
            let mut acc: Vec<Option<Vec<Array>>> = vec![None; n_out];
            let mut args = Vec::with_capacity(2 * inputs.len());
            for &(o, i) in pairs {
                let slot = acc
                    .get_mut(o)
                    .ok_or_else(|| invalid(op, "position out of range"))?;
                args.clear();
                match slot.take() {
                    Some(mut cur) => args.append(&mut cur),
                    None => {
                        for s in &start {
                            args.push(element(op, s, o)?);
                        }
                    }
                }
                for x in inputs {
                    args.push(element(op, x, i)?);
                }
                let result = f(&args)?;
                if result.len() != inputs.len()
                    || result
                        .iter()
                        .zip(inputs)
                        .any(|(r, x)| r.rank() != 0 || r.dtype() != x.dtype())
                {
                    return Err(invalid(
                        op,
                        "reducer must return one scalar per operand, of the operand's type",
                    ));
                }
                *slot = Some(result);
            }
            // Write the touched accumulators back into the start arrays.
            let touched: Vec<usize> = (0..n_out).filter(|o| acc[*o].is_some()).collect();
            let mut out = Vec::with_capacity(inputs.len());
            for (j, s) in start.into_iter().enumerate() {
                let parts: Vec<&Data> = touched
                    .iter()
                    .filter_map(|o| acc[*o].as_ref().and_then(|a| a.get(j)).map(|s| s.data()))
                    .collect();
                let (dims, mut data) = s.into_parts();
                if !parts.is_empty() {
                    let vals = Data::concat(&parts)
                        .ok_or_else(|| invalid(op, "reducer result types differ"))?;
                    data.put(&touched, &vals)
                        .ok_or_else(|| invalid(op, "reducer result types differ"))?;
                }
                out.push(Array::new(dims, data)?);
            }
            Ok(out)
        }
    }
}

/// Initial accumulators: each init scalar repeated over `out_dims`.
fn splat_inits(op: &str, inits: &[&Array], out_dims: &[usize]) -> Result<Vec<Array>, EvalError> {
    let n = element_count(out_dims);
    inits
        .iter()
        .map(|i| {
            let d = i
                .data()
                .splat(0, n)
                .ok_or_else(|| invalid(op, "empty init value"))?;
            Ok(Array::new(out_dims.to_vec(), d)?)
        })
        .collect()
}

/// `reduce(inputs..., inits...)` over `dimensions`: one result per operand.
pub fn reduce(
    inputs: &[&Array],
    inits: &[&Array],
    dimensions: &[i64],
    reducer: Reducer<'_>,
) -> Result<Vec<Array>, EvalError> {
    check_scalars("reduce", inputs, inits)?;
    let dims = inputs[0].dims();
    let rank = dims.len();
    let mut reduced = vec![false; rank];
    for &d in dimensions {
        let d = dim_index("reduce", d, rank)?;
        if std::mem::replace(&mut reduced[d], true) {
            return Err(invalid("reduce", format!("dimension {d} repeated")));
        }
    }
    let out_dims: Vec<usize> = (0..rank)
        .filter(|d| !reduced[*d])
        .map(|d| dims[d])
        .collect();
    let ostr = strides(&out_dims);
    let mut coef = vec![0usize; rank];
    let mut k = 0;
    for d in 0..rank {
        if !reduced[d] {
            coef[d] = ostr[k];
            k += 1;
        }
    }
    // Visit reduced positions in row-major order for each output: iterate outputs outermost by
    // listing pairs in input order (which is row-major over the reduced dims per output).
    let n = element_count(dims);
    let mut pairs = Vec::with_capacity(n);
    if n > 0 {
        let mut idx = vec![0usize; rank];
        let mut i = 0usize;
        loop {
            let o: usize = idx.iter().zip(&coef).map(|(a, b)| a * b).sum();
            pairs.push((o, i));
            i += 1;
            if !next_index(&mut idx, dims) {
                break;
            }
        }
    }
    let start = splat_inits("reduce", inits, &out_dims)?;
    fold("reduce", start, inputs, &pairs, reducer)
}

/// `reduce-window`: padding positions contribute nothing (only the init value).
///
/// The window is the IR's [`WindowDim`] list, as the instruction carries it; `reversal` is not
/// read (reduce-window has no reversal).
pub fn reduce_window(
    inputs: &[&Array],
    inits: &[&Array],
    window: &[WindowDim],
    reducer: Reducer<'_>,
) -> Result<Vec<Array>, EvalError> {
    const OP: &str = "reduce-window";
    check_scalars(OP, inputs, inits)?;
    let (out_dims, pairs) = window_pairs(OP, inputs[0].dims(), window)?;
    let start = splat_inits(OP, inits, &out_dims)?;
    fold(OP, start, inputs, &pairs, reducer)
}

/// The output dimensions of a window over `dims`, and for each output position (in order) the
/// operand positions its window covers (in window order, padding skipped), as pairs.
#[allow(clippy::type_complexity)]
fn window_pairs(
    op: &str,
    dims: &[usize],
    window: &[WindowDim],
) -> Result<(Vec<usize>, Vec<(usize, usize)>), EvalError> {
    let dims = dims.to_vec();
    if window.len() != dims.len() {
        return Err(invalid(op, "window rank differs from operand rank"));
    }
    let mut out_dims = Vec::with_capacity(dims.len());
    for (d, w) in window.iter().enumerate() {
        if w.size < 1 || w.stride < 1 || w.lhs_dilation < 1 || w.rhs_dilation < 1 {
            return Err(invalid(op, format!("invalid window in dimension {d}")));
        }
        let n = dims[d] as i64;
        let overflow = || invalid(op, format!("window in dimension {d} overflows"));
        let base = if n == 0 {
            Some(0)
        } else {
            (n - 1)
                .checked_mul(w.lhs_dilation)
                .and_then(|x| x.checked_add(1))
        }
        .and_then(|x| x.checked_add(w.pad_low))
        .and_then(|x| x.checked_add(w.pad_high))
        .ok_or_else(overflow)?;
        let win = (w.size - 1)
            .checked_mul(w.rhs_dilation)
            .and_then(|x| x.checked_add(1))
            .ok_or_else(overflow)?;
        out_dims.push(if base < win {
            0
        } else {
            ((base - win) / w.stride + 1) as usize
        });
    }
    let wsizes = sizes(op, &window.iter().map(|w| w.size).collect::<Vec<_>>())?;
    let n_out = checked_count(op, &out_dims)?;
    if n_out.saturating_mul(element_count(&wsizes)) > MAX_ELEMENTS {
        return Err(invalid(op, "window too large to evaluate"));
    }
    let istr = strides(&dims);
    let mut pairs = Vec::new();
    if n_out > 0 {
        let mut o_idx = vec![0usize; dims.len()];
        let mut o = 0usize;
        loop {
            let mut w_idx = vec![0usize; dims.len()];
            loop {
                let mut pos = Some(0usize);
                for d in 0..dims.len() {
                    let w = &window[d];
                    let p =
                        o_idx[d] as i64 * w.stride + w_idx[d] as i64 * w.rhs_dilation - w.pad_low;
                    if p < 0 || p % w.lhs_dilation != 0 {
                        pos = None;
                        break;
                    }
                    let p = p / w.lhs_dilation;
                    if p >= dims[d] as i64 {
                        pos = None;
                        break;
                    }
                    pos = pos.map(|q| q + p as usize * istr[d]);
                }
                if let Some(p) = pos {
                    pairs.push((o, p));
                }
                if !next_index(&mut w_idx, &wsizes) {
                    break;
                }
            }
            o += 1;
            if !next_index(&mut o_idx, &out_dims) {
                break;
            }
        }
    }
    Ok((out_dims, pairs))
}

/// `select-and-scatter`: for each window (one per `source` element) pick the operand element
/// `select` prefers (`select(current, candidate)` true keeps the current one; the first valid
/// element starts), then combine the source value into that position of an output that starts
/// as `init` everywhere.
pub fn select_and_scatter(
    operand: &Array,
    source: &Array,
    init: &Array,
    window: &[WindowDim],
    select: &mut super::sort::Less<'_>,
    scatter: Reducer<'_>,
) -> Result<Array, EvalError> {
    const OP: &str = "select-and-scatter";
    if init.rank() != 0 || init.dtype() != source.dtype() {
        return Err(invalid(
            OP,
            "init value must be a scalar of the source type",
        ));
    }
    let (out_dims, pairs) = window_pairs(OP, operand.dims(), window)?;
    if out_dims != source.dims() {
        return Err(invalid(
            OP,
            format!(
                "source {} does not match the window output {out_dims:?}",
                source.shape_string()
            ),
        ));
    }
    let mut chosen: Vec<Option<usize>> = vec![None; source.len()];
    for &(o, p) in &pairs {
        let slot = chosen
            .get_mut(o)
            .ok_or_else(|| invalid(OP, "position out of range"))?;
        *slot = Some(match *slot {
            None => p,
            Some(cur) => {
                let keep = select(&[element(OP, operand, cur)?, element(OP, operand, p)?])?;
                if keep {
                    cur
                } else {
                    p
                }
            }
        });
    }
    let scatter_pairs: Vec<(usize, usize)> = chosen
        .iter()
        .enumerate()
        .filter_map(|(o, c)| c.map(|p| (p, o)))
        .collect();
    let start = splat_inits(OP, &[init], operand.dims())?;
    let mut out = fold(OP, start, &[source], &scatter_pairs, scatter)?;
    out.pop().ok_or_else(|| invalid(OP, "no result"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hlo::DType;

    fn f32s(dims: Vec<usize>, v: Vec<f32>) -> Array {
        Array::new(dims, Data::F32(v)).unwrap()
    }

    #[test]
    fn reduce_rows_and_all() {
        let x = f32s(vec![2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let zero = f32s(vec![], vec![0.0]);
        let r = reduce(&[&x], &[&zero], &[1], Reducer::Builtin(BinaryOp::Add)).unwrap();
        assert_eq!(r[0].data().to_f64_vec(), vec![6.0, 15.0]);
        let r = reduce(&[&x], &[&zero], &[0], Reducer::Builtin(BinaryOp::Add)).unwrap();
        assert_eq!(r[0].data().to_f64_vec(), vec![5.0, 7.0, 9.0]);
        let ninf = f32s(vec![], vec![f32::NEG_INFINITY]);
        let r = reduce(
            &[&x],
            &[&ninf],
            &[0, 1],
            Reducer::Builtin(BinaryOp::Maximum),
        )
        .unwrap();
        assert_eq!(r[0].dims(), &[] as &[usize]);
        assert_eq!(r[0].data().to_f64_vec(), vec![6.0]);
        assert!(reduce(&[&x], &[&zero], &[2], Reducer::Builtin(BinaryOp::Add)).is_err());
    }

    #[test]
    fn variadic_argmax() {
        let x = f32s(vec![2, 3], vec![1.0, 7.0, 7.0, 4.0, -1.0, 9.0]);
        let idx = Array::new(vec![2, 3], Data::S32(vec![0, 1, 2, 0, 1, 2])).unwrap();
        let init_v = f32s(vec![], vec![f32::NEG_INFINITY]);
        let init_i = Array::new(vec![], Data::S32(vec![0])).unwrap();
        let mut argmax = |a: &[Array]| -> Result<Vec<Array>, EvalError> {
            let (av, ai, bv, bi) = (
                a[0].data().get_f64(0).unwrap(),
                a[1].data().get_i64(0).unwrap(),
                a[2].data().get_f64(0).unwrap(),
                a[3].data().get_i64(0).unwrap(),
            );
            let take_a = av > bv || (av == bv && ai < bi);
            Ok(if take_a {
                vec![a[0].clone(), a[1].clone()]
            } else {
                vec![a[2].clone(), a[3].clone()]
            })
        };
        let r = reduce(
            &[&x, &idx],
            &[&init_v, &init_i],
            &[1],
            Reducer::Custom(&mut argmax),
        )
        .unwrap();
        assert_eq!(r[0].data().to_f64_vec(), vec![7.0, 9.0]);
        assert_eq!(r[1].data(), &Data::S32(vec![1, 2]));
    }

    #[test]
    fn cumsum_via_reduce_window() {
        // JAX cumsum over 4 elements: window 4, low padding 3.
        let x = f32s(vec![4], vec![1.0, 2.0, 3.0, 4.0]);
        let zero = f32s(vec![], vec![0.0]);
        let w = WindowDim {
            size: 4,
            pad_low: 3,
            ..WindowDim::default()
        };
        let r = reduce_window(&[&x], &[&zero], &[w], Reducer::Builtin(BinaryOp::Add)).unwrap();
        assert_eq!(r[0].data().to_f64_vec(), vec![1.0, 3.0, 6.0, 10.0]);
        // Strided max pool with padding and dilation.
        let y = Array::new(vec![5], Data::S32(vec![3, 1, 4, 1, 5])).unwrap();
        let m = Array::new(vec![], Data::S32(vec![i32::MIN])).unwrap();
        let w = WindowDim {
            size: 2,
            stride: 2,
            pad_high: 1,
            ..WindowDim::default()
        };
        let r = reduce_window(&[&y], &[&m], &[w], Reducer::Builtin(BinaryOp::Maximum)).unwrap();
        assert_eq!(r[0].data(), &Data::S32(vec![3, 4, 5]));
        let w = WindowDim {
            size: 2,
            rhs_dilation: 2,
            ..WindowDim::default()
        };
        let r = reduce_window(&[&y], &[&m], &[w], Reducer::Builtin(BinaryOp::Maximum)).unwrap();
        assert_eq!(r[0].data(), &Data::S32(vec![4, 1, 5]));
        let w = WindowDim {
            size: 1,
            lhs_dilation: 2,
            ..WindowDim::default()
        };
        let r = reduce_window(&[&y], &[&m], &[w], Reducer::Builtin(BinaryOp::Maximum)).unwrap();
        assert_eq!(
            r[0].data(),
            &Data::S32(vec![3, i32::MIN, 1, i32::MIN, 4, i32::MIN, 1, i32::MIN, 5])
        );
        assert_eq!(r[0].dtype(), DType::S32);
    }
}
