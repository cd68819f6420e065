//! Devices: one trait ([`Device`]) with two implementations, the emulated GPU ([`emulated`], PTX
//! run in the `ptx` crate's SIMT emulator, library thunks in native Rust) and a CUDA GPU
//! ([`cuda`], through cudarc with dynamic loading).
//!
//! Device addresses are plain `u64`s on both (`CUdeviceptr` on CUDA, `ptx::emu::DevicePtr` on the
//! emulator).
use std::fmt;

use proto::stream_executor::{gpu_device_info_proto, GpuTargetConfigProto};

use crate::error::{invalid, Error, Result};
use crate::gemm;
use crate::thunks::{ConvThunk, FftThunk, GemmConfig, KernelModule};

mod cublas;
pub mod cuda;
mod cufft;
pub mod emulated;
mod pool;

pub use cuda::CudaDevice;
pub use emulated::{DeviceTotals, EmulatedDevice};

/// What the loader checks an executable against: capability, limits and ABI versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceDescription {
    /// Device name (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// Platform (`CUDA`).
    pub platform_name: String,
    /// CUDA compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// The feature set of that capability (`cuda_compute_capability.feature_extension`):
    /// `Accelerated` runs `sm_90a` executables, `Family` runs `sm_100f` ones, `Baseline` (NONE or
    /// UNSPECIFIED in the config) only plain ones.
    pub compute_capability_features: ptx::Features,
    /// Most threads one block may have (the product of its three dims, checked per launch at
    /// load).
    pub threads_per_block_limit: u64,
    /// Per-dimension thread limits of a block.
    pub thread_dim_limit: [u64; 3],
    /// Per-dimension grid limits.
    pub block_dim_limit: [u64; 3],
    /// Shared memory per block without opt-in.
    pub shared_memory_per_block: u64,
    /// Shared memory per block with opt-in (the bound for `shmem_bytes`).
    pub shared_memory_per_block_optin: u64,
    /// Device memory in bytes.
    pub device_memory_size: u64,
    /// CUDA toolkit version ("X.Y.Z"; empty = none).
    pub cuda_toolkit_version: String,
    /// cuDNN version ("X.Y.Z"; empty = none), the target config's `dnn_version`; the loader
    /// refuses an executable that needs a newer one.
    pub cudnn_version: String,
    /// CUB version ("X.Y.Z"; empty = none), checked at load like `cudnn_version`.
    pub cub_version: String,
}

fn pos(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// `gpu_device_info.<field>` must be in `[lo, hi]`: a hostile or corrupted target config is
/// refused with the field named, before a bound derived from it checks any artifact.
fn in_range(field: &str, v: i64, lo: i64, hi: i64) -> Result<()> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(invalid(format!(
            "target config: gpu_device_info.{field} is {v}, out of range [{lo}, {hi}]"
        )))
    }
}

/// Every limit of a CUDA `gpu_device_info` checked against a range: 0 (unset) is accepted where
/// the runtime does not need the field; the upper bounds are far above any NVIDIA GPU.
fn check_device_info(info: &proto::stream_executor::GpuDeviceInfoProto) -> Result<()> {
    const MIB: i64 = 1 << 20;
    let ints: [(&str, i64, i64, i64); 19] = [
        (
            "threads_per_block_limit",
            info.threads_per_block_limit.into(),
            0,
            1024,
        ),
        ("threads_per_warp", info.threads_per_warp.into(), 0, 64),
        (
            "shared_memory_per_block",
            info.shared_memory_per_block.into(),
            0,
            16 * MIB,
        ),
        (
            "shared_memory_per_core",
            info.shared_memory_per_core.into(),
            0,
            16 * MIB,
        ),
        (
            "shared_memory_per_block_optin",
            info.shared_memory_per_block_optin.into(),
            0,
            16 * MIB,
        ),
        (
            "threads_per_core_limit",
            info.threads_per_core_limit.into(),
            0,
            1 << 16,
        ),
        ("core_count", info.core_count.into(), 0, 1 << 16),
        ("fpus_per_core", info.fpus_per_core, 0, 1 << 16),
        (
            "block_dim_limit_x",
            info.block_dim_limit_x,
            0,
            u32::MAX.into(),
        ),
        (
            "block_dim_limit_y",
            info.block_dim_limit_y,
            0,
            u32::MAX.into(),
        ),
        (
            "block_dim_limit_z",
            info.block_dim_limit_z,
            0,
            u32::MAX.into(),
        ),
        ("thread_dim_limit_x", info.thread_dim_limit_x, 0, 1024),
        ("thread_dim_limit_y", info.thread_dim_limit_y, 0, 1024),
        ("thread_dim_limit_z", info.thread_dim_limit_z, 0, 1024),
        ("memory_bandwidth", info.memory_bandwidth, 0, 1 << 50),
        ("l2_cache_size", info.l2_cache_size, 0, 1 << 36),
        ("device_memory_size", info.device_memory_size, 0, 1 << 50),
        (
            "registers_per_core_limit",
            info.registers_per_core_limit,
            0,
            1 << 24,
        ),
        (
            "registers_per_block_limit",
            info.registers_per_block_limit,
            0,
            1 << 24,
        ),
    ];
    for (field, v, lo, hi) in ints {
        in_range(field, v, lo, hi)?;
    }
    for (field, v) in [
        ("clock_rate_ghz", info.clock_rate_ghz),
        ("mem_clock_ghz", info.mem_clock_ghz),
    ] {
        if !(0.0..=100.0).contains(&v) {
            return Err(invalid(format!(
                "target config: gpu_device_info.{field} is {v}, out of range [0, 100]"
            )));
        }
    }
    Ok(())
}

