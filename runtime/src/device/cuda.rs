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
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::Mutex;

use cudarc::driver::{result, sys};

use super::{cublas, Device, DeviceDescription, DeviceKind, DeviceOp};
use crate::error::{Error, Result};
use crate::thunks::{GemmConfig, KernelModule};

/// A CUDA device (one ordinal, its primary context).
pub struct CudaDevice {
    description: DeviceDescription,
    context: sys::CUcontext,
    modules: Mutex<HashMap<u64, usize>>,
    /// Loaded `CUmodule` handles, stored as integers so the type is `Send`.
    handles: Mutex<Vec<usize>>,
    /// The cuBLAS handle, created at the first gemm (0: none yet); `None` once cuBLAS turned out
    /// to be missing.
    cublas: Mutex<Option<usize>>,
    /// Command buffers as CUDA graphs.
    graphs: Mutex<Graphs>,
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
                grid,
                block,
                shmem,
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
                lhs,
                rhs,
                out,
            } => write!(s, "G{config:?}{lhs:?}{rhs:?}{out:?};"),
        };
    }
    s
}

/// The capture stream (0 until first used) and, per command buffer, its instantiated graph and
/// the operations it was captured from (a graph bakes in addresses and launch parameters: a
/// different list is captured again). Handles are integers so the type is `Send`.
#[derive(Default)]
struct Graphs {
    stream: usize,
    execs: HashMap<u64, (String, usize)>,
}

// SAFETY: the CUDA driver API is thread-safe; the context handle is only passed to the driver
// (made current on the calling thread before each use).
unsafe impl Send for CudaDevice {}
// SAFETY: as above; interior state is behind mutexes.
unsafe impl Sync for CudaDevice {}

impl std::fmt::Debug for CudaDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaDevice")
            .field("name", &self.description.name)
            .finish()
    }
}

