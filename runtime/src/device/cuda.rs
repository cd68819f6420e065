//! A CUDA GPU through cudarc's driver API, loaded dynamically: the crate builds without CUDA, and
//! [`CudaDevice::new`] checks that the driver library exists before its first driver call, so a
//! machine without a driver gets `UNAVAILABLE`, never a panic.
//!
//! A module's embedded cubin (`CompileOptions::cubin`) is loaded as is; otherwise its PTX is
//! JIT-compiled by the driver (both through `cuModuleLoadData`). Gemm runs through cuBLAS
//! (`cublasGemmStridedBatchedEx`, loaded dynamically too) for f16 / bf16 / f32 / f64 operands
//! accumulated in f32 / f64, as docs/artifact.md says but in cuBLAS's summation order, so results
//! agree with the emulator within the io files' tolerances rather than bit for bit; integer
//! gemms, shapes past `i32`, or a machine without libcublas run the native implementation on
//! host copies. Single operations run synchronously on the context's null stream; a command buffer
//! is captured into a CUDA graph on a non-blocking stream and launched from there.
//!
//! Contexts, modules, functions, streams, graphs and the cuBLAS handle are cudarc's RAII types
//! (`cudarc::driver::safe`, `cudarc::cublas::CudaBlas`): each frees itself, in dependency order,
//! when the device drops. Device memory stays raw addresses: the [`Device`] trait speaks device
//! addresses (the executor allocates, slices and frees them), so allocations and copies use
//! cudarc's `result` layer on those addresses.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::cublas::CudaBlas;
use cudarc::driver::{
    result, sys, CudaContext, CudaFunction, CudaGraph, CudaModule, CudaStream, DriverError,
    LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;

use super::cufft::{self, Plans};
use super::pool::{Returned, SizePool};
use super::{
    cublas, host_len, Device, DeviceDescription, DeviceKind, DeviceOp, GemmBuffers, KernelArg,
    LaunchShape,
};
use crate::error::{Error, Result};
use crate::thunks::{FftThunk, GemmConfig, KernelModule};

/// A CUDA device (one ordinal, its primary context).
pub struct CudaDevice {
    description: DeviceDescription,
    context: Arc<CudaContext>,
    /// The context's null stream: single operations run there, synchronously.
    null_stream: Arc<CudaStream>,
    /// Loaded modules by module id, and the functions looked up in them.
    modules: Mutex<Modules>,
    /// cuBLAS, created at the first gemm.
    cublas: Mutex<Blas>,
    /// Command buffers as CUDA graphs.
    graphs: Mutex<Graphs>,
    /// Device memory freed by executions, kept for the next ones (see [`super::pool`]).
    pool: Mutex<SizePool>,
    /// cuFFT plans, probed at the first FFT thunk.
    fft: Mutex<Fft>,
}

/// The cuFFT state.
enum Fft {
    /// Not asked for yet.
    Unprobed,
    /// libcufft is not on this machine: FFT thunks run on host copies.
    Missing,
    Ready(Plans),
}

#[derive(Default)]
struct Modules {
    loaded: HashMap<u64, Arc<CudaModule>>,
    functions: HashMap<(u64, String), CudaFunction>,
}

/// The cuBLAS handle's state.
enum Blas {
    /// Not asked for yet.
    Unprobed,
    /// libcublas is not on this machine: gemms run natively.
    Missing,
    Ready(CudaBlas),
}

/// What a captured graph bakes in, exactly: kernels (by module id), launch shapes, addresses,
/// sizes, values and gemm configurations.
fn signature(ops: &[DeviceOp<'_>]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for op in ops {
        let _ = match op {
            DeviceOp::Launch {
                module,
                kernel,
                shape:
                    LaunchShape {
                        grid,
                        block,
                        shmem_bytes: shmem,
                    },
                args,
            } => write!(
                s,
                "L{}:{kernel}:{grid:?}{block:?}{shmem}:{args:?};",
                module.id
            ),
            DeviceOp::Copy { dst, src, size } => write!(s, "C{dst}:{src}:{size};"),
            DeviceOp::Memset32 { dst, size, value } => write!(s, "M{dst}:{size}:{value};"),
            DeviceOp::Zero { dst, size } => write!(s, "Z{dst}:{size};"),
            DeviceOp::Memset8 { dst, size, value } => write!(s, "B{dst}:{size}:{value};"),
            DeviceOp::Gemm {
                config,
                buffers: GemmBuffers { lhs, rhs, out },
            } => write!(s, "G{config:?}{lhs:?}{rhs:?}{out:?};"),
        };
    }
    s
}

/// The capture stream (created at the first command buffer) and, per command buffer, its
/// instantiated graph and the operations it was captured from (a graph bakes in addresses and
/// launch parameters: a different list is captured again).
#[derive(Default)]
struct Graphs {
    stream: Option<Arc<CudaStream>>,
    execs: HashMap<u64, (String, Graph)>,
}

/// A captured, instantiated graph.
///
/// cudarc leaves `CudaGraph` neither `Send` nor `Sync`: CUDA graph objects are not internally
/// synchronized. Every use of one here (launch, replacement, drop) happens with the `graphs`
/// mutex of its device held, which is the external serialization the driver asks for.
struct Graph(CudaGraph);

// SAFETY: see `Graph`: all access is serialized by the owning device's `graphs` mutex.
unsafe impl Send for Graph {}

impl std::fmt::Debug for CudaDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaDevice")
            .field("name", &self.description.name)
            .finish()
    }
}

