//! Unit-level tests of the pipeline: targets, passes, buffer assignment, aliasing, control flow
//! (executed by the test thunk interpreter and compared with the HLO reference evaluator).
mod common;

use hlo::{Array, Data};
use proto::xla::gpu::thunk_proto::Impl;

fn compile(text: &str) -> proto::xla::gpu::GpuExecutableProto {
    let module = hlo_text::parse_module(text).expect("parse");
    compiler::compile(&module, &common::target("h100_sxm"), &common::options()).expect("compile")
}

/// Compiles, runs on the emulator and compares with the reference evaluator.
fn run_vs_reference(text: &str, inputs: &[Array]) -> proto::xla::gpu::GpuExecutableProto {
    let module = hlo_text::parse_module(text).expect("parse");
    let exe = compiler::compile(&module, &common::target("h100_sxm"), &common::options())
        .expect("compile");
    let want = hlo_eval::evaluate_flat(&module, inputs).expect("evaluate");
    let args: Vec<Vec<u8>> = inputs.iter().map(common::interp::to_bytes).collect();
    let sizes: Vec<usize> = want
        .iter()
        .map(|a| common::interp::to_bytes(a).len())
        .collect();
    let (outs, _) = common::interp::run(&exe, &args, &sizes).expect("run");
    for (i, (bytes, w)) in outs.iter().zip(&want).enumerate() {
        let got = common::interp::from_bytes(w.dtype(), w.dims(), bytes);
        let c = hlo_eval::compare(&got, w, hlo_eval::Tolerance::for_dtype(w.dtype()));
        assert!(c.ok, "output {i}: {c:?}");
    }
    assert!(
        common::check_executable(&exe).is_empty(),
        "{:?}",
        common::check_executable(&exe)
    );
    exe
}

fn f32s(dims: Vec<usize>, v: impl Fn(usize) -> f32) -> Array {
    let n: usize = dims.iter().product();
    Array::new(dims, Data::F32((0..n).map(v).collect())).expect("array")
}

/// The bound is `proto::contract`'s, shared with the runtime: major 3 to 20, minor 0 to 9.
#[test]
fn compute_capabilities_outside_the_contract_bound_are_refused() {
    use proto::stream_executor::gpu_device_info_proto::ComputeCapability;
    let path = common::root().join("testdata/target_specs/h100_sxm.txtpb");
    let with = |major: i32, minor: i32| {
        let mut config = proto::load_target_config(&path).expect("h100_sxm parses");
        let info = config.gpu_device_info.as_mut().expect("gpu_device_info");
        let Some(ComputeCapability::CudaComputeCapability(c)) = info.compute_capability.as_mut()
        else {
            panic!("h100_sxm names a CUDA compute capability")
        };
        (c.major, c.minor) = (major, minor);
        compiler::Target::from_config(config, "h100.txtpb").map(|_| ())
    };
    assert!(with(3, 0).is_ok() && with(20, 9).is_ok());
    for (major, minor) in [(2, 0), (21, 0), (9, 10)] {
        assert_eq!(
            with(major, minor).expect_err("refused").to_string(),
            format!(
                "target config h100.txtpb: cuda_compute_capability {major}.{minor} is not a CUDA \
                 compute capability"
            )
        );
    }
}

#[test]
fn rocm_and_sycl_targets_are_rejected_naming_platform_and_file() {
    for (file, platform) in [("mi200", "ROCM"), ("pvc", "SYCL")] {
        let path = common::root().join(format!("testdata/target_specs/{file}.txtpb"));
        let err = compiler::Target::load(&path)
            .expect_err("must be rejected")
            .to_string();
        assert!(err.contains(platform), "{err}");
        assert!(err.contains(&format!("{file}.txtpb")), "{err}");
        assert!(err.contains("only CUDA"), "{err}");
    }
}

