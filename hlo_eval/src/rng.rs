//! `rng-bit-generator`: the bits XLA's `RngBitGeneratorExpander` computes
//! (`xla/hlo/builder/lib/prng.cc`: `ThreeFryBitGenerator`, `PhiloxBitGenerator`), written as
//! plain loops. The compiler expands the instruction into HLO ops that compute the same thing
//! (`compiler/src/passes/rng_bit_generator.rs`); this is the independent reference both are
//! held to, next to XLA:CPU's outputs.
//!
//! The state is `u64[n]`: element 0 is the key; ThreeFry counts in element 1, Philox in a
//! 128-bit counter (elements 1 and 2 when `n >= 3`, else the key and element 1 in the reversed
//! order XLA uses). Each output element takes 32 bits of a block (64 for 64-bit outputs; the
//! low 8 or 16 bits of a 32-bit draw for narrower ones).
use super::error::{invalid, EvalError};
use hlo::RandomAlgorithm;
use hlo::{Array, DType, Data};

const OP: &str = "rng-bit-generator";

/// The new state and the random bits of `dtype[dims]`.
pub fn generate(
    algorithm: RandomAlgorithm,
    state: &[u64],
    dtype: DType,
    dims: &[usize],
) -> Result<(Vec<u64>, Array), EvalError> {
    let fits = match algorithm {
        RandomAlgorithm::ThreeFry => state.len() == 2,
        _ => matches!(state.len(), 2 | 3),
    };
    if !fits {
        return Err(invalid(
            OP,
            format!(
                "{} needs a state of {} u64 elements, found {}",
                algorithm.name(),
                if algorithm == RandomAlgorithm::ThreeFry {
                    "2"
                } else {
                    "2 or 3"
                },
                state.len()
            ),
        ));
    }
    let bits = dtype.bit_width();
    if dtype == DType::Pred || dtype.is_complex() || !matches!(bits, 8 | 16 | 32 | 64) {
        return Err(invalid(OP, format!("cannot generate {dtype} bits")));
    }
    let n: usize = dims.iter().product();
    let key = state[0];
    let (new_state, words): (Vec<u64>, Vec<u64>) = match algorithm {
        RandomAlgorithm::ThreeFry => {
            let (counter, values) = threefry(key, state[1], dims, bits);
            (vec![key, counter], values)
        }
        RandomAlgorithm::Philox | RandomAlgorithm::Default => {
            let (lo, hi) = if state.len() >= 3 {
                (state[1], state[2])
            } else {
                // XLA's `GetPhiloxStateOp`: a 2-element state reversed is the 128-bit counter.
                (state[1], state[0])
            };
            let (lo, hi, values) = philox(key, lo, hi, n, bits);
            let mut s = vec![key, lo];
            if state.len() >= 3 {
                s.push(hi);
            }
            (s, values)
        }
    };
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let words: Vec<u64> = words.into_iter().map(|w| w & mask).collect();
    let array = Array::new(dims.to_vec(), Data::from_bits(dtype, &words))?;
    Ok((new_state, array))
}

/// ThreeFry-2x32 with 20 rounds (`ThreeFry2x32`).
fn threefry2x32(input: [u32; 2], key: [u32; 2]) -> [u32; 2] {
    const ROTATIONS: [u32; 8] = [13, 15, 26, 6, 17, 29, 16, 24];
    let ks = [key[0], key[1], 0x1BD1_1BDA ^ key[0] ^ key[1]];
    let mut x = [input[0].wrapping_add(ks[0]), input[1].wrapping_add(ks[1])];
    let round = |x: &mut [u32; 2], r: u32| {
        x[0] = x[0].wrapping_add(x[1]);
        x[1] = x[1].rotate_left(r);
        x[1] ^= x[0];
    };
    for block in 0..5u32 {
        let rotations = if block % 2 == 0 {
            &ROTATIONS[..4]
        } else {
            &ROTATIONS[4..]
        };
        for &r in rotations {
            round(&mut x, r);
        }
        let b = block as usize;
        x[0] = x[0].wrapping_add(ks[(b + 1) % 3]);
        x[1] = x[1].wrapping_add(ks[(b + 2) % 3]).wrapping_add(block + 1);
    }
    x
}

fn split(v: u64) -> [u32; 2] {
    [v as u32, (v >> 32) as u32]
}

/// XLA's ThreeFry generator: inputs are `counter + linear index` over the output shape (or, for
/// 32-bit and narrower outputs, over a half shape whose two draws fill the two halves).
fn threefry(key: u64, counter: u64, dims: &[usize], bits: u32) -> (u64, Vec<u64>) {
    let key = split(key);
    if bits == 64 {
        let n: usize = dims.iter().product();
        let values = (0..n)
            .map(|i| {
                let out = threefry2x32(split(counter.wrapping_add(i as u64)), key);
                u64::from(out[0]) | (u64::from(out[1]) << 32)
            })
            .collect();
        return (counter.wrapping_add(n as u64), values);
    }
    let half = HalfShape::of(dims);
    let m: usize = half.half_dims.iter().product();
    let mut values = vec![0u64; dims.iter().product()];
    for (h, part, out) in half.positions(dims) {
        let draw = threefry2x32(split(counter.wrapping_add(half.linear(&h) as u64)), key);
        values[out] = u64::from(draw[part]);
    }
    (counter.wrapping_add(m as u64), values)
}

/// XLA's `SplitShapeIntoHalves`: the first even dimension (else the largest) is split in two
/// halves of `ceil(d / 2)`, each draw of the half shape giving one element of each half.
struct HalfShape {
    half_dims: Vec<usize>,
    split: usize,
}

