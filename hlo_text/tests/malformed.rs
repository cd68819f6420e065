//! Malformed inputs: each must give a `ParseError` with a line and column, never a panic.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use hlo_text::{parse_module, print_module, ParseError, ParseErrorKind};

const GOOD: &str = "HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  p = f32[4]{0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
}
";

fn err(text: &str) -> ParseError {
    match parse_module(text) {
        Ok(m) => panic!("expected an error, parsed:\n{}", print_module(&m)),
        Err(e) => {
            assert!(e.line >= 1 && e.column >= 1, "no location: {e:?}");
            e
        }
    }
}

#[track_caller]
fn expect(text: &str, kind: ParseErrorKind, line: u32, needle: &str) {
    let e = err(text);
    assert_eq!(e.kind, kind, "{e}");
    assert_eq!(e.line, line, "{e}");
    assert!(
        e.message.contains(needle),
        "message {:?} lacks {needle:?}",
        e.message
    );
}

#[test]
fn good_parses() {
    parse_module(GOOD).unwrap();
}

#[test]
fn unknown_opcode() {
    let t = GOOD.replace("add(a, b)", "frobnicate(a, b)");
    let e = err(&t);
    assert_eq!(e.kind, ParseErrorKind::UnknownOpcode);
    assert_eq!((e.line, e.column), (6, 18));
    assert!(e.message.contains("frobnicate"));
}

#[test]
fn undefined_operand() {
    expect(
        &GOOD.replace("add(a, b)", "add(a, c)"),
        ParseErrorKind::UndefinedOperand,
        6,
        "'c'",
    );
}

#[test]
fn undefined_computation() {
    expect(
        &GOOD.replace("to_apply=add", "to_apply=nope"),
        ParseErrorKind::UndefinedComputation,
        12,
        "nope",
    );
}

#[test]
fn duplicate_instruction_name() {
    expect(
        &GOOD.replace("b = f32[] parameter(1)", "a = f32[] parameter(1)"),
        ParseErrorKind::DuplicateName,
        5,
        "'a'",
    );
}

#[test]
fn duplicate_computation() {
    let t = GOOD.replace(
        "ENTRY main",
        "add {\n x = f32[] parameter(0)\n}\nENTRY main",
    );
    expect(&t, ParseErrorKind::DuplicateName, 9, "add");
}

#[test]
fn bad_element_type() {
    expect(
        &GOOD.replace("f32[4]{0}", "f33[4]{0}"),
        ParseErrorKind::BadShape,
        10,
        "f33",
    );
}

#[test]
fn bad_layout() {
    expect(
        &GOOD.replace("f32[4]{0}", "f32[4]{1}"),
        ParseErrorKind::BadShape,
        10,
        "layout",
    );
}

#[test]
fn negative_dimension() {
    expect(
        &GOOD.replace("f32[4]{0}", "f32[-4]{0}"),
        ParseErrorKind::BadShape,
        10,
        "negative",
    );
}

#[test]
fn unbalanced_braces() {
    let e = err(&GOOD.replace("dimensions={0}", "dimensions={0"));
    assert_eq!(e.kind, ParseErrorKind::Syntax);
    let e = err(&GOOD.replace("ROOT s = f32[] add(a, b)\n}", "ROOT s = f32[] add(a, b)\n"));
    assert_eq!(e.kind, ParseErrorKind::Syntax);
    let e = err(&GOOD.replace("add(a, b)", "add(a, b"));
    assert_eq!(e.kind, ParseErrorKind::Syntax);
    assert!(e.message.contains("expected"), "{e}");
}

#[test]
fn literal_count_mismatch() {
    let t = "HloModule m\nENTRY e {\n ROOT c = f32[3] constant({1, 2})\n}\n";
    expect(t, ParseErrorKind::BadLiteral, 3, "3");
    let t = "HloModule m\nENTRY e {\n ROOT c = s32[] constant(1.5)\n}\n";
    expect(t, ParseErrorKind::BadLiteral, 3, "s32");
}

