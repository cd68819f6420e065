"""JAX's linear algebra lowered for CUDA, as a user exports it today (issue 27, "fresh lowerings").

`jax.export.export(jax.jit(f), platforms=["cuda"])` lowers without a GPU: the module calls JAX's
stable CUDA custom calls (cusolver_*_ffi, cu_lu_pivots_to_permutation, cusparse_gtsv2_ffi) and
StableHLO ops (triangular_solve, ...). The reference outputs are the same function jitted on
XLA:CPU, which calls LAPACK instead (and, for the `*_threefry_kernel` cases, runs Threefry as HLO
where the CUDA export calls `cu_threefry2x32_ffi`). Each function returns quantities that do not depend on the
free signs of eigen- and singular vectors or Householder reflectors (reconstructions, Gram
matrices, eigen- and singular values), so a plain allclose judges them.

Writes, per case, into testdata/jax_linalg/ (or the folder given as the first argument):
  NAME.mlir     the exported module (`Exported.mlir_module()`, platform cuda)
  NAME.io.json  inputs and XLA:CPU's outputs, in the corpus io format

Run: `python3 tools/jax_linalg/gen.py` with jax==0.10.2 and jaxlib==0.10.2 (CPU) installed.
Deterministic (fixed seed).
"""
import json
import os
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax import export, lax

jax.config.update("jax_platforms", "cpu")

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "jax_linalg")
DTYPES = {"float32": "f32", "float64": "f64", "int32": "s32", "uint32": "u32", "bool": "pred"}


def arr(x):
    x = np.asarray(x)
    dt = DTYPES[str(x.dtype)]
    flat = x.reshape(-1)
    if dt in ("f32", "f64"):
        data = [float(v) for v in flat.tolist()]
    else:
        data = [int(v) for v in flat.tolist()]
    return {"dtype": dt, "shape": list(x.shape), "data": data}


def case(name, f, *args):
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    exp = export.export(jax.jit(f), platforms=["cuda"])(*specs)
    with open(os.path.join(OUT, f"{name}.mlir"), "w") as fh:
        fh.write(exp.mlir_module())
    outs = jax.tree_util.tree_leaves(jax.jit(f)(*args))
    with open(os.path.join(OUT, f"{name}.io.json"), "w") as fh:
        json.dump({"inputs": [arr(a) for a in args], "outputs": [arr(o) for o in outs]}, fh)
    print(name)


def spd(a):
    return a @ a.T + a.shape[-1] * jnp.eye(a.shape[-1], dtype=a.dtype)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(27)
    a = rng.standard_normal((4, 4)).astype(np.float32)
    tall = rng.standard_normal((5, 3)).astype(np.float32)
    batch = rng.standard_normal((2, 3, 3)).astype(np.float32)
    b = rng.standard_normal((4, 2)).astype(np.float32)

    case("cholesky", lambda a: jnp.linalg.cholesky(spd(a)), a)
    case("lu", lambda a: jax.scipy.linalg.lu(a), a)
    case("lu_factor", lambda a: jax.scipy.linalg.lu_factor(a), a)
    case("solve", lambda a, b: jnp.linalg.solve(spd(a), b), a, b)
    case("inv", lambda a: jnp.linalg.inv(spd(a)), a)
    case("slogdet", lambda a: jnp.linalg.slogdet(a), a)
    case("det", lambda a: jnp.linalg.det(a), a)
    case("qr", lambda a: (lambda q, r: (q @ r, q.T @ q, jnp.abs(jnp.diagonal(r))))(*jnp.linalg.qr(a)), tall)
    case("eigh", lambda a: (lambda w, v: (w, (v * w) @ v.T, v.T @ v))(*jnp.linalg.eigh(a + a.T)), a)
    case("eigvalsh_batched", lambda a: jnp.linalg.eigvalsh(a + jnp.swapaxes(a, -1, -2)), batch)
    case("svd", lambda a: (lambda u, s, vt: (s, (u * s) @ vt, u.T @ u, vt @ vt.T))(
        *jnp.linalg.svd(a, full_matrices=False)), tall)
    case("svd_values_wide", lambda a: jnp.linalg.svd(a.T, compute_uv=False), tall)
    case("pinv", lambda a: jnp.linalg.pinv(a), tall)
    case("lstsq", lambda a, b: jnp.linalg.lstsq(a, b)[0], tall,
         rng.standard_normal((5, 2)).astype(np.float32))
    case("expm", lambda a: jax.scipy.linalg.expm(0.25 * a), a)
    case("cho_solve", lambda a, b: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(spd(a)), b), a, b)
    case("triangular_solve", lambda a, b: jax.scipy.linalg.solve_triangular(
        jnp.tril(a) + 4 * jnp.eye(4, dtype=a.dtype), b, lower=True), a, b)
    case("tridiagonal", lambda a: (lambda arr, d, e, tau: (d, e))(*lax.linalg.tridiagonal(a + a.T)), a)
    # jax.random with the GPU Threefry kernel (cu_threefry2x32_ffi) instead of the HLO expansion.
    jax.config.update("jax_threefry_gpu_kernel_lowering", True)
    seed = np.array([3], np.int32)
    case("random_normal_threefry_kernel",
         lambda s: jax.random.normal(jax.random.key(s[0]), (4, 4)), seed)
    case("random_truncated_normal_threefry_kernel",
         lambda s: jax.random.truncated_normal(jax.random.key(s[0]), -2.0, 2.0, (8,)), seed)
    jax.config.update("jax_threefry_gpu_kernel_lowering", False)
    case("tridiagonal_solve", lambda dl, d, du, b: lax.linalg.tridiagonal_solve(dl, d, du, b),
         np.array([0, 1, -1, 0.5], np.float32), np.array([4, 5, 6, 7], np.float32),
         np.array([1, 0.5, -2, 0], np.float32), b)


if __name__ == "__main__":
    main()
