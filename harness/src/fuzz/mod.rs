//! Structure-aware mutation testing of every entry point that reads untrusted input: the
//! artifact loader (load, then run within the limits), the HLO text parser and verifier, the
//! StableHLO front end, the PTX parser and the target-config parser.
//!
//! One engine serves three users: `harness/tests/fuzz.rs` (CI size, in `cargo test`), `aot fuzz`
//! (long runs, outcomes counted by error code) and the cargo-fuzz targets under `fuzz/`
//! ([`run_input`] on the bytes libFuzzer gives).
//!
//! Each case is made from a seed input (the goldens' artifacts, the corpus's HLO, StableHLO and
//! PTX, XLA's target configs) by one to four mutations chosen from [`mutate`]: byte-level ones,
//! text-level ones for text inputs, and, for artifacts, field-level ones through prost-reflect
//! over the whole schema. A case is reproducible from its *case seed* alone
//! (`aot fuzz --target T --seed CASE_SEED --iterations 1`).
//!
//! The property: the entry point returns (an error or a result) without panicking, within the
//! deadline, and without allocating more than the limit. A panic is caught ([`Finding`]); a case
//! over the deadline is reported by a watchdog thread, which prints the case seed and ends the
//! process (a hang cannot be interrupted in-thread); an allocation over the limit is refused by
//! [`alloc::CountingAlloc`], which prints the case seed before the process aborts.
//!
//! Speed (a long run is a million cases per target): the seeds are read, decoded and walked for
//! field sites once; one watchdog thread serves the whole process; the emulator runs each launch
//! on the calling thread; the per-case limits ([`Limits`]) are small enough that a case that runs
//! to one costs milliseconds; and a case whose mutated bytes equal an earlier case's is counted
//! with that case's outcome instead of being run again (it would take the same path).
pub mod alloc;
pub mod class;
pub mod kinds;
pub mod mutate;

use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use fastrand::Rng;
use highway::{HighwayHash, HighwayHasher};
use proto::prost::Message;
use proto::prost_reflect::DynamicMessage;
use ptx::emu::LaunchOptions;
use runtime::{Device, DeviceDescription, EmulatedDevice, Registry, RuntimeFlags};

use class::{BytecodeClass, ConfigClass, ExportedClass, Refusal};

/// The entry points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum Target {
    /// `runtime::load` then one execution on the emulated device (goldens' artifacts).
    Loader,
    /// `hlo_text::parse_module` then `hlo_verify::verify` (HLO text).
    Hlo,
    /// `hlo_front::parse_stablehlo` (StableHLO MLIR text).
    Stablehlo,
    /// `ptx::parse` (PTX text).
    Ptx,
    /// `proto::parse_target_config` then `DeviceDescription::from_target_config`.
    Config,
    /// `hlo_front::parse_bytecode` (StableHLO portable artifacts: MLIR bytecode, VHLO).
    Mlirbc,
    /// `hlo_front::read_exported` then `Exported::module` (serialized JAX `Exported`s).
    JaxExported,
    /// The loader on golden artifacts edited through their typed schema ([`kinds`]).
    Artifact,
    /// The loader on golden artifacts whose kernel PTX is edited ([`kinds`]).
    KernelPtx,
    /// The schema bot's compile, model and wire rules on grammar-made `.proto` files.
    Proto,
    /// `aot goldens verify` and `list` on a tampered golden store.
    Store,
}

impl Target {
    /// Every target, in this order.
    pub const ALL: &'static [Target] = &[
        Target::Loader,
        Target::Hlo,
        Target::Stablehlo,
        Target::Ptx,
        Target::Config,
        Target::Mlirbc,
        Target::JaxExported,
        Target::Artifact,
        Target::KernelPtx,
        Target::Proto,
        Target::Store,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Target::Loader => "loader",
            Target::Hlo => "hlo",
            Target::Stablehlo => "stablehlo",
            Target::Ptx => "ptx",
            Target::Config => "config",
            Target::Mlirbc => "mlirbc",
            Target::JaxExported => "jax-exported",
            Target::Artifact => "artifact",
            Target::KernelPtx => "kernel-ptx",
            Target::Proto => "proto",
            Target::Store => "store",
        }
    }
}

