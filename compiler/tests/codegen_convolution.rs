//! The convolution kernel (src/codegen/convolution.rs) against the reference evaluator, on the
//! PTX emulator, for the constructs JAX emits and a few it rarely does: 1-D, 2-D and 3-D, every
//! layout family, strides, negative padding, lhs and rhs dilation, window reversal, feature and
//! batch groups (with more than one batch entry per group), f16/bf16 results and inputs with an
//! f32 result, f64, integers. Every kernel also assembles with ptxas for sm_90 and sm_80 when
//! ptxas is installed (set `PTXAS`), and the model exports of testdata/models compile into
//! kernels ptxas accepts. Refusals are checked by their exact message.
mod codegen_util;
mod common;

use codegen_util::*;
use proto::xla::gpu::thunk_proto::Impl;

fn module(name: &str, params: &[&str], result: &str, conv_attrs: &str) -> String {
    let mut text = format!("HloModule {name}\n\nENTRY main {{\n");
    for (i, p) in params.iter().enumerate() {
        text.push_str(&format!("  p{i} = {p} parameter({i})\n"));
    }
    text.push_str(&format!(
        "  ROOT c = {result} convolution(p0, p1), {conv_attrs}\n}}\n"
    ));
    text
}

/// (name, lhs, rhs, result, attributes)
const CASES: &[(&str, &str, &str, &str, &str)] = &[
    (
        "nhwc_same",
        "f32[2,5,5,3]",
        "f32[3,3,3,4]",
        "f32[2,5,5,4]",
        "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
    ),
    (
        "nchw_oihw_strided",
        "f32[1,3,7,6]",
        "f32[2,3,3,2]",
        "f32[1,2,3,3]",
        "window={size=3x2 stride=2x2 pad=0_1x1_0}, dim_labels=bf01_oi01->bf01",
    ),
    (
        "negative_padding_both_sides",
        "f32[1,8,2]",
        "f32[3,2,2]",
        "f32[1,3,2]",
        "window={size=3 pad=-2_-1}, dim_labels=b0f_0io->b0f",
    ),
    (
        "lhs_and_rhs_dilation_strided",
        "f32[2,4,5,2]",
        "f32[2,3,2,3]",
        "f32[2,4,2,3]",
        "window={size=2x3 stride=2x1 pad=1_1x0_1 lhs_dilate=2x1 rhs_dilate=2x2}, dim_labels=b01f_01io->b01f",
    ),
    (
        "window_reversal",
        "f32[1,6,6,2]",
        "f32[3,3,2,2]",
        "f32[1,6,6,2]",
        "window={size=3x3 pad=1_1x1_1 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f",
    ),
    (
        "three_d",
        "f32[1,4,4,4,2]",
        "f32[2,2,2,2,3]",
        "f32[1,3,3,3,3]",
        "window={size=2x2x2}, dim_labels=b012f_012io->b012f",
    ),
    (
        "grouped",
        "f32[2,5,5,6]",
        "f32[3,3,2,9]",
        "f32[2,5,5,9]",
        "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=3",
    ),
    (
        "depthwise_multiplier_2",
        "f32[1,5,5,3]",
        "f32[3,3,1,6]",
        "f32[1,5,5,6]",
        "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=3",
    ),
    (
        "batch_groups_of_two",
        "f32[4,5,5,2]",
        "f32[3,3,2,6]",
        "f32[2,3,3,6]",
        "window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2",
    ),
    (
        "weight_gradient_layout",
        "f32[3,6,6,2]",
        "f32[3,4,4,5]",
        "f32[3,3,2,5]",
        "window={size=4x4}, dim_labels=f01b_i01o->01bf",
    ),
    (
        "feature_major_output",
        "f32[2,6,3]",
        "f32[4,2,3]",
        "f32[4,2,3]",
        "window={size=2 stride=2}, dim_labels=b0f_o0i->fb0",
    ),
    (
        "one_by_one",
        "f32[2,4,4,8]",
        "f32[1,1,8,5]",
        "f32[2,4,4,5]",
        "window={size=1x1}, dim_labels=b01f_01io->b01f",
    ),
    (
        "bf16_into_f32",
        "bf16[2,9,4]",
        "bf16[5,4,8]",
        "f32[2,9,8]",
        "window={size=5 pad=2_2}, dim_labels=b0f_0io->b0f",
    ),
    (
        "bf16_result",
        "bf16[1,6,6,3]",
        "bf16[3,3,3,2]",
        "bf16[1,6,6,2]",
        "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
    ),
    (
        "f16_result",
        "f16[1,6,6,3]",
        "f16[3,3,3,2]",
        "f16[1,4,4,2]",
        "window={size=3x3}, dim_labels=b01f_01io->b01f",
    ),
    (
        "f64",
        "f64[1,5,2]",
        "f64[3,2,2]",
        "f64[1,5,2]",
        "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f",
    ),
    (
        "s8_into_s32",
        "s8[1,5,2]",
        "s8[3,2,2]",
        "s32[1,3,2]",
        "window={size=3}, dim_labels=b0f_0io->b0f",
    ),
    (
        "empty_output",
        "f32[1,2,1]",
        "f32[3,1,1]",
        "f32[1,0,1]",
        "window={size=3}, dim_labels=b0f_0io->b0f",
    ),
];

