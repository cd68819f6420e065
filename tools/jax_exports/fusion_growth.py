"""Modules whose naive fusion re-emits code exponentially (issue 31), from JAX 0.10.2 (XLA:CPU).

Each value here is read both directly and through an index-changing op (slice, pad, strided
slice), level after level, so a fusion that inlines every producer into its consumer emits the
first level's code 2^levels times. The compiler caps how often it re-emits one instruction in a
kernel (compiler/src/fusion/duplication.rs); with the cap, compile time and artifact size grow
linearly with the module. harness/tests/fusion_growth.rs runs each case and bounds its artifact.

Writes, per case, into testdata/fusion_growth/ (or the folder given as the first argument):
  NAME.hlo, NAME.mlir  the module, as `jax.jit(f).lower(*args).as_text(dialect=...)` prints it
  NAME.io.json         the inputs and XLA:CPU's outputs, in the corpus io format

Run: `python3 tools/jax_exports/fusion_growth.py` from the repository root (deterministic seeds).
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

jax.config.update("jax_platforms", "cpu")

sys.path.insert(0, os.path.dirname(__file__))
from export_case import export as write_case  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "fusion_growth")


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(31)

    # 16 levels of a = a + shift(a): each level reads `a` directly and through pad(slice(a)).
    def shifts(a):
        for _ in range(16):
            a = a + jnp.pad(a[1:], (0, 1))
        return a
    write_case(OUT, "pad_slice_levels16", shifts, (rng.standard_normal(256) * 1e-3).astype(np.float32))

    # A linear recurrence h_t = a_t * h_{t-1} + b_t as an associative scan (S4/Mamba-style).
    def linear_recurrence(a, b):
        def combine(x, y):
            return (x[0] * y[0], y[0] * x[1] + y[1])
        return lax.associative_scan(combine, (a, b))[1]
    a = rng.uniform(0.5, 1.0, (128,)).astype(np.float32)
    b = rng.standard_normal((128,)).astype(np.float32)
    write_case(OUT, "assoc_scan_recurrence128", linear_recurrence, a, b)

    # The JVPs of cumprod and cummax (associative scans with their tangents).
    x = rng.uniform(0.9, 1.1, (64,)).astype(np.float32)
    t = rng.standard_normal((64,)).astype(np.float32)
    write_case(OUT, "cumprod_jvp64", lambda x, t: jax.jvp(lambda v: lax.cumprod(v, reverse=False), (x,), (t,)), x, t)
    write_case(OUT, "cummax_jvp64", lambda x, t: jax.jvp(lambda v: lax.associative_scan(jnp.maximum, v), (x,), (t,)), x, t)


if __name__ == "__main__":
    main()