fn drv(what: &str, e: result::DriverError) -> Error {
    Error::Internal(format!("CUDA {what}: {e:?}"))
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
            return Err(Error::Unavailable(
                "no CUDA driver library (libcuda.so) on this machine".into(),
            ));
        }
        result::init().map_err(|e| Error::Unavailable(format!("cuInit failed: {e:?}")))?;
        let count = result::device::get_count().map_err(|e| drv("cuDeviceGetCount", e))?;
        let ord = i32::try_from(ordinal).unwrap_or(i32::MAX);
        if ord >= count {
            return Err(Error::Unavailable(format!(
                "CUDA device {ordinal} requested, the machine has {count}"
            )));
        }
        let dev = result::device::get(ord).map_err(|e| drv("cuDeviceGet", e))?;
        // SAFETY: `dev` is a valid device handle returned by the driver.
        let (major, minor, mem, context) = unsafe {
            let major = result::device::get_attribute(
                dev,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            )
            .map_err(|e| drv("cuDeviceGetAttribute", e))?;
            let minor = result::device::get_attribute(
                dev,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            )
            .map_err(|e| drv("cuDeviceGetAttribute", e))?;
            let mem = result::device::total_mem(dev).map_err(|e| drv("cuDeviceTotalMem", e))?;
            let ctx =
                result::primary_ctx::retain(dev).map_err(|e| drv("cuDevicePrimaryCtxRetain", e))?;
            (major, minor, mem, ctx)
        };
        let mut description = description;
        description.compute_capability = (major, minor);
        description.device_memory_size = mem as u64;
        if let Ok(name) = result::device::get_name(dev) {
            description.name = name;
        }
        Ok(CudaDevice {
            description,
            context,
            modules: Mutex::new(HashMap::new()),
            handles: Mutex::new(Vec::new()),
            cublas: Mutex::new(Some(0)),
            graphs: Mutex::new(Graphs::default()),
        })
    }

    fn current(&self) -> Result<()> {
        // SAFETY: the context was retained in `new` and is never released while `self` lives.
        unsafe { result::ctx::set_current(self.context) }.map_err(|e| drv("cuCtxSetCurrent", e))
    }

    fn function(&self, module: &KernelModule, kernel: &str) -> Result<sys::CUfunction> {
        self.load_module(module)?;
        let handle = *self
            .modules
            .lock()
            .map_err(|_| Error::Internal("CUDA module lock poisoned".into()))?
            .get(&module.id)
            .ok_or_else(|| Error::Internal("CUDA module vanished".into()))?;
        let name = CString::new(kernel)
            .map_err(|_| Error::InvalidArgument(format!("kernel name {kernel:?} contains NUL")))?;
        // SAFETY: `handle` is a loaded, never-unloaded CUmodule.
        unsafe { result::module::get_function(handle as sys::CUmodule, name) }
            .map_err(|e| drv(&format!("cuModuleGetFunction({kernel})"), e))
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
        let n = usize::try_from(size.max(1))
            .map_err(|_| Error::ResourceExhausted(format!("allocation of {size} bytes")))?;
        // SAFETY: plain allocation in the current context; zeroed like the emulator's.
        unsafe {
            let p = result::malloc_sync(n).map_err(|e| drv("cuMemAlloc", e))?;
            result::memset_d8_sync(p, 0, n).map_err(|e| drv("cuMemsetD8", e))?;
            Ok(p)
        }
    }

    fn free(&self, address: u64) -> Result<()> {
        self.current()?;
        // SAFETY: `address` came from `allocate` and is freed once by the executor.
        unsafe { result::free_sync(address) }.map_err(|e| drv("cuMemFree", e))
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
        let n = usize::try_from(size)
            .map_err(|_| Error::ResourceExhausted(format!("copy of {size} bytes")))?;
        // SAFETY: as for `write`.
        unsafe { result::memcpy_dtod_sync(destination, source, n) }
            .map_err(|e| drv("cuMemcpyDtoD", e))
    }

    fn load_module(&self, module: &KernelModule) -> Result<()> {
        let mut modules = self
            .modules
            .lock()
            .map_err(|_| Error::Internal("CUDA module lock poisoned".into()))?;
        if modules.contains_key(&module.id) {
            return Ok(());
        }
        self.current()?;
        let m = if module.cubin.is_empty() {
            let image = CString::new(module.text.as_str())
                .map_err(|_| Error::InvalidArgument("kernel PTX contains a NUL byte".into()))?;
            // SAFETY: `image` is a NUL-terminated PTX string that outlives the call.
            unsafe { result::module::load_data(image.as_ptr() as *const c_void) }
                .map_err(|e| drv("cuModuleLoadData (PTX)", e))?
        } else {
            // SAFETY: a cubin (an ELF image for this SM, header checked at load) that outlives
            // the call; the driver reads it without JIT.
            unsafe { result::module::load_data(module.cubin.as_ptr() as *const c_void) }
                .map_err(|e| drv("cuModuleLoadData (cubin)", e))?
        };
        modules.insert(module.id, m as usize);
        if let Ok(mut h) = self.handles.lock() {
            h.push(m as usize);
        }
        Ok(())
    }

    fn launch(
        &self,
        module: &KernelModule,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        shmem_bytes: u32,
        args: &[u64],
    ) -> Result<()> {
        self.current()?;
        // SAFETY: every address was validated at load against allocations of this device.
        unsafe {
            self.launch_on(
                std::ptr::null_mut(),
                module,
                kernel,
                grid,
                block,
                shmem_bytes,
                args,
            )?
        };
        result::ctx::synchronize().map_err(|e| drv(&format!("kernel {kernel}"), e))
    }

    fn gemm(
        &self,
        config: &GemmConfig,
        lhs: (u64, u64),
        rhs: (u64, u64),
        out: (u64, u64),
    ) -> Result<()> {
        if let (Some(plan), Some(handle)) = (cublas::plan(config), self.cublas_handle()?) {
            self.current()?;
            // SAFETY: the slices were validated at load against the allocations, which this
            // device allocated; the handle was created in this context.
            match unsafe { cublas::run(handle, &plan, config, lhs.0, rhs.0, out.0) } {
                Ok(()) => {
                    return result::ctx::synchronize().map_err(|e| drv("cuBLAS gemm", e));
                }
                // Refused before running (an unsupported type combination): nothing was written.
                Err(cublas::Failure::Refused) => {}
                Err(cublas::Failure::Failed(e)) => return Err(Error::Internal(e)),
            }
        }
        super::host_gemm(self, config, lhs, rhs, out)
    }

    /// Captures the operations into a CUDA graph on a non-blocking stream the first time (and
    /// whenever the operations or their addresses change), instantiates it, and launches it.
    /// Returns `Ok(false)`, issuing nothing, when an operation cannot be captured (a gemm cuBLAS
    /// does not run).
    fn run_command_buffer(&self, key: u64, ops: &[DeviceOp<'_>]) -> Result<bool> {
        let mut handle = None;
        for op in ops {
            match op {
                DeviceOp::Gemm { config, .. } => {
                    match (cublas::plan(config), self.cublas_handle()?) {
                        (Some(_), Some(h)) => handle = Some(h),
                        _ => return Ok(false),
                    }
                }
                // Loading a module is not allowed during a capture: load now.
                DeviceOp::Launch { module, kernel, .. } => {
                    self.function(module, kernel)?;
                }
                _ => {}
            }
        }
        let signature = signature(ops);
        let mut graphs = self
            .graphs
            .lock()
            .map_err(|_| Error::Internal("CUDA graph lock poisoned".into()))?;
        self.current()?;
        if graphs.stream == 0 {
            let s = result::stream::create(result::stream::StreamKind::NonBlocking)
                .map_err(|e| drv("cuStreamCreate", e))?;
            graphs.stream = s as usize;
        }
        let stream = graphs.stream as sys::CUstream;
        let cached = graphs
            .execs
            .get(&key)
            .filter(|(sig, _)| *sig == signature)
            .map(|(_, e)| *e);
        let exec = match cached {
            Some(e) => e as sys::CUgraphExec,
            None => {
                let exec = self.capture(stream, ops, handle)?;
                if let Some((_, old)) = graphs.execs.insert(key, (signature, exec as usize)) {
                    // SAFETY: instantiated by `capture`, no longer referenced.
                    let _ = unsafe { result::graph::exec_destroy(old as sys::CUgraphExec) };
                }
                exec
            }
        };
        // SAFETY: `exec` and `stream` belong to this context; the stream is synchronized before
        // the buffers can be touched again.
        unsafe {
            result::graph::launch(exec, stream).map_err(|e| drv("cuGraphLaunch", e))?;
            result::stream::synchronize(stream)
                .map_err(|e| drv("command buffer (CUDA graph)", e))?;
        }
        Ok(true)
    }

    fn synchronize(&self) -> Result<()> {
        self.current()?;
        result::ctx::synchronize().map_err(|e| drv("cuCtxSynchronize", e))
    }
}

