//! The compatibility surface and its dated snapshots under `schema_history/snapshots/`.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::git::{Repo, Revision};
use crate::model::{encode_reachable, Model};
use crate::protos::Compiled;
use crate::{Date, Error};

/// Where the project keeps its snapshots, relative to the repository root.
pub const DEFAULT_HISTORY_DIR: &str = "schema_history/snapshots";

/// A registered custom-call, FFI handler or kernel symbol, with the legacy names that still
/// resolve to it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RegistryName {
    /// The current name.
    pub name: String,
    /// Legacy names kept for older artifacts.
    #[serde(default)]
    pub aliases: Vec<String>,
}

/// One attribute a typed-FFI handler reads, with the type it takes (`bool`, `i32`, `ui8`, `f32`,
/// `string`: the MLIR spelling of the attribute's type). An artifact's custom call carries the
/// attribute with a written type; removing the attribute or changing its type refuses (or
/// misreads) every artifact that carries it, like a removed field.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FfiAttribute {
    /// The handler's registered name (its aliases share its attributes).
    pub target: String,
    /// The attribute's name.
    pub name: String,
    /// The type the handler takes.
    pub ty: String,
}

impl FfiAttribute {
    /// The constructs an artifact using this attribute holds: `ffi-attr:TARGET.NAME` and
    /// `ffi-attr:TARGET.NAME:TYPE` (for `target` or one of its aliases).
    pub fn constructs_for(target: &str, name: &str, ty: &str) -> [String; 2] {
        [
            format!("ffi-attr:{target}.{name}"),
            format!("ffi-attr:{target}.{name}:{ty}"),
        ]
    }
}

/// A flag the runtime reads, with its default.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RuntimeFlag {
    /// Flag name.
    pub name: String,
    /// Default value, as text.
    pub default: String,
    /// An upper bound an artifact can need (an iteration cap, a timeout, a memory or size
    /// bound; an integer): lowering its default refuses artifacts that loaded before, so the
    /// `limit-tightened` rule guards it (snapshots recorded before limits were marked: `false`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub limit: bool,
}

/// Which constructs make the runtime read a flag: a golden whose census holds any of them depends
/// on the flag's default (`flag:NAME flag read-for C1,C2` in the listing).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FlagReaders {
    /// Flag name (one of [`Extras::runtime_flags`]).
    pub flag: String,
    /// Construct names (`xla.gpu.ThunkProto.while_thunk`; `xla.gpu.GpuExecutableProto` for every
    /// artifact).
    pub read_for: Vec<String>,
}

/// A load-time thunk pass the runtime runs (`pass:NAME pass applies-to C1,C2` in the listing):
/// removing it, or narrowing what it applies to, changes how artifacts that use those constructs
/// execute.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LoadPass {
    /// Pass name.
    pub name: String,
    /// Constructs the pass rewrites (thunk kinds, as oneof-variant field names).
    #[serde(default)]
    pub applies_to: Vec<String>,
}

/// The parts of the surface that are not protobuf descriptors. Only the harness can see the
/// runtime and the HLO crate, so it supplies them as plain data.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extras {
    /// Registered custom-call / FFI / kernel-symbol names.
    #[serde(default)]
    pub registry: Vec<RegistryName>,
    /// HLO opcodes the runtime accepts.
    #[serde(default)]
    pub opcodes: Vec<String>,
    /// Runtime flags with their defaults.
    #[serde(default)]
    pub runtime_flags: Vec<RuntimeFlag>,
    /// Per flag, the constructs that make the runtime read it (absent from snapshots taken before
    /// it was recorded: then nothing is derived from that side).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flag_readers: Vec<FlagReaders>,
    /// The load-time passes, in no particular order (sorted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_passes: Vec<LoadPass>,
    /// The attributes typed-FFI handlers take (absent from snapshots taken before 2026-12-03).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ffi_attributes: Vec<FfiAttribute>,
}

