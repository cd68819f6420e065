//! Syntax coverage beyond the corpus: tiled layouts, memory spaces, dynamic dimensions, special
//! floats, complex / tuple / nested constants, every typed attribute form, raw attributes,
//! forward references and comments. Each module must parse, print, re-parse to an equal module
//! and verify.

use hlo::*;
use hlo::{Shape, TILE_COMBINE_DIM, UNBOUNDED_DIM};
use hlo_text::{format_float, print_module, print_module_with, PrintOptions};
use hlo_text::{parse_module, parse_shape};

const FEATURES: &str = r#"// RUN: some-tool %s | FileCheck %s
HloModule features, is_scheduled=false, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {1}) }, replica_count=2, num_partitions=1, frontend_attributes={attr_a="1"}, buffer_donor={ (0, {}) }

ENTRY %main (p0: f32[8,128], p1: (f32[2], f32[3]), p2: f32[1,6,6,3], p3: f32[3,3,3,8], idx: s32[4,1], upd: f32[4,128], pr: pred[]) -> f32[8,128] {
  %p0 = f32[8,128]{1,0:T(8,128)(2,1)S(1)} parameter(0), sharding={replicated}
  %p1 = (f32[2]{0}, f32[3]{0}) parameter(1)
  %p2 = f32[1,6,6,3]{3,2,1,0} parameter(2)
  %p3 = f32[3,3,3,8]{3,2,1,0} parameter(3)
  %idx = s32[4,1]{1,0} parameter(4)
  %upd = f32[4,128]{1,0} parameter(5)
  %pr = pred[] parameter(6)
  /* a block comment */ %tok = token[] after-all()
  %c_special = f32[4] constant({nan, -inf, 0x1p-3, 1.5e+10})
  %c_complex = c64[2] constant({(1, 2), (3.5, -4)})
  %c_tuple = (s32[], pred[]) constant((7, true))
  %c_2d = bf16[2,2]{1,0} constant({ { 1, 2 }, { 3, 4 } })
  %c_payload = f32[] constant(nan(0x123))
  %c_elided = f32[1000]{0} constant({...})
  %zero = f32[] constant(0)
  %conv = f32[1,4,4,8]{3,2,1,0} convolution(f32[1,6,6,3]{3,2,1,0} %p2, f32[3,3,3,8]{3,2,1,0} %p3), window={size=3x3 stride=1x1 pad=0_0x0_0 lhs_dilate=1x1 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=1, operand_precision={high,highest}
  %g = f32[4,128]{1,0} gather(%p0, %idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,128}, indices_are_sorted=true
  %sc = f32[8,128]{1,0} scatter(%p0, %idx, %upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=false, to_apply=%sum
  %ar = f32[8,128]{1,0} all-reduce(%p0), channel_id=1, replica_groups=[1,2]<=[2], use_global_device_ids=true, to_apply=%sum
  %ar2 = f32[8,128]{1,0} all-reduce(%ar), replica_groups={{0,1},{2,3}}, to_apply=%sum
  %cp = f32[8,128]{1,0} collective-permute(%ar2), channel_id=2, source_target_pairs={{0,1},{1,0}}
  %rng = f32[4]{0} rng(%zero, %zero), distribution=rng_normal
  %rp = f32[8,128]{1,0} reduce-precision(%cp), exponent_bits=5, mantissa_bits=10
  %pad = f32[16,130]{1,0} pad(%rp, %zero), padding=0_1_1x1_1_0
  %sl = f32[4,64]{1,0} slice(%pad), slice={[0:8:2], [0:128:2]}
  %cc = (f32[8,128]{1,0}, s8[16]{0}) custom-call(%p0), custom_call_target="my$target", api_version=API_VERSION_TYPED_FFI, custom_call_has_side_effect=true, output_to_operand_aliasing={{0}: (0, {})}, backend_config="{\"k\": \"v\\n\"}"
  %iota = s32[8,128]{1,0} iota(), iota_dimension=1
  %sort2 = (f32[8,128]{1,0}, s32[8,128]{1,0}) sort(%p0, %iota), dimensions={1}, is_stable=false, to_apply=%cmp2
  %tk = (f32[8,4]{1,0}, s32[8,4]{1,0}) topk(%p0), k=4, largest=true
  %fwd = f32[8,128]{1,0} negate(%later)
  %later = f32[8,128]{1,0} abs(%p0)
  %cond = f32[2]{0} conditional(%pr, %p1, %p1), true_computation=%t, false_computation=%f
  %rev = f32[8,128]{1,0} reverse(%later), dimensions={0,1}
  %rw = f32[4,64]{1,0} reduce-window(%p0, %zero), window={size=2x2 stride=2x2 pad=0_0x0_0 rhs_reversal=0x1}, to_apply=%sum
  %dyn = f32[<=8,?]{1,0} custom-call(%p0), custom_call_target="dyn"
  %bc = s32[8,128]{1,0} bitcast-convert(%p0)
  %cvt = f16[8,128]{1,0} convert(%p0)
  %start = ((f32[8,128]{1,0}), f32[8,128]{1,0}, u32[]) async-start(%p0), calls=%async_comp
  %done = f32[8,128]{1,0} async-done(%start)
  ROOT %b = f32[8,128]{1,0} add(%fwd, %done), control-predecessors={%tok}, metadata={op_type="Add" op_name="a/b" source_file="x.py" source_line=3 profile_type={1} stack_frame_id=2}, frontend_attributes={_xla_x="y",k2="v2"}
}

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %x, f32[] %y)
}

