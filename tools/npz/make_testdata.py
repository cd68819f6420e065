"""Writes testdata/npz/: the same io case as numpy archives (`np.savez`, stored, and
`np.savez_compressed`, deflated) and as io.json, so that harness/tests/npz.rs holds the npz
reader to the json reader on files numpy itself wrote. Needs numpy and ml_dtypes (bfloat16).

    python3 tools/npz/make_testdata.py testdata/npz
"""
import json
import os
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "jax_exports"))
from export_case import arr  # noqa: E402


def main(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(32)
    inputs = [
        rng.standard_normal((3, 4)).astype(np.float32),
        (rng.standard_normal(5) + 1j * rng.standard_normal(5)).astype(np.complex64),
        rng.standard_normal((2, 2)).astype(ml_dtypes.bfloat16),
        np.array([True, False, True]),
        np.array([-(2**63), 2**63 - 1], dtype=np.int64),
        np.float16(1.5).reshape(()),
    ]
    outputs = [np.arange(6, dtype=np.uint8).reshape(2, 3), np.array([np.nan, -np.inf], np.float64)]
    named = {f"input_{i}": a for i, a in enumerate(inputs)}
    named.update({f"output_{i}": a for i, a in enumerate(outputs)})
    np.savez(os.path.join(out, "case.io.npz"), **named)
    np.savez_compressed(os.path.join(out, "case_compressed.io.npz"), **named)
    with open(os.path.join(out, "case.io.json"), "w") as fh:
        json.dump({"inputs": [arr(a) for a in inputs], "outputs": [arr(o) for o in outputs]}, fh)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "testdata/npz")
