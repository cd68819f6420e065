//! Round-trip tests over the nvcc corpus (`testdata/corpus/ptx/*.ptx`) and `ptx/tests/data`,
//! one test per file: parse → print → parse gives an equal model, and printing is a fixpoint.
//!
//! `printed::*` compares the printer's output with the snapshots in `ptx/tests/printed/`; after
//! an intended printer change, re-bless them with
//! `PTX_BLESS=1 cargo test -p ptx --test corpus`.

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use ptx::*;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus/ptx")
}

/// `.ptx` files of a directory, sorted; empty when it is unreadable.
fn ptx_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Test inputs with their test-name prefixes: the nvcc corpus (`testdata/corpus/ptx`), this
/// crate's own files (`ptx/tests/data`: hand-written features and libnvvm 12.9 output), and any
/// directories in `$PTX_EXTRA_CORPUS` (colon-separated) for ad-hoc checks.
fn inputs() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for p in ptx_files(&corpus_dir()) {
        out.push((stem(&p), p));
    }
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for p in ptx_files(&data) {
        out.push((format!("data::{}", stem(&p)), p));
    }
    if let Some(extra) = std::env::var_os("PTX_EXTRA_CORPUS") {
        for dir in std::env::split_paths(&extra) {
            for p in ptx_files(&dir) {
                out.push((format!("extra::{}", stem(&p)), p));
            }
        }
    }
    out
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn diff(a: &str, b: &str, a_name: &str, b_name: &str) -> String {
    similar::TextDiff::from_lines(a, b)
        .unified_diff()
        .context_radius(3)
        .header(a_name, b_name)
        .to_string()
}

fn round_trip(path: &Path) -> Result<(), Failed> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    round_trip_text(&path.display().to_string(), &src)
}

fn round_trip_text(name: &str, src: &str) -> Result<(), Failed> {
    let m1 = ptx::parse(src).map_err(|e| format!("{name}:{e}"))?;
    if m1.functions().all(|f| f.body.is_none()) {
        return Err("no function body parsed".into());
    }
    let p1 = ptx::print(&m1);
    let m2 = ptx::parse(&p1).map_err(|e| format!("re-parsing printed text: {e}\n{p1}"))?;
    if m1 != m2 {
        return Err(format!(
            "model changed after print → parse:\n{}",
            diff(
                &format!("{m1:#?}"),
                &format!("{m2:#?}"),
                "parsed",
                "reparsed"
            )
        )
        .into());
    }
    let p2 = ptx::print(&m2);
    if p1 != p2 {
        return Err(format!(
            "printing is not a fixpoint:\n{}",
            diff(&p1, &p2, "print1", "print2")
        )
        .into());
    }
    // Every instruction line of the source appears as one parsed instruction.
    // Statements ending in ';' that are not directives: one per instruction (a multi-line
    // call ends on its `);` line).
    let src_insts = src
        .lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
        .filter(|l| l.ends_with(';') && *l != ";" && !l.starts_with('.') && !l.contains(": ."))
        .count();
    let n: usize = m1.functions().map(|f| f.instructions().count()).sum();
    if n != src_insts {
        return Err(
            format!("parsed {n} instructions, source has {src_insts} instruction lines").into(),
        );
    }
    Ok(())
}

/// Hand-written coverage of constructs nvcc's corpus lacks (also assembled by `tests/ptxas.rs`).
const FEATURES: &str = include_str!("data/features.ptx");

fn find_inst<'a>(stmts: &'a [Statement], text: &str, out: &mut Vec<&'a Instruction>) {
    for s in stmts {
        match s {
            Statement::Instruction(i) if i.to_string().starts_with(text) => out.push(i),
            Statement::Block(b) => find_inst(b, text, out),
            _ => {}
        }
    }
}

fn check(cond: bool, what: &str) -> Result<(), Failed> {
    if cond {
        Ok(())
    } else {
        Err(format!("check failed: {what}").into())
    }
}

