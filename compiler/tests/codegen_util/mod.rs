//! Shared helpers of the codegen tests: targets, running a kernel plan on the PTX emulator,
//! random inputs, single-instruction modules.
#![allow(dead_code)]

use anyhow::{anyhow, bail, Context, Result};
use compiler::{emit_kernels, CodegenTarget, KernelArg, KernelPlan, KernelRequest};
use hlo::{Array, DType, Data};
use hlo::{Computation, ComputationId, InstrId, Instruction, OpMetadata};
use hlo::{HloModule, Opcode, Shape};
use hlo_eval::dtype_of;
use ptx::emu::{launch, LaunchOptions, LoadedModule, Memory, ParamValue};

/// The H100 SXM target (sm_90).
pub fn h100() -> CodegenTarget {
    CodegenTarget {
        sm: 90,
        accelerated: false,
        ptx_version: (8, 0),
        warp_size: 32,
        max_threads_per_block: 1024,
        max_shared_memory_per_block: 48 * 1024,
        max_grid: [2_147_483_647, 65535, 65535],
        core_count: 132,
    }
}

/// The A100 SXM 80GB target (sm_80).
pub fn a100() -> CodegenTarget {
    CodegenTarget {
        sm: 80,
        core_count: 108,
        ..h100()
    }
}

/// Emits the kernels of the entry computation.
pub fn plan_entry(module: &HloModule, target: &CodegenTarget) -> Result<KernelPlan> {
    let req = KernelRequest {
        module,
        computation: module.entry,
        name: "fusion",
        target,
    };
    Ok(emit_kernels(&req)?)
}

fn to_bytes(a: &Array) -> Vec<u8> {
    // A complex element is its two parts (real, then imaginary).
    if let Some(parts) = hlo::parts_of(a) {
        return to_bytes(&parts);
    }
    let size = (a.dtype().bit_width() / 8) as usize;
    let mut out = Vec::with_capacity(a.len() * size);
    for b in a.data().to_bits() {
        out.extend_from_slice(&b.to_le_bytes()[..size]);
    }
    out
}

fn from_bytes(dtype: DType, dims: Vec<usize>, bytes: &[u8]) -> Result<Array> {
    if dtype.is_complex() {
        let mut part_dims = dims;
        part_dims.push(2);
        let parts = from_bytes(dtype.component(), part_dims, bytes)?;
        return hlo::from_parts(&parts).ok_or_else(|| anyhow!("bad complex parts"));
    }
    let size = (dtype.bit_width() / 8) as usize;
    let bits: Vec<u64> = bytes
        .chunks(size)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..size].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect();
    Ok(Array::new(dims, Data::from_bits(dtype, &bits))?)
}

/// Array leaves (dtype, dims) of a shape, in [`Shape::leaves`] order.
pub fn leaves(shape: &Shape) -> Result<Vec<(DType, Vec<usize>)>> {
    shape
        .leaves()
        .into_iter()
        .map(|(_, s)| {
            let ty = s.element_type().ok_or_else(|| anyhow!("not an array"))?;
            Ok((
                dtype_of(ty)?,
                s.dims().iter().map(|&d| d as usize).collect(),
            ))
        })
        .collect()
}

/// Runs a plan on the emulator; returns the output leaves.
pub fn run_plan(
    plan: &KernelPlan,
    inputs: &[Array],
    outputs: &[(DType, Vec<usize>)],
) -> Result<Vec<Array>> {
    run_plan_counted(plan, inputs, outputs).map(|(out, _)| out)
}

