//! VHLO ops to StableHLO ops, as StableHLO's `VhloLegalizeToStablehlo.cpp` converts them: every
//! versioned op (`vhlo.add_v1`, `vhlo.custom_call_v2`, ...) becomes its StableHLO op (`func_v1`,
//! `call_v1` and a function's `return_v1` become `func.*`), attributes that hold their default
//! are dropped, the dimension attributes VHLO keeps apart are gathered into StableHLO's
//! structured attributes (`#stablehlo.dot<...>`, `#stablehlo.gather<...>`, the convolution's
//! `[b, 0, 1, f]x...` labels), integer lists become `array<i64: ...>` where StableHLO keeps them
//! so, and symbol names become `@refs`. Older op versions lack attributes later versions added;
//! a missing attribute reads as its default, as VHLO's upgrade passes fill it in.

use std::collections::HashSet;

use super::attrs::{Attr, EnumKind, Table, Type};
use super::container::Op;
use super::print::{key, Parent, Printer};
use super::vhlo_ops::VHLO_OPS;
use super::BytecodeError;

/// How an op is printed.
pub(super) struct Converted {
    pub name: String,
    /// Inherent attributes, printed.
    pub props: Vec<(String, String)>,
    /// Discardable attributes (attribute indices).
    pub attrs: Vec<(String, u64)>,
    /// The operands' types, from their definitions.
    pub operand_types: Vec<u64>,
    /// The whole op when it prints in a pretty form (a module-level `sdy.mesh`).
    pub pretty: Option<String>,
}

fn unsupported(m: impl Into<String>) -> BytecodeError {
    BytecodeError::Unsupported(m.into())
}

/// The VHLO op table entry of a mnemonic (`add_v1`).
pub(super) fn vhlo_op(
    mnemonic: &str,
) -> Option<&'static (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
)> {
    VHLO_OPS.iter().find(|o| o.0 == mnemonic)
}

/// `add` of `add_v1`.
fn base_name(mnemonic: &str) -> &str {
    match mnemonic.rfind("_v") {
        Some(i)
            if mnemonic[i + 2..].chars().all(|c| c.is_ascii_digit()) && i + 2 < mnemonic.len() =>
        {
            &mnemonic[..i]
        }
        _ => mnemonic,
    }
}

/// Properties of the non-VHLO ops a portable artifact holds: (name, optional).
fn known_properties(name: &str) -> Option<&'static [(&'static str, bool)]> {
    Some(match name {
        "builtin.module" => &[("sym_name", true), ("sym_visibility", true)],
        "sdy.mesh" => &[("mesh", false), ("sym_name", false)],
        // `with_sharding_constraint` under Shardy (its one property, a tensor sharding).
        "sdy.sharding_constraint" => &[("sharding", false)],
        _ => return None,
    })
}

/// An op's (inherent, discardable) attributes, as attribute indices.
pub(super) type OpAttrs = (Vec<(String, u64)>, Vec<(String, u64)>);