impl Extras {
    /// Sorted and deduplicated, so equal surfaces compare equal.
    pub fn normalized(mut self) -> Extras {
        for r in &mut self.registry {
            r.aliases.sort();
            r.aliases.dedup();
        }
        self.registry.sort();
        self.registry.dedup();
        self.opcodes.sort();
        self.opcodes.dedup();
        self.runtime_flags.sort();
        self.runtime_flags.dedup();
        for f in &mut self.flag_readers {
            f.read_for.sort();
            f.read_for.dedup();
        }
        self.flag_readers.sort();
        self.flag_readers.dedup();
        for p in &mut self.load_passes {
            p.applies_to.sort();
            p.applies_to.dedup();
        }
        self.load_passes.sort();
        self.load_passes.dedup();
        self.ffi_attributes.sort();
        self.ffi_attributes.dedup();
        self
    }

    /// A handler's name and its legacy aliases (just the name when it is not registered).
    fn names_of<'a>(&'a self, target: &'a str) -> Vec<&'a str> {
        let mut names = vec![target];
        if let Some(r) = self.registry.iter().find(|r| r.name == target) {
            names.extend(r.aliases.iter().map(String::as_str));
        }
        names
    }

    /// The runtime dependencies of a golden that uses `constructs`: `flag:NAME` for every flag
    /// read for one of them, `pass:NAME` for every load-time pass applying to one of them.
    pub fn runtime_dependencies(&self, constructs: &BTreeSet<String>) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for f in &self.flag_readers {
            if f.read_for.iter().any(|c| constructs.contains(c)) {
                out.insert(format!("flag:{}", f.flag));
            }
        }
        for p in &self.load_passes {
            if p.applies_to.iter().any(|c| constructs.contains(c)) {
                out.insert(format!("pass:{}", p.name));
            }
        }
        out
    }

    /// Construct names: `opcode:NAME`, `registry:NAME` (aliases too), `flag:NAME`. Load passes
    /// (`pass:NAME`) are not among them: they are never emitted, so the forward-window and
    /// staged-rollout rules have nothing to say about them; `flag_rules` checks their removal.
    pub fn constructs(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for o in &self.opcodes {
            out.insert(format!("opcode:{o}"));
        }
        for r in &self.registry {
            out.insert(format!("registry:{}", r.name));
            for a in &r.aliases {
                out.insert(format!("registry:{a}"));
            }
        }
        for f in &self.runtime_flags {
            out.insert(format!("flag:{}", f.name));
        }
        for a in &self.ffi_attributes {
            for target in self.names_of(&a.target) {
                out.extend(FfiAttribute::constructs_for(target, &a.name, &a.ty));
            }
        }
        out
    }

    /// Listing lines of the extras.
    pub fn listing(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for o in &self.opcodes {
            lines.push(format!("opcode:{o} opcode"));
        }
        for r in &self.registry {
            if r.aliases.is_empty() {
                lines.push(format!("registry:{} registry", r.name));
            } else {
                lines.push(format!(
                    "registry:{} registry aliases {}",
                    r.name,
                    r.aliases.join(",")
                ));
            }
        }
        for f in &self.runtime_flags {
            lines.push(format!("flag:{} flag default {}", f.name, f.default));
            if f.limit {
                lines.push(format!("flag:{} flag limit", f.name));
            }
        }
        for f in &self.flag_readers {
            lines.push(format!(
                "flag:{} flag read-for {}",
                f.flag,
                f.read_for.join(",")
            ));
        }
        for p in &self.load_passes {
            lines.push(format!(
                "pass:{} pass applies-to {}",
                p.name,
                p.applies_to.join(",")
            ));
        }
        for a in &self.ffi_attributes {
            lines.push(format!(
                "ffi-attr:{}.{} ffi-attribute {}",
                a.target, a.name, a.ty
            ));
        }
        lines.sort();
        lines
    }
}

/// One dated state of the compatibility surface.
#[derive(Debug, Clone)]
pub struct Surface {
    /// The day it describes.
    pub date: Date,
    /// The commit it was taken at (the working tree's `HEAD`, or a label).
    pub commit: String,
    /// Full name of the message whose reachable types the surface lists
    /// (`xla.gpu.GpuExecutableProto`).
    pub root: String,
    /// Encoded `FileDescriptorSet` of the files declaring reachable types, with their imports.
    pub descriptors: Vec<u8>,
    /// The canonical sorted listing (descriptors, then extras).
    pub listing: Vec<String>,
    /// The non-proto parts.
    pub extras: Extras,
    /// The wire model of the descriptors.
    pub model: Model,
}

