//! Regeneration for release engineers: deterministic, atomic, never touching existing versions,
//! refusing to pin an unchanged output unless forced.
use std::path::{Path, PathBuf};

use harness::cmd::goldens::target_config_path;
use harness::GoldenStore;
use harness::{curated_cases, Case};
use harness::{hash_files, verify_dir};
use harness::{regenerate, RegenOptions, RegenOutcome};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("regen-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A few cases covering kernels, gemm, control flow and collectives, to keep the test quick.
fn some_cases() -> Vec<Case> {
    let wanted = [
        "softmax",
        "matmul",
        "cond",
        "reduce_scatter",
        "custom_call_axpy",
    ];
    let cases: Vec<Case> = curated_cases()
        .unwrap()
        .into_iter()
        .filter(|c| wanted.contains(&c.name.as_str()))
        .collect();
    assert_eq!(cases.len(), wanted.len());
    cases
}

fn options(force: bool) -> RegenOptions {
    RegenOptions {
        target: "h100_sxm".into(),
        target_config: target_config_path("h100_sxm"),
        force,
        today: Some("2026-11-29".into()),
        commit: Some("0123456789ab".into()),
        progress: false,
    }
}

fn all_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn regenerating_twice_into_two_stores_gives_identical_bytes() {
    let (a, b) = (scratch("a"), scratch("b"));
    let cases = some_cases();
    for dir in [&a, &b] {
        let outcome = regenerate(&GoldenStore::new(dir), &cases, &options(false)).unwrap();
        assert!(
            matches!(outcome, RegenOutcome::Written { version: 1, .. }),
            "{outcome:?}"
        );
    }
    let (fa, fb) = (
        all_bytes(&a.join("h100_sxm/v1")),
        all_bytes(&b.join("h100_sxm/v1")),
    );
    assert!(fa.len() > 10);
    assert_eq!(fa, fb, "two regenerations differ");
    assert_eq!(verify_dir(&a.join("h100_sxm/v1")), vec![]);
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

#[test]
fn unchanged_output_is_refused_unless_forced_and_old_versions_are_untouched() {
    let dir = scratch("force");
    let store = GoldenStore::new(&dir);
    let cases = some_cases();
    regenerate(&store, &cases, &options(false)).unwrap();
    let v1 = hash_files(&dir.join("h100_sxm/v1")).unwrap();

    // An interrupted earlier run left a temporary directory: it is not a version, and the next
    // run cleans it up.
    let stale = dir.join("h100_sxm/.v2.tmp-999999");
    std::fs::create_dir_all(stale.join("softmax")).unwrap();
    assert_eq!(store.versions("h100_sxm").unwrap(), vec![1]);

    let outcome = regenerate(&store, &cases, &options(false)).unwrap();
    assert_eq!(outcome, RegenOutcome::Unchanged { version: 1 });
    assert!(!stale.exists(), "stale temporary directory left behind");
    assert_eq!(store.versions("h100_sxm").unwrap(), vec![1]);

    let outcome = regenerate(&store, &cases, &options(true)).unwrap();
    match outcome {
        RegenOutcome::Written {
            version,
            added,
            removed,
            ..
        } => {
            assert_eq!(version, 2);
            assert!(
                added.is_empty() && removed.is_empty(),
                "{added:?} {removed:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(store.versions("h100_sxm").unwrap(), vec![1, 2]);
    assert_eq!(
        hash_files(&dir.join("h100_sxm/v1")).unwrap(),
        v1,
        "v1 was modified"
    );

    // A census difference is reported when the case list changes.
    let fewer: Vec<Case> = cases
        .into_iter()
        .filter(|c| c.name != "reduce_scatter")
        .collect();
    match regenerate(&store, &fewer, &options(false)).unwrap() {
        RegenOutcome::Written {
            version, removed, ..
        } => {
            assert_eq!(version, 3);
            assert!(
                removed.contains("xla.gpu.ThunkProto.reduce_scatter_thunk"),
                "{removed:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_case_whose_outputs_are_wrong_is_never_recorded() {
    let dir = scratch("wrong");
    let src = scratch("wrong-src");
    std::fs::create_dir_all(&src).unwrap();
    let root = harness::repo_root();
    std::fs::copy(
        root.join("testdata/corpus/hlo/add.hlo"),
        src.join("add.hlo"),
    )
    .unwrap();
    let io = std::fs::read_to_string(root.join("testdata/corpus/hlo/add.io.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&io).unwrap();
    v["outputs"][0]["data"][0] = serde_json::json!(12345.0);
    std::fs::write(src.join("add.io.json"), v.to_string()).unwrap();
    let cases = harness::cases_in(&src).unwrap();
    let err = regenerate(&GoldenStore::new(&dir), &cases, &options(false)).unwrap_err();
    assert!(
        format!("{err:#}").contains("refusing to record them"),
        "{err:#}"
    );
    assert!(
        GoldenStore::new(&dir).versions("h100_sxm").is_err(),
        "a partial version was left"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&src);
}