impl CudaDevice {
    /// Records `ops` on `stream` in capture mode and instantiates the graph.
    fn capture(
        &self,
        stream: sys::CUstream,
        ops: &[DeviceOp<'_>],
        cublas_handle: Option<cudarc::cublas::sys::cublasHandle_t>,
    ) -> Result<sys::CUgraphExec> {
        // SAFETY: the stream belongs to this context; every address was validated at load
        // against allocations of this device; kernel parameters are 64-bit device addresses.
        unsafe {
            result::stream::begin_capture(
                stream,
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
            .map_err(|e| drv("cuStreamBeginCapture", e))?;
            if let Some(h) = cublas_handle {
                cublas::set_stream(h, stream as _).map_err(Error::Internal)?;
            }
            let issued = ops.iter().try_for_each(|op| self.issue_async(stream, op));
            if let Some(h) = cublas_handle {
                let _ = cublas::set_stream(h, std::ptr::null_mut());
            }
            // Always end the capture, also after a failed operation.
            let graph = result::stream::end_capture(stream);
            issued?;
            let graph = graph.map_err(|e| drv("cuStreamEndCapture", e))?;
            let exec = result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0));
            let _ = result::graph::destroy(graph);
            exec.map_err(|e| drv("cuGraphInstantiate", e))
        }
    }

    /// Launches `.entry kernel` on `stream` without waiting (kernel parameters are copied by the
    /// driver at the call, so a capture records them by value).
    ///
    /// # Safety
    /// Every argument is a 64-bit device address of this context (checked at load against the
    /// PTX signature and the allocations); `stream` belongs to this context or is null.
    #[allow(clippy::too_many_arguments)]
    unsafe fn launch_on(
        &self,
        stream: sys::CUstream,
        module: &KernelModule,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        shmem: u32,
        args: &[u64],
    ) -> Result<()> {
        let f = self.function(module, kernel)?;
        let mut values: Vec<u64> = args.to_vec();
        let mut params: Vec<*mut c_void> = values
            .iter_mut()
            .map(|v| v as *mut u64 as *mut c_void)
            .collect();
        // SAFETY: the caller's contract; `values` outlives the call.
        unsafe {
            if shmem > 48 * 1024 {
                let _ = result::function::set_function_attribute(
                    f,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    shmem as i32,
                );
            }
            result::launch_kernel(
                f,
                (grid[0], grid[1], grid[2]),
                (block[0], block[1], block[2]),
                shmem,
                stream,
                &mut params,
            )
        }
        .map_err(|e| drv(&format!("cuLaunchKernel({kernel})"), e))
    }