impl Surface {
    /// The surface of a compiled schema plus the harness-supplied extras.
    pub fn new(
        compiled: &Compiled,
        root: &str,
        ignorable: &str,
        extras: Extras,
        date: Date,
        commit: &str,
    ) -> Result<Surface, Error> {
        let model = Model::extract(compiled, root, ignorable)?;
        let extras = extras.normalized();
        let descriptors = encode_reachable(&compiled.pool, &model);
        let mut listing = model.listing();
        listing.extend(extras.listing());
        Ok(Surface {
            date,
            commit: commit.to_owned(),
            root: root.to_owned(),
            descriptors,
            listing,
            extras,
            model,
        })
    }

    /// The listing as the text of `surface.txt`.
    pub fn listing_text(&self) -> String {
        let mut text = self.listing.join("\n");
        text.push('\n');
        text
    }
}

/// `surface.json` of a snapshot.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(from = "MetaWire")]
pub struct SnapshotMeta {
    /// Order of the snapshot in the history (the baseline is 1).
    pub seq: u32,
    /// The day it describes.
    pub date: Date,
    /// The commit it was taken at.
    pub commit: String,
    /// Whether the working tree had uncommitted schema changes when it was taken.
    #[serde(default)]
    pub dirty: bool,
    /// Full name of the message whose reachable types the surface lists
    /// (`xla.gpu.GpuExecutableProto`).
    pub root: String,
    /// The non-proto parts of the surface.
    #[serde(flatten)]
    pub extras: Extras,
}

/// [`SnapshotMeta`] as `surface.json` spells it, read without `#[serde(flatten)]`: a flattened
/// struct makes serde buffer the whole document into its generic `Content` tree before reading
/// any field, which cost 2-3x the parse, and every diff reads each snapshot's file. Unknown
/// fields are ignored, as with `flatten`; [`SnapshotMeta`]'s serialization is unchanged. The
/// conversion names every field of [`Extras`], so a field added there fails to compile until
/// it is added here.
#[derive(Deserialize)]
struct MetaWire {
    seq: u32,
    date: Date,
    commit: String,
    #[serde(default)]
    dirty: bool,
    root: String,
    #[serde(default)]
    registry: Vec<RegistryName>,
    #[serde(default)]
    opcodes: Vec<String>,
    #[serde(default)]
    runtime_flags: Vec<RuntimeFlag>,
    #[serde(default)]
    flag_readers: Vec<FlagReaders>,
    #[serde(default)]
    load_passes: Vec<LoadPass>,
    #[serde(default)]
    ffi_attributes: Vec<FfiAttribute>,
}

impl From<MetaWire> for SnapshotMeta {
    fn from(w: MetaWire) -> SnapshotMeta {
        SnapshotMeta {
            seq: w.seq,
            date: w.date,
            commit: w.commit,
            dirty: w.dirty,
            root: w.root,
            extras: Extras {
                registry: w.registry,
                opcodes: w.opcodes,
                runtime_flags: w.runtime_flags,
                flag_readers: w.flag_readers,
                load_passes: w.load_passes,
                ffi_attributes: w.ffi_attributes,
            },
        }
    }
}

/// The fields of `surface.json` that order snapshots (the rest is skipped unread).
#[derive(Deserialize)]
pub(crate) struct MetaOrder {
    pub(crate) seq: u32,
    pub(crate) date: Date,
}

/// A snapshot read back from the history.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Directory name, `<YYYY-MM-DD>-<commit-or-label>`.
    pub name: String,
    /// Its `surface.json`.
    pub meta: SnapshotMeta,
    /// Its `surface.txt`.
    pub listing: Listing,
    /// The wire model of its descriptor set.
    pub model: Model,
}

/// The lines of a snapshot's `surface.txt`, kept as the text they were read from: one
/// allocation per snapshot, where a `String` per line made a history of twenty snapshots
/// allocate (and free) 17,000 strings on every diff.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    text: String,
}

impl Listing {
    /// The listing whose lines are `lines`.
    pub fn from_lines<S: AsRef<str>>(lines: &[S]) -> Listing {
        let mut text = String::with_capacity(lines.iter().map(|l| l.as_ref().len() + 1).sum());
        for line in lines {
            text.push_str(line.as_ref());
            text.push('\n');
        }
        Listing { text }
    }

