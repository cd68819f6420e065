//! SIMT emulator: executes PTX kernels on the CPU the way an NVIDIA GPU does.
//!
//! ```text
//! let module = LoadedModule::load(&ast_module)?;          // decode once
//! let mut mem = Memory::new();
//! let x = mem.alloc(4096)?; mem.write(x, &bytes)?;
//! let stats = launch(&module, "vadd", [4,1,1], [256,1,1], 0,
//!                    &[ParamValue::ptr(x), ParamValue::u32(1000)], &mut mem,
//!                    &LaunchOptions::default())?;
//! ```
//!
//! * Decoding (module `decode`) turns each kernel into a compact form (register rows, predicate masks,
//!   resolved branch targets, constants folded into rows, `.func` calls inlined).
//! * The engine runs warps of 32 lanes in lockstep with *minimum-pc* reconvergence (see the
//!   `exec` module docs), barriers per thread, CTAs in parallel on OS threads.
//! * [`Memory`] is the device: alignment-checked global allocations backed by atomic words, so
//!   concurrent CTAs and `atom.*` are race-free; shared/local/param memory per CTA.
//! * The emulator is a sanitizer (module `sanitize`): every global access is checked against the
//!   launch's buffers (argument slices given to [`launch_sliced`], module variables), every
//!   shared and local access against its variable, with an error naming the nearest buffer and
//!   the distance; [`LaunchOptions::initcheck`] and [`LaunchOptions::racecheck`] add
//!   uninitialised-read and shared-memory race detection.
//! * Numeric semantics (rounding modes, ftz, saturation, NaN rules, approximations) live in
//!   [`numeric`].
//! * Two engines run the same decoded code with bit-identical results, counts and faults: the
//!   reference (every instruction through its general path) and the default fast one (whole-row
//!   kernels for the compiler's common f64/f32 forms, float → integer conversions and integer
//!   comparisons, compiled for AVX2/FMA or AVX-512 where the CPU has them);
//!   [`LaunchOptions::reference_engine`] picks the reference, [`LaunchOptions::host_isa`] caps
//!   the fast engine's build (docs/performance.md).
//!
//! # Supported instructions
//!
//! `mov` (incl. vector pack/unpack, symbol addresses), `add sub mul mad` (`.lo .hi .wide`,
//! `.sat`), extended precision `add.cc addc sub.cc subc mad.cc madc`, `mul24 mad24 sad slct`,
//! `div rem abs neg min max` (int and float, `.NaN`), `popc clz brev bfind bfe bfi
//! prmt lop3 shf shl shr and or xor not cnot` (incl. `.pred` logic), `fma` (all rounding
//! modes, `.ftz .sat`), `rcp sqrt rsqrt ex2 lg2 sin cos tanh` (`.approx` and IEEE forms),
//! `copysign testp setp set selp cvt cvta` (all types incl. f16/bf16/f16x2/bf16x2 arithmetic),
//! `ld ldu st` (all state spaces, `.v2 .v4`, `.nc`, `.volatile`), `atom red` (add min max inc dec
//! and or xor exch cas on 32/64-bit ints, f32, f64, f16x2/bf16x2 add/min/max), `bra exit ret
//! call` (direct calls inlined), `bar/barrier .sync .arrive`, `shfl.sync` (up down bfly idx),
//! `vote.sync` (all any uni ballot), `activemask`, `match.any/all`, `redux.sync`, `trap`;
//! `membar fence bar.warp.sync prefetch nanosleep` are no-ops.
//!
//! # Matrix instructions
//!
//! What XLA's Triton gemm kernels use on Ampere (`testdata/xla_ptx/`) and Hopper (sm_90a, the
//! h100 executables of `testdata/xla_gpu/`), each form exactly (semantics and why they are legal
//! in `exec/matrix.rs`):
//!
//! - `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared}.b16`, and its reverse
//!   `stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared}.b16` (sm_90);
//! - `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32`,
//!   `mma.sync.aligned.m16n8k8.row.col.f32.{f16,bf16,tf32}.{same}.f32`: exact products, one
//!   rounding to f32 per element;
//! - `cp.async.{ca,cg}.shared.global{.L2::64B,.L2::128B,.L2::256B} [d], [s], cp-size{, src-size}`
//!   (completed when issued), `cp.async.commit_group`, `cp.async.wait_group`, `cp.async.wait_all`
//!   (no-ops);
//! - `cvt.rna.tf32.f32`.
//!
//! XLA's own a100 kernels (`testdata/xla_ptx/`, from `tools/xla_artifacts/xla_ptx.py`) are the
//! corpus for these: `tests/emu_xla.rs` holds the exact list of what the emulator refuses in
//! them (empty today) and runs each against its launch spec; the harness's `tests/xla_ptx.rs`
//! compares each with the `hlo` evaluator on the fusion XLA dumped with it.
//!
//! `ldmatrix`, `stmatrix` and `mma` need the whole warp (else a trap). Any other shape, layout, type,
//! accumulator (`.f16` C/D), `.satfinite`/`.relu`, the ignore-src predicate of `cp.async`, or a
//! `src-size` above `cp-size` (a trap at run time) is refused.
//!
//! Not supported (loading fails with [`EmuError::Unsupported`]): `bar.red`, indirect calls and
//! `brx.idx`, recursion, `dp4a dp2a fns bmsk szext isspacep cvt.pack`, textures/surfaces,
//! other `mma` forms, `wmma`, `wgmma`, `cp.async.bulk`, `mbarrier`, `.b128` and fp8 types, `.v8`
//! vectors. `%clock`, `%clock64` and `%globaltimer` read 0, `%smid`
//! reads 0 and `%nsmid` 1.
pub mod bench;
mod cta_queue;
mod decode;
pub mod error;
mod exec;
mod exp2;
mod int_rows;
mod lanes;
pub mod memory;
pub mod numeric;
mod sanitize;
mod stripes;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub use error::{Access, EmuError, Location, Space};
pub use exec::HostIsa;
pub use memory::{DevicePtr, Memory};
pub use sanitize::ArgSlice;