#[test]
fn cuda_targets_give_capability_ptx_version_and_abi() {
    let h100 = common::target("h100_sxm");
    assert_eq!(h100.codegen.target_name(), "sm_90a");
    assert_eq!(h100.codegen.ptx_version, (8, 7));
    assert_eq!(h100.codegen.max_threads_per_block, 1024);
    let a100 = common::target("a100_sxm_80");
    assert_eq!(a100.codegen.target_name(), "sm_80");
    let exe =
        compile("HloModule m\nENTRY e { p = f32[4] parameter(0)\n ROOT n = f32[4] negate(p) }");
    let abi = exe.executable_abi_version.expect("abi");
    assert_eq!(abi.platform_name, "CUDA");
    match abi.platform_version {
        Some(proto::stream_executor::executable_abi_version_proto::PlatformVersion::CudaPlatformVersion(v)) => {
            assert_eq!(v.cuda_toolkit_version, "12.8.0");
            assert_eq!(v.cudnn_version, "9.10.0");
            assert_eq!(v.cub_version, "3.1.2");
        }
        other => panic!("{other:?}"),
    }
    for spec in ["b200", "gb300", "rtx6000pro", "v100", "p100"] {
        let t = common::target(spec);
        assert!(t.codegen.sm >= 60, "{spec}");
    }
}

#[test]
fn inline_dce_simplify_cse() {
    let text = r#"
HloModule m
callee {
  a = f32[8] parameter(0)
  ROOT e = f32[8] exponential(a)
}
ENTRY e {
  p = f32[8] parameter(0)
  c = f32[8] call(p), to_apply=callee
  r = f32[8] reshape(c)
  cv = f32[8] convert(r)
  dead = f32[8] negate(p)
  n1 = f32[8] negate(cv)
  n2 = f32[8] negate(cv)
  ROOT s = f32[8] add(n1, n2)
}"#;
    let module = hlo_text::parse_module(text).expect("parse");
    let opt = compiler::optimize(&module, &common::options()).expect("optimize");
    let entry = opt.entry_computation();
    let ops: Vec<&str> = entry.instructions.iter().map(|i| i.opcode.name()).collect();
    assert_eq!(
        ops,
        ["parameter", "exponential", "negate", "add"],
        "{}",
        hlo_text::print_module(&opt)
    );
    let exe = run_vs_reference(text, &[f32s(vec![8], |i| i as f32 * 0.25)]);
    assert_eq!(common::census(&exe), (1, 0, 0), "one fused kernel");
}

#[test]
fn temporaries_share_memory_when_live_ranges_do_not_overlap() {
    let text = r#"
HloModule m
ENTRY e {
  p = f32[1024] parameter(0)
  a = f32[1024] exponential(p)
  b = f32[1024] negate(a)
  c = f32[1024] sine(b)
  d = f32[1024] cosine(c)
  ROOT r = f32[1024] tanh(d)
}"#;
    let module = hlo_text::parse_module(text).expect("parse");
    let mut options = common::options();
    options.fusion = false;
    let exe = compiler::compile(&module, &common::target("h100_sxm"), &options).expect("compile");
    let allocs = exe.buffer_allocations.clone().expect("allocations").values;
    let temp: Vec<_> = allocs
        .iter()
        .filter(|a| !a.is_entry_computation_parameter && !a.is_constant && !a.maybe_live_out)
        .collect();
    assert_eq!(temp.len(), 1);
    // Four temporaries of 4 KiB, at most two live at a time.
    assert!(
        temp[0].size <= 2 * 4096 + 64,
        "temp allocation of {} bytes",
        temp[0].size
    );
    assert_eq!(common::census(&exe).0, 5);
}

#[test]
fn must_alias_output_shares_the_parameter_allocation() {
    let text =
        std::fs::read_to_string(common::root().join("testdata/corpus/xla_hlo/must_alias.hlo"))
            .expect("read");
    let input = Array::new(vec![10], Data::S32((0..10).collect())).expect("array");
    let exe = run_vs_reference(&text, &[input]);
    let out = exe.output_info_map[0].output_info.clone().expect("info");
    let alloc =
        &exe.buffer_allocations.clone().expect("allocs").values[out.allocation_index as usize];
    assert!(alloc.is_entry_computation_parameter && alloc.parameter_number == 0);
    let alias = out.alias_config.expect("alias config");
    assert_eq!(alias.kind, proto::xla::Kind::MustAlias as i32);
}

