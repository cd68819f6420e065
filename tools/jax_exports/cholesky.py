"""Cholesky as an HLO op (issues 27 and 31), exported from JAX 0.10.2 (jaxlib 0.10.2, XLA:CPU,
x64 enabled).

JAX lowers `cholesky_p` to a LAPACK custom call on cpu and to `cusolver_potrf_ffi` on cuda; only
other platforms get `stablehlo.cholesky`. This generator registers JAX's own platform-independent
lowering (`_cholesky_lowering`, `hlo.cholesky(x, lower=True)`) for cpu, and the same for
`triangular_solve_p` (cho_solve), so each module holds the `cholesky` and `triangular-solve` ops
and XLA:CPU's outputs (its `CholeskyExpander` and `TriangularSolveExpander`) are the reference.

Cases: `jnp.linalg.cholesky`, `jax.scipy.linalg.cho_factor` (lower and upper) and `cho_solve`,
`jax.scipy.linalg.cholesky(lower=False)`, single and batched, in f32, f64, c64 and c128
(`cho_solve` in f32 and f64: complex triangular-solve is not compiled yet), and a
batch where one matrix is not positive definite (real types: that matrix comes back all NaN on
both XLA:CPU and XLA:GPU; for complex types XLA:CPU's NaN is `NaN + 0i` and XLA:GPU's
`NaN + NaN i`, so those are tested in Rust instead).

Writes, per case, into testdata/cholesky/ (or the folder given as the first argument):
  NAME.hlo, NAME.mlir  the module, as `jax.jit(f).lower(*args).as_text(dialect=...)` prints it
  NAME.io.json         the inputs and XLA:CPU's outputs, in the corpus io format

Run: `/tmp/jaxenv/bin/python tools/jax_exports/cholesky.py` from the repository root
(deterministic seeds).
"""
import os
import sys

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
import numpy as np  # noqa: E402
from jax._src.interpreters import mlir  # noqa: E402
from jax._src.lax import linalg as lax_linalg  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from export_case import export as write_case  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "cholesky")

# The ops instead of LAPACK's potrf and trsm custom calls.
mlir.register_lowering(lax_linalg.cholesky_p, lax_linalg._cholesky_lowering, platform="cpu")
mlir.register_lowering(lax_linalg.triangular_solve_p, lax_linalg._triangular_solve_lowering,
                       platform="cpu")


def spd(rng, shape, dtype):
    """Hermitian positive definite matrices `m mᴴ + n I` of `shape` (`[..., n, n]`)."""
    n = shape[-1]
    m = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        m = m + 1j * rng.standard_normal(shape)
    a = m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)
    return a.astype(dtype)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(27)
    types = ((np.float32, "f32"), (np.float64, "f64"), (np.complex64, "c64"),
             (np.complex128, "c128"))
    for dt, sfx in types:
        write_case(OUT, f"cholesky_{sfx}", jnp.linalg.cholesky, spd(rng, (5, 5), dt))
        write_case(OUT, f"cholesky_batched_{sfx}", jnp.linalg.cholesky, spd(rng, (2, 3, 4, 4), dt))
        write_case(OUT, f"cholesky_upper_{sfx}", lambda a: jsl.cholesky(a, lower=False),
                   spd(rng, (3, 6, 6), dt))
        write_case(OUT, f"cho_factor_lower_{sfx}", lambda a: jsl.cho_factor(a, lower=True)[0],
                   spd(rng, (4, 4), dt))
        write_case(OUT, f"cho_factor_upper_{sfx}", lambda a: jsl.cho_factor(a, lower=False)[0],
                   spd(rng, (4, 4), dt))
    # cho_solve's triangular solves are real only here (complex triangular-solve is refused).
    for dt, sfx in types[:2]:
        b = rng.standard_normal((6, 3)).astype(dt)
        write_case(OUT, f"cho_solve_{sfx}",
                   lambda a, b: jsl.cho_solve(jsl.cho_factor(a, lower=True), b),
                   spd(rng, (6, 6), dt), b)
        a = spd(rng, (3, 4, 4), dt)
        a[1] = np.diag([4.0, -1.0, 2.0, 3.0]).astype(dt)
        write_case(OUT, f"cholesky_not_spd_{sfx}", jnp.linalg.cholesky, a)


if __name__ == "__main__":
    main()
