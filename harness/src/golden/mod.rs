//! The golden store: `goldens/executables/<target>/v<N>/`, one directory per immutable version.
//!
//! - [`store`]: discovering targets and versions, choosing which versions a replay covers.
//! - [`manifest`]: the per-version manifest (hashes of every file, the census, provenance) and
//!   integrity checks.
//! - [`census`]: which schema constructs, HLO opcodes and registry names an artifact uses,
//!   gathered by reflection over the descriptor (never by hand-written lists).
//! - [`cases`]: the curated case list.
//! - [`regen`]: writing the next version.
//! - [`handwritten`]: the hand-written cases (`<target>/handwritten/v<N>/`), for constructs the
//!   runtime executes but today's compiler does not emit.
//! - [`replay`]: the checks the golden suite runs.
//! - [`coverage`]: the runtime-side coverage gate (what today's runtime supports that some golden
//!   inside the window must use).
//!
//! Layout of a version (docs/goldens.md):
//!
//! ```text
//! goldens/executables/<target>/v<N>/
//!   manifest.json            version, target, date, compiler version and commit, sha256 of every
//!                            file, census per case
//!   target.txtpb             the target config compiled for and replayed on
//!   <case>/executable.pb     the exact artifact bytes
//!   <case>/module.hlo        the source module
//!   <case>/io.json           inputs and the outputs recorded when the version was made
//!                            (`replica<R>.io.json`, one per replica, for multi-replica cases)
//! ```
pub mod cases;
pub mod census;
pub mod coverage;
mod error;
pub mod handwritten;
pub mod manifest;
pub mod regen;
pub mod replay;
pub mod store;

pub use census::census_of;
pub use manifest::{IntegrityProblem, Manifest};
pub use store::{
    all_versions_requested, select_handwritten_versions, select_versions, GoldenError, GoldenStore,
    ALL_VERSIONS_ENV, HANDWRITTEN_DIR,
};

/// Reads one file of the store the way the bot reads repository files
/// ([`schema_history::read_file`]): a regular file, no symbolic link, at most
/// [`schema_history::MAX_FILE_BYTES`]. A pull request can commit
/// `manifest.json -> /dev/zero`; `goldens verify` and the replay then fail naming the file
/// instead of reading without end. A refusal is an I/O error of kind `InvalidData` whose message
/// says why; a missing file keeps the operating system's error.
pub fn read_store_file(path: impl AsRef<std::path::Path>) -> std::io::Result<Vec<u8>> {
    let path = path.as_ref();
    match schema_history::read_file(path) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(std::fs::metadata(path)
            .err()
            .unwrap_or_else(|| std::io::ErrorKind::NotFound.into())),
        Err(schema_history::Error::Unreadable { refusal, .. }) => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            refusal.to_string(),
        )),
        Err(schema_history::Error::Io { source, .. }) => Err(source),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    }
}

/// [`read_store_file`] as UTF-8 text.
pub fn read_store_text(path: impl AsRef<std::path::Path>) -> std::io::Result<String> {
    String::from_utf8(read_store_file(path)?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
}

#[cfg(all(test, unix))]
mod tests {
    #[test]
    fn a_manifest_linked_to_dev_zero_is_refused_naming_it() {
        let dir = std::env::temp_dir().join(format!("golden-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.join(super::manifest::MANIFEST_FILE)).unwrap();
        let e = super::Manifest::read(&dir).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "cannot read {}: is a symbolic link (to /dev/zero); repository files are read \
                 only as regular files",
                dir.join(super::manifest::MANIFEST_FILE).display()
            )
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
