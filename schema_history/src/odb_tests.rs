//! The in-process reads checked against git's own, object by object.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::*;

struct TempRepo {
    dir: PathBuf,
}

impl Drop for TempRepo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_DATE", "2024-01-02T03:04:05Z")
        .env("GIT_COMMITTER_DATE", "2024-01-02T03:04:05Z")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

impl TempRepo {
    fn new(name: &str) -> TempRepo {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "schema-history-odb-{name}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let repo = TempRepo { dir };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "user.name", "Odb Test"]);
        repo.git(&["config", "user.email", "odb@example.invalid"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo.git(&["config", "gc.auto", "0"]);
        repo
    }

    fn git(&self, args: &[&str]) -> String {
        git_in(&self.dir, args)
    }

    fn write(&self, path: &str, text: &str) {
        let full = self.dir.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    }

    /// Several commits over nested directories, with large files that change a little each
    /// time (so that a repack stores deltas), a branch, tags and a remote-tracking ref.
    fn with_history(name: &str) -> TempRepo {
        let repo = TempRepo::new(name);
        let big = |version: usize, salt: &str| -> String {
            (0..400)
                .map(|i| {
                    if i % 97 == version % 97 {
                        format!("line {i} changed in version {version} {salt}\n")
                    } else {
                        format!("line {i}: message Field{i} {{ int32 f{i} = {i}; }} {salt}\n")
                    }
                })
                .collect()
        };
        for version in 0..8 {
            repo.write("proto/a.proto", &big(version, "a"));
            repo.write("proto/nested/deeper/b.proto", &big(version, "b"));
            repo.write(
                &format!("proto/nested/v{version}.proto"),
                "syntax = \"proto3\";\n",
            );
            repo.write("history/2024-01-01/surface.json", &big(version / 2, "json"));
            repo.write("empty.txt", "");
            repo.git(&["add", "-A"]);
            repo.git(&["commit", "-q", "-m", &format!("version {version}")]);
            if version == 3 {
                repo.git(&["tag", "-a", "-m", "annotated", "v1"]);
                repo.git(&["tag", "light"]);
                repo.git(&["branch", "topic"]);
            }
        }
        let head = repo.git(&["rev-parse", "HEAD"]);
        repo.git(&["update-ref", "refs/remotes/origin/main", &head]);
        // A tag of a tag.
        repo.git(&["tag", "-a", "-m", "outer", "v2", "v1"]);
        repo
    }
}

/// Every object of the repository at `dir` (as `git rev-list --objects --all` lists them), read
/// in-process and by `git cat-file --batch`: the same kinds and contents. Returns how many.
fn compare_all(dir: &Path) -> usize {
    let odb = Odb::open(dir).expect("the object store opens");
    let listed = git_in(dir, &["rev-list", "--objects", "--all"]);
    let mut ids: Vec<&str> = listed
        .lines()
        .map(|l| l.split(' ').next().unwrap_or(""))
        .collect();
    // The annotated tags too.
    let tags = git_in(
        dir,
        &["for-each-ref", "--format=%(objectname)", "refs/tags"],
    );
    ids.extend(tags.lines());
    assert!(ids.len() > 20, "too few objects: {}", ids.len());
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("git cat-file");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for id in &ids {
            writeln!(stdin, "{id}").expect("write");
        }
    }
    let out = child.wait_with_output().expect("cat-file output");
    let mut rest = out.stdout.as_slice();
    for id in &ids {
        let nl = rest.iter().position(|b| *b == b'\n').expect("header");
        let header = std::str::from_utf8(&rest[..nl]).expect("utf-8 header");
        let parts: Vec<&str> = header.split(' ').collect();
        assert_eq!(parts.len(), 3, "header {header:?}");
        assert_eq!(parts[0], *id);
        let size: usize = parts[2].parse().expect("size");
        let body = &rest[nl + 1..nl + 1 + size];
        rest = &rest[nl + 2 + size..];
        let oid = from_hex(id).expect("hex id");
        let (kind, read) = odb
            .read(&oid)
            .unwrap_or_else(|| panic!("{id} ({}) not read in-process", parts[1]));
        assert_eq!(kind.name(), parts[1], "kind of {id}");
        assert!(read == body, "contents of {id} ({})", parts[1]);
        match odb.answer(id) {
            Answer::Found(o, k, b) => assert!(o == oid && k == kind && b == body),
            other => panic!("{id}: {other:?}"),
        }
    }
    assert!(rest.is_empty());
    ids.len()
}

fn loose_count(dir: &Path) -> usize {
    let counts = git_in(dir, &["count-objects", "-v"]);
    counts
        .lines()
        .find_map(|l| l.strip_prefix("count: "))
        .and_then(|n| n.parse().ok())
        .expect("count-objects")
}

/// The longest delta chain of each pack, as `git verify-pack -v` says.
fn max_chain(dir: &Path) -> usize {
    let pack_dir = dir.join(".git/objects/pack");
    let mut longest = 0;
    for entry in std::fs::read_dir(pack_dir).expect("pack dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "idx") {
            let out = git_in(dir, &["verify-pack", "-v", path.to_str().expect("path")]);
            for line in out.lines() {
                if let Some(rest) = line.strip_prefix("chain length = ") {
                    let n: usize = rest.split(':').next().unwrap_or("0").parse().unwrap_or(0);
                    longest = longest.max(n);
                }
            }
        }
    }
    longest
}