impl HalfShape {
    fn of(dims: &[usize]) -> HalfShape {
        if dims.is_empty() {
            return HalfShape {
                half_dims: vec![1],
                split: 0,
            };
        }
        let split = dims.iter().position(|d| d % 2 == 0).unwrap_or_else(|| {
            // The first of the largest dimensions, as XLA's loop keeps it.
            let max = dims.iter().copied().max().unwrap_or(0);
            dims.iter().position(|&d| d == max).unwrap_or(0)
        });
        let mut half_dims = dims.to_vec();
        half_dims[split] = dims[split].div_ceil(2);
        HalfShape { half_dims, split }
    }

    /// The counter offset of a half-shape position: XLA adds `iota(dim i) * stride` over the
    /// dimensions of size at least 2, the last one fastest.
    fn linear(&self, h: &[usize]) -> usize {
        let mut total = 0;
        let mut stride = 1;
        for i in (0..self.half_dims.len()).rev() {
            if self.half_dims[i] < 2 {
                continue;
            }
            total += h[i] * stride;
            stride *= self.half_dims[i];
        }
        total
    }

    /// For every output element: its half-shape position, which draw (0: first half, 1:
    /// second) it takes, and its row-major index. The halves are concatenated along a new
    /// dimension after the split one and reshaped (`CombineShapePair`): output position `j`
    /// along the split dimension is draw `j % 2` of half position `j / 2`.
    #[allow(clippy::type_complexity)]
    fn positions(&self, dims: &[usize]) -> Vec<(Vec<usize>, usize, usize)> {
        let n: usize = dims.iter().product();
        let mut out = Vec::with_capacity(n);
        if dims.is_empty() {
            out.push((vec![0], 0, 0));
            return out;
        }
        let mut idx = vec![0usize; dims.len()];
        for flat in 0..n {
            let mut h = idx.clone();
            h[self.split] = idx[self.split] / 2;
            out.push((h, idx[self.split] % 2, flat));
            for d in (0..dims.len()).rev() {
                idx[d] += 1;
                if idx[d] < dims[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        out
    }
}

/// Philox-4x32 with 10 rounds (`Philox4x32`).
fn philox4x32(mut x: [u32; 4], mut key: [u32; 2]) -> [u32; 4] {
    const W32A: u32 = 0x9E37_79B9;
    const W32B: u32 = 0xBB67_AE85;
    const M4X32A: u64 = 0xD251_1F53;
    const M4X32B: u64 = 0xCD9E_8D57;
    for _ in 0..10 {
        let p0 = u64::from(x[0]) * M4X32A;
        let p1 = u64::from(x[2]) * M4X32B;
        x = [
            (p1 >> 32) as u32 ^ x[1] ^ key[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ x[3] ^ key[1],
            p0 as u32,
        ];
        key = [key[0].wrapping_add(W32A), key[1].wrapping_add(W32B)];
    }
    x
}

/// XLA's Philox generator: block `i` is Philox of the 128-bit counter `(lo, hi) + i`, its four
/// words taken round-robin (`bits[0][i], bits[1][i], ...`), two words per 64-bit element.
fn philox(key: u64, lo: u64, hi: u64, n: usize, bits: u32) -> (u64, u64, Vec<u64>) {
    let per_block = if bits == 64 { 2 } else { 4 };
    let blocks = n.div_ceil(per_block);
    let key = split(key);
    let add = |k: u64| {
        let l = lo.wrapping_add(k);
        (l, if l < lo { hi.wrapping_add(1) } else { hi })
    };
    let mut values = Vec::with_capacity(blocks * per_block);
    for b in 0..blocks {
        let (l, h) = add(b as u64);
        let [a, c] = split(l);
        let [d, e] = split(h);
        let w = philox4x32([a, c, d, e], key);
        if bits == 64 {
            values.push(u64::from(w[0]) | (u64::from(w[1]) << 32));
            values.push(u64::from(w[2]) | (u64::from(w[3]) << 32));
        } else {
            values.extend(w.iter().map(|&v| u64::from(v)));
        }
    }
    values.truncate(n);
    let (l, h) = add(blocks as u64);
    (l, h, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u32s(a: &Array) -> Vec<u64> {
        a.data().to_bits()
    }

    #[test]
    fn matches_xla_cpu_on_jax_rng_bit_generator() {
        // testdata/models/rng_bit_generator_algorithms: JAX's lax.rng_bit_generator on XLA:CPU.
        let state = |w: [u64; 4]| vec![w[0] | (w[1] << 32), w[2] | (w[3] << 32)];
        let (s, bits) = generate(
            RandomAlgorithm::ThreeFry,
            &state([1, 2, 7, 9]),
            DType::U32,
            &[2, 8],
        )
        .unwrap();
        assert_eq!(s, state([1, 2, 15, 9]));
        assert_eq!(
            u32s(&bits)[..4],
            [3_762_306_414, 380_431_181, 1_368_620_359, 1_978_198_962]
        );
        let (s, bits) = generate(
            RandomAlgorithm::Philox,
            &state([3, 4, 5, 6]),
            DType::U32,
            &[16],
        )
        .unwrap();
        assert_eq!(s, state([3, 4, 9, 6]));
        assert_eq!(u32s(&bits)[..2], [1_802_178_083, 324_894_349]);
    }

    #[test]
    fn refuses_what_xla_cannot_generate() {
        let e = generate(RandomAlgorithm::Philox, &[1], DType::U32, &[4]).unwrap_err();
        assert!(
            e.to_string()
                .contains("rng_philox needs a state of 2 or 3 u64 elements, found 1"),
            "{e}"
        );
        let e = generate(RandomAlgorithm::Philox, &[1, 2], DType::Pred, &[4]).unwrap_err();
        assert!(e.to_string().contains("cannot generate pred"), "{e}");
    }
}
