//! What the golden checks ([`super::replay`]) and the manifest reader report: one variant per
//! failure, the values it compared as data, and a `Display` that is the message the suites print
//! (what broke, where, and what to read). Callers tell failures apart by variant, never by text.
//!
//! The I/O, decode and parse errors are part of the message and deliberately not a `#[source]`:
//! printers that walk the chain (anyhow's `{:#}`) would otherwise say them twice.
use std::path::PathBuf;

use super::replay::{regen_command, COMPAT_GUIDE};

/// A store file that cannot be read, or whose JSON does not parse.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The file cannot be read (missing, a symbolic link, too large).
    #[error("cannot read {}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The file is not the JSON its reader expects.
    #[error("{}: {error}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// What serde said.
        error: serde_json::Error,
    },
}

/// How two arrays that must be bit-identical differ.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BitMismatch {
    /// Another element type or other dimensions.
    #[error("produced {produced}, recorded {recorded}")]
    Shape {
        /// The produced array's shape (`f32[2,3]`).
        produced: String,
        /// The recorded array's shape.
        recorded: String,
    },
    /// The first element whose bits differ (NaN equals NaN).
    #[error("element {index}: produced {produced} (bits {produced_bits:#x}), recorded {recorded} (bits {recorded_bits:#x})")]
    Element {
        /// Its flat index.
        index: usize,
        /// The produced value.
        produced: f64,
        /// Its bits.
        produced_bits: u64,
        /// The recorded value.
        recorded: f64,
        /// Its bits.
        recorded_bits: u64,
    },
}

/// How produced outputs differ from the recorded ones.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OutputsDiffer {
    /// Another number of replicas ran.
    #[error("{produced} replicas ran, {recorded} recorded")]
    Replicas {
        /// Replicas that ran.
        produced: usize,
        /// Replicas recorded.
        recorded: usize,
    },
    /// A replica produced another number of outputs.
    #[error("replica {replica} produced {produced} outputs, {recorded} recorded")]
    Outputs {
        /// The replica.
        replica: usize,
        /// Outputs produced.
        produced: usize,
        /// Outputs recorded.
        recorded: usize,
    },
    /// An output is not bit-identical.
    #[error(
        "replica {replica} output {output} is not bit-identical to the recorded one: {mismatch}"
    )]
    Bits {
        /// The replica.
        replica: usize,
        /// The output.
        output: usize,
        /// How.
        mismatch: BitMismatch,
    },
}

/// What went wrong replaying an old artifact on today's runtime.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayBreak {
    /// Loading or running it failed.
    #[error("{0:#}")]
    Run(anyhow::Error),
    /// It produced outputs other than the recorded ones.
    #[error("{}{}", .0, semantics_note(.0))]
    Outputs(OutputsDiffer),
    /// Its outputs differ from the reference evaluator's beyond tolerance.
    #[error("outputs differ from the reference evaluator beyond tolerance:\n{report}")]
    Reference {
        /// The per-output report (`aot run`'s lines).
        report: String,
    },
}

/// Why a device did not refuse an artifact with FAILED_PRECONDITION.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NotRefused {
    /// It loaded.
    #[error("loaded")]
    Loaded,
    /// It failed with another code.
    #[error("failed with another code: {0}")]
    OtherCode(runtime::Error),
}

