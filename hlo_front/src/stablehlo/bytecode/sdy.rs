//! Shardy's attributes in bytecode (`shardy/dialect/sdy/ir/bytecode.td`, at openxla/shardy
//! a0277a83): meshes and tensor shardings decoded and printed in Shardy's text syntax, which the
//! text front end reads (`#sdy.sharding<@mesh, [{"x"}, {}]>`, docs/sharding.md). A serialized
//! `Exported` for several devices keeps its partitioning in them: dropped, every input would run
//! whole on every device. Sharding rules (`sdy.sharding_rule`) and the other Shardy attributes
//! guide propagation only; they stay undecoded ([`SdyAttr::Other`]) and are dropped where they
//! annotate an op.
use std::fmt::Write;

use super::attrs::{Attr, Table};
use super::encoding::Reader;
use super::print::{quote, Printer};
use super::BytecodeError;

/// A decoded Shardy attribute (the dialect's attribute codes in brackets).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum SdyAttr {
    /// [1] A mesh axis: name and size.
    MeshAxis { name: Vec<u8>, size: i64 },
    /// [2] A mesh: its axes (attribute indices) and device order.
    Mesh {
        axes: Vec<u64>,
        device_ids: Vec<i64>,
    },
    /// [3] A sub-axis: the product of the axis sizes before it, and its size.
    SubAxis { pre_size: i64, size: i64 },
    /// [4] An axis reference, with its sub-axis (an attribute index).
    AxisRef {
        name: Vec<u8>,
        sub_axis: Option<u64>,
    },
    /// [5] One dimension's sharding: its axes, closed or open, and a priority.
    Dimension {
        axes: Vec<u64>,
        closed: bool,
        priority: Option<u64>,
    },
    /// [6, 15] A tensor's sharding: the mesh (a symbol or an inline mesh), per dimension, the
    /// replicated and the unreduced axes.
    Tensor {
        mesh: u64,
        dims: Vec<u64>,
        replicated: Vec<u64>,
        unreduced: Vec<u64>,
    },
    /// [7, 16] One sharding per result of an op.
    PerValue(Vec<u64>),
    /// Any other Shardy attribute (sharding rules, manual axes, ...): not decoded.
    Other(u64),
}

impl<'b, 'a> Table<'b, 'a> {
    /// Decodes a Shardy attribute of dialect code `code`.
    pub(super) fn sdy_attr(&self, code: u64, r: &mut Reader<'_>) -> Result<Attr, BytecodeError> {
        let tensor = |r: &mut Reader<'_>, unreduced: bool| -> Result<SdyAttr, BytecodeError> {
            Ok(SdyAttr::Tensor {
                mesh: self.attr_ref(r)?,
                dims: self.attr_list(r)?,
                replicated: self.attr_list(r)?,
                unreduced: if unreduced {
                    self.attr_list(r)?
                } else {
                    Vec::new()
                },
            })
        };
        let a = match code {
            1 => SdyAttr::MeshAxis {
                name: self.string(r)?,
                size: r.svarint()?,
            },
            2 => SdyAttr::Mesh {
                axes: self.attr_list(r)?,
                device_ids: r.svarints("device id")?,
            },
            3 => SdyAttr::SubAxis {
                pre_size: r.svarint()?,
                size: r.svarint()?,
            },
            4 => SdyAttr::AxisRef {
                name: self.string(r)?,
                sub_axis: self.optional_attr_ref(r)?,
            },
            5 => SdyAttr::Dimension {
                axes: self.attr_list(r)?,
                // `Bool`: one byte (MLIR's `writeOwnedBool`), not a varint.
                closed: r.byte()? != 0,
                priority: {
                    // MLIR's varint with flag: the low bit says whether a value follows.
                    let v = r.varint()?;
                    (v & 1 == 1).then_some(v >> 1)
                },
            },
            6 => tensor(r, false)?,
            15 => tensor(r, true)?,
            7 | 16 => SdyAttr::PerValue(self.attr_list(r)?),
            // 17: a sharding with unreduced axes and a reduction other than a sum.
            17 => {
                let _ = r.bytes(r.remaining() as u64)?;
                return Ok(Attr::Unsupported(
                    "a Shardy sharding with unreduced axes reduced by other than a sum".into(),
                ));
            }
            other => {
                let _ = r.bytes(r.remaining() as u64)?;
                SdyAttr::Other(other)
            }
        };
        Ok(Attr::Sdy(a))
    }
}

