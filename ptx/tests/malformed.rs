//! Malformed inputs: every one must give `Err(ParseError)` with a sensible line:column (or, for
//! truncations and mutations that happen to stay valid, `Ok`), and never panic.

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};

/// The nvcc corpus and this crate's `tests/data` files.
fn corpus() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [root.join("../testdata/corpus/ptx"), root.join("tests/data")] {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        files.extend(v);
    }
    files
        .into_iter()
        .filter_map(|p| {
            let name = p.file_stem()?.to_string_lossy().into_owned();
            Some((name, std::fs::read_to_string(&p).ok()?))
        })
        .collect()
}

const HEADER: &str = ".version 9.5\n.target sm_90\n.address_size 64\n";

fn kernel(body: &str) -> String {
    format!("{HEADER}.visible .entry k(\n\t.param .u64 k_param_0\n)\n{{\n\t.reg .b32 %r<9>;\n\t.reg .pred %p<3>;\n\t.reg .b64 %rd<3>;\n{body}\n}}\n")
}

/// Checks the error position lies inside (or one past) the text.
fn check_position(src: &str, e: &ptx::ParseError) -> Result<(), String> {
    let lines: Vec<&str> = src.split('\n').collect();
    let line = e.line as usize;
    if line == 0 || line > lines.len() {
        return Err(format!(
            "error line {} outside 1..={}: {e}",
            e.line,
            lines.len()
        ));
    }
    let len = lines[line - 1].len();
    if e.column == 0 || e.column as usize > len + 1 {
        return Err(format!(
            "error column {} outside 1..={} on line {line}: {e}",
            e.column,
            len + 1
        ));
    }
    Ok(())
}

/// `ptx::parse`, cross-checked against the two lighter front ends on the same text:
/// `ptx::check` (same grammar, no model) must give exactly the same result, and `ptx::outline`
/// (bodies only delimited) must accept everything `parse` accepts, with the same signatures.
fn parse(src: &str) -> Result<ptx::Module, ptx::ParseError> {
    let full = ptx::parse(src);
    let want = full.clone().map(ptx::Outline::from_module);
    let checked = ptx::check(src);
    assert_eq!(
        checked, want,
        "ptx::check disagrees with ptx::parse on:\n{src}"
    );
    match (&want, ptx::outline(src)) {
        (Ok(w), Ok(o)) => assert_eq!(&o, w, "ptx::outline signatures differ on:\n{src}"),
        (Ok(_), Err(e)) => panic!("ptx::outline rejects what ptx::parse accepts ({e}):\n{src}"),
        (Err(_), Ok(_)) => {} // an error inside a body: outline does not look there
        (Err(w), Err(o)) => {
            // Both fail: outline's error is parse's, or one inside a body parse reached first.
            assert!(
                (o.line, o.column) >= (w.line, w.column),
                "ptx::outline fails at {o} before ptx::parse's {w} on:\n{src}"
            );
        }
    }
    full
}

fn expect_err(src: &str, line: u32, column: u32, needle: &str) -> Result<(), Failed> {
    match parse(src) {
        Ok(_) => Err(format!("expected an error containing {needle:?}, parsed OK:\n{src}").into()),
        Err(e) => {
            check_position(src, &e)?;
            if (e.line, e.column) != (line, column) || !e.message.contains(needle) {
                return Err(
                    format!("expected {line}:{column} containing {needle:?}, got {e}").into(),
                );
            }
            Ok(())
        }
    }
}

/// A malformed instruction on body line 1 (source line 11 of [`kernel`]).
fn inst_case(name: &str, inst: &str, column: u32, needle: &str) -> Trial {
    let src = kernel(&format!("\t{inst}"));
    let needle = needle.to_string();
    Trial::test(format!("malformed::{name}"), move || {
        expect_err(&src, 11, column, &needle)
    })
}

fn raw_case(name: &str, src: &str, line: u32, column: u32, needle: &str) -> Trial {
    let src = src.to_string();
    let needle = needle.to_string();
    Trial::test(format!("malformed::{name}"), move || {
        expect_err(&src, line, column, &needle)
    })
}

/// Brace depth at the end of `text`, ignoring `//` comments and strings.
fn brace_depth(text: &str) -> i32 {
    let mut depth = 0;
    for line in text.split('\n') {
        let mut in_str = false;
        let mut prev = ' ';
        for c in line.chars() {
            match c {
                '"' => in_str = !in_str,
                '/' if !in_str && prev == '/' => break,
                '{' if !in_str => depth += 1,
                '}' if !in_str => depth -= 1,
                _ => {}
            }
            prev = c;
        }
    }
    depth
}