    /// Issues one operation on `stream` without waiting (during a capture: records it).
    ///
    /// # Safety
    /// As for [`CudaDevice::capture`].
    unsafe fn issue_async(&self, stream: sys::CUstream, op: &DeviceOp<'_>) -> Result<()> {
        match op {
            DeviceOp::Launch {
                module,
                kernel,
                grid,
                block,
                shmem,
                args,
            } => unsafe { self.launch_on(stream, module, kernel, *grid, *block, *shmem, args) },
            DeviceOp::Copy { dst, src, size } => {
                let n = usize::try_from(*size)
                    .map_err(|_| Error::ResourceExhausted(format!("copy of {size} bytes")))?;
                // SAFETY: the caller's contract.
                unsafe { result::memcpy_dtod_async(*dst, *src, n, stream) }
                    .map_err(|e| drv("cuMemcpyDtoDAsync", e))
            }
            DeviceOp::Memset32 { dst, size, value } => {
                // SAFETY: the caller's contract; `size` is a multiple of 4.
                unsafe { sys::cuMemsetD32Async(*dst, *value, (*size / 4) as usize, stream) }
                    .result()
                    .map_err(|e| drv("cuMemsetD32Async", e))
            }
            DeviceOp::Zero { dst, size } => {
                let n = usize::try_from(*size)
                    .map_err(|_| Error::ResourceExhausted(format!("memset of {size} bytes")))?;
                // SAFETY: the caller's contract.
                unsafe { result::memset_d8_async(*dst, 0, n, stream) }
                    .map_err(|e| drv("cuMemsetD8Async", e))
            }
            DeviceOp::Memset8 { dst, size, value } => {
                let n = usize::try_from(*size)
                    .map_err(|_| Error::ResourceExhausted(format!("memset of {size} bytes")))?;
                // SAFETY: the caller's contract.
                unsafe { result::memset_d8_async(*dst, *value, n, stream) }
                    .map_err(|e| drv("cuMemsetD8Async", e))
            }
            DeviceOp::Gemm {
                config,
                lhs,
                rhs,
                out,
            } => {
                let (Some(plan), Some(h)) = (cublas::plan(config), self.cublas_handle()?) else {
                    return Err(Error::Internal(
                        "a gemm cuBLAS cannot run reached a CUDA graph capture".into(),
                    ));
                };
                // SAFETY: the caller's contract; the handle's stream is the capture stream.
                match unsafe { cublas::run(h, &plan, config, lhs.0, rhs.0, out.0) } {
                    Ok(()) => Ok(()),
                    Err(cublas::Failure::Refused) => Err(Error::Internal(
                        "cuBLAS refused a gemm inside a CUDA graph capture".into(),
                    )),
                    Err(cublas::Failure::Failed(e)) => Err(Error::Internal(e)),
                }
            }
        }
    }

    /// The cuBLAS handle, created on first use; `None` when libcublas is not on the machine.
    fn cublas_handle(&self) -> Result<Option<cudarc::cublas::sys::cublasHandle_t>> {
        let mut slot = self
            .cublas
            .lock()
            .map_err(|_| Error::Internal("cuBLAS handle lock poisoned".into()))?;
        match *slot {
            None => Ok(None),
            Some(0) => {
                if !cublas::present() {
                    *slot = None;
                    return Ok(None);
                }
                self.current()?;
                let h = cublas::create().map_err(Error::Internal)?;
                *slot = Some(h as usize);
                Ok(Some(h))
            }
            Some(h) => Ok(Some(h as cudarc::cublas::sys::cublasHandle_t)),
        }
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        if self.current().is_err() {
            return;
        }
        if let Ok(g) = self.graphs.get_mut() {
            for (_, exec) in g.execs.values() {
                // SAFETY: instantiated by `capture` in this context, destroyed once.
                let _ = unsafe { result::graph::exec_destroy(*exec as sys::CUgraphExec) };
            }
            if g.stream != 0 {
                // SAFETY: created in `run_command_buffer`, destroyed once.
                let _ = unsafe { result::stream::destroy(g.stream as sys::CUstream) };
            }
        }
        if let Ok(Some(h)) = self.cublas.lock().map(|s| *s) {
            if h != 0 {
                // SAFETY: created by `cublas_handle` in this context, destroyed once.
                unsafe { cublas::destroy(h as cudarc::cublas::sys::cublasHandle_t) };
            }
        }
        if let Ok(h) = self.handles.lock() {
            for &m in h.iter() {
                // SAFETY: each module was loaded once by this device and is unloaded once.
                let _ = unsafe { result::module::unload(m as sys::CUmodule) };
            }
        }
    }
}
