//! Reflection, compat options, text format and size-limited decoding of the schema.
use proto::stream_executor::GpuTargetConfigProto;
use proto::xla::gpu::{thunk_proto, GpuExecutableProto, KernelThunkProto, ThunkProto};
use proto::{descriptor_pool, field_is_ignorable, TextFormatError};

#[test]
fn root_message_and_thunk_oneof_use_xla_numbers() {
    let pool = descriptor_pool();
    let exe = pool.get_message_by_name(proto::ROOT_MESSAGE).expect("root");
    for (name, number) in [
        ("hlo_module_with_config", 1),
        ("binary", 4),
        ("gpu_compute_capability", 6),
        ("module_name", 8),
        ("program_shape", 9),
        ("buffer_allocations", 10),
        ("output_info_map", 11),
        ("constants", 12),
        ("thunks", 13),
        ("executable_abi_version", 14),
    ] {
        let f = exe
            .get_field_by_name(name)
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(f.number(), number, "{name}");
    }
    let thunk = pool
        .get_message_by_name("xla.gpu.ThunkProto")
        .expect("thunk");
    let oneof = thunk
        .oneofs()
        .find(|o| o.name() == "impl")
        .expect("impl oneof");
    let variants: Vec<(String, u32)> = oneof
        .fields()
        .map(|f| (f.name().to_owned(), f.number()))
        .collect();
    for (name, number) in [
        ("sequential_thunk", 2),
        ("copy_thunk", 3),
        ("conditional_thunk", 6),
        ("while_thunk", 7),
        ("kernel_thunk", 8),
        ("gemm_thunk", 9),
        ("replica_id_thunk", 12),
        ("partition_id_thunk", 14),
        ("memzero_thunk", 19),
        ("memset32bit_value_thunk", 28),
        ("custom_call_thunk", 30),
        ("custom_kernel_thunk", 36),
        ("all_gather_start_thunk", 38),
        ("all_reduce_start_thunk", 39),
        ("reduce_scatter_thunk", 40),
        ("all_to_all_start_thunk", 41),
        ("collective_permute_start_thunk", 43),
    ] {
        assert!(
            variants.contains(&(name.to_owned(), number)),
            "{name} = {number}"
        );
    }
}

#[test]
fn ignorable_option_survives_in_the_descriptor_pool() {
    let pool = descriptor_pool();
    let info = pool.get_message_by_name("xla.gpu.ThunkInfoProto").unwrap();
    assert!(field_is_ignorable(
        &info.get_field_by_name("profile_annotation").unwrap()
    ));
    assert!(!field_is_ignorable(
        &info.get_field_by_name("thunk_id").unwrap()
    ));
    let exe = pool.get_message_by_name(proto::ROOT_MESSAGE).unwrap();
    assert!(field_is_ignorable(
        &exe.get_field_by_name("module_name").unwrap()
    ));
    assert!(!field_is_ignorable(
        &exe.get_field_by_name("thunks").unwrap()
    ));
}

#[test]
fn executable_round_trips_through_text_format() {
    let exe = GpuExecutableProto {
        module_name: "jit_f".into(),
        binary: vec![0, 1, 2, 255],
        thunks: vec![ThunkProto {
            thunk_info: None,
            r#impl: Some(thunk_proto::Impl::KernelThunk(KernelThunkProto {
                kernel_name: "loop_fusion".into(),
                shmem_bytes: 128,
                written: vec![false, true],
                ..Default::default()
            })),
        }],
        ..Default::default()
    };
    let text = proto::to_text_format(&exe);
    assert!(text.contains("kernel_name: \"loop_fusion\""), "{text}");
    let back: GpuExecutableProto = proto::parse_text_format(&text).unwrap();
    assert_eq!(back, exe);
}

#[test]
fn reserved_field_names_are_skipped_like_protobufs_own_parser() {
    let text = "gpu_device_info { threads_per_warp: 32 }\n\
                dnn_version_info {\n  major: 9 minor: 1\n}\n\
                platform_name: \"ROCM\"\n";
    let config: GpuTargetConfigProto = proto::parse_text_format(text).unwrap();
    assert_eq!(config.platform_name, "ROCM");
    assert_eq!(config.gpu_device_info.unwrap().threads_per_warp, 32);
}

