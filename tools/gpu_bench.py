"""XLA:GPU's side of ci/gpu_bench.sh, on a machine with an NVIDIA GPU and a CUDA JAX.

For every module of `aot bench`'s scale and workloads sections (the CASES of
tools/xla_cpu_times.py and tools/bench_workloads.py, same functions, same input formulas) writes
into the folder given as the first argument:
  NAME.hlo       the unoptimized HLO JAX lowers the jitted function to (what `xla_compile` reads)
  NAME.io.npz    its inputs and XLA:GPU's outputs (`aot run --io` reads numpy archives)
  xla_gpu_times.json   per module: XLA:GPU's median and best execution time over REPS runs of the
                 compiled function after warm-up (`block_until_ready`), with the JAX version and
                 the GPU's name.

f32 matrix products run at "highest" precision (no TF32): `aot`'s gemms are f32, so both sides
compute the same thing and the outputs can be compared within the usual f32 tolerance.

GPU_BENCH_SET=large swaps the bench's modules (microseconds on an H100/H200, where fixed costs
dominate) for ones large enough to be bound by memory bandwidth or arithmetic (LARGE below:
hundreds of MB per module), so the two compilers' kernels are compared rather than their launch
and dispatch overheads.
"""
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("BENCH_JAX_PLATFORM", "cuda")
sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import bench_workloads  # noqa: E402
import xla_cpu_times  # noqa: E402

jax.config.update("jax_default_matmul_precision", "highest")
REPS = 50
F32 = "f32"


def layernorm(x):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5)


# Modules sized for the memory system and the SMs, not the launch path (GPU_BENCH_SET=large).
# Inputs follow bench_workloads.inputs's formula; each name says its shape.
LARGE = [
    ("large_elementwise_64m", lambda x: jnp.tanh(x * 1.5 + 0.25) * x, [((1 << 26,), F32)]),
    ("large_softmax_8192x8192", lambda x: jax.nn.softmax(x, axis=-1), [((8192, 8192), F32)]),
    ("large_row_sum_8192x16384", lambda x: jnp.sum(x, axis=1), [((8192, 16384), F32)]),
    ("large_col_sum_8192x16384", lambda x: jnp.sum(x, axis=0), [((8192, 16384), F32)]),
    ("large_layernorm_16384x4096", layernorm, [((16384, 4096), F32)]),
    ("large_transpose_8192x8192", lambda x: x.T * 2.0, [((8192, 8192), F32)]),
    ("large_logsumexp_1024x32000", lambda x: jax.nn.logsumexp(x, axis=-1), [((1024, 32000), F32)]),
    ("large_matmul_4096", lambda a, b: a @ b, [((4096, 4096), F32), ((4096, 4096), F32)]),
]


def cases():
    if os.environ.get("GPU_BENCH_SET") == "large":
        for name, f, specs in LARGE:
            yield name, f, bench_workloads.inputs(specs, 1)
        return
    for name, f, shapes in xla_cpu_times.CASES:
        yield name, f, xla_cpu_times.inputs(shapes)
    for name, f, specs, modulus in bench_workloads.CASES:
        yield name, f, bench_workloads.inputs(specs, modulus)


def gpu_name():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, check=False).stdout
        return out.strip().splitlines()[0]
    except (OSError, IndexError):
        return str(jax.devices()[0])


def main(out):
    os.makedirs(out, exist_ok=True)
    result = {"jax": jax.__version__, "gpu": gpu_name(), "reps": REPS, "modules": {}}
    for name, f, host in cases():
        args = [jax.device_put(a) for a in host]
        lowered = jax.jit(f).lower(*args)
        with open(os.path.join(out, f"{name}.hlo"), "w") as fh:
            fh.write(lowered.as_text(dialect="hlo"))
        compiled = lowered.compile()
        for _ in range(5):
            res = jax.block_until_ready(compiled(*args))
        times = []
        for _ in range(REPS):
            t0 = time.perf_counter()
            jax.block_until_ready(compiled(*args))
            times.append(time.perf_counter() - t0)
        times.sort()
        outs = [np.asarray(o) for o in jax.tree_util.tree_leaves(res)]
        named = {f"input_{i}": a for i, a in enumerate(host)}
        named.update({f"output_{i}": o for i, o in enumerate(outs)})
        np.savez(os.path.join(out, f"{name}.io.npz"), **named)
        result["modules"][name] = {"median_ms": times[len(times) // 2] * 1e3,
                                   "best_ms": times[0] * 1e3}
        print(f"{name}: XLA:GPU median {times[len(times) // 2] * 1e3:.3f} ms", file=sys.stderr)
    with open(os.path.join(out, "xla_gpu_times.json"), "w") as fh:
        json.dump(result, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
