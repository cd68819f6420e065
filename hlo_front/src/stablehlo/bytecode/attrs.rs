//! Attribute and type entries decoded on demand: the builtin dialect's encodings
//! (`mlir/include/mlir/IR/BuiltinDialectBytecode.td`) and VHLO's
//! (`stablehlo/dialect/VhloBytecode.cpp`). Entries written as MLIR text (those of dialects
//! without a bytecode interface, such as Shardy's) are kept as their text. Locations are never
//! decoded: nothing printed needs them.
//!
//! Entries refer to other entries by index, so a malicious file can build cycles: decoding is
//! bounded by [`MAX_ATTR_DEPTH`].

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::container::{Bytecode, Entry};
use super::encoding::Reader;
use super::sdy::SdyAttr;
use super::BytecodeError;

/// Deepest chain of attributes and types referring to one another.
pub const MAX_ATTR_DEPTH: usize = 64;

/// A VHLO enum attribute's kind (its value is the case number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EnumKind {
    ComparisonDirection,
    ComparisonType,
    CustomCallApiVersion,
    FftType,
    Precision,
    RngAlgorithm,
    RngDistribution,
    Transpose,
    ResultAccuracyMode,
}

/// A decoded attribute.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Attr {
    Array(Vec<u64>),
    /// (key attribute, value attribute) pairs.
    Dict(Vec<(u64, u64)>),
    Str(Vec<u8>),
    Bool(bool),
    /// An integer of type `ty`: the raw bits (low `width` bits meaningful).
    Int {
        ty: u64,
        bits: u128,
    },
    /// A float of type `ty`: its bit pattern.
    Float {
        ty: u64,
        bits: u64,
    },
    Enum(EnumKind, u64),
    OutputOperandAlias {
        outputs: Vec<i64>,
        operand: i64,
        operand_tuple: Vec<i64>,
    },
    /// Dense elements of tensor type `ty`: the raw little-endian buffer (booleans one byte per
    /// element; one element for a splat).
    Tensor {
        ty: u64,
        data: Vec<u8>,
    },
    Type(u64),
    TypeExtensions(Vec<i64>),
    ResultAccuracy {
        atol: u64,
        rtol: u64,
        ulps: i64,
        mode: u64,
    },
    Unit,
    /// `@name` (the index of its string attribute).
    SymbolRef(u64),
    /// `array<T: ...>`: element type, count, raw data.
    DenseArray {
        elem: u64,
        count: u64,
        data: Vec<u8>,
    },
    /// An entry written as MLIR text.
    Text(String),
    /// A location (never decoded further).
    Location,
    /// A Shardy attribute ([`super::sdy`]).
    Sdy(SdyAttr),
    /// An attribute this reader does not convert: what it is.
    Unsupported(String),
}

/// Float formats by their MLIR names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Float {
    Named(&'static str, u32),
}

