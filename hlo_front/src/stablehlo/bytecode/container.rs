//! The MLIR bytecode container (`mlir/lib/Bytecode/Reader/BytecodeReader.cpp`): header, the
//! string, dialect, attribute/type, properties and IR sections, read into a generic op tree
//! whose attributes and types stay indices into the attribute/type table until the printer asks
//! for them ([`super::attrs`] decodes them on demand).
//!
//! Bytecode versions 0 through [`MAX_BYTECODE_VERSION`] are read. What each version changed
//! (and how it is read here): 1 dialect versions in the dialect section; 2 regions of ops
//! isolated from above in their own nested IR section; 3 use-list orders (read and dropped:
//! they only order uses, which a printed module does not keep); 4 block-argument locations
//! elided when unknown, and the op-name count in the dialect section; 5 op properties in their
//! own section and a "was registered" flag per op name; 6 segment sizes as native properties.

use std::collections::BTreeMap;

use super::encoding::Reader;
use super::{BytecodeError, MAX_NESTING};

/// The newest MLIR bytecode version this reader knows.
pub const MAX_BYTECODE_VERSION: u64 = 6;

const MAGIC: &[u8] = b"ML\xefR";

const SECTION_STRING: u8 = 0;
const SECTION_DIALECT: u8 = 1;
const SECTION_ATTR_TYPE: u8 = 2;
const SECTION_ATTR_TYPE_OFFSET: u8 = 3;
const SECTION_IR: u8 = 4;
const SECTION_RESOURCE: u8 = 5;
const SECTION_RESOURCE_OFFSET: u8 = 6;
const SECTION_DIALECT_VERSIONS: u8 = 7;
const SECTION_PROPERTIES: u8 = 8;
const NUM_SECTIONS: u8 = 9;

const V_DIALECT_VERSIONING: u64 = 1;
const V_LAZY_LOADING: u64 = 2;
const V_USE_LIST_ORDERING: u64 = 3;
const V_ELIDE_UNKNOWN_BLOCK_ARG_LOCATION: u64 = 4;
const V_NATIVE_PROPERTIES: u64 = 5;

const MASK_ATTRS: u8 = 0x01;
const MASK_RESULTS: u8 = 0x02;
const MASK_OPERANDS: u8 = 0x04;
const MASK_SUCCESSORS: u8 = 0x08;
const MASK_REGIONS: u8 = 0x10;
const MASK_USE_LIST_ORDERS: u8 = 0x20;
const MASK_PROPERTIES: u8 = 0x40;

/// One entry of the attribute or type table.
#[derive(Clone, Copy)]
pub(super) struct Entry<'a> {
    /// Index into [`Bytecode::dialects`].
    pub dialect: usize,
    /// Encoded with the dialect's bytecode interface (else it is MLIR text, NUL-terminated).
    pub custom: bool,
    pub data: Reader<'a>,
}

/// An op name: its dialect and its name within it.
pub(super) struct OpName {
    pub dialect: usize,
    pub name: String,
    /// Whether the writer had the op registered (bytecode 5+); unregistered ops keep their
    /// properties as one attribute.
    pub registered: Option<bool>,
}

/// A value: numbered in definition order across the whole module (forward references get
/// their number when first used).
pub(super) type Value = u32;

/// An op as the bytecode holds it.
pub(super) struct Op<'a> {
    /// Index into [`Bytecode::op_names`].
    pub name: usize,
    /// The discardable attribute dictionary (an attribute index).
    pub attrs: Option<u64>,
    /// The properties blob (bytecode 5+).
    pub props: Option<Reader<'a>>,
    pub results: Vec<(Value, u64)>,
    pub operands: Vec<Value>,
    pub successors: usize,
    pub regions: Vec<Region<'a>>,
}

/// A region: its blocks.
pub(super) struct Region<'a> {
    pub blocks: Vec<Block<'a>>,
}

/// A block: its arguments (value and type index) and ops.
pub(super) struct Block<'a> {
    pub args: Vec<(Value, u64)>,
    pub ops: Vec<Op<'a>>,
}

/// A parsed bytecode file.
pub(super) struct Bytecode<'a> {
    pub version: u64,
    pub producer: String,
    pub strings: Vec<&'a [u8]>,
    pub dialects: Vec<String>,
    pub op_names: Vec<OpName>,
    pub attrs: Vec<Entry<'a>>,
    pub types: Vec<Entry<'a>>,
    props: Vec<Reader<'a>>,
    /// The top-level ops (a `builtin.module`).
    pub top: Vec<Op<'a>>,
}

