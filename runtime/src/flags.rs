//! The flags the runtime reads. They are part of the compatibility surface (DESIGN: "the flags
//! the runtime reads"): the schema-history snapshot records [`defaults`].

/// Runtime behaviour switches, with documented defaults ([`RuntimeFlags::default`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeFlags {
    /// Largest serialized artifact accepted, in bytes (checked before decoding). Default 2 GiB.
    pub max_artifact_bytes: usize,
    /// Run the command-buffer conversion pass at load time. Default `true`.
    pub enable_command_buffers: bool,
    /// Fewest consecutive eligible thunks grouped into a command buffer. Default 2.
    pub command_buffer_min_thunks: usize,
    /// Most iterations one `while_thunk` may run before execution fails with
    /// `RESOURCE_EXHAUSTED`. Default 100 000 000. Goldens with loops depend on this default, so
    /// it may not be lowered inside the backward window (the schema bot's `backward-window`
    /// rule): a loop that never ends is stopped by `max_execution_secs` instead.
    pub max_while_iterations: u64,
    /// Number of execution streams: `execution_stream_id` must be in `[0, num_streams)`.
    /// Default 4.
    pub num_streams: i64,
    /// Deepest nesting of control-flow thunks (sequential / while / conditional) accepted.
    /// Default 32.
    pub max_thunk_depth: usize,
    /// Lane-instruction budget of one emulated kernel launch (a kernel that never ends fails
    /// instead of hanging). Applied by [`crate::EmulatedDevice::with_flags`]. Default 2^36: about
    /// four minutes of emulation at 300M lane-instructions per second, far above any real kernel.
    pub emulator_instruction_budget: u64,
    /// Lane-instructions per launched thread that an emulated launch may execute: its budget is
    /// this times the launch's thread count, at least `emulator_instruction_floor` and at most
    /// `emulator_instruction_budget`, so a small launch that never ends stops in a time
    /// proportional to its size (a branch-to-self loop in one block: well under a second, not
    /// minutes). Default 2^22 (4 Mi): every golden and corpus kernel runs far below it. 0 turns
    /// the scaling off. Applied by [`crate::EmulatedDevice::with_flags`].
    pub emulator_instructions_per_thread: u64,
    /// The least lane-instruction budget of a scaled emulated launch (kernels where a few threads
    /// do all the work). Default 2^28.
    pub emulator_instruction_floor: u64,
    /// Seconds a replica waits at a collective for the other participants before failing with
    /// `UNAVAILABLE`. Bounded by the execution's own `max_execution_secs`: a wait that would
    /// outlast the execution ends at its deadline with `RESOURCE_EXHAUSTED`, and a wait for a
    /// device that finished its execution without reaching the collective ends at once with
    /// `INVALID_ARGUMENT`. `aot run --collective-timeout-secs`. Default 120.
    pub collective_timeout_secs: u64,
    /// How much of each kernel's PTX the load parses. Default [`PtxCheck::Signatures`].
    pub ptx_check: PtxCheck,
    /// Largest `replica_count` accepted (step 4), checked before the count sizes anything (the
    /// replica-group check keeps one flag per replica, execution one device per replica).
    /// Default 1024.
    pub max_replicas: u64,
    /// Largest `num_partitions` accepted (step 4), checked as `max_replicas` is, before the count
    /// sizes anything: a program runs on `replica_count * num_partitions` devices, and the
    /// replica-group check keeps one flag per device. Default 1024.
    pub max_partitions: u64,
    /// The most elements an array of the entry's parameters or result may have (step 5,
    /// checked with checked arithmetic before any shape sizes anything), past it
    /// `RESOURCE_EXHAUSTED` naming the shape. Default [`hlo::MAX_ELEMENTS`] (2^28), the
    /// compiler's `CompileOptions::max_array_elements` default and the reference evaluator's
    /// limit; `aot run --max-array-elements`.
    pub max_array_elements: u64,
    /// Longest wall time of one execution, in seconds, before it fails with
    /// `RESOURCE_EXHAUSTED`: checked before every thunk and while iteration, and applied to each
    /// emulated kernel launch by [`crate::EmulatedDevice::with_flags`] (so one execution is bounded
    /// by about twice this). Default 120.
    pub max_execution_secs: u64,
    /// Most bytes the emulated device allocates in total (its memory is the smaller of this and
    /// the target's `device_memory_size`). Allocations commit host memory lazily, as they are
    /// touched, so this bounds what a hostile artifact can make the host commit; an allocation
    /// over it fails with `RESOURCE_EXHAUSTED`. Applied by [`crate::EmulatedDevice::new`] (the
    /// default) and [`crate::EmulatedDevice::with_flags`]. Default 8 GiB.
    pub emulator_host_memory_bytes: u64,
    /// Most bytes of `.local` memory one emulated launch's threads may write in all: each
    /// thread's local memory is made in 4 KiB pages as it is first written and counted before
    /// it is made (a kernel declaring 512 KiB per thread but touching a few bytes commits a
    /// page per thread), so a launch past it fails with `RESOURCE_EXHAUSTED`. A thread may
    /// declare at most 512 KiB (CUDA's limit, `ptx::emu::MAX_LOCAL_BYTES_PER_THREAD`). Applied
    /// by [`crate::EmulatedDevice::with_flags`]; `aot run --emulator-local-memory-bytes`.
    /// Default 1 GiB.
    pub emulator_local_memory_bytes: u64,
    /// Initcheck on the emulated device: a kernel read of device memory that nothing (host
    /// write, memset, copy or kernel store) wrote since it was allocated, or of shared or local
    /// memory the CTA did not write, fails with `INTERNAL` naming kernel, instruction, thread,
    /// address and buffer. Costs a shadow bit per device byte and the per-lane memory path.
    /// Applied by [`crate::EmulatedDevice::with_flags`]. Default `false`.
    pub emulator_initcheck: bool,
    /// Racecheck on the emulated device: threads of different warps touching one shared-memory
    /// byte between two barriers, one of them writing, fails with `INTERNAL` naming both
    /// threads. Costs 16 bytes of shadow per shared byte and the per-lane shared path. Applied
    /// by [`crate::EmulatedDevice::with_flags`]. Default `false`.
    pub emulator_racecheck: bool,
}

