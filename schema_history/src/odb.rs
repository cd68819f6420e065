//! Reading git objects in-process: loose objects and version-2 pack indexes and packs (deltas
//! included), simple references (`HEAD`, branches, tags, remotes; loose or packed), and the
//! requests [`Repo`](crate::git::Repo) sends `git cat-file --batch` (`<id>`,
//! `<rev>^{commit}`, `<rev>^{tree}`, `<rev>:<path>`).
//!
//! Everything here answers only what it is sure of, the way git would: anything else (an
//! unusual repository layout or configuration, a revision expression, an object it cannot find
//! or read) is [`Answer::Unknown`], and the caller asks git itself, so that git's own answer
//! (and error message) is what users see. Nothing here panics on corrupt data: sizes and delta
//! chains are bounded.
//!
//! Only zlib comes from a crate (`flate2`); the rest is small enough to write out rather than
//! pull in a full git implementation (gix is a large tree of crates).
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use flate2::read::ZlibDecoder;

/// A raw SHA-1 object name.
pub(crate) type Oid = [u8; 20];

/// The largest object read in-process; larger ones are left to git.
const MAX_OBJECT: u64 = 256 << 20;
/// The longest delta chain followed (git's own default is 50, `gc --aggressive` 250).
const MAX_CHAIN: usize = 10_000;
/// The longest chain of symbolic references or of tags followed.
const MAX_HOPS: usize = 16;
/// The largest pack index read in-process.
const MAX_IDX: u64 = 256 << 20;

/// An object's kind, as git names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Commit,
    Tree,
    Blob,
    Tag,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Commit => "commit",
            Kind::Tree => "tree",
            Kind::Blob => "blob",
            Kind::Tag => "tag",
        }
    }

    fn from_name(name: &[u8]) -> Option<Kind> {
        Some(match name {
            b"commit" => Kind::Commit,
            b"tree" => Kind::Tree,
            b"blob" => Kind::Blob,
            b"tag" => Kind::Tag,
            _ => return None,
        })
    }

    fn from_pack_type(t: u8) -> Option<Kind> {
        Some(match t {
            1 => Kind::Commit,
            2 => Kind::Tree,
            3 => Kind::Blob,
            4 => Kind::Tag,
            _ => return None,
        })
    }
}

/// What the object store says to one `git cat-file --batch` request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// The object: its name, kind and contents.
    Found(Oid, Kind, Vec<u8>),
    /// Git would say `missing` (a path not in a tree read in-process).
    Missing,
    /// Ask git.
    Unknown,
}

/// A repository's object store and references, opened in-process.
#[derive(Debug)]
pub(crate) struct Odb {
    /// The repository's (or worktree's) git directory: `HEAD` and per-worktree files.
    git_dir: PathBuf,
    /// The directory shared by every worktree: refs, objects, config.
    common_dir: PathBuf,
    objects: PathBuf,
    /// The packs, opened on first use.
    packs: OnceLock<Option<Vec<Pack>>>,
    /// The `packed-refs` file, read on first use (empty when there is none; `None` when it
    /// cannot be read). Like the listings of a `Repo`, it is taken not to change while the
    /// object store is open.
    packed_refs: OnceLock<Option<Vec<u8>>>,
}

/// One pack: its index in memory, its data read where needed.
#[derive(Debug)]
struct Pack {
    idx: Vec<u8>,
    count: usize,
    data: File,
    data_len: u64,
}

