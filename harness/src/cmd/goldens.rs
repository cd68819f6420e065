//! `aot goldens list|verify|regen`: the release engineer's tools for the golden store.
use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};

use crate::golden::cases::{curated_cases, repo_root};
use crate::golden::regen::{regenerate, RegenOptions, RegenOutcome};
use crate::golden::replay;
use crate::golden::{GoldenStore, Manifest};

/// The targets the golden suite covers, each replayed on an emulated device built from its own
/// target config (`testdata/target_specs/<target>.txtpb`).
pub const GOLDEN_TARGETS: &[&str] = &["h100_sxm", "a100_sxm_80"];

/// The target config of a golden target in the repository.
pub fn target_config_path(target: &str) -> PathBuf {
    repo_root()
        .join("testdata/target_specs")
        .join(format!("{target}.txtpb"))
}

/// Arguments of `aot goldens`.
#[derive(Debug, clap::Args)]
pub struct GoldensArgs {
    /// The store (default: the repository's `goldens/executables`).
    #[arg(long, global = true)]
    pub store: Option<PathBuf>,
    #[command(subcommand)]
    pub command: GoldensCommand,
}

/// `aot goldens` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum GoldensCommand {
    /// Targets, versions, creation dates and cases.
    List,
    /// Checks every version against its manifest (hashes, missing or extra files), and that the
    /// compact census (`census.json`) summarizes the manifests as they are.
    Verify,
    /// Rewrites the compact census `census.json` (what the schema bot reads instead of every
    /// manifest) from the manifests; `regen` does it with each new version.
    Index,
    /// Compiles every case with today's compiler and writes the next version `v<N+1>`.
    Regen {
        /// Only this target (default: every golden target).
        #[arg(long)]
        target: Option<String>,
        /// Write a new version even when the output equals the newest one.
        #[arg(long)]
        force: bool,
        /// Target config to compile for (default: `testdata/target_specs/<target>.txtpb`).
        #[arg(long)]
        target_config: Option<PathBuf>,
        /// Record this creation date (`YYYY-MM-DD`) instead of today's.
        #[arg(long)]
        today: Option<String>,
    },
}

/// Runs `aot goldens`; the exit code (0 fine, 1 an integrity problem).
pub fn run(args: &GoldensArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let store = args
        .store
        .clone()
        .map_or_else(GoldenStore::in_repo, GoldenStore::new);
    match &args.command {
        GoldensCommand::List => list(&store, out),
        GoldensCommand::Verify => verify(&store, out),
        GoldensCommand::Index => index(&store, out),
        GoldensCommand::Regen {
            target,
            force,
            target_config,
            today,
        } => {
            let targets: Vec<String> = match target {
                Some(t) => vec![t.clone()],
                None => GOLDEN_TARGETS.iter().map(|t| (*t).to_owned()).collect(),
            };
            if target_config.is_some() && targets.len() != 1 {
                bail!("--target-config needs --target");
            }
            let cases = curated_cases().map_err(anyhow::Error::msg)?;
            for t in targets {
                let options = RegenOptions {
                    target: t.clone(),
                    target_config: target_config
                        .clone()
                        .unwrap_or_else(|| target_config_path(&t)),
                    force: *force,
                    today: today.clone(),
                    commit: None,
                    progress: true,
                };
                match regenerate(&store, &cases, &options)
                    .with_context(|| format!("regenerating {t}"))?
                {
                    RegenOutcome::Unchanged { version } => writeln!(
                        out,
                        "{t}: today's output equals v{version}; nothing written (--force to write anyway)"
                    )?,
                    RegenOutcome::Written {
                        version,
                        dir,
                        added,
                        removed,
                    } => {
                        writeln!(out, "{t}: wrote v{version} ({} cases) to {}", cases.len(), dir.display())?;
                        writeln!(out, "  constructs newly emitted: {}", added.len())?;
                        for c in &added {
                            writeln!(out, "    + {c}")?;
                        }
                        writeln!(out, "  constructs no longer emitted: {}", removed.len())?;
                        for c in &removed {
                            writeln!(out, "    - {c}")?;
                        }
                    }
                }
            }
            // The schema bot reads the census through the index: keep it in step with the
            // new versions (it would otherwise be ignored as stale, and the bot read every
            // manifest).
            write_census_index(&store, out)?;
            Ok(0)
        }
    }
}

/// Rewrites the store's compact census and says what it did.
fn write_census_index(store: &GoldenStore, out: &mut dyn Write) -> anyhow::Result<()> {
    let outcome = schema_history::write_index(store.root())
        .with_context(|| format!("writing the census index of {}", store.root().display()))?;
    match outcome {
        schema_history::IndexOutcome::Written(path) => {
            writeln!(out, "wrote the compact census {}", path.display())?
        }
        schema_history::IndexOutcome::UpToDate(path) => {
            writeln!(out, "the compact census {} is up to date", path.display())?
        }
    }
    Ok(())
}

fn index(store: &GoldenStore, out: &mut dyn Write) -> anyhow::Result<u8> {
    write_census_index(store, out)?;
    Ok(0)
}

fn list(store: &GoldenStore, out: &mut dyn Write) -> anyhow::Result<u8> {
    let targets = store.targets()?;
    if targets.is_empty() {
        writeln!(out, "no goldens under {}", store.root().display())?;
    }
    for t in targets {
        for v in store.versions(&t)? {
            match replay::manifest(store, &t, v) {
                Ok(Manifest {
                    created,
                    compiler_commit,
                    cases,
                    ..
                }) => writeln!(
                    out,
                    "{t} v{v}  created {created}  compiler {compiler_commit}  {} cases: {}",
                    cases.len(),
                    cases.join(" ")
                )?,
                Err(e) => writeln!(out, "{t} v{v}  unreadable manifest: {e}")?,
            }
        }
    }
    Ok(0)
}

fn verify(store: &GoldenStore, out: &mut dyn Write) -> anyhow::Result<u8> {
    let mut bad = 0;
    for t in store.targets()? {
        for v in store.versions(&t)? {
            match replay::integrity(store, &t, v) {
                Ok(()) => writeln!(out, "{t} v{v}: OK")?,
                Err(e) => {
                    bad += 1;
                    writeln!(out, "{e}")?;
                }
            }
        }
    }
    match schema_history::check_index(store.root()) {
        Ok(Ok(())) => writeln!(out, "census index: OK")?,
        Ok(Err(stale)) => {
            bad += 1;
            writeln!(out, "{stale}")?;
        }
        Err(e) => {
            bad += 1;
            writeln!(out, "census index: the manifests cannot be read: {e}")?;
        }
    }
    Ok(u8::from(bad > 0))
}