%cmp2 (a: f32[], b: f32[], c: s32[], d: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = s32[] parameter(2)
  %d = s32[] parameter(3)
  ROOT %lt = pred[] compare(%a, %b), direction=LT, type=TOTALORDER
}

%t (tp: (f32[2], f32[3])) -> f32[2] {
  %tp = (f32[2]{0}, f32[3]{0}) parameter(0)
  ROOT %t0 = f32[2]{0} get-tuple-element(%tp), index=0
}

%f (fp: (f32[2], f32[3])) -> f32[2] {
  %fp = (f32[2]{0}, f32[3]{0}) parameter(0)
  %f1 = f32[3]{0} get-tuple-element(%fp), index=1
  ROOT %f2 = f32[2]{0} slice(%f1), slice={[0:2]}
}

%async_comp (ap: f32[8,128]) -> f32[8,128] {
  %ap = f32[8,128]{1,0} parameter(0)
  ROOT %an = f32[8,128]{1,0} negate(%ap)
}, execution_thread="host"
"#;

fn round_trip(text: &str) -> HloModule {
    let m = parse_module(text).unwrap_or_else(|e| panic!("parse: {e}"));
    for opts in [
        PrintOptions::default(),
        PrintOptions::without_sigils(),
        PrintOptions::jax(),
    ] {
        let p = print_module_with(&m, &opts);
        let m2 = parse_module(&p).unwrap_or_else(|e| panic!("re-parse: {e}\n{p}"));
        assert_eq!(m, m2, "printed:\n{p}");
        assert_eq!(p, print_module_with(&m2, &opts));
    }
    m
}

fn instr<'a>(m: &'a HloModule, name: &str) -> &'a Instruction {
    let e = m.entry_computation();
    &e[e.find(name).unwrap_or_else(|| panic!("no {name}"))]
}

