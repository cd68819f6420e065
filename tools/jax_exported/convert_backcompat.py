#!/usr/bin/env python3
"""Converts JAX's serialization back-compat data into testdata/jax_exported/backcompat/.

JAX (Apache-2.0) keeps real serialized `Exported`s of past serialization versions in
`jax/_src/internal_test_util/export_back_compat_test_data/export_with_*.py` (read by its
`tests/export_serialization_back_compat_test.py`); the `jax` wheel ships them. Each entry's
`exported_serialized` bytes are written unchanged as `FILE__vN[__K].jax_exported` (N its
serialization version, K a counter when a file has two entries of one version), and
`cases.json` lists them with their origin, and `NAME.io.json` holds the inputs and expected
outputs JAX's test gives each file's function (its global arrays: the harness splits them per
device by the module's shardings):

  export_with_specified_sharding, _unspecified_sharding  a = arange(64).reshape(16, 4); a * 2
  export_with_memory_space                                ones((2, 3)) on the host; the same
  export_with_multiple_meshes                             4 x arange(32).reshape(4, 8) and
                                                          4 x arange(16).reshape(8, 2); i @ w each

Usage: python3 tools/jax_exported/convert_backcompat.py JAX_DATA_DIR OUT_DIR
(JAX_DATA_DIR: .../site-packages/jax/_src/internal_test_util/export_back_compat_test_data).
The artifacts need only Python 3. When `jax` (with `flatbuffers`) is importable, each case also
gets `jax_reads`: what JAX's own deserializer reads from it (avals, platforms, nr_devices,
kept inputs, calling convention version), which the reader's test compares against.
"""
import json
import os
import sys

data_dir, out_dir = sys.argv[1], sys.argv[2]

try:
    from jax._src.export import serialization as _ser

    def jax_read(data):
        e = _ser.deserialize(bytearray(data))
        aval = lambda a: {"shape": list(a.shape), "dtype": str(a.dtype)}
        return {
            "function_name": e.fun_name,
            "in_avals": [aval(a) for a in e.in_avals],
            "out_avals": [aval(a) for a in e.out_avals],
            "nr_devices": e.nr_devices,
            "platforms": list(e.platforms),
            "module_kept_var_idx": list(e.module_kept_var_idx),
            "calling_convention_version": e.calling_convention_version,
            "in_shardings_hlo": [str(s) for s in e.in_shardings_hlo],
            "out_shardings_hlo": [str(s) for s in e.out_shardings_hlo],
        }
except ImportError:
    jax_read = None


def io_case(stem):
    """JAX's test inputs and expected outputs for a file's function (numpy only)."""
    def arr(n, shape, f=lambda x: x):
        return {"dtype": "f32", "shape": shape, "data": [f(float(x)) for x in range(n)]}
    if stem in ("export_with_specified_sharding", "export_with_unspecified_sharding"):
        return [arr(64, [16, 4])], [arr(64, [16, 4], lambda x: 2 * x)]
    if stem == "export_with_memory_space":
        return [arr(6, [2, 3], lambda x: 1.0)], [arr(6, [2, 3], lambda x: 1.0)]
    if stem == "export_with_multiple_meshes":
        i = [[float(r * 8 + c) for c in range(8)] for r in range(4)]
        w = [[float(r * 2 + c) for c in range(2)] for r in range(8)]
        iw = [sum(i[r][k] * w[k][c] for k in range(8)) for r in range(4) for c in range(2)]
        ins = [arr(32, [4, 8])] * 4 + [arr(16, [8, 2])] * 4
        return ins, [{"dtype": "f32", "shape": [4, 2], "data": iw}] * 4
    return None


os.makedirs(out_dir, exist_ok=True)
cases = []
for fname in sorted(os.listdir(data_dir)):
    if not (fname.startswith("export_with_") and fname.endswith(".py")):
        continue
    scope = {}
    exec(compile(open(os.path.join(data_dir, fname)).read(), fname, "exec"), scope)
    seen = {}
    for i, entry in enumerate(scope["serializations"]):
        v = entry["serialization_version"]
        seen[v] = seen.get(v, 0) + 1
        stem = fname[: -len(".py")]
        name = f"{stem}__v{v}" + (f"__{seen[v]}" if seen[v] > 1 else "")
        data = bytes(entry["exported_serialized"])
        with open(os.path.join(out_dir, name + ".jax_exported"), "wb") as f:
            f.write(data)
        io = io_case(stem)
        if io is not None:
            with open(os.path.join(out_dir, name + ".io.json"), "w") as f:
                json.dump({"inputs": io[0], "outputs": io[1]}, f)
                f.write("\n")
        cases.append({
            "name": name,
            "origin": {"file": "jax/_src/internal_test_util/export_back_compat_test_data/" + fname,
                       "entry": i},
            "serialization_version": v,
            "bytes": len(data),
        })
        if jax_read is not None:
            cases[-1]["jax_reads"] = jax_read(data)
with open(os.path.join(out_dir, "cases.json"), "w") as f:
    json.dump(cases, f, indent=1)
    f.write("\n")
print(f"{len(cases)} artifacts")
