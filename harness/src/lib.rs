//! Harness: the golden store, the replay suites and regeneration, and the `aot` command-line tool.
//! It is the only crate that sees every other crate of the workspace.

pub mod bench;
pub mod check_cmd;
pub mod deadline;
pub mod demo_cmd;
pub mod eval_cmd;
pub mod forward_cmd;
pub mod fuzz;
pub mod fuzz_cmd;
pub mod golden;
pub mod goldens_cmd;
pub mod inspect_cmd;
pub mod npz;
pub mod ptx_run;
pub mod run_cmd;
pub mod schema_cmd;
pub mod selftest_cmd;
pub mod shard_io;
pub mod support;
pub mod xla_artifact;
pub mod xla_run;
