//! The git history walk with `--file` (issue 32): each state is read as the compared file and
//! its imports (tree lookups, each distinct blob once), and commits are skipped while none of
//! the paths those lookups touched changed, also across states that do not compile or lack the
//! root. The verdicts must be exactly those of reading every file under the proto directory.
mod common;

use common::{date, TempRepo};
use schema_history::{diff, DiffOptions, Report, Revision, SchemaSpec};

const TODAY: &str = "2026-12-01";

const THUNK: &str = r#"syntax = "proto3";
package rw;
import "rw/common.proto";
message ThunkProto {
  int64 id = 1;
  rw.Common common = 2;
}
"#;

const COMMON: &str = r#"syntax = "proto3";
package rw;
message Common {
  int64 a = 1;
  int64 legacy_offset = 2;
}
"#;

/// A repository without snapshots whose history has: field 2 of `rw.Common` (imported by the
/// compared file) used in January 2025 and deleted unreserved in February; a stretch where the
/// compared file lacks the root (March) and one where its import is missing (April); commits
/// that touch only an unrelated proto throughout.
fn repo(name: &str) -> TempRepo {
    let repo = TempRepo::new("history-walk", name);
    repo.write("proto/rw/thunk.proto", THUNK);
    repo.write("proto/rw/common.proto", COMMON);
    repo.write(
        "proto/rw/unrelated.proto",
        "syntax = \"proto3\";\npackage rw;\n",
    );
    repo.commit("start", "2025-01-10");
    repo.write(
        "proto/rw/common.proto",
        &COMMON.replace("  int64 legacy_offset = 2;\n", ""),
    );
    repo.commit("drop legacy_offset", "2025-02-03");
    let mut day = 4;
    let mut unrelated = |repo: &TempRepo, month: &str| {
        for _ in 0..3 {
            repo.write(
                "proto/rw/unrelated.proto",
                &format!("syntax = \"proto3\";\npackage rw;\nmessage U{day} {{}}\n"),
            );
            repo.commit("unrelated", &format!("2025-{month}-{day:02}"));
            day += 1;
        }
    };
    unrelated(&repo, "02");
    repo.write(
        "proto/rw/thunk.proto",
        &THUNK.replace("message ThunkProto", "message Renamed"),
    );
    repo.commit("no root", "2025-03-01");
    unrelated(&repo, "03");
    repo.write("proto/rw/thunk.proto", THUNK);
    repo.write(
        "proto/rw/thunk.proto",
        &THUNK.replace("rw/common.proto", "rw/gone.proto"),
    );
    repo.commit("missing import", "2025-04-01");
    unrelated(&repo, "04");
    repo.write("proto/rw/thunk.proto", THUNK);
    repo.commit("restored", "2025-05-01");
    unrelated(&repo, "05");
    repo
}

fn options(repo: &TempRepo, files: &[&str]) -> DiffOptions {
    let mut opts = DiffOptions::project(
        &repo.dir,
        Revision::Git("HEAD".into()),
        Revision::WorkTree,
        date(TODAY),
    );
    opts.spec = SchemaSpec {
        proto_dirs: vec!["proto".into()],
        files: files.iter().map(|f| (*f).to_owned()).collect(),
        root: "rw.ThunkProto".into(),
        ignorable: "rw.ignorable".into(),
    };
    opts.git_history.since = Some(date("2025-01-01"));
    opts
}

fn verdict(report: &Report) -> Vec<String> {
    report
        .findings
        .iter()
        .map(|f| {
            format!(
                "{:?} {} {} {:?}",
                f.severity,
                f.rule.id(),
                f.message,
                f.location
            )
        })
        .collect()
}

#[test]
fn a_reuse_in_an_imported_file_is_seen_as_with_every_file_read() {
    let repo = repo("reuse");
    repo.write(
        "proto/rw/common.proto",
        &COMMON.replace("int64 legacy_offset = 2;", "string label = 2;"),
    );
    let every = verdict(&diff(&options(&repo, &[])).expect("the bot runs"));
    assert!(
        every[0].starts_with("Error number-reused field `label` reuses number 2 of `rw.Common`"),
        "{every:?}"
    );
    assert!(
        every[0].contains("(2025-01-10) used it for `legacy_offset`"),
        "{every:?}"
    );
    for files in [["rw/thunk.proto"], ["proto/rw/thunk.proto"]] {
        let report = diff(&options(&repo, &files)).expect("the bot runs");
        assert_eq!(verdict(&report), every, "--file {files:?}");
    }
}

#[test]
fn a_rollback_through_states_without_the_root_is_no_reuse() {
    let repo = repo("rollback");
    repo.write("proto/rw/common.proto", COMMON);
    let every = verdict(&diff(&options(&repo, &[])).expect("the bot runs"));
    assert!(
        every.iter().all(|f| !f.contains("number-reused")),
        "{every:?}"
    );
    let report = diff(&options(&repo, &["rw/thunk.proto"])).expect("the bot runs");
    assert_eq!(verdict(&report), every);
}

/// A compared file that is a link, or absent at the base, is read as every file would be: the
/// walk's lookups find no blob, and the verdict is the same.
#[test]
fn a_compared_file_missing_from_older_states_reads_the_same() {
    let repo = TempRepo::new("history-walk", "late-file");
    repo.write(
        "proto/rw/other.proto",
        "syntax = \"proto3\";\npackage rw;\n",
    );
    repo.commit("start", "2025-01-10");
    repo.write("proto/rw/thunk.proto", THUNK);
    repo.write("proto/rw/common.proto", COMMON);
    repo.commit("add", "2025-02-01");
    repo.write(
        "proto/rw/common.proto",
        &COMMON.replace("int64 legacy_offset = 2;", "reserved 2;"),
    );
    let every = verdict(&diff(&options(&repo, &[])).expect("the bot runs"));
    let report = diff(&options(&repo, &["rw/thunk.proto"])).expect("the bot runs");
    assert_eq!(verdict(&report), every);
}