/// Spot checks of the typed model on the feature file.
fn features_model() -> Result<(), Failed> {
    let m = ptx::parse(FEATURES).map_err(|e| e.to_string())?;
    check(m.version == Version { major: 8, minor: 0 }, "version")?;
    check(
        m.target.arch == "sm_90" && m.address_size == Some(64),
        "target",
    )?;
    let k = m.kernel("features").ok_or("kernel `features` missing")?;
    check(k.params().len() == 3, "three params")?;
    let p0 = &k.params()[0];
    check(
        p0.ptr
            == Some(PtrAttr {
                space: Some(StateSpace::Global),
                align: Some(16),
            }),
        ".ptr .global .align 16",
    )?;
    check(
        k.params()[2].array == vec![Some(24)] && k.params()[2].align == Some(8),
        "param array",
    )?;
    check(k.ntid_hint() == Some(&[256, 1, 1][..]), "maxntid")?;
    check(
        k.perf.contains(&PerfDirective::MinNctaPerSm(2)),
        "minnctapersm",
    )?;
    let helper = m.function("helper").ok_or("helper missing")?;
    check(
        helper.return_params.as_ref().is_some_and(|r| r.len() == 1),
        "retval",
    )?;
    check(
        m.function("external_fn").is_some_and(|f| f.body.is_none()),
        "extern decl",
    )?;
    check(
        m.function("noret_fn")
            .is_some_and(|f| f.perf == vec![PerfDirective::NoReturn]),
        "noreturn",
    )?;
    let reg_fn = m.function("reg_fn").ok_or("reg_fn missing")?;
    check(
        matches!(reg_fn.body.as_deref(), Some([Statement::Instruction(i), ..])
            if i.operands == vec![Operand::reg("reg_ret"), Operand::reg("reg_in"), Operand::int(1)]),
        ".reg params are registers in the body",
    )?;
    let table = m
        .variables()
        .find(|v| v.declarators[0].name == "table")
        .ok_or("table")?;
    check(
        table.declarators[0].init
            == Some(Initializer::List(vec![
                Initializer::Imm(Immediate::Int(1)),
                Initializer::Imm(Immediate::Int(16)),
                Initializer::Imm(Immediate::Int(-3)),
                Initializer::Imm(Immediate::Int(15)),
            ])),
        "table initializer",
    )?;
    let ptrs = m
        .variables()
        .find(|v| v.declarators[0].name == "ptrs")
        .ok_or("ptrs")?;
    check(
        matches!(&ptrs.declarators[0].init, Some(Initializer::List(v))
            if v[1] == Initializer::Generic { name: "table".into(), offset: 4 }),
        "generic initializer",
    )?;
    let smem = m
        .variables()
        .find(|v| v.declarators[0].name == "dyn_smem")
        .ok_or("dyn_smem")?;
    check(
        smem.linkage == Some(Linkage::Extern) && smem.declarators[0].array == vec![None],
        "extern smem",
    )?;
    check(
        m.directives
            .iter()
            .any(|d| matches!(d, Directive::Section(s) if s.name == "debug_str")),
        "section",
    )?;

    let body = k.body.as_deref().unwrap_or(&[]);
    let one = |text: &str| -> Result<Instruction, Failed> {
        let mut v = Vec::new();
        find_inst(body, text, &mut v);
        v.first()
            .map(|i| (*i).clone())
            .ok_or_else(|| format!("no instruction `{text}`").into())
    };
    let i = one("ld.global.nc.v4.f32")?;
    check(
        i.has(Modifier::Nc) && i.vector() == Some(VectorWidth::V4) && i.ty() == Some(Type::F32),
        "ld.nc.v4",
    )?;
    check(
        matches!(&i.operands[0], Operand::Vector(v) if v.len() == 4),
        "vector dst",
    )?;
    let i = one("ld.global.L1::evict_last")?;
    check(
        i.cache_hints() == vec![CacheHint::L1EvictLast],
        "evict_last",
    )?;
    check(
        i.operands[1]
            == Operand::Address(Address {
                base: AddressBase::Reg(Register("%rd5".into())),
                offset: -16,
            }),
        "negative offset",
    )?;
    let i = one("ld.acquire.sys")?;
    check(
        i.semantics() == Some(MemSemantics::Acquire) && i.scope() == Some(Scope::Sys),
        "acquire.sys",
    )?;
    let i = one("fma.rn.ftz.sat")?;
    check(
        i.rounding() == Some(Rounding::Rn) && i.has(Modifier::Ftz) && i.has(Modifier::Sat),
        "fma mods",
    )?;
    let i = one("setp.gtu.or")?;
    check(
        i.cmp_op() == Some(CmpOp::Gtu) && i.bool_op() == Some(BoolOp::Or),
        "setp cmp/bool",
    )?;
    check(matches!(&i.operands[0], Operand::Pair(..)), "p|q")?;
    check(i.operands[3] == Operand::Not(Register("%p2".into())), "!p")?;
    let i = one("cvt.rzi.s32.f32")?;
    check(
        i.types() == vec![Type::S32, Type::F32] && i.ty2() == Some(Type::F32),
        "cvt types",
    )?;
    let i = one("mul.hi.u32")?;
    check(
        i.mul_mode() == Some(Modifier::Hi)
            && i.operands[2] == Operand::Imm(Immediate::Int(-1431655765)),
        "mul.hi",
    )?;
    let i = one("shfl.sync.bfly")?;
    check(
        i.shfl_mode() == Some(ShflMode::Bfly) && i.has(Modifier::Sync),
        "shfl",
    )?;
    let i = one("vote.sync.ballot")?;
    check(i.vote_mode() == Some(VoteMode::Ballot), "vote")?;
    let i = one("atom.acq_rel.gpu.global.cas")?;
    check(
        i.reduce_op() == Some(ReduceOp::Cas) && i.state_space() == Some(StateSpace::Global),
        "atom cas",
    )?;
    let i = one("bar.red.popc")?;
    check(
        i.has(Modifier::BarRed) && i.reduce_op() == Some(ReduceOp::Popc),
        "bar.red.popc",
    )?;
    let i = one("mov.u32\t%r3")?;
    check(
        i.operands[1] == Operand::Special(SpecialReg::Tid(Dim::X)),
        "%tid.x",
    )?;
    let i = one("mov.u32\tnamed_a")?;
    check(
        i.operands[0] == Operand::Reg(Register("named_a".into())),
        "named register",
    )?;
    let i = one("mov.u64\t%rd10")?;
    check(i.operands[1] == Operand::symbol("table"), "symbol operand")?;
    let i = one("mov.b32\t{%rs1, _}")?;
    check(
        matches!(&i.operands[0], Operand::Vector(v) if v[1] == Operand::Sink),
        "sink",
    )?;
    let i = one("call.uni")?;
    check(
        i.operands
            == vec![
                Operand::List(vec![Operand::symbol("retval0")]),
                Operand::symbol("helper"),
                Operand::List(vec![Operand::symbol("param0"), Operand::symbol("param1")]),
            ],
        "call operands",
    )?;
    let i = one("@!inner_p sub")?;
    check(
        i.guard
            == Some(Guard {
                negated: true,
                reg: Register("inner_p".into()),
            }),
        "named guard",
    )?;
    let i = one("mov.f32\t%f1, 0f7F800000")?;
    check(
        i.operands[1] == Operand::Imm(Immediate::F32(0x7F80_0000)),
        "f32 imm",
    )?;
    let i = one("mma.sync.aligned.m16n8k16.row.col")?;
    check(
        i.has(Modifier::Shape(Shape::M16n8k16))
            && i.has(Modifier::Layout(Layout::Row))
            && i.types() == vec![Type::F32, Type::F16, Type::F16, Type::F32],
        "mma",
    )?;
    let i = one("ldmatrix.sync.aligned.m8n8.x2.trans")?;
    check(
        i.has(Modifier::Count(MatrixCount::X2)) && i.has(Modifier::Trans),
        "ldmatrix",
    )?;
    check(
        one("cp.async.commit_group")?.op == Opcode::CpAsyncCommitGroup,
        "cp.async.commit_group",
    )?;
    check(
        body.iter()
            .any(|s| matches!(s, Statement::BranchTargets { labels, .. } if labels.len() == 2)),
        "branchtargets",
    )?;
    check(
        body.iter()
            .any(|s| matches!(s, Statement::Loc(l) if l.inlined_at.is_some())),
        "inlined loc",
    )?;
    Ok(())
}

