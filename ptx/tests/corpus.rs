//! Round-trip tests over the nvcc corpus (`testdata/corpus/ptx/*.ptx`), one test per file:
//! parse → print → parse gives an equal model, and printing is a fixpoint.

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus/ptx")
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
    let m1 = ptx::parse(&src).map_err(|e| format!("{}:{e}", path.display()))?;
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
    let src_insts = src
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && !l.starts_with("//")
                && !l.starts_with('.')
                && !l.starts_with('{')
                && !l.starts_with('}')
                && !l.starts_with(')')
                && !l.ends_with(':')
        })
        .count();
    let mut n = 0;
    fn count(stmts: &[ptx::Statement], n: &mut usize) {
        for s in stmts {
            match s {
                ptx::Statement::Instruction(_) => *n += 1,
                ptx::Statement::Block(b) => count(b, n),
                _ => {}
            }
        }
    }
    for f in m1.functions() {
        count(f.body.as_deref().unwrap_or(&[]), &mut n);
    }
    if n != src_insts {
        return Err(format!("parsed {n} instructions, source has {src_insts} instruction lines").into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut trials: Vec<Trial> = files
        .into_iter()
        .map(|p| {
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            Trial::test(format!("round_trip::{name}"), move || round_trip(&p))
        })
        .collect();
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
