//! What loading produces: the validated executable and the descriptions of its memory (buffer
//! allocations, constants, parameter and output leaves), in the runtime's own types so that
//! execution never reads the proto again.
use std::sync::Arc;

use hlo::PrimitiveType;

use crate::execute;
use crate::flags::RuntimeFlags;
use crate::streams;
use crate::thunks;

/// What an allocation holds at the start of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllocationKind {
    /// A leaf of an entry parameter, written from the caller's argument.
    Parameter {
        /// The entry parameter.
        number: usize,
        /// The leaf inside it (empty for an array parameter).
        shape_index: Vec<i64>,
    },
    /// A constant (filled from `binary`).
    Constant,
    /// An output or temporary: uninitialised until a thunk writes it.
    Temporary,
}

/// A validated buffer allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    /// Its position in `buffer_allocations` (which the loader checks equals the artifact's index).
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
    /// Index of the allocation it fills, from offset 0 (at most that allocation's size; checked
    /// at load).
    pub allocation: usize,
    /// Where its bytes are in `binary`.
    pub offset_in_binary: u64,
    /// How many bytes.
    pub size: u64,
}

/// An array leaf of a parameter or of the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaf {
    /// Index inside the (tuple) shape.
    pub shape_index: Vec<i64>,
    /// The allocation the leaf lives in; `None` for a parameter leaf the program never reads
    /// (buffer assignment gave it no allocation, so its argument is checked and not copied).
    pub allocation: Option<usize>,
    /// Bytes.
    pub size: u64,
    /// With `dims`, how the leaf's bytes read as an array (row-major, little-endian).
    pub element_type: PrimitiveType,
    /// Dimension sizes, major to minor.
    pub dims: Vec<i64>,
    /// An output leaf that is an entry parameter passed through.
    pub passthrough: bool,
}

/// The index table of a tuple node of the result, as XLA lays it out: one 8-byte device address
/// per element, in element order, written into `allocation` at offset 0 once the thunks ran
/// (XLA:GPU's `output_info_map` gives the result tuple an allocation of its own, and a consumer
/// of the result as one tuple buffer reads its elements through this table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TupleTable {
    /// The tuple node's index in the result shape (empty for the result itself).
    pub shape_index: Vec<i64>,
    /// The allocation holding the table (at least 8 bytes per element; checked at load).
    pub allocation: usize,
    /// The allocation of each element (an array leaf's, or a nested tuple's table).
    pub elements: Vec<usize>,
}

/// A loaded, validated executable, ready to run on devices matching the one it was loaded for.
#[derive(Debug)]
pub struct Executable {
    /// The artifact's `module_name`, for messages and profiles (nothing is looked up by it).
    pub module_name: String,
    /// Buffer allocations, by index.
    pub allocations: Vec<Allocation>,
    /// Per allocation: an entry parameter's that no thunk writes and that is not part of the
    /// result ([`crate::thunks::written_allocations`]). [`Executable::execute_with`] binds such
    /// an allocation to a device-resident argument's own buffer, as XLA:GPU binds parameters to
    /// argument buffers, instead of copying the argument into a fresh allocation.
    pub read_only_parameters: Vec<bool>,
    /// Copied into their allocations at the start of every run.
    pub constants: Vec<Constant>,
    /// The module-level binary (constant bytes).
    pub binary: Arc<Vec<u8>>,
    /// Parameter leaves (parameter number, leaf), the order [`Executable::execute`] takes them.
    pub parameters: Vec<(usize, Leaf)>,
    /// Output leaves, in `output_info_map` order.
    pub outputs: Vec<Leaf>,
    /// Index tables of the result's tuple nodes that `output_info_map` gives an allocation.
    pub output_tuples: Vec<TupleTable>,
    /// The thunk sequence after load-time passes.
    pub thunks: Vec<thunks::Thunk>,
    /// Distinct PTX modules (one per distinct text, however many thunks launch it).
    pub kernels: Vec<Arc<thunks::KernelModule>>,
    /// Replicas (the embedded module's `replica_count`).
    pub num_replicas: u64,
    /// Partitions (the embedded module's `num_partitions`, at least 1): the executable runs on
    /// `num_replicas * num_partitions` devices, device `d` being replica `d / num_partitions`,
    /// partition `d % num_partitions` (XLA's logical device id).
    pub num_partitions: u64,
    /// The flags it was loaded with (execution reads its limits from them).
    pub flags: RuntimeFlags,
    /// Cross-stream waits.
    pub events: Vec<streams::EventWait>,
    pub(crate) recordings: execute::Recordings,
}

impl Executable {
    /// The devices one execution runs on: `num_replicas * num_partitions`.
    pub fn num_devices(&self) -> u64 {
        self.num_replicas.saturating_mul(self.num_partitions)
    }

    /// The thunks re-encoded as protos (command buffers inlined): equal to the artifact's.
    pub fn thunk_protos(&self) -> Vec<proto::xla::gpu::ThunkProto> {
        thunks::encode_sequence(&self.thunks)
    }
}
