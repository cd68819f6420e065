"""FP8 (`jnp.float8_e4m3fn`, `jnp.float8_e5m2`): XLA's conversion table and FP8 programs.

Writes into testdata/float8/ (or the folder given as the first argument):

  conversions.bin  XLA:CPU's `convert` (jax.jit, `x.astype(t)`) on every input that decides a
                   rounding, little-endian, three tables one after another:
                   1. every f16 bit pattern in order (65,536 records): the f8e4m3fn byte, then
                      the f8e5m2 byte;
                   2. f32 inputs either side of every f8 rounding boundary (N records, N written
                      first as a u32): the f32, the f8e4m3fn byte, the f8e5m2 byte. For each
                      pair of neighbouring f8 values (both formats, both signs, past the largest
                      finite value too) the midpoint and the f32 values 1 and 2 ulps either
                      side, plus 0, the f32 subnormal and 1e-30, infinities and NaN;
                   3. every f8 byte decoded (256 records): f32 of f8e4m3fn, f32 of f8e5m2.
                   `hlo/tests/float8.rs` checks `hlo::F8E4M3FN` / `hlo::F8E5M2` against it.
  NAME.{jax_exported,mlirbc,mlir,io.json}
                   FP8 programs exported for CUDA (`exported.write`: the serialized Exported,
                   its module bytecode and text, XLA:CPU's outputs): the boundary inputs of
                   table 2 converted by the compiled kernels (`conversions`), the per-tensor scaled FP8
                   matmul of Transformer-Engine-style training (e4m3 activations and weights,
                   e5m2 gradients, amax-based scales), a qdq'd MLP layer, f8 arithmetic and
                   reductions, f8 parameters and results, f8 constants (decimal in the text,
                   bytes in the bytecode), and the two `ANY_F8_ANY_F8_F32`
                   dot algorithms (e4m3 x e5m2, e5m2 x e4m3; XLA:CPU refuses the algorithm, so
                   the expected output is its plain f8 dot, the same f32-accumulated product).
Run: `python3 tools/jax_exports/float8.py` from the repository root (JAX 0.10.2, ml_dtypes,
flatbuffers; deterministic).
"""
import os
import struct
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exported  # noqa: E402

jax.config.update("jax_platforms", "cpu")

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "float8")
exported.OUT = OUT
E4, E5 = jnp.float8_e4m3fn, jnp.float8_e5m2


def xla_convert(x, t):
    """XLA:CPU's convert of x to t, as the f8 bytes."""
    return np.asarray(jax.jit(lambda a: a.astype(t))(x)).view(np.uint8)


def boundary_inputs():
    """f32 values at and around every rounding boundary of both formats."""
    values = [0.0, -0.0, 1e-30, -1e-30, np.float32(1e-45), np.inf, -np.inf, np.nan]
    for t in (E4, E5):
        finite = np.arange(256, dtype=np.uint8).view(t).astype(np.float32)
        finite = np.unique(finite[np.isfinite(finite) & (finite >= 0)])
        top = finite[-1]
        step = top - finite[-2]
        grid = np.concatenate([finite, [top + step, top + 2 * step]]).astype(np.float64)
        mids = ((grid[:-1] + grid[1:]) / 2).astype(np.float32)
        for m in mids:
            bits = int(np.array([m], np.float32).view(np.uint32)[0])
            for d in (-2, -1, 0, 1, 2):
                v = np.array([bits + d], np.uint32).view(np.float32)[0]
                values += [v, -v]
    return np.array(values, np.float32)


def write_conversions():
    f16 = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    table1 = np.stack([xla_convert(f16, E4), xla_convert(f16, E5)], axis=1)
    x32 = boundary_inputs()
    e4, e5 = xla_convert(x32, E4), xla_convert(x32, E5)
    every = np.arange(256, dtype=np.uint8)
    d4 = np.asarray(jax.jit(lambda a: a.astype(jnp.float32))(every.view(E4)))
    d5 = np.asarray(jax.jit(lambda a: a.astype(jnp.float32))(every.view(E5)))
    with open(os.path.join(OUT, "conversions.bin"), "wb") as fh:
        fh.write(table1.astype(np.uint8).tobytes())
        fh.write(struct.pack("<I", len(x32)))
        for x, a, b in zip(x32, e4, e5):
            fh.write(struct.pack("<fBB", x, a, b))
        for a, b in zip(d4, d5):
            fh.write(struct.pack("<ff", a, b))
    print("conversions.bin", len(x32), "boundary inputs")


def quantize(x, t, scale):
    """Transformer-Engine-style per-tensor quantization: x / scale, saturated, to f8."""
    top = jnp.asarray(float(jnp.finfo(t).max), x.dtype)
    return jnp.clip(x / scale, -top, top).astype(t)


def amax_scale(x, t):
    return jnp.max(jnp.abs(x)) / jnp.asarray(float(jnp.finfo(t).max), x.dtype)