/// Limits every case runs under.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The runtime flags of the loader target: the defaults with a wall time of 1 s per
    /// execution, 1000 while iterations, a 2^22 lane-instruction budget per launch, 64 MiB of
    /// emulated memory and a 1 s collective timeout. The largest golden launch needs between
    /// 2^19 and 2^20 lane-instructions and every golden fits in 1 MiB (measured with
    /// `aot fuzz --target loader --seeds-only` and smaller limits), so an unmutated seed runs to
    /// the end with room to spare, and a mutated case that spins stops within milliseconds.
    pub flags: RuntimeFlags,
    /// Wall time of one emulated kernel launch (the flags count whole seconds; a launch that
    /// neither ends nor spends its budget, e.g. one waiting at a barrier, stops after this).
    pub launch_wall_time: Duration,
    /// Emulator worker threads per launch. 1: the launch runs on the case's thread, so a panic in
    /// the emulator reaches the engine's `catch_unwind` (with worker threads `ptx::emu` turns a
    /// worker's panic into an error, which would hide it) and no thread is spawned per launch.
    pub emulator_threads: usize,
    /// Wall time of one case before the watchdog reports a hang.
    pub deadline: Duration,
    /// Live heap bytes allowed (the counting allocator refuses past it).
    pub heap_bytes: usize,
    /// Stop starting cases after this long (the report says how many ran).
    pub time_limit: Option<Duration>,
    /// Count a case whose mutated bytes equal an earlier case's (by a 128-bit HighwayHash) with
    /// that case's outcome instead of running it again.
    pub dedupe: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            flags: RuntimeFlags {
                max_execution_secs: 1,
                max_while_iterations: 1000,
                emulator_instruction_budget: 1 << 22,
                emulator_host_memory_bytes: 64 << 20,
                emulator_local_memory_bytes: 64 << 20,
                collective_timeout_secs: 1,
                ..RuntimeFlags::default()
            },
            launch_wall_time: Duration::from_millis(200),
            emulator_threads: 1,
            deadline: Duration::from_secs(30),
            // The emulated memory (64 MiB), a decoded artifact, the emulator's state and the
            // dedupe table.
            heap_bytes: 1 << 30,
            time_limit: None,
            dedupe: true,
        }
    }
}

impl Limits {
    /// The limits in one line, as `aot fuzz` prints them before a run.
    pub fn describe(&self) -> String {
        let f = &self.flags;
        format!(
            "limits: execution {} s, launch {} ms, {} lane-instructions per launch, {} while iterations, {} bytes of emulated memory, {} emulator threads; case deadline {} s, heap {} bytes; dedupe {}",
            f.max_execution_secs,
            self.launch_wall_time.as_millis(),
            f.emulator_instruction_budget,
            f.max_while_iterations,
            f.emulator_host_memory_bytes,
            self.emulator_threads,
            self.deadline.as_secs(),
            self.heap_bytes,
            if self.dedupe { "on" } else { "off" },
        )
    }

    /// The emulated device of a loader case.
    fn device(&self, description: &DeviceDescription) -> EmulatedDevice {
        EmulatedDevice::new(description.clone())
            .with_flags(&self.flags)
            .with_launch_options(LaunchOptions {
                instruction_budget: self.flags.emulator_instruction_budget,
                threads: self.emulator_threads,
                wall_time_limit: Some(self.launch_wall_time),
                instructions_per_thread: self.flags.emulator_instructions_per_thread,
                instruction_floor: self.flags.emulator_instruction_floor,
                ..LaunchOptions::default()
            })
    }
}

/// What one case did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Accepted (and, for the loader, executed to the end).
    Ok,
    /// Refused with this class: `load INVALID_ARGUMENT`, `run RESOURCE_EXHAUSTED`,
    /// `parse Syntax`, `verify`, `utf8`, ...
    Error(String),
    /// A panic, with its message.
    Panic(String),
}

/// A panic, with the case seed that reproduces it.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The entry point that panicked (the `T` of the replay command).
    pub target: Target,
    /// `aot fuzz --target T --seed CASE_SEED --iterations 1` replays it.
    pub case_seed: u64,
    /// The panic message.
    pub message: String,
}

