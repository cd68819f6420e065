//! The staged rollout, one row per construct: what moves (a field or value from its legacy
//! numbers to new ones) or what is new (a thunk kind, a mode), behind which `CompileOptions`
//! flag the compiler writes it, and the dates of its stages (docs/adding_a_thunk_kind.md).
//!
//! The dates live here and nowhere else: the compiler's options link their row instead of
//! restating it (`compiler::CompileOptions::staged` pairs each flag with its row, and a test
//! holds every flag off before its stage-2 date), and `docs/artifact.md` is checked against the
//! table (`proto/tests/rollout.rs`). The `_xyz` in the schema's names marks a field parked at a
//! project number (1000 on) during its move; those names are part of the recorded surface and
//! stay until stage 3 retires them. Names outside the schema say the number instead: the flag
//! that writes `block_counts_xyz` is `emit_launch_dims_at_1000`.

/// One staged construct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rollout {
    /// What it is called in the docs and notes.
    pub name: &'static str,
    /// The schema element it concerns (`xla.gpu.LaunchDimensionsProto`,
    /// `xla.gpu.ThunkProto.memset8bit_value_thunk`).
    pub construct: &'static str,
    /// The numbers (field numbers, or enum values for a value move) the legacy form uses; empty
    /// for a new construct.
    pub legacy: &'static [u32],
    /// The numbers the new form uses (a new construct's oneof number; empty for a mode).
    pub new: &'static [u32],
    /// The `CompileOptions` field that makes the compiler write the new form (off by default
    /// until `stage2`); `None` where no compiler path writes the construct.
    pub option: Option<&'static str>,
    /// Stage 1: runtimes read the new form from this day (`YYYY-MM-DD`).
    pub stage1: &'static str,
    /// Stage 2: the earliest day the compiler may write it by default (stage 1 + 14 days, the
    /// forward window).
    pub stage2: &'static str,
    /// Stage 3: the earliest day the legacy form's readers may go (6 months after stage 2), or
    /// `None` for a new construct, which has no legacy form.
    pub retire: Option<&'static str>,
}