fn truncations(src: &str) -> Result<(), Failed> {
    // About 300 evenly spaced byte offsets plus about 150 line ends and 150 statement ends.
    let step = (src.len() / 300).max(3);
    let mut cuts: Vec<usize> = (0..src.len()).step_by(step).collect();
    let lines: Vec<usize> = src.match_indices('\n').map(|(i, _)| i).collect();
    cuts.extend(lines.iter().step_by((lines.len() / 150).max(1)));
    let semis: Vec<usize> = src.match_indices(';').map(|(i, _)| i + 1).collect();
    cuts.extend(semis.iter().step_by((semis.len() / 150).max(1)));
    let mut errors = 0;
    for cut in cuts {
        let Some(t) = src.get(..cut) else { continue };
        match parse(t) {
            Ok(_) if brace_depth(t) > 0 => {
                return Err(format!("truncation at byte {cut} (inside braces) parsed OK").into())
            }
            Ok(_) => {}
            Err(e) => {
                errors += 1;
                check_position(t, &e).map_err(|m| format!("truncation at byte {cut}: {m}"))?;
            }
        }
    }
    if errors == 0 {
        return Err("no truncation produced an error".into());
    }
    Ok(())
}

/// Deterministic xorshift PRNG.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutations(seed: u64, src: &str) -> Result<(), Failed> {
    let mut rng = Rng(seed | 1);
    let alphabet = b"{}[]();,.:|!@+-_%$0123456789xfdUabc \n\t\"/*\x00\x7f";
    for _ in 0..250 {
        let mut b = src.as_bytes().to_vec();
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(b.len());
            match rng.below(3) {
                0 => b[i] = alphabet[rng.below(alphabet.len())],
                1 => {
                    b.remove(i);
                }
                _ => b.insert(i, alphabet[rng.below(alphabet.len())]),
            }
        }
        let text = String::from_utf8_lossy(&b);
        match parse(&text) {
            Err(e) => check_position(&text, &e)?,
            // A mutation that is still valid PTX must round-trip like any other input.
            Ok(m) => {
                let printed = ptx::print(&m);
                let again = parse(&printed)
                    .map_err(|e| format!("printed mutant does not parse: {e}\n{printed}"))?;
                if again != m || ptx::print(&again) != printed {
                    return Err(format!("mutant does not round-trip:\n{text}").into());
                }
            }
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let files = corpus();
    for (i, (name, src)) in files.into_iter().enumerate() {
        let s2 = src.clone();
        trials.push(Trial::test(format!("truncations::{name}"), move || {
            truncations(&src)
        }));
        trials.push(Trial::test(format!("mutations::{name}"), move || {
            mutations(0x9E37_79B9_7F4A_7C15 ^ i as u64, &s2)
        }));
    }

    // Instructions (line 9 of `kernel`; column 2 is the first character after the tab).
    trials.extend([
        inst_case(
            "unknown_opcode",
            "frobnicate.u32 %r1, %r2;",
            2,
            "unknown opcode `frobnicate`",
        ),
        inst_case(
            "unknown_modifier",
            "add.bogus.u32 %r1, %r2, %r3;",
            5,
            "unknown modifier `.bogus`",
        ),
        inst_case(
            "shfl_mode_on_add",
            "add.down.u32 %r1, %r2, %r3;",
            5,
            "unknown modifier `.down`",
        ),
        raw_case(
            "missing_semicolon",
            &kernel("\tadd.u32 %r1, %r2, %r3\n\tret;"),
            12,
            2,
            "expected ';' after instruction, found `ret`",
        ),
        inst_case(
            "bad_f32_literal",
            "mov.f32 %r1, 0f3F80;",
            15,
            "expected 8 hex digits",
        ),
        inst_case(
            "bad_f64_literal",
            "mov.f64 %rd1, 0d3FF0;",
            16,
            "expected 16 hex digits",
        ),
        inst_case(
            "bad_hex_literal",
            "mov.u32 %r1, 0xZZ;",
            15,
            "expected digits",
        ),
        inst_case("bad_octal_literal", "mov.u32 %r1, 089;", 15, "malformed"),
        inst_case(
            "int_overflow",
            "mov.u64 %rd1, 99999999999999999999;",
            16,
            "out of range",
        ),
        inst_case(
            "neg_int_overflow",
            "mov.s64 %rd1, -9223372036854775809;",
            17,
            "out of range",
        ),
        inst_case(
            "literal_suffix",
            "mov.u32 %r1, 12abc;",
            15,
            "malformed numeric literal",
        ),
        inst_case(
            "unclosed_address",
            "ld.global.u32 %r1, [%rd1;",
            26,
            "expected ']'",
        ),
        inst_case(
            "empty_address",
            "ld.global.u32 %r1, [];",
            22,
            "inside '[ ]'",
        ),
        inst_case(
            "address_plus_nothing",
            "ld.global.u32 %r1, [%rd1+];",
            27,
            "expected an offset",
        ),
        inst_case(
            "unknown_special",
            "mov.u32 %r1, %tid.w;",
            19,
            "unknown special register `%tid.w`",
        ),
        inst_case(
            "guard_without_reg",
            "@ bra $L;",
            4,
            "expected a predicate register",
        ),
        inst_case(
            "dangling_comma",
            "add.u32 %r1, %r2,;",
            19,
            "expected an operand",
        ),
        inst_case(
            "unclosed_vector",
            "mov.b64 {%r1, %r2, %rd1;",
            25,
            "or '}' in vector",
        ),
        inst_case(
            "nested_vector",
            "mov.b64 {{%r1}}, %rd1;",
            11,
            "expected an operand",
        ),
        inst_case(
            "stray_punct",
            "add.u32 %r1, %r2 %r3;",
            19,
            "expected ';' after instruction",
        ),
        inst_case(
            "garbage_char",
            "add.u32 %r1, %r2, #3;",
            20,
            "unexpected character '#'",
        ),
        inst_case(
            "non_ascii",
            "add.u32 %r1, %r2, \u{e9};",
            20,
            "unexpected character",
        ),
        inst_case(
            "nul_byte",
            "add.u32 %r1,\u{0} %r2;",
            14,
            "unexpected character",
        ),
        inst_case("label_number", "42: ret;", 2, "expected a statement"),
        inst_case(
            "bad_reg_range",
            ".reg .b32 %q<>;",
            15,
            "expected a register count",
        ),
        inst_case(
            "decl_without_type",
            ".reg %q;",
            7,
            "expected a variable type",
        ),
        inst_case(
            "unterminated_string",
            ".pragma \"nounroll;",
            10,
            "newline in string literal",
        ),
        inst_case(
            "pragma_not_string",
            ".pragma nounroll;",
            10,
            "expected a pragma string",
        ),
        inst_case("dot_alone", "add. %r1;", 5, "expected a name after `.`"),
    ]);

    // Whole-file structure.
    let deep = format!("{HEADER}.entry k()\n{}", "{".repeat(10_000));
    let deep_init = format!("{HEADER}.global .b32 x[1] = {};", "{".repeat(10_000));
    trials.extend([
        raw_case("empty_input", "", 1, 1, "expected `.version`"),
        raw_case(
            "missing_version",
            ".target sm_90\n",
            1,
            1,
            "expected `.version`",
        ),
        raw_case(
            "bad_version",
            ".version 9\n.target sm_90\n",
            1,
            10,
            "version number",
        ),
        raw_case(
            "missing_target",
            ".version 9.5\n.address_size 64\n",
            2,
            1,
            "expected `.target`",
        ),
        raw_case(
            "bad_address_size",
            ".version 9.5\n.target sm_90\n.address_size 48\n",
            3,
            15,
            "32 or 64",
        ),
        raw_case(
            "unknown_directive",
            &format!("{HEADER}.bogus x;\n"),
            4,
            1,
            "expected a module directive",
        ),
        raw_case(
            "unclosed_body",
            &format!("{HEADER}.entry k()\n{{\n\tret;\n"),
            6,
            6,
            "expected '}' to close the block, found end of input",
        ),
        raw_case(
            "extra_close",
            &format!("{HEADER}.entry k()\n{{\n\tret;\n}}\n}}\n"),
            8,
            1,
            "expected a module directive",
        ),
        raw_case(
            "unclosed_params",
            &format!("{HEADER}.entry k(\n\t.param .u64 a\n{{\n"),
            6,
            1,
            "or ')' in parameter list",
        ),
        raw_case(
            "param_without_type",
            &format!("{HEADER}.entry k(.param a)\n{{\n}}\n"),
            4,
            17,
            "expected a parameter type",
        ),
        raw_case(
            "no_body",
            &format!("{HEADER}.entry k()\nret;\n"),
            5,
            1,
            "expected '{' or ';'",
        ),
        raw_case(
            "unterminated_comment",
            &format!("{HEADER}/* never closed\n"),
            4,
            1,
            "unterminated block comment",
        ),
        raw_case("deep_blocks", &deep, 5, 65, "nested too deeply"),
        raw_case("deep_initializer", &deep_init, 4, 86, "nested too deeply"),
        raw_case(
            "bad_initializer",
            &format!("{HEADER}.global .b32 x[2] = {{1, ;}};\n"),
            4,
            25,
            "expected an initializer value, found `;`",
        ),
        raw_case(
            "too_many_dims",
            &format!("{HEADER}.entry k() .maxntid 1, 2, 3, 4\n{{\n}}\n"),
            4,
            30,
            "at most 3 dimensions",
        ),
    ]);

    // Garbage bytes.
    trials.push(Trial::test("malformed::random_bytes", || {
        let mut rng = Rng(0x1234_5678_9ABC_DEF1);
        for len in [1usize, 2, 7, 64, 512, 4096] {
            for _ in 0..50 {
                let b: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                let text = String::from_utf8_lossy(&b);
                match parse(&text) {
                    Ok(_) => return Err(format!("random bytes parsed OK: {text:?}").into()),
                    Err(e) => check_position(&text, &e)?,
                }
            }
        }
        Ok(())
    }));
    libtest_mimic::run(&args, trials).exit();
}