/// [`run_plan`], also returning the lane instructions all kernels executed (deterministic).
pub fn run_plan_counted(
    plan: &KernelPlan,
    inputs: &[Array],
    outputs: &[(DType, Vec<usize>)],
) -> Result<(Vec<Array>, u64)> {
    let mut lanes = 0u64;
    let mut mem = Memory::new();
    let mut in_ptrs = Vec::new();
    for a in inputs {
        let bytes = to_bytes(a);
        let p = mem.alloc(bytes.len().max(1) as u64)?;
        mem.write(p, &bytes)?;
        in_ptrs.push(p);
    }
    let mut out_ptrs = Vec::new();
    for (dt, dims) in outputs {
        let n: usize = dims.iter().product::<usize>() * (dt.bit_width() / 8) as usize;
        let p = mem.alloc(n.max(1) as u64)?;
        mem.write(p, &vec![0xAB; n])?;
        out_ptrs.push(p);
    }
    // The plan's memsets first, as the runtime runs their thunks before the kernels.
    for f in &plan.fills {
        let (dt, dims) = outputs
            .get(f.output)
            .ok_or_else(|| anyhow!("fill of output {} of {}", f.output, outputs.len()))?;
        let n: usize = dims.iter().product::<usize>() * (dt.bit_width() / 8) as usize;
        let bytes: Vec<u8> = f.word.to_le_bytes().into_iter().cycle().take(n).collect();
        mem.write(out_ptrs[f.output], &bytes)?;
    }
    let scratch = mem.alloc(plan.scratch_bytes.max(1))?;
    for k in &plan.kernels {
        let ast =
            ptx::parse(&k.ptx).map_err(|e| anyhow!("kernel {} does not parse: {e}", k.name))?;
        let loaded = LoadedModule::load(&ast)
            .map_err(|e| anyhow!("kernel {} does not load: {e}", k.name))?;
        let mut params = Vec::new();
        for a in &k.args {
            let p = match *a {
                KernelArg::Input(i) => *in_ptrs.get(i).ok_or_else(|| anyhow!("no input {i}"))?,
                KernelArg::Output(j) => *out_ptrs.get(j).ok_or_else(|| anyhow!("no output {j}"))?,
                KernelArg::Scratch { offset } => scratch.offset(offset),
            };
            params.push(ParamValue::ptr(p));
        }
        let opts = LaunchOptions {
            instruction_budget: 1 << 34,
            threads: 0,
            ..LaunchOptions::default()
        };
        let stats = launch(
            &loaded,
            &k.name,
            k.launch.grid,
            k.launch.block,
            k.dynamic_shared_bytes,
            &params,
            &mut mem,
            &opts,
        )
        .map_err(|e| anyhow!("kernel {} failed: {e}", k.name))?;
        lanes += stats.lane_instructions;
    }
    let mut out = Vec::new();
    for ((dt, dims), p) in outputs.iter().zip(&out_ptrs) {
        let n: usize = dims.iter().product::<usize>() * (dt.bit_width() / 8) as usize;
        let bytes = mem.read_vec(*p, n)?;
        out.push(from_bytes(*dt, dims.clone(), &bytes)?);
    }
    Ok((out, lanes))
}

/// Compares outputs with the expected leaves under the corpus tolerance.
pub fn check(got: &[Array], want: &[Array]) -> Result<()> {
    if got.len() != want.len() {
        bail!("{} outputs, expected {}", got.len(), want.len());
    }
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let c = hlo_eval::compare(g, w, hlo_eval::Tolerance::for_dtype(w.dtype()));
        if !c.ok {
            bail!(
                "output {k}: {:?} (max abs err {}, {} mismatches, first {:?})",
                c.structural,
                c.max_abs_err,
                c.mismatches,
                c.first
            );
        }
    }
    Ok(())
}

/// A tiny deterministic generator (xorshift).
pub struct Rng(pub u64);

impl Rng {
    /// Next 64 random bits.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// A random array: floats in [-3, 3], integers in [-6, 6] (unsigned [0, 12]), random pred.
pub fn random_array(rng: &mut Rng, dtype: DType, dims: Vec<usize>) -> Result<Array> {
    let n: usize = dims.iter().product();
    let data = match dtype {
        DType::Pred => Data::Pred((0..n).map(|_| rng.next() & 1 == 1).collect()),
        d if d.is_complex() => {
            let parts =
                (0..n).map(|_| hlo::Complex::new(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)));
            Data::from_complex(d, parts.collect())
        }
        d if d.is_float() => Data::from_wide_f(d, (0..n).map(|_| rng.range(-3.0, 3.0)).collect()),
        d if d.is_signed_int() => Data::from_wide_s(
            d,
            (0..n)
                .map(|_| rng.range(-6.0, 7.0).floor() as i64)
                .collect(),
        ),
        d => Data::from_wide_u(
            d,
            (0..n)
                .map(|_| rng.range(0.0, 13.0).floor() as u64)
                .collect(),
        ),
    };
    Ok(Array::new(dims, data)?)
}

fn param(name: String, number: usize, shape: Shape) -> Instruction {
    let attrs = hlo::Attrs {
        parameter_number: Some(number as i64),
        ..Default::default()
    };
    Instruction {
        name,
        opcode: Opcode::Parameter,
        shape,
        operands: Vec::new(),
        attrs,
        metadata: None::<OpMetadata>,
        loc: Default::default(),
    }
}