use decode::{Func, ModuleVar};

static NEXT_MODULE_ID: AtomicU64 = AtomicU64::new(1);

/// A module decoded for execution. Decoding happens once; launches reuse it.
#[derive(Debug)]
pub struct LoadedModule {
    id: u64,
    kernels: Vec<Func>,
    vars: Vec<ModuleVar>,
}

impl LoadedModule {
    /// Decodes every kernel (`.entry` with a body) of `module`.
    pub fn load(module: &crate::ast::Module) -> Result<LoadedModule, EmuError> {
        let d = decode::decode_module(module)?;
        Ok(LoadedModule {
            id: NEXT_MODULE_ID.fetch_add(1, Ordering::Relaxed),
            kernels: d.kernels,
            vars: d.vars,
        })
    }

    /// The launchable kernels: the module's `.entry` functions with a body, in declaration
    /// order.
    pub fn kernel_names(&self) -> Vec<&str> {
        self.kernels.iter().map(|k| k.name.as_str()).collect()
    }

    /// Byte sizes of a kernel's parameters, in order.
    pub fn param_sizes(&self, kernel: &str) -> Option<Vec<usize>> {
        self.kernel(kernel)
            .map(|k| k.params.iter().map(|p| p.size as usize).collect())
    }

    /// Number of decoded instructions of a kernel (after inlining).
    pub fn instruction_count(&self, kernel: &str) -> Option<usize> {
        self.kernel(kernel).map(|k| k.code.len())
    }

