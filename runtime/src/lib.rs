//! The runtime: loads serialized GPU executables (validating every field before trusting it),
//! reconstructs the thunk graph, runs load-time passes and executes on a device (the emulated GPU
//! of the `ptx` crate, or a CUDA GPU).
//!
//! It must not know the compiler: the two meet only at the `proto` schema (see docs/artifact.md).
//! It uses `hlo` only to parse and check the embedded module.