/// `LaunchDimensionsProto` 1, 2 → 1000, 1001 (`block_counts_xyz`, `thread_counts_per_block_xyz`).
pub const LAUNCH_DIMS: Rollout = fidelity_move(
    "launch_dims",
    "xla.gpu.LaunchDimensionsProto",
    &[1, 2],
    &[1000, 1001],
    "emit_launch_dims_at_1000",
);
/// `CopyThunkProto` 1, 2 → 1000, 1001 (`source_buffer_xyz`, `destination_buffer_xyz`).
pub const COPY_SLICES: Rollout = fidelity_move(
    "copy_slices",
    "xla.gpu.CopyThunkProto",
    &[1, 2],
    &[1000, 1001],
    "emit_copy_slices_at_1000",
);
/// `CollectiveConfigProto.group_mode` 3 → 1001 (`group_mode_xyz`).
pub const GROUP_MODE: Rollout = fidelity_move(
    "group_mode",
    "xla.gpu.CollectiveConfigProto.group_mode",
    &[3],
    &[1001],
    "emit_group_mode_at_1001",
);
/// `GemmThunkProto.gemm_config` 1 → 1000 (`gemm_config_xyz`).
pub const GEMM_CONFIG: Rollout = fidelity_move(
    "gemm_config",
    "xla.gpu.GemmThunkProto.gemm_config",
    &[1],
    &[1000],
    "emit_gemm_config_at_1000",
);
/// `CollectiveBufferProto` 2, 3 → 1000, 1001 (`source_buffer_xyz`, `destination_buffer_xyz`).
pub const COLLECTIVE_SLICES: Rollout = fidelity_move(
    "collective_slices",
    "xla.gpu.CollectiveBufferProto",
    &[2, 3],
    &[1000, 1001],
    "emit_collective_slices_at_1000",
);
/// `CollectiveConfigProto.op_id` 4 → 1000 (`op_id_xyz`).
pub const OP_ID: Rollout = fidelity_move(
    "op_id",
    "xla.gpu.CollectiveConfigProto.op_id",
    &[4],
    &[1000],
    "emit_op_id_at_1000",
);
/// `CustomCallThunkProto.attributes` 6 → 1000 (`attributes_xyz`); no compiler writes
/// attributes, so no flag (hand-written goldens from v3 use 1000; the legacy readers go after
/// handwritten v2 + 6 months).
pub const CUSTOM_CALL_ATTRIBUTES: Rollout = Rollout {
    option: None,
    retire: Some("2027-06-01"),
    ..fidelity_move(
        "custom_call_attributes",
        "xla.gpu.CustomCallThunkProto.attributes",
        &[6],
        &[1000],
        "",
    )
};
/// `HloModuleConfigProto` 23, 24 → XLA's 33, 27 (the SPMD propagation lists).
pub const SPMD_PROPAGATION: Rollout = fidelity_move(
    "spmd_propagation_xla",
    "xla.HloModuleConfigProto",
    &[23, 24],
    &[33, 27],
    "emit_spmd_propagation_xla",
);
/// `HloModuleProto.frontend_attributes` 18 → XLA's 19.
pub const MODULE_FRONTEND_ATTRIBUTES: Rollout = fidelity_move(
    "module_frontend_attributes_19",
    "xla.HloModuleProto.frontend_attributes",
    &[18],
    &[19],
    "emit_module_frontend_attributes_19",
);
/// `PrimitiveType` values 30, 31 → XLA's 32, 33 (`F4E2M1FN`, `F8E8M0FNU`).
pub const NARROW_FLOATS: Rollout = fidelity_move(
    "narrow_floats_xla",
    "xla.PrimitiveType",
    &[30, 31],
    &[32, 33],
    "emit_narrow_floats_xla",
);
/// `memset8bit_value_thunk` (oneof 29), new.
pub const MEMSET8: Rollout = new_construct(
    "memset8",
    "xla.gpu.ThunkProto.memset8bit_value_thunk",
    &[29],
    "emit_memset8",
    ["2026-12-01", "2026-12-15"],
);
/// `num_partitions > 1` emitted as it is (issue 30), new.
pub const PARTITIONS: Rollout = new_construct(
    "partitions",
    "xla.HloModuleConfigProto.num_partitions",
    &[],
    "emit_partitions",
    ["2026-12-04", "2026-12-18"],
);
/// `collective_permute_start_thunk` (oneof 43), new.
pub const COLLECTIVE_PERMUTE: Rollout = new_construct(
    "collective_permute",
    "xla.gpu.ThunkProto.collective_permute_start_thunk",
    &[43],
    "emit_collective_permute",
    ["2026-12-04", "2026-12-18"],
);
/// `fft_thunk` (oneof 27), new.
pub const FFT_THUNK: Rollout = new_construct(
    "fft_thunk",
    "xla.gpu.ThunkProto.fft_thunk",
    &[27],
    "emit_fft_thunk",
    ["2026-12-04", "2026-12-18"],
);
/// `convolution_thunk` (oneof 25), new (issue 32).
pub const CONVOLUTION_THUNK: Rollout = new_construct(
    "convolution_thunk",
    "xla.gpu.ThunkProto.convolution_thunk",
    &[25],
    "emit_convolution_thunk",
    ["2026-12-04", "2026-12-18"],
);
/// `cholesky` lowered to the `cusolver_potrf_ffi` custom call (issues 27, 31): a new value of
/// `target_name` that runtimes handle since 2026-12-03.
pub const CUSOLVER_POTRF: Rollout = new_construct(
    "cusolver_potrf",
    "xla.gpu.CustomCallThunkProto.target_name",
    &[],
    "emit_cusolver_potrf",
    ["2026-12-03", "2026-12-17"],
);
/// `PrecisionConfig.algorithm` (2) of a dot in the embedded module, new (the algorithm a dot
/// is computed with: JAX's `DotAlgorithmPreset`s). The thunks compute it either way (the
/// operands are rounded by the kernels the compiler emits); the flag decides whether the
/// embedded module says so.
pub const DOT_ALGORITHM: Rollout = new_construct(
    "dot_algorithm",
    "xla.PrecisionConfig.algorithm",
    &[2],
    "emit_dot_algorithm",
    ["2026-12-05", "2026-12-19"],
);