impl Odb {
    /// The object store of the repository whose top-level directory is `root`; `None` when it is
    /// anything but a plain SHA-1 repository with the files reference backend and no alternates
    /// or replacement objects (git is then asked for everything).
    pub(crate) fn open(root: &Path) -> Option<Odb> {
        if !cfg!(any(unix, windows)) {
            return None;
        }
        // Git reads these from the environment: then it knows best.
        for var in [
            "GIT_DIR",
            "GIT_COMMON_DIR",
            "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            "GIT_NAMESPACE",
            "GIT_REPLACE_REF_BASE",
            "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_COUNT",
        ] {
            if std::env::var_os(var).is_some() {
                return None;
            }
        }
        let dot_git = root.join(".git");
        let meta = std::fs::metadata(&dot_git).ok()?;
        let git_dir = if meta.is_dir() {
            dot_git
        } else {
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let path = text.strip_prefix("gitdir:")?.trim();
            if path.is_empty() {
                return None;
            }
            root.join(path)
        };
        let common_dir = match std::fs::read_to_string(git_dir.join("commondir")) {
            Ok(text) => {
                let path = text.trim_end_matches(['\n', '\r']);
                if path.is_empty() {
                    return None;
                }
                git_dir.join(path)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => git_dir.clone(),
            Err(_) => return None,
        };
        if !git_dir.join("HEAD").is_file() {
            return None;
        }
        let config = std::fs::read(common_dir.join("config")).ok()?;
        let config = String::from_utf8_lossy(&config).to_ascii_lowercase();
        // SHA-256 object names, the reftable backend, replaced objects: left to git.
        if [
            "objectformat",
            "refstorage",
            "usereplacerefs",
            "compatobjectformat",
        ]
        .iter()
        .any(|k| config.contains(k))
        {
            return None;
        }
        let objects = common_dir.join("objects");
        if !objects.is_dir() || objects.join("info/alternates").exists() {
            return None;
        }
        let odb = Odb {
            git_dir,
            common_dir,
            objects,
            packs: OnceLock::new(),
            packed_refs: OnceLock::new(),
        };
        if odb.has_replace_refs() {
            return None;
        }
        Some(odb)
    }

    fn has_replace_refs(&self) -> bool {
        let dir = self.common_dir.join("refs/replace");
        let loose = match std::fs::read_dir(&dir) {
            Ok(mut entries) => entries.next().is_some(),
            Err(e) => e.kind() != std::io::ErrorKind::NotFound,
        };
        loose
            || match std::fs::read(self.common_dir.join("packed-refs")) {
                Ok(text) => memchr::memmem::find(&text, b" refs/replace/").is_some(),
                Err(e) => e.kind() != std::io::ErrorKind::NotFound,
            }
    }

    fn packs(&self) -> Option<&[Pack]> {
        self.packs
            .get_or_init(|| {
                let dir = self.objects.join("pack");
                let entries = match std::fs::read_dir(&dir) {
                    Ok(entries) => entries,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Vec::new()),
                    Err(_) => return None,
                };
                let mut names = Vec::new();
                for entry in entries {
                    let name = entry.ok()?.file_name();
                    let name = name.to_str()?.to_owned();
                    if let Some(stem) = name.strip_suffix(".idx") {
                        names.push(stem.to_owned());
                    }
                }
                // The newest packs first is git's order; any order finds the same objects.
                names.sort();
                names
                    .iter()
                    .map(|stem| {
                        Pack::open(
                            &dir.join(format!("{stem}.idx")),
                            &dir.join(format!("{stem}.pack")),
                        )
                    })
                    .collect()
            })
            .as_deref()
    }

    /// The kind and contents of object `oid`; `None` when it is not found or cannot be read.
    pub(crate) fn read(&self, oid: &Oid) -> Option<(Kind, Vec<u8>)> {
        if let Some(object) = self.read_loose(oid) {
            return Some(object);
        }
        self.read_packed(oid, 0)
    }

    fn read_loose(&self, oid: &Oid) -> Option<(Kind, Vec<u8>)> {
        let hex = to_hex(oid);
        let path = self.objects.join(&hex[..2]).join(&hex[2..]);
        let file = File::open(path).ok()?;
        let mut decoder = ZlibDecoder::new(std::io::BufReader::new(file));
        // The header: `<kind> <size>\0`.
        let mut header = Vec::with_capacity(32);
        let mut byte = [0u8; 1];
        loop {
            decoder.read_exact(&mut byte).ok()?;
            if byte[0] == 0 {
                break;
            }
            header.push(byte[0]);
            if header.len() > 32 {
                return None;
            }
        }
        let space = header.iter().position(|b| *b == b' ')?;
        let kind = Kind::from_name(&header[..space])?;
        let size: u64 = std::str::from_utf8(&header[space + 1..])
            .ok()?
            .parse()
            .ok()?;
        if size > MAX_OBJECT {
            return None;
        }
        let body = read_exactly(&mut decoder, size)?;
        Some((kind, body))
    }

    /// An object in the packs; `depth` counts the deltas on the way here (REF_DELTA bases).
    fn read_packed(&self, oid: &Oid, depth: usize) -> Option<(Kind, Vec<u8>)> {
        let packs = self.packs()?;
        for pack in packs {
            if let Some(offset) = pack.find(oid) {
                return self.read_at(pack, offset, depth);
            }
        }
        None
    }

