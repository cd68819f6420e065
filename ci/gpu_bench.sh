#!/usr/bin/env bash
# GPU bench: `aot`'s kernels against XLA:GPU's on the same GPU (budget: <= 3 minutes on an H100
# or H200). Needs a CUDA JAX (jax + the CUDA plugin) and numpy on the machine.
#
#  1. tools/gpu_bench.py lowers the modules of `aot bench`'s scale and workloads sections with JAX,
#     times XLA:GPU on them (median of 50 after warm-up) and writes each module's HLO with its
#     inputs and XLA:GPU's outputs (.io.npz);
#  2. `xla_compile` compiles each HLO for the GPU's target config, and `aot run --device cuda
#     --repeat 50 --format json` runs it: verdict against XLA:GPU's outputs and the median
#     execution time;
#  3. prints one table: module, XLA:GPU ms, aot ms, ratio (aot / XLA:GPU), aot's kernel time
#     (the sum of `--profile`'s kernel launch times; gemm thunks run in cuBLAS and are not in it),
#     verdict; and the geometric mean of the ratios.
#
# The two sides time different things, and the table says so: XLA:GPU's median is a call of the
# compiled function on arguments already on the GPU; `aot run`'s is a whole execution from host
# bytes to host bytes (allocation, the inputs' copies in, the outputs' copies out). The kernels
# column is aot's device time alone.
#
# Exit status: 0 when every module matches XLA:GPU's outputs, 1 otherwise (times are reported,
# not judged: a timing gate on a shared machine would cry wolf).
set -u
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target-gpu}"
if [ -z "${AOT_BIN:-}" ] || [ -z "${XLA_COMPILE_BIN:-}" ]; then
  cargo build --release -q -p harness -p compiler --bin aot --bin xla_compile || { echo "build failed"; exit 1; }
fi
AOT="${AOT_BIN:-$CARGO_TARGET_DIR/release/aot}"
XLA_COMPILE="${XLA_COMPILE_BIN:-$CARGO_TARGET_DIR/release/xla_compile}"
PY="${PYTHON:-python3}"
if [ -z "${AOT_TARGET:-}" ]; then
  case "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" in
    *H200*) AOT_TARGET=h200 ;; *H100*PCIe*) AOT_TARGET=h100_pcie ;; *A100*) AOT_TARGET=a100_sxm_80 ;;
    *) AOT_TARGET=h100_sxm ;;
  esac
fi
SPEC="testdata/target_specs/$AOT_TARGET.txtpb"
WORK="${GPU_BENCH_DIR:-$(mktemp -d)}"
mkdir -p "$WORK"
"$PY" tools/gpu_bench.py "$WORK" || { echo "tools/gpu_bench.py failed"; exit 1; }
"$PY" - "$AOT" "$XLA_COMPILE" "$SPEC" "$WORK" <<'PYEOF'
import json, math, os, subprocess, sys
aot, xla_compile, spec, work = sys.argv[1:5]
xla = json.load(open(f"{work}/xla_gpu_times.json"))
print(f"XLA:GPU: jax {xla['jax']} on {xla['gpu']}; aot: target {spec}")
print("| module | XLA:GPU ms | aot ms | aot / XLA:GPU | aot launches ms | verdict |")
print("| --- | ---: | ---: | ---: | ---: | --- |")
ratios, bad = [], 0
for name, t in xla["modules"].items():
    art = f"{work}/{name}.pb"
    c = subprocess.run([xla_compile, f"--module_file={work}/{name}.hlo", f"--output_file={art}",
                        "--platform=gpu", f"--gpu_target_config={spec}"], capture_output=True, text=True)
    if c.returncode != 0:
        print(f"| {name} | {t['median_ms']:.3f} | - | - | - | compile error: {c.stderr.strip().splitlines()[-1:]} |"); bad += 1; continue
    r = subprocess.run([aot, "run", art, "--target-config", spec, "--io", f"{work}/{name}.io.npz",
                        "--device", os.environ.get("AOT_DEVICE", "cuda"), "--repeat", os.environ.get("AOT_REPEAT", "50"), "--format", "json"],
                       capture_output=True, text=True, timeout=300)
    try:
        j = json.loads(r.stdout)
        ms = j["timing"]["execute_ms"]
    except Exception:
        print(f"| {name} | {t['median_ms']:.3f} | - | - | - | error: {(r.stdout + r.stderr).strip()[-200:]} |"); bad += 1; continue
    # Device time alone: every launch timed on its own (`--profile`, command buffers off).
    prof = subprocess.run([aot, "run", art, "--target-config", spec, "--io", f"{work}/{name}.io.npz",
                           "--device", os.environ.get("AOT_DEVICE", "cuda"), "--profile", "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    try:
        kernels_ms = sum(k["time_us"] for k in json.loads(prof.stdout)["kernels"]) / 1e3
    except Exception:
        kernels_ms = float("nan")
    verdict = "match" if r.returncode == 0 else f"MISMATCH (exit {r.returncode})"
    bad += r.returncode != 0
    ratio = ms / t["median_ms"]
    ratios.append(ratio)
    print(f"| {name} | {t['median_ms']:.3f} | {ms:.3f} | {ratio:.2f}x | {kernels_ms:.3f} | {verdict} |")
if ratios:
    print(f"geomean aot / XLA:GPU: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}x over {len(ratios)} modules")
sys.exit(1 if bad else 0)
PYEOF
