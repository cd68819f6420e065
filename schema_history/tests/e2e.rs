//! End to end: a temporary git repository with dated commits (a field added, emitted too early,
//! a removal inside and outside the backward window, a number reused across three commits), the
//! bot's verdict checked at each step, comparing git objects (no checkout) with the working tree
//! and with other commits.
mod common;

use common::{date, TempRepo};
use schema_history::{
    diff, write_snapshot, DiffOptions, Extras, Format, Repo, Report, Revision, SchemaSpec,
    SnapshotOutcome, Surface,
};

const HEADER: &str = r#"syntax = "proto3";
package t;
import "google/protobuf/descriptor.proto";
extend google.protobuf.FieldOptions { bool ignorable = 51001; }
"#;

fn spec() -> SchemaSpec {
    SchemaSpec {
        proto_dirs: vec!["proto".into()],
        files: Vec::new(),
        root: "t.Root".into(),
        ignorable: "t.ignorable".into(),
    }
}

impl TempRepo {
    fn schema(&self, body: &str) {
        self.write("proto/t/root.proto", &format!("{HEADER}{body}\n"));
    }

    fn golden(&self, version: u32, created: &str, constructs: &[&str]) {
        let manifest = serde_json::json!({
            "target": "h100",
            "version": version,
            "created": created,
            "census": { "case0": constructs },
        });
        self.write(
            &format!("goldens/executables/h100/v{version}/manifest.json"),
            &manifest.to_string(),
        );
    }

    /// `aot schema snapshot` for the working tree, dated `day`.
    fn snapshot(&self, day: &str, label: &str) -> SnapshotOutcome {
        let spec = spec();
        let compiled = spec
            .compile(&Repo::new(&self.dir), &Revision::WorkTree)
            .expect("schema compiles");
        let surface = Surface::new(
            &compiled,
            &spec.root,
            &spec.ignorable,
            Extras::default(),
            date(day),
            label,
        )
        .expect("surface");
        write_snapshot(
            &self.dir.join("schema_history/snapshots"),
            &surface,
            label,
            false,
            &spec.ignorable,
        )
        .expect("snapshot written")
    }

    fn bot(&self, base: &str, head: Option<&str>, today: &str) -> Report {
        let mut opts = DiffOptions::project(
            &self.dir,
            Revision::Git(base.into()),
            head.map_or(Revision::WorkTree, |h| Revision::Git(h.into())),
            date(today),
        );
        opts.spec = spec();
        diff(&opts).expect("the bot runs")
    }
}

fn rules(report: &Report) -> Vec<String> {
    report
        .findings
        .iter()
        .map(|f| format!("{} {} {}", f.severity, f.rule, f.construct))
        .collect()
}

fn text(report: &Report) -> String {
    report.render(Format::Text)
}