/// A decoded type.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Type {
    /// `iN` (signless), `uiN`, `siN`.
    Int {
        bits: u32,
        sign: Sign,
    },
    Index,
    Float(Float),
    Complex(u64),
    Tensor {
        shape: Vec<i64>,
        elem: u64,
        encoding: Option<u64>,
    },
    Unranked(u64),
    Function(Vec<u64>, Vec<u64>),
    Tuple(Vec<u64>),
    Token,
    None,
    /// A type written as MLIR text.
    Text(String),
    Unsupported(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sign {
    Signless,
    Signed,
    Unsigned,
}

impl Type {
    /// Bit width of an integer or float type (index: 64).
    pub(super) fn bits(&self) -> Option<u32> {
        match self {
            Type::Int { bits, .. } => Some(*bits),
            Type::Index => Some(64),
            Type::Float(Float::Named(_, b)) => Some(*b),
            _ => None,
        }
    }
}

/// Decodes and caches attribute and type entries.
pub(super) struct Table<'b, 'a> {
    pub bc: &'b Bytecode<'a>,
    attrs: RefCell<Vec<Option<Rc<Attr>>>>,
    types: RefCell<Vec<Option<Rc<Type>>>>,
    depth: Cell<usize>,
}

impl<'b, 'a> Table<'b, 'a> {
    pub(super) fn new(bc: &'b Bytecode<'a>) -> Self {
        Table {
            bc,
            attrs: RefCell::new(vec![None; bc.attrs.len()]),
            types: RefCell::new(vec![None; bc.types.len()]),
            depth: Cell::new(0),
        }
    }

    fn enter(&self, r: &Reader<'_>) -> Result<(), BytecodeError> {
        let d = self.depth.get() + 1;
        if d > MAX_ATTR_DEPTH {
            return Err(r.error(format!(
                "attributes and types nest deeper than {MAX_ATTR_DEPTH} (or refer to themselves)"
            )));
        }
        self.depth.set(d);
        Ok(())
    }

    pub(super) fn attr(&self, idx: u64) -> Result<Rc<Attr>, BytecodeError> {
        let entry = self.entry(&self.bc.attrs, idx, "attribute")?;
        if let Some(a) = &self.attrs.borrow()[idx as usize] {
            return Ok(a.clone());
        }
        let mut r = entry.data;
        self.enter(&r)?;
        let decoded = self.decode_attr(&entry, &mut r);
        self.depth.set(self.depth.get() - 1);
        let a = Rc::new(decoded?);
        if !r.is_empty() {
            return Err(r.error("bytes left after an attribute entry"));
        }
        self.attrs.borrow_mut()[idx as usize] = Some(a.clone());
        Ok(a)
    }

    pub(super) fn ty(&self, idx: u64) -> Result<Rc<Type>, BytecodeError> {
        let entry = self.entry(&self.bc.types, idx, "type")?;
        if let Some(t) = &self.types.borrow()[idx as usize] {
            return Ok(t.clone());
        }
        let mut r = entry.data;
        self.enter(&r)?;
        let decoded = self.decode_type(&entry, &mut r);
        self.depth.set(self.depth.get() - 1);
        let t = Rc::new(decoded?);
        if !r.is_empty() {
            return Err(r.error("bytes left after a type entry"));
        }
        self.types.borrow_mut()[idx as usize] = Some(t.clone());
        Ok(t)
    }

    fn entry(&self, list: &[Entry<'a>], idx: u64, what: &str) -> Result<Entry<'a>, BytecodeError> {
        list.get(idx as usize)
            .copied()
            .ok_or_else(|| BytecodeError::Malformed {
                offset: 0,
                message: format!("{what} index {idx} out of range"),
            })
    }

    /// The string of a string attribute.
    pub(super) fn attr_str(&self, idx: u64) -> Result<Vec<u8>, BytecodeError> {
        match &*self.attr(idx)? {
            Attr::Str(s) => Ok(s.clone()),
            other => Err(BytecodeError::Unsupported(format!(
                "expected a string attribute, found {other:?}"
            ))),
        }
    }

    pub(super) fn attr_ref(&self, r: &mut Reader<'_>) -> Result<u64, BytecodeError> {
        let at = *r;
        let i = r.varint()?;
        if i >= self.bc.attrs.len() as u64 {
            return Err(at.error(format!("attribute index {i} out of range")));
        }
        Ok(i)
    }

    fn type_ref(&self, r: &mut Reader<'_>) -> Result<u64, BytecodeError> {
        let at = *r;
        let i = r.varint()?;
        if i >= self.bc.types.len() as u64 {
            return Err(at.error(format!("type index {i} out of range")));
        }
        Ok(i)
    }

    /// MLIR's `readOptionalAttribute`: a varint whose low bit says whether an index follows.
    pub(super) fn optional_attr_ref(
        &self,
        r: &mut Reader<'_>,
    ) -> Result<Option<u64>, BytecodeError> {
        let at = *r;
        let v = r.varint()?;
        if v & 1 == 0 {
            return Ok(None);
        }
        let i = v >> 1;
        if i >= self.bc.attrs.len() as u64 {
            return Err(at.error(format!("attribute index {i} out of range")));
        }
        Ok(Some(i))
    }

    pub(super) fn attr_list(&self, r: &mut Reader<'_>) -> Result<Vec<u64>, BytecodeError> {
        let n = r.count("attribute", 1)?;
        (0..n).map(|_| self.attr_ref(r)).collect()
    }

    fn type_list(&self, r: &mut Reader<'_>) -> Result<Vec<u64>, BytecodeError> {
        let n = r.count("type", 1)?;
        (0..n).map(|_| self.type_ref(r)).collect()
    }

    pub(super) fn string(&self, r: &mut Reader<'_>) -> Result<Vec<u8>, BytecodeError> {
        let i = r.varint()?;
        Ok(self.bc.string(r, i)?.to_vec())
    }

    /// An integer of `bits` bits (MLIR's `readAPIntWithKnownWidth`).
    fn apint(&self, r: &mut Reader<'_>, bits: u32) -> Result<u128, BytecodeError> {
        let mask = if bits >= 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        };
        if bits <= 8 {
            return Ok(u128::from(r.byte()?) & mask);
        }
        if bits <= 64 {
            return Ok((r.svarint()? as u64 as u128) & mask);
        }
        let words = r.count("integer word", 1)?;
        if words > 2 {
            return Err(r.error(format!("a {bits}-bit integer is not supported")));
        }
        let mut v = 0u128;
        for i in 0..words {
            v |= (r.svarint()? as u64 as u128) << (64 * i);
        }
        Ok(v & mask)
    }

    fn bits_of(&self, r: &Reader<'_>, ty: u64) -> Result<u32, BytecodeError> {
        self.ty(ty)?
            .bits()
            .ok_or_else(|| r.error("an integer or float attribute of a non-scalar type"))
    }

    fn text(r: &mut Reader<'_>) -> Result<String, BytecodeError> {
        let s = r.cstr()?;
        Ok(String::from_utf8_lossy(s).into_owned())
    }

    fn decode_attr(&self, e: &Entry<'a>, r: &mut Reader<'_>) -> Result<Attr, BytecodeError> {
        if !e.custom {
            return Ok(Attr::Text(Self::text(r)?));
        }
        let dialect = self.bc.dialects[e.dialect].as_str();
        let code = r.varint()?;
        match dialect {
            "builtin" => self.builtin_attr(code, r),
            "vhlo" => self.vhlo_attr(code, r),
            "sdy" => self.sdy_attr(code, r),
            d => {
                let _ = r.bytes(r.remaining() as u64)?;
                Ok(Attr::Unsupported(format!("an attribute of dialect {d}")))
            }
        }
    }

    fn decode_type(&self, e: &Entry<'a>, r: &mut Reader<'_>) -> Result<Type, BytecodeError> {
        if !e.custom {
            return Ok(Type::Text(Self::text(r)?));
        }
        let dialect = self.bc.dialects[e.dialect].as_str();
        let code = r.varint()?;
        match dialect {
            "builtin" => self.builtin_type(code, r),
            "vhlo" => self.vhlo_type(code, r),
            d => {
                let _ = r.bytes(r.remaining() as u64)?;
                Ok(Type::Unsupported(format!("a type of dialect {d}")))
            }
        }
    }

    fn builtin_attr(&self, code: u64, r: &mut Reader<'_>) -> Result<Attr, BytecodeError> {
        Ok(match code {
            0 => Attr::Array(self.attr_list(r)?),
            1 => {
                let n = r.count("dictionary entry", 2)?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push((self.attr_ref(r)?, self.attr_ref(r)?));
                }
                Attr::Dict(v)
            }
            2 => Attr::Str(self.string(r)?),
            3 => {
                let s = self.string(r)?;
                self.type_ref(r)?;
                Attr::Str(s)
            }
            4 => Attr::SymbolRef(self.attr_ref(r)?),
            5 => {
                let root = self.attr_ref(r)?;
                if !self.attr_list(r)?.is_empty() {
                    return Ok(Attr::Unsupported("a nested symbol reference".into()));
                }
                Attr::SymbolRef(root)
            }
            6 => Attr::Type(self.type_ref(r)?),
            7 => Attr::Unit,
            8 => {
                let ty = self.type_ref(r)?;
                let bits = self.apint(r, self.bits_of(r, ty)?)?;
                Attr::Int { ty, bits }
            }
            9 => {
                let ty = self.type_ref(r)?;
                let bits = self.apint(r, self.bits_of(r, ty)?)? as u64;
                Attr::Float { ty, bits }
            }
            10..=15 => {
                // Locations: skip their payload without decoding it.
                let _ = r.bytes(r.remaining() as u64)?;
                Attr::Location
            }
            17 => {
                let elem = self.type_ref(r)?;
                let count = r.varint()?;
                let len = r.varint()?;
                let data = r.bytes(len)?.to_vec();
                Attr::DenseArray { elem, count, data }
            }
            18 => {
                let ty = self.type_ref(r)?;
                let len = r.varint()?;
                let data = r.bytes(len)?.to_vec();
                Attr::Tensor { ty, data }
            }
            16 => Attr::Unsupported("a dense_resource attribute (data in a resource blob)".into()),
            19 => Attr::Unsupported("a dense string elements attribute".into()),
            20 => Attr::Unsupported("a sparse elements attribute".into()),
            c => {
                // Newer location kinds (FileLineColRange) and others: only locations may be
                // unknown harmlessly; anything else reaching the printer is refused there.
                let _ = r.bytes(r.remaining() as u64)?;
                Attr::Unsupported(format!("builtin attribute code {c}"))
            }
        })
    }

    fn builtin_type(&self, code: u64, r: &mut Reader<'_>) -> Result<Type, BytecodeError> {
        Ok(match code {
            0 => {
                let v = r.varint()?;
                let bits = v >> 2;
                if bits == 0 || bits > 128 {
                    return Err(r.error(format!("integer type of {bits} bits")));
                }
                let sign = match v & 3 {
                    0 => Sign::Signless,
                    1 => Sign::Signed,
                    _ => Sign::Unsigned,
                };
                Type::Int {
                    bits: bits as u32,
                    sign,
                }
            }
            1 => Type::Index,
            2 => Type::Function(self.type_list(r)?, self.type_list(r)?),
            3 => Type::Float(Float::Named("bf16", 16)),
            4 => Type::Float(Float::Named("f16", 16)),
            5 => Type::Float(Float::Named("f32", 32)),
            6 => Type::Float(Float::Named("f64", 64)),
            9 => Type::Complex(self.type_ref(r)?),
            12 => Type::None,
            13 | 14 => {
                let encoding = if code == 14 {
                    Some(self.attr_ref(r)?)
                } else {
                    None
                };
                let shape = r.svarints("dimension")?;
                let elem = self.type_ref(r)?;
                Type::Tensor {
                    shape,
                    elem,
                    encoding,
                }
            }
            15 => Type::Tuple(self.type_list(r)?),
            18 => Type::Unranked(self.type_ref(r)?),
            c => {
                let _ = r.bytes(r.remaining() as u64)?;
                Type::Unsupported(format!("builtin type code {c}"))
            }
        })
    }

    fn vhlo_attr(&self, code: u64, r: &mut Reader<'_>) -> Result<Attr, BytecodeError> {
        let en = |k: EnumKind, r: &mut Reader<'_>| -> Result<Attr, BytecodeError> {
            Ok(Attr::Enum(k, r.varint()?))
        };
        Ok(match code {
            1 => Attr::Array(self.attr_list(r)?),
            2 => match r.varint()? {
                0 => Attr::Bool(false),
                1 => Attr::Bool(true),
                v => return Err(r.error(format!("boolean attribute of value {v}"))),
            },
            3 => en(EnumKind::ComparisonDirection, r)?,
            4 => en(EnumKind::ComparisonType, r)?,
            5 => en(EnumKind::CustomCallApiVersion, r)?,
            6 => {
                let n = r.count("dictionary entry", 2)?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push((self.attr_ref(r)?, self.attr_ref(r)?));
                }
                Attr::Dict(v)
            }
            7 => en(EnumKind::FftType, r)?,
            8 => {
                let ty = self.type_ref(r)?;
                let bits = self.apint(r, self.bits_of(r, ty)?)? as u64;
                Attr::Float { ty, bits }
            }
            9 => {
                let ty = self.type_ref(r)?;
                let bits = self.apint(r, self.bits_of(r, ty)?)?;
                Attr::Int { ty, bits }
            }
            10 => Attr::OutputOperandAlias {
                outputs: r.svarints("tuple index")?,
                operand: r.svarint()?,
                operand_tuple: r.svarints("tuple index")?,
            },
            11 => en(EnumKind::Precision, r)?,
            12 => en(EnumKind::RngAlgorithm, r)?,
            13 => en(EnumKind::RngDistribution, r)?,
            14 => Attr::Str(self.string(r)?),
            15 => {
                let ty = self.type_ref(r)?;
                let len = r.varint()?;
                let blob = r.bytes(len)?;
                Attr::Tensor {
                    ty,
                    data: self.unpack_bools(ty, blob)?,
                }
            }
            16 => en(EnumKind::Transpose, r)?,
            17 => Attr::Type(self.type_ref(r)?),
            18 => Attr::TypeExtensions(r.svarints("bound")?),
            19 => en(EnumKind::ResultAccuracyMode, r)?,
            20 => Attr::ResultAccuracy {
                atol: self.apint(r, 64)? as u64,
                rtol: self.apint(r, 64)? as u64,
                ulps: r.svarint()?,
                mode: self.attr_ref(r)?,
            },
            21..=25 => {
                let _ = r.bytes(r.remaining() as u64)?;
                Attr::Unsupported("a mesh or axis attribute of mesh-based collectives".into())
            }
            c => return Err(r.error(format!("unknown VHLO attribute code {c}"))),
        })
    }

    /// VHLO packs boolean tensors eight elements to a byte (a splat is one `0xFF` or `0x00`
    /// byte); MLIR's raw buffer has one byte per element.
    fn unpack_bools(&self, ty: u64, blob: &[u8]) -> Result<Vec<u8>, BytecodeError> {
        let t = self.ty(ty)?;
        let Type::Tensor { shape, elem, .. } = &*t else {
            return Ok(blob.to_vec());
        };
        if *self.ty(*elem)?
            != (Type::Int {
                bits: 1,
                sign: Sign::Signless,
            })
        {
            return Ok(blob.to_vec());
        }
        if blob.len() == 1 && blob[0] == 0xFF {
            return Ok(vec![1]);
        }
        let n = shape
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(u64::try_from(d).ok()?));
        let Some(n) = n else {
            return Ok(blob.to_vec());
        };
        let packed = n.div_ceil(8);
        if blob.len() as u64 == packed && blob.len() as u64 != n {
            return Ok((0..n as usize)
                .map(|i| (blob[i / 8] >> (i % 8)) & 1)
                .collect());
        }
        Ok(blob.to_vec())
    }

    fn vhlo_type(&self, code: u64, r: &mut Reader<'_>) -> Result<Type, BytecodeError> {
        let int = |bits: u32, sign: Sign| Type::Int { bits, sign };
        let f = |name: &'static str, bits: u32| Type::Float(Float::Named(name, bits));
        Ok(match code {
            0 => int(1, Sign::Signless),
            1 => Type::Complex(self.type_ref(r)?),
            2 => f("bf16", 16),
            3 => f("f16", 16),
            4 => f("f32", 32),
            5 => f("f64", 64),
            6 => f("f8E4M3FN", 8),
            7 => f("f8E5M2", 8),
            8 => Type::Function(self.type_list(r)?, self.type_list(r)?),
            9 => Type::Index,
            10 => int(4, Sign::Signless),
            11 => int(8, Sign::Signless),
            12 => int(16, Sign::Signless),
            13 => int(32, Sign::Signless),
            14 => int(64, Sign::Signless),
            15 => int(4, Sign::Unsigned),
            16 => int(8, Sign::Unsigned),
            17 => int(16, Sign::Unsigned),
            18 => int(32, Sign::Unsigned),
            19 => int(64, Sign::Unsigned),
            20 | 21 => {
                let encoding = if code == 21 {
                    Some(self.attr_ref(r)?)
                } else {
                    None
                };
                let shape = r.svarints("dimension")?;
                let elem = self.type_ref(r)?;
                Type::Tensor {
                    shape,
                    elem,
                    encoding,
                }
            }
            22 => Type::Token,
            23 => Type::Tuple(self.type_list(r)?),
            25 => Type::Unranked(self.type_ref(r)?),
            27 => f("f8E4M3FNUZ", 8),
            28 => f("f8E5M2FNUZ", 8),
            29 => f("f8E4M3B11FNUZ", 8),
            31 => int(2, Sign::Signless),
            32 => int(2, Sign::Unsigned),
            33 => Type::None,
            34 => f("tf32", 19),
            35 => f("f8E4M3", 8),
            36 => f("f8E3M4", 8),
            37 => f("f4E2M1FN", 4),
            38 => f("f6E2M3FN", 6),
            39 => f("f6E3M2FN", 6),
            40 => f("f8E8M0FNU", 8),
            24 | 30 => {
                let _ = r.bytes(r.remaining() as u64)?;
                Type::Unsupported("a quantized type".into())
            }
            26 => Type::Unsupported("the witness type".into()),
            41 | 42 => {
                let _ = r.bytes(r.remaining() as u64)?;
                Type::Unsupported(
                    if code == 41 {
                        "a buffer type"
                    } else {
                        "a future type"
                    }
                    .into(),
                )
            }
            c => return Err(r.error(format!("unknown VHLO type code {c}"))),
        })
    }
}
