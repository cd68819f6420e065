//! The emulator's benchmark workloads: corpus kernels (`testdata/corpus/ptx/`) with their inputs,
//! launch shapes, the same work as a native Rust loop, and a bit-exact check of what the kernel
//! wrote. `examples/emu_bench.rs` and the harness's `aot bench` (its emulator section) time them,
//! each in its own way; keeping the workloads here means the two measure the same thing.
use super::{
    launch, DevicePtr, EmuError, LaunchOptions, LaunchStats, LoadedModule, Memory, ParamValue,
};

/// The corpus file (`testdata/corpus/ptx/NAME.ptx`) of the grid-stride SAXPY.
pub const SAXPY: &str = "saxpy_gridstride";
/// The corpus file of the shared-memory block sums.
pub const BLOCK_SUM: &str = "block_reduce_smem";
/// The corpus file of the 16x16-tiled matmul.
pub const TILED_MATMUL: &str = "tiled_matmul";

/// One kernel with its device memory, parameters and launch shape, ready to run any number of
/// times.
#[derive(Debug)]
pub struct Workload {
    module: LoadedModule,
    kernel: &'static str,
    grid: [u32; 3],
    block: [u32; 3],
    params: Vec<ParamValue>,
    mem: Memory,
    /// Launches so far: SAXPY updates `y` in place, so its expected result depends on them.
    launches: usize,
    work: Work,
}

#[derive(Debug)]
enum Work {
    Saxpy {
        x: Vec<f32>,
        y0: Vec<f32>,
        alpha: f32,
        y: Vec<f32>,
        py: DevicePtr,
    },
    BlockSum {
        v: Vec<f32>,
        partial: Vec<f32>,
        pout: DevicePtr,
    },
    Matmul {
        a: Vec<f32>,
        b: Vec<f32>,
        c: Vec<f32>,
        d: usize,
        pc: DevicePtr,
    },
}

fn f32_buffer(mem: &mut Memory, v: &[f32]) -> Result<DevicePtr, EmuError> {
    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    let p = mem.alloc(b.len() as u64)?;
    mem.write(p, &b)?;
    Ok(p)
}

fn read_f32(mem: &mut Memory, p: DevicePtr, n: usize) -> Result<Vec<f32>, EmuError> {
    Ok(mem
        .read_vec(p, n * 4)?
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Runs `f` compiled for the host's fused multiply-add where it has one. The native loops fuse
/// as `fma.rn.f32` does (`f32::mul_add`), which without the FMA target feature is a call to
/// libm's software `fmaf`: the native SAXPY took 30 ms where the instruction takes 4, and the
/// bench's "emu/native" ratio read 2 where it is 12.
#[inline(always)]
fn with_host_fma<T>(f: impl FnOnce() -> T) -> T {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "fma")]
        fn fma<T>(f: impl FnOnce() -> T) -> T {
            f()
        }
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has FMA, the one feature `fma` is compiled for.
            return unsafe { fma(f) };
        }
    }
    f()
}

fn saxpy_native(y: &mut [f32], x: &[f32], alpha: f32) {
    with_host_fma(
        #[inline(always)]
        || {
            for (yi, xi) in y.iter_mut().zip(x) {
                *yi = alpha.mul_add(*xi, *yi);
            }
        },
    )
}

fn matmul_native(c: &mut [f32], a: &[f32], b: &[f32], d: usize) {
    with_host_fma(
        #[inline(always)]
        || {
            for i in 0..d {
                for j in 0..d {
                    let mut acc = 0f32;
                    for k in 0..d {
                        acc = a[i * d + k].mul_add(b[k * d + j], acc);
                    }
                    c[i * d + j] = acc;
                }
            }
        },
    )
}

fn same_bits(got: &[f32], want: &[f32]) -> bool {
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(a, b)| a.to_bits() == b.to_bits())
}

