//! Runtime integration tests on hand-built artifacts (no compiler).
mod common;
mod execute;
mod hostile;
mod load_errors;
mod mutants;
mod roundtrip;