#[test]
fn dated_history_verdicts() {
    let repo = TempRepo::new("history", "e2e");

    // 2026-01-05: the baseline.
    repo.schema("message Root { int32 a = 1; int32 old = 3; }");
    assert!(matches!(
        repo.snapshot("2026-01-05", "c1"),
        SnapshotOutcome::Written(_)
    ));
    let c1 = repo.commit("baseline schema", "2026-01-05");
    let r = repo.bot("HEAD", None, "2026-01-05");
    assert_eq!((r.exit_code(), rules(&r)), (0, vec![]), "{}", text(&r));
    assert_eq!(
        Repo::new(&repo.dir).default_base().expect("merge base"),
        c1,
        "the default base is the merge base with main"
    );

    // 2026-03-02: a field added. Mergeable; the note says when it may be emitted.
    repo.schema("message Root { int32 a = 1; int32 old = 3; int32 fresh = 4; }");
    repo.snapshot("2026-03-02", "c2");
    let r = repo.bot("HEAD", None, "2026-03-02");
    assert_eq!(r.exit_code(), 0, "{}", text(&r));
    assert_eq!(rules(&r), vec!["note staged-rollout t.Root.fresh"]);
    assert!(text(&r).contains("until 2026-03-16"), "{}", text(&r));
    let c2 = repo.commit("add fresh", "2026-03-02");

    // 2026-03-05: the compiler starts emitting `fresh` by default (the goldens say so): too early.
    repo.golden(
        1,
        "2026-03-05",
        &["t.Root.a", "t.Root.old", "t.Root.fresh", "opcode:add"],
    );
    let r = repo.bot("HEAD", None, "2026-03-05");
    assert_eq!(r.exit_code(), 1, "{}", text(&r));
    assert_eq!(rules(&r), vec!["error forward-window t.Root.fresh"]);
    let t = text(&r);
    assert!(
        t.starts_with("proto/t/root.proto:5:44: error[forward-window]"),
        "{t}"
    );
    assert!(t.contains("off by default until 2026-03-16"), "{t}");
    // Two weeks after the field landed the same change is fine.
    let r = repo.bot("HEAD", None, "2026-03-20");
    assert_eq!((r.exit_code(), rules(&r)), (0, vec![]), "{}", text(&r));
    let c3 = repo.commit("emit fresh by default", "2026-03-20");

    // 2026-04-01: removing `old` inside the backward window (golden h100/v1 uses it).
    repo.schema("message Root { reserved 3; reserved \"old\"; int32 a = 1; int32 fresh = 4; }");
    let r = repo.bot("HEAD", None, "2026-04-01");
    assert_eq!(r.exit_code(), 1, "{}", text(&r));
    assert_eq!(rules(&r), vec!["error backward-window t.Root.old"]);
    let t = text(&r);
    assert!(t.contains("golden h100/v1 (created 2026-03-05)"), "{t}");
    assert!(t.contains("until 2026-09-05"), "{t}");
    // Outside the window (after 2026-09-05) the same removal is legal.
    let r = repo.bot("HEAD", None, "2026-09-10");
    assert_eq!((r.exit_code(), rules(&r)), (0, vec![]), "{}", text(&r));
    repo.snapshot("2026-09-10", "c4");
    let c4 = repo.commit("remove old", "2026-09-10");

    // 2026-09-12: `a` deleted without reserving its number (merged over the bot's objection).
    repo.schema("message Root { reserved 3; reserved \"old\"; int32 fresh = 4; }");
    let r = repo.bot("HEAD", None, "2026-09-12");
    assert_eq!(r.exit_code(), 1);
    assert_eq!(rules(&r), vec!["error field-deleted t.Root.a"]);
    repo.snapshot("2026-09-12", "c5");
    let c5 = repo.commit("drop a (forced)", "2026-09-12");

    // 2026-09-20: number 1 reused. The base no longer knows it; the history does.
    repo.schema(
        "message Root { reserved 3; reserved \"old\"; string a_text = 1; int32 fresh = 4; }",
    );
    repo.snapshot("2026-09-20", "c6");
    let r = repo.bot("HEAD", None, "2026-09-20");
    assert_eq!(r.exit_code(), 1, "{}", text(&r));
    assert_eq!(
        rules(&r),
        vec![
            "error number-reused t.Root.a_text",
            "note staged-rollout t.Root.a_text"
        ]
    );
    assert!(
        text(&r).contains("snapshot 2026-01-05-c1 used it for `a`"),
        "{}",
        text(&r)
    );
    let c6 = repo.commit("reuse 1", "2026-09-20");

    // Verdicts between commits, read from git objects only.
    let r = repo.bot(&c1, Some(&c2), "2026-03-02");
    assert_eq!(r.exit_code(), 0, "{}", text(&r));
    let r = repo.bot(&c4, Some(&c5), "2026-09-12");
    assert_eq!(rules(&r), vec!["error field-deleted t.Root.a"]);
    let r = repo.bot(&c5, Some(&c6), "2026-09-20");
    assert_eq!(r.exit_code(), 1);
    assert!(rules(&r).contains(&"error number-reused t.Root.a_text".to_owned()));
    // Against c3 (where `a` = 1 still existed), number 1 looks renamed and retyped.
    let r = repo.bot(&c3, Some(&c6), "2026-09-20");
    assert_eq!(
        rules(&r),
        vec![
            "error wire-type-changed t.Root.a",
            "warning renamed t.Root.a",
            "note staged-rollout t.Root.a_text"
        ]
    );
    assert!(r
        .render(Format::Markdown)
        .contains("this change breaks the contract"));
}

