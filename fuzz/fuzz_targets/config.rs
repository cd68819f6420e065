//! libFuzzer on the `config` entry point of `harness::fuzz` (same limits as `aot fuzz`). A panic
//! is caught by the engine and re-raised here, so libFuzzer records the input.
#![no_main]
use harness::fuzz::{run_default, Outcome, Target};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Outcome::Panic(message) = run_default(Target::Config, data) {
        panic!("config: {message}");
    }
});
