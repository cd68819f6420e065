"""Multi-device JAX programs (issue 30): shard_map collectives and sharded `jit`, exported for
N = 2 and N = 4 devices, with XLA:CPU's results on N host devices.

Writes testdata/multidevice/n{N}/NAME.{mlir,hlo,io.json} (export_case.py's format: global inputs
and outputs, unsharded; the shardings are in the module) and NAME.xla_cpu.hlo, XLA:CPU's
partitioned, optimized module with metadata stripped, to compare the collectives a partitioner
inserts with XLA's.

Usage: XLA host devices are fixed at start-up, so run once with the largest N:
    python3 tools/jax_exports/multidevice.py testdata/multidevice
(needs jax==0.10.2, numpy; no GPU).
"""
import os
import re
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from export_case import export  # noqa: E402


def shard_map_cases(n, mesh):
    """shard_map bodies: each is already per-device; the edges slice and concatenate."""
    def smap(body, in_specs, out_specs, check_vma=True):
        return jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                             check_vma=check_vma)

    def psum(x):
        return jax.lax.psum(x * 2.0, "x") + 1.0

    def all_gather(x):
        return jax.lax.all_gather(jnp.sin(x), "x", axis=0, tiled=True)

    def ppermute(x):
        return jax.lax.ppermute(x + 1.0, "x", [(i, (i + 1) % n) for i in range(n)])

    def ppermute_partial(x):
        # Device 0 receives nothing: XLA's collective-permute gives it zeros.
        return jax.lax.ppermute(x, "x", [(i, i + 1) for i in range(n - 1)])

    def psum_scatter(x):
        return jax.lax.psum_scatter(x, "x", scatter_dimension=0, tiled=True)

    def axis_index(x):
        return x + jax.lax.axis_index("x").astype(jnp.float32)

    return [
        ("shard_map_psum", smap(psum, P("x"), P()), [(2 * n, 3)], [P("x")]),
        ("shard_map_all_gather", smap(all_gather, P("x"), P(), check_vma=False), [(2 * n, 3)], [P("x")]),
        ("shard_map_ppermute", smap(ppermute, P("x"), P("x")), [(2 * n, 3)], [P("x")]),
        ("shard_map_ppermute_partial", smap(ppermute_partial, P("x"), P("x")), [(2 * n, 2)],
         [P("x")]),
        ("shard_map_psum_scatter", smap(psum_scatter, P("x"), P("x")), [(n * n, 4)], [P("x")]),
        ("shard_map_axis_index", smap(axis_index, P("x"), P("x")), [(n, 5)], [P("x")]),
    ]


def mlp_step(w1, w2, x, y):
    """One SGD step of a 2-layer MLP: the batch is sharded, the weights replicated."""
    def loss(params):
        a, b = params
        h = jnp.tanh(x @ a)
        return jnp.mean((h @ b - y) ** 2)
    g1, g2 = jax.grad(loss)((w1, w2))
    return w1 - 0.1 * g1, w2 - 0.1 * g2


def tp_matmul(x, w):
    """Tensor parallel: the contracting dimension is sharded; the result is replicated."""
    return x @ w


def elementwise(x, y):
    return jnp.tanh(x) * y + 1.0


def reduce_sharded(x):
    return jnp.sum(x, axis=0), jnp.max(x, axis=1)


def jit_cases(n):
    """Sharded `jit`: (name, f, input shapes, input specs, output specs)."""
    return [
        ("jit_mlp_step", mlp_step, [(6, 8), (8, 2), (4 * n, 6), (4 * n, 2)],
         [P(), P(), P("x"), P("x")], (P(), P())),
        ("jit_tp_matmul", tp_matmul, [(4, 4 * n), (4 * n, 3)], [P(None, "x"), P("x", None)],
         P()),
        ("jit_elementwise", elementwise, [(2 * n, 5), (2 * n, 5)], [P("x"), P("x")], P("x")),
        ("jit_reduce", reduce_sharded, [(2 * n, 3)], [P("x")], (P(), P("x"))),
    ]


def strip_metadata(text):
    text = re.sub(r", metadata=\{[^}]*\}", "", text)
    head, _, rest = text.partition("\n\n")
    # The source-location tables (FileNames ... StackFrames) are noise for a comparison.
    return re.sub(r"FileNames\n.*?\n\n(?=%|ENTRY|\S+ \()", "", text, flags=re.S)


def write_case(out, name, f, shapes, specs, mesh, out_specs, rng):
    args = [jax.device_put(rng.standard_normal(s).astype(np.float32), NamedSharding(mesh, p))
            for s, p in zip(shapes, specs)]
    shard = jax.tree_util.tree_map(lambda p: NamedSharding(mesh, p), out_specs)
    jf = jax.jit(f, out_shardings=shard) if out_specs is not None else f
    lowered = export(out, name, jf, *args)
    with open(os.path.join(out, f"{name}.xla_cpu.hlo"), "w") as fh:
        fh.write(strip_metadata(lowered.compile().as_text()))


def main(root):
    for n in (2, 4):
        out = os.path.join(root, f"n{n}")
        os.makedirs(out, exist_ok=True)
        # Auto axes: the classic `jit` + NamedSharding program, whose shardings the partitioner
        # propagates (jax 0.10's make_mesh defaults to Explicit axes).
        mesh = jax.make_mesh((n,), ("x",), devices=jax.devices()[:n],
                             axis_types=(jax.sharding.AxisType.Auto,))
        rng = np.random.default_rng(30 + n)
        for name, f, shapes, specs in shard_map_cases(n, mesh):
            write_case(out, name, f, shapes, specs, mesh, None, rng)
        for name, f, shapes, specs, out_specs in jit_cases(n):
            write_case(out, name, f, shapes, specs, mesh, out_specs, rng)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "testdata/multidevice")
