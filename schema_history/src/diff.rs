//! The bot's diff: compile both sides, load the history, the census, the runtime sources and the
//! waivers, run every rule.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::census::Census;
use crate::finding::Finding;
use crate::git::{Repo, Revision};
use crate::githistory::GitHistoryBound;
use crate::model::Model;
use crate::protos::{normalize_dir, Compiled, ParseCache, ProtoSources};
use crate::report::Report;
use crate::rules::{self, Side};
use crate::surface::{Extras, History, MetaOrder, SnapshotMeta};
use crate::waiver::Waiver;
use crate::{fallback, Date, Error};

/// Which protos make up a schema and where its root is.
#[derive(Debug, Clone)]
pub struct SchemaSpec {
    /// Repository-relative include directories (earlier ones shadow later ones).
    pub proto_dirs: Vec<String>,
    /// Files to compile (import names or repository paths); empty: every `.proto` under the dirs.
    pub files: Vec<String>,
    /// Root message of the contract.
    pub root: String,
    /// Full name of the boolean field option that marks ignorable fields.
    pub ignorable: String,
}

impl SchemaSpec {
    /// This project's schema: `proto/proto`, root `xla.gpu.GpuExecutableProto`.
    pub fn project() -> SchemaSpec {
        SchemaSpec {
            proto_dirs: vec!["proto/proto".to_owned()],
            files: Vec::new(),
            root: proto::ROOT_MESSAGE.to_owned(),
            ignorable: proto::IGNORABLE_EXTENSION.to_owned(),
        }
    }

    /// Reads and compiles the schema at `rev`.
    pub fn compile(&self, repo: &Repo, rev: &Revision) -> Result<Compiled, Error> {
        let sources = ProtoSources::load(repo, rev, &self.proto_dirs)?;
        if sources.names().next().is_none() {
            return Err(Error::NoProtoFiles {
                side: rev.to_string(),
                dirs: self.proto_dirs.join(", "),
            });
        }
        sources.compile(&self.files, &rev.to_string())
    }

    /// The wire model of a compiled side.
    pub fn model(&self, compiled: &Compiled, side: &Revision) -> Result<Model, Error> {
        Model::extract(compiled, &self.root, &self.ignorable).map_err(|e| match e {
            Error::NoRoot { root, .. } => Error::NoRoot {
                root,
                side: side.to_string(),
            },
            other => other,
        })
    }
}

/// Everything a diff needs.
#[derive(Debug, Clone)]
pub struct DiffOptions {
    /// Repository root.
    pub repo: PathBuf,
    /// The schema.
    pub spec: SchemaSpec,
    /// What to compare against (a git revision).
    pub base: Revision,
    /// What to check (the working tree or a git revision).
    pub head: Revision,
    /// Repository-relative snapshot directory, read at the head.
    pub history_dir: String,
    /// Goldens directory (`*/v*/manifest.json` with a `census` key): relative to the repository
    /// (read at the head), or absolute (read from the file system).
    pub goldens: PathBuf,
    /// Runtime sources scanned for fallbacks; relative to the repository.
    pub runtime_src: PathBuf,
    /// Waivers file; relative to the repository.
    pub waivers: PathBuf,
    /// The day the windows are computed for.
    pub today: Date,
    /// The head's opcodes, registry and flags when known live (else: the head's newest snapshot).
    pub head_extras: Option<Extras>,
    /// Read the base from this `FileDescriptorSet` image instead of the protos at `base`
    /// (relative to the repository, or absolute).
    pub base_image: Option<PathBuf>,
    /// Read the head from this `FileDescriptorSet` image instead of the protos at `head`.
    pub head_image: Option<PathBuf>,
    /// The repository policy file (relative to the repository; absent: the built-in defaults).
    pub policy: PathBuf,
    /// How far back the git history is read when there are no snapshots.
    pub git_history: GitHistoryBound,
    /// A maintainer approved the change's loosening of the policy or waivers: judge it with the
    /// head's (the loosening findings become notes). Otherwise the base's apply.
    pub approve_trusted_inputs: bool,
}

