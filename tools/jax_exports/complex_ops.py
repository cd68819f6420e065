"""Complex elementwise transcendentals (issue 31), from JAX 0.10.2 (jaxlib 0.10.2, XLA:CPU, x64).

Two kinds of case, each for c64 and c128, on arguments around XLA's special cases (zeros of both
signs, infinite and NaN parts, tiny and huge magnitudes, the branch cut) plus random values:

- `op_NAME_TYPE`: one StableHLO op on complex values as XLA's own HLO opcode
  (`stablehlo.exponential`, `exponential_minus_one`, `log`, `log_plus_one`, `sqrt`, `rsqrt`,
  `sine`, `cosine`, `tan`, `tanh`, `power`). JAX's `jnp` functions lower most of these to real
  arithmetic on the parts, so these modules are written here and compiled by XLA:CPU directly
  (`backend.compile_and_load`); the `.hlo` twin is XLA's own conversion of the module
  (`mlir_module_to_xla_computation`).
- `trsm_*_TYPE`, `cho_solve_TYPE`: `jax.scipy.linalg.solve_triangular` (every `trans`, both
  triangles), a right-side adjoint `lax.linalg.triangular_solve` and `cho_solve`, batched:
  XLA's `triangular-solve` on complex operands (ADJOINT conjugates).
- `op_conv2d_TYPE`, `jnp_conv2d_TYPE`: a complex 2-D convolution as one XLA op and as JAX's
  expansion of it into real convolutions.
- `jnp_NAME_TYPE`: the `jnp` function as JAX lowers it (`jax.jit(f).lower`), which keeps
  `rsqrt`, `exponential-minus-one`, `tan`, `tanh` and `power` as complex ops and decomposes the
  others (including `sinh`, `cosh` and the inverse functions) into real ones.

Writes NAME.mlir, NAME.hlo and NAME.io.json (inputs and XLA:CPU's outputs) into
testdata/complex_ops/ (or the folder given as the first argument).

Run: `python3 tools/jax_exports/complex_ops.py` from the repository root (deterministic seeds).
"""
import json
import os
import sys

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.extend import backend  # noqa: E402
from jax._src.interpreters import mlir  # noqa: E402
from jax._src.lax import linalg as lax_linalg  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from export_case import arr, export as write_case  # noqa: E402

# On cpu JAX lowers triangular_solve to LAPACK's trsm custom call; its platform-independent
# lowering (`stablehlo.triangular_solve`, what other platforms get) makes it XLA's op, which
# XLA:CPU then expands itself (as tools/jax_exports/cholesky.py does).
mlir.register_lowering(lax_linalg.triangular_solve_p, lax_linalg._triangular_solve_lowering,
                       platform="cpu")

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "complex_ops")

INF, NAN = np.inf, np.nan

# Arguments where XLA's formulas take their special branches. Parts stay at or below 1e5 in
# magnitude where they reach a sine or cosine: larger ones need a Payne-Hanek reduction, which
# the kernels' `math` does not have (`cos(1e30)` comes out infinite there).
SPECIAL = [
    0j, complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0),
    1 + 0j, -1 + 0j, 1j, -1j, -4 + 0j, complex(-4.0, -0.0), 3 + 4j, 0.5 - 1.25j,
    complex(INF, 0), complex(-INF, 0), complex(0, INF), complex(0, -INF), complex(INF, INF),
    complex(-INF, 1), complex(1, INF), complex(2, -INF), complex(INF, -2),
    complex(NAN, 0), complex(0, NAN), complex(1, NAN), complex(NAN, 1), complex(INF, NAN),
    complex(NAN, INF), 1e-20 + 3e-21j, 1e-7 - 2e-8j, 30 + 1j, -30 + 2j, 1e5 - 1e5j,
    1e-30 + 3e4j, 0.6 + 0.8j,
]

# Exponents for `power` (paired with SPECIAL, then random ones).
EXPONENTS = [
    0j, 2 + 0j, 0.5 + 0j, -1 + 0j, 2 + 0.5j, 0.5 + 0j, 3 + 0j, -1.5 + 2j, 1j, -2 + 0j, 2 + 0j,
    0.25 + 0.25j, 0j, -2 + 0j, 1 + 1j, 0.5 + 0j, 0j, 1 + 0j, 2 + 0j, 0.5 - 0.5j, 1 + 0j,
    1 + 0j, 2 + 0j, 1 + 1j, 0j, 1 + 0j, 1 + 0j, 3 + 0j, 0.25 + 0.25j, 1 + 0j, 0.5 - 0.5j,
    0.5 + 0j, 1 + 0j, 10 + 0j,
]

OPS = ["exponential", "exponential_minus_one", "log", "log_plus_one", "sqrt", "rsqrt", "sine",
       "cosine", "tan", "tanh"]

JNP = {
    "exp": jnp.exp, "expm1": jnp.expm1, "log": jnp.log, "log1p": jnp.log1p, "sqrt": jnp.sqrt,
    "rsqrt": jax.lax.rsqrt, "sin": jnp.sin, "cos": jnp.cos, "tan": jnp.tan, "tanh": jnp.tanh,
    "sinh": jnp.sinh, "cosh": jnp.cosh, "arcsin": jnp.arcsin, "arccos": jnp.arccos,
    "arctan": jnp.arctan, "arcsinh": jnp.arcsinh, "arccosh": jnp.arccosh,
    "arctanh": jnp.arctanh, "log10": jnp.log10, "exp2": jnp.exp2, "square": jnp.square,
    "reciprocal": jnp.reciprocal,
}