pub(super) fn op_attrs(t: &Table<'_, '_>, op: &Op<'_>) -> Result<OpAttrs, BytecodeError> {
    let bc = t.bc;
    let full = bc.op_name(op);
    let opname = &bc.op_names[op.name];
    let dialect = bc.dialects[opname.dialect].as_str();
    let mut discardable = Vec::new();
    if let Some(d) = op.attrs {
        match &*t.attr(d)? {
            Attr::Dict(pairs) => {
                for (k, v) in pairs {
                    discardable.push((String::from_utf8_lossy(&t.attr_str(*k)?).into_owned(), *v));
                }
            }
            _ => {
                return Err(unsupported(format!(
                    "{full}: its attribute dictionary is not a dictionary"
                )))
            }
        }
    }
    let vhlo_names: Option<&[&str]> = if dialect == "vhlo" {
        Some(vhlo_op(&opname.name).map(|o| o.3).ok_or_else(|| {
            unsupported(format!(
                "{full} is not a VHLO op this reader knows (VHLO ops up to version 1.20)"
            ))
        })?)
    } else {
        None
    };
    let mut inherent = Vec::new();
    if let Some(mut blob) = op.props {
        if opname.registered == Some(false) {
            let i = blob.varint()?;
            match &*t.attr(i)? {
                Attr::Dict(pairs) => {
                    for (k, v) in pairs {
                        inherent.push((String::from_utf8_lossy(&t.attr_str(*k)?).into_owned(), *v));
                    }
                }
                _ => {
                    return Err(unsupported(format!(
                        "{full}: its properties are not a dictionary"
                    )))
                }
            }
        } else if let Some(names) = vhlo_names {
            for n in names {
                let at = blob;
                let i = blob.varint()?;
                if i >= bc.attrs.len() as u64 {
                    return Err(at.error(format!("{full}: attribute index {i} out of range")));
                }
                inherent.push(((*n).to_string(), i));
            }
        } else if let Some(props) = known_properties(&full) {
            for (n, optional) in props {
                let at = blob;
                let (i, present) = if *optional {
                    blob.varint_flag()?
                } else {
                    (blob.varint()?, true)
                };
                if i >= bc.attrs.len() as u64 {
                    return Err(at.error(format!("{full}: attribute index {i} out of range")));
                }
                if present {
                    inherent.push(((*n).to_string(), i));
                }
            }
        } else {
            return Err(unsupported(format!(
                "{full}: this reader does not know how its properties are encoded"
            )));
        }
        if !blob.is_empty() {
            return Err(blob.error(format!("{full}: bytes left after its properties")));
        }
    } else {
        // Before properties (VHLO before 0.15.0) inherent attributes sit in the dictionary.
        let names: Vec<&str> = match vhlo_names {
            Some(n) => n.to_vec(),
            None => known_properties(&full)
                .map(|p| p.iter().map(|x| x.0).collect())
                .unwrap_or_default(),
        };
        let (inh, dis): (Vec<_>, Vec<_>) = discardable
            .into_iter()
            .partition(|(k, _)| names.contains(&k.as_str()));
        inherent = inh;
        discardable = dis;
    }
    Ok((inherent, discardable))
}

/// The converted form of `op`.
pub(super) fn convert(
    p: &Printer<'_, '_, '_>,
    op: &Op<'_>,
    parent: Parent,
) -> Result<Converted, BytecodeError> {
    let t = p.t;
    let bc = t.bc;
    let full = bc.op_name(op);
    let opname = &bc.op_names[op.name];
    let dialect = bc.dialects[opname.dialect].as_str();
    let (inherent, attrs) = op_attrs(t, op)?;
    let operand_types = op
        .operands
        .iter()
        .map(|v| p.value_type(*v))
        .collect::<Result<_, _>>()?;
    if dialect != "vhlo" {
        if full == "sdy.mesh" && parent == Parent::Module {
            let get = |n: &str| inherent.iter().find(|(k, _)| k == n).map(|x| x.1);
            let (Some(name), Some(mesh)) = (get("sym_name"), get("mesh")) else {
                return Err(unsupported("sdy.mesh without its name or mesh"));
            };
            let mesh = p.attr(mesh)?;
            let body = mesh.strip_prefix("#sdy.mesh").unwrap_or(&mesh);
            let pretty = format!("sdy.mesh @{} = {body}", key(&t.attr_str(name)?));
            return Ok(Converted {
                name: full,
                props: Vec::new(),
                attrs,
                operand_types,
                pretty: Some(pretty),
            });
        }
        let props = inherent
            .iter()
            .map(|(k, v)| Ok((k.clone(), p.attr(*v)?)))
            .collect::<Result<_, BytecodeError>>()?;
        return Ok(Converted {
            name: full,
            props,
            attrs,
            operand_types,
            pretty: None,
        });
    }
    let base = base_name(&opname.name);
    let name = match base {
        "func" => "func.func".to_string(),
        "call" => "func.call".to_string(),
        "return" if parent == Parent::Func => "func.return".to_string(),
        b => format!("stablehlo.{b}"),
    };
    let props = Props {
        p,
        op: &full,
        list: inherent,
    }
    .convert(base)?;
    Ok(Converted {
        name,
        props,
        attrs,
        operand_types,
        pretty: None,
    })
}

struct Props<'p, 't, 'b, 'a> {
    p: &'p Printer<'t, 'b, 'a>,
    op: &'p str,
    list: Vec<(String, u64)>,
}

