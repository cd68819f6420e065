"""`bitcast-convert` that changes the element width (issue 31), exported from JAX 0.10.2
(jaxlib 0.10.2, XLA:CPU, x64 enabled).

`lax.bitcast_convert_type` to a narrower type adds a minor dimension of `wide / narrow` parts,
least significant first; to a wider type it joins the minor dimension. Each case round-trips or
mixes such casts (f32 <-> u8[4], f64 <-> u32[2], bf16 <-> u8[2], s16[2] -> f32, u8[8] -> s64) and
a hash-like use (a float's bytes summed).

Writes, per case, into testdata/bitcast/ (or the folder given as the first argument):
  NAME.hlo, NAME.mlir  the module, as `jax.jit(f).lower(*args).as_text(dialect=...)` prints it
  NAME.io.json         the inputs and XLA:CPU's outputs, in the corpus io format

Run: `python3 tools/jax_exports/bitcast.py` from the repository root (deterministic inputs).
"""
import os
import sys

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from export_case import export as write_case  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "bitcast")


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(31)
    x32 = np.concatenate([rng.standard_normal(10), [0.0, -0.0, np.inf, 1e-40, -3.5, 2.0 ** 100]]).astype(np.float32)
    write_case(OUT, "f32_bytes", lambda x: (lax.bitcast_convert_type(x, jnp.uint8),
                                   lax.bitcast_convert_type(lax.bitcast_convert_type(x, jnp.uint8) ^ jnp.uint8(1),
                                                            jnp.float32)), x32)
    x64 = rng.standard_normal((3, 4)).astype(np.float64)
    write_case(OUT, "f64_words", lambda x: (lax.bitcast_convert_type(x, jnp.uint32),
                                   lax.bitcast_convert_type(lax.bitcast_convert_type(x, jnp.uint32)[..., ::-1],
                                                            jnp.float64)), x64)
    xb = rng.standard_normal(12).astype(ml_dtypes.bfloat16)
    write_case(OUT, "bf16_bytes", lambda x: lax.bitcast_convert_type(x, jnp.uint8).astype(jnp.int32).sum(axis=-1), xb)
    s16 = rng.integers(-30000, 30000, size=(5, 2)).astype(np.int16)
    write_case(OUT, "s16_pairs_to_f32", lambda x: lax.bitcast_convert_type(x, jnp.float32), s16)
    u8 = rng.integers(0, 256, size=(4, 8)).astype(np.uint8)
    write_case(OUT, "u8_to_s64", lambda x: lax.bitcast_convert_type(x, jnp.int64), u8)


if __name__ == "__main__":
    main()
