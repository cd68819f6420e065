//! The ahead-of-time compiler: turns an HLO module into a serialized `xla.gpu.GpuExecutableProto`
//! for a GPU target described by a target config, on a build host that needs no GPU. It owns the
//! HLO passes, fusion, buffer assignment, thunk emission, PTX code generation and serialization.
//!
//! It must not know the runtime: the two meet only at the `proto` schema (see docs/artifact.md).
pub mod codegen;