/// Ops whose integer-list attributes StableHLO keeps as `array<i64: ...>`.
const DENSE_I64: &[(&str, &[&str])] = &[
    ("fft", &["fft_length"]),
    ("broadcast", &["broadcast_sizes"]),
    ("dynamic_slice", &["slice_sizes"]),
    ("reverse", &["dimensions"]),
    ("transpose", &["permutation"]),
    (
        "pad",
        &["edge_padding_low", "edge_padding_high", "interior_padding"],
    ),
    ("slice", &["start_indices", "limit_indices", "strides"]),
    ("broadcast_in_dim", &["broadcast_dimensions"]),
    (
        "dynamic_broadcast_in_dim",
        &[
            "broadcast_dimensions",
            "known_expanding_dimensions",
            "known_nonexpanding_dimensions",
        ],
    ),
    (
        "select_and_scatter",
        &["window_dimensions", "window_strides"],
    ),
    (
        "reduce_window",
        &[
            "window_dimensions",
            "window_strides",
            "base_dilations",
            "window_dilations",
        ],
    ),
    ("map", &["dimensions"]),
    ("reduce", &["dimensions"]),
    ("gather", &["slice_sizes"]),
    (
        "convolution",
        &["lhs_dilation", "rhs_dilation", "window_strides"],
    ),
    (
        "dynamic_conv",
        &["lhs_dilation", "rhs_dilation", "window_strides"],
    ),
];

impl Props<'_, '_, '_, '_> {
    fn t(&self) -> &Table<'_, '_> {
        self.p.t
    }

    fn get(&self, n: &str) -> Option<u64> {
        self.list.iter().find(|(k, _)| k == n).map(|x| x.1)
    }

    fn take(&mut self, n: &str) -> Option<u64> {
        let i = self.list.iter().position(|(k, _)| k == n)?;
        Some(self.list.remove(i).1)
    }

    fn drop_if(&mut self, n: &str, pred: impl Fn(&Attr) -> bool) -> Result<(), BytecodeError> {
        if let Some(i) = self.get(n) {
            let a = self.t().attr(i)?;
            if pred(&a) {
                self.take(n);
            }
        }
        Ok(())
    }

    fn bad(&self, what: &str) -> BytecodeError {
        unsupported(format!("{}: {what}", self.op))
    }

    /// An integer attribute's value.
    fn int(&self, i: u64) -> Result<i64, BytecodeError> {
        match &*self.t().attr(i)? {
            Attr::Int { ty, bits } => {
                let w = self.t().ty(*ty)?.bits().unwrap_or(64);
                let shift = 128 - w.min(128);
                Ok((((*bits << shift) as i128) >> shift) as i64)
            }
            _ => Err(self.bad("expected an integer attribute")),
        }
    }

    /// The elements of an integer tensor attribute (a splat expanded).
    fn ints(&self, i: u64) -> Result<Vec<i64>, BytecodeError> {
        let a = self.t().attr(i)?;
        let Attr::Tensor { ty, data } = &*a else {
            return Err(self.bad("expected an integer tensor attribute"));
        };
        let t = self.t().ty(*ty)?;
        let Type::Tensor { shape, elem, .. } = &*t else {
            return Err(self.bad("expected a tensor type"));
        };
        let width = self
            .t()
            .ty(*elem)?
            .bits()
            .ok_or_else(|| self.bad("expected integer elements"))?;
        let bytes = width.div_ceil(8) as usize;
        let n: usize = shape
            .iter()
            .map(|d| usize::try_from(*d).unwrap_or(0))
            .product();
        if data.len() % bytes != 0 || n > 1 << 20 {
            return Err(self.bad("malformed integer tensor attribute"));
        }
        let shift = 128 - width;
        let vals: Vec<i64> = data
            .chunks(bytes)
            .map(|c| {
                let mut w = [0u8; 16];
                w[..bytes].copy_from_slice(c);
                (((u128::from_le_bytes(w) << shift) as i128) >> shift) as i64
            })
            .collect();
        Ok(if vals.len() == 1 && n != 1 {
            vec![vals[0]; n]
        } else {
            vals
        })
    }

    fn ints_or_empty(&self, n: &str) -> Result<Vec<i64>, BytecodeError> {
        self.get(n).map_or(Ok(Vec::new()), |i| self.ints(i))
    }

    fn splat(&self, n: &str, v: i64) -> Result<bool, BytecodeError> {
        Ok(match self.get(n) {
            Some(i) => self.ints(i)?.iter().all(|x| *x == v),
            None => false,
        })
    }