fn drv(what: &str, e: DriverError) -> Error {
    Error::internal(format!("CUDA {what}: {e:?}"))
}

fn poisoned(what: &str) -> Error {
    Error::internal(format!("CUDA {what} lock poisoned"))
}

/// Whether the CUDA driver library can be loaded on this machine.
pub fn driver_present() -> bool {
    // SAFETY: only tries to open the shared library; no driver call is made.
    unsafe { sys::is_culib_present() }
}

impl CudaDevice {
    /// Opens GPU `ordinal`. Limits and ABI versions come from `description` (the target config
    /// the caller serves); the compute capability, name and memory size come from the driver.
    /// No driver → `UNAVAILABLE`.
    pub fn new(ordinal: usize, description: DeviceDescription) -> Result<CudaDevice> {
        if !driver_present() {
            return Err(Error::unavailable(
                "no CUDA driver library (libcuda.so) on this machine",
            ));
        }
        result::init().map_err(|e| Error::unavailable(format!("cuInit failed: {e:?}")))?;
        let count = CudaContext::device_count().map_err(|e| drv("cuDeviceGetCount", e))?;
        if i32::try_from(ordinal).map_or(true, |o| o >= count) {
            return Err(Error::unavailable(format!(
                "CUDA device {ordinal} requested, the machine has {count}"
            )));
        }
        let context = CudaContext::new(ordinal).map_err(|e| drv("cuDevicePrimaryCtxRetain", e))?;
        let (major, minor) = context
            .compute_capability()
            .map_err(|e| drv("cuDeviceGetAttribute", e))?;
        let mem = context
            .total_mem()
            .map_err(|e| drv("cuDeviceTotalMem", e))?;
        let mut description = description;
        description.compute_capability = (major, minor);
        // A real GPU runs code for its own architecture-specific target (`sm_90a` on 9.0, the
        // first capability with one), which includes its family's features.
        description.compute_capability_features = if major >= 9 {
            ptx::Features::Accelerated
        } else {
            ptx::Features::Baseline
        };
        description.device_memory_size = mem as u64;
        if let Ok(name) = context.name() {
            description.name = name;
        }
        Ok(CudaDevice {
            description,
            null_stream: context.default_stream(),
            context,
            modules: Mutex::default(),
            cublas: Mutex::new(Blas::Unprobed),
            graphs: Mutex::default(),
            // A quarter of the device: repeated executions of anything that fits reuse their
            // blocks, and what one large execution freed cannot starve another program.
            pool: Mutex::new(SizePool::new(mem / 4)),
            fft: Mutex::new(Fft::Unprobed),
        })
    }