/// How much of each kernel's PTX text the load parses (step 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PtxCheck {
    /// The header, module-level directives and every function signature, with the full grammar;
    /// bodies are delimited (comments, strings, braces) but their statements are left to the
    /// device that compiles them: the CUDA driver's JIT at module load, the emulator's
    /// translation at a kernel's first launch. This is what the load needs to resolve each
    /// thunk's kernel and check its parameters, and it runs at over 1 GB/s.
    #[default]
    Signatures,
    /// Every statement of every body too (`ptx::check`: the parser's whole grammar, no model
    /// built, memory bounded by one statement), so a malformed body fails the load rather than
    /// the first launch. About 10x slower than `Signatures`.
    Full,
}

impl PtxCheck {
    /// The flag's spelling (`signatures`, `full`).
    pub fn as_str(self) -> &'static str {
        match self {
            PtxCheck::Signatures => "signatures",
            PtxCheck::Full => "full",
        }
    }
}

/// A PTX check level that is neither `signatures` nor `full`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown PTX check level \"{0}\" (expected \"signatures\" or \"full\")")]
pub struct UnknownPtxCheck(pub String);

impl std::str::FromStr for PtxCheck {
    type Err = UnknownPtxCheck;

    fn from_str(s: &str) -> Result<Self, UnknownPtxCheck> {
        match s {
            "signatures" => Ok(PtxCheck::Signatures),
            "full" => Ok(PtxCheck::Full),
            _ => Err(UnknownPtxCheck(s.to_owned())),
        }
    }
}

impl Default for RuntimeFlags {
    fn default() -> Self {
        RuntimeFlags {
            max_artifact_bytes: 2 << 30,
            enable_command_buffers: true,
            command_buffer_min_thunks: 2,
            max_while_iterations: 100_000_000,
            num_streams: 4,
            max_thunk_depth: 32,
            emulator_instruction_budget: 1 << 36,
            emulator_instructions_per_thread: 1 << 22,
            emulator_instruction_floor: 1 << 28,
            collective_timeout_secs: 120,
            ptx_check: PtxCheck::Signatures,
            max_replicas: 1024,
            max_partitions: 1024,
            max_array_elements: hlo::MAX_ELEMENTS,
            max_execution_secs: 120,
            emulator_host_memory_bytes: 8 << 30,
            emulator_local_memory_bytes: 1 << 30,
            emulator_initcheck: false,
            emulator_racecheck: false,
        }
    }
}

