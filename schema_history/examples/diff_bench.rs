//! Benchmark: the schema bot's whole diff on a generated schema (20 files, 300 messages, imports
//! across files) next to protox's compile of the same files, measured side by side in one run.
//!
//! `cargo run --release -p schema_history --example diff_bench [ITERATIONS]`
//!
//! The diff reads the base from git objects and the head from the working tree, compiles both,
//! walks reachability, runs every rule (against a 3-snapshot history) and renders the report; the
//! target is within 2x of one compile. `SCHEMA_HISTORY_TRACE=1` prints when each of the diff's
//! steps ends. `DIFF_BENCH_EDITIONS=1` writes the schema as edition 2023 files (the same reader
//! view: implicit presence at file level, `scale` explicit) and times the diff against protox's
//! compile of the proto3 twins, which protox can read. `DIFF_BENCH_HISTORY=N` keeps no
//! snapshots and instead commits N earlier states (each touching one file), so that the diff's
//! history rules walk the git history (one compile per state). `DIFF_BENCH_REPO=DIR` measures
//! instead what `aot bench`'s schema section does: the project layout at DIR (its protos, HEAD
//! against the working tree, its snapshots, goldens, runtime sources and waivers) next to
//! protox's compile of DIR's working-tree protos, the best of ITERATIONS each.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use schema_history::{
    diff, write_snapshot, Date, DiffOptions, Extras, Format, Repo, Revision, SchemaSpec, Surface,
};

const FILES: usize = 20;
const MESSAGES_PER_FILE: usize = 15;

fn editions() -> bool {
    std::env::var_os("DIFF_BENCH_EDITIONS").is_some()
}

/// The edition 2023 form of a proto3 file of [`file_text`].
fn edition_text(proto3: &str) -> String {
    proto3
        .replace(
            "syntax = \"proto3\";",
            "edition = \"2023\";\noption features.field_presence = IMPLICIT;",
        )
        .replace(
            "optional double scale = 5;",
            "double scale = 5 [features.field_presence = EXPLICIT];",
        )
        .replace("reserved \"gone\";", "reserved gone;")
        .replace("reserved \"removed\";", "reserved removed;")
}

fn file_text(i: usize, variant: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "syntax = \"proto3\";\npackage bench.f{i:02};");
    if i > 0 {
        let _ = writeln!(s, "import \"bench/f{:02}.proto\";", i - 1);
    }
    if i == FILES - 1 {
        for k in 0..i - 1 {
            let _ = writeln!(s, "import \"bench/f{k:02}.proto\";");
        }
    }
    let _ = writeln!(
        s,
        "enum Kind{i} {{ KIND{i}_UNSET = 0; KIND{i}_A = 1; KIND{i}_B = 2; }}"
    );
    for j in 0..MESSAGES_PER_FILE {
        let _ = writeln!(s, "// Message {j} of file {i}.\nmessage M{j} {{");
        let _ = writeln!(s, "  reserved 20 to 25;\n  reserved \"gone\";");
        let _ = writeln!(
            s,
            "  int32 id = 1;\n  string name = 2;\n  repeated int64 dims = 3;"
        );
        let _ = writeln!(s, "  Kind{i} kind = 4;\n  optional double scale = 5;");
        if j + 1 < MESSAGES_PER_FILE {
            let _ = writeln!(s, "  M{} next = 6;", j + 1);
        }
        if i > 0 {
            let _ = writeln!(s, "  bench.f{:02}.M0 prev = 7;", i - 1);
        }
        let _ = writeln!(
            s,
            "  oneof impl {{ bytes raw = 8; string text = 9; }}\n  map<string, int64> attrs = 10;"
        );
        if variant && i == FILES / 2 && j == 3 {
            // The change under review: one field added, one removed and reserved.
            let _ = writeln!(
                s,
                "  int64 added = 11;\n  reserved 12; reserved \"removed\";"
            );
        } else {
            let _ = writeln!(s, "  int32 removed = 12;");
        }
        let _ = writeln!(s, "}}");
    }
    if i == FILES - 1 {
        let _ = writeln!(s, "message Root {{");
        for k in 0..FILES {
            let _ = writeln!(s, "  bench.f{k:02}.M0 f{k:02} = {};", k + 1);
        }
        let _ = writeln!(s, "}}");
    }
    s
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "git {args:?} failed");
}

