"""Every CHLO op JAX 0.10.2 emits, exported from JAX 0.10.2 (jaxlib 0.10.2, XLA:CPU) (issue 31).

`jax.jit(f).lower(x).as_text()` keeps these ops as `chlo.*` in the StableHLO it prints (the HLO
printer, `as_text(dialect="hlo")`, shows XLA's legalization of them instead). Each case calls one
op (or a jnp / scipy function built on it) over inputs spanning its domain, in f32, and in f64,
bf16 or f16 where the decomposition differs by type. `jax.random.normal` and `truncated_normal`
(`chlo.erf_inv`) are the everyday case. `chlo.mulhi` (`lax.mulhi`, in the Philox PRNG
implementations `philox2x32` and `philox4x32`) is XLA's HLO opcode `mulhi` in the `.hlo`;
`chlo.conj` comes from `triangular_solve(conjugate_a=True)` without a transpose; complex
`chlo.square` from `jnp.square` (the complex inverse functions are in complex_ops.py).

Writes, per case, into testdata/chlo/ (or the folder given as the first argument):
  NAME.mlir, NAME.hlo  the module (StableHLO with `chlo.*`, and XLA's HLO)
  NAME.io.json         the inputs and XLA:CPU's outputs, in the corpus io format

Run: `python3 tools/jax_exports/chlo.py` from the repository root (deterministic inputs).
"""
import os
import re
import sys

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import jax.scipy.special as sp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from export_case import export as write_case  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "chlo")



def export(name, f, *args):
    lowered = write_case(OUT, name, f, *args)
    print(name, sorted(set(re.findall(r"chlo\.[a-z_0-9]+", lowered.as_text()))))


def main():
    os.makedirs(OUT, exist_ok=True)
    unit = np.linspace(-0.99, 0.99, 24)          # (-1, 1): erf_inv, atanh, asin, acos
    wide = np.concatenate([np.linspace(-30, 30, 21), [-1e-3, 1e-3, 0.5]])
    pos = np.concatenate([np.linspace(0.05, 12, 20), [30.0, 80.0, 150.0, 1e-3]])
    gam = np.concatenate([np.linspace(-4.75, 12, 20), [0.5, 30.0, 1e-3, -0.5]])
    f32, f64 = np.float32, np.float64
    for dt, suffix in ((f32, "f32"), (f64, "f64")):
        export(f"erf_inv_{suffix}", lax.erf_inv, unit.astype(dt))
        export(f"erfc_{suffix}", lax.erfc, (wide / 5).astype(dt))
        export(f"lgamma_{suffix}", lax.lgamma, gam.astype(dt))
        export(f"digamma_{suffix}", lax.digamma, gam.astype(dt))
        export(f"bessel_i1e_{suffix}", lax.bessel_i1e, wide.astype(dt))
    export("sinh_cosh_f32", lambda x: (jnp.sinh(x), jnp.cosh(x)), (wide * 2).astype(f32))
    export("asin_acos_atan_f32", lambda x: (jnp.arcsin(x), jnp.arccos(x), jnp.arctan(x * 40)), unit.astype(f32))
    export("asinh_acosh_atanh_f32", lambda x: (jnp.arcsinh(x * 30), jnp.arccosh(jnp.abs(x) * 30 + 1), jnp.arctanh(x)),
           unit.astype(f32))
    export("inverse_trig_f64", lambda x: (jnp.arcsin(x), jnp.arccos(x), jnp.arcsinh(x * 1e3), jnp.arctanh(x)),
           unit.astype(f64))
    export("next_after_f32", lambda x, y: lax.nextafter(x, y), wide.astype(f32), wide[::-1].astype(f32))
    export("next_after_bf16", lambda x, y: lax.nextafter(x, y),
           wide.astype(ml_dtypes.bfloat16), np.zeros(24).astype(ml_dtypes.bfloat16))
    export("polygamma_f32", lambda x: (sp.polygamma(1, x), sp.polygamma(3, x)), pos.astype(f32))
    export("zeta_f32", lambda x: sp.zeta(x + 1.5, x), pos.astype(f32))
    export("lgamma_bf16", lax.lgamma, gam.astype(ml_dtypes.bfloat16))
    export("erf_inv_f16", lax.erf_inv, unit.astype(np.float16))
    export("gammaln_betainc_f32", lambda a, x: (sp.gammaln(a), sp.betainc(a, a + 1, x)),
           pos[:20].astype(f32), np.linspace(0.02, 0.98, 20).astype(f32))
    key = jax.random.key_data(jax.random.key(31)).astype(np.uint32)
    export("random_normal_f32",
           lambda k: (jax.random.normal(jax.random.wrap_key_data(k), (64,), f32),
                      jax.random.truncated_normal(jax.random.wrap_key_data(k), -1.5, 2.0, (64,), f32)),
           key)
    integer_cases()


def integer_cases():
    """`chlo.mulhi` on every integer width, the Philox PRNGs built on it, and `chlo.conj`."""
    def spread(dt):
        info = np.iinfo(dt)
        edges = [info.min, info.min + 1, -1, 0, 1, 2, info.max - 1, info.max]
        rng = np.random.default_rng(31)
        rand = rng.integers(info.min, info.max, size=24, dtype=dt, endpoint=True)
        return np.concatenate([np.array([e for e in edges if info.min <= e <= info.max], dtype=dt), rand])
    for a, b in (("u8", "s8"), ("u16", "s16"), ("u32", "s32"), ("u64", "s64")):
        ua = spread(np.dtype(a.replace("u", "uint")))
        sb = spread(np.dtype(b.replace("s", "int")))
        export(f"mulhi_{a}_{b}", lambda x, y, p, q: (lax.mulhi(x, y), lax.mulhi(p, q)),
               ua, ua[::-1].copy(), sb, sb[::-1].copy())
    for impl in ("philox2x32", "philox4x32"):
        key = jax.random.key_data(jax.random.key(31, impl=impl))
        export(f"random_{impl}_f32",
               lambda k, impl=impl: (jax.random.normal(jax.random.wrap_key_data(k, impl=impl), (64,), np.float32),
                                     jax.random.bits(jax.random.wrap_key_data(k, impl=impl), (16,), np.uint32)),
               key)
    # On cpu JAX lowers triangular_solve to LAPACK's trsm custom call; its platform-independent
    # lowering (what other platforms get) emits `chlo.conj` and XLA's `triangular-solve`.
    from jax._src.interpreters import mlir
    from jax._src.lax import linalg as lax_linalg
    mlir.register_lowering(lax_linalg.triangular_solve_p, lax_linalg._triangular_solve_lowering,
                           platform="cpu")
    rng = np.random.default_rng(31)
    for dt, suffix in ((np.complex64, "c64"), (np.complex128, "c128")):
        a = rng.normal(size=(4, 4)) + 4 * np.eye(4) + 1j * rng.normal(size=(4, 4))
        b = rng.normal(size=(4, 3)) + 1j * rng.normal(size=(4, 3))
        export(f"conj_triangular_solve_{suffix}",
               lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True, conjugate_a=True),
               np.tril(a).astype(dt), b.astype(dt))


if __name__ == "__main__":
    main()
