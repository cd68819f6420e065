//! `aot schema snapshot|diff`: the compatibility-surface snapshots and the schema bot's diff.
//!
//! The `schema_history` crate knows only protos and git; this module adds what only the harness
//! can see: the HLO opcodes (from the `hlo` crate) and the runtime's registered names and flags
//! ([`runtime_surface`]).
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use schema_history::{
    DiffOptions, Extras, Format, RegistryName, Repo, Revision, RuntimeFlag, SchemaSpec,
    SnapshotOutcome, Surface, DEFAULT_HISTORY_DIR,
};

/// `aot schema`: snapshot or diff the compatibility surface.
#[derive(Debug, clap::Args)]
pub struct SchemaArgs {
    #[command(subcommand)]
    command: SchemaCommand,
}

#[derive(Debug, clap::Subcommand)]
enum SchemaCommand {
    /// Write a snapshot of the working tree's surface under the history directory (nothing is
    /// written when the newest snapshot already has this surface). Exit 0, or 2 on error.
    Snapshot {
        #[command(flatten)]
        common: CommonArgs,
        /// Label of the snapshot directory (default: the short HEAD commit).
        #[arg(long)]
        label: Option<String>,
    },
    /// Compare a change's surface with its base and the history; report rule findings.
    /// Exit 0 clean, 1 error findings, 2 usage or internal error.
    Diff(Box<DiffArgs>),
}

/// The options of `aot schema diff`.
#[derive(Debug, clap::Args)]
struct DiffArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Base git revision (default: the merge base of HEAD with main).
    #[arg(long)]
    against: Option<String>,
    /// Head git revision (default: the working tree).
    #[arg(long)]
    head: Option<String>,
    /// Goldens directory scanned for `*/v*/manifest.json` census entries.
    #[arg(long, default_value = "goldens/executables")]
    goldens: PathBuf,
    /// Runtime sources scanned for fallbacks and their expiry comments.
    #[arg(long, default_value = "runtime/src")]
    runtime_src: PathBuf,
    /// Waivers file.
    #[arg(long, default_value = "schema_history/waivers.toml")]
    waivers: PathBuf,
    /// Output format: text, markdown, json, github.
    #[arg(long, default_value = "text")]
    format: String,
    /// Write the report to this file instead of stdout (stdout then gets the text report).
    #[arg(long)]
    output: Option<PathBuf>,
    /// Read the base from this FileDescriptorSet image (`protoc --include_imports
    /// --include_source_info --descriptor_set_out`, `buf build -o`) instead of the protos
    /// at --against.
    #[arg(long)]
    against_image: Option<PathBuf>,
    /// Read the head from this FileDescriptorSet image instead of the protos at --head.
    #[arg(long)]
    head_image: Option<PathBuf>,
    /// Repository policy file: rules, severities, per-path exceptions (absent: the
    /// built-in strict defaults).
    #[arg(long, default_value = schema_history::DEFAULT_POLICY)]
    policy: PathBuf,
    /// Without snapshots, the history rules read at most this many commits of git history
    /// back from the base (0: none; default: no count bound, the date bounds the walk).
    #[arg(long)]
    history_depth: Option<usize>,
    /// Without snapshots, the history rules read git history back to this day (YYYY-MM-DD;
    /// default: 6 months, the backward window, back from the base's commit date).
    #[arg(long)]
    since: Option<String>,
    /// A maintainer approved this change's loosening of the bot's policy or waivers: judge it
    /// with the head's (the `trusted-input-loosened` findings become notes). Without it the
    /// base's policy and waivers apply, and each loosening is an error.
    #[arg(long)]
    approve_trusted_inputs: bool,
}