/// The schema under `proto/` (as edition 2023 files in editions mode) and its proto3 form under
/// `twin/` for protox's compile.
fn write_schema(dir: &Path, variant: bool) {
    for i in 0..FILES {
        let text = file_text(i, variant);
        for (root, text) in [
            (
                "proto",
                if editions() {
                    edition_text(&text)
                } else {
                    text.clone()
                },
            ),
            ("twin", text.clone()),
        ] {
            let path = dir.join(format!("{root}/bench/f{i:02}.proto"));
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// The project layout at `root`, as `aot bench`'s schema section measures it (best of
/// `iterations`): one compile of the working tree's protos, then the bot's whole diff.
fn project(root: &Path, iterations: usize) {
    let spec = SchemaSpec::project();
    let repo = Repo::new(root);
    let best = |f: &mut dyn FnMut()| {
        (0..iterations.max(1))
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    let compile = best(&mut || {
        spec.compile(&repo, &Revision::WorkTree)
            .expect("the project's protos compile");
    });
    let opts = DiffOptions::project(
        root,
        Revision::Git("HEAD".into()),
        Revision::WorkTree,
        Date::today(),
    );
    let mut findings = 0;
    let d = best(&mut || findings = diff(&opts).expect("diff runs").findings.len());
    println!(
        "{}: protox compile {:.2} ms, whole diff ({findings} findings) {:.2} ms, ratio {:.2}x (best of {iterations})",
        root.display(),
        compile.as_secs_f64() * 1e3,
        d.as_secs_f64() * 1e3,
        d.as_secs_f64() / compile.as_secs_f64().max(1e-9)
    );
}

fn main() {
    let iterations: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(15);
    if let Some(root) = std::env::var_os("DIFF_BENCH_REPO") {
        return project(Path::new(&root), iterations);
    }
    let dir: PathBuf = std::env::temp_dir().join(format!("schema-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["config", "user.name", "bench"]);
    git(&dir, &["config", "user.email", "bench@example.invalid"]);
    git(&dir, &["config", "commit.gpgsign", "false"]);

    let spec = SchemaSpec {
        proto_dirs: vec!["proto".into()],
        files: Vec::new(),
        root: "bench.f19.Root".into(),
        ignorable: "none.ignorable".into(),
    };
    write_schema(&dir, false);
    let history_commits: usize = std::env::var("DIFF_BENCH_HISTORY")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    for k in 0..history_commits {
        // An earlier state: one file differs (a comment), so each commit is a state to compile.
        let path = dir.join(format!("proto/bench/f{:02}.proto", k % FILES));
        let text = std::fs::read_to_string(&path).expect("read");
        std::fs::write(&path, format!("// state {k}\n{text}")).expect("write");
        git(&dir, &["add", "-A"]);
        git(&dir, &["commit", "-q", "-m", &format!("state {k}")]);
    }
    if history_commits > 0 {
        write_schema(&dir, false);
    }
    // A short history, so the reuse rules have snapshots to walk.
    let days: &[&str] = if history_commits > 0 {
        &[]
    } else {
        &["2026-01-01", "2026-02-01", "2026-03-01"]
    };
    for (k, day) in days.iter().enumerate() {
        let compiled = spec
            .compile(&Repo::new(&dir), &Revision::WorkTree)
            .expect("compiles");
        let surface = Surface::new(
            &compiled,
            &spec.root,
            &spec.ignorable,
            Extras::default(),
            day.parse().expect("date"),
            &format!("s{k}"),
        )
        .expect("surface");
        let snapshots = dir.join("schema_history/snapshots");
        let _ = std::fs::create_dir_all(&snapshots);
        // Force distinct snapshots by writing each into its own directory.
        let one = snapshots.join(format!("tmp{k}"));
        write_snapshot(&one, &surface, &format!("s{k}"), false, &spec.ignorable).expect("snap");
    }
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    write_schema(&dir, true);

    let files: Vec<String> = (0..FILES).map(|i| format!("bench/f{i:02}.proto")).collect();
    let messages = FILES * MESSAGES_PER_FILE + 1;
    let today: Date = "2026-11-29".parse().expect("date");
    let mut opts = DiffOptions::project(
        &dir,
        Revision::Git("HEAD".into()),
        Revision::WorkTree,
        today,
    );
    opts.spec = spec;

    let mut compile_times = Vec::new();
    let mut diff_times = Vec::new();
    let mut findings = 0;
    for _ in 0..iterations {
        let t = Instant::now();
        let mut compiler = protox::Compiler::new([dir.join("twin")]).expect("compiler");
        compiler.include_imports(true).include_source_info(true);
        compiler.open_files(&files).expect("protox compiles");
        let pool = compiler.descriptor_pool();
        compile_times.push(t.elapsed());
        assert!(pool.get_message_by_name("bench.f19.Root").is_some());

        let t = Instant::now();
        let report = diff(&opts).expect("diff runs");
        let _ = report.render(Format::Text);
        diff_times.push(t.elapsed());
        findings = report.findings.len();
    }
    if std::env::var_os("BENCH_BREAKDOWN").is_some() {
        let repo = Repo::new(&dir);
        let t = Instant::now();
        let src = schema_history::ProtoSources::load(
            &repo,
            &Revision::Git("HEAD".into()),
            &opts.spec.proto_dirs,
        )
        .expect("load");
        println!("  load from git: {:?}", t.elapsed());
        let t = Instant::now();
        let compiled = src.compile(&[], "x").expect("compile");
        println!("  compile: {:?}", t.elapsed());
        let t = Instant::now();
        let _m = opts
            .spec
            .model(&compiled, &Revision::WorkTree)
            .expect("model");
        println!("  model: {:?}", t.elapsed());
        let t = Instant::now();
        let _h = schema_history::load_history(
            &repo,
            &Revision::WorkTree,
            "schema_history/snapshots",
            "x",
        )
        .expect("h");
        println!("  history (3 snapshots): {:?}", t.elapsed());
    }
    // The common case for the bot: a change that does not touch the protos.
    write_schema(&dir, false);
    let mut same_compile = Vec::new();
    let mut same_diff = Vec::new();
    for _ in 0..iterations {
        let t = Instant::now();
        let mut compiler = protox::Compiler::new([dir.join("twin")]).expect("compiler");
        compiler.include_imports(true).include_source_info(true);
        compiler.open_files(&files).expect("protox compiles");
        same_compile.push(t.elapsed());
        let t = Instant::now();
        let report = diff(&opts).expect("diff runs");
        let _ = report.render(Format::Text);
        same_diff.push(t.elapsed());
    }
    let c = median(compile_times);
    let d = median(diff_times);
    println!(
        "schema: {FILES} files, {messages} messages{}; {iterations} iterations, medians",
        if editions() {
            " (edition 2023; protox compiles the proto3 twins)"
        } else {
            ""
        }
    );
    println!(
        "protox compile (one side, from disk): {:>9.2} ms",
        c.as_secs_f64() * 1e3
    );
    println!(
        "schema diff (base from git, head from the working tree, rules, report, {findings} findings): {:>9.2} ms",
        d.as_secs_f64() * 1e3
    );
    println!(
        "ratio diff/compile: {:.2}x (target: within 2x)",
        d.as_secs_f64() / c.as_secs_f64().max(1e-9)
    );
    let (c2, d2) = (median(same_compile), median(same_diff));
    println!(
        "no proto change: compile {:.2} ms, diff {:.2} ms, ratio {:.2}x",
        c2.as_secs_f64() * 1e3,
        d2.as_secs_f64() * 1e3,
        d2.as_secs_f64() / c2.as_secs_f64().max(1e-9)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The allocator of the `aot` binary, which runs the bot (`aot schema diff`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
