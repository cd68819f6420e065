"""Exports of constructs the public corpus lacks; run with JAX 0.10.2 (jaxlib 0.10.2, CPU)."""
import os
# Two CPU devices, for the pmap export of the collectives.
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import json, numpy as np, jax, jax.numpy as jnp
from jax import lax
jax.config.update("jax_platforms", "cpu")

def arr(x):
    x = np.asarray(x)
    dt = {"float32":"f32","int32":"s32","bool":"pred"}[str(x.dtype)]
    data = x.reshape(-1).tolist()
    if dt == "pred": data = [int(v) for v in data]
    return {"dtype": dt, "shape": list(x.shape), "data": data}

def export(name, f, *args):
    """NAME.mlir (pretty, as JAX prints it), NAME.generic.mlir (MLIR's generic op form),
    NAME.hlo (JAX's HLO export) and NAME.io.json (inputs and JAX's outputs)."""
    lowered = jax.jit(f).lower(*args)
    open(f"{name}.mlir", "w").write(lowered.as_text())
    ir = lowered.compiler_ir("stablehlo")
    open(f"{name}.generic.mlir", "w").write(ir.operation.get_asm(print_generic_op_form=True))
    open(f"{name}.hlo", "w").write(lowered.as_text(dialect="hlo"))
    out = jax.jit(f)(*args)
    outs = out if isinstance(out, (tuple, list)) else [out]
    json.dump({"inputs": [arr(a) for a in args], "outputs": [arr(o) for o in outs]}, open(f"{name}.io.json", "w"))

rng = np.random.default_rng(0)
x = rng.standard_normal((2, 8, 8, 3)).astype(np.float32)
w = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
export("conv2d", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), x, w)
# select-and-scatter: the gradient of max pooling.
def maxpool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
xs = rng.standard_normal((1, 6, 6, 2)).astype(np.float32)
export("maxpool_grad", lambda x: jax.grad(lambda y: (maxpool(y) ** 2).sum())(x), xs)
xt = rng.standard_normal((4, 10)).astype(np.float32)
export("top_k", lambda x: lax.top_k(x, 3), xt)
# Batched gather: per-batch row selection.
table = rng.standard_normal((3, 5, 4)).astype(np.float32)
idx = np.array([[0, 4], [2, 2], [1, 3]], dtype=np.int32)
export("batched_gather", lambda t, i: jax.vmap(lambda tt, ii: tt[ii])(t, i), table, idx)
# Scatter-add.
base = np.zeros((6, 3), np.float32)
upd = rng.standard_normal((4, 3)).astype(np.float32)
sidx = np.array([0, 2, 2, 5], np.int32)
export("scatter_add", lambda b, i, u: b.at[i].add(u), base, sidx, upd)

rng = np.random.default_rng(1)
x = rng.standard_normal((4, 6)).astype(np.float32)
k = rng.integers(-5, 5, (4, 6)).astype(np.int32)
def misc(x, k):
    a = lax.sort((k, x), dimension=1, num_keys=1)
    b = lax.optimization_barrier((x, k))
    c = lax.bitcast_convert_type(x, jnp.int32)
    d = lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10)
    e = lax.erf(x) + jnp.tan(x * 0.1)
    f = jnp.isinf(x / 0.0) & jnp.isposinf(x / 0.0)
    g = lax.cond(x[0, 0] > 0, lambda: x * 2, lambda: x - 1)
    h = jnp.cumsum(x, axis=1)
    return a[0], a[1], b[0], c, d, e, f, g, h, lax.iota(jnp.int32, 5), x.T @ x
export("misc_ops", misc, x, k)

def write(name, lowered):
    """The text forms only (collectives need several devices to run; outputs are not recorded)."""
    open(f"{name}.mlir", "w").write(lowered.as_text())
    ir = lowered.compiler_ir("stablehlo")
    open(f"{name}.generic.mlir", "w").write(ir.operation.get_asm(print_generic_op_form=True))
    open(f"{name}.hlo", "w").write(lowered.as_text(dialect="hlo"))

def coll(x):
    a = lax.psum(x, "i")
    b = lax.all_gather(x, "i")
    c = lax.ppermute(x, "i", [(0, 1), (1, 0)])
    d = lax.psum_scatter(jnp.tile(x, 2), "i", tiled=True)
    e = lax.all_to_all(jnp.tile(x, 2).reshape(2, -1), "i", 0, 0)
    return a, b, c, d, e, lax.axis_index("i")
x = np.arange(8, dtype=np.float32).reshape(2, 4)
write("collectives", jax.pmap(coll, axis_name="i").lower(x))
def rng(k):
    key = jax.random.wrap_key_data(k, impl="rbg")
    return jax.random.bits(key, (8,), jnp.uint32)
write("rng_bits", jax.jit(rng).lower(np.zeros(4, np.uint32)))
