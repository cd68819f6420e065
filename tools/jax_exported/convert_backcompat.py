#!/usr/bin/env python3
"""Converts JAX's serialization back-compat data into testdata/jax_exported/backcompat/.

JAX (Apache-2.0) keeps real serialized `Exported`s of past serialization versions in
`jax/_src/internal_test_util/export_back_compat_test_data/export_with_*.py` (read by its
`tests/export_serialization_back_compat_test.py`); the `jax` wheel ships them. Each entry's
`exported_serialized` bytes are written unchanged as `FILE__vN[__K].jax_exported` (N its
serialization version, K a counter when a file has two entries of one version), and
`cases.json` lists them with their origin.

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
