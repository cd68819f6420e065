//! The mutation kinds of issue 33's second campaign, each a fuzz target of its own:
//!
//! - **`artifact`**: structure-aware edits of a golden artifact through its typed schema, which
//!   keep it well-formed enough to pass the loader's field checks and reach execution: an
//!   allocation and its slices shrunk together (a kernel then runs past its argument, which the
//!   sanitizer must report rather than let pass), a slice moved or pointed at another
//!   allocation, launch dimensions scaled, thunks swapped, duplicated or dropped, an output
//!   pointed at another allocation, a parameter number moved.
//! - **`kernel-ptx`**: edits of one kernel's PTX that keep it parseable: register ranges,
//!   `.local`/`.shared` array sizes and immediates scaled to interesting sizes, a declared
//!   `.local` array added, an instruction's line duplicated, swapped or removed, a branch
//!   retargeted, a `.func` call tree made deep.
//! - **`proto`**: `.proto` files written by a grammar (packages, imports, messages nested and
//!   referencing each other, enums, oneofs, maps, options with nested values, reserved ranges,
//!   long names and deep nesting near the bot's limits), compiled by the schema bot's path
//!   (`schema_history::protos`, its source limits first) and diffed by the wire rules against a
//!   mutated second version.
//! - **`store`**: a small golden store tampered with as a pull request could: files replaced by
//!   symbolic links (to `/dev/zero`, outside the store, to themselves), FIFOs, directories,
//!   sparse files past the size limit, truncated or edited manifests and census, files deleted,
//!   then `aot goldens verify` run on it.
//!
//! Each case is bytes, as every target's (an artifact, a PTX-edited artifact, two `.proto`
//! texts, a tamper script), so dedupe, replay by case seed and the corpus work unchanged.
use std::path::Path;

use fastrand::Rng;
use proto::prost::Message;
use proto::xla::gpu::thunk_proto::Impl;
use proto::xla::gpu::{GpuExecutableProto, ThunkProto};

use super::class::{Refusal, SchemaClass};

/// Every thunk sequence of an artifact (the entry's and every nested one).
fn sequences(p: &mut GpuExecutableProto) -> Vec<&mut Vec<ThunkProto>> {
    fn go<'a>(thunks: &'a mut [ThunkProto], out: &mut Vec<&'a mut Vec<ThunkProto>>) {
        // Raw pointer dance avoided: collect the nested ones first, then this one.
        let mut nested: Vec<&'a mut Vec<ThunkProto>> = Vec::new();
        for t in thunks.iter_mut() {
            match t.r#impl.as_mut() {
                Some(Impl::SequentialThunk(s)) => go(&mut s.thunks, &mut nested),
                Some(Impl::WhileThunk(w)) => {
                    for s in [&mut w.condition_thunk_sequence, &mut w.body_thunk_sequence]
                        .into_iter()
                        .flatten()
                    {
                        go(&mut s.thunks, &mut nested);
                    }
                }
                Some(Impl::ConditionalThunk(c)) => {
                    for b in &mut c.branch_thunks {
                        go(&mut b.thunks, &mut nested);
                    }
                }
                _ => {}
            }
        }
        out.extend(nested);
    }
    let mut out = Vec::new();
    if rng_entry_first(p) {
        out.push(&mut p.thunks);
    } else {
        go(&mut p.thunks, &mut out);
    }
    out
}

/// Half the time (by the artifact's thunk count) the entry sequence itself, else the nested
/// ones: one of the two borrows at a time.
fn rng_entry_first(p: &GpuExecutableProto) -> bool {
    p.thunks.len() % 2 == 0
}