#[test]
fn features_round_trip_and_verify() {
    let m = round_trip(FEATURES);
    if let Err(errs) = hlo_verify::verify(&m) {
        panic!("{errs:#?}");
    }
    assert_eq!(m.name, "features");
    assert_eq!(m.entry_computation().name, "main");
    assert_eq!(m.computations.len(), 6);
    // Callees defined after their callers resolve to the right computations.
    let sort2 = instr(&m, "sort2");
    assert_eq!(m[sort2.attrs.to_apply.unwrap()].name, "cmp2");
    assert_eq!(
        m.post_order().last().copied(),
        Some(m.entry),
        "entry is last in post order"
    );
    // Header.
    let aliases = m.config.input_output_alias.as_ref().unwrap();
    assert_eq!(aliases.len(), 2);
    assert_eq!(aliases[1].param_index, vec![1]);
    assert_eq!(aliases[0].kind.as_deref(), Some("may-alias"));
    assert_eq!(m.config.replica_count, Some(2));
    assert_eq!(
        m.config.raw,
        vec![("buffer_donor".into(), "{ (0, {}) }".into())]
    );
    // Layout with tiles and memory space.
    let p0 = instr(&m, "p0");
    let l = p0.shape.layout().unwrap();
    assert_eq!(l.tiles.len(), 2);
    assert_eq!(l.tiles[0].dims, vec![8, 128]);
    assert_eq!(l.memory_space, 1);
    assert_eq!(p0.attrs.sharding, Some(hlo::HloSharding::replicated()));
    // Dynamic dims.
    let dyn_ = instr(&m, "dyn").shape.as_array().unwrap();
    assert_eq!(dyn_.dims, vec![8, UNBOUNDED_DIM]);
    assert_eq!(dyn_.dynamic, vec![true, true]);
    // Constants.
    let vals = |n: &str| match &instr(&m, n).attrs.literal {
        Some(ConstantLiteral::Array(a)) => a.values.clone(),
        other => panic!("{other:?}"),
    };
    let sp = vals("c_special");
    assert!(matches!(sp[0], LiteralValue::Float(f) if f.is_nan()));
    assert_eq!(sp[1], LiteralValue::Float(f64::NEG_INFINITY));
    assert_eq!(sp[2], LiteralValue::Float(0.125));
    assert_eq!(sp[3], LiteralValue::Float(1.5e10));
    assert_eq!(vals("c_complex")[1], LiteralValue::Complex(3.5, -4.0));
    assert_eq!(
        vals("c_2d"),
        [1.0, 2.0, 3.0, 4.0].map(LiteralValue::Float).to_vec()
    );
    assert_eq!(
        instr(&m, "c_tuple").attrs.literal,
        Some(ConstantLiteral::Tuple(vec![
            ConstantLiteral::Array(ArrayLiteral {
                values: vec![LiteralValue::Int(7)]
            }),
            ConstantLiteral::Array(ArrayLiteral {
                values: vec![LiteralValue::Bool(true)]
            }),
        ]))
    );
    assert_eq!(
        instr(&m, "c_elided").attrs.literal,
        Some(ConstantLiteral::Elided)
    );
    // Typed attributes.
    let conv = &instr(&m, "conv").attrs;
    let cd = conv.conv_dimension_numbers.as_ref().unwrap();
    assert_eq!(cd.input_feature_dimension, 3);
    assert_eq!(cd.kernel_output_feature_dimension, 3);
    assert_eq!(cd.kernel_input_feature_dimension, 2);
    assert_eq!(cd.output_spatial_dimensions, vec![1, 2]);
    assert_eq!(
        conv.operand_precision,
        Some(vec![Precision::High, Precision::Highest])
    );
    assert_eq!(conv.window.as_ref().unwrap().dims[1].size, 3);
    let g = instr(&m, "g")
        .attrs
        .gather_dimension_numbers
        .clone()
        .unwrap();
    assert_eq!((g.offset_dims, g.index_vector_dim), (vec![1], 1));
    let s = instr(&m, "sc")
        .attrs
        .scatter_dimension_numbers
        .clone()
        .unwrap();
    assert_eq!(s.scatter_dims_to_operand_dims, vec![0]);
    assert_eq!(
        instr(&m, "ar").attrs.replica_groups,
        Some(ReplicaGroups::Iota("[1,2]<=[2]".into()))
    );
    assert_eq!(
        instr(&m, "ar2").attrs.replica_groups,
        Some(ReplicaGroups::List(vec![vec![0, 1], vec![2, 3]]))
    );
    assert_eq!(
        instr(&m, "cp").attrs.raw("source_target_pairs"),
        Some("{{0,1},{1,0}}")
    );
    let pad = instr(&m, "pad").attrs.padding.clone().unwrap();
    assert_eq!(
        pad[0],
        PadDim {
            low: 0,
            high: 1,
            interior: 1
        }
    );
    let sl = instr(&m, "sl").attrs.slice.clone().unwrap();
    assert_eq!(sl[1].stride, 2);
    let cc = &instr(&m, "cc").attrs;
    assert_eq!(cc.custom_call_target.as_deref(), Some("my$target"));
    assert_eq!(cc.backend_config.as_deref(), Some("{\"k\": \"v\\n\"}"));
    assert_eq!(cc.api_version.as_deref(), Some("API_VERSION_TYPED_FFI"));
    assert_eq!(
        instr(&m, "rng").attrs.distribution,
        Some(RandomDistribution::Normal)
    );
    assert_eq!(instr(&m, "rp").attrs.mantissa_bits, Some(10));
    assert_eq!(instr(&m, "tk").attrs.k, Some(4));
    let rw = instr(&m, "rw").attrs.window.clone().unwrap();
    assert!(rw.dims[1].reversal && !rw.dims[0].reversal);
    let b = instr(&m, "b");
    let md = b.metadata.as_ref().unwrap();
    assert_eq!(md.source_line, Some(3));
    assert_eq!(md.stack_frame_id, Some(2));
    assert_eq!(md.other, vec![("profile_type".into(), "{1}".into())]);
    assert_eq!(b.attrs.raw("control-predecessors"), Some("{%tok}"));
    assert_eq!(b.attrs.frontend_attributes.as_ref().map(Vec::len), Some(2));
    let cond = &instr(&m, "cond").attrs;
    assert_eq!(m[cond.false_computation.unwrap()].name, "f");
    let async_comp = m.find("async_comp").unwrap();
    assert_eq!(m[async_comp].execution_thread.as_deref(), Some("host"));
    assert_eq!(
        m[instr(&m, "start").attrs.calls.as_ref().unwrap()[0]].name,
        "async_comp"
    );
    // Forward references: post order puts operands first.
    let e = m.entry_computation();
    let order = e.post_order();
    let pos = |n: &str| order.iter().position(|&i| e[i].name == n).unwrap();
    assert!(pos("later") < pos("fwd"));
    assert_eq!(order.len(), e.instructions.len());
    assert_eq!(order.last().copied(), Some(e.root));
    let users = e.users();
    assert_eq!(users[e.find("later").unwrap().index()].len(), 2);
    // Locations point at instruction names.
    assert_eq!(
        (instr(&m, "p0").loc.line, instr(&m, "p0").loc.column),
        (5, 3)
    );
}