#[test]
fn outputs_passthrough_duplicates_constants_and_slices() {
    let text = r#"
HloModule m
ENTRY e {
  p = f32[4,8] parameter(0)
  c = f32[3] constant({1, 2, 3})
  s = f32[1,8] slice(p), slice={[2:3], [0:8]}
  n = f32[4,8] negate(p)
  ROOT t = (f32[4,8], f32[4,8], f32[4,8], f32[3], f32[1,8]) tuple(p, n, n, c, s)
}"#;
    let exe = run_vs_reference(text, &[f32s(vec![4, 8], |i| i as f32)]);
    let info: Vec<_> = exe
        .output_info_map
        .iter()
        .map(|o| o.output_info.clone().expect("info"))
        .collect();
    assert!(info[0].passthrough);
    assert_ne!(info[1].allocation_index, info[2].allocation_index);
    assert_eq!(exe.constants.len(), 1);
    assert_eq!(exe.binary.len(), 12);
}

#[test]
fn while_loop_swapping_state_matches_reference() {
    let text = r#"
HloModule m
cond {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  a = f32[4] get-tuple-element(s), index=1
  b = f32[4] get-tuple-element(s), index=2
  two = f32[] constant(2)
  bb = f32[4] broadcast(two), dimensions={}
  a2 = f32[4] multiply(a, bb)
  ROOT t = (s32[], f32[4], f32[4]) tuple(i2, b, a2)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  z = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(z, x, y)
  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  g1 = f32[4] get-tuple-element(w), index=1
  g2 = f32[4] get-tuple-element(w), index=2
  ROOT r = (f32[4], f32[4]) tuple(g1, g2)
}"#;
    run_vs_reference(
        text,
        &[
            f32s(vec![4], |i| i as f32 + 1.0),
            f32s(vec![4], |i| 10.0 * i as f32),
        ],
    );
}

#[test]
fn conditional_with_tuple_results_matches_reference() {
    let text = r#"
HloModule m
b0 {
  x = f32[4] parameter(0)
  n = f32[4] negate(x)
  ROOT t = (f32[4], f32[4]) tuple(n, x)
}
b1 {
  x = f32[4] parameter(0)
  e = f32[4] exponential(x)
  ROOT t = (f32[4], f32[4]) tuple(x, e)
}
ENTRY e {
  i = s32[] parameter(0)
  x = f32[4] parameter(1)
  c = (f32[4], f32[4]) conditional(i, x, x), branch_computations={b0, b1}
  g0 = f32[4] get-tuple-element(c), index=0
  g1 = f32[4] get-tuple-element(c), index=1
  ROOT r = f32[4] add(g0, g1)
}"#;
    for sel in [0, 1, 7] {
        let i = Array::new(vec![], Data::S32(vec![sel])).expect("scalar");
        let exe = run_vs_reference(text, &[i, f32s(vec![4], |k| k as f32 * 0.5)]);
        assert!(common::all_thunks(&exe)
            .iter()
            .any(|t| matches!(t.r#impl, Some(Impl::ConditionalThunk(_)))));
    }
}

#[test]
fn dot_with_transposed_operands_becomes_a_gemm() {
    let text = r#"
HloModule m
ENTRY e {
  a = f32[2,8,4] parameter(0)
  b = f32[8,2,5] parameter(1)
  ROOT d = f32[2,4,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={1}, rhs_contracting_dims={0}
}"#;
    let exe = run_vs_reference(
        text,
        &[
            f32s(vec![2, 8, 4], |i| (i % 7) as f32 - 3.0),
            f32s(vec![8, 2, 5], |i| (i % 5) as f32 * 0.5),
        ],
    );
    let (kernels, gemms, _) = common::census(&exe);
    assert_eq!(gemms, 1);
    // The lhs is read transposed in place; the rhs (batch dimension not leading) is transposed.
    assert_eq!(kernels, 1);
}

#[test]
fn compile_errors_name_the_instruction() {
    let text = "HloModule m\nENTRY e { p = f32[4] parameter(0)\n ROOT i = f32[4] infeed-ish(p) }";
    assert!(hlo_text::parse_module(text).is_err());
    let text = r#"
HloModule m
ENTRY e {
  p = f32[4,4] parameter(0)
  ROOT f = s32[] get-dimension-size(p), dimensions={0}
}"#;
    let module = hlo_text::parse_module(text).expect("parse");
    let err = compiler::compile(&module, &common::target("h100_sxm"), &common::options())
        .expect_err("unsupported");
    assert!(err.to_string().contains("get-dimension-size"), "{err}");
}

#[test]
fn collectives_custom_calls_and_device_ids_become_their_thunks() {
    let text = r#"
HloModule m, replica_count=2
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4,6] parameter(0)
  ar = f32[4,6] all-reduce(p), replica_groups={{0,1}}, to_apply=sum
  ag = f32[4,12] all-gather(ar), dimensions={1}, replica_groups={{0,1}}
  rs = f32[2,6] reduce-scatter(p), dimensions={0}, replica_groups={{0,1}}, to_apply=sum
  r = u32[] replica-id()
  pid = u32[] partition-id()
  cc = f32[4,12] custom-call(ag), custom_call_target="my_handler", backend_config="cfg"
  ROOT t = (f32[4,12], f32[2,6], u32[], u32[]) tuple(cc, rs, r, pid)
}"#;
    let exe = compile(text);
    assert!(common::check_executable(&exe).is_empty());
    let kinds: Vec<&str> = common::all_thunks(&exe)
        .iter()
        .map(|t| match &t.r#impl {
            Some(Impl::AllReduceStartThunk(_)) => "all-reduce",
            Some(Impl::AllGatherStartThunk(_)) => "all-gather",
            Some(Impl::ReduceScatterThunk(_)) => "reduce-scatter",
            Some(Impl::ReplicaIdThunk(_)) => "replica-id",
            Some(Impl::PartitionIdThunk(_)) => "partition-id",
            Some(Impl::CustomCallThunk(c)) => {
                assert_eq!(c.target_name, "my_handler");
                assert_eq!(c.opaque, b"cfg");
                "custom-call"
            }
            Some(Impl::KernelThunk(_)) => "kernel",
            _ => "other",
        })
        .collect();
    for k in [
        "all-reduce",
        "all-gather",
        "reduce-scatter",
        "replica-id",
        "partition-id",
        "custom-call",
    ] {
        assert!(kinds.contains(&k), "{k} missing from {kinds:?}");
    }
    // all-gather along dimension 1 is done on the leading dimension between two transposes.
    assert!(
        kinds.iter().filter(|k| **k == "kernel").count() >= 2,
        "{kinds:?}"
    );
}

#[test]
fn known_trip_count_becomes_a_hint() {
    let text = std::fs::read_to_string(
        common::root().join("testdata/corpus/xla_hlo/while_with_known_trip_count.hlo"),
    )
    .expect("read");
    let exe = compile(&text);
    let trip = common::all_thunks(&exe)
        .iter()
        .find_map(|t| match &t.r#impl {
            Some(Impl::WhileThunk(w)) => Some(w.trip_count),
            _ => None,
        });
    assert!(matches!(trip, Some(Some(n)) if n > 0), "{trip:?}");
}