/// A size scaled the way the edits scale sizes: halved, minus a word, plus a word, doubled,
/// zero, an interesting bound, or a word-aligned value up to twice it (the many values between
/// the edges keep a million cases mostly distinct: with the edges alone, two in three cases of
/// the artifact kind repeated an earlier one).
fn scaled(rng: &mut Rng, v: i64) -> i64 {
    match rng.u8(0..8) {
        0 => v / 2,
        1 => v.saturating_sub(4).max(0),
        2 => v.saturating_add(4),
        3 => v.saturating_mul(2),
        4 => 0,
        5 => super::mutate::INTERESTING[rng.usize(0..super::mutate::INTERESTING.len())],
        _ => rng.i64(0..=v.max(1).saturating_mul(2)) & !3,
    }
}

/// One structure-aware edit of an artifact.
pub fn artifact_edit(rng: &mut Rng, p: &mut GpuExecutableProto) {
    let nallocs = p.buffer_allocations.as_ref().map_or(0, |a| a.values.len());
    match rng.u8(0..8) {
        // Shrink an allocation and every kernel slice of it to fit: a consistent artifact whose
        // kernels may now run past their arguments.
        0 if nallocs > 0 => {
            let a = rng.usize(0..nallocs);
            let Some(alloc) = p
                .buffer_allocations
                .as_mut()
                .and_then(|v| v.values.get_mut(a))
            else {
                return;
            };
            // Anywhere from empty to a word short of its size.
            let size = rng.i64(0..=alloc.size.saturating_sub(4).max(0)) & !3;
            alloc.size = size;
            for k in proto::kernel_thunks_mut(&mut p.thunks) {
                for s in k
                    .args
                    .iter_mut()
                    .filter(|s| s.buffer_allocation_index == a as i64)
                {
                    s.offset = s.offset.min(size);
                    // (An earlier edit may have left the offset negative: the loader refuses
                    // it, and the size must not overflow here.)
                    s.size = s.size.min(size.saturating_sub(s.offset));
                }
            }
        }
        // Move a kernel argument's slice inside its allocation.
        1 => {
            let mut kernels = proto::kernel_thunks_mut(&mut p.thunks);
            let n = kernels.len();
            if n == 0 {
                return;
            }
            let k = &mut kernels[rng.usize(0..n)];
            let na = k.args.len();
            if na > 0 {
                let s = &mut k.args[rng.usize(0..na)];
                s.offset = scaled(rng, s.offset.max(4));
                if rng.bool() {
                    s.size = scaled(rng, s.size);
                }
            }
        }
        // Point a kernel argument at another allocation.
        2 if nallocs > 1 => {
            let mut kernels = proto::kernel_thunks_mut(&mut p.thunks);
            let n = kernels.len();
            if n == 0 {
                return;
            }
            let k = &mut kernels[rng.usize(0..n)];
            let na = k.args.len();
            if na > 0 {
                k.args[rng.usize(0..na)].buffer_allocation_index = rng.usize(0..nallocs) as i64;
            }
        }
        // Scale a launch's grid or block.
        3 => {
            let mut kernels = proto::kernel_thunks_mut(&mut p.thunks);
            let n = kernels.len();
            if n == 0 {
                return;
            }
            let k = &mut kernels[rng.usize(0..n)];
            let dims = k.launch_dimensions.get_or_insert_with(Default::default);
            let d = if rng.bool() {
                dims.block_counts.get_or_insert_with(Default::default)
            } else {
                dims.thread_counts_per_block
                    .get_or_insert_with(Default::default)
            };
            match rng.u8(0..3) {
                0 => d.x = scaled(rng, d.x),
                1 => d.y = scaled(rng, d.y),
                _ => d.z = scaled(rng, d.z),
            }
        }
        // Reorder, duplicate or drop a thunk of some sequence.
        4 => {
            let mut seqs = sequences(p);
            let n = seqs.len();
            if n == 0 {
                return;
            }
            let seq = &mut seqs[rng.usize(0..n)];
            let len = seq.len();
            if len == 0 {
                return;
            }
            let (i, j) = (rng.usize(0..len), rng.usize(0..len));
            match rng.u8(0..3) {
                0 => seq.swap(i, j),
                1 => {
                    let t = seq[i].clone();
                    seq.insert(j, t);
                }
                _ => {
                    seq.remove(i);
                }
            }
        }
        // Point an output at another allocation.
        5 if nallocs > 0 => {
            let n = p.output_info_map.len();
            if n > 0 {
                let o = &mut p.output_info_map[rng.usize(0..n)];
                if let Some(info) = o.output_info.as_mut() {
                    info.allocation_index = rng.usize(0..nallocs) as i64;
                }
            }
        }
        // Move a parameter number, or make an allocation a parameter.
        6 if nallocs > 0 => {
            if let Some(alloc) = p
                .buffer_allocations
                .as_mut()
                .and_then(|v| v.values.get_mut(rng.usize(0..nallocs)))
            {
                alloc.parameter_number = rng.i64(-1..4);
                alloc.is_entry_computation_parameter = rng.bool();
            }
        }
        // Change a kernel's dynamic shared memory.
        _ => {
            let mut kernels = proto::kernel_thunks_mut(&mut p.thunks);
            let n = kernels.len();
            if n > 0 {
                let k = &mut kernels[rng.usize(0..n)];
                k.shmem_bytes = scaled(rng, k.shmem_bytes.max(16));
            }
        }
    }
}

