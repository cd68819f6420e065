"""Real XLA:GPU artifacts for this project's tests and benches (issue 19).

Compiles every StableHLO module of the public corpus (testdata/corpus/hlo/*.mlir) with real
XLA:GPU, compile-only (no GPU needed), for the h100_sxm and a100_sxm_80 target configs, and writes:

  testdata/xla_gpu/summary.json         one row per module x target (format: testdata/README.md)
  testdata/xla_gpu/<target>/NAME.pjrt   PjRt `SerializeExecutable` bytes (IFRT envelope), for the
                                        modules in KEEP only (size)
  testdata/xla_gpu/<target>/NAME.gpuexe the bare inner `xla.gpu.GpuExecutableProto`, same modules
  testdata/xla_gpu/xla_descriptors.binpb XLA's own schema (FileDescriptorSet) from the plugin

Needs: jax==0.10.2 jaxlib==0.10.2 jax-cuda12-plugin==0.10.2 jax-cuda12-pjrt==0.10.2 and
nvidia-cuda-nvcc-cu12 (libdevice, ptxas). Run from the repository root:

  python3 tools/xla_artifacts/gen.py [OUT_DIR]

The environment it needs (JAX_PLATFORMS=cpu, JAX_SKIP_CUDA_CONSTRAINTS_CHECK=1, CUDA_ROOT) is set
here before jax is imported. Compilation is deterministic: a second run gives identical bytes
(the script compiles every module COMPILES times, keeps the best time, and fails if the bytes
differ).
"""
import glob
import json
import os
import re
import struct
import sys
import time

import nvidia.cuda_nvcc

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["JAX_SKIP_CUDA_CONSTRAINTS_CHECK"] = "1"
os.environ.setdefault("CUDA_ROOT", list(nvidia.cuda_nvcc.__path__)[0])
# XLA looks for ptxas on PATH and libdevice under CUDA_ROOT (--xla_gpu_cuda_data_dir).
os.environ["PATH"] = os.path.join(os.environ["CUDA_ROOT"], "bin") + os.pathsep + os.environ["PATH"]
os.environ.setdefault("XLA_FLAGS", "--xla_gpu_cuda_data_dir=" + os.environ["CUDA_ROOT"])

import jax  # noqa: E402
from jax._src import compiler, xla_bridge  # noqa: E402
from jax._src.interpreters import mlir  # noqa: E402
from jax._src.lib import xla_client  # noqa: E402
from jax._src.lib.mlir import ir  # noqa: E402
from jax.experimental import topologies  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "testdata", "xla_gpu")
CORPUS = os.path.join(ROOT, "testdata", "corpus", "hlo")
SPECS = os.path.join(ROOT, "testdata", "target_specs")
TARGETS = ["h100_sxm", "a100_sxm_80"]
# Committed in full (PjRt bytes and inner proto); every module gets a summary row.
KEEP = ["add", "softmax", "mlp", "cond", "fori_loop"]
# Compiles per module: `compile_ms` is the best, and every one must give the same bytes.
COMPILES = 3
# gpu_device_info fields of the bundled specs that the XLA inside jaxlib 0.10.2 does not know.
UNKNOWN_FIELDS = ["mem_clock_ghz", "reserved_shared_memory_per_block",
                  "max_blocks_per_multiprocessor", "collective_memory_granularity"]


def target_config(name):
    with open(os.path.join(SPECS, name + ".txtpb")) as f:
        text = f.read()
    pattern = r"^\s*(%s):.*\n" % "|".join(UNKNOWN_FIELDS)
    return re.sub(pattern, "", text, flags=re.M)


def varint(b, i):
    """Reads a protobuf varint at b[i]; returns (value, next index)."""
    v, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7


def unsnappy(b):
    """Raw snappy decompression (the format is 40 lines; no snappy module is installed with
    jaxlib). Bounds are Python's: a bad input raises, which is fine for a generator."""
    n, i = varint(b, 0)
    out = bytearray()
    while i < len(b):
        t = b[i]
        i += 1
        if t & 3 == 0:
            ln = t >> 2
            if ln >= 60:
                k = ln - 59
                ln = int.from_bytes(b[i:i + k], "little")
                i += k
            ln += 1
            out += b[i:i + ln]
            i += ln
            continue
        if t & 3 == 1:
            ln, off = ((t >> 2) & 7) + 4, ((t >> 5) << 8) | b[i]
            i += 1
        elif t & 3 == 2:
            ln, off = (t >> 2) + 1, int.from_bytes(b[i:i + 2], "little")
            i += 2
        else:
            ln, off = (t >> 2) + 1, int.from_bytes(b[i:i + 4], "little")
            i += 4
        if off == 0 or off > len(out):
            raise ValueError("snappy copy offset %d" % off)
        for _ in range(ln):
            out.append(out[-off])
    if len(out) != n:
        raise ValueError("snappy length %d, header says %d" % (len(out), n))
    return bytes(out)


