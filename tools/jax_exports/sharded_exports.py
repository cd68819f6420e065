"""Programs for 2 devices under Shardy, exported with `jax.export` for CUDA in its three forms.

JAX lowers `jit` with `NamedSharding`s through Shardy: `sdy.mesh`, `sdy.sharding` on `main`'s
arguments and results, and `sdy.sharding_constraint` ops for `with_sharding_constraint`. In the
bytecode (`mlir_module_serialized`, and the serialized `Exported` holding it) those are Shardy
attributes in Shardy's bytecode encoding and an op of another dialect between VHLO casts. Writes
into testdata/jax_exported/sharded/ (or the folder given as the first argument), per case:
NAME.mlir (`mlir_module()`), NAME.mlirbc, NAME.jax_exported and NAME.io.json (the global inputs
and XLA:CPU's outputs; the harness splits them per device by the module's shardings).
Run: `XLA_FLAGS=--xla_force_host_platform_device_count=2 python3 tools/jax_exports/sharded_exports.py`
from the repository root (JAX 0.10.2, flatbuffers; deterministic).
"""
import os
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exported  # noqa: E402  (write: the three forms and the io file)

jax.config.update("jax_platforms", "cpu")
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "jax_exported", "sharded")
exported.OUT = OUT


def write(name, f, args, shardings):
    """`exported.write` (the three forms and the io file) on arguments placed on 2 devices."""
    exported.write(name, f, [jax.device_put(a, s) for a, s in zip(args, shardings)])


def main():
    assert len(jax.devices()) >= 2, "run with XLA_FLAGS=--xla_force_host_platform_device_count=2"
    os.makedirs(OUT, exist_ok=True)
    mesh = Mesh(np.array(jax.devices()[:2]), ("x",))
    rows, cols = NamedSharding(mesh, P("x", None)), NamedSharding(mesh, P(None, "x"))
    a = np.arange(64, dtype=np.float32).reshape(8, 8) / 16

    def constraint(a):
        b = jax.lax.with_sharding_constraint(jnp.sin(a) * 2, cols)
        return b.sum(0), b
    write("sharding_constraint", constraint, [a], [rows])

    w = (np.arange(32, dtype=np.float32).reshape(8, 4) - 16) / 32

    def mlp(a, w):
        return jnp.tanh(a @ w).mean(0)
    write("rows_times_replicated", mlp, [a, w], [rows, NamedSharding(mesh, P())])


if __name__ == "__main__":
    main()
