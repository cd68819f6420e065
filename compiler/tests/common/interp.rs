//! A small thunk interpreter for tests: runs an executable's kernel, copy, memset and gemm
//! thunks (and while/conditional sequences) on the `ptx` emulator, so the compiler's output can
//! be checked against the reference results without the runtime. Not a runtime: no validation
//! beyond what the tests need, no collectives, no custom calls.
use std::collections::HashMap;

use hlo::{Array, DType, Data};
use proto::xla::gpu::{thunk_proto::Impl, GpuExecutableProto, MatrixLayoutProto, ThunkProto};
use ptx::emu::{self, DevicePtr, LaunchOptions, LoadedModule, Memory, ParamValue};

/// Global-memory traffic and launch counts of one run.
#[derive(Debug, Default, Clone, Copy)]
pub struct Traffic {
    /// Bytes read by kernels, copies and gemms.
    pub read: u64,
    /// Bytes written.
    pub written: u64,
    /// Kernel launches executed (dynamic count).
    pub launches: u64,
}

struct Machine<'a> {
    mem: Memory,
    bases: Vec<DevicePtr>,
    modules: HashMap<String, LoadedModule>,
    traffic: Traffic,
    exe: &'a GpuExecutableProto,
}

/// Bytes of an array, row-major little-endian.
pub fn to_bytes(a: &Array) -> Vec<u8> {
    // A complex element is its two parts (real, then imaginary).
    if let Some(parts) = hlo::parts_of(a) {
        return to_bytes(&parts);
    }
    let w = (a.dtype().bit_width() / 8) as usize;
    let mut out = Vec::with_capacity(a.len() * w);
    for bits in a.data().to_bits() {
        out.extend_from_slice(&bits.to_le_bytes()[..w]);
    }
    out
}

/// An array from bytes.
pub fn from_bytes(dtype: DType, dims: &[usize], bytes: &[u8]) -> Array {
    if dtype.is_complex() {
        let mut part_dims = dims.to_vec();
        part_dims.push(2);
        let parts = from_bytes(dtype.component(), &part_dims, bytes);
        return hlo::from_parts(&parts).expect("complex parts");
    }
    let w = (dtype.bit_width() / 8) as usize;
    let bits: Vec<u64> = bytes
        .chunks(w)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect();
    Array::new(dims.to_vec(), Data::from_bits(dtype, &bits)).expect("element count")
}

/// Runs the executable on `args` (one per entry parameter, array parameters only); returns
/// the bytes of every output leaf (`sizes[i]` bytes each) and the traffic.
pub fn run(
    exe: &GpuExecutableProto,
    args: &[Vec<u8>],
    sizes: &[usize],
) -> Result<(Vec<Vec<u8>>, Traffic), String> {
    let mut mem = Memory::new();
    let allocs = exe
        .buffer_allocations
        .as_ref()
        .map(|a| a.values.clone())
        .unwrap_or_default();
    let mut bases = Vec::new();
    for a in &allocs {
        let p = mem
            .alloc((a.size as u64).max(1))
            .map_err(|e| e.to_string())?;
        if a.is_entry_computation_parameter {
            let arg = args
                .get(a.parameter_number as usize)
                .ok_or_else(|| format!("no argument {}", a.parameter_number))?;
            if arg.len() as i64 != a.size {
                return Err(format!(
                    "argument {} has {} bytes, allocation {}",
                    a.parameter_number,
                    arg.len(),
                    a.size
                ));
            }
            mem.write(p, arg).map_err(|e| e.to_string())?;
        }
        bases.push(p);
    }
    for c in &exe.constants {
        let bytes =
            &exe.binary[c.offset_in_binary as usize..(c.offset_in_binary + c.size) as usize];
        mem.write(bases[c.allocation_index as usize], bytes)
            .map_err(|e| e.to_string())?;
    }
    let mut m = Machine {
        mem,
        bases,
        modules: HashMap::new(),
        traffic: Traffic::default(),
        exe,
    };
    m.sequence(&exe.thunks)?;
    let mut outs = Vec::new();
    for (o, &size) in exe.output_info_map.iter().zip(sizes) {
        let a = o.output_info.as_ref().map_or(0, |i| i.allocation_index) as usize;
        outs.push(
            m.mem
                .read_vec(m.bases[a], size)
                .map_err(|e| e.to_string())?,
        );
    }
    let _ = m.exe;
    Ok((outs, m.traffic))
}

