//! Reading a repository's files at a revision (git objects, no checkout) or in the working tree.
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::odb::{Answer, Odb};
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
/// Git reads are `git cat-file --batch` requests: a directory listing walks the tree objects
/// level by level and a set of files is one batch of requests. Each request is answered
/// in-process where [`Odb`] can (a plain repository and a simple revision: no git process at
/// all), else by one long-lived `git cat-file --batch` shared by clones of the `Repo`, started on
/// first use. Listings are cached per revision and directory.
#[derive(Debug, Clone)]
pub struct Repo {
    root: PathBuf,
    trees: Arc<Mutex<Listings>>,
    /// Held while trees are walked: a listing under way is waited for, not walked twice.
    walking: Arc<Mutex<()>>,
    cat: Arc<Mutex<Option<CatFile>>>,
    /// The object store read in-process, opened on first use; `None` when git must be asked.
    odb: Arc<OnceLock<Option<Odb>>>,
}

/// What the git reads of a `Repo` have seen so far.
#[derive(Debug, Default)]
struct Listings {
    /// (revision, directory) to the paths under it.
    dirs: HashMap<(String, String), Arc<Vec<String>>>,
    /// Revision to the object name of each path listed at it.
    oids: HashMap<String, HashMap<String, String>>,
    /// Revision to the commit it names, as seen while listing.
    commits: HashMap<String, String>,
    /// Contents of the blobs read ahead, by object name.
    blobs: HashMap<String, Vec<u8>>,
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

/// One object as `git cat-file --batch` prints it.
struct Object {
    /// Hex object name.
    oid: String,
    /// `blob`, `tree`, `commit` or `tag`.
    kind: String,
    body: Vec<u8>,
}

impl CatFile {
    /// Answers every request (an object name per line, git's `<rev>:<path>` syntax included) in
    /// order: `None` where git has no such object. The requests are written from a second thread
    /// while this one reads the answers, so neither side can block on a full pipe.
    fn batch(&mut self, requests: &[String]) -> Result<Vec<Option<Object>>, String> {
        let mut text = String::new();
        for r in requests {
            text.push_str(r);
            text.push('\n');
        }
        let CatFile {
            child,
            stdin,
            stdout,
        } = self;
        std::thread::scope(|scope| {
            let writer = scope.spawn(move || {
                stdin.write_all(text.as_bytes())?;
                stdin.flush()
            });
            let mut out = Vec::with_capacity(requests.len());
            let mut failed = None;
            for _ in requests {
                match read_object(stdout) {
                    Ok(object) => out.push(object),
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            if failed.is_some() {
                // The writer may be blocked on a pipe git no longer drains.
                if let Some(child) = child.as_mut() {
                    let _ = child.kill();
                }
            }
            let written = writer.join();
            match (failed, written) {
                (Some(e), _) => Err(e),
                (None, Ok(Ok(()))) => Ok(out),
                (None, Ok(Err(e))) => Err(e.to_string()),
                (None, Err(_)) => Err("the request writer panicked".to_owned()),
            }
        })
    }
}

/// Reads one answer of `git cat-file --batch`.
fn read_object(stdout: &mut BufReader<ChildStdout>) -> Result<Option<Object>, String> {
    let mut header = String::new();
    stdout.read_line(&mut header).map_err(|e| e.to_string())?;
    let header = header.trim_end();
    if header.is_empty() {
        return Err("git cat-file stopped answering".into());
    }
    if header.ends_with(" missing") || header.ends_with(" ambiguous") {
        return Ok(None);
    }
    let mut parts = header.rsplitn(3, ' ');
    let size: usize = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("unexpected header {header:?}"))?;
    let kind = parts.next().unwrap_or("").to_owned();
    let oid = parts.next().unwrap_or("").to_owned();
    let mut body = vec![0; size + 1];
    stdout.read_exact(&mut body).map_err(|e| e.to_string())?;
    body.pop();
    Ok(Some(Object { oid, kind, body }))
}

/// The entries of a tree object: (name, is a tree, hex object name).
fn tree_entries(tree: &Object) -> Result<Vec<(String, bool, String)>, String> {
    // Each entry is `<octal mode> <name>\0<raw object name>`; the raw name is as long as the
    // tree's own (SHA-1 or SHA-256 repositories).
    let hash_len = tree.oid.len() / 2;
    let mut entries = Vec::new();
    let mut rest = tree.body.as_slice();
    while !rest.is_empty() {
        let bad = || format!("malformed tree object {}", tree.oid);
        let space = rest.iter().position(|b| *b == b' ').ok_or_else(bad)?;
        let nul = rest.iter().position(|b| *b == 0).ok_or_else(bad)?;
        if nul < space || rest.len() < nul + 1 + hash_len {
            return Err(bad());
        }
        let mode = &rest[..space];
        let name = String::from_utf8_lossy(&rest[space + 1..nul]).into_owned();
        let hash = &rest[nul + 1..nul + 1 + hash_len];
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        entries.push((name, mode == b"40000", hex));
        rest = &rest[nul + 1 + hash_len..];
    }
    Ok(entries)
}

impl Repo {
    /// The repository whose top-level directory is `root`.
    pub fn new(root: impl Into<PathBuf>) -> Repo {
        Repo {
            root: root.into(),
            trees: Arc::default(),
            walking: Arc::default(),
            cat: Arc::default(),
            odb: Arc::default(),
        }
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
        if let Some(commit) = self
            .trees
            .lock()
            .ok()
            .and_then(|m| m.commits.get(rev).cloned())
        {
            return Ok(commit);
        }
        let spec = format!("{rev}^{{commit}}");
        if !spec.contains('\n') {
            if let [Some(object)] = self.objects(std::slice::from_ref(&spec))?.as_slice() {
                if object.kind == "commit" {
                    return Ok(object.oid.clone());
                }
            }
        }
        // Not a commit: git's own words for why.
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
                files.extend(
                    self.tree(rev, dir)?
                        .iter()
                        .filter(|f| f.ends_with(suffix))
                        .cloned(),
                );
            }
        }
        files.sort();
        Ok(files)
    }

