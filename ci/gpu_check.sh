#!/usr/bin/env bash
# GPU check: run on a machine with an NVIDIA GPU (budget: <= 6 minutes on an H100 or H200).
#
#  1. builds `aot` (release);
#  2. picks the target config that matches the GPU (h100_sxm / h200 / a100_sxm_80 by name, or
#     $AOT_TARGET), compiles every corpus module for it with `aot check-hlo`'s compiler, and runs
#     each artifact twice with `aot run`: on the CUDA device (PTX JIT-compiled by the driver) and
#     on the emulated device, both compared with the corpus io file;
#  3. prints a table (case, emulated verdict, CUDA verdict, CUDA wall time) and a summary;
#  4. reports the achieved memory bandwidth of the largest elementwise kernel launch on the GPU
#     (bytes of its argument slices / host-measured time of the synchronous launch);
#  5. compiles testdata/fft with --after_staged_flips (FFT thunks: cuFFT on CUDA) and runs it on
#     both devices; runs XLA:GPU's own executables (testdata/xla_gpu) with XLA's PTX on the GPU;
#  6. replays the golden store's newest version and newest hand-written cases (the convolution,
#     FFT, FFI and memset thunks among them) on the GPU against their recorded outputs.
#
# Every `aot` call is bounded by $AOT_CALL_SECS (60); the corpus loop stops at $CORPUS_SECS (150)
# and the golden replay at $TOTAL_SECS (300) after the start. On the device tool, only the
# goldens named above need to travel (the store is larger than one call carries).
#
# Exit status: 0 when every case matches on both devices, 1 otherwise.
set -u
cd "$(dirname "$0")/.."

T0=$(date +%s)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target-gpu}"
# A CUDA toolkit's ptxas and libcublas, where the machine has them outside the default paths.
for d in /usr/local/cuda/bin; do [ -d "$d" ] && PATH="$PATH:$d"; done
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
done
export PATH LD_LIBRARY_PATH
echo "driver: $(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>&1 | head -1)"
echo "ptxas: $( (ptxas --version 2>&1 || echo none) | tail -1)"
echo "libcublas: $(ls /usr/local/cuda/lib64/libcublas.so* 2>/dev/null | head -1 || true)"
# Each `aot` call gets this many seconds: a hang is a failure, not a stuck check.
CALL_SECS="${AOT_CALL_SECS:-60}"
# AOT_BIN / XLA_COMPILE_BIN: use prebuilt binaries instead of building.
if [ -z "${AOT_BIN:-}" ] || [ -z "${XLA_COMPILE_BIN:-}" ]; then
  cargo build --release -q -p harness -p compiler --bin aot --bin xla_compile || { echo "build failed"; exit 1; }
fi
AOT="${AOT_BIN:-$CARGO_TARGET_DIR/release/aot}"
XLA_COMPILE="${XLA_COMPILE_BIN:-$CARGO_TARGET_DIR/release/xla_compile}"

if [ -z "${AOT_TARGET:-}" ]; then
  GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  case "$GPU" in
    *H200*) AOT_TARGET=h200 ;;
    *H100*PCIe*) AOT_TARGET=h100_pcie ;;
    *H100*) AOT_TARGET=h100_sxm ;;
    *A100*) AOT_TARGET=a100_sxm_80 ;;
    *) AOT_TARGET=h100_sxm ;;
  esac
  echo "GPU: ${GPU:-unknown} -> target $AOT_TARGET"
fi
SPEC="testdata/target_specs/$AOT_TARGET.txtpb"
# With ptxas available the artifacts embed cubins (xla_compile --cubin), so the CUDA device loads
# SASS without JIT, as XLA does; AOT_CUBIN=0 tests the PTX JIT path instead.
CUBIN=""
if [ "${AOT_CUBIN:-1}" = 1 ]; then
  if [ -n "${PTXAS:-}" ] || command -v ptxas >/dev/null 2>&1 || python3 -c "import nvidia.cuda_nvcc" 2>/dev/null; then
    CUBIN="--cubin"
  fi