    fn kernel(&self, name: &str) -> Option<&Func> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

/// One kernel argument: its bytes, little-endian, exactly the declared parameter size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamValue(pub Vec<u8>);

impl ParamValue {
    /// A device pointer (`.u64` parameter).
    pub fn ptr(p: DevicePtr) -> ParamValue {
        ParamValue(p.0.to_le_bytes().to_vec())
    }
    /// A `.u32`/`.s32`/`.b32` parameter.
    pub fn u32(v: u32) -> ParamValue {
        ParamValue(v.to_le_bytes().to_vec())
    }
    /// A `.s32` parameter.
    pub fn i32(v: i32) -> ParamValue {
        ParamValue(v.to_le_bytes().to_vec())
    }
    /// A `.u64`/`.s64` parameter.
    pub fn u64(v: u64) -> ParamValue {
        ParamValue(v.to_le_bytes().to_vec())
    }
    /// A `.f32` parameter.
    pub fn f32(v: f32) -> ParamValue {
        ParamValue(v.to_le_bytes().to_vec())
    }
    /// A `.f64` parameter.
    pub fn f64(v: f64) -> ParamValue {
        ParamValue(v.to_le_bytes().to_vec())
    }
}

/// Limits and engine of one launch; the default is a budget of 2^36 lane-instructions, no time
/// limit, all cores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchOptions {
    /// Maximum lane-instructions the whole launch may execute (checked every 64Ki per worker).
    pub instruction_budget: u64,
    /// Worker OS threads (CTAs run in parallel); 0 = available parallelism.
    pub threads: usize,
    /// Longest wall time the launch may run, checked where the budget is (every 64Ki
    /// lane-instructions per worker), so a kernel that spins fails with
    /// [`EmuError::WallTimeExceeded`] in bounded time whatever its budget. `None`: no limit.
    pub wall_time_limit: Option<std::time::Duration>,
    /// Lane-instructions each launched thread may execute on average: the launch's budget is
    /// this times its thread count, at least [`LaunchOptions::instruction_floor`] and at most
    /// [`LaunchOptions::instruction_budget`], so a small launch that spins stops after a time in
    /// proportion to its size, not after the whole budget. 0: no scaling (the budget alone).
    pub instructions_per_thread: u64,
    /// The least budget a scaled launch gets (setup, and kernels where few threads do much).
    pub instruction_floor: u64,
    /// Run the reference engine: every instruction through its general path, no vector units.
    /// The default fast engine gives bit-identical results, faults and counts; this switch is
    /// what the tests that check that compare against.
    pub reference_engine: bool,
    /// The widest host instruction set the fast engine may use ([`HostIsa`]; default the
    /// widest there is, so the engine runs the best build the CPU has). Tests lower it to run
    /// every build the CPU has against the reference.
    pub host_isa: HostIsa,
    /// Initcheck: a kernel read of device memory nothing wrote since it was allocated (on a
    /// [`Memory`] with [`Memory::set_initcheck`]), or of shared or local memory the CTA did not
    /// write, is [`EmuError::UninitializedRead`]. Off by default: every access then goes down
    /// the per-lane path.
    pub initcheck: bool,
    /// Racecheck: threads of different warps touching one shared-memory byte between barrier
    /// releases, one of them writing (atomics excepted), is [`EmuError::SharedRace`]. Off by
    /// default: shared accesses then go down the per-lane path.
    pub racecheck: bool,
    /// Most bytes of `.local` memory the launch's resident threads may write in all, across
    /// its workers: a thread's local memory is made in 4 KiB pages as it is first written (a
    /// read of an unwritten page is zero and makes nothing), each page counted before it is
    /// made; one past the limit is [`EmuError::LocalMemoryExhausted`]. Default
    /// [`DEFAULT_LOCAL_MEMORY_BYTES`].
    pub local_memory_bytes: u64,
}