fn parse(text: &str) -> hlo::HloModule {
    hlo_text::parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn every_case_matches_the_evaluator_and_assembles() {
    let mut failures = Vec::new();
    let mut assembled = false;
    for (k, (name, lhs, rhs, out, attrs)) in CASES.iter().enumerate() {
        let text = module(name, &[lhs, rhs], out, attrs);
        let m = parse(&text);
        let inputs = random_inputs(&m, 0x5eed ^ k as u64).unwrap();
        for target in [h100(), a100()] {
            if let Err(e) = run_and_compare(&m, &inputs, None, &target) {
                failures.push(format!("{name} on sm_{}: {e:#}", target.sm));
            }
        }
        for (target, gpu) in [(h100(), "sm_90"), (a100(), "sm_80")] {
            match plan_entry(&m, &target).and_then(|plan| ptxas_plan(&plan, gpu)) {
                Ok(found) => assembled |= found,
                Err(e) => failures.push(format!("{name}: {e:#}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if !assembled {
        eprintln!("note: ptxas not found (set PTXAS): convolution kernels were not assembled");
    }
}

#[test]
fn bias_and_activation_around_a_convolution_fuse_as_ordinary_loops() {
    // The whole entry as one fused computation: the convolution is computed per element of the
    // add/max chain that consumes it.
    let text = "HloModule bias_relu\n\nENTRY main {\n  x = f32[1,5,5,2] parameter(0)\n  w = f32[3,3,2,3] parameter(1)\n  b = f32[3] parameter(2)\n  c = f32[1,5,5,3] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n  bb = f32[1,5,5,3] broadcast(b), dimensions={3}\n  a = f32[1,5,5,3] add(c, bb)\n  z = f32[] constant(0)\n  zb = f32[1,5,5,3] broadcast(z), dimensions={}\n  ROOT r = f32[1,5,5,3] maximum(a, zb)\n}\n";
    let m = parse(text);
    let inputs = random_inputs(&m, 7).unwrap();
    run_and_compare(&m, &inputs, None, &h100()).unwrap();
}

#[test]
fn the_model_exports_compile_to_kernels_ptxas_accepts() {
    if ptx::ptxas::find().is_none() {
        eprintln!("note: ptxas not found (set PTXAS): nothing assembled");
        return;
    }
    let dir = common::root().join("testdata/models");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".hlo") {
            continue;
        }
        // Every export the tools accept (the reader refuses opcodes no back end implements, with
        // their location: those are not compiled anywhere), not only the convolutions: the
        // issue-14 kernels (topk, select-and-scatter, batched gather/scatter) are checked here too.
        let Ok(m) = hlo_front::read_module(&path) else {
            continue;
        };
        for (target, gpu) in [("h100_sxm", "sm_90a"), ("a100_sxm_80", "sm_80")] {
            let exe = compiler::compile(&m, &common::target(target), &common::options())
                .unwrap_or_else(|e| panic!("{name} for {target}: {e}"));
            for t in common::all_thunks(&exe) {
                if let Some(Impl::KernelThunk(k)) = &t.r#impl {
                    let ptx = k.kernel_binary.as_ref().map_or("", |b| b.ptx.as_str());
                    ptx::ptxas::assemble(ptx, gpu).unwrap_or_else(|e| {
                        panic!("{name}: ptxas {gpu} rejects {}: {e}", k.kernel_name)
                    });
                }
            }
        }
        checked += 1;
    }
    assert!(checked >= 22, "only {checked} model exports compiled");
}

fn compile_error(text: &str) -> String {
    let m = parse(text);
    match compiler::compile(&m, &common::target("h100_sxm"), &common::options()) {
        Ok(_) => panic!("compiled:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_pred_convolution_is_refused_by_name() {
    let text = module(
        "pred_conv",
        &["pred[1,3,1]", "pred[1,1,1]"],
        "pred[1,3,1]",
        "window={size=1}, dim_labels=b0f_0io->b0f",
    );
    assert_eq!(
        compile_error(&text),
        "code generation for fusion fusion_c: c (convolution) at 6:8: pred x pred -> pred convolution is not supported (floats, or integers into an integer result)"
    );
}

#[test]
fn positions_beyond_32_bit_index_arithmetic_are_refused() {
    let text = module(
        "huge_stride",
        &["f32[1,3,1]", "f32[1,1,1]"],
        "f32[1,1,1]",
        "window={size=1 stride=4294967296}, dim_labels=b0f_0io->b0f",
    );
    assert_eq!(
        compile_error(&text),
        "code generation for fusion fusion_c: c (convolution) at 6:8: window positions reach 4294967300, beyond 32-bit index arithmetic"
    );
}

#[test]
fn a_geometry_the_evaluator_refuses_is_refused_with_its_message() {
    // The verifier accepts batch and feature groups together; ConvGeometry does not.
    let text = module(
        "both_groups",
        &["f32[2,3,2]", "f32[1,1,2]"],
        "f32[1,3,2]",
        "window={size=1}, dim_labels=b0f_0io->b0f, feature_group_count=2, batch_group_count=2",
    );
    assert_eq!(
        compile_error(&text),
        "code generation for fusion fusion_c: c (convolution) at 6:8: feature_group_count (2) and batch_group_count (2) cannot both be > 1"
    );
}

#[test]
fn loop_trip_counts_beyond_32_bits_are_refused() {
    // 65536 window positions x 32768 input features per output element (shapes only: nothing is
    // allocated at compile time).
    let text = module(
        "huge_window",
        &["f32[1,65536,32768]", "f32[65536,32768,1]"],
        "f32[1,1,1]",
        "window={size=65536}, dim_labels=b0f_0io->b0f",
    );
    // The default element cap (hlo::MAX_ELEMENTS) refuses these shapes first; lifted, the
    // code generator's own 32-bit loop-counter check is what answers.
    let mut options = common::options();
    options.max_array_elements = u64::MAX;
    let error = match compiler::compile(&parse(&text), &common::target("h100_sxm"), &options) {
        Ok(_) => panic!("compiled:\n{text}"),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        error,
        "code generation for fusion fusion_c: c (convolution) at 6:8: 2147483648 products per output element, beyond 32-bit loop counters"
    );
    assert_eq!(
        compile_error(&text),
        "4:3: main/p0: shape f32[1,65536,32768] has 2147483648 elements, more than the limit of 268435456 elements (CompileOptions::max_array_elements, xla_compile --max_array_elements)"
    );
}
