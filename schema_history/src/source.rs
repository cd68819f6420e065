//! Reading a repository's files at a revision (git objects, no checkout) or in the working tree,
//! and compiling its protos in memory with protox.
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};

use prost_reflect::DescriptorPool;
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};

use crate::Error;

/// Which state of a repository to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revision {
    /// The files as they are on disk.
    WorkTree,
    /// A git revision (commit, branch, tag; anything `git rev-parse` accepts).
    Git(String),
}

impl std::fmt::Display for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Revision::WorkTree => f.write_str("working tree"),
            Revision::Git(rev) => f.write_str(rev),
        }
    }
}

/// A git repository (or a plain directory, for working-tree reads only).
///
/// Git reads are cheap after the first: the tree listing of each revision is cached, and objects
/// are read through one long-lived `git cat-file --batch` shared by clones of the `Repo`.
#[derive(Debug, Clone)]
pub struct Repo {
    root: PathBuf,
    trees: Arc<Mutex<HashMap<String, Arc<Vec<String>>>>>,
    cat: Arc<Mutex<Option<CatFile>>>,
}

/// A running `git cat-file --batch`.
#[derive(Debug)]
struct CatFile {
    child: Option<Child>,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Drop for CatFile {
    fn drop(&mut self) {
        // Kill and reap git off the caller's path: on a loaded machine that takes a while.
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            std::thread::spawn(move || {
                let _ = child.wait();
            });
        }
    }
}

impl Repo {
    /// The repository whose top-level directory is `root`.
    pub fn new(root: impl Into<PathBuf>) -> Repo {
        Repo {
            root: root.into(),
            trees: Arc::default(),
            cat: Arc::default(),
        }
    }

    /// Every file path of the tree of `rev` (one `git ls-tree`, cached).
    fn tree(&self, rev: &str) -> Result<Arc<Vec<String>>, Error> {
        if let Some(t) = self.trees.lock().ok().and_then(|m| m.get(rev).cloned()) {
            return Ok(t);
        }
        let out = self.git(&["ls-tree", "--full-tree", "-r", "-z", "--name-only", rev])?;
        let files: Vec<String> = out
            .split(|b| *b == 0)
            .filter(|n| !n.is_empty())
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect();
        let files = Arc::new(files);
        if let Ok(mut m) = self.trees.lock() {
            m.insert(rev.to_owned(), files.clone());
        }
        Ok(files)
    }

