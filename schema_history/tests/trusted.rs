//! The bot's own inputs come from the base (issue 35): a change that loosens the policy or the
//! waivers is judged by the base's and gets an enforced `trusted-input-loosened` finding (a
//! maintainer's approval turns it into a note and applies the head's); golden versions are
//! append-only against the base (`golden-store-rewritten`); enforced rules cannot be demoted or
//! waived. Each test is a scratch repository: a base commit, then the change in the working tree.
mod common;

use common::{date, TempRepo};

use schema_history::{diff, DiffOptions, Report, Revision, SchemaSpec};

const TODAY: &str = "2026-12-01";

const SCHEMA: &str =
    "syntax = \"proto3\";\npackage t;\n\nmessage Root {\n  int64 id = 1;\n  string name = 2;\n}\n";
const SCHEMA_WITHOUT_NAME: &str =
    "syntax = \"proto3\";\npackage t;\n\nmessage Root {\n  int64 id = 1;\n}\n";

const POLICY: &str = "schema_history/policy.toml";
const WAIVERS: &str = "schema_history/waivers.toml";

impl TempRepo {
    /// A base commit with the schema, `policy` and `waivers` (empty text: no file), and goldens
    /// `h100/v1` (created 2026-11-01) and `h100/v0` (created 2026-01-01); returns its id.
    fn base(name: &str, policy: &str, waivers: &str) -> (TempRepo, String) {
        let repo = TempRepo::new("trusted", name);
        repo.write("proto/t/root.proto", SCHEMA);
        if !policy.is_empty() {
            repo.write(POLICY, policy);
        }
        if !waivers.is_empty() {
            repo.write(WAIVERS, waivers);
        }
        for (v, created) in [("v0", "2026-01-01"), ("v1", "2026-11-01")] {
            repo.write(
                &format!("goldens/executables/h100/{v}/manifest.json"),
                &format!("{{\"version\": 1, \"target\": \"h100\", \"created\": \"{created}\"}}\n"),
            );
            repo.write(
                &format!("goldens/executables/h100/{v}/add/io.json"),
                "{\"outputs\": [1, 2]}\n",
            );
        }
        repo.write("goldens/executables/census.json", "{}\n");
        let base = repo.commit("base", "2026-11-20");
        (repo, base)
    }

    fn options(&self, base: &str) -> DiffOptions {
        let mut opts = DiffOptions::project(
            &self.dir,
            Revision::Git(base.into()),
            Revision::WorkTree,
            date(TODAY),
        );
        opts.spec = SchemaSpec {
            proto_dirs: vec!["proto".into()],
            files: Vec::new(),
            root: "t.Root".into(),
            ignorable: "t.ignorable".into(),
        };
        opts
    }

    fn bot(&self, base: &str, approved: bool) -> Report {
        let mut opts = self.options(base);
        opts.approve_trusted_inputs = approved;
        diff(&opts).expect("the bot runs")
    }
}

/// `severity rule construct: message` of each finding, and the waived ones.
fn verdict(report: &Report) -> (Vec<String>, Vec<String>) {
    let shown = |f: &schema_history::Finding| {
        format!("{} {} {}: {}", f.severity, f.rule, f.construct, f.message)
    };
    (
        report.findings.iter().map(shown).collect(),
        report.waived.iter().map(|(f, _)| shown(f)).collect(),
    )
}

const DELETED: &str = "error field-deleted t.Root.name: field `name` = 2 deleted from `t.Root`: the deletion reserves neither its number 2 nor its name `name`";

fn deleted_finding(report: &Report) -> Option<String> {
    verdict(report)
        .0
        .into_iter()
        .find(|f| f.split(' ').nth(1) == Some("field-deleted"))
}

#[test]
fn a_policy_demotion_in_the_change_is_judged_by_the_base_policy() {
    let (repo, base) = TempRepo::base(
        "demote",
        "[breaking.rules]\nfield-deleted = \"error\"\n",
        "",
    );
    repo.write("proto/t/root.proto", SCHEMA_WITHOUT_NAME);
    repo.write(POLICY, "[breaking.rules]\nfield-deleted = \"off\"\n");
    let report = repo.bot(&base, false);
    let (findings, _) = verdict(&report);
    assert!(
        deleted_finding(&report).is_some_and(|f| f.starts_with("error field-deleted")),
        "{findings:#?}"
    );
    assert!(findings.contains(&"error trusted-input-loosened policy:breaking.rules.field-deleted: the policy lowers field-deleted from error to off".to_owned()), "{findings:#?}");
    assert_eq!(report.exit_code(), 1);

    // Approved: the head's policy applies (the deletion is off) and the loosening is a note.
    let report = repo.bot(&base, true);
    let (findings, _) = verdict(&report);
    assert_eq!(deleted_finding(&report), None, "{findings:#?}");
    assert_eq!(
        findings,
        ["note trusted-input-loosened policy:breaking.rules.field-deleted: the policy lowers field-deleted from error to off (approved by a maintainer: the head's policy and waivers apply)"]
    );
    assert_eq!(report.exit_code(), 0);
}

#[test]
fn a_policy_created_by_the_change_is_compared_with_the_defaults() {
    let (repo, base) = TempRepo::base("created", "", "");
    repo.write(
        POLICY,
        "[breaking]\nname_only_reservation = \"note\"\n\n[[breaking.except]]\npath = \"proto/**\"\nrules = [\"renamed\"]\nseverity = \"off\"\n",
    );
    let (findings, _) = verdict(&repo.bot(&base, false));
    assert_eq!(
        findings,
        [
            "error trusted-input-loosened policy:breaking.except:proto/**: the policy adds an exception setting renamed to off under `proto/**`",
            "error trusted-input-loosened policy:breaking.name_only_reservation: the policy lowers name_only_reservation from error to note",
        ]
    );
}