/// The result of a run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Cases per outcome class (`ok`, `load INVALID_ARGUMENT`, ...).
    pub outcomes: BTreeMap<String, u64>,
    /// Cases run.
    pub cases: u64,
    /// Panics.
    pub findings: Vec<Finding>,
    /// The case with the highest heap peak: (bytes over the live size at its start, case seed).
    pub worst_heap: (usize, u64),
    /// The slowest case: (time, case seed).
    pub slowest: (Duration, u64),
    /// Wall time of the run.
    pub elapsed: Duration,
    /// Time spent in the entry point, by outcome class (where the run's time goes).
    pub time_by_class: BTreeMap<String, Duration>,
    /// Time spent making the cases (mutating, encoding, hashing).
    pub generating: Duration,
    /// Cases whose bytes equalled an earlier case's, counted with its outcome, not run again.
    pub duplicates: u64,
}

/// The inputs mutations start from, for one target.
pub struct Seeds {
    target: Target,
    inputs: Vec<Vec<u8>>,
    /// Each input's path, relative to the repository root.
    names: Vec<String>,
    /// Loader: the device each artifact was compiled for, by input.
    devices: Vec<Arc<DeviceDescription>>,
    /// Loader: each artifact decoded, and its field sites.
    decoded: Vec<(DynamicMessage, Vec<mutate::Site>)>,
    dictionary: Vec<&'static str>,
}

/// The repository root (seeds are read from the goldens and `testdata/`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn files_with(dir: &Path, suffix: &str) -> anyhow::Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .map(walkdir::DirEntry::into_path)
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    out.sort();
    if out.is_empty() {
        bail!("no seed files *{suffix} under {}", dir.display());
    }
    Ok(out)
}

/// Words the text mutations substitute: the names each grammar is made of.
fn dictionary(target: Target) -> Vec<&'static str> {
    match target {
        // XLA's `mulhi`, which the parser expands rather than knows as an opcode.
        Target::Hlo => hlo::Opcode::ALL
            .iter()
            .map(|o| o.name())
            .chain(["mulhi"])
            .collect(),
        Target::Stablehlo => hlo_front::stablehlo_ops(),
        // Binary targets mutate bytes, the second round's kinds their own structures: their
        // dictionary is unused.
        Target::Mlirbc
        | Target::JaxExported
        | Target::Artifact
        | Target::KernelPtx
        | Target::Store => Vec::new(),
        Target::Proto => kinds::PROTO_WORDS.to_vec(),
        Target::Loader | Target::Ptx => vec![
            "ld.global.f32",
            "st.global.f32",
            "st.shared.u32",
            "bar.sync",
            "bra",
            "setp.lt.s32",
            "%p1",
            "%r1",
            "%rd1",
            "%tid.x",
            "%ctaid.x",
            ".reg",
            ".pred",
            ".entry",
            ".param",
            "ret",
            "exit",
            "@%p1",
            "mov.u32",
            "add.s32",
            "mad.lo.s32",
            "cvta.to.global.u64",
        ],
        Target::Config => vec![
            "threads_per_block_limit",
            "shared_memory_per_block",
            "block_dim_limit_x",
            "device_memory_size",
            "cuda_compute_capability",
            "rocm_compute_capability",
            "major",
            "minor",
            "platform_name",
            "runtime_version",
            "gpu_device_info",
        ],
    }
}