    /// Multiplies the f32 (or f64) values of `(address, size)` by `factor` in place: cuBLAS
    /// `scal` on the null stream, or on a host copy where libcublas is missing.
    fn scale(&self, (address, size): (u64, u64), double: bool, factor: f64) -> Result<()> {
        let width: u64 = if double { 8 } else { 4 };
        self.with_cublas(|blas| {
            let Some(blas) = blas else {
                return host_scale(self, (address, size), double, factor);
            };
            let (mut at, mut left) = (address, size / width);
            while left > 0 {
                let n = left.min(i32::MAX as u64);
                let single = factor as f32;
                // SAFETY: `[at, at + n * width)` lies in the live output buffer; alpha is a
                // host pointer (the handle's default pointer mode).
                let status = unsafe {
                    if double {
                        cudarc::cublas::sys::cublasDscal_v2(
                            *blas.handle(),
                            n as i32,
                            &factor,
                            at as *mut f64,
                            1,
                        )
                    } else {
                        cudarc::cublas::sys::cublasSscal_v2(
                            *blas.handle(),
                            n as i32,
                            &single,
                            at as *mut f32,
                            1,
                        )
                    }
                };
                status
                    .result()
                    .map_err(|e| Error::internal(format!("cuBLAS scal: {e:?}")))?;
                at += n * width;
                left -= n;
            }
            Ok(())
        })
    }

    /// Frees blocks the pool kept (with the context current).
    fn release(&self, blocks: Vec<u64>) -> Result<()> {
        for b in blocks {
            // SAFETY: each block came from `cuMemAlloc` here and is in the pool, not live.
            unsafe { result::free_sync(b) }.map_err(|e| drv("cuMemFree", e))?;
        }
        Ok(())
    }

    fn current(&self) -> Result<()> {
        self.context
            .bind_to_thread()
            .map_err(|e| drv("cuCtxSetCurrent", e))
    }

    fn function(&self, module: &KernelModule, kernel: &str) -> Result<CudaFunction> {
        let mut modules = self.modules.lock().map_err(|_| poisoned("module"))?;
        let key = (module.id, kernel.to_owned());
        if let Some(f) = modules.functions.get(&key) {
            return Ok(f.clone());
        }
        let loaded = self.loaded(&mut modules, module)?;
        // cudarc's lookup panics on a NUL in the name: refuse it first.
        if kernel.contains('\0') {
            return Err(Error::invalid_argument(format!(
                "kernel name {kernel:?} contains NUL"
            )));
        }
        let f = loaded
            .load_function(kernel)
            .map_err(|e| drv(&format!("cuModuleGetFunction({kernel})"), e))?;
        modules.functions.insert(key, f.clone());
        Ok(f)
    }

    /// The module `module` (loaded now unless it already is).
    fn loaded(&self, modules: &mut Modules, module: &KernelModule) -> Result<Arc<CudaModule>> {
        if let Some(m) = modules.loaded.get(&module.id) {
            return Ok(Arc::clone(m));
        }
        let image = if module.cubin.is_empty() {
            // cudarc turns PTX into a C string and panics on a NUL: refuse it first.
            if module.text.contains('\0') {
                return Err(Error::invalid_argument("kernel PTX contains a NUL byte"));
            }
            (
                Ptx::from_src(module.text.as_str()),
                "cuModuleLoadData (PTX)",
            )
        } else {
            // A cubin (an ELF image for this SM, header checked at load): the driver reads it
            // without JIT.
            (
                Ptx::from_binary(module.cubin.clone()),
                "cuModuleLoadData (cubin)",
            )
        };
        let m = self
            .context
            .load_module(image.0)
            .map_err(|e| drv(image.1, e))?;
        modules.loaded.insert(module.id, Arc::clone(&m));
        Ok(m)
    }