/// Replaces the `n`-th decimal number after `marker` in `text` by `f(number)`.
fn edit_number_after(
    text: &str,
    marker: &str,
    n: usize,
    mut f: impl FnMut(u64) -> u64,
) -> Option<String> {
    let (at, _) = text.match_indices(marker).nth(n)?;
    let start = at + marker.len();
    let digits = text[start..].bytes().take_while(u8::is_ascii_digit).count();
    let value: u64 = text[start..start + digits].parse().ok()?;
    Some(format!(
        "{}{}{}",
        &text[..start],
        f(value),
        &text[start + digits..]
    ))
}

/// Sizes a PTX edit puts in a declaration: around the emulator's and CUDA's limits.
const PTX_SIZES: &[u64] = &[
    0,
    1,
    7,
    4096,
    65_536,
    65_537,
    232_448,
    524_288,
    524_289,
    1 << 20,
    1 << 31,
    u32::MAX as u64,
    1 << 40,
];

/// One PTX-aware edit of a kernel's text (which stays text: a parse failure is an outcome too).
pub fn ptx_edit(rng: &mut Rng, ptx: &str) -> String {
    let size = PTX_SIZES[rng.usize(0..PTX_SIZES.len())];
    let count = |m: &str| ptx.matches(m).count();
    let pick = |rng: &mut Rng, m: &str| rng.usize(0..count(m).max(1));
    let edited = match rng.u8(0..8) {
        // A register range: `%r<N>`.
        0 => edit_number_after(ptx, "<", pick(rng, "<"), |_| size),
        // A shared or local array's size: `name[N]`.
        1 => edit_number_after(ptx, "[", pick(rng, "["), |_| size),
        // An immediate operand.
        2 => edit_number_after(ptx, ", ", pick(rng, ", "), |v| match rng.u8(0..3) {
            0 => v.wrapping_add(1),
            1 => v.saturating_mul(4096),
            _ => size,
        }),
        // A `.local` array declared at the top of the kernel body, and stored to.
        3 => ptx.find("{\n").map(|at| {
            format!(
                "{}{{\n\t.local .align 8 .b8 fuzz_local[{size}];\n\tst.local.u32 [fuzz_local+{}], 1;\n{}",
                &ptx[..at],
                size.saturating_sub(4) & !3,
                &ptx[at + 2..]
            )
        }),
        // A call tree: a `.func` calling itself-like chains is refused, so a chain of calls to
        // a new function that calls the next, deep.
        4 => ptx.find(".visible .entry").map(|at| {
            let depth = rng.usize(2..12);
            let mut funcs = String::from(".func fuzz_f0()\n{\n\tret;\n}\n");
            for d in 1..depth {
                funcs.push_str(&format!(
                    ".func fuzz_f{d}()\n{{\n\tcall fuzz_f{};\n\tcall fuzz_f{};\n\tret;\n}}\n",
                    d - 1,
                    d - 1
                ));
            }
            let body = ptx[at..].replacen(
                "{\n",
                &format!("{{\n\tcall fuzz_f{};\n", depth - 1),
                1,
            );
            format!("{}{funcs}{body}", &ptx[..at])
        }),
        // Lines: one duplicated, two swapped, one removed.
        _ => {
            let mut lines: Vec<&str> = ptx.lines().collect();
            let n = lines.len();
            if n == 0 {
                return ptx.to_owned();
            }
            let (i, j) = (rng.usize(0..n), rng.usize(0..n));
            match rng.u8(0..3) {
                0 => lines.insert(j, lines[i]),
                1 => lines.swap(i, j),
                _ => {
                    lines.remove(i);
                }
            }
            Some(lines.join("\n"))
        }
    };
    edited.unwrap_or_else(|| ptx.to_owned())
}

