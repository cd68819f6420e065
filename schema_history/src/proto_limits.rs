//! Bounds on `.proto` text, checked before protox and prost-reflect see it.
//!
//! Both recurse over nesting with no limit of their own: an option value nested 1,000 levels
//! deep (7 KB of `{ a: { a: ...`) overflowed the bot's stack, and a 5,000-part option name
//! reached the same resolver. A pull request controls these files, so the bot refuses text beyond
//! bounds no real schema comes near (XLA's deepest nesting is under 10 levels, its longest
//! qualified name under 100 characters) with an error naming the file, line and bound.
use std::fmt;

/// Deepest nesting of `{ [ ( <` (messages, enums, option values, lists, `map<...>`).
pub const MAX_NESTING: usize = 64;

/// Longest identifier or dotted name (`a.b.c`), in bytes.
pub const MAX_NAME_BYTES: usize = 1024;

/// Most statements (each field, import, option, reserved range... ends with `;`) in one file:
/// this bounds the fields of every message before prost-reflect builds them. XLA's biggest file
/// has under 2,000; a message of 80,000 fields (which the bot diffs linearly) still passes.
pub const MAX_STATEMENTS: usize = 200_000;

/// Most `import` statements in one file (XLA's files import under 20).
pub const MAX_IMPORTS: usize = 1024;

/// Which bound a text exceeds, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLimit {
    /// 1-based line of the token that crossed the bound.
    pub line: usize,
    /// What crossed it.
    pub kind: LimitKind,
}

/// The bound crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    /// Nesting deeper than [`MAX_NESTING`].
    Nesting,
    /// A name longer than [`MAX_NAME_BYTES`].
    NameLength,
    /// More than [`MAX_STATEMENTS`] statements.
    Statements,
    /// More than [`MAX_IMPORTS`] imports.
    Imports,
}

impl fmt::Display for SourceLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            LimitKind::Nesting => write!(
                f,
                "line {}: nesting deeper than {MAX_NESTING} levels (braces, brackets, parentheses \
                 or angle brackets); the schema bot refuses it before compiling",
                self.line
            ),
            LimitKind::NameLength => write!(
                f,
                "line {}: a name longer than {MAX_NAME_BYTES} bytes; the schema bot refuses it \
                 before compiling",
                self.line
            ),
            LimitKind::Statements => write!(
                f,
                "line {}: more than {MAX_STATEMENTS} statements (fields, options, imports) in one \
                 file; the schema bot refuses it before compiling",
                self.line
            ),
            LimitKind::Imports => write!(
                f,
                "line {}: more than {MAX_IMPORTS} imports in one file; the schema bot refuses it \
                 before compiling",
                self.line
            ),
        }
    }
}

/// Checks `text` against the bounds in one linear pass that skips comments and string literals.
pub fn check_source(text: &str) -> Result<(), SourceLimit> {
    let bytes = text.as_bytes();
    let (mut i, mut line, mut depth, mut name) = (0usize, 1usize, 0usize, 0usize);
    let (mut statements, mut imports) = (0usize, 0usize);
    while i < bytes.len() {
        let b = bytes[i];
        let is_name = b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
        name = if is_name { name + 1 } else { 0 };
        if name > MAX_NAME_BYTES {
            let kind = LimitKind::NameLength;
            return Err(SourceLimit { line, kind });
        }
        // `import` as a whole word at the top level.
        if name == 1 && depth == 0 && is_import(&bytes[i..]) {
            imports += 1;
            if imports > MAX_IMPORTS {
                let kind = LimitKind::Imports;
                return Err(SourceLimit { line, kind });
            }
        }
        match b {
            b';' => {
                statements += 1;
                if statements > MAX_STATEMENTS {
                    let kind = LimitKind::Statements;
                    return Err(SourceLimit { line, kind });
                }
            }
            b'\n' => line += 1,
            b'{' | b'[' | b'(' | b'<' => {
                depth += 1;
                if depth > MAX_NESTING {
                    let kind = LimitKind::Nesting;
                    return Err(SourceLimit { line, kind });
                }
            }
            b'}' | b']' | b')' | b'>' => depth = depth.saturating_sub(1),
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    line += usize::from(bytes[i] == b'\n');
                    i += 1;
                }
                i += 2;
                continue;
            }
            b'"' | b'\'' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b {
                    line += usize::from(bytes[i] == b'\n');
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Whether `rest` starts with the word `import` (followed by a space, a quote or a tab).
fn is_import(rest: &[u8]) -> bool {
    rest.starts_with(b"import") && matches!(rest.get(6), Some(b' ' | b'\t' | b'"' | b'\''))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_value_nested_a_thousand_levels_is_refused() {
        let deep = "{ a: ".repeat(1000) + "1" + &" }".repeat(1000);
        let text = format!("syntax = \"proto3\";\nmessage M {{\n  option (o) = {deep};\n}}\n");
        assert_eq!(
            check_source(&text).unwrap_err().to_string(),
            "line 3: nesting deeper than 64 levels (braces, brackets, parentheses or angle \
             brackets); the schema bot refuses it before compiling"
        );
    }

    #[test]
    fn a_name_of_five_thousand_parts_is_refused() {
        let name = vec!["p"; 5000].join(".");
        let text = format!("message M {{\n  option ({name}) = 1;\n}}\n");
        assert_eq!(
            check_source(&text).unwrap_err().to_string(),
            "line 2: a name longer than 1024 bytes; the schema bot refuses it before compiling"
        );
    }

    #[test]
    fn too_many_statements_are_refused() {
        let fields: String = (1..=MAX_STATEMENTS + 1)
            .map(|n| format!("int32 f{n} = {n};\n"))
            .collect();
        let text = format!("message M {{\n{fields}}}\n");
        assert_eq!(
            check_source(&text).unwrap_err().to_string(),
            "line 200002: more than 200000 statements (fields, options, imports) in one file; \
             the schema bot refuses it before compiling"
        );
        let fields: String = (1..=80_000)
            .map(|n| format!("int32 f{n} = {n};\n"))
            .collect();
        assert!(check_source(&format!("message M {{\n{fields}}}\n")).is_ok());
    }

    #[test]
    fn too_many_imports_are_refused() {
        let imports: String = (0..=MAX_IMPORTS)
            .map(|n| format!("import \"f{n}.proto\";\n"))
            .collect();
        let text = format!("syntax = \"proto3\";\n{imports}");
        assert_eq!(
            check_source(&text).unwrap_err().to_string(),
            "line 1026: more than 1024 imports in one file; the schema bot refuses it before \
             compiling"
        );
        // A field named `import_x` or `imports` is not an import.
        assert!(check_source("message M { int32 imports = 1; int32 import_x = 2; }").is_ok());
    }

    #[test]
    fn comments_and_strings_do_not_count_and_real_schemas_pass() {
        let text = "// {{{{ \n/* [[[[ */ message M { string s = 1 [default = \"{{{{\"]; }\n";
        assert!(check_source(text).is_ok());
        let schema = include_str!("../../proto/proto/xla/gpu/thunk.proto");
        assert!(check_source(schema).is_ok());
        let schema = include_str!("../../proto/proto/xla/service/hlo.proto");
        assert!(check_source(schema).is_ok());
    }
}