    /// The repository's top-level directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Runs `git -C ROOT ARGS`, returning stdout; a non-zero status is an error carrying stderr.
    pub fn git(&self, args: &[&str]) -> Result<Vec<u8>, Error> {
        let output = Command::new("git")
            .arg("-C")
            .arg(&self.root)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| git_error(args, e.to_string()))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            return Err(git_error(args, stderr));
        }
        Ok(output.stdout)
    }

    fn git_line(&self, args: &[&str]) -> Result<String, Error> {
        let out = self.git(args)?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// The full commit hash a revision names.
    pub fn resolve(&self, rev: &str) -> Result<String, Error> {
        let spec = format!("{rev}^{{commit}}");
        self.git_line(&["rev-parse", "--verify", "--quiet", &spec])
    }

    /// The abbreviated hash of `HEAD`, if the directory is a git repository with a commit.
    pub fn short_head(&self) -> Option<String> {
        self.git_line(&["rev-parse", "--short=10", "HEAD"]).ok()
    }

    /// Whether the working tree differs from `HEAD` under `paths`.
    pub fn is_dirty(&self, paths: &[&str]) -> bool {
        let mut args = vec!["status", "--porcelain", "--"];
        args.extend_from_slice(paths);
        self.git(&args).map(|o| !o.is_empty()).unwrap_or(false)
    }

    /// The merge base of `HEAD` with the first of `main`, `origin/main`, `master` that exists.
    pub fn default_base(&self) -> Result<String, Error> {
        let mut last = None;
        for candidate in ["main", "origin/main", "master", "origin/master"] {
            match self.git_line(&["merge-base", "HEAD", candidate]) {
                Ok(base) if !base.is_empty() => return Ok(base),
                Ok(_) => {}
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| git_error(&["merge-base"], "no main branch".into())))
    }

    /// Repository-relative paths of the files under `dir` (repository-relative) whose names end
    /// with `suffix`, sorted. A missing directory gives an empty list.
    pub fn list_files(
        &self,
        rev: &Revision,
        dir: &str,
        suffix: &str,
    ) -> Result<Vec<String>, Error> {
        let dir = dir.trim_end_matches('/');
        let mut files = Vec::new();
        match rev {
            Revision::WorkTree => {
                let base = self.root.join(dir);
                if !base.is_dir() {
                    return Ok(files);
                }
                for entry in walkdir::WalkDir::new(&base).sort_by_file_name() {
                    let entry = entry
                        .map_err(|e| Error::io(&base, std::io::Error::other(e.to_string())))?;
                    if !entry.file_type().is_file() {
                        continue;
                    }
                    let Ok(rel) = entry.path().strip_prefix(&self.root) else {
                        continue;
                    };
                    let rel = rel.to_string_lossy().replace('\\', "/");
                    if rel.ends_with(suffix) {
                        files.push(rel);
                    }
                }
            }
            Revision::Git(rev) => {
                let prefix = if dir.is_empty() {
                    String::new()
                } else {
                    format!("{dir}/")
                };
                files.extend(
                    self.tree(rev)?
                        .iter()
                        .filter(|f| f.starts_with(&prefix) && f.ends_with(suffix))
                        .cloned(),
                );
            }
        }
        files.sort();
        Ok(files)
    }

    /// The contents of repository-relative `paths` at `rev`; a path that does not exist there is
    /// absent from the map. Git objects are read with one `git cat-file --batch`.
    pub fn read_files(
        &self,
        rev: &Revision,
        paths: &[String],
    ) -> Result<BTreeMap<String, Vec<u8>>, Error> {
        let mut files = BTreeMap::new();
        match rev {
            Revision::WorkTree => {
                for path in paths {
                    let full = self.root.join(path);
                    match std::fs::read(&full) {
                        Ok(bytes) => {
                            files.insert(path.clone(), bytes);
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(Error::io(full, e)),
                    }
                }
            }
            Revision::Git(rev) => {
                if paths.is_empty() {
                    return Ok(files);
                }
                let contents = self.cat_files(rev, paths)?;
                for (path, bytes) in paths.iter().zip(contents) {
                    if let Some(bytes) = bytes {
                        files.insert(path.clone(), bytes);
                    }
                }
            }
        }
        Ok(files)
    }

    fn cat_files(&self, rev: &str, paths: &[String]) -> Result<Vec<Option<Vec<u8>>>, Error> {
        let args = ["cat-file", "--batch"];
        let mut guard = self
            .cat
            .lock()
            .map_err(|_| git_error(&args, "the reader lock is poisoned".into()))?;
        if guard.is_none() {
            let mut child = Command::new("git")
                .arg("-C")
                .arg(&self.root)
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| git_error(&args, e.to_string()))?;
            let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                let _ = child.kill();
                return Err(git_error(&args, "no pipes to git".into()));
            };
            *guard = Some(CatFile {
                child: Some(child),
                stdin,
                stdout: BufReader::new(stdout),
            });
        }
        let result = match guard.as_mut() {
            Some(cat) => read_objects(cat, rev, paths),
            None => Err("git cat-file is not running".to_owned()),
        };
        if result.is_err() {
            // A broken reader is not reused.
            *guard = None;
        }
        result.map_err(|e| git_error(&args, e))
    }
}

/// Asks a running `git cat-file --batch` for `rev:path` of each path, one at a time (git flushes
/// after each object, so requests and answers never fill a pipe).
fn read_objects(
    cat: &mut CatFile,
    rev: &str,
    paths: &[String],
) -> Result<Vec<Option<Vec<u8>>>, String> {
    let mut out = Vec::with_capacity(paths.len());
    for path in paths {
        if path.contains('\n') {
            out.push(None);
            continue;
        }
        writeln!(cat.stdin, "{rev}:{path}").map_err(|e| e.to_string())?;
        cat.stdin.flush().map_err(|e| e.to_string())?;
        let mut header = String::new();
        cat.stdout
            .read_line(&mut header)
            .map_err(|e| e.to_string())?;
        let header = header.trim_end();
        if header.is_empty() {
            return Err("git cat-file stopped answering".into());
        }
        if header.ends_with(" missing") || header.ends_with(" ambiguous") {
            out.push(None);
            continue;
        }
        let mut parts = header.rsplitn(3, ' ');
        let size: usize = parts
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("unexpected header {header:?}"))?;
        let kind = parts.next().unwrap_or("");
        let mut body = vec![0; size + 1];
        cat.stdout
            .read_exact(&mut body)
            .map_err(|e| e.to_string())?;
        body.pop();
        out.push((kind == "blob").then_some(body));
    }
    Ok(out)
}

