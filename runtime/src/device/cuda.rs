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
//! host copies. Every call runs synchronously on the context's null stream.
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::Mutex;

use cudarc::driver::{result, sys};

use super::{cublas, Device, DeviceDescription, DeviceKind};
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
        let f = self.function(module, kernel)?;
        self.current()?;
        let mut values: Vec<u64> = args.to_vec();
        let mut params: Vec<*mut c_void> = values
            .iter_mut()
            .map(|v| v as *mut u64 as *mut c_void)
            .collect();
        // SAFETY: every parameter is a 64-bit device address (checked at load against the PTX
        // signature); `values` outlives the synchronous launch below.
        unsafe {
            if shmem_bytes > 48 * 1024 {
                let _ = result::function::set_function_attribute(
                    f,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    shmem_bytes as i32,
                );
            }
            result::launch_kernel(
                f,
                (grid[0], grid[1], grid[2]),
                (block[0], block[1], block[2]),
                shmem_bytes,
                std::ptr::null_mut(),
                &mut params,
            )
            .map_err(|e| drv(&format!("cuLaunchKernel({kernel})"), e))?;
            result::ctx::synchronize().map_err(|e| drv(&format!("kernel {kernel}"), e))
        }
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

    fn synchronize(&self) -> Result<()> {
        self.current()?;
        result::ctx::synchronize().map_err(|e| drv("cuCtxSynchronize", e))
    }
}

impl CudaDevice {
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