#[test]
fn snapshot_is_idempotent_and_orders_by_sequence() {
    let repo = TempRepo::new("history", "snap");
    repo.schema("message Root { int32 a = 1; }");
    let first = repo.snapshot("2026-05-01", "x");
    assert!(matches!(first, SnapshotOutcome::Written(_)));
    // Still the baseline's day: the change joins the baseline, under the baseline's name.
    repo.schema("message Root { int32 a = 1; int32 z = 26; }");
    let again = repo.snapshot("2026-05-01", "other-label");
    assert!(
        matches!(&again, SnapshotOutcome::Written(p) if p.ends_with("2026-05-01-x")),
        "{again:?}"
    );
    repo.schema("message Root { int32 a = 1; }");
    assert!(matches!(
        repo.snapshot("2026-05-01", "x"),
        SnapshotOutcome::Written(_)
    ));
    assert!(matches!(
        repo.snapshot("2026-05-03", "y"),
        SnapshotOutcome::UpToDate(_)
    ));
    repo.schema("message Root { int32 a = 1; int32 b = 2; }");
    assert!(matches!(
        repo.snapshot("2026-05-03", "y"),
        SnapshotOutcome::Written(_)
    ));
    // Same day and label again: replaces the newest instead of piling up.
    repo.schema("message Root { int32 a = 1; int32 b = 2; int32 c = 3; }");
    assert!(matches!(
        repo.snapshot("2026-05-03", "y"),
        SnapshotOutcome::Written(_)
    ));
    let history = schema_history::load_history(
        &Repo::new(&repo.dir),
        &Revision::WorkTree,
        "schema_history/snapshots",
        "t.ignorable",
    )
    .expect("history");
    let names: Vec<(&str, u32)> = history
        .snapshots
        .iter()
        .map(|s| (s.name.as_str(), s.meta.seq))
        .collect();
    assert_eq!(names, vec![("2026-05-01-x", 1), ("2026-05-03-y", 2)]);
    assert!(history
        .newest()
        .is_some_and(|s| s.listing.lines().any(|l| l == "t.Root.c field 3 int32")));
}

#[test]
fn errors_are_reported_not_panics() {
    let repo = TempRepo::new("history", "errors");
    repo.schema("message Root { int32 a = 1; }");
    repo.commit("ok", "2026-01-01");
    // A broken head schema.
    repo.schema("message Root { int32 a = 1 }");
    let mut opts = DiffOptions::project(
        &repo.dir,
        Revision::Git("HEAD".into()),
        Revision::WorkTree,
        date("2026-01-02"),
    );
    opts.spec = spec();
    let err = diff(&opts).expect_err("does not compile");
    assert!(err.to_string().contains("working tree"), "{err}");
    // An unknown revision.
    opts.base = Revision::Git("no-such-rev".into());
    assert!(diff(&opts).is_err());
    // A missing root.
    repo.schema("message Other { int32 a = 1; }");
    opts.base = Revision::Git("HEAD".into());
    let err = diff(&opts).expect_err("no root");
    assert!(err.to_string().contains("t.Root"), "{err}");
    // A corrupt snapshot is an error naming the file.
    repo.schema("message Root { int32 a = 1; }");
    repo.write(
        "schema_history/snapshots/2026-01-01-bad/surface.json",
        "{not json",
    );
    let err = diff(&opts).expect_err("bad snapshot");
    assert!(err.to_string().contains("surface.json"), "{err}");
}