/// (offset deltas, reference deltas) in the repository's packs, as read by [`Pack::entry`].
fn delta_kinds(dir: &Path) -> (usize, usize) {
    let odb = Odb::open(dir).expect("opens");
    let (mut ofs, mut refs) = (0, 0);
    for pack in odb.packs().expect("packs") {
        for i in 0..pack.count {
            match pack
                .entry(pack.offset(i).expect("offset"))
                .expect("entry")
                .kind
            {
                EntryKind::OfsDelta(_) => ofs += 1,
                EntryKind::RefDelta(_) => refs += 1,
                EntryKind::Whole(_) => {}
            }
        }
    }
    (ofs, refs)
}

#[test]
fn loose_objects_read_as_git_reads_them() {
    let repo = TempRepo::with_history("loose");
    assert!(loose_count(&repo.dir) > 20);
    assert!(!repo
        .dir
        .join(".git/objects/pack")
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some()));
    compare_all(&repo.dir);
}

#[test]
fn packed_objects_with_offset_deltas_read_as_git_reads_them() {
    let repo = TempRepo::with_history("packed");
    repo.git(&["gc", "-q", "--aggressive", "--prune=now"]);
    assert_eq!(loose_count(&repo.dir), 0, "everything is packed");
    assert!(max_chain(&repo.dir) >= 2, "the pack has delta chains");
    let (ofs, refs) = delta_kinds(&repo.dir);
    assert!(
        ofs > 10 && refs == 0,
        "{ofs} offset deltas, {refs} reference deltas"
    );
    compare_all(&repo.dir);
    // Packed references only.
    assert!(!repo.dir.join(".git/refs/heads/main").exists());
    refs_resolve_as_git_does(&repo.dir);
}

#[test]
fn packed_objects_with_ref_deltas_read_as_git_reads_them() {
    let repo = TempRepo::with_history("refdelta");
    repo.git(&["config", "repack.useDeltaBaseOffset", "false"]);
    repo.git(&["repack", "-q", "-adf", "--depth=20", "--window=20"]);
    assert_eq!(loose_count(&repo.dir), 0, "everything is packed");
    assert!(max_chain(&repo.dir) >= 2, "the pack has delta chains");
    let (ofs, refs) = delta_kinds(&repo.dir);
    assert!(
        ofs == 0 && refs > 10,
        "{ofs} offset deltas, {refs} reference deltas"
    );
    compare_all(&repo.dir);
}

#[test]
fn mixed_packed_and_loose_objects_read_as_git_reads_them() {
    let repo = TempRepo::with_history("mixed");
    repo.git(&["repack", "-q", "-ad"]);
    repo.write("proto/a.proto", "after the repack\n");
    repo.git(&["commit", "-q", "-am", "loose on top"]);
    assert!(loose_count(&repo.dir) > 0);
    compare_all(&repo.dir);
}

#[test]
fn worktrees_read_the_common_object_store() {
    let repo = TempRepo::with_history("worktree");
    repo.git(&["repack", "-q", "-adf"]);
    let wt = repo.dir.join("wt");
    repo.git(&["worktree", "add", "-q", wt.to_str().expect("path"), "topic"]);
    assert!(wt.join(".git").is_file());
    compare_all(&wt);
    let odb = Odb::open(&wt).expect("opens");
    // The worktree's HEAD is its own.
    let head = git_in(&wt, &["rev-parse", "HEAD"]);
    assert_eq!(git_in(&wt, &["rev-parse", "topic"]), head);
    assert_eq!(odb.resolve_rev("HEAD").map(|o| to_hex(&o)), Some(head));
    refs_resolve_as_git_does(&wt);
}

