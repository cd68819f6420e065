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
pub mod handwritten;
pub mod manifest;
pub mod regen;
pub mod replay;
pub mod store;

pub use census::census_of;
pub use manifest::{IntegrityProblem, Manifest, MANIFEST_FILE, MANIFEST_FORMAT_VERSION};
pub use store::{
    all_versions_requested, select_handwritten_versions, select_versions, GoldenError, GoldenStore,
    ALL_VERSIONS_ENV, HANDWRITTEN_DIR,
};
