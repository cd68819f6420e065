//! Reading a repository's files at a revision (git objects, no checkout) or in the working tree.
//!
//! Git is read by one implementation, the `gix` crate (its object database with packs and
//! deltas, references loose and packed, worktrees, and revision parsing: `HEAD~1`, abbreviated
//! names, `main^{tree}`, whatever `git rev-parse` takes), in-process: no `git` process on the
//! diff's path. Two commands still run `git` itself, because what they need from gix (its
//! `status` feature: the index, directory walks, attributes and filters) would add a large part
//! of gix for one yes/no answer: [`Repo::is_dirty`] (`git status --porcelain`) and [`Repo::git`]
//! for callers that want git's own output.
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

use gix::ObjectId;

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
/// The repository is opened (with gix, searching upwards from `root` as `git -C root` does) on
/// each thread's first git read. Listings are cached per revision and
/// directory, and the contents of files read ahead (`prefetch`) by object name.
#[derive(Debug, Clone)]
pub struct Repo {
    root: PathBuf,
    trees: Arc<Mutex<Listings>>,
    /// Held while trees are walked: a listing under way is waited for, not walked twice.
    walking: Arc<Mutex<()>>,
}

/// What the git reads of a `Repo` have seen so far.
#[derive(Debug, Default)]
struct Listings {
    /// (revision, directory) to the paths under it.
    dirs: HashMap<(String, String), Arc<Vec<String>>>,
    /// Revision to the object name of each path listed at it.
    oids: HashMap<String, HashMap<String, ObjectId>>,
    /// Revision to the commit it names, as seen while listing.
    commits: HashMap<String, String>,
    /// Contents of the blobs read ahead, by object name.
    blobs: HashMap<ObjectId, Vec<u8>>,
}

thread_local! {
    /// The repositories this thread has opened, by root, newest last. gix's handles are not
    /// `Send` without its `parallel` feature (thread pools this crate does not use), so each
    /// thread keeps its own; opening one (discovery, configuration) costs more than a read.
    static OPEN: RefCell<Vec<(PathBuf, gix::Repository)>> = const { RefCell::new(Vec::new()) };
}

/// How many repositories a thread keeps open (the diff reads one; tests make many).
const OPEN_PER_THREAD: usize = 4;

/// The object cache each thread's handle on the repository gets: trees read level by level and
/// commits walked by the history rules are read more than once.
const OBJECT_CACHE_BYTES: usize = 4 << 20;

/// Whether `path` (repository-relative, `/`-separated) can name a tree entry. Tree paths never
/// have empty, `.` or `..` components, so git finds nothing under such a path, and neither
/// may we (std's path parsing would quietly drop a `.`).
fn tree_path(path: &str) -> bool {
    path.split('/')
        .all(|c| !c.is_empty() && c != "." && c != "..")
}

impl Repo {
    /// The repository whose top-level directory is `root`.
    pub fn new(root: impl Into<PathBuf>) -> Repo {
        Repo {
            root: root.into(),
            trees: Arc::default(),
            walking: Arc::default(),
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
            .map_err(|e| git_error(&args.join(" "), e))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            return Err(git_error(&args.join(" "), stderr));
        }
        Ok(output.stdout)
    }

    /// A handle on the repository for this thread, opened on the thread's first use.
    fn open(&self) -> Result<gix::Repository, Error> {
        OPEN.with(|open| {
            if let Some(repo) = open.borrow().iter().find(|(root, _)| *root == self.root) {
                return Ok(repo.1.clone());
            }
            let mut repo = gix::discover(&self.root)
                .map_err(|e| git_error(&format!("open {}", self.root.display()), e))?;
            repo.object_cache_size_if_unset(OBJECT_CACHE_BYTES);
            let mut open = open.borrow_mut();
            if open.len() >= OPEN_PER_THREAD {
                open.remove(0);
            }
            open.push((self.root.clone(), repo.clone()));
            Ok(repo)
        })
    }