#[test]
fn optimized_xla_modules_never_panic() {
    // XLA:CPU-optimized modules (fusions, CPU custom calls, layouts): compiling them may fail
    // with an error, never a panic.
    let dir = common::root().join("testdata/corpus/hlo");
    let mut compiled = 0;
    for e in std::fs::read_dir(&dir).expect("corpus") {
        let path = e.expect("entry").path();
        if !path.to_string_lossy().ends_with(".opt.hlo") {
            continue;
        }
        let Ok(module) = hlo_text::parse_module(&std::fs::read_to_string(&path).expect("read"))
        else {
            continue;
        };
        if compiler::compile(&module, &common::target("h100_sxm"), &common::options()).is_ok() {
            compiled += 1;
        }
    }
    assert!(compiled > 0);
}

/// `dimensions={-1}` once compiled into a kernel the emulator stopped for an out-of-bounds
/// access (reduce), or failed deep in codegen (broadcast of dimension 10^9); the compiler now
/// verifies its input and refuses both with the instruction's location.
#[test]
fn out_of_range_dimensions_are_refused_with_a_location() {
    let target = compiler::Target::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/target_specs/h100_sxm.txtpb"),
    )
    .unwrap();
    let reduce = "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n\nENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(x, z), dimensions={-1}, to_apply=add\n}\n";
    let m = hlo_text::parse_module(reduce).unwrap();
    let e = compiler::compile(&m, &target, &compiler::CompileOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid module: 12:8: e/r: reduce: reduce dimension -1 is out of range for rank 1"
    );
    let broadcast = "HloModule m\n\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4,4] broadcast(x), dimensions={1000000000}\n}\n";
    let m = hlo_text::parse_module(broadcast).unwrap();
    let e = compiler::compile(&m, &target, &compiler::CompileOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid module: 5:8: e/r: broadcast: broadcast dimension 1000000000 is out of range for rank 2"
    );
}

