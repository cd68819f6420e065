"""XLA:CPU reference times for `aot bench`'s scale table (issue 17), from JAX 0.10.2 (XLA:CPU).

Writes into testdata/bench/ (or the folder given as the first argument):
  NAME.hlo              the unoptimized HLO, as `jax.jit(f).lower(*args).as_text(dialect="hlo")`
                        prints it (the module `aot bench` compiles and runs on the emulated GPU)
  xla_cpu_times.json    per module: XLA:CPU's execution time (median and best of REPS runs of the
                        jitted function, after warm-up, `block_until_ready`), the sum and the sum of
                        absolute values of every output (for the bench's sanity check), plus the
                        date, the JAX version and the machine.

The inputs are not stored (1M-element JSON files would dwarf the repository): both sides build
them from the same formula, `inputs()` here and `scale_input` in harness/src/bench.rs:
element i of parameter p is ((i * (7 + 2p)) mod 13 - 6) / 16, row-major, in the parameter's type.

Run from the repository root: `python3 tools/xla_cpu_times.py` (needs only jax and numpy; the
bench itself never runs Python). Times depend on the machine and its load: rerun on the machine
whose bench you read, and keep the table's date and machine with the numbers.
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

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "bench")
REPS = 30


def inputs(shapes):
    out = []
    for p, shape in enumerate(shapes):
        n = int(np.prod(shape))
        i = np.arange(n, dtype=np.int64)
        v = (((i * (7 + 2 * p)) % 13) - 6).astype(np.float32) / 16.0
        out.append(v.reshape(shape))
    return out


def layer_norm(x):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(v + 1e-5)


def transformer(x, wq, wk, wv, wo, w1, w2):
    # Two layers sharing weights' shapes (separate weights per layer would only add parameters):
    # single-head attention with a 1/sqrt(d) scale, residuals, layer norm, a ReLU MLP of 4d.
    d = x.shape[-1]
    for _ in range(2):
        q, k, v = x @ wq, x @ wk, x @ wv
        a = jax.nn.softmax((q @ k.T) / np.float32(np.sqrt(d)), axis=-1)
        x = layer_norm(x + (a @ v) @ wo)
        x = layer_norm(x + jax.nn.relu(x @ w1) @ w2)
    return x


def chain(x):
    # Eight elementwise operations XLA fuses into one loop.
    y = x * 1.5 + 0.25
    y = jnp.tanh(y) * x
    y = jnp.maximum(y, -0.5) - x * 0.125
    return jnp.exp(-y * y) + y


CASES = [
    ("scale_matmul_512", lambda a, b: a @ b, [(512, 512), (512, 512)]),
    ("scale_elementwise_1m", chain, [(1 << 20,)]),
    ("scale_softmax_256x4096", lambda x: jax.nn.softmax(x, axis=-1), [(256, 4096)]),
    ("scale_transformer_2l", transformer,
     [(128, 256), (256, 256), (256, 256), (256, 256), (256, 256), (256, 1024), (1024, 256)]),
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
    for name, f, shapes in CASES:
        args = [jnp.asarray(a) for a in inputs(shapes)]
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
            "output_sum": float(sum(l.sum() for l in leaves)),
            "output_abs_sum": float(sum(np.abs(l).sum() for l in leaves)),
        }
        print(f"{name}: median {times[len(times) // 2] * 1e3:.3f} ms, best {times[0] * 1e3:.3f} ms")
    with open(os.path.join(OUT, "xla_cpu_times.json"), "w") as fh:
        json.dump(result, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main()