/// The feature set a `CudaComputeCapabilityProto.feature_extension` value names; an unknown
/// value (a newer schema's) promises nothing beyond the baseline.
pub fn features_of(feature_extension: i32) -> ptx::Features {
    use proto::stream_executor::cuda_compute_capability_proto::FeatureExtension;
    match FeatureExtension::try_from(feature_extension) {
        Ok(FeatureExtension::AcceleratedFeatures) => ptx::Features::Accelerated,
        Ok(FeatureExtension::FamilyCompatibleFeatures) => ptx::Features::Family,
        _ => ptx::Features::Baseline,
    }
}

impl DeviceDescription {
    /// Builds the description from a target config (`stream_executor.GpuTargetConfigProto`).
    pub fn from_target_config(config: &GpuTargetConfigProto) -> Result<DeviceDescription> {
        let info = config
            .gpu_device_info
            .as_ref()
            .ok_or_else(|| invalid("target config: gpu_device_info is not set"))?;
        let (cc, features) = match &info.compute_capability {
            Some(gpu_device_info_proto::ComputeCapability::CudaComputeCapability(c)) => {
                // The compiler's bound and message (`proto::contract`): a major of 21 or more or a
                // two-digit minor names no device and no PTX target.
                proto::check_compute_capability(c.major, c.minor)
                    .map_err(|e| invalid(format!("target config: {e}")))?;
                ((c.major, c.minor), features_of(c.feature_extension))
            }
            Some(_) => {
                return Err(Error::unimplemented(format!(
                    "target config: platform {:?} has no CUDA compute capability; this runtime \
                     runs CUDA targets only",
                    config.platform_name
                )))
            }
            None => {
                return Err(invalid(
                    "target config: gpu_device_info.compute_capability is not set",
                ))
            }
        };
        check_device_info(info)?;
        let optin = pos(info.shared_memory_per_block_optin.into());
        let per_block = pos(info.shared_memory_per_block.into());
        Ok(DeviceDescription {
            name: info.name.clone(),
            platform_name: config.platform_name.clone(),
            compute_capability: cc,
            compute_capability_features: features,
            threads_per_block_limit: pos(info.threads_per_block_limit.into()),
            thread_dim_limit: [
                pos(info.thread_dim_limit_x),
                pos(info.thread_dim_limit_y),
                pos(info.thread_dim_limit_z),
            ],
            block_dim_limit: [
                pos(info.block_dim_limit_x),
                pos(info.block_dim_limit_y),
                pos(info.block_dim_limit_z),
            ],
            shared_memory_per_block: per_block,
            shared_memory_per_block_optin: optin.max(per_block),
            device_memory_size: pos(info.device_memory_size),
            cuda_toolkit_version: info.runtime_version.clone(),
            cudnn_version: info.dnn_version.clone(),
            cub_version: info.cub_version.clone(),
        })
    }
}

/// Which [`Device`] implementation a device is ([`Device::kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    /// The SIMT emulator.
    Emulated,
    /// A CUDA GPU.
    Cuda,
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceKind::Emulated => "emulated",
            DeviceKind::Cuda => "cuda",
        })
    }
}

