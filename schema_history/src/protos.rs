//! A side's `.proto` sources (read through [`Repo`] or given as texts) and their compilation in
//! memory with protox, each distinct file parsed once per diff.
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use prost_reflect::prost_types::FileDescriptorProto;
use prost_reflect::DescriptorPool;
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};

use crate::editions::{self, Edition, Unsupported};
use crate::git::{Repo, Revision};
use crate::spans::Spans;
use crate::Error;

/// The `.proto` sources of one side, keyed by import name (the path below its proto directory).
#[derive(Debug, Clone, Default)]
pub struct ProtoSources {
    /// Import name to (repository-relative path, source text). An editions file's text is its
    /// proto2 rewrite (see [`crate::editions`]), line for line.
    files: BTreeMap<String, (String, String)>,
    /// Import name to the edition of each editions file, or why it cannot be read.
    editions: BTreeMap<String, Result<Edition, Unsupported>>,
}

impl ProtoSources {
    /// Reads every `.proto` file under `proto_dirs` (repository-relative include paths, earlier
    /// ones shadowing later ones, as protoc's `-I`) at `rev`.
    pub fn load(repo: &Repo, rev: &Revision, proto_dirs: &[String]) -> Result<ProtoSources, Error> {
        let mut names: Vec<(String, String)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for dir in proto_dirs {
            let dir = normalize_dir(dir);
            for path in repo.list_files(rev, dir, ".proto")? {
                let name = match dir {
                    "" => path.clone(),
                    d => path
                        .strip_prefix(d)
                        .map(|s| s.trim_start_matches('/').to_owned())
                        .unwrap_or_else(|| path.clone()),
                };
                if seen.insert(name.clone()) {
                    names.push((name, path));
                }
            }
        }
        let paths: Vec<String> = names.iter().map(|(_, p)| p.clone()).collect();
        let mut contents = repo.read_files(rev, &paths)?;
        let mut sources = ProtoSources::default();
        for (name, path) in names {
            if let Some(bytes) = contents.remove(&path) {
                let text = String::from_utf8(bytes)
                    .map_err(|_| Error::format(&path, "not valid UTF-8"))?;
                sources.insert(name, path, text);
            }
        }
        Ok(sources)
    }

    /// The files `files` (import names or repository paths, as [`compile`](Self::compile)
    /// takes them) reach through their imports at `commit`, read by tree lookups: only those
    /// blobs, never the listing of the proto directories (a repository whose proto directory
    /// is its root lists tens of thousands of paths). Import names resolve through
    /// `proto_dirs` in order, as [`load`](Self::load) shadows them; blobs are read through
    /// `blobs` (shared by a history walk: each distinct blob is read and lowered once).
    ///
    /// Returns the sources and every repository path looked up (found or not, sorted): they
    /// are a function of those paths' object names. `None` when a requested file does not
    /// resolve (the caller reads the whole directories then, as `load` would).
    pub(crate) fn load_closure(
        repo: &Repo,
        commit: &str,
        proto_dirs: &[String],
        files: &[String],
        blobs: &BlobCache,
    ) -> Result<Option<Closure>, Error> {
        let mut closure = Closure {
            sources: ProtoSources::default(),
            probed: Vec::new(),
            seen: std::collections::HashSet::new(),
            dirs: proto_dirs
                .iter()
                .map(|d| normalize_dir(d).to_owned())
                .collect(),
        };
        let mut names = Vec::new();
        for file in files {
            let name = match closure.resolve(repo, commit, file)? {
                Some(_) => file.clone(),
                // A repository path: its import name below the first directory holding it.
                None => match closure.dirs.iter().find_map(|d| strip_dir(d, file)) {
                    Some(name) => name.to_owned(),
                    None => return Ok(None),
                },
            };
            names.push(name);
        }
        closure.extend(repo, commit, names, blobs)?;
        // A file given by its repository path must be the one its import name resolves to.
        if !files.iter().all(|f| closure.sources.has_file(f)) {
            return Ok(None);
        }
        Ok(Some(closure))
    }

    /// Adds a file, rewriting it when it is an editions file.
    fn insert(&mut self, name: String, path: String, text: String) {
        let (text, edition) = lowered(text);
        if let Some(edition) = edition {
            self.editions.insert(name.clone(), edition);
        }
        self.files.insert(name, (path, text));
    }