    /// Reads ahead, at `rev`, the files under each directory (repository-relative, as given to
    /// [`list_files`](Self::list_files)) whose names end with its suffix: the directories are
    /// listed together, one batch per tree level, and the files read in one more batch, so that
    /// later listings and reads of them are answered from what this `Repo` has seen. Errors are
    /// left to those later calls.
    pub(crate) fn prefetch(&self, rev: &Revision, wants: &[(&str, &str)]) {
        let Revision::Git(rev) = rev else {
            return;
        };
        let _walking = self.walking.lock().unwrap_or_else(PoisonError::into_inner);
        let dirs: Vec<&str> = wants.iter().map(|(d, _)| d.trim_end_matches('/')).collect();
        let Ok(listed) = self.trees_walked(rev, &dirs) else {
            return;
        };
        let mut oids: Vec<String> = match self.trees.lock() {
            Ok(m) => {
                let known = m.oids.get(rev);
                wants
                    .iter()
                    .zip(&listed)
                    .flat_map(|((_, suffix), files)| {
                        files.iter().filter(move |f| f.ends_with(suffix))
                    })
                    .filter_map(|f| known?.get(f))
                    .filter(|oid| !m.blobs.contains_key(*oid))
                    .cloned()
                    .collect()
            }
            Err(_) => return,
        };
        oids.sort_unstable();
        oids.dedup();
        let Ok(objects) = self.objects(&oids) else {
            return;
        };
        if let Ok(mut m) = self.trees.lock() {
            for (oid, object) in oids.into_iter().zip(objects) {
                if let Some(object) = object.filter(|o| o.kind == "blob") {
                    m.blobs.insert(oid, object.body);
                }
            }
        }
    }

    /// Every file path (blobs, links, submodules) under `dir` in the tree of `rev`.
    fn tree(&self, rev: &str, dir: &str) -> Result<Arc<Vec<String>>, Error> {
        Ok(self.trees(rev, &[dir])?.pop().unwrap_or_default())
    }

    /// [`tree`](Self::tree) of each of `dirs`, walking the uncached ones together.
    fn trees(&self, rev: &str, dirs: &[&str]) -> Result<Vec<Arc<Vec<String>>>, Error> {
        let _walking = self.walking.lock().unwrap_or_else(PoisonError::into_inner);
        self.trees_walked(rev, dirs)
    }

    /// [`trees`](Self::trees), the caller holding `walking`.
    fn trees_walked(&self, rev: &str, dirs: &[&str]) -> Result<Vec<Arc<Vec<String>>>, Error> {
        let cached: Vec<Option<Arc<Vec<String>>>> = match self.trees.lock() {
            Ok(m) => dirs
                .iter()
                .map(|d| m.dirs.get(&(rev.to_owned(), (*d).to_owned())).cloned())
                .collect(),
            Err(_) => vec![None; dirs.len()],
        };
        let mut missing: Vec<&str> = dirs
            .iter()
            .zip(&cached)
            .filter(|(_, c)| c.is_none())
            .map(|(d, _)| *d)
            .collect();
        missing.sort_unstable();
        missing.dedup();
        let walked = if missing.is_empty() {
            Vec::new()
        } else {
            self.walk_trees(rev, &missing)?
        };
        let mut fresh = HashMap::new();
        let mut listings = self.trees.lock().ok();
        for (dir, (listed, commit)) in missing.iter().zip(walked) {
            let files: Arc<Vec<String>> = Arc::new(listed.iter().map(|(p, _)| p.clone()).collect());
            if let Some(m) = listings.as_mut() {
                m.dirs
                    .insert((rev.to_owned(), (*dir).to_owned()), Arc::clone(&files));
                let oids = m.oids.entry(rev.to_owned()).or_default();
                oids.extend(listed.into_iter().filter_map(|(p, o)| Some((p, o?))));
                if let Some(commit) = commit {
                    m.commits.insert(rev.to_owned(), commit);
                }
            }
            fresh.insert(*dir, files);
        }
        Ok(dirs
            .iter()
            .zip(cached)
            .map(|(d, c)| c.or_else(|| fresh.get(d).cloned()).unwrap_or_default())
            .collect())
    }

