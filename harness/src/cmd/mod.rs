//! The `aot` subcommands, one module each: its clap arguments and its `run`.
pub mod check;
pub mod demo;
pub mod eval;
pub mod forward;
pub mod fuzz;
pub mod goldens;
pub mod inspect;
pub mod run;
pub mod schema;
pub mod selftest;