impl Machine<'_> {
    fn ptr(&self, s: &proto::xla::buffer_assignment::BufferAllocationSliceProto) -> DevicePtr {
        self.bases[s.buffer_allocation_index as usize].offset(s.offset as u64)
    }

    fn read(
        &mut self,
        s: &Option<proto::xla::buffer_assignment::BufferAllocationSliceProto>,
    ) -> Result<Vec<u8>, String> {
        let s = s.as_ref().ok_or("missing slice")?;
        let p = self.ptr(s);
        self.mem
            .read_vec(p, s.size as usize)
            .map_err(|e| e.to_string())
    }

    fn sequence(&mut self, thunks: &[ThunkProto]) -> Result<(), String> {
        for t in thunks {
            self.thunk(t)?;
        }
        Ok(())
    }

    fn thunk(&mut self, t: &ThunkProto) -> Result<(), String> {
        match t.r#impl.as_ref().ok_or("impl unset")? {
            Impl::SequentialThunk(s) => self.sequence(&s.thunks)?,
            Impl::KernelThunk(k) => {
                let ptx_text = k
                    .kernel_binary
                    .as_ref()
                    .map(|b| b.ptx.clone())
                    .unwrap_or_default();
                if !self.modules.contains_key(&k.kernel_name) {
                    let ast =
                        ptx::parse(&ptx_text).map_err(|e| format!("{}: {e}", k.kernel_name))?;
                    let loaded =
                        LoadedModule::load(&ast).map_err(|e| format!("{}: {e}", k.kernel_name))?;
                    self.modules.insert(k.kernel_name.clone(), loaded);
                }
                let params: Vec<ParamValue> = k
                    .args
                    .iter()
                    .map(|a| ParamValue::ptr(self.ptr(a)))
                    .collect();
                let l = k.launch_dimensions.unwrap_or_default();
                let d = |v: Option<proto::xla::gpu::Dim3DProto>| {
                    let v = v.unwrap_or_default();
                    [v.x as u32, v.y as u32, v.z as u32]
                };
                let module = &self.modules[&k.kernel_name];
                let stats = emu::launch(
                    module,
                    &k.kernel_name,
                    d(l.block_counts),
                    d(l.thread_counts_per_block),
                    k.shmem_bytes as u32,
                    &params,
                    &mut self.mem,
                    &LaunchOptions::default(),
                )
                .map_err(|e| format!("{}: {e}", k.kernel_name))?;
                self.traffic.read += stats.global_bytes_read;
                self.traffic.written += stats.global_bytes_written;
                self.traffic.launches += 1;
            }
            Impl::CopyThunk(c) => {
                let mut bytes = self.read(&c.source_buffer)?;
                bytes.truncate(c.mem_size as usize);
                let dst = c
                    .destination_buffer
                    .as_ref()
                    .ok_or("copy without destination")?;
                let p = self.ptr(dst);
                self.mem.write(p, &bytes).map_err(|e| e.to_string())?;
                self.traffic.read += bytes.len() as u64;
                self.traffic.written += bytes.len() as u64;
            }
            Impl::MemzeroThunk(z) => {
                let s = z
                    .dest_buffer
                    .as_ref()
                    .and_then(|b| b.slice)
                    .ok_or("memzero without slice")?;
                let p = self.ptr(&s);
                self.mem
                    .write(p, &vec![0u8; s.size as usize])
                    .map_err(|e| e.to_string())?;
            }
            Impl::Memset32bitValueThunk(m) => {
                let s = m.dest_buffer.ok_or("memset without slice")?;
                let bytes: Vec<u8> = m
                    .value
                    .to_le_bytes()
                    .iter()
                    .copied()
                    .cycle()
                    .take(s.size as usize)
                    .collect();
                let p = self.ptr(&s);
                self.mem.write(p, &bytes).map_err(|e| e.to_string())?;
            }
            Impl::GemmThunk(g) => self.gemm(g)?,
            Impl::WhileThunk(w) => {
                let cond = w.condition_thunk_sequence.clone().unwrap_or_default();
                let body = w.body_thunk_sequence.clone().unwrap_or_default();
                for _ in 0..1_000_000 {
                    self.sequence(&cond.thunks)?;
                    let pred = self.read(&w.condition_result_buffer_index)?;
                    if pred.first().copied().unwrap_or(0) == 0 {
                        return Ok(());
                    }
                    self.sequence(&body.thunks)?;
                }
                return Err("while loop did not finish".into());
            }
            Impl::ConditionalThunk(c) => {
                let idx = self.read(&c.branch_index_buffer.as_ref().and_then(|b| b.slice))?;
                let n = c.branch_thunks.len();
                let branch = if c.branch_index_is_bool {
                    if idx.first().copied().unwrap_or(0) != 0 {
                        0
                    } else {
                        1
                    }
                } else {
                    let v = i32::from_le_bytes([idx[0], idx[1], idx[2], idx[3]]);
                    if v < 0 || v as usize >= n {
                        n - 1
                    } else {
                        v as usize
                    }
                };
                let seq = c.branch_thunks.get(branch).cloned().unwrap_or_default();
                self.sequence(&seq.thunks)?;
            }
            other => return Err(format!("the test interpreter does not run {other:?}")),
        }
        Ok(())
    }

    fn gemm(&mut self, g: &proto::xla::gpu::GemmThunkProto) -> Result<(), String> {
        let cfg = g.gemm_config.clone().ok_or("gemm without config")?;
        let (ll, rl, ol) = (
            cfg.lhs_layout.ok_or("no lhs layout")?,
            cfg.rhs_layout.ok_or("no rhs layout")?,
            cfg.output_layout.ok_or("no output layout")?,
        );
        let lhs = self.read(&g.lhs_buffer)?;
        let rhs = self.read(&g.rhs_buffer)?;
        self.traffic.read += (lhs.len() + rhs.len()) as u64;
        let dtype = |d: i32| -> Result<DType, String> {
            let t = proto::xla::PrimitiveType::try_from(d).map_err(|e| e.to_string())?;
            let t = hlo::element_type_from_proto(t).ok_or("gemm dtype")?;
            hlo_eval::dtype_of(t).map_err(|e| e.to_string())
        };
        let load = |bytes: &[u8], l: &MatrixLayoutProto| -> Result<Vec<f64>, String> {
            let dt = dtype(l.dtype)?;
            let n = bytes.len() / (dt.bit_width() / 8) as usize;
            Ok(from_bytes(dt, &[n], bytes).data().to_f64_vec())
        };
        let a = load(&lhs, &ll)?;
        let b = load(&rhs, &rl)?;
        // Element (r, c) of op(X) for batch bt.
        let at = |x: &[f64], l: &MatrixLayoutProto, bt: i64, r: i64, c: i64| -> f64 {
            let (r, c) = if l.transpose { (c, r) } else { (r, c) };
            let i = if l.order == 0 {
                bt * l.batch_stride + r * l.leading_dim_stride + c
            } else {
                bt * l.batch_stride + c * l.leading_dim_stride + r
            };
            x.get(i as usize).copied().unwrap_or(f64::NAN)
        };
        let k = if ll.transpose {
            ll.num_rows
        } else {
            ll.num_cols
        };
        let mut out = vec![0f64; (ol.batch_size * ol.num_rows * ol.num_cols) as usize];
        for bt in 0..ol.batch_size {
            for r in 0..ol.num_rows {
                for c in 0..ol.num_cols {
                    let mut acc = 0f32;
                    let mut acc64 = 0f64;
                    for kk in 0..k {
                        let p = at(&a, &ll, bt, r, kk) * at(&b, &rl, bt, kk, c);
                        acc += p as f32;
                        acc64 += p;
                    }
                    let v = if cfg.compute_type == proto::xla::PrimitiveType::F32 as i32 {
                        f64::from(acc)
                    } else {
                        acc64
                    };
                    out[(bt * ol.batch_stride + r * ol.leading_dim_stride + c) as usize] =
                        cfg.alpha_real * v;
                }
            }
        }
        let odt = dtype(ol.dtype)?;
        let arr = Array::new(vec![out.len()], Data::F64(out))
            .map_err(|e| e.to_string())?
            .convert(odt);
        let bytes = to_bytes(&arr);
        let dst = g.output_buffer.as_ref().ok_or("gemm without output")?;
        let p = self.ptr(dst);
        self.mem.write(p, &bytes).map_err(|e| e.to_string())?;
        self.traffic.written += bytes.len() as u64;
        Ok(())
    }
}
