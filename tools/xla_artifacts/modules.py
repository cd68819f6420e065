"""JAX modules for XLA:GPU's own executables that the public corpus (testdata/corpus/hlo) lacks:
convolutions, which XLA:GPU runs as `convolution_thunk`s (cuDNN) rather than kernels.

Writes testdata/xla_gpu/modules/NAME.{mlir,hlo,io.json} (the io file holds XLA:CPU's outputs, in
the corpus io format), which tools/xla_artifacts/ptx_dump.py compiles with real XLA:GPU like a
corpus module:

  python3 tools/xla_artifacts/modules.py
  python3 tools/xla_artifacts/ptx_dump.py testdata/xla_gpu conv_nhwc conv_grads

Needs jax==0.10.2 and jaxlib==0.10.2 (XLA:CPU computes the outputs).
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "jax_exports"))
from export_case import export  # noqa: E402

OUT = os.path.join(ROOT, "testdata", "xla_gpu", "modules")
NHWC = ("NHWC", "HWIO", "NHWC")


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=NHWC)


def conv_grads(x, w):
    """The loss's gradients: XLA:GPU's conv rewriter makes a BACKWARD_DATA and a
    BACKWARD_FILTER convolution of them (and the forward one)."""
    def loss(x, w):
        y = lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=NHWC)
        return jnp.sum(jnp.tanh(y))
    return jax.grad(loss, argnums=(0, 1))(x, w)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261204)
    x = rng.uniform(-1, 1, (2, 8, 8, 4)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 3, 4, 8)).astype(np.float32)
    export(OUT, "conv_nhwc", conv, x, w)
    export(OUT, "conv_grads", conv_grads, x, w)
    print("wrote", sorted(os.listdir(OUT)))


if __name__ == "__main__":
    main()