    /// The object at `offset` in `pack`, its delta chain applied.
    fn read_at(&self, pack: &Pack, offset: u64, depth: usize) -> Option<(Kind, Vec<u8>)> {
        // Walk down to the base, keeping the deltas on the way.
        let mut deltas: Vec<Vec<u8>> = Vec::new();
        let mut offset = offset;
        let (kind, mut body) = loop {
            if depth + deltas.len() > MAX_CHAIN {
                return None;
            }
            let entry = pack.entry(offset)?;
            match entry.kind {
                EntryKind::Whole(kind) => break (kind, pack.inflate(entry.data, entry.size)?),
                EntryKind::OfsDelta(base) => {
                    deltas.push(pack.inflate(entry.data, entry.size)?);
                    offset = base;
                }
                EntryKind::RefDelta(base) => {
                    deltas.push(pack.inflate(entry.data, entry.size)?);
                    // The base is anywhere: this pack, another, or loose.
                    let found = match pack.find(&base) {
                        Some(at) => {
                            offset = at;
                            continue;
                        }
                        None => self
                            .read_loose(&base)
                            .or_else(|| self.read_packed(&base, depth + deltas.len()))?,
                    };
                    break found;
                }
            }
        };
        for delta in deltas.iter().rev() {
            body = apply_delta(&body, delta)?;
        }
        Some((kind, body))
    }

    /// The object a simple revision names (not peeled): a full hex object name, `HEAD`, or a
    /// reference name as git expands it (`X`, `refs/X`, `refs/tags/X`, `refs/heads/X`,
    /// `refs/remotes/X`, `refs/remotes/X/HEAD`). `None` for anything else.
    pub(crate) fn resolve_rev(&self, rev: &str) -> Option<Oid> {
        if rev.len() == 40 {
            if let Some(oid) = from_hex(rev) {
                return Some(oid);
            }
        }
        if !simple_ref_name(rev) {
            return None;
        }
        if rev == "HEAD" {
            return self.resolve_ref("HEAD", 0);
        }
        if !rev.starts_with("refs/") {
            // Git tries `$GIT_DIR/<rev>` first (pseudo-refs such as FETCH_HEAD): leave any such
            // file to git.
            if rev.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
                || self.git_dir.join(rev).exists()
                || self.common_dir.join(rev).exists()
            {
                return None;
            }
        }
        let candidates = [
            rev.to_owned(),
            format!("refs/{rev}"),
            format!("refs/tags/{rev}"),
            format!("refs/heads/{rev}"),
            format!("refs/remotes/{rev}"),
            format!("refs/remotes/{rev}/HEAD"),
        ];
        for name in candidates.iter().filter(|n| n.starts_with("refs/")) {
            match self.lookup_ref(name) {
                RefLookup::Found(value) => return self.follow(value, 0),
                RefLookup::Absent => {}
                RefLookup::Unsure => return None,
            }
        }
        None
    }

    /// The object reference `name` (full name) points to, through symbolic references.
    fn resolve_ref(&self, name: &str, hops: usize) -> Option<Oid> {
        match self.lookup_ref(name) {
            RefLookup::Found(value) => self.follow(value, hops),
            RefLookup::Absent | RefLookup::Unsure => None,
        }
    }

    fn follow(&self, value: RefValue, hops: usize) -> Option<Oid> {
        match value {
            RefValue::Oid(oid) => Some(oid),
            RefValue::Symbolic(target) if hops < MAX_HOPS && target.starts_with("refs/") => {
                if !simple_ref_name(&target) {
                    return None;
                }
                self.resolve_ref(&target, hops + 1)
            }
            RefValue::Symbolic(_) => None,
        }
    }