fn printed_snapshot(name: &str, path: &Path) -> Result<(), Failed> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let m = ptx::parse(&src).map_err(|e| format!("{}:{e}", path.display()))?;
    let printed = ptx::print(&m);
    let snap = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/printed")
        .join(format!("{}.ptx", name.replace("::", "__")));
    if std::env::var_os("PTX_BLESS").is_some() {
        if let Some(dir) = snap.parent() {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        std::fs::write(&snap, &printed).map_err(|e| format!("{}: {e}", snap.display()))?;
        return Ok(());
    }
    let Ok(expected) = std::fs::read_to_string(&snap) else {
        return Err(format!(
            "{} is missing; create it with PTX_BLESS=1 cargo test -p ptx --test corpus",
            snap.display()
        )
        .into());
    };
    if expected != printed {
        return Err(format!(
            "printer output differs from {}:\n{}\nIf the change is intended, re-bless with \
             PTX_BLESS=1 cargo test -p ptx --test corpus",
            snap.display(),
            diff(&expected, &printed, "snapshot", "printed")
        )
        .into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = inputs()
        .into_iter()
        .flat_map(|(name, p)| {
            let p2 = p.clone();
            let n2 = name.clone();
            let mut v = vec![Trial::test(format!("round_trip::{name}"), move || {
                round_trip(&p)
            })];
            // Ad-hoc extra inputs have no snapshots.
            if !name.starts_with("extra::") {
                v.push(Trial::test(format!("printed::{name}"), move || {
                    printed_snapshot(&n2, &p2)
                }));
            }
            v
        })
        .collect();
    trials.push(Trial::test("model::features", features_model));
    trials.push(Trial::test("corpus_present", || {
        let n = std::fs::read_dir(corpus_dir())
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .filter(|e| e.path().extension().is_some_and(|x| x == "ptx"))
                    .count()
            })
            .unwrap_or(0);
        if n >= 13 {
            Ok(())
        } else {
            Err(format!("expected at least 13 corpus files, found {n}").into())
        }
    }));
    libtest_mimic::run(&args, trials).exit();
}