fi
if [ -n "$CUBIN" ]; then echo "kernels: PTX + embedded cubins"; else echo "kernels: PTX only (driver JIT)"; fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# An `aot run` exit status as a verdict.
v() { case $1 in 0) echo OK ;; 1) echo MISMATCH ;; *) echo ERROR ;; esac; }
printf '%-28s %-10s %-10s %10s\n' case emulated cuda cuda_ms
pass=0; fail=0; best_bw=""; best_bytes=0
for hlo in testdata/corpus/hlo/*.hlo; do
  case "$hlo" in *.opt.hlo) continue ;; esac
  name=$(basename "$hlo" .hlo)
  io="testdata/corpus/hlo/$name.io.json"
  [ -f "$io" ] || continue
  art="$WORK/$name.pb"
  if ! "$XLA_COMPILE" --module_file="$hlo" --output_file="$art" --platform=gpu \
       --gpu_target_config="$SPEC" $CUBIN >/dev/null 2>&1; then
    printf '%-28s %-10s %-10s %10s\n' "$name" compile-error - -; fail=$((fail+1)); continue
  fi
  timeout "$CALL_SECS" "$AOT" run "$art" --target-config "$SPEC" --io "$io" >"$WORK/emu.txt" 2>&1; emu=$?
  s=$(date +%s%N)
  # Command buffers on (the default): CUDA graphs on the GPU.
  timeout "$CALL_SECS" "$AOT" run "$art" --target-config "$SPEC" --io "$io" --device cuda >"$WORK/cuda.txt" 2>&1; cuda=$?
  e=$(date +%s%N)
  # Each launch timed on its own (--profile turns command buffers off) for the bandwidth line.
  timeout "$CALL_SECS" "$AOT" run "$art" --target-config "$SPEC" --io "$io" --device cuda --profile >"$WORK/prof.txt" 2>&1 || cuda=1
  printf '%-28s %-10s %-10s %10d\n' "$name" "$(v $emu)" "$(v $cuda)" $(( (e - s) / 1000000 ))
  if [ $emu -eq 0 ] && [ $cuda -eq 0 ]; then pass=$((pass+1)); else fail=$((fail+1)); sed 's/^/    /' "$WORK/cuda.txt" | tail -3; fi
  line=$(grep '^largest kernel' "$WORK/prof.txt" | head -1)
  if [ -n "$line" ]; then
    bytes=$(echo "$line" | sed -E 's/.*bytes=([0-9]+).*/\1/')
    if [ "$bytes" -gt "$best_bytes" ]; then best_bytes=$bytes; best_bw="$name: $line"; fi
  fi
  if [ $(( $(date +%s) - T0 )) -gt "${CORPUS_SECS:-150}" ]; then echo "time budget reached, stopping"; break; fi