/// A PTX-edited artifact: one to three edits of one kernel thunk's PTX.
pub fn kernel_ptx_case(rng: &mut Rng, p: &mut GpuExecutableProto) {
    let mut kernels = proto::kernel_thunks_mut(&mut p.thunks);
    let n = kernels.len();
    if n == 0 {
        return;
    }
    let k = &mut kernels[rng.usize(0..n)];
    let Some(binary) = k.kernel_binary.as_mut() else {
        return;
    };
    for _ in 0..rng.usize(1..=3) {
        binary.ptx = ptx_edit(rng, &binary.ptx);
    }
}

/// Decodes an artifact seed, applies `edit`, encodes it again.
pub fn edited(seed: &[u8], rng: &mut Rng, edit: fn(&mut Rng, &mut GpuExecutableProto)) -> Vec<u8> {
    match GpuExecutableProto::decode(seed) {
        Ok(mut p) => {
            for _ in 0..rng.usize(1..=3) {
                edit(rng, &mut p);
            }
            p.encode_to_vec()
        }
        Err(_) => seed.to_vec(),
    }
}

/// The line between the two files of a `proto` case.
pub const PROTO_SPLIT: &str = "\n// ---- head ----\n";

/// A `.proto` file from the grammar: the package `fuzz`, a `Root` message and a few more,
/// nested, with fields of every kind and options.
pub fn proto_file(rng: &mut Rng) -> String {
    let mut s = String::from("syntax = \"proto3\";\npackage fuzz;\n");
    let ignorable = rng.bool();
    if ignorable {
        s.push_str("import \"google/protobuf/descriptor.proto\";\nextend google.protobuf.FieldOptions { bool ignorable = 51001; }\n");
    }
    let nmsg = rng.usize(1..6);
    s.push_str(&message(rng, "Root", nmsg, 0, ignorable));
    for m in 1..nmsg {
        s.push_str(&message(rng, &format!("M{m}"), nmsg, 0, ignorable));
    }
    if rng.bool() {
        s.push_str("enum E {\n  E_ZERO = 0;\n  E_ONE = 1;\n");
        if rng.bool() {
            s.push_str("  option allow_alias = true;\n  E_ALIAS = 1;\n");
        }
        s.push_str("}\n");
    }
    s
}

