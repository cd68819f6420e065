//! Writes the hostile-input corpus of `testdata/hostile/` (run from the repository root):
//!
//! ```sh
//! cargo run -p harness --example hostile_corpus
//! ```
//!
//! Each case is derived from a golden artifact, a bundled PTX kernel or written here, and is
//! listed in `manifest.json` with what the replay (`harness/tests/hostile.rs`) must get: the
//! stage that refuses it, the exact absl code (or `OK` for inputs that must load and run within
//! the limits) and a fragment of the message. Deterministic: running it again rewrites the same
//! bytes.
use std::path::Path;

use anyhow::{Context, Result};
use proto::prost::Message;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::*;
use serde_json::{json, Value};

const OUT: &str = "testdata/hostile";

fn golden(name: &str) -> Result<GpuExecutableProto> {
    let path = format!("goldens/executables/h100_sxm/v1/{name}/executable.pb");
    let bytes = std::fs::read(&path).with_context(|| path.clone())?;
    Ok(GpuExecutableProto::decode(bytes.as_slice())?)
}

/// Every thunk, depth first (control-flow thunks and their bodies).
fn for_each_thunk(thunks: &mut [ThunkProto], f: &mut dyn FnMut(&mut ThunkProto)) {
    for t in thunks {
        f(t);
        match t.r#impl.as_mut() {
            Some(Impl::SequentialThunk(s)) => for_each_thunk(&mut s.thunks, f),
            Some(Impl::WhileThunk(w)) => {
                for s in [&mut w.condition_thunk_sequence, &mut w.body_thunk_sequence]
                    .into_iter()
                    .flatten()
                {
                    for_each_thunk(&mut s.thunks, f);
                }
            }
            _ => {}
        }
    }
}

fn allocs(p: &mut GpuExecutableProto) -> &mut Vec<proto::xla::BufferAllocationProto> {
    &mut p
        .buffer_allocations
        .get_or_insert_with(Default::default)
        .values
}

fn first_kernel(p: &mut GpuExecutableProto) -> &mut KernelThunkProto {
    let mut kernels = proto::kernel_thunks_mut(&mut p.thunks);
    assert!(!kernels.is_empty(), "the golden has a kernel thunk");
    kernels.swap_remove(0)
}

struct Corpus {
    entries: Vec<Value>,
}

impl Corpus {
    fn write(&mut self, file: &str, bytes: &[u8], entry: Value) -> Result<()> {
        std::fs::write(Path::new(OUT).join(file), bytes)?;
        let mut e = json!({ "file": file });
        if let (Some(e), Value::Object(more)) = (e.as_object_mut(), entry) {
            e.extend(more);
        }
        self.entries.push(e);
        Ok(())
    }

    /// An artifact for the h100_sxm emulated device (or `target`), refused at `stage`.
    fn artifact(
        &mut self,
        file: &str,
        p: &GpuExecutableProto,
        stage: &str,
        code: &str,
        message: &str,
    ) -> Result<()> {
        self.write(file, &p.encode_to_vec(), json!({"kind": "artifact", "target": "h100_sxm", "stage": stage, "code": code, "message": message}))
    }
}