/// What the environment-skew check found mishandled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkewBreak {
    /// A device with newer ABI versions refused the artifact.
    #[error("a device with newer ABI versions (CUDA toolkit \"{toolkit}\", cuDNN \"{cudnn}\", CUB \"{cub}\") refused it: {error:#}")]
    NewerRefused {
        /// The device's CUDA toolkit version.
        toolkit: String,
        /// Its cuDNN version.
        cudnn: String,
        /// Its CUB version.
        cub: String,
        /// What the load or run said.
        error: anyhow::Error,
    },
    /// On a device with newer ABI versions the outputs differ.
    #[error(
        "on a device with newer ABI versions, {0} (execution must not depend on the versions)"
    )]
    NewerDiffers(OutputsDiffer),
    /// A device with an older version of a component did not refuse the artifact.
    #[error("a device with {component} {lower}, older than the {need} the artifact needs, did not refuse it with FAILED_PRECONDITION: {why}")]
    OlderAccepted {
        /// The component (`cuDNN`).
        component: &'static str,
        /// The device's version.
        lower: String,
        /// The artifact's.
        need: String,
        /// What happened instead.
        why: NotRefused,
    },
    /// The refusal does not name the component and both versions.
    #[error("refusing a device with {component} {lower} (the artifact needs {need}), the message does not name the component and both versions: {message}")]
    OlderUnnamed {
        /// The component.
        component: &'static str,
        /// The device's version.
        lower: String,
        /// The artifact's.
        need: String,
        /// The refusal's message.
        message: String,
    },
    /// A device of another compute capability did not refuse the artifact.
    #[error(
        "a {device} device did not refuse the {artifact} artifact with FAILED_PRECONDITION: {why}"
    )]
    ElsewhereAccepted {
        /// The device's capability (`sm_80`).
        device: String,
        /// The artifact's.
        artifact: String,
        /// What happened instead.
        why: NotRefused,
    },
    /// The refusal does not lead with the compute capability and name both.
    #[error("refusing a {device} device, the message does not lead with the compute capability and name both: {message}")]
    ElsewhereUnnamed {
        /// The device's capability.
        device: String,
        /// The refusal's message.
        message: String,
    },
    /// A device wrong in both capability and ABI did not refuse the artifact.
    #[error("a {device} device with older ABI versions did not refuse it with FAILED_PRECONDITION: {why}")]
    BothAccepted {
        /// The device's capability.
        device: String,
        /// What happened instead.
        why: NotRefused,
    },
    /// With both wrong, the refusal does not name the compute capability first.
    #[error("with both the compute capability and the ABI wrong, the message must name the compute capability first: {message}")]
    BothUnordered {
        /// The refusal's message.
        message: String,
    },
}

