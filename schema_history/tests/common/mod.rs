//! A scratch git repository for the bot's integration tests (e2e, realworld, gate): created in
//! the temp directory, committed with fixed dates where a test needs them, removed on drop. Each
//! test file adds the helpers of its own fixtures in its own `impl TempRepo`.
// Each test binary uses only part of it.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::Command;

use schema_history::Date;

pub struct TempRepo {
    pub dir: PathBuf,
}

pub fn date(s: &str) -> Date {
    s.parse().expect("test date")
}

impl TempRepo {
    /// An empty repository on branch `main`, its directory named for the suite and the test.
    pub fn new(suite: &str, name: &str) -> TempRepo {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "schema-{suite}-{name}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let repo = TempRepo { dir };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "user.name", "Schema Bot Test"]);
        repo.git(&["config", "user.email", "schema-bot@example.invalid"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo
    }

    pub fn git(&self, args: &[&str]) -> String {
        self.git_env(args, &[])
    }

    pub fn git_env(&self, args: &[&str], env: &[(&str, &str)]) -> String {
        git_in(&self.dir, args, env)
    }

    pub fn write(&self, path: &str, text: &str) {
        let full = self.dir.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(full, text).expect("write");
    }

    /// Commits everything (even nothing) as authored and committed at noon UTC of `day`;
    /// returns the commit id.
    pub fn commit(&self, message: &str, day: &str) -> String {
        let stamp = format!("{day}T12:00:00Z");
        self.git(&["add", "-A"]);
        self.git_env(
            &["commit", "-q", "--allow-empty", "-m", message],
            &[("GIT_AUTHOR_DATE", &stamp), ("GIT_COMMITTER_DATE", &stamp)],
        );
        self.git(&["rev-parse", "HEAD"])
    }

    /// Commits everything at the clock's time.
    pub fn commit_now(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }
}

/// `git -C DIR ARGS` with `env`: its trimmed stdout; a failure fails the test with git's words.
pub fn git_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

impl Drop for TempRepo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