impl Seeds {
    /// Reads the seeds of `target` from the repository at `root`.
    pub fn load(target: Target, root: &Path) -> anyhow::Result<Seeds> {
        let paths = match target {
            Target::Loader | Target::Artifact | Target::KernelPtx => {
                files_with(&root.join("goldens/executables"), "executable.pb")?
            }
            // Made by their generators: a few grammar files, the untampered store.
            Target::Proto | Target::Store => Vec::new(),
            Target::Hlo => {
                let mut p = files_with(&root.join("testdata/corpus/hlo"), ".hlo")?;
                p.extend(files_with(&root.join("testdata/corpus/xla_hlo"), ".hlo")?);
                p
            }
            Target::Stablehlo => {
                let mut p = files_with(&root.join("testdata/corpus/hlo"), ".mlir")?;
                p.extend(files_with(&root.join("testdata/stablehlo"), ".mlir")?);
                // Custom calls XLA expands (ApproxTopK), dot algorithms, FP8 (hex f8 constants).
                p.extend(files_with(&root.join("testdata/approx_top_k"), ".mlir")?);
                p.extend(files_with(&root.join("testdata/dot_algorithms"), ".mlir")?);
                p.extend(files_with(&root.join("testdata/float8"), ".mlir")?);
                p
            }
            Target::Ptx => files_with(&root.join("testdata/corpus/ptx"), ".ptx")?,
            Target::Config => files_with(&root.join("testdata/target_specs"), ".txtpb")?,
            Target::Mlirbc => {
                let mut p = files_with(&root.join("testdata/jax_backcompat"), ".mlirbc")?;
                p.extend(files_with(
                    &root.join("testdata/jax_exported/models"),
                    ".mlirbc",
                )?);
                p.extend(files_with(&root.join("testdata/vhlo_ops"), ".mlir.bc")?);
                p.extend(files_with(&root.join("testdata/approx_top_k"), ".mlirbc")?);
                p.extend(files_with(&root.join("testdata/float8"), ".mlirbc")?);
                // Shardy attributes and an sdy op between VHLO casts, for 2 devices.
                p.extend(files_with(
                    &root.join("testdata/jax_exported/sharded"),
                    ".mlirbc",
                )?);
                p
            }
            Target::JaxExported => {
                files_with(&root.join("testdata/jax_exported"), ".jax_exported")?
            }
        };
        let mut seeds = Seeds {
            target,
            inputs: Vec::new(),
            names: Vec::new(),
            devices: Vec::new(),
            decoded: Vec::new(),
            dictionary: dictionary(target),
        };
        let mut descriptions: BTreeMap<String, Arc<DeviceDescription>> = BTreeMap::new();
        for path in paths {
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            if matches!(
                target,
                Target::Loader | Target::Artifact | Target::KernelPtx
            ) {
                // goldens/executables/<target>/...: the device the artifact is for.
                let rel = path.strip_prefix(root.join("goldens/executables"))?;
                let Some(name) = rel.iter().next().and_then(|s| s.to_str()) else {
                    bail!("{}: no target directory", path.display());
                };
                let description = match descriptions.get(name) {
                    Some(d) => d.clone(),
                    None => {
                        let spec = root.join(format!("testdata/target_specs/{name}.txtpb"));
                        let config = proto::load_target_config(&spec)?;
                        let d = Arc::new(DeviceDescription::from_target_config(&config)?);
                        descriptions.insert(name.to_owned(), d.clone());
                        d
                    }
                };
                seeds.devices.push(description);
                if target == Target::Loader {
                    let message = reflect_seed(&bytes)
                        .with_context(|| format!("decoding {}", path.display()))?;
                    let sites = mutate::sites(&message);
                    seeds.decoded.push((message, sites));
                }
            }
            seeds.inputs.push(bytes);
            let name = path.strip_prefix(root).unwrap_or(&path);
            seeds.names.push(name.display().to_string());
        }
        match target {
            Target::Proto => {
                for i in 0..8 {
                    seeds.inputs.push(kinds::proto_case(&mut Rng::with_seed(i)));
                    seeds.names.push(format!("<grammar {i}>"));
                }
            }
            Target::Store => {
                store_seed()?;
                seeds.inputs.push(Vec::new());
                seeds.names.push("<the seed store, untampered>".into());
            }
            _ => {}
        }
        Ok(seeds)
    }

    /// Seed input `i`'s path, relative to the repository root.
    pub fn name(&self, i: usize) -> Option<&str> {
        self.names.get(i).map(String::as_str)
    }

    /// Runs seed input `i` unmutated under `limits` (`None`: no such seed). Every seed should be
    /// accepted (and, for the loader, run to the end): limits so tight that a seed fails would
    /// leave its mutations testing only the limit.
    pub fn run_seed(&self, i: usize, limits: &Limits) -> Option<Outcome> {
        let input = self.inputs.get(i)?;
        Some(match self.devices.get(i) {
            Some(d) => run_input(self.target, input, d, limits),
            None => run_input(self.target, input, &default_device(), limits),
        })
    }

