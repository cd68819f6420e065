//! The emulated GPU: a target config's description, device memory and kernels from the `ptx`
//! crate's SIMT emulator. Operations run synchronously in issue order.
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ptx::emu::{self, ArgSlice, DevicePtr, LaunchOptions, LoadedModule, Memory, ParamValue};

use super::{host_len, Device, DeviceDescription, DeviceKind, GemmBuffers, KernelArg, LaunchShape};
use crate::error::{Error, Result};
use crate::thunks::KernelModule;

/// A GPU emulated on the CPU.
pub struct EmulatedDevice {
    description: DeviceDescription,
    memory: Mutex<Memory>,
    modules: Mutex<HashMap<u64, Arc<LoadedModule>>>,
    options: LaunchOptions,
    totals: Counters,
}

/// What the device did since it was made or last [`EmulatedDevice::take_totals`]: the
/// emulator's counts summed over launches, plus the bytes gemms and copies move (they run
/// natively, outside the emulator). For benchmarks (`aot bench`); nothing reads them to decide.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceTotals {
    /// PTX kernels the emulator ran (gemms and copies add bytes, not launches).
    pub launches: u64,
    /// Instructions executed, once per active lane.
    pub lane_instructions: u64,
    /// Bytes read from global memory (kernel loads and atomics, gemm operands, copy sources).
    pub bytes_read: u64,
    /// Bytes written to global memory (kernel stores and atomics, gemm outputs, copy targets).
    pub bytes_written: u64,
}

#[derive(Debug, Default)]
struct Counters {
    /// The most recent launch's lane-instructions (not reset by `take_totals`).
    last_launch_lanes: AtomicU64,
    launches: AtomicU64,
    lane_instructions: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
}

impl Counters {
    fn add(&self, launches: u64, lanes: u64, read: u64, written: u64) {
        self.launches.fetch_add(launches, Ordering::Relaxed);
        self.lane_instructions.fetch_add(lanes, Ordering::Relaxed);
        self.bytes_read.fetch_add(read, Ordering::Relaxed);
        self.bytes_written.fetch_add(written, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for EmulatedDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmulatedDevice")
            .field("name", &self.description.name)
            .field("compute_capability", &self.description.compute_capability)
            .finish()
    }
}

/// The emulated device's memory: the target's `device_memory_size` (64 GiB when the target
/// leaves it unset), at most `RuntimeFlags::emulator_host_memory_bytes`.
fn memory_limit(description: &DeviceDescription, flags: &crate::flags::RuntimeFlags) -> u64 {
    let device = if description.device_memory_size == 0 {
        64 << 30
    } else {
        description.device_memory_size
    };
    device.min(flags.emulator_host_memory_bytes)
}

/// The emulator's launch options that `flags` sets.
fn launch_options(flags: &crate::flags::RuntimeFlags) -> LaunchOptions {
    LaunchOptions {
        instruction_budget: flags.emulator_instruction_budget,
        wall_time_limit: Some(std::time::Duration::from_secs(flags.max_execution_secs)),
        instructions_per_thread: flags.emulator_instructions_per_thread,
        instruction_floor: flags.emulator_instruction_floor,
        initcheck: flags.emulator_initcheck,
        racecheck: flags.emulator_racecheck,
        local_memory_bytes: flags.emulator_local_memory_bytes,
        ..LaunchOptions::default()
    }
}

fn emu_err(e: emu::EmuError) -> Error {
    match e {
        emu::EmuError::HostMemory { message } => Error::resource_exhausted(message),
        e @ emu::EmuError::WallTimeExceeded { .. } => Error::resource_exhausted(format!(
            "emulated device: {e} (RuntimeFlags::max_execution_secs, aot run --max-execution-secs)"
        )),
        other => Error::internal(format!("emulated device: {other}")),
    }
}

/// A launch's failure. The emulator's messages already name the kernel (and the instruction
/// where it stopped), so no context is added: it would say the kernel twice.
fn launch_err(e: emu::EmuError) -> Error {
    match e {
        e @ emu::EmuError::BudgetExhausted { .. } => Error::resource_exhausted(format!(
            "emulated device: {e} (RuntimeFlags::emulator_instructions_per_thread times the launch's threads, at least emulator_instruction_floor, at most emulator_instruction_budget)"
        )),
        e @ emu::EmuError::LaunchConfig { .. } => Error::invalid_argument(e.to_string()),
        // The executable's written flags are wrong: it is the artifact's defect, and the store
        // did not land (the caller's buffer may be that argument).
        e @ emu::EmuError::NotWritten { .. } => Error::invalid_argument(format!(
            "emulated device: {e} (the executable's KernelThunkProto.written flags say the kernel only reads this argument)"
        )),
        e @ emu::EmuError::LocalMemoryExhausted { .. } => Error::resource_exhausted(format!(
            "emulated device: {e} (RuntimeFlags::emulator_local_memory_bytes, aot run --emulator-local-memory-bytes)"
        )),
        e @ (emu::EmuError::HostMemory { .. } | emu::EmuError::WallTimeExceeded { .. }) => {
            emu_err(e)
        }
        other => Error::internal(other.to_string()),
    }
}

impl EmulatedDevice {
    /// A device described by `description` (memory limited to its `device_memory_size`).
    pub fn new(description: DeviceDescription) -> EmulatedDevice {
        let flags = crate::flags::RuntimeFlags::default();
        EmulatedDevice {
            memory: Mutex::new(Memory::with_limit(memory_limit(&description, &flags))),
            description,
            modules: Mutex::new(HashMap::new()),
            options: launch_options(&crate::flags::RuntimeFlags::default()),
            totals: Counters::default(),
        }
    }

