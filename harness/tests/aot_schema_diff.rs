//! `aot schema diff` end to end on a repository that is not this one: a verdict, and, when there
//! is none (exit 2), what each format still writes (json an error object, github an `::error`).
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("aot_schema_diff-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("proto/rw")).expect("temp repo");
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(args)
            .env("GIT_AUTHOR_DATE", "2026-11-01T12:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-11-01T12:00:00Z")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.name", "Schema Bot Test"]);
    git(&["config", "user.email", "schema-bot@example.invalid"]);
    std::fs::write(
        dir.join("proto/rw/t.proto"),
        "edition = \"2023\";\npackage rw;\nmessage T {\n  int32 a = 1;\n}\n",
    )
    .expect("write");
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "base"]);
    dir
}

fn aot_diff(dir: &Path, format: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aot"))
        .args(["schema", "diff", "--repo"])
        .arg(dir)
        .args([
            "--proto-dir",
            "proto",
            "--root",
            "rw.T",
            "--against",
            "HEAD",
        ])
        .args(["--today", "2026-12-01", "--format", format])
        .output()
        .expect("aot runs")
}

#[test]
fn an_editions_change_gets_a_verdict() {
    let dir = repo("verdict");
    std::fs::write(
        dir.join("proto/rw/t.proto"),
        "edition = \"2023\";\npackage rw;\nmessage T {\n  int32 a = 1 [features.field_presence = LEGACY_REQUIRED];\n}\n",
    )
    .expect("write");
    let out = aot_diff(&dir, "json");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json report");
    assert_eq!(report["findings"][0]["rule"], "feature-changed");
}

#[test]
fn no_verdict_still_writes_json_and_github() {
    let dir = repo("broken");
    std::fs::write(
        dir.join("proto/rw/t.proto"),
        "edition = \"2023\";\npackage rw;\nmessage T {\n  int32 a = 1\n}\n",
    )
    .expect("write");
    let out = aot_diff(&dir, "json");
    assert_eq!(out.status.code(), Some(2));
    let error: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json error object");
    let message = error["error"]["message"].as_str().expect("a message");
    assert!(
        message.starts_with("compiling the protos of working tree: proto/rw/t.proto:5:1: "),
        "{message}"
    );
    assert_eq!(error["error"]["exit_code"], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains(message));

    let out = aot_diff(&dir, "github");
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("::error title=schema-bot::the schema bot could not run: compiling the protos of working tree: proto/rw/t.proto:5:1: "),
        "{stdout}"
    );
}