/// A GPU the runtime can execute on. Operations are issued in order; the emulated device runs
/// them synchronously, the CUDA device on its stream (synchronised by [`Device::synchronize`]).
pub trait Device: Send + Sync + fmt::Debug {
    /// Capability, limits and ABI versions.
    fn description(&self) -> &DeviceDescription;
    /// Emulated or CUDA.
    fn kind(&self) -> DeviceKind;
    /// Allocates `size` bytes (zeroed on the emulator); returns the device address.
    fn allocate(&self, size: u64) -> Result<u64>;
    /// Frees an allocation.
    fn free(&self, address: u64) -> Result<()>;
    /// Host → device.
    fn write(&self, address: u64, data: &[u8]) -> Result<()>;
    /// Device → host.
    fn read(&self, address: u64, out: &mut [u8]) -> Result<()>;
    /// Device → host into `out`, which is all zeros on entry (fresh from `vec![0; n]`): a device
    /// may leave the bytes that are zero on it untouched, so the host pages of an output that
    /// was never written stay uncommitted. The default is [`Device::read`].
    fn read_into_zeroed(&self, address: u64, out: &mut [u8]) -> Result<()> {
        self.read(address, out)
    }
    /// Device → device copy of `size` bytes (non-overlapping).
    fn copy(&self, destination: u64, source: u64, size: u64) -> Result<()> {
        let n = host_len(size, "copy")?;
        let mut buf = vec![0u8; n];
        self.read(source, &mut buf)?;
        self.write(destination, &buf)
    }
    /// Fills `size` bytes (a multiple of 4) with the little-endian `value`.
    fn memset32(&self, address: u64, size: u64, value: u32) -> Result<()> {
        let n = host_len(size, "memset")?;
        let bytes = value.to_le_bytes();
        let buf: Vec<u8> = (0..n).map(|i| bytes[i % 4]).collect();
        self.write(address, &buf)
    }
    /// Makes the module's kernels launchable (idempotent: cached by `module.id`).
    fn load_module(&self, module: &KernelModule) -> Result<()>;
    /// Launches `.entry kernel` of a loaded module with pointer arguments (the emulated device
    /// also bounds each argument's accesses by its slice's size).
    fn launch(
        &self,
        module: &KernelModule,
        kernel: &str,
        shape: LaunchShape,
        args: &[KernelArg],
    ) -> Result<()>;
    /// Lane-instructions (instructions once per active lane) of this device's most recent
    /// kernel launch, for `aot run --profile`; `None` (the default) where the device does not
    /// count them (CUDA runs the kernel on hardware).
    fn last_launch_lane_instructions(&self) -> Option<u64> {
        None
    }
    /// `output = alpha * op(lhs) x op(rhs) + beta * output` (docs/artifact.md "Gemm"). The default
    /// runs the native implementation on host copies of the buffers.
    fn gemm(&self, config: &GemmConfig, buffers: GemmBuffers) -> Result<()> {
        host_gemm(self, config, buffers, None)
    }
    /// The convolution thunk (docs/artifact.md "Convolution"). The default runs
    /// `crate::conv`'s implicit GEMM on host copies of the buffers, with no deadline (the CUDA
    /// device's path until cuDNN is wired; the emulated device bounds it as it bounds a gemm).
    fn convolution(&self, thunk: &ConvThunk, buffers: crate::conv::ConvBuffers) -> Result<()> {
        crate::conv::host_convolution(self, thunk, buffers, None)
    }
    /// The FFT thunk from the `input` to the `output` (address, size) (docs/artifact.md "Fft").
    /// The default runs `crate::fft` on host copies of the buffers.
    fn fft(&self, thunk: &FftThunk, input: (u64, u64), output: (u64, u64)) -> Result<()> {
        host_fft(self, thunk, input, output)
    }
    /// Runs a command buffer's operations (addresses of this execution) as one unit when the
    /// device has such a thing: the CUDA device captures them into a CUDA graph on first use
    /// (per `key` and addresses) and launches the graph. `Ok(false)` (the default): not handled,
    /// the caller issues the operations one by one (the emulated device's recorded list).
    fn run_command_buffer(&self, _key: u64, _ops: &[DeviceOp<'_>]) -> Result<bool> {
        Ok(false)
    }
    /// Waits for everything issued so far.
    fn synchronize(&self) -> Result<()>;
}

/// The FFT thunk on host copies of its buffers (`crate::fft`): [`Device::fft`]'s default, and
/// the CUDA device's path where cuFFT is missing or a shape does not fit it.
pub(crate) fn host_fft<D: Device + ?Sized>(
    device: &D,
    thunk: &FftThunk,
    input: (u64, u64),
    output: (u64, u64),
) -> Result<()> {
    let mut x = vec![0u8; host_len(input.1, "fft input")?];
    device.read(input.0, &mut x)?;
    let y = crate::fft::execute(thunk, &x)?;
    if y.len() as u64 != output.1 {
        return Err(Error::internal(format!(
            "fft wrote {} bytes into an output of {}",
            y.len(),
            output.1
        )));
    }
    device.write(output.0, &y)
}

/// `size` device bytes as a host length, for a host copy or a driver call: a size past this
/// host's address space is a resource it lacks, named by what the bytes were for.
pub(crate) fn host_len(size: u64, what: &str) -> Result<usize> {
    usize::try_from(size).map_err(|_| Error::resource_exhausted(format!("{what} of {size} bytes")))
}

/// The native gemm on host copies of the buffers (the [`Device::gemm`] default, and the CUDA
/// device's fallback for what cuBLAS does not cover).
pub fn host_gemm<D: Device + ?Sized>(
    device: &D,
    config: &GemmConfig,
    buffers: GemmBuffers,
    deadline: Option<gemm::Deadline>,
) -> Result<()> {
    let GemmBuffers { lhs, rhs, out } = buffers;
    let rd = |(addr, size): (u64, u64)| -> Result<Vec<u8>> {
        let n = host_len(size, "gemm buffer")?;
        let mut v = vec![0u8; n];
        device.read(addr, &mut v)?;
        Ok(v)
    };
    let a = rd(lhs)?;
    let b = rd(rhs)?;
    let mut c = rd(out)?;
    gemm::gemm_until(config, &a, &b, &mut c, deadline)?;
    device.write(out.0, &c)
}

/// One kernel argument: the device address of a buffer slice, its size in bytes, and whether
/// the kernel may write it. The kernel receives the address; the emulated device faults on any
/// access outside the `size` bytes, and on a store into an argument not `written`
/// (docs/hardening.md, "The emulated device is a sanitizer").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelArg {
    /// Device address passed to the kernel.
    pub address: u64,
    /// Bytes of the slice.
    pub size: u64,
    /// The executable marks the argument written (`KernelThunkProto.written`; arguments past
    /// the flags count as written). The runtime relies on the flag: it hands a caller's own
    /// buffer to an argument no thunk writes.
    pub written: bool,
}

