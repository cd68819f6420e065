use std::collections::BTreeMap;

use super::*;

#[test]
fn version_placeholders_name_the_newest_and_the_next() {
    let versions = [("h100_sxm".to_owned(), 9)].into_iter().collect();
    assert_eq!(
        expand_versions(
            "goldens/executables/h100_sxm/{newest:h100_sxm} -> {next:h100_sxm}: \"version\": {next_number:h100_sxm} {keep}",
            &versions
        )
        .unwrap(),
        "goldens/executables/h100_sxm/v9 -> v10: \"version\": 10 {keep}"
    );
    assert_eq!(
        expand_versions("{newest:a100}", &versions)
            .unwrap_err()
            .to_string(),
        "no golden versions of target \"a100\""
    );
    assert_eq!(
        expand_versions("message M { x", &versions).unwrap(),
        "message M { x"
    );
}

const GATES: &str = "[gate.bot]\ndescription = \"d\"\ncommand = [\"{aot}\"]\n";

fn parse_err(edit: &str) -> String {
    match Catalogue::parse(&format!("{GATES}{edit}")) {
        Ok(_) => panic!("the catalogue parsed"),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn the_repository_catalogue_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("gate_selftest/catalogue.toml");
    let text = std::fs::read_to_string(&path).expect("the catalogue is in the repository");
    let c = Catalogue::parse(&text).expect("the catalogue is valid");
    assert!(c.edit.iter().any(|e| e.quick), "no quick subset");
    assert!(c.edit.iter().filter(|e| e.kind == Kind::Safe).count() >= 3);
}

/// Every entry's text edits still apply to today's tree: each `find` occurs exactly once in
/// its file, after the entry's earlier edits (applied in memory, nothing is written). A
/// refactor that moves an anchor then fails `cargo test` here, instead of only the
/// self-test's run in CI reporting a BROKEN ENTRY (which is how four went stale once).
#[test]
fn every_catalogue_edit_applies_to_the_tree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root");
    let text = std::fs::read_to_string(root.join("harness/gate_selftest/catalogue.toml"))
        .expect("the catalogue is in the repository");
    let c = Catalogue::parse(&text).expect("the catalogue is valid");
    let mut stale = Vec::new();
    let versions = newest_versions(root);
    for e in &c.edit {
        let mut files: BTreeMap<String, String> = BTreeMap::new();
        let mut ran = false;
        for (i, step) in e.step.iter().enumerate() {
            let Step::Replace { file, find, with } = step else {
                ran = true;
                continue;
            };
            let expand = |t: &str| expand_versions(t, &versions).unwrap_or_else(|e| panic!("{e}"));
            let (file, find, with) = (expand(file), expand(find), expand(with));
            let text = match files.get(file.as_str()) {
                Some(t) => t.clone(),
                None => match std::fs::read_to_string(root.join(&file)) {
                    Ok(t) => t,
                    // A file a `run` step makes (a copied golden version): only the run
                    // itself can show whether the anchor is there.
                    Err(err) if ran && err.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(err) => {
                        stale.push(format!("{} step {}: reading {file}: {err}", e.name, i + 1));
                        continue;
                    }
                },
            };
            let n = text.matches(find.as_str()).count();
            if n != 1 {
                stale.push(format!(
                    "{} step {}: the text occurs {n} times in {file} (must be once)",
                    e.name,
                    i + 1
                ));
                continue;
            }
            files.insert(file, text.replacen(find.as_str(), &with, 1));
        }
    }
    assert!(
        stale.is_empty(),
        "stale catalogue entries:\n{}",
        stale.join("\n")
    );
}

#[test]
fn a_break_without_expectation_is_rejected() {
    let e = "[[edit]]\nname = \"x\"\nkind = \"break\"\nsummary = \"s\"\ngates = [\"bot\"]\n\
             [[edit.step]]\ndo = \"run\"\ncommand = [\"true\"]\n";
    assert_eq!(
        parse_err(e),
        "edit x: a break must name the gate that catches it"
    );
}