impl DiffOptions {
    /// Defaults for this project's layout, comparing `head` against `base` today.
    pub fn project(repo: impl Into<PathBuf>, base: Revision, head: Revision, today: Date) -> Self {
        DiffOptions {
            repo: repo.into(),
            spec: SchemaSpec::project(),
            base,
            head,
            history_dir: crate::DEFAULT_HISTORY_DIR.to_owned(),
            goldens: PathBuf::from("goldens/executables"),
            runtime_src: PathBuf::from("runtime/src"),
            waivers: PathBuf::from("schema_history/waivers.toml"),
            today,
            head_extras: None,
            base_image: None,
            head_image: None,
            policy: PathBuf::from(crate::policy::DEFAULT_POLICY),
            git_history: GitHistoryBound::default(),
            approve_trusted_inputs: false,
        }
    }
}

fn under(repo: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_owned()
    } else {
        repo.join(p)
    }
}

/// Where a history directory is read from: an absolute path is read from the file system
/// whatever the revision; a relative one from the repository at `rev`.
fn history_source(repo: &Repo, rev: &Revision, dir: &str) -> (Repo, Revision, String) {
    if Path::new(dir).is_absolute() {
        (Repo::new(dir), Revision::WorkTree, String::new())
    } else {
        (repo.clone(), rev.clone(), dir.to_owned())
    }
}

/// The history of snapshots under `dir` at `rev` (see [`History::load`]); an absolute `dir` is
/// read from the file system.
pub fn load_history(
    repo: &Repo,
    rev: &Revision,
    dir: &str,
    ignorable: &str,
) -> Result<History, Error> {
    let (repo, rev, dir) = history_source(repo, rev, dir);
    History::load(&repo, &rev, &dir, ignorable)
}

/// The extras of the newest snapshot under `dir` at `rev` (`None` when there is none).
pub fn newest_extras(repo: &Repo, rev: &Revision, dir: &str) -> Result<Option<Extras>, Error> {
    Ok(newest_meta(repo, rev, dir)?.map(|m| m.extras.normalized()))
}

/// The commit the newest snapshot under `dir` at `rev` was taken on (`None` without snapshots).
///
/// The bot's self-check compares the working tree with it: everything since the surface was
/// last recorded, committed or not, goes through the rules, so a break committed after the
/// snapshot fails the check (comparing `HEAD` with a clean working tree could not).
pub fn snapshot_base(repo: &Repo, rev: &Revision, dir: &str) -> Result<Option<Revision>, Error> {
    Ok(newest_meta(repo, rev, dir)?.map(|m| Revision::Git(m.commit)))
}

/// The `surface.json` of the newest snapshot under `dir` at `rev` (by `seq`, date, path).
fn newest_meta(repo: &Repo, rev: &Revision, dir: &str) -> Result<Option<SnapshotMeta>, Error> {
    let (repo, rev, dir) = history_source(repo, rev, dir);
    let (repo, rev, dir) = (&repo, &rev, dir.as_str());
    let metas = repo.list_files(rev, dir, "/surface.json")?;
    let mut contents = repo.read_files(rev, &metas)?;
    // Each file is read for its order only; the newest one, in full.
    let mut newest: Option<(u32, Date, &str)> = None;
    for (path, bytes) in &contents {
        let order: MetaOrder = serde_json::from_slice(bytes).map_err(|e| Error::format(path, e))?;
        let key = (order.seq, order.date, path.as_str());
        if newest.is_none_or(|n| n < key) {
            newest = Some(key);
        }
    }
    let Some(path) = newest.map(|(_, _, path)| path.to_owned()) else {
        return Ok(None);
    };
    let bytes = contents.remove(&path).unwrap_or_default();
    let meta: SnapshotMeta = serde_json::from_slice(&bytes).map_err(|e| Error::format(&path, e))?;
    Ok(Some(meta))
}

struct Context {
    labels: (String, String),
    history: History,
    /// Without snapshots: the compared protos' git history (see [`crate::githistory`]).
    git_history: Option<History>,
    head_extras: Extras,
    base_extras: Extras,
    census: Census,
}

/// Prints, with `SCHEMA_HISTORY_TRACE` set, when each of the diff's steps ends.
struct Trace {
    on: bool,
    started: std::time::Instant,
}

impl Trace {
    fn start() -> Trace {
        Trace {
            on: std::env::var_os("SCHEMA_HISTORY_TRACE").is_some(),
            started: std::time::Instant::now(),
        }
    }

    fn mark(&self, what: &str) {
        if self.on {
            eprintln!("[schema_history] {what}: {:?}", self.started.elapsed());
        }
    }
}

/// The two compared models (the base `None` when the head's serves for it), the rest of what
/// the rules read, and why the base is absent when the change creates the schema.
struct Sides {
    base: Option<Model>,
    head: Model,
    context: Context,
    created: Option<String>,
}

