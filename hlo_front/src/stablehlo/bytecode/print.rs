//! Printing the op tree as StableHLO MLIR text, the form the text front end reads: the module
//! in the pretty form (`module @name attributes {...} { ... }`, so that a one-device
//! `sdy.mesh` can sit in it as JAX prints it), every other op in the generic form
//! (`%3 = "stablehlo.add"(%1, %2) : (tensor<f32>, tensor<f32>) -> tensor<f32>`), VHLO ops
//! renamed and their attributes converted by [`super::vhlo`].

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt::Write;

use super::attrs::{Attr, EnumKind, Float, Sign, Table, Type, MAX_ATTR_DEPTH};
use super::container::{Block, Op, Region, Value};
use super::sdy::SdyAttr;
use super::vhlo;
use super::BytecodeError;

/// Where an op sits, for the ops whose meaning depends on it (`vhlo.return_v1` ends a function
/// or a region of an op).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Parent {
    Module,
    Func,
    Op,
}

/// `main`'s reshaped arguments (value, type) and the platform-index constant that replaces the
/// first one.
type MainArgs = (Vec<(Value, String)>, Option<String>);

pub(super) struct Printer<'t, 'b, 'a> {
    /// How to reshape `main` (a serialized `Exported`'s calling convention).
    pub adapter: Option<&'t super::MainAdapter>,
    /// Whether `main` was reshaped.
    pub adapted: bool,
    /// The next value number no op defines.
    fresh: Value,
    pub t: &'t Table<'b, 'a>,
    pub out: String,
    /// Largest text produced before giving up (shared attributes can make the text much
    /// larger than the bytecode).
    pub limit: usize,
    /// Every value's type (an index), from its definition.
    pub value_types: HashMap<Value, u64>,
    /// Results of `builtin.unrealized_conversion_cast`s, each the value it casts: the casts
    /// VHLO's serialization puts around an op of another dialect (`sdy.sharding_constraint`
    /// between `!vhlo.tensor_v1` and `tensor` values) are not printed, their uses read through.
    casts: HashMap<Value, Value>,
    depth: Cell<usize>,
}

fn unsupported(m: impl Into<String>) -> BytecodeError {
    BytecodeError::Unsupported(m.into())
}

/// `name` as an attribute key or symbol: bare when it is an identifier, else quoted.
pub(super) fn key(name: &[u8]) -> String {
    let bare = !name.is_empty()
        && (name[0].is_ascii_alphabetic() || name[0] == b'_')
        && name
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.'));
    if bare {
        String::from_utf8_lossy(name).into_owned()
    } else {
        quote(name)
    }
}

/// An MLIR string literal (`\22` for a quote, `\\`, other non-printables as `\XX`).
pub(super) fn quote(s: &[u8]) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        match c {
            b'"' => o.push_str("\\22"),
            b'\\' => o.push_str("\\\\"),
            0x20..=0x7E => o.push(c as char),
            0x80.. => {
                // Keep valid UTF-8 sequences as they are.
                let len = match c {
                    0xC0..=0xDF => 2,
                    0xE0..=0xEF => 3,
                    0xF0..=0xF7 => 4,
                    _ => 0,
                };
                match s.get(i..i + len).and_then(|b| std::str::from_utf8(b).ok()) {
                    Some(ch) if len > 0 => {
                        o.push_str(ch);
                        i += len;
                        continue;
                    }
                    _ => {
                        let _ = write!(o, "\\{c:02X}");
                    }
                }
            }
            _ => {
                let _ = write!(o, "\\{c:02X}");
            }
        }
        i += 1;
    }
    o.push('"');
    o
}

/// A finite float in MLIR's syntax (a `.` in the mantissa), else `None`.
fn float_text(v: f64) -> Option<String> {
    if !v.is_finite() {
        return None;
    }
    let s = format!("{v:?}");
    Some(match s.find('e') {
        Some(e) if !s[..e].contains('.') => format!("{}.0{}", &s[..e], &s[e..]),
        _ => s,
    })
}

/// The value of `bits` as a float of `bits_width` bits (f16, bf16, f32, f64), if exact.
pub(super) fn float_value(name: &str, bits: u64) -> Option<f64> {
    match name {
        "f64" => Some(f64::from_bits(bits)),
        "f32" => Some(f64::from(f32::from_bits(bits as u32))),
        "f16" => Some(half::f16::from_bits(bits as u16).to_f64()),
        "bf16" => Some(half::bf16::from_bits(bits as u16).to_f64()),
        _ => None,
    }
}