/// Every flag with its default value, printed, in declaration order (the compatibility surface
/// the schema-history snapshots record).
pub fn defaults() -> Vec<(&'static str, String)> {
    let d = RuntimeFlags::default();
    vec![
        ("max_artifact_bytes", d.max_artifact_bytes.to_string()),
        (
            "enable_command_buffers",
            d.enable_command_buffers.to_string(),
        ),
        (
            "command_buffer_min_thunks",
            d.command_buffer_min_thunks.to_string(),
        ),
        ("max_while_iterations", d.max_while_iterations.to_string()),
        ("num_streams", d.num_streams.to_string()),
        ("max_thunk_depth", d.max_thunk_depth.to_string()),
        (
            "emulator_instruction_budget",
            d.emulator_instruction_budget.to_string(),
        ),
        (
            "emulator_instructions_per_thread",
            d.emulator_instructions_per_thread.to_string(),
        ),
        (
            "emulator_instruction_floor",
            d.emulator_instruction_floor.to_string(),
        ),
        (
            "collective_timeout_secs",
            d.collective_timeout_secs.to_string(),
        ),
        ("ptx_check", d.ptx_check.as_str().to_string()),
        ("max_replicas", d.max_replicas.to_string()),
        ("max_partitions", d.max_partitions.to_string()),
        ("max_array_elements", d.max_array_elements.to_string()),
        ("max_execution_secs", d.max_execution_secs.to_string()),
        (
            "emulator_host_memory_bytes",
            d.emulator_host_memory_bytes.to_string(),
        ),
        (
            "emulator_local_memory_bytes",
            d.emulator_local_memory_bytes.to_string(),
        ),
        ("emulator_initcheck", d.emulator_initcheck.to_string()),
        ("emulator_racecheck", d.emulator_racecheck.to_string()),
    ]
}

/// The flags of [`defaults`] that are upper bounds an artifact can need: iteration caps,
/// timeouts, counts, sizes and memory. Each is an integer, and an artifact that ran under a
/// default may need all of it, so lowering one refuses artifacts that loaded before (the schema
/// bot's `limit-tightened` rule, which no waiver silences); raising one is compatible.
/// `emulator_instructions_per_thread` is not among them: its 0 means "no per-thread scaling",
/// the loosest setting, so its values are not ordered by size (a changed default is still
/// judged as any flag's, by the backward-window rule).
pub const LIMITS: &[&str] = &[
    "max_artifact_bytes",
    "max_while_iterations",
    "num_streams",
    "max_thunk_depth",
    "emulator_instruction_budget",
    "emulator_instruction_floor",
    "collective_timeout_secs",
    "max_replicas",
    "max_partitions",
    "max_array_elements",
    "max_execution_secs",
    "emulator_host_memory_bytes",
    "emulator_local_memory_bytes",
];

/// Names of the load-time thunk passes, in the order they run.
pub const LOAD_PASSES: &[&str] = &["command_buffer_conversion"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_ptx_check_level_names_the_two() {
        assert_eq!(
            "partial".parse::<PtxCheck>().map_err(|e| e.to_string()),
            Err("unknown PTX check level \"partial\" (expected \"signatures\" or \"full\")".into())
        );
        assert_eq!("full".parse::<PtxCheck>(), Ok(PtxCheck::Full));
    }

    #[test]
    fn every_limit_is_an_integer_flag() {
        let defaults = defaults();
        for limit in LIMITS {
            let (_, value) = defaults
                .iter()
                .find(|(name, _)| name == limit)
                .unwrap_or_else(|| panic!("{limit} is not a flag"));
            assert!(value.parse::<u64>().is_ok(), "{limit} = {value}");
        }
    }
}