fn message(rng: &mut Rng, name: &str, nmsg: usize, depth: usize, ignorable: bool) -> String {
    let mut s = format!("message {name} {{\n");
    let nfields = match rng.u8(0..10) {
        0 => rng.usize(100..400),
        _ => rng.usize(0..8),
    };
    let types = [
        "int32", "int64", "uint32", "sint64", "fixed32", "bool", "string", "bytes", "double",
        "float",
    ];
    let mut number = 0u32;
    for f in 0..nfields {
        let ty = match rng.u8(0..4) {
            0 => format!("M{}", rng.usize(0..nmsg.max(1))).replace("M0", "Root"),
            1 if nmsg > 0 => "map<string, Root>".to_string(),
            _ => types[rng.usize(0..types.len())].to_string(),
        };
        let repeated = if !ty.starts_with("map") && rng.u8(0..4) == 0 {
            "repeated "
        } else {
            ""
        };
        // Mostly valid numbers; now and then a reserved, the largest or a repeated one.
        let emitted = match rng.u8(0..60) {
            0 => 19_000,
            1 => 536_870_911,
            2 => number,
            _ => {
                number += 1;
                number
            }
        };
        let option = match rng.u8(0..8) {
            0 => " [deprecated = true]".to_string(),
            1 if ignorable => " [(ignorable) = true]".to_string(),
            2 => format!(" [json_name = \"{}\"]", "j".repeat(rng.usize(1..1100))),
            _ => String::new(),
        };
        s.push_str(&format!("  {repeated}{ty} f{f} = {emitted}{option};\n"));
    }
    if rng.u8(0..4) == 0 {
        s.push_str("  oneof choice {\n    int32 c1 = 30001;\n    string c2 = 30002;\n  }\n");
    }
    if rng.u8(0..4) == 0 {
        s.push_str("  reserved 40000 to 40010;\n  reserved \"gone\";\n");
    }
    if depth < 80 && rng.u8(0..3) == 0 {
        // Nested messages, sometimes past the bot's nesting limit of 64.
        let deeper = if rng.u8(0..8) == 0 { 70 } else { depth + 1 };
        s.push_str(&message(rng, &format!("N{depth}"), nmsg, deeper, ignorable));
    }
    s.push_str("}\n");
    s
}

/// A `proto` case: a grammar file, then the same file text-mutated (the head of the diff).
pub fn proto_case(rng: &mut Rng) -> Vec<u8> {
    let base = proto_file(rng);
    let mut head = base.clone().into_bytes();
    for _ in 0..rng.usize(0..3) {
        super::mutate::text(rng, &mut head, &[base.as_bytes()], PROTO_WORDS);
    }
    let mut out = base.into_bytes();
    out.extend_from_slice(PROTO_SPLIT.as_bytes());
    out.extend_from_slice(&head);
    out
}

/// Words the `proto` target's text mutations substitute.
pub const PROTO_WORDS: &[&str] = &[
    "message",
    "enum",
    "oneof",
    "map",
    "repeated",
    "optional",
    "reserved",
    "option",
    "import",
    "package",
    "int32",
    "string",
    "bytes",
    "Root",
    "M1",
    "extend",
    "extensions",
    "=",
    "{",
    "}",
    ";",
    "[",
    "]",
    "(",
    ")",
    "<",
    ">",
    "max",
    "to",
];

/// The `proto` entry point: both files through the bot's compile and model extraction, then
/// the wire rules between them.
pub fn run_proto(input: &[u8]) -> Result<(), Refusal> {
    let text = std::str::from_utf8(input).map_err(|_| Refusal::Utf8)?;
    let (base, head) = text.split_once(PROTO_SPLIT).unwrap_or((text, text));
    let model = |t: &str| -> Result<schema_history::Model, SchemaClass> {
        // The bounds the compile checks first, classed by which one (the compile's error
        // says the same in words).
        if let Err(limit) = schema_history::check_source(t) {
            return Err(match limit.kind {
                schema_history::LimitKind::Nesting => SchemaClass::LimitNesting,
                schema_history::LimitKind::NameLength => SchemaClass::LimitName,
                _ => SchemaClass::Compile,
            });
        }
        let compiled = schema_history::ProtoSources::from_texts([("fuzz.proto", t)])
            .compile(&[], "fuzz")
            .map_err(|_| SchemaClass::Compile)?;
        schema_history::Model::extract(&compiled, "fuzz.Root", "fuzz.ignorable")
            .map_err(|_| SchemaClass::Model)
    };
    let base = model(base).map_err(Refusal::Schema)?;
    let head = model(head).map_err(Refusal::Head)?;
    let history = schema_history::History::default();
    let _ = schema_history::wire(&base, &head, &history);
    Ok(())
}

