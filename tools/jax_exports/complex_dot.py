"""Complex dots (issue 31), exported from JAX 0.10.2 (jaxlib 0.10.2, XLA:CPU, x64 enabled).

`jnp.matmul` / `einsum` on c64 and c128: a matrix product, a batched product with a transposed
operand, a matrix-vector product with the conjugate (`vdot`-style), and a small "unitary
evolution" step `U @ psi @ U^H` as quantum-simulation code writes it.

Writes, per case, into testdata/complex_dot/ (or the folder given as the first argument):
  NAME.hlo, NAME.mlir  the module, as `jax.jit(f).lower(*args).as_text(dialect=...)` prints it
  NAME.io.json         the inputs and XLA:CPU's outputs, in the corpus io format (complex arrays
                       interleave real and imaginary parts)

Run: `python3 tools/jax_exports/complex_dot.py` from the repository root (deterministic seeds).
"""
import os
import sys

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from export_case import export as write_case  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "complex_dot")


def cplx(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(31)
    for dt, suffix in ((np.complex64, "c64"), (np.complex128, "c128")):
        write_case(OUT, f"matmul_{suffix}", jnp.matmul, cplx(rng, (6, 5), dt), cplx(rng, (5, 7), dt))
        write_case(OUT, f"batched_transposed_{suffix}", lambda a, b: jnp.einsum("bik,bjk->bij", a, b),
               cplx(rng, (3, 4, 5), dt), cplx(rng, (3, 6, 5), dt))
    write_case(OUT, "conj_matvec_c64", lambda m, v: jnp.conj(m).T @ v, cplx(rng, (8, 6), np.complex64),
           cplx(rng, (8,), np.complex64))
    u = cplx(rng, (4, 4), np.complex64)
    write_case(OUT, "evolve_c64", lambda u, rho: u @ rho @ jnp.conj(u).T, u, cplx(rng, (4, 4), np.complex64))


if __name__ == "__main__":
    main()
