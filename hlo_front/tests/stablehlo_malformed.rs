//! Malformed StableHLO: truncations and mutations of every corpus `.mlir` file (the JAX corpus and
//! `testdata/stablehlo`) either convert or
//! give a `ParseError` whose line:column lies inside the text; none panics, hangs or allocates
//! without bound. Whatever converts also evaluates (or fails) without panicking.
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use hlo_front::parse_stablehlo;

/// The JAX corpus and this project's own exports (pretty and generic forms).
fn corpus() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let mut files: Vec<_> = ["corpus/hlo", "stablehlo"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap().flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "mlir"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect()
}

/// Parses `text`; panics (failing the test) with `what` when the parser panics or reports a
/// location outside the text.
fn parse_checked(text: &str, what: &str) -> bool {
    let r = catch_unwind(AssertUnwindSafe(|| parse_stablehlo(text)));
    match r {
        Err(_) => panic!("{what} panicked"),
        Ok(Err(e)) => {
            let lines: Vec<&str> = text.split('\n').collect();
            let line = e.line as usize;
            assert!(
                line >= 1 && line <= lines.len(),
                "{what}: line {} outside 1..={}: {e}",
                e.line,
                lines.len()
            );
            let len = lines[line - 1].chars().count();
            assert!(
                e.column >= 1 && e.column as usize <= len + 1,
                "{what}: column {} outside 1..={}: {e}",
                e.column,
                len + 1
            );
            false
        }
        Ok(Ok(_)) => true,
    }
}

#[test]
fn truncations_never_panic() {
    let files = corpus();
    assert!(files.len() >= 43, "corpus missing: {}", files.len());
    let (mut cuts, mut errors) = (0, 0);
    for (name, text) in &files {
        let boundaries: Vec<usize> = (0..text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        let step = (boundaries.len() / 60).max(1);
        for &cut in boundaries.iter().step_by(step) {
            // A cut that drops only trailing whitespace leaves the module whole.
            let incomplete = !text[cut..].trim().is_empty();
            cuts += usize::from(incomplete);
            if !parse_checked(&text[..cut], &format!("{name} truncated at {cut}")) {
                errors += 1;
            }
            // And one byte corrupted at the cut.
            let mut bytes = text.clone().into_bytes();
            bytes[cut] = b"}{)(,=%@\"x<>:#^[]"[cut % 17];
            if let Ok(s) = String::from_utf8(bytes) {
                parse_checked(&s, &format!("{name} corrupted at {cut}"));
            }
        }
    }
    // Every prefix that drops more than whitespace is an incomplete module: all are errors.
    assert_eq!(cuts, errors, "{cuts} cuts, {errors} errors");
    assert!(cuts > 2000, "{cuts} cuts");
}

#[test]
fn mutations_never_panic() {
    let replacements = [
        "9223372036854775807",
        "-9223372036854775808",
        "99999999999999999999999999999999999999999",
        "0",
        "-1",
        "0x",
        "0xFFFFFFFFFFFFFFFFFFFF",
        "",
        "{",
        "(",
        "%x",
        "%0#7",
        "tensor<?xf32>",
        "tensor<1000000000x1000000000xf32>",
        "dense<\"0x00\">",
        "\"",
        "^bb0:",
        "stablehlo.while",
        "chlo.lgamma",
        "loc(",
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut converted = 0;
    for (name, text) in corpus() {
        // Token boundaries: positions after a space, comma or bracket.
        let starts: Vec<usize> = text
            .char_indices()
            .filter(|(_, c)| matches!(c, ' ' | ',' | '(' | '<' | '['))
            .map(|(i, _)| i + 1)
            .collect();
        for _ in 0..40 {
            let at = starts[(next() as usize) % starts.len()];
            let end = text[at..]
                .find([' ', ',', ')', '>', ']', '\n'])
                .map_or(text.len(), |e| at + e);
            let rep = replacements[(next() as usize) % replacements.len()];
            let mutated = format!("{}{}{}", &text[..at], rep, &text[end..]);
            if parse_checked(&mutated, &format!("{name} with [{at}..{end}] = {rep:?}")) {
                converted += 1;
                let m = parse_stablehlo(&mutated).unwrap();
                let r = catch_unwind(AssertUnwindSafe(|| hlo_text::print_module(&m)));
                assert!(r.is_ok(), "{name}: printing a mutated conversion panicked");
            }
        }
    }
    assert!(
        converted > 0,
        "no mutation converted: the test exercises nothing past the parser"
    );
}

/// Deep nesting is an error, not a stack overflow.
#[test]
fn deep_nesting_is_an_error() {
    let deep_attr = format!(
        "func.func @main(%a: tensor<f32>) -> tensor<f32> attributes {{x = {}1{}}} {{\n  return %a : tensor<f32>\n}}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let e = parse_stablehlo(&deep_attr).unwrap_err();
    assert_eq!(
        e.to_string(),
        "1:128: func.func @main: nesting deeper than 64 levels"
    );
    let mut regions =
        String::from("func.func @main(%p: tensor<i1>, %a: tensor<f32>) -> tensor<f32> {\n");
    for _ in 0..200 {
        regions.push_str("%r = \"stablehlo.if\"(%p) ({\n");
    }
    let e = parse_stablehlo(&regions).unwrap_err();
    assert_eq!(e.kind, hlo_text::ParseErrorKind::TooDeep, "{e}");
}