#[test]
fn a_tightened_policy_needs_no_approval() {
    let (repo, base) = TempRepo::base("tighten", "[breaking.rules]\nrenamed = \"off\"\n", "");
    repo.write(
        POLICY,
        "[breaking.rules]\nrenamed = \"error\"\ncleanup-due = \"warning\"\n",
    );
    let report = repo.bot(&base, false);
    assert_eq!(verdict(&report).0, Vec::<String>::new());
    assert_eq!(report.exit_code(), 0);
}

const WAIVER: &str = "[[waiver]]\nrule = \"field-deleted\"\nconstruct = \"t.Root.name\"\nreason = \"the field was never emitted\"\nexpires = \"2026-12-31\"\n";

#[test]
fn a_waiver_added_by_the_change_silences_nothing_until_approved() {
    let (repo, base) = TempRepo::base("waiver", "", "");
    repo.write("proto/t/root.proto", SCHEMA_WITHOUT_NAME);
    repo.write(WAIVERS, WAIVER);
    let report = repo.bot(&base, false);
    let (findings, waived) = verdict(&report);
    assert_eq!(
        findings,
        [
            DELETED,
            "error trusted-input-loosened waiver:field-deleted:t.Root.name: the change adds a waiver of field-deleted for `t.Root.name` (until 2026-12-31; reason: the field was never emitted)",
        ]
    );
    assert!(waived.is_empty());

    let report = repo.bot(&base, true);
    let (findings, waived) = verdict(&report);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert!(findings[0].starts_with("note trusted-input-loosened"));
    assert_eq!(waived, [DELETED]);
    assert_eq!(report.exit_code(), 0);
}

#[test]
fn a_waiver_at_the_base_applies_and_extending_it_is_a_loosening() {
    let (repo, base) = TempRepo::base("extend", "", WAIVER);
    repo.write("proto/t/root.proto", SCHEMA_WITHOUT_NAME);
    let report = repo.bot(&base, false);
    assert_eq!(verdict(&report), (vec![], vec![DELETED.to_owned()]));

    repo.write(WAIVERS, &WAIVER.replace("2026-12-31", "2027-06-30"));
    let (findings, waived) = verdict(&repo.bot(&base, false));
    assert_eq!(
        findings,
        ["error trusted-input-loosened waiver:field-deleted:t.Root.name: the change extends the waiver of field-deleted for `t.Root.name` from 2026-12-31 to 2027-06-30"]
    );
    assert_eq!(waived, [DELETED], "the base's waiver still applies");
}

#[test]
fn enforced_rules_cannot_be_waived() {
    let (repo, base) = TempRepo::base("enforced", "", "");
    repo.write(
        WAIVERS,
        "[[waiver]]\nrule = \"golden-store-rewritten\"\nconstruct = \"golden:h100/v1\"\nreason = \"rebless\"\nexpires = \"2026-12-31\"\n",
    );
    let err = diff(&repo.options(&base)).expect_err("refused");
    assert_eq!(
        err.to_string(),
        "schema_history/waivers.toml: waiver 1: golden-store-rewritten is enforced: no waiver silences it"
    );
}

#[test]
fn a_rewritten_golden_file_is_an_error() {
    let (repo, base) = TempRepo::base("rewrite", "", "");
    repo.write(
        "goldens/executables/h100/v1/add/io.json",
        "{\"outputs\": [1, 3]}\n",
    );
    repo.write("goldens/executables/census.json", "{\"changed\": true}\n");
    repo.write(
        "goldens/executables/h100/v2/manifest.json",
        "{\"created\": \"2026-12-01\"}\n",
    );
    let report = repo.bot(&base, true);
    assert_eq!(
        verdict(&report).0,
        ["error golden-store-rewritten golden:h100/v1: golden h100/v1 (created 2026-11-01) is rewritten: 1 file changed (add/io.json); merged golden versions are append-only"]
    );
    assert_eq!(report.exit_code(), 1, "no approval excuses it");
}

#[test]
fn a_golden_version_is_removed_only_after_the_window() {
    let (repo, base) = TempRepo::base("remove", "", "");
    repo.git(&[
        "rm",
        "-q",
        "-r",
        "goldens/executables/h100/v0",
        "goldens/executables/h100/v1",
    ]);
    let (findings, _) = verdict(&repo.bot(&base, false));
    assert_eq!(
        findings,
        [
            "error golden-store-rewritten golden:h100/v1: golden h100/v1 (created 2026-11-01) is removed inside the backward window: today's runtime must keep loading it until 2027-05-01",
            "note golden-store-rewritten golden:h100/v0: golden h100/v0 (created 2026-01-01) is removed: it is older than the backward window",
        ]
    );
}

#[test]
fn a_deleted_file_of_a_kept_version_is_an_error() {
    let (repo, base) = TempRepo::base("partial", "", "");
    std::fs::remove_file(repo.dir.join("goldens/executables/h100/v0/add/io.json")).expect("rm");
    let (findings, _) = verdict(&repo.bot(&base, false));
    assert_eq!(
        findings,
        ["error golden-store-rewritten golden:h100/v0: golden h100/v0 (created 2026-01-01) is rewritten: 1 file deleted (add/io.json); merged golden versions are append-only"]
    );
}