fn git_error(args: &[&str], message: String) -> Error {
    Error::Git {
        args: args.join(" "),
        message,
    }
}

/// The `.proto` sources of one side, keyed by import name (the path below its proto directory).
#[derive(Debug, Clone, Default)]
pub struct ProtoSources {
    /// Import name to (repository-relative path, source text).
    files: BTreeMap<String, (String, String)>,
}

impl ProtoSources {
    /// Reads every `.proto` file under `proto_dirs` (repository-relative include paths, earlier
    /// ones shadowing later ones, as protoc's `-I`) at `rev`.
    pub fn load(repo: &Repo, rev: &Revision, proto_dirs: &[String]) -> Result<ProtoSources, Error> {
        let mut names: Vec<(String, String)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for dir in proto_dirs {
            let dir = normalize_dir(dir);
            for path in repo.list_files(rev, &dir, ".proto")? {
                let name = match dir.as_str() {
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
        let mut files = BTreeMap::new();
        for (name, path) in names {
            if let Some(bytes) = contents.remove(&path) {
                let text = String::from_utf8(bytes)
                    .map_err(|_| Error::format(&path, "not valid UTF-8"))?;
                files.insert(name, (path, text));
            }
        }
        Ok(ProtoSources { files })
    }

    /// Sources given directly: `(import name, text)`; the repository path is the import name.
    pub fn from_texts<I, N, T>(texts: I) -> ProtoSources
    where
        I: IntoIterator<Item = (N, T)>,
        N: Into<String>,
        T: Into<String>,
    {
        let files = texts
            .into_iter()
            .map(|(n, t)| {
                let n = n.into();
                (n.clone(), (n, t.into()))
            })
            .collect();
        ProtoSources { files }
    }

    /// The import names of every file, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// Compiles `files` (import names or repository paths; every file when empty) and their
    /// imports. `side` names the side in errors.
    pub fn compile(&self, files: &[String], side: &str) -> Result<Compiled, Error> {
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
        let sources: HashMap<String, String> = self
            .files
            .iter()
            .map(|(name, (_, text))| (name.clone(), text.clone()))
            .collect();
        let mut chain = ChainFileResolver::new();
        chain.add(MemoryResolver { sources });
        chain.add(GoogleFileResolver::new());
        let mut compiler = protox::Compiler::with_file_resolver(chain);
        compiler.include_imports(true).include_source_info(true);
        for name in &open {
            compiler.open_file(name).map_err(|e| Error::Compile {
                side: side.to_owned(),
                message: describe_protox_error(&e),
            })?;
        }
        let repo_paths = self
            .files
            .iter()
            .map(|(name, (path, _))| (name.clone(), path.clone()))
            .collect();
        Ok(Compiled {
            pool: compiler.descriptor_pool(),
            repo_paths,
        })
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

fn normalize_dir(dir: &str) -> String {
    let d = dir.trim_start_matches("./").trim_end_matches('/');
    if d == "." {
        String::new()
    } else {
        d.to_owned()
    }
}

fn describe_protox_error(e: &protox::Error) -> String {
    match e.file() {
        Some(file) if !e.to_string().contains(file) => format!("{file}: {e}"),
        _ => e.to_string(),
    }
}

struct MemoryResolver {
    sources: HashMap<String, String>,
}

impl FileResolver for MemoryResolver {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        match self.sources.get(name) {
            Some(text) => File::from_source(name, text),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// A compiled schema: the descriptor pool (custom options intact) and where each file lives.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// Every compiled file and its imports.
    pub pool: DescriptorPool,
    /// Import name to repository-relative path, for locations.
    pub repo_paths: BTreeMap<String, String>,
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
        })
    }
}

impl ProtoSources {
    /// Whether both sides have exactly the same files and texts (the diff then compiles once).
    pub fn same_as(&self, other: &ProtoSources) -> bool {
        self.files == other.files
    }
}
