"""XLA:GPU executables with the PTX of their kernels, so that the emulated device runs them whole
(issue 28).

XLA:GPU embeds each kernel as a cubin; the emulated device runs PTX. XLA dumps the PTX of the
same compile with `--xla_dump_to=DIR` (the files `*.ptx` of the dump: the kernels split over a
few LLVM modules, one of them the constants module, which may hold no kernel). This script
compiles corpus modules (testdata/corpus/hlo/NAME.mlir, or testdata/xla_gpu/modules/NAME.mlir
from tools/xla_artifacts/modules.py) with real XLA:GPU, compile-only, with that
flag, for the h100_sxm and a100_sxm_80 target configs, and writes per module and target into
OUT/<target>/:

  NAME.KERNEL.ptx  each non-empty PTX file of the dump, byte-identical, named for its first
                 `.entry` (`NAME.constants.ptx` for the constants module when it has no kernel)
  NAME.gpuexe    the bare `xla.gpu.GpuExecutableProto` of the same compile, unless OUT already
                 holds one (gen.py's, compiled without the dump flag); then the script checks
                 that both carry the same kernels with the same cubins, i.e. that the PTX is the
                 source of that executable's kernels, and fails if not

Run them with `aot run OUT/<target>/NAME.gpuexe --target-config ... --io
testdata/corpus/hlo/NAME.io.json --kernel-ptx OUT/<target>/NAME.KERNEL.ptx ...`.

Needs what gen.py needs (jax/jaxlib 0.10.2, jax-cuda12-plugin/pjrt 0.10.2, nvidia-cuda-nvcc-cu12).
Run from the repository root:

  python3 tools/xla_artifacts/ptx_dump.py                 the kept modules (KEEP) into
                                                          testdata/xla_gpu
  python3 tools/xla_artifacts/ptx_dump.py OUT [NAME...]   those modules (default: every corpus
                                                          module) into OUT, for the ignored
                                                          harness test (XLA_GPU_PTX_DIR=OUT)

Each (module, target) is compiled in its own process (XLA reads XLA_FLAGS once per process) and
twice; the script fails if the kept files differ. The dump folder is always $TMPDIR/
xla_gpu_ptx_dump (emptied before each compile), because XLA records its path in the debug
options of the executable's embedded module.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(ROOT, "testdata", "corpus", "hlo")
# Modules the public corpus lacks (convolutions), made by tools/xla_artifacts/modules.py.
MODULES = os.path.join(ROOT, "testdata", "xla_gpu", "modules")
TARGETS = ["h100_sxm", "a100_sxm_80"]
# Committed with their PTX: gen.py's five (add, softmax, mlp, cond, fori_loop: an elementwise
# kernel, Triton softmax, Triton gemms, a conditional, a while loop over a tuple-holding temp with
# device-to-device copies and a constant) and four more constructs: switch3 (an s32 selector),
# multi_output (a result tuple's index table), sort (constants as PTX .global arrays) and
# gelu_mlp (two TF32 dots, the XLA:GPU tolerance).
KEEP = ["add", "softmax", "mlp", "cond", "fori_loop", "switch3", "multi_output", "sort",
        "gelu_mlp"]
DUMP = os.path.join(tempfile.gettempdir(), "xla_gpu_ptx_dump")
ENTRY = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)")


def module_path(module):
    """NAME.mlir in the corpus, else in testdata/xla_gpu/modules."""
    path = os.path.join(CORPUS, module + ".mlir")
    return path if os.path.exists(path) else os.path.join(MODULES, module + ".mlir")


def compile_case(target, module, dump):
    """Runs in a child process: compiles one module with the dump flag and writes the inner
    executable to DUMP/NAME.gpuexe."""
    import nvidia.cuda_nvcc
    cuda = list(nvidia.cuda_nvcc.__path__)[0]
    os.environ["CUDA_ROOT"] = cuda
    os.environ["XLA_FLAGS"] = "--xla_gpu_cuda_data_dir=%s --xla_dump_to=%s" % (cuda, dump)
    sys.argv = sys.argv[:1]
    sys.path.insert(0, HERE)
    import gen  # noqa: E402  (sets the rest of the environment and imports jax)
    from jax.experimental import topologies  # noqa: E402
    topo = topologies.get_topology_desc("topo", "cuda", topology="1x1x1",
                                        target_config=gen.target_config(target))
    dev = topo.devices[0]
    with open(module_path(module)) as f:
        pjrt, _ = gen.compile_one(dev.client, dev, f.read())
    with open(os.path.join(dump, module + ".gpuexe"), "wb") as f:
        f.write(gen.inner_executable(pjrt))


def dumped(target, module):
    """{file name: bytes} of one compile: the non-empty PTX files and the executable."""
    # One fixed folder, emptied before each compile: XLA records the dump path in the debug
    # options of the embedded module, so a fresh temporary name would change the bytes.
    dump = DUMP
    shutil.rmtree(dump, ignore_errors=True)
    os.makedirs(dump)
    try:
        subprocess.run([sys.executable, os.path.abspath(__file__), "--compile-one", target,
                        module, dump], check=True, stderr=subprocess.DEVNULL)
        out = {}
        for path in sorted(glob.glob(os.path.join(dump, "*.ptx"))):
            with open(path, "rb") as f:
                data = f.read()
            if not data:
                continue
            # Named for the file's first kernel, not XLA's number: XLA compiles the LLVM
            # modules in parallel and numbers them in completion order, which varies.
            entry = ENTRY.search(data.decode())
            name = "%s.%s.ptx" % (module, entry.group(1) if entry else "constants")
            if name in out:
                sys.exit("%s: two PTX files would be named %s" % (path, name))
            out[name] = data
        with open(os.path.join(dump, module + ".gpuexe"), "rb") as f:
            out[module + ".gpuexe"] = f.read()
        return out
    finally:
        shutil.rmtree(dump, ignore_errors=True)


def kernels(executable):
    """{kernel name: cubin} of every custom-kernel thunk of a GpuExecutableProto, at every depth
    (ThunkProto 36 -> CustomKernelProto 3 -> name 1, KernelLoaderSpecProto 2 -> cubin 2 ->
    data 1; sequences nest in sequential 2, conditional 6 (field 2), while 7 (fields 2, 3))."""
    from gen import varint
    out = {}

    def fields(b):
        i = 0
        while i < len(b):
            key, i = varint(b, i)
            num, wt = key >> 3, key & 7
            if wt == 0:
                _, i = varint(b, i)
                yield num, None
            elif wt == 1:
                i += 8
                yield num, None
            elif wt == 5:
                i += 4
                yield num, None
            elif wt == 2:
                n, i = varint(b, i)
                yield num, b[i:i + n]
                i += n
            else:
                raise ValueError("wire type %d" % wt)

    def first(b, number):
        return next((v for n, v in fields(b) if n == number), b"")

    def seq(b):
        for n, v in fields(b):
            if n == 1:
                thunk(v)

    def thunk(b):
        for n, v in fields(b):
            if n == 36:
                ck = first(v, 3)
                cubin = first(first(first(ck, 2), 2), 1)
                out[first(ck, 1).decode()] = cubin
            elif n == 2:
                seq(v)
            elif n == 6:
                for n2, v2 in fields(v):
                    if n2 == 2:
                        seq(v2)
            elif n == 7:
                for n2, v2 in fields(v):
                    if n2 in (2, 3):
                        seq(v2)

    for n, v in fields(executable):
        if n == 13:
            thunk(v)
    return out


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--compile-one":
        compile_case(*sys.argv[2:])
        return
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "testdata", "xla_gpu")
    if len(sys.argv) > 2:
        modules = sys.argv[2:]
    elif len(sys.argv) > 1:
        modules = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(CORPUS, "*.mlir")))
    else:
        modules = KEEP
    for target in TARGETS:
        os.makedirs(os.path.join(out, target), exist_ok=True)
        for module in modules:
            files = dumped(target, module)
            if dumped(target, module) != files:
                sys.exit("%s/%s: a second compilation dumped different files" % (target, module))
            exe = os.path.join(out, target, module + ".gpuexe")
            if os.path.exists(exe):
                with open(exe, "rb") as f:
                    kept = f.read()
                if kernels(kept) != kernels(files[module + ".gpuexe"]):
                    sys.exit("%s: its kernels are not the dump compile's (names or cubins "
                             "differ), so the dumped PTX is not their source" % exe)
                del files[module + ".gpuexe"]
            for name, data in files.items():
                with open(os.path.join(out, target, name), "wb") as f:
                    f.write(data)
            print(target, module, sorted(files), flush=True)


if __name__ == "__main__":
    main()
