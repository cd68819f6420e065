//! Row-reduction fusion and sibling fusion decisions (the numerics are checked on the corpus by
//! `tests/execute.rs`).
use std::path::PathBuf;

use compiler::{fusion_plan as plan, FusionUnit as Unit};

fn kernels(text: &str) -> usize {
    let module = hlo_text::parse_module(text).expect("parse");
    let m = compiler::optimize(&module, &compiler::CompileOptions::default()).expect("optimize");
    let entry = m.get(m.entry).expect("entry");
    plan(entry, true)
        .expect("plan")
        .iter()
        .filter(|u| matches!(u, Unit::Kernel(_)))
        .count()
}

const SOFTMAX_TAIL: &str = "
  e = f32[8,128]{1,0} exponential(s)
  z = f32[] constant(0)
  sum = f32[8]{0} reduce(e, z), dimensions={1}, to_apply=add
  b2 = f32[8,128]{1,0} broadcast(sum), dimensions={0}
  ROOT d = f32[8,128]{1,0} divide(e, b2)
}
";

fn module(consumer: &str) -> String {
    format!(
        "HloModule m\nmax {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}}\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}}\nENTRY e {{\n  x = f32[8,128]{{1,0}} parameter(0)\n  ninf = f32[] constant(-inf)\n  mx = f32[8]{{0}} reduce(x, ninf), dimensions={{1}}, to_apply=max\n{consumer}{SOFTMAX_TAIL}"
    )
}

#[test]
fn softmax_is_one_row_kernel() {
    let text = module(
        "  b1 = f32[8,128]{1,0} broadcast(mx), dimensions={0}\n  s = f32[8,128]{1,0} subtract(x, b1)\n",
    );
    assert_eq!(kernels(&text), 1);
}

#[test]
fn a_reduce_read_at_another_row_is_not_fused() {
    // The reversed maximum reads row 7 - r: not the block's own row, so it stays a kernel.
    let text = module(
        "  rv = f32[8]{0} reverse(mx), dimensions={0}\n  b1 = f32[8,128]{1,0} broadcast(rv), dimensions={0}\n  s = f32[8,128]{1,0} subtract(x, b1)\n",
    );
    assert_eq!(kernels(&text), 2);
}

#[test]
fn a_reduce_broadcast_along_rows_is_not_fused() {
    // Broadcasting the row maxima along dimension 1 of a [128, 8] array maps them to columns.
    let text = module(
        "  t = f32[128,8]{1,0} broadcast(mx), dimensions={1}\n  tt = f32[8,128]{1,0} transpose(t), dimensions={1,0}\n  s = f32[8,128]{1,0} subtract(x, tt)\n",
    );
    assert_eq!(kernels(&text), 2);
}

#[test]
fn the_corpus_softmax_and_layernorm_are_one_kernel() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus/hlo");
    for case in ["softmax", "layernorm", "gather_take"] {
        let text = std::fs::read_to_string(dir.join(format!("{case}.hlo"))).expect("corpus");
        assert_eq!(kernels(&text), 1, "{case}");
    }
}

#[test]
fn two_gemm_epilogues_reading_one_input_stay_two_kernels() {
    // Sibling fusion merged two small-gemm epilogue kernels that read the same `x` into one
    // kernel with two dots, which the code generator cannot emit ("dot is not supported"): each
    // keeps its own kernel now. (Complex dots, four real gemms on shared parts, met it first.)
    let text = "HloModule m\n\nENTRY e {\n  x = f32[4,8] parameter(0)\n  w1 = f32[8,8] parameter(1)\n  w2 = f32[8,8] parameter(2)\n  c = f32[] constant(0)\n  z = f32[4,8] broadcast(c), dimensions={}\n  d1 = f32[4,8] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  d2 = f32[4,8] dot(x, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  r1 = f32[4,8] maximum(d1, z)\n  r2 = f32[4,8] maximum(d2, z)\n  ROOT t = (f32[4,8], f32[4,8]) tuple(r1, r2)\n}\n";
    assert_eq!(kernels(text), 2);
    let module = hlo_text::parse_module(text).expect("parse");
    let root =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/target_specs/h100_sxm.txtpb");
    let target = compiler::Target::load(&root).expect("target");
    compiler::compile(&module, &target, &compiler::CompileOptions::default()).expect("compiles");
}

#[test]
fn a_scatter_computes_its_zeros_operand() {
    // `jnp.zeros(...).at[i].add(u)`: the zeros are written by the scatter's first kernel, not
    // by a kernel of their own that the scatter then copies.
    let text = "HloModule m\nadd {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = f32[] add(a, b)\n}\n\
        ENTRY e {\n z = f32[] constant(0)\n x = f32[64,8] broadcast(z), dimensions={}\n i = s32[16,1] parameter(0)\n u = f32[16,8] parameter(1)\n \
        ROOT s = f32[64,8] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n";
    assert_eq!(kernels(text), 1);
    // The indices' producer is not the scatter's operand: it stays a kernel of its own.
    let shifted = text.replace(
        " ROOT s = f32[64,8] scatter(x, i, u)",
        " one = s32[] constant(1)\n ones = s32[16,1] broadcast(one), dimensions={}\n j = s32[16,1] add(i, ones)\n ROOT s = f32[64,8] scatter(x, j, u)",
    );
    assert_eq!(kernels(&shifted), 2);
}
