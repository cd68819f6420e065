"""XLA:CPU's outputs for testdata/models/transformer_block_bf16 with excess precision off.

Runs tools/jax_exports/models.py with XLA_FLAGS=--xla_allow_excess_precision=false into a scratch
folder and keeps only that case's io file, as
testdata/precision/transformer_block_bf16.strict.io.json (same inputs; the outputs XLA computes
when every bf16 result is rounded). Tests hold the compiler's and the evaluator's
`allow_excess_precision = false` to it, and the default to testdata/models' io file.
Run: `python3 tools/jax_exports/strict_precision.py` from the repository root (deterministic).
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CASE = "transformer_block_bf16"

with tempfile.TemporaryDirectory() as scratch:
    env = dict(os.environ, XLA_FLAGS="--xla_allow_excess_precision=false")
    subprocess.run([sys.executable, os.path.join(HERE, "models.py"), scratch], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    os.makedirs(os.path.join("testdata", "precision"), exist_ok=True)
    shutil.copyfile(os.path.join(scratch, f"{CASE}.io.json"),
                    os.path.join("testdata", "precision", f"{CASE}.strict.io.json"))
print(f"testdata/precision/{CASE}.strict.io.json")
