"""Model pieces for issue 14's constructs, exported from JAX 0.10.2 (jaxlib 0.10.2, XLA:CPU).

Writes, per case, into testdata/models/ (or the folder given as the first argument):
  NAME.hlo      the unoptimized HLO, as `jax.jit(f).lower(*args).as_text(dialect="hlo")` prints it
  NAME.mlir     the same function as StableHLO, as `lower(*args).as_text()` prints it
  NAME.io.json  the inputs and XLA:CPU's outputs, in the corpus io format (testdata/corpus/README.md)

Sizes are small on purpose: the suite replays every case on the emulated GPU on both targets.
Run: `python3 tools/jax_exports/models.py` from the repository root (deterministic: fixed seeds).
"""
import json
import os
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

jax.config.update("jax_platforms", "cpu")

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "models")
DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "s32",
          "uint32": "u32", "int8": "s8", "uint8": "u8", "int64": "s64", "bool": "pred",
          "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2"}


def render(v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return float(v)


def arr(x):
    x = np.asarray(x)
    dt = DTYPES[str(x.dtype)]
    flat = x.reshape(-1)
    if dt in ("f32", "f16", "bf16", "f8e4m3fn", "f8e5m2"):
        # f16/bf16/f8 are given as their exact f32 value (the corpus convention).
        data = [render(v) for v in flat.astype(np.float32).tolist()]
    elif dt == "pred":
        data = [int(v) for v in flat.tolist()]
    else:
        data = [int(v) for v in flat.tolist()]
    return {"dtype": dt, "shape": list(x.shape), "data": data}


def export(name, f, *args):
    lowered = jax.jit(f).lower(*args)
    with open(os.path.join(OUT, f"{name}.mlir"), "w") as fh:
        fh.write(lowered.as_text())
    with open(os.path.join(OUT, f"{name}.hlo"), "w") as fh:
        fh.write(lowered.as_text(dialect="hlo"))
    out = jax.jit(f)(*args)
    outs = jax.tree_util.tree_leaves(out)
    with open(os.path.join(OUT, f"{name}.io.json"), "w") as fh:
        json.dump({"inputs": [arr(a) for a in args], "outputs": [arr(o) for o in outs]}, fh)
    print(name)


def normal(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(14)
    nhwc = ("NHWC", "HWIO", "NHWC")

    # --- convolution: forward, both gradients, strided/padded/dilated, grouped, depthwise ---
    x = normal(rng, (2, 9, 9, 4))
    w = normal(rng, (3, 3, 4, 6))
    b = normal(rng, (6,))
    export("conv2d_bias_relu",
           lambda x, w, b: jax.nn.relu(lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=nhwc) + b),
           x, w, b)
    export("conv2d_strided",
           lambda x, w: lax.conv_general_dilated(x, w, (2, 2), ((1, 0), (2, 1)), dimension_numbers=nhwc), x, w)
    export("conv2d_dilated",
           lambda x, w: lax.conv_general_dilated(x, w, (1, 1), ((0, 0), (-1, 1)), lhs_dilation=(2, 1), rhs_dilation=(1, 2),
                                                 dimension_numbers=nhwc), x, w)
    export("conv2d_nchw",
           lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")),
           normal(rng, (2, 3, 7, 7)), normal(rng, (5, 3, 3, 3)))

    def conv_loss(x, w):
        y = lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=nhwc)
        return (jnp.tanh(y) ** 2).sum()
    export("conv2d_grad_input", jax.grad(conv_loss, argnums=0), x, w)
    export("conv2d_grad_weight", jax.grad(conv_loss, argnums=1), x, w)

    xg = normal(rng, (2, 8, 8, 6))
    wg = normal(rng, (3, 3, 2, 6))  # 3 groups of 2 input features
    grouped = lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=nhwc,
                                                    feature_group_count=3)
    export("conv2d_grouped", grouped, xg, wg)
    export("conv2d_grouped_grad_weight", jax.grad(lambda x, w: (grouped(x, w) ** 2).sum(), argnums=1), xg, wg)
    wd = normal(rng, (3, 3, 1, 6))
    depthwise = lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=nhwc,
                                                      feature_group_count=6)
    export("conv2d_depthwise", depthwise, xg, wd)
    export("conv2d_depthwise_grads", jax.grad(lambda x, w: (depthwise(x, w) ** 2).sum(), argnums=(0, 1)), xg, wd)
    export("conv1d_bf16",
           lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC"),
                                                 preferred_element_type=jnp.float32),
           normal(rng, (2, 16, 4)).astype(jnp.bfloat16), normal(rng, (5, 4, 8)).astype(jnp.bfloat16))

    # --- pooling and its gradients (select-and-scatter for max) ---
    xp = normal(rng, (2, 8, 8, 3))
    maxpool = lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    avgpool = lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
    export("maxpool", maxpool, xp)
    export("maxpool_grad_overlapping", jax.grad(lambda x: (maxpool(x) ** 2).sum()), xp)
    export("avgpool_grad", jax.grad(lambda x: (jnp.sin(avgpool(x))).sum()), xp)

    # --- top-k ---
    export("top_k_rows", lambda x: lax.top_k(x, 4), normal(rng, (6, 33)))
    export("top_k_int", lambda x: lax.top_k(x, 2), rng.integers(-50, 50, (3, 17)).astype(np.int32))

    # --- take_along_axis: integer-label cross-entropy and its gradient, MoE-style gating ---
    logits = normal(rng, (8, 10))
    labels = rng.integers(0, 10, (8,)).astype(np.int32)

    def xent(logits, labels):
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.take_along_axis(logp, labels[:, None], axis=-1).mean()
    export("xent_take_along_axis", xent, logits, labels)
    export("xent_take_along_axis_grad", jax.grad(xent), logits, labels)

    def gating(h, wg):
        scores = jax.nn.softmax(h @ wg, axis=-1)
        top, idx = lax.top_k(scores, 2)
        return top / top.sum(-1, keepdims=True), idx, jnp.take_along_axis(scores, idx, axis=-1)
    export("moe_gating", gating, normal(rng, (6, 8)), normal(rng, (8, 4)))
    export("batched_scatter_add",
           lambda b, i, u: jax.vmap(lambda bb, ii, uu: bb.at[ii].add(uu))(b, i, u),
           np.zeros((3, 5, 2), np.float32), rng.integers(0, 5, (3, 4)).astype(np.int32), normal(rng, (3, 4, 2)))

    # --- a bf16 transformer block (XLA's default excess precision applies) ---
    d, s, heads = 32, 8, 4

    def block(x, wq, wk, wv, wo, w1, w2, g):
        def ln(t):
            m = t.mean(-1, keepdims=True)
            v = ((t - m) ** 2).mean(-1, keepdims=True)
            return (t - m) * lax.rsqrt(v + 1e-5) * g
        h = ln(x)
        q = (h @ wq).reshape(s, heads, d // heads).transpose(1, 0, 2)
        k = (h @ wk).reshape(s, heads, d // heads).transpose(1, 0, 2)
        v = (h @ wv).reshape(s, heads, d // heads).transpose(1, 0, 2)
        att = jax.nn.softmax(q @ k.transpose(0, 2, 1) / float(np.sqrt(d // heads)), axis=-1)
        o = (att @ v).transpose(1, 0, 2).reshape(s, d) @ wo
        x = x + o
        return x + jax.nn.gelu(ln(x) @ w1) @ w2
    bf = lambda *shape: (normal(rng, shape) * 0.3).astype(jnp.bfloat16)
    export("transformer_block_bf16", block, bf(s, d), bf(d, d), bf(d, d), bf(d, d), bf(d, d), bf(d, 2 * d),
           bf(2 * d, d), bf(d))

    # --- opcodes JAX emits for common models (the audit) ---
    xa = normal(rng, (4, 8))
    ia = rng.integers(-(2 ** 31), 2 ** 31 - 1, (4, 8), dtype=np.int64).astype(np.int32)
    export("elementwise_audit",
           lambda x, i: (jnp.cbrt(x), lax.erf(x), lax.clz(i), lax.population_count(i), jnp.round(x * 3.0),
                         lax.reduce_precision(x, exponent_bits=8, mantissa_bits=7), jnp.sign(x), jnp.expm1(x),
                         jnp.log1p(jnp.abs(x)), lax.is_finite(x / (x - x[0, 0]))),
           xa, ia)

    def rngs(k3, k4):
        a = lax.rng_bit_generator(k3, (2, 8), dtype=jnp.uint32, algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
        b = lax.rng_bit_generator(k4, (16,), dtype=jnp.uint32, algorithm=lax.RandomAlgorithm.RNG_PHILOX)
        return a[0], a[1], b[0], b[1]
    export("rng_bit_generator_algorithms", rngs, np.array([1, 2, 7, 9], np.uint32), np.array([3, 4, 5, 6], np.uint32))


if __name__ == "__main__":
    main()