fn main() -> Result<()> {
    std::fs::create_dir_all(OUT)?;
    let mut c = Corpus {
        entries: Vec::new(),
    };

    // The abort of issue 16: replica_count 2^63-1.
    let mut p = golden("add")?;
    if let Some(cfg) = p
        .hlo_module_with_config
        .as_mut()
        .and_then(|h| h.config.as_mut())
    {
        cfg.replica_count = i64::MAX;
    }
    c.artifact(
        "huge_replica_count.pb",
        &p,
        "load",
        "RESOURCE_EXHAUSTED",
        "replica_count is 9223372036854775807, over the limit of 1024 replicas",
    )?;

    // A loop whose condition reads a counter the body never changes (the body emptied).
    let mut p = golden("fori_loop")?;
    for_each_thunk(&mut p.thunks, &mut |t| {
        if let Some(Impl::WhileThunk(w)) = t.r#impl.as_mut() {
            w.body_thunk_sequence = Some(ThunkSequenceProto { thunks: vec![] });
        }
    });
    c.artifact(
        "loop_on_unchanged_buffer.pb",
        &p,
        "run",
        "RESOURCE_EXHAUSTED",
        "the loop ran 1000 iterations without its condition becoming false",
    )?;

    // 2^31-1 blocks: within CUDA's grid limit, stopped by the wall-time limit.
    let mut p = golden("add")?;
    if let Some(b) = first_kernel(&mut p)
        .launch_dimensions
        .as_mut()
        .and_then(|l| l.block_counts.as_mut())
    {
        b.x = (1 << 31) - 1;
    }
    c.artifact("two_pow_31_blocks.pb", &p, "run", "RESOURCE_EXHAUSTED", "is 549755813632 threads, more than the emulator's budget of 68719476736 lane-instructions can run (RuntimeFlags::emulator_instruction_budget)")?;

    // Threads per block and shared memory over the device's limits.
    let mut p = golden("add")?;
    if let Some(t) = first_kernel(&mut p)
        .launch_dimensions
        .as_mut()
        .and_then(|l| l.thread_counts_per_block.as_mut())
    {
        t.x = 2048;
    }
    c.artifact(
        "threads_per_block_over_limit.pb",
        &p,
        "load",
        "INVALID_ARGUMENT",
        "thread_counts_per_block.x is 2048, out of range [1, 1024]",
    )?;
    let mut p = golden("add")?;
    first_kernel(&mut p).shmem_bytes = 1 << 20;
    c.artifact(
        "shared_memory_over_limit.pb",
        &p,
        "load",
        "INVALID_ARGUMENT",
        "shmem_bytes is 1048576, out of range [0, 232448]",
    )?;

    // A 629-byte-class artifact declaring a 4 GiB buffer: costs nothing until touched, and the
    // emulated memory limit refuses it when it is over.
    let mut p = golden("add")?;
    if let Some(a) = allocs(&mut p).last_mut() {
        a.size = 4 << 30;
    }
    c.artifact(
        "four_gib_buffer.pb",
        &p,
        "run",
        "RESOURCE_EXHAUSTED",
        "allocating 4294967296 bytes exceeds the device limit of 1073741824 bytes",
    )?;

    // Negative size, out-of-range allocation index, slice past its allocation.
    let mut p = golden("add")?;
    allocs(&mut p)[0].size = -1;
    c.artifact(
        "negative_allocation_size.pb",
        &p,
        "load",
        "INVALID_ARGUMENT",
        "buffer_allocations.values[0].size is -1, must be >= 0",
    )?;
    let mut p = golden("add")?;
    first_kernel(&mut p).args[0].buffer_allocation_index = 999;
    c.artifact(
        "allocation_index_out_of_range.pb",
        &p,
        "load",
        "INVALID_ARGUMENT",
        "args[0].buffer_allocation_index is 999, out of range [0, 3)",
    )?;
    let mut p = golden("add")?;
    first_kernel(&mut p).args[0].offset = 1 << 40;
    c.artifact(
        "slice_past_allocation.pb",
        &p,
        "load",
        "INVALID_ARGUMENT",
        "offset 1099511627776 + size 80 exceeds the size 80 of buffer_allocations[0]",
    )?;

    // Truncations: half the artifact, and all but its last byte.
    let bytes = golden("add")?.encode_to_vec();
    c.write("truncated_half.pb", &bytes[..bytes.len() / 2], json!({"kind": "artifact", "target": "h100_sxm", "stage": "load", "code": "INVALID_ARGUMENT", "message": "not a valid GpuExecutableProto: malformed protobuf: failed to decode Protobuf message: GpuExecutableProto.thunks: buffer underflow"}))?;
    c.write("truncated_last_byte.pb", &bytes[..bytes.len() - 1], json!({"kind": "artifact", "target": "h100_sxm", "stage": "load", "code": "INVALID_ARGUMENT", "message": "GpuExecutableProto.executable_abi_version: buffer underflow"}))?;

    // Unknown opcode in the embedded module.
    let mut p = golden("add")?;
    if let Some(m) = p
        .hlo_module_with_config
        .as_mut()
        .and_then(|h| h.hlo_module.as_mut())
    {
        if let Some(i) = m
            .computations
            .iter_mut()
            .flat_map(|c| c.instructions.iter_mut())
            .find(|i| i.opcode == "add")
        {
            i.opcode = "frobnicate".into();
        }
    }
    c.artifact(
        "unknown_opcode.pb",
        &p,
        "load",
        "UNIMPLEMENTED",
        "unknown opcode \"frobnicate\"",
    )?;

    // A newer toolkit than the device's runtime.
    let mut p = golden("add")?;
    use proto::stream_executor::executable_abi_version_proto::PlatformVersion;
    if let Some(PlatformVersion::CudaPlatformVersion(v)) = p
        .executable_abi_version
        .as_mut()
        .and_then(|a| a.platform_version.as_mut())
    {
        v.cuda_toolkit_version = "99.0.0".into();
    }
    c.artifact("newer_abi.pb", &p, "load", "FAILED_PRECONDITION", "the executable needs CUDA toolkit 99.0.0 or newer, the device's runtime has CUDA toolkit 12.8.0")?;

    // Compiled for Hopper, loaded on Ampere.
    let p = golden("add")?;
    c.write("wrong_compute_capability.pb", &p.encode_to_vec(), json!({"kind": "artifact", "target": "a100_sxm_80", "stage": "load", "code": "FAILED_PRECONDITION", "message": "gpu_compute_capability is sm_90 (9.0), the device is sm_80 (8.0)"}))?;

    // A custom-call target no registry knows.
    let mut p = golden("custom_call_axpy")?;
    for_each_thunk(&mut p.thunks, &mut |t| {
        if let Some(Impl::CustomCallThunk(cc)) = t.r#impl.as_mut() {
            cc.target_name = "no_such_target".into();
        }
    });
    c.artifact(
        "unknown_custom_call_target.pb",
        &p,
        "load",
        "NOT_FOUND",
        "target_name \"no_such_target\" is not registered",
    )?;

    // An unset thunk oneof (what a newer compiler's thunk kind looks like).
    let mut p = golden("add")?;
    p.thunks[0].r#impl = None;
    c.artifact(
        "unset_thunk_oneof.pb",
        &p,
        "load",
        "UNIMPLEMENTED",
        "thunks[0].impl is not set: the thunk was made by a newer compiler",
    )?;

    // A 10,000-character kernel name: the message echoes its start and its length, not all.
    let mut p = golden("add")?;
    first_kernel(&mut p).kernel_name = "k".repeat(10_000);
    c.artifact(
        "kernel_name_10000_characters.pb",
        &p,
        "load",
        "NOT_FOUND",
        &format!(
            "kernel_name \"{}… (10000 characters)\" is not an .entry",
            "k".repeat(60)
        ),
    )?;

    // Deep message nesting: past prost's recursion limit, and past the runtime's depth limit.
    for (file, depth, code, message) in [
        ("nesting_200_sequential.pb", 200, "INVALID_ARGUMENT", "ThunkProto.impl: … (95 more fields): ThunkProto.impl: SequentialThunkProto.thunks: ThunkProto.impl: recursion limit reached"),
        ("nesting_40_sequential.pb", 40, "INVALID_ARGUMENT", "thunk nesting depth 33 exceeds the limit of 32 (RuntimeFlags::max_thunk_depth)"),
    ] {
        let mut p = golden("add")?;
        let mut t = p.thunks.remove(0);
        for i in 0..depth {
            t = ThunkProto { thunk_info: Some(ThunkInfoProto { thunk_id: 1000 + i, ..t.thunk_info.clone().unwrap_or_default() }), r#impl: Some(Impl::SequentialThunk(SequentialThunkProto { thunks: vec![t] })) };
        }
        p.thunks.insert(0, t);
        c.artifact(file, &p, "load", code, message)?;
    }
    // While thunks nested 3000 deep.
    let mut p = golden("add")?;
    let mut t = p.thunks.remove(0);
    for i in 0..3000 {
        t = ThunkProto {
            thunk_info: Some(ThunkInfoProto {
                thunk_id: 1000 + i,
                ..t.thunk_info.clone().unwrap_or_default()
            }),
            r#impl: Some(Impl::WhileThunk(WhileThunkProto {
                condition_result_buffer_index: None,
                condition_thunk_sequence: Some(ThunkSequenceProto { thunks: vec![] }),
                body_thunk_sequence: Some(ThunkSequenceProto { thunks: vec![t] }),
                trip_count: None,
            })),
        };
    }
    p.thunks.insert(0, t);
    c.artifact("while_nested_3000.pb", &p, "load", "INVALID_ARGUMENT", "not a valid GpuExecutableProto: thunks[0]: failed to decode Protobuf message: WhileThunkProto.condition_thunk_sequence: ThunkProto.impl: ThunkSequenceProto.thunks: … (95 more fields)")?;

    // HLO the compiler must refuse, or compile into artifacts that load and stop at a limit.
    let hlo = |c: &mut Corpus, file: &str, text: &str, stage: &str, code: &str, message: &str| {
        c.write(file, text.as_bytes(), json!({"kind": "hlo", "target": "h100_sxm", "stage": stage, "code": code, "message": message}))
    };
    hlo(&mut c, "always_true_while.hlo", "HloModule always_true\n\ncond {\n  p = s32[] parameter(0)\n  ROOT t = pred[] constant(true)\n}\n\nbody {\n  p = s32[] parameter(0)\n  one = s32[] constant(1)\n  ROOT a = s32[] add(p, one)\n}\n\nENTRY e {\n  z = s32[] constant(0)\n  ROOT w = s32[] while(z), condition=cond, body=body\n}\n", "run", "RESOURCE_EXHAUSTED", "while_thunk 2 (w): the loop ran 1000 iterations without its condition becoming false")?;
    hlo(&mut c, "dimensions_minus_one.hlo", "HloModule dims\n\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT b = f32[4,4] broadcast(x), dimensions={-1}\n}\n", "compile", "InvalidModule", "broadcast dimension -1 is out of range for rank 2")?;
    // 3 x 6148914691236517212 elements is 2^64 + 20: a wrapping product made this a 20-element
    // reduce that compiled, ran and matched an expected 20 (issue 33).
    hlo(&mut c, "element_count_wraps_2_pow_64.hlo", "HloModule wrap\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  p = f32[] parameter(0)\n  bc = f32[3,6148914691236517212] broadcast(p), dimensions={}\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(bc, z), dimensions={0,1}, to_apply=add\n}\n", "compile", "InvalidModule", "shape f32[3,6148914691236517212] is larger than 2^63-1 bytes")?;
    hlo(&mut c, "reordered_instructions.hlo", "HloModule reordered\n\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT a = f32[4] add(x, y)\n  y = f32[4] negate(x)\n}\n", "run", "OK", "")?;
    let mut chain = String::from("HloModule nested_calls\n\n");
    let depth = 2000;
    chain.push_str("c0 {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n\n");
    for i in 1..depth {
        chain.push_str(&format!(
            "c{i} {{\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] call(p), to_apply=c{}\n}}\n\n",
            i - 1
        ));
    }
    chain.push_str(&format!(
        "ENTRY e {{\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] call(x), to_apply=c{}\n}}\n",
        depth - 1
    ));
    hlo(&mut c, "nested_calls_2000.hlo", &chain, "run", "OK", "")?;

    // Operand chains and nesting deep enough to overflow a recursive compiler: an elementwise
    // chain fusion cuts into kernels (it must compile and run), a reducer whose chain is longer
    // than the emitter follows, tuples nested past the parser's limit, and while loops nested
    // past what the runtime loads (refused by the compiler; 30 deep compiles and runs).
    let mut chain = String::from("HloModule chain\n\nENTRY e {\n  x0 = f32[4] parameter(0)\n");
    let depth = 3000;
    for i in 1..depth {
        chain.push_str(&format!("  x{i} = f32[4] negate(x{})\n", i - 1));
    }
    chain.push_str(&format!(
        "  ROOT x{depth} = f32[4] negate(x{})\n}}\n",
        depth - 1
    ));
    hlo(
        &mut c,
        "elementwise_chain_3000.hlo",
        &chain,
        "run",
        "OK",
        "",
    )?;
    let mut reducer = String::from("HloModule deep_reducer\n\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  r0 = f32[] add(a, b)\n");
    for i in 1..3000 {
        reducer.push_str(&format!("  r{i} = f32[] negate(r{})\n", i - 1));
    }
    reducer.push_str("  ROOT r3000 = f32[] negate(r2999)\n}\n\nENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT s = f32[] reduce(x, z), dimensions={0}, to_apply=sum\n}\n");
    hlo(
        &mut c,
        "reducer_chain_3000.hlo",
        &reducer,
        "compile",
        "Codegen",
        "the expression nests deeper than 2048 operands (codegen::elemental::MAX_EXPRESSION_DEPTH)",
    )?;
    let nested = format!(
        "HloModule nested_tuple\n\nENTRY e {{\n  p = {}f32[4]{} parameter(0)\n  ROOT c = f32[4] constant({{1, 2, 3, 4}})\n}}\n",
        "(".repeat(100),
        ")".repeat(100)
    );
    hlo(
        &mut c,
        "tuple_shape_nested_100.hlo",
        &nested,
        "parse",
        "TooDeep",
        "nesting deeper than 64 levels",
    )?;
    let whiles = |n: usize| {
        let mut s = String::from("HloModule nested_whiles\n\ncond {\n  p = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n  one = s32[] constant(1)\n  ROOT lt = pred[] compare(i, one), direction=LT\n}\n\nb0 {\n  p = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n  x = f32[4] get-tuple-element(p), index=1\n  one = s32[] constant(1)\n  i1 = s32[] add(i, one)\n  nx = f32[4] negate(x)\n  ROOT t = (s32[], f32[4]) tuple(i1, nx)\n}\n\n");
        for k in 1..n {
            s.push_str(&format!("b{k} {{\n  p = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n  x = f32[4] get-tuple-element(p), index=1\n  z = s32[] constant(0)\n  it = (s32[], f32[4]) tuple(z, x)\n  w = (s32[], f32[4]) while(it), condition=cond, body=b{}\n  x2 = f32[4] get-tuple-element(w), index=1\n  one = s32[] constant(1)\n  i1 = s32[] add(i, one)\n  ROOT t = (s32[], f32[4]) tuple(i1, x2)\n}}\n\n", k - 1));
        }
        s.push_str(&format!("ENTRY e {{\n  x = f32[4] parameter(0)\n  z = s32[] constant(0)\n  it = (s32[], f32[4]) tuple(z, x)\n  w = (s32[], f32[4]) while(it), condition=cond, body=b{}\n  ROOT r = f32[4] get-tuple-element(w), index=1\n}}\n", n - 1));
        s
    };
    hlo(&mut c, "while_nested_30.hlo", &whiles(30), "run", "OK", "")?;
    hlo(&mut c, "while_nested_40.hlo", &whiles(40), "compile", "NestingTooDeep", "control flow nests deeper than 30 levels at computation cond (compiler::MAX_CONTROL_FLOW_DEPTH)")?;

    // PTX launched by `aot ptx-run`: a store far past its buffer, and a barrier that half the
    // block never reaches.
    let vadd = std::fs::read_to_string("testdata/corpus/ptx/vadd.ptx")?;
    let oob = vadd.replace(
        "mul.wide.s32 \t%rd5, %r1, 4;",
        "mul.wide.s32 \t%rd5, %r1, 4096;",
    );
    assert_ne!(oob, vadd, "vadd.ptx has the index scaling this edit moves");
    let launch = vadd_launch;
    std::fs::write(
        Path::new(OUT).join("oob_store.launch.json"),
        serde_json::to_vec_pretty(&launch(64))?,
    )?;
    c.write("oob_store.ptx", oob.as_bytes(), json!({"kind": "ptx", "launch": "oob_store.launch.json", "stage": "run", "code": "ERROR", "message": "out-of-bounds global read of 4 bytes at address 0x200001000: 3840 bytes past the end of the allocation of 256 bytes"}))?;
    let deadlock = vadd.replace("$L__BB0_2:\n\tret;", "\tbar.sync \t0;\n$L__BB0_2:\n\tret;");
    assert_ne!(
        deadlock, vadd,
        "vadd.ptx ends with the label this edit uses"
    );
    let mut spec = launch(64);
    spec["params"][3]["value"] = json!(40);
    std::fs::write(
        Path::new(OUT).join("barrier_deadlock.launch.json"),
        serde_json::to_vec_pretty(&spec)?,
    )?;
    c.write("barrier_deadlock.ptx", deadlock.as_bytes(), json!({"kind": "ptx", "launch": "barrier_deadlock.launch.json", "stage": "run", "code": "ERROR", "message": "barrier deadlock in CTA (0,0,0): barrier 0: 40 of 64 expected threads arrived, 24 threads of the CTA have exited"}))?;

    // A branch-to-self loop in a small launch: stopped by the budget scaled to its 64 threads
    // (the floor, 2^28), in well under a second rather than after the whole 2^36.
    let spin = vadd.replace(
        "$L__BB0_2:\n\tret;",
        "$L__BB0_2:\n\tbra.uni \t$L__BB0_2;\n\tret;",
    );
    assert_ne!(spin, vadd, "vadd.ptx ends with the label this edit uses");
    std::fs::write(
        Path::new(OUT).join("spin.launch.json"),
        serde_json::to_vec_pretty(&launch(64))?,
    )?;
    c.write("spin.ptx", spin.as_bytes(), json!({"kind": "ptx", "launch": "spin.launch.json", "stage": "run", "code": "ERROR", "message": "instruction budget of 268435456 lane-instructions exhausted"}))?;
    // A launch spec whose grid is past the emulator's limit, refused before anything runs.
    let mut spec = launch(64);
    spec["grid"] = json!([1, 65536, 1]);
    std::fs::write(
        Path::new(OUT).join("grid_over_limit.launch.json"),
        serde_json::to_vec_pretty(&spec)?,
    )?;
    c.write("grid_over_limit.ptx", vadd.as_bytes(), json!({"kind": "ptx", "launch": "grid_over_limit.launch.json", "stage": "run", "code": "ERROR", "message": "launch spec: `grid[1]` is 65536, out of range [1, 65535]"}))?;

    // `.local` past CUDA's 512 KiB a thread: the emulator made (and zeroed) local_size x block
    // bytes a worker before the first instruction, 1 GiB a worker for 1 MiB (issue 33); it is
    // refused at launch now, and what is declared within it is made only as written.
    let local = vadd.replacen(
        "\t.reg .pred \t%p<2>;",
        "\t.local .align 8 .b8 big[1048576];\n\t.reg .pred \t%p<2>;",
        1,
    );
    assert_ne!(local, vadd, "vadd.ptx declares its predicates");
    std::fs::write(
        Path::new(OUT).join("local_1mib_per_thread.launch.json"),
        serde_json::to_vec_pretty(&launch(64))?,
    )?;
    c.write("local_1mib_per_thread.ptx", local.as_bytes(), json!({"kind": "ptx", "launch": "local_1mib_per_thread.launch.json", "stage": "run", "code": "ERROR", "message": "1048576 bytes of local memory per thread, more than 524288 (CUDA's limit)"}))?;

    issue_33_reproducers(&mut c, &vadd)?;

    // 109 bytes of HLO broadcasting to 500M elements: 47 s and 3.9 GB in compile and run; the
    // pipeline's one element limit (hlo::MAX_ELEMENTS) refuses it before any pass (issue 33).
    hlo(&mut c, "broadcast_500m_elements.hlo", "HloModule b\n\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT b = f32[500000000] broadcast(p), dimensions={}\n}\n", "compile", "TooManyElements", "shape f32[500000000] has 500000000 elements, more than the limit of 268435456 elements (CompileOptions::max_array_elements, xla_compile --max_array_elements)")?;

    // Target configs.
    let h100 = std::fs::read_to_string("testdata/target_specs/h100_sxm.txtpb")?;
    c.write("config_truncated.txtpb", &h100.as_bytes()[..h100.len() / 2], json!({"kind": "config", "stage": "parse", "code": "ERROR", "message": "expected '}' or a field name, but reached end of input"}))?;
    let no_platform: String = h100
        .lines()
        .filter(|l| !l.starts_with("platform_name"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(no_platform, h100, "h100_sxm.txtpb names its platform");
    c.write("config_no_platform.txtpb", no_platform.as_bytes(), json!({"kind": "config", "stage": "parse", "code": "ERROR", "message": "platform_name is missing"}))?;

    // Limits out of range: a compute capability with major -1, a negative SM count.
    for (file, from, to, message) in [
        (
            "config_cc_major_minus_one.txtpb",
            "    major: 9\n",
            "    major: -1\n",
            "gpu_device_info.cuda_compute_capability.major is -1, out of range [1, 99]",
        ),
        (
            "config_negative_core_count.txtpb",
            "  core_count: 132\n",
            "  core_count: -1\n",
            "gpu_device_info.core_count is -1, out of range [0, 65536]",
        ),
    ] {
        let bad = h100.replacen(from, to, 1);
        assert_ne!(bad, h100, "h100_sxm.txtpb has {from:?}");
        c.write(
            file,
            bad.as_bytes(),
            json!({"kind": "config", "stage": "parse", "code": "ERROR", "message": message}),
        )?;
    }

    let manifest = json!({
        "comment": "Written by gen.rs (cargo run -p harness --example hostile_corpus); replayed by harness/tests/hostile.rs. stage: where the input must stop (load, run, compile, parse); code: the absl code, ERROR for the tools without codes, OK for inputs that must be accepted and run within the limits; message: a fragment of the error.",
        "flags": {"max_execution_secs": 1, "max_while_iterations": 1000, "emulator_host_memory_bytes": 1073741824},
        "cases": c.entries,
    });
    std::fs::write(
        Path::new(OUT).join("manifest.json"),
        serde_json::to_string_pretty(&manifest)? + "\n",
    )?;
    println!("wrote {} cases to {OUT}", c.entries.len());
    Ok(())
}

/// Issue 33's reproducers end to end (their unit tests: `ptx/tests/emu_robust.rs`,
/// `runtime/src/gemm/tests/mod.rs`, `runtime/tests/readback_memory.rs`): each ended in a
/// misleading success, a hang or gigabytes before the fixes.
fn issue_33_reproducers(c: &mut Corpus, vadd: &str) -> Result<()> {
    let ptx_case = |c: &mut Corpus, name: &str, text: &str, n: usize, message: &str| {
        let spec = format!("{name}.launch.json");
        std::fs::write(
            Path::new(OUT).join(&spec),
            serde_json::to_vec_pretty(&vadd_launch(n))?,
        )?;
        c.write(&format!("{name}.ptx"), text.as_bytes(), json!({"kind": "ptx", "launch": spec, "stage": "run", "code": "ERROR", "message": message}))
    };
    // A read 512 bytes past an 80-byte buffer got the neighbouring allocation's bytes (a 256-byte
    // guard gap) and the launch passed; every access is now checked against its allocation.
    let peek = vadd.replace(
        "ld.global.f32 \t%f2, [%rd6];",
        "ld.global.f32 \t%f2, [%rd6+512];",
    );
    assert_ne!(peek, vadd, "vadd.ptx loads its first operand through %rd6");
    ptx_case(c, "oob_read_512_past_80_bytes", &peek, 20, "out-of-bounds global read of 4 bytes at address 0x100000200: 432 bytes past the end of the allocation of 80 bytes at 0x100000000")?;
    // 300 register ranges of 65,536 (9 KB of PTX): 46 s and 2.3 GB before the kernel started.
    let regs: String = (0..300)
        .map(|i| format!("\t.reg .b32 \t%q{i}_<65536>;\n"))
        .collect();
    let many = vadd.replacen(
        "\t.reg .b64 \t%rd<11>;\n",
        &format!("\t.reg .b64 \t%rd<11>;\n{regs}"),
        1,
    );
    assert_ne!(many, vadd, "vadd.ptx declares %rd<11>");
    ptx_case(
        c,
        "registers_300_ranges_of_65536",
        &many,
        64,
        "declaring %q0_<65536> would take the kernel past 65536 registers (24 declared before it)",
    )?;
    // A call tree eight wide and ten deep: 8^10 inlined leaves from 1 KB (3.7 GB before).
    let head = &vadd[..vadd.find(".visible .entry").unwrap_or(0)];
    let mut tree = format!("{head}.func f0() {{ ret; }}\n");
    for k in 1..=10 {
        tree += &format!(
            ".func f{k}() {{ {}ret; }}\n",
            format!("call f{}; ", k - 1).repeat(8)
        );
    }
    tree += ".visible .entry vadd(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n) { call f10; ret; }\n";
    ptx_case(
        c,
        "call_tree_8_wide_10_deep",
        &tree,
        64,
        "inlining `f0` would take the kernel past 2097152 instructions",
    )?;

    // A gemm of batch 10^9 with stride 0 (every batch reads the same bytes): still running at
    // 40 s under --max-execution-secs 2; the host gemm checks the deadline now.
    let mut p = golden("matmul")?;
    let mut found = false;
    for_each_thunk(&mut p.thunks, &mut |t| {
        if let Some(Impl::GemmThunk(g)) = t.r#impl.as_mut() {
            if let Some(cfg) = g.gemm_config.as_mut() {
                for l in [
                    &mut cfg.lhs_layout,
                    &mut cfg.rhs_layout,
                    &mut cfg.output_layout,
                ]
                .into_iter()
                .flatten()
                {
                    l.batch_size = 1_000_000_000;
                    l.batch_stride = 0;
                }
                found = true;
            }
        }
    });
    assert!(found, "the matmul golden has a gemm thunk with a config");
    c.artifact(
        "gemm_batch_1e9_stride_0.pb",
        &p,
        "run",
        "RESOURCE_EXHAUSTED",
        "gemm: ran longer than the wall-time limit of 1 s (RuntimeFlags::max_execution_secs, aot run --max-execution-secs)",
    )?;
    Ok(())
}

/// A launch spec of `testdata/corpus/ptx/vadd.ptx` over `n` elements: 1 + 2 = 3 everywhere.
fn vadd_launch(n: usize) -> Value {
    json!({"kernel": "vadd", "grid": [1, 1, 1], "block": [n, 1, 1], "params": [
    {"kind": "buffer", "dtype": "f32", "data": vec![1.0; n]},
    {"kind": "buffer", "dtype": "f32", "data": vec![2.0; n]},
    {"kind": "buffer", "dtype": "f32", "data": vec![0.0; n]},
    {"kind": "scalar", "dtype": "s32", "value": n}],
    "expected": [{"param": 2, "dtype": "f32", "data": vec![3.0; n], "abs_tol": 0.0, "rel_tol": 0.0}]})
}