    fn convert(mut self, base: &str) -> Result<Vec<(String, String)>, BytecodeError> {
        self.remove_defaults(base)?;
        let mut out = self.implode(base)?;
        let dense: &[&str] = DENSE_I64
            .iter()
            .find(|(b, _)| *b == base)
            .map_or(&[], |x| x.1);
        for (n, i) in std::mem::take(&mut self.list) {
            let text = match (base, n.as_str()) {
                (_, "channel_id") => format!(
                    "#stablehlo.channel_handle<handle = {}, type = 0>",
                    self.int(i)?
                ),
                (_, "use_global_device_ids" | "has_dynamic_root") => match &*self.t().attr(i)? {
                    Attr::Bool(true) => "unit".into(),
                    _ => continue,
                },
                ("custom_call", "called_computations") => {
                    let Attr::Array(v) = &*self.t().attr(i)? else {
                        return Err(self.bad("called_computations is not a list"));
                    };
                    let refs: Vec<String> = v
                        .iter()
                        .map(|s| Ok(format!("@{}", key(&self.t().attr_str(*s)?))))
                        .collect::<Result<_, BytecodeError>>()?;
                    format!("[{}]", refs.join(", "))
                }
                ("composite", "decomposition") | ("call", "callee") => {
                    format!("@{}", key(&self.t().attr_str(i)?))
                }
                ("convolution" | "dynamic_conv", "window_reversal") => {
                    let v: Vec<&str> = self
                        .ints(i)?
                        .iter()
                        .map(|x| if *x != 0 { "true" } else { "false" })
                        .collect();
                    if v.is_empty() {
                        "array<i1>".into()
                    } else {
                        format!("array<i1: {}>", v.join(", "))
                    }
                }
                (_, n) if dense.contains(&n) => {
                    let v: Vec<String> = self.ints(i)?.iter().map(|x| x.to_string()).collect();
                    if v.is_empty() {
                        "array<i64>".into()
                    } else {
                        format!("array<i64: {}>", v.join(", "))
                    }
                }
                _ => self.p.attr(i)?,
            };
            out.push((n, text));
        }
        Ok(out)
    }

    fn remove_defaults(&mut self, base: &str) -> Result<(), BytecodeError> {
        let t = self.p.t;
        let empty_array = |a: &Attr| matches!(a, Attr::Array(v) if v.is_empty());
        let empty_str = |a: &Attr| matches!(a, Attr::Str(s) if s.is_empty());
        let empty_dict = |a: &Attr| matches!(a, Attr::Dict(v) if v.is_empty());
        let is_false = |a: &Attr| matches!(a, Attr::Bool(false));
        let empty_tensor = |a: &Attr| matches!(a, Attr::Tensor { data, .. } if data.is_empty());
        let int_is = |v: u128| move |a: &Attr| matches!(a, Attr::Int { bits, .. } if *bits == v);
        let all_default_precision = |a: &Attr| match a {
            Attr::Array(v) => v.iter().all(|p| {
                t.attr(*p)
                    .is_ok_and(|x| matches!(&*x, Attr::Enum(EnumKind::Precision, 0)))
            }),
            _ => false,
        };
        match base {
            "func" => {
                self.drop_if("sym_visibility", empty_str)?;
                self.drop_if("arg_attrs", empty_array)?;
                self.drop_if("res_attrs", empty_array)?;
            }
            "all_gather"
            | "all_reduce"
            | "reduce_scatter"
            | "all_to_all"
            | "collective_permute"
            | "collective_broadcast"
            | "collective_reduce" => {
                self.drop_if("channel_id", int_is(0))?;
                self.drop_if("use_global_device_ids", is_false)?;
                self.drop_if("has_dynamic_root", is_false)?;
            }
            "cholesky" => self.drop_if("lower", is_false)?,
            "compare" => self.drop_if("compare_type", |a| {
                matches!(a, Attr::Enum(EnumKind::ComparisonType, 0))
            })?,
            "composite" => {
                self.drop_if("version", int_is(0))?;
                self.drop_if("composite_attributes", empty_dict)?;
            }
            "convolution" | "dynamic_conv" => {
                for (n, v) in [
                    ("window_strides", 1),
                    ("padding", 0),
                    ("lhs_dilation", 1),
                    ("rhs_dilation", 1),
                    ("window_reversal", 0),
                ] {
                    if (n != "padding" || base == "convolution") && self.splat(n, v)? {
                        self.take(n);
                    }
                }
                self.drop_if("precision_config", all_default_precision)?;
            }
            "custom_call" => {
                self.drop_if("has_side_effect", is_false)?;
                self.drop_if("backend_config", |a| empty_str(a) || empty_dict(a))?;
                self.drop_if("api_version", |a| {
                    matches!(a, Attr::Enum(EnumKind::CustomCallApiVersion, 1))
                })?;
                self.drop_if("called_computations", empty_array)?;
                let layouts_empty = ["operand_layouts", "result_layouts"].iter().all(|n| {
                    self.get(n)
                        .is_none_or(|i| t.attr(i).is_ok_and(|a| empty_array(&a)))
                });
                if layouts_empty {
                    self.take("operand_layouts");
                    self.take("result_layouts");
                }
                self.drop_if("output_operand_aliases", empty_array)?;
                self.drop_if("result_tilings", empty_array)?;
            }
            "dot_general" | "dot" => self.drop_if("precision_config", all_default_precision)?,
            "dynamic_broadcast_in_dim" => {
                self.drop_if("known_expanding_dimensions", empty_tensor)?;
                self.drop_if("known_nonexpanding_dimensions", empty_tensor)?;
            }
            "gather" | "dynamic_gather" => self.drop_if("indices_are_sorted", is_false)?,
            "infeed" => {
                self.drop_if("infeed_config", empty_str)?;
                self.drop_if("layout", empty_array)?;
            }
            "outfeed" => self.drop_if("outfeed_config", empty_str)?,
            "recv" | "send" => {
                self.drop_if("is_host_transfer", is_false)?;
                self.drop_if("source_target_pairs", empty_tensor)?;
            }
            "reduce_window" | "select_and_scatter" => {
                for (n, v) in [
                    ("window_strides", 1),
                    ("base_dilations", 1),
                    ("window_dilations", 1),
                    ("padding", 0),
                ] {
                    if self.splat(n, v)? {
                        self.take(n);
                    }
                }
            }
            "scatter" => {
                self.drop_if("indices_are_sorted", is_false)?;
                self.drop_if("unique_indices", is_false)?;
            }
            "sort" => {
                self.drop_if("dimension", int_is(u128::from(u64::MAX)))?;
                self.drop_if("is_stable", is_false)?;
            }
            _ => {}
        }
        self.drop_if("result_accuracy", |a| {
            matches!(a, Attr::ResultAccuracy { atol: 0, rtol: 0, ulps: 0, mode }
                if t.attr(*mode).is_ok_and(|m| matches!(&*m, Attr::Enum(EnumKind::ResultAccuracyMode, 0))))
        })
    }