impl Printer<'_, '_, '_> {
    /// The text of a Shardy attribute; `None` for one this reader does not decode.
    pub(super) fn sdy_text(&self, a: &SdyAttr) -> Result<Option<String>, BytecodeError> {
        Ok(Some(match a {
            SdyAttr::MeshAxis { name, size } => format!("{}={size}", quote(name)),
            SdyAttr::Mesh { axes, device_ids } => {
                format!("#sdy.mesh{}", self.mesh_body(axes, device_ids)?)
            }
            SdyAttr::SubAxis { pre_size, size } => format!("({pre_size}){size}"),
            SdyAttr::AxisRef { name, sub_axis } => {
                let mut s = quote(name);
                if let Some(sub) = sub_axis {
                    let _ = write!(s, ":{}", self.sdy_part(*sub)?);
                }
                s
            }
            SdyAttr::Dimension {
                axes,
                closed,
                priority,
            } => {
                let mut parts = self.sdy_parts(axes)?;
                if !closed {
                    parts.push("?".into());
                }
                let mut s = format!("{{{}}}", parts.join(", "));
                if let Some(p) = priority {
                    let _ = write!(s, "p{p}");
                }
                s
            }
            SdyAttr::Tensor { .. } => format!("#sdy.sharding{}", self.tensor_body(a)?),
            SdyAttr::PerValue(values) => {
                let bodies = values
                    .iter()
                    .map(|v| {
                        self.nested(|| match &*self.t.attr(*v)? {
                            Attr::Sdy(t @ SdyAttr::Tensor { .. }) => self.tensor_body(t),
                            _ => Err(BytecodeError::Unsupported(
                                "a Shardy per-value sharding of something else than shardings"
                                    .into(),
                            )),
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                format!("#sdy.sharding_per_value<[{}]>", bodies.join(", "))
            }
            SdyAttr::Other(_) => return Ok(None),
        }))
    }

    /// `<[axes], device_ids=[...]>` of a mesh.
    fn mesh_body(&self, axes: &[u64], device_ids: &[i64]) -> Result<String, BytecodeError> {
        let mut s = format!("<[{}]", self.sdy_parts(axes)?.join(", "));
        if !device_ids.is_empty() {
            let ids: Vec<String> = device_ids.iter().map(i64::to_string).collect();
            let _ = write!(s, ", device_ids=[{}]", ids.join(", "));
        }
        s.push('>');
        Ok(s)
    }

    /// `<@mesh, [{"x"}, {}], replicated={"y"}>` of a tensor sharding (an inline mesh as
    /// `mesh<[...]>`).
    fn tensor_body(&self, a: &SdyAttr) -> Result<String, BytecodeError> {
        let SdyAttr::Tensor {
            mesh,
            dims,
            replicated,
            unreduced,
        } = a
        else {
            return Err(BytecodeError::Unsupported("not a Shardy sharding".into()));
        };
        let mesh = self.nested(|| match &*self.t.attr(*mesh)? {
            Attr::Sdy(SdyAttr::Mesh { axes, device_ids }) => {
                Ok(format!("mesh{}", self.mesh_body(axes, device_ids)?))
            }
            _ => self.attr(*mesh),
        })?;
        let mut s = format!("<{mesh}, [{}]", self.sdy_parts(dims)?.join(", "));
        for (word, axes) in [("replicated", replicated), ("unreduced", unreduced)] {
            if !axes.is_empty() {
                let _ = write!(s, ", {word}={{{}}}", self.sdy_parts(axes)?.join(", "));
            }
        }
        s.push('>');
        Ok(s)
    }

    /// A part of a Shardy attribute, one level deeper: a hostile artifact's references can
    /// form a cycle, which the depth bound ([`Printer::nested`]) refuses.
    fn sdy_part(&self, idx: u64) -> Result<String, BytecodeError> {
        self.nested(|| match &*self.t.attr(idx)? {
            Attr::Sdy(a) => self.sdy_text(a)?.ok_or_else(|| {
                BytecodeError::Unsupported("an undecoded Shardy attribute inside a sharding".into())
            }),
            _ => self.attr(idx),
        })
    }

    fn sdy_parts(&self, v: &[u64]) -> Result<Vec<String>, BytecodeError> {
        v.iter().map(|&i| self.sdy_part(i)).collect()
    }
}
