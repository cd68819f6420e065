//! Executing a loaded [`Executable`]: allocate every buffer, copy the parameters in and the
//! constants from `binary`, run the thunk sequence, copy the outputs out (per
//! `output_info_map`), free everything. Replicated execution runs one thread per device (every
//! partition of every replica: device `d` is replica `d / num_partitions`, partition
//! `d % num_partitions`), each on its own device, sharing a [`Clique`] for collectives.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::behaviour::{self, Behaviour, Behaviours};
use crate::buffer::Argument;
use crate::collectives::{self, Clique};
use crate::device::{Device, DeviceOp, GemmBuffers, LaunchShape};
use crate::error::{invalid, Cause, Error, Result};
use crate::groups::{Grid, GroupMode};
use crate::registry::CallFrame;
use crate::thunks::{
    CollectiveOp, CommandBufferThunk, ElemTypeExt, KernelModule, ShapedSlice, Slice, Thunk,
    ThunkKind,
};
use crate::Executable;

/// Counters of one execution.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecutionStats {
    /// Thunks executed (command-buffer commands included, control flow counted once per run).
    pub thunks: u64,
    /// PTX kernel launches, those a command buffer replays included (gemms are not launches).
    pub kernel_launches: u64,
    /// Command buffers recorded during this execution.
    pub command_buffer_recordings: u64,
    /// Command buffers replayed during this execution.
    pub command_buffer_replays: u64,
    /// Cross-stream event waits honoured.
    pub event_waits: u64,
    /// Body runs of every while loop, summed (a loop whose condition is false at once adds 0).
    pub while_iterations: u64,
    /// Collective thunks run (each counts once, whatever its buffer count).
    pub collectives: u64,
    /// Device-resident arguments read in place, bound to their parameter's allocation rather
    /// than copied into a fresh one ([`Executable::read_only_parameters`]).
    pub arguments_in_place: u64,
    /// Every kernel launch: name, bytes of its arguments, wall time of the (synchronous) launch.
    pub kernel_timings: Vec<KernelTiming>,
    /// The behaviour classes this execution reached (see [`crate::Behaviour`]).
    pub behaviours: Behaviours,
}

/// One kernel launch as measured on the host (devices launch synchronously).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelTiming {
    /// The `.entry` name.
    pub kernel: String,
    /// Launch grid (CTAs per dimension).
    pub grid: [u32; 3],
    /// Launch block (threads per dimension).
    pub block: [u32; 3],
    /// Instructions the launch executed, once per active lane, as the device counted them
    /// ([`crate::Device::last_launch_lane_instructions`]); `None` on a device that does not
    /// count (CUDA).
    pub lane_instructions: Option<u64>,
    /// Sum of the argument slices' sizes (the bytes the kernel can touch).
    pub bytes: u64,
    /// Wall time of the launch, in nanoseconds.
    pub nanos: u64,
}

/// What one execution returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionResult {
    /// The bytes of each output leaf, in `output_info_map` order.
    pub outputs: Vec<Vec<u8>>,
    /// Counters.
    pub stats: ExecutionStats,
}

/// A command recorded into a command buffer: device operations with allocation-relative
/// addresses, replayed by adding the allocation bases of the current execution.
#[derive(Debug, Clone)]
enum Command {
    Launch {
        module: Arc<KernelModule>,
        kernel: String,
        shape: LaunchShape,
        args: Vec<Slice>,
        /// Per argument: the kernel may write it ([`crate::device::KernelArg::written`]).
        written: Vec<bool>,
    },
    Copy {
        dst: Slice,
        src: Slice,
        size: u64,
    },
    Fill {
        dst: Slice,
        value: u32,
    },
    Fill8 {
        dst: Slice,
        value: u8,
    },
    Zero {
        dst: Slice,
    },
    Gemm(Box<crate::thunks::GemmThunk>),
}

/// What the executor keeps across executions of one loaded executable: the recorded command
/// lists, keyed by the command buffer's address in the executable, and how many executions began.
#[derive(Debug, Default)]
pub(crate) struct Recordings {
    lists: Mutex<HashMap<usize, Arc<Vec<Command>>>>,
    executions: std::sync::atomic::AtomicU64,
}