done
# One module compiled here, then run on the emulated device and on the GPU against its io file:
# both_devices LABEL MODULE IO [xla_compile flags...].
both_devices() {
  local label=$1 module=$2 io=$3; shift 3
  local name art emu cuda
  name=$(basename "${module%.*}"); art="$WORK/${label}_$name.pb"
  if ! "$XLA_COMPILE" --module_file="$module" --output_file="$art" --platform=gpu \
       --gpu_target_config="$SPEC" "$@" $CUBIN >/dev/null 2>&1; then
    printf '%s %-22s compile-error\n' "$label" "$name"; fail=$((fail+1)); return
  fi
  timeout "$CALL_SECS" "$AOT" run "$art" --target-config "$SPEC" --io "$io" >"$WORK/emu.txt" 2>&1; emu=$?
  timeout "$CALL_SECS" "$AOT" run "$art" --target-config "$SPEC" --io "$io" --device cuda >"$WORK/cuda.txt" 2>&1; cuda=$?
  printf '%s %-22s emulated %-8s cuda %s\n' "$label" "$name" "$(v $emu)" "$(v $cuda)"
  if [ $emu -eq 0 ] && [ $cuda -eq 0 ]; then pass=$((pass+1)); else fail=$((fail+1)); sed 's/^/    /' "$WORK/cuda.txt" | tail -3; fi
}
# The constructs still behind the staged rollout, on the GPU: testdata/fft compiled with
# --after_staged_flips (FFT thunks: cuFFT on CUDA, the host FFT on the emulator).
for hlo in testdata/fft/*.hlo; do
  io="${hlo%.hlo}.io.json"; [ -f "$io" ] || continue
  both_devices staged "$hlo" "$io" --after_staged_flips
done
# FP8 (testdata/float8): the conversions at every rounding boundary and the FP8 programs, whose
# f8 rounding (codegen/float8.rs, integer ops) and f16 gemms have only run on the emulator.
for mlir in testdata/float8/*.mlir; do
  io="${mlir%.mlir}.io.json"; [ -f "$io" ] || continue
  both_devices float8 "$mlir" "$io"
done
# XLA:GPU's own executables (testdata/xla_gpu, made by tools/xla_artifacts) with the PTX XLA
# dumped for them, on the GPU, against XLA:CPU's outputs. sm_90 PTX serves every Hopper target.
XDIR=testdata/xla_gpu/h100_sxm
case "$AOT_TARGET" in a100*) XDIR=testdata/xla_gpu/a100_sxm_80 ;; esac
XSPEC="testdata/target_specs/$(basename "$XDIR").txtpb"
for exe in "$XDIR"/*.gpuexe; do
  name=$(basename "$exe" .gpuexe)
  ptx=$(ls "$XDIR/$name".*.ptx 2>/dev/null) || continue
  io="testdata/corpus/hlo/$name.io.json"; [ -f "$io" ] || io="testdata/xla_gpu/modules/$name.io.json"
  [ -f "$io" ] || continue
  args=(); for f in $ptx; do args+=(--kernel-ptx "$f"); done
  if timeout "$CALL_SECS" "$AOT" run "$exe" --target-config "$XSPEC" --io "$io" --device cuda "${args[@]}" >"$WORK/x.txt" 2>&1; then
    printf 'xla_gpu %-20s cuda OK\n' "$name"; pass=$((pass+1))
  else
    printf 'xla_gpu %-20s cuda FAIL\n' "$name"; sed 's/^/    /' "$WORK/x.txt" | tail -3; fail=$((fail+1))
  fi
done
# The golden store's newest version for this target (and the newest hand-written cases), replayed
# on the GPU: every single-device case against its recorded outputs.
# The store keeps h100_sxm and a100_sxm_80; other Hopper targets replay h100_sxm's (sm_90).
GT="$AOT_TARGET"; [ -d "goldens/executables/$GT" ] || GT=h100_sxm
G=$(ls -d goldens/executables/"$GT"/v* 2>/dev/null | sort -V | tail -1)
H=$(ls -d goldens/executables/"$GT"/handwritten/v* 2>/dev/null | sort -V | tail -1)
gpass=0; gfail=0
for case in ${G:+$G/*/} ${H:+$H/*/}; do
  case="${case%/}"
  [ -f "$case/executable.pb" ] && [ -f "$case/io.json" ] || continue
  gt="$(dirname "$case")/target.txtpb"; [ -f "$gt" ] || gt="testdata/target_specs/$GT.txtpb"
  if timeout "$CALL_SECS" "$AOT" run "$case/executable.pb" --target-config "$gt" --io "$case/io.json" --device cuda >"$WORK/g.txt" 2>&1; then
    gpass=$((gpass+1))
  else
    echo "golden $case: cuda FAIL"; sed 's/^/    /' "$WORK/g.txt" | tail -3; gfail=$((gfail+1))
  fi
  if [ $(( $(date +%s) - T0 )) -gt "${TOTAL_SECS:-300}" ]; then echo "time budget reached, stopping goldens"; break; fi
done
echo "goldens on CUDA (${G:-none}, ${H:-none}): $gpass match, $gfail do not"
pass=$((pass+gpass)); fail=$((fail+gfail))
echo "summary: $pass cases match on both devices, $fail do not"
echo "largest elementwise kernel on the GPU: ${best_bw:-none measured}"
echo "wall time: $(( $(date +%s) - T0 )) s"
[ $fail -eq 0 ]
