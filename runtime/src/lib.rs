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
//! ```
#![warn(missing_docs)]

pub mod behaviour;
pub mod collectives;
pub mod conv;
pub mod device;
pub mod error;
pub mod executable;
pub mod execute;
pub mod ffi;
pub mod fft;
pub mod flags;
pub mod gemm;
pub mod groups;
pub mod host;
pub mod kernel_ptx;
pub mod load;
pub mod passes;
pub mod registry;
pub mod streams;
pub mod thunks;

pub use behaviour::{Behaviour, Behaviours};
pub use device::{
    CudaDevice, Device, DeviceDescription, DeviceKind, DeviceOp, DeviceTotals, EmulatedDevice,
    GemmBuffers, KernelArg, LaunchShape,
};
pub use error::{Cause, Code, Error, Result};
pub use executable::{Allocation, AllocationKind, Constant, Executable, Leaf, TupleTable};
pub use execute::{ExecutionResult, ExecutionStats, KernelTiming};
pub use flags::{PtxCheck, RuntimeFlags};
pub use kernel_ptx::KernelPtx;
pub use load::{load, load_with_kernel_ptx, load_with_registry, validate};
pub use registry::Registry;

/// The HLO opcodes this runtime accepts in an embedded module (every opcode the `hlo` crate
/// knows; anything else fails the load with UNIMPLEMENTED). Part of the compatibility surface.
pub fn supported_opcodes() -> Vec<&'static str> {
    hlo::Opcode::ALL.iter().map(|o| o.name()).collect()
}