def args(rng, dtype, n_random=14):
    z = np.array(SPECIAL, dtype=np.complex128)
    r = rng.standard_normal(n_random) * 3 + 1j * rng.standard_normal(n_random) * 3
    return np.concatenate([z, r]).astype(dtype)


def exponents(rng, dtype, n_random=14):
    e = np.array(EXPONENTS, dtype=np.complex128)
    r = rng.standard_normal(n_random) + 1j * rng.standard_normal(n_random)
    return np.concatenate([e, r]).astype(dtype)


def mlir_type(x):
    part = "f32" if x.dtype == np.complex64 else "f64"
    return f"tensor<{x.shape[0]}xcomplex<{part}>>"


def op_module(op, ty, binary):
    params = f"%arg0: {ty}, %arg1: {ty}" if binary else f"%arg0: {ty}"
    operands = "%arg0, %arg1" if binary else "%arg0"
    return (f"module @complex_{op} {{\n"
            f"  func.func public @main({params}) -> ({ty}) {{\n"
            f"    %0 = stablehlo.{op} {operands} : {ty}\n"
            f"    return %0 : {ty}\n  }}\n}}\n")


def write_op_case(name, op, inputs, text=None):
    text = text or op_module(op, mlir_type(inputs[0]), len(inputs) == 2)
    be = backend.get_backend()
    exe = be.compile_and_load(text, be.devices()[:1], xc.CompileOptions())
    outs = exe.execute([jax.device_put(a) for a in inputs])
    hlo = xc._xla.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False,
                                                      return_tuple=False).as_hlo_text()
    with open(os.path.join(OUT, f"{name}.mlir"), "w") as fh:
        fh.write(text)
    with open(os.path.join(OUT, f"{name}.hlo"), "w") as fh:
        fh.write(hlo)
    with open(os.path.join(OUT, f"{name}.io.json"), "w") as fh:
        json.dump({"inputs": [arr(a) for a in inputs],
                   "outputs": [arr(np.asarray(o)) for o in outs]}, fh)


def main():
    os.makedirs(OUT, exist_ok=True)
    for dt, suffix in ((np.complex64, "c64"), (np.complex128, "c128")):
        rng = np.random.default_rng(31)
        x, y = args(rng, dt), exponents(rng, dt)
        for op in OPS:
            write_op_case(f"op_{op}_{suffix}", op, [x])
        write_op_case(f"op_power_{suffix}", "power", [x, y])
        for name, f in JNP.items():
            write_case(OUT, f"jnp_{name}_{suffix}", f, x)
        write_case(OUT, f"jnp_power_{suffix}", jnp.power, x, y)
        write_solves(rng, dt, suffix)
        write_convolutions(rng, dt, suffix)


def conv(lhs, rhs):
    return jax.lax.conv_general_dilated(lhs, rhs, window_strides=(1, 2), padding="SAME",
                                        rhs_dilation=(1, 1),
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))


def write_convolutions(rng, dt, suffix):
    """A 2-D convolution on complex operands: `op_conv2d_TYPE` is XLA's `convolution` of complex
    values (JAX never emits one: it expands complex convolutions itself, as below, because
    XLA:GPU refuses them; XLA:CPU runs them), written as the real module's text with complex
    element types; `jnp_conv2d_TYPE` is JAX's own expansion (three real convolutions)."""
    shape_l, shape_r = (2, 6, 7, 3), (3, 3, 3, 4)
    lhs = (rng.standard_normal(shape_l) + 1j * rng.standard_normal(shape_l)).astype(dt)
    rhs = (rng.standard_normal(shape_r) + 1j * rng.standard_normal(shape_r)).astype(dt)
    part = "f32" if dt == np.complex64 else "f64"
    real = jax.jit(conv).lower(lhs.real.copy(), rhs.real.copy()).as_text()
    text = real.replace(f"x{part}>", f"xcomplex<{part}>>")
    write_op_case(f"op_conv2d_{suffix}", "convolution", [lhs, rhs], text=text)
    write_case(OUT, f"jnp_conv2d_{suffix}", conv, lhs, rhs)


def write_solves(rng, dt, suffix):
    """`solve_triangular` in every `trans` (2 is the conjugate transpose) for both triangles and
    sides, batched, and `cho_solve`: XLA's `triangular-solve` on complex operands."""
    n, k = 5, 3
    a = (rng.standard_normal((2, n, n)) + 1j * rng.standard_normal((2, n, n))).astype(dt)
    a = a + (4 + 1j) * np.eye(n, dtype=dt)
    b = (rng.standard_normal((2, n, k)) + 1j * rng.standard_normal((2, n, k))).astype(dt)
    for lower in (True, False):
        tri = "lower" if lower else "upper"
        for trans in (0, 1, 2):
            write_case(OUT, f"trsm_{tri}_t{trans}_{suffix}",
                       lambda a, b, lower=lower, trans=trans: jax.scipy.linalg.solve_triangular(
                           a, b, lower=lower, trans=trans), a, b)
    bt = np.swapaxes(b, -1, -2).copy()
    write_case(OUT, f"trsm_right_adjoint_{suffix}",
               lambda a, b: jax.lax.linalg.triangular_solve(a, b, left_side=False, lower=True,
                                                            conjugate_a=True, transpose_a=True),
               a, bt)
    spd = a @ np.conj(np.swapaxes(a, -1, -2))
    c = np.linalg.cholesky(spd).astype(dt)
    write_case(OUT, f"cho_solve_{suffix}",
               lambda c, b: jax.scipy.linalg.cho_solve((c, True), b), c, b)


if __name__ == "__main__":
    main()