#[test]
fn garbage() {
    for g in [
        "\u{0}\u{1}\u{2}",
        "@@@",
        "HloModule",
        "HloModule m\nENTRY",
        "HloModule m\nENTRY e {",
        "HloModule m\nENTRY e { }",
        "}}}}",
        "HloModule m\n\"unterminated",
        "HloModule m /* unterminated",
        "HloModule m\nENTRY e {\n ROOT x = f32[] parameter(0), metadata={op_name=}\n}",
        "HloModule m\nENTRY e {\n ROOT x = f32[] parameter(0), window={size=2x}\n}",
        "HloModule m\nENTRY e {\n ROOT x = f32[] parameter(0), slice={[1:]}\n}",
        "HloModule m\nENTRY e {\n ROOT x = f32[] parameter(0), padding=1_2_3_4\n}",
        "HloModule m\nENTRY e {\n ROOT x = f32[] parameter(0), dim_labels=bf_io->zz\n}",
        "HloModule m\nENTRY e {\n ROOT x = f32[] parameter(0), direction=SIDEWAYS\n}",
        "HloModule m\nENTRY e {\n ROOT x = f32[] parameter(0), is_stable=maybe\n}",
        "HloModule m\nENTRY e {\n ROOT x = f32[] parameter(0), dimensions={0}, dimensions={1}\n}",
        "HloModule m\nENTRY e {\n ROOT x = f32[] parameter(1)\n}",
        "HloModule m\nENTRY e {\n x = f32[] parameter(0)\n ROOT y = f32[] parameter(0)\n}",
        "HloModule m\nENTRY e {\n ROOT x = f32[] parameter(0)\n ROOT y = f32[] negate(x)\n}",
        "HloModule m\nENTRY e {\n ROOT x = f32[] parameter(99999999999999999999999)\n}",
        "HloModule m\nENTRY e {\n ROOT x = f32[99999999999999999999] parameter(0)\n}",
        "HloModule m\nENTRY a {\n ROOT x = f32[] parameter(0)\n}\nENTRY b {\n ROOT x = f32[] parameter(0)\n}",
        "HloModule m\nENTRY e {\n ROOT x = convert(y)\n y = f32[] parameter(0)\n}",
        "HloModule m, entry_computation_layout={(f32[]->f32[]}\nENTRY e {\n ROOT x = f32[] parameter(0)\n}",
        "HloModule m\nENTRY e {\n ROOT x = f32[] parameter(0), sharding={devices=[2]0,1\n}",
        "HloModule m\nENTRY e {\n ROOT x = (f32[], s32[] parameter(0)\n}",
    ] {
        let r = catch_unwind(|| parse_module(g));
        match r {
            Ok(Ok(m)) => panic!("{g:?} parsed:\n{}", print_module(&m)),
            Ok(Err(e)) => assert!(e.line >= 1 && e.column >= 1, "{g:?}: {e:?}"),
            Err(_) => panic!("{g:?} panicked"),
        }
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for n in [100, 10_000, 200_000] {
        let shape = format!("{}f32[]{}", "(".repeat(n), ")".repeat(n));
        let t = format!("HloModule m\nENTRY e {{\n ROOT x = {shape} parameter(0)\n}}\n");
        let e = err(&t);
        assert_eq!(e.kind, ParseErrorKind::TooDeep, "{e}");
        let lit = format!("{}1{}", "{".repeat(n), "}".repeat(n));
        let t = format!("HloModule m\nENTRY e {{\n ROOT x = f32[1] constant({lit})\n}}\n");
        err(&t);
        let raw = format!("{}{}", "{".repeat(n), "}".repeat(n));
        let t =
            format!("HloModule m\nENTRY e {{\n ROOT x = f32[] parameter(0), sharding={raw}\n}}\n");
        let e = err(&t);
        assert_eq!(e.kind, ParseErrorKind::TooDeep, "{e}");
    }
}

/// Every prefix of every corpus file (at a spread of cut points) either parses or gives an
/// error with a location; none panics.
#[test]
fn truncations_never_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus");
    let mut files = Vec::new();
    for dir in ["hlo", "xla_hlo"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "hlo") {
                files.push(e.path());
            }
        }
    }
    files.sort();
    assert!(files.len() > 50, "corpus missing: {}", files.len());
    let mut cuts_total = 0;
    let mut errors = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let boundaries: Vec<usize> = (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        let step = (boundaries.len() / 40).max(1);
        for &cut in boundaries.iter().step_by(step) {
            let prefix = &text[..cut];
            cuts_total += 1;
            let r = catch_unwind(AssertUnwindSafe(|| parse_module(prefix)));
            match r {
                Err(_) => panic!("{} truncated at {cut} panicked", f.display()),
                Ok(Err(e)) => {
                    errors += 1;
                    assert!(e.line >= 1 && e.column >= 1);
                }
                Ok(Ok(_)) => {}
            }
            // Also corrupt one byte in the middle of the remaining text.
            if cut < text.len() {
                let mut bytes = text.clone().into_bytes();
                bytes[cut] = b"}{)(,=%@\"x"[cut % 10];
                if let Ok(s) = String::from_utf8(bytes) {
                    let r = catch_unwind(AssertUnwindSafe(|| parse_module(&s)));
                    assert!(r.is_ok(), "{} corrupted at {cut} panicked", f.display());
                }
            }
        }
    }
    assert!(
        cuts_total > 1000 && errors > 500,
        "{cuts_total} cuts, {errors} errors"
    );
}

/// Corpus files with numbers replaced by extreme values and tokens swapped: parsing never
/// panics, and whatever parses also verifies and prints without panicking.
#[test]
fn mutations_never_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus");
    let mut files = Vec::new();
    for dir in ["hlo", "xla_hlo"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "hlo") {
                files.push(e.path());
            }
        }
    }
    files.sort();
    let replacements = [
        "9223372036854775807",
        "-9223372036854775808",
        "0",
        "-1",
        "1",
        "99999999999999999999999999",
        "nan",
        "",
        "{",
        "(",
        "%x",
        "f32[]",
        "ROOT",
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut parsed = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        // Positions of numbers (maximal digit runs).
        let bytes = text.as_bytes();
        let mut runs = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i].is_ascii_digit() {
                let s = i;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                runs.push((s, i));
            } else {
                i += 1;
            }
        }
        if runs.is_empty() {
            continue;
        }
        for _ in 0..60 {
            let (s, e) = runs[(next() % runs.len() as u64) as usize];
            let r = replacements[(next() % replacements.len() as u64) as usize];
            let mutated = format!("{}{}{}", &text[..s], r, &text[e..]);
            let result = catch_unwind(AssertUnwindSafe(|| {
                if let Ok(m) = parse_module(&mutated) {
                    let _ = hlo_verify::verify(&m);
                    let printed = hlo_text::print_module(&m);
                    let again = parse_module(&printed).expect("printed module re-parses");
                    assert_eq!(again, m);
                    true
                } else {
                    false
                }
            }));
            match result {
                Ok(true) => parsed += 1,
                Ok(false) => {}
                Err(_) => panic!(
                    "{}: replacing bytes {s}..{e} with {r:?} panicked",
                    f.display()
                ),
            }
        }
    }
    assert!(parsed > 100, "only {parsed} mutants parsed");
}
