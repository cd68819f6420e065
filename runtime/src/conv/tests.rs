//! The implicit GEMM against the definition: FORWARD against a direct loop over output
//! elements and window taps, and the two backward kinds through the adjoint identities
//! `<conv(x, w), dy> = <x, backward_data(dy, w)> = <w, backward_filter(x, dy)>`, over NCHW and
//! NHWC layouts, strides, padding (negative too), both dilations, reversal and groups.
use proto::xla::gpu::GpuConvDescriptorProto;

use super::*;
use crate::thunks::{ConvSpatial, Slice};

/// One 2-D convolution: x is `[n, c, h, w]` (NCHW) or `[n, h, w, c]` (NHWC), the filter
/// `[o, c/g, kh, kw]` or `[kh, kw, c/g, o]` (HWIO).
#[derive(Clone, Copy)]
struct Case {
    n: u64,
    c: u64,
    o: u64,
    groups: u64,
    input: [u64; 2],
    kernel: [u64; 2],
    stride: [u64; 2],
    pad: [(i64, i64); 2],
    lhs_dil: [u64; 2],
    rhs_dil: [u64; 2],
    reversed: bool,
    nhwc: bool,
}

fn out_size(c: &Case, d: usize) -> u64 {
    let dilated = (c.input[d] - 1) * c.lhs_dil[d] + 1;
    let padded = dilated as i64 + c.pad[d].0 + c.pad[d].1;
    let window = ((c.kernel[d] - 1) * c.rhs_dil[d] + 1) as i64;
    if padded < window {
        0
    } else {
        ((padded - window) / c.stride[d] as i64 + 1) as u64
    }
}

/// Row-major strides of `dims`.
fn strides(dims: &[u64]) -> Vec<u64> {
    (0..dims.len())
        .map(|i| dims[i + 1..].iter().product())
        .collect()
}

/// The three arrays' dimensions and the geometry.
fn geometry(c: &Case) -> ([Vec<u64>; 3], ConvGeometry) {
    let out = [out_size(c, 0), out_size(c, 1)];
    let (x, w, y) = if c.nhwc {
        (
            vec![c.n, c.input[0], c.input[1], c.c],
            vec![c.kernel[0], c.kernel[1], c.c / c.groups, c.o],
            vec![c.n, out[0], out[1], c.o],
        )
    } else {
        (
            vec![c.n, c.c, c.input[0], c.input[1]],
            vec![c.o, c.c / c.groups, c.kernel[0], c.kernel[1]],
            vec![c.n, c.o, out[0], out[1]],
        )
    };
    let (xs, ws, ys) = (strides(&x), strides(&w), strides(&y));
    // (batch, feature, spatial 0, spatial 1) positions of each array.
    let (xo, wo, yo) = if c.nhwc {
        ([0, 3, 1, 2], [2, 3, 0, 1], [0, 3, 1, 2])
    } else {
        ([0, 1, 2, 3], [1, 0, 2, 3], [0, 1, 2, 3])
    };
    let spatial = (0..2)
        .map(|d| ConvSpatial {
            input: c.input[d],
            kernel: c.kernel[d],
            output: out[d],
            stride: c.stride[d],
            pad_low: c.pad[d].0,
            lhs_dilation: c.lhs_dil[d],
            rhs_dilation: c.rhs_dil[d],
            reversed: c.reversed,
            strides: [xs[xo[d + 2]], ws[wo[d + 2]], ys[yo[d + 2]]],
        })
        .collect();
    let g = ConvGeometry {
        batch: c.n,
        in_features: c.c,
        out_features: c.o,
        groups: c.groups,
        x_strides: [xs[xo[0]], xs[xo[1]]],
        w_strides: [ws[wo[0]], ws[wo[1]]],
        y_strides: [ys[yo[0]], ys[yo[1]]],
        spatial,
    };
    ([x, w, y], g)
}

fn thunk(kind: ConvKind, g: &ConvGeometry) -> ConvThunk {
    let s = Slice {
        allocation: 0,
        offset: 0,
        size: 0,
    };
    ConvThunk {
        kind,
        dtype: ElemType::F64,
        geometry: g.clone(),
        scale: 1.0,
        operands: [s, s],
        result: s,
        shapes: [None, None, None],
        scratch: None,
        descriptor: GpuConvDescriptorProto::default(),
    }
}