/// A copy of `module` whose entry is a new computation holding only instruction `id` of
/// computation `comp`, its operands replaced by parameters.
pub fn single_op_module(module: &HloModule, comp: ComputationId, id: InstrId) -> Result<HloModule> {
    let c = module.get(comp).context("no computation")?;
    let instr = c.get(id).context("no instruction")?.clone();
    let mut instrs = Vec::new();
    let mut params = Vec::new();
    let mut operands = Vec::new();
    for (k, &o) in instr.operands.iter().enumerate() {
        let shape = c.get(o).context("bad operand")?.shape.clone();
        params.push(InstrId(instrs.len() as u32));
        operands.push(InstrId(instrs.len() as u32));
        instrs.push(param(format!("p{k}"), k, shape));
    }
    let mut root = instr;
    root.operands = operands;
    instrs.push(root);
    let new = Computation {
        name: "single_op".into(),
        root: InstrId(instrs.len() as u32 - 1),
        instructions: instrs,
        params,
        execution_thread: None,
        loc: Default::default(),
    };
    let mut m = module.clone();
    m.config.entry_computation_layout = None;
    m.computations.push(new);
    m.entry = ComputationId(m.computations.len() as u32 - 1);
    Ok(m)
}

/// Random inputs for the entry parameters of `module`.
pub fn random_inputs(module: &HloModule, seed: u64) -> Result<Vec<Array>> {
    let mut rng = Rng(seed | 1);
    let entry = module.entry_computation();
    let mut out = Vec::new();
    for s in entry.param_shapes() {
        for (dt, dims) in leaves(s)? {
            out.push(random_array(&mut rng, dt, dims)?);
        }
    }
    Ok(out)
}

/// Evaluates, runs and compares the entry computation of `module` on `inputs`; `want` overrides
/// the reference evaluator's outputs.
pub fn run_and_compare(
    module: &HloModule,
    inputs: &[Array],
    want: Option<&[Array]>,
    target: &CodegenTarget,
) -> Result<()> {
    let plan = plan_entry(module, target)?;
    let root_shape = &module.entry_computation()[module.entry_computation().root].shape;
    let outs = leaves(root_shape)?;
    let got = run_plan(&plan, inputs, &outs)?;
    let expected = match want {
        Some(w) => w.to_vec(),
        None => hlo_eval::evaluate_flat(module, inputs)?,
    };
    check(&got, &expected)
}

/// Assembles every kernel of a plan with ptxas for `gpu`; Ok(false) when ptxas is absent.
pub fn ptxas_plan(plan: &KernelPlan, gpu: &str) -> Result<bool> {
    if ptx::ptxas::find().is_none() {
        return Ok(false);
    }
    for k in &plan.kernels {
        ptx::ptxas::assemble(&k.ptx, gpu)
            .map_err(|e| anyhow!("ptxas {gpu} rejects {}: {e}", k.name))?;
    }
    Ok(true)
}

fn inline_into(
    module: &HloModule,
    comp: &Computation,
    args: &[InstrId],
    out: &mut Vec<Instruction>,
    suffix: &str,
) -> Result<InstrId> {
    let mut map: Vec<InstrId> = Vec::with_capacity(comp.instructions.len());
    for (id, instr) in comp.iter() {
        let ops: Vec<InstrId> = instr
            .operands
            .iter()
            .map(|o| map.get(o.index()).copied().context("operand defined later"))
            .collect::<Result<_>>()?;
        let new_id = if instr.opcode == Opcode::Parameter {
            let n = instr.parameter_number().unwrap_or(0) as usize;
            *args.get(n).context("missing argument")?
        } else if instr.opcode == Opcode::Call {
            let callee = instr.attrs.to_apply.context("call without to_apply")?;
            let c = module.get(callee).context("bad callee")?;
            inline_into(module, c, &ops, out, &format!("{suffix}_{}", id.0))?
        } else {
            let mut i = instr.clone();
            i.operands = ops;
            i.name = format!("{}{suffix}", i.name);
            out.push(i);
            InstrId(out.len() as u32 - 1)
        };
        map.push(new_id);
    }
    map.get(comp.root.index()).copied().context("no root")
}

/// The module with every `call` in its entry computation inlined (as the pipeline's inliner
/// does before fusion).
pub fn inline_calls(module: &HloModule) -> Result<HloModule> {
    let entry = module.entry_computation();
    let mut out = Vec::new();
    let mut params = Vec::new();
    for &p in &entry.params {
        let mut i = entry.get(p).context("bad param")?.clone();
        i.operands.clear();
        params.push(InstrId(out.len() as u32));
        out.push(i);
    }
    // Parameters are re-created first; inline the body with them as arguments.
    let mut body = Computation {
        params: Vec::new(),
        ..entry.clone()
    };
    body.instructions = entry
        .instructions
        .iter()
        .map(|i| {
            let mut i = i.clone();
            if i.opcode == Opcode::Parameter {
                i.operands.clear();
            }
            i
        })
        .collect();
    let root = inline_into(module, &body, &params, &mut out, "")?;
    let mut m = module.clone();
    let e = m.entry.index();
    let c = m.computations.get_mut(e).context("entry")?;
    c.instructions = out;
    c.params = params;
    c.root = root;
    Ok(m)
}
