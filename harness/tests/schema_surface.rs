//! The project's compatibility surface (the schema reachable from `xla.gpu.GpuExecutableProto`,
//! the HLO opcodes, the runtime's registered names and flags) must equal the newest snapshot in
//! `schema_history/snapshots/`, and the schema bot must run clean on everything since the newest
//! snapshot was taken.
use std::path::PathBuf;

use harness::cmd::schema::{current_surface, project_extras};
use schema_history::{
    diff, load_history, snapshot_base, unified_diff, Date, DiffOptions, Format, Repo, Revision,
    DEFAULT_HISTORY_DIR,
};

const COMMAND: &str = "cargo run -p harness --bin aot -- schema snapshot";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

#[test]
fn surface_matches_newest_snapshot() {
    let repo = repo();
    let surface = current_surface(&repo, Date::today()).expect("the schema compiles");
    let history = load_history(
        &Repo::new(&repo),
        &Revision::WorkTree,
        DEFAULT_HISTORY_DIR,
        proto::IGNORABLE_EXTENSION,
    )
    .expect("the snapshot history reads");
    let Some(newest) = history.newest() else {
        panic!("no snapshot under {DEFAULT_HISTORY_DIR}/: run `{COMMAND}` and commit it");
    };
    let mut old = newest.listing.lines().collect::<Vec<_>>().join("\n");
    old.push('\n');
    let new = surface.listing_text();
    if old != new || newest.meta.extras != surface.extras {
        let json_note = if old == new {
            "\n(the listing is equal; surface.json's registry/opcodes/flags differ)"
        } else {
            ""
        };
        panic!(
            "the compatibility surface differs from the newest snapshot {}:\n{}{json_note}\n\
             If the change is intended, record it with:\n    {COMMAND}\n\
             and commit the new snapshot directory with the change.",
            newest.name,
            unified_diff(
                &old,
                &new,
                &format!("{DEFAULT_HISTORY_DIR}/{}/surface.txt", newest.name),
                "working tree"
            )
        );
    }
}

/// The bot on everything since the surface was last recorded: the working tree against the
/// commit the newest snapshot was taken on. Comparing `HEAD` with the working tree could never
/// fail in CI (a clean checkout has no difference); this fails when a breaking schema change was
/// committed after the snapshot (`schema_history/tests/gate.rs` proves it on a scratch
/// repository). Every finding must be a warning or a note.
#[test]
fn bot_runs_clean_since_the_newest_snapshot() {
    let repo = repo();
    let git = Repo::new(&repo);
    if git.resolve("HEAD").is_err() {
        eprintln!("skipped: {} is not a git checkout", repo.display());
        return;
    }
    let base = snapshot_base(&git, &Revision::WorkTree, DEFAULT_HISTORY_DIR)
        .expect("the snapshot history reads")
        .unwrap_or_else(|| {
            panic!("no snapshot under {DEFAULT_HISTORY_DIR}/: run `{COMMAND}` and commit it")
        });
    if let Revision::Git(commit) = &base {
        if git.resolve(commit).is_err() {
            panic!(
                "the newest snapshot was taken on commit {commit}, which this checkout lacks \
                 (a shallow clone?): fetch the history (`git fetch --unshallow`) so the bot can \
                 compare against it"
            );
        }
    }
    let mut opts = DiffOptions::project(&repo, base, Revision::WorkTree, Date::today());
    opts.head_extras = Some(project_extras());
    let report = diff(&opts).expect("the bot runs");
    let text = report.render(Format::Text);
    println!("{text}");
    assert_eq!(
        report.exit_code(),
        0,
        "the schema bot reports errors since the newest snapshot:\n{text}"
    );
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.severity != schema_history::Severity::Error),
        "{text}"
    );
}