/// Deterministic values in [-1, 1).
fn values(n: u64, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn bytes(v: &[f64]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

/// The result's bytes with chunks of at most `split.0` im2col elements over at most `split.1`
/// threads, through `execute_chunked` into a buffer of the result's size (which must give the
/// same bytes as encoding the computed elements).
fn chunked(t: &ConvThunk, a: &[u8], b: &[u8], split: (usize, usize)) -> Vec<u8> {
    let v = super::run::<f64>(t, a, b, None, split).unwrap();
    let mut out = vec![0u8; v.len() * t.dtype.size() as usize];
    super::encode_into(t.dtype, &v, &mut out).unwrap();
    let mut again = out.clone();
    execute_chunked(t, a, b, &mut again, None, split).unwrap();
    assert_eq!(out, again);
    out
}

/// The result's bytes with the default chunks on one thread.
fn execute(t: &ConvThunk, a: &[u8], b: &[u8], _deadline: Option<Deadline>) -> Result<Vec<u8>> {
    Ok(chunked(t, a, b, (CHUNK_ELEMENTS, 1)))
}

/// Runs with the default chunks and with chunks of one or two rows, which must agree (the
/// backward filter accumulates over chunks).
fn run(kind: ConvKind, g: &ConvGeometry, a: &[f64], b: &[f64]) -> Vec<f64> {
    let (a, b) = (bytes(a), bytes(b));
    let whole = f64::from_bytes(&execute(&thunk(kind, g), &a, &b, None).unwrap());
    let small = chunked(&thunk(kind, g), &a, &b, (7, 3));
    for (x, y) in whole.iter().zip(f64::from_bytes(&small)) {
        assert!(
            (x - y).abs() < 1e-12,
            "{kind:?}: {x} in one chunk, {y} in small ones"
        );
    }
    whole
}

/// The definition, one output element at a time.
fn direct(c: &Case, g: &ConvGeometry, x: &[f64], w: &[f64], y_len: usize) -> Vec<f64> {
    let mut y = vec![0.0; y_len];
    let (og, cg) = (c.o / c.groups, c.c / c.groups);
    let s = &g.spatial;
    for n in 0..c.n {
        for o in 0..c.o {
            let gi = o / og;
            for p0 in 0..s[0].output {
                for p1 in 0..s[1].output {
                    let mut acc = 0.0;
                    for ci in 0..cg {
                        for k0 in 0..s[0].kernel {
                            for k1 in 0..s[1].kernel {
                                let at = |d: usize, p: u64, k: u64| -> Option<u64> {
                                    let kk = if c.reversed { s[d].kernel - 1 - k } else { k };
                                    let u = (p * s[d].stride) as i64 - s[d].pad_low
                                        + (kk * s[d].rhs_dilation) as i64;
                                    let l = s[d].lhs_dilation as i64;
                                    (u >= 0 && u % l == 0 && u / l < s[d].input as i64)
                                        .then_some((u / l) as u64)
                                };
                                let (Some(i0), Some(i1)) = (at(0, p0, k0), at(1, p1, k1)) else {
                                    continue;
                                };
                                let xi = n * g.x_strides[0]
                                    + (gi * cg + ci) * g.x_strides[1]
                                    + i0 * s[0].strides[0]
                                    + i1 * s[1].strides[0];
                                let wi = ci * g.w_strides[0]
                                    + o * g.w_strides[1]
                                    + k0 * s[0].strides[1]
                                    + k1 * s[1].strides[1];
                                acc += x[xi as usize] * w[wi as usize];
                            }
                        }
                    }
                    let yi = n * g.y_strides[0]
                        + o * g.y_strides[1]
                        + p0 * s[0].strides[2]
                        + p1 * s[1].strides[2];
                    y[yi as usize] = acc;
                }
            }
        }
    }
    y
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn check(c: Case) {
    let ([xd, wd, yd], g) = geometry(&c);
    let count = |d: &[u64]| d.iter().product::<u64>();
    let (x, w, dy) = (
        values(count(&xd), 1),
        values(count(&wd), 2),
        values(count(&yd), 3),
    );
    let y = run(ConvKind::Forward, &g, &x, &w);
    let want = direct(&c, &g, &x, &w, y.len());
    for (a, b) in y.iter().zip(&want) {
        assert!((a - b).abs() < 1e-12, "forward {a} vs direct {b}");
    }
    let dx = run(ConvKind::BackwardData, &g, &dy, &w);
    let dw = run(ConvKind::BackwardFilter, &g, &x, &dy);
    let (lhs, via_dx, via_dw) = (dot(&y, &dy), dot(&x, &dx), dot(&w, &dw));
    assert!(
        (lhs - via_dx).abs() < 1e-9,
        "<y,dy> {lhs} vs <x,dx> {via_dx}"
    );
    assert!(
        (lhs - via_dw).abs() < 1e-9,
        "<y,dy> {lhs} vs <w,dw> {via_dw}"
    );
}

/// The forward product split over threads (rows past `PARALLEL_MIN_ROWS` each) gives the same
/// bytes as on one thread, for every chunk size, with the definition's values.
#[test]
fn forward_rows_split_over_threads() {
    let c = Case {
        n: 4,
        input: [24, 23],
        nhwc: true,
        ..plain()
    };
    let ([xd, wd, _], g) = geometry(&c);
    let count = |d: &[u64]| d.iter().product::<u64>();
    let (x, w) = (bytes(&values(count(&xd), 1)), bytes(&values(count(&wd), 2)));
    let t = thunk(ConvKind::Forward, &g);
    let one = chunked(&t, &x, &w, (CHUNK_ELEMENTS, 1));
    let rows = 4 * 22 * 22;
    assert!(
        rows >= 3 * PARALLEL_MIN_ROWS,
        "{rows} rows split three ways"
    );
    for split in [(CHUNK_ELEMENTS, 3), (100, 2), (7, 4)] {
        assert_eq!(chunked(&t, &x, &w, split), one, "{split:?}");
    }
    check(c);
}

fn plain() -> Case {
    Case {
        n: 2,
        c: 3,
        o: 4,
        groups: 1,
        input: [6, 5],
        kernel: [3, 2],
        stride: [1, 1],
        pad: [(0, 0), (0, 0)],
        lhs_dil: [1, 1],
        rhs_dil: [1, 1],
        reversed: false,
        nhwc: false,
    }
}

#[test]
fn plain_nchw_and_nhwc() {
    check(plain());
    check(Case {
        nhwc: true,
        ..plain()
    });
}

#[test]
fn strided_padded_and_cropped() {
    check(Case {
        stride: [2, 3],
        pad: [(1, 2), (-1, 1)],
        nhwc: true,
        ..plain()
    });
}

#[test]
fn dilated_both_ways_and_reversed() {
    check(Case {
        lhs_dil: [2, 1],
        rhs_dil: [1, 2],
        pad: [(1, 1), (2, 0)],
        reversed: true,
        ..plain()
    });
}

#[test]
fn grouped_and_depthwise() {
    check(Case {
        c: 4,
        o: 6,
        groups: 2,
        stride: [2, 1],
        pad: [(1, 1), (1, 1)],
        nhwc: true,
        ..plain()
    });
    check(Case {
        c: 3,
        o: 3,
        groups: 3,
        ..plain()
    });
}

#[test]
fn one_by_one_filters_and_empty_windows() {
    check(Case {
        input: [9, 7],
        kernel: [1, 1],
        ..plain()
    });
    // The window is wider than the padded input: no output positions.
    check(Case {
        input: [2, 5],
        kernel: [3, 2],
        ..plain()
    });
}

#[test]
fn scale_and_half_precision_round_once() {
    let c = plain();
    let (_, g) = geometry(&c);
    let mut t = thunk(ConvKind::Forward, &g);
    t.dtype = ElemType::BF16;
    t.scale = 2.0;
    let ones = |n: usize| {
        (0..n)
            .flat_map(|_| half::bf16::from_f32(1.0).to_le_bytes())
            .collect::<Vec<u8>>()
    };
    let out = execute(&t, &ones(2 * 3 * 6 * 5), &ones(4 * 3 * 3 * 2), None).unwrap();
    // Every output sums 3 features x 6 taps of 1 x 1, scaled by 2.
    let first = half::bf16::from_le_bytes([out[0], out[1]]).to_f32();
    assert_eq!(first, 36.0);
}