    /// The lines (as `str::lines` splits the text: `\n` or `\r\n`).
    pub fn lines(&self) -> std::str::Lines<'_> {
        self.text.lines()
    }

    /// Whether the lines are `lines`.
    pub fn is<S: AsRef<str>>(&self, lines: &[S]) -> bool {
        self.lines().eq(lines.iter().map(AsRef::as_ref))
    }
}

impl Snapshot {
    /// Every construct of the snapshot (descriptors and extras).
    pub fn constructs(&self) -> BTreeSet<String> {
        let mut c = self.model.constructs();
        c.extend(self.meta.extras.constructs());
        c
    }
}

/// The dated snapshots of a repository, oldest first. The first one is the baseline.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// Oldest first (by `seq`, then date, then name).
    pub snapshots: Vec<Snapshot>,
}

impl History {
    /// Reads every snapshot under `dir` (repository-relative) at `rev`. A missing directory is an
    /// empty history. Each snapshot needs `surface.json` and `descriptor_set.bin`.
    pub fn load(repo: &Repo, rev: &Revision, dir: &str, ignorable: &str) -> Result<History, Error> {
        let metas = repo.list_files(rev, dir, "/surface.json")?;
        let mut wanted = Vec::new();
        for meta in &metas {
            let Some(parent) = meta.strip_suffix("/surface.json") else {
                continue;
            };
            wanted.push(meta.clone());
            wanted.push(format!("{parent}/surface.txt"));
        }
        let mut contents = repo.read_files(rev, &wanted)?;
        let mut snapshots = Vec::new();
        // Snapshots are listed oldest first by name (`<date>-<commit>`), so each mostly reuses
        // the types of the one read from a listing before it (its index in `snapshots`).
        let mut from_listing: Option<usize> = None;
        for meta_path in metas {
            let Some(parent) = meta_path.strip_suffix("/surface.json") else {
                continue;
            };
            let name = parent.rsplit('/').next().unwrap_or(parent).to_owned();
            let meta_bytes = contents.remove(&meta_path).unwrap_or_default();
            let meta: SnapshotMeta =
                serde_json::from_slice(&meta_bytes).map_err(|e| Error::format(&meta_path, e))?;
            let bin_path = format!("{parent}/descriptor_set.bin");
            let listing: Option<Listing> =
                contents.remove(&format!("{parent}/surface.txt")).map(|b| {
                    // `from_utf8` first: it checks ASCII in words, the lossy reader byte by byte.
                    let text = match String::from_utf8(b) {
                        Ok(text) => text,
                        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
                    };
                    Listing { text }
                });
            // The listing carries everything the history rules need and parses in a fraction
            // of the time the descriptor set decodes in; the set is the fallback.
            let (model, listing) = match listing {
                Some(listing) => {
                    let lines: Vec<&str> = listing.lines().collect();
                    let earlier = from_listing
                        .and_then(|i| snapshots.get(i))
                        .map(|s: &Snapshot| (s.listing.lines().collect::<Vec<&str>>(), &s.model));
                    let before = earlier.as_ref().map(|(l, m)| (l.as_slice(), *m));
                    let model = Model::from_listing_after(&meta.root, &lines, before);
                    drop(lines);
                    from_listing = Some(snapshots.len());
                    (model, listing)
                }
                None => {
                    let bin = repo
                        .read_files(rev, std::slice::from_ref(&bin_path))?
                        .remove(&bin_path)
                        .ok_or_else(|| Error::format(&bin_path, "missing"))?;
                    let compiled = Compiled::decode(&bin, &bin_path)?;
                    let model = Model::extract(&compiled, &meta.root, ignorable)
                        .map_err(|e| Error::format(&bin_path, e))?;
                    let listing = Listing::from_lines(&model.listing());
                    (model, listing)
                }
            };
            snapshots.push(Snapshot {
                name,
                meta,
                listing,
                model,
            });
        }
        snapshots.sort_by(|a, b| {
            (a.meta.seq, a.meta.date, &a.name).cmp(&(b.meta.seq, b.meta.date, &b.name))
        });
        Ok(History { snapshots })
    }

    /// The baseline (oldest) snapshot.
    pub fn baseline(&self) -> Option<&Snapshot> {
        self.snapshots.first()
    }