/// Thunk kinds at the top level of an executable, in order.
fn top_kinds(exe: &proto::xla::gpu::GpuExecutableProto) -> Vec<&'static str> {
    exe.thunks
        .iter()
        .map(|t| match &t.r#impl {
            Some(Impl::KernelThunk(_)) => "kernel",
            Some(Impl::GemmThunk(_)) => "gemm",
            Some(Impl::ConditionalThunk(_)) => "conditional",
            Some(Impl::CopyThunk(_)) => "copy",
            _ => "other",
        })
        .collect()
}

const SWITCH3: &str = "HloModule m
b0 {
  x = f32[6]{0} parameter(0)
  c = f32[] constant(1)
  b = f32[6]{0} broadcast(c), dimensions={}
  ROOT r = f32[6]{0} subtract(x, b)
}
b1 {
  x = f32[6]{0} parameter(0)
  c = f32[] constant(2)
  b = f32[6]{0} broadcast(c), dimensions={}
  ROOT r = f32[6]{0} multiply(x, b)
}
b2 {
  x = f32[6]{0} parameter(0)
  ROOT r = f32[6]{0} negate(x)
}
ENTRY e {
  i = s32[] parameter(0)
  x = f32[6]{0} parameter(1)
  ROOT c = f32[6]{0} conditional(i, x, x, x), branch_computations={b0, b1, b2}
}
";

#[test]
fn conditional_with_cheap_branches_is_one_kernel_with_the_same_branch_choice() {
    // An index out of range takes the last branch, as the conditional thunk does.
    for sel in [-1, 0, 1, 2, 7] {
        let i = Array::new(vec![], Data::S32(vec![sel])).expect("scalar");
        let exe = run_vs_reference(SWITCH3, &[i, f32s(vec![6], |k| k as f32 - 2.5)]);
        assert_eq!(top_kinds(&exe), ["kernel"], "index {sel}");
    }
}

#[test]
fn pred_conditional_with_cheap_branches_is_a_select() {
    let text = "HloModule m
t {
  x = f32[4]{0} parameter(0)
  ROOT r = f32[4]{0} exponential(x)
}
f {
  x = f32[4]{0} parameter(0)
  ROOT r = f32[4]{0} abs(x)
}
ENTRY e {
  p = pred[] parameter(0)
  x = f32[4]{0} parameter(1)
  ROOT c = f32[4]{0} conditional(p, x, x), true_computation=t, false_computation=f
}
";
    for p in [true, false] {
        let pa = Array::new(vec![], Data::Pred(vec![p])).expect("scalar");
        let exe = run_vs_reference(text, &[pa, f32s(vec![4], |k| k as f32 - 1.5)]);
        assert_eq!(top_kinds(&exe), ["kernel"], "pred {p}");
    }
}

#[test]
fn conditional_with_a_reduction_in_a_branch_stays_a_conditional() {
    let text = "HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
b0 {
  x = f32[6]{0} parameter(0)
  z = f32[] constant(0)
  s = f32[] reduce(x, z), dimensions={0}, to_apply=add
  ROOT r = f32[6]{0} broadcast(s), dimensions={}
}
b1 {
  ROOT x = f32[6]{0} parameter(0)
}
ENTRY e {
  i = s32[] parameter(0)
  x = f32[6]{0} parameter(1)
  ROOT c = f32[6]{0} conditional(i, x, x), branch_computations={b0, b1}
}
";
    let i = Array::new(vec![], Data::S32(vec![0])).expect("scalar");
    let exe = run_vs_reference(text, &[i, f32s(vec![6], |k| k as f32)]);
    assert!(
        top_kinds(&exe).contains(&"conditional"),
        "{:?}",
        top_kinds(&exe)
    );
}