#[test]
fn unknown_field_reports_line_and_column() {
    let text = "platform_name: \"CUDA\"\n  no_such_field: 3\n";
    let err = proto::parse_text_format::<GpuTargetConfigProto>(text).unwrap_err();
    match &err {
        TextFormatError::Syntax {
            line,
            column,
            message,
            message_name,
        } => {
            assert_eq!((*line, *column), (2, 3), "{err}");
            assert!(message.contains("no_such_field"), "{message}");
            assert_eq!(message_name, "stream_executor.GpuTargetConfigProto");
        }
        other => panic!("unexpected error {other:?}"),
    }
}

#[test]
fn malformed_target_configs_are_errors_not_panics() {
    let spec = include_str!("../../testdata/target_specs/h100_sxm.txtpb");
    let mut cuts: Vec<usize> = (0..spec.len()).step_by(97).collect();
    cuts.extend(
        spec.char_indices()
            .filter(|(_, c)| *c == '{' || *c == '}')
            .map(|(i, _)| i + 1),
    );
    let mut errors = 0;
    for cut in cuts {
        let Some(prefix) = spec.get(..cut) else {
            continue;
        };
        if proto::parse_text_format::<GpuTargetConfigProto>(prefix).is_err() {
            errors += 1;
        }
    }
    assert!(
        errors > 20,
        "truncations should mostly fail, got {errors} errors"
    );
    for bad in [
        "gpu_device_info { threads_per_warp: \"x\" }",
        "gpu_device_info { threads_per_warp: 99999999999 }",
        "gpu_device_info { cuda_compute_capability { feature_extension: WARP_SPEED } }",
        "platform_name: CUDA",
        "gpu_device_info {{",
        "\u{0}\u{1}\u{2}",
        "platform_name: \"unterminated",
    ] {
        let err = proto::parse_text_format::<GpuTargetConfigProto>(bad).unwrap_err();
        assert!(err.to_string().contains(':'), "{err}");
    }
}

#[test]
fn decode_limited_checks_size_before_decoding() {
    let exe = GpuExecutableProto {
        module_name: "m".repeat(100),
        ..Default::default()
    };
    let bytes = proto::prost::Message::encode_to_vec(&exe);
    let err = proto::decode_limited::<GpuExecutableProto>(&bytes, 10).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "serialized message is {} bytes, over the limit of 10 bytes",
            bytes.len()
        )
    );
    assert!(proto::decode_limited::<GpuExecutableProto>(&[0xff, 0xff, 0xff], 1 << 20).is_err());
    let ok: GpuExecutableProto = proto::decode_limited(&bytes, 1 << 20).unwrap();
    assert_eq!(ok, exe);
}

#[test]
fn target_config_errors_name_the_file_and_position() {
    let err =
        proto::parse_target_config("gpu_device_info {\n  bogus: 1\n}\n", "x.txtpb").unwrap_err();
    assert_eq!(
        err.to_string(),
        "target config x.txtpb:2:3: field 'bogus' not found for message \
         'stream_executor.GpuDeviceInfoProto' (parsing stream_executor.GpuTargetConfigProto)"
    );
    let err = proto::parse_target_config("platform_name: \"CUDA\"", "y.txtpb").unwrap_err();
    assert_eq!(
        err.to_string(),
        "target config y.txtpb: gpu_device_info is missing"
    );
    let err = proto::load_target_config(std::path::Path::new("/nonexistent/t.txtpb")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot read target config /nonexistent/t.txtpb"),
        "{err}"
    );
}

/// `GemmConfigXyzProto` / `MatrixLayoutXyzProto` (the gemm config at `GemmThunkProto`'s project
/// number 1000, issue 19) are `GemmConfigProto` / `MatrixLayoutProto` under other names: the same
/// fields, numbers, types and values, so the runtime reads either through one decoder.
#[test]
fn the_two_forms_of_the_gemm_config_declare_the_same_fields() {
    let pool = descriptor_pool();
    let fields = |name: &str| -> Vec<String> {
        let m = pool.get_message_by_name(name).unwrap();
        m.fields()
            .map(|f| {
                let kind = match f.kind() {
                    prost_reflect::Kind::Message(m) => m.full_name().replace("Xyz", ""),
                    prost_reflect::Kind::Enum(e) => format!(
                        "{} {:?}",
                        e.full_name().replace("Xyz", ""),
                        e.values()
                            .map(|v| (v.name().to_owned(), v.number()))
                            .collect::<Vec<_>>()
                    ),
                    k => format!("{k:?}"),
                };
                format!("{} {} {kind} {:?}", f.number(), f.name(), f.cardinality())
            })
            .collect()
    };
    for (v1, xyz) in [
        ("xla.gpu.GemmConfigProto", "xla.gpu.GemmConfigXyzProto"),
        ("xla.gpu.MatrixLayoutProto", "xla.gpu.MatrixLayoutXyzProto"),
    ] {
        assert_eq!(fields(v1), fields(xyz), "{v1} vs {xyz}");
        assert!(!fields(v1).is_empty());
    }
}

