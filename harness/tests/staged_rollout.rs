//! Staged rollouts in stage 1 (docs/adding_a_thunk_kind.md, docs/compatibility.md): the runtime
//! reads the construct, the compiler emits it only behind a `CompileOptions` flag (off by
//! default), and the schema bot refuses the flip of that default until the forward window has
//! passed since the construct entered the schema. In stage 1:
//! - `memset8bit_value_thunk` behind `CompileOptions::emit_memset8`;
//! - `LaunchDimensionsProto.block_counts_xyz` / `thread_counts_per_block_xyz` (the launch counts
//!   moved off XLA's numbers 1 and 2, issue 19) behind `CompileOptions::emit_launch_dims_at_1000`;
//! - `CopyThunkProto.source_buffer_xyz` / `destination_buffer_xyz` (the copy slices moved off
//!   XLA's numbers 1 and 2, issue 19) behind `CompileOptions::emit_copy_slices_at_1000`;
//! - `CollectiveConfigProto.group_mode_xyz` (the group mode moved off XLA's number 3, whose enum
//!   numbers the modes differently, issue 19) behind `CompileOptions::emit_group_mode_at_1001`;
//! - `GemmThunkProto.gemm_config_xyz` (the gemm config moved off XLA's number 1, whose
//!   `xla.GemmConfigProto` has other fields, issue 19) behind `CompileOptions::emit_gemm_config_at_1000`;
//! - `CollectiveBufferProto.source_buffer_xyz` / `destination_buffer_xyz` (off XLA's 2 and 3)
//!   behind `CompileOptions::emit_collective_slices_at_1000`, and `CollectiveConfigProto.op_id_xyz`
//!   (off XLA's 4, its `use_symmetric_buffer`) behind `CompileOptions::emit_op_id_at_1000`;
//! - in the embedded HLO, moving onto XLA's own numbers: `HloModuleConfigProto`'s propagation
//!   lists (23/24 → 33/27) behind `CompileOptions::emit_spmd_propagation_xla`, the module's
//!   `frontend_attributes` (18 → 19) behind `emit_module_frontend_attributes_19`, and the element
//!   types `F4E2M1FN` / `F8E8M0FNU` (30/31 → 32/33) behind `emit_narrow_floats_xla`; these use
//!   the cases of `goldens/staged/cases/` (no curated case carries the fields);
//! - `convolution_thunk` (issue 32) behind `CompileOptions::emit_convolution_thunk`: convolutions
//!   as XLA's cuDNN calls instead of convolution kernels;
//! - a dot's `PrecisionConfig.algorithm` in the embedded module behind
//!   `CompileOptions::emit_dot_algorithm` (case `goldens/staged/cases/dot_algorithm`).
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use harness::census_of;
use harness::run_artifact;
use harness::{curated_cases, repo_root, Case};
use hlo_eval::IoCase;
use proto::prost::Message;
use schema_history::{Date, DiffOptions, Revision, Rule};

const CONSTRUCT: &str = "xla.gpu.ThunkProto.memset8bit_value_thunk";
const TARGETS: [&str; 2] = ["h100_sxm", "a100_sxm_80"];

fn case() -> Case {
    case_named("memset8_fill")
}

fn case_named(name: &str) -> Case {
    curated_cases()
        .unwrap()
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no curated case {name}"))
}

fn target_config(target: &str) -> PathBuf {
    repo_root().join(format!("goldens/executables/{target}/v1/target.txtpb"))
}

fn compile(case: &Case, target: &str, options: &compiler::CompileOptions) -> Vec<u8> {
    let text = std::fs::read_to_string(&case.module).unwrap();
    let module = hlo_text::parse_module(&text).unwrap();
    let target = compiler::Target::load(&target_config(target)).unwrap();
    compiler::compile_to_bytes(&module, &target, options).unwrap()
}

fn flipped() -> compiler::CompileOptions {
    let mut options = compiler::CompileOptions::default();
    options.emit_memset8 = true;
    options
}

fn census(bytes: &[u8]) -> BTreeSet<String> {
    census_of(&proto::xla::gpu::GpuExecutableProto::decode(bytes).unwrap())
}

fn kernel_count(bytes: &[u8]) -> usize {
    let exe = proto::xla::gpu::GpuExecutableProto::decode(bytes).unwrap();
    exe.thunks
        .iter()
        .filter(|t| {
            matches!(
                t.r#impl,
                Some(proto::xla::gpu::thunk_proto::Impl::KernelThunk(_))
            )
        })
        .count()
}

fn outputs(bytes: &[u8], target: &str, case: &Case) -> Vec<hlo::Array> {
    let config = proto::load_target_config(&target_config(target)).unwrap();
    let description = runtime::DeviceDescription::from_target_config(&config).unwrap();
    let expected: Vec<IoCase> = case.io.iter().map(|p| IoCase::read(p).unwrap()).collect();
    let mut got = run_artifact(bytes, &description, &expected).unwrap();
    got.remove(0).outputs
}