/// Value numbering inside one scope isolated from above: a region reserves `n` slots after
/// those of the regions enclosing it; slots map to module-wide value numbers.
struct Scope {
    size: u64,
    next: Vec<u64>,
    slots: BTreeMap<u64, Value>,
}

impl Scope {
    fn new() -> Scope {
        Scope {
            size: 0,
            next: Vec::new(),
            slots: BTreeMap::new(),
        }
    }
}

struct IrReader<'b, 'a> {
    bc: &'b Bytecode<'a>,
    scopes: Vec<Scope>,
    next_value: u32,
    depth: usize,
}

impl<'a> Bytecode<'a> {
    /// Reads the container and the IR of `bytes`.
    pub(super) fn parse(bytes: &'a [u8]) -> Result<Bytecode<'a>, BytecodeError> {
        if !bytes.starts_with(MAGIC) {
            return Err(BytecodeError::NotBytecode);
        }
        let mut r = Reader::new(bytes, 0);
        r.bytes(MAGIC.len() as u64)?;
        let version = r.varint()?;
        if version > MAX_BYTECODE_VERSION {
            return Err(BytecodeError::NewerBytecode {
                found: version,
                known: MAX_BYTECODE_VERSION,
            });
        }
        let producer = String::from_utf8_lossy(r.cstr()?).into_owned();
        let mut sections: [Option<Reader<'a>>; NUM_SECTIONS as usize] = [None; 9];
        while !r.is_empty() {
            let at = r;
            let (id, data) = r.section()?;
            if id >= NUM_SECTIONS || id == SECTION_DIALECT_VERSIONS {
                return Err(at.error(format!("unexpected top-level section id {id}")));
            }
            if sections[id as usize].replace(data).is_some() {
                return Err(at.error(format!("section {id} appears twice")));
            }
        }
        let need = |id: u8, name: &str| {
            sections[id as usize].ok_or_else(|| BytecodeError::Malformed {
                offset: bytes.len(),
                message: format!("the {name} section is missing"),
            })
        };
        let mut bc = Bytecode {
            version,
            producer,
            strings: Vec::new(),
            dialects: Vec::new(),
            op_names: Vec::new(),
            attrs: Vec::new(),
            types: Vec::new(),
            props: Vec::new(),
            top: Vec::new(),
        };
        bc.read_strings(need(SECTION_STRING, "string")?)?;
        if let Some(p) = sections[SECTION_PROPERTIES as usize] {
            bc.read_properties(p)?;
        } else if version >= V_NATIVE_PROPERTIES {
            need(SECTION_PROPERTIES, "properties")?;
        }
        bc.read_dialects(need(SECTION_DIALECT, "dialect")?)?;
        if sections[SECTION_RESOURCE as usize].is_some()
            != sections[SECTION_RESOURCE_OFFSET as usize].is_some()
        {
            return Err(BytecodeError::Malformed {
                offset: bytes.len(),
                message: "a resource section without its offset section (or the reverse)".into(),
            });
        }
        bc.read_attr_types(
            need(SECTION_ATTR_TYPE, "attribute/type")?,
            need(SECTION_ATTR_TYPE_OFFSET, "attribute/type offset")?,
        )?;
        let ir = need(SECTION_IR, "IR")?;
        let top = IrReader {
            bc: &bc,
            scopes: vec![Scope::new()],
            next_value: 0,
            depth: 0,
        }
        .top(ir)?;
        bc.top = top;
        Ok(bc)
    }

    fn read_strings(&mut self, mut r: Reader<'a>) -> Result<(), BytecodeError> {
        let n = r.count("string", 1)?;
        // Sizes come first, in reverse order; the string data fills the section from its end.
        let mut sizes = Vec::with_capacity(n);
        for _ in 0..n {
            sizes.push(r.varint()?);
        }
        let data = r.bytes(r.remaining() as u64)?;
        let mut end = data.len() as u64;
        let mut strings = vec![&data[..0]; n];
        for (slot, &size) in strings.iter_mut().rev().zip(&sizes) {
            if size == 0 || size > end {
                return Err(r.error(format!(
                    "string of {size} bytes does not fit the string section"
                )));
            }
            let start = end - size;
            // The stored size counts the NUL terminator.
            *slot = &data[start as usize..(end - 1) as usize];
            end = start;
        }
        if end != 0 {
            return Err(r.error("bytes left between the string sizes and the string data"));
        }
        self.strings = strings;
        Ok(())
    }

    pub(super) fn string(&self, r: &Reader<'_>, idx: u64) -> Result<&'a [u8], BytecodeError> {
        self.strings.get(idx as usize).copied().ok_or_else(|| {
            r.error(format!(
                "string index {idx} out of range ({} strings)",
                self.strings.len()
            ))
        })
    }

    fn read_properties(&mut self, mut r: Reader<'a>) -> Result<(), BytecodeError> {
        if r.is_empty() {
            return Ok(());
        }
        let n = r.count("properties", 1)?;
        let mut props = Vec::with_capacity(n);
        for _ in 0..n {
            let len = r.varint()?;
            props.push(r.sub(len)?);
        }
        if !r.is_empty() {
            return Err(r.error("bytes left after the last properties entry"));
        }
        self.props = props;
        Ok(())
    }

    fn read_dialects(&mut self, mut r: Reader<'a>) -> Result<(), BytecodeError> {
        let n = r.count("dialect", 1)?;
        for _ in 0..n {
            let (idx, has_version) = if self.version < V_DIALECT_VERSIONING {
                (r.varint()?, false)
            } else {
                r.varint_flag()?
            };
            let name = String::from_utf8_lossy(self.string(&r, idx)?).into_owned();
            if has_version {
                // The dialect's version, in its own encoding: VHLO writes none (its version is
                // the producer string); other dialects' versions do not change how we read.
                let at = r;
                let (id, _) = r.section()?;
                if id != SECTION_DIALECT_VERSIONS {
                    return Err(at.error("expected a dialect version section"));
                }
            }
            self.dialects.push(name);
        }
        if self.version >= V_ELIDE_UNKNOWN_BLOCK_ARG_LOCATION {
            r.count("op name", 1)?;
        }
        while !r.is_empty() {
            let d = self.dialect_index(&mut r)?;
            let count = r.count("op name", 1)?;
            for _ in 0..count {
                let (idx, registered) = if self.version < V_NATIVE_PROPERTIES {
                    (r.varint()?, None)
                } else {
                    let (i, f) = r.varint_flag()?;
                    (i, Some(f))
                };
                let name = String::from_utf8_lossy(self.string(&r, idx)?).into_owned();
                self.op_names.push(OpName {
                    dialect: d,
                    name,
                    registered,
                });
            }
        }
        Ok(())
    }

    fn dialect_index(&self, r: &mut Reader<'a>) -> Result<usize, BytecodeError> {
        let at = *r;
        let d = r.varint()?;
        if d >= self.dialects.len() as u64 {
            return Err(at.error(format!("dialect index {d} out of range")));
        }
        Ok(d as usize)
    }

    fn read_attr_types(
        &mut self,
        data: Reader<'a>,
        mut off: Reader<'a>,
    ) -> Result<(), BytecodeError> {
        let num_attrs = off.count("attribute", 1)?;
        let num_types = off.count("type", 1)?;
        if num_attrs + num_types > off.remaining() {
            return Err(
                off.error("more attribute and type entries than the offset section can hold")
            );
        }
        let mut data = data;
        for (list, n) in [(0, num_attrs), (1, num_types)] {
            let mut out = Vec::with_capacity(n);
            while out.len() < n {
                let d = self.dialect_index(&mut off)?;
                let count = off.count("attribute/type", 1)?;
                if out.len() + count > n {
                    return Err(off.error("a dialect group holds more entries than declared"));
                }
                for _ in 0..count {
                    let (size, custom) = off.varint_flag()?;
                    out.push(Entry {
                        dialect: d,
                        custom,
                        data: data.sub(size)?,
                    });
                }
            }
            if list == 0 {
                self.attrs = out;
            } else {
                self.types = out;
            }
        }
        if !off.is_empty() {
            return Err(off.error("bytes left in the attribute/type offset section"));
        }
        Ok(())
    }

    /// The properties blob at `idx`.
    fn properties(&self, r: &Reader<'_>, idx: u64) -> Result<Reader<'a>, BytecodeError> {
        self.props
            .get(idx as usize)
            .copied()
            .ok_or_else(|| r.error(format!("properties index {idx} out of range")))
    }

    /// `dialect.name` of an op.
    pub(super) fn op_name(&self, op: &Op<'_>) -> String {
        let n = &self.op_names[op.name];
        format!("{}.{}", self.dialects[n.dialect], n.name)
    }
}

impl<'b, 'a> IrReader<'b, 'a> {
    fn top(mut self, mut r: Reader<'a>) -> Result<Vec<Op<'a>>, BytecodeError> {
        let (num_ops, has_args) = r.varint_flag()?;
        if has_args {
            return Err(r.error("the top-level block has arguments"));
        }
        self.scopes[0].next.push(0);
        let ops = self.ops(&mut r, num_ops)?;
        if !r.is_empty() {
            return Err(r.error("bytes left after the top-level ops"));
        }
        Ok(ops)
    }

    fn scope(&mut self) -> &mut Scope {
        self.scopes.last_mut().expect("a scope is always open")
    }

    /// Defines the next value of the current region.
    fn define(&mut self, r: &Reader<'_>) -> Result<Value, BytecodeError> {
        let fresh = self.next_value;
        let s = self.scopes.last_mut().expect("a scope is always open");
        let next = s
            .next
            .last_mut()
            .ok_or_else(|| r.error("a value outside any region"))?;
        let slot = *next;
        if slot >= s.size {
            return Err(r.error(format!(
                "value {slot} lies beyond the {} the region declared",
                s.size
            )));
        }
        *next += 1;
        // A forward reference got its number when first used.
        if let Some(v) = s.slots.get(&slot) {
            return Ok(*v);
        }
        s.slots.insert(slot, fresh);
        self.next_value = fresh
            .checked_add(1)
            .ok_or_else(|| r.error("too many values"))?;
        Ok(fresh)
    }

    fn operand(&mut self, r: &mut Reader<'_>) -> Result<Value, BytecodeError> {
        let at = *r;
        let slot = r.varint()?;
        let fresh = self.next_value;
        let s = self.scope();
        if slot >= s.size {
            return Err(at.error(format!(
                "value index {slot} out of range ({} values in scope)",
                s.size
            )));
        }
        if let Some(v) = s.slots.get(&slot) {
            return Ok(*v);
        }
        s.slots.insert(slot, fresh);
        self.next_value = fresh
            .checked_add(1)
            .ok_or_else(|| at.error("too many values"))?;
        Ok(fresh)
    }

    fn ops(&mut self, r: &mut Reader<'a>, n: u64) -> Result<Vec<Op<'a>>, BytecodeError> {
        let mut ops = Vec::new();
        for _ in 0..n {
            if r.is_empty() {
                return Err(r.error(format!(
                    "block declares {n} ops; the data ends after {}",
                    ops.len()
                )));
            }
            ops.push(self.op(r)?);
        }
        Ok(ops)
    }

    fn type_index(&self, r: &mut Reader<'_>) -> Result<u64, BytecodeError> {
        let at = *r;
        let t = r.varint()?;
        if t >= self.bc.types.len() as u64 {
            return Err(at.error(format!("type index {t} out of range")));
        }
        Ok(t)
    }

    fn attr_index(&self, r: &mut Reader<'_>) -> Result<u64, BytecodeError> {
        let at = *r;
        let a = r.varint()?;
        if a >= self.bc.attrs.len() as u64 {
            return Err(at.error(format!("attribute index {a} out of range")));
        }
        Ok(a)
    }

    fn op(&mut self, r: &mut Reader<'a>) -> Result<Op<'a>, BytecodeError> {
        let at = *r;
        let name = r.varint()?;
        if name >= self.bc.op_names.len() as u64 {
            return Err(at.error(format!("op name index {name} out of range")));
        }
        let registered = self.bc.op_names[name as usize].registered;
        let mask = r.byte()?;
        self.attr_index(r)?; // the location, not kept
        let attrs = if mask & MASK_ATTRS != 0 {
            Some(self.attr_index(r)?)
        } else {
            None
        };
        let props = if mask & MASK_PROPERTIES != 0 {
            if registered.is_none() {
                return Err(r.error("properties in bytecode older than version 5"));
            }
            let idx = r.varint()?;
            Some(self.bc.properties(r, idx)?)
        } else {
            None
        };
        let mut types = Vec::new();
        if mask & MASK_RESULTS != 0 {
            let n = r.count("result", 1)?;
            for _ in 0..n {
                types.push(self.type_index(r)?);
            }
        }
        let mut operands = Vec::new();
        if mask & MASK_OPERANDS != 0 {
            let n = r.count("operand", 1)?;
            for _ in 0..n {
                operands.push(self.operand(r)?);
            }
        }
        let mut successors = 0;
        if mask & MASK_SUCCESSORS != 0 {
            successors = r.count("successor", 1)?;
            for _ in 0..successors {
                r.varint()?;
            }
        }
        if self.bc.version >= V_USE_LIST_ORDERING && mask & MASK_USE_LIST_ORDERS != 0 {
            use_list_orders(r, types.len())?;
        }
        let (num_regions, isolated) = if mask & MASK_REGIONS != 0 {
            let (n, iso) = r.varint_flag()?;
            (n, iso)
        } else {
            (0, false)
        };
        let mut results = Vec::with_capacity(types.len());
        for t in types {
            results.push((self.define(r)?, t));
        }
        let mut op = Op {
            name: name as usize,
            attrs,
            props,
            results,
            operands,
            successors,
            regions: Vec::new(),
        };
        if num_regions > 0 {
            self.depth += 1;
            if self.depth > MAX_NESTING {
                return Err(r.error(format!("regions nested deeper than {MAX_NESTING}")));
            }
            if isolated {
                self.scopes.push(Scope::new());
            }
            if isolated && self.bc.version >= V_LAZY_LOADING {
                let at = *r;
                let (id, mut sub) = r.section()?;
                if id != SECTION_IR {
                    return Err(at.error("expected an IR section holding an isolated op's regions"));
                }
                op.regions = self.regions(&mut sub, num_regions)?;
                if !sub.is_empty() {
                    return Err(sub.error("bytes left after an isolated op's regions"));
                }
            } else {
                op.regions = self.regions(r, num_regions)?;
            }
            if isolated {
                self.scopes.pop();
            }
            self.depth -= 1;
        }
        Ok(op)
    }

    fn regions(&mut self, r: &mut Reader<'a>, n: u64) -> Result<Vec<Region<'a>>, BytecodeError> {
        let mut out = Vec::new();
        for _ in 0..n {
            if r.is_empty() {
                return Err(r.error(format!(
                    "op declares {n} regions; the data ends after {}",
                    out.len()
                )));
            }
            out.push(self.region(r)?);
        }
        Ok(out)
    }

    fn region(&mut self, r: &mut Reader<'a>) -> Result<Region<'a>, BytecodeError> {
        let num_blocks = r.count("block", 1)?;
        if num_blocks == 0 {
            return Ok(Region { blocks: Vec::new() });
        }
        let num_values = r.varint()?;
        let s = self.scope();
        let base = s.size;
        s.size = base
            .checked_add(num_values)
            .ok_or_else(|| r.error("value count overflows"))?;
        s.next.push(base);
        let mut blocks = Vec::with_capacity(num_blocks);
        for _ in 0..num_blocks {
            blocks.push(self.block(r)?);
        }
        let s = self.scope();
        s.size = base;
        s.next.pop();
        s.slots.split_off(&base);
        Ok(Region { blocks })
    }

    fn block(&mut self, r: &mut Reader<'a>) -> Result<Block<'a>, BytecodeError> {
        let (num_ops, has_args) = r.varint_flag()?;
        let mut args = Vec::new();
        if has_args {
            let n = r.count("block argument", 1)?;
            for _ in 0..n {
                let t = if self.bc.version >= V_ELIDE_UNKNOWN_BLOCK_ARG_LOCATION {
                    let at = *r;
                    let (t, has_loc) = r.varint_flag()?;
                    if t >= self.bc.types.len() as u64 {
                        return Err(at.error(format!("type index {t} out of range")));
                    }
                    if has_loc {
                        self.attr_index(r)?;
                    }
                    t
                } else {
                    let t = self.type_index(r)?;
                    self.attr_index(r)?;
                    t
                };
                args.push(t);
            }
            if self.bc.version >= V_USE_LIST_ORDERING && r.byte()? != 0 {
                use_list_orders(r, args.len())?;
            }
        }
        let mut defined = Vec::with_capacity(args.len());
        for t in args {
            defined.push((self.define(r)?, t));
        }
        let ops = self.ops(r, num_ops)?;
        Ok(Block { args: defined, ops })
    }
}

/// Use-list orders of a range of `n` values: read and dropped.
fn use_list_orders(r: &mut Reader<'_>, n: usize) -> Result<(), BytecodeError> {
    let count = if n > 1 { r.count("use-list", 1)? } else { 1 };
    for _ in 0..count {
        if n > 1 {
            r.varint()?;
        }
        let (len, _) = r.varint_flag()?;
        if len > r.remaining() as u64 {
            return Err(r.error("use-list order longer than the data"));
        }
        for _ in 0..len {
            r.varint()?;
        }
    }
    Ok(())
}
