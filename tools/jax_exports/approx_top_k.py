"""`jax.lax.approx_max_k` / `approx_min_k` exported for CUDA, for the `ApproxTopK` custom call.

JAX lowers them to `stablehlo.custom_call @ApproxTopK` with `is_fallback = true` on a GPU, and
XLA expands that while translating StableHLO (sort and slice, or a reduction for one result),
so the custom call reaches no runtime. Writes, per case, into testdata/approx_top_k/ (or the
folder given as the first argument):
  NAME.mlir     `jax.export.export(jax.jit(f), platforms=["cuda"])(*args).mlir_module()`
  NAME.mlirbc   its `mlir_module_serialized` (the portable artifact)
  NAME.io.json  the inputs and XLA:CPU's outputs (the same fallback), corpus io format
Inputs have no repeated values, so the order of equal keys (which an unstable sort leaves
open) never shows and the outputs compare exactly. Cases: rows and rank 1, max and min, k = 1
(the reduction), `aggregate_to_topk=False` (the approximate output size: 128 or 1024 wide),
`reduction_dimension=0`, `reduction_input_size_override`, `recall_target=1.0`, bf16.
Run: `python3 tools/jax_exports/approx_top_k.py` from the repository root (JAX 0.10.2).
"""
import json
import os
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax import export, lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402  (the io format)

jax.config.update("jax_platforms", "cpu")

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "approx_top_k")


def distinct(rng, shape, dtype=np.float32):
    """Distinct multiples of 1/4 (exact in bf16 below 64), in a random order."""
    count = int(np.prod(shape))
    return ((rng.permutation(count) - count // 2) / 4.0).astype(dtype).reshape(shape)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(32)
    cases = [
        ("max_k4_rows", lambda x: lax.approx_max_k(x, 4), distinct(rng, (2, 256))),
        ("min_k3_rank1", lambda x: lax.approx_min_k(x, 3), distinct(rng, (5000,))),
        ("max_k1_reduce", lambda x: lax.approx_max_k(x, 1), distinct(rng, (3, 300))),
        ("max_k1_rank1_approx", lambda x: lax.approx_max_k(x, 1, aggregate_to_topk=False),
         distinct(rng, (4096,))),
        ("max_k10_approx", lambda x: lax.approx_max_k(x, 10, recall_target=0.9,
                                                      aggregate_to_topk=False),
         distinct(rng, (2, 4096))),
        ("max_k5_dim0", lambda x: lax.approx_max_k(x, 5, reduction_dimension=0),
         distinct(rng, (700, 3))),
        ("max_k2_override", lambda x: lax.approx_max_k(x, 2, reduction_input_size_override=8192,
                                                       aggregate_to_topk=False),
         distinct(rng, (2, 2048))),
        ("min_k2_recall1", lambda x: lax.approx_min_k(x, 2, recall_target=1.0,
                                                      aggregate_to_topk=False),
         distinct(rng, (1, 3000))),
        ("max_k8_bf16", lambda x: lax.approx_max_k(x, 8),
         distinct(rng, (4, 128)).astype(jnp.bfloat16)),
    ]
    for name, f, x in cases:
        exported = export.export(jax.jit(f), platforms=["cuda"])(x)
        with open(os.path.join(OUT, f"{name}.mlir"), "w") as fh:
            fh.write(exported.mlir_module())
        with open(os.path.join(OUT, f"{name}.mlirbc"), "wb") as fh:
            fh.write(exported.mlir_module_serialized)
        outs = jax.tree_util.tree_leaves(jax.jit(f)(x))
        with open(os.path.join(OUT, f"{name}.io.json"), "w") as fh:
            json.dump({"inputs": [models.arr(x)],
                       "outputs": [models.arr(o) for o in outs]}, fh)
        print(name, [o.shape for o in outs])


if __name__ == "__main__":
    main()