    /// The totals since the device was made or last asked, and zero again.
    pub fn take_totals(&self) -> DeviceTotals {
        let t = &self.totals;
        DeviceTotals {
            launches: t.launches.swap(0, Ordering::Relaxed),
            lane_instructions: t.lane_instructions.swap(0, Ordering::Relaxed),
            bytes_read: t.bytes_read.swap(0, Ordering::Relaxed),
            bytes_written: t.bytes_written.swap(0, Ordering::Relaxed),
        }
    }

    /// A device built from a target config file (`.txtpb`).
    pub fn from_target_config_file(path: &Path) -> Result<EmulatedDevice> {
        let config =
            proto::load_target_config(path).map_err(|e| Error::invalid_argument(e.to_string()))?;
        Ok(EmulatedDevice::new(DeviceDescription::from_target_config(
            &config,
        )?))
    }

    /// Applies the runtime flags the device reads (the per-launch instruction budget and
    /// wall-time limit).
    pub fn with_flags(mut self, flags: &crate::flags::RuntimeFlags) -> EmulatedDevice {
        let limit = memory_limit(&self.description, flags);
        if let Ok(m) = self.memory.get_mut() {
            m.set_limit(limit);
            // Allocations made from now on get initcheck's shadow (the executable's buffers are
            // allocated after the device is made).
            m.set_initcheck(flags.emulator_initcheck);
        }
        self.options = LaunchOptions {
            threads: self.options.threads,
            ..launch_options(flags)
        };
        self
    }

    /// Sets the per-launch instruction budget and worker threads.
    pub fn with_launch_options(mut self, options: LaunchOptions) -> EmulatedDevice {
        self.options = options;
        self
    }

