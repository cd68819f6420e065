//! A pull request controls the files the bot reads. Git stores symbolic links, so it can carry
//! `policy.toml -> /dev/zero`: each entry point refuses such a file, naming it, instead of
//! reading without end (issue 33).
#![cfg(unix)]
mod common;
use schema_history::{Census, Policy, Repo, Revision, Waivers};
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hostile-repo-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn link_to_dev_zero(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
}

fn refusal(path: &Path) -> String {
    format!(
        "{}: is a symbolic link (to /dev/zero); repository files are read only as regular files",
        path.display()
    )
}

#[test]
fn a_policy_linked_to_dev_zero_is_refused() {
    let file = scratch("policy").join("policy.toml");
    link_to_dev_zero(&file);
    let e = Policy::load(&file, "policy.toml").unwrap_err();
    assert_eq!(e.to_string(), refusal(&file));
}

#[test]
fn waivers_linked_to_dev_zero_are_refused() {
    let file = scratch("waivers").join("waivers.toml");
    link_to_dev_zero(&file);
    let e = Waivers::load(&file, "waivers.toml").unwrap_err();
    assert_eq!(e.to_string(), refusal(&file));
}

#[test]
fn a_working_tree_file_linked_to_dev_zero_is_refused() {
    let dir = scratch("worktree");
    link_to_dev_zero(&dir.join("proto/thunk.proto"));
    let repo = Repo::new(&dir);
    let e = repo
        .read_files(&Revision::WorkTree, &["proto/thunk.proto".to_owned()])
        .unwrap_err();
    assert_eq!(e.to_string(), refusal(&dir.join("proto/thunk.proto")));
}

#[test]
fn a_golden_manifest_linked_to_dev_zero_stops_the_census() {
    let dir = scratch("census");
    let manifest = dir.join("h100/v1/manifest.json");
    link_to_dev_zero(&manifest);
    let e = Census::load(&dir).unwrap_err();
    assert_eq!(e.to_string(), refusal(&manifest));
}

/// A `.proto` whose option value nests 1,000 levels (7 KB) overflowed protox's stack in
/// `aot schema diff`; the bot now refuses it before compiling, naming file and line, once.
#[test]
fn an_option_nested_a_thousand_levels_deep_fails_the_diff_naming_it() {
    use schema_history::{diff, DiffOptions, SchemaSpec};
    let repo = common::TempRepo::new("hostile_repo", "deep_option");
    let root = "syntax = \"proto3\";\npackage t;\nmessage Root { int32 x = 1; }\n";
    repo.write("proto/t/root.proto", root);
    let base = repo.commit("base", "2026-11-01");
    let deep = "{ a: ".repeat(1000) + "1" + &" }".repeat(1000);
    repo.write(
        "proto/t/root.proto",
        &format!("{root}message Deep {{\n  option (o) = {deep};\n}}\n"),
    );
    let mut opts = DiffOptions::project(
        &repo.dir,
        Revision::Git(base.clone()),
        Revision::WorkTree,
        common::date("2026-12-04"),
    );
    opts.spec = SchemaSpec {
        proto_dirs: vec!["proto".into()],
        files: Vec::new(),
        root: "t.Root".into(),
        ignorable: "t.ignorable".into(),
    };
    let e = diff(&opts).expect_err("the diff refuses the head");
    assert_eq!(
        e.to_string(),
        "compiling the protos of working tree: t/root.proto: line 5: nesting deeper than 64 \
         levels (braces, brackets, parentheses or angle brackets); the schema bot refuses it \
         before compiling"
    );
}