#[test]
fn header_less_module_and_inferred_root() {
    let m = round_trip(
        "fusion {\n  %input = f32[20] parameter(0)\n  ROOT bcast = f32[10, 20, 30] broadcast(%input), dimensions={1}\n}\n",
    );
    assert_eq!(m.name, "_");
    let m = round_trip(
        "c {\n p = (s32[]) parameter(0)\n g = s32[] get-tuple-element(p), index=0\n}\nmain {\n p = s32[] constant(0)\n t = (s32[]) tuple(p)\n}\n",
    );
    let e = m.entry_computation();
    assert_eq!(e.name, "main");
    assert_eq!(e[e.root].name, "t");
}

#[test]
fn shapes() {
    let s = parse_shape("(f32[2,3]{1,0:T(*,128)E(4)}, (token[], pred[]), u8[0])").unwrap();
    let t = s.tuple_shapes().unwrap();
    assert_eq!(t[0].layout().unwrap().tiles[0].dims[0], TILE_COMBINE_DIM);
    assert_eq!(t[0].layout().unwrap().element_size_in_bits, 4);
    assert!(t[1].tuple_shapes().unwrap()[0].is_token());
    assert_eq!(parse_shape(&s.to_string()).unwrap(), s);
    let l = parse_shape("f32[4,4]{0,1:T(2,2)L(8)S(2)}").unwrap();
    assert_eq!(l.to_string(), "f32[4,4]{0,1:T(2,2)L(8)S(2)}");
    assert_eq!(l.layout().unwrap().other, "L(8)S(2)");
    assert_eq!(parse_shape(&l.to_string()).unwrap(), l);
    assert_eq!(Shape::Tuple(vec![]).to_string(), "()");
}