impl Workload {
    /// `y = alpha * x + y` over `n` elements, 1024 blocks of 256 threads striding the grid;
    /// `module` is [`SAXPY`] loaded.
    pub fn saxpy(module: LoadedModule, n: usize) -> Result<Workload, EmuError> {
        let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.001).collect();
        let y0: Vec<f32> = (0..n).map(|i| (i % 777) as f32 * 0.5).collect();
        let alpha = 1.5f32;
        let mut mem = Memory::new();
        let (px, py) = (f32_buffer(&mut mem, &x)?, f32_buffer(&mut mem, &y0)?);
        Ok(Workload {
            module,
            kernel: "saxpy",
            grid: [1024, 1, 1],
            block: [256, 1, 1],
            params: vec![
                ParamValue::i32(n as i32),
                ParamValue::f32(alpha),
                ParamValue::ptr(px),
                ParamValue::ptr(py),
            ],
            mem,
            launches: 0,
            work: Work::Saxpy {
                y: y0.clone(),
                x,
                y0,
                alpha,
                py,
            },
        })
    }

    /// Sums of 512-element blocks of `n` values (256 threads, 2 elements each, a shared-memory
    /// tree); `module` is [`BLOCK_SUM`] loaded.
    pub fn block_sum(module: LoadedModule, n: usize) -> Result<Workload, EmuError> {
        let v: Vec<f32> = (0..n).map(|i| ((i % 13) as f32 - 6.0) * 0.125).collect();
        let blocks = n / 512;
        let mut mem = Memory::new();
        let pin = f32_buffer(&mut mem, &v)?;
        let pout = f32_buffer(&mut mem, &vec![0.0; blocks])?;
        Ok(Workload {
            module,
            kernel: "block_sum",
            grid: [blocks as u32, 1, 1],
            block: [256, 1, 1],
            params: vec![
                ParamValue::ptr(pin),
                ParamValue::ptr(pout),
                ParamValue::i32(n as i32),
            ],
            mem,
            launches: 0,
            work: Work::BlockSum {
                v,
                partial: vec![0.0; blocks],
                pout,
            },
        })
    }

    /// A `d`x`d` by `d`x`d` matmul in 16x16 shared-memory tiles (`d` a multiple of 16);
    /// `module` is [`TILED_MATMUL`] loaded.
    pub fn tiled_matmul(module: LoadedModule, d: usize) -> Result<Workload, EmuError> {
        let a: Vec<f32> = (0..d * d)
            .map(|i| ((i * 7) % 13) as f32 * 0.25 - 1.0)
            .collect();
        let b: Vec<f32> = (0..d * d)
            .map(|i| ((i * 5) % 11) as f32 * 0.125 - 0.5)
            .collect();
        let mut mem = Memory::new();
        let (pa, pb) = (f32_buffer(&mut mem, &a)?, f32_buffer(&mut mem, &b)?);
        let pc = f32_buffer(&mut mem, &vec![0.0; d * d])?;
        let dd = d as i32;
        Ok(Workload {
            module,
            kernel: "matmul",
            grid: [(d / 16) as u32, (d / 16) as u32, 1],
            block: [16, 16, 1],
            params: vec![
                ParamValue::ptr(pa),
                ParamValue::ptr(pb),
                ParamValue::ptr(pc),
                ParamValue::i32(dd),
                ParamValue::i32(dd),
                ParamValue::i32(dd),
            ],
            mem,
            launches: 0,
            work: Work::Matmul {
                c: vec![0.0; d * d],
                a,
                b,
                d,
                pc,
            },
        })
    }

    /// Runs the kernel once on the emulator.
    pub fn launch(&mut self, opts: &LaunchOptions) -> Result<LaunchStats, EmuError> {
        let stats = launch(
            &self.module,
            self.kernel,
            self.grid,
            self.block,
            0,
            &self.params,
            &mut self.mem,
            opts,
        )?;
        self.launches += 1;
        Ok(stats)
    }

    /// Does the kernel's work once as a plain Rust loop (on host vectors of its own).
    pub fn native(&mut self) {
        match &mut self.work {
            Work::Saxpy {
                x, y0, alpha, y, ..
            } => {
                y.copy_from_slice(y0);
                saxpy_native(y, x, *alpha);
                std::hint::black_box(y);
            }
            Work::BlockSum { v, partial, .. } => {
                for (p, chunk) in partial.iter_mut().zip(v.chunks(512)) {
                    *p = chunk.iter().sum();
                }
                std::hint::black_box(partial);
            }
            Work::Matmul { a, b, c, d, .. } => {
                matmul_native(c, a, b, *d);
                std::hint::black_box(c);
            }
        }
    }

    /// Whether what the kernel wrote is, bit for bit, what the native loop computes (for SAXPY,
    /// as many applications as there were launches). `Ok(false)`: it differs.
    pub fn check(&mut self) -> Result<bool, EmuError> {
        self.native();
        Ok(match &self.work {
            Work::Saxpy {
                x, y0, alpha, py, ..
            } => {
                let mut want = y0.clone();
                for _ in 0..self.launches {
                    saxpy_native(&mut want, x, *alpha);
                }
                same_bits(&read_f32(&mut self.mem, *py, x.len())?, &want)
            }
            // Every value is a multiple of 1/8 with small partial sums: exact in any order.
            Work::BlockSum { partial, pout, .. } => {
                read_f32(&mut self.mem, *pout, partial.len())? == *partial
            }
            Work::Matmul { c, pc, .. } => same_bits(&read_f32(&mut self.mem, *pc, c.len())?, c),
        })
    }
}
