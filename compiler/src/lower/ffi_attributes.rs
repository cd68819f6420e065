//! A typed-FFI custom call's attributes from its backend config: XLA keeps the call's MLIR
//! attribute dictionary as text (`{algorithm = 0 : ui8, lower = true}`), and the thunk carries
//! each entry as name -> value text (`"0 : ui8"`, `"true"`), the value exactly as written so the
//! runtime can check its type against the handler's schema.
//!
//! Only the dictionary's top level is split: a value may itself hold commas, brackets, braces
//! and strings (`array<i64: 1, 2>`, `{k = "a,b"}`). Work is linear in the text.
use std::collections::BTreeMap;

/// Why a typed-FFI backend config is not an attribute dictionary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FfiAttributesError {
    /// The text is not wrapped in `{...}`.
    #[error("not a dictionary {{...}}")]
    NotADictionary,
    /// Two commas with nothing between them.
    #[error("an empty entry")]
    EmptyEntry,
    /// An entry without a name or without a value.
    #[error("entry {0:?} has no name or no value")]
    Incomplete(String),
    /// The same name twice.
    #[error("attribute {0:?} is given twice")]
    Repeated(String),
    /// A closing bracket that closes nothing open, or something else.
    #[error("unbalanced '{close}' at byte {at}")]
    Unbalanced {
        /// The bracket.
        close: char,
        /// Its offset in the dictionary's body.
        at: usize,
    },
    /// A string or bracket still open at the end.
    #[error("unterminated string or bracket")]
    Unterminated,
    /// A quoted name with quotes or escapes inside.
    #[error("attribute name {0} is not a plain quoted string")]
    QuotedName(String),
}

/// The entries of `text`, a dictionary `{...}` (an empty or blank config has none).
pub(crate) fn parse(text: &str) -> Result<BTreeMap<String, String>, FfiAttributesError> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(BTreeMap::new());
    }
    let body = t
        .strip_prefix('{')
        .and_then(|b| b.strip_suffix('}'))
        .ok_or(FfiAttributesError::NotADictionary)?;
    let mut out = BTreeMap::new();
    for entry in split_top_level(body)? {
        let entry = entry.trim();
        if entry.is_empty() {
            if body.trim().is_empty() {
                continue;
            }
            return Err(FfiAttributesError::EmptyEntry);
        }
        let (key, value) = match top_level_eq(entry) {
            Some(i) => (entry[..i].trim(), entry[i + 1..].trim()),
            // A key alone is a unit attribute.
            None => (entry, "unit"),
        };
        let key = unquote(key)?;
        if key.is_empty() || value.is_empty() {
            return Err(FfiAttributesError::Incomplete(entry.to_owned()));
        }
        if out.insert(key.clone(), value.to_owned()).is_some() {
            return Err(FfiAttributesError::Repeated(key));
        }
    }
    Ok(out)
}

/// The pieces of `text` between commas outside brackets and strings.
fn split_top_level(text: &str) -> Result<Vec<&str>, FfiAttributesError> {
    let mut parts = Vec::new();
    let mut depth: Vec<u8> = Vec::new();
    let mut start = 0;
    let mut in_string = false;
    let mut escaped = false;
    let bytes = text.as_bytes();
    for (i, &c) in bytes.iter().enumerate() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'(' | b'[' | b'{' | b'<' => depth.push(c),
            // The arrow of `(i) -> (j)` closes nothing.
            b'>' if i > 0 && bytes[i - 1] == b'-' => {}
            b')' | b']' | b'}' | b'>' => {
                let open = match c {
                    b')' => b'(',
                    b']' => b'[',
                    b'}' => b'{',
                    _ => b'<',
                };
                if depth.pop() != Some(open) {
                    return Err(FfiAttributesError::Unbalanced {
                        close: c as char,
                        at: i,
                    });
                }
            }
            b',' if depth.is_empty() => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if in_string || !depth.is_empty() {
        return Err(FfiAttributesError::Unterminated);
    }
    parts.push(&text[start..]);
    Ok(parts)
}

/// The offset of the `=` between an entry's name and its value (a quoted name may hold one).
fn top_level_eq(entry: &str) -> Option<usize> {
    if let Some(rest) = entry.strip_prefix('"') {
        let close = rest.find('"')? + 1;
        return entry[close + 1..].find('=').map(|i| i + close + 1);
    }
    entry.find('=')
}

fn unquote(key: &str) -> Result<String, FfiAttributesError> {
    match key.strip_prefix('"') {
        None => Ok(key.to_owned()),
        Some(rest) => rest
            .strip_suffix('"')
            .filter(|k| !k.contains('"') && !k.contains('\\'))
            .map(str::to_owned)
            .ok_or_else(|| FfiAttributesError::QuotedName(key.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn entries_keep_their_value_text() {
        let m = parse("{algorithm = 0 : ui8, lower = true}").unwrap();
        assert_eq!(m["algorithm"], "0 : ui8");
        assert_eq!(m["lower"], "true");
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn nested_values_are_not_split() {
        let m = parse(r#"{dims = array<i64: 1, 2>, s = "a,b}", d = {k = 1, j = 2}, "q k" = 1}"#)
            .unwrap();
        assert_eq!(m["dims"], "array<i64: 1, 2>");
        assert_eq!(m["s"], r#""a,b}""#);
        assert_eq!(m["d"], "{k = 1, j = 2}");
        assert_eq!(m["q k"], "1");
        let m = parse("{rule = #sdy.op_sharding_rule<([i, j])->([k, l], [])>}").unwrap();
        assert_eq!(m["rule"], "#sdy.op_sharding_rule<([i, j])->([k, l], [])>");
    }

    #[test]
    fn empty_configs_have_no_entries() {
        assert!(parse("").unwrap().is_empty());
        assert!(parse("{}").unwrap().is_empty());
        assert!(parse(" { } ").unwrap().is_empty());
    }

    #[test]
    fn malformed_dictionaries_are_refused() {
        let err = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(err("lower = true"), "not a dictionary {...}");
        assert_eq!(err("{a = 1, a = 2}"), "attribute \"a\" is given twice");
        assert_eq!(err("{a = [1, 2)}"), "unbalanced ')' at byte 9");
        assert_eq!(err("{a = [1, 2}"), "unterminated string or bracket");
        assert_eq!(err("{a = 1,, b = 2}"), "an empty entry");
        assert_eq!(err("{= 1}"), "entry \"= 1\" has no name or no value");
        assert_eq!(
            err(r#"{"a\"" = 1}"#),
            r#"attribute name "a\"" is not a plain quoted string"#
        );
    }
}