    fn list_field(out: &mut Vec<String>, name: &str, v: &[i64]) {
        if !v.is_empty() {
            let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            out.push(format!("{name} = [{}]", s.join(", ")));
        }
    }

    /// The structured attributes StableHLO keeps whole and VHLO keeps apart.
    fn implode(&mut self, base: &str) -> Result<Vec<(String, String)>, BytecodeError> {
        let mut out = Vec::new();
        match base {
            "convolution" | "dynamic_conv" => {
                out.push(("dimension_numbers".into(), self.conv_dims()?))
            }
            "dot_general" => {
                let mut f = Vec::new();
                for n in [
                    "lhs_batching_dimensions",
                    "rhs_batching_dimensions",
                    "lhs_contracting_dimensions",
                    "rhs_contracting_dimensions",
                ] {
                    let v = self.ints_or_empty(n)?;
                    self.take(n);
                    Self::list_field(&mut f, n, &v);
                }
                out.push((
                    "dot_dimension_numbers".into(),
                    format!("#stablehlo.dot<{}>", f.join(", ")),
                ));
                if let Some(a) = self.dot_algorithm()? {
                    out.push(("algorithm".into(), a));
                }
            }
            "gather" | "dynamic_gather" | "scatter" => {
                let (attr, fields): (&str, &[&str]) = if base == "scatter" {
                    (
                        "scatter",
                        &[
                            "update_window_dims",
                            "inserted_window_dims",
                            "input_batching_dims",
                            "scatter_indices_batching_dims",
                            "scatter_dims_to_operand_dims",
                        ],
                    )
                } else {
                    (
                        "gather",
                        &[
                            "offset_dims",
                            "collapsed_slice_dims",
                            "operand_batching_dims",
                            "start_indices_batching_dims",
                            "start_index_map",
                        ],
                    )
                };
                let mut f = Vec::new();
                for n in fields {
                    let v = self.ints_or_empty(n)?;
                    self.take(n);
                    Self::list_field(&mut f, n, &v);
                }
                let ivd = self
                    .take("index_vector_dim")
                    .ok_or_else(|| self.bad("index_vector_dim is missing"))?;
                f.push(format!("index_vector_dim = {}", self.int(ivd)?));
                let name = if base == "scatter" {
                    "scatter_dimension_numbers"
                } else {
                    "dimension_numbers"
                };
                out.push((name.into(), format!("#stablehlo.{attr}<{}>", f.join(", "))));
            }
            "recv" | "send" => {
                let id = self
                    .take("channel_id")
                    .ok_or_else(|| self.bad("channel_id is missing"))?;
                let ty = self
                    .take("channel_type")
                    .ok_or_else(|| self.bad("channel_type is missing"))?;
                out.push((
                    "channel_handle".into(),
                    format!(
                        "#stablehlo.channel_handle<handle = {}, type = {}>",
                        self.int(id)?,
                        self.int(ty)?
                    ),
                ));
            }
            _ => {}
        }
        Ok(out)
    }