#[test]
fn float_formats() {
    assert_eq!(format_float(1e-5), "1e-05");
    assert_eq!(format_float(1.5e20), "1.5e+20");
    assert_eq!(format_float(0.25), "0.25");
    assert_eq!(format_float(-3.0), "-3");
    assert_eq!(format_float(f64::NAN), "nan");
}

/// triangular-solve's options in XLA's form: the set fields in field order (false booleans are
/// not printed), any order and any subset accepted; the proto keeps them.
#[test]
fn triangular_solve_options() {
    let text = "HloModule t\n\nENTRY main {\n  a = f32[2,4,4]{2,1,0} parameter(0)\n  b = f32[2,3,4]{2,1,0} parameter(1)\n  x = f32[2,3,4]{2,1,0} triangular-solve(a, b), lower=true, transpose_a=NO_TRANSPOSE\n  ROOT y = f32[2,3,4]{2,1,0} triangular-solve(a, x), transpose_a=ADJOINT, unit_diagonal=true, left_side=false, lower=false\n}\n";
    let m = round_trip(text);
    let o = |name| instr(&m, name).attrs.triangular_solve.expect("options");
    assert_eq!(
        o("y"),
        TriangularSolveOptions {
            left_side: false,
            lower: false,
            unit_diagonal: true,
            transpose_a: Some(Transpose::Adjoint),
        }
    );
    let printed = print_module(&m);
    assert!(printed.contains("triangular-solve(%a, %b), lower=true, transpose_a=NO_TRANSPOSE\n"));
    assert!(printed.contains("triangular-solve(%a, %x), unit_diagonal=true, transpose_a=ADJOINT\n"));
    let back = hlo::from_proto(&hlo::to_proto(&m).unwrap()).unwrap();
    assert_eq!(o("x"), instr(&back, "x").attrs.triangular_solve.unwrap());
    assert_eq!(o("y"), instr(&back, "y").attrs.triangular_solve.unwrap());
    hlo_verify::verify(&m).unwrap();
}

/// cholesky's `lower=` in XLA's form: printed only when true (XLA's default is false); the proto
/// keeps it (`cholesky_options`, field 62), and a cholesky without it reads as `lower=false`.
#[test]
fn cholesky_options() {
    let text = "HloModule t\n\nENTRY main {\n  a = c64[2,3,3]{2,1,0} parameter(0)\n  l = c64[2,3,3]{2,1,0} cholesky(a), lower=true\n  ROOT d = c64[2,3,3]{2,1,0} cholesky(a)\n}\n";
    let m = round_trip(text);
    let explicit =
        parse_module(&text.replace("cholesky(a)\n", "cholesky(a), lower=false\n")).unwrap();
    assert_eq!(
        instr(&explicit, "d").attrs.cholesky.map(|o| o.lower),
        Some(false)
    );
    let lower = |m: &hlo::HloModule, name| instr(m, name).attrs.cholesky.unwrap_or_default().lower;
    assert!(lower(&m, "l"));
    assert!(!lower(&m, "d"));
    let printed = print_module(&m);
    assert!(printed.contains("cholesky(%a), lower=true\n"), "{printed}");
    assert!(
        printed.contains("c64[2,3,3]{2,1,0} cholesky(%a)\n"),
        "{printed}"
    );
    let proto = hlo::to_proto(&m).unwrap();
    let back = hlo::from_proto(&proto).unwrap();
    assert!(lower(&back, "l"));
    assert!(!lower(&back, "d"));
    hlo_verify::verify(&m).unwrap();
}

