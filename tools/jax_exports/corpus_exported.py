"""The public corpus (testdata/corpus/hlo/*.mlir) as a JAX user would hand it over after
`jax.export` (issue 29): a StableHLO portable artifact and a serialized `Exported`.

The corpus holds each JAX function's lowered module, not the function, so each module is
serialized as `jax.export` serializes modules (`_jax.mlir.serialize_portable_artifact` at JAX's
4-week compatibility target) and wrapped in an `Exported` whose calling convention is the module's
own signature (flat inputs and outputs, platform `cuda`, every input kept): a template export of a
function with the same avals, with the module bytes and name replaced (`dataclasses.replace`),
then `Exported.serialize()`. The shapes and dtypes come from the corpus io files.

Writes, per case, into testdata/jax_exported/corpus/ (or the folder given as the first argument):
  NAME.mlirbc        the portable artifact of testdata/corpus/hlo/NAME.mlir
  NAME.jax_exported  the serialized Exported holding it

`harness/tests/models.rs` (suite `jax_exported_corpus`) runs both forms on both targets against
the corpus io files, next to the `.mlir`. Run: `python3 tools/jax_exports/corpus_exported.py`
from the repository root with JAX 0.10.2 (deterministic).
"""
import dataclasses
import glob
import json
import os
import sys

import jax

jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax import export  # noqa: E402
from jax._src.export import _export  # noqa: E402
from jax._src.interpreters import mlir  # noqa: E402
from jax._src.lib.mlir import ir  # noqa: E402

CORPUS = os.path.join("testdata", "corpus", "hlo")
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "jax_exported", "corpus")
DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
          "s8": np.int8, "s32": np.int32, "s64": np.int64, "u8": np.uint8, "u32": np.uint32,
          "pred": np.bool_}


def spec(a):
    return jax.ShapeDtypeStruct(tuple(a["shape"]), DTYPES[a["dtype"]])


def main():
    os.makedirs(OUT, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(CORPUS, "*.mlir"))):
        name = os.path.basename(path)[:-len(".mlir")]
        io = json.load(open(os.path.join(CORPUS, f"{name}.io.json")))
        ins = [spec(a) for a in io["inputs"]]
        outs = [spec(a) for a in io["outputs"]]
        single = len(outs) == 1

        def template(*args, outs=outs, single=single):
            zeros = tuple(jnp.zeros(o.shape, o.dtype) for o in outs)
            return zeros[0] if single else zeros
        exp = export.export(jax.jit(template), platforms=["cuda"])(*ins)
        with mlir.make_ir_context():
            module = ir.Module.parse(open(path).read())
            serialized = _export._module_to_bytecode(module)
        exp = dataclasses.replace(exp, fun_name=name, mlir_module_serialized=serialized,
                                  module_kept_var_idx=tuple(range(len(ins))))
        with open(os.path.join(OUT, f"{name}.mlirbc"), "wb") as fh:
            fh.write(serialized)
        with open(os.path.join(OUT, f"{name}.jax_exported"), "wb") as fh:
            fh.write(exp.serialize())
        # JAX reads it back: the calling convention is intact.
        back = export.deserialize(bytearray(open(os.path.join(OUT, f"{name}.jax_exported"), "rb").read()))
        assert back.in_avals == exp.in_avals and back.out_avals == exp.out_avals
        print(name, len(serialized), "bytes")


if __name__ == "__main__":
    main()
