"""The five workloads of issue 32 for `aot bench`'s workloads section, with XLA:CPU's times,
from JAX 0.10.2 (XLA:CPU). The same mechanism as tools/xla_cpu_times.py (the scale section).

Writes into testdata/bench/workloads/ (or the folder given as the first argument):
  NAME.hlo              the unoptimized HLO, as `jax.jit(f).lower(*args).as_text(dialect="hlo")`
                        prints it (the module `aot bench` compiles and runs on the emulated GPU)
  xla_cpu_times.json    per module: XLA:CPU's execution time (median and best of REPS runs of the
                        jitted function, after warm-up, `block_until_ready`), the sum and the sum
                        of absolute values of every output (the bench's sanity check), and for
                        integer parameters the modulus of their formula; plus the date, the JAX
                        version and the machine.

The inputs are not stored (the MLP's weights alone are 16 MB): both sides build them from the
same formulas, `inputs()` here and `workload_input` in harness/src/bench/workloads.rs:
element i of f32 parameter p is ((i * (7 + 2p)) mod 13 - 6) / 16 (the scale section's formula),
element i of s32 parameter p is (i * 7919) mod `int_modulus` (row indices of the scatter).

Run from the repository root: `/tmp/jaxenv/bin/python tools/bench_workloads.py` (needs jax and
numpy; the bench itself never runs Python). Times depend on the machine and its load: rerun on the
machine whose bench you read, and keep the table's date and machine with the numbers.
"""
import datetime
import json
import os
import platform
import sys
import time

import numpy as np
import jax
import jax.numpy as jnp

# XLA:CPU unless a caller (tools/gpu_bench.py) names another platform before importing this.
jax.config.update("jax_platforms", os.environ.get("BENCH_JAX_PLATFORM", "cpu"))

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "bench", "workloads")
REPS = 30
VOCAB_ROWS = 8192


def inputs(specs, modulus):
    out = []
    for p, (shape, dtype) in enumerate(specs):
        n = int(np.prod(shape))
        i = np.arange(n, dtype=np.int64)
        if dtype == "s32":
            v = ((i * 7919) % modulus).astype(np.int32)
        else:
            v = (((i * (7 + 2 * p)) % 13) - 6).astype(np.float32) / 16.0
        out.append(v.reshape(shape))
    return out


def conv_net(x, w1, w2):
    # NHWC, HWIO: 3x3 SAME convolutions 16 -> 32 (stride 1) -> 32 (stride 2), ReLU, mean.
    dn = ("NHWC", "HWIO", "NHWC")
    y = jax.lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=dn)
    y = jax.nn.relu(y)
    y = jax.lax.conv_general_dilated(y, w2, (2, 2), "SAME", dimension_numbers=dn)
    return jnp.mean(jax.nn.relu(y))


def logsumexp(x):
    return jax.nn.logsumexp(x, axis=-1)


def attention(q, k, v):
    s = (q @ k.T) / np.float32(np.sqrt(q.shape[-1]))
    return jax.nn.softmax(s, axis=-1) @ v


def gelu_mlp(x, w1, w2):
    return jax.nn.gelu(x @ w1) @ w2


def embedding_grad(idx, g):
    return jnp.zeros((VOCAB_ROWS, g.shape[-1]), g.dtype).at[idx].add(g)


F32 = "f32"
CASES = [
    ("workload_conv_net", conv_net,
     [((8, 32, 32, 16), F32), ((3, 3, 16, 32), F32), ((3, 3, 32, 32), F32)], 1),
    ("workload_logsumexp_64x32000", logsumexp, [((64, 32000), F32)], 1),
    ("workload_attention_512x64", attention,
     [((512, 64), F32), ((512, 64), F32), ((512, 64), F32)], 1),
    ("workload_gelu_mlp_256x1024x2048", gelu_mlp,
     [((256, 1024), F32), ((1024, 2048), F32), ((2048, 1024), F32)], 1),
    ("workload_embedding_grad_4096x128", embedding_grad,
     [((4096,), "s32"), ((4096, 128), F32)], VOCAB_ROWS),
]


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    os.makedirs(OUT, exist_ok=True)
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "jax": jax.__version__,
        "machine": f"{cpu_model()}, {os.cpu_count()} cores",
        "reps": REPS,
        "modules": {},
    }
    for name, f, specs, modulus in CASES:
        args = [jnp.asarray(a) for a in inputs(specs, modulus)]
        lowered = jax.jit(f).lower(*args)
        with open(os.path.join(OUT, f"{name}.hlo"), "w") as fh:
            fh.write(lowered.as_text(dialect="hlo"))
        compiled = lowered.compile()
        for _ in range(3):
            jax.block_until_ready(compiled(*args))
        times = []
        for _ in range(REPS):
            t0 = time.perf_counter()
            out = jax.block_until_ready(compiled(*args))
            times.append(time.perf_counter() - t0)
        times.sort()
        leaves = [np.asarray(o, dtype=np.float64) for o in jax.tree_util.tree_leaves(out)]
        result["modules"][name] = {
            "median_ms": times[len(times) // 2] * 1e3,
            "best_ms": times[0] * 1e3,
            "int_modulus": modulus,
            "output_sum": float(sum(l.sum() for l in leaves)),
            "output_abs_sum": float(sum(np.abs(l).sum() for l in leaves)),
        }
        print(f"{name}: median {times[len(times) // 2] * 1e3:.3f} ms, best {times[0] * 1e3:.3f} ms")
    with open(os.path.join(OUT, "xla_cpu_times.json"), "w") as fh:
        json.dump(result, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main()
