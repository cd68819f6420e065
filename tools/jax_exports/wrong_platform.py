"""Linear algebra lowered for the CPU, for the compiler's wrong-platform message.

JAX lowers `jax.scipy.linalg` / `jnp.linalg` for the platform of `jax.jit(f).lower(...)`: on a
CPU host that is XLA:CPU's LAPACK custom calls (`lapack_strsm_ffi`, `lapack_sgetrf_ffi`, ...),
which no GPU runtime has; lowered for CUDA the same functions call cuSOLVER or plain HLO
(`testdata/jax_linalg/`). A user who lowers on a laptop and compiles for a GPU gets these
modules; the compiler must say what happened instead of emitting a thunk no runtime loads.

Writes, per case, into testdata/wrong_platform/ (or the folder given as the first argument):
  NAME.hlo   `jax.jit(f).lower(*args).as_text(dialect="hlo")`
  NAME.mlir  `jax.jit(f).lower(*args).as_text()`
and `targets.json`: per case, the LAPACK target its module calls first.
Run: `python3 tools/jax_exports/wrong_platform.py` from the repository root (JAX 0.10.2, CPU).
"""
import json
import os
import re
import sys

import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_platforms", "cpu")

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "wrong_platform")


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((6, 6)).astype(np.float32)
    b = rng.standard_normal((6, 3)).astype(np.float32)
    cases = {
        "solve_triangular_cpu": lambda a, b: jax.scipy.linalg.solve_triangular(
            jnp.tril(a) + 4 * jnp.eye(6), b, lower=True),
        "solve_cpu": lambda a, b: jnp.linalg.solve(a + 6 * jnp.eye(6), b),
        "cholesky_cpu": lambda a, b: jnp.linalg.cholesky(a @ a.T + 6 * jnp.eye(6)) + 0 * b.sum(),
        "eigvalsh_cpu": lambda a, b: jnp.linalg.eigvalsh(a @ a.T) + 0 * b.sum(),
    }
    targets = {}
    for name, f in cases.items():
        lowered = jax.jit(f).lower(a, b)
        mlir = lowered.as_text()
        with open(os.path.join(OUT, f"{name}.mlir"), "w") as fh:
            fh.write(mlir)
        with open(os.path.join(OUT, f"{name}.hlo"), "w") as fh:
            fh.write(lowered.as_text(dialect="hlo"))
        found = re.search(r"(lapack_[a-z0-9_]+)", mlir)
        targets[name] = found.group(1) if found else None
        print(name, targets[name])
    with open(os.path.join(OUT, "targets.json"), "w") as fh:
        json.dump(targets, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main()
