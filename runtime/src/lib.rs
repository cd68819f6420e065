//! The runtime: loads serialized GPU executables (validating every field before trusting it),
//! reconstructs the thunk graph, runs load-time passes and executes on a device (the emulated GPU
//! of the `ptx` crate, or a CUDA GPU).
//!
//! It must not know the compiler: the two meet only at the `proto` schema (see docs/artifact.md).
//! It uses `hlo` only to parse and check the embedded module.
//!
//! ```text
//! let device = EmulatedDevice::from_target_config_file(Path::new("h100_sxm.txtpb"))?;
//! let exe = runtime::load(&bytes, &device, &RuntimeFlags::default())?;
//! let result = exe.execute(&device, &[&arg0, &arg1])?;   // result.outputs[i]: leaf i's bytes
//!
//! // Weights kept on the device across executions (copied device to device into the
//! // parameter's allocation each time; the buffer itself is never written):
//! let w = DeviceBuffer::upload(&device, &weights)?;
//! let result = exe.execute_with(&device, &[Argument::Host(&x), Argument::Device(&w)], &[])?;
//! ```
#![warn(missing_docs)]

// The public face is the `pub use` list below; the modules are how the crate is kept. One
// module stays public on purpose: `thunks`, the decoded thunk graph an `Executable` holds (about
// forty plain data types, read as a namespace: `thunks::KernelThunk`, `thunks::ThunkKind`).
mod behaviour;
mod buffer;
mod collectives;
mod conv;
mod device;
mod error;
mod executable;
mod execute;
mod ffi;
mod fft;
mod flags;
mod gemm;
mod groups;
mod host;
mod kernel_ptx;
mod load;
mod passes;
mod registry;
mod streams;
pub mod thunks;

// Loading and executing.
pub use buffer::{Argument, DeviceBuffer};
pub use error::{Cause, Code, Error, Result};
pub use executable::{Allocation, AllocationKind, Constant, Executable, Leaf, TupleTable};
pub use execute::{ExecutionResult, ExecutionStats, KernelTiming};
pub use flags::{
    defaults as flag_defaults, PtxCheck, RuntimeFlags, UnknownPtxCheck, LIMITS as FLAG_LIMITS,
    LOAD_PASSES,
};
pub use kernel_ptx::{GlobalArray, KernelPtx, SuppliedKernel, MAX_FILES as MAX_KERNEL_PTX_FILES};
pub use load::{
    decode_executable, load, load_with_kernel_ptx, load_with_registry, validate, validate_with,
};
// Devices: the emulator and CUDA behind one trait, and the operations issued on them.
pub use device::cuda::driver_present as cuda_driver_present;
pub use device::{
    features_of, host_gemm, issue, CudaDevice, Device, DeviceDescription, DeviceKind, DeviceOp,
    DeviceTotals, EmulatedDevice, GemmBuffers, KernelArg, LaunchShape,
};
// Host-side values and the host gemm.
pub use gemm::{
    gemm, gemm_until, gemm_with, kernel_name as gemm_kernel_name, Deadline as GemmDeadline,
    Isa as GemmIsa, Options as GemmOptions,
};
pub use host::{array_from_bytes, array_to_bytes};
// Custom calls (the FFI registry and its typed handler API).
pub use registry::{
    attribute_schemas, names as custom_call_names, Api, ArrayShape, AttrParseError, AttrSpec,
    AttrType, AttrValue, Attributes, CallFrame, Handler, HandlerError, LoadCheck, Registration,
    Registry, ShapeError, Side,
};
// The behaviour classes an execution records (the golden coverage reads them).
pub use behaviour::{group_class, index_class, Behaviour, Behaviours};

/// The HLO opcodes this runtime accepts in an embedded module (every opcode the `hlo` crate
/// knows; anything else fails the load with UNIMPLEMENTED). Part of the compatibility surface.
pub fn supported_opcodes() -> Vec<&'static str> {
    hlo::Opcode::ALL.iter().map(|o| o.name()).collect()
}