/// Runs every rule on `head` against `base`.
pub fn diff(opts: &DiffOptions) -> Result<Report, Error> {
    let repo = Repo::new(&opts.repo);
    let trace = Trace::start();
    // The golden-store rule reads nothing the others make, and its `git diff` against a working
    // tree stats every golden file (6,762 here: about 10 ms): it runs beside the rest.
    let (sides, store) = std::thread::scope(|scope| {
        let store = scope.spawn(|| golden_store(&repo, opts));
        let sides = read_sides(&repo, opts, &trace);
        let store = store
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (sides, store)
    });
    let Sides {
        base: base_owned,
        head: head_model,
        context,
        created,
    } = sides?;
    let base_model = base_owned.as_ref().unwrap_or(&head_model);
    trace.mark("joined");
    let rules = run_rules(
        &repo,
        opts,
        base_model,
        &head_model,
        &context,
        created,
        store,
    );
    let (findings, waived) = rules?;
    trace.mark("rules");
    let Context {
        labels,
        history,
        git_history,
        ..
    } = context;
    let mut report = Report {
        base: labels.0,
        head: labels.1,
        today: opts.today,
        findings,
        waived,
    };
    report.sort();
    trace.mark("report");
    // Free the snapshots beside the models.
    std::thread::scope(|scope| {
        scope.spawn(move || drop((history, git_history)));
        drop(head_model);
        drop(base_owned);
    });
    Ok(report)
}

/// A side's proto sources, an error when there are none.
fn load_sources(
    repo: &Repo,
    spec: &SchemaSpec,
    rev: &Revision,
    trace: &Trace,
) -> Result<ProtoSources, Error> {
    let sources = ProtoSources::load(repo, rev, &spec.proto_dirs)?;
    trace.mark(&format!("{rev}: sources read"));
    if sources.names().next().is_none() {
        return Err(Error::NoProtoFiles {
            side: rev.to_string(),
            dirs: spec.proto_dirs.join(", "),
        });
    }
    Ok(sources)
}

/// A side's wire model, compiled from its sources (parses shared through `cache`).
fn build_model(
    spec: &SchemaSpec,
    sources: &ProtoSources,
    rev: &Revision,
    cache: &Arc<ParseCache>,
    trace: &Trace,
) -> Result<Model, Error> {
    let compiled = sources.compile_for_model(&spec.files, &rev.to_string(), cache)?;
    trace.mark(&format!("{rev}: compiled"));
    let model = spec.model(&compiled, rev);
    drop(compiled);
    trace.mark(&format!("{rev}: model"));
    model
}

/// The history, the extras of both sides, the census and the labels.
fn read_context(repo: &Repo, opts: &DiffOptions, trace: &Trace) -> Result<Context, Error> {
    // The census of the head (read from its git objects when the head is a revision): on a
    // thread of its own, beside the history; its error is reported where it was before, after
    // those of the history and the extras.
    std::thread::scope(|scope| {
        let census = scope.spawn(|| {
            if opts.goldens.is_absolute() {
                Census::load_traced(&Repo::new(&opts.goldens), &Revision::WorkTree, "")
            } else {
                Census::load_traced(repo, &opts.head, &opts.goldens.to_string_lossy())
            }
        });
        let rest = read_history_and_extras(repo, opts);
        let census = census
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let (history, git_history, head_extras, base_extras) = rest?;
        let (census, unindexed) = census?;
        if let Some(why) = unindexed {
            trace.mark(&format!("census read from the manifests: {why}"));
        }
        let census = census.with_runtime_dependencies(&[&base_extras, &head_extras]);
        let labels = (label(repo, &opts.base), label(repo, &opts.head));
        trace.mark("history, extras, census");
        Ok(Context {
            labels,
            history,
            git_history,
            head_extras,
            base_extras,
            census,
        })
    })
}

/// What a side is called in the report: `working tree`, or the revision with its commit.
fn label(repo: &Repo, rev: &Revision) -> String {
    match rev {
        Revision::WorkTree => "working tree".to_owned(),
        Revision::Git(r) => match repo.resolve(r) {
            Ok(hash) if !hash.starts_with(r.as_str()) => {
                format!("{r} ({})", hash.get(..10).unwrap_or(&hash))
            }
            Ok(hash) => hash.get(..10).unwrap_or(&hash).to_owned(),
            Err(_) => r.clone(),
        },
    }
}