    /// The edition of each editions file that reads.
    fn edition_map(&self) -> BTreeMap<String, Edition> {
        self.editions
            .iter()
            .filter_map(|(n, e)| Some((n.clone(), *e.as_ref().ok()?)))
            .collect()
    }

    /// The import chain from one of `open` to `target`: `[open file, ..., target]` (just
    /// `[target]` when no opened file imports it).
    fn import_chain(&self, open: &[String], target: &str) -> Vec<String> {
        let mut parent: HashMap<String, String> = HashMap::new();
        let mut queue: std::collections::VecDeque<String> = open.iter().cloned().collect();
        let mut seen: std::collections::HashSet<String> = open.iter().cloned().collect();
        while let Some(name) = queue.pop_front() {
            if name == target {
                let mut chain = vec![name.clone()];
                let mut at = name;
                while let Some(p) = parent.get(&at) {
                    chain.push(p.clone());
                    at = p.clone();
                }
                chain.reverse();
                return chain;
            }
            let Some((_, text)) = self.files.get(&name) else {
                continue;
            };
            for dep in editions::imports(text) {
                if seen.insert(dep.clone()) {
                    parent.insert(dep.clone(), name.clone());
                    queue.push_back(dep);
                }
            }
        }
        vec![target.to_owned()]
    }

    /// `; imported by a.proto <- b.proto` for a file reached through imports, else nothing.
    fn chain_text(&self, open: &[String], target: &str) -> String {
        let chain = self.import_chain(open, target);
        if chain.len() < 2 {
            return String::new();
        }
        let importers: Vec<&str> = chain.iter().rev().skip(1).map(String::as_str).collect();
        format!(" (imported by {})", importers.join(" <- "))
    }

    /// The repository path of a file (its import name when unknown).
    fn path_of<'a>(&'a self, name: &'a str) -> &'a str {
        self.files.get(name).map_or(name, |(p, _)| p.as_str())
    }

    /// The first editions file reached from `open` that cannot be read, as a compile error.
    fn check_editions(&self, open: &[String], side: &str) -> Result<(), Error> {
        if self.editions.values().all(Result::is_ok) {
            return Ok(());
        }
        let reached = self.closure(open);
        for (name, status) in &self.editions {
            if let (Err(u), true) = (status, reached.contains(name)) {
                return Err(Error::Compile {
                    side: side.to_owned(),
                    message: format!(
                        "{}:{}:{}: unsupported Protobuf Editions construct: {}{}",
                        self.path_of(name),
                        u.line,
                        u.column,
                        u.what,
                        self.chain_text(open, name)
                    ),
                });
            }
        }
        Ok(())
    }

    /// Every file `open` reaches through imports (themselves included).
    fn closure(&self, open: &[String]) -> std::collections::HashSet<String> {
        let mut seen: std::collections::HashSet<String> = open.iter().cloned().collect();
        let mut stack: Vec<String> = open.to_vec();
        while let Some(name) = stack.pop() {
            if let Some((_, text)) = self.files.get(&name) {
                for dep in editions::imports(text) {
                    if seen.insert(dep.clone()) {
                        stack.push(dep);
                    }
                }
            }
        }
        seen
    }

    /// protox's error with the line and column of its first label, the repository path and the
    /// import chain that led to the file.
    fn describe(&self, e: &protox::Error, open: &[String]) -> String {
        let text = e.to_string();
        let Some(file) = e.file() else {
            return text;
        };
        let offset = miette::Diagnostic::labels(e)
            .and_then(|mut labels| labels.next())
            .map(|l| l.offset());
        let place = match (offset, self.files.get(file)) {
            (Some(offset), Some((_, source))) => {
                let (line, column) = editions::line_col(source, offset);
                format!("{}:{line}:{column}", self.path_of(file))
            }
            _ => self.path_of(file).to_owned(),
        };
        let edition = match self.editions.get(file) {
            Some(Ok(e)) => format!(" (edition {e}, read as its proto2 rewrite)"),
            _ => String::new(),
        };
        format!("{place}: {text}{edition}{}", self.chain_text(open, file))
    }

