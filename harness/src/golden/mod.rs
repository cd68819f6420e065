//! The golden store: `goldens/executables/<target>/v<N>/`, one directory per immutable version.
//!
//! - [`store`]: discovering targets and versions, choosing which versions a replay covers.
//! - [`manifest`]: the per-version manifest (hashes of every file, the census, provenance) and
//!   integrity checks.
//! - [`census`]: which schema constructs, HLO opcodes and registry names an artifact uses,
//!   gathered by reflection over the descriptor (never by hand-written lists).
pub mod census;
pub mod manifest;
pub mod store;

pub use census::census_of;
pub use manifest::{IntegrityProblem, Manifest, MANIFEST_FILE, MANIFEST_FORMAT_VERSION};
pub use store::{
    all_versions_requested, select_versions, GoldenError, GoldenStore, ALL_VERSIONS_ENV,
};
