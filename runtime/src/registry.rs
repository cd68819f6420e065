//! The registry of custom-call targets and FFI handlers, resolved by name at load time.
//!
//! Names are part of the compatibility contract: a handler keeps every name it was ever
//! registered under as a legacy alias for the 6-month backward window, so artifacts emitted by
//! older compilers still resolve. Handlers run on host copies of their buffers (the executor reads
//! the operand and result slices from the device, calls the handler, and writes the results back),
//! which makes them device-independent.
use std::collections::BTreeMap;

pub use crate::ffi::schema::{
    ArrayShape, AttrParseError, AttrSpec, AttrType, AttrValue, Attributes, LoadCheck, ShapeError,
};
pub use crate::ffi::{HandlerError, Side};

/// The buffers and arguments a handler is called with.
#[derive(Debug)]
pub struct CallFrame<'a> {
    /// The bytes of each operand slice (`None` for a null operand).
    pub operands: &'a [Option<Vec<u8>>],
    /// The bytes of each result slice, holding the slice's current contents on entry; the
    /// handler overwrites them (it must not change their length).
    pub results: &'a mut [Option<Vec<u8>>],
    /// The legacy API's opaque bytes.
    pub opaque: &'a [u8],
    /// The typed-FFI attributes, name → printed value (MLIR attribute text: `true`, `0 : ui8`).
    pub attributes: &'a BTreeMap<String, String>,
    /// The shape of each operand as the artifact gave it (`None` for a null operand or one
    /// written without a shape); same length as `operands`.
    pub operand_shapes: &'a [Option<ArrayShape>],
    /// The shape of each result, as `operand_shapes`; same length as `results`.
    pub result_shapes: &'a [Option<ArrayShape>],
}

/// A handler: fills the results from the operands, or says why it cannot.
pub type Handler = fn(&mut CallFrame<'_>) -> Result<(), HandlerError>;

/// Which calling convention a handler was written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Api {
    /// The original custom-call API (arguments in `opaque`).
    Legacy,
    /// The typed FFI (arguments in `attributes`).
    Ffi,
}

/// One registered target.
#[derive(Debug, Clone)]
pub struct Registration {
    /// The current name.
    pub name: &'static str,
    /// Former names still accepted.
    pub aliases: &'static [&'static str],
    /// Calling convention.
    pub api: Api,
    /// The implementation.
    pub handler: Handler,
    /// The typed attributes the handler takes, checked at load: a missing, unknown or mistyped
    /// attribute fails the load. `None`: the attributes are not checked (the built-in
    /// `xla.runtime.*` targets, which read their own).
    pub attributes: Option<&'static [AttrSpec]>,
    /// Checks at load the operand and result count, element types, dimensions and layouts the
    /// handler can take (`None`: not checked).
    pub check: Option<LoadCheck>,
}

/// A set of registered custom-call targets.
#[derive(Debug, Clone)]
pub struct Registry {
    entries: Vec<Registration>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::builtin()
    }
}

impl Registry {
    /// An empty registry.
    pub fn empty() -> Registry {
        Registry {
            entries: Vec::new(),
        }
    }

    /// The handlers built into this runtime (see [`names`]).
    pub fn builtin() -> Registry {
        let mut r = Registry::empty();
        r.register(Registration {
            name: "xla.runtime.noop",
            // Can be removed in May 2027 (6 months backward compatibility window).
            aliases: &["__xla_noop"],
            api: Api::Ffi,
            handler: noop,
            attributes: None,
            check: None,
        });
        r.register(Registration {
            name: "xla.runtime.memcpy",
            // Can be removed in May 2027 (6 months backward compatibility window).
            aliases: &["__xla_memcpy", "Memcpy"],
            api: Api::Ffi,
            handler: memcpy,
            attributes: None,
            check: None,
        });
        r.register(Registration {
            name: "xla.runtime.axpy_f32",
            // Can be removed in May 2027 (6 months backward compatibility window).
            aliases: &["__xla_saxpy"],
            api: Api::Ffi,
            handler: axpy_f32,
            attributes: None,
            check: None,
        });
        for registration in crate::ffi::registrations() {
            r.register(registration);
        }
        r
    }

    /// Adds a target. A later registration under an existing name or alias shadows it.
    pub fn register(&mut self, registration: Registration) {
        self.entries.insert(0, registration);
    }