    /// The object `rev` names, and how errors name the request (`rev-parse REV^{KIND}`).
    fn named<'r>(
        repo: &'r gix::Repository,
        rev: &str,
        kind: &str,
    ) -> Result<(gix::Object<'r>, String), Error> {
        let what = format!("rev-parse {rev}^{{{kind}}}");
        let object = repo
            .rev_parse_single(rev)
            .map_err(|e| git_error(&what, e))?
            .object()
            .map_err(|e| git_error(&what, e))?;
        Ok((object, what))
    }

    /// The commit `rev` names (`rev^{commit}`).
    fn commit_of<'r>(repo: &'r gix::Repository, rev: &str) -> Result<gix::Commit<'r>, Error> {
        let (object, what) = Self::named(repo, rev, "commit")?;
        object.peel_to_commit().map_err(|e| git_error(&what, e))
    }

    /// The tree `rev` names (`rev^{tree}`).
    fn tree_of<'r>(repo: &'r gix::Repository, rev: &str) -> Result<gix::Tree<'r>, Error> {
        let (object, what) = Self::named(repo, rev, "tree")?;
        object.peel_to_tree().map_err(|e| git_error(&what, e))
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
        let repo = self.open()?;
        let id = Self::commit_of(&repo, rev)?.id;
        Ok(id.to_string())
    }

    /// The abbreviated hash of `HEAD`, if the directory is a git repository with a commit.
    pub fn short_head(&self) -> Option<String> {
        let repo = self.open().ok()?;
        let head = Self::commit_of(&repo, "HEAD").ok()?;
        // `git rev-parse --short=10`: ten digits, more only where ten are ambiguous.
        let short = head.id().shorten().ok()?.to_string();
        let hex = head.id.to_hex_with_len(10).to_string();
        Some(if short.len() > hex.len() { short } else { hex })
    }

    /// Whether the working tree differs from `HEAD` under `paths`.
    pub fn is_dirty(&self, paths: &[&str]) -> bool {
        let mut args = vec!["status", "--porcelain", "--"];
        args.extend_from_slice(paths);
        self.git(&args).map(|o| !o.is_empty()).unwrap_or(false)
    }

    /// The merge base of `HEAD` with the first of `main`, `origin/main`, `master` that exists.
    pub fn default_base(&self) -> Result<String, Error> {
        let repo = self.open()?;
        let head = Self::commit_of(&repo, "HEAD")?.id;
        let mut last = None;
        for candidate in ["main", "origin/main", "master", "origin/master"] {
            let base = Self::commit_of(&repo, candidate).and_then(|c| {
                repo.merge_base(head, c.id)
                    .map_err(|e| git_error(&format!("merge-base HEAD {candidate}"), e))
            });
            match base {
                Ok(base) => return Ok(base.to_string()),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| git_error("merge-base", "no main branch")))
    }

    /// Repository-relative paths of the files under `dir` (repository-relative) whose names end
    /// with `suffix`, sorted. A missing directory gives an empty list.
    pub fn list_files(
        &self,
        rev: &Revision,
        dir: &str,
        suffix: &str,
    ) -> Result<Vec<String>, Error> {
        self.list_files_within(rev, dir, suffix, &|_| true)
    }

    /// [`list_files`](Self::list_files) where the working tree's walk enters only the
    /// directories `enter` accepts (called with the entry's path below `dir`, in components);
    /// a git revision's listing is the whole tree's, cached, whatever `enter` says. For callers
    /// that know the depth their files are at (a golden's case directories hold hundreds of
    /// files that are not manifests).
    pub(crate) fn list_files_within(
        &self,
        rev: &Revision,
        dir: &str,
        suffix: &str,
        enter: &dyn Fn(&[&str]) -> bool,
    ) -> Result<Vec<String>, Error> {
        let dir = dir.trim_end_matches('/');
        let mut files = Vec::new();
        match rev {
            Revision::WorkTree => {
                let base = self.root.join(dir);
                if !base.is_dir() {
                    return Ok(files);
                }
                let entered = |e: &walkdir::DirEntry| {
                    if !e.file_type().is_dir() || e.depth() == 0 {
                        return true;
                    }
                    let Ok(below) = e.path().strip_prefix(&base) else {
                        return true;
                    };
                    let parts: Vec<_> = below.iter().map(|c| c.to_string_lossy()).collect();
                    let parts: Vec<&str> = parts.iter().map(|c| c.as_ref()).collect();
                    enter(&parts)
                };
                let walk = walkdir::WalkDir::new(&base).sort_by_file_name();
                for entry in walk.into_iter().filter_entry(entered) {
                    let entry = entry
                        .map_err(|e| Error::io(&base, std::io::Error::other(e.to_string())))?;
                    // Links and other non-directories are listed, as git's tree walk lists
                    // links: reading one then fails naming it (crate::bounded_read).
                    if entry.file_type().is_dir() {
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
    /// [`list_files`](Self::list_files)) whose names end with its suffix, so that later
    /// listings and reads of them are answered from what this `Repo` has seen. Errors are left
    /// to those later calls.
    pub(crate) fn prefetch(&self, rev: &Revision, wants: &[(&str, &str)]) {
        let Revision::Git(rev) = rev else {
            return;
        };
        let _walking = self.walking.lock().unwrap_or_else(PoisonError::into_inner);
        let dirs: Vec<&str> = wants.iter().map(|(d, _)| d.trim_end_matches('/')).collect();
        let Ok(listed) = self.trees_walked(rev, &dirs) else {
            return;
        };
        let mut oids: Vec<ObjectId> = match self.trees.lock() {
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
                    .copied()
                    .collect()
            }
            Err(_) => return,
        };
        oids.sort_unstable();
        oids.dedup();
        let Ok(repo) = self.open() else {
            return;
        };
        // Unreadable ones are left for `read_files` to report.
        let blobs: Vec<(ObjectId, Vec<u8>)> = oids
            .into_iter()
            .filter_map(|oid| Some((oid, read_blob(&repo, oid).ok()??)))
            .collect();
        if let Ok(mut m) = self.trees.lock() {
            m.blobs.extend(blobs);
        }
    }

    /// Every file path (blobs, links, submodules) under `dir` in the tree of `rev`.
    fn tree(&self, rev: &str, dir: &str) -> Result<Arc<Vec<String>>, Error> {
        let _walking = self.walking.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(self.trees_walked(rev, &[dir])?.pop().unwrap_or_default())
    }

    /// The listing of each of `dirs` at `rev`, walking the uncached ones; the caller holds
    /// `walking`.
    fn trees_walked(&self, rev: &str, dirs: &[&str]) -> Result<Vec<Arc<Vec<String>>>, Error> {
        let cached: Vec<Option<Arc<Vec<String>>>> = match self.trees.lock() {
            Ok(m) => dirs
                .iter()
                .map(|d| m.dirs.get(&(rev.to_owned(), (*d).to_owned())).cloned())
                .collect(),
            Err(_) => vec![None; dirs.len()],
        };
        if cached.iter().all(Option::is_some) {
            return Ok(cached.into_iter().flatten().collect());
        }
        let repo = self.open()?;
        let commit = Self::commit_of(&repo, rev).ok().map(|c| c.id.to_string());
        let root = Self::tree_of(&repo, rev)?;
        let mut out = Vec::with_capacity(dirs.len());
        for (dir, cached) in dirs.iter().zip(cached) {
            if let Some(files) = cached {
                out.push(files);
                continue;
            }
            let listed = walk(&root, dir)?;
            let files: Arc<Vec<String>> = Arc::new(listed.iter().map(|(p, _)| p.clone()).collect());
            if let Ok(mut m) = self.trees.lock() {
                m.dirs
                    .insert((rev.to_owned(), (*dir).to_owned()), Arc::clone(&files));
                m.oids.entry(rev.to_owned()).or_default().extend(listed);
                if let Some(commit) = &commit {
                    m.commits.insert(rev.to_owned(), commit.clone());
                }
            }
            out.push(files);
        }
        Ok(out)
    }

    /// The contents of repository-relative `paths` at `rev`; a path that does not exist there is
    /// absent from the map.
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
                    if let Some(bytes) = crate::bounded_read::read_file(&full)? {
                        files.insert(path.clone(), bytes);
                    }
                }
            }
            Revision::Git(rev) => {
                // Listed paths by object name (one object read, not the trees above it), from
                // what was read ahead when it was.
                let mut wanted: Vec<(&String, Option<ObjectId>)> = Vec::new();
                {
                    let m = self.trees.lock().unwrap_or_else(PoisonError::into_inner);
                    let known = m.oids.get(rev.as_str());
                    for path in paths {
                        match known.and_then(|k| k.get(path.as_str())) {
                            Some(oid) => match m.blobs.get(oid) {
                                Some(body) => {
                                    files.insert(path.clone(), body.clone());
                                }
                                None => wanted.push((path, Some(*oid))),
                            },
                            None => wanted.push((path, None)),
                        }
                    }
                }
                if wanted.is_empty() {
                    return Ok(files);
                }
                let repo = self.open()?;
                let mut root = None;
                for (path, oid) in wanted {
                    let oid = match oid {
                        Some(oid) => Some(oid),
                        None => {
                            if root.is_none() {
                                root = Some(Self::tree_of(&repo, rev)?);
                            }
                            match &root {
                                Some(tree) => entry_id(tree, path)?,
                                None => None,
                            }
                        }
                    };
                    if let Some(oid) = oid {
                        if let Some(body) = read_blob(&repo, oid)? {
                            files.insert(path.clone(), body);
                        }
                    }
                }
            }
        }
        Ok(files)
    }

    /// The parents and the committer time (seconds since the epoch) of the commit `oid` (full
    /// hex name); `None` when there is no such commit.
    pub(crate) fn commit_info(&self, oid: &str) -> Result<Option<(Vec<String>, i64)>, Error> {
        let Ok(id) = ObjectId::from_hex(oid.as_bytes()) else {
            return Ok(None);
        };
        let repo = self.open()?;
        let Ok(commit) = repo.find_commit(id) else {
            return Ok(None);
        };
        let parents = commit.parent_ids().map(|p| p.to_string()).collect();
        let time = commit.time().map(|t| t.seconds).unwrap_or(0);
        Ok(Some((parents, time)))
    }

    /// The contents of the blob named `oid` (full hex name), `None` when there is no such blob.
    pub(crate) fn blob(&self, oid: &str) -> Result<Option<Vec<u8>>, Error> {
        let Ok(id) = ObjectId::from_hex(oid.as_bytes()) else {
            return Ok(None);
        };
        read_blob(&self.open()?, id)
    }

    /// The object name at `commit:path` for each of `paths` (`None` where there is none; an
    /// empty path is the commit's tree).
    pub(crate) fn path_oids(
        &self,
        commit: &str,
        paths: &[&str],
    ) -> Result<Vec<Option<String>>, Error> {
        let repo = self.open()?;
        let Ok(tree) = Self::tree_of(&repo, commit) else {
            return Ok(vec![None; paths.len()]);
        };
        paths
            .iter()
            .map(|p| {
                if p.is_empty() {
                    Ok(Some(tree.id.to_string()))
                } else {
                    Ok(entry_id(&tree, p)?.map(|o| o.to_string()))
                }
            })
            .collect()
    }
}