    /// Runs `f` with the cuBLAS handle (created on first use); `None` when libcublas is not on
    /// the machine.
    fn with_cublas<T>(&self, f: impl FnOnce(Option<&mut CudaBlas>) -> Result<T>) -> Result<T> {
        let mut slot = self.cublas.lock().map_err(|_| poisoned("cuBLAS handle"))?;
        if let Blas::Unprobed = *slot {
            // cudarc panics when a dynamically loaded library is missing: ask first.
            *slot = if cublas::present() {
                self.current()?;
                let blas = CudaBlas::new(Arc::clone(&self.null_stream))
                    .map_err(|e| Error::internal(format!("cublasCreate: {e:?}")))?;
                Blas::Ready(blas)
            } else {
                Blas::Missing
            };
        }
        match &mut *slot {
            Blas::Ready(blas) => f(Some(blas)),
            Blas::Unprobed | Blas::Missing => f(None),
        }
    }
}

/// [`CudaDevice::scale`] on a host copy.
fn host_scale(
    d: &CudaDevice,
    (address, size): (u64, u64),
    double: bool,
    factor: f64,
) -> Result<()> {
    let mut bytes = vec![0u8; host_len(size, "fft output")?];
    d.read(address, &mut bytes)?;
    if double {
        for c in bytes.chunks_exact_mut(8) {
            let v = f64::from_le_bytes(c.try_into().unwrap_or_default()) * factor;
            c.copy_from_slice(&v.to_le_bytes());
        }
    } else {
        for c in bytes.chunks_exact_mut(4) {
            let v = f32::from_le_bytes(c.try_into().unwrap_or_default()) * factor as f32;
            c.copy_from_slice(&v.to_le_bytes());
        }
    }
    d.write(address, &bytes)
}

impl Drop for CudaDevice {
    /// The pool's blocks go back to the driver before the context is released (fields drop
    /// after this).
    fn drop(&mut self) {
        let blocks = match self.pool.get_mut() {
            Ok(pool) => pool.drain(),
            Err(poisoned) => poisoned.into_inner().drain(),
        };
        if self.current().is_ok() {
            // Nothing to report a failure to while dropping; the context's release frees the
            // rest.
            let _ = self.release(blocks);
        }
    }
}

impl Device for CudaDevice {
    fn description(&self) -> &DeviceDescription {
        &self.description
    }

    fn kind(&self) -> DeviceKind {
        DeviceKind::Cuda
    }