#[test]
fn an_unknown_gate_is_rejected() {
    let e = "[[edit]]\nname = \"x\"\nkind = \"safe\"\nsummary = \"s\"\ngates = [\"nope\"]\n\
             [[edit.step]]\ndo = \"run\"\ncommand = [\"true\"]\n";
    assert_eq!(parse_err(e), "edit x: unknown gate nope");
}

#[test]
fn an_expectation_on_a_gate_not_run_is_rejected() {
    let e = "[gate.goldens]\ndescription = \"d\"\ncommand = [\"true\"]\n\
             [[edit]]\nname = \"x\"\nkind = \"break\"\nsummary = \"s\"\ngates = [\"bot\"]\n\
             expect = [{ gate = \"goldens\", says = \"y\" }]\n\
             [[edit.step]]\ndo = \"run\"\ncommand = [\"true\"]\n";
    assert_eq!(
        parse_err(e),
        "edit x: expects gate goldens to catch it but does not run it"
    );
}

#[test]
fn a_replacement_must_match_once() {
    let dir = std::env::temp_dir().join(format!("gate-selftest-unit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("f.txt"), "a b a").expect("write");
    let err = apply_replace(&dir, "f.txt", "a", "c").expect_err("two occurrences");
    assert_eq!(
        err.to_string(),
        "the edit no longer applies: the text to replace occurs 2 times in f.txt (must be once):\na"
    );
    apply_replace(&dir, "f.txt", "b", "c").expect("one occurrence");
    assert_eq!(
        std::fs::read_to_string(dir.join("f.txt")).expect("read"),
        "a c a"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn run_of(gate: &str, failed: bool, output: &str) -> GateRun {
    GateRun {
        gate: gate.into(),
        failed,
        secs: 1.0,
        log: PathBuf::from("l"),
        output: output.into(),
    }
}

fn entry(kind: Kind, expect: Vec<Expect>) -> Entry {
    Entry {
        name: "e".into(),
        kind,
        summary: String::new(),
        origin: String::new(),
        quick: false,
        gates: vec!["bot".into()],
        expect,
        step: Vec::new(),
    }
}

#[test]
fn a_break_the_gate_passes_is_missed_with_a_clear_message() {
    let e = entry(
        Kind::Break,
        vec![Expect {
            gate: "bot".into(),
            says: "shmem_bytes".into(),
        }],
    );
    let mut p = Vec::new();
    assert_eq!(
        judge(&e, &[run_of("bot", false, "")], &mut p),
        Verdict::Missed
    );
    assert_eq!(
        p,
        ["expected gate bot to catch it, but it passed (1.0 s; log l)"]
    );
}

#[test]
fn a_failure_that_does_not_name_the_construct_is_not_a_catch() {
    let e = entry(
        Kind::Break,
        vec![Expect {
            gate: "bot".into(),
            says: "shmem_bytes".into(),
        }],
    );
    let mut p = Vec::new();
    let v = judge(&e, &[run_of("bot", true, "error: internal")], &mut p);
    assert_eq!(v, Verdict::Missed);
    assert_eq!(
        p,
        ["gate bot failed, but its output does not say `shmem_bytes` (log l)"]
    );
    let mut p = Vec::new();
    let v = judge(&e, &[run_of("bot", true, "error[x]: shmem_bytes")], &mut p);
    assert_eq!((v, p.len()), (Verdict::Caught, 0));
}

#[test]
fn a_safe_edit_a_gate_fails_is_a_false_alarm() {
    let e = entry(Kind::Safe, Vec::new());
    let mut p = Vec::new();
    assert_eq!(
        judge(&e, &[run_of("bot", true, "")], &mut p),
        Verdict::FalseAlarm
    );
    assert_eq!(p, ["gate bot failed on a safe edit (log l)"]);
}
