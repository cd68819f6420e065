"""Golden cases exported from JAX 0.10.2 (jaxlib 0.10.2, XLA:CPU) for goldens/cases/.

Writes, per case, NAME.hlo (`jax.jit(f).lower(*args).as_text(dialect="hlo")`) and NAME.io.json
(the inputs and XLA:CPU's outputs, in the corpus io format) into goldens/cases/ (or the folder
given as the first argument). Run from the repository root: `python3 tools/jax_exports/golden_cases.py`.

- cond_reduce: a `lax.cond` whose taken branch holds a reduction. The compiler turns
  conditionals with cheap branches into selects (compiler/src/passes/cond_select.rs); this one
  stays a conditional thunk, so the newest golden versions keep pinning that thunk kind.
"""
import json
import os
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

jax.config.update("jax_platforms", "cpu")

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("goldens", "cases")
DTYPES = {"float32": "f32", "int32": "s32", "bool": "pred"}


def arr(x):
    x = np.asarray(x)
    dt = DTYPES[str(x.dtype)]
    flat = x.reshape(-1)
    if dt == "f32":
        data = [float(v) for v in flat.tolist()]
    else:
        data = [int(v) for v in flat.tolist()]
    return {"dtype": dt, "shape": list(x.shape), "data": data}


def export(name, f, *args):
    lowered = jax.jit(f).lower(*args)
    with open(os.path.join(OUT, f"{name}.hlo"), "w") as fh:
        fh.write(lowered.as_text(dialect="hlo"))
    outs = jax.tree_util.tree_leaves(jax.jit(f)(*args))
    with open(os.path.join(OUT, f"{name}.io.json"), "w") as fh:
        json.dump({"inputs": [arr(a) for a in args], "outputs": [arr(o) for o in outs]}, fh)
    print(name)


def main():
    os.makedirs(OUT, exist_ok=True)
    x = np.array([0.5, -1.25, 2.0, 3.5, -0.75, 4.0], dtype=np.float32)
    export("cond_reduce",
           lambda p, x: lax.cond(p > 0, lambda x: x - jnp.sum(x) / x.shape[0], lambda x: x * 2.0, x),
           np.int32(3), x)


if __name__ == "__main__":
    main()
