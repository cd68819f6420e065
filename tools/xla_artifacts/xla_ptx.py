"""XLA:GPU's own PTX as emulator corpus (issue 19, stretch).

Compiles a few corpus modules (testdata/corpus/hlo/NAME.mlir) with real XLA:GPU, compile-only,
for the a100_sxm_80 target, with `--xla_dump_to=DIR --xla_dump_hlo_as_text`, and keeps from the
dump, per case, in testdata/xla_ptx/:

  CASE.ptx          the kernel's PTX exactly as XLA dumped it (LLVM NVPTX / Triton output)
  CASE.hlo          the optimized module XLA dumped (`*.sm_8.0_gpu_after_optimizations.txt`):
                    the fusion computation the kernel implements
  CASE.thunks.txt   XLA's dumped thunk sequence (`*.thunk_sequence.txt`): kernel name, grid,
                    block and shared memory of the launch
  CASE.launch.json  a launch spec (format: testdata/corpus/README.md) for the kernel: the
                    corpus inputs (NAME.io.json) as buffer params in the fusion's operand order,
                    the output buffer last, and the expected output (see `expected` below)

Tests: ptx/tests/emu_xla.rs (what the emulator refuses, and each kernel against its launch
spec on both engines) and harness/tests/xla_ptx.rs (each kernel against the project's HLO
evaluator on CASE.hlo, with inputs from a formula).

Each case is compiled in its own process because XLA reads XLA_FLAGS once per process and the
cases differ in flags (the pipelined gemm forces a Triton config with two stages, which is what
makes Triton emit `cp.async`: a compile without a GPU cannot autotune, and XLA's default config
for these small dots has one stage and no asynchronous copies).

Needs what gen.py needs (jax/jaxlib 0.10.2, jax-cuda12-plugin/pjrt 0.10.2, nvidia-cuda-nvcc-cu12)
and numpy. Run from the repository root:

  python3 tools/xla_artifacts/xla_ptx.py [OUT_DIR [CASE...]]   (default: every case)

Deterministic: every case is compiled twice (two processes, two dump folders) and the script
fails if the kept files differ.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "testdata", "xla_ptx")
CORPUS = os.path.join(ROOT, "testdata", "corpus", "hlo")
TARGET = "a100_sxm_80"

# The Triton gemm config that makes Triton software-pipeline the K loop (num_stages 2: the next
# K tile is fetched with cp.async while the current one is multiplied). TritonGemmKey text format.
PIPELINED = ("--xla_gpu_override_gemm_autotuner='block_m:16 block_n:16 block_k:16 split_k:1 "
             "num_stages:2 num_warps:1 num_ctas:1'")

# case name -> (corpus module, extra XLA flags, expected-output rule)
#   "xla_cpu": XLA:CPU's outputs from the corpus io.json (elementwise/reduction kernels, whose
#              GPU arithmetic is f32 like the CPU's)
#   "tf32_dot": a numpy reference of XLA:GPU's DEFAULT-precision f32 dot on Ampere: both operands
#              rounded to tf32 as the kernel's `cvt.rna.tf32.f32` does (nearest, ties away from
#              zero, 10 mantissa bits), products and sums in f64, rounded to f32. XLA:CPU's f32
#              result differs from it by the tf32 rounding (about 1e-3), far more than the
#              accumulation-order difference the tolerance has to admit.
#   "bf16_dot": numpy: bf16 operands (exact in f64), products and sums in f64, rounded to f32,
#              then to bf16 (nearest even), as the kernel's f32 accumulation and
#              `cvt.rn.bf16x2.f32` do up to accumulation order.
CASES = {
    "add": ("add", "", "xla_cpu"),
    "softmax": ("softmax", "", "xla_cpu"),
    "large_reduce": ("large_reduce", "", "xla_cpu"),
    "elementwise_chain": ("elementwise_chain", "", "xla_cpu"),
    "matmul_tf32": ("matmul", "", "tf32_dot"),
    "bf16_matmul": ("bf16_matmul", "", "bf16_dot"),
    "bf16_matmul_pipelined": ("bf16_matmul", PIPELINED, "bf16_dot"),
}
# Every other corpus module that XLA compiles for a100 to exactly one kernel with one output
# and no dot (a dot needs a tf32/bf16 rule above): XLA:CPU's outputs are the expectation.
# (argmax, gather_take and reshape_transpose are such modules too, but their entry ROOT is not
# the fusion itself: a bitcast or tuple after it, which this script does not map to buffers.)
for _m in ["clamp", "compare_select", "cumsum", "dynamic_slice", "f16_elementwise", "layernorm",
           "matvec", "pad_reverse", "reduce_max_all", "reduce_sum", "relu_broadcast", "sigmoid",
           "slice_concat", "trig"]:
    CASES[_m] = (_m, "", "xla_cpu")

# Tolerances of the expected outputs, |got - want| <= abs + rel * |want|:
#   xla_cpu f32: the corpus default (testdata/corpus/README.md) for reduction order and `ex2.approx`;
#   tf32_dot: f32 accumulation in another order over K <= 48 products of tf32 values of about 1;
#   bf16_dot: one bf16 ulp (2^-8 relative) where f32 accumulation rounds across a tie.
TOLERANCE = {"xla_cpu": (1e-5, 1e-4), "tf32_dot": (1e-4, 1e-4), "bf16_dot": (1e-6, 2.0 ** -7)}
# Bit-exact against XLA:CPU: IEEE add/compare/max (add, clamp, compare_select, relu_broadcast),
# data movement (dynamic_slice, gather_take, pad_reverse, reshape_transpose, slice_concat),
# and a max reduction (reduce_max_all: order does not matter).
EXACT_CASES = {"add", "clamp", "compare_select", "dynamic_slice", "pad_reverse", "reduce_max_all",
               "relu_broadcast", "slice_concat"}
# f16 results: the corpus f16 tolerance (testdata/corpus/README.md: looser for f16/bf16).
F16_CASES = {"f16_elementwise"}


def compile_case(name, dump):
    """Runs in a child process: compiles one case with the dump flags and exits."""
    module, extra, _ = CASES[name]
    import nvidia.cuda_nvcc
    cuda = list(nvidia.cuda_nvcc.__path__)[0]
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["JAX_SKIP_CUDA_CONSTRAINTS_CHECK"] = "1"
    os.environ["CUDA_ROOT"] = cuda
    os.environ["PATH"] = os.path.join(cuda, "bin") + os.pathsep + os.environ["PATH"]
    os.environ["XLA_FLAGS"] = "--xla_gpu_cuda_data_dir=%s --xla_dump_to=%s --xla_dump_hlo_as_text %s" % (
        cuda, dump, extra)
    sys.path.insert(0, HERE)
    import gen  # noqa: E402  (imports jax with the environment above)
    from jax.experimental import topologies  # noqa: E402
    topo = topologies.get_topology_desc("topo", "cuda", topology="1x1x1",
                                        target_config=gen.target_config(TARGET))
    dev = topo.devices[0]
    with open(os.path.join(CORPUS, module + ".mlir")) as f:
        gen.compile_one(dev.client, dev, f.read())


def dumped(dump):
    """The kept files' bytes from one dump folder: the one non-empty PTX, the optimized HLO and
    the thunk sequence (a case must compile to exactly one kernel module)."""
    ptx = [p for p in glob.glob(os.path.join(dump, "*.ptx")) if os.path.getsize(p) > 0]
    hlo = glob.glob(os.path.join(dump, "*.sm_8.0_gpu_after_optimizations.txt"))
    thunks = glob.glob(os.path.join(dump, "*.thunk_sequence.txt"))
    if len(ptx) != 1 or len(hlo) != 1 or len(thunks) != 1:
        sys.exit("%s: want one PTX, one optimized HLO and one thunk sequence, found %d, %d, %d"
                 % (dump, len(ptx), len(hlo), len(thunks)))
    out = {}
    for ext, path in ((".ptx", ptx[0]), (".hlo", hlo[0]), (".thunks.txt", thunks[0])):
        with open(path, "rb") as f:
            out[ext] = f.read()
    return out


THUNK = re.compile(r"kCustomKernel \[[^\]]*\] (\S+) grid: \[(\d+), (\d+), (\d+)\] "
                   r"threads: \[(\d+), (\d+), (\d+)\]\s+shared_memory: (\d+) bytes")


def launch_of(thunks):
    """(kernel, grid, block, shared bytes) of the one kernel launch in a thunk sequence dump."""
    found = THUNK.findall(thunks.decode())
    if len(found) != 1:
        sys.exit("want exactly one kernel launch in the thunk sequence, found %d" % len(found))
    k, gx, gy, gz, bx, by, bz, smem = found[0]
    return k, [int(gx), int(gy), int(gz)], [int(bx), int(by), int(bz)], int(smem)


def operand_params(hlo):
    """Entry parameter numbers of the ROOT fusion's operands, in operand order: XLA passes a
    fusion kernel its operands' buffers in that order, then the output's."""
    text = hlo.decode()
    entry = text[text.index("\nENTRY "):]
    params = dict(re.findall(r"%(\S+) = \S+ parameter\((\d+)\)", entry))
    root = re.search(r"ROOT %\S+ = \S+ fusion\(([^)]*)\)", entry)
    if root is None:
        sys.exit("the entry's ROOT is not a fusion")
    names = [o.strip().lstrip("%") for o in root.group(1).split(",") if o.strip()]
    if any(n not in params for n in names):
        sys.exit("a ROOT fusion operand is not an entry parameter: %s" % names)
    return [int(params[n]) for n in names]


def tf32(x):
    """Round f32 values to tf32 as `cvt.rna.tf32.f32` does: nearest, ties away from zero, keep
    the top 19 bits (sign, 8 exponent, 10 mantissa); finite inputs only (the corpus has no
    non-finite dot inputs)."""
    import numpy as np
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x1000) & 0xFFFFE000
    return b.astype(np.uint32).view(np.float32)


def expected_output(rule, io):
    import numpy as np
    if rule == "xla_cpu":
        return io["outputs"][0]["data"]
    a, b = (np.array(t["data"], dtype=np.float64).reshape(t["shape"]) for t in io["inputs"])
    if rule == "tf32_dot":
        a = tf32(a).astype(np.float64)
        b = tf32(b).astype(np.float64)
        return [float(v) for v in (a @ b).astype(np.float32).reshape(-1)]
    if rule == "bf16_dot":
        f = (a @ b).astype(np.float32).view(np.uint32).astype(np.uint64)
        # f32 -> bf16, round to nearest even (finite values only).
        f = (f + 0x7FFF + ((f >> 16) & 1)) & 0xFFFF0000
        return [float(v) for v in f.astype(np.uint32).view(np.float32).reshape(-1)]
    raise ValueError(rule)


def spec_json(name, files):
    module, _, rule = CASES[name]
    with open(os.path.join(CORPUS, module + ".io.json")) as f:
        io = json.load(f)
    kernel, grid, block, smem = launch_of(files[".thunks.txt"])
    order = operand_params(files[".hlo"])
    out = io["outputs"]
    if len(out) != 1:
        sys.exit("%s: one output expected" % name)
    params = [{"kind": "buffer", "dtype": io["inputs"][i]["dtype"], "data": io["inputs"][i]["data"]}
              for i in order]
    n = 1
    for d in out[0]["shape"]:
        n *= d
    params.append({"kind": "buffer", "dtype": out[0]["dtype"], "data": [0] * n})
    if name in EXACT_CASES:
        abs_tol, rel_tol = 0.0, 0.0
    elif name in F16_CASES:
        abs_tol, rel_tol = 1e-3, 1e-3
    else:
        abs_tol, rel_tol = TOLERANCE[rule]
    spec = {
        "kernel": kernel, "grid": grid, "block": block, "dynamic_shared_bytes": smem,
        "params": params,
        "expected": [{"param": len(params) - 1, "dtype": out[0]["dtype"],
                      "data": expected_output(rule, io), "abs_tol": abs_tol, "rel_tol": rel_tol}],
    }
    return json.dumps(spec, separators=(",", ":")) + "\n"


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--compile-one":
        compile_case(sys.argv[2], sys.argv[3])
        return
    out = sys.argv[1] if len(sys.argv) > 1 else OUT
    os.makedirs(out, exist_ok=True)
    for name in [n for n in CASES if n in sys.argv[2:]] if len(sys.argv) > 2 else CASES:
        runs = []
        for _ in range(2):
            with tempfile.TemporaryDirectory() as dump:
                subprocess.run([sys.executable, os.path.abspath(__file__), "--compile-one", name,
                                dump], check=True, stderr=subprocess.DEVNULL)
                runs.append(dumped(dump))
        if runs[0] != runs[1]:
            sys.exit("%s: a second compilation dumped different files" % name)
        files = runs[0]
        files[".launch.json"] = spec_json(name, files).encode()
        for ext, data in files.items():
            with open(os.path.join(out, name + ext), "wb") as f:
                f.write(data)
        print(name, launch_of(files[".thunks.txt"]), len(files[".ptx"]), "bytes of PTX",
              flush=True)


if __name__ == "__main__":
    main()