impl<'t, 'b, 'a> Printer<'t, 'b, 'a> {
    pub(super) fn new(t: &'t Table<'b, 'a>, limit: usize) -> Self {
        let mut p = Printer {
            adapter: None,
            adapted: false,
            fresh: 0,
            t,
            out: String::new(),
            limit,
            value_types: HashMap::new(),
            casts: HashMap::new(),
            depth: Cell::new(0),
        };
        p.collect_types(&t.bc.top);
        p.fresh = p
            .value_types
            .keys()
            .max()
            .map_or(0, |m| m.saturating_add(1));
        p
    }

    fn collect_types(&mut self, ops: &[Op<'_>]) {
        for op in ops {
            self.value_types.extend(op.results.iter().copied());
            for r in &op.regions {
                for b in &r.blocks {
                    self.value_types.extend(b.args.iter().copied());
                    self.collect_types(&b.ops);
                }
            }
        }
    }

    pub(super) fn value_type(&self, v: Value) -> Result<u64, BytecodeError> {
        self.value_types
            .get(&v)
            .copied()
            .ok_or_else(|| unsupported(format!("value %{v} is used but never defined")))
    }

    fn check_size(&self) -> Result<(), BytecodeError> {
        if self.out.len() > self.limit {
            return Err(unsupported(format!(
                "the module's text form exceeds {} bytes",
                self.limit
            )));
        }
        Ok(())
    }

    /// Runs `f` one level deeper, refusing chains deeper than [`MAX_ATTR_DEPTH`] (cycles).
    pub(super) fn nested<T>(
        &self,
        f: impl FnOnce() -> Result<T, BytecodeError>,
    ) -> Result<T, BytecodeError> {
        let d = self.depth.get() + 1;
        if d > MAX_ATTR_DEPTH {
            return Err(unsupported(format!(
                "attributes and types nest deeper than {MAX_ATTR_DEPTH} (or refer to themselves)"
            )));
        }
        self.depth.set(d);
        let r = f();
        self.depth.set(d - 1);
        r
    }

    /// A type in MLIR syntax.
    pub(super) fn ty(&self, idx: u64) -> Result<String, BytecodeError> {
        self.nested(|| self.ty_inner(idx))
    }

    fn ty_inner(&self, idx: u64) -> Result<String, BytecodeError> {
        let t = self.t.ty(idx)?;
        Ok(match &*t {
            Type::Int { bits, sign } => match sign {
                Sign::Signless => format!("i{bits}"),
                Sign::Signed => format!("si{bits}"),
                Sign::Unsigned => format!("ui{bits}"),
            },
            Type::Index => "index".into(),
            Type::Float(Float::Named(n, _)) => (*n).into(),
            Type::Complex(e) => format!("complex<{}>", self.ty(*e)?),
            Type::Tensor {
                shape,
                elem,
                encoding,
            } => {
                let mut s = String::from("tensor<");
                for d in shape {
                    if *d < 0 {
                        s.push('?');
                    } else {
                        let _ = write!(s, "{d}");
                    }
                    s.push('x');
                }
                s.push_str(&self.ty(*elem)?);
                if let Some(e) = encoding {
                    s.push_str(", ");
                    s.push_str(&self.encoding(*e)?);
                }
                s.push('>');
                s
            }
            Type::Unranked(e) => format!("tensor<*x{}>", self.ty(*e)?),
            Type::Function(i, o) => self.function_type(i, o)?,
            Type::Tuple(v) => format!("tuple<{}>", self.types(v)?),
            Type::Token => "!stablehlo.token".into(),
            Type::None => "none".into(),
            Type::Text(s) => s.clone(),
            Type::Unsupported(what) => return Err(unsupported(format!("{what} is not supported"))),
        })
    }

    fn encoding(&self, idx: u64) -> Result<String, BytecodeError> {
        match &*self.t.attr(idx)? {
            Attr::TypeExtensions(b) => {
                let dims: Vec<String> = b
                    .iter()
                    .map(|d| if *d < 0 { "?".into() } else { d.to_string() })
                    .collect();
                Ok(format!("#stablehlo.bounds<{}>", dims.join(", ")))
            }
            _ => self.attr(idx),
        }
    }

    pub(super) fn types(&self, v: &[u64]) -> Result<String, BytecodeError> {
        let v: Vec<String> = v.iter().map(|t| self.ty(*t)).collect::<Result<_, _>>()?;
        Ok(v.join(", "))
    }

    pub(super) fn function_type(&self, i: &[u64], o: &[u64]) -> Result<String, BytecodeError> {
        let outs = if o.len() == 1 && !matches!(&*self.t.ty(o[0])?, Type::Function(..)) {
            self.ty(o[0])?
        } else {
            format!("({})", self.types(o)?)
        };
        Ok(format!("({}) -> {outs}", self.types(i)?))
    }

    /// An integer attribute's value as MLIR prints it (signless: signed).
    fn int_value(&self, ty: u64, bits: u128) -> Result<String, BytecodeError> {
        let t = self.t.ty(ty)?;
        let (width, sign) = match &*t {
            Type::Int { bits, sign } => (*bits, *sign),
            Type::Index => (64, Sign::Signless),
            _ => return Err(unsupported("an integer attribute of a non-integer type")),
        };
        if width == 1 {
            return Ok(if bits & 1 == 1 { "true" } else { "false" }.into());
        }
        Ok(match sign {
            Sign::Unsigned => bits.to_string(),
            _ => {
                let shift = 128 - width;
                (((bits << shift) as i128) >> shift).to_string()
            }
        })
    }

    /// An attribute in StableHLO's syntax.
    pub(super) fn attr(&self, idx: u64) -> Result<String, BytecodeError> {
        self.nested(|| self.attr_inner(idx))
    }

    fn attr_inner(&self, idx: u64) -> Result<String, BytecodeError> {
        let a = self.t.attr(idx)?;
        Ok(match &*a {
            Attr::Array(v) => format!("[{}]", self.attrs(v)?),
            Attr::Dict(v) => self.dict(v)?,
            Attr::Str(s) => quote(s),
            Attr::Bool(b) => b.to_string(),
            Attr::Int { ty, bits } => {
                let t = self.t.ty(*ty)?;
                if matches!(&*t, Type::Int { bits: 1, .. }) {
                    self.int_value(*ty, *bits)?
                } else {
                    format!("{} : {}", self.int_value(*ty, *bits)?, self.ty(*ty)?)
                }
            }
            Attr::Float { ty, bits } => {
                let t = self.t.ty(*ty)?;
                let name = match &*t {
                    Type::Float(Float::Named(n, _)) => *n,
                    _ => return Err(unsupported("a float attribute of a non-float type")),
                };
                match float_value(name, *bits).and_then(float_text) {
                    Some(v) => format!("{v} : {name}"),
                    None => format!("0x{bits:X} : {name}"),
                }
            }
            Attr::Enum(k, v) => enum_text(*k, *v)?,
            Attr::OutputOperandAlias {
                outputs,
                operand,
                operand_tuple,
            } => format!(
                "#stablehlo.output_operand_alias<output_tuple_indices = {}, operand_index = {operand}, operand_tuple_indices = {}>",
                list(outputs),
                list(operand_tuple)
            ),
            Attr::Tensor { ty, data } => self.dense(*ty, data)?,
            Attr::Type(t) => self.ty(*t)?,
            Attr::TypeExtensions(_) => self.encoding(idx)?,
            Attr::ResultAccuracy {
                atol,
                rtol,
                ulps,
                mode,
            } => {
                let f = |b: u64| float_text(f64::from_bits(b)).unwrap_or_else(|| format!("0x{b:X}"));
                let mode = match &*self.t.attr(*mode)? {
                    Attr::Enum(EnumKind::ResultAccuracyMode, m) => enum_case(EnumKind::ResultAccuracyMode, *m)?,
                    _ => return Err(unsupported("result_accuracy without a mode")),
                };
                format!(
                    "#stablehlo.result_accuracy<atol = {}, rtol = {}, ulps = {ulps}, mode = #stablehlo.result_accuracy_mode<{mode}>>",
                    f(*atol),
                    f(*rtol)
                )
            }
            Attr::Unit => "unit".into(),
            Attr::SymbolRef(s) => format!("@{}", key(&self.t.attr_str(*s)?)),
            Attr::DenseArray { elem, count, data } => self.dense_array(*elem, *count, data)?,
            Attr::Text(s) => s.clone(),
            Attr::Location => return Err(unsupported("a location used as an attribute value")),
            Attr::Sdy(a) => match self.sdy_text(a)? {
                Some(text) => text,
                None => {
                    return Err(unsupported(
                        "a Shardy attribute other than a mesh or a sharding, outside an op's annotations, is not supported",
                    ))
                }
            },
            Attr::Unsupported(what) => return Err(unsupported(format!("{what} is not supported"))),
        })
    }

    pub(super) fn attrs(&self, v: &[u64]) -> Result<String, BytecodeError> {
        let mut s = String::new();
        for (i, a) in v.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            s.push_str(&self.attr(*a)?);
            if s.len() > self.limit {
                return Err(unsupported(format!(
                    "an attribute's text exceeds {} bytes",
                    self.limit
                )));
            }
        }
        Ok(s)
    }