/// Every simple revision resolves as `git rev-parse` resolves it, and answers its requests as
/// `git cat-file --batch` does.
fn refs_resolve_as_git_does(dir: &Path) {
    let odb = Odb::open(dir).expect("opens");
    for rev in [
        "HEAD",
        "main",
        "refs/heads/main",
        "heads/main",
        "topic",
        "v1",
        "v2",
        "tags/v1",
        "light",
        "origin/main",
        "refs/remotes/origin/main",
    ] {
        let expected = git_in(dir, &["rev-parse", rev]);
        assert_eq!(
            odb.resolve_rev(rev).map(|o| to_hex(&o)),
            Some(expected),
            "{rev}"
        );
        for request in [
            format!("{rev}^{{commit}}"),
            format!("{rev}^{{tree}}"),
            format!("{rev}:proto/nested/deeper/b.proto"),
            format!("{rev}:proto/nested"),
            format!("{rev}:empty.txt"),
        ] {
            let expected = git_in(dir, &["rev-parse", &request]);
            let (kind, body) = cat_file(dir, &request).expect("git has it");
            match odb.answer(&request) {
                Answer::Found(oid, k, b) => {
                    assert_eq!(to_hex(&oid), expected, "{request}");
                    assert_eq!(k.name(), kind, "{request}");
                    assert!(b == body, "{request}");
                }
                other => panic!("{request}: {other:?}"),
            }
        }
        for missing in [
            format!("{rev}:no/such/file"),
            format!("{rev}:empty.txt/below"),
            format!("{rev}:proto/nested/deeper/c.proto"),
        ] {
            assert!(cat_file(dir, &missing).is_none());
            assert_eq!(odb.answer(&missing), Answer::Missing, "{missing}");
        }
    }
    // Left to git: revision expressions, abbreviated names, unknown names, odd paths.
    let head = git_in(dir, &["rev-parse", "HEAD"]);
    for request in [
        "HEAD~1^{commit}".to_owned(),
        "HEAD^^{tree}".to_owned(),
        format!("{}^{{commit}}", &head[..12]),
        "no-such-branch^{commit}".to_owned(),
        "main...topic^{commit}".to_owned(),
        "@^{commit}".to_owned(),
        "HEAD:".to_owned(),
        "HEAD:./proto".to_owned(),
        "HEAD:proto/".to_owned(),
        "FETCH_HEAD^{commit}".to_owned(),
        "0000000000000000000000000000000000000000".to_owned(),
    ] {
        assert_eq!(odb.answer(&request), Answer::Unknown, "{request}");
    }
}

/// `git cat-file --batch`'s answer to one request: kind and contents, `None` when missing.
fn cat_file(dir: &Path, request: &str) -> Option<(String, Vec<u8>)> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("git cat-file");
    writeln!(child.stdin.take().expect("stdin"), "{request}").expect("write");
    let out = child.wait_with_output().expect("output").stdout;
    let nl = out.iter().position(|b| *b == b'\n')?;
    let header = String::from_utf8_lossy(&out[..nl]).into_owned();
    if header.ends_with(" missing") {
        return None;
    }
    let parts: Vec<&str> = header.split(' ').collect();
    let size: usize = parts[2].parse().ok()?;
    Some((parts[1].to_owned(), out[nl + 1..nl + 1 + size].to_vec()))
}

#[test]
fn loose_refs_symbolic_head_tags_and_detached_head() {
    let repo = TempRepo::with_history("refs");
    assert!(repo.dir.join(".git/refs/heads/main").is_file());
    refs_resolve_as_git_does(&repo.dir);
    // Detached HEAD.
    let detached = repo.git(&["rev-parse", "HEAD~2"]);
    repo.git(&["checkout", "-q", "--detach", "HEAD~2"]);
    assert!(!std::fs::read_to_string(repo.dir.join(".git/HEAD"))
        .expect("HEAD")
        .starts_with("ref:"));
    let odb = Odb::open(&repo.dir).expect("opens");
    assert_eq!(odb.resolve_rev("HEAD").map(|o| to_hex(&o)), Some(detached));
    refs_resolve_as_git_does(&repo.dir);
    // Loose and packed both: the loose one wins.
    repo.git(&["pack-refs", "--all"]);
    let older = repo.git(&["rev-parse", "main~3"]);
    repo.git(&["update-ref", "refs/heads/topic", &older]);
    assert_eq!(odb.resolve_rev("topic").map(|o| to_hex(&o)), Some(older));
    refs_resolve_as_git_does(&repo.dir);
    // A tag and a branch of the same name: git takes the tag.
    repo.git(&["branch", "light", "main"]);
    assert_eq!(
        odb.resolve_rev("light").map(|o| to_hex(&o)),
        Some(repo.git(&["rev-parse", "refs/tags/light"]))
    );
}