/// The history (snapshots, or the git history without them) and both sides' extras.
fn read_history_and_extras(
    repo: &Repo,
    opts: &DiffOptions,
) -> Result<(History, Option<History>, Extras, Extras), Error> {
    let spec = &opts.spec;
    let history = load_history(repo, &opts.head, &opts.history_dir, &spec.ignorable)?;
    let git_history = crate::inputs::git_history(repo, opts, &history)?;
    let head_extras = match &opts.head_extras {
        Some(e) => e.clone().normalized(),
        None => newest_extras(repo, &opts.head, &opts.history_dir)?.unwrap_or_default(),
    };
    // A base without snapshots says nothing about its opcodes, registry and flags: compare
    // the head's with themselves rather than report all of them as new.
    let base_extras =
        newest_extras(repo, &opts.base, &opts.history_dir)?.unwrap_or_else(|| head_extras.clone());
    Ok((history, git_history, head_extras, base_extras))
}

/// What the diff reads from a git side (the history and the census: as the context reads
/// them), read ahead together: one walk of its trees, one batch of files.
fn git_reads(opts: &DiffOptions, head: bool) -> Vec<(&str, &str)> {
    let mut wants: Vec<(&str, &str)> = opts
        .spec
        .proto_dirs
        .iter()
        .map(|d| (normalize_dir(d), ".proto"))
        .collect();
    if !Path::new(&opts.history_dir).is_absolute() {
        wants.push((&opts.history_dir, "/surface.json"));
        if head {
            wants.push((&opts.history_dir, "/surface.txt"));
        }
    }
    if head && !opts.goldens.is_absolute() {
        if let Some(g) = opts.goldens.to_str() {
            wants.push((g, "/manifest.json"));
            wants.push((g, "/census.json"));
        }
    }
    wants
}

/// An error for a worker thread that panicked.
fn panicked(what: &str) -> Error {
    Error::Compile {
        side: what.to_owned(),
        message: "the worker thread panicked".to_owned(),
    }
}

/// Reads and builds both sides and the context. Base, head and the rest are independent (git
/// reads, two protox compiles, the history): they run side by side.
fn read_sides(repo: &Repo, opts: &DiffOptions, trace: &Trace) -> Result<Sides, Error> {
    let spec = &opts.spec;
    // Files both sides have alike are parsed once, by whichever side opens them first; the
    // side that finishes last frees the parses.
    let cache = Arc::new(ParseCache::default());
    let head_cache = Arc::clone(&cache);
    std::thread::scope(|scope| {
        // The base's git reads first, before any compile starts: they lead to the base's
        // compile, and git (a process of its own: start-up, then a few round trips) gets little
        // of a small machine while compiles run beside it.
        repo.prefetch(&opts.base, &git_reads(opts, false));
        let (sources_tx, sources_rx) = std::sync::mpsc::channel();
        let head = scope.spawn(move || {
            if let Some(image) = &opts.head_image {
                return crate::inputs::image_model(&opts.repo, image, spec, &opts.head);
            }
            repo.prefetch(&opts.head, &git_reads(opts, true));
            let sources = load_sources(repo, spec, &opts.head, trace)?;
            head_cache.expect(&sources);
            let _ = sources_tx.send(sources.clone());
            build_model(spec, &sources, &opts.head, &head_cache, trace)
        });
        let ctx = scope.spawn(|| read_context(repo, opts, trace));
        let base_image = opts
            .base_image
            .as_ref()
            .map(|i| crate::inputs::image_model(&opts.repo, i, spec, &opts.base));
        let base_sources = match base_image {
            Some(_) => Err(Error::NoProtoFiles {
                side: opts.base.to_string(),
                dirs: "(read from an image)".to_owned(),
            }),
            None => load_sources(repo, spec, &opts.base, trace),
        };
        // The compared file absent at the base: a creation (see `inputs::created`).
        let missing = base_sources
            .as_ref()
            .ok()
            .and_then(|b| crate::inputs::missing_file(b, &spec.files));
        // Most changes do not touch the protos: then one compile serves both sides.
        let same = match (&base_sources, sources_rx.recv()) {
            (Ok(b), Ok(h)) => b.same_as(&h),
            _ => false,
        };
        if let (Ok(b), false) = (&base_sources, same) {
            cache.expect(b);
        }
        cache.seal();
        // Parse from the other end of the file list while the head's compile starts at the
        // front (only when every file is compiled: otherwise some may never be opened).
        if spec.files.is_empty() {
            if let Ok(b) = &base_sources {
                b.parse_into(&cache);
            }
        }
        let base = match (base_image, &missing) {
            (Some(image), _) => Some(image),
            (None, Some(file)) => Some(Err(Error::NoProtoFiles {
                side: opts.base.to_string(),
                dirs: file.clone(),
            })),
            (None, None) => (!same).then(|| {
                base_sources.and_then(|b| build_model(spec, &b, &opts.base, &cache, trace))
            }),
        };
        drop(cache);
        let head = head
            .join()
            .unwrap_or_else(|_| Err(panicked(&opts.head.to_string())));
        // The same schema on both sides: the head's model serves as the base's.
        let base = match base {
            Some(base) => base.map(Some),
            None => match &head {
                Ok(_) => Ok(None),
                // The head's compile of the same files failed: its diagnostic, said once.
                Err(e) => Err(Error::Compile {
                    side: opts.base.to_string(),
                    message: match e {
                        Error::Compile { message, .. } => message.clone(),
                        other => other.to_string(),
                    },
                }),
            },
        };
        let ctx = ctx.join().unwrap_or_else(|_| Err(panicked("history")));
        // Absent at the base (no protos, not the compared file, not the root): a creation.
        let (base, created) = crate::inputs::created(base, spec);
        Ok(Sides {
            base: base?,
            head: head?,
            context: ctx?,
            created,
        })
    })
}