/// The seed store of the `store` target, held in memory: two cases of h100_sxm v1, their
/// manifest and the census index. Each case writes it into a scratch directory that is removed
/// when the case ends, so a run leaves no directory behind (a seed directory per process under
/// the temp dir used to stay there, one per test or fuzz process).
pub struct SeedStore {
    /// Every file of the store: its path relative to the store and its bytes, sorted by path.
    files: Vec<(String, Vec<u8>)>,
}

impl SeedStore {
    /// Builds the seed store from the golden store under `root`.
    pub fn build(root: &Path) -> anyhow::Result<SeedStore> {
        use crate::golden::Manifest;
        let scratch = tempfile::Builder::new()
            .prefix("aot-fuzz-seed-")
            .tempdir()?;
        let dir = scratch.path().to_path_buf();
        let version = dir.join("h100_sxm/v1");
        let source = root.join("goldens/executables/h100_sxm/v1");
        let mut manifest = Manifest::read(&source).map_err(anyhow::Error::msg)?;
        let keep: Vec<String> = manifest.cases.iter().take(2).cloned().collect();
        for case in &keep {
            let to = version.join(case);
            std::fs::create_dir_all(&to)?;
            for entry in std::fs::read_dir(source.join(case))? {
                let entry = entry?;
                std::fs::copy(entry.path(), to.join(entry.file_name()))?;
            }
        }
        let inside = |path: &str| keep.iter().any(|c| path.starts_with(&format!("{c}/")));
        manifest.cases = keep.clone();
        manifest.files.retain(|path, _| inside(path));
        manifest
            .census
            .retain(|path, _| inside(path) || keep.contains(path));
        std::fs::write(version.join("manifest.json"), manifest.to_json())?;
        let args = crate::cmd::goldens::GoldensArgs {
            store: Some(dir.clone()),
            command: crate::cmd::goldens::GoldensCommand::Index,
        };
        crate::cmd::goldens::run(&args, &mut std::io::sink())?;
        let mut files = Vec::new();
        for entry in walkdir::WalkDir::new(&dir).sort_by_file_name() {
            let entry = entry?;
            if entry.file_type().is_file() {
                let rel = entry.path().strip_prefix(&dir)?.display().to_string();
                files.push((rel, std::fs::read(entry.path())?));
            }
        }
        Ok(SeedStore { files })
    }

    /// The store's files (relative paths), sorted: the files a tamper step may pick.
    fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|(path, _)| path.as_str())
    }

    /// Writes the store into the empty directory `dir`.
    fn write_to(&self, dir: &Path) -> std::io::Result<()> {
        for (path, bytes) in &self.files {
            let to = dir.join(path);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(to, bytes)?;
        }
        Ok(())
    }
}

/// A `store` case: a tamper script, one step a line (`OP PATH [ARG]`).
pub fn store_case(rng: &mut Rng, store: &SeedStore) -> Vec<u8> {
    let files: Vec<&str> = store.paths().collect();
    let mut script = String::new();
    // Now and then no step: the untampered store must verify clean.
    let steps = if rng.u8(0..8) == 0 {
        0
    } else {
        rng.usize(1..=3)
    };
    for _ in 0..steps {
        let file = if files.is_empty() || rng.u8(0..4) == 0 {
            ["census.json", "h100_sxm/v1/manifest.json"][rng.usize(0..2)].to_string()
        } else {
            files[rng.usize(0..files.len())].to_string()
        };
        let op = match rng.u8(0..10) {
            0 => "link /dev/zero".to_string(),
            1 => "link ../../../../etc/hostname".to_string(),
            2 => "link-self".to_string(),
            3 => "fifo".to_string(),
            4 => "dir".to_string(),
            5 => format!("sparse {}", (256u64 << 20) + 1),
            6 => format!("truncate {}", rng.u64(0..4096)),
            7 => "delete".to_string(),
            _ => format!("edit {}", rng.u64(..)),
        };
        script.push_str(&format!("{op}\t{file}\n"));
    }
    script.into_bytes()
}

