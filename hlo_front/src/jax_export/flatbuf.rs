//! A bounds-checked FlatBuffers table reader, enough for JAX's `serialization.fbs` (vendored
//! beside this file): tables through their vtables, scalars, strings, and vectors of scalars,
//! strings and tables.
//!
//! Why not the `flatbuffers` crate: without `flatc` its accessors would be hand-written
//! `unsafe` code that relies on a hand-written verifier agreeing with it field by field. Every
//! read here is checked against the buffer instead, so a malformed buffer is an error, never
//! undefined behaviour, whichever field it breaks.

use super::ExportedError;

/// The buffer, for offsets and bounds.
#[derive(Clone, Copy)]
pub(super) struct Buf<'a>(pub &'a [u8]);

/// A table: its position and its vtable's position.
#[derive(Clone, Copy)]
pub(super) struct Table<'a> {
    buf: Buf<'a>,
    pos: usize,
    vtable: usize,
    vtable_len: usize,
}

fn bad(m: impl Into<String>) -> ExportedError {
    ExportedError::Malformed(m.into())
}

impl<'a> Buf<'a> {
    fn bytes(&self, at: usize, n: usize) -> Result<&'a [u8], ExportedError> {
        at.checked_add(n)
            .and_then(|end| self.0.get(at..end))
            .ok_or_else(|| {
                bad(format!(
                    "{n} bytes at offset {at} lie outside the {}-byte buffer",
                    self.0.len()
                ))
            })
    }

    fn u16(&self, at: usize) -> Result<u16, ExportedError> {
        Ok(u16::from_le_bytes(
            self.bytes(at, 2)?.try_into().expect("2 bytes"),
        ))
    }

    fn u32(&self, at: usize) -> Result<u32, ExportedError> {
        Ok(u32::from_le_bytes(
            self.bytes(at, 4)?.try_into().expect("4 bytes"),
        ))
    }

    /// The position an unsigned offset stored at `at` points to.
    fn follow(&self, at: usize) -> Result<usize, ExportedError> {
        let off = self.u32(at)? as usize;
        at.checked_add(off)
            .filter(|p| *p < self.0.len())
            .ok_or_else(|| bad(format!("offset at {at} points outside the buffer")))
    }

    /// The root table.
    pub(super) fn root(self) -> Result<Table<'a>, ExportedError> {
        let pos = self.follow(0)?;
        self.table(pos)
    }

    fn table(self, pos: usize) -> Result<Table<'a>, ExportedError> {
        let soff = self.u32(pos)? as i32;
        let vtable = (pos as i64 - i64::from(soff)) as usize;
        let vtable_len = self.u16(vtable)? as usize;
        if vtable_len < 4 || vtable_len % 2 != 0 {
            return Err(bad(format!(
                "table at {pos} has a vtable of {vtable_len} bytes"
            )));
        }
        self.bytes(vtable, vtable_len)?;
        Ok(Table {
            buf: self,
            pos,
            vtable,
            vtable_len,
        })
    }
}

impl<'a> Table<'a> {
    /// The position of field `id`, `None` when absent.
    fn field(&self, id: usize) -> Result<Option<usize>, ExportedError> {
        let slot = 4 + 2 * id;
        if slot + 2 > self.vtable_len {
            return Ok(None);
        }
        let off = self.buf.u16(self.vtable + slot)? as usize;
        Ok(if off == 0 { None } else { Some(self.pos + off) })
    }

    pub(super) fn u8(&self, id: usize, default: u8) -> Result<u8, ExportedError> {
        match self.field(id)? {
            Some(p) => Ok(self.buf.bytes(p, 1)?[0]),
            None => Ok(default),
        }
    }

    pub(super) fn bool(&self, id: usize) -> Result<bool, ExportedError> {
        Ok(self.u8(id, 0)? != 0)
    }

    pub(super) fn u16(&self, id: usize) -> Result<u16, ExportedError> {
        self.field(id)?.map_or(Ok(0), |p| self.buf.u16(p))
    }

    pub(super) fn field_i16(&self, id: usize) -> Result<i16, ExportedError> {
        Ok(self.field(id)?.map_or(Ok(0), |p| self.buf.u16(p))? as i16)
    }

    pub(super) fn u32(&self, id: usize) -> Result<u32, ExportedError> {
        self.field(id)?.map_or(Ok(0), |p| self.buf.u32(p))
    }

    pub(super) fn table(&self, id: usize) -> Result<Option<Table<'a>>, ExportedError> {
        match self.field(id)? {
            Some(p) => Ok(Some(self.buf.table(self.buf.follow(p)?)?)),
            None => Ok(None),
        }
    }

    /// A vector field: (element count, position of the first element).
    fn vector(&self, id: usize, elem_size: usize) -> Result<Option<(usize, usize)>, ExportedError> {
        let Some(p) = self.field(id)? else {
            return Ok(None);
        };
        let v = self.buf.follow(p)?;
        let n = self.buf.u32(v)? as usize;
        let len = n
            .checked_mul(elem_size)
            .ok_or_else(|| bad("vector length overflows"))?;
        self.buf.bytes(v + 4, len)?;
        Ok(Some((n, v + 4)))
    }

    pub(super) fn bytes(&self, id: usize) -> Result<Option<&'a [u8]>, ExportedError> {
        match self.vector(id, 1)? {
            Some((n, p)) => Ok(Some(self.buf.bytes(p, n)?)),
            None => Ok(None),
        }
    }

    pub(super) fn string(&self, id: usize) -> Result<Option<String>, ExportedError> {
        Ok(self
            .bytes(id)?
            .map(|b| String::from_utf8_lossy(b).into_owned()))
    }

    pub(super) fn u16s(&self, id: usize) -> Result<Vec<u16>, ExportedError> {
        let Some((n, p)) = self.vector(id, 2)? else {
            return Ok(Vec::new());
        };
        (0..n).map(|i| self.buf.u16(p + 2 * i)).collect()
    }

    pub(super) fn u32s(&self, id: usize) -> Result<Vec<u32>, ExportedError> {
        let Some((n, p)) = self.vector(id, 4)? else {
            return Ok(Vec::new());
        };
        (0..n).map(|i| self.buf.u32(p + 4 * i)).collect()
    }

    pub(super) fn strings(&self, id: usize) -> Result<Vec<String>, ExportedError> {
        let Some((n, p)) = self.vector(id, 4)? else {
            return Ok(Vec::new());
        };
        (0..n)
            .map(|i| {
                let s = self.buf.follow(p + 4 * i)?;
                let len = self.buf.u32(s)? as usize;
                Ok(String::from_utf8_lossy(self.buf.bytes(s + 4, len)?).into_owned())
            })
            .collect()
    }

    pub(super) fn tables(&self, id: usize) -> Result<Vec<Table<'a>>, ExportedError> {
        let Some((n, p)) = self.vector(id, 4)? else {
            return Ok(Vec::new());
        };
        (0..n)
            .map(|i| self.buf.table(self.buf.follow(p + 4 * i)?))
            .collect()
    }

    /// Whether field `id` is present.
    pub(super) fn has(&self, id: usize) -> Result<bool, ExportedError> {
        Ok(self.field(id)?.is_some())
    }
}
