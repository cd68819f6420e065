//! `aot run ARTIFACT --target-config T.txtpb --io CASE.io.json [--replicas N] [--partitions N]`:
//! load a serialized executable in the runtime, execute it with the io file's inputs and compare
//! with its outputs.
//!
//! Output: one verdict line per output leaf (per replica when there are several; per device,
//! `device D`, when the executable has several partitions), in `aot eval`'s format, then a
//! summary line. Exit status: 0 every output matches, 1 a mismatch, 2 an error
//! (the load error is printed with its absl code, e.g. `FAILED_PRECONDITION: ...`).
//!
//! `--write-outputs FILE` (here, in `aot check-hlo` and `aot eval`) also writes the outputs the
//! command computed as an io file (`{"inputs": [...], "outputs": [...]}`, the inputs it ran with,
//! [`hlo_eval::case_to_json`]), whether or not they match; with several replicas, replica `r`'s go
//! to [`replica_path`] (`out.io.json` -> `out.replica0.io.json`, the goldens' naming); with
//! several partitions, device `d`'s (replica `d / P`, partition `d % P`) to [`device_path`]
//! (`out.device0.io.json`). `--io` takes the same files: one for every device, or one per device.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use hlo::Array;
use hlo_eval::{IoCase, Tolerance};
use runtime::{Device, DeviceDescription, EmulatedDevice, Executable, RuntimeFlags};

/// Arguments of `aot run`.
mod io_files;
mod verdict;

use io_files::expected_of;
pub use io_files::{device_path, io_array_bytes, io_array_from_bytes, replica_path, write_outputs};
use verdict::json_f64;
pub use verdict::{first_mismatch, report, verdicts, Output, Verdict};

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Serialized executable (`GpuExecutableProto`, protobuf binary).
    pub artifact: PathBuf,
    /// Target config (`.txtpb`) describing the device to run on.
    #[arg(long)]
    pub target_config: PathBuf,
    /// Inputs and expected outputs; give one per device (replica order; with several
    /// partitions, device order: device d is replica d / P, partition d % P) or one for all.
    #[arg(long, required = true)]
    pub io: Vec<PathBuf>,
    /// Replicas to run (default: the executable's replica_count; must equal it).
    #[arg(long)]
    pub replicas: Option<usize>,
    /// Partitions to run (default: the executable's num_partitions; must equal it).
    #[arg(long)]
    pub partitions: Option<usize>,
    /// Turn the command-buffer load-time pass off.
    #[arg(long)]
    pub no_command_buffers: bool,
    /// Also write the computed outputs (with the inputs) to this io file, match or not; with
    /// several replicas, `FILE` with `.replicaR` before its extension, one per replica (with
    /// several partitions `.deviceD`, one per device).
    #[arg(long, value_name = "FILE")]
    pub write_outputs: Option<PathBuf>,
    /// Device: `emulated` (default) or `cuda`.
    #[arg(long, default_value = "emulated")]
    pub device: String,
    /// Print every kernel launch of replica 0 (lane-instructions, time, achieved lane-instructions/s, bytes, bandwidth) and the largest one
    /// (turns the command-buffer pass off, so that each launch is timed on its own).
    #[arg(long)]
    pub profile: bool,
    /// Print `timing: load_ms=... execute_ms=... repeats=N`: the load time and the median of N
    /// executions after the compared one (a warm-up), to compare with a framework's timings.
    #[arg(long)]
    pub timing: bool,
    /// Executions timed by `--timing` (default 5; implies `--timing`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub repeat: Option<u32>,
    /// Time executions whose inputs are already on the device (uploaded once, as a serving host
    /// keeps weights there and a framework passes device arrays) and that read nothing back, so
    /// `execute_ms` is the device's work alone; one device only (implies `--timing`).
    #[arg(long)]
    pub resident_inputs: bool,
    /// Output format: `text` (verdict lines) or `json` (one object: the verdicts, the
    /// tolerance, `--timing`'s and `--profile`'s figures, the summary).
    #[arg(long, value_enum, default_value_t = RunFormat::Text)]
    pub format: RunFormat,
    /// PTX whose `.entry` kernels supply the kernels of an artifact that carries only cubins
    /// (XLA:GPU's; XLA dumps them with `--xla_dump_to`); repeat for each file.
    #[arg(long, value_name = "FILE.ptx")]
    pub kernel_ptx: Vec<PathBuf>,
    /// Limits on hostile or runaway artifacts (RuntimeFlags).
    #[command(flatten)]
    pub limits: LimitArgs,
}

