//! The repository reads (`Repo`, on gix) checked against git's own: listings, file contents,
//! revisions, abbreviations and merge bases, on loose objects, packs with offset and reference
//! deltas, worktrees, shared clones (alternates) and corrupt objects.
mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::TempRepo;
use schema_history::{Repo, Revision};

fn git_in(dir: &Path, args: &[&str]) -> String {
    common::git_in(dir, args, &[])
}

/// Several commits over nested directories, with large files that change a little each time
/// (so that a repack stores deltas), a branch, tags and a remote-tracking ref.
fn with_history(name: &str) -> TempRepo {
    let repo = TempRepo::new("git", name);
    repo.git(&["config", "gc.auto", "0"]);
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
        repo.commit(
            &format!("version {version}"),
            &format!("2024-01-0{}", version + 1),
        );
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

fn temp_dir(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    std::env::temp_dir().join(format!("schema-git-{name}-{}-{nanos}", std::process::id()))
}

/// `git cat-file --batch`'s answer for each request: contents, `None` when missing.
fn cat_files(dir: &Path, requests: &[String]) -> Vec<Option<Vec<u8>>> {
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
        for r in requests {
            writeln!(stdin, "{r}").expect("write");
        }
    }
    let out = child.wait_with_output().expect("cat-file output").stdout;
    let mut rest = out.as_slice();
    let mut answers = Vec::new();
    for _ in requests {
        let nl = rest.iter().position(|b| *b == b'\n').expect("header");
        let header = String::from_utf8_lossy(&rest[..nl]).into_owned();
        if header.ends_with(" missing") {
            answers.push(None);
            rest = &rest[nl + 1..];
            continue;
        }
        let size: usize = header
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .expect("size");
        answers.push(Some(rest[nl + 1..nl + 1 + size].to_vec()));
        rest = &rest[nl + 2 + size..];
    }
    answers
}

/// At every commit (`git rev-list --all`), the listings of the whole tree and two directories,
/// and every file's contents, as git gives them. Returns how many files were compared.
fn compare_all(dir: &Path) -> usize {
    let repo = Repo::new(dir);
    let mut compared = 0;
    for commit in git_in(dir, &["rev-list", "--all"]).lines() {
        let rev = Revision::Git(commit.to_owned());
        for sub in ["", "proto", "proto/nested"] {
            let mut args = vec!["ls-tree", "-r", "--name-only", commit];
            if !sub.is_empty() {
                args.extend(["--", sub]);
            }
            let mut expected: Vec<String> = git_in(dir, &args).lines().map(str::to_owned).collect();
            expected.sort();
            assert_eq!(repo.list_files(&rev, sub, "").expect("lists"), expected);
        }
        let files = repo.list_files(&rev, "", "").expect("lists");
        let requests: Vec<String> = files.iter().map(|f| format!("{commit}:{f}")).collect();
        let expected: BTreeMap<String, Vec<u8>> = files
            .iter()
            .cloned()
            .zip(cat_files(dir, &requests))
            .map(|(f, body)| (f, body.expect("git has it")))
            .collect();
        assert!(repo.read_files(&rev, &files).expect("reads") == expected);
        // Read by path, without a listing first.
        let fresh = Repo::new(dir);
        assert!(fresh.read_files(&rev, &files).expect("reads") == expected);
        compared += files.len();
    }
    assert!(compared > 20, "too few files: {compared}");
    compared
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

#[test]
fn loose_objects_read_as_git_reads_them() {
    let repo = with_history("loose");
    assert!(loose_count(&repo.dir) > 20);
    assert!(!repo
        .dir
        .join(".git/objects/pack")
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some()));
    compare_all(&repo.dir);
    refs_resolve_as_git_does(&repo.dir);
}

#[test]
fn packed_objects_with_offset_deltas_read_as_git_reads_them() {
    let repo = with_history("packed");
    repo.git(&["gc", "-q", "--aggressive", "--prune=now"]);
    assert_eq!(loose_count(&repo.dir), 0, "everything is packed");
    assert!(max_chain(&repo.dir) >= 2, "the pack has delta chains");
    compare_all(&repo.dir);
    // Packed references only.
    assert!(!repo.dir.join(".git/refs/heads/main").exists());
    refs_resolve_as_git_does(&repo.dir);
}