struct Run<'a> {
    exe: &'a Executable,
    device: &'a dyn Device,
    bases: Vec<u64>,
    /// The logical device id: `replica * num_partitions + partition`.
    device_id: i64,
    clique: Option<&'a Clique>,
    collective_seq: u64,
    stats: ExecutionStats,
    waits: HashMap<i64, usize>,
    /// When `RuntimeFlags::max_execution_secs` runs out (`None`: past the clock's range).
    deadline: Option<Instant>,
    /// While bodies being executed around the current thunk (0: not inside a loop).
    loop_depth: u32,
}

impl Executable {
    /// Runs on one device as replica 0. `args` are the parameter leaves in
    /// [`Executable::parameters`] order, each exactly its size in bytes.
    pub fn execute(&self, device: &dyn Device, args: &[&[u8]]) -> Result<ExecutionResult> {
        self.execute_reading(device, args, &[])
    }

    /// [`Executable::execute`], reading back only the outputs whose entry of `read` is true
    /// (an output past its end is read); the others come back empty. What is read back is
    /// read into fresh zeroed host memory with [`Device::read_into_zeroed`], so the bytes no
    /// thunk wrote commit no host memory on the emulated device. A caller that compares with
    /// expected values skips what cannot match (a 1 GiB output that an io file lists with
    /// another shape was read back whole, 2.1 GB of host memory from a 1.9 KB artifact).
    pub fn execute_reading(
        &self,
        device: &dyn Device,
        args: &[&[u8]],
        read: &[bool],
    ) -> Result<ExecutionResult> {
        if self.num_replicas > 1 {
            return Err(invalid(format!(
                "the executable has replica_count {}; use execute_replicated",
                self.num_replicas
            )));
        }
        if self.num_partitions > 1 {
            return Err(invalid(format!(
                "the executable has num_partitions {}; use execute_replicated",
                self.num_partitions
            )));
        }
        let args: Vec<Argument<'_>> = args.iter().map(|a| Argument::Host(a)).collect();
        let reexecuted = self.begin_execution();
        self.run_replica(device, &args, 0, None, (reexecuted, read))
    }