/// How a kernel is launched: what [`Device::launch`], [`DeviceOp::Launch`] and the executor's
/// recorded commands carry together, so the three spell it once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchShape {
    /// Blocks in the grid (x, y, z).
    pub grid: [u32; 3],
    /// Threads in a block (x, y, z).
    pub block: [u32; 3],
    /// Dynamic shared memory per block, in bytes.
    pub shmem_bytes: u32,
}

/// The (address, size) of each operand of a gemm: what [`Device::gemm`], [`DeviceOp::Gemm`] and
/// [`host_gemm`] carry together, so the three spell it once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GemmBuffers {
    /// Left operand.
    pub lhs: (u64, u64),
    /// Right operand.
    pub rhs: (u64, u64),
    /// Output.
    pub out: (u64, u64),
}

/// One operation of a command buffer, with the device addresses of the current execution.
#[derive(Debug)]
pub enum DeviceOp<'a> {
    /// A kernel launch with pointer arguments.
    Launch {
        /// Holds `kernel`; already made launchable by [`Device::load_module`] (the loader and
        /// the multi-replica run do it for every module before executing).
        module: &'a KernelModule,
        /// The `.entry`.
        kernel: &'a str,
        /// Grid, block and dynamic shared memory.
        shape: LaunchShape,
        /// Arguments: each slice's address and size.
        args: Vec<KernelArg>,
    },
    /// Device-to-device copy.
    Copy {
        /// Destination.
        dst: u64,
        /// Source.
        src: u64,
        /// Bytes.
        size: u64,
    },
    /// Fill with a 32-bit value (`size` a multiple of 4).
    Memset32 {
        /// Destination.
        dst: u64,
        /// Bytes.
        size: u64,
        /// Written to every 4-byte word, little-endian.
        value: u32,
    },
    /// Fill every byte with `value` (`size` not a multiple of 4).
    Memset8 {
        /// Destination.
        dst: u64,
        /// Bytes.
        size: u64,
        /// The byte.
        value: u8,
    },
    /// Zero bytes (`size` not a multiple of 4).
    Zero {
        /// Destination.
        dst: u64,
        /// Bytes.
        size: u64,
    },
    /// A gemm.
    Gemm {
        /// Configuration.
        config: &'a GemmConfig,
        /// Its operands.
        buffers: GemmBuffers,
    },
}

/// Issues one command-buffer operation through the device's individual methods (what a device
/// without [`Device::run_command_buffer`] gets).
pub fn issue<D: Device + ?Sized>(device: &D, op: &DeviceOp<'_>) -> Result<()> {
    match op {
        DeviceOp::Launch {
            module,
            kernel,
            shape,
            args,
        } => device.launch(module, kernel, *shape, args),
        DeviceOp::Copy { dst, src, size } => device.copy(*dst, *src, *size),
        DeviceOp::Memset32 { dst, size, value } => device.memset32(*dst, *size, *value),
        DeviceOp::Zero { dst, size } => {
            let n = host_len(*size, "memset")?;
            device.write(*dst, &vec![0u8; n])
        }
        DeviceOp::Memset8 { dst, size, value } => {
            let n = host_len(*size, "memset")?;
            device.write(*dst, &vec![*value; n])
        }
        DeviceOp::Gemm { config, buffers } => device.gemm(config, *buffers),
    }
}