    /// Sources given directly: `(import name, text)`; the repository path is the import name.
    pub fn from_texts<I, N, T>(texts: I) -> ProtoSources
    where
        I: IntoIterator<Item = (N, T)>,
        N: Into<String>,
        T: Into<String>,
    {
        let mut sources = ProtoSources::default();
        for (n, t) in texts {
            let n = n.into();
            sources.insert(n.clone(), n, t.into());
        }
        sources
    }

    /// The import names of every file, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// Compiles `files` (import names or repository paths; every file when empty) and their
    /// imports. `side` names the side in errors.
    pub fn compile(&self, files: &[String], side: &str) -> Result<Compiled, Error> {
        let open = self.to_open(files, side)?;
        self.check_editions(&open, side)?;
        let mut chain = ChainFileResolver::new();
        chain.add(MemoryResolver {
            sources: self.texts(),
        });
        chain.add(GoogleFileResolver::new());
        let compiler = open_all(chain, &open).map_err(|e| Error::Compile {
            side: side.to_owned(),
            message: self.describe(&e, &open),
        })?;
        Ok(Compiled {
            pool: compiler.descriptor_pool(),
            repo_paths: self.repo_paths(),
            spans: HashMap::new(),
            editions: self.edition_map(),
        })
    }

    /// [`compile`](Self::compile) for a model only (see [`Model::extract`]): files are parsed
    /// through `cache`, shared with the other side of a diff, and the pool is built without the
    /// source info (the spans of declarations travel beside it). Every check is protox's as in
    /// `compile`; on any error, `compile` itself runs and reports it.
    pub(crate) fn compile_for_model(
        &self,
        files: &[String],
        side: &str,
        cache: &Arc<ParseCache>,
    ) -> Result<Compiled, Error> {
        match self.compile_for_model_quiet(files, side, cache)? {
            Ok(compiled) => Ok(compiled),
            Err(_) => self.compile(files, side),
        }
    }

    /// [`compile_for_model`](Self::compile_for_model) that does not say why protox failed,
    /// for callers that only want a model when there is one: on failure, the import names
    /// protox asked for that are not among the sources (google's own included).
    pub(crate) fn compile_for_model_quiet(
        &self,
        files: &[String],
        side: &str,
        cache: &Arc<ParseCache>,
    ) -> Result<Result<Compiled, Vec<String>>, Error> {
        let open = self.to_open(files, side)?;
        self.check_editions(&open, side)?;
        let spans = Arc::new(Mutex::new(HashMap::new()));
        let missing = Arc::new(Mutex::new(Vec::new()));
        let mut chain = ChainFileResolver::new();
        chain.add(CachedResolver {
            sources: self.texts(),
            cache: Arc::clone(cache),
            spans: Arc::clone(&spans),
            missing: Arc::clone(&missing),
        });
        chain.add(GoogleFileResolver::new());
        let Ok(compiler) = open_all(chain, &open) else {
            let missing =
                std::mem::take(&mut *missing.lock().unwrap_or_else(PoisonError::into_inner));
            return Ok(Err(missing));
        };
        let pool = compiler.descriptor_pool();
        drop(compiler);
        let spans = std::mem::take(&mut *spans.lock().unwrap_or_else(PoisonError::into_inner));
        Ok(Ok(Compiled {
            pool,
            repo_paths: self.repo_paths(),
            spans,
            editions: self.edition_map(),
        }))
    }

    /// Parses every file into `cache` (last first: the other side's compile starts with the
    /// first), so that two threads share the parsing of a diff.
    pub(crate) fn parse_into(&self, cache: &ParseCache) {
        for (name, (_, text)) in self.files.iter().rev() {
            cache.parsed(name, text);
        }
    }

    fn to_open(&self, files: &[String], side: &str) -> Result<Vec<String>, Error> {
        let mut open: Vec<String> = if files.is_empty() {
            self.files.keys().cloned().collect()
        } else {
            files.iter().map(|f| self.import_name(f)).collect()
        };
        open.dedup();
        if open.is_empty() {
            return Err(Error::NoProtoFiles {
                side: side.to_owned(),
                dirs: "the proto directories".to_owned(),
            });
        }
        Ok(open)
    }