impl RunArgs {
    /// `aot run ARTIFACT --target-config T --io IO...` with every other option at its CLI
    /// default (for callers that build the arguments in code: `RunArgs { profile: true,
    /// ..RunArgs::new(...) }`).
    pub fn new(artifact: PathBuf, target_config: PathBuf, io: Vec<PathBuf>) -> RunArgs {
        RunArgs {
            artifact,
            target_config,
            io,
            replicas: None,
            partitions: None,
            no_command_buffers: false,
            write_outputs: None,
            device: "emulated".into(),
            profile: false,
            timing: false,
            repeat: None,
            resident_inputs: false,
            format: RunFormat::Text,
            kernel_ptx: Vec::new(),
            limits: LimitArgs::default(),
        }
    }
}

/// How `aot run` prints its result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RunFormat {
    /// Verdict lines, as `aot eval` prints them, and a summary line.
    #[default]
    Text,
    /// One JSON object (see [`load_run_compare`]).
    Json,
}

/// Which tolerance outputs are compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToleranceRule {
    /// [`Tolerance::for_dtype`]: the project's compiler against the reference evaluator.
    PerDtype,
    /// An XLA:GPU executable against XLA:CPU's outputs. XLA:GPU's emitted transcendentals
    /// (`ex2.approx`, its own `tanh`, `exp`, `log` expansions) differ from XLA:CPU's in the last
    /// bits, so f32 is held to 1e-4 absolute and relative instead of 1e-5/1e-4. When the module
    /// has a dot (`tf32`), its f32 dots run in TF32, XLA:GPU's default precision on Ampere and
    /// Hopper: operands rounded to 10 mantissa bits, an error of about 2^-11 of each product, so
    /// it scales with the operands rather than with the result (a small element of a large dot
    /// has a large relative error): f32 is held to 2e-3 of the output's largest magnitude (at
    /// least 1) absolute, and 1e-2 relative.
    XlaGpu {
        /// The module has a dot (f32 dots run in TF32).
        tf32: bool,
    },
}

impl ToleranceRule {
    /// The tolerance of one output, given its expected values.
    pub fn tolerance(self, want: &Array) -> Tolerance {
        use hlo::DType;
        let dtype = want.dtype();
        match (self, dtype) {
            (ToleranceRule::XlaGpu { tf32: true }, DType::F32 | DType::C64) => {
                let largest = want
                    .data()
                    .to_f64_vec()
                    .into_iter()
                    .filter(|v| v.is_finite())
                    .fold(1.0f64, |m, v| m.max(v.abs()));
                Tolerance {
                    atol: 2e-3 * largest,
                    rtol: 1e-2,
                }
            }
            (ToleranceRule::XlaGpu { tf32: false }, DType::F32 | DType::C64) => Tolerance {
                atol: 1e-4,
                rtol: 1e-4,
            },
            _ => Tolerance::for_dtype(dtype),
        }
    }

    /// The line `aot run` prints to say which rule it used.
    pub fn describe(self) -> &'static str {
        match self {
            ToleranceRule::PerDtype => "tolerance: per dtype (f32 atol=1e-5 rtol=1e-4)",
            ToleranceRule::XlaGpu { tf32: true } => {
                "tolerance: XLA:GPU vs XLA:CPU, f32 dots in TF32 (f32 atol=2e-3*max(1,max|want|) rtol=1e-2; other dtypes per dtype)"
            }
            ToleranceRule::XlaGpu { tf32: false } => {
                "tolerance: XLA:GPU vs XLA:CPU, transcendentals differ in the last bits (f32 atol=1e-4 rtol=1e-4; other dtypes per dtype)"
            }
        }
    }

    /// The rule for an executable run with supplied PTX (XLA:GPU's) or without (the project's),
    /// from its census (`opcode:dot` and `opcode:convolution` mean TF32 on XLA:GPU).
    pub fn for_executable(executable: &[u8], xla: bool) -> ToleranceRule {
        if !xla {
            return ToleranceRule::PerDtype;
        }
        let census = crate::golden::census::census_of_bytes(executable).unwrap_or_default();
        let tf32 = census
            .iter()
            .any(|c| c == "opcode:dot" || c == "opcode:convolution");
        ToleranceRule::XlaGpu { tf32 }
    }
}

