//! StableHLO portable artifacts (MLIR bytecode, VHLO): every `.mlirbc` of JAX's GPU back-compat
//! suite (`testdata/jax_backcompat/`, real artifacts JAX serialized from 2024-07 to 2025-10 with
//! StableHLO 0.9.0 to 1.12.1, MLIR bytecode versions 0 to 6) reads into the same HLO module as
//! its `.mlir` text; bad bytes are typed errors.

use std::path::{Path, PathBuf};

use hlo_front::{
    functions_as_text, parse_bytecode, parse_stablehlo, to_stablehlo_text, vhlo_ops, BytecodeError,
    MAX_BYTECODE_VERSION,
};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/jax_backcompat")
}

fn cases() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mlirbc"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_backcompat_artifact_reads_as_its_text() {
    let mut failures = Vec::new();
    let all = cases();
    assert_eq!(all.len(), 36, "the suite's 36 artifacts");
    for bc in &all {
        let text = std::fs::read_to_string(bc.with_extension("mlir")).unwrap();
        // Shardings included: the bytecode's (`mhlo.sharding`, Shardy's) reach the module as
        // the text's do.
        let from_text = parse_stablehlo(&text).unwrap();
        let want = hlo_text::print_module(&from_text);
        let bytes = std::fs::read(bc).unwrap();
        match parse_bytecode(&bytes) {
            Ok(m) => {
                let got = hlo_text::print_module(&m);
                if got != want {
                    let diff = similar::TextDiff::from_lines(&want, &got)
                        .unified_diff()
                        .to_string();
                    failures.push(format!("{}: differs\n{diff}", bc.display()));
                }
            }
            Err(e) => {
                let t = to_stablehlo_text(&bytes).unwrap_or_default();
                failures.push(format!("{}: {e}\n{t}", bc.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn versions_newer_than_known_are_refused_naming_both() {
    let bytes =
        std::fs::read(data_dir().join("cuda_lu_pivots_to_permutation__2025_04_01.mlirbc")).unwrap();
    // Bytecode version: the varint right after the magic (one byte: (v << 1) | 1).
    let mut newer = bytes.clone();
    newer[4] = (7 << 1) | 1;
    let e = parse_bytecode(&newer).unwrap_err();
    assert_eq!(
        e,
        BytecodeError::NewerBytecode {
            found: 7,
            known: MAX_BYTECODE_VERSION
        }
    );
    assert_eq!(
        e.to_string(),
        "MLIR bytecode version 7 is newer than the newest this reader knows (6)"
    );
    // VHLO version: the producer string.
    let producer = b"StableHLO_v1.9.3";
    let at = bytes
        .windows(producer.len())
        .position(|w| w == producer)
        .unwrap();
    let mut newer = bytes.clone();
    newer[at..at + producer.len()].copy_from_slice(b"StableHLO_v9.9.3");
    let e = parse_bytecode(&newer).unwrap_err();
    assert_eq!(
        e.to_string(),
        "StableHLO portable artifact of VHLO version 9.9.3 is newer than the newest this reader knows (1.20)"
    );
}

#[test]
fn truncations_and_byte_flips_are_errors_not_panics() {
    let bytes = std::fs::read(data_dir().join("cuda_threefry2x32__2024_07_30.mlirbc")).unwrap();
    for n in 0..bytes.len() {
        let _ = parse_bytecode(&bytes[..n]);
    }
    for i in 0..bytes.len() {
        for flip in [0x01u8, 0x80, 0xFF] {
            let mut b = bytes.clone();
            b[i] ^= flip;
            let _ = parse_bytecode(&b);
        }
    }
    assert_eq!(
        parse_bytecode(b"MLIR").unwrap_err(),
        BytecodeError::NotBytecode
    );
}

#[test]
fn the_docs_list_every_vhlo_op_and_what_it_becomes() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/jax_export.md"),
    )
    .unwrap();
    let supported = hlo_front::stablehlo_ops();
    let mut missing = Vec::new();
    for op in vhlo_ops() {
        let base = &op[..op.rfind("_v").unwrap()];
        let runs = matches!(base, "func" | "call" | "return") || supported.contains(&base);
        let row = format!("| `{op}` | {} |", if runs { "yes" } else { "no" });
        if !doc.contains(&row) {
            missing.push(row);
        }
    }
    assert!(
        missing.is_empty(),
        "docs/jax_export.md lacks these rows:\n{}",
        missing.join("\n")
    );
}

/// StableHLO's own per-version artifacts (`testdata/vhlo_ops/`): every function converts to text
/// the front end reads, or is refused by name: an unsupported type or attribute while converting,
/// an op or construct the front end refuses. A syntax error in the converted text would be this
/// reader's bug.
#[test]
fn stablehlo_per_version_artifacts_convert_every_function() {
    use hlo_text::ParseErrorKind as K;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/vhlo_ops");
    // (file, functions that lower to HLO today): a drop is a regression; a rise, progress to
    // record here.
    let want = [
        ("stablehlo_legalize_to_vhlo.0_9_0.mlir.bc", 149),
        ("stablehlo_legalize_to_vhlo.0_12_0.mlir.bc", 152),
        ("stablehlo_legalize_to_vhlo.0_14_0.mlir.bc", 152),
        ("stablehlo_legalize_to_vhlo.1_20_0.mlir.bc", 178),
    ];
    let mut bad = Vec::new();
    for (file, min_ok) in want {
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let mut ok = 0;
        for (name, text) in functions_as_text(&bytes).unwrap() {
            match text {
                Ok(t) => match parse_stablehlo(&t) {
                    Ok(_) => ok += 1,
                    Err(e)
                        if matches!(
                            e.kind,
                            K::Syntax
                                | K::Lex
                                | K::UndefinedOperand
                                | K::DuplicateName
                                | K::TooDeep
                        ) =>
                    {
                        bad.push(format!("{file}:{name}: {e}\n{t}"))
                    }
                    Err(_) => {}
                },
                Err(BytecodeError::Unsupported(m)) if m.ends_with("is not supported") => {}
                Err(e) => bad.push(format!("{file}:{name}: {e}")),
            }
        }
        assert_eq!(ok, min_ok, "{file}: functions that lower");
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Programs for 2 devices under Shardy (`testdata/jax_exported/sharded`): the bytecode gives the
/// module the text gives, shardings and the `with_sharding_constraint` included.
#[test]
fn shardy_bytecode_reads_as_its_text() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/jax_exported/sharded");
    for name in ["sharding_constraint", "rows_times_replicated"] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.mlir"))).unwrap();
        let want = hlo_text::print_module(&parse_stablehlo(&text).unwrap());
        assert!(want.contains("sharding={devices=[2,1]"), "{name}: {want}");
        let bytes = std::fs::read(dir.join(format!("{name}.mlirbc"))).unwrap();
        let got = hlo_text::print_module(&parse_bytecode(&bytes).unwrap());
        assert_eq!(got, want, "{name}");
    }
}