/// Every staged construct.
pub const ROLLOUTS: &[Rollout] = &[
    MEMSET8,
    LAUNCH_DIMS,
    COPY_SLICES,
    GROUP_MODE,
    GEMM_CONFIG,
    COLLECTIVE_SLICES,
    OP_ID,
    CUSTOM_CALL_ATTRIBUTES,
    SPMD_PROPAGATION,
    MODULE_FRONTEND_ATTRIBUTES,
    NARROW_FLOATS,
    PARTITIONS,
    COLLECTIVE_PERMUTE,
    FFT_THUNK,
    CONVOLUTION_THUNK,
    CUSOLVER_POTRF,
    DOT_ALGORITHM,
];

/// The row whose compiler flag is `option`.
pub fn by_option(option: &str) -> Option<&'static Rollout> {
    ROLLOUTS.iter().find(|r| r.option == Some(option))
}

/// A move of the schema-fidelity fixes (docs/artifact.md, "Fidelity to XLA's schema"): all
/// began on 2026-12-01, may flip on 2026-12-15 and retire their legacy numbers from 2027-06-15.
const fn fidelity_move(
    name: &'static str,
    construct: &'static str,
    legacy: &'static [u32],
    new: &'static [u32],
    option: &'static str,
) -> Rollout {
    Rollout {
        name,
        construct,
        legacy,
        new,
        option: Some(option),
        stage1: "2026-12-01",
        stage2: "2026-12-15",
        retire: Some("2027-06-15"),
    }
}

const fn new_construct(
    name: &'static str,
    construct: &'static str,
    new: &'static [u32],
    option: &'static str,
    [stage1, stage2]: [&'static str; 2],
) -> Rollout {
    Rollout {
        name,
        construct,
        legacy: &[],
        new,
        option: Some(option),
        stage1,
        stage2,
        retire: None,
    }
}

/// The table as the docs show it (docs/adding_a_thunk_kind.md, "The rollout table", which a test
/// holds equal to this).
pub fn markdown_table() -> String {
    let numbers = |v: &[u32]| match v {
        [] => "—".to_owned(),
        v => v.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
    };
    let mut out = String::from(
        "| name | construct | legacy | new | flag | stage 1 | stage 2 | legacy retired |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for r in ROLLOUTS {
        out.push_str(&format!(
            "| {} | `{}` | {} | {} | {} | {} | {} | {} |\n",
            r.name,
            r.construct,
            numbers(r.legacy),
            numbers(r.new),
            r.option.map_or("—".to_owned(), |o| format!("`{o}`")),
            r.stage1,
            r.stage2,
            r.retire.unwrap_or("—"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row names a schema element, and a move's numbers are that element's fields (or,
    /// for an enum, its values); a new construct's number is its oneof field's.
    #[test]
    fn every_row_names_its_schema_element_and_numbers() {
        let pool = crate::descriptor_pool();
        for r in ROLLOUTS {
            let numbers = r.legacy.iter().chain(r.new);
            if let Some(m) = pool.get_message_by_name(r.construct) {
                for n in numbers {
                    assert!(m.get_field(*n).is_some(), "{}: no field {n}", r.name);
                }
            } else if let Some(e) = pool.get_enum_by_name(r.construct) {
                for n in numbers {
                    let n = i32::try_from(*n).unwrap_or(i32::MAX);
                    assert!(e.get_value(n).is_some(), "{}: no value {n}", r.name);
                }
            } else {
                let (message, field) = r.construct.rsplit_once('.').unwrap_or_default();
                let m = pool.get_message_by_name(message);
                let f = m.as_ref().and_then(|m| m.get_field_by_name(field));
                assert!(f.is_some(), "{}: no {}", r.name, r.construct);
                if let (Some(m), Some(f)) = (m, f) {
                    for n in numbers {
                        assert!(
                            m.get_field(*n).is_some(),
                            "{}: no field {n} beside {}",
                            r.name,
                            f.name()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_docs_show_the_table() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../docs/adding_a_thunk_kind.md"
        );
        let docs = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            docs.contains(&markdown_table()),
            "docs/adding_a_thunk_kind.md lacks today's rollout table; paste this under \
             \"The rollout table\":\n{}",
            markdown_table()
        );
    }
}