    /// A reference's value: the loose file, else the `packed-refs` line.
    fn lookup_ref(&self, name: &str) -> RefLookup {
        let per_worktree = name == "HEAD"
            || ["refs/bisect/", "refs/worktree/", "refs/rewritten/"]
                .iter()
                .any(|p| name.starts_with(p));
        if per_worktree && name != "HEAD" {
            return RefLookup::Unsure;
        }
        let base = if per_worktree {
            &self.git_dir
        } else {
            &self.common_dir
        };
        match std::fs::read(base.join(name)) {
            Ok(text) => {
                let text = match std::str::from_utf8(&text) {
                    Ok(t) => t.trim_end(),
                    Err(_) => return RefLookup::Unsure,
                };
                if let Some(target) = text.strip_prefix("ref:") {
                    return RefLookup::Found(RefValue::Symbolic(target.trim().to_owned()));
                }
                return match from_hex(text) {
                    Some(oid) if text.len() == 40 => RefLookup::Found(RefValue::Oid(oid)),
                    _ => RefLookup::Unsure,
                };
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // A directory of that name is no reference.
            Err(_) if base.join(name).is_dir() => {}
            Err(_) => return RefLookup::Unsure,
        }
        if per_worktree {
            return RefLookup::Absent;
        }
        let packed = self.packed_refs.get_or_init(|| {
            match std::fs::read(self.common_dir.join("packed-refs")) {
                Ok(p) => Some(p),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(Vec::new()),
                Err(_) => None,
            }
        });
        let Some(packed) = packed else {
            return RefLookup::Unsure;
        };
        for line in packed.split(|b| *b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.len() < 42 || line[0] == b'#' || line[0] == b'^' || line[40] != b' ' {
                continue;
            }
            if &line[41..] == name.as_bytes() {
                return match std::str::from_utf8(&line[..40]).ok().and_then(from_hex) {
                    Some(oid) => RefLookup::Found(RefValue::Oid(oid)),
                    None => RefLookup::Unsure,
                };
            }
        }
        RefLookup::Absent
    }

    /// The commit `oid` is or (through annotated tags) points to.
    pub(crate) fn peel_to_commit(&self, oid: Oid) -> Option<(Oid, Vec<u8>)> {
        let mut oid = oid;
        for _ in 0..MAX_HOPS {
            let (kind, body) = self.read(&oid)?;
            match kind {
                Kind::Commit => return Some((oid, body)),
                Kind::Tag => oid = header_oid(&body, b"object ")?,
                _ => return None,
            }
        }
        None
    }

    /// Answers one `git cat-file --batch` request as git would, or [`Answer::Unknown`].
    pub(crate) fn answer(&self, request: &str) -> Answer {
        self.try_answer(request).unwrap_or(Answer::Unknown)
    }

    fn try_answer(&self, request: &str) -> Option<Answer> {
        if request.len() == 40 {
            if let Some(oid) = from_hex(request) {
                let (kind, body) = self.read(&oid)?;
                return Some(Answer::Found(oid, kind, body));
            }
        }
        if let Some((rev, path)) = request.split_once(':') {
            let components: Vec<&str> = path.split('/').collect();
            if path.is_empty()
                || components
                    .iter()
                    .any(|c| c.is_empty() || *c == "." || *c == "..")
            {
                return None;
            }
            let (_, commit) = self.peel_to_commit(self.resolve_rev(rev)?)?;
            let mut oid = header_oid(&commit, b"tree ")?;
            for component in components {
                let (kind, tree) = self.read(&oid)?;
                if kind != Kind::Tree {
                    // A path through a file.
                    return Some(Answer::Missing);
                }
                match find_entry(&tree, component.as_bytes())? {
                    Some(entry) => oid = entry,
                    None => return Some(Answer::Missing),
                }
            }
            let (kind, body) = self.read(&oid)?;
            return Some(Answer::Found(oid, kind, body));
        }
        if let Some(rev) = request.strip_suffix("^{commit}") {
            let (oid, body) = self.peel_to_commit(self.resolve_rev(rev)?)?;
            return Some(Answer::Found(oid, Kind::Commit, body));
        }
        if let Some(rev) = request.strip_suffix("^{tree}") {
            let (_, commit) = self.peel_to_commit(self.resolve_rev(rev)?)?;
            let oid = header_oid(&commit, b"tree ")?;
            let (kind, body) = self.read(&oid)?;
            return (kind == Kind::Tree).then_some(Answer::Found(oid, kind, body));
        }
        None
    }
}

enum RefLookup {
    Found(RefValue),
    Absent,
    /// Something git may read differently.
    Unsure,
}

enum RefValue {
    Oid(Oid),
    Symbolic(String),
}

/// Whether `name` is a reference name plain enough to look up as git would: no revision syntax,
/// nothing git's reference-name rules would reject.
fn simple_ref_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.'))
        && !name.starts_with('-')
        && !name.ends_with(".lock")
        && name
            .split('/')
            .all(|c| !c.is_empty() && !c.starts_with('.') && !c.ends_with('.'))
        && !name.contains("..")
}

/// The entry `name` of a tree object: `Some(None)` when absent, `None` when the tree is
/// malformed.
fn find_entry(tree: &[u8], name: &[u8]) -> Option<Option<Oid>> {
    let mut rest = tree;
    while !rest.is_empty() {
        let space = memchr::memchr(b' ', rest)?;
        let nul = memchr::memchr(0, rest)?;
        if nul < space || rest.len() < nul + 21 {
            return None;
        }
        if &rest[space + 1..nul] == name {
            return Some(Some(rest[nul + 1..nul + 21].try_into().ok()?));
        }
        rest = &rest[nul + 21..];
    }
    Some(None)
}