def scaled_matmul(a, b):
    """The FP8 GEMM of delayed/current scaling: e4m3 operands, f32 accumulation, rescaled."""
    sa, sb = amax_scale(a, E4), amax_scale(b, E4)
    y = lax.dot(quantize(a, E4, sa), quantize(b, E4, sb), preferred_element_type=jnp.float32)
    return y * (sa * sb)


def backward_matmul(g, w):
    """The gradient GEMM: e5m2 gradients times e4m3 weights, bf16 out."""
    sg, sw = amax_scale(g, E5), amax_scale(w, E4)
    y = lax.dot_general(quantize(g, E5, sg), quantize(w, E4, sw), (((1,), (1,)), ((), ())),
                        preferred_element_type=jnp.float32)
    return (y * (sg * sw)).astype(jnp.bfloat16)


def qdq_mlp(x, w1, w2):
    """An MLP layer with quantize-dequantize around each matmul (flax's fp8_ops pattern)."""
    def qdq(v, t):
        s = amax_scale(v, t)
        return quantize(v, t, s).astype(jnp.float32) * s
    h = jax.nn.gelu(qdq(x, E4) @ qdq(w1, E4))
    return qdq(h, E4) @ qdq(w2, E4)


def f8_arithmetic(a, b):
    """Arithmetic on f8 values (XLA computes in f32 and rounds once to f8)."""
    s = a + b
    p = a * b
    m = jnp.maximum(a, b)
    e = jnp.exp(a.astype(jnp.float32) / 64).astype(E5)
    total = jnp.sum(a.astype(jnp.float32), axis=1)
    return s, p, m, e, total, (a < b)


def f8_params(w8, x):
    """f8 weights as parameters and an f8 result (a stored-FP8 inference layer)."""
    y = lax.dot(x.astype(E4), w8, preferred_element_type=jnp.float32)
    return jnp.tanh(y).astype(E4), jnp.max(w8.astype(jnp.float32), axis=0)


def conversions(x):
    """Every rounding boundary through the compiled kernels: f32 -> f8 (stored) and back."""
    e4, e5 = x.astype(E4), x.astype(E5)
    return e4, e5, e4.astype(jnp.float32), e5.astype(jnp.float16), (x * 3).astype(E4)


def f8_constants(x):
    """f8 constants: a scalar and arrays of both formats (decimal in the module text, raw bytes
    in its bytecode), one of them past the format's range (NaN) and one infinite."""
    w = np.array([[0.1, 2, -448, 3.3], [1, -1, 0.5, 0.25]], np.float32).astype(E4)
    v = np.array([0.3, -7, 100, 57344], np.float32).astype(E5)
    y = x.astype(E4) * jnp.asarray(w) + E4(1.5)
    z = x.astype(E5) - jnp.asarray(v)
    big = jnp.asarray(np.array([1e6, -1e6], np.float32).astype(E5))
    return y, z, y.astype(jnp.float32) @ w.T.astype(jnp.float32), big + x[0, :2].astype(E5)


def any_f8_algorithm(a, b, fast=False):
    """`DotAlgorithmPreset.ANY_F8_ANY_F8_F32` (XLA:GPU on Ada and later; XLA:CPU refuses it):
    the f8 product accumulated in f32, what the plain f8 dot computes (its reference)."""
    preset = lax.DotAlgorithmPreset
    p = preset.ANY_F8_ANY_F8_F32_FAST_ACCUM if fast else preset.ANY_F8_ANY_F8_F32
    return lax.dot(a, b, precision=p, preferred_element_type=jnp.float32)


def plain_f8_dot(a, b):
    return lax.dot(a, b, preferred_element_type=jnp.float32)


def main():
    os.makedirs(OUT, exist_ok=True)
    write_conversions()
    exported.write("conversions", conversions, (boundary_inputs(),))
    rng = np.random.default_rng(8)
    normal = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    exported.write("scaled_matmul_e4m3", scaled_matmul, (normal(32, 64), normal(64, 48)))
    exported.write("backward_matmul_e5m2", backward_matmul, (normal(16, 40) * 1e-3, normal(24, 40)))
    exported.write("qdq_mlp", qdq_mlp, (normal(8, 32), normal(32, 64) / 6, normal(64, 16) / 8))
    a8 = (normal(8, 16) * 4).astype(E4)
    b8 = (normal(8, 16) * 4).astype(E4)
    exported.write("f8_arithmetic", f8_arithmetic, (a8, b8))
    exported.write("f8_params", f8_params, ((normal(32, 16) / 4).astype(E4), normal(4, 32)))
    exported.write("f8_constants", f8_constants,
                   (np.array([[1.5, -0.75, 0.015625, 3], [2, 4, 8, -16]], np.float32),))
    x8, y8 = (normal(16, 32) * 4).astype(E4), normal(32, 8).astype(E5)
    exported.write("any_f8_algorithm", any_f8_algorithm, (x8, y8), reference=plain_f8_dot)
    exported.write("any_f8_fast_accum", lambda a, b: any_f8_algorithm(a, b, True), (y8.T, x8.T),
                   reference=plain_f8_dot)


if __name__ == "__main__":
    main()
