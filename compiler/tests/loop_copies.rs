//! Copies around while loops (issue 19): a loop-carried value is copied only where sharing its
//! buffer is not provably safe. Each case compiles for h100_sxm, runs on the test thunk
//! interpreter (the `ptx` emulator for kernels) and must match the HLO reference evaluator;
//! the copy counts say which copies a rule removed and which it must keep.
mod common;

use hlo::{Array, Data};
use proto::xla::gpu::{thunk_proto::Impl, GpuExecutableProto};

/// Compiles, runs, compares every output with the reference evaluator; returns the executable.
fn run_vs_reference(text: &str, inputs: &[Array]) -> GpuExecutableProto {
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
    let problems = common::check_executable(&exe);
    assert!(problems.is_empty(), "{problems:?}");
    exe
}

/// (copies before the loop, copies anywhere, kernel launches anywhere).
fn copies_and_launches(exe: &GpuExecutableProto) -> (usize, usize, usize) {
    let is_copy = |t: &proto::xla::gpu::ThunkProto| matches!(t.r#impl, Some(Impl::CopyThunk(_)));
    let top = exe.thunks.iter().filter(|t| is_copy(t)).count();
    let all = common::all_thunks(exe);
    let copies = all.iter().filter(|t| is_copy(t)).count();
    let kernels = all
        .iter()
        .filter(|t| matches!(t.r#impl, Some(Impl::KernelThunk(_))))
        .count();
    (top, copies, kernels)
}

fn f32s(n: usize, v: impl Fn(usize) -> f32) -> Array {
    Array::new(vec![n], Data::F32((0..n).map(v).collect())).expect("array")
}

fn s32(v: i32) -> Array {
    Array::new(vec![], Data::S32(vec![v])).expect("array")
}

/// XLA:GPU compiles the corpus fori_loop with two copies (the counter's and `x`'s initial
/// values) and three launches (`testdata/xla_gpu/summary.json`); this compiler did 4 and 3:
/// the counter JAX carries twice had a buffer and an initial copy of its own, and its update
/// went through a temporary and a copy because the kernel computing it ran before the kernel
/// still reading the old counter.
#[test]
fn fori_loop_copies_as_xla_gpu_does() {
    let path = common::root().join("testdata/corpus/hlo/fori_loop.hlo");
    let text = std::fs::read_to_string(path).expect("corpus fori_loop");
    let exe = run_vs_reference(&text, &[f32s(10, |i| i as f32 - 3.5)]);
    assert_eq!(copies_and_launches(&exe), (2, 2, 3));
}

/// Two counters from one constant with different steps are two values: each keeps its buffer
/// and its initial copy.
#[test]
fn counters_with_different_steps_keep_their_buffers() {
    let text = r#"
HloModule m
cond {
  s = (s32[], s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  j = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  two = s32[] constant(2)
  i1 = s32[] add(i, one)
  j1 = s32[] add(j, two)
  x = f32[4] get-tuple-element(s), index=2
  jf = f32[] convert(j)
  jb = f32[4] broadcast(jf), dimensions={}
  x1 = f32[4] add(x, jb)
  ROOT t = (s32[], s32[], f32[4]) tuple(i1, j1, x1)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  init = (s32[], s32[], f32[4]) tuple(z, z, x)
  w = (s32[], s32[], f32[4]) while(init), condition=cond, body=body
  j = s32[] get-tuple-element(w), index=1
  x1 = f32[4] get-tuple-element(w), index=2
  ROOT r = (s32[], f32[4]) tuple(j, x1)
}"#;
    let exe = run_vs_reference(text, &[f32s(4, |i| i as f32)]);
    let (top, _, _) = copies_and_launches(&exe);
    assert_eq!(top, 3, "i, j and x each need their initial copy");
}

/// Two elements updated alike but starting from different parameters are two values.
#[test]
fn alike_updates_from_different_inputs_keep_their_buffers() {
    let text = r#"
HloModule m
cond {
  s = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = s32[] get-tuple-element(s), index=1
  b = s32[] get-tuple-element(s), index=2
  one = s32[] constant(1)
  three = s32[] constant(3)
  i1 = s32[] add(i, one)
  a1 = s32[] multiply(a, three)
  b1 = s32[] multiply(b, three)
  ROOT t = (s32[], s32[], s32[]) tuple(i1, a1, b1)
}
ENTRY e {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  z = s32[] constant(0)
  init = (s32[], s32[], s32[]) tuple(z, a, b)
  w = (s32[], s32[], s32[]) while(init), condition=cond, body=body
  a1 = s32[] get-tuple-element(w), index=1
  b1 = s32[] get-tuple-element(w), index=2
  ROOT r = (s32[], s32[]) tuple(a1, b1)
}"#;
    let exe = run_vs_reference(text, &[s32(2), s32(-5)]);
    let (top, _, _) = copies_and_launches(&exe);
    assert_eq!(top, 3);
}

/// One instruction updates both elements, but they start apart (0 and 7): before the first
/// iteration they differ, and the condition reads the second, so they may not share a buffer
/// (shared, the loop would start from (0, 0) and end at (5, 5) instead of not running and
/// returning (0, 7)).
#[test]
fn one_update_from_different_starts_keeps_both_buffers() {
    let text = r#"
HloModule m
cond {
  s = (s32[], s32[]) parameter(0)
  j = s32[] get-tuple-element(s), index=1
  n = s32[] constant(5)
  ROOT lt = pred[] compare(j, n), direction=LT
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(i1, i1)
}
ENTRY e {
  z = s32[] constant(0)
  seven = s32[] constant(7)
  init = (s32[], s32[]) tuple(z, seven)
  ROOT w = (s32[], s32[]) while(init), condition=cond, body=body
}"#;
    let exe = run_vs_reference(text, &[]);
    let (top, _, _) = copies_and_launches(&exe);
    assert_eq!(top, 2);
}

/// Each new value reads the other's old one (a swap through kernels): no order computes both
/// in place, so at least one goes through a temporary and a copy, and the values stay right.
#[test]
fn crossed_updates_keep_a_copy() {
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
  i1 = s32[] add(i, one)
  a = f32[4] get-tuple-element(s), index=1
  b = f32[4] get-tuple-element(s), index=2
  a1 = f32[4] negate(b)
  b1 = f32[4] add(a, a)
  ROOT t = (s32[], f32[4], f32[4]) tuple(i1, a1, b1)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  z = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(z, x, y)
  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  a = f32[4] get-tuple-element(w), index=1
  b = f32[4] get-tuple-element(w), index=2
  ROOT r = (f32[4], f32[4]) tuple(a, b)
}"#;
    let exe = run_vs_reference(
        text,
        &[f32s(4, |i| i as f32 + 1.0), f32s(4, |i| -(i as f32))],
    );
    let (top, all, _) = copies_and_launches(&exe);
    assert!(
        all > top,
        "the crossed update needs a copy in the body ({top} of {all})"
    );
}

/// The kernel writing slot 0 comes first in the plan, but another kernel still reads slot 0:
/// the body runs the reader first, so both results are computed in place (no copy in the body).
#[test]
fn a_state_reader_runs_before_the_writer_of_that_state() {
    let text = r#"
HloModule m
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x = f32[8] get-tuple-element(s), index=1
  f = f32[] convert(i)
  fb = f32[8] broadcast(f), dimensions={}
  x1 = f32[8] multiply(x, fb)
  ROOT t = (s32[], f32[8]) tuple(i1, x1)
}
ENTRY e {
  x = f32[8] parameter(0)
  z = s32[] constant(1)
  init = (s32[], f32[8]) tuple(z, x)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
}"#;
    let exe = run_vs_reference(text, &[f32s(8, |i| 0.5 + i as f32)]);
    assert_eq!(copies_and_launches(&exe), (2, 2, 3));
}