    /// The module parsed and translated for the emulator, on first use (then cached by id).
    fn translated(&self, module: &KernelModule) -> Result<Arc<LoadedModule>> {
        let mut modules = self
            .modules
            .lock()
            .map_err(|_| Error::internal("emulated device module lock poisoned"))?;
        if let Some(m) = modules.get(&module.id) {
            return Ok(m.clone());
        }
        let parsed = ptx::parse(&module.text).map_err(|e| {
            Error::invalid_argument(format!(
                "kernel_binary.ptx (.entry {}) does not parse: line {}:{}: {} (found at its first launch; RuntimeFlags::ptx_check = full finds it at load)",
                module
                    .outline
                    .entries()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                e.line,
                e.column,
                e.message
            ))
        })?;
        let loaded = Arc::new(LoadedModule::load(&parsed).map_err(|e| {
            Error::unimplemented(format!(
                "the emulated device cannot load the PTX module: {e}"
            ))
        })?);
        modules.insert(module.id, loaded.clone());
        Ok(loaded)
    }

    /// Runs `f` on device memory in place ([`Memory::with_views`]): the `reads` (address, size)
    /// as bytes and `write` as mutable bytes. `None` when `write` overlaps a read (the caller
    /// copies instead).
    fn in_place<R>(
        &self,
        reads: &[(u64, u64)],
        write: (u64, u64),
        f: impl FnOnce(&[&[u8]], &mut [u8]) -> R,
    ) -> Result<Option<R>> {
        let span = |(addr, size): (u64, u64)| -> Result<(DevicePtr, usize)> {
            Ok((DevicePtr(addr), host_len(size, "host operand")?))
        };
        let reads = reads.iter().map(|&r| span(r)).collect::<Result<Vec<_>>>()?;
        let write = span(write)?;
        self.mem()?.with_views(&reads, write, f).map_err(emu_err)
    }

    fn mem(&self) -> Result<MutexGuard<'_, Memory>> {
        self.memory
            .lock()
            .map_err(|_| Error::internal("emulated device memory lock poisoned"))
    }
}

impl Device for EmulatedDevice {
    fn description(&self) -> &DeviceDescription {
        &self.description
    }

    fn kind(&self) -> DeviceKind {
        DeviceKind::Emulated
    }

    fn allocate(&self, size: u64) -> Result<u64> {
        self.mem()?.alloc(size).map(|p| p.0).map_err(|e| match e {
            emu::EmuError::HostMemory { message } => Error::resource_exhausted(format!(
                "emulated device: {message} (the smaller of the target's device_memory_size and RuntimeFlags::emulator_host_memory_bytes, aot run --emulator-host-memory-bytes)"
            )),
            other => emu_err(other),
        })
    }

    fn free(&self, address: u64) -> Result<()> {
        self.mem()?.free(DevicePtr(address)).map_err(emu_err)
    }

    fn write(&self, address: u64, data: &[u8]) -> Result<()> {
        self.mem()?.write(DevicePtr(address), data).map_err(emu_err)
    }

    /// In device memory, without the default's host buffer of the whole size.
    fn memset32(&self, address: u64, size: u64, value: u32) -> Result<()> {
        let n = host_len(size, "memset")?;
        self.mem()?
            .fill32(DevicePtr(address), n, value)
            .map_err(emu_err)
    }

    fn read(&self, address: u64, out: &mut [u8]) -> Result<()> {
        self.mem()?.read(DevicePtr(address), out).map_err(emu_err)
    }

    fn read_into_zeroed(&self, address: u64, out: &mut [u8]) -> Result<()> {
        self.mem()?
            .read_into_zeroed(DevicePtr(address), out)
            .map_err(emu_err)
    }

    /// Nothing to do at load: like CUDA's lazy loading (`CUDA_MODULE_LOADING=LAZY`, the
    /// driver's default since CUDA 12.2) the emulator translates a module when one of its kernels
    /// first launches, so a load costs no more than its validation.
    fn load_module(&self, _module: &KernelModule) -> Result<()> {
        Ok(())
    }