/// The findings that stand, and those a waiver silences with the waiver.
type Judged = (Vec<Finding>, Vec<(Finding, Waiver)>);

/// Every rule, then the policy and the waivers: the findings that stand and those waived.
fn run_rules(
    repo: &Repo,
    opts: &DiffOptions,
    base_model: &Model,
    head_model: &Model,
    ctx: &Context,
    created: Option<String>,
    golden_store: Result<Vec<Finding>, Error>,
) -> Result<Judged, Error> {
    let base_side = Side {
        model: base_model,
        extras: &ctx.base_extras,
    };
    let head_side = Side {
        model: head_model,
        extras: &ctx.head_extras,
    };
    let aliases: Vec<String> = ctx
        .head_extras
        .registry
        .iter()
        .flat_map(|r| r.aliases.iter().cloned())
        .collect();
    // The wire rules beside the windows and the fallback scan.
    let (wire, windows, fallbacks) = std::thread::scope(|scope| {
        let wire_history = ctx.git_history.as_ref().unwrap_or(&ctx.history);
        let wire = scope.spawn(|| rules::wire(base_model, head_model, wire_history));
        let windows = rules::windows(base_side, head_side, &ctx.history, &ctx.census, opts.today);
        let fallbacks = fallback::scan(
            &under(&opts.repo, &opts.runtime_src),
            &opts.repo,
            &aliases,
            opts.today,
        );
        let wire = wire
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (wire, windows, fallbacks)
    });
    let mut findings: Vec<Finding> = wire;
    findings.extend(windows);
    findings.extend(fallbacks?);
    findings.extend(crate::features::compare(base_model, head_model));
    findings
        .extend(created.map(|what| crate::inputs::created_note(&what, head_model, &ctx.labels.0)));
    findings.extend(golden_store?);
    // Policy and waivers from the base (see `trust`); what the head loosens is reported after
    // they are applied, so neither can touch those findings.
    let trusted = crate::trust::load(
        repo,
        &opts.base,
        &opts.head,
        &opts.policy,
        &opts.waivers,
        opts.approve_trusted_inputs,
    )?;
    let findings = trusted.policy.apply(findings, base_model, head_model);
    let (mut findings, waived) = trusted.waivers.apply(findings, opts.today);
    findings.extend(trusted.loosened);
    Ok((findings, waived))
}

/// The append-only check of the golden store (a repository-relative store, a git base).
fn golden_store(repo: &Repo, opts: &DiffOptions) -> Result<Vec<Finding>, Error> {
    let (Revision::Git(base), Some(dir)) = (&opts.base, opts.goldens.to_str()) else {
        return Ok(Vec::new());
    };
    if opts.goldens.is_absolute() || opts.base_image.is_some() {
        return Ok(Vec::new());
    }
    crate::golden_store::check(repo, base, &opts.head, dir, opts.today)
}