    fn texts(&self) -> HashMap<String, String> {
        self.files
            .iter()
            .map(|(name, (_, text))| (name.clone(), text.clone()))
            .collect()
    }

    fn repo_paths(&self) -> BTreeMap<String, String> {
        self.files
            .iter()
            .map(|(name, (path, _))| (name.clone(), path.clone()))
            .collect()
    }

    fn import_name(&self, file: &str) -> String {
        if self.files.contains_key(file) {
            return file.to_owned();
        }
        self.files
            .iter()
            .find(|(_, (path, _))| path == file)
            .map(|(name, _)| name.clone())
            .unwrap_or_else(|| file.to_owned())
    }
}

/// The sources a set of files reaches at one commit (see [`ProtoSources::load_closure`]).
pub(crate) struct Closure {
    pub(crate) sources: ProtoSources,
    /// Every repository path looked up, found or not.
    probed: Vec<String>,
    /// Import names queued so far.
    seen: std::collections::HashSet<String>,
    /// The proto directories, normalized, in shadowing order.
    dirs: Vec<String>,
}

impl Closure {
    /// The repository path and object name `name` resolves to: the first proto directory that
    /// has it.
    fn resolve(
        &mut self,
        repo: &Repo,
        commit: &str,
        name: &str,
    ) -> Result<Option<(String, String)>, Error> {
        let paths: Vec<String> = self.dirs.iter().map(|d| join_dir(d, name)).collect();
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        let oids = repo.path_oids(commit, &refs)?;
        for (path, oid) in paths.into_iter().zip(oids) {
            self.probed.push(path.clone());
            if let Some(oid) = oid {
                return Ok(Some((path, oid)));
            }
        }
        Ok(None)
    }

    /// Adds `names` and what they import (the imports [`ProtoSources::closure`] follows);
    /// whether any of them was found.
    pub(crate) fn extend(
        &mut self,
        repo: &Repo,
        commit: &str,
        names: Vec<String>,
        blobs: &BlobCache,
    ) -> Result<bool, Error> {
        let mut queue: std::collections::VecDeque<String> = names
            .into_iter()
            .filter(|n| self.seen.insert(n.clone()))
            .collect();
        let mut found = false;
        while let Some(name) = queue.pop_front() {
            // A missing import: the compile fails on it as it would with every file read.
            let Some((path, oid)) = self.resolve(repo, commit, &name)? else {
                continue;
            };
            let Some(text) = blobs.text(repo, &oid, &path)? else {
                continue;
            };
            found = true;
            for dep in editions::imports(&text.0) {
                if self.seen.insert(dep.clone()) {
                    queue.push_back(dep);
                }
            }
            self.sources
                .files
                .insert(name.clone(), (path, text.0.clone()));
            if let Some(edition) = &text.1 {
                self.sources.editions.insert(name, edition.clone());
            }
        }
        Ok(found)
    }

    /// Every repository path looked up (found or not), sorted.
    pub(crate) fn probed(&self) -> Vec<String> {
        let mut probed = self.probed.clone();
        probed.sort();
        probed.dedup();
        probed
    }
}

/// A file's text as the sources keep it: an editions file's proto2 rewrite and its edition (or
/// why it cannot be read); other files as they are.
type Lowered = (String, Option<Result<Edition, Unsupported>>);

fn lowered(text: String) -> Lowered {
    match editions::lower(&text) {
        Ok(None) => (text, None),
        Ok(Some(lowered)) => (lowered.text, Some(Ok(lowered.edition))),
        Err(unsupported) => (text, Some(Err(unsupported))),
    }
}

/// The lowered texts of the blobs a history walk has read, by object name: a file unchanged
/// over a hundred commits is read and lowered once.
#[derive(Default)]
pub(crate) struct BlobCache {
    texts: Mutex<HashMap<String, Arc<Lowered>>>,
}