    fn conv_dims(&mut self) -> Result<String, BytecodeError> {
        let mut one = |n: &str| -> Result<i64, BytecodeError> {
            let i = self
                .take(n)
                .ok_or_else(|| self.bad(&format!("{n} is missing")))?;
            self.int(i)
        };
        let ib = one("input_batch_dimension")?;
        let if_ = one("input_feature_dimension")?;
        let ki = one("kernel_input_feature_dimension")?;
        let ko = one("kernel_output_feature_dimension")?;
        let ob = one("output_batch_dimension")?;
        let of = one("output_feature_dimension")?;
        let mut many = |n: &str| -> Result<Vec<i64>, BytecodeError> {
            let v = self.ints_or_empty(n)?;
            self.take(n);
            Ok(v)
        };
        let is = many("input_spatial_dimensions")?;
        let ks = many("kernel_spatial_dimensions")?;
        let os = many("output_spatial_dimensions")?;
        let labels = |a: (i64, &str), b: (i64, &str), spatial: &[i64]| -> Option<String> {
            let rank = spatial.len() + 2;
            let mut v: Vec<Option<String>> = vec![None; rank];
            let mut seen = HashSet::new();
            for (pos, label) in [(a.0, a.1.to_string()), (b.0, b.1.to_string())]
                .into_iter()
                .chain(spatial.iter().enumerate().map(|(i, d)| (*d, i.to_string())))
            {
                let p = usize::try_from(pos).ok().filter(|p| *p < rank)?;
                if !seen.insert(p) {
                    return None;
                }
                v[p] = Some(label);
            }
            let v: Vec<String> = v.into_iter().collect::<Option<_>>()?;
            Some(format!("[{}]", v.join(", ")))
        };
        let bad = || self.bad("convolution dimension numbers are out of range or repeat");
        let input = labels((ib, "b"), (if_, "f"), &is).ok_or_else(bad)?;
        let kernel = labels((ki, "i"), (ko, "o"), &ks).ok_or_else(bad)?;
        let output = labels((ob, "b"), (of, "f"), &os).ok_or_else(bad)?;
        Ok(format!("#stablehlo.conv<{input}x{kernel}->{output}>"))
    }

    fn dot_algorithm(&mut self) -> Result<Option<String>, BytecodeError> {
        const FIELDS: [&str; 7] = [
            "lhs_precision_type",
            "rhs_precision_type",
            "accumulation_type",
            "lhs_component_count",
            "rhs_component_count",
            "num_primitive_operations",
            "allow_imprecise_accumulation",
        ];
        let taken: Vec<Option<u64>> = FIELDS.iter().map(|n| self.take(n)).collect();
        let Some(first) = taken[0] else {
            return Ok(None);
        };
        let none = |i: u64| -> Result<bool, BytecodeError> {
            Ok(match &*self.t().attr(i)? {
                Attr::Type(t) => matches!(&*self.t().ty(*t)?, Type::None),
                _ => false,
            })
        };
        if none(first)? {
            return Ok(None);
        }
        let mut f = Vec::new();
        for (n, i) in FIELDS.iter().zip(taken) {
            let i = i.ok_or_else(|| self.bad(&format!("{n} is missing")))?;
            f.push(format!("{n} = {}", self.p.attr(i)?));
        }
        Ok(Some(format!("#stablehlo.dot_algorithm<{}>", f.join(", "))))
    }
}