    /// How many seed inputs there are.
    pub fn len(&self) -> usize {
        self.inputs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.inputs.is_empty()
    }

    /// The case of `case_seed`: the index of its seed input and the mutated bytes.
    pub fn case(&self, case_seed: u64) -> (usize, Vec<u8>) {
        let mut rng = Rng::with_seed(case_seed);
        let i = rng.usize(0..self.inputs.len());
        let others: Vec<&[u8]> = self.inputs.iter().map(Vec::as_slice).collect();
        match self.target {
            Target::Artifact => {
                return (
                    i,
                    kinds::edited(&self.inputs[i], &mut rng, kinds::artifact_edit),
                );
            }
            Target::KernelPtx => {
                return (
                    i,
                    kinds::edited(&self.inputs[i], &mut rng, kinds::kernel_ptx_case),
                );
            }
            Target::Proto => return (i, kinds::proto_case(&mut rng)),
            Target::Store => {
                let script = store_seed()
                    .map(|seed| kinds::store_case(&mut rng, seed))
                    .unwrap_or_default();
                return (i, script);
            }
            _ => {}
        }
        let rounds = rng.usize(1..=4);
        if self.target == Target::Loader && rng.u8(0..4) != 0 {
            // Field-level: decode once (cached), mutate fields, re-encode; sometimes a byte-level
            // mutation on top.
            let (message, sites) = &self.decoded[i];
            let mut m = message.clone();
            for _ in 0..rounds {
                if sites.is_empty() {
                    break;
                }
                let site = &sites[rng.usize(0..sites.len())];
                mutate::field(&mut rng, &mut m, site, &self.dictionary);
            }
            let mut out = m.encode_to_vec();
            if rng.u8(0..4) == 0 {
                mutate::bytes(&mut rng, &mut out, &others);
            }
            return (i, out);
        }
        let mut out = self.inputs[i].clone();
        for _ in 0..rounds {
            if matches!(
                self.target,
                Target::Loader | Target::Mlirbc | Target::JaxExported
            ) {
                mutate::bytes(&mut rng, &mut out, &others);
            } else {
                mutate::text(&mut rng, &mut out, &others, &self.dictionary);
            }
        }
        (i, out)
    }
}

/// Runs `input` through `target`'s entry point (the loader on `device`) under `limits`,
/// catching a panic.
pub fn run_input(
    target: Target,
    input: &[u8],
    device: &DeviceDescription,
    limits: &Limits,
) -> Outcome {
    match catch_unwind(AssertUnwindSafe(|| entry(target, input, device, limits))) {
        Ok(Ok(())) => Outcome::Ok,
        Ok(Err(refusal)) => Outcome::Error(refusal.to_string()),
        Err(payload) => Outcome::Panic(
            payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(non-string panic payload)".to_owned()),
        ),
    }
}

/// [`run_input`] on the bundled h100_sxm device with [`Limits::default`]: what the cargo-fuzz
/// targets under `fuzz/` call with libFuzzer's bytes.
pub fn run_default(target: Target, input: &[u8]) -> Outcome {
    static LIMITS: OnceLock<Limits> = OnceLock::new();
    let limits = LIMITS.get_or_init(Limits::default);
    run_input(target, input, &default_device(), limits)
}

fn text(input: &[u8]) -> Result<&str, Refusal> {
    std::str::from_utf8(input).map_err(|_| Refusal::Utf8)
}

/// Most argument bytes the loader target passes to an execution.
const MAX_ARGUMENT_BYTES: u64 = 64 << 20;