/// Reads `--kernel-ptx` files into the index the runtime resolves cubin-only kernels with.
pub fn read_kernel_ptx(paths: &[PathBuf]) -> anyhow::Result<runtime::KernelPtx> {
    let files = paths
        .iter()
        .map(|p| {
            std::fs::read_to_string(p)
                .map(|t| (p.display().to_string(), t))
                .with_context(|| format!("cannot read --kernel-ptx {}", p.display()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(runtime::KernelPtx::new(files)?)
}

/// The runtime's limits as options (defaults: [`RuntimeFlags::default`]).
#[derive(Debug, clap::Args)]
pub struct LimitArgs {
    /// Largest replica_count accepted (RuntimeFlags::max_replicas).
    #[arg(long, default_value_t = RuntimeFlags::default().max_replicas)]
    pub max_replicas: u64,
    /// Largest num_partitions accepted (RuntimeFlags::max_partitions).
    #[arg(long, default_value_t = RuntimeFlags::default().max_partitions)]
    pub max_partitions: u64,
    /// The most elements of an entry parameter or result array
    /// (RuntimeFlags::max_array_elements).
    #[arg(long, default_value_t = RuntimeFlags::default().max_array_elements)]
    pub max_array_elements: u64,
    /// Longest wall time of one execution, in seconds (RuntimeFlags::max_execution_secs).
    #[arg(long, default_value_t = RuntimeFlags::default().max_execution_secs)]
    pub max_execution_secs: u64,
    /// Most iterations of one while loop (RuntimeFlags::max_while_iterations).
    #[arg(long, default_value_t = RuntimeFlags::default().max_while_iterations)]
    pub max_while_iterations: u64,
    /// Seconds a device waits at a collective for its group, within --max-execution-secs
    /// (RuntimeFlags::collective_timeout_secs).
    #[arg(long, default_value_t = RuntimeFlags::default().collective_timeout_secs)]
    pub collective_timeout_secs: u64,
    /// Most bytes the emulated device allocates (RuntimeFlags::emulator_host_memory_bytes).
    #[arg(long, default_value_t = RuntimeFlags::default().emulator_host_memory_bytes)]
    pub emulator_host_memory_bytes: u64,
    /// Most bytes of `.local` memory one emulated launch writes
    /// (RuntimeFlags::emulator_local_memory_bytes).
    #[arg(long, default_value_t = RuntimeFlags::default().emulator_local_memory_bytes)]
    pub emulator_local_memory_bytes: u64,
    /// Initcheck on the emulated device: a kernel read of bytes nothing wrote is an error
    /// (RuntimeFlags::emulator_initcheck).
    #[arg(long)]
    pub emulator_initcheck: bool,
    /// Racecheck on the emulated device: shared-memory accesses of two warps between barriers,
    /// one writing, are an error (RuntimeFlags::emulator_racecheck).
    #[arg(long)]
    pub emulator_racecheck: bool,
}

impl Default for LimitArgs {
    fn default() -> Self {
        let d = RuntimeFlags::default();
        LimitArgs {
            max_replicas: d.max_replicas,
            max_partitions: d.max_partitions,
            max_array_elements: d.max_array_elements,
            max_execution_secs: d.max_execution_secs,
            max_while_iterations: d.max_while_iterations,
            collective_timeout_secs: d.collective_timeout_secs,
            emulator_host_memory_bytes: d.emulator_host_memory_bytes,
            emulator_local_memory_bytes: d.emulator_local_memory_bytes,
            emulator_initcheck: d.emulator_initcheck,
            emulator_racecheck: d.emulator_racecheck,
        }
    }
}

impl LimitArgs {
    /// `base` with these limits.
    pub fn apply(&self, base: RuntimeFlags) -> RuntimeFlags {
        RuntimeFlags {
            max_replicas: self.max_replicas,
            max_partitions: self.max_partitions,
            max_array_elements: self.max_array_elements,
            max_execution_secs: self.max_execution_secs,
            max_while_iterations: self.max_while_iterations,
            collective_timeout_secs: self.collective_timeout_secs,
            emulator_host_memory_bytes: self.emulator_host_memory_bytes,
            emulator_local_memory_bytes: self.emulator_local_memory_bytes,
            emulator_initcheck: self.emulator_initcheck,
            emulator_racecheck: self.emulator_racecheck,
            ..base
        }
    }
}

/// The device a target config file describes; its errors name the file (once).
pub fn target_description(target_config: &Path) -> anyhow::Result<DeviceDescription> {
    // The parser's errors already say `target config FILE:line:col`.
    let config = proto::load_target_config(target_config)?;
    DeviceDescription::from_target_config(&config)
        .with_context(|| target_config.display().to_string())
}

/// Builds `count` devices of `kind` that `description` describes (a target config's,
/// [`target_description`]); emulated ones read `flags` (the per-launch instruction budget and
/// wall-time limit).
pub fn make_devices(
    kind: &str,
    description: &DeviceDescription,
    count: usize,
    flags: &RuntimeFlags,
) -> anyhow::Result<Vec<Arc<dyn Device>>> {
    (0..count)
        .map(|i| -> anyhow::Result<Arc<dyn Device>> {
            Ok(match kind {
                "emulated" => Arc::new(EmulatedDevice::new(description.clone()).with_flags(flags)),
                "cuda" => Arc::new(runtime::CudaDevice::new(i, description.clone())?),
                other => bail!("unknown device {other:?} (emulated or cuda)"),
            })
        })
        .collect()
}

/// Executes `exe` on `devices` (one per replica and partition, in device order) with per-device
/// inputs; the outputs as arrays and device 0's counters.
pub fn execute_arrays(
    exe: &Executable,
    devices: &[Arc<dyn Device>],
    inputs: &[Vec<Array>],
) -> anyhow::Result<(Vec<Vec<Array>>, runtime::ExecutionStats)> {
    let (got, stats) = execute_reading(exe, devices, inputs, &[])?;
    // Every output was read: none is `None`.
    let got = got
        .into_iter()
        .map(|device| device.into_iter().flatten().collect())
        .collect();
    Ok((got, stats))
}

/// [`execute_arrays`] reading back only the outputs `read` selects
/// ([`Executable::execute_reading`]); the others are `None`.
pub fn execute_reading(
    exe: &Executable,
    devices: &[Arc<dyn Device>],
    inputs: &[Vec<Array>],
    read: &[bool],
) -> anyhow::Result<(Vec<Vec<Option<Array>>>, runtime::ExecutionStats)> {
    let args: Vec<Vec<Vec<u8>>> = inputs
        .iter()
        .map(|case| case.iter().map(runtime::array_to_bytes).collect())
        .collect();
    let results = if devices.len() == 1 && exe.num_devices() == 1 {
        let refs: Vec<&[u8]> = args[0].iter().map(Vec::as_slice).collect();
        vec![exe.execute_reading(devices[0].as_ref(), &refs, read)?]
    } else {
        exe.execute_replicated_reading(devices, &args, read)?
    };
    // Counters are replica 0's; the behaviour classes are every replica's (a collective's group
    // order, say, differs by replica).
    let mut stats = results.first().map(|r| r.stats.clone()).unwrap_or_default();
    for r in results.iter().skip(1) {
        stats.behaviours.extend(r.stats.behaviours.iter().cloned());
    }
    let arrays = results
        .into_iter()
        .map(|r| {
            r.outputs
                .iter()
                .zip(&exe.outputs)
                .enumerate()
                .map(|(i, (bytes, leaf))| {
                    if !read.get(i).copied().unwrap_or(true) {
                        return Ok(None);
                    }
                    runtime::array_from_bytes(leaf.element_type, &leaf.dims, bytes)
                        .map(Some)
                        .map_err(anyhow::Error::from)
                })
                .collect()
        })
        .collect::<anyhow::Result<Vec<Vec<Option<Array>>>>>()?;
    Ok((arrays, stats))
}

/// Which outputs a comparison with `cases` needs read back: those some case expects with the
/// leaf's dimensions. Any other is a shape mismatch whatever its bytes ([`compare`] reports
/// differing dimensions before it looks at an element), so it is not read.
fn outputs_to_read(exe: &Executable, cases: &[&IoCase]) -> Vec<bool> {
    exe.outputs
        .iter()
        .enumerate()
        .map(|(i, leaf)| {
            let dims: Option<Vec<usize>> =
                leaf.dims.iter().map(|&d| usize::try_from(d).ok()).collect();
            cases.iter().any(|c| {
                c.outputs
                    .get(i)
                    .is_some_and(|w| Some(w.dims()) == dims.as_deref())
            })
        })
        .collect()
}

/// How a leaf's shape is printed, as the array read back would print it (`f32[2,3]`).
fn leaf_shape_string(leaf: &runtime::Leaf) -> String {
    let dims: Vec<String> = leaf.dims.iter().map(|d| d.to_string()).collect();
    match hlo::DType::from_primitive(leaf.element_type) {
        Some(t) => format!("{t}[{}]", dims.join(",")),
        None => format!("{}[{}]", leaf.element_type, dims.join(",")),
    }
}

/// The replicas and partitions asked for on the command line (`None`: the executable's own);
/// a count that differs from the executable's is an error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceCounts {
    /// `--replicas`.
    pub replicas: Option<usize>,
    /// `--partitions`.
    pub partitions: Option<usize>,
}

impl DeviceCounts {
    /// The devices `exe` runs on, after checking the asked-for counts against its own.
    pub fn devices_for(self, exe: &Executable) -> anyhow::Result<usize> {
        for (asked, own, flag, field) in [
            (
                self.replicas,
                exe.num_replicas,
                "--replicas",
                "replica_count",
            ),
            (
                self.partitions,
                exe.num_partitions,
                "--partitions",
                "num_partitions",
            ),
        ] {
            if let Some(n) = asked.filter(|&n| n as u64 != own) {
                bail!("{flag} {n}, but the executable's {field} is {own}");
            }
        }
        Ok(exe.num_devices() as usize)
    }
}

/// How verdict lines and per-device files name device `d` of `exe`: by replica when it has one
/// partition (as before partitions), else by device id.
fn device_label(exe: &Executable, d: usize) -> (String, &'static str) {
    if exe.num_partitions > 1 {
        (format!("device {d} "), "device")
    } else {
        (format!("replica {d} "), "replica")
    }
}

/// Loads `bytes` on devices the target config describes (`target`, read once by the caller:
/// [`target_description`]), runs every device (each replica and
/// partition) with its io case and prints verdicts; with `write_outputs`, also writes the
/// computed outputs there (per replica, [`replica_path`], or per device, [`device_path`], when
/// there are several) before they are compared. `Ok(true)` when everything matches.
#[allow(clippy::too_many_arguments)]
pub fn load_run_compare(
    bytes: &[u8],
    device_kind: &str,
    target: &DeviceDescription,
    io: &[PathBuf],
    counts: DeviceCounts,
    flags: &RuntimeFlags,
    extras: RunReport,
    write_outputs: Option<&Path>,
    kernel_ptx: Option<&runtime::KernelPtx>,
    out: &mut dyn Write,
) -> anyhow::Result<bool> {
    let probe = make_devices(device_kind, target, 1, flags)?;
    let started = std::time::Instant::now();
    let exe = match kernel_ptx {
        Some(k) => runtime::load_with_kernel_ptx(
            bytes,
            probe[0].as_ref(),
            flags,
            &runtime::Registry::builtin(),
            k,
        )?,
        None => runtime::load(bytes, probe[0].as_ref(), flags)?,
    };
    let load_time = started.elapsed();
    let rule = ToleranceRule::for_executable(bytes, kernel_ptx.is_some());
    let n = counts.devices_for(&exe)?;
    let expected = expected_of(&exe);
    let cases = io
        .iter()
        .map(|p| {
            crate::npz::read_case(p, &expected)
                .with_context(|| format!("cannot load {}", p.display()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (_, unit) = device_label(&exe, 0);
    let cases: Vec<&IoCase> = match cases.len() {
        1 => std::iter::repeat_n(&cases[0], n).collect(),
        k if k == n => cases.iter().collect(),
        k => bail!("{k} io files for {n} {unit}s (give one, or one per {unit})"),
    };
    let devices = if n == 1 {
        probe
    } else {
        make_devices(device_kind, target, n, flags)?
    };
    let inputs: Vec<Vec<Array>> = cases.iter().map(|c| c.inputs.clone()).collect();
    // Only what the comparison (or --write-outputs) needs is read back.
    let read = match write_outputs {
        Some(_) => Vec::new(),
        None => outputs_to_read(&exe, &cases),
    };
    let (got, stats) = execute_reading(&exe, &devices, &inputs, &read)?;
    let timing = match extras.timing {
        // The run above was the warm-up (first execution: command buffers recorded, caches
        // filled); the median of the next `repeats` is what a serving host sees.
        Some(repeats) if extras.resident_inputs => {
            let (mut times, in_place) = timed_resident(&exe, &devices, &inputs, repeats)?;
            Some(Timing::of(load_time, &mut times).on_device(in_place))
        }
        Some(repeats) => {
            let mut times = Vec::with_capacity(repeats as usize);
            for _ in 0..repeats {
                let t = std::time::Instant::now();
                execute_reading(&exe, &devices, &inputs, &read)?;
                times.push(t.elapsed());
            }
            Some(Timing::of(load_time, &mut times))
        }
        None => None,
    };
    if let Some(path) = write_outputs {
        for (r, (g, i)) in got.iter().zip(&inputs).enumerate() {
            let path = if n == 1 {
                path.to_owned()
            } else if exe.num_partitions > 1 {
                device_path(path, r)
            } else {
                replica_path(path, r)
            };
            let g: Vec<Array> = g.iter().flatten().cloned().collect();
            self::write_outputs(&path, i, &g)?;
        }
    }
    let mut all = Vec::new();
    for (r, (g, c)) in got.iter().zip(&cases).enumerate() {
        let prefix = if n > 1 {
            device_label(&exe, r).0
        } else {
            String::new()
        };
        let shapes: Vec<String> = exe.outputs.iter().map(leaf_shape_string).collect();
        let g: Vec<Output<'_>> = g
            .iter()
            .zip(&shapes)
            .map(|(a, shape)| a.as_ref().map_or(Output::NotRead(shape), Output::Read))
            .collect();
        all.extend(verdicts(&prefix, &g, &c.outputs, rule)?);
    }
    let kernels = match extras.profile {
        true => &stats.kernel_timings[..],
        false => &[],
    };
    let outcome = Outcome {
        rule,
        timing,
        kernels,
        verdicts: &all,
    };
    match extras.format {
        RunFormat::Text => outcome.write_text(out)?,
        RunFormat::Json => writeln!(out, "{:#}", outcome.json())?,
    }
    Ok(outcome.matched() == all.len())
}

/// What `aot run` found, for printing.
struct Outcome<'a> {
    rule: ToleranceRule,
    timing: Option<Timing>,
    /// `--profile`: replica 0's launches.
    kernels: &'a [runtime::KernelTiming],
    verdicts: &'a [Verdict],
}

impl Outcome<'_> {
    fn matched(&self) -> usize {
        self.verdicts.iter().filter(|v| v.comparison.ok).count()
    }

    /// The timing line, the profile lines, the tolerance (unless the default), the verdicts and
    /// the summary line.
    fn write_text(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        if let Some(t) = &self.timing {
            writeln!(out, "{}", t.line())?;
        }
        for k in self.kernels {
            writeln!(out, "{}", profile_line(k))?;
        }
        if let Some(k) = self.kernels.iter().max_by_key(|k| k.bytes) {
            writeln!(out, "largest {}", profile_line(k))?;
        }
        if self.rule != ToleranceRule::PerDtype {
            writeln!(out, "{}", self.rule.describe())?;
        }
        for v in self.verdicts {
            writeln!(out, "{}", v.line())?;
        }
        let (matched, total) = (self.matched(), self.verdicts.len());
        let verdict = if matched == total { "OK" } else { "MISMATCH" };
        writeln!(out, "{verdict}: {matched} of {total} outputs match")?;
        Ok(())
    }

    /// `{"ok", "matched", "total", "tolerance", "outputs": [...], "timing": {...} | null,
    /// "kernels": [...]}`; the figures as the text lines give them, unrounded.
    fn json(&self) -> serde_json::Value {
        let (matched, total) = (self.matched(), self.verdicts.len());
        serde_json::json!({
            "ok": matched == total,
            "matched": matched,
            "total": total,
            "tolerance": self.rule.describe().trim_start_matches("tolerance: "),
            "outputs": self.verdicts.iter().map(Verdict::json).collect::<Vec<_>>(),
            "timing": self.timing.as_ref().map(|t| serde_json::json!({
                "load_ms": json_f64(t.load_ms),
                "execute_ms": json_f64(t.execute_ms),
                "repeats": t.repeats,
                "inputs": if t.resident.is_some() { "device" } else { "host" },
                "arguments_in_place": t.resident.map(|(read_in_place, _)| read_in_place),
            })),
            "kernels": self.kernels.iter().map(|k| serde_json::json!({
                "kernel": k.kernel,
                "grid": k.grid,
                "block": k.block,
                "lane_instructions": k.lane_instructions,
                "time_us": json_f64(k.nanos as f64 / 1e3),
                "bytes": k.bytes,
            })).collect::<Vec<_>>(),
        })
    }
}

/// `--resident-inputs`' timed executions: the inputs uploaded once into device buffers, one
/// warm-up with them (command buffers recorded for their addresses), then `repeats` executions
/// that read them in place or copy them device to device (`Executable::read_only_parameters`)
/// and read nothing back. Also: how many of the arguments were read in place, of how many.
fn timed_resident(
    exe: &Executable,
    devices: &[Arc<dyn Device>],
    inputs: &[Vec<Array>],
    repeats: u32,
) -> anyhow::Result<(Vec<std::time::Duration>, (u64, usize))> {
    let (device, case) = match (devices, inputs) {
        ([device], [case]) if exe.num_devices() == 1 => (device.as_ref(), case),
        _ => anyhow::bail!(
            "--resident-inputs times one device; the executable runs on {}",
            exe.num_devices()
        ),
    };
    let bytes: Vec<Vec<u8>> = case.iter().map(runtime::array_to_bytes).collect();
    let refs: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
    let (times, in_place) = resident_times(exe, device, &refs, repeats as usize)?;
    Ok((times, (in_place, refs.len())))
}

/// `repeats` timed executions of `exe` on `device` with `args` uploaded once into device
/// buffers, after one warm-up with them, reading nothing back (`--resident-inputs`, and the
/// bench's workloads section: what a framework's call on device arrays does). Also: how many
/// arguments the warm-up read in place.
pub(crate) fn resident_times(
    exe: &Executable,
    device: &dyn Device,
    args: &[&[u8]],
    repeats: usize,
) -> anyhow::Result<(Vec<std::time::Duration>, u64)> {
    let buffers = args
        .iter()
        .map(|b| runtime::DeviceBuffer::upload(device, b))
        .collect::<Result<Vec<_>, _>>()?;
    let args: Vec<runtime::Argument<'_>> = buffers.iter().map(runtime::Argument::Device).collect();
    let read = vec![false; exe.outputs.len()];
    let warm_up = exe.execute_with(device, &args, &read)?;
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let t = std::time::Instant::now();
        exe.execute_with(device, &args, &read)?;
        times.push(t.elapsed());
    }
    Ok((times, warm_up.stats.arguments_in_place))
}

/// `--timing`'s figures: the load, and the median execution (the mean of the middle two for an
/// even count), in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Timing {
    load_ms: f64,
    execute_ms: f64,
    repeats: usize,
    /// `--resident-inputs`: the arguments read in place, of how many.
    resident: Option<(u64, usize)>,
}

impl Timing {
    fn of(load: std::time::Duration, times: &mut [std::time::Duration]) -> Timing {
        times.sort();
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let n = times.len();
        let median = match n {
            0 => 0.0,
            _ if n % 2 == 1 => ms(times[n / 2]),
            _ => (ms(times[n / 2 - 1]) + ms(times[n / 2])) / 2.0,
        };
        Timing {
            load_ms: ms(load),
            execute_ms: median,
            repeats: n,
            resident: None,
        }
    }

    fn on_device(self, in_place: (u64, usize)) -> Timing {
        Timing {
            resident: Some(in_place),
            ..self
        }
    }

    /// `timing: load_ms=12.345 execute_ms=6.789 repeats=N`, and ` inputs=device in_place=K/M`
    /// with `--resident-inputs` (K of the M arguments read in place, the rest copied).
    fn line(&self) -> String {
        let resident = match self.resident {
            Some((k, m)) => format!(" inputs=device in_place={k}/{m}"),
            None => String::new(),
        };
        format!(
            "timing: load_ms={:.3} execute_ms={:.3} repeats={}{resident}",
            self.load_ms, self.execute_ms, self.repeats,
        )
    }
}

/// What `aot run` prints besides the verdicts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunReport {
    /// `--profile`: one line per kernel launch of replica 0.
    pub profile: bool,
    /// `--timing`: the load time and the median of this many timed executions after the
    /// compared one (`--repeat`, at least 1).
    pub timing: Option<u32>,
    /// `--resident-inputs`: the timed executions take their inputs from device buffers and
    /// read nothing back.
    pub resident_inputs: bool,
    /// `--format`.
    pub format: RunFormat,
}

/// One `--profile` line: the launch, its shape, the emulator's lane-instruction count (`n/a`
/// on a device that does not count, CUDA), wall time, achieved lane-instructions per second,
/// and the bytes its argument slices span with the bandwidth that implies.
fn profile_line(k: &runtime::KernelTiming) -> String {
    let [gx, gy, gz] = k.grid;
    let [bx, by, bz] = k.block;
    let secs = k.nanos.max(1) as f64 / 1e9;
    let (lanes, rate) = match k.lane_instructions {
        Some(n) => (n.to_string(), format!("{:.3e}", n as f64 / secs)),
        None => ("n/a".to_string(), "n/a".to_string()),
    };
    format!(
        "kernel {} grid={gx}x{gy}x{gz} block={bx}x{by}x{bz} lane_instructions={lanes} time_us={:.1} lane_instructions_per_s={rate} bytes={} bandwidth_gbps={:.2}",
        k.kernel,
        k.nanos as f64 / 1e3,
        k.bytes,
        k.bytes as f64 / (k.nanos.max(1) as f64)
    )
}

/// When the load failed on a thunk whose kind this schema lacks, the kinds the thunk carries
/// that it lacks, by oneof number and XLA's name. The runtime's error names the numbers
/// ([`runtime::Cause::UnknownThunkKind`]): its typed decode drops unknown fields, so it walks
/// the failing thunk's wire form for them, and nothing here decodes the artifact again.
fn unknown_thunk_kinds(e: &anyhow::Error) -> Option<String> {
    let fields = e
        .chain()
        .find_map(|c| match c.downcast_ref::<runtime::Error>()?.cause()? {
            runtime::Cause::UnknownThunkKind { fields } => Some(fields),
            _ => None,
        })?;
    let kinds: Vec<String> = fields
        .iter()
        .map(|&n| match crate::xla_artifact::xla_thunk_kind(n) {
            Some(k) => format!("{n} (XLA's {k})"),
            None => n.to_string(),
        })
        .collect();
    (!kinds.is_empty()).then(|| {
        format!(
            "the thunks use ThunkProto oneof field {}, which this runtime's schema does not declare",
            kinds.join(", ")
        )
    })
}

/// Runs `aot run`: 0 all outputs match, 1 a mismatch; errors are the caller's exit 2. The
/// artifact may be in any of the three forms `aot inspect` reads (PjRt bytes are unwrapped to
/// the `GpuExecutableProto` first).
pub fn run(args: &RunArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    // The target config first, outside the artifact's context: a bad config was reported
    // under the artifact's path. Read once: the devices are built from this description.
    let target = target_description(&args.target_config)?;
    let raw = std::fs::read(&args.artifact)
        .with_context(|| format!("cannot read {}", args.artifact.display()))?;
    let bytes = crate::xla_artifact::unwrap(&raw)
        .with_context(|| format!("{}", args.artifact.display()))?
        .executable;
    // Profiling times each launch: command buffers (a CUDA graph on CUDA) would hide them.
    let flags = args.limits.apply(RuntimeFlags {
        enable_command_buffers: !args.no_command_buffers && !args.profile,
        ..RuntimeFlags::default()
    });
    let kernel_ptx = if args.kernel_ptx.is_empty() {
        None
    } else {
        Some(read_kernel_ptx(&args.kernel_ptx)?)
    };
    let ok = load_run_compare(
        &bytes,
        &args.device,
        &target,
        &args.io,
        DeviceCounts {
            replicas: args.replicas,
            partitions: args.partitions,
        },
        &flags,
        RunReport {
            profile: args.profile,
            timing: (args.timing || args.repeat.is_some() || args.resident_inputs)
                .then(|| args.repeat.unwrap_or(5)),
            resident_inputs: args.resident_inputs,
            format: args.format,
        },
        args.write_outputs.as_deref(),
        kernel_ptx.as_ref(),
        out,
    )
    .map_err(|e| match unknown_thunk_kinds(&e) {
        Some(kinds) => e.context(kinds),
        None => e,
    })
    .with_context(|| format!("{}", args.artifact.display()))?;
    Ok(if ok { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_paths_keep_the_extension() {
        let p = |s: &str, r| replica_path(Path::new(s), r).display().to_string();
        assert_eq!(p("d/out.io.json", 0), "d/out.replica0.io.json");
        assert_eq!(p("out.json", 1), "out.replica1.json");
        assert_eq!(p("out", 2), "out.replica2");
        assert_eq!(p(".hidden", 0), ".hidden.replica0");
    }

    #[test]
    fn a_profile_line_without_a_count_says_n_a() {
        let k = runtime::KernelTiming {
            kernel: "fusion_1".into(),
            grid: [4, 1, 1],
            block: [128, 2, 1],
            lane_instructions: None,
            bytes: 2_000,
            nanos: 1_000,
        };
        assert_eq!(
            profile_line(&k),
            "kernel fusion_1 grid=4x1x1 block=128x2x1 lane_instructions=n/a time_us=1.0 lane_instructions_per_s=n/a bytes=2000 bandwidth_gbps=2.00"
        );
        let counted = runtime::KernelTiming {
            lane_instructions: Some(3_000),
            ..k
        };
        assert_eq!(
            profile_line(&counted),
            "kernel fusion_1 grid=4x1x1 block=128x2x1 lane_instructions=3000 time_us=1.0 lane_instructions_per_s=3.000e9 bytes=2000 bandwidth_gbps=2.00"
        );
    }
}