    /// (path, object name when known) of every file under each of `dirs` at `rev`, walking the
    /// tree objects one level per batch, and the commit `rev` names when git says so on the way.
    #[allow(clippy::type_complexity)]
    fn walk_trees(
        &self,
        rev: &str,
        dirs: &[&str],
    ) -> Result<Vec<(Vec<(String, Option<String>)>, Option<String>)>, Error> {
        // Tree paths never have empty, `.` or `..` components, and a newline would end a request
        // early: for such names, and for anything git does not take for a tree, `git ls-tree`
        // answers (with git's own words when it is an error).
        let plain = |s: &str| !s.contains('\n');
        let walkable = |dir: &str| {
            plain(dir)
                && (dir.is_empty()
                    || !dir
                        .split('/')
                        .any(|c| c.is_empty() || c == "." || c == ".."))
        };
        let ls_tree_all = || -> Result<Vec<_>, Error> {
            dirs.iter()
                .map(|d| Ok((self.ls_tree(rev, d)?, None)))
                .collect()
        };
        if !plain(rev) {
            return ls_tree_all();
        }
        let mut requests = vec![format!("{rev}^{{commit}}"), format!("{rev}^{{tree}}")];
        requests.extend(
            dirs.iter()
                .filter(|d| walkable(d) && !d.is_empty())
                .map(|d| format!("{rev}:{d}")),
        );
        let mut answers = self.objects(&requests)?.into_iter();
        let commit = answers
            .next()
            .flatten()
            .filter(|c| c.kind == "commit")
            .map(|c| c.oid);
        let Some(root) = answers.next().flatten().filter(|t| t.kind == "tree") else {
            return ls_tree_all();
        };
        let mut out: Vec<(Vec<(String, Option<String>)>, Option<String>)> = Vec::new();
        // (which dir, path prefix, tree) of each directory of the level being read.
        let mut level: Vec<(usize, String, Arc<Object>)> = Vec::new();
        let root = Arc::new(root);
        for (i, dir) in dirs.iter().enumerate() {
            out.push((Vec::new(), commit.clone()));
            if !walkable(dir) {
                out[i].0 = self.ls_tree(rev, dir)?;
            } else if dir.is_empty() {
                level.push((i, String::new(), Arc::clone(&root)));
            } else if let Some(tree) = answers.next().flatten().filter(|t| t.kind == "tree") {
                level.push((i, format!("{dir}/"), Arc::new(tree)));
            }
        }
        while !level.is_empty() {
            let mut next = Vec::new();
            let mut requests = Vec::new();
            for (i, prefix, tree) in &level {
                let entries =
                    tree_entries(tree).map_err(|e| git_error(&["cat-file", "--batch"], e))?;
                for (name, is_tree, oid) in entries {
                    if is_tree {
                        next.push((*i, format!("{prefix}{name}/")));
                        requests.push(oid);
                    } else {
                        out[*i].0.push((format!("{prefix}{name}"), Some(oid)));
                    }
                }
            }
            level = next
                .into_iter()
                .zip(self.objects(&requests)?)
                .filter_map(|((i, prefix), tree)| {
                    Some((i, prefix, Arc::new(tree.filter(|t| t.kind == "tree")?)))
                })
                .collect();
        }
        Ok(out)
    }

    /// The files under `dir` at `rev` as `git ls-tree` lists them.
    fn ls_tree(&self, rev: &str, dir: &str) -> Result<Vec<(String, Option<String>)>, Error> {
        let out = self.git(&["ls-tree", "--full-tree", "-r", "-z", "--name-only", rev])?;
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        Ok(out
            .split(|b| *b == 0)
            .filter(|n| !n.is_empty())
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .filter(|n| n.starts_with(&prefix))
            .map(|n| (n, None))
            .collect())
    }

