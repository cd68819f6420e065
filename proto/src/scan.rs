//! Lexical pieces that more than one tokenizer of proto-family text needs: this crate's
//! text-format scanner and `schema_history`'s `.proto` tokenizer quote strings the same way.

/// The end (exclusive) of the string literal whose opening quote (`"` or `'`) is at `start` in
/// `bytes`: just past the matching quote; a backslash escapes the byte after it. An unterminated
/// literal ends after the end of its line or at the end of the input, so a stray quote spoils at
/// most one line and the real parser reports it.
pub fn string_literal_end(bytes: &[u8], start: usize) -> usize {
    let Some(&quote) = bytes.get(start) else {
        return bytes.len();
    };
    let mut i = start + 1;
    while let Some(&d) = bytes.get(i) {
        i += 1;
        if d == b'\\' {
            i += 1;
        } else if d == quote || d == b'\n' {
            break;
        }
    }
    i.min(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::string_literal_end;

    #[test]
    fn a_literal_ends_after_its_quote_and_escapes_hide_quotes() {
        let text = br#"x "a\"b" 'c' "#;
        assert_eq!(string_literal_end(text, 2), 8);
        assert_eq!(string_literal_end(text, 9), 12);
    }

    #[test]
    fn an_unterminated_literal_stops_at_the_line_or_the_input() {
        assert_eq!(string_literal_end(b"\"ab\ncd\"", 0), 4);
        assert_eq!(string_literal_end(b"'ab\\", 0), 4);
    }
}