/// The object names of a fixed set of paths across the commits of a walk, reading only the
/// trees that changed since the commit asked about before: a subtree whose object name is the
/// one it had then holds the same entries, as `git log -- PATHS` prunes its tree diffs. On
/// XLA (40,000 commits, the compared protos in directories of hundreds of entries) a lookup
/// of each path from the root tree per commit spent most of the walk inflating trees.
#[derive(Debug, Default)]
pub(crate) struct PathWatch {
    /// The watched paths, as asked.
    paths: Vec<String>,
    /// The previous commit's answer, per path.
    prev: Vec<Option<ObjectId>>,
    /// The previous commit's tree of each directory above a watched path ("" for the root).
    prev_dirs: HashMap<String, ObjectId>,
}

impl PathWatch {
    /// The object name at `commit:path` for each of `paths` (`None` where there is none; an
    /// empty path is the commit's tree), as [`Repo::path_oids`] answers. A different set of
    /// paths than the last call's starts afresh.
    pub(crate) fn oids(
        &mut self,
        repo: &Repo,
        commit: &str,
        paths: &[&str],
    ) -> Result<Vec<Option<String>>, Error> {
        if self.paths.len() != paths.len() || self.paths.iter().zip(paths).any(|(a, b)| a != b) {
            *self = PathWatch {
                paths: paths.iter().map(|p| (*p).to_owned()).collect(),
                ..PathWatch::default()
            };
        }
        let handle = repo.open()?;
        let root = ObjectId::from_hex(commit.as_bytes())
            .ok()
            .and_then(|id| handle.find_commit(id).ok())
            .and_then(|c| c.tree_id().ok().map(|t| t.detach()));
        let Some(root) = root else {
            self.prev = vec![None; paths.len()];
            self.prev_dirs.clear();
            return Ok(vec![None; paths.len()]);
        };
        let mut out = vec![None; paths.len()];
        let mut dirs = HashMap::new();
        let all: Vec<usize> = (0..paths.len()).collect();
        self.visit(&handle, "", root, &all, &mut out, &mut dirs)?;
        self.prev = out;
        self.prev_dirs = dirs;
        Ok(self.prev.iter().map(|o| o.map(|o| o.to_string())).collect())
    }

