//! Typed errors of the emulator: every failure names the kernel, and where it happened while
//! executing, the instruction (pc and text), the thread (ctaid, tid) and the address.
use std::fmt;

/// Where in a running kernel an error happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Kernel (entry function) name.
    pub kernel: String,
    /// Function executing when the error happened (the kernel or a `.func` it called).
    pub function: String,
    /// Instruction index inside `function`.
    pub pc: u32,
    /// The instruction as printed PTX text (or its opcode).
    pub instruction: String,
    /// CTA index (`%ctaid`).
    pub ctaid: [u32; 3],
    /// Thread index inside the CTA (`%tid`).
    pub tid: [u32; 3],
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kernel `{}`, function `{}`, pc {} `{}`, ctaid ({},{},{}), tid ({},{},{})",
            self.kernel,
            self.function,
            self.pc,
            self.instruction,
            self.ctaid[0],
            self.ctaid[1],
            self.ctaid[2],
            self.tid[0],
            self.tid[1],
            self.tid[2]
        )
    }
}

/// A memory state space, as named in error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Space {
    /// `.global` (device allocations).
    Global,
    /// `.shared` (per CTA).
    Shared,
    /// `.local` (per thread).
    Local,
    /// `.param` (kernel or function parameters).
    Param,
    /// `.const` (module constants, stored as device allocations).
    Const,
    /// Generic addressing (resolved to one of the others).
    Generic,
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Param => "param",
            Space::Const => "const",
            Space::Generic => "generic",
        })
    }
}

/// What a faulting memory instruction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Access {
    /// A load (`ld`, `ldmatrix`, the source of `cp.async`).
    Read,
    /// A store (`st`, `stmatrix`, the destination of `cp.async`).
    Write,
    /// An atomic read-modify-write (`atom`, `red`).
    Atomic,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::Atomic => "atomic",
        })
    }
}