/// The entry point; a refusal is counted under its class.
fn entry(
    target: Target,
    input: &[u8],
    device: &DeviceDescription,
    limits: &Limits,
) -> Result<(), Refusal> {
    match target {
        Target::Artifact | Target::KernelPtx => entry(Target::Loader, input, device, limits),
        Target::Proto => kinds::run_proto(input),
        Target::Store => kinds::run_store(store_seed().map_err(|_| Refusal::Setup)?, input),
        Target::Loader => {
            static REGISTRY: OnceLock<Registry> = OnceLock::new();
            let registry = REGISTRY.get_or_init(Registry::builtin);
            let flags = &limits.flags;
            // A fresh device per case: its module cache is keyed by module id, which a mutated
            // artifact may keep while changing the PTX.
            let dev = limits.device(device);
            let exe = runtime::load_with_registry(input, &dev, flags, registry)
                .map_err(|e| Refusal::Load(e.code()))?;
            // The arguments are the harness's allocation, not the runtime's: a declared
            // parameter larger than this is the device's to refuse, which the loader did not.
            let total: u64 = exe.parameters.iter().map(|(_, l)| l.size).sum();
            if total > MAX_ARGUMENT_BYTES {
                return Err(Refusal::NotRun("parameters over 64 MiB"));
            }
            let args: Vec<Vec<u8>> = exe
                .parameters
                .iter()
                .map(|(_, leaf)| vec![0u8; leaf.size as usize])
                .collect();
            let result = if exe.num_devices() == 1 {
                let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
                exe.execute(&dev, &refs).map(|_| ())
            } else if exe.num_devices() <= 8 {
                let devices: Vec<Arc<dyn Device>> = (0..exe.num_devices())
                    .map(|_| Arc::new(limits.device(device)) as Arc<dyn Device>)
                    .collect();
                let all = vec![args; devices.len()];
                exe.execute_replicated(&devices, &all).map(|_| ())
            } else {
                // Loaded; running more devices than this takes one thread each and proves
                // nothing the smaller counts do not.
                return Err(Refusal::NotRun("replicas"));
            };
            result.map_err(|e| Refusal::Run(e.code()))
        }
        Target::Hlo => {
            let m = hlo_text::parse_module(text(input)?).map_err(|e| Refusal::Parse(e.kind))?;
            hlo_verify::verify(&m).map_err(|_| Refusal::Verify)
        }
        Target::Stablehlo => hlo_front::parse_stablehlo(text(input)?)
            .map(|_| ())
            .map_err(|e| Refusal::Parse(e.kind)),
        Target::Mlirbc => hlo_front::parse_bytecode(input)
            .map(|_| ())
            .map_err(|e| Refusal::Bytecode(BytecodeClass::from(&e))),
        Target::JaxExported => {
            let exported = |e: hlo_front::ExportedError| Refusal::Exported(ExportedClass::from(&e));
            let e = hlo_front::read_exported(input).map_err(exported)?;
            let _ = e.describe();
            e.module().map(|_| ()).map_err(exported)
        }
        Target::Ptx => ptx::parse(text(input)?)
            .map(|_| ())
            .map_err(|_| Refusal::PtxParse),
        Target::Config => {
            let config = proto::parse_target_config(text(input)?, "fuzz")
                .map_err(|e| Refusal::Config(ConfigClass::from(&e)))?;
            DeviceDescription::from_target_config(&config)
                .map(|_| ())
                .map_err(|e| Refusal::Device(e.code()))
        }
    }
}

/// The `store` target's untampered store, built once per process ([`kinds::SeedStore`]).
fn store_seed() -> anyhow::Result<&'static kinds::SeedStore> {
    static STORE: OnceLock<anyhow::Result<kinds::SeedStore>> = OnceLock::new();
    match STORE.get_or_init(|| kinds::SeedStore::build(&repo_root())) {
        Ok(seed) => Ok(seed),
        Err(e) => bail!("the store target's seed store: {e:#}"),
    }
}

/// Start of the case running now, in ms since [`watchdog_epoch`] (0: none), and its seed.
static CASE_STARTED_MS: AtomicU64 = AtomicU64::new(0);
static WATCHED_SEED: AtomicU64 = AtomicU64::new(0);
static WATCHED_TARGET: AtomicU64 = AtomicU64::new(0);

fn watchdog_epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    watchdog_epoch().elapsed().as_millis() as u64 + 1
}

