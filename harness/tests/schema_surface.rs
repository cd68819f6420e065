//! The project's compatibility surface (the schema reachable from `xla.gpu.GpuExecutableProto`,
//! the HLO opcodes, the runtime's registered names and flags) must equal the newest snapshot in
//! `schema_history/snapshots/`, and the schema bot must run clean on the working tree.
use std::path::PathBuf;

use harness::schema_cmd::{current_surface, project_extras};
use schema_history::{
    diff, load_history, unified_diff, Date, DiffOptions, Format, Repo, Revision,
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
    let mut old = newest.listing.join("\n");
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

#[test]
fn bot_runs_clean_on_the_working_tree() {
    let repo = repo();
    if Repo::new(&repo).resolve("HEAD").is_err() {
        eprintln!("skipped: {} is not a git checkout", repo.display());
        return;
    }
    let mut opts = DiffOptions::project(
        &repo,
        Revision::Git("HEAD".into()),
        Revision::WorkTree,
        Date::today(),
    );
    opts.head_extras = Some(project_extras());
    let report = diff(&opts).expect("the bot runs");
    let text = report.render(Format::Text);
    println!("{text}");
    assert_eq!(
        report.exit_code(),
        0,
        "the schema bot reports errors:\n{text}"
    );
}