/// A golden check's failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// A file of the store cannot be read or parsed.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The version's target config is not UTF-8.
    #[error("{}/{file} is not UTF-8", dir.display())]
    NotUtf8 {
        /// The version directory.
        dir: PathBuf,
        /// The config's file name.
        file: &'static str,
    },
    /// A case directory without an io file.
    #[error("{} has no io file", case_dir.display())]
    NoIoFile {
        /// The case directory.
        case_dir: PathBuf,
    },
    /// An io file that does not read.
    #[error("{}: {error}", path.display())]
    Io {
        /// The io file.
        path: PathBuf,
        /// Why.
        error: hlo_eval::IoError,
    },
    /// The version's target config does not parse.
    #[error(transparent)]
    TargetConfig(#[from] proto::TargetConfigError),
    /// The target config describes no device the runtime accepts.
    #[error(transparent)]
    Device(#[from] runtime::Error),
    /// The target config describes no target the compiler accepts.
    #[error(transparent)]
    Target(#[from] compiler::CompileError),
    /// The store lists no versions for the target.
    #[error(transparent)]
    Store(#[from] super::GoldenError),
    /// A case's module cannot be read.
    #[error("{label}: cannot read {file}: {error}")]
    ModuleRead {
        /// `target/vN/case`.
        label: String,
        /// The module's file name.
        file: &'static str,
        /// Why.
        error: std::io::Error,
    },
    /// A case's module does not parse.
    #[error("{label}/{file}:{error}")]
    ModuleParse {
        /// `target/vN/case`.
        label: String,
        /// The module's file name.
        file: &'static str,
        /// The parser's error (it starts with its location).
        error: hlo_text::ParseError,
    },
    /// A stored artifact does not decode.
    #[error("{origin}: {error}")]
    Decode {
        /// `target/vN/case/executable.pb`, or the file's path.
        origin: String,
        /// The decoder's error.
        error: proto::DecodeError,
    },
    /// The reference evaluator failed on a case's module.
    #[error("{label}: the reference evaluator failed: {error}")]
    Evaluator {
        /// `target/vN/case`.
        label: String,
        /// Why.
        error: hlo_eval::EvalError,
    },
    /// Comparing with the reference evaluator failed.
    #[error("{label}: {error}")]
    Report {
        /// `target/vN/case`.
        label: String,
        /// Why.
        error: anyhow::Error,
    },
    /// Today's runtime does not replay an old artifact as recorded.
    #[error("backward compatibility broken for {label}: {what}\nToday's runtime must load and run, with identical results, every artifact compilers emitted in the last 6 months. If this change removes or changes a construct that artifact uses, keep the old path (with an expiry comment) until the window passes; see {COMPAT_GUIDE}.")]
    Backward {
        /// `target/vN/case`.
        label: String,
        /// What went wrong.
        what: ReplayBreak,
    },
    /// The replay no longer reaches behaviour classes the census records.
    #[error("{label}: the census records behaviour class(es) the replay no longer reaches: {}\nEither execution semantics changed (the artifact now takes another path), or the census is wrong; see docs/goldens.md, \"Behavioural coverage\".", .missed.join(", "))]
    CoverageLost {
        /// `target/vN/case`.
        label: String,
        /// The census names not reached.
        missed: Vec<String>,
    },
    /// Environment skew (ABI versions, compute capability) mishandled.
    #[error("environment skew mishandled for {label}: {what}\nA runtime must accept every device whose ABI versions are at least the artifact's, refuse older ones with FAILED_PRECONDITION naming the component, and refuse another compute capability (named first); see {COMPAT_GUIDE}.")]
    EnvSkew {
        /// `target/vN/case`.
        label: String,
        /// What (boxed: the variants carry several strings).
        what: Box<SkewBreak>,
    },
    /// Today's compiler cannot compile a golden's module.
    #[error("{label}: today's compiler cannot compile the golden's module: {error}")]
    Compile {
        /// `target/vN/case`.
        label: String,
        /// Why.
        error: compiler::CompileError,
    },
    /// Today's compiler emits something other than the newest golden.
    #[error("today's compiler no longer reproduces {label} ({} differing fields{}):\n{}\nIf the change is intended, record it as a new version (never edit an existing one):\n  {}\nSee docs/goldens.md; a new construct must first land behind an emission flag (see {COMPAT_GUIDE}).",
        .diffs.len(),
        shown_note(.diffs),
        .diffs.iter().take(SHOWN_DIFFS).map(String::as_str).collect::<Vec<_>>().join("\n"),
        regen_command(.target))]
    NotReproduced {
        /// `target/vN/case`.
        label: String,
        /// The target, for the regeneration command.
        target: String,
        /// Every differing field, as a readable line.
        diffs: Vec<String>,
    },
    /// The snapshots directory cannot be listed.
    #[error("cannot read {}: {error}", dir.display())]
    Snapshots {
        /// The directory.
        dir: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// No snapshot to pick.
    #[error("no schema snapshots under {}", dir.display())]
    NoSnapshots {
        /// The directory.
        dir: PathBuf,
    },
    /// A snapshot's descriptor set cannot be read.
    #[error("{}: {error}", dir.display())]
    SnapshotRead {
        /// The snapshot's directory.
        dir: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A snapshot's descriptor set does not decode.
    #[error("{name}: {error}")]
    SnapshotDecode {
        /// The snapshot's name.
        name: String,
        /// Why.
        error: proto::prost_reflect::DescriptorError,
    },
    /// A snapshot without the contract's root message.
    #[error("snapshot {name} has no {root}")]
    SnapshotRoot {
        /// The snapshot's name.
        name: String,
        /// The root message's full name.
        root: &'static str,
    },
    /// Today's artifact uses constructs an older runtime cannot read.
    #[error("today's compiler emits constructs a runtime built from schema snapshot {snapshot} cannot read:\n{}\nA new field must be marked [(xla.compat.ignorable) = true] if older runtimes may drop it, or stay behind an emission flag that is off by default until 2 weeks have passed; a type change needs a new field instead; see {COMPAT_GUIDE}.", .problems.join("\n"))]
    Forward {
        /// The snapshot's name.
        snapshot: String,
        /// Each construct, with where and why.
        problems: Vec<String>,
    },
    /// A manifest's creation date does not parse.
    #[error("{target}/v{version}/manifest.json: created: {error}")]
    Created {
        /// The target.
        target: String,
        /// The version.
        version: u32,
        /// Why.
        error: schema_history::Error,
    },
    /// A version's files do not match its manifest.
    #[error("{target}/v{version} does not match its manifest (versions are immutable once committed; restore the files from git or regenerate a new version, see docs/goldens.md):\n{}", .problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n"))]
    Integrity {
        /// The target.
        target: String,
        /// The version.
        version: u32,
        /// Each problem.
        problems: Vec<super::IntegrityProblem>,
    },
}

/// How many differing fields [`ReplayError::NotReproduced`] shows.
const SHOWN_DIFFS: usize = 20;

/// `, first 20 shown` when some differences are not shown.
fn shown_note(diffs: &[String]) -> String {
    if SHOWN_DIFFS < diffs.len() {
        format!(", first {SHOWN_DIFFS} shown")
    } else {
        String::new()
    }
}

/// What a bit difference in replayed outputs means.
fn semantics_note(o: &OutputsDiffer) -> &'static str {
    match o {
        OutputsDiffer::Bits { .. } => " (execution semantics changed)",
        _ => "",
    }
}

/// The curated case list cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CasesError {
    /// A case directory cannot be listed.
    #[error("cannot read {}: {error}", dir.display())]
    ReadDir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// Two directories hold a case of the same name.
    #[error("two cases are named `{0}`")]
    Duplicate(String),
    /// A module without an io file.
    #[error("{}/{file} has no io file", dir.display())]
    NoIoFile {
        /// The directory.
        dir: PathBuf,
        /// The module's file name.
        file: String,
    },
}

/// The runtime-side coverage gate's failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CoverageError {
    /// The compiled-in schema lacks what the gate probes (a build defect).
    #[error("{0}")]
    Schema(&'static str),
    /// A thunk kind's probe does not convert to the generated type.
    #[error("{variant}: {error}")]
    Probe {
        /// The oneof variant's full name.
        variant: String,
        /// Why.
        error: proto::prost::DecodeError,
    },
    /// Reading a golden failed.
    #[error(transparent)]
    Replay(Box<ReplayError>),
    /// No golden of the target inside the backward window.
    #[error("{target} has no golden inside the 6-month window")]
    NoGolden {
        /// The target.
        target: String,
    },
    /// Constructs the runtime supports that no golden uses.
    #[error("{} construct(s) or behaviour class(es) today's runtime supports are used by no golden of {target} inside the 6-month window:\n  {}\nNothing would notice a change to their semantics: add a golden that uses each (a hand-written case in harness/src/golden/handwritten.rs, then `cargo run -p harness --example handwritten_goldens`), or drop the support; see docs/goldens.md.", .missing.len(), .missing.join("\n  "))]
    Uncovered {
        /// The target.
        target: String,
        /// Each construct, with what it is.
        missing: Vec<String>,
    },
}

impl From<ReplayError> for CoverageError {
    fn from(e: ReplayError) -> CoverageError {
        CoverageError::Replay(Box::new(e))
    }
}

impl From<ManifestError> for CoverageError {
    fn from(e: ManifestError) -> CoverageError {
        ReplayError::from(e).into()
    }
}

impl From<super::GoldenError> for CoverageError {
    fn from(e: super::GoldenError) -> CoverageError {
        ReplayError::from(e).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages the golden suites print, one per shape of variant (the suites' negative
    /// trials pin the rest through the real checks).
    #[test]
    fn golden_errors_print_their_messages() {
        let element = BitMismatch::Element {
            index: 3,
            produced: 1.5,
            produced_bits: 0x3fc0_0000,
            recorded: 2.0,
            recorded_bits: 0x4000_0000,
        };
        assert_eq!(
            element.to_string(),
            "element 3: produced 1.5 (bits 0x3fc00000), recorded 2 (bits 0x40000000)"
        );
        let bits = OutputsDiffer::Bits {
            replica: 0,
            output: 1,
            mismatch: element,
        };
        assert_eq!(
            ReplayBreak::Outputs(bits.clone()).to_string(),
            format!("{bits} (execution semantics changed)")
        );
        let count = OutputsDiffer::Outputs {
            replica: 1,
            produced: 2,
            recorded: 3,
        };
        assert_eq!(
            ReplayBreak::Outputs(count).to_string(),
            "replica 1 produced 2 outputs, 3 recorded"
        );
        assert_eq!(
            OutputsDiffer::Replicas {
                produced: 1,
                recorded: 2
            }
            .to_string(),
            "1 replicas ran, 2 recorded"
        );
        assert_eq!(
            SkewBreak::OlderAccepted {
                component: "cuDNN",
                lower: "8.9.6".into(),
                need: "8.9.7".into(),
                why: NotRefused::Loaded,
            }
            .to_string(),
            "a device with cuDNN 8.9.6, older than the 8.9.7 the artifact needs, did not refuse it with FAILED_PRECONDITION: loaded"
        );
        assert_eq!(
            CasesError::Duplicate("add".into()).to_string(),
            "two cases are named `add`"
        );
        let many = ReplayError::NotReproduced {
            label: "h100_sxm/v9/add".into(),
            target: "h100_sxm".into(),
            diffs: (0..21).map(|i| format!("d{i}")).collect(),
        }
        .to_string();
        assert!(
            many.starts_with(
                "today's compiler no longer reproduces h100_sxm/v9/add (21 differing fields, first 20 shown):\nd0\n"
            ) && many.contains("d19\nIf the change") && !many.contains("d20"),
            "{many}"
        );
        assert_eq!(
            ReplayError::CoverageLost {
                label: "h100_sxm/v9/add".into(),
                missed: vec!["behaviour:a".into(), "behaviour:b".into()],
            }
            .to_string(),
            "h100_sxm/v9/add: the census records behaviour class(es) the replay no longer reaches: behaviour:a, behaviour:b\nEither execution semantics changed (the artifact now takes another path), or the census is wrong; see docs/goldens.md, \"Behavioural coverage\"."
        );
    }
}