/// Starts (once per process) the thread that reports a case running past `deadline` and ends
/// the process with status 1: a hang cannot be interrupted from inside the thread that hangs.
fn start_watchdog(deadline: Duration) {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        watchdog_epoch();
        let limit = deadline.as_millis() as u64;
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(100));
            let started = CASE_STARTED_MS.load(Relaxed);
            if started != 0 && now_ms().saturating_sub(started) > limit {
                let target = Target::ALL
                    .get(WATCHED_TARGET.load(Relaxed) as usize)
                    .map_or("?", |t| t.name());
                eprintln!(
                    "fuzz finding: a case ran past the deadline of {deadline:?} (a hang); target {target}, case seed {} (replay: aot fuzz --target {target} --seed {} --iterations 1)",
                    WATCHED_SEED.load(Relaxed),
                    WATCHED_SEED.load(Relaxed)
                );
                // A hung case cannot be unwound from another thread: the watchdog ends the
                // process, having printed the replay line.
                #[allow(clippy::exit)]
                std::process::exit(1);
            }
        });
    });
}

/// The case seed of iteration `i` of a run started with `seed` (so a finding is replayed with
/// `--seed CASE_SEED --iterations 1`).
pub fn case_seed(seed: u64, i: u64) -> u64 {
    seed.wrapping_add(i)
}

/// Most distinct inputs the dedupe table remembers; past it, new inputs are run without being
/// remembered. A slot is 33 bytes (a 16-byte-aligned u128 key, a u32 class, a control byte) and
/// the table keeps a power of two of slots at most 7/8 full: 2^20 slots (35 MB) up to 917,504
/// inputs, 2^23 (277 MB) when full, well under the 1 GiB heap limit.
const MAX_REMEMBERED: usize = 1 << 22;

/// The 128-bit HighwayHash of a case's bytes (the dedupe key; a collision between two distinct
/// inputs in a million is about 2^-88 likely).
fn input_hash(input: &[u8]) -> u128 {
    let [a, b] = HighwayHasher::default().hash128(input);
    (u128::from(a) << 64) | u128::from(b)
}

/// Runs `iterations` cases of `target` from `seeds`, starting at `seed`; `progress` is called
/// after each case with the report so far.
pub fn run(
    seeds: &Seeds,
    iterations: u64,
    seed: u64,
    limits: &Limits,
    mut progress: impl FnMut(&Report),
) -> Report {
    let target = seeds.target;
    start_watchdog(limits.deadline);
    // One uncounted run of the first seed, unmutated: the entry points' one-time set-up (the
    // registry, descriptor pools, the default device) would otherwise be charged to the first
    // case as its heap peak and make it the "worst input" of every run.
    if !seeds.is_empty() {
        drop(seeds.run_seed(0, limits));
    }
    alloc::set_limit(alloc::live().saturating_add(limits.heap_bytes));
    let started = Instant::now();
    let mut report = Report::default();
    let fallback = seeds.devices.first().cloned();
    // Input hash -> index of its outcome class in `classes`.
    let mut seen: HashMap<u128, u32> = HashMap::new();
    let mut classes: Vec<String> = Vec::new();
    for i in 0..iterations {
        if limits.time_limit.is_some_and(|t| started.elapsed() >= t) {
            break;
        }
        let cs = case_seed(seed, i);
        let g0 = Instant::now();
        let (index, input) = seeds.case(cs);
        let key = limits.dedupe.then(|| input_hash(&input));
        report.generating += g0.elapsed();
        if let Some(class) = key
            .and_then(|k| seen.get(&k))
            .and_then(|&c| classes.get(c as usize))
        {
            *report.outcomes.entry(class.clone()).or_default() += 1;
            report.duplicates += 1;
            report.cases += 1;
            progress(&report);
            continue;
        }
        let device = seeds
            .devices
            .get(index)
            .cloned()
            .or_else(|| fallback.clone());
        alloc::set_case(target, cs);
        WATCHED_SEED.store(cs, Relaxed);
        WATCHED_TARGET.store(target as u64, Relaxed);
        let base = alloc::reset_peak();
        let t0 = Instant::now();
        CASE_STARTED_MS.store(now_ms(), Relaxed);
        let outcome = match device.as_deref() {
            Some(d) => run_input(target, &input, d, limits),
            None => run_input(target, &input, &default_device(), limits),
        };
        CASE_STARTED_MS.store(0, Relaxed);
        let took = t0.elapsed();
        drop(input);
        let heap = alloc::peak().saturating_sub(base);
        if heap > report.worst_heap.0 {
            report.worst_heap = (heap, cs);
        }
        if took > report.slowest.0 {
            report.slowest = (took, cs);
        }
        let class = match outcome {
            Outcome::Ok => "ok".to_owned(),
            Outcome::Error(c) => c,
            Outcome::Panic(message) => {
                report.findings.push(Finding {
                    target,
                    case_seed: cs,
                    message,
                });
                "PANIC".to_owned()
            }
        };
        if let Some(k) = key {
            if seen.len() < MAX_REMEMBERED {
                let c = match classes.iter().position(|c| *c == class) {
                    Some(c) => c,
                    None => {
                        classes.push(class.clone());
                        classes.len() - 1
                    }
                };
                seen.insert(k, c as u32);
            }
        }
        *report.time_by_class.entry(class.clone()).or_default() += took;
        *report.outcomes.entry(class).or_default() += 1;
        report.cases += 1;
        progress(&report);
    }
    alloc::set_limit(usize::MAX);
    report.elapsed = started.elapsed();
    report
}

