//! A pull request controls the files the bot reads. Git stores symbolic links, so it can carry
//! `policy.toml -> /dev/zero`: each entry point refuses such a file, naming it, instead of
//! reading without end (issue 33).
#![cfg(unix)]
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
