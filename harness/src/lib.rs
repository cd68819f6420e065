//! Harness: the golden store, the replay suites and regeneration, and the `aot` command-line tool.
//! It is the only crate that sees every other crate of the workspace.
//!
//! # The face
//!
//! Its users are the `aot` binary, the harness's integration tests and examples and the
//! cargo-fuzz targets. Modules are private; the root re-exports what those use:
//! - the golden store ([`GoldenStore`], version selection), its cases ([`curated_cases`],
//!   [`cases_in`], [`repo_root`]), census ([`census_of`], [`census_of_bytes`]), manifests
//!   ([`hash_files`], [`verify_dir`]), regeneration ([`regenerate`], [`run_artifact`]) and the
//!   hand-written versions ([`write_handwritten_version`], [`HANDWRITTEN_CASES`]);
//! - XLA:GPU's own executables: unwrapping them ([`unwrap_xla_artifact`]) and running them with
//!   XLA's PTX ([`run_xla_executable`]);
//! - `aot ptx-run` ([`run_ptx`]), `aot bench` ([`run_bench`]) and numpy io files
//!   ([`read_npz_case`]).
//!
//! Three namespaces stay modules, because their items are named by what they belong to:
//! - [`cmd`]: one module per `aot` subcommand, each with its clap arguments and its `run`;
//! - [`replay`]: the golden suite's checks (`replay::integrity`, `replay::backward_compat`, ...);
//! - [`fuzz`]: the mutation-testing engine behind `aot fuzz`, its tests and the cargo-fuzz
//!   targets (`fuzz::run`, `fuzz::Target`, `fuzz::Outcome`).

mod bench;
pub mod cmd;
mod deadline;
pub mod fuzz;
mod golden;
mod npz;
mod ptx_run;
mod shard_io;
mod support;
mod xla_artifact;
mod xla_run;

pub use bench::{run as run_bench, xla_launches, BenchArgs, XlaGpuSummary};
pub use golden::cases::{cases_in, curated_cases, repo_root, Case};
pub use golden::census::census_of_bytes;
pub use golden::handwritten::{
    write_version as write_handwritten_version, CASES as HANDWRITTEN_CASES,
};
pub use golden::manifest::{hash_files, verify_dir};
pub use golden::regen::{regenerate, run_artifact, RegenOptions, RegenOutcome};
pub use golden::replay;
pub use golden::{
    all_versions_requested, census_of, select_handwritten_versions, select_versions, GoldenError,
    GoldenStore, ALL_VERSIONS_ENV,
};
pub use npz::{read_case as read_npz_case, read_npz};
pub use ptx_run::{run as run_ptx, run_with as run_ptx_with, Limits as PtxRunLimits};
pub use xla_artifact::{
    looks_like_xla, riegeli_records, unwrap as unwrap_xla_artifact, Form as XlaArtifactForm,
    XlaArtifactError,
};
pub use xla_run::{ptx_files as xla_ptx_files, run as run_xla_executable};