    /// The newest snapshot.
    pub fn newest(&self) -> Option<&Snapshot> {
        self.snapshots.last()
    }

    /// When `construct` first appeared: `None` when no snapshot has it, `Some(None)` when the
    /// baseline has it (it predates the history), else the date of the first snapshot with it.
    pub fn first_seen(&self, construct: &str) -> Option<Option<Date>> {
        for (i, s) in self.snapshots.iter().enumerate() {
            let present = if let Some(rest) = construct.strip_prefix("opcode:") {
                s.meta.extras.opcodes.iter().any(|o| o == rest)
            } else if let Some(rest) = construct.strip_prefix("registry:") {
                s.meta
                    .extras
                    .registry
                    .iter()
                    .any(|r| r.name == rest || r.aliases.iter().any(|a| a == rest))
            } else if let Some(rest) = construct.strip_prefix("flag:") {
                s.meta.extras.runtime_flags.iter().any(|f| f.name == rest)
            } else if construct.starts_with("ffi-attr:") {
                s.meta.extras.constructs().contains(construct)
            } else {
                s.model.messages.contains_key(construct)
                    || s.model.enums.contains_key(construct)
                    || s.model.field(construct).is_some()
                    || construct.rsplit_once('.').is_some_and(|(e, v)| {
                        s.model
                            .enums
                            .get(e)
                            .is_some_and(|e| e.values.contains_key(v))
                    })
            };
            if present {
                return Some(if i == 0 { None } else { Some(s.meta.date) });
            }
        }
        None
    }
}

/// What [`write_snapshot`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotOutcome {
    /// The newest snapshot already has this surface; nothing was written.
    UpToDate(PathBuf),
    /// A snapshot was written at this directory.
    Written(PathBuf),
}

/// Writes `surface` as a new snapshot under `dir` (a filesystem path) unless the newest snapshot
/// there already has the same listing and extras.
///
/// Two cases update the newest snapshot in place instead of adding one: the same day and label
/// as the newest (re-running the command while the schema is being edited), and the baseline's
/// own day (until the day is over, changes belong to the baseline: no older runtime or artifact
/// exists yet).
pub fn write_snapshot(
    dir: &Path,
    surface: &Surface,
    label: &str,
    dirty: bool,
    ignorable: &str,
) -> Result<SnapshotOutcome, Error> {
    let repo = Repo::new(dir);
    let history = History::load(&repo, &Revision::WorkTree, "", ignorable)?;
    let name = format!("{}-{}", surface.date, sanitize(label));
    let mut seq = 1;
    let mut target = dir.join(&name);
    if let Some(newest) = history.newest() {
        if newest.listing.is(&surface.listing) && newest.meta.extras == surface.extras {
            return Ok(SnapshotOutcome::UpToDate(dir.join(&newest.name)));
        }
        let baseline_day = history.snapshots.len() == 1 && newest.meta.date == surface.date;
        if newest.name == name || baseline_day {
            seq = newest.meta.seq;
            target = dir.join(&newest.name);
        } else {
            seq = newest.meta.seq + 1;
            if target.exists() {
                let mut n = 2;
                while dir.join(format!("{name}-{n}")).exists() {
                    n += 1;
                }
                target = dir.join(format!("{name}-{n}"));
            }
        }
    }
    std::fs::create_dir_all(&target).map_err(|e| Error::io(&target, e))?;
    let meta = SnapshotMeta {
        seq,
        date: surface.date,
        commit: surface.commit.clone(),
        dirty,
        root: surface.root.clone(),
        extras: surface.extras.clone(),
    };
    let mut json = serde_json::to_string_pretty(&meta).map_err(|e| Error::format(&name, e))?;
    json.push('\n');
    for (file, bytes) in [
        ("descriptor_set.bin", surface.descriptors.as_slice()),
        ("surface.txt", surface.listing_text().as_bytes()),
        ("surface.json", json.as_bytes()),
    ] {
        let path = target.join(file);
        std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
    }
    Ok(SnapshotOutcome::Written(target))
}

fn sanitize(label: &str) -> String {
    let s: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if s.is_empty() {
        "snapshot".to_owned()
    } else {
        s
    }
}

/// A unified diff of two listings (or any texts), for tests and the snapshot check.
pub fn unified_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string()
}