    fn launch(
        &self,
        module: &KernelModule,
        kernel: &str,
        shape: LaunchShape,
        args: &[KernelArg],
    ) -> Result<()> {
        let LaunchShape {
            grid,
            block,
            shmem_bytes,
        } = shape;
        let loaded = self.translated(module)?;
        // Every thread runs at least one instruction, so a launch with more threads than the
        // budget cannot finish here (2^31-1 blocks pass the device's grid limits): a limit of
        // this device, named with the flag that raises it, not an artifact defect.
        let threads = grid
            .iter()
            .chain(&block)
            .map(|&d| d as u64)
            .fold(1u64, u64::saturating_mul);
        if threads > self.options.instruction_budget {
            return Err(Error::resource_exhausted(format!(
                "kernel {kernel}: the launch of grid {grid:?} x block {block:?} is {threads} threads, more than the emulator's budget of {} lane-instructions can run (RuntimeFlags::emulator_instruction_budget)",
                self.options.instruction_budget
            )));
        }
        let params: Vec<ParamValue> = args.iter().map(|a| ParamValue::u64(a.address)).collect();
        // Memcheck bounds each argument's accesses by its slice, not by the allocation the
        // slice is carved from (buffer assignment packs many into one).
        let slices: Vec<ArgSlice> = args
            .iter()
            .enumerate()
            .map(|(param, a)| ArgSlice {
                param,
                address: DevicePtr(a.address),
                size: a.size,
                written: a.written,
            })
            .collect();
        let mut mem = self.mem()?;
        let stats = emu::launch_sliced(
            &loaded,
            kernel,
            (grid, block, shmem_bytes),
            &params,
            &slices,
            &mut mem,
            &self.options,
        )
        .map_err(launch_err)?;
        self.totals
            .last_launch_lanes
            .store(stats.lane_instructions, Ordering::Relaxed);
        self.totals.add(
            1,
            stats.lane_instructions,
            stats.global_bytes_read,
            stats.global_bytes_written,
        );
        Ok(())
    }

    fn last_launch_lane_instructions(&self) -> Option<u64> {
        Some(self.totals.last_launch_lanes.load(Ordering::Relaxed))
    }

    fn gemm(&self, config: &crate::thunks::GemmConfig, buffers: GemmBuffers) -> Result<()> {
        // Bounded as a launch is: a stride-0 operand makes unbounded work from tiny buffers.
        let deadline = self
            .options
            .wall_time_limit
            .and_then(crate::gemm::Deadline::after);
        let GemmBuffers { lhs, rhs, out } = buffers;
        let done = self.in_place(&[lhs, rhs], out, |ins, c| {
            crate::gemm::gemm_until(config, ins[0], ins[1], c, deadline)
        })?;
        match done {
            Some(r) => r?,
            // The output overlaps an operand: on host copies.
            None => super::host_gemm(self, config, buffers, deadline)?,
        }
        let old = if config.beta != 0.0 { out.1 } else { 0 };
        self.totals.add(0, 0, lhs.1 + rhs.1 + old, out.1);
        Ok(())
    }

    fn convolution(
        &self,
        thunk: &crate::thunks::ConvThunk,
        buffers: crate::conv::ConvBuffers,
    ) -> Result<()> {
        // Bounded as a gemm is: the work grows with window x output, not with the buffers.
        let deadline = self
            .options
            .wall_time_limit
            .and_then(crate::gemm::Deadline::after);
        let [a, b] = buffers.operands;
        let done = self.in_place(&[a, b], buffers.result, |ins, y| {
            crate::conv::execute_into(thunk, ins[0], ins[1], y, deadline)
        })?;
        match done {
            Some(r) => r?,
            None => crate::conv::host_convolution(self, thunk, buffers, deadline)?,
        }
        self.totals.add(0, 0, a.1 + b.1, buffers.result.1);
        Ok(())
    }

    fn copy(&self, destination: u64, source: u64, size: u64) -> Result<()> {
        let mut mem = self.mem()?;
        let n = host_len(size, "copy")?;
        let data = mem.read_vec(DevicePtr(source), n).map_err(emu_err)?;
        mem.write(DevicePtr(destination), &data).map_err(emu_err)?;
        self.totals.add(0, 0, size, size);
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}