    pub(super) fn dict(&self, v: &[(u64, u64)]) -> Result<String, BytecodeError> {
        let mut s = String::from("{");
        let mut first = true;
        for (k, val) in v {
            let name = self.t.attr_str(*k)?;
            if self.is_sharding_annotation(&name, *val)? {
                continue;
            }
            if !first {
                s.push_str(", ");
            }
            first = false;
            s.push_str(&key(&name));
            // A unit value prints as the key alone.
            if !matches!(&*self.t.attr(*val)?, Attr::Unit) {
                s.push_str(" = ");
                s.push_str(&self.attr(*val)?);
            }
            if s.len() > self.limit {
                return Err(unsupported(format!(
                    "an attribute's text exceeds {} bytes",
                    self.limit
                )));
            }
        }
        s.push('}');
        Ok(s)
    }

    /// Elements of a dense tensor attribute: integers and booleans as numbers, floats and
    /// complex numbers as MLIR's exact hex buffer.
    fn dense(&self, ty: u64, data: &[u8]) -> Result<String, BytecodeError> {
        let t = self.t.ty(ty)?;
        let Type::Tensor { shape, elem, .. } = &*t else {
            return Err(unsupported("a dense attribute of a non-tensor type"));
        };
        let et = self.t.ty(*elem)?;
        let tys = self.ty(ty)?;
        let width = match &*et {
            Type::Int { bits, .. } => bits.div_ceil(8) as usize,
            Type::Index => 8,
            _ => {
                let hex: String = data.iter().map(|b| format!("{b:02X}")).collect();
                return Ok(format!("dense<\"0x{hex}\"> : {tys}"));
            }
        };
        let n = shape
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(u64::try_from(d).ok()?))
            .ok_or_else(|| unsupported("a dense attribute of a dynamic or oversized shape"))?;
        if data.len() % width != 0 {
            return Err(unsupported(
                "a dense attribute whose data is not whole elements",
            ));
        }
        let count = (data.len() / width) as u64;
        if count != n && count != 1 {
            return Err(unsupported(format!(
                "a dense attribute of {n} elements holds {count}"
            )));
        }
        if n == 0 {
            return Ok(format!("dense<> : {tys}"));
        }
        if n > 1 << 24 {
            return Err(unsupported(
                "an integer dense attribute of more than 2^24 elements",
            ));
        }
        let elems: Vec<String> = data
            .chunks(width)
            .map(|c| {
                let mut w = [0u8; 16];
                w[..width].copy_from_slice(c);
                self.int_value(*elem, u128::from_le_bytes(w))
            })
            .collect::<Result<_, _>>()?;
        if count == 1 && n != 1 {
            return Ok(format!("dense<{}> : {tys}", elems[0]));
        }
        let mut s = String::from("dense<");
        nest(&mut s, shape, &elems);
        let _ = write!(s, "> : {tys}");
        Ok(s)
    }

    fn dense_array(&self, elem: u64, count: u64, data: &[u8]) -> Result<String, BytecodeError> {
        let et = self.t.ty(elem)?;
        let name = self.ty(elem)?;
        let width = et
            .bits()
            .map(|b| b.div_ceil(8) as usize)
            .ok_or_else(|| unsupported("a dense array of a non-scalar type"))?;
        if data.len() as u64 != count.saturating_mul(width as u64) {
            return Err(unsupported(
                "a dense array whose data does not match its count",
            ));
        }
        if count == 0 {
            return Ok(format!("array<{name}>"));
        }
        let vals: Vec<String> = data
            .chunks(width)
            .map(|c| {
                let mut w = [0u8; 16];
                w[..width].copy_from_slice(c);
                let bits = u128::from_le_bytes(w);
                match &*et {
                    Type::Float(Float::Named(n, _)) => Ok(float_value(n, bits as u64)
                        .and_then(float_text)
                        .unwrap_or_else(|| format!("0x{bits:X}"))),
                    _ => self.int_value(elem, bits),
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(format!("array<{name}: {}>", vals.join(", ")))
    }

    // ---- ops ------------------------------------------------------------------------------

    /// The whole module.
    pub(super) fn module(&mut self, top: &[Op<'_>]) -> Result<(), BytecodeError> {
        let [m] = top else {
            return Err(unsupported(format!(
                "expected one top-level builtin.module, found {} ops",
                top.len()
            )));
        };
        if self.t.bc.op_name(m) != "builtin.module" {
            return Err(unsupported(format!(
                "expected a top-level builtin.module, found {}",
                self.t.bc.op_name(m)
            )));
        }
        let (inherent, discardable) = vhlo::op_attrs(self.t, m)?;
        self.out.push_str("module");
        for (k, v) in &inherent {
            if k == "sym_name" {
                let _ = write!(self.out, " @{}", key(&self.t.attr_str(*v)?));
            }
        }
        if !discardable.is_empty() {
            let dict = self.named_dict(&discardable)?;
            let _ = write!(self.out, " attributes {dict}");
        }
        self.out.push_str(" {\n");
        let [region] = m.regions.as_slice() else {
            return Err(unsupported("builtin.module without its one region"));
        };
        for block in &region.blocks {
            for op in &block.ops {
                self.op(op, Parent::Module, 1)?;
            }
        }
        self.out.push_str("}\n");
        Ok(())
    }

    /// Each top-level op of the module (its functions) printed alone as a module, or why it
    /// does not print: for surveying a module of many independent functions.
    pub(super) fn functions(
        &mut self,
        top: &[Op<'_>],
    ) -> Result<super::FunctionTexts, BytecodeError> {
        let [m] = top else {
            return Err(unsupported("expected one top-level builtin.module"));
        };
        let Some(region) = m.regions.first() else {
            return Err(unsupported("builtin.module without its one region"));
        };
        let mut out = Vec::new();
        for op in region.blocks.iter().flat_map(|b| &b.ops) {
            let name = vhlo::op_attrs(self.t, op)?
                .0
                .iter()
                .find(|(k, _)| k == "sym_name")
                .map_or(Ok(String::new()), |(_, v)| {
                    self.t
                        .attr_str(*v)
                        .map(|s| String::from_utf8_lossy(&s).into_owned())
                })?;
            self.out = String::from("module {\n");
            let r = self.op(op, Parent::Module, 1).map(|()| {
                self.out.push_str("}\n");
                std::mem::take(&mut self.out)
            });
            out.push((name, r));
        }
        Ok(out)
    }

    /// A Shardy annotation this reader does not decode (`sdy.sharding_rule =
    /// #sdy.op_sharding_rule<...>`, ...): dropped, as it only guides sharding propagation.
    /// Meshes and shardings are decoded and kept ([`super::sdy`]).
    fn is_sharding_annotation(&self, name: &[u8], val: u64) -> Result<bool, BytecodeError> {
        Ok(
            name.starts_with(b"sdy.")
                && matches!(&*self.t.attr(val)?, Attr::Sdy(SdyAttr::Other(_))),
        )
    }

    /// `{k = v, ...}` of named attributes.
    pub(super) fn named_dict(&self, v: &[(String, u64)]) -> Result<String, BytecodeError> {
        let mut s = String::from("{");
        let mut first = true;
        for (k, a) in v {
            if self.is_sharding_annotation(k.as_bytes(), *a)? {
                continue;
            }
            if !first {
                s.push_str(", ");
            }
            first = false;
            s.push_str(&key(k.as_bytes()));
            if !matches!(&*self.t.attr(*a)?, Attr::Unit) {
                s.push_str(" = ");
                s.push_str(&self.attr(*a)?);
            }
        }
        s.push('}');
        Ok(s)
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }

    /// One op in the generic form.
    pub(super) fn op(
        &mut self,
        op: &Op<'_>,
        parent: Parent,
        depth: usize,
    ) -> Result<(), BytecodeError> {
        self.check_size()?;
        if op.successors > 0 {
            return Err(unsupported(format!(
                "{}: successor blocks are not supported",
                self.t.bc.op_name(op)
            )));
        }
        if self.t.bc.op_name(op) == "builtin.unrealized_conversion_cast" {
            let ([from], [(to, _)]) = (op.operands.as_slice(), op.results.as_slice()) else {
                return Err(unsupported(
                    "builtin.unrealized_conversion_cast of other than one value to one",
                ));
            };
            let from = self.casts.get(from).copied().unwrap_or(*from);
            self.casts.insert(*to, from);
            return Ok(());
        }
        let conv = vhlo::convert(self, op, parent)?;
        self.indent(depth);
        if let Some(pretty) = conv.pretty {
            self.out.push_str(&pretty);
            self.out.push('\n');
            return Ok(());
        }
        let is_main = conv.name == "func.func"
            && conv
                .props
                .iter()
                .any(|(k, v)| k == "sym_name" && v == "\"main\"");
        if let Some(a) = self.adapter.filter(|_| is_main) {
            return self.adapted_main(op, conv, a, depth);
        }
        if !op.results.is_empty() {
            let names: Vec<String> = op.results.iter().map(|(v, _)| format!("%{v}")).collect();
            let _ = write!(self.out, "{} = ", names.join(", "));
        }
        let operands: Vec<String> = op
            .operands
            .iter()
            .map(|v| format!("%{}", self.casts.get(v).unwrap_or(v)))
            .collect();
        let _ = write!(self.out, "\"{}\"({})", conv.name, operands.join(", "));
        if !conv.props.is_empty() {
            let p: Vec<String> = conv
                .props
                .iter()
                .map(|(k, v)| format!("{} = {v}", key(k.as_bytes())))
                .collect();
            let _ = write!(self.out, " <{{{}}}>", p.join(", "));
        }
        if !op.regions.is_empty() {
            let inner = if conv.name == "func.func" {
                Parent::Func
            } else {
                Parent::Op
            };
            self.out.push_str(" (");
            for (i, r) in op.regions.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.region(r, inner, depth)?;
            }
            self.out.push(')');
        }
        if !conv.attrs.is_empty() {
            let d = self.named_dict(&conv.attrs)?;
            let _ = write!(self.out, " {d}");
        }
        let ins: Vec<u64> = conv.operand_types;
        let outs: Vec<u64> = op.results.iter().map(|(_, t)| *t).collect();
        let outs = if outs.len() == 1 {
            self.ty(outs[0])?
        } else {
            format!("({})", self.types(&outs)?)
        };
        let _ = writeln!(self.out, " : ({}) -> {outs}", self.types(&ins)?);
        Ok(())
    }

    /// `main` with the calling convention's arguments (see [`super::MainAdapter`]).
    fn adapted_main(
        &mut self,
        op: &Op<'_>,
        mut conv: vhlo::Converted,
        a: &super::MainAdapter,
        depth: usize,
    ) -> Result<(), BytecodeError> {
        self.adapted = true;
        let [region] = op.regions.as_slice() else {
            return Err(unsupported("main without its one region"));
        };
        let Some(block) = region.blocks.first() else {
            return Err(unsupported("main without a body"));
        };
        let (args, prelude) = self.adapt_main(a, &block.args)?;
        let results = self.main_results(op)?;
        let ins: Vec<&str> = args.iter().map(|(_, t)| t.as_str()).collect();
        // Argument attributes (shardings, memory kinds) follow their arguments: a kept input
        // keeps its argument's, an input the module dropped and the platform index have none.
        let arg_attrs = self.adapted_arg_attrs(op, a)?;
        conv.props
            .retain(|(k, _)| k != "arg_attrs" && k != "function_type");
        if let Some(arg_attrs) = arg_attrs {
            conv.props.push(("arg_attrs".into(), arg_attrs));
        }
        conv.props.push((
            "function_type".into(),
            format!("({}) -> ({results})", ins.join(", ")),
        ));
        let p: Vec<String> = conv
            .props
            .iter()
            .map(|(k, v)| format!("{} = {v}", key(k.as_bytes())))
            .collect();
        let _ = writeln!(self.out, "\"func.func\"() <{{{}}}> ({{", p.join(", "));
        self.indent(depth);
        let a: Vec<String> = args.iter().map(|(v, t)| format!("%{v}: {t}")).collect();
        let _ = writeln!(self.out, "^bb0({}):", a.join(", "));
        if let Some(pre) = prelude {
            self.indent(depth + 1);
            self.out.push_str(&pre);
        }
        for o in &block.ops {
            self.op(o, Parent::Func, depth + 1)?;
        }
        self.indent(depth);
        self.out.push_str("}) : () -> ()\n");
        Ok(())
    }

    /// `main`'s arguments reshaped by the adapter: (value, type) per input, and the constant
    /// that replaces the platform-index argument.
    fn adapt_main(
        &mut self,
        a: &super::MainAdapter,
        args: &[(Value, u64)],
    ) -> Result<MainArgs, BytecodeError> {
        let skip = usize::from(a.platform_index.is_some());
        let kept = a.inputs.iter().filter(|(k, _)| k.is_some()).count();
        if args.len() != skip + kept {
            return Err(unsupported(format!(
                "main takes {} arguments; the calling convention gives {} ({} kept inputs{})",
                args.len(),
                skip + kept,
                kept,
                if skip == 1 {
                    " after the platform index"
                } else {
                    ""
                }
            )));
        }
        let prelude = match a.platform_index {
            Some(i) => {
                let (v, t) = args[0];
                let ty = self.ty(t)?;
                if ty != "tensor<i32>" {
                    return Err(unsupported(format!(
                        "main's platform-index argument is {ty}, not tensor<i32>"
                    )));
                }
                Some(format!(
                    "%{v} = \"stablehlo.constant\"() <{{value = dense<{i}> : tensor<i32>}}> : () -> tensor<i32>\n"
                ))
            }
            None => None,
        };
        let mut out = Vec::new();
        for (i, (k, want)) in a.inputs.iter().enumerate() {
            match k {
                Some(k) => {
                    let (v, t) = *args
                        .get(skip + k)
                        .ok_or_else(|| unsupported(format!("input {i} has no argument of main")))?;
                    let got = self.ty(t)?;
                    if &got != want {
                        return Err(unsupported(format!(
                            "in_avals[{i}] is {want} but main's argument is {got}"
                        )));
                    }
                    out.push((v, got));
                }
                None => {
                    let v = self.fresh;
                    self.fresh = self
                        .fresh
                        .checked_add(1)
                        .ok_or_else(|| unsupported("too many values"))?;
                    out.push((v, want.clone()));
                }
            }
        }
        Ok((out, prelude))
    }

    /// `main`'s `arg_attrs` for the adapted arguments (one dictionary per calling-convention
    /// input), or `None` when main has none.
    fn adapted_arg_attrs(
        &self,
        op: &Op<'_>,
        a: &super::MainAdapter,
    ) -> Result<Option<String>, BytecodeError> {
        let (inherent, _) = vhlo::op_attrs(self.t, op)?;
        let Some(&(_, list)) = inherent.iter().find(|(k, _)| k == "arg_attrs") else {
            return Ok(None);
        };
        let Attr::Array(dicts) = &*self.t.attr(list)? else {
            return Err(unsupported("main's arg_attrs is not an array"));
        };
        let skip = usize::from(a.platform_index.is_some());
        let mut out = Vec::with_capacity(a.inputs.len());
        for (k, _) in &a.inputs {
            out.push(match k.and_then(|k| dicts.get(skip + k)) {
                Some(&d) => self.attr(d)?,
                None => "{}".to_owned(),
            });
        }
        Ok(Some(format!("[{}]", out.join(", "))))
    }

    /// `main`'s result types, from its `function_type`.
    fn main_results(&self, op: &Op<'_>) -> Result<String, BytecodeError> {
        let (inherent, _) = vhlo::op_attrs(self.t, op)?;
        let ft = inherent
            .iter()
            .find(|(k, _)| k == "function_type")
            .ok_or_else(|| unsupported("main without a function_type"))?
            .1;
        let t = match &*self.t.attr(ft)? {
            Attr::Type(t) => *t,
            _ => return Err(unsupported("main's function_type is not a type")),
        };
        match &*self.t.ty(t)? {
            Type::Function(_, o) => self.types(o),
            _ => Err(unsupported("main's function_type is not a function type")),
        }
    }

    fn region(
        &mut self,
        r: &Region<'_>,
        parent: Parent,
        depth: usize,
    ) -> Result<(), BytecodeError> {
        self.out.push_str("{\n");
        match r.blocks.as_slice() {
            [] => {}
            [b] => self.block(b, parent, depth + 1)?,
            _ => {
                return Err(unsupported(
                    "regions of more than one block are not supported",
                ))
            }
        }
        self.indent(depth);
        self.out.push('}');
        Ok(())
    }

    fn block(&mut self, b: &Block<'_>, parent: Parent, depth: usize) -> Result<(), BytecodeError> {
        if !b.args.is_empty() {
            self.indent(depth - 1);
            let args: Vec<String> = b
                .args
                .iter()
                .map(|(v, t)| Ok(format!("%{v}: {}", self.ty(*t)?)))
                .collect::<Result<_, BytecodeError>>()?;
            let _ = writeln!(self.out, "^bb0({}):", args.join(", "));
        }
        for op in &b.ops {
            self.op(op, parent, depth)?;
        }
        Ok(())
    }
}

fn list(v: &[i64]) -> String {
    let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", s.join(", "))
}

/// Row-major `elems` nested as `shape` (`[[1, 2], [3, 4]]`; a scalar bare).
fn nest(s: &mut String, shape: &[i64], elems: &[String]) {
    match shape {
        [] => s.push_str(&elems[0]),
        [_] => {
            s.push('[');
            s.push_str(&elems.join(", "));
            s.push(']');
        }
        [d, rest @ ..] => {
            let d = (*d).max(1) as usize;
            let chunk = elems.len() / d;
            s.push('[');
            for (i, c) in elems.chunks(chunk.max(1)).enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                nest(s, rest, c);
            }
            s.push(']');
        }
    }
}

/// A VHLO enum case's name.
pub(super) fn enum_case(k: EnumKind, v: u64) -> Result<&'static str, BytecodeError> {
    let names: &[&str] = match k {
        EnumKind::ComparisonDirection => &["EQ", "NE", "GE", "GT", "LE", "LT"],
        EnumKind::ComparisonType => &["NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"],
        EnumKind::CustomCallApiVersion => &[
            "API_VERSION_UNSPECIFIED",
            "API_VERSION_ORIGINAL",
            "API_VERSION_STATUS_RETURNING",
            "API_VERSION_STATUS_RETURNING_UNIFIED",
            "API_VERSION_TYPED_FFI",
        ],
        EnumKind::FftType => &["FFT", "IFFT", "RFFT", "IRFFT"],
        EnumKind::Precision => &["DEFAULT", "HIGH", "HIGHEST"],
        EnumKind::RngAlgorithm => &["DEFAULT", "THREE_FRY", "PHILOX"],
        EnumKind::RngDistribution => &["", "UNIFORM", "NORMAL"],
        EnumKind::Transpose => &["TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"],
        EnumKind::ResultAccuracyMode => &["DEFAULT", "HIGHEST", "TOLERANCE"],
    };
    names
        .get(v as usize)
        .copied()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| unsupported(format!("{k:?} value {v} is not a known case")))
}

/// A VHLO enum attribute as StableHLO prints it.
fn enum_text(k: EnumKind, v: u64) -> Result<String, BytecodeError> {
    let case = enum_case(k, v)?;
    let kind = match k {
        EnumKind::ComparisonDirection => "comparison_direction",
        EnumKind::ComparisonType => "comparison_type",
        // StableHLO keeps the API version as a plain 32-bit integer attribute.
        EnumKind::CustomCallApiVersion => return Ok(format!("{v} : i32")),
        EnumKind::FftType => "fft_type",
        EnumKind::Precision => "precision",
        EnumKind::RngAlgorithm => "rng_algorithm",
        EnumKind::RngDistribution => "rng_distribution",
        EnumKind::Transpose => "transpose",
        EnumKind::ResultAccuracyMode => {
            return Ok(format!("#stablehlo.result_accuracy_mode<{case}>"))
        }
    };
    Ok(format!("#stablehlo<{kind} {case}>"))
}
