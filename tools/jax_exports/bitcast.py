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
import json
import os
import sys

import jax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "bitcast")
DTYPES = {"float64": "f64", "float32": "f32", "bfloat16": "bf16", "uint8": "u8", "uint32": "u32",
          "int16": "s16", "int64": "s64", "int32": "s32"}


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
    if dt in ("f64", "f32", "bf16"):
        data = [render(v) for v in flat.astype(np.float64).tolist()]
    else:
        data = [int(v) for v in flat.tolist()]
    return {"dtype": dt, "shape": list(x.shape), "data": data}


def export(name, f, *args):
    lowered = jax.jit(f).lower(*args)
    with open(os.path.join(OUT, f"{name}.mlir"), "w") as fh:
        fh.write(lowered.as_text())
    with open(os.path.join(OUT, f"{name}.hlo"), "w") as fh:
        fh.write(lowered.as_text(dialect="hlo"))
    outs = jax.tree_util.tree_leaves(jax.jit(f)(*args))
    with open(os.path.join(OUT, f"{name}.io.json"), "w") as fh:
        json.dump({"inputs": [arr(a) for a in args], "outputs": [arr(o) for o in outs]}, fh)
    print(name)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(31)
    x32 = np.concatenate([rng.standard_normal(10), [0.0, -0.0, np.inf, 1e-40, -3.5, 2.0 ** 100]]).astype(np.float32)
    export("f32_bytes", lambda x: (lax.bitcast_convert_type(x, jnp.uint8),
                                   lax.bitcast_convert_type(lax.bitcast_convert_type(x, jnp.uint8) ^ jnp.uint8(1),
                                                            jnp.float32)), x32)
    x64 = rng.standard_normal((3, 4)).astype(np.float64)
    export("f64_words", lambda x: (lax.bitcast_convert_type(x, jnp.uint32),
                                   lax.bitcast_convert_type(lax.bitcast_convert_type(x, jnp.uint32)[..., ::-1],
                                                            jnp.float64)), x64)
    xb = rng.standard_normal(12).astype(ml_dtypes.bfloat16)
    export("bf16_bytes", lambda x: lax.bitcast_convert_type(x, jnp.uint8).astype(jnp.int32).sum(axis=-1), xb)
    s16 = rng.integers(-30000, 30000, size=(5, 2)).astype(np.int16)
    export("s16_pairs_to_f32", lambda x: lax.bitcast_convert_type(x, jnp.float32), s16)
    u8 = rng.integers(0, 256, size=(4, 8)).astype(np.uint8)
    export("u8_to_s64", lambda x: lax.bitcast_convert_type(x, jnp.int64), u8)


if __name__ == "__main__":
    main()