/// The device the text targets pass (they do not use it).
fn default_device() -> DeviceDescription {
    static D: OnceLock<Option<DeviceDescription>> = OnceLock::new();
    D.get_or_init(|| {
        let spec = repo_root().join("testdata/target_specs/h100_sxm.txtpb");
        let config = proto::load_target_config(&spec).ok()?;
        DeviceDescription::from_target_config(&config).ok()
    })
    .clone()
    .unwrap_or_else(|| unreachable!("the bundled h100_sxm target config is valid"))
}

impl Report {
    /// The report as printed by `aot fuzz`: one line per outcome class (cases, and the time its
    /// cases spent in the entry point), then the totals.
    pub fn render(&self, target: Target) -> String {
        let mut s = String::new();
        for (class, n) in &self.outcomes {
            let t = self
                .time_by_class
                .get(class)
                .copied()
                .unwrap_or_default()
                .as_secs_f64();
            s.push_str(&format!("  {n:>10}  {class}  ({t:.1} s)\n"));
        }
        let rate = self.cases as f64 / self.elapsed.as_secs_f64().max(1e-9);
        s.push_str(&format!(
            "{}: {} cases ({} distinct, {} duplicates counted without running) in {:.1} s ({rate:.0}/s; making the cases {:.1} s), {} panics; worst heap peak {} bytes (case seed {}); slowest case {:.3} s (case seed {})\n",
            target.name(),
            self.cases,
            self.cases - self.duplicates,
            self.duplicates,
            self.elapsed.as_secs_f64(),
            self.generating.as_secs_f64(),
            self.findings.len(),
            self.worst_heap.0,
            self.worst_heap.1,
            self.slowest.0.as_secs_f64(),
            self.slowest.1,
        ));
        for f in &self.findings {
            s.push_str(&format!(
                "PANIC in {} (replay: aot fuzz --target {} --seed {} --iterations 1): {}\n",
                f.target.name(),
                f.target.name(),
                f.case_seed,
                f.message
            ));
        }
        s
    }
}

/// A loader seed by reflection, for field-level mutations. A seed in a form the schema no
/// longer declares but the runtime still reads (hand-written v9's bare convolution slices, see
/// `proto/src/conv_thunk.rs`) fails the reflective decode; its typed decode, re-encoded in
/// today's form, is mutated instead (its own bytes still seed the byte-level mutations).
fn reflect_seed(bytes: &[u8]) -> Result<DynamicMessage, proto::prost::DecodeError> {
    use proto::xla::gpu::GpuExecutableProto;
    let desc = proto::message_descriptor::<GpuExecutableProto>();
    DynamicMessage::decode(desc, bytes).or_else(|e| {
        GpuExecutableProto::decode(bytes)
            .map(|typed| proto::to_dynamic(&typed))
            .map_err(|_| e)
    })
}