def riegeli_records(r):
    """Every record of a Riegeli file (simple chunks, none or snappy compression). Block
    headers (24 bytes at each multiple of 64 KiB) are removed first, so chunk positions can be
    followed in the remaining stream."""
    flat, pos = bytearray(), 0
    while pos < len(r):
        if pos % 65536 == 0:
            pos += 24
            continue
        end = min(len(r), (pos // 65536 + 1) * 65536)
        flat += r[pos:end]
        pos = end
    records, p = [], 0
    while p + 40 <= len(flat):
        size = struct.unpack("<Q", flat[p + 8:p + 16])[0]
        kind = flat[p + 24]
        data = flat[p + 40:p + 40 + size]
        p += 40 + size
        if kind != ord("r"):
            continue
        comp = data[0]
        n, j = varint(data, 1)
        sizes, values = data[j:j + n], data[j + n:]
        if comp == ord("s"):
            sizes = unsnappy(sizes[varint(sizes, 0)[1]:])
            values = unsnappy(values[varint(values, 0)[1]:])
        elif comp != 0:
            raise ValueError("riegeli compression %r" % chr(comp))
        q = off = 0
        while q < len(sizes):
            s, q = varint(sizes, q)
            records.append(bytes(values[off:off + s]))
            off += s
    return records


def inner_executable(pjrt):
    """The GpuExecutableProto inside PjRt `SerializeExecutable` bytes: a varint-length-prefixed
    header proto, then a message whose field 1 is a Riegeli file (its last record is the
    executable) and field 2 the CompileOptionsProto."""
    n, i = varint(pjrt, 0)
    body = pjrt[i + n:]
    key, j = varint(body, 0)
    if key != 0x0A:
        raise ValueError("envelope body does not start with field 1")
    n, j = varint(body, j)
    return riegeli_records(body[j:j + n])[-1]


def thunk_census(inner):
    """Counts thunk kinds (ThunkProto oneof numbers) and kernel launches in a
    GpuExecutableProto by walking the wire format: field 13 of the executable is the thunk
    sequence; sequential (2), conditional (6, branches in field 2), while (7, fields 2 and 3) nest."""
    kinds = {}
    launches = 0

    def fields(b):
        i = 0
        while i < len(b):
            key, i = varint(b, i)
            num, wt = key >> 3, key & 7
            if wt == 0:
                _, i = varint(b, i)
                yield num, wt, None
            elif wt == 1:
                i += 8
                yield num, wt, None
            elif wt == 5:
                i += 4
                yield num, wt, None
            elif wt == 2:
                n, i = varint(b, i)
                yield num, wt, b[i:i + n]
                i += n
            else:
                raise ValueError("wire type %d" % wt)

    def seq(b):  # ThunkSequenceProto / SequentialThunkProto: repeated ThunkProto thunks = 1
        for num, _, v in fields(b):
            if num == 1:
                thunk(v)

    def thunk(b):
        nonlocal launches
        for num, _, v in fields(b):
            if num == 1:
                continue
            kinds[num] = kinds.get(num, 0) + 1
            if num in (8, 36):  # kernel, custom kernel
                launches += 1
            elif num == 2:
                seq(v)
            elif num == 6:
                for n2, _, v2 in fields(v):
                    if n2 == 2:
                        seq(v2)
            elif num == 7:
                for n2, _, v2 in fields(v):
                    if n2 in (2, 3):
                        seq(v2)

    for num, _, v in fields(inner):
        if num == 13:
            thunk(v)
    return kinds, launches


# XLA's ThunkProto oneof numbers (xla/backends/gpu/runtime/thunk.proto), named as XLA names them
# without the `_thunk` suffix.
THUNK_NAMES = {2: "sequential", 3: "copy", 4: "device_to_host_copy", 5: "host_to_device_copy",
               6: "conditional", 7: "while", 8: "kernel", 9: "gemm", 11: "triangular_solve",
               12: "replica_id", 13: "device_to_device_copy", 14: "partition_id", 15: "cudnn",
               18: "dynamic_slice", 19: "memzero", 20: "select_k", 22: "cublas_lt_matmul",
               24: "norm", 25: "convolution", 27: "fft", 28: "memset32bit_value",
               30: "custom_call", 36: "custom_kernel", 37: "collective_done",
               38: "all_gather_start", 39: "all_reduce_start", 40: "reduce_scatter",
               41: "all_to_all_start", 43: "collective_permute_start", 57: "async_start",
               58: "async_done"}


def descriptor_end(b, pos, limit):
    """End of the serialized FileDescriptorProto starting at b[pos]: the generated code stores
    each one as a bare byte array, so read fields until one is not a FileDescriptorProto field
    (numbers 1-14) or does not fit."""
    i = pos
    while i < limit:
        try:
            key, j = varint(b, i)
            num, wt = key >> 3, key & 7
            if not 1 <= num <= 14:
                break
            if wt == 0:
                _, j = varint(b, j)
            elif wt == 2:
                n, j = varint(b, j)
                j += n
            else:
                break
        except IndexError:
            break
        if j > limit:
            break
        i = j
    return i


def write_descriptors(path):
    """XLA's own schema, as the plugin was built with it: every `xla/...proto`
    FileDescriptorProto embedded in xla_cuda_plugin.so, as one FileDescriptorSet."""
    import mmap
    import jax_plugins.xla_cuda12 as plugin
    so = os.path.join(os.path.dirname(plugin.__file__), "xla_cuda_plugin.so")
    with open(so, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        names = sorted(set(re.findall(rb"\n.(xla/[a-z0-9_/]+\.proto)\x12", m[:])))
        out = bytearray()
        for name in names:
            pos = m.find(b"\n" + bytes([len(name)]) + name + b"\x12")
            fd = m[pos:descriptor_end(m, pos, min(len(m), pos + (1 << 20)))]
            n, size = len(fd), bytearray()
            while True:
                c, n = n & 0x7F, n >> 7
                size.append(c | (0x80 if n else 0))
                if not n:
                    break
            out += b"\n" + bytes(size) + fd
    with open(path, "wb") as f:
        f.write(out)
    print(len(names), "XLA descriptors,", len(out), "bytes")


def compile_one(client, dev, text):
    opts = compiler.get_compile_options(num_replicas=1, num_partitions=1)
    with mlir.make_ir_context():
        module = ir.Module.parse(text)
        t0 = time.perf_counter()
        exe = client.compile(module, xla_client.DeviceList((dev,)), opts)
        ms = (time.perf_counter() - t0) * 1e3
    return exe.serialize(), ms


def main():
    os.makedirs(OUT, exist_ok=True)
    write_descriptors(os.path.join(OUT, "xla_descriptors.binpb"))
    modules = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(CORPUS, "*.mlir")))
    rows = []
    for target in TARGETS:
        topo = topologies.get_topology_desc("topo", "cuda", topology="1x1x1",
                                            target_config=target_config(target))
        dev = topo.devices[0]
        client = dev.client
        os.makedirs(os.path.join(OUT, target), exist_ok=True)
        for name in modules:
            with open(os.path.join(CORPUS, name + ".mlir")) as f:
                text = f.read()
            # Best of COMPILES: one compile measures the machine's load as much as XLA.
            pjrt, ms = compile_one(client, dev, text)
            for _ in range(COMPILES - 1):
                again, t = compile_one(client, dev, text)
                if again != pjrt:
                    sys.exit("%s/%s: a second compilation gave different bytes" % (target, name))
                ms = min(ms, t)
            inner = inner_executable(pjrt)
            kinds, launches = thunk_census(inner)
            rows.append({
                "module": name,
                "target": target,
                "launches": launches,
                "thunks": {THUNK_NAMES.get(k, str(k)): v for k, v in sorted(kinds.items())},
                "pjrt_bytes": len(pjrt),
                "executable_bytes": len(inner),
                "compile_ms": round(ms, 2),
            })
            if name in KEEP:
                for ext, data in ((".pjrt", pjrt), (".gpuexe", inner)):
                    with open(os.path.join(OUT, target, name + ext), "wb") as f:
                        f.write(data)
            print(target, name, launches, "launches", "%.1f ms" % ms, len(pjrt), "bytes",
                  flush=True)
    summary = {
        "generator": "tools/xla_artifacts/gen.py",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
        "jax": jax.__version__,
        "jaxlib": jax.lib.__version__ if hasattr(jax.lib, "__version__") else jax.__version__,
        "jax_cuda12_plugin": "0.10.2",
        "rows": rows,
    }
    with open(os.path.join(OUT, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=False)
        f.write("\n")


if __name__ == "__main__":
    main()