    /// The contents of repository-relative `paths` at `rev`; a path that does not exist there is
    /// absent from the map. Git objects are read in one batch.
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
                if rev.contains('\n') {
                    return Ok(files);
                }
                // Listed paths by object name (git then reads one object, not the trees above
                // it), from what was read ahead when it was.
                let mut wanted: Vec<&String> = Vec::new();
                let mut requests: Vec<String> = Vec::new();
                {
                    let m = self.trees.lock().unwrap_or_else(PoisonError::into_inner);
                    let known = m.oids.get(rev.as_str());
                    for path in paths.iter().filter(|p| !p.contains('\n')) {
                        match known.and_then(|k| k.get(path.as_str())) {
                            Some(oid) => match m.blobs.get(oid) {
                                Some(body) => {
                                    files.insert(path.clone(), body.clone());
                                }
                                None => {
                                    wanted.push(path);
                                    requests.push(oid.clone());
                                }
                            },
                            None => {
                                wanted.push(path);
                                requests.push(format!("{rev}:{path}"));
                            }
                        }
                    }
                }
                for (path, object) in wanted.into_iter().zip(self.objects(&requests)?) {
                    if let Some(object) = object.filter(|o| o.kind == "blob") {
                        files.insert(path.clone(), object.body);
                    }
                }
            }
        }
        Ok(files)
    }

    /// Answers `requests` as `git cat-file --batch` would: in-process where the object store can
    /// (see [`Odb`]), the rest from the repository's `git cat-file --batch` (started on first
    /// use).
    fn objects(&self, requests: &[String]) -> Result<Vec<Option<Object>>, Error> {
        let Some(odb) = self.odb.get_or_init(|| Odb::open(&self.root)) else {
            return self.cat_file(requests);
        };
        let mut out = Vec::with_capacity(requests.len());
        let mut asked = Vec::new();
        let mut rest = Vec::new();
        for (i, request) in requests.iter().enumerate() {
            match odb.answer(request) {
                Answer::Found(oid, kind, body) => out.push(Some(Object {
                    oid: crate::odb::to_hex(&oid),
                    kind: kind.name().to_owned(),
                    body,
                })),
                Answer::Missing => out.push(None),
                Answer::Unknown => {
                    out.push(None);
                    asked.push(i);
                    rest.push(request.clone());
                }
            }
        }
        if !rest.is_empty() {
            for (i, object) in asked.into_iter().zip(self.cat_file(&rest)?) {
                out[i] = object;
            }
        }
        Ok(out)
    }

    /// The parents and the committer time (seconds since the epoch) of the commit `oid` (full
    /// hex name); `None` when there is no such commit.
    pub(crate) fn commit_info(&self, oid: &str) -> Result<Option<(Vec<String>, i64)>, Error> {
        let Some(Some(object)) = self.objects(&[oid.to_owned()])?.pop() else {
            return Ok(None);
        };
        if object.kind != "commit" {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&object.body);
        let mut parents = Vec::new();
        let mut time = 0;
        // The header ends at the first empty line; the message may contain anything.
        for line in text.lines().take_while(|l| !l.is_empty()) {
            if let Some(p) = line.strip_prefix("parent ") {
                parents.push(p.trim().to_owned());
            } else if let Some(c) = line.strip_prefix("committer ") {
                // `Name <email> SECONDS ZONE`.
                time = c
                    .rsplit(' ')
                    .nth(1)
                    .and_then(|t| t.parse().ok())
                    .unwrap_or(0);
            }
        }
        Ok(Some((parents, time)))
    }

    /// The object name at `commit:path` for each of `paths` (`None` where there is none).
    pub(crate) fn path_oids(
        &self,
        commit: &str,
        paths: &[&str],
    ) -> Result<Vec<Option<String>>, Error> {
        let requests: Vec<String> = paths
            .iter()
            .map(|p| {
                if p.is_empty() {
                    format!("{commit}^{{tree}}")
                } else {
                    format!("{commit}:{p}")
                }
            })
            .collect();
        Ok(self
            .objects(&requests)?
            .into_iter()
            .map(|o| o.map(|o| o.oid))
            .collect())
    }

    /// Asks the repository's `git cat-file --batch` (started on first use) for `requests`.
    fn cat_file(&self, requests: &[String]) -> Result<Vec<Option<Object>>, Error> {
        let args = ["cat-file", "--batch"];
        if requests.is_empty() {
            return Ok(Vec::new());
        }
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
            Some(cat) => cat.batch(requests),
            None => Err("git cat-file is not running".to_owned()),
        };
        if result.is_err() {
            // A broken reader is not reused.
            *guard = None;
        }
        result.map_err(|e| git_error(&args, e))
    }
}

fn git_error(args: &[&str], message: String) -> Error {
    Error::Git {
        args: args.join(" "),
        message,
    }
}
