"""Dots with an algorithm (`lax.DotAlgorithmPreset`), exported for CUDA.

`precision=lax.DotAlgorithmPreset.X` (and `jax_default_matmul_precision` set to one, and
`jax.nn.dot_product_attention` on f16) writes StableHLO's `algorithm = <...>` on
`dot_general`, which XLA:GPU reads as the operands' precision and the accumulator
(`algorithm_util.cc`). Writes, per case, into testdata/dot_algorithms/ (or the folder given as
the first argument):
  NAME.mlir     `jax.export.export(jax.jit(f), platforms=["cuda"])(*args).mlir_module()`
  NAME.io.json  the inputs and the expected outputs, corpus io format
The expected outputs are not XLA:CPU's (which runs few of these algorithms): numpy computes
what XLA:GPU's reading says, the operands rounded as the algorithm rounds them (to bf16 for
`BF16_BF16_F32` on f32, to TF32 for `TF32_TF32_F32`, round to nearest even; JAX's own converts
as the module has them), the products summed in f64 and rounded once to the result type. The
multi-pass algorithms (`_X3`, `_X6`, `_X9`) approach the f32 product, which is what is
expected. The inputs have full 24-bit mantissas, so a missed rounding shows: the bf16 and TF32
cases differ from the unrounded product by 100-1000 times the f32 tolerance.
Run: `python3 tools/jax_exports/dot_algorithms.py` from the repository root (JAX 0.10.2,
ml_dtypes).
"""
import json
import os
import sys

import ml_dtypes
import numpy as np
import jax
import jax.numpy as jnp
from jax import export, lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402  (the io format)

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "dot_algorithms")
P = lax.DotAlgorithmPreset


def arr(x):
    """The io format's array, f64 included (`models.arr` knows the 32- and 16-bit floats)."""
    x = np.asarray(x)
    if x.dtype != np.float64:
        return models.arr(x)
    return {"dtype": "f64", "shape": list(x.shape),
            "data": [models.render(v) for v in x.reshape(-1).tolist()]}


def tf32(x):
    """f32 rounded to TF32's 10 mantissa bits, to nearest even (XLA's reduce-precision)."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    lsb = (bits >> 13) & 1
    bits = (bits + 0xFFF + lsb) & ~np.uint64(0x1FFF)
    return bits.astype(np.uint32).view(np.float32)


def bf16(x):
    return x.astype(ml_dtypes.bfloat16).astype(np.float32)


def product(a, b, round_operands, out):
    return (round_operands(a).astype(np.float64) @ round_operands(b).astype(np.float64)).astype(out)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(77)
    a = rng.standard_normal((16, 64)).astype(np.float32)
    b = rng.standard_normal((64, 24)).astype(np.float32)
    same = lambda x: x  # noqa: E731
    cases = [
        ("bf16_bf16_f32", P.BF16_BF16_F32, a, b, bf16, np.float32),
        ("bf16_bf16_f32_x3", P.BF16_BF16_F32_X3, a, b, same, np.float32),
        ("bf16_bf16_f32_x6", P.BF16_BF16_F32_X6, a, b, same, np.float32),
        ("bf16_bf16_f32_x9", P.BF16_BF16_F32_X9, a, b, same, np.float32),
        ("tf32_tf32_f32", P.TF32_TF32_F32, a, b, tf32, np.float32),
        ("tf32_tf32_f32_x3", P.TF32_TF32_F32_X3, a, b, same, np.float32),
        ("f32_f32_f32", P.F32_F32_F32, a, b, same, np.float32),
        ("f16_f16_f32_on_f16", P.F16_F16_F32, a.astype(np.float16), b.astype(np.float16),
         same, np.float32),
        ("bf16_bf16_f32_on_bf16", P.BF16_BF16_F32, a.astype(ml_dtypes.bfloat16),
         b.astype(ml_dtypes.bfloat16), same, np.float32),
        ("f64_f64_f64", P.F64_F64_F64, a.astype(np.float64), b.astype(np.float64), same,
         np.float64),
    ]
    for name, preset, x, y, rounding, out in cases:
        f = lambda x, y, p=preset: lax.dot(x, y, precision=p, preferred_element_type=out)  # noqa: E731
        exported = export.export(jax.jit(f), platforms=["cuda"])(x, y)
        text = exported.mlir_module()
        assert "algorithm" in text, name
        with open(os.path.join(OUT, f"{name}.mlir"), "w") as fh:
            fh.write(text)
        expected = product(x.astype(np.float64) if out == np.float64 else x.astype(np.float32),
                           y.astype(np.float64) if out == np.float64 else y.astype(np.float32),
                           rounding, out)
        with open(os.path.join(OUT, f"{name}.io.json"), "w") as fh:
            json.dump({"inputs": [arr(x), arr(y)], "outputs": [arr(expected)]}, fh)
        print(name, expected.shape)
    # jax.nn.dot_product_attention on f16 (its XLA implementation asks F16_F16_F32 for the
    # logits): the f32 computation of the same attention, rounded to f16 once.
    q, k, v = (rng.standard_normal((2, 16, 4, 32)).astype(np.float16) for _ in range(3))
    exported = export.export(jax.jit(jax.nn.dot_product_attention), platforms=["cuda"])(q, k, v)
    with open(os.path.join(OUT, "dot_product_attention_f16.mlir"), "w") as fh:
        fh.write(exported.mlir_module())
    f32 = [t.astype(np.float32) for t in (q, k, v)]
    expected = np.asarray(jax.jit(jax.nn.dot_product_attention)(*f32)).astype(np.float16)
    with open(os.path.join(OUT, "dot_product_attention_f16.io.json"), "w") as fh:
        json.dump({"inputs": [models.arr(t) for t in (q, k, v)],
                   "outputs": [models.arr(expected)]}, fh)
    print("dot_product_attention_f16", expected.shape)


if __name__ == "__main__":
    main()