/// The conversions between the two forms lose nothing: a config with every field set survives
/// the round trip, and encodes to the same bytes in either form.
#[test]
fn the_gemm_config_converts_between_its_two_forms_without_loss() {
    use proto::prost::Message;
    use proto::xla::gpu::{GemmConfigProto, GemmConfigXyzProto, MatrixLayoutProto};
    let layout = |seed: i64| MatrixLayoutProto {
        order: 1,
        num_rows: seed,
        num_cols: seed + 1,
        batch_size: seed + 2,
        leading_dim_stride: seed + 3,
        batch_stride: seed + 4,
        transpose: true,
        dtype: proto::xla::PrimitiveType::Bf16 as i32,
    };
    let v1 = GemmConfigProto {
        lhs_layout: Some(layout(1)),
        rhs_layout: Some(layout(10)),
        output_layout: Some(layout(20)),
        alpha_real: 1.5,
        alpha_imag: -0.25,
        beta: 2.0,
        compute_type: proto::xla::PrimitiveType::F32 as i32,
        operand_precisions: vec![1, 2],
    };
    let xyz = GemmConfigXyzProto::from(&v1);
    assert_eq!(GemmConfigProto::from(&xyz), v1);
    assert_eq!(xyz.encode_to_vec(), v1.encode_to_vec());
}

#[test]
fn map_enum_values_reaches_every_field_of_the_enum_at_any_depth() {
    // Narrow float types at their legacy numbers in a nested tuple shape of a custom call inside
    // a while body, a layout's index type, a gemm's operand layout and compute type, and a
    // collective's repeated operand types; a map (custom-call attributes) beside them.
    let text = r#"
thunks {
  while_thunk {
    body_thunk_sequence {
      thunks {
        custom_call_thunk {
          target_name: "t"
          api_version: API_VERSION_ORIGINAL
          attributes { key: "k" value: "v" }
          operands {
            shaped_slice {
              shape {
                element_type: TUPLE
                tuple_shapes { element_type: F4E2M1FN_LEGACY dimensions: 4 }
                tuple_shapes {
                  element_type: TUPLE
                  tuple_shapes {
                    element_type: F8E8M0FNU_LEGACY
                    layout { index_primitive_type: F4E2M1FN_LEGACY }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}
thunks {
  gemm_thunk {
    gemm_config { lhs_layout { dtype: F8E8M0FNU_LEGACY } compute_type: F4E2M1FN_LEGACY }
  }
}
thunks {
  all_reduce_start_thunk {
    collective_config { operand_element_type: [F4E2M1FN_LEGACY, F32, F8E8M0FNU_LEGACY] }
  }
}
"#;
    let exe: GpuExecutableProto = proto::parse_text_format(text).unwrap();
    let mut same = exe.clone();
    assert_eq!(
        proto::map_enum_values(&mut same, "xla.PrimitiveType", |n| n).unwrap(),
        0
    );
    assert_eq!(same, exe);
    let mut moved = exe.clone();
    let at_xla = |n| match n {
        30 => 32,
        31 => 33,
        n => n,
    };
    assert_eq!(
        proto::map_enum_values(&mut moved, "xla.PrimitiveType", at_xla).unwrap(),
        7
    );
    let moved_text = proto::to_text_format(&moved);
    assert!(!moved_text.contains("_LEGACY"), "{moved_text}");
    // Nothing else changed: mapping back gives the original.
    let back = |n| match n {
        32 => 30,
        33 => 31,
        n => n,
    };
    assert_eq!(
        proto::map_enum_values(&mut moved, "xla.PrimitiveType", back).unwrap(),
        7
    );
    assert_eq!(moved, exe);
    // Another enum's mapping touches its own field only.
    assert_eq!(
        proto::map_enum_values(&mut moved, "xla.CustomCallApiVersion", |n| n + 1).unwrap(),
        1
    );
    let text = proto::to_text_format(&moved);
    assert!(text.contains("API_VERSION_STATUS_RETURNING\n"), "{text}");
    assert_eq!(text.matches("_LEGACY").count(), 7, "{text}");
}