    fn allocate(&self, size: u64) -> Result<u64> {
        self.current()?;
        let n = host_len(size, "allocation")?.max(1);
        let mut pool = self.pool.lock().map_err(|_| poisoned("memory pool"))?;
        let p = match pool.take(n) {
            Some(p) => p,
            None => {
                // SAFETY: plain allocation in the current context.
                let p = match unsafe { result::malloc_sync(n) } {
                    Ok(p) => p,
                    Err(e) if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                        // What the pool keeps may be what is missing: give it back, retry once.
                        self.release(pool.drain())?;
                        // SAFETY: as above.
                        unsafe { result::malloc_sync(n) }.map_err(|e| drv("cuMemAlloc", e))?
                    }
                    Err(e) => return Err(drv("cuMemAlloc", e)),
                };
                pool.allocated(p, n);
                p
            }
        };
        // SAFETY: `p` is a live block of `n` bytes; zeroed like the emulator's allocations.
        unsafe { result::memset_d8_sync(p, 0, n) }.map_err(|e| drv("cuMemsetD8", e))?;
        Ok(p)
    }

    fn free(&self, address: u64) -> Result<()> {
        self.current()?;
        let mut pool = self.pool.lock().map_err(|_| poisoned("memory pool"))?;
        match pool.give_back(address) {
            Returned::Kept => Ok(()),
            Returned::Release(_) => {
                // SAFETY: `address` came from `allocate` and is freed once by the executor.
                unsafe { result::free_sync(address) }.map_err(|e| drv("cuMemFree", e))
            }
            Returned::Unknown => Err(Error::internal(format!(
                "CUDA free of {address:#x}: not a live allocation of this device"
            ))),
        }
    }

    fn write(&self, address: u64, data: &[u8]) -> Result<()> {
        self.current()?;
        // SAFETY: the executor only writes inside allocations it made (slices validated at load).
        unsafe { result::memcpy_htod_sync(address, data) }.map_err(|e| drv("cuMemcpyHtoD", e))
    }

    fn read(&self, address: u64, out: &mut [u8]) -> Result<()> {
        self.current()?;
        // SAFETY: as for `write`.
        unsafe { result::memcpy_dtoh_sync(out, address) }.map_err(|e| drv("cuMemcpyDtoH", e))
    }

    fn copy(&self, destination: u64, source: u64, size: u64) -> Result<()> {
        self.current()?;
        let n = host_len(size, "copy")?;
        // SAFETY: as for `write`.
        unsafe { result::memcpy_dtod_sync(destination, source, n) }
            .map_err(|e| drv("cuMemcpyDtoD", e))
    }

    fn load_module(&self, module: &KernelModule) -> Result<()> {
        let mut modules = self.modules.lock().map_err(|_| poisoned("module"))?;
        self.loaded(&mut modules, module).map(drop)
    }

    fn launch(
        &self,
        module: &KernelModule,
        kernel: &str,
        shape: LaunchShape,
        args: &[KernelArg],
    ) -> Result<()> {
        // SAFETY: every address was validated at load against allocations of this device.
        unsafe { self.launch_on(&self.null_stream, module, kernel, shape, args)? };
        self.context
            .synchronize()
            .map_err(|e| drv(&format!("kernel {kernel}"), e))
    }

    fn gemm(&self, config: &GemmConfig, buffers: GemmBuffers) -> Result<()> {
        let GemmBuffers { lhs, rhs, out } = buffers;
        if let Some(plan) = cublas::plan(config) {
            let ran = self.with_cublas(|blas| {
                let Some(blas) = blas else {
                    return Ok(false);
                };
                self.current()?;
                // SAFETY: the slices were validated at load against the allocations, which
                // this device allocated; the handle was created in this context.
                match unsafe { cublas::run(*blas.handle(), &plan, config, lhs.0, rhs.0, out.0) } {
                    Ok(()) => self
                        .context
                        .synchronize()
                        .map(|()| true)
                        .map_err(|e| drv("cuBLAS gemm", e)),
                    // Refused before running (an unsupported type combination): nothing was
                    // written.
                    Err(cublas::Failure::Refused) => Ok(false),
                    Err(cublas::Failure::Failed(e)) => Err(Error::internal(e)),
                }
            })?;
            if ran {
                return Ok(());
            }
        }
        super::host_gemm(self, config, buffers, None)
    }

    /// Captures the operations into a CUDA graph on a non-blocking stream the first time (and
    /// whenever the operations or their addresses change), instantiates it, and launches it.
    /// Returns `Ok(false)`, issuing nothing, when an operation cannot be captured (a gemm cuBLAS
    /// does not run).
    fn run_command_buffer(&self, key: u64, ops: &[DeviceOp<'_>]) -> Result<bool> {
        let mut gemms = false;
        for op in ops {
            match op {
                DeviceOp::Gemm { config, .. } => {
                    let runs = cublas::plan(config).is_some()
                        && self.with_cublas(|blas| Ok(blas.is_some()))?;
                    if !runs {
                        return Ok(false);
                    }
                    gemms = true;
                }
                // Loading a module is not allowed during a capture: load now.
                DeviceOp::Launch { module, kernel, .. } => {
                    self.function(module, kernel)?;
                }
                _ => {}
            }
        }
        let signature = signature(ops);
        let mut graphs = self.graphs.lock().map_err(|_| poisoned("graph"))?;
        self.current()?;
        let stream = match &graphs.stream {
            Some(s) => Arc::clone(s),
            None => {
                let s = self
                    .context
                    .new_stream()
                    .map_err(|e| drv("cuStreamCreate", e))?;
                graphs.stream = Some(Arc::clone(&s));
                s
            }
        };
        let fresh = match graphs.execs.get(&key) {
            Some((sig, _)) if *sig == signature => None,
            _ if gemms => Some(self.with_cublas(|blas| self.capture(&stream, ops, blas))?),
            _ => Some(self.capture(&stream, ops, None)?),
        };
        if let Some(graph) = fresh {
            // The graph it replaces (captured from other operations) drops here.
            graphs.execs.insert(key, (signature, Graph(graph)));
        }
        let Some((_, graph)) = graphs.execs.get(&key) else {
            return Err(Error::internal("CUDA graph vanished"));
        };
        graph.0.launch().map_err(|e| drv("cuGraphLaunch", e))?;
        stream
            .synchronize()
            .map_err(|e| drv("command buffer (CUDA graph)", e))?;
        Ok(true)
    }

    fn fft(&self, thunk: &FftThunk, input: (u64, u64), output: (u64, u64)) -> Result<()> {
        let mut fft = self.fft.lock().map_err(|_| poisoned("cuFFT plans"))?;
        if let Fft::Unprobed = *fft {
            // cudarc panics when a dynamically loaded library is missing: ask first.
            *fft = if cufft::present() {
                Fft::Ready(Plans::default())
            } else {
                Fft::Missing
            };
        }
        let Fft::Ready(plans) = &mut *fft else {
            drop(fft);
            return super::host_fft(self, thunk, input, output);
        };
        self.current()?;
        // cuFFT may overwrite its input: transform a copy.
        let scratch = self.allocate(input.1)?;
        let ran = self
            .copy(scratch, input.0, input.1)
            .and_then(|()| plans.execute(thunk, scratch, output.0));
        let freed = self.free(scratch);
        let ran = ran?;
        freed?;
        drop(fft);
        if !ran {
            return super::host_fft(self, thunk, input, output);
        }
        if let Some(factor) = cufft::inverse_scale(thunk) {
            self.scale(output, thunk.double, factor)?;
        }
        self.null_stream
            .synchronize()
            .map_err(|e| drv("FFT (cuFFT)", e))
    }

    fn synchronize(&self) -> Result<()> {
        self.context
            .synchronize()
            .map_err(|e| drv("cuCtxSynchronize", e))
    }
}