#[derive(Debug, clap::Args)]
struct CommonArgs {
    /// Repository root (default: the git top level of the current directory).
    #[arg(long)]
    repo: Option<PathBuf>,
    /// Proto include directory, relative to the repository (repeatable; default proto/proto).
    #[arg(long = "proto-dir")]
    proto_dirs: Vec<String>,
    /// A .proto file to compile (repeatable; default: every .proto under the proto dirs).
    #[arg(long = "file")]
    files: Vec<String>,
    /// Root message of the contract.
    #[arg(long, default_value = proto::ROOT_MESSAGE)]
    root: String,
    /// Snapshot history directory, relative to the repository.
    #[arg(long, default_value = DEFAULT_HISTORY_DIR)]
    history: String,
    /// Today's date (YYYY-MM-DD) for dating snapshots and computing the windows.
    #[arg(long)]
    today: Option<String>,
}

impl CommonArgs {
    fn repo(&self) -> PathBuf {
        if let Some(r) = &self.repo {
            return r.clone();
        }
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        Repo::new(&cwd)
            .git(&["rev-parse", "--show-toplevel"])
            .ok()
            .map(|o| PathBuf::from(String::from_utf8_lossy(&o).trim()))
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(cwd)
    }

    /// The project's own layout (its live opcodes, registry and flags apply).
    fn is_project(&self) -> bool {
        self.proto_dirs.is_empty() && self.root == proto::ROOT_MESSAGE
    }

    fn spec(&self) -> SchemaSpec {
        let mut spec = SchemaSpec::project();
        if !self.proto_dirs.is_empty() {
            spec.proto_dirs = self.proto_dirs.clone();
        }
        spec.files = self.files.clone();
        spec.root = self.root.clone();
        spec
    }

    fn today(&self) -> anyhow::Result<schema_history::Date> {
        match &self.today {
            Some(t) => Ok(t.parse()?),
            None => Ok(schema_history::Date::today()),
        }
    }
}

/// The runtime's part of the surface: registered custom-call / FFI / kernel-symbol names with
/// their legacy aliases (the runtime's built-in registry) and the flags the runtime reads with
/// their defaults.
pub fn runtime_surface() -> (Vec<RegistryName>, Vec<RuntimeFlag>) {
    let registry = runtime::custom_call_names()
        .into_iter()
        .map(|(name, aliases)| RegistryName { name, aliases })
        .collect();
    let flags = runtime::flag_defaults()
        .into_iter()
        .map(|(name, default)| RuntimeFlag {
            name: name.to_owned(),
            default,
            limit: runtime::FLAG_LIMITS.contains(&name),
        })
        .collect();
    (registry, flags)
}

/// The non-proto surface of this project: HLO opcodes the runtime accepts (every opcode the HLO
/// parser knows, since the runtime parses the embedded module with it) plus [`runtime_surface`].
pub fn project_extras() -> Extras {
    let (registry, runtime_flags) = runtime_surface();
    Extras {
        registry,
        opcodes: hlo::Opcode::ALL
            .iter()
            .map(|o| o.name().to_owned())
            .collect(),
        runtime_flags,
        flag_readers: crate::golden::census::flag_readers(),
        load_passes: crate::golden::census::load_passes(),
        ffi_attributes: runtime::attribute_schemas()
            .into_iter()
            .flat_map(|(target, specs)| {
                specs
                    .into_iter()
                    .map(move |a| schema_history::FfiAttribute {
                        target: target.clone(),
                        name: a.name.to_owned(),
                        ty: a.ty.to_string(),
                    })
            })
            .collect(),
    }
    .normalized()
}

/// The project's surface as it is in the working tree of `repo`.
pub fn current_surface(repo: &Path, today: schema_history::Date) -> anyhow::Result<Surface> {
    let spec = SchemaSpec::project();
    surface_of(repo, &spec, project_extras(), today)
}

fn surface_of(
    repo: &Path,
    spec: &SchemaSpec,
    extras: Extras,
    today: schema_history::Date,
) -> anyhow::Result<Surface> {
    let git = Repo::new(repo);
    let compiled = spec.compile(&git, &Revision::WorkTree)?;
    let commit = git.short_head().unwrap_or_else(|| "worktree".to_owned());
    Ok(Surface::new(
        &compiled,
        &spec.root,
        &spec.ignorable,
        extras,
        today,
        &commit,
    )?)
}

