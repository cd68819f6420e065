//! Real XLA:GPU artifacts (testdata/xla_gpu, made by tools/xla_artifacts/gen.py): the envelope
//! and Riegeli reader, schema decoding, and the load verdicts.
use std::path::PathBuf;

use harness::{
    looks_like_xla, riegeli_records, unwrap_xla_artifact, XlaArtifactError, XlaArtifactForm as Form,
};

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/xla_gpu")
}

const TARGETS: [&str; 2] = ["h100_sxm", "a100_sxm_80"];
const MODULES: [&str; 5] = ["add", "softmax", "mlp", "cond", "fori_loop"];

fn read(target: &str, name: &str, ext: &str) -> Vec<u8> {
    let p = testdata().join(target).join(format!("{name}.{ext}"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn pjrt_envelope_holds_the_committed_executable() {
    for t in TARGETS {
        for m in MODULES {
            let u = unwrap_xla_artifact(&read(t, m, "pjrt")).unwrap();
            assert_eq!(u.form, Form::Pjrt, "{t}/{m}");
            let env = u.envelope.unwrap();
            assert_eq!(env.serializer, "pjrt_ifrt");
            assert!(
                env.compile_options_bytes > 0,
                "{t}/{m}: no CompileOptionsProto"
            );
            assert_eq!(u.executable, read(t, m, "gpuexe"), "{t}/{m}");
            assert!(looks_like_xla(&u.executable), "{t}/{m}");
        }
    }
}

#[test]
fn every_committed_executable_decodes_with_this_schema() {
    // Reflection keeps unknown fields and refuses a known number with another wire type, so this
    // is the "unknown allowed, mis-typed not" check.
    for t in TARGETS {
        for m in MODULES {
            let census = harness::census_of_bytes(&read(t, m, "gpuexe"))
                .unwrap_or_else(|e| panic!("{t}/{m}: {e}"));
            assert!(
                census.contains("stream_executor.CudaCubinProto.data"),
                "{t}/{m}: no cubin read: {census:?}"
            );
        }
    }
}

#[test]
fn the_old_custom_kernel_layout_is_a_mis_typed_field() {
    // Before 2026-12-01 this schema declared CustomKernelProto field 3 as an int64
    // (shared_memory_bytes); XLA's field 3 is block_dims, a message. Bytes of the old layout must
    // fail the reflective decode, not read as an unknown field.
    // GpuExecutableProto.thunks (13) { custom_kernel_thunk (36) { custom_kernel (3) { 3: 256 } } }
    let custom_kernel = [0x18, 0x80, 0x02];
    let mut thunk_impl = vec![0x1a, custom_kernel.len() as u8];
    thunk_impl.extend(custom_kernel);
    let mut thunk = vec![0xa2, 0x02, thunk_impl.len() as u8];
    thunk.extend(thunk_impl);
    let mut exe = vec![0x6a, thunk.len() as u8];
    exe.extend(thunk);
    let err = harness::census_of_bytes(&exe).unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to decode Protobuf message: invalid wire type: Varint (expected LengthDelimited)"
    );
}

/// `aot run`'s verdict on one committed artifact (both forms must give the same one).
fn verdict(target: &str, module: &str, ext: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let args = harness::cmd::run::RunArgs::new(
        testdata().join(target).join(format!("{module}.{ext}")),
        root.join(format!("testdata/target_specs/{target}.txtpb")),
        vec![root.join(format!("testdata/corpus/hlo/{module}.io.json"))],
    );
    let mut out = Vec::new();
    match harness::cmd::run::run(&args, &mut out) {
        Ok(code) => format!("exit {code}: {}", String::from_utf8_lossy(&out)),
        // The chain without the file name (the first context).
        Err(e) => format!("{:#}", e.root_cause()),
    }
}

#[test]
fn load_verdicts_on_the_emulated_device() {
    // Every one passes decode, the ABI check (a100's recorded CUDA toolkit 0.0.0 is met by a
    // runtime without a toolkit version), the compute capability, the embedded HLO, the
    // allocations (fori_loop's tuple-holding temp included) and XLA's device-to-device copies,
    // and without PTX stops at its first kernel, which carries only a cubin.
    let at = |path: &str, name: &str, code: &str| {
        format!(
            "UNIMPLEMENTED: {path}.custom_kernel_thunk: this runtime does not execute custom-kernel thunks (kernel `{name}`: it carries only an {code}, no PTX); the emulated device runs PTX; supply its PTX (aot run --kernel-ptx, runtime::load_with_kernel_ptx)"
        )
    };
    let kernel = |name: &str, code: &str| at("thunks[0]", name, code);
    let cond = "thunks[2].while_thunk.condition_thunk_sequence.thunks[0]";
    let want = [
        (
            "h100_sxm",
            "add",
            kernel("wrapped_add", "sm_90a cubin (3264 bytes)"),
        ),
        (
            "h100_sxm",
            "softmax",
            kernel("triton_softmax_2", "sm_90a cubin (4920 bytes)"),
        ),
        (
            "h100_sxm",
            "mlp",
            kernel("gemm_fusion_dot_2", "sm_90a cubin (6984 bytes)"),
        ),
        (
            "h100_sxm",
            "cond",
            kernel("loop_select_fusion", "sm_90a cubin (3392 bytes)"),
        ),
        (
            "h100_sxm",
            "fori_loop",
            at(cond, "loop_compare_fusion", "sm_90a cubin (3256 bytes)"),
        ),
        (
            "a100_sxm_80",
            "add",
            kernel("wrapped_add", "sm_80 cubin (2856 bytes)"),
        ),
        (
            "a100_sxm_80",
            "softmax",
            kernel("triton_softmax_2", "sm_80 cubin (4648 bytes)"),
        ),
        (
            "a100_sxm_80",
            "mlp",
            kernel("gemm_fusion_dot_2", "sm_80 cubin (6432 bytes)"),
        ),
        (
            "a100_sxm_80",
            "cond",
            kernel("loop_select_fusion", "sm_80 cubin (2856 bytes)"),
        ),
        (
            "a100_sxm_80",
            "fori_loop",
            at(cond, "loop_compare_fusion", "sm_80 cubin (2856 bytes)"),
        ),
    ];
    for (t, m, w) in want {
        for ext in ["gpuexe", "pjrt"] {
            assert_eq!(verdict(t, m, ext), w, "{t}/{m}.{ext}");
        }
    }
}

fn inspect(target: &str, module: &str, ext: &str) -> String {
    let mut out = Vec::new();
    harness::cmd::inspect::inspect(&read(target, module, ext), true, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn inspect_reads_the_pjrt_form() {
    let s = inspect("h100_sxm", "add", "pjrt");
    assert!(
        s.contains("\nform: PjRt SerializeExecutable bytes (serializer pjrt_ifrt): header 136 bytes, Riegeli file 3153 bytes with 5 records (the GpuExecutableProto is the last), CompileOptionsProto 1105 bytes\n"),
        "{s}"
    );
    // The same executable as the bare form: everything after the form line agrees.
    let bare = inspect("h100_sxm", "add", "gpuexe");
    assert_eq!(
        s.split_once("\nmodule:").unwrap().1,
        bare.split_once("\nmodule:").unwrap().1
    );
}

#[test]
fn inspect_shows_an_xla_executable() {
    let s = inspect("h100_sxm", "add", "gpuexe");
    for line in [
        "form: bare GpuExecutableProto written by XLA:GPU",
        "compute capability: sm_90a (CUDA 9.0)",
        "abi: platform CUDA, CUDA toolkit 12.8.0, cuDNN 9.10.0, CUB 3.1.2",
        "  wrapped_add (custom kernel: cubin sm_90a (3264 bytes), no PTX)",
        "  #1 custom-kernel wrapped_add grid 1x1x1 block 20x1x1 shmem 0 args a1[0+80] a2[0+80] a0[0+80] [stream 0] wrapped_add",
        "  unknown:xla.gpu.GpuExecutableProto.2",
        "  xla.gpu.ThunkProto.custom_kernel_thunk",
    ] {
        assert!(s.lines().any(|l| l == line), "no line {line:?} in:\n{s}");
    }
    let a100 = inspect("a100_sxm_80", "add", "gpuexe");
    assert!(
        a100.lines()
            .any(|l| l == "abi: platform CUDA, CUDA toolkit 0.0.0, cuDNN 8.9.4, CUB 0.0.0"),
        "{a100}"
    );
    // XLA's device-to-device copies (ThunkProto 13), with their slices.
    let f = inspect("h100_sxm", "fori_loop", "gpuexe");
    for line in [
        "  #1 device-to-device copy 4 bytes a2[0+4] -> a3[256+4] [stream 0] copy.9",
        "  xla.gpu.ThunkProto.device_to_device_copy_thunk",
    ] {
        assert!(f.lines().any(|l| l == line), "no line {line:?} in:\n{f}");
    }
}

/// The Riegeli file inside a committed `.pjrt`, and where it starts.
fn riegeli_of(pjrt: &[u8]) -> (usize, Vec<u8>) {
    let env = unwrap_xla_artifact(pjrt).unwrap().envelope.unwrap();
    // Body field 1: key 0x0a, then the varint length of the file.
    let len_bytes = (64 - (env.riegeli_bytes as u64).leading_zeros() as usize).div_ceil(7);
    let start = env.header_bytes + 1 + len_bytes;
    (start, pjrt[start..start + env.riegeli_bytes].to_vec())
}

#[test]
fn truncated_input_is_a_typed_error() {
    for t in TARGETS {
        for m in MODULES {
            let pjrt = read(t, m, "pjrt");
            let (start, riegeli) = riegeli_of(&pjrt);
            // Cut anywhere inside the Riegeli file: never a panic, never an executable.
            for n in 0..riegeli.len() {
                assert!(
                    riegeli_records(&riegeli[..n])
                        .map(|r| r.len() < 5)
                        .unwrap_or(true),
                    "{t}/{m}: cut at {n} still gave every record"
                );
            }
            // Cut the envelope after its header: the body's fields run past the end, or the
            // CompileOptionsProto is missing.
            for n in start..pjrt.len() {
                assert!(
                    unwrap_xla_artifact(&pjrt[..n]).is_err(),
                    "{t}/{m}: cut at {n}"
                );
            }
        }
    }
    let (_, riegeli) = riegeli_of(&read("h100_sxm", "add", "pjrt"));
    assert_eq!(
        riegeli_records(&riegeli[..200]).unwrap_err().to_string(),
        "Riegeli chunk data at byte 64 needs 3049 bytes, only 96 left (truncated input)"
    );
    assert_eq!(
        riegeli_records(&riegeli[..70]).unwrap_err().to_string(),
        "Riegeli chunk header at byte 64 needs 40 bytes, only 6 left (truncated input)"
    );
    assert_eq!(
        riegeli_records(&riegeli[..10]).unwrap_err().to_string(),
        "Riegeli block header at byte 0 needs 24 bytes, only 10 left (truncated input)"
    );
    let pjrt = read("h100_sxm", "add", "pjrt");
    assert_eq!(
        unwrap_xla_artifact(&pjrt[..200]).unwrap_err().to_string(),
        "envelope body at byte 3 needs 3153 bytes, only 61 left (truncated input)"
    );
}

#[test]
fn corrupt_input_is_a_typed_error() {
    let pjrt = read("h100_sxm", "add", "pjrt");
    let (_, riegeli) = riegeli_of(&pjrt);
    let flipped = |at: usize| {
        let mut r = riegeli.clone();
        r[at] ^= 0x40;
        riegeli_records(&r).unwrap_err()
    };
    let hash_at = |e: XlaArtifactError| match e {
        XlaArtifactError::Hash { what, at, .. } => (what, at),
        other => panic!("not a hash error: {other}"),
    };
    assert_eq!(hash_at(flipped(12)), ("block header", 0));
    assert_eq!(hash_at(flipped(64 + 30)), ("chunk header", 64));
    assert_eq!(hash_at(flipped(64 + 40 + 500)), ("chunk data", 64));
    // Another serializer's envelope is refused by name.
    let mut other = pjrt.clone();
    let at = other.windows(9).position(|w| w == b"pjrt_ifrt").unwrap();
    other[at + 8] = b'x';
    assert_eq!(
        unwrap_xla_artifact(&other).unwrap_err().to_string(),
        "PjRt envelope: header names serializer \"pjrt_ifrx\", expected \"pjrt_ifrt\""
    );
}

#[test]
fn census_reads_every_form() {
    let mut out = Vec::new();
    let paths = vec![
        testdata().join("h100_sxm/fori_loop.pjrt"),
        testdata().join("a100_sxm_80/cond.gpuexe"),
    ];
    harness::cmd::inspect::census(&paths, true, &mut out).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let census: Vec<&str> = v["census"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    for c in [
        "xla.gpu.ThunkProto.while_thunk",
        "xla.gpu.ThunkProto.custom_kernel_thunk",
        "xla.gpu.ThunkProto.device_to_device_copy_thunk",
        "stream_executor.CudaComputeCapabilityProto.FeatureExtension.NONE",
        "flag:max_while_iterations",
    ] {
        assert!(census.contains(&c), "{c} missing from {census:?}");
    }
}

/// XLA's encoding of `HloModuleConfigProto` 23 (`repeated uint64 memory_space_assignment_config`,
/// packed) and 24 (`repeated BoolList phase_ordering_config`, `BoolList { repeated bool vals =
/// 1 }`): values of every varint length, a BoolList with a two-byte length, an empty one and one
/// with its bools unpacked.
fn xla_23_and_24() -> Vec<u8> {
    use proto::prost::encoding::{encode_key, encode_varint, WireType};
    let mut packed = Vec::new();
    for v in [0, 1, 300, 1 << 40, u64::MAX] {
        encode_varint(v, &mut packed);
    }
    let mut out = Vec::new();
    encode_key(23, WireType::LengthDelimited, &mut out);
    encode_varint(packed.len() as u64, &mut out);
    out.extend(&packed);
    let long: Vec<u8> = (0..150).map(|i| u8::from(i % 2 == 0)).collect();
    let mut lists = vec![Vec::new(), vec![0x08, 0x01, 0x08, 0x00]];
    let mut packed_list = vec![0x0a];
    encode_varint(long.len() as u64, &mut packed_list);
    packed_list.extend(&long);
    lists.push(packed_list);
    for m in lists {
        encode_key(24, WireType::LengthDelimited, &mut out);
        encode_varint(m.len() as u64, &mut out);
        out.extend(m);
    }
    out
}

/// `exe` (an encoded `GpuExecutableProto`) with `extra` appended to its embedded module's config,
/// through protobuf's merge of a message field that occurs twice: the executable and the module
/// re-encoded without the config, then the config's own bytes plus `extra` at its number.
fn with_config_bytes(exe: &[u8], extra: &[u8]) -> Vec<u8> {
    use proto::fields::{EXECUTABLE_HLO_MODULE_WITH_CONFIG, MODULE_WITH_CONFIG_CONFIG};
    use proto::prost::encoding::{encode_key, encode_varint, WireType};
    use proto::prost::Message;
    let field = |out: &mut Vec<u8>, number: u32, bytes: &[u8]| {
        encode_key(number, WireType::LengthDelimited, out);
        encode_varint(bytes.len() as u64, out);
        out.extend(bytes);
    };
    let mut exe = proto::xla::gpu::GpuExecutableProto::decode(exe).unwrap();
    let mut module = exe.hlo_module_with_config.take().unwrap();
    let mut config = module.config.take().unwrap().encode_to_vec();
    config.extend(extra);
    let mut module_bytes = module.encode_to_vec();
    field(&mut module_bytes, MODULE_WITH_CONFIG_CONFIG, &config);
    let mut out = exe.encode_to_vec();
    field(&mut out, EXECUTABLE_HLO_MODULE_WITH_CONFIG, &module_bytes);
    out
}

/// XLA's artifacts carry its propagation lists at 33/27; XLA's `memory_space_assignment_config`
/// (23) and `phase_ordering_config` (24) next to them are valid XLA and must not be read as the
/// legacy lists at those numbers (issue 19): with both added, every committed artifact decodes
/// (prost and reflection), its module checks and converts as without them, and the runtime's load
/// verdict is the same.
#[test]
fn xla_s_23_and_24_next_to_33_and_27_are_ignored() {
    use proto::prost::Message;
    let device = |t: &str| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let config =
            proto::load_target_config(&root.join(format!("testdata/target_specs/{t}.txtpb")))
                .unwrap();
        runtime::EmulatedDevice::new(
            runtime::DeviceDescription::from_target_config(&config).unwrap(),
        )
    };
    let load = |bytes: &[u8], t: &str| match runtime::load(bytes, &device(t), &Default::default()) {
        Ok(_) => "loaded".to_owned(),
        Err(e) => e.to_string(),
    };
    for t in TARGETS {
        for m in MODULES {
            let plain = read(t, m, "gpuexe");
            let with = with_config_bytes(&plain, &xla_23_and_24());
            let module = |bytes: &[u8]| {
                proto::xla::gpu::GpuExecutableProto::decode(bytes)
                    .unwrap_or_else(|e| panic!("{t}/{m}: {e}"))
                    .hlo_module_with_config
                    .unwrap()
            };
            let (p, w) = (module(&plain), module(&with));
            let (pc, wc) = (p.config.as_ref().unwrap(), w.config.as_ref().unwrap());
            // XLA's own lists at 33/27, nothing at 23/24; then 23/24 decoded into the legacy
            // fields (a bool per varint: 5; 0 + 4 + 152).
            assert!(
                !pc.allow_spmd_sharding_propagation_to_parameters.is_empty()
                    && !pc.allow_spmd_sharding_propagation_to_output.is_empty()
                    && pc
                        .allow_spmd_sharding_propagation_to_parameters_legacy
                        .is_empty()
                    && pc
                        .allow_spmd_sharding_propagation_to_output_legacy
                        .is_empty(),
                "{t}/{m}: {pc:?}"
            );
            assert_eq!(
                (
                    wc.allow_spmd_sharding_propagation_to_parameters_legacy
                        .len(),
                    wc.allow_spmd_sharding_propagation_to_output_legacy.len()
                ),
                (5, 156),
                "{t}/{m}"
            );
            harness::census_of_bytes(&with).unwrap_or_else(|e| panic!("{t}/{m}: reflection: {e}"));
            assert_eq!(hlo::check_proto(&w), hlo::check_proto(&p), "{t}/{m}");
            assert!(hlo::check_proto(&p).is_ok(), "{t}/{m}");
            assert_eq!(
                hlo::check_proto_bytes(&w.encode_to_vec()),
                hlo::check_proto(&p),
                "{t}/{m}"
            );
            let converted = hlo::from_proto(&p);
            assert!(
                converted.as_ref().is_ok_and(|m| m
                    .config
                    .allow_spmd_sharding_propagation_to_parameters
                    .is_some()),
                "{t}/{m}: {converted:?}"
            );
            assert_eq!(hlo::from_proto(&w), converted, "{t}/{m}");
            assert_eq!(load(&with, t), load(&plain, t), "{t}/{m}");
        }
    }
}