impl CudaDevice {
    /// Records `ops` on `stream` in capture mode and instantiates the graph; gemms issue
    /// through `blas`, moved onto the capture stream for the capture.
    fn capture(
        &self,
        stream: &Arc<CudaStream>,
        ops: &[DeviceOp<'_>],
        mut blas: Option<&mut CudaBlas>,
    ) -> Result<CudaGraph> {
        stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(|e| drv("cuStreamBeginCapture", e))?;
        let issued = (|| {
            if let Some(b) = blas.as_deref_mut() {
                // SAFETY: the capture stream belongs to this device's context.
                unsafe { b.set_stream(Arc::clone(stream)) }
                    .map_err(|e| Error::internal(format!("cublasSetStream: {e:?}")))?;
            }
            let handle = blas.as_deref().map(|b| *b.handle());
            // SAFETY: the stream belongs to this context; every address was validated at load
            // against allocations of this device; kernel parameters are 64-bit device
            // addresses.
            ops.iter()
                .try_for_each(|op| unsafe { self.issue_async(stream, op, handle) })
        })();
        if let Some(b) = blas {
            // SAFETY: back to the null stream of the same context.
            let _ = unsafe { b.set_stream(Arc::clone(&self.null_stream)) };
        }
        // Always end the capture, also after a failed operation.
        let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
        issued?;
        graph
            .map_err(|e| drv("cuStreamEndCapture / cuGraphInstantiate", e))?
            .ok_or_else(|| Error::internal("CUDA stream capture recorded no graph"))
    }

    /// Launches `.entry kernel` on `stream` without waiting (kernel parameters are copied by the
    /// driver at the call, so a capture records them by value).
    ///
    /// # Safety
    /// Every argument is a 64-bit device address of this context (checked at load against the
    /// PTX signature and the allocations); `stream` belongs to this context.
    unsafe fn launch_on(
        &self,
        stream: &CudaStream,
        module: &KernelModule,
        kernel: &str,
        shape: LaunchShape,
        args: &[KernelArg],
    ) -> Result<()> {
        let LaunchShape {
            grid,
            block,
            shmem_bytes: shmem,
        } = shape;
        let f = self.function(module, kernel)?;
        if shmem > 48 * 1024 {
            let _ = f.set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shmem as i32,
            );
        }
        let mut launch = stream.launch_builder(&f);
        for a in args {
            launch.arg(&a.address);
        }
        let config = LaunchConfig {
            grid_dim: (grid[0], grid[1], grid[2]),
            block_dim: (block[0], block[1], block[2]),
            shared_mem_bytes: shmem,
        };
        // SAFETY: the caller's contract; `args` outlives the call.
        unsafe { launch.launch(config) }
            .map(drop)
            .map_err(|e| drv(&format!("cuLaunchKernel({kernel})"), e))
    }