/// The object named on header line `key` (`tree `, `object `) of a commit or tag.
fn header_oid(body: &[u8], key: &[u8]) -> Option<Oid> {
    for line in body.split(|b| *b == b'\n') {
        if line.is_empty() {
            break;
        }
        if let Some(hex) = line.strip_prefix(key) {
            let hex = std::str::from_utf8(hex).ok()?;
            return if hex.len() == 40 { from_hex(hex) } else { None };
        }
    }
    None
}

/// Reads exactly `size` bytes, and checks there are no more.
fn read_exactly(reader: &mut impl Read, size: u64) -> Option<Vec<u8>> {
    let mut body = Vec::with_capacity(usize::try_from(size.min(1 << 20)).ok()?);
    reader.take(size + 1).read_to_end(&mut body).ok()?;
    (body.len() as u64 == size).then_some(body)
}

pub(crate) fn to_hex(oid: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(oid.len() * 2);
    for b in oid {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// A full lower- or upper-case hex object name.
pub(crate) fn from_hex(hex: &str) -> Option<Oid> {
    let bytes = hex.as_bytes();
    if bytes.len() != 40 {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut oid = [0u8; 20];
    for (i, pair) in bytes.chunks(2).enumerate() {
        oid[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(oid)
}

/// What a pack entry holds.
enum EntryKind {
    Whole(Kind),
    /// A delta on the entry at this offset.
    OfsDelta(u64),
    /// A delta on this object.
    RefDelta(Oid),
}

struct Entry {
    kind: EntryKind,
    /// The inflated size.
    size: u64,
    /// Where the zlib data starts.
    data: u64,
}

impl Pack {
    fn open(idx_path: &Path, pack_path: &Path) -> Option<Pack> {
        let data = File::open(pack_path).ok()?;
        let data_len = data.metadata().ok()?.len();
        let mut idx_file = File::open(idx_path).ok()?;
        if idx_file.metadata().ok()?.len() > MAX_IDX {
            return None;
        }
        let mut idx = Vec::new();
        idx_file.read_to_end(&mut idx).ok()?;
        // Version 2: magic, version, 256 fanout entries, then names, CRCs, offsets.
        if idx.len() < 8 + 1024 + 40 || idx[..8] != [0xff, b't', b'O', b'c', 0, 0, 0, 2] {
            return None;
        }
        let count = be32(&idx, 8 + 255 * 4)? as usize;
        if idx.len() < 8 + 1024 + count * 28 + 40 {
            return None;
        }
        let mut header = [0u8; 12];
        read_at(&data, &mut header, 0)?;
        if &header[..4] != b"PACK" || be32(&header, 8)? as usize != count {
            return None;
        }
        Some(Pack {
            idx,
            count,
            data,
            data_len,
        })
    }

    /// The offset of `oid` in the pack.
    fn find(&self, oid: &Oid) -> Option<u64> {
        let fanout = |i: usize| be32(&self.idx, 8 + i * 4).map(|v| v as usize);
        let first = oid[0] as usize;
        let lo = if first == 0 { 0 } else { fanout(first - 1)? };
        let hi = fanout(first)?;
        if lo > hi || hi > self.count {
            return None;
        }
        let names = 8 + 1024;
        let (mut lo, mut hi) = (lo, hi);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let name = self.idx.get(names + mid * 20..names + mid * 20 + 20)?;
            match name.cmp(&oid[..]) {
                std::cmp::Ordering::Equal => return self.offset(mid),
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
            }
        }
        None
    }

    fn offset(&self, i: usize) -> Option<u64> {
        let offsets = 8 + 1024 + self.count * 24;
        let small = be32(&self.idx, offsets + i * 4)?;
        if small & 0x8000_0000 == 0 {
            return Some(u64::from(small));
        }
        let large = offsets + self.count * 4 + (small & 0x7fff_ffff) as usize * 8;
        let bytes = self.idx.get(large..large + 8)?;
        Some(u64::from_be_bytes(bytes.try_into().ok()?))
    }

    /// The header of the entry at `offset`.
    fn entry(&self, offset: u64) -> Option<Entry> {
        // Type and size (at most 10 bytes), then a delta's base (at most 20 bytes).
        let mut buf = [0u8; 32];
        let n = usize::try_from((self.data_len.checked_sub(offset)?).min(32)).ok()?;
        read_at(&self.data, &mut buf[..n], offset)?;
        let buf = &buf[..n];
        let mut at = 0;
        let first = *buf.first()?;
        let t = (first >> 4) & 7;
        let mut size = u64::from(first & 15);
        let mut shift = 4;
        let mut byte = first;
        while byte & 0x80 != 0 {
            at += 1;
            byte = *buf.get(at)?;
            if shift > 60 {
                return None;
            }
            size |= u64::from(byte & 0x7f) << shift;
            shift += 7;
        }
        at += 1;
        if size > MAX_OBJECT {
            return None;
        }
        let kind = match t {
            6 => {
                let mut byte = *buf.get(at)?;
                at += 1;
                let mut back = u64::from(byte & 0x7f);
                while byte & 0x80 != 0 {
                    byte = *buf.get(at)?;
                    at += 1;
                    back = back.checked_add(1)?.checked_mul(128)? | u64::from(byte & 0x7f);
                }
                if back == 0 || back > offset {
                    return None;
                }
                EntryKind::OfsDelta(offset - back)
            }
            7 => {
                let base: Oid = buf.get(at..at + 20)?.try_into().ok()?;
                at += 20;
                EntryKind::RefDelta(base)
            }
            t => EntryKind::Whole(Kind::from_pack_type(t)?),
        };
        Some(Entry {
            kind,
            size,
            data: offset + at as u64,
        })
    }

    /// `size` bytes inflated from the zlib stream at `offset`.
    fn inflate(&self, offset: u64, size: u64) -> Option<Vec<u8>> {
        let reader = std::io::BufReader::with_capacity(
            usize::try_from(size.clamp(64, 64 << 10)).ok()?,
            PackReader {
                file: &self.data,
                at: offset,
                end: self.data_len,
            },
        );
        read_exactly(&mut ZlibDecoder::new(reader), size)
    }
}

/// The bytes of a pack from an offset on.
struct PackReader<'a> {
    file: &'a File,
    at: u64,
    end: u64,
}

impl Read for PackReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.end.saturating_sub(self.at);
        let n = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
        if n == 0 {
            return Ok(0);
        }
        let n = pread(self.file, &mut buf[..n], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(unix)]
fn pread(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
fn pread(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

#[cfg(not(any(unix, windows)))]
fn pread(_: &File, _: &mut [u8], _: u64) -> std::io::Result<usize> {
    Err(std::io::Error::other("no positional reads"))
}

/// Fills `buf` from `offset`.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> Option<()> {
    let mut done = 0;
    while done < buf.len() {
        match pread(file, &mut buf[done..], offset + done as u64) {
            Ok(0) => return None,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(())
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// Git's delta format: the base's size, the result's size, then copy and insert instructions.
pub(crate) fn apply_delta(base: &[u8], delta: &[u8]) -> Option<Vec<u8>> {
    let mut at = 0;
    let mut varint = || -> Option<u64> {
        let mut value = 0u64;
        let mut shift = 0;
        loop {
            let byte = *delta.get(at)?;
            at += 1;
            if shift > 63 {
                return None;
            }
            value |= u64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
    };
    let base_size = varint()?;
    let result_size = varint()?;
    if base_size != base.len() as u64 || result_size > MAX_OBJECT {
        return None;
    }
    let result_size = usize::try_from(result_size).ok()?;
    let mut out = Vec::with_capacity(result_size);
    while at < delta.len() {
        let cmd = delta[at];
        at += 1;
        if cmd & 0x80 != 0 {
            let mut offset = 0usize;
            for i in 0..4 {
                if cmd & (1 << i) != 0 {
                    offset |= usize::from(*delta.get(at)?) << (8 * i);
                    at += 1;
                }
            }
            let mut size = 0usize;
            for i in 0..3 {
                if cmd & (0x10 << i) != 0 {
                    size |= usize::from(*delta.get(at)?) << (8 * i);
                    at += 1;
                }
            }
            if size == 0 {
                size = 0x10000;
            }
            let end = offset.checked_add(size)?;
            out.extend_from_slice(base.get(offset..end)?);
        } else if cmd != 0 {
            let n = usize::from(cmd);
            out.extend_from_slice(delta.get(at..at + n)?);
            at += n;
        } else {
            return None;
        }
        if out.len() > result_size {
            return None;
        }
    }
    (out.len() == result_size).then_some(out)
}

#[cfg(test)]
#[path = "odb_tests.rs"]
mod tests;