    /// Answers the paths `which` below directory `dir`, whose tree is `tree`.
    fn visit(
        &self,
        repo: &gix::Repository,
        dir: &str,
        tree: ObjectId,
        which: &[usize],
        out: &mut [Option<ObjectId>],
        dirs: &mut HashMap<String, ObjectId>,
    ) -> Result<(), Error> {
        dirs.insert(dir.to_owned(), tree);
        if self.prev_dirs.get(dir) == Some(&tree) {
            // Unchanged: the answers, and the trees below, are the previous commit's.
            for &i in which {
                out[i] = self.prev[i];
            }
            let below =
                |d: &str| dir.is_empty() || d.starts_with(dir) && d[dir.len()..].starts_with('/');
            for (d, id) in &self.prev_dirs {
                if below(d) {
                    dirs.insert(d.clone(), *id);
                }
            }
            return Ok(());
        }
        let object = repo
            .find_object(tree)
            .map_err(|e| git_error(&format!("ls-tree {tree}"), e))?;
        let tree_obj = object.into_tree();
        // The paths by their next component: a file here, or a directory to enter.
        let mut children: BTreeMap<&str, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
        for &i in which {
            let path = self.paths[i].as_str();
            if path.len() == dir.len() {
                out[i] = Some(tree);
                continue;
            }
            let rest = if dir.is_empty() {
                path
            } else {
                &path[dir.len() + 1..]
            };
            if !tree_path(rest) {
                continue;
            }
            match rest.split_once('/') {
                None => children.entry(rest).or_default().0.push(i),
                Some((name, _)) => children.entry(name).or_default().1.push(i),
            }
        }
        for (name, (files, below)) in children {
            let Some(entry) = tree_obj.find_entry(name) else {
                continue;
            };
            let (id, is_tree) = (entry.object_id(), entry.mode().is_tree());
            for i in files {
                out[i] = Some(id);
            }
            if is_tree && !below.is_empty() {
                let sub = if dir.is_empty() {
                    name.to_owned()
                } else {
                    format!("{dir}/{name}")
                };
                self.visit(repo, &sub, id, &below, out, dirs)?;
            }
        }
        Ok(())
    }
}