fn dense_layer(m: usize, k: usize, n: usize) -> String {
    format!(
        "HloModule m
ENTRY e {{
  x = f32[{m},{k}]{{1,0}} parameter(0)
  w = f32[{k},{n}]{{1,0}} parameter(1)
  b = f32[{n}]{{0}} parameter(2)
  d = f32[{m},{n}]{{1,0}} dot(x, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  bb = f32[{m},{n}]{{1,0}} broadcast(b), dimensions={{1}}
  a = f32[{m},{n}]{{1,0}} add(d, bb)
  ROOT t = f32[{m},{n}]{{1,0}} tanh(a)
}}
"
    )
}

#[test]
fn small_dot_with_bias_and_activation_is_one_gemm_kernel() {
    let (m, k, n) = (8, 32, 64);
    let exe = run_vs_reference(
        &dense_layer(m, k, n),
        &[
            f32s(vec![m, k], |i| ((i * 7) % 13) as f32 * 0.1 - 0.6),
            f32s(vec![k, n], |i| ((i * 5) % 11) as f32 * 0.05 - 0.25),
            f32s(vec![n], |i| i as f32 * 0.01),
        ],
    );
    assert_eq!(top_kinds(&exe), ["kernel"]);
}

#[test]
fn dot_too_big_for_shared_memory_stays_a_gemm_thunk() {
    // (96*48 + 48*96) * 4 bytes = 36 KiB > 32 KiB.
    let exe = compile(&dense_layer(96, 48, 96));
    assert_eq!(top_kinds(&exe), ["gemm", "kernel"]);
}

#[test]
fn topk_kernel_keeps_ties_in_index_order() {
    // Rows with repeated values, -0/+0 and -inf: the kernel's ranks must give the evaluator's
    // stable total order, for largest and smallest.
    let x = Array::new(
        vec![3, 5],
        Data::F32(vec![
            2.0,
            7.0,
            7.0,
            -1.0,
            7.0, //
            -0.0,
            0.0,
            -0.0,
            f32::NEG_INFINITY,
            1.0, //
            4.0,
            3.0,
            2.0,
            1.0,
            0.0,
        ]),
    )
    .unwrap();
    for largest in [true, false] {
        let text = format!(
            "HloModule t\n\nENTRY e {{\n  x = f32[3,5] parameter(0)\n  t = (f32[3,3], s32[3,3]) topk(x), k=3, largest={largest}\n  v = f32[3,3] get-tuple-element(t), index=0\n  i = s32[3,3] get-tuple-element(t), index=1\n  ROOT r = (f32[3,3], s32[3,3]) tuple(v, i)\n}}\n"
        );
        run_vs_reference(&text, std::slice::from_ref(&x));
    }
}

#[test]
fn select_and_scatter_with_padding_and_overlapping_windows() {
    // Window 3 stride 2 overlaps; padding 1 on each side is never selected; ties pick the first
    // element (GE keeps the current one).
    let text = "HloModule s\n\nge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=GE\n}\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n\nENTRY e {\n  x = f32[5,6] parameter(0)\n  s = f32[3,3] parameter(1)\n  z = f32[] constant(0.5)\n  ROOT r = f32[5,6] select-and-scatter(x, s, z), window={size=3x3 stride=2x2 pad=1_1x1_0}, select=ge, scatter=add\n}\n";
    let x = f32s(vec![5, 6], |i| ((i * 7) % 5) as f32);
    let s = f32s(vec![3, 3], |i| 1.0 + i as f32);
    run_vs_reference(text, &[x, s]);
}

#[test]
fn gather_and_scatter_with_batching_dimensions() {
    let text = "HloModule b\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n\nENTRY e {\n  x = f32[3,5] parameter(0)\n  i = s32[3,2,1] parameter(1)\n  g = f32[3,2] gather(x, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}\n  ROOT s = f32[3,5] scatter(x, i, g), update_window_dims={}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=add\n}\n";
    let x = f32s(vec![3, 5], |i| i as f32);
    let i = Array::new(vec![3, 2, 1], Data::S32(vec![4, 0, 2, 2, 1, 3])).unwrap();
    run_vs_reference(text, &[x, i]);
}

#[test]
fn a_refused_instruction_is_named_once_with_its_line() {
    let module = hlo_text::parse_module(
        "HloModule m\n\nENTRY e {\n  x = f32[8,8] parameter(0)\n  r = s32[] get-dimension-size(x), dimensions={0}\n  ROOT b = s32[] negate(r)\n}\n",
    )
    .unwrap();
    let e =
        compiler::compile(&module, &common::target("h100_sxm"), &common::options()).unwrap_err();
    let shown = format!("{:#}", anyhow::Error::new(e));
    assert_eq!(
        shown,
        "code generation for fusion fusion_r: r (get-dimension-size) at 5:3: get-dimension-size is not supported by the GPU code generator"
    );
}

/// Issue 16: inlining a chain of nested calls takes memory linear in its depth. Rewriting each
/// level in turn kept a flattened copy per level and grew every name by one suffix per level
/// (10,000 levels took 0.44 GB, 30,000 2.75 GB; 100,000 aborted at 8 GB).
#[test]
fn a_chain_of_20000_nested_calls_inlines_in_linear_space() {
    let depth = 20_000;
    let mut text = String::from(
        "HloModule chain\n\nc0 {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n\n",
    );
    for i in 1..depth {
        text.push_str(&format!(
            "c{i} {{\n  p = f32[4] parameter(0)\n  a = f32[4] negate(p)\n  ROOT r = f32[4] call(a), to_apply=c{}\n}}\n\n",
            i - 1
        ));
    }
    text.push_str(&format!(
        "ENTRY e {{\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] call(x), to_apply=c{}\n}}\n",
        depth - 1
    ));
    let mut module = hlo_text::parse_module(&text).expect("parse");
    let before: usize = module
        .computations
        .iter()
        .map(|c| c.instructions.len())
        .sum();
    compiler::inline_calls(&mut module).expect("inline");
    let entry = module.entry_computation();
    // The parameter and one negate per level, the leaf's included.
    assert_eq!(entry.instructions.len(), 1 + depth);
    assert!(entry
        .instructions
        .iter()
        .all(|i| i.opcode != hlo::Opcode::Call));
    // Every other computation is as it was: only the entry grew.
    let after: usize = module
        .computations
        .iter()
        .map(|c| c.instructions.len())
        .sum();
    assert_eq!(after, before - 2 + 1 + depth);
    let longest = module
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .map(|i| i.name.len())
        .max();
    // At most one suffix per level for the innermost 8 levels and the outermost one: names do
    // not grow with the depth.
    assert!(longest.is_some_and(|n| n <= 64), "{longest:?}");
}

/// FP8: f8 arithmetic, f8 constants (scalar and array) and an FP8 dot run as the reference
/// evaluator computes them, and the constants reach the embedded module as f32 constants and a
/// convert: runtimes in the forward window read no f8 literal (`passes/float8_constants.rs`).
#[test]
fn f8_programs_run_and_embed_no_f8_literal() {
    let text = r#"
HloModule m
ENTRY e {
  p = f32[4,8] parameter(0)
  q = f8e4m3fn[4,8] convert(p)
  c = f8e4m3fn[4,8] constant({{0.1, 2, -448, 3.3, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}})
  a = f8e4m3fn[4,8] multiply(q, c)
  s = f8e5m2[] constant(0.3)
  b = f8e5m2[4,8] broadcast(s), dimensions={}
  d = f8e5m2[4,8] convert(a)
  m = f8e5m2[4,8] add(d, b)
  w = f8e4m3fn[8,3] constant({{1, 2, 3}, {0.5, 0.25, -1}, {4, 8, 16}, {-2, -4, 0.125}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {-448, 448, 0}})
  g = f32[4,3] dot(m, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f8e5m2[4,8], f32[4,3]) tuple(m, g)
}"#;
    let exe = run_vs_reference(text, &[f32s(vec![4, 8], |i| (i % 9) as f32 * 0.75 - 3.0)]);
    let module = exe
        .hlo_module_with_config
        .and_then(|m| m.hlo_module)
        .expect("an embedded module");
    let f8 = [
        proto::xla::PrimitiveType::F8e4m3fn as i32,
        proto::xla::PrimitiveType::F8e5m2 as i32,
    ];
    let constants: Vec<_> = module
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .filter(|i| i.opcode == "constant")
        .collect();
    assert_eq!(constants.len(), 3, "{constants:#?}");
    for c in constants {
        let ty = c.shape.as_ref().map_or(0, |s| s.element_type);
        assert!(!f8.contains(&ty), "{} is an f8 constant", c.name);
        assert!(
            c.literal.as_ref().is_some_and(|l| !l.f32s.is_empty()),
            "{}",
            c.name
        );
    }
}