    /// [`Executable::execute_reading`] with each argument either host bytes or a
    /// [`DeviceBuffer`](crate::DeviceBuffer) already on `device`: a device buffer is copied
    /// device to device into its parameter's allocation (the executable may write its
    /// parameters; the caller's buffer stays as it was), so inputs uploaded once serve every
    /// execution without a host copy. With `read` all false, nothing comes back to the host
    /// either: the execution is the device's work alone, as a framework's call on device arrays
    /// is.
    pub fn execute_with(
        &self,
        device: &dyn Device,
        args: &[Argument<'_>],
        read: &[bool],
    ) -> Result<ExecutionResult> {
        if self.num_devices() > 1 {
            return Err(invalid(format!(
                "the executable runs on {} devices; device-resident arguments serve one",
                self.num_devices()
            )));
        }
        if let Some(i) = args.iter().position(|a| match a {
            Argument::Device(b) => !std::ptr::addr_eq(b.device, device),
            Argument::Host(_) => false,
        }) {
            return Err(invalid(format!(
                "argument {i} is a buffer of another device"
            )));
        }
        let reexecuted = self.begin_execution();
        self.run_replica(device, args, 0, None, (reexecuted, read))
    }

    /// Counts an execution; true when an earlier one of this loaded executable began.
    fn begin_execution(&self) -> bool {
        self.recordings
            .executions
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            > 0
    }

    /// The replicas and partitions it runs on.
    pub fn grid(&self) -> Grid {
        Grid {
            replicas: self.num_replicas,
            partitions: self.num_partitions,
        }
    }

    /// Runs every replica and partition, one device each (thread per device); `devices[d]` and
    /// `args[d]` are logical device `d`'s: replica `d / num_partitions`, partition
    /// `d % num_partitions`.
    pub fn execute_replicated(
        &self,
        devices: &[Arc<dyn Device>],
        args: &[Vec<Vec<u8>>],
    ) -> Result<Vec<ExecutionResult>> {
        self.execute_replicated_reading(devices, args, &[])
    }

    /// [`Executable::execute_replicated`], reading back only the outputs `read` selects, as
    /// [`Executable::execute_reading`] does.
    pub fn execute_replicated_reading(
        &self,
        devices: &[Arc<dyn Device>],
        args: &[Vec<Vec<u8>>],
        read: &[bool],
    ) -> Result<Vec<ExecutionResult>> {
        let n = devices.len();
        if n as u64 != self.num_devices() {
            return Err(invalid(if self.num_partitions > 1 {
                format!(
                    "{n} devices given, the executable runs on {} (replica_count {} x num_partitions {})",
                    self.num_devices(),
                    self.num_replicas,
                    self.num_partitions
                )
            } else {
                format!(
                    "{n} devices given, the executable's replica_count is {}",
                    self.num_replicas
                )
            }));
        }
        if args.len() != n {
            return Err(invalid(format!(
                "{} argument sets given for {n} {}",
                args.len(),
                if self.num_partitions > 1 {
                    "devices"
                } else {
                    "replicas"
                }
            )));
        }
        for d in devices {
            for m in &self.kernels {
                d.load_module(m)?;
            }
        }
        let clique = Clique::new(Duration::from_secs(self.flags.collective_timeout_secs));
        let reexecuted = self.begin_execution();
        let results: Vec<Result<ExecutionResult>> = std::thread::scope(|s| {
            let handles: Vec<_> = devices
                .iter()
                .zip(args)
                .enumerate()
                .map(|(r, (d, a))| {
                    let clique = &clique;
                    s.spawn(move || {
                        let refs: Vec<Argument<'_>> = a.iter().map(|a| Argument::Host(a)).collect();
                        let res = self.run_replica(
                            d.as_ref(),
                            &refs,
                            r as i64,
                            Some(clique),
                            (reexecuted, read),
                        );
                        match &res {
                            Err(e) => clique.abort(&format!("{}: {e}", self.device_name(r as i64))),
                            Ok(_) => clique.finish(r as i64),
                        }
                        res
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::internal("replica thread panicked")))
                })
                .collect()
        });
        // Report the root cause rather than a replica that gave up because another failed.
        if let Some(e) = results
            .iter()
            .filter_map(|r| r.as_ref().err())
            .find(|e| e.cause() != Some(&Cause::PeerFailed))
        {
            return Err(e.clone());
        }
        results.into_iter().collect()
    }

    /// How messages name device `d`: `replica R` with one partition (as before partitions),
    /// else `device D (replica R, partition P)`.
    fn device_name(&self, d: i64) -> String {
        if self.num_partitions > 1 {
            let (r, p) = self.grid().split(d);
            format!("device {d} (replica {r}, partition {p})")
        } else {
            format!("replica {d}")
        }
    }

    fn run_replica(
        &self,
        device: &dyn Device,
        args: &[Argument<'_>],
        device_id: i64,
        clique: Option<&Clique>,
        (reexecuted, read): (bool, &[bool]),
    ) -> Result<ExecutionResult> {
        if args.len() != self.parameters.len() {
            return Err(invalid(format!(
                "{} arguments given, the executable takes {} parameter leaves",
                args.len(),
                self.parameters.len()
            )));
        }
        for (i, ((number, leaf), a)) in self.parameters.iter().zip(args).enumerate() {
            if a.len() != leaf.size {
                return Err(invalid(format!(
                    "argument {i} (parameter {number} {:?}, {}{:?}) is {} bytes, expected {}",
                    leaf.shape_index,
                    leaf.element_type,
                    leaf.dims,
                    a.len(),
                    leaf.size
                )));
            }
        }
        let borrowed = self.borrowed_arguments(args);
        let mut bases = Vec::with_capacity(self.allocations.len());
        let mut result = (|| -> Result<ExecutionResult> {
            for (a, borrowed) in self.allocations.iter().zip(&borrowed) {
                bases.push(match borrowed {
                    Some(address) => *address,
                    None => device.allocate(a.size)?,
                });
            }
            for ((_, leaf), a) in self.parameters.iter().zip(args) {
                let Some(i) = leaf.allocation else { continue };
                if let (Some(&base), Some(None)) = (bases.get(i), borrowed.get(i)) {
                    match a {
                        Argument::Host(bytes) => device.write(base, bytes)?,
                        Argument::Device(b) => device.copy(base, b.address, b.size)?,
                    }
                }
            }
            for c in &self.constants {
                let lo = c.offset_in_binary as usize;
                let bytes = self
                    .binary
                    .get(lo..lo + c.size as usize)
                    .ok_or_else(|| Error::internal("constant outside binary"))?;
                let base = *bases
                    .get(c.allocation)
                    .ok_or_else(|| Error::internal("constant allocation"))?;
                device.write(base, bytes)?;
            }
            let mut waits = HashMap::new();
            for w in &self.events {
                *waits.entry(w.waiter).or_insert(0) += 1;
            }
            let mut run = Run {
                exe: self,
                device,
                bases: bases.clone(),
                device_id,
                clique,
                collective_seq: 0,
                stats: ExecutionStats::default(),
                waits,
                deadline: Instant::now()
                    .checked_add(Duration::from_secs(self.flags.max_execution_secs)),
                loop_depth: 0,
            };
            run.stats.arguments_in_place = borrowed.iter().flatten().count() as u64;
            if reexecuted {
                run.behaviour(Behaviour::ExecutableReexecuted);
            }
            run.sequence(&self.thunks)?;
            device.synchronize()?;
            // The result tuples' index tables, as XLA lays them out: each element's device
            // address, 8 bytes little-endian, in element order.
            for t in &self.output_tuples {
                let mut table = Vec::with_capacity(8 * t.elements.len());
                for e in &t.elements {
                    let a = bases
                        .get(*e)
                        .ok_or_else(|| Error::internal("tuple element allocation"))?;
                    table.extend_from_slice(&a.to_le_bytes());
                }
                let base = *bases
                    .get(t.allocation)
                    .ok_or_else(|| Error::internal("tuple table allocation"))?;
                device.write(base, &table)?;
            }
            let mut outputs = Vec::with_capacity(self.outputs.len());
            for (i, o) in self.outputs.iter().enumerate() {
                if !read.get(i).copied().unwrap_or(true) {
                    outputs.push(Vec::new());
                    continue;
                }
                let base = *o
                    .allocation
                    .and_then(|a| bases.get(a))
                    .ok_or_else(|| Error::internal("output allocation"))?;
                let mut buf = vec![0u8; o.size as usize];
                device.read_into_zeroed(base, &mut buf)?;
                outputs.push(buf);
            }
            Ok(ExecutionResult {
                outputs,
                stats: run.stats,
            })
        })();
        for (b, borrowed) in bases.into_iter().zip(&borrowed) {
            if borrowed.is_some() {
                continue;
            }
            if let Err(e) = device.free(b) {
                if result.is_ok() {
                    result = Err(e);
                }
            }
        }
        result
    }
}

impl Executable {
    /// Per allocation: the address of the device-resident argument it is bound to, for a
    /// parameter allocation nothing writes ([`Executable::read_only_parameters`]); `None` where
    /// the run allocates it. The caller's buffer is then read in place, never written.
    fn borrowed_arguments(&self, args: &[Argument<'_>]) -> Vec<Option<u64>> {
        let mut borrowed = vec![None; self.allocations.len()];
        for ((_, leaf), a) in self.parameters.iter().zip(args) {
            let (Some(i), Argument::Device(b)) = (leaf.allocation, a) else {
                continue;
            };
            let size = self.allocations.get(i).map(|a| a.size);
            if self.read_only_parameters.get(i) == Some(&true) && size == Some(b.size) {
                if let Some(slot) = borrowed.get_mut(i) {
                    *slot = Some(b.address);
                }
            }
        }
        borrowed
    }
}

impl Run<'_> {
    fn addr(&self, s: &Slice) -> Result<u64> {
        self.bases
            .get(s.allocation)
            .map(|b| b + s.offset)
            .ok_or_else(|| Error::internal(format!("allocation {} has no buffer", s.allocation)))
    }

    fn read(&self, s: &Slice) -> Result<Vec<u8>> {
        let mut v = vec![0u8; s.size as usize];
        self.device.read(self.addr(s)?, &mut v)?;
        Ok(v)
    }

    fn behaviour(&mut self, b: Behaviour) {
        self.stats.behaviours.insert(b);
    }

    fn sequence(&mut self, thunks: &[Thunk]) -> Result<()> {
        for t in thunks {
            self.thunk(t)?;
        }
        Ok(())
    }

    /// Fails once the execution has run past `RuntimeFlags::max_execution_secs`. Checked at every
    /// while iteration: loops are the only thunks that repeat, so everything else is bounded by
    /// the artifact's size times one launch, and one emulated launch is bounded by the emulator's
    /// own wall-time limit (the same flag, applied per launch by `EmulatedDevice::with_flags`).
    fn check_deadline(&self, what: &dyn Fn() -> String) -> Result<()> {
        match self.deadline {
            Some(d) if Instant::now() > d => Err(Error::resource_exhausted(format!(
                "{}: the execution ran longer than the wall-time limit of {} s (RuntimeFlags::max_execution_secs, aot run --max-execution-secs)",
                what(),
                self.exe.flags.max_execution_secs
            ))),
            _ => Ok(()),
        }
    }

    fn thunk(&mut self, t: &Thunk) -> Result<()> {
        self.stats.thunks += 1;
        if let Some(&n) = self.waits.get(&t.info.thunk_id) {
            // Synchronous devices: every earlier operation is complete, so the event has fired.
            self.stats.event_waits += n as u64;
        }
        let what = || {
            format!(
                "{} {} ({})",
                t.kind.name(),
                t.info.thunk_id,
                t.info.profile_annotation
            )
        };
        match &t.kind {
            ThunkKind::Sequential(v) => self.sequence(v),
            ThunkKind::CommandBuffer(cb) => self.command_buffer(cb),
            ThunkKind::Conditional(c) => {
                let sel = self.read(&c.selector.slice)?;
                let n = c.branches.len();
                if self.loop_depth > 0 {
                    self.behaviour(Behaviour::ConditionalInLoop);
                }
                let idx = if c.selector_is_bool {
                    // HLO: `true_computation` is branch 0, `false_computation` branch 1.
                    if sel.first().copied().unwrap_or(0) != 0 {
                        self.behaviour(Behaviour::ConditionalPredTrue);
                        0
                    } else {
                        self.behaviour(Behaviour::ConditionalPredFalse);
                        1
                    }
                } else {
                    let mut w = [0u8; 4];
                    if let Some(b) = sel.get(..4) {
                        w.copy_from_slice(b);
                    }
                    let i = i32::from_le_bytes(w);
                    self.behaviour(behaviour::index_class(i, n));
                    // HLO: an index outside [0, N) (negative included) runs branch N-1.
                    usize::try_from(i)
                        .ok()
                        .filter(|&i| i < n)
                        .unwrap_or(n.saturating_sub(1))
                };
                match c.branches.get(idx) {
                    Some(b) => self.sequence(b),
                    None => Ok(()),
                }
            }
            ThunkKind::While(w) => {
                let mut iterations: u64 = 0;
                loop {
                    self.check_deadline(&what)?;
                    self.sequence(&w.condition)?;
                    let mut pred = [0u8; 1];
                    self.device
                        .read(self.addr(&w.condition_result)?, &mut pred)?;
                    if pred[0] == 0 {
                        break;
                    }
                    if iterations >= self.exe.flags.max_while_iterations {
                        return Err(Error::resource_exhausted(format!(
                            "{}: the loop ran {iterations} iterations without its condition becoming false, the limit is {} (RuntimeFlags::max_while_iterations, aot run --max-while-iterations)",
                            what(),
                            self.exe.flags.max_while_iterations
                        )));
                    }
                    self.loop_depth += 1;
                    let body = self.sequence(&w.body);
                    self.loop_depth -= 1;
                    body?;
                    iterations += 1;
                    self.stats.while_iterations += 1;
                }
                Ok(())
            }
            ThunkKind::ReplicaId(s) => {
                let (replica, _) = self.exe.grid().split(self.device_id);
                self.device
                    .write(self.addr(s)?, &(replica as u32).to_le_bytes())
            }
            ThunkKind::PartitionId(s) => {
                let (_, partition) = self.exe.grid().split(self.device_id);
                self.device
                    .write(self.addr(s)?, &(partition as u32).to_le_bytes())
            }
            ThunkKind::CustomCall(c) => {
                // By the registration's current name: an alias reaches the same handler.
                self.behaviour(Behaviour::CustomCall {
                    target: c.handler.name.to_owned(),
                    api_version: c.api_version,
                });
                let read_all = |v: &[Option<ShapedSlice>]| -> Result<Vec<Option<Vec<u8>>>> {
                    v.iter()
                        .map(|s| s.as_ref().map(|s| self.read(&s.slice)).transpose())
                        .collect()
                };
                let operands = read_all(&c.operands)?;
                let mut results = read_all(&c.results)?;
                let mut frame = CallFrame {
                    operands: &operands,
                    results: &mut results,
                    opaque: &c.opaque,
                    attributes: &c.attributes,
                    operand_shapes: &c.operand_shapes,
                    result_shapes: &c.result_shapes,
                };
                (c.handler.handler)(&mut frame).map_err(|m| {
                    Error::internal(format!("custom call {} failed: {m}", c.target_name))
                })?;
                for (s, r) in c.results.iter().zip(&results) {
                    if let (Some(s), Some(r)) = (s, r) {
                        if r.len() as u64 != s.slice.size {
                            return Err(Error::internal(format!(
                                "custom call {} changed a result's size",
                                c.target_name
                            )));
                        }
                        self.device.write(self.addr(&s.slice)?, r)?;
                    }
                }
                Ok(())
            }
            ThunkKind::Convolution(c) => {
                let at = |s: &Slice| -> Result<(u64, u64)> { Ok((self.addr(s)?, s.size)) };
                let buffers = crate::conv::ConvBuffers {
                    operands: [at(&c.operands[0])?, at(&c.operands[1])?],
                    result: at(&c.result)?,
                };
                self.device.convolution(c, buffers)
            }
            ThunkKind::Fft(f) => {
                let input = (self.addr(&f.input)?, f.input.size);
                let output = (self.addr(&f.output)?, f.output.size);
                self.device.fft(f, input, output)
            }
            ThunkKind::Collective(c) => self.collective(c),
            ThunkKind::CustomKernel(_) => Err(Error::unimplemented(format!(
                "{}: custom kernels are not executed by this runtime",
                what()
            ))),
            _ => {
                let cmd = self.record(t)?;
                self.issue(&cmd)
            }
        }
    }

    /// Records a command-eligible thunk.
    fn record(&self, t: &Thunk) -> Result<Command> {
        Ok(match &t.kind {
            ThunkKind::Kernel(k) => Command::Launch {
                module: k.module.clone(),
                kernel: k.kernel_name.clone(),
                shape: LaunchShape {
                    grid: k.grid,
                    block: k.block,
                    shmem_bytes: k.shmem_bytes,
                },
                args: k.args.clone(),
                // Arguments past the flags count as written (`thunks::written_allocations`).
                written: (0..k.args.len())
                    .map(|i| k.written.get(i).copied().unwrap_or(true))
                    .collect(),
            },
            ThunkKind::Copy {
                source,
                destination,
                size,
            } => Command::Copy {
                dst: *destination,
                src: *source,
                size: *size,
            },
            ThunkKind::Memset32 { destination, value } => Command::Fill {
                dst: *destination,
                value: *value,
            },
            ThunkKind::Memset8 { destination, value } => Command::Fill8 {
                dst: *destination,
                value: *value,
            },
            ThunkKind::Memzero(s) => Command::Zero { dst: s.slice },
            ThunkKind::Gemm(g) => Command::Gemm(g.clone()),
            other => {
                return Err(Error::internal(format!(
                    "{} cannot be recorded into a command buffer",
                    other.name()
                )))
            }
        })
    }

    fn issue(&mut self, c: &Command) -> Result<()> {
        let op = self.op(c)?;
        self.issue_op(c, &op)
    }

    /// Issues `op` (built from `c` by [`Self::op`]), timing kernel launches.
    fn issue_op(&mut self, c: &Command, op: &DeviceOp<'_>) -> Result<()> {
        let Command::Launch {
            kernel,
            args,
            shape,
            ..
        } = c
        else {
            return crate::device::issue(self.device, op);
        };
        self.stats.kernel_launches += 1;
        let start = std::time::Instant::now();
        crate::device::issue(self.device, op)?;
        self.stats.kernel_timings.push(KernelTiming {
            kernel: kernel.clone(),
            grid: shape.grid,
            block: shape.block,
            lane_instructions: self.device.last_launch_lane_instructions(),
            bytes: args.iter().map(|s| s.size).sum(),
            nanos: u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX),
        });
        Ok(())
    }

    fn command_buffer(&mut self, cb: &CommandBufferThunk) -> Result<()> {
        let key = cb as *const CommandBufferThunk as usize;
        let existing = self
            .exe
            .recordings
            .lists
            .lock()
            .map_err(|_| Error::internal("recordings lock poisoned"))?
            .get(&key)
            .cloned();
        if self.loop_depth > 0 {
            self.behaviour(Behaviour::CommandBufferInLoop);
        }
        let list = match existing {
            Some(l) => {
                self.stats.command_buffer_replays += 1;
                self.behaviour(Behaviour::CommandBufferReplayed);
                if let Ok(mut r) = cb.replays.lock() {
                    *r += 1;
                }
                l
            }
            None => {
                let l = Arc::new(
                    cb.commands
                        .iter()
                        .map(|t| self.record(t))
                        .collect::<Result<Vec<_>>>()?,
                );
                self.exe
                    .recordings
                    .lists
                    .lock()
                    .map_err(|_| Error::internal("recordings lock poisoned"))?
                    .insert(key, l.clone());
                self.stats.command_buffer_recordings += 1;
                if let Ok(mut r) = cb.recordings.lock() {
                    *r += 1;
                }
                l
            }
        };
        for t in &cb.commands {
            self.stats.thunks += 1;
            if let Some(&n) = self.waits.get(&t.info.thunk_id) {
                self.stats.event_waits += n as u64;
            }
        }
        // The device may run the whole list as one unit (a CUDA graph); else issue each command.
        let ops = list
            .iter()
            .map(|c| self.op(c))
            .collect::<Result<Vec<_>>>()?;
        if self.device.run_command_buffer(key as u64, &ops)? {
            self.stats.kernel_launches += ops
                .iter()
                .filter(|o| matches!(o, DeviceOp::Launch { .. }))
                .count() as u64;
            return Ok(());
        }
        for (c, op) in list.iter().zip(&ops) {
            self.issue_op(c, op)?;
        }
        Ok(())
    }

    /// A recorded command with this execution's addresses.
    fn op<'c>(&self, c: &'c Command) -> Result<DeviceOp<'c>> {
        Ok(match c {
            Command::Launch {
                module,
                kernel,
                shape,
                args,
                written,
            } => DeviceOp::Launch {
                module,
                kernel,
                shape: *shape,
                args: args
                    .iter()
                    .enumerate()
                    .map(|(i, s)| {
                        Ok(crate::device::KernelArg {
                            address: self.addr(s)?,
                            size: s.size,
                            written: written.get(i).copied().unwrap_or(true),
                        })
                    })
                    .collect::<Result<Vec<_>>>()?,
            },
            Command::Copy { dst, src, size } => DeviceOp::Copy {
                dst: self.addr(dst)?,
                src: self.addr(src)?,
                size: *size,
            },
            Command::Fill { dst, value } => DeviceOp::Memset32 {
                dst: self.addr(dst)?,
                size: dst.size,
                value: *value,
            },
            // A byte fill of whole words is the same bytes as a word fill of the repeated byte
            // (cuMemsetD32 is the faster path on CUDA).
            Command::Fill8 { dst, value } if dst.size % 4 == 0 => DeviceOp::Memset32 {
                dst: self.addr(dst)?,
                size: dst.size,
                value: u32::from_le_bytes([*value; 4]),
            },
            Command::Fill8 { dst, value } => DeviceOp::Memset8 {
                dst: self.addr(dst)?,
                size: dst.size,
                value: *value,
            },
            Command::Zero { dst } if dst.size % 4 == 0 => DeviceOp::Memset32 {
                dst: self.addr(dst)?,
                size: dst.size,
                value: 0,
            },
            Command::Zero { dst } => DeviceOp::Zero {
                dst: self.addr(dst)?,
                size: dst.size,
            },
            Command::Gemm(g) => DeviceOp::Gemm {
                config: &g.config,
                buffers: GemmBuffers {
                    lhs: (self.addr(&g.lhs)?, g.lhs.size),
                    rhs: (self.addr(&g.rhs)?, g.rhs.size),
                    out: (self.addr(&g.output)?, g.output.size),
                },
            },
        })
    }

    fn collective(&mut self, c: &crate::thunks::CollectiveThunk) -> Result<()> {
        self.stats.collectives += 1;
        if self.loop_depth > 0 {
            self.behaviour(Behaviour::CollectiveInLoop);
        }
        let grid = self.exe.grid();
        // Validated at load; an unknown value cannot reach here.
        let mode = GroupMode::from_proto(c.config.group_mode).unwrap_or(GroupMode::CrossReplica);
        // A permute exchanges within its whole domain (the replicas of this partition, or the
        // partitions of this replica): its pairs, not groups, say who reads whom.
        let groups: &[Vec<i64>] = match c.op {
            CollectiveOp::CollectivePermute { .. } => &[],
            _ => &c.config.replica_groups,
        };
        let group = mode
            .participants(groups, grid, self.device_id)
            .ok_or_else(|| {
                Error::internal(format!(
                    "{} is in no replica group",
                    self.exe.device_name(self.device_id)
                ))
            })?;
        let rank = group.iter().position(|&r| r == self.device_id).unwrap_or(0);
        // The contributions are taken in the group's order: only the collectives whose result
        // places them by rank read that order.
        if matches!(
            c.op,
            CollectiveOp::AllGather | CollectiveOp::ReduceScatter(_)
        ) {
            self.behaviour(behaviour::group_class(&group));
        }
        for (b, t) in c.buffers.iter().zip(&c.config.element_types) {
            let count = b.element_count as usize;
            let esz = t.size() as usize;
            let mut src = self.read(&b.source)?;
            src.truncate(count * esz);
            // One rendezvous per buffer: every device issues them in the same order.
            let seq = self.collective_seq;
            self.collective_seq += 1;
            let parts = match self.clique {
                Some(cl) if group.len() > 1 => {
                    let bound = collectives::WaitBound {
                        deadline: self.deadline,
                        max_execution_secs: self.exe.flags.max_execution_secs,
                    };
                    cl.exchange(seq, &group, self.device_id, src, bound)?
                }
                _ => vec![src],
            };
            let out = match &c.op {
                CollectiveOp::AllReduce(k) => collectives::reduce(*k, *t, count, &parts)?,
                CollectiveOp::AllGather => parts.concat(),
                CollectiveOp::ReduceScatter(k) => {
                    let full = collectives::reduce(*k, *t, count, &parts)?;
                    let chunk = count / group.len().max(1) * esz;
                    full.get(rank * chunk..(rank + 1) * chunk)
                        .ok_or_else(|| Error::internal("reduce-scatter chunk"))?
                        .to_vec()
                }
                CollectiveOp::CollectivePermute {
                    source_target_pairs,
                } => {
                    let me = mode.own_id(grid, self.device_id);
                    collectives::permuted(source_target_pairs, me, parts, count * esz)?
                }
                other => {
                    return Err(Error::unimplemented(format!(
                        "{} is not executed by this runtime",
                        other.proto_name()
                    )))
                }
            };
            self.device.write(self.addr(&b.destination)?, &out)?;
        }
        Ok(())
    }
}
