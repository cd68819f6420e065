#!/usr/bin/env bash
# GPU check: run on a machine with an NVIDIA GPU (budget: <= 3 minutes on an H100 or H200).
#
#  1. builds `aot` (release);
#  2. picks the target config that matches the GPU (h100_sxm / h200 / a100_sxm_80 by name, or
#     $AOT_TARGET), compiles every corpus module for it with `aot check-hlo`'s compiler, and runs
#     each artifact twice with `aot run`: on the CUDA device (PTX JIT-compiled by the driver) and
#     on the emulated device, both compared with the corpus io file;
#  3. prints a table (case, emulated verdict, CUDA verdict, CUDA wall time) and a summary;
#  4. reports the achieved memory bandwidth of the largest elementwise kernel launch on the GPU
#     (bytes of its argument slices / host-measured time of the synchronous launch).
#
# Exit status: 0 when every case matches on both devices, 1 otherwise.
set -u
cd "$(dirname "$0")/.."

T0=$(date +%s)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target-gpu}"
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
echo "kernels: ${CUBIN:+PTX + embedded cubins}${CUBIN:-PTX only (driver JIT)}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

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
  "$AOT" run "$art" --target-config "$SPEC" --io "$io" >"$WORK/emu.txt" 2>&1; emu=$?
  s=$(date +%s%N)
  # Command buffers on (the default): CUDA graphs on the GPU.
  "$AOT" run "$art" --target-config "$SPEC" --io "$io" --device cuda >"$WORK/cuda.txt" 2>&1; cuda=$?
  e=$(date +%s%N)
  # Each launch timed on its own (--profile turns command buffers off) for the bandwidth line.
  "$AOT" run "$art" --target-config "$SPEC" --io "$io" --device cuda --profile >"$WORK/prof.txt" 2>&1 || cuda=1
  v() { case $1 in 0) echo OK ;; 1) echo MISMATCH ;; *) echo ERROR ;; esac; }
  printf '%-28s %-10s %-10s %10d\n' "$name" "$(v $emu)" "$(v $cuda)" $(( (e - s) / 1000000 ))
  if [ $emu -eq 0 ] && [ $cuda -eq 0 ]; then pass=$((pass+1)); else fail=$((fail+1)); sed 's/^/    /' "$WORK/cuda.txt" | tail -3; fi
  line=$(grep '^largest kernel' "$WORK/prof.txt" | head -1)
  if [ -n "$line" ]; then
    bytes=$(echo "$line" | sed -E 's/.*bytes=([0-9]+).*/\1/')
    if [ "$bytes" -gt "$best_bytes" ]; then best_bytes=$bytes; best_bw="$name: $line"; fi
  fi
  if [ $(( $(date +%s) - T0 )) -gt 170 ]; then echo "time budget reached, stopping"; break; fi
done
# The convolution thunk (issue 32) on the GPU: the newest hand-written case's FORWARD,
# BACKWARD_DATA and BACKWARD_FILTER thunks against their hand-worked outputs (the CUDA device runs
# them through the host implicit GEMM until cuDNN is wired).
CONV=$(ls -d goldens/executables/h100_sxm/handwritten/v*/convolution_thunk 2>/dev/null | sort -V | tail -1)
if [ -n "$CONV" ]; then
  if "$AOT" run "$CONV/executable.pb" --target-config "$(dirname "$CONV")/target.txtpb" --io "$CONV/io.json" --device cuda >"$WORK/conv.txt" 2>&1; then
    echo "convolution_thunk on CUDA: OK ($CONV)"; pass=$((pass+1))
  else
    echo "convolution_thunk on CUDA: FAIL ($CONV)"; sed 's/^/    /' "$WORK/conv.txt" | tail -3; fail=$((fail+1))
  fi
fi
echo "summary: $pass cases match on both devices, $fail do not"
echo "largest elementwise kernel on the GPU: ${best_bw:-none measured}"
echo "wall time: $(( $(date +%s) - T0 )) s"
[ $fail -eq 0 ]