    /// The registration answering to `name` (its current name or a legacy alias).
    pub fn resolve(&self, name: &str) -> Option<&Registration> {
        self.entries
            .iter()
            .find(|r| r.name == name || r.aliases.contains(&name))
    }

    /// Every registered name with its aliases, sorted by name.
    pub fn names(&self) -> Vec<(String, Vec<String>)> {
        let mut v: Vec<(String, Vec<String>)> = self
            .entries
            .iter()
            .map(|r| {
                (
                    r.name.to_owned(),
                    r.aliases.iter().map(|a| (*a).to_owned()).collect(),
                )
            })
            .collect();
        v.sort();
        v.dedup_by(|a, b| a.0 == b.0);
        v
    }

    /// The attribute schema of each registration that declares one (see [`attribute_schemas`]),
    /// sorted by name.
    pub fn attribute_schemas(&self) -> Vec<(String, Vec<AttrSpec>)> {
        let mut v: Vec<(String, Vec<AttrSpec>)> = Vec::new();
        for r in &self.entries {
            if v.iter().any(|(n, _)| n == r.name) {
                continue; // shadowed by a later registration
            }
            if let Some(specs) = r.attributes {
                v.push((r.name.to_owned(), specs.to_vec()));
            }
        }
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
}

/// The built-in registry's names and legacy aliases (the compatibility surface the
/// schema-history snapshots record).
pub fn names() -> Vec<(String, Vec<String>)> {
    Registry::builtin().names()
}

/// The attribute schema of every built-in target that declares one, sorted by target: each
/// attribute's name, type (`bool`, `ui8`, `i64`, `f32`, `string`) and default. Part of the
/// compatibility surface (`ffi-attr:TARGET.NAME:TYPE`): removing an attribute or changing its
/// type inside the backward window breaks artifacts that set it.
pub fn attribute_schemas() -> Vec<(String, Vec<AttrSpec>)> {
    Registry::builtin().attribute_schemas()
}

/// Buffer `index` of `side` is absent or null.
fn missing(side: Side, index: usize) -> HandlerError {
    HandlerError::Missing { side, index }
}

/// `xla.runtime.noop`: does nothing (results keep their contents).
fn noop(_: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    Ok(())
}

/// `xla.runtime.memcpy`: result 0 receives operand 0's bytes (equal sizes).
fn memcpy(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let src = frame
        .operands
        .first()
        .and_then(Option::as_ref)
        .ok_or(missing(Side::Operand, 0))?;
    let dst = frame
        .results
        .first_mut()
        .and_then(Option::as_mut)
        .ok_or(missing(Side::Result, 0))?;
    if src.len() != dst.len() {
        return Err(HandlerError::CopySizes {
            operand: src.len(),
            result: dst.len(),
        });
    }
    dst.copy_from_slice(src);
    Ok(())
}

/// `xla.runtime.axpy_f32`: `result0 = alpha * operand0 + operand1` elementwise on f32, with
/// `alpha` from the attribute `alpha` (FFI), else from the first 4 `opaque` bytes (little-endian
/// f32, the legacy form), else 1.
fn axpy_f32(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let alpha: f32 = if let Some(a) = frame.attributes.get("alpha") {
        a.trim().parse().map_err(|_| HandlerError::NotAnF32 {
            name: "alpha".to_owned(),
            value: a.clone(),
        })?
    } else if let Some(b) = frame.opaque.get(..4) {
        let mut w = [0u8; 4];
        w.copy_from_slice(b);
        f32::from_le_bytes(w)
    } else {
        1.0
    };
    let x = frame
        .operands
        .first()
        .and_then(Option::as_ref)
        .ok_or(missing(Side::Operand, 0))?;
    let y = frame
        .operands
        .get(1)
        .and_then(Option::as_ref)
        .ok_or(missing(Side::Operand, 1))?;
    let out = frame
        .results
        .first_mut()
        .and_then(Option::as_mut)
        .ok_or(missing(Side::Result, 0))?;
    if x.len() != y.len() || x.len() != out.len() || x.len() % 4 != 0 {
        return Err(HandlerError::AxpySizes {
            x: x.len(),
            y: y.len(),
            result: out.len(),
        });
    }
    for ((o, a), b) in out
        .chunks_exact_mut(4)
        .zip(x.chunks_exact(4))
        .zip(y.chunks_exact(4))
    {
        let av = f32::from_le_bytes([a[0], a[1], a[2], a[3]]);
        let bv = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        o.copy_from_slice(&(alpha * av + bv).to_le_bytes());
    }
    Ok(())
}
