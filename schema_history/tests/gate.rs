//! The bot's self-check (`harness/tests/schema_surface.rs`: the working tree against the commit
//! recorded by the newest snapshot) can fail: on a scratch repository where a breaking edit is
//! committed after the snapshot, with a clean working tree, it reports the break, where
//! comparing `HEAD` with the working tree (the old check) saw nothing.
mod common;

use common::TempRepo;

use schema_history::{
    diff, snapshot_base, write_snapshot, Date, DiffOptions, Extras, Format, Repo, Report, Revision,
    SchemaSpec, Surface, DEFAULT_HISTORY_DIR,
};

const HEADER: &str = "syntax = \"proto3\";\npackage t;\n";

fn spec() -> SchemaSpec {
    SchemaSpec {
        proto_dirs: vec!["proto".into()],
        files: Vec::new(),
        root: "t.Root".into(),
        ignorable: "t.ignorable".into(),
    }
}

fn today() -> Date {
    "2026-12-01".parse().expect("test date")
}

impl TempRepo {
    fn schema(&self, body: &str) {
        let path = self.dir.join("proto/t/root.proto");
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, format!("{HEADER}{body}\n")).expect("write");
    }

    /// `aot schema snapshot` on a clean tree: records the short `HEAD` as its commit.
    fn snapshot(&self) {
        let spec = spec();
        let compiled = spec
            .compile(&Repo::new(&self.dir), &Revision::WorkTree)
            .expect("schema compiles");
        let head = self.git(&["rev-parse", "--short=10", "HEAD"]);
        let surface = Surface::new(
            &compiled,
            &spec.root,
            &spec.ignorable,
            Extras::default(),
            "2026-11-01".parse().expect("date"),
            &head,
        )
        .expect("surface");
        write_snapshot(
            &self.dir.join(DEFAULT_HISTORY_DIR),
            &surface,
            &head,
            false,
            &spec.ignorable,
        )
        .expect("snapshot written");
    }

    fn bot(&self, base: Revision) -> Report {
        let mut opts = DiffOptions::project(&self.dir, base, Revision::WorkTree, today());
        opts.spec = spec();
        diff(&opts).expect("the bot runs")
    }

    /// What the self-check runs: the working tree against the newest snapshot's commit.
    fn gate(&self) -> Report {
        let base = snapshot_base(
            &Repo::new(&self.dir),
            &Revision::WorkTree,
            DEFAULT_HISTORY_DIR,
        )
        .expect("the snapshots read")
        .expect("a snapshot exists");
        self.bot(base)
    }
}

fn errors(r: &Report) -> Vec<String> {
    r.findings
        .iter()
        .filter(|f| f.severity == schema_history::Severity::Error)
        .map(|f| format!("{}: {}", f.rule, f.message))
        .collect()
}

#[test]
fn snapshot_base_is_the_newest_snapshots_commit() {
    let s = TempRepo::new("gate", "base");
    s.schema("message Root { int32 a = 1; }");
    s.commit_now("schema");
    assert_eq!(
        snapshot_base(&Repo::new(&s.dir), &Revision::WorkTree, DEFAULT_HISTORY_DIR).expect("reads"),
        None
    );
    s.snapshot();
    let short = s.git(&["rev-parse", "--short=10", "HEAD"]);
    assert_eq!(
        snapshot_base(&Repo::new(&s.dir), &Revision::WorkTree, DEFAULT_HISTORY_DIR).expect("reads"),
        Some(Revision::Git(short))
    );
}

#[test]
fn self_check_fails_on_a_committed_deletion() {
    let s = TempRepo::new("gate", "deletion");
    s.schema("message Root { int32 a = 1; int32 b = 2; }");
    s.commit_now("schema");
    s.snapshot();
    s.commit_now("snapshot");
    // Nothing changed since the snapshot: clean, no findings at all.
    let clean = s.gate();
    assert_eq!(
        (clean.exit_code(), clean.findings.len()),
        (0, 0),
        "{}",
        clean.render(Format::Text)
    );
    s.schema("message Root { int32 a = 1; }");
    s.commit_now("drop b");
    // The old check: HEAD against a clean working tree cannot see the committed break.
    assert_eq!(s.bot(Revision::Git("HEAD".into())).exit_code(), 0);
    let r = s.gate();
    assert_eq!(r.exit_code(), 1, "{}", r.render(Format::Text));
    assert_eq!(
        errors(&r),
        vec![
            "field-deleted: field `b` = 2 deleted from `t.Root`: the deletion reserves neither its \
             number 2 nor its name `b`"
        ]
    );
}

#[test]
fn self_check_fails_on_a_committed_renumbering() {
    let s = TempRepo::new("gate", "renumber");
    s.schema("message Root { int32 a = 1; int64 size = 2; }");
    s.commit_now("schema");
    s.snapshot();
    s.commit_now("snapshot");
    s.schema("message Root { reserved 2; int32 a = 1; int64 size = 3; }");
    s.commit_now("renumber size");
    assert_eq!(s.bot(Revision::Git("HEAD".into())).exit_code(), 0);
    let r = s.gate();
    assert_eq!(
        errors(&r),
        vec![
            "renumbered: field `size` of `t.Root` renumbered from 2 to 3: old artifacts carry it \
             as 2, which the new reader no longer reads as `size`"
        ]
    );
}