#[test]
fn packed_objects_with_ref_deltas_read_as_git_reads_them() {
    let repo = with_history("refdelta");
    repo.git(&["config", "repack.useDeltaBaseOffset", "false"]);
    repo.git(&["repack", "-q", "-adf", "--depth=20", "--window=20"]);
    assert_eq!(loose_count(&repo.dir), 0, "everything is packed");
    assert!(max_chain(&repo.dir) >= 2, "the pack has delta chains");
    compare_all(&repo.dir);
}

#[test]
fn mixed_packed_and_loose_objects_read_as_git_reads_them() {
    let repo = with_history("mixed");
    repo.git(&["repack", "-q", "-ad"]);
    repo.write("proto/a.proto", "after the repack\n");
    repo.commit_now("loose on top");
    assert!(loose_count(&repo.dir) > 0);
    compare_all(&repo.dir);
}

#[test]
fn worktrees_read_the_common_object_store() {
    let repo = with_history("worktree");
    repo.git(&["repack", "-q", "-adf"]);
    let wt = repo.dir.join("wt");
    repo.git(&["worktree", "add", "-q", wt.to_str().expect("path"), "topic"]);
    assert!(wt.join(".git").is_file());
    compare_all(&wt);
    // The worktree's HEAD is its own.
    let head = git_in(&wt, &["rev-parse", "HEAD"]);
    assert_eq!(git_in(&wt, &["rev-parse", "topic"]), head);
    assert_eq!(Repo::new(&wt).resolve("HEAD").expect("resolves"), head);
    refs_resolve_as_git_does(&wt);
}

#[test]
fn shared_clones_read_through_their_alternates() {
    let repo = with_history("origin");
    repo.git(&["repack", "-q", "-ad"]);
    let clone = TempRepo {
        dir: temp_dir("shared"),
    };
    std::fs::remove_dir_all(&clone.dir).ok();
    git_in(
        &repo.dir,
        &[
            "clone",
            "-q",
            "--shared",
            repo.dir.to_str().expect("path"),
            clone.dir.to_str().expect("path"),
        ],
    );
    assert!(clone.dir.join(".git/objects/info/alternates").is_file());
    assert_eq!(loose_count(&clone.dir), 0, "every object is the origin's");
    compare_all(&clone.dir);
}

/// Every revision (names, expressions, abbreviations) resolves as `git rev-parse` resolves it,
/// and what git cannot resolve is an error.
fn refs_resolve_as_git_does(dir: &Path) {
    let repo = Repo::new(dir);
    let head = git_in(dir, &["rev-parse", "HEAD"]);
    let short = head[..12].to_owned();
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
        "HEAD~1",
        "HEAD^^",
        "@",
        "main~2",
        short.as_str(),
    ] {
        let expected = git_in(dir, &["rev-parse", &format!("{rev}^{{commit}}")]);
        assert_eq!(repo.resolve(rev).expect(rev), expected, "{rev}");
        let listed = repo
            .list_files(&Revision::Git(rev.to_owned()), "proto/nested", ".proto")
            .expect("lists");
        let mut expected: Vec<String> = git_in(
            dir,
            &["ls-tree", "-r", "--name-only", rev, "--", "proto/nested"],
        )
        .lines()
        .map(str::to_owned)
        .collect();
        expected.sort();
        assert_eq!(listed, expected, "{rev}");
    }
    for bad in [
        "no-such-branch",
        "main...topic",
        "FETCH_HEAD",
        "0000000000000000000000000000000000000000",
        "",
    ] {
        assert!(repo.resolve(bad).is_err(), "{bad}");
    }
    // Paths git finds nothing under: nothing is listed or read.
    let rev = Revision::Git("HEAD".to_owned());
    for odd in ["./proto", "proto//nested", "proto/../proto", "no/such"] {
        assert_eq!(
            repo.list_files(&rev, odd, "").expect("lists"),
            Vec::<String>::new()
        );
    }
    let odd: Vec<String> = ["proto/./a.proto", "proto//a.proto", "empty.txt/below"]
        .map(str::to_owned)
        .to_vec();
    assert!(repo.read_files(&rev, &odd).expect("reads").is_empty());
}

