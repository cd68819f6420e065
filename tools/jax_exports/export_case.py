"""What the generators under tools/jax_exports/ share: an array in the corpus io format
(testdata/corpus/README.md) and one exported case written as `NAME.mlir`, `NAME.hlo` and
`NAME.io.json`.

Floats are written as exact decimal renderings of their stored value (f16/bf16/f32 through f32,
f64 as itself), non-finite values as "nan"/"inf"/"-inf"; integers and pred as integers; complex
arrays interleave real and imaginary parts.
"""
import json
import os

import jax
import numpy as np

DTYPES = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16",
          "complex64": "c64", "complex128": "c128", "int8": "s8", "int16": "s16", "int32": "s32",
          "int64": "s64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
          "bool": "pred"}


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
    if np.iscomplexobj(flat):
        data = [render(v) for z in flat.tolist() for v in (z.real, z.imag)]
    elif dt == "f64":
        data = [render(v) for v in flat.tolist()]
    elif dt in ("f32", "f16", "bf16"):
        data = [render(v) for v in flat.astype(np.float32).tolist()]
    else:
        data = [int(v) for v in flat.tolist()]
    return {"dtype": dt, "shape": list(x.shape), "data": data}


def export(out, name, f, *args, outputs=None):
    """Writes the case; `outputs` (the flattened expected outputs) defaults to XLA:CPU's."""
    lowered = jax.jit(f).lower(*args)
    with open(os.path.join(out, f"{name}.mlir"), "w") as fh:
        fh.write(lowered.as_text())
    with open(os.path.join(out, f"{name}.hlo"), "w") as fh:
        fh.write(lowered.as_text(dialect="hlo"))
    if outputs is None:
        outputs = jax.tree_util.tree_leaves(jax.jit(f)(*args))
    with open(os.path.join(out, f"{name}.io.json"), "w") as fh:
        json.dump({"inputs": [arr(a) for a in args], "outputs": [arr(o) for o in outputs]}, fh)
    return lowered