/// Runs `aot schema ...`, writing to `out`; returns the exit status (0 clean, 1 error findings).
pub fn run(args: &SchemaArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    match &args.command {
        SchemaCommand::Snapshot { common, label } => {
            let repo = common.repo();
            let spec = common.spec();
            let extras = if common.is_project() {
                project_extras()
            } else {
                Extras::default()
            };
            let surface = surface_of(&repo, &spec, extras, common.today()?)?;
            let label = label.clone().unwrap_or_else(|| surface.commit.clone());
            let dirty = Repo::new(&repo).is_dirty(
                &spec
                    .proto_dirs
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
            );
            let dir = repo.join(&common.history);
            match schema_history::write_snapshot(&dir, &surface, &label, dirty, &spec.ignorable)? {
                SnapshotOutcome::UpToDate(p) => {
                    writeln!(out, "up to date: {} already has this surface", p.display())?
                }
                SnapshotOutcome::Written(p) => writeln!(
                    out,
                    "wrote {} ({} lines); commit it with the schema change",
                    p.display(),
                    surface.listing.len()
                )?,
            }
            Ok(0)
        }
        SchemaCommand::Diff(args) => {
            let DiffArgs {
                common,
                against,
                head,
                goldens,
                runtime_src,
                waivers,
                format,
                output,
                against_image,
                head_image,
                policy,
                history_depth,
                since,
                approve_trusted_inputs,
            } = &**args;
            let format: Format = format.parse()?;
            let diff = || -> anyhow::Result<schema_history::Report> {
                let bound = schema_history::GitHistoryBound {
                    depth: *history_depth,
                    since: since.as_deref().map(str::parse).transpose()?,
                };
                let repo = common.repo();
                let git = Repo::new(&repo);
                let base = match against {
                    Some(rev) => rev.clone(),
                    None if against_image.is_some() => "HEAD".to_owned(),
                    None => git
                        .default_base()
                        .context("finding the merge base with main (pass --against REV)")?,
                };
                let head_rev = match head {
                    Some(rev) => Revision::Git(rev.clone()),
                    None => Revision::WorkTree,
                };
                let head_extras =
                    (common.is_project() && head_rev == Revision::WorkTree).then(project_extras);
                let opts = DiffOptions {
                    repo: repo.clone(),
                    spec: common.spec(),
                    base: Revision::Git(base),
                    head: head_rev,
                    history_dir: common.history.clone(),
                    goldens: goldens.clone(),
                    runtime_src: runtime_src.clone(),
                    waivers: waivers.clone(),
                    today: common.today()?,
                    head_extras,
                    base_image: against_image.clone(),
                    head_image: head_image.clone(),
                    policy: policy.clone(),
                    git_history: bound,
                    approve_trusted_inputs: *approve_trusted_inputs,
                };
                Ok(schema_history::diff(&opts)?)
            };
            let report = match diff() {
                Ok(report) => report,
                Err(e) => {
                    // No verdict (exit 2): still something the consumer of the format reads.
                    let rendered = schema_history::render_error(format, &format!("{e:#}"));
                    match output {
                        Some(path) => std::fs::write(path, &rendered)
                            .with_context(|| format!("writing {}", path.display()))?,
                        None if format != Format::Text => out.write_all(rendered.as_bytes())?,
                        None => {}
                    }
                    return Err(e);
                }
            };
            let rendered = report.render(format);
            match output {
                Some(path) => {
                    std::fs::write(path, &rendered)
                        .with_context(|| format!("writing {}", path.display()))?;
                    out.write_all(report.render(Format::Text).as_bytes())?;
                }
                None => out.write_all(rendered.as_bytes())?,
            }
            Ok(report.exit_code())
        }
    }
}
