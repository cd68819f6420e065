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

use std::sync::Arc;

pub mod collectives;
pub mod device;
pub mod error;
pub mod execute;
pub mod flags;
pub mod gemm;
pub mod host;
pub mod load;
pub mod passes;
pub mod registry;
pub mod streams;
pub mod thunks;

pub use device::{
    CudaDevice, Device, DeviceDescription, DeviceKind, DeviceOp, DeviceTotals, EmulatedDevice,
};
pub use error::{Code, Error, Result};
pub use execute::{ExecutionResult, ExecutionStats, KernelTiming};
pub use flags::{PtxCheck, RuntimeFlags};
pub use load::{load, load_with_registry, validate};
pub use registry::Registry;

/// The HLO opcodes this runtime accepts in an embedded module (every opcode the `hlo` crate
/// knows; anything else fails the load with UNIMPLEMENTED). Part of the compatibility surface.
pub fn supported_opcodes() -> Vec<&'static str> {
    hlo::Opcode::ALL.iter().map(|o| o.name()).collect()
}

/// What an allocation holds at the start of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllocationKind {
    /// A leaf of an entry parameter.
    Parameter {
        /// The parameter.
        number: usize,
        /// The leaf inside it (empty for an array parameter).
        shape_index: Vec<i64>,
    },
    /// A constant (filled from `binary`).
    Constant,
    /// An output or temporary.
    Temporary,
}

/// A validated buffer allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    /// Its index.
    pub index: usize,
    /// Bytes.
    pub size: u64,
    /// What it holds initially.
    pub kind: AllocationKind,
    /// Holds (part of) the result.
    pub maybe_live_out: bool,
}

/// A constant copied from `binary` into an allocation before the first thunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constant {
    /// The HLO constant's name.
    pub symbol_name: String,
    /// Destination allocation.
    pub allocation: usize,
    /// Where its bytes are in `binary`.
    pub offset_in_binary: u64,
    /// How many.
    pub size: u64,
}

/// An array leaf of a parameter or of the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaf {
    /// Index inside the (tuple) shape.
    pub shape_index: Vec<i64>,
    /// Its allocation (`usize::MAX` for an unused parameter leaf).
    pub allocation: usize,
    /// Bytes.
    pub size: u64,
    /// HLO element type name (`f32`).
    pub element_type: String,
    /// Dimensions.
    pub dims: Vec<i64>,
    /// An output leaf that is an entry parameter passed through.
    pub passthrough: bool,
}

/// A loaded, validated executable, ready to run on devices matching the one it was loaded for.
#[derive(Debug)]
pub struct Executable {
    /// `module_name`.
    pub module_name: String,
    /// Buffer allocations.
    pub allocations: Vec<Allocation>,
    /// Constants.
    pub constants: Vec<Constant>,
    /// The module-level binary (constant bytes).
    pub binary: Arc<Vec<u8>>,
    /// Parameter leaves (parameter number, leaf), the order [`Executable::execute`] takes them.
    pub parameters: Vec<(usize, Leaf)>,
    /// Output leaves, in `output_info_map` order.
    pub outputs: Vec<Leaf>,
    /// The thunk sequence after load-time passes.
    pub thunks: Vec<thunks::Thunk>,
    /// Distinct PTX modules.
    pub kernels: Vec<Arc<thunks::KernelModule>>,
    /// Replicas (the embedded module's `replica_count`).
    pub num_replicas: u64,
    /// The flags it was loaded with.
    pub flags: RuntimeFlags,
    /// Cross-stream waits.
    pub events: Vec<streams::EventWait>,
    pub(crate) recordings: execute::Recordings,
}

impl Executable {
    /// The thunks re-encoded as protos (command buffers inlined): equal to the artifact's.
    pub fn thunk_protos(&self) -> Vec<proto::xla::gpu::ThunkProto> {
        thunks::encode_sequence(&self.thunks)
    }
}
