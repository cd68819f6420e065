//! Code size grows linearly with the module (issue 31): fusion caps how often it re-emits one
//! instruction in a kernel (`compiler::MAX_CODE_DUPLICATION`), so a value read both
//! directly and through an index-changing op, level after level, no longer doubles the kernel
//! per level. The numerics of such modules are checked on JAX exports by
//! `harness/tests/models.rs` (suite `fusion_growth`).
mod common;
use common::{options, target};

/// `levels` levels of `a = a + pad(slice(a))` over f32[1024].
fn shifts(levels: usize) -> String {
    let mut t = String::from(
        "HloModule shifts\n\nENTRY e {\n  a0 = f32[1024] parameter(0)\n  z = f32[] constant(0)\n",
    );
    for k in 0..levels {
        let root = if k + 1 == levels { "ROOT " } else { "" };
        t += &format!("  s{k} = f32[1023] slice(a{k}), slice={{[1:1024]}}\n");
        t += &format!("  p{k} = f32[1024] pad(s{k}, z), padding=0_1\n");
        t += &format!("  {root}a{n} = f32[1024] add(a{k}, p{k})\n", n = k + 1);
    }
    t + "}\n"
}

fn artifact_bytes(text: &str) -> usize {
    let module = hlo_text::parse_module(text).expect("parse");
    compiler::compile_to_bytes(&module, &target("h100_sxm"), &options())
        .expect("compile")
        .len()
}

#[test]
fn artifact_size_is_linear_in_the_levels() {
    let sizes: Vec<usize> = [8, 16, 32, 64]
        .iter()
        .map(|&n| artifact_bytes(&shifts(n)))
        .collect();
    // Doubling the levels at most a little over doubles the artifact (it was 2^levels).
    for w in sizes.windows(2) {
        assert!(w[1] <= 3 * w[0], "sizes by levels 8, 16, 32, 64: {sizes:?}");
    }
    // And it stays small: 16 levels were 36 MB of PTX in one kernel.
    assert!(sizes[1] < 1 << 20, "16 levels: {} bytes", sizes[1]);
}

#[test]
fn no_member_is_emitted_more_often_than_the_cap() {
    // 3 levels emit the first level's code 2^3 = 8 times: under the cap, one kernel.
    let module = hlo_text::parse_module(&shifts(3)).expect("parse");
    let m = compiler::optimize(&module, &options()).expect("optimize");
    let entry = m.get(m.entry).expect("entry");
    let kernels = |plan: Vec<compiler::FusionUnit>| {
        plan.iter()
            .filter(|u| matches!(u, compiler::FusionUnit::Kernel(_)))
            .count()
    };
    assert_eq!(
        kernels(compiler::fusion_plan(entry, true).expect("plan")),
        1
    );
    // 5 levels would emit it 32 times: the planner materializes a level in between.
    let module = hlo_text::parse_module(&shifts(5)).expect("parse");
    let m = compiler::optimize(&module, &options()).expect("optimize");
    let entry = m.get(m.entry).expect("entry");
    assert!(kernels(compiler::fusion_plan(entry, true).expect("plan")) >= 2);
}
