//! The primitive encodings of MLIR bytecode (`mlir/docs/BytecodeFormat.md`): prefix varints,
//! zigzag signed varints, varints carrying a flag in their low bit, sections and
//! null-terminated strings. Every read is bounds-checked; a count read from the bytes is checked
//! against what remains before anything is allocated for it.

use super::BytecodeError;

/// A cursor over one slice of the file. `base` is the slice's offset in the file, so that
/// errors name the absolute byte.
#[derive(Clone, Copy)]
pub(super) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    base: usize,
}

/// MLIR's padding byte before an aligned section.
const ALIGNMENT_BYTE: u8 = 0xCB;

/// The largest section alignment accepted (MLIR writes at most a page).
const MAX_ALIGNMENT: u64 = 1 << 16;

impl<'a> Reader<'a> {
    pub(super) fn new(data: &'a [u8], base: usize) -> Reader<'a> {
        Reader { data, pos: 0, base }
    }

    /// The absolute offset of the next byte.
    pub(super) fn offset(&self) -> usize {
        self.base + self.pos
    }

    pub(super) fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub(super) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// A malformed-input error at the current position.
    pub(super) fn error(&self, message: impl Into<String>) -> BytecodeError {
        BytecodeError::Malformed {
            offset: self.offset(),
            message: message.into(),
        }
    }

    pub(super) fn byte(&mut self) -> Result<u8, BytecodeError> {
        let b = *self
            .data
            .get(self.pos)
            .ok_or_else(|| self.error("unexpected end of data"))?;
        self.pos += 1;
        Ok(b)
    }

    pub(super) fn bytes(&mut self, n: u64) -> Result<&'a [u8], BytecodeError> {
        if n > self.remaining() as u64 {
            return Err(self.error(format!("{n} bytes requested, {} remain", self.remaining())));
        }
        let n = n as usize;
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// A sub-reader over the next `n` bytes (which are consumed).
    pub(super) fn sub(&mut self, n: u64) -> Result<Reader<'a>, BytecodeError> {
        let base = self.offset();
        Ok(Reader::new(self.bytes(n)?, base))
    }

    /// A prefix varint: the number of trailing zero bits of the first byte is the number of
    /// further bytes; a zero first byte means eight further bytes.
    pub(super) fn varint(&mut self) -> Result<u64, BytecodeError> {
        let first = self.byte()?;
        if first & 1 == 1 {
            return Ok(u64::from(first >> 1));
        }
        if first == 0 {
            let b = self.bytes(8)?;
            let mut w = [0u8; 8];
            w.copy_from_slice(b);
            return Ok(u64::from_le_bytes(w));
        }
        let extra = first.trailing_zeros() as usize;
        let rest = self.bytes(extra as u64)?;
        let mut w = [0u8; 8];
        w[0] = first;
        w[1..=extra].copy_from_slice(rest);
        Ok(u64::from_le_bytes(w) >> (extra + 1))
    }

    /// A zigzag-encoded signed varint.
    pub(super) fn svarint(&mut self) -> Result<i64, BytecodeError> {
        let v = self.varint()?;
        Ok(((v >> 1) ^ (!(v & 1)).wrapping_add(1)) as i64)
    }

    /// A varint whose low bit is a flag: `(value, flag)`.
    pub(super) fn varint_flag(&mut self) -> Result<(u64, bool), BytecodeError> {
        let v = self.varint()?;
        Ok((v >> 1, v & 1 == 1))
    }

    /// A count of entries that each take at least `min_bytes` bytes: refused when the
    /// remaining data cannot hold them, so no count from the file allocates beyond its size.
    pub(super) fn count(&mut self, what: &str, min_bytes: usize) -> Result<usize, BytecodeError> {
        let at = *self;
        let n = self.varint()?;
        let room = (self.remaining() / min_bytes.max(1)) as u64;
        if n > room {
            return Err(at.error(format!(
                "{what} count {n} exceeds what the remaining {} bytes can hold",
                self.remaining()
            )));
        }
        Ok(n as usize)
    }

    /// A list of signed varints (`count`, then the values).
    pub(super) fn svarints(&mut self, what: &str) -> Result<Vec<i64>, BytecodeError> {
        let n = self.count(what, 1)?;
        (0..n).map(|_| self.svarint()).collect()
    }

    /// A null-terminated string (without the terminator).
    pub(super) fn cstr(&mut self) -> Result<&'a [u8], BytecodeError> {
        let rest = &self.data[self.pos..];
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| self.error("string without a terminating NUL"))?;
        self.pos += end + 1;
        Ok(&rest[..end])
    }

    /// A section: id byte (high bit: aligned), length, optional alignment and padding, data.
    /// Alignment is relative to the start of the file, as the writer computes it.
    pub(super) fn section(&mut self) -> Result<(u8, Reader<'a>), BytecodeError> {
        let id_and_align = self.byte()?;
        let len = self.varint()?;
        let id = id_and_align & 0x7F;
        if id_and_align & 0x80 != 0 {
            let align = self.varint()?;
            if !align.is_power_of_two() || align > MAX_ALIGNMENT {
                return Err(self.error(format!(
                    "section alignment {align} is not a power of two up to {MAX_ALIGNMENT}"
                )));
            }
            while self.offset() as u64 % align != 0 {
                if self.byte()? != ALIGNMENT_BYTE {
                    return Err(self.error("section padding byte is not 0xCB"));
                }
            }
        }
        let sub = self.sub(len)?;
        Ok((id, sub))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_of_every_length_decode() {
        // 1 byte: value 3 -> 0b0000_0111.
        assert_eq!(Reader::new(&[0x07], 0).varint().unwrap(), 3);
        // 2 bytes: value 300 -> (300 << 2) | 0b10.
        let v: u16 = (300 << 2) | 0b10;
        assert_eq!(Reader::new(&v.to_le_bytes(), 0).varint().unwrap(), 300);
        // 9 bytes: a zero marker then the full little-endian word.
        let mut b = vec![0u8];
        b.extend_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(Reader::new(&b, 0).varint().unwrap(), u64::MAX);
        // Zigzag: 1 -> -1, 2 -> 1.
        assert_eq!(Reader::new(&[0x03], 0).svarint().unwrap(), -1);
        assert_eq!(Reader::new(&[0x05], 0).svarint().unwrap(), 1);
    }

    #[test]
    fn a_count_larger_than_the_data_is_refused_before_allocating() {
        // count = 100 with 2 bytes left.
        let e = Reader::new(&[(100 << 1) | 1, 0, 0], 7)
            .count("string", 1)
            .unwrap_err();
        assert!(e.to_string().contains("string count 100 exceeds"), "{e}");
        assert!(e.to_string().contains("byte 7"), "{e}");
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        assert!(Reader::new(&[0b0000_0100, 1], 0).varint().is_err());
        assert!(Reader::new(&[1, 2, 3], 0).cstr().is_err());
    }
}
