#!/usr/bin/env bash
# GPU bench: `aot`'s kernels against XLA:GPU's on the same GPU (budget: <= 3 minutes on an H100
# or H200). Needs a CUDA JAX (jax + the CUDA plugin) and numpy on the machine.
#
#  1. tools/gpu_bench.py lowers the modules of `aot bench`'s scale and workloads sections with JAX,
#     times XLA:GPU on them (median of 50 after warm-up) and writes each module's HLO with its
#     inputs and XLA:GPU's outputs (.io.npz);
#  2. `xla_compile` compiles each HLO for the GPU's target config, and `aot run --device cuda
#     --repeat 50 --format json` runs it: verdict against XLA:GPU's outputs and the median
#     execution time, host to host and with `--resident-inputs`;
#  3. prints one table: module, XLA:GPU ms, aot ms host to host, aot ms with the inputs on the
#     device, the ratio of that to XLA:GPU, aot's kernel time (the sum of `--profile`'s kernel
#     launch times; gemm thunks run in cuBLAS and are not in it), verdict; and the geometric
#     means.
#
# XLA:GPU's median is a call of the compiled function on arguments already on the GPU, whose
# outputs stay there; `--resident-inputs` times the same thing on aot's side (inputs uploaded
# once, nothing read back). Host to host adds allocation and the copies in and out.
#
# GPU_BENCH_SET=large runs modules large enough to be bound by bandwidth or arithmetic instead
# (tools/gpu_bench.py's LARGE: 256 MB to 512 MB per input), to compare the kernels themselves.
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
device = os.environ.get("AOT_DEVICE", "cuda")
repeat = os.environ.get("AOT_REPEAT", "50")
xla = json.load(open(f"{work}/xla_gpu_times.json"))
print(f"XLA:GPU: jax {xla['jax']} on {xla['gpu']}; aot: target {spec}")
print("| module | XLA:GPU ms | aot ms, host to host | aot ms, inputs on device | device / XLA:GPU | aot launches ms | verdict |")
print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")

def aot_run(art, name, *extra):
    r = subprocess.run([aot, "run", art, "--target-config", spec, "--io", f"{work}/{name}.io.npz",
                        "--device", device, "--format", "json", *extra],
                       capture_output=True, text=True, timeout=300)
    try:
        return r.returncode, json.loads(r.stdout), ""
    except ValueError:
        return r.returncode, None, (r.stdout + r.stderr).strip()[-200:]

host_ratios, device_ratios, bad = [], [], 0
for name, t in xla["modules"].items():
    art = f"{work}/{name}.pb"
    c = subprocess.run([xla_compile, f"--module_file={work}/{name}.hlo", f"--output_file={art}",
                        "--platform=gpu", f"--gpu_target_config={spec}"], capture_output=True, text=True)
    if c.returncode != 0:
        print(f"| {name} | {t['median_ms']:.3f} | - | - | - | - | compile error: {c.stderr.strip().splitlines()[-1:]} |"); bad += 1; continue
    code, host, err = aot_run(art, name, "--repeat", repeat)
    _, resident, err2 = aot_run(art, name, "--repeat", repeat, "--resident-inputs")
    # Device time alone: every launch timed on its own (`--profile`, command buffers off).
    _, prof, _ = aot_run(art, name, "--profile")
    if host is None or resident is None:
        print(f"| {name} | {t['median_ms']:.3f} | - | - | - | - | error: {err or err2} |"); bad += 1; continue
    host_ms = host["timing"]["execute_ms"]
    dev_ms = resident["timing"]["execute_ms"]
    launches = sum(k["time_us"] for k in (prof or {}).get("kernels", [])) / 1e3
    verdict = "match" if code == 0 else f"MISMATCH (exit {code})"
    bad += code != 0
    host_ratios.append(host_ms / t["median_ms"])
    device_ratios.append(dev_ms / t["median_ms"])
    print(f"| {name} | {t['median_ms']:.3f} | {host_ms:.3f} | {dev_ms:.3f} | {dev_ms / t['median_ms']:.2f}x | {launches:.3f} | {verdict} |")
geo = lambda r: math.exp(sum(map(math.log, r)) / len(r))
if device_ratios:
    print(f"geomean aot / XLA:GPU over {len(device_ratios)} modules: {geo(device_ratios):.2f}x with inputs on the device, {geo(host_ratios):.2f}x host to host")
sys.exit(1 if bad else 0)
PYEOF
