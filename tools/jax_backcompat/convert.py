#!/usr/bin/env python3
"""Extract the CUDA data sets of JAX's GPU back-compat suite into testdata/jax_backcompat/.

JAX's `tests/export_back_compat_test.py` keeps, per stable GPU custom-call target, StableHLO
modules serialized by older JAX versions with the inputs and the outputs real GPUs gave
(`jax/_src/internal_test_util/export_back_compat_test_data/*.py`, shipped in the `jax` wheel).
This script turns every entry whose platform is 'cuda' into:

  NAME.mlir      mlir_module_text, byte for byte (UTF-8, nothing added)
  NAME.mlirbc    mlir_module_serialized, byte for byte (the portable-artifact bytecode)
  NAME.io.json   inputs and expected_outputs in this project's io format (hlo_eval/src/io/;
                 complex as c64/c128 with interleaved re, im)

and one manifest `cases.json` with, per case, its origin and the check JAX applies
(`CHECKS` below, transcribed from tests/export_back_compat_test.py).

Usage (needs only numpy):

  pip download --no-deps jax==0.10.2 -d /tmp/jax && cd /tmp/jax && unzip -q jax-*.whl
  python3 tools/jax_backcompat/convert.py /tmp/jax [--out testdata/jax_backcompat]

The argument is the unpacked wheel (the directory holding `jax/`) or the data directory itself.
"""
import argparse
import datetime
import json
import math
import os
import re
import runpy
import sys

import numpy as np

DATA_SUBDIR = os.path.join("jax", "_src", "internal_test_util", "export_back_compat_test_data")

# The files whose CUDA entries are taken (JAX's test reads these for platform 'cuda').
FILES = [
    "cuda_cholesky_solver_potrf.py",
    "cuda_eigh_cusolver_syev.py",
    "cuda_lu_cusolver_getrf.py",
    "cuda_lu_pivots_to_permutation.py",
    "cuda_qr_cusolver_geqrf.py",
    "cuda_svd_cusolver_gesvd.py",
    "cuda_threefry2x32.py",
    "cuda_tridiagonal_cusolver_sytrd.py",
    "cuda_tridiagonal_solve.py",
    "annotate_data_placement.py",
]

# The tolerances JAX's tests pass (tests/export_back_compat_test.py): most linear-algebra tests use
# these two dicts; run_one_test sets rtol=1e-7 when a test passes none, and an atol of None becomes
# JAX's per-dtype default (jax/_src/public_test_util.py _default_tolerance).
RTOL_LINALG = dict(f32=1e-3, f64=1e-5, c64=1e-3, c128=1e-5)
ATOL_LINALG = dict(f32=1e-4, f64=1e-12, c64=1e-4, c128=1e-12)
ATOL_EIGH = dict(f32=1e-2, f64=1e-10, c64=1e-2, c128=1e-10)
RUN_ONE_TEST_RTOL = 1e-7
DEFAULT_ATOL = dict(f32=1e-6, f64=1e-15, c64=1e-6, c128=1e-15, s32=0.0, u32=0.0)
EPS = dict(f32=float(np.finfo(np.float32).eps), f64=float(np.finfo(np.float64).eps))
EPS["c64"], EPS["c128"] = EPS["f32"], EPS["f64"]

# Per data file: JAX's test method and the check it applies. "allclose": run_one_test's
# assertAllClose(got, expected, rtol, atol) per output (atol None: the output's dtype default).
# "eigh": check_eigh_results; "svd": check_svd_results (both ignore the expected vectors).
CHECKS = {
    "cuda_cholesky_solver_potrf.py": ("test_gpu_cholesky_solver_potrf", "allclose", RTOL_LINALG, ATOL_LINALG),
    "cuda_eigh_cusolver_syev.py": ("test_gpu_eigh_solver_syev", "eigh", RTOL_LINALG, ATOL_EIGH),
    "cuda_lu_cusolver_getrf.py": ("test_cuda_lu_cusolver_getrf", "allclose", None, None),
    "cuda_lu_pivots_to_permutation.py": ("test_cuda_lu_pivots_to_permutation", "allclose", None, None),
    "cuda_qr_cusolver_geqrf.py": ("test_gpu_qr_solver_geqrf", "allclose", RTOL_LINALG, None),
    "cuda_svd_cusolver_gesvd.py": ("test_gpu_svd_solver_gesvd", "svd", None, None),
    "cuda_threefry2x32.py": ("test_cuda_threefry2x32", "allclose", None, None),
    "cuda_tridiagonal_cusolver_sytrd.py": ("test_gpu_tridiagonal_sytrd", "allclose", RTOL_LINALG, ATOL_LINALG),
    "cuda_tridiagonal_solve.py": ("test_gpu_tridiagonal_solve", "allclose", RTOL_LINALG, ATOL_LINALG),
    "annotate_data_placement.py": ("test_annotate_device_placement", "allclose", None, None),
}