#[test]
fn mlir_dialect_attributes_in_attribute_values_keep_their_text() {
    // What JAX 0.10.2 prints for a program over a Shardy mesh.
    let text = "HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<[\"x\"=2, \"y\"=1]>}}\n\nENTRY e {\n  ROOT a = f32[2] parameter(0)\n}\n";
    let m = parse_module(text).unwrap();
    let attrs = m.config.frontend_attributes.clone().unwrap();
    assert_eq!(
        attrs,
        vec![(
            "xla.sdy.meshes".to_owned(),
            "{mesh = #sdy.mesh<[\"x\"=2, \"y\"=1]>}".to_owned()
        )]
    );
    // An unterminated one is a lexing error at the `#`'s line, not a panic.
    let bad = "HloModule m, frontend_attributes={k={#sdy.mesh<[\"x\"=2]}}\n\nENTRY e {\n  ROOT a = f32[2] parameter(0)\n}\n";
    assert!(parse_module(bad).is_err());
}

/// `algorithm=dot_*` on a dot: read, printed back, and carried through the HloModuleProto
/// (`PrecisionConfig.algorithm`, XLA's field 2 and numbers) and back.
#[test]
fn dot_algorithm_reads_prints_and_round_trips_through_the_proto() {
    let text = "HloModule m\n\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[3,4] parameter(1)\n  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=dot_bf16_bf16_f32_x9\n}\n";
    let m = parse_module(text).expect("parses");
    assert_eq!(
        instr(&m, "d").attrs.dot_algorithm,
        Some(DotAlgorithm::Bf16Bf16F32X9)
    );
    assert!(print_module(&m).contains(", algorithm=dot_bf16_bf16_f32_x9"));
    let p = hlo::to_proto(&m).expect("to proto");
    let dot = p.hlo_module.as_ref().and_then(|h| {
        let entry = h.computations.iter().find(|c| c.name == "e")?;
        entry.instructions.iter().find(|i| i.name == "d").cloned()
    });
    let config = dot
        .and_then(|d| d.precision_config)
        .expect("a precision config");
    assert_eq!(config.algorithm, 13, "XLA's ALG_DOT_BF16_BF16_F32_X9");
    assert!(config.operand_precision.is_empty());
    let back = hlo::from_proto(&p).expect("from proto");
    assert_eq!(
        instr(&back, "d").attrs.dot_algorithm,
        Some(DotAlgorithm::Bf16Bf16F32X9)
    );
    assert_eq!(instr(&back, "d").attrs.operand_precision, None);
    for (alg, name, number) in DotAlgorithm::ALL {
        assert_eq!((alg.name(), alg.number()), (name, number));
        assert_eq!(DotAlgorithm::from_name(name), Some(alg));
        assert_eq!(DotAlgorithm::from_number(number), Some(alg));
    }
    let bad = text.replace("dot_bf16_bf16_f32_x9", "dot_f8_f8_f8");
    let err = parse_module(&bad)
        .expect_err("unknown algorithm")
        .to_string();
    assert!(err.contains("dot algorithm"), "{err}");
}

/// An algorithm on an instruction other than a dot (a convolution shares `PrecisionConfig`) is
/// refused where the proto is read, not dropped.
#[test]
fn dot_algorithm_on_a_convolution_is_refused() {
    let text = "HloModule m\n\nENTRY e {\n  a = f32[1,4,4,1] parameter(0)\n  k = f32[2,2,1,1] parameter(1)\n  ROOT c = f32[1,3,3,1] convolution(a, k), window={size=2x2}, dim_labels=b01f_01io->b01f\n}\n";
    let m = parse_module(text).expect("parses");
    let mut p = hlo::to_proto(&m).expect("to proto");
    let conv = p
        .hlo_module
        .as_mut()
        .and_then(|h| h.computations.iter_mut().find(|c| c.name == "e"))
        .and_then(|c| c.instructions.iter_mut().find(|i| i.name == "c"))
        .expect("the convolution");
    conv.precision_config
        .get_or_insert_with(Default::default)
        .algorithm = 4;
    let err = hlo::from_proto(&p).expect_err("refused").to_string();
    assert!(
        err.contains("convolution has precision_config.algorithm 4: only a dot takes an algorithm"),
        "{err}"
    );
}