/// The object name at `path` below `tree`, `None` where there is none.
fn entry_id(tree: &gix::Tree<'_>, path: &str) -> Result<Option<ObjectId>, Error> {
    if !tree_path(path) {
        return Ok(None);
    }
    let entry = tree
        .lookup_entry_by_path(path)
        .map_err(|e| git_error(&format!("ls-tree {} {path}", tree.id), e))?;
    Ok(entry.map(|e| e.object_id()))
}

/// The contents of blob `oid`, `None` when there is no such blob; an object that exists but
/// cannot be read (corrupt, truncated) is an error, never a file that silently vanished.
fn read_blob(repo: &gix::Repository, oid: ObjectId) -> Result<Option<Vec<u8>>, Error> {
    // The header first: a pull request's blob of gigabytes is refused before it is inflated.
    if let Ok(header) = repo.find_header(oid) {
        let limit = crate::bounded_read::MAX_FILE_BYTES;
        if header.kind() == gix::object::Kind::Blob && header.size() > limit {
            return Err(git_error(
                &format!("cat-file blob {oid}"),
                format!("{} bytes, over the limit of {limit} bytes", header.size()),
            ));
        }
    }
    match repo.find_object(oid) {
        Ok(object) => Ok((object.kind == gix::object::Kind::Blob).then(|| object.detach().data)),
        Err(gix::object::find::existing::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(git_error(&format!("cat-file blob {oid}"), e)),
    }
}

/// (repository path, object name) of every file (blob, link, submodule) under `dir` of `root`
/// (the whole tree for an empty `dir`); empty when `dir` is not a directory there.
fn walk(root: &gix::Tree<'_>, dir: &str) -> Result<Vec<(String, ObjectId)>, Error> {
    let subtree;
    let (tree, prefix) = if dir.is_empty() {
        (root, String::new())
    } else {
        let Some(id) = entry_id(root, dir)? else {
            return Ok(Vec::new());
        };
        match root.repo.find_object(id) {
            Ok(o) if o.kind == gix::object::Kind::Tree => {
                subtree = o.into_tree();
                (&subtree, format!("{dir}/"))
            }
            _ => return Ok(Vec::new()),
        }
    };
    let entries = tree
        .traverse()
        .breadthfirst
        .files()
        .map_err(|e| git_error(&format!("ls-tree -r {} {dir}", root.id), e))?;
    Ok(entries
        .into_iter()
        .filter(|e| !e.mode.is_tree())
        .map(|e| (format!("{prefix}{}", e.filepath), e.oid))
        .collect())
}

/// An error of a git read: what was asked (in git's command words) and why it failed.
fn git_error(what: &str, message: impl std::fmt::Display) -> Error {
    Error::Git {
        args: what.to_owned(),
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Every commit's answer equals the per-path lookup's, whichever trees changed between
    /// them (a directory replaced by a file, a path appearing, a subtree left alone).
    #[test]
    fn a_path_watch_answers_as_path_oids() {
        let dir = std::env::temp_dir().join(format!("git-path-watch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        git(&dir, &["init", "-q", "-b", "main"]);
        let steps: [&[(&str, Option<&str>)]; 5] = [
            &[("a/b/c.proto", Some("1")), ("a/d.proto", Some("1"))],
            &[("x/unrelated", Some("2"))],
            &[("a/b/c.proto", Some("3"))],
            &[("a/b/c.proto", None), ("a/b", Some("now a file"))],
            &[
                ("a/b", None),
                ("a/b/c.proto", Some("back")),
                ("e.proto", Some("new")),
            ],
        ];
        let mut commits = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            for (path, body) in *step {
                let full = dir.join(path);
                match body {
                    Some(body) => {
                        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
                        std::fs::write(&full, body).expect("write");
                    }
                    None => {
                        std::fs::remove_file(&full).expect("remove");
                        // An emptied directory goes too, as git would leave it.
                        let _ = std::fs::remove_dir(full.parent().expect("parent"));
                    }
                }
            }
            git(&dir, &["add", "-A"]);
            git(
                &dir,
                &[
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@example.invalid",
                    "commit",
                    "-q",
                    "-m",
                    &format!("step {i}"),
                ],
            );
            commits.push(git(&dir, &["rev-parse", "HEAD"]));
        }
        let repo = Repo::new(&dir);
        let paths = [
            "a/b/c.proto",
            "a/d.proto",
            "a/b",
            "e.proto",
            "",
            "a//d.proto",
            "a",
        ];
        let mut watch = PathWatch::default();
        // Newest first, as the history walk goes, then in the other direction.
        for commit in commits.iter().rev().chain(commits.iter()) {
            assert_eq!(
                watch.oids(&repo, commit, &paths).expect("reads"),
                repo.path_oids(commit, &paths).expect("reads"),
                "{commit}"
            );
        }
        assert_eq!(
            watch.oids(&repo, "not a commit", &paths).expect("reads"),
            vec![None; paths.len()]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