#[test]
fn off_by_default_the_fills_stay_kernels() {
    let case = case();
    for target in TARGETS {
        let bytes = compile(&case, target, &compiler::CompileOptions::default());
        assert!(
            !census(&bytes).contains(CONSTRUCT),
            "{target}: the default compiler emits {CONSTRUCT} before its date"
        );
    }
}

#[test]
fn behind_the_flag_the_byte_fills_become_memsets_with_identical_outputs() {
    let case = case();
    let want = IoCase::read(&case.io[0]).unwrap().outputs;
    for target in TARGETS {
        let legacy = compile(&case, target, &compiler::CompileOptions::default());
        let staged = compile(&case, target, &flipped());
        let c = census(&staged);
        assert!(c.contains(CONSTRUCT), "{target}: no {CONSTRUCT} in {c:?}");
        // Two of the three outputs are pure fills: two kernel launches fewer.
        assert_eq!(kernel_count(&staged) + 2, kernel_count(&legacy), "{target}");
        let (a, b) = (
            outputs(&legacy, target, &case),
            outputs(&staged, target, &case),
        );
        assert_eq!(a, b, "{target}: the memset path computes other bytes");
        assert_eq!(b, want, "{target}: not the expected outputs");
    }
}

/// `got` matches the case's expected outputs within `hlo_eval::io`'s tolerance for their type (exact
/// for integers and `pred`), as the golden suites compare: a gemm's f32 sums need not be
/// bit-identical to the reference evaluator's.
fn assert_close(got: &[hlo::Array], want: &[hlo::Array], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: output count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let c = hlo_eval::compare(g, w, hlo_eval::Tolerance::for_dtype(w.dtype()));
        assert!(c.ok, "{what}: output {i}: {c:?}");
    }
}

/// How the listing line of `construct` starts: a field with its number, as the bot keeps a
/// field's identity by number (a field renamed `_legacy` leaves its old name in older listings at
/// another number: `allow_spmd_sharding_propagation_to_parameters` was 23 before it was 33).
fn listing_prefix(construct: &str) -> String {
    let field = construct.rsplit_once('.').and_then(|(message, name)| {
        proto::descriptor_pool()
            .get_message_by_name(message)?
            .get_field_by_name(name)
    });
    match field {
        Some(f) => format!("{construct} field {} ", f.number()),
        None => format!("{construct} "),
    }
}

/// The day the construct entered the schema: the first snapshot whose listing has it, else today
/// (a construct in no snapshot is new today).
fn first_seen(construct: &str, today: Date) -> Date {
    let prefix = listing_prefix(construct);
    let dir = repo_root().join("schema_history/snapshots");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    for name in names {
        let listing = std::fs::read_to_string(dir.join(&name).join("surface.txt")).unwrap();
        if listing.lines().any(|l| l.starts_with(&prefix)) {
            let d: Vec<u32> = name[..10].split('-').map(|p| p.parse().unwrap()).collect();
            return Date::new(d[0] as i32, d[1], d[2]).unwrap();
        }
    }
    today
}

/// A scratch golden store whose newest h100_sxm version is what the compiler emits once the
/// flag's default is flipped: the bot reads the newest golden as the default emission.
fn flipped_goldens(dir: &Path, created: Date, case: &Case, options: &compiler::CompileOptions) {
    let bytes = compile(case, "h100_sxm", options);
    let v = dir.join("h100_sxm/v2");
    std::fs::create_dir_all(&v).unwrap();
    let manifest = serde_json::json!({
        "target": "h100_sxm",
        "version": 2,
        "created": created.to_string(),
        "census": { case.name.clone(): census(&bytes) },
    });
    std::fs::write(v.join("manifest.json"), manifest.to_string()).unwrap();
}

fn bot(construct: &str, today: Date, goldens: &Path) -> Vec<schema_history::Finding> {
    let mut opts = DiffOptions::project(
        repo_root(),
        Revision::Git("HEAD".into()),
        Revision::WorkTree,
        today,
    );
    opts.goldens = goldens.to_owned();
    schema_history::diff(&opts)
        .unwrap()
        .findings
        .into_iter()
        .filter(|f| f.rule == Rule::ForwardWindow && f.construct == construct)
        .collect()
}

