"""Reductions in bf16 and f16 (issue 31), exported from JAX 0.10.2 (jaxlib 0.10.2).

XLA:GPU runs `reduce` and `reduce-window` on bf16/f16 values in f32 and rounds once
(`FloatNormalization` with `GpuFloatSupport`); rounding after every add gives a different answer.
The expected outputs here are therefore not XLA:CPU's: they are the exact sum (computed in f64),
rounded once to the element type. The inputs are drawn on a coarse grid (multiples of 2^-6 in
[-4, 4]) so that every partial sum is exact in f32: the f32-accumulated answer equals the rounded
truth bit for bit whatever the order of the adds, and harness/tests/low_precision.rs compares bit
for bit. A bf16- or f16-accumulated reduction misses on many elements.

Writes, per case, into testdata/low_precision/ (or the folder given as the first argument):
  NAME.hlo, NAME.mlir  the module, as `jax.jit(f).lower(*args).as_text(dialect=...)` prints it
  NAME.io.json         the inputs and the truth, in the corpus io format (testdata/corpus/README.md)

Run: `python3 tools/jax_exports/low_precision.py` from the repository root (deterministic seeds).
"""
import os
import sys

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

jax.config.update("jax_platforms", "cpu")

sys.path.insert(0, os.path.dirname(__file__))
from export_case import export as write_case  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "low_precision")



def grid(rng, shape, dtype):
    """Multiples of 2^-6 in [-4, 4): exact in bf16 (8 significant bits) and f16."""
    v = rng.integers(-256, 256, size=shape).astype(np.float64) / 64.0
    out = v.astype(dtype)
    assert np.array_equal(out.astype(np.float64), v)
    return out



def export(name, f, truth, *args):
    dtype = jax.eval_shape(f, *args).dtype
    # f64 -> bf16/f16: one rounding of an exact value.
    want = np.asarray(truth(*[np.asarray(a).astype(np.float64) for a in args])).astype(dtype)
    write_case(OUT, name, f, *args, outputs=[want])
    cpu = np.asarray(jax.jit(f)(*args))
    differ = int(np.sum(cpu.astype(np.float64) != want.astype(np.float64)))
    print(f"{name}: {want.size} outputs, XLA:CPU differs from the rounded truth on {differ}")


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(31)
    bf16, f16 = ml_dtypes.bfloat16, np.float16

    # The bias gradient of a bf16 layer: the transpose of a broadcast is a bf16 reduce-sum.
    x = grid(rng, (16, 128), bf16)
    export("bias_grad_bf16",
           lambda x: jax.vjp(lambda b: x + b, jnp.zeros((128,), bf16))[1](x)[0],
           lambda x: x.sum(axis=0), x)
    # A row reduction (the minor dimension) in bf16, through lax directly (no upcast by JAX).
    x = grid(rng, (8, 96), bf16)
    export("row_sum_bf16", lambda x: lax.reduce_sum_p.bind(x, axes=(1,), out_sharding=None),
           lambda x: x.sum(axis=1), x)
    # f16, both dimensions of a 3-D array.
    x = grid(rng, (4, 24, 40), f16)
    export("sum_f16", lambda x: lax.reduce_sum_p.bind(x, axes=(0, 2), out_sharding=None),
           lambda x: x.sum(axis=(0, 2)), x)
    # Sum pooling in bf16: reduce-window.
    x = grid(rng, (2, 16, 16, 4), bf16)
    export("sum_pool_bf16",
           lambda x: lax.reduce_window(x, jnp.array(0, bf16), lax.add, (1, 4, 4, 1), (1, 2, 2, 1), "VALID"),
           lambda x: np.stack([[[x[n, 2 * i:2 * i + 4, 2 * j:2 * j + 4, :].sum(axis=(0, 1))
                                 for j in range(7)] for i in range(7)] for n in range(2)]), x)


if __name__ == "__main__":
    main()