IO_DTYPE = {
    "bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}


def io_float(x):
    """An exact decimal of a stored float (Python's repr of the exact f64 value); non-finite as the
    io format's strings."""
    f = float(x)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return f


def io_array(a):
    a = np.asarray(a)
    dtype = IO_DTYPE[a.dtype.name]
    flat = a.reshape(-1)
    if dtype in ("c64", "c128"):
        data = []
        for z in flat:
            data += [io_float(z.real), io_float(z.imag)]
    elif dtype in ("f16", "f32", "f64"):
        data = [io_float(x) for x in flat]
    elif dtype == "pred":
        data = [int(bool(x)) for x in flat]
    else:
        data = [int(x) for x in flat]
    return {"dtype": dtype, "shape": list(a.shape), "data": data}


def walk(obj, path):
    """Every data dict under `obj` (a dict of dicts, as JAX's load_testdata_nested walks it)."""
    if isinstance(obj, dict) and "testdata_version" in obj:
        yield path, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from walk(v, path + [k])
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from walk(v, path + [i])


def case_check(file, dtype, data):
    """The check JAX applies to this entry, with its tolerances resolved per output."""
    method, kind, rtol, atol = CHECKS[file]
    out_dtypes = [IO_DTYPE[np.asarray(o).dtype.name] for o in data["expected_outputs"]]
    check = {"jax_test": f"tests/export_back_compat_test.py::{method}", "kind": kind}
    if kind == "allclose":
        # assertAllClose: |got - want| <= atol + rtol * |want| elementwise (complex: modulus),
        # NaN equal to NaN, dtypes and shapes equal; rtol/atol the test's, else the defaults.
        check["outputs"] = [
            {
                "rtol": rtol[dtype] if rtol else RUN_ONE_TEST_RTOL,
                "atol": atol[dtype] if atol else DEFAULT_ATOL[o],
            }
            for o in out_dtypes
        ]
    elif kind == "eigh":
        # check_eigh_results(operand, (v, w)): ||I - V^H V||_F <= rtol,
        # ||A V - V diag(w)||_F <= rtol ||A||_F, allclose(w_expected, w, rtol, atol).
        n = data["expected_outputs"][0].shape[-1]
        np_dtype = np.asarray(data["expected_outputs"][0]).dtype
        operand = np.reshape(np.arange(n * n, dtype=np_dtype), (n, n))  # CompatTest.eigh_input
        operand = (operand + np.conj(np.swapaxes(operand, -1, -2))) / np_dtype.type(2)
        check.update(rtol=rtol[dtype], atol=atol[dtype], operand=io_array(operand.astype(np_dtype)))
    elif kind == "svd":
        # check_svd_results(input, (u, s, vh)) with full_matrices: backward error of
        # u[..., :k] diag(s) vh below 2 * tol, u^H u and vh^H vh allclose I with rtol = atol = tol,
        # tol = 80 * eps of the input dtype; the expected outputs are not compared.
        tol = 80 * EPS[dtype]
        check.update(tol=tol, reconstruction_tol=2 * tol, unitariness_tol=tol)
    return check


def case_name(stem, path):
    parts = [stem]
    for p in path:
        p = str(p)
        parts.append(p[len("data_"):] if p.startswith("data_") else p)
    return "__".join(parts)


def dtype_of(path, data):
    for p in reversed(path):
        if p in ("f32", "f64", "c64", "c128"):
            return p
    return IO_DTYPE[np.asarray(data["expected_outputs"][0]).dtype.name]


def jax_version(root):
    for p in (os.path.join(root, "jax", "version.py"),):
        if os.path.exists(p):
            m = re.search(r'^_version\s*=\s*"([^"]+)"', open(p).read(), re.M)
            if m:
                return m.group(1)
    return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", help="the unpacked jax wheel (holds jax/) or its export_back_compat_test_data dir")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "..", "testdata", "jax_backcompat"))
    args = ap.parse_args()

    if os.path.isdir(os.path.join(args.source, DATA_SUBDIR)):
        root, data_dir = args.source, os.path.join(args.source, DATA_SUBDIR)
    else:
        data_dir = args.source
        root = os.path.normpath(os.path.join(data_dir, *([".."] * 4)))
    version = jax_version(root)
    os.makedirs(args.out, exist_ok=True)

    cases = []
    for file in FILES:
        g = runpy.run_path(os.path.join(data_dir, file))
        stem = file[: -len(".py")]
        for var in sorted(k for k in g if k.startswith("data_")):
            for path, data in walk(g[var], [var]):
                if data["platform"] != "cuda":
                    continue
                if data["testdata_version"] != 1:
                    sys.exit(f"{file} {path}: testdata_version {data['testdata_version']} (this converter reads 1)")
                name = case_name(stem, path)
                dtype = dtype_of(path, data)
                text = data["mlir_module_text"].encode("utf-8")
                with open(os.path.join(args.out, f"{name}.mlir"), "wb") as f:
                    f.write(text)
                with open(os.path.join(args.out, f"{name}.mlirbc"), "wb") as f:
                    f.write(data["mlir_module_serialized"])
                io = {
                    "inputs": [io_array(a) for a in data["inputs"]],
                    "outputs": [io_array(a) for a in data["expected_outputs"]],
                }
                with open(os.path.join(args.out, f"{name}.io.json"), "w") as f:
                    json.dump(io, f)
                    f.write("\n")
                cases.append({
                    "name": name,
                    "origin": {
                        "file": f"{DATA_SUBDIR}/{file}".replace(os.sep, "/"),
                        "key": [str(p) for p in path],
                        "jax_version": version,
                        "serialized_date": data["serialized_date"].isoformat(),
                    },
                    "platform": data["platform"],
                    "custom_call_targets": list(data["custom_call_targets"]),
                    "nr_devices": data.get("nr_devices", 1),
                    "xla_call_module_version": data.get("xla_call_module_version"),
                    "dtype": dtype,
                    "check": case_check(file, dtype, data),
                })
    manifest = {
        "source": f"jax {version} wheel (PyPI), {DATA_SUBDIR.replace(os.sep, '/')}",
        "license": "Apache-2.0 (The JAX Authors)",
        "generator": "tools/jax_backcompat/convert.py",
        "cases": cases,
    }
    with open(os.path.join(args.out, "cases.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(f"{len(cases)} cases written to {os.path.normpath(args.out)}")


if __name__ == "__main__":
    main()