impl LaunchOptions {
    /// The lane-instruction budget of a launch of `threads` threads.
    pub fn budget_for(&self, threads: u64) -> u64 {
        if self.instructions_per_thread == 0 {
            return self.instruction_budget;
        }
        self.instructions_per_thread
            .saturating_mul(threads)
            .max(self.instruction_floor)
            .min(self.instruction_budget)
    }
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            instruction_budget: 1 << 36,
            threads: 0,
            wall_time_limit: None,
            instructions_per_thread: 0,
            instruction_floor: 0,
            reference_engine: false,
            host_isa: HostIsa::Avx512,
            initcheck: false,
            racecheck: false,
            local_memory_bytes: DEFAULT_LOCAL_MEMORY_BYTES,
        }
    }
}

/// What a launch did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LaunchStats {
    /// Instructions executed, counted once per active lane.
    pub lane_instructions: u64,
    /// Instructions executed, counted once per warp.
    pub warp_instructions: u64,
    /// Bytes read from global memory (loads and atomics).
    pub global_bytes_read: u64,
    /// Bytes written to global memory (stores and atomics).
    pub global_bytes_written: u64,
    /// CTAs run.
    pub ctas: u64,
}

/// Largest block the emulator accepts (as on every NVIDIA GPU).
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Largest shared memory per CTA accepted (static + dynamic).
pub const MAX_SHARED_BYTES: u64 = 228 * 1024;
/// Most `.local` bytes one thread may declare (CUDA's limit on every architecture since sm_20).
pub const MAX_LOCAL_BYTES_PER_THREAD: u64 = 512 * 1024;
/// Default of [`LaunchOptions::local_memory_bytes`]: 1 GiB.
pub const DEFAULT_LOCAL_MEMORY_BYTES: u64 = 1 << 30;
/// Largest grid the emulator accepts, per dimension (CUDA's limits since compute capability 3.0).
pub const MAX_GRID: [u32; 3] = [(1 << 31) - 1, 65535, 65535];

/// Runs `kernel` over `grid` CTAs of `block` threads; every global access must lie in one
/// device allocation (see [`launch_sliced`] for per-argument bounds).
#[allow(clippy::too_many_arguments)]
pub fn launch(
    module: &LoadedModule,
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_shared_bytes: u32,
    params: &[ParamValue],
    memory: &mut Memory,
    options: &LaunchOptions,
) -> Result<LaunchStats, EmuError> {
    let dims = (grid, block, dynamic_shared_bytes);
    launch_sliced(module, kernel, dims, params, &[], memory, options)
}

