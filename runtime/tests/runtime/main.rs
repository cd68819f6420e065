//! Runtime integration tests on hand-built artifacts (no compiler).
mod common;
mod conv;
mod execute;
mod ffi_data;
mod ffi_handlers;
mod ffi_load_errors;
mod fft;
mod hostile;
mod load_errors;
mod mutants;
mod partitions;
mod resident;
mod roundtrip;
mod xla_forms;
