//! Harness: the golden store, the replay suites and regeneration, and the `aot` command-line tool.
//! It is the only crate that sees every other crate of the workspace.

pub mod bench;
pub mod cmd;
pub mod deadline;
pub mod fuzz;
pub mod golden;
pub mod npz;
pub mod ptx_run;
pub mod shard_io;
pub mod support;
pub mod xla_artifact;
pub mod xla_run;