    /// Issues one operation on `stream` without waiting (during a capture: records it); gemms
    /// through the cuBLAS `handle`, whose stream is `stream`.
    ///
    /// # Safety
    /// As for [`CudaDevice::capture`].
    unsafe fn issue_async(
        &self,
        stream: &CudaStream,
        op: &DeviceOp<'_>,
        handle: Option<cudarc::cublas::sys::cublasHandle_t>,
    ) -> Result<()> {
        let raw = stream.cu_stream();
        match op {
            DeviceOp::Launch {
                module,
                kernel,
                shape,
                args,
            } => {
                // SAFETY: the caller's contract (addresses checked at load, `stream` ours).
                unsafe { self.launch_on(stream, module, kernel, *shape, args) }
            }
            DeviceOp::Copy { dst, src, size } => {
                let n = host_len(*size, "copy")?;
                // SAFETY: the caller's contract.
                unsafe { result::memcpy_dtod_async(*dst, *src, n, raw) }
                    .map_err(|e| drv("cuMemcpyDtoDAsync", e))
            }
            DeviceOp::Memset32 { dst, size, value } => {
                // SAFETY: the caller's contract; `size` is a multiple of 4.
                unsafe { sys::cuMemsetD32Async(*dst, *value, (*size / 4) as usize, raw) }
                    .result()
                    .map_err(|e| drv("cuMemsetD32Async", e))
            }
            DeviceOp::Zero { dst, size } => {
                let n = host_len(*size, "memset")?;
                // SAFETY: the caller's contract.
                unsafe { result::memset_d8_async(*dst, 0, n, raw) }
                    .map_err(|e| drv("cuMemsetD8Async", e))
            }
            DeviceOp::Memset8 { dst, size, value } => {
                let n = host_len(*size, "memset")?;
                // SAFETY: the caller's contract.
                unsafe { result::memset_d8_async(*dst, *value, n, raw) }
                    .map_err(|e| drv("cuMemsetD8Async", e))
            }
            DeviceOp::Gemm {
                config,
                buffers: GemmBuffers { lhs, rhs, out },
            } => {
                let (Some(plan), Some(h)) = (cublas::plan(config), handle) else {
                    return Err(Error::internal(
                        "a gemm cuBLAS cannot run reached a CUDA graph capture",
                    ));
                };
                // SAFETY: the caller's contract; the handle's stream is the capture stream.
                match unsafe { cublas::run(h, &plan, config, lhs.0, rhs.0, out.0) } {
                    Ok(()) => Ok(()),
                    Err(cublas::Failure::Refused) => Err(Error::internal(
                        "cuBLAS refused a gemm inside a CUDA graph capture",
                    )),
                    Err(cublas::Failure::Failed(e)) => Err(Error::internal(e)),
                }
            }
        }
    }
}
