"""Model pieces exported with `jax.export` for CUDA, in the three forms a JAX user may hand over.

Writes, per case, into testdata/jax_exported/models/ (or the folder given as the first argument):
  NAME.jax_exported  `jax.export.export(jax.jit(f), platforms=[...])(*args).serialize()`
  NAME.mlirbc        the same export's module, `exported.mlir_module_serialized` (a StableHLO
                     portable artifact: MLIR bytecode in the VHLO dialect)
  NAME.mlir          the same module as text, `exported.mlir_module()`
  NAME.io.json       the flattened inputs and XLA:CPU's flattened outputs, corpus io format
  NAME.module.io.json  when the module's own arguments differ from the calling convention's
                     inputs (a dropped input, a platform index): the same for the bare module
                     (`.mlir`, `.mlirbc`), whose arguments are the platform index then the kept
                     inputs

The platform is `cuda` (lowered without a GPU), except `multi_platform`, exported for
`cpu` and `cuda` (its module takes a platform index first). The cases cover the calling
convention: pytree inputs and outputs, an input the module drops (`module_kept_var_idx`),
keyword arguments. `harness/tests/models.rs` runs every form on both targets.
Run: `python3 tools/jax_exports/exported.py` from the repository root with JAX 0.10.2 and
`flatbuffers` (deterministic: fixed seeds).
"""
import json
import os
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax import export, lax

sys.path.insert(0, os.path.dirname(__file__))
from models import arr, normal  # noqa: E402

jax.config.update("jax_platforms", "cpu")

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "jax_exported", "models")


def write(name, f, args, kwargs=None, platforms=("cuda",), reference=None):
    """Exports f; the io file's outputs are XLA:CPU's of `reference` (default f), for a program
    XLA:CPU does not run as written (an algorithm only GPUs have) but computes the same as."""
    kwargs = kwargs or {}
    exp = export.export(jax.jit(f), platforms=list(platforms))(*args, **kwargs)
    with open(os.path.join(OUT, f"{name}.jax_exported"), "wb") as fh:
        fh.write(exp.serialize())
    with open(os.path.join(OUT, f"{name}.mlirbc"), "wb") as fh:
        fh.write(exp.mlir_module_serialized)
    with open(os.path.join(OUT, f"{name}.mlir"), "w") as fh:
        fh.write(exp.mlir_module())
    ins = jax.tree_util.tree_leaves((args, kwargs))
    outs = jax.tree_util.tree_leaves(jax.jit(reference or f)(*args, **kwargs))
    with open(os.path.join(OUT, f"{name}.io.json"), "w") as fh:
        json.dump({"inputs": [arr(a) for a in ins], "outputs": [arr(o) for o in outs]}, fh)
    module_ins = [ins[i] for i in exp.module_kept_var_idx]
    if len(exp.platforms) > 1:
        module_ins = [np.int32(list(exp.platforms).index("cuda"))] + module_ins
    if len(module_ins) != len(ins) or any(a is not b for a, b in zip(module_ins, ins)):
        with open(os.path.join(OUT, f"{name}.module.io.json"), "w") as fh:
            json.dump({"inputs": [arr(a) for a in module_ins], "outputs": [arr(o) for o in outs]}, fh)
    print(name, exp.module_kept_var_idx, exp.platforms)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(29)

    def mlp(params, x):
        for w, b in params:
            x = jax.nn.gelu(x @ w + b)
        return x
    params = [(normal(rng, (16, 32)), normal(rng, (32,))), (normal(rng, (32, 8)), normal(rng, (8,)))]
    write("mlp_pytree", mlp, (params, normal(rng, (4, 16))))

    def layernorm_softmax(x, scale):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        y = (x - m) * lax.rsqrt(v + 1e-5) * scale
        return {"probs": jax.nn.softmax(y, axis=-1), "logsumexp": jax.nn.logsumexp(y, axis=-1)}
    write("layernorm_softmax", layernorm_softmax, (normal(rng, (3, 10)), normal(rng, (10,))))

    nhwc = ("NHWC", "HWIO", "NHWC")
    write("conv_pool",
          lambda x, w: lax.reduce_window(jax.nn.relu(lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=nhwc)),
                                         -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
          (normal(rng, (2, 6, 6, 3)), normal(rng, (3, 3, 3, 4))))

    def unused_input(x, unused, y):
        return jnp.sin(x) * y
    write("unused_input", unused_input, (normal(rng, (5,)), normal(rng, (7, 2)), normal(rng, (5,))))

    def gather_scatter(table, idx, upd):
        g = jnp.take(table, idx, axis=0)
        return g, table.at[idx].add(upd)
    write("gather_scatter", gather_scatter,
          (normal(rng, (6, 3)), rng.integers(0, 6, (4,)).astype(np.int32), normal(rng, (4, 3))))

    def loop_sort(x):
        y = lax.fori_loop(0, 5, lambda i, v: v * 0.9 + jnp.cos(v), x)
        return lax.top_k(y, 3), jnp.argmax(y), jnp.cumsum(y)
    write("loop_topk", loop_sort, (normal(rng, (9,)),))

    write("kwargs_int", lambda a, *, k: (a * k + 3) // 2 % 7,
          (rng.integers(-20, 20, (4, 4)).astype(np.int32),), {"k": rng.integers(1, 5, (4,)).astype(np.int32)})

    write("multi_platform", lambda x: jnp.tanh(x) @ x.T, (normal(rng, (3, 4)),), platforms=("cpu", "cuda"))


if __name__ == "__main__":
    main()