/// [`launch`] with the buffer slice each pointer argument may touch: a global access must lie
/// inside one of `slices` or a module variable (an empty `slices`: inside one allocation).
/// `dims` are the grid, the block and the dynamic shared memory bytes.
pub fn launch_sliced(
    module: &LoadedModule,
    kernel: &str,
    dims: ([u32; 3], [u32; 3], u32),
    params: &[ParamValue],
    slices: &[ArgSlice],
    memory: &mut Memory,
    options: &LaunchOptions,
) -> Result<LaunchStats, EmuError> {
    let (grid, block, dynamic_shared_bytes) = dims;
    let func = module
        .kernel(kernel)
        .ok_or_else(|| EmuError::UnknownKernel {
            kernel: kernel.to_string(),
            available: module.kernel_names().join(", "),
        })?;
    let cfg = |message: String| EmuError::LaunchConfig {
        kernel: kernel.to_string(),
        message,
    };
    if grid.contains(&0) || block.contains(&0) {
        return Err(cfg(format!(
            "grid {grid:?} and block {block:?} must be non-zero"
        )));
    }
    if grid.iter().zip(MAX_GRID).any(|(&g, m)| g > m) {
        return Err(cfg(format!(
            "grid {grid:?} exceeds the grid limit {MAX_GRID:?}"
        )));
    }
    let nthreads = block.iter().map(|&b| b as u64).product::<u64>();
    if nthreads > MAX_THREADS_PER_BLOCK as u64 {
        return Err(cfg(format!(
            "block {block:?} has {nthreads} threads, more than {MAX_THREADS_PER_BLOCK}"
        )));
    }
    // Every thread executes at least one instruction (its `ret`), so a launch with more threads
    // than the budget has lane-instructions cannot finish: refuse it before running any block
    // (2^31-1 blocks would otherwise run for minutes before the budget stops them).
    let total_threads = grid
        .iter()
        .map(|&g| g as u64)
        .product::<u64>()
        .saturating_mul(nthreads);
    if total_threads > options.instruction_budget {
        return Err(cfg(format!(
            "grid {grid:?} x block {block:?} is {total_threads} threads, more than the instruction budget of {} lane-instructions can run",
            options.instruction_budget
        )));
    }
    let budget = options.budget_for(total_threads);
    let shared = (func.shared_static as u64).div_ceil(16) * 16 + dynamic_shared_bytes as u64;
    if shared > MAX_SHARED_BYTES {
        return Err(cfg(format!(
            "{shared} bytes of shared memory exceed {MAX_SHARED_BYTES}"
        )));
    }
    // ptxas refuses more (`uses too much local data`); pages are made only as written, so
    // this bounds one thread, `LaunchOptions::local_memory_bytes` the launch.
    // The declared bytes, not the emulator's layout (which puts redzones between variables).
    let declared_local = func
        .local_vars
        .iter()
        .fold(0u64, |n, v| n.saturating_add(v.size));
    if declared_local > MAX_LOCAL_BYTES_PER_THREAD {
        return Err(cfg(format!(
            "{declared_local} bytes of local memory per thread, more than {MAX_LOCAL_BYTES_PER_THREAD} (CUDA's limit)"
        )));
    }
    if params.len() != func.params.len() {
        return Err(EmuError::ParamCount {
            kernel: kernel.to_string(),
            expected: func.params.len(),
            got: params.len(),
        });
    }
    let mut buf = vec![0u8; func.param_size as usize];
    for (i, (p, slot)) in params.iter().zip(&func.params).enumerate() {
        if p.0.len() != slot.size as usize {
            return Err(EmuError::ParamSize {
                kernel: kernel.to_string(),
                index: i,
                expected: slot.size as usize,
                got: p.0.len(),
            });
        }
        let o = slot.offset as usize;
        if let Some(dst) = buf.get_mut(o..o + p.0.len()) {
            dst.copy_from_slice(&p.0);
        }
    }
    // Module variables: allocated and initialized on first launch on this memory.
    if !memory.module_vars.contains_key(&module.id) {
        let mut addrs = Vec::with_capacity(module.vars.len());
        for v in &module.vars {
            let p = memory.alloc(v.size)?;
            memory.write(p, &v.init)?;
            addrs.push(p.0);
        }
        memory.module_vars.insert(module.id, addrs);
    }
    let var_addrs = memory
        .module_vars
        .get(&module.id)
        .cloned()
        .unwrap_or_default();
    let ncta = grid.iter().map(|&g| g as u64).product::<u64>();
    let threads = if options.threads == 0 {
        host_cores()
    } else {
        options.threads
    };
    let threads = threads.min(ncta as usize).max(1);
    let used = AtomicU64::new(0);
    let local_used = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let mem: &Memory = memory;
    let dyn_base = func.shared_layout.div_ceil(16) * 16;
    // The fast engine runs the packed registers; the reference engine the code as decoded.
    let rows = exec::Rows::of(func, !options.reference_engine);
    let ctx = exec::LaunchCtx {
        kernel,
        func,
        mem,
        params: &buf,
        var_addrs: &var_addrs,
        var_names: module.vars.iter().map(|v| v.name.clone()).collect(),
        globals: sanitize::GlobalMap::new(mem, slices, &var_addrs),
        shared_map: sanitize::VarMap::new(
            &func.shared_vars,
            Some((dyn_base, dynamic_shared_bytes as u64)),
            "shared",
        ),
        local_map: sanitize::VarMap::new(&func.local_vars, None, "local"),
        initcheck: options.initcheck,
        racecheck: options.racecheck,
        grid,
        block,
        dyn_shared: dynamic_shared_bytes,
        budget,
        used: &used,
        local: exec::local::LocalBudget {
            used: &local_used,
            limit: options.local_memory_bytes,
        },
        stop: &stop,
        deadline: options
            .wall_time_limit
            .and_then(|d| std::time::Instant::now().checked_add(d)),
        wall_time_limit: options.wall_time_limit.unwrap_or_default(),
        engine: exec::Engine::choose(options.reference_engine, options.host_isa),
        stripes: stripes::Stripes::default(),
        fast: if options.reference_engine {
            exec::fast::FastCode::default()
        } else {
            exec::fast_table(rows.code)
        },
        rows,
    };
    let queue = cta_queue::CtaQueue::new(ncta, threads);
    let results: Vec<Result<exec::Counters, EmuError>> = if threads == 1 {
        vec![ctx.worker(&queue)]
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|_| s.spawn(|| ctx.worker(&queue)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(EmuError::HostMemory {
                            message: "emulator worker thread panicked".into(),
                        })
                    })
                })
                .collect()
        })
    };
    let mut stats = LaunchStats {
        ctas: ncta,
        ..LaunchStats::default()
    };
    let mut first_err = None;
    for r in results {
        match r {
            Ok(c) => {
                stats.lane_instructions += c.lane_instructions;
                stats.warp_instructions += c.warp_instructions;
                stats.global_bytes_read += c.global_bytes_read;
                stats.global_bytes_written += c.global_bytes_written;
            }
            Err(e) => {
                // Prefer a real fault over "budget exhausted" reported by another worker.
                if first_err.is_none() {
                    first_err = Some(e);
                }
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    if used.load(Ordering::Relaxed) > budget {
        return Err(EmuError::BudgetExhausted {
            at: Box::new(Location {
                kernel: kernel.to_string(),
                function: func.name.clone(),
                pc: 0,
                instruction: "<end of launch>".into(),
                ctaid: [0; 3],
                tid: [0; 3],
            }),
            budget,
        });
    }
    Ok(stats)
}

/// The host's available parallelism, asked once per process: `available_parallelism` reads the
/// cgroup's CPU quota from `/proc` and `/sys` on every call (a few files opened and parsed), 1 %
/// of a workload of two small launches per execution.
fn host_cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_scales_with_the_launch_between_floor_and_cap() {
        let opts = LaunchOptions {
            instructions_per_thread: 1 << 10,
            instruction_floor: 1 << 20,
            ..LaunchOptions::default()
        };
        assert_eq!(opts.budget_for(64), 1 << 20);
        assert_eq!(opts.budget_for(1 << 12), 1 << 22);
        assert_eq!(opts.budget_for(u64::MAX), 1 << 36);
        assert_eq!(LaunchOptions::default().budget_for(64), 1 << 36);
    }

    #[test]
    fn a_small_spinning_launch_stops_at_its_scaled_budget() {
        let text = ".version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry spin()\n{\nSPIN:\n\tbra.uni SPIN;\n}\n";
        let ast = crate::parse(text).expect("the kernel parses");
        let m = LoadedModule::load(&ast).expect("the kernel loads");
        let opts = LaunchOptions {
            instructions_per_thread: 1 << 10,
            instruction_floor: 1 << 20,
            ..LaunchOptions::default()
        };
        let start = std::time::Instant::now();
        let err = launch(
            &m,
            "spin",
            [1, 1, 1],
            [64, 1, 1],
            0,
            &[],
            &mut Memory::new(),
            &opts,
        )
        .expect_err("a branch-to-self loop never ends");
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
        let message = err.to_string();
        assert!(
            message.starts_with("instruction budget of 1048576 lane-instructions exhausted ("),
            "{message}"
        );
    }
}
