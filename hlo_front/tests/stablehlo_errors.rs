//! One exact-message test per check of the StableHLO front end and of `hlo_front::read_module`'s format
//! detection: each names the line:column and, inside an op, the op.
use hlo_front::parse_stablehlo;

/// A module whose `main` body is `body` (one argument `%a: tensor<4xf32>`).
fn main_with(body: &str) -> String {
    format!("module @m {{\n  func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {{\n{body}\n  }}\n}}\n")
}

fn err(text: &str) -> String {
    match parse_stablehlo(text) {
        Ok(m) => panic!("accepted:\n{}", hlo_text::print_module(&m)),
        Err(e) => e.to_string(),
    }
}

macro_rules! case {
    ($name:ident, $text:expr, $want:expr) => {
        #[test]
        fn $name() {
            assert_eq!(err(&$text), $want);
        }
    };
}

case!(
    undefined_value,
    main_with("    %0 = stablehlo.add %a, %b : tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:28: stablehlo.add: use of undefined value %b"
);
case!(value_defined_twice, main_with("    %0 = stablehlo.abs %a : tensor<4xf32>\n    %0 = stablehlo.abs %a : tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "4:5: stablehlo.abs: value %0 defined twice");
case!(
    result_count,
    main_with("    %0:2 = stablehlo.abs %a : tensor<4xf32>\n    return %0#0 : tensor<4xf32>"),
    "3:5: stablehlo.abs: op has 1 result, 2 names declared"
);
case!(result_index_out_of_range, main_with("    %0:2 = stablehlo.optimization_barrier %a, %a : tensor<4xf32>, tensor<4xf32>\n    return %0#2 : tensor<4xf32>"),
    "4:12: return: %0#2: %0 has 2 results");
case!(unsupported_stablehlo_op, main_with("    %0 = stablehlo.dynamic_iota %a, dim = 0 : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: stablehlo.dynamic_iota: unsupported operation \"stablehlo.dynamic_iota\"");
case!(chlo_refused, main_with("    %0 = \"chlo.broadcast_add\"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: chlo.broadcast_add: chlo.broadcast_add is not supported: only chlo.acos, chlo.acosh, chlo.asin, chlo.asinh, chlo.atan, chlo.atanh, chlo.bessel_i1e, chlo.conj, chlo.cosh, chlo.digamma, chlo.erf, chlo.erf_inv, chlo.erfc, chlo.is_inf, chlo.is_neg_inf, chlo.is_pos_inf, chlo.lgamma, chlo.mulhi, chlo.next_after, chlo.polygamma, chlo.sinh, chlo.square, chlo.tan, chlo.top_k, chlo.zeta are decomposed; legalize CHLO to StableHLO first (stablehlo-opt --chlo-legalize-to-stablehlo)");
case!(chlo_math_on_integers, main_with("    %i = stablehlo.convert %a : (tensor<4xf32>) -> tensor<4xi32>\n    %0 = chlo.lgamma %i : tensor<4xi32> -> tensor<4xi32>\n    %1 = stablehlo.convert %0 : (tensor<4xi32>) -> tensor<4xf32>\n    return %1 : tensor<4xf32>"),
    "4:5: chlo.lgamma: operand must be floating point");
case!(chlo_complex_without_pattern, main_with("    %c = \"stablehlo.complex\"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xcomplex<f32>>\n    %0 = chlo.lgamma %c : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>\n    %1 = stablehlo.real %0 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>\n    return %1 : tensor<4xf32>"),
    "4:5: chlo.lgamma: complex chlo.lgamma is not supported");
case!(chlo_mulhi_on_floats, main_with("    %0 = \"chlo.mulhi\"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: chlo.mulhi: operands must be 8-, 16-, 32- or 64-bit integers, not f32");
case!(chlo_mulhi_operand_types, main_with("    %i = stablehlo.convert %a : (tensor<4xf32>) -> tensor<4xi32>\n    %u = stablehlo.convert %a : (tensor<4xf32>) -> tensor<4xui32>\n    %0 = \"chlo.mulhi\"(%i, %u) : (tensor<4xi32>, tensor<4xui32>) -> tensor<4xi32>\n    %1 = stablehlo.convert %0 : (tensor<4xi32>) -> tensor<4xf32>\n    return %1 : tensor<4xf32>"),
    "5:5: chlo.mulhi: operands differ in shape or type");
case!(chlo_binary_operand_count, main_with("    %0 = \"chlo.zeta\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: chlo.zeta: expected 2 operand(s), found 1");
case!(mhlo_refused, main_with("    %0 = \"mhlo.abs\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: mhlo.abs: MHLO ops are not accepted: export StableHLO (jax.jit(f).lower(...).as_text())");
case!(unknown_dialect, main_with("    %0 = \"tosa.abs\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: tosa.abs: unsupported operation \"tosa.abs\"");
case!(dynamic_dimension, "func.func @main(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {\n  return %a : tensor<?x4xf32>\n}\n",
    "1:28: func.func @main: dynamic dimension '?': only static shapes can be compiled ahead of time");
case!(
    unsupported_element_type,
    "func.func @main(%a: tensor<4xtf32>) -> tensor<4xtf32> {\n  return %a : tensor<4xtf32>\n}\n",
    "1:30: func.func @main: unsupported element type 'tf32'"
);
case!(dense_count, main_with("    %0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: stablehlo.constant: dense literal has 3 elements, its type f32[4] needs 4");
case!(dense_hex_size, main_with("    %0 = stablehlo.constant dense<\"0x0000803F0000\"> : tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: stablehlo.constant: hex dense literal has 6 bytes; 4 of f32 needs 16");
case!(dense_resource, main_with("    %0 = stablehlo.constant dense_resource<blob> : tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:43: stablehlo.constant: dense_resource constants are not supported: their data is not in the text (print with large elements inline)");
case!(splat_too_large, "func.func @main() -> tensor<100000x100000xf32> {\n  %0 = stablehlo.constant dense<0.0> : tensor<100000x100000xf32>\n  return %0 : tensor<100000x100000xf32>\n}\n",
    "2:3: stablehlo.constant: constant of 10000000000 elements exceeds the limit of 67108864");
case!(
    no_entry,
    "func.func private @f(%a: tensor<f32>) -> tensor<f32> {\n  return %a : tensor<f32>\n}\n",
    "1:1: no entry function: expected a public func.func @main"
);
case!(ambiguous_entry, "func.func @f(%a: tensor<f32>) -> tensor<f32> {\n  return %a : tensor<f32>\n}\nfunc.func @g(%a: tensor<f32>) -> tensor<f32> {\n  return %a : tensor<f32>\n}\n",
    "1:1: several public functions and none is @main: cannot choose the entry");
case!(
    undefined_function,
    main_with(
        "    %0 = call @nope(%a) : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>"
    ),
    "3:5: call to undefined function @nope"
);
case!(function_twice, "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  return %a : tensor<f32>\n}\nfunc.func @main(%a: tensor<f32>) -> tensor<f32> {\n  return %a : tensor<f32>\n}\n",
    "4:11: func.func @main: function @main defined twice");
case!(capture_in_reduce, main_with("    %c = stablehlo.constant dense<0.0> : tensor<f32>\n    %d = stablehlo.add %c, %c : tensor<f32>\n    %0 = stablehlo.reduce(%a init: %c) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n     reducer(%x: tensor<f32>, %y: tensor<f32>) {\n      %s = stablehlo.add %x, %d : tensor<f32>\n      stablehlo.return %s : tensor<f32>\n    }\n    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<4xf32>\n    return %1 : tensor<4xf32>"),
    "7:30: stablehlo.add: %d is defined outside this region: the computations of reduce, sort, scatter and the other called regions cannot capture values (only constants, which are copied in)");

#[test]
fn a_constant_from_above_is_copied_into_the_region() {
    // StableHLO's serializer hoists a comparator's constants out of it (portable artifacts have
    // them): the constant is copied in, as XLA's MLIR-to-HLO export sinks it.
    let text = main_with("    %c = stablehlo.constant dense<0.0> : tensor<f32>\n    %0 = stablehlo.reduce(%a init: %c) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n     reducer(%x: tensor<f32>, %y: tensor<f32>) {\n      %s = stablehlo.add %x, %c : tensor<f32>\n      %t = stablehlo.add %s, %y : tensor<f32>\n      stablehlo.return %t : tensor<f32>\n    }\n    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<4xf32>\n    return %1 : tensor<4xf32>");
    let m = parse_stablehlo(&text).unwrap();
    let reducer = m
        .computations
        .iter()
        .find(|c| c.name.starts_with("region"))
        .unwrap();
    let constants = reducer
        .instructions
        .iter()
        .filter(|i| i.opcode == hlo::Opcode::Constant)
        .count();
    assert_eq!(constants, 1);
}
case!(comparison_direction, main_with("    %0 = stablehlo.compare XX, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n    return %a : tensor<4xf32>"),
    "3:5: stablehlo.compare: unknown comparison_direction XX");
case!(branch_operand_undefined, main_with("    %0 = \"stablehlo.case\"(%i) ({\n    }) : (tensor<i32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:27: stablehlo.case: use of undefined value %i");
case!(branch_without_return, "func.func @main(%i: tensor<i32>) -> tensor<f32> {\n  %0 = \"stablehlo.case\"(%i) ({\n  }) : (tensor<i32>) -> tensor<f32>\n  return %0 : tensor<f32>\n}\n",
    "3:3: stablehlo.case: region ends without a return");
case!(several_blocks, "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  return %a : tensor<f32>\n^bb1:\n  return %a : tensor<f32>\n}\n",
    "3:1: func.func @main: regions with several blocks are not supported");
case!(unterminated_string, "func.func @main(%a: tensor<f32>) -> tensor<f32> attributes {x = \"abc} {\n  return %a : tensor<f32>\n}\n",
    "1:65: func.func @main: unterminated string");
case!(verifier_shape, main_with("    %0 = stablehlo.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: the converted module is invalid: main/add.2: add declares shape f32[5] but its operands give f32[4]");
case!(broadcast_dimension, main_with("    %0 = stablehlo.broadcast_in_dim %a, dims = [3] : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: stablehlo.broadcast_in_dim: broadcast dimension 3 out of range for rank 1");
case!(typed_ffi_string_config, main_with("    %0 = stablehlo.custom_call @f(%a) {backend_config = \"x\", api_version = 4 : i32} : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: stablehlo.custom_call: backend_config of a typed-FFI custom call (api_version = 4) must be a dictionary");
case!(legacy_dictionary_config, main_with("    %0 = stablehlo.custom_call @f(%a) {backend_config = {x = 1 : i32}, api_version = 2 : i32} : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: stablehlo.custom_call: a backend_config dictionary needs api_version = 4 (the typed FFI)");
case!(layout_not_a_permutation, main_with("    %0 = stablehlo.custom_call @f(%a) {operand_layouts = [dense<1> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: stablehlo.custom_call: custom_call operand 0 layout [1] is not a permutation of its 1 dimension(s)");
case!(layout_count, main_with("    %0 = stablehlo.custom_call @f(%a) {operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: stablehlo.custom_call: custom_call has 1 operand(s) but 2 operand_layouts");
case!(result_layouts_alone, main_with("    %0 = stablehlo.custom_call @f(%a) {result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: stablehlo.custom_call: custom_call has result_layouts but no operand_layouts");
case!(index_typed_value, "module @m {\n  func.func public @main(%a: tensor<4xindex>) -> tensor<4xindex> {\n    return %a : tensor<4xindex>\n  }\n}\n",
    "2:39: func.func @main: unsupported element type 'index'");
case!(unknown_mesh, "module @m {\n  sdy.mesh @mesh = <[\"a\"=2]>\n  func.func public @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@other, [{\"a\"}]>}) -> tensor<4xf32> {\n    return %a : tensor<4xf32>\n  }\n}\n",
    "3:26: func.func @main: sdy sharding #sdy.sharding<@other, [{\"a\"}]>: mesh @other is not defined");
case!(unknown_mesh_axis, "module @m {\n  sdy.mesh @mesh = <[\"a\"=2]>\n  func.func public @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}]>}) -> tensor<4xf32> {\n    return %a : tensor<4xf32>\n  }\n}\n",
    "3:26: func.func @main: sdy sharding #sdy.sharding<@mesh, [{\"b\"}]>: axis \"b\" is not in the mesh");
case!(bad_mhlo_sharding, "module @m {\n  func.func public @main(%a: tensor<4xf32> {mhlo.sharding = \"{devices=[3]0,1}\"}) -> tensor<4xf32> {\n    return %a : tensor<4xf32>\n  }\n}\n",
    "2:26: func.func @main: mhlo.sharding \"{devices=[3]0,1}\": sharding: 2 devices listed for a tile array of 3");
case!(
    bad_mesh,
    "module @m {\n  sdy.mesh @mesh = <[\"a\"=0]>\n}\n",
    "2:3: sdy.mesh @mesh: axis \"a\" has size 0"
);
case!(other_shardy_op, main_with("    %0 = sdy.reshard %a <@mesh, [{}]> : tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: sdy.reshard: this Shardy op is not supported (sdy.mesh, sdy.sharding, sdy.sharding_constraint and sdy.manual_computation are)");

/// JAX's cuSOLVER calls as its back-compat data writes them: the dictionary `mhlo.backend_config`
/// makes the call typed-FFI (its text, entry types included, is the HLO's backend_config),
/// `index` layouts become layout constraints and result layouts, the alias is kept, and a
/// one-device Shardy mesh is no partitioning.
#[test]
fn jax_ffi_custom_call() {
    let text = "module @jit_f {\n  sdy.mesh @mesh = <[\"a\"=1]>\n  func.func public @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {\n    %0:2 = stablehlo.custom_call @cusolver_syevd_ffi(%a) {mhlo.backend_config = {algorithm = 0 : ui8, lower = true}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<i32>)\n    return %0#0 : tensor<2x3xf32>\n  }\n}\n";
    let m = parse_stablehlo(text).unwrap();
    let printed = hlo_text::print_module(&m);
    assert!(
        printed.contains("custom-call(%Arg_0.1), custom_call_target=\"cusolver_syevd_ffi\", operand_layout_constraints={f32[2,3]{0,1}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={algorithm = 0 : ui8, lower = true}"),
        "{printed}"
    );
    assert!(
        printed.contains("(f32[2,3]{0,1}, s32[]) custom-call"),
        "{printed}"
    );
    // The text form reads back to the same module.
    let again = hlo_text::parse_module(&printed).unwrap();
    assert_eq!(hlo_text::print_module(&again), printed);
}
case!(all_to_all_dims, main_with("    %0 = \"stablehlo.all_to_all\"(%a) <{split_dimension = 0 : i64, concat_dimension = 1 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>"),
    "3:5: stablehlo.all_to_all: all_to_all with split_dimension 0 != concat_dimension 1 is not supported");
case!(
    hlo_text_given,
    "HloModule m\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
    "1:1: expected 'func.func', found 'HloModule'"
);

#[test]
fn module_attributes_and_locations() {
    let text = "#loc1 = loc(\"f.py\":3:4)\nmodule @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 4 : i32, jax.uses_shape_polymorphism = false} {\n  func.func public @main(%a: tensor<f32> {mhlo.sharding = \"{replicated}\"} loc(\"a\")) -> (tensor<f32> {jax.result_info = \"\"}) {\n    %0 = stablehlo.abs %a : tensor<f32> loc(#loc1)\n    return %0 : tensor<f32> loc(#loc1)\n  } loc(#loc1)\n} loc(#loc1)\n";
    let m = parse_stablehlo(text).unwrap();
    assert_eq!(m.name, "jit_f");
    assert_eq!(m.config.replica_count, Some(4));
    assert_eq!(m.config.num_partitions, Some(2));
    assert_eq!(
        m.entry_computation().root_instruction().map(|r| r.opcode),
        Some(hlo::Opcode::Abs)
    );
}

#[test]
fn input_unknown_extension() {
    let e = hlo_front::format_of(std::path::Path::new("m.stablehlo")).unwrap_err();
    assert_eq!(e.to_string(), "m.stablehlo: unknown extension \"stablehlo\" (expected .hlo or .txt for HLO text, .mlir for StableHLO, .mlirbc for a StableHLO portable artifact, .jax_exported for a serialized JAX Exported, .pb for a binary HloModuleProto)");
}

#[test]
fn input_mlir_bytecode() {
    let e = hlo_front::parse_as(
        hlo_front::Format::StableHlo,
        b"ML\xefR\x00\x01",
        std::path::Path::new("m.mlir"),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "m.mlir: expected StableHLO (MLIR text) (from the extension), found MLIR bytecode: name the file .mlirbc to read it as a StableHLO portable artifact (MLIR bytecode)");
}

#[test]
fn input_binary_as_text() {
    let e = hlo_front::parse_as(
        hlo_front::Format::HloText,
        b"\x0a\x03abc\xff\xfe",
        std::path::Path::new("m.hlo"),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "m.hlo: expected HLO text (from the extension), found binary data: name the file .pb to read it as a binary HloModuleProto");
}

#[test]
fn input_text_as_proto() {
    let e = hlo_front::parse_as(
        hlo_front::Format::HloProto,
        b"module @m {\n}\n",
        std::path::Path::new("m.pb"),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "m.pb: expected a binary HloModuleProto (from the extension), found StableHLO (MLIR text): name the file .mlir to read it as StableHLO (MLIR text)");
}

#[test]
fn input_parse_error_names_the_file() {
    let e = hlo_front::parse_as(
        hlo_front::Format::StableHlo,
        b"module {\n  func.func @main() -> () {\n  }\n}\n",
        std::path::Path::new("m.mlir"),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "m.mlir:3:3: func.func @main: region ends without a return"
    );
}

/// The literal of `main`'s root constant for `dense<...> : tensor<...>`.
fn constant(dense: &str, ty: &str) -> Vec<hlo::LiteralValue> {
    let text = format!("func.func @main() -> {ty} {{\n  %0 = stablehlo.constant {dense} : {ty}\n  return %0 : {ty}\n}}\n");
    let m = parse_stablehlo(&text).unwrap_or_else(|e| panic!("{dense} : {ty}: {e}"));
    match m
        .entry_computation()
        .root_instruction()
        .and_then(|r| r.attrs.literal.clone())
    {
        Some(hlo::ConstantLiteral::Array(a)) => a.values,
        other => panic!("{other:?}"),
    }
}

#[test]
fn dense_forms_for_every_element_type() {
    use hlo::LiteralValue::{Bool, Complex, Float, Int};
    assert_eq!(
        constant("dense<1.500000e+00>", "tensor<2xf32>"),
        vec![Float(1.5), Float(1.5)]
    );
    assert_eq!(
        constant("dense<0xFF800000>", "tensor<f32>"),
        vec![Float(f64::NEG_INFINITY)]
    );
    assert_eq!(
        constant("dense<\"0x0000803F00000040\">", "tensor<2xf32>"),
        vec![Float(1.0), Float(2.0)]
    );
    assert_eq!(
        constant("dense<\"0x0000803F\">", "tensor<3xf32>"),
        vec![Float(1.0); 3]
    );
    assert_eq!(
        constant("dense<[[1.0, 2.0], [3.0, 4.0]]>", "tensor<2x2xf64>"),
        vec![Float(1.0), Float(2.0), Float(3.0), Float(4.0)]
    );
    assert_eq!(
        constant("dense<0.1>", "tensor<f32>"),
        vec![Float(f64::from(0.1f32))]
    );
    assert_eq!(
        constant("dense<[1.000000e+00, 0x7C00]>", "tensor<2xf16>"),
        vec![Float(1.0), Float(f64::INFINITY)]
    );
    assert_eq!(
        constant("dense<\"0x803F0040\">", "tensor<2xbf16>"),
        vec![Float(1.0), Float(2.0)]
    );
    assert_eq!(
        constant("dense<[-128, 127]>", "tensor<2xi8>"),
        vec![Int(-128), Int(127)]
    );
    assert_eq!(
        constant("dense<\"0xFF7F\">", "tensor<2xi8>"),
        vec![Int(-1), Int(127)]
    );
    assert_eq!(constant("dense<255>", "tensor<ui8>"), vec![Int(255)]);
    assert_eq!(
        constant("dense<\"0xFFFFFFFF\">", "tensor<ui32>"),
        vec![Int(4294967295)]
    );
    assert_eq!(
        constant("dense<-9223372036854775808>", "tensor<i64>"),
        vec![Int(i128::from(i64::MIN))]
    );
    assert_eq!(
        constant("dense<[true, false]>", "tensor<2xi1>"),
        vec![Bool(true), Bool(false)]
    );
    assert_eq!(
        constant("dense<\"0x0100\">", "tensor<2xi1>"),
        vec![Bool(true), Bool(false)]
    );
    assert_eq!(
        constant("dense<(1.0, -2.0)>", "tensor<complex<f32>>"),
        vec![Complex(1.0, -2.0)]
    );
    assert_eq!(
        constant("dense<\"0x0000803F000000C0\">", "tensor<complex<f32>>"),
        vec![Complex(1.0, -2.0)]
    );
    assert_eq!(constant("dense<>", "tensor<0xf32>"), vec![]);
}

/// `approx_max_k(a, K)` over `f32[2,N]` as JAX lowers it for a GPU, with `config` as its backend
/// config and `k` columns in the results; the custom call is on line 9.
fn approx_top_k(n: usize, k: usize, config: &str) -> String {
    format!(
        "module @m {{\n  func.func private @cmp(%x: tensor<f32>, %y: tensor<f32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<i1> {{\n    %0 = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>\n    return %0 : tensor<i1>\n  }}\n  func.func public @main(%a: tensor<2x{n}xf32>) -> tensor<2x{k}xi32> {{\n    %i = stablehlo.iota dim = 1 : tensor<2x{n}xi32>\n    %c = stablehlo.constant dense<0xFF800000> : tensor<f32>\n    %0:2 = stablehlo.custom_call @ApproxTopK(%a, %i, %c, %c) {{called_computations = [@cmp], mhlo.backend_config = {{{config}}}}} : (tensor<2x{n}xf32>, tensor<2x{n}xi32>, tensor<f32>, tensor<f32>) -> (tensor<2x{k}xf32>, tensor<2x{k}xi32>)\n    return %0#1 : tensor<2x{k}xi32>\n  }}\n}}\n"
    )
}

const APPROX_CONFIG: &str = "aggregate_to_topk = true, is_fallback = true, recall_target = 0.95 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64, top_k = 4 : i64";

case!(
    approx_top_k_init_type,
    approx_top_k(256, 4, APPROX_CONFIG),
    "9:5: stablehlo.custom_call: ApproxTopK: init value 1 is not a scalar of its input's type"
);
case!(
    approx_top_k_unknown_attribute,
    approx_top_k(256, 4, &format!("{APPROX_CONFIG}, fast = true")),
    "9:5: stablehlo.custom_call: fast is not a supported backend_config attribute for ApproxTopK"
);
case!(approx_top_k_missing_top_k, approx_top_k(256, 4, "aggregate_to_topk = true, recall_target = 0.95 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64"),
    "9:5: stablehlo.custom_call: Missing top_k attribute in backend_config");
case!(
    approx_top_k_recall_out_of_range,
    approx_top_k(256, 4, &APPROX_CONFIG.replace("0.95", "1.5")),
    "9:5: stablehlo.custom_call: ApproxTopK: recall_target out of range"
);
case!(
    approx_top_k_dim_out_of_range,
    approx_top_k(
        256,
        4,
        &APPROX_CONFIG.replace("reduction_dim = 1", "reduction_dim = 2")
    ),
    "9:5: stablehlo.custom_call: ApproxTopK: reduction_dim out of range"
);

/// `ApproxTopK` as JAX lowers `approx_max_k` for a GPU (`is_fallback`) becomes XLA's fallback:
/// a sort with the call's comparator and slices of the first `k`, no custom call; results whose
/// width is not what the expansion gives, and TPU's partial reduce, are refused.
#[test]
fn approx_top_k_expands_to_sort_and_slices() {
    let good = |text: &str| {
        let m = parse_stablehlo(text).unwrap_or_else(|e| panic!("{e}"));
        hlo_text::print_module(&m)
    };
    let text = approx_top_k(256, 4, APPROX_CONFIG)
        .replace("%c, %c)", "%c, %z)")
        .replace(
            "    %0:2",
            "    %z = stablehlo.constant dense<-1> : tensor<i32>\n    %0:2",
        );
    let printed = good(&text);
    assert!(!printed.contains("custom-call"), "{printed}");
    assert!(printed.contains("sort("), "{printed}");
    assert!(printed.contains("slice={[0:2], [0:4]}"), "{printed}");
    assert_eq!(
        err(&text.replace("tensor<2x4x", "tensor<2x5x")),
        "10:5: stablehlo.custom_call: ApproxTopK: result 0 is f32[2,5], the expansion gives f32[2,4]"
    );
    // Without is_fallback, 4096 columns at recall 0.95 are TPU's partial reduce.
    let tpu = text
        .replace("is_fallback = true", "is_fallback = false")
        .replace("x256x", "x4096x");
    assert_eq!(
        err(&tpu),
        "10:5: stablehlo.custom_call: ApproxTopK without is_fallback reduces with TPU's PartialReduce, which no GPU runs (JAX sets is_fallback when it lowers for a GPU)"
    );
    // Top 1 is a reduction that keeps the pair the comparator prefers.
    let top1 = text.replace("top_k = 4", "top_k = 1").replace("x4x", "x1x");
    let printed = good(&top1);
    assert!(printed.contains(" reduce("), "{printed}");
    assert!(!printed.contains("sort("), "{printed}");
}

case!(dot_algorithm_unknown, "module @m {\n  func.func public @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {\n    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = f32, rhs_precision_type = f32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 2, allow_imprecise_accumulation = false> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>\n    return %0 : tensor<2x4xf32>\n  }\n}\n",
    "3:5: stablehlo.dot_general: unknown dot algorithm <f32, f32, accumulation f32, components 1 x 1, 2 operation(s), allow_imprecise_accumulation = false>: StableHLO knows f16/bf16/tf32/f32/f64 ones and 8-bit float ones");

/// StableHLO's `algorithm = <...>` becomes the dot's `algorithm=` (XLA's import), TF32 included
/// (a type only algorithms name).
#[test]
fn dot_algorithm_is_read() {
    let text = "module @m {\n  func.func public @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {\n    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 3, allow_imprecise_accumulation = false> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>\n    return %0 : tensor<2x4xf32>\n  }\n}\n";
    let m = parse_stablehlo(text).unwrap_or_else(|e| panic!("{e}"));
    let printed = hlo_text::print_module(&m);
    assert!(
        printed.contains("algorithm=dot_tf32_tf32_f32_x3"),
        "{printed}"
    );
}
case!(approx_top_k_more_than_the_dimension, approx_top_k(256, 300, &APPROX_CONFIG.replace("top_k = 4", "top_k = 300")),
    "9:5: stablehlo.custom_call: ApproxTopK: top_k 300 is more than the 256 elements of dimension 1");