#[test]
fn the_repo_falls_back_to_git_for_what_it_cannot_read() {
    let repo = TempRepo::with_history("fallback");
    let r = crate::git::Repo::new(&repo.dir);
    // A revision expression: through git.
    assert_eq!(
        r.resolve("HEAD~1").expect("resolves"),
        repo.git(&["rev-parse", "HEAD~1"])
    );
    assert_eq!(
        r.resolve("main").expect("resolves"),
        repo.git(&["rev-parse", "main"])
    );
    let rev = crate::git::Revision::Git("HEAD~1".to_owned());
    let files = r.list_files(&rev, "proto", ".proto").expect("lists");
    assert_eq!(files.len(), 9);
    let read = r.read_files(&rev, &files).expect("reads");
    assert_eq!(read.len(), 9);
    // (The helper trims git's output.)
    assert!(
        String::from_utf8_lossy(&read["proto/a.proto"]).trim_end()
            == repo.git(&["show", "HEAD~1:proto/a.proto"])
    );
    assert!(r.resolve("no-such-branch").is_err());
}

#[test]
fn unusual_stores_are_left_to_git() {
    let repo = TempRepo::with_history("unusual");
    assert!(Odb::open(&repo.dir).is_some());
    std::fs::write(repo.dir.join(".git/objects/info/alternates"), "/nowhere\n").expect("write");
    assert!(Odb::open(&repo.dir).is_none());
    std::fs::remove_file(repo.dir.join(".git/objects/info/alternates")).expect("rm");
    let head = repo.git(&["rev-parse", "HEAD"]);
    let first = repo.git(&["rev-parse", "HEAD~1"]);
    repo.git(&["replace", &head, &first]);
    assert!(Odb::open(&repo.dir).is_none());
    assert!(Odb::open(&repo.dir.join("proto")).is_none());
    let sha256 = TempRepo::new("sha256");
    let _ = std::fs::remove_dir_all(sha256.dir.join(".git"));
    sha256.git(&["init", "-q", "--object-format=sha256"]);
    assert!(Odb::open(&sha256.dir).is_none());
}

#[test]
fn corrupt_objects_are_not_read() {
    let repo = TempRepo::with_history("corrupt");
    let odb = Odb::open(&repo.dir).expect("opens");
    let blob = repo.git(&["rev-parse", "HEAD:proto/a.proto"]);
    let oid = from_hex(&blob).expect("hex");
    assert!(odb.read(&oid).is_some());
    let path = repo
        .dir
        .join(".git/objects")
        .join(&blob[..2])
        .join(&blob[2..]);
    let mut bytes = std::fs::read(&path).expect("read");
    let mut perms = std::fs::metadata(&path).expect("meta").permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&path, perms).expect("chmod");
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&path, &bytes).expect("write");
    assert!(odb.read(&oid).is_none());
    assert_eq!(odb.answer(&blob), Answer::Unknown);
    std::fs::write(&path, b"not zlib at all").expect("write");
    assert!(odb.read(&oid).is_none());
}

#[test]
fn deltas_apply_and_bad_deltas_are_refused() {
    let base = b"hello, world";
    // Base size 12, result size 11: copy 7 bytes from 0, insert "there".
    let delta = [12, 12, 0x90, 7, 5, b't', b'h', b'e', b'r', b'e'];
    assert_eq!(
        apply_delta(base, &delta).as_deref(),
        Some(&b"hello, there"[..])
    );
    // Copy with an offset byte: 5 bytes from offset 7.
    assert_eq!(
        apply_delta(base, &[12, 5, 0x91, 7, 5]).as_deref(),
        Some(&b"world"[..])
    );
    for bad in [
        &[][..],
        &[13, 11][..],                     // wrong base size
        &[12, 3, 0][..],                   // the reserved instruction
        &[12, 3, 0x91, 10, 5][..],         // a copy past the base
        &[12, 3, 5, b'a'][..],             // an insert past the delta
        &[12, 2, 3, b'a', b'b', b'c'][..], // longer than said
        &[12, 4, 3, b'a', b'b', b'c'][..], // shorter than said
        &[0xff; 12][..],                   // a size that never ends
    ] {
        assert_eq!(apply_delta(base, bad), None, "{bad:?}");
    }
}
