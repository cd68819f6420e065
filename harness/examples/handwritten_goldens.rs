//! Writes the next hand-written golden version of every golden target
//! (`goldens/executables/<target>/handwritten/v<N>/`, see docs/goldens.md):
//!
//! ```sh
//! cargo run -p harness --example handwritten_goldens [YYYY-MM-DD]
//! ```
//!
//! The date recorded is the argument, else today (UTC). Existing versions are never touched; a
//! run that would write the same files as the newest version fails instead.
use harness::cmd::goldens::GOLDEN_TARGETS;
use harness::write_handwritten_version;
use harness::GoldenStore;

fn main() -> anyhow::Result<()> {
    let created = match std::env::args().nth(1) {
        Some(d) => d,
        None => schema_history::Date::today().to_string(),
    };
    let compiled = GoldenStore::in_repo();
    let handwritten = GoldenStore::handwritten_in_repo();
    for &target in GOLDEN_TARGETS {
        let dir = write_handwritten_version(&compiled, &handwritten, target, &created)?;
        println!("wrote {}", dir.display());
    }
    // The schema bot reads the census through this index (docs/goldens.md).
    match schema_history::write_index(compiled.root())? {
        schema_history::IndexOutcome::Written(p) | schema_history::IndexOutcome::UpToDate(p) => {
            println!("compact census {}", p.display())
        }
    }
    Ok(())
}