/// Applies one tamper step to the store copy at `dir`.
fn tamper(dir: &Path, line: &str) -> std::io::Result<()> {
    let Some((op, file)) = line.split_once('\t') else {
        return Ok(());
    };
    // A script names files inside the store: a path that climbs out is not applied.
    if file.split('/').any(|c| c == "..") || file.starts_with('/') {
        return Ok(());
    }
    let path = dir.join(file);
    let (op, arg) = op.split_once(' ').unwrap_or((op, ""));
    // Opening a FIFO or following a link would block or leave the store: the edits that
    // open the file apply to regular files only (the tools under test must cope with the rest).
    let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file());
    if matches!(op, "sparse" | "truncate" | "edit") && path.exists() && !regular {
        return Ok(());
    }
    // The edit reads the file: not one an earlier step made sparse and huge.
    if op == "edit" && std::fs::metadata(&path).is_ok_and(|m| m.len() > 1 << 20) {
        return Ok(());
    }
    let clear = |p: &Path| {
        let _ = std::fs::remove_file(p);
        let _ = std::fs::remove_dir_all(p);
    };
    match op {
        "link" => {
            clear(&path);
            std::os::unix::fs::symlink(arg, &path)
        }
        "link-self" => {
            clear(&path);
            std::os::unix::fs::symlink(path.file_name().unwrap_or_default(), &path)
        }
        "fifo" => {
            clear(&path);
            let status = std::process::Command::new("mkfifo").arg(&path).status()?;
            if status.success() {
                Ok(())
            } else {
                Err(std::io::Error::other("mkfifo failed"))
            }
        }
        "dir" => {
            clear(&path);
            std::fs::create_dir_all(path.join("nested"))
        }
        "sparse" => std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?
            .set_len(arg.parse().unwrap_or(1 << 30)),
        "truncate" => std::fs::OpenOptions::new()
            .write(true)
            .open(&path)?
            .set_len(arg.parse().unwrap_or(0)),
        "delete" => {
            clear(&path);
            Ok(())
        }
        "edit" => {
            let mut bytes = std::fs::read(&path)?;
            let mut rng = Rng::with_seed(arg.parse().unwrap_or(0));
            super::mutate::text(
                &mut rng,
                &mut bytes,
                &[],
                &["version", "files", "census", "cases", "{", "}", "\"", "0"],
            );
            std::fs::write(&path, bytes)
        }
        _ => Ok(()),
    }
}

/// The `store` entry point: a copy of the seed store, tampered with as the script says, then
/// `aot goldens verify` and `aot goldens list` on it. Exit status 1 (an integrity problem) is
/// the expected outcome; an `Err` is an error class.
pub fn run_store(seed: &SeedStore, script: &[u8]) -> Result<(), Refusal> {
    let script = std::str::from_utf8(script).map_err(|_| Refusal::Utf8)?;
    let setup = |e: std::io::Error| Refusal::StoreSetup(e.to_string());
    // Removed when dropped, whatever the tamper steps left in it (links are not followed).
    let scratch = tempfile::Builder::new()
        .prefix("aot-fuzz-store-")
        .tempdir()
        .map_err(setup)?;
    let dir = scratch.path().to_path_buf();
    let result = (|| {
        seed.write_to(&dir).map_err(setup)?;
        for line in script.lines() {
            tamper(&dir, line).map_err(|_| Refusal::TamperNotApplied)?;
        }
        let mut out = Vec::new();
        let mut run = |command| {
            let args = crate::cmd::goldens::GoldensArgs {
                store: Some(dir.clone()),
                command,
            };
            crate::cmd::goldens::run(&args, &mut out)
        };
        let verify = run(crate::cmd::goldens::GoldensCommand::Verify);
        let list = run(crate::cmd::goldens::GoldensCommand::List);
        match (verify, list) {
            (Ok(0), Ok(_)) => Ok(()),
            (Ok(_), Ok(_)) => Err(Refusal::VerifyFoundProblems),
            _ => Err(Refusal::VerifyError),
        }
    })();
    drop(scratch);
    result
}