/// The bot's verdict on flipping `options` on by default: the forward-window finding for
/// `construct` until the window has passed since it entered the schema, none from that day.
fn assert_the_bot_blocks_the_flip(
    construct: &str,
    case: &Case,
    options: &compiler::CompileOptions,
) {
    let today = Date::new(2026, 12, 1).unwrap();
    let since = first_seen(construct, today);
    let legal = since.add_days(14);
    // One directory per construct: tests of several moves share a case and run in parallel.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "staged-rollout-{}-{}-{}",
        case.name,
        construct.replace('.', "_"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    flipped_goldens(&dir, today, case, options);

    let early = bot(construct, today, &dir);
    assert_eq!(early.len(), 1, "{early:#?}");
    assert_eq!(
        early[0].hint,
        format!(
            "keep its emission behind a compiler flag that is off by default until {legal}, and regenerate the goldens without it"
        )
    );
    assert!(
        early[0].message.starts_with(&format!(
            "`{construct}` is emitted by default (golden h100_sxm/v2 uses it) but has been in the schema only since {since}"
        )),
        "{}",
        early[0].message
    );
    let day_before = bot(construct, legal.add_days(-1), &dir);
    assert_eq!(day_before.len(), 1, "still blocked the day before {legal}");
    let on_the_day = bot(construct, legal, &dir);
    assert!(on_the_day.is_empty(), "{on_the_day:#?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_bot_blocks_the_flip_until_the_forward_window_has_passed() {
    assert_the_bot_blocks_the_flip(CONSTRUCT, &case(), &flipped());
}

/// The golden set of a flag (`goldens/staged/<flag>/<target>/<case>/`): the exact bytes today's
/// compiler emits with the flag on, and the outputs recorded for them. Today's runtime must
/// replay them (they are what stage 2 will emit by default), and today's compiler with the flag
/// must still reproduce them. `STAGED_BLESS=1` writes them (then review and commit).
fn assert_the_golden_set_replays(
    flag: &str,
    construct: &str,
    case: &Case,
    options: &compiler::CompileOptions,
) {
    let inputs = IoCase::read(&case.io[0]).unwrap();
    for target in TARGETS {
        let dir = repo_root().join(format!("goldens/staged/{flag}/{target}/{}", case.name));
        let bytes = compile(case, target, options);
        if std::env::var_os("STAGED_BLESS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("executable.pb"), &bytes).unwrap();
            let recorded = IoCase {
                inputs: inputs.inputs.clone(),
                outputs: outputs(&bytes, target, case),
            };
            std::fs::write(dir.join("io.json"), hlo_eval::case_to_json(&recorded)).unwrap();
        }
        let bless = "STAGED_BLESS=1 cargo test -p harness --test staged_rollout";
        let committed = std::fs::read(dir.join("executable.pb"))
            .unwrap_or_else(|e| panic!("{}: {e}; write it with {bless}", dir.display()));
        let recorded = IoCase::read(&dir.join("io.json")).unwrap();
        assert!(census(&committed).contains(construct), "{target}");
        assert_eq!(
            outputs(&committed, target, case),
            recorded.outputs,
            "{target}: today's runtime no longer runs the staged golden as recorded"
        );
        assert_close(
            &recorded.outputs,
            &inputs.outputs,
            &format!("{target}: recorded outputs are wrong"),
        );
        assert!(
            committed == bytes,
            "{target}: today's compiler with the `{flag}` flag no longer reproduces {}; if intended, {bless}",
            dir.display()
        );
    }
}

#[test]
fn the_flags_golden_set_replays_and_is_reproduced() {
    assert_the_golden_set_replays("memset8", CONSTRUCT, &case(), &flipped());
}

// ---------------------------------------------------------------------------------------------
// Issue 19: fields that move off a number XLA declares otherwise. Each move has the same three
// checks: off by default only the v1 numbers are written; behind the flag only the new ones,
// with the same kernels and the same outputs; and the bot's and golden set's checks above.

/// Today's default compiler writes `case` with every `v1` field and none of `moved`.
fn assert_off_by_default(case: &Case, moved: &[&str], v1: &[&str]) {
    for target in TARGETS {
        let c = census(&compile(case, target, &compiler::CompileOptions::default()));
        assert!(
            moved.iter().all(|f| !c.contains(*f)),
            "{target}: the default compiler emits {moved:?} before their date"
        );
        assert!(v1.iter().all(|f| c.contains(*f)), "{target}: {c:?}");
    }
}

/// Behind `options`, `case` carries every `moved` field and no `v1` field, launches the same
/// kernels and computes the same outputs (the expected ones) as the default compiler's artifact.
fn assert_the_move(case: &Case, options: &compiler::CompileOptions, moved: &[&str], v1: &[&str]) {
    let want = IoCase::read(&case.io[0]).unwrap().outputs;
    for target in TARGETS {
        let legacy = compile(case, target, &compiler::CompileOptions::default());
        let staged = compile(case, target, options);
        let c = census(&staged);
        assert!(moved.iter().all(|f| c.contains(*f)), "{target}: {c:?}");
        assert!(
            v1.iter().all(|f| !c.contains(*f)),
            "{target}: the flag must vacate {v1:?}: {c:?}"
        );
        assert_eq!(kernel_count(&staged), kernel_count(&legacy), "{target}");
        let (a, b) = (
            outputs(&legacy, target, case),
            outputs(&staged, target, case),
        );
        assert_eq!(a, b, "{target}: the moved fields compute other bytes");
        assert_close(&b, &want, &format!("{target}: not the expected outputs"));
    }
}

// ---------------------------------------------------------------------------------------------
// Issue 19: the launch counts move off XLA's numbers 1 and 2 (LaunchDimensionsProto).

const LAUNCH_XYZ: &str = "xla.gpu.LaunchDimensionsProto.block_counts_xyz";
const LAUNCH_XYZ_BLOCK: &str = "xla.gpu.LaunchDimensionsProto.thread_counts_per_block_xyz";
const LAUNCH_V1: [&str; 2] = [
    "xla.gpu.LaunchDimensionsProto.block_counts",
    "xla.gpu.LaunchDimensionsProto.thread_counts_per_block",
];

fn launch_xyz() -> compiler::CompileOptions {
    let mut options = compiler::CompileOptions::default();
    options.emit_launch_dims_at_1000 = true;
    options
}

#[test]
fn off_by_default_the_launch_counts_stay_at_the_v1_numbers() {
    assert_off_by_default(
        &case_named("add"),
        &[LAUNCH_XYZ, LAUNCH_XYZ_BLOCK],
        &LAUNCH_V1,
    );
}

#[test]
fn behind_the_flag_the_launch_counts_move_with_identical_outputs() {
    assert_the_move(
        &case_named("add"),
        &launch_xyz(),
        &[LAUNCH_XYZ, LAUNCH_XYZ_BLOCK],
        &LAUNCH_V1,
    );
}

#[test]
fn the_bot_blocks_the_launch_counts_flip_until_the_forward_window_has_passed() {
    assert_the_bot_blocks_the_flip(LAUNCH_XYZ, &case_named("add"), &launch_xyz());
}

#[test]
fn the_launch_counts_golden_set_replays_and_is_reproduced() {
    assert_the_golden_set_replays(
        "launch_dims_xyz",
        LAUNCH_XYZ,
        &case_named("add"),
        &launch_xyz(),
    );
}

// ---------------------------------------------------------------------------------------------
// Issue 19: the copy slices move off XLA's numbers 1 and 2 (CopyThunkProto).

const COPY_XYZ: &str = "xla.gpu.CopyThunkProto.source_buffer_xyz";
const COPY_XYZ_DST: &str = "xla.gpu.CopyThunkProto.destination_buffer_xyz";
const COPY_V1: [&str; 2] = [
    "xla.gpu.CopyThunkProto.source_buffer",
    "xla.gpu.CopyThunkProto.destination_buffer",
];

fn copy_xyz() -> compiler::CompileOptions {
    let mut options = compiler::CompileOptions::default();
    options.emit_copy_slices_at_1000 = true;
    options
}

#[test]
fn off_by_default_the_copy_slices_stay_at_the_v1_numbers() {
    assert_off_by_default(
        &case_named("fori_loop"),
        &[COPY_XYZ, COPY_XYZ_DST],
        &COPY_V1,
    );
}

#[test]
fn behind_the_flag_the_copy_slices_move_with_identical_outputs() {
    assert_the_move(
        &case_named("fori_loop"),
        &copy_xyz(),
        &[COPY_XYZ, COPY_XYZ_DST],
        &COPY_V1,
    );
}

#[test]
fn the_bot_blocks_the_copy_slices_flip_until_the_forward_window_has_passed() {
    assert_the_bot_blocks_the_flip(COPY_XYZ, &case_named("fori_loop"), &copy_xyz());
}

#[test]
fn the_copy_slices_golden_set_replays_and_is_reproduced() {
    assert_the_golden_set_replays(
        "copy_slices_xyz",
        COPY_XYZ,
        &case_named("fori_loop"),
        &copy_xyz(),
    );
}

// ---------------------------------------------------------------------------------------------
// Issue 19: the collective group mode moves off XLA's number 3 (CollectiveConfigProto), where
// XLA's enum gives each value another mode.

const GROUP_MODE_XYZ: &str = "xla.gpu.CollectiveConfigProto.group_mode_xyz";
const GROUP_MODE_V1: [&str; 1] = ["xla.gpu.CollectiveConfigProto.group_mode"];

fn group_mode_xyz() -> compiler::CompileOptions {
    let mut options = compiler::CompileOptions::default();
    options.emit_group_mode_at_1001 = true;
    options
}

#[test]
fn off_by_default_the_group_mode_stays_at_the_v1_number() {
    assert_off_by_default(
        &case_named("all_reduce_replica_id"),
        &[GROUP_MODE_XYZ],
        &GROUP_MODE_V1,
    );
}

#[test]
fn behind_the_flag_the_group_mode_moves_with_identical_outputs() {
    assert_the_move(
        &case_named("all_reduce_replica_id"),
        &group_mode_xyz(),
        &[GROUP_MODE_XYZ],
        &GROUP_MODE_V1,
    );
}

#[test]
fn the_bot_blocks_the_group_mode_flip_until_the_forward_window_has_passed() {
    assert_the_bot_blocks_the_flip(
        GROUP_MODE_XYZ,
        &case_named("all_reduce_replica_id"),
        &group_mode_xyz(),
    );
}

#[test]
fn the_group_mode_golden_set_replays_and_is_reproduced() {
    assert_the_golden_set_replays(
        "group_mode_xyz",
        GROUP_MODE_XYZ,
        &case_named("all_reduce_replica_id"),
        &group_mode_xyz(),
    );
}

// ---------------------------------------------------------------------------------------------
// Issue 19: the gemm config moves off XLA's number 1 (GemmThunkProto), where XLA declares its
// own GemmConfigProto.

const GEMM_XYZ: &str = "xla.gpu.GemmThunkProto.gemm_config_xyz";
const GEMM_V1: [&str; 1] = ["xla.gpu.GemmThunkProto.gemm_config"];

fn gemm_config_xyz() -> compiler::CompileOptions {
    let mut options = compiler::CompileOptions::default();
    options.emit_gemm_config_at_1000 = true;
    options
}

#[test]
fn off_by_default_the_gemm_config_stays_at_the_v1_number() {
    assert_off_by_default(&case_named("matmul"), &[GEMM_XYZ], &GEMM_V1);
}

#[test]
fn behind_the_flag_the_gemm_config_moves_with_identical_outputs() {
    assert_the_move(
        &case_named("matmul"),
        &gemm_config_xyz(),
        &[GEMM_XYZ],
        &GEMM_V1,
    );
}

#[test]
fn the_bot_blocks_the_gemm_config_flip_until_the_forward_window_has_passed() {
    assert_the_bot_blocks_the_flip(GEMM_XYZ, &case_named("matmul"), &gemm_config_xyz());
}

#[test]
fn the_gemm_config_golden_set_replays_and_is_reproduced() {
    assert_the_golden_set_replays(
        "gemm_config_xyz",
        GEMM_XYZ,
        &case_named("matmul"),
        &gemm_config_xyz(),
    );
}

// ---------------------------------------------------------------------------------------------
// Issue 19: the collective buffer slices move off XLA's 2 and 3 (CollectiveBufferProto), and the
// channel id off XLA's 4 (CollectiveConfigProto.op_id).

const COLLECTIVE_XYZ: &str = "xla.gpu.CollectiveBufferProto.source_buffer_xyz";
const COLLECTIVE_XYZ_DST: &str = "xla.gpu.CollectiveBufferProto.destination_buffer_xyz";
const COLLECTIVE_V1: [&str; 2] = [
    "xla.gpu.CollectiveBufferProto.source_buffer",
    "xla.gpu.CollectiveBufferProto.destination_buffer",
];
const OP_ID_XYZ: &str = "xla.gpu.CollectiveConfigProto.op_id_xyz";
const OP_ID_V1: [&str; 1] = ["xla.gpu.CollectiveConfigProto.op_id"];

fn collective_slices_xyz() -> compiler::CompileOptions {
    let mut options = compiler::CompileOptions::default();
    options.emit_collective_slices_at_1000 = true;
    options
}

fn op_id_xyz() -> compiler::CompileOptions {
    let mut options = compiler::CompileOptions::default();
    options.emit_op_id_at_1000 = true;
    options
}

#[test]
fn off_by_default_the_collective_slices_and_op_id_stay_at_the_v1_numbers() {
    let case = case_named("all_reduce_replica_id");
    assert_off_by_default(&case, &[COLLECTIVE_XYZ, COLLECTIVE_XYZ_DST], &COLLECTIVE_V1);
    assert_off_by_default(&case, &[OP_ID_XYZ], &OP_ID_V1);
}

#[test]
fn behind_the_flag_the_collective_slices_move_with_identical_outputs() {
    assert_the_move(
        &case_named("all_reduce_replica_id"),
        &collective_slices_xyz(),
        &[COLLECTIVE_XYZ, COLLECTIVE_XYZ_DST],
        &COLLECTIVE_V1,
    );
}

#[test]
fn behind_the_flag_the_op_id_moves_with_identical_outputs() {
    assert_the_move(
        &case_named("all_reduce_replica_id"),
        &op_id_xyz(),
        &[OP_ID_XYZ],
        &OP_ID_V1,
    );
}

#[test]
fn the_bot_blocks_the_collective_slices_and_op_id_flips_until_the_forward_window_has_passed() {
    let case = case_named("all_reduce_replica_id");
    assert_the_bot_blocks_the_flip(COLLECTIVE_XYZ, &case, &collective_slices_xyz());
    assert_the_bot_blocks_the_flip(OP_ID_XYZ, &case, &op_id_xyz());
}

#[test]
fn the_collective_slices_and_op_id_golden_sets_replay_and_are_reproduced() {
    let case = case_named("all_reduce_replica_id");
    assert_the_golden_set_replays(
        "collective_slices_xyz",
        COLLECTIVE_XYZ,
        &case,
        &collective_slices_xyz(),
    );
    assert_the_golden_set_replays("op_id_xyz", OP_ID_XYZ, &case, &op_id_xyz());
}

// ---------------------------------------------------------------------------------------------
// Issue 19: fields of the embedded HLO move onto XLA's own numbers (XLA declares them under the
// same names there). The module is part of the contract: the runtime checks it at load, and
// `hlo::from_proto` (aot inspect, the golden tools) reads every field.

/// A case of `goldens/staged/cases/` (modules that carry the moving fields; no curated case
/// does).
fn staged_case(name: &str) -> Case {
    let dir = repo_root().join("goldens/staged/cases");
    Case {
        name: name.to_owned(),
        module: dir.join(format!("{name}.hlo")),
        io: vec![dir.join(format!("{name}.io.json"))],
    }
}

const SPMD_XLA: [&str; 2] = [
    "xla.HloModuleConfigProto.allow_spmd_sharding_propagation_to_parameters",
    "xla.HloModuleConfigProto.allow_spmd_sharding_propagation_to_output",
];
const SPMD_V1: [&str; 2] = [
    "xla.HloModuleConfigProto.allow_spmd_sharding_propagation_to_parameters_legacy",
    "xla.HloModuleConfigProto.allow_spmd_sharding_propagation_to_output_legacy",
];
const ATTRIBUTES_XLA: &str = "xla.HloModuleProto.frontend_attributes";
const ATTRIBUTES_V1: [&str; 1] = ["xla.HloModuleProto.frontend_attributes_legacy"];

fn spmd_propagation_xla() -> compiler::CompileOptions {
    let mut options = compiler::CompileOptions::default();
    options.emit_spmd_propagation_xla = true;
    options
}

fn module_frontend_attributes_19() -> compiler::CompileOptions {
    let mut options = compiler::CompileOptions::default();
    options.emit_module_frontend_attributes_19 = true;
    options
}

#[test]
fn off_by_default_the_module_fields_stay_at_the_v1_numbers() {
    let case = staged_case("module_attributes");
    assert_off_by_default(&case, &SPMD_XLA, &SPMD_V1);
    assert_off_by_default(&case, &[ATTRIBUTES_XLA], &ATTRIBUTES_V1);
}

#[test]
fn behind_the_flag_the_propagation_lists_move_with_identical_outputs() {
    assert_the_move(
        &staged_case("module_attributes"),
        &spmd_propagation_xla(),
        &SPMD_XLA,
        &SPMD_V1,
    );
}

#[test]
fn behind_the_flag_the_module_frontend_attributes_move_with_identical_outputs() {
    assert_the_move(
        &staged_case("module_attributes"),
        &module_frontend_attributes_19(),
        &[ATTRIBUTES_XLA],
        &ATTRIBUTES_V1,
    );
}

#[test]
fn the_bot_blocks_the_module_field_flips_until_the_forward_window_has_passed() {
    let case = staged_case("module_attributes");
    assert_the_bot_blocks_the_flip(SPMD_XLA[0], &case, &spmd_propagation_xla());
    assert_the_bot_blocks_the_flip(ATTRIBUTES_XLA, &case, &module_frontend_attributes_19());
}

#[test]
fn the_module_field_golden_sets_replay_and_are_reproduced() {
    let case = staged_case("module_attributes");
    assert_the_golden_set_replays(
        "spmd_propagation_xla",
        SPMD_XLA[0],
        &case,
        &spmd_propagation_xla(),
    );
    assert_the_golden_set_replays(
        "module_frontend_attributes_19",
        ATTRIBUTES_XLA,
        &case,
        &module_frontend_attributes_19(),
    );
}

/// `OpMetadata.deduplicated_name` (12) is never written: XLA's 12 is a string, this schema's a
/// bool, and metadata means nothing to a reader (the runtime does not decode it), so dropping it
/// loses nothing: the artifact is the one the module without that metadata gives, byte for byte.
#[test]
fn deduplicated_name_is_not_written_and_a_reader_loses_nothing() {
    let case = staged_case("module_attributes");
    let text = std::fs::read_to_string(&case.module).unwrap();
    assert!(text.contains("deduplicated_name=\"true\""));
    let without = text.replace(" deduplicated_name=\"true\"", "");
    for target in TARGETS {
        let with = compile(&case, target, &compiler::CompileOptions::default());
        assert!(
            !census(&with).contains("xla.OpMetadata.deduplicated_name"),
            "{target}: deduplicated_name written"
        );
        let module = hlo_text::parse_module(&without).unwrap();
        let t = compiler::Target::load(&target_config(target)).unwrap();
        let plain =
            compiler::compile_to_bytes(&module, &t, &compiler::CompileOptions::default()).unwrap();
        assert!(with == plain, "{target}: the metadata changed the artifact");
    }
}

/// Every `xla.PrimitiveType` value the encoded executable carries, anywhere, with the path of the
/// field that holds it (`thunks[0].custom_call_thunk.operands[0].shaped_slice.shape.element_type`),
/// read through reflection so that no field holding one can be missed.
fn primitive_types(bytes: &[u8]) -> Vec<(String, i32)> {
    use proto::prost_reflect::{DynamicMessage, Kind, Value};
    fn walk(m: &DynamicMessage, path: &str, out: &mut Vec<(String, i32)>) {
        for (field, value) in m.fields() {
            let kind = match field.kind() {
                Kind::Message(entry) if field.is_map() => entry.map_entry_value_field().kind(),
                kind => kind,
            };
            let is_type = matches!(&kind, Kind::Enum(e) if e.full_name() == "xla.PrimitiveType");
            let here = format!("{path}.{}", field.name());
            let values: Vec<(String, &Value)> = match value {
                Value::List(items) => items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (format!("{here}[{i}]"), v))
                    .collect(),
                Value::Map(entries) => entries
                    .iter()
                    .map(|(k, v)| (format!("{here}[{k:?}]"), v))
                    .collect(),
                v => vec![(here, v)],
            };
            for (p, v) in values {
                match v {
                    Value::EnumNumber(n) if is_type => out.push((p, *n)),
                    Value::Message(child) => walk(child, &p, out),
                    _ => {}
                }
            }
        }
    }
    let exe = DynamicMessage::decode(
        proto::descriptor_pool()
            .get_message_by_name(proto::ROOT_MESSAGE)
            .unwrap(),
        bytes,
    )
    .unwrap();
    let mut out = Vec::new();
    walk(&exe, "", &mut out);
    out
}

/// The narrow float types at XLA's numbers: the compiler has no code generation for them, so the
/// case is a module that only hands them to custom calls (`xla.runtime.memcpy`, no kernel).
/// Behind the flag no `xla.PrimitiveType` anywhere in the artifact is 30/31 (the embedded module,
/// `program_shape`, the custom-call thunks' shaped slices: every field, found by reflection), and
/// without it none is 32/33; today's runtime loads both forms. (No golden set: the emulated device
/// cannot hold these inputs.)
#[test]
fn behind_the_flag_the_narrow_float_types_move_and_today_s_runtime_loads_both() {
    const LEGACY: [&str; 2] = [
        "xla.PrimitiveType.F4E2M1FN_LEGACY",
        "xla.PrimitiveType.F8E8M0FNU_LEGACY",
    ];
    const XLA: [&str; 2] = ["xla.PrimitiveType.F4E2M1FN", "xla.PrimitiveType.F8E8M0FNU"];
    let case = staged_case("narrow_floats");
    let mut options = compiler::CompileOptions::default();
    options.emit_narrow_floats_xla = true;
    for target in TARGETS {
        let legacy = compile(&case, target, &compiler::CompileOptions::default());
        let staged = compile(&case, target, &options);
        let (lc, sc) = (census(&legacy), census(&staged));
        assert!(LEGACY.iter().all(|v| lc.contains(*v)), "{target}: {lc:?}");
        assert!(XLA.iter().all(|v| !lc.contains(*v)), "{target}: {lc:?}");
        assert!(XLA.iter().all(|v| sc.contains(*v)), "{target}: {sc:?}");
        assert!(LEGACY.iter().all(|v| !sc.contains(*v)), "{target}: {sc:?}");
        let (lt, st) = (primitive_types(&legacy), primitive_types(&staged));
        // The same fields, each at its own type's number in each form.
        let fields = |t: &[(String, i32)]| t.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
        assert_eq!(fields(&lt), fields(&st), "{target}");
        for (types, gone, form) in [(&lt, [32, 33], "default"), (&st, [30, 31], "flag")] {
            let wrong: Vec<_> = types.iter().filter(|(_, n)| gone.contains(n)).collect();
            assert!(wrong.is_empty(), "{target}, {form}: {wrong:?}");
            // Outside the module: the thunks' shaped slices carry both types.
            let mut in_thunks: Vec<i32> = types
                .iter()
                .filter(|(p, _)| p.starts_with(".thunks["))
                .map(|&(_, n)| n)
                .collect();
            in_thunks.sort_unstable();
            in_thunks.dedup();
            let want = if form == "flag" { [32, 33] } else { [30, 31] };
            assert_eq!(in_thunks, want, "{target}, {form}: {types:?}");
        }
        let config = proto::load_target_config(&target_config(target)).unwrap();
        let description = runtime::DeviceDescription::from_target_config(&config).unwrap();
        let device = runtime::EmulatedDevice::new(description);
        for bytes in [&legacy, &staged] {
            runtime::load(bytes, &device, &runtime::RuntimeFlags::default()).unwrap();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Issue 19: the custom-call attributes move off XLA's number 6 (CustomCallThunkProto), where XLA
// declares its `xla.ffi.AttributesMapProto`. No compiler path writes attributes, so there is no
// flag: the hand-written goldens carry the map, at 6 in v1 and v2 and at 1000 from v3 on.

const CC_ATTRIBUTES_XYZ: &str = "xla.gpu.CustomCallThunkProto.attributes_xyz";
const CC_ATTRIBUTES_V1: &str = "xla.gpu.CustomCallThunkProto.attributes";

fn handwritten_custom_calls(target: &str, version: u32) -> (Vec<u8>, BTreeSet<String>) {
    let store = harness::GoldenStore::handwritten_in_repo();
    let dir = store
        .version_dir(target, version)
        .join("custom_call_registry");
    let bytes = std::fs::read(dir.join("executable.pb")).unwrap();
    let c = census(&bytes);
    (bytes, c)
}

#[test]
fn the_compiler_writes_custom_call_attributes_at_neither_number() {
    let case = case_named("custom_call_axpy");
    for target in TARGETS {
        let c = census(&compile(
            &case,
            target,
            &compiler::CompileOptions::default(),
        ));
        assert!(
            c.contains("xla.gpu.CustomCallThunkProto"),
            "{target}: {c:?}"
        );
        assert!(
            !c.contains(CC_ATTRIBUTES_V1) && !c.contains(CC_ATTRIBUTES_XYZ),
            "{target}: a compiler path writes custom-call attributes; it must keep 6 behind a flag until 2026-12-15: {c:?}"
        );
    }
}

/// The hand-written `custom_call_registry` case: v2 carries `alpha` at 6, v3 at 1000 and nothing
/// else differs in what runs; today's runtime computes the hand-worked outputs from both, and
/// refuses the map at both numbers.
#[test]
fn the_handwritten_custom_calls_move_their_attributes_with_identical_outputs() {
    let io = harness::HANDWRITTEN_CASES
        .iter()
        .find(|c| c.name == "custom_call_registry")
        .unwrap()
        .io_json;
    let want = IoCase::parse(io).unwrap();
    let run = |bytes: &[u8], target: &str| {
        let config = proto::load_target_config(&target_config(target)).unwrap();
        let description = runtime::DeviceDescription::from_target_config(&config).unwrap();
        run_artifact(bytes, &description, std::slice::from_ref(&want))
            .unwrap()
            .remove(0)
            .outputs
    };
    for target in TARGETS {
        let (v2, c2) = handwritten_custom_calls(target, 2);
        let (v3, c3) = handwritten_custom_calls(target, 3);
        assert!(
            c2.contains(CC_ATTRIBUTES_V1) && !c2.contains(CC_ATTRIBUTES_XYZ),
            "{target}: {c2:?}"
        );
        assert!(
            c3.contains(CC_ATTRIBUTES_XYZ) && !c3.contains(CC_ATTRIBUTES_V1),
            "{target}: {c3:?}"
        );
        let (a, b) = (run(&v2, target), run(&v3, target));
        assert_eq!(a, b, "{target}: the moved attributes compute other bytes");
        assert_eq!(b, want.outputs, "{target}: not the hand-worked outputs");

        let mut both = proto::xla::gpu::GpuExecutableProto::decode(v3.as_slice()).unwrap();
        for t in &mut both.thunks {
            if let Some(proto::xla::gpu::thunk_proto::Impl::CustomCallThunk(c)) = &mut t.r#impl {
                c.attributes = c.attributes_xyz.clone();
            }
        }
        let config = proto::load_target_config(&target_config(target)).unwrap();
        let description = runtime::DeviceDescription::from_target_config(&config).unwrap();
        let device = runtime::EmulatedDevice::new(description);
        let err = runtime::load(
            &both.encode_to_vec(),
            &device,
            &runtime::RuntimeFlags::default(),
        )
        .expect_err("the map at both numbers loaded");
        assert_eq!(
            err.to_string(),
            "INVALID_ARGUMENT: thunks[3].custom_call_thunk sets both attributes (6) and attributes_xyz (1000); an artifact sets one",
            "{target}"
        );
    }
}

/// Issue 32: with the default options every convolution is a kernel; behind
/// `emit_convolution_thunk` the curated convolution case computes the same outputs with
/// `convolution_thunk`s, and the bot refuses the flip until 2026-12-18.
#[test]
fn the_convolution_thunk_stays_behind_its_flag_until_the_forward_window_has_passed() {
    const CONV: &str = "xla.gpu.ThunkProto.convolution_thunk";
    let case = case_named("conv2d_grad_input");
    let mut on = compiler::CompileOptions::default();
    on.emit_convolution_thunk = true;
    for target in TARGETS {
        let (off_bytes, on_bytes) = (
            compile(&case, target, &compiler::CompileOptions::default()),
            compile(&case, target, &on),
        );
        assert!(!census(&off_bytes).contains(CONV), "{target}");
        assert!(census(&on_bytes).contains(CONV), "{target}");
        assert_close(
            &outputs(&on_bytes, target, &case),
            &outputs(&off_bytes, target, &case),
            target,
        );
    }
    assert_eq!(
        first_seen(CONV, Date::new(2026, 12, 1).unwrap()).to_string(),
        "2026-12-04"
    );
    assert_the_bot_blocks_the_flip(CONV, &case, &on);
}

// ---------------------------------------------------------------------------------------------
// 2026-12-05: a dot's algorithm in the embedded module (`PrecisionConfig.algorithm`, XLA's 2),
// new. The kernels compute the algorithm either way (the `dot-algorithm` pass rounds the
// operands); only whether the embedded module says so is staged.

const DOT_ALGORITHM: &str = "xla.PrecisionConfig.algorithm";

fn dot_algorithm() -> compiler::CompileOptions {
    let mut options = compiler::CompileOptions::default();
    options.emit_dot_algorithm = true;
    options
}

#[test]
fn off_by_default_the_embedded_module_leaves_the_dot_algorithm_out() {
    assert_off_by_default(&staged_case("dot_algorithm"), &[DOT_ALGORITHM], &[]);
}

#[test]
fn behind_the_flag_the_dot_algorithm_is_written_with_identical_outputs() {
    assert_the_move(
        &staged_case("dot_algorithm"),
        &dot_algorithm(),
        &[DOT_ALGORITHM],
        &[],
    );
}

#[test]
fn the_bot_blocks_the_dot_algorithm_flip_until_the_forward_window_has_passed() {
    assert_the_bot_blocks_the_flip(
        DOT_ALGORITHM,
        &staged_case("dot_algorithm"),
        &dot_algorithm(),
    );
}

#[test]
fn the_dot_algorithm_golden_set_replays_and_is_reproduced() {
    assert_the_golden_set_replays(
        "dot_algorithm",
        DOT_ALGORITHM,
        &staged_case("dot_algorithm"),
        &dot_algorithm(),
    );
}
