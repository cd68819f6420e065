"""Whole training and inference programs exported with `jax.export` for CUDA.

The model pieces (`exported.py`, `models.py`) test one construct each; these are the programs a
user exports whole: a pre-norm GPT block (16 tokens of 32, causal attention over 4 heads, GELU MLP), its Adam
training step (value_and_grad through it, 26 inputs, 25 outputs), a ResNet block's gradient
with training-mode batch norm, an LSTM as `lax.scan`, dropout with `jax.random` (ThreeFry),
per-example gradients (`vmap(grad)`), a Hessian-vector product (`jvp` of `grad`) and a
rematerialized (`jax.checkpoint`) MLP gradient. Weights are scaled so that activations stay
O(1): with unscaled ones the GPT block's outputs reach 86 and the fixed f32 tolerance
(1e-5 + 1e-4 |x|) measures XLA:CPU's own summation order (both XLA:CPU and this compiler are
2-3e-4 from an f64 reference there).

Writes, per case, into testdata/programs/ (or the folder given as the first argument), the
forms `exported.py` writes: NAME.jax_exported, NAME.mlirbc, NAME.mlir and NAME.io.json
(flattened inputs, XLA:CPU's flattened outputs). `harness/tests/models.rs` (suite `programs`)
runs every form on both targets.
Run: `python3 tools/jax_exports/programs.py` from the repository root with JAX 0.10.2 and
`flatbuffers` (deterministic: fixed seeds).
"""
import os
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exported  # noqa: E402  (write: the three forms and the io file)

jax.config.update("jax_platforms", "cpu")

exported.OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "programs")


def layernorm(x, g):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5) * g


def gpt_block(x, wq, wk, wv, wo, w1, w2, g1, g2):
    t = x.shape[0]
    h = layernorm(x, g1)
    heads = lambda y: y.reshape(t, 4, 8).transpose(1, 0, 2)  # noqa: E731
    q, k, v = heads(h @ wq), heads(h @ wk), heads(h @ wv)
    s = jnp.einsum("htd,hsd->hts", q, k) / np.sqrt(8.0).astype(np.float32)
    s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -1e9)
    o = jnp.einsum("hts,hsd->htd", jax.nn.softmax(s, -1), v).transpose(1, 0, 2).reshape(t, 32)
    x = x + o @ wo
    return x + jax.nn.gelu(layernorm(x, g2) @ w1) @ w2


def train_step(params, m, v, x, y):
    loss = lambda p: ((gpt_block(x, *p) - y) ** 2).mean()  # noqa: E731
    value, grads = jax.value_and_grad(loss)(params)
    m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
    v = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
    params = jax.tree.map(lambda p, m, v: p - 1e-3 * m / (jnp.sqrt(v) + 1e-8), params, m, v)
    return value, params, m, v


def resnet_block(x, w, gamma, beta):
    h = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    mean, var = h.mean((0, 1, 2)), h.var((0, 1, 2))
    return jax.nn.relu((h - mean) * lax.rsqrt(var + 1e-5) * gamma + beta) + x


def lstm(xs, wx, wh, b):
    def cell(carry, x):
        h, c = carry
        i, f, o, g = jnp.split(x @ wx + h @ wh + b, 4, -1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h
    (_, c), hs = lax.scan(cell, (jnp.zeros((4, 16)), jnp.zeros((4, 16))), xs)
    return hs.sum(0), c


def dropout_mlp(key, x, w):
    keep = jax.random.bernoulli(jax.random.wrap_key_data(key), 0.8, x.shape)
    return jnp.where(keep, x / 0.8, 0) @ w


def main():
    os.makedirs(exported.OUT, exist_ok=True)
    rng = np.random.default_rng(51)
    n = lambda *s, scale=1.0: (rng.standard_normal(s) * scale).astype(np.float32)  # noqa: E731
    shapes = [(32, 32)] * 4 + [(32, 64), (64, 32)]
    params = [n(*s, scale=0.15) for s in shapes] + [np.ones(32, np.float32)] * 2
    zeros = [np.zeros_like(p) for p in params]
    x, y = n(16, 32), n(16, 32)
    exported.write("gpt_block", gpt_block, (x, *params))
    exported.write("gpt_train_step", train_step, (params, zeros, zeros, x, y))
    exported.write(
        "resnet_block_grad",
        lambda x, w, g, b: jax.grad(lambda *p: resnet_block(x, *p).sum(), argnums=(0, 1, 2))(w, g, b),
        (n(2, 8, 8, 8), n(3, 3, 8, 8, scale=0.2), np.ones(8, np.float32), np.zeros(8, np.float32)))
    exported.write("lstm_scan", lstm, (n(20, 4, 8), n(8, 64, scale=0.3), n(16, 64, scale=0.3), n(64)))
    exported.write("dropout_mlp", dropout_mlp, (np.array([0, 7], np.uint32), n(16, 32), n(32, 8)))
    per_example = jax.vmap(jax.grad(lambda w, x, y: ((jnp.tanh(x @ w) - y) ** 2).sum()), (None, 0, 0))
    exported.write("per_example_grads", per_example, (n(8, 4), n(16, 8), n(16, 4)))
    hvp = lambda w, v: jax.jvp(jax.grad(lambda w: jnp.sum(jnp.sin(w) ** 3)), (w,), (v,))[1]  # noqa: E731
    exported.write("hessian_vector_product", hvp, (n(30), n(30)))
    remat = jax.grad(lambda w, x: jax.checkpoint(lambda w: jnp.tanh(x @ w).sum())(w))
    exported.write("remat_mlp_grad", remat, (n(16, 16), n(4, 16)))


if __name__ == "__main__":
    main()