#[test]
fn loose_refs_symbolic_head_tags_and_detached_head() {
    let repo = with_history("refs");
    assert!(repo.dir.join(".git/refs/heads/main").is_file());
    refs_resolve_as_git_does(&repo.dir);
    // Detached HEAD.
    let detached = repo.git(&["rev-parse", "HEAD~2"]);
    repo.git(&["checkout", "-q", "--detach", "HEAD~2"]);
    assert!(!std::fs::read_to_string(repo.dir.join(".git/HEAD"))
        .expect("HEAD")
        .starts_with("ref:"));
    assert_eq!(
        Repo::new(&repo.dir).resolve("HEAD").expect("HEAD"),
        detached
    );
    // Loose and packed both: the loose one wins.
    repo.git(&["pack-refs", "--all"]);
    let older = repo.git(&["rev-parse", "main~3"]);
    repo.git(&["update-ref", "refs/heads/topic", &older]);
    assert_eq!(Repo::new(&repo.dir).resolve("topic").expect("topic"), older);
    // A tag and a branch of the same name: git takes the tag.
    repo.git(&["branch", "light", "main"]);
    assert_eq!(
        Repo::new(&repo.dir).resolve("light").expect("light"),
        repo.git(&["rev-parse", "refs/tags/light^{commit}"])
    );
}

#[test]
fn head_abbreviation_and_merge_base_are_gits() {
    let repo = with_history("base");
    let r = Repo::new(&repo.dir);
    assert_eq!(
        r.short_head(),
        Some(repo.git(&["rev-parse", "--short=10", "HEAD"]))
    );
    repo.git(&["checkout", "-q", "-b", "feature", "topic"]);
    repo.write("proto/feature.proto", "syntax = \"proto3\";\n");
    repo.commit_now("feature");
    assert_eq!(
        Repo::new(&repo.dir).default_base().expect("merge base"),
        repo.git(&["merge-base", "HEAD", "main"])
    );
    // Not a repository: no abbreviation, and an error naming the directory.
    let plain = temp_dir("plain");
    std::fs::create_dir_all(&plain).expect("mkdir");
    let r = Repo::new(&plain);
    assert_eq!(r.short_head(), None);
    let err = r.resolve("HEAD").expect_err("no repository").to_string();
    let _ = std::fs::remove_dir_all(&plain);
    assert!(err.starts_with("git open "), "{err}");
}

#[test]
fn corrupt_objects_are_errors_not_missing_files() {
    let repo = with_history("corrupt");
    let blob = repo.git(&["rev-parse", "HEAD:proto/a.proto"]);
    let path = repo
        .dir
        .join(".git/objects")
        .join(&blob[..2])
        .join(&blob[2..]);
    let bytes = std::fs::read(&path).expect("read");
    let mut perms = std::fs::metadata(&path).expect("meta").permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&path, perms).expect("chmod");
    let rev = Revision::Git("HEAD".to_owned());
    let files = vec!["proto/a.proto".to_owned()];
    for corrupt in [&bytes[..bytes.len() / 2], b"not zlib at all"] {
        std::fs::write(&path, corrupt).expect("write");
        let err = Repo::new(&repo.dir)
            .read_files(&rev, &files)
            .expect_err("corrupt");
        assert!(
            err.to_string()
                .starts_with(&format!("git cat-file blob {blob}: ")),
            "{err}"
        );
    }
}

#[test]
fn sha256_repositories_are_a_clear_error() {
    let repo = TempRepo::new("git", "sha256");
    let _ = std::fs::remove_dir_all(repo.dir.join(".git"));
    repo.git(&["init", "-q", "--object-format=sha256"]);
    repo.write("proto/a.proto", "syntax = \"proto3\";\n");
    repo.git(&["add", "-A"]);
    repo.git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "-m",
        "one",
    ]);
    let err = Repo::new(&repo.dir)
        .list_files(&Revision::Git("HEAD".into()), "proto", ".proto")
        .expect_err("sha1 only");
    assert!(err.to_string().starts_with("git "), "{err}");
}