impl BlobCache {
    /// The text of blob `oid` (at `path`, for errors), `None` when it is no blob.
    fn text(&self, repo: &Repo, oid: &str, path: &str) -> Result<Option<Arc<Lowered>>, Error> {
        if let Some(t) = self.lock().get(oid) {
            return Ok(Some(Arc::clone(t)));
        }
        let Some(bytes) = repo.blob(oid)? else {
            return Ok(None);
        };
        let text = String::from_utf8(bytes).map_err(|_| Error::format(path, "not valid UTF-8"))?;
        let text = Arc::new(lowered(text));
        self.lock().insert(oid.to_owned(), Arc::clone(&text));
        Ok(Some(text))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Lowered>>> {
        self.texts.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `dir/name` (`name` for the repository root).
fn join_dir(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// `path` below `dir` (normalized), `None` when it is not under it.
fn strip_dir<'a>(dir: &str, path: &'a str) -> Option<&'a str> {
    if dir.is_empty() {
        return Some(path);
    }
    path.strip_prefix(dir)?.strip_prefix('/')
}

/// A proto directory as it is listed: no leading `./`, no trailing `/`, `.` for the root.
pub(crate) fn normalize_dir(dir: &str) -> &str {
    let d = dir.trim_start_matches("./").trim_end_matches('/');
    if d == "." {
        ""
    } else {
        d
    }
}

/// Opens `names` (and their imports) with protox, source info included.
fn open_all(
    resolver: ChainFileResolver,
    names: &[String],
) -> Result<protox::Compiler, protox::Error> {
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.include_imports(true).include_source_info(true);
    for name in names {
        compiler.open_file(name)?;
    }
    Ok(compiler)
}

struct MemoryResolver {
    sources: HashMap<String, String>,
}

impl FileResolver for MemoryResolver {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        match self.sources.get(name) {
            Some(text) => parse_file(name, text),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// The parses of one diff: each distinct file (import name and text) is parsed once, by
/// whichever side needs it first, and both sides build from the result. Lives as long as the
/// diff.
///
/// Each side says up front which files it has ([`expect`](Self::expect)); once every side has
/// ([`seal`](Self::seal)), the last side to open a file takes its parse rather than a copy.
#[derive(Default)]
pub(crate) struct ParseCache {
    /// Import name to each text seen under it and its parse.
    files: Mutex<HashMap<String, Vec<(String, ParseSlot)>>>,
    sealed: AtomicBool,
}

type ParseSlot = Arc<Slot>;

#[derive(Default)]
struct Slot {
    /// The spans of the parse, `None` when the file does not parse.
    parsed: OnceLock<Option<Arc<Spans>>>,
    /// Sides still to open the file, and the parsed descriptor (until the last one takes it).
    state: Mutex<(usize, Option<FileDescriptorProto>)>,
}

/// protox's parse of `text` as `name`, after the bounds of [`crate::proto_limits`]: protox and
/// prost-reflect recurse over nesting without a bound of their own.
fn parse_file(name: &str, text: &str) -> Result<File, protox::Error> {
    crate::proto_limits::check_source(text)
        .map_err(|limit| protox::Error::new(std::io::Error::other(format!("{name}: {limit}"))))?;
    File::from_source(name, text)
}

/// Parses `text` as `name`, moving the source info out into the spans of the declarations.
fn parse(name: &str, text: &str) -> Result<(FileDescriptorProto, Arc<Spans>), protox::Error> {
    let mut descriptor = FileDescriptorProto::from(parse_file(name, text)?);
    let spans = Arc::new(Spans::from_info(descriptor.source_code_info.take()));
    Ok((descriptor, spans))
}

impl ParseCache {
    fn slot(&self, name: &str, text: &str) -> ParseSlot {
        let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        let versions = files.entry(name.to_owned()).or_default();
        match versions.iter().find(|(t, _)| t == text) {
            Some((_, slot)) => Arc::clone(slot),
            None => {
                let slot = ParseSlot::default();
                versions.push((text.to_owned(), Arc::clone(&slot)));
                slot
            }
        }
    }

    /// The parse of `text` as `name`, parsing it unless it already is (or is being parsed).
    fn parsed(&self, name: &str, text: &str) -> ParseSlot {
        let slot = self.slot(name, text);
        slot.parsed.get_or_init(|| {
            let (descriptor, spans) = parse(name, text).ok()?;
            slot.state.lock().unwrap_or_else(PoisonError::into_inner).1 = Some(descriptor);
            Some(spans)
        });
        slot
    }

    /// A side will open (some of) the files of `sources`.
    pub(crate) fn expect(&self, sources: &ProtoSources) {
        for (name, (_, text)) in &sources.files {
            let slot = self.slot(name, text);
            slot.state.lock().unwrap_or_else(PoisonError::into_inner).0 += 1;
        }
    }

    /// Every side has said what it will open.
    pub(crate) fn seal(&self) {
        self.sealed.store(true, Ordering::Release);
    }

    /// The parse of `text` as `name` for a side that opens it: taken by the last such side,
    /// copied for the others. An error when it does not parse.
    fn open(
        &self,
        name: &str,
        text: &str,
    ) -> Result<(FileDescriptorProto, Arc<Spans>), protox::Error> {
        let slot = self.parsed(name, text);
        let Some(Some(spans)) = slot.parsed.get() else {
            // It does not parse: protox says why.
            return parse(name, text);
        };
        let sealed = self.sealed.load(Ordering::Acquire);
        let mut state = slot.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.0 = state.0.saturating_sub(1);
        let descriptor = if sealed && state.0 == 0 {
            state.1.take()
        } else {
            state.1.clone()
        };
        drop(state);
        match descriptor {
            Some(descriptor) => Ok((descriptor, Arc::clone(spans))),
            // Taken already (a side opened it more often than it said): parse it again.
            None => parse(name, text),
        }
    }
}

/// Sources resolved through a [`ParseCache`]; records the spans of each file it opens.
struct CachedResolver {
    sources: HashMap<String, String>,
    cache: Arc<ParseCache>,
    spans: Arc<Mutex<HashMap<String, Arc<Spans>>>>,
    /// The names asked for that are not among the sources.
    missing: Arc<Mutex<Vec<String>>>,
}

impl FileResolver for CachedResolver {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        let Some(text) = self.sources.get(name) else {
            self.missing
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(name.to_owned());
            return Err(protox::Error::file_not_found(name));
        };
        let (descriptor, spans) = self.cache.open(name, text)?;
        self.spans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_owned(), spans);
        Ok(File::from_file_descriptor_proto(descriptor))
    }
}

/// A compiled schema: the descriptor pool (custom options intact) and where each file lives.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// Every compiled file and its imports.
    pub pool: DescriptorPool,
    /// Import name to repository-relative path, for locations.
    pub repo_paths: BTreeMap<String, String>,
    /// Spans of the declarations of files whose source info is not in the pool, by import name.
    pub(crate) spans: HashMap<String, Arc<Spans>>,
    /// Import name to the edition of each editions file (compiled as its proto2 rewrite, or
    /// lowered from an image): the features of its fields are resolved from it.
    pub editions: BTreeMap<String, Edition>,
}

impl Compiled {
    /// A schema from an encoded `FileDescriptorSet` (a snapshot's `descriptor_set.bin`).
    pub fn decode(bytes: &[u8], what: &str) -> Result<Compiled, Error> {
        let pool = DescriptorPool::decode(bytes).map_err(|e| Error::Descriptors {
            what: what.to_owned(),
            message: e.to_string(),
        })?;
        Ok(Compiled {
            pool,
            repo_paths: BTreeMap::new(),
            spans: HashMap::new(),
            editions: BTreeMap::new(),
        })
    }
}

impl Compiled {
    /// A schema from a `FileDescriptorSet` image as `protoc --include_imports
    /// --include_source_info --descriptor_set_out` or `buf build -o` write it; editions files
    /// in it are read as `editions::lower_image` says. `what` names it in errors.
    pub fn from_image(bytes: &[u8], what: &str) -> Result<Compiled, Error> {
        let (bytes, editions) = editions::lower_image(bytes).map_err(|e| Error::Descriptors {
            what: what.to_owned(),
            message: e.to_string(),
        })?;
        let mut compiled = Compiled::decode(&bytes, what)?;
        compiled.editions = editions;
        Ok(compiled)
    }
}

impl ProtoSources {
    /// Whether a file (import name or repository path) is among the sources.
    pub fn has_file(&self, file: &str) -> bool {
        self.files.contains_key(file) || self.files.values().any(|(p, _)| p == file)
    }

    /// Whether both sides have exactly the same files and texts (the diff then compiles once).
    pub fn same_as(&self, other: &ProtoSources) -> bool {
        self.files == other.files && self.editions == other.editions
    }
}