/// Everything that can go wrong loading or running a kernel in the emulator.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum EmuError {
    /// The module uses something the emulator does not support (or is malformed).
    #[error("cannot load function `{function}`: {message}")]
    Unsupported {
        /// Function being decoded.
        function: String,
        /// Instruction index, when the problem is an instruction.
        pc: Option<u32>,
        /// What is wrong.
        message: String,
    },
    /// No `.entry` with that name in the module.
    #[error("no kernel named `{kernel}` in the module (kernels: {available})")]
    UnknownKernel {
        /// Requested name.
        kernel: String,
        /// Comma-separated entry names of the module.
        available: String,
    },
    /// The launch passes the wrong number of parameters.
    #[error("kernel `{kernel}` takes {expected} parameters, the launch passes {got}")]
    ParamCount {
        /// Kernel name.
        kernel: String,
        /// Declared parameter count.
        expected: usize,
        /// Passed parameter count.
        got: usize,
    },
    /// A parameter's byte size differs from its declaration.
    #[error("kernel `{kernel}` parameter {index} is {expected} bytes, the launch passes {got}")]
    ParamSize {
        /// Kernel name.
        kernel: String,
        /// Parameter index.
        index: usize,
        /// Declared size.
        expected: usize,
        /// Passed size.
        got: usize,
    },
    /// Grid, block or shared memory size outside the limits.
    #[error("kernel `{kernel}`: invalid launch configuration: {message}")]
    LaunchConfig {
        /// Kernel name.
        kernel: String,
        /// What is wrong.
        message: String,
    },
    /// An access that is not inside the allocation it belongs to (memcheck): for global memory
    /// one of the launch's buffers (an argument's slice, a module variable, or with no slices
    /// given every device allocation), for shared and local memory one variable or the dynamic
    /// shared memory.
    #[error(
        "out-of-bounds {space} {access} of {size} bytes at address {address:#x}: {missed} ({at})"
    )]
    OutOfBounds {
        /// Where.
        at: Box<Location>,
        /// State space of the access.
        space: Space,
        /// Read, write or atomic.
        access: Access,
        /// Address (space-relative for shared/local/param, device address for global).
        address: u64,
        /// Access size in bytes.
        size: u32,
        /// The allocation it missed: the nearest one and by how many bytes.
        missed: String,
    },
    /// A read of bytes nothing wrote since they were allocated (initcheck,
    /// [`LaunchOptions::initcheck`](crate::emu::LaunchOptions::initcheck)).
    #[error(
        "uninitialised {space} read of {size} bytes at address {address:#x} in {region} ({at})"
    )]
    UninitializedRead {
        /// Where.
        at: Box<Location>,
        /// State space of the access.
        space: Space,
        /// Address, relative as in [`EmuError::OutOfBounds`].
        address: u64,
        /// Access size in bytes.
        size: u32,
        /// The allocation read.
        region: String,
    },
    /// Two threads of a CTA touched the same shared-memory byte, at least one writing, with no
    /// barrier between them (racecheck,
    /// [`LaunchOptions::racecheck`](crate::emu::LaunchOptions::racecheck)).
    #[error("shared-memory race: {hazard} hazard on {size} bytes at shared address {address:#x} with tid ({},{},{}) since the last barrier ({at})", other_tid[0], other_tid[1], other_tid[2])]
    SharedRace {
        /// Where (the second access).
        at: Box<Location>,
        /// `read-after-write`, `write-after-read` or `write-after-write`.
        hazard: &'static str,
        /// Shared-space address of the access.
        address: u64,
        /// Access size in bytes.
        size: u32,
        /// The thread whose earlier access conflicts (same CTA).
        other_tid: [u32; 3],
    },
    /// An access whose address is not a multiple of its size.
    #[error("misaligned {space} access of {size} bytes at address {address:#x} ({at})")]
    Misaligned {
        /// Where.
        at: Box<Location>,
        /// State space of the access.
        space: Space,
        /// The access's first byte, relative as in [`EmuError::OutOfBounds`].
        address: u64,
        /// Access size in bytes.
        size: u32,
    },
    /// A write to read-only memory (`.const`, kernel `.param`).
    #[error("write to read-only {space} memory at address {address:#x} ({at})")]
    ReadOnly {
        /// Where.
        at: Box<Location>,
        /// State space.
        space: Space,
        /// The written address, relative as in [`EmuError::OutOfBounds`].
        address: u64,
    },
    /// A store into a kernel argument the launch does not mark written
    /// ([`super::ArgSlice::written`]): the executable's flags say the kernel only reads it.
    #[error(
        "write to {region}, which the launch does not mark written, at address {address:#x} ({at})"
    )]
    NotWritten {
        /// Where.
        at: Box<Location>,
        /// The written address.
        address: u64,
        /// The argument (kernel parameter, size and address).
        region: String,
    },
    /// Threads wait at a barrier that the rest of the CTA can never reach.
    #[error("barrier deadlock in CTA ({},{},{}): {message} ({at})", at.ctaid[0], at.ctaid[1], at.ctaid[2])]
    BarrierDeadlock {
        /// One of the waiting threads and the barrier instruction.
        at: Box<Location>,
        /// Barrier state (arrived, expected, exited threads).
        message: String,
    },
    /// The launch executed more lane-instructions than allowed.
    #[error("instruction budget of {budget} lane-instructions exhausted ({at})")]
    BudgetExhausted {
        /// Where one warp was when the budget ran out.
        at: Box<Location>,
        /// Lane-instructions the whole launch was allowed
        /// ([`LaunchOptions::budget_for`](crate::emu::LaunchOptions::budget_for) its threads).
        budget: u64,
    },
    /// The launch ran longer than [`crate::emu::LaunchOptions::wall_time_limit`].
    #[error("wall-time limit of {limit_ms} ms exceeded ({at})")]
    WallTimeExceeded {
        /// Where one warp was when the time ran out.
        at: Box<Location>,
        /// The limit, in milliseconds.
        limit_ms: u64,
    },
    /// The launch's resident threads wrote more `.local` memory than
    /// [`crate::emu::LaunchOptions::local_memory_bytes`] (pages of 4 KiB are made as they are
    /// first written).
    #[error("local memory limit of {limit} bytes reached: the launch's threads wrote that much `.local` memory ({at})")]
    LocalMemoryExhausted {
        /// The store that needed one more page.
        at: Box<Location>,
        /// The limit, in bytes.
        limit: u64,
    },
    /// A trap instruction, an unsupported runtime case, or a call stack overflow.
    #[error("{message} ({at})")]
    Trap {
        /// Where.
        at: Box<Location>,
        /// What happened.
        message: String,
    },
    /// A host-side memory operation (read/write/free) on an invalid range.
    #[error("invalid device memory operation: {message}")]
    HostMemory {
        /// What is wrong.
        message: String,
    },
}
