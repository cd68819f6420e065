//! Reading a repository's files at a revision (git objects, no checkout) or in the working tree,
//! and compiling its protos in memory with protox.
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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
#[derive(Debug, Clone)]
pub struct Repo {
    root: PathBuf,
}

impl Repo {
    /// The repository whose top-level directory is `root`.
    pub fn new(root: impl Into<PathBuf>) -> Repo {
        Repo { root: root.into() }
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
                let spec = if dir.is_empty() { "." } else { dir };
                let out = self.git(&[
                    "ls-tree",
                    "--full-tree",
                    "-r",
                    "-z",
                    "--name-only",
                    rev,
                    "--",
                    spec,
                ])?;
                for name in out.split(|b| *b == 0) {
                    if name.is_empty() {
                        continue;
                    }
                    let name = String::from_utf8_lossy(name).into_owned();
                    if name.ends_with(suffix) {
                        files.push(name);
                    }
                }
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
        let mut child = Command::new("git")
            .arg("-C")
            .arg(&self.root)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| git_error(&args, e.to_string()))?;
        let mut request = String::new();
        for path in paths {
            request.push_str(rev);
            request.push(':');
            request.push_str(path);
            request.push('\n');
        }
        let stdin = child.stdin.take();
        let writer = std::thread::spawn(move || -> std::io::Result<()> {
            if let Some(mut stdin) = stdin {
                stdin.write_all(request.as_bytes())?;
            }
            Ok(())
        });
        let mut out = Vec::new();
        if let Some(mut stdout) = child.stdout.take() {
            stdout
                .read_to_end(&mut out)
                .map_err(|e| git_error(&args, e.to_string()))?;
        }
        let status = child.wait().map_err(|e| git_error(&args, e.to_string()))?;
        let _ = writer.join();
        if !status.success() {
            let mut stderr = String::new();
            if let Some(mut err) = child.stderr.take() {
                let _ = err.read_to_string(&mut stderr);
            }
            return Err(git_error(&args, stderr.trim().to_owned()));
        }
        parse_batch(&out, paths.len())
            .ok_or_else(|| git_error(&args, "unexpected output from git cat-file --batch".into()))
    }
}

/// Parses `git cat-file --batch` output: per request a header line `<sha> <type> <size>` and the
/// object, or `<name> missing`.
fn parse_batch(mut out: &[u8], count: usize) -> Option<Vec<Option<Vec<u8>>>> {
    let mut result = Vec::with_capacity(count);
    for _ in 0..count {
        let newline = out.iter().position(|b| *b == b'\n')?;
        let header = std::str::from_utf8(out.get(..newline)?).ok()?;
        out = out.get(newline + 1..)?;
        if header.ends_with(" missing") || header.ends_with(" ambiguous") {
            result.push(None);
            continue;
        }
        let mut parts = header.rsplitn(3, ' ');
        let size: usize = parts.next()?.parse().ok()?;
        let kind = parts.next()?;
        let body = out.get(..size)?.to_vec();
        out = out.get(size + 1..)?;
        result.push((kind == "blob").then_some(body));
    }
    Some(result)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cat_file_batch() {
        let out = b"abc blob 3\nfoo\nHEAD:x missing\ndef blob 0\n\n";
        let parsed = parse_batch(out, 3).unwrap();
        assert_eq!(parsed, vec![Some(b"foo".to_vec()), None, Some(Vec::new())]);
        assert!(parse_batch(b"abc blob 10\nfoo\n", 1).is_none());
    }
}
