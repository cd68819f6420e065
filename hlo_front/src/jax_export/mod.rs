//! JAX's serialized `Exported` (`jax.export.export(...)(...).serialize()`): a FlatBuffer
//! (`serialization.fbs`, vendored beside this file) holding the calling convention and the
//! module as a StableHLO portable artifact ([`crate::stablehlo::bytecode`]).
//!
//! # Versions
//!
//! Every layout JAX 0.10.2 reads: serialization versions 2 to 12. The version field is not a
//! reliable guide (since November 2025 JAX writes 3 there for old readers), so each version's
//! additions are read where present: v5 `memory_space` and the 32-bit `nr_devices`; v6 named
//! shardings (abstract meshes, partition specs; with HloSharding protos until v9); v8 abstract
//! devices; v10 the deduplicated `unique_*` tables and index vectors; v11 device platforms;
//! v12 `jax_version`. [`Exported::layout_version`] says which the buffer has.
//!
//! # What is refused (each naming the field)
//!
//! A module for several devices (`nr_devices` > 1) is the program `jax.jit` with shardings
//! lowers, and runs as the same module as text does (docs/sharding.md: partitioned, then one
//! emulated device per partition); `nr_devices` must be the module's replicas times partitions,
//! and the module's own sharding annotations are what it is split by (the `in_shardings` and
//! `out_shardings` here describe the same, for JAX's caller). Refused, each naming the field:
//! `ordered_effects` and `unordered_effects` (their tokens and callbacks),
//! symbolic dimensions in `in_avals`/`out_avals` (shape polymorphism), and a calling convention
//! older than 9 or newer than 10 (`uses_global_constants` only says that the module has
//! dimension variables, refused through the avals, or a platform index, fixed here). The
//! platform-index argument of a multi-platform export is fixed to `cuda`'s index; an export for
//! other platforms only is compiled for the GPU anyway (as a release engineer checking it would)
//! and [`Exported::for_gpu_note`] says so.

mod flatbuf;

use std::fmt;

use thiserror::Error;

use crate::stablehlo::bytecode::{self, BytecodeError, MainAdapter};
use hlo::HloModule;

/// Deepest pytree read.
pub const MAX_TREE_DEPTH: usize = 64;
/// Most pytree nodes read.
pub const MAX_TREE_NODES: usize = 1 << 16;

/// Why a serialized `Exported` could not be read or used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ExportedError {
    /// The FlatBuffer is malformed.
    #[error("malformed serialized Exported: {0}")]
    Malformed(String),
    /// A field holds something this project cannot honour.
    #[error("Exported field {field}: {message}")]
    Unsupported {
        /// The schema's field name (`nr_devices`, `in_avals[1]`, ...).
        field: String,
        /// Why.
        message: String,
    },
    /// The embedded module did not read.
    #[error("Exported mlir_module_serialized: {0}")]
    Module(#[from] BytecodeError),
}

fn unsupported(field: impl Into<String>, message: impl Into<String>) -> ExportedError {
    ExportedError::Unsupported {
        field: field.into(),
        message: message.into(),
    }
}

/// An element type of `serialization.fbs`'s `DType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DType(pub u8);

impl DType {
    /// JAX's name (`f32`, `bool`, `key<fry>`, ...) and the MLIR element type, when it has one.
    pub fn names(self) -> (&'static str, Option<&'static str>) {
        match self.0 {
            0 => ("bool", Some("i1")),
            1 => ("i8", Some("i8")),
            2 => ("i16", Some("i16")),
            3 => ("i32", Some("i32")),
            4 => ("i64", Some("i64")),
            5 => ("ui8", Some("ui8")),
            6 => ("ui16", Some("ui16")),
            7 => ("ui32", Some("ui32")),
            8 => ("ui64", Some("ui64")),
            9 => ("f16", Some("f16")),
            10 => ("f32", Some("f32")),
            11 => ("f64", Some("f64")),
            12 => ("c64", Some("complex<f32>")),
            13 => ("c128", Some("complex<f64>")),
            14 => ("bf16", Some("bf16")),
            15 => ("i4", Some("i4")),
            16 => ("ui4", Some("ui4")),
            17 => ("f8_e4m3b11fnuz", Some("f8E4M3B11FNUZ")),
            18 => ("f8_e4m3fn", Some("f8E4M3FN")),
            19 => ("f8_e4m3fnuz", Some("f8E4M3FNUZ")),
            20 => ("f8_e5m2", Some("f8E5M2")),
            21 => ("f8_e5m2fnuz", Some("f8E5M2FNUZ")),
            22 => ("float0", None),
            23 => ("f8_e4m3", Some("f8E4M3")),
            24 => ("f8_e3m4", Some("f8E3M4")),
            25 => ("f8_e8m0fnu", Some("f8E8M0FNU")),
            26 => ("f4_e2m1fn", Some("f4E2M1FN")),
            27 => ("key<fry>", None),
            28 => ("key<rbg>", None),
            29 => ("key<unsafe_rbg>", None),
            _ => ("unknown", None),
        }
    }
}

/// One dimension of an abstract value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dim {
    /// A known size.
    Fixed(u64),
    /// A symbolic expression (shape polymorphism).
    Symbolic(String),
}

/// An abstract value (`ShapedArray`): shape, element type, memory space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aval {
    /// The dimensions.
    pub shape: Vec<Dim>,
    /// The element type.
    pub dtype: DType,
    /// `MemorySpace`: 0 missing (device), 1 device, 2 host, 3 any.
    pub memory_space: u8,
}

impl fmt::Display for Aval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self
            .shape
            .iter()
            .map(|d| match d {
                Dim::Fixed(n) => n.to_string(),
                Dim::Symbolic(s) => s.clone(),
            })
            .collect();
        let mem = match self.memory_space {
            2 => "<host>",
            3 => "<any>",
            _ => "",
        };
        write!(f, "{}{mem}[{}]", self.dtype.names().0, dims.join(","))
    }
}

/// A sharding of an input or output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sharding {
    /// None given (`unspecified`).
    Unspecified,
    /// An `xla.OpSharding` proto (serialization versions before 9): its `type` field (0
    /// REPLICATED, 1 MAXIMAL, 2 TUPLE, 3 OTHER, 4 MANUAL, 5 UNREDUCED, 6 UNKNOWN).
    Hlo {
        /// The proto's `type`.
        kind: i32,
    },
    /// A `NamedSharding`: mesh axes (name, size), the partition spec (axis names per
    /// dimension), memory kind.
    Named {
        /// The mesh's axes.
        mesh: Vec<(String, u32)>,
        /// Per dimension, the mesh axes it is split over.
        spec: Vec<Vec<String>>,
        /// The memory kind, when given.
        memory_kind: Option<String>,
    },
}

impl Sharding {
    /// Whether every device holds the whole value.
    pub fn is_replicated(&self) -> bool {
        match self {
            Sharding::Unspecified => true,
            // REPLICATED, or MAXIMAL (one device holds it all).
            Sharding::Hlo { kind } => *kind == 0 || *kind == 1,
            Sharding::Named { mesh, spec, .. } => spec
                .iter()
                .flatten()
                .all(|axis| mesh.iter().any(|(n, size)| n == axis && *size == 1)),
        }
    }
}

impl fmt::Display for Sharding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sharding::Unspecified => f.write_str("unspecified"),
            Sharding::Hlo { kind } => {
                let k = [
                    "replicated",
                    "maximal",
                    "tuple",
                    "other",
                    "manual",
                    "unreduced",
                    "unknown",
                ];
                write!(
                    f,
                    "HloSharding({})",
                    k.get(*kind as usize).copied().unwrap_or("?")
                )
            }
            Sharding::Named {
                mesh,
                spec,
                memory_kind,
            } => {
                let m: Vec<String> = mesh.iter().map(|(n, s)| format!("{n}={s}")).collect();
                let p: Vec<String> = spec
                    .iter()
                    .map(|a| match a.as_slice() {
                        [] => "None".into(),
                        [one] => format!("'{one}'"),
                        many => format!(
                            "({})",
                            many.iter()
                                .map(|x| format!("'{x}'"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    })
                    .collect();
                write!(
                    f,
                    "NamedSharding(mesh=[{}], spec=P({}))",
                    m.join(", "),
                    p.join(", ")
                )?;
                if let Some(k) = memory_kind {
                    write!(f, " memory_kind={k}")?;
                }
                Ok(())
            }
        }
    }
}

/// A pytree structure (`PyTreeDef`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PyTree {
    /// An array.
    Leaf,
    /// `None`.
    None,
    /// A tuple.
    Tuple(Vec<PyTree>),
    /// A list.
    List(Vec<PyTree>),
    /// A dict with string keys (in JAX's sorted order).
    Dict(Vec<(String, PyTree)>),
    /// A registered custom node (namedtuple, dataclass, ...): its registered name.
    Custom(String, Vec<PyTree>),
}

impl fmt::Display for PyTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, v: &[PyTree]| -> fmt::Result {
            for (i, c) in v.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{c}")?;
            }
            Ok(())
        };
        match self {
            PyTree::Leaf => f.write_str("*"),
            PyTree::None => f.write_str("None"),
            PyTree::Tuple(v) => {
                f.write_str("(")?;
                list(f, v)?;
                if v.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
            PyTree::List(v) => {
                f.write_str("[")?;
                list(f, v)?;
                f.write_str("]")
            }
            PyTree::Dict(v) => {
                f.write_str("{")?;
                for (i, (k, c)) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "'{k}': {c}")?;
                }
                f.write_str("}")
            }
            PyTree::Custom(n, v) => {
                write!(f, "{n}[")?;
                list(f, v)?;
                f.write_str("]")
            }
        }
    }
}

/// A safety check the exporter disabled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DisabledCheck {
    /// The platform check.
    Platform,
    /// The custom-call allow list, for one target.
    CustomCall(String),
    /// Shape assertions.
    ShapeAssertions,
}

/// A deserialized `Exported`: the calling convention and the module bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Exported {
    /// The `serialization_version` field as stored (JAX stores 2 or 3; see [`Self::layout_version`]).
    pub serialization_version: u16,
    /// The exported function's name.
    pub function_name: String,
    /// The input pytree (`(args, kwargs)`).
    pub in_tree: PyTree,
    /// The flattened inputs.
    pub in_avals: Vec<Aval>,
    /// The output pytree.
    pub out_tree: PyTree,
    /// The flattened outputs.
    pub out_avals: Vec<Aval>,
    /// Input shardings (one per input, or none).
    pub in_shardings: Vec<Sharding>,
    /// Output shardings.
    pub out_shardings: Vec<Sharding>,
    /// Devices the module is partitioned over.
    pub nr_devices: u32,
    /// Platforms the module was lowered for (`cuda`, `cpu`, ...).
    pub platforms: Vec<String>,
    /// Ordered effects (type names).
    pub ordered_effects: Vec<String>,
    /// Unordered effects (type names).
    pub unordered_effects: Vec<String>,
    /// Disabled safety checks.
    pub disabled_checks: Vec<DisabledCheck>,
    /// The StableHLO portable artifact.
    pub mlir_module: Vec<u8>,
    /// The module's calling convention version.
    pub calling_convention_version: u16,
    /// Which inputs the module keeps (the others are unused and dropped from its arguments).
    pub module_kept_var_idx: Vec<u16>,
    /// Whether the module uses global constants for dimension variables.
    pub uses_global_constants: bool,
    /// Whether a VJP export is attached.
    pub has_vjp: bool,
    /// The serializing JAX's version (serialization version 12).
    pub jax_version: Option<String>,
    /// The newest serialization layout whose fields the buffer holds (a lower bound of the
    /// version it was written with).
    pub layout_version: u16,
}

/// Reads a serialized `Exported`.
pub fn read(bytes: &[u8]) -> Result<Exported, ExportedError> {
    let root = flatbuf::Buf(bytes).root()?;
    let mut layout = 2;
    let uniques = root.tables(19)?;
    let unique_meshes = root.tables(20)?;
    let unique_named = root.tables(21)?;
    let in_idx = root.u32s(22)?;
    let out_idx = root.u32s(23)?;
    if root.has(19)? || root.has(22)? {
        layout = layout.max(10);
    }
    let aval = |t: &flatbuf::Table<'_>, layout: &mut u16| -> Result<Aval, ExportedError> {
        let shape = t
            .strings(1)?
            .into_iter()
            .map(|d| match d.trim().parse::<u64>() {
                Ok(n) => Dim::Fixed(n),
                Err(_) => Dim::Symbolic(d),
            })
            .collect();
        let memory_space = t.u8(3, 0)?;
        if t.has(3)? {
            *layout = (*layout).max(5);
        }
        Ok(Aval {
            shape,
            dtype: DType(t.u8(2, 0)?),
            memory_space,
        })
    };
    let uniq: Vec<Aval> = uniques
        .iter()
        .map(|t| aval(t, &mut layout))
        .collect::<Result<_, _>>()?;
    let avals = |id: usize,
                 idx: &[u32],
                 what: &str,
                 layout: &mut u16|
     -> Result<Vec<Aval>, ExportedError> {
        if !idx.is_empty() {
            return idx
                .iter()
                .enumerate()
                .map(|(i, j)| {
                    uniq.get(*j as usize)
                        .cloned()
                        .ok_or_else(|| bad(format!("{what}_idxs[{i}] = {j} is out of range")))
                })
                .collect();
        }
        root.tables(id)?.iter().map(|t| aval(t, layout)).collect()
    };
    let in_avals = avals(3, &in_idx, "in_avals", &mut layout)?;
    let out_avals = avals(5, &out_idx, "out_avals", &mut layout)?;
    let meshes: Vec<Vec<(String, u32)>> = unique_meshes
        .iter()
        .map(|m| mesh(m, &mut layout))
        .collect::<Result<_, _>>()?;
    let named: Vec<Sharding> = unique_named
        .iter()
        .map(|n| named_sharding(n, &meshes, &mut layout))
        .collect::<Result<_, _>>()?;
    let shardings =
        |vec_id: usize, idx_id: usize, layout: &mut u16| -> Result<Vec<Sharding>, ExportedError> {
            let idx = root.u32s(idx_id)?;
            if !idx.is_empty() {
                return idx
                    .iter()
                    .map(|i| match *i {
                        0 => Ok(Sharding::Unspecified),
                        i => named
                            .get(i as usize - 1)
                            .cloned()
                            .ok_or_else(|| bad(format!("sharding index {i} is out of range"))),
                    })
                    .collect();
            }
            root.tables(vec_id)?
                .iter()
                .map(|s| sharding(s, &meshes, layout))
                .collect()
        };
    let in_shardings = shardings(7, 24, &mut layout)?;
    let out_shardings = shardings(8, 25, &mut layout)?;
    let nr_devices = match root.u32(18)? {
        0 => {
            let short = root.field_i16(6)?;
            u32::try_from(short).map_err(|_| bad(format!("nr_devices_short is {short}")))?
        }
        n => {
            layout = layout.max(5);
            n
        }
    };
    let jax_version = root.string(26)?;
    if jax_version.is_some() {
        layout = layout.max(12);
    }
    let effects = |id: usize| -> Result<Vec<String>, ExportedError> {
        root.tables(id)?
            .iter()
            .map(|e| Ok(e.string(0)?.unwrap_or_default()))
            .collect()
    };
    let disabled_checks = root
        .tables(12)?
        .iter()
        .map(|c| {
            Ok(match c.u8(0, 0)? {
                0 => DisabledCheck::Platform,
                1 => DisabledCheck::CustomCall(c.string(1)?.unwrap_or_default()),
                2 => DisabledCheck::ShapeAssertions,
                k => return Err(bad(format!("disabled check kind {k}"))),
            })
        })
        .collect::<Result<_, _>>()?;
    let mut nodes = 0;
    let tree = |id: usize, nodes: &mut usize| -> Result<PyTree, ExportedError> {
        match root.table(id)? {
            Some(t) => pytree(&t, 0, nodes),
            None => Err(bad(format!(
                "{} is missing",
                if id == 2 { "in_tree" } else { "out_tree" }
            ))),
        }
    };
    Ok(Exported {
        serialization_version: root.u16(0)?,
        function_name: root.string(1)?.unwrap_or_default(),
        in_tree: tree(2, &mut nodes)?,
        in_avals,
        out_tree: tree(4, &mut nodes)?,
        out_avals,
        in_shardings,
        out_shardings,
        nr_devices,
        platforms: root.strings(9)?,
        ordered_effects: effects(10)?,
        unordered_effects: effects(11)?,
        disabled_checks,
        mlir_module: root.bytes(13)?.unwrap_or_default().to_vec(),
        calling_convention_version: root.u16(14)?,
        module_kept_var_idx: root.u16s(15)?,
        uses_global_constants: root.bool(16)?,
        has_vjp: root.has(17)?,
        jax_version,
        layout_version: layout,
    })
}

fn bad(m: impl Into<String>) -> ExportedError {
    ExportedError::Malformed(m.into())
}

fn mesh(m: &flatbuf::Table<'_>, layout: &mut u16) -> Result<Vec<(String, u32)>, ExportedError> {
    let sizes = m.u32s(0)?;
    let names = m.strings(1)?;
    if sizes.len() != names.len() {
        return Err(bad(
            "an abstract mesh with different numbers of axis sizes and names",
        ));
    }
    if m.has(3)? {
        *layout = (*layout).max(8);
        if let Some(d) = m.table(3)? {
            if d.has(2)? {
                *layout = (*layout).max(11);
            }
        }
    }
    Ok(names.into_iter().zip(sizes).collect())
}

fn named_sharding(
    n: &flatbuf::Table<'_>,
    meshes: &[Vec<(String, u32)>],
    layout: &mut u16,
) -> Result<Sharding, ExportedError> {
    *layout = (*layout).max(6);
    let mesh = match n.table(0)? {
        Some(m) => mesh(&m, layout)?,
        None => {
            let i = n.u32(3)? as usize;
            meshes
                .get(i)
                .cloned()
                .ok_or_else(|| bad(format!("abstract_mesh_idx {i} is out of range")))?
        }
    };
    let spec = match n.table(1)? {
        Some(s) => s
            .tables(0)?
            .iter()
            .map(|p| p.strings(0))
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    Ok(Sharding::Named {
        mesh,
        spec,
        memory_kind: n.string(2)?,
    })
}

fn sharding(
    s: &flatbuf::Table<'_>,
    meshes: &[Vec<(String, u32)>],
    layout: &mut u16,
) -> Result<Sharding, ExportedError> {
    if let Some(n) = s.table(2)? {
        return named_sharding(&n, meshes, layout);
    }
    match s.bytes(1)? {
        Some(proto) => {
            use proto::prost::Message;
            let p = proto::xla::OpSharding::decode(proto)
                .map_err(|e| bad(format!("hlo_sharding_proto: {e}")))?;
            Ok(Sharding::Hlo { kind: p.r#type })
        }
        None => Ok(Sharding::Unspecified),
    }
}

fn pytree(
    t: &flatbuf::Table<'_>,
    depth: usize,
    nodes: &mut usize,
) -> Result<PyTree, ExportedError> {
    *nodes += 1;
    if depth > MAX_TREE_DEPTH || *nodes > MAX_TREE_NODES {
        return Err(bad(format!(
            "a pytree deeper than {MAX_TREE_DEPTH} or larger than {MAX_TREE_NODES} nodes"
        )));
    }
    let children: Vec<PyTree> = t
        .tables(1)?
        .iter()
        .map(|c| pytree(c, depth + 1, nodes))
        .collect::<Result<_, _>>()?;
    Ok(match t.u8(0, 0)? {
        0 => PyTree::Leaf,
        1 => PyTree::None,
        2 => PyTree::Tuple(children),
        3 => PyTree::List(children),
        4 => {
            let names = t.strings(2)?;
            if names.len() != children.len() {
                return Err(bad(
                    "a dict pytree with different numbers of keys and children",
                ));
            }
            PyTree::Dict(names.into_iter().zip(children).collect())
        }
        5 => PyTree::Custom(t.string(3)?.unwrap_or_default(), children),
        k => return Err(bad(format!("pytree kind {k}"))),
    })
}

impl Exported {
    /// Whether the module was lowered for other platforms than `cuda` only: it is compiled
    /// for the GPU anyway, and tools say so.
    pub fn for_gpu_note(&self) -> Option<String> {
        if self.platforms.iter().any(|p| p == "cuda") {
            return None;
        }
        Some(format!(
            "note: exported for platforms [{}], not cuda: compiled for the GPU target anyway",
            self.platforms.join(", ")
        ))
    }

    /// Refuses what cannot run as JAX would (see the module docs).
    pub fn check_supported(&self) -> Result<(), ExportedError> {
        if let Some(e) = self.ordered_effects.first() {
            return Err(unsupported("ordered_effects", format!("effect {e} (ordered effects thread tokens through the module) is not supported")));
        }
        if let Some(e) = self.unordered_effects.first() {
            return Err(unsupported(
                "unordered_effects",
                format!("effect {e} is not supported"),
            ));
        }
        for (what, list) in [("in_avals", &self.in_avals), ("out_avals", &self.out_avals)] {
            for (i, a) in list.iter().enumerate() {
                if let Some(Dim::Symbolic(s)) =
                    a.shape.iter().find(|d| matches!(d, Dim::Symbolic(_)))
                {
                    return Err(unsupported(format!("{what}[{i}]"), format!("{a} has the symbolic dimension {s} (shape polymorphism is not supported)")));
                }
                if a.dtype.names().1.is_none() {
                    return Err(unsupported(
                        format!("{what}[{i}]"),
                        format!("element type {} is not supported", a.dtype.names().0),
                    ));
                }
            }
        }
        if !(9..=10).contains(&self.calling_convention_version) {
            return Err(unsupported(
                "calling_convention_version",
                format!(
                    "version {} is not supported (9 and 10 are)",
                    self.calling_convention_version
                ),
            ));
        }
        let mut last = None;
        for (i, k) in self.module_kept_var_idx.iter().enumerate() {
            if usize::from(*k) >= self.in_avals.len() || last.is_some_and(|l| l >= *k) {
                return Err(unsupported(
                    format!("module_kept_var_idx[{i}]"),
                    format!(
                        "{k} is not an increasing index into the {} inputs",
                        self.in_avals.len()
                    ),
                ));
            }
            last = Some(*k);
        }
        Ok(())
    }

    /// How the module's `main` is adapted to take every input in calling-convention order:
    /// the platform index fixed, unused inputs added back.
    pub fn main_adapter(&self) -> Result<MainAdapter, ExportedError> {
        let platform_index = if self.platforms.len() > 1 {
            let i = self
                .platforms
                .iter()
                .position(|p| p == "cuda")
                .ok_or_else(|| {
                    unsupported(
                        "platforms",
                        format!("[{}] does not include cuda", self.platforms.join(", ")),
                    )
                })?;
            Some(i as i32)
        } else {
            None
        };
        let inputs = self
            .in_avals
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let kept = self
                    .module_kept_var_idx
                    .iter()
                    .position(|k| usize::from(*k) == i);
                let ty = aval_type(a);
                (kept, ty)
            })
            .collect();
        Ok(MainAdapter {
            platform_index,
            inputs,
        })
    }

    /// The module, taking its inputs and giving its outputs in the calling convention's order.
    pub fn module(&self) -> Result<HloModule, ExportedError> {
        self.check_supported()?;
        let adapter = self.main_adapter()?;
        let text = bytecode::to_stablehlo_text_adapted(&self.mlir_module, Some(&adapter))?;
        let module = crate::stablehlo::parse_module(&text)
            .map_err(|error| ExportedError::Module(BytecodeError::Text { error }))?;
        // The calling convention and the module must agree on the devices: the module's
        // shardings are what the program is split and run by.
        let config = &module.config;
        let devices =
            config.replica_count.unwrap_or(1).max(1) * config.num_partitions.unwrap_or(1).max(1);
        if devices != i64::from(self.nr_devices.max(1)) {
            return Err(unsupported(
                "nr_devices",
                format!(
                    "{} devices, but the module is for {devices} (num_replicas x num_partitions)",
                    self.nr_devices
                ),
            ));
        }
        self.check_shardings_kept(&module)?;
        Ok(module)
    }

    /// A program for several devices is split by its module's shardings: every input the
    /// calling convention shards must reach the module's entry sharded (a converted module
    /// that lost an annotation would run that input whole on every device, where JAX's caller
    /// passes each device its shard).
    fn check_shardings_kept(&self, module: &HloModule) -> Result<(), ExportedError> {
        if self.nr_devices <= 1 {
            return Ok(());
        }
        let entry = module.entry_computation();
        for (i, s) in self.in_shardings.iter().enumerate() {
            let sharded = entry
                .params
                .get(i)
                .and_then(|&p| entry.instructions[p.index()].attrs.sharding.as_ref())
                .is_some_and(|h| !h.is_replicated());
            if !s.is_replicated() && !sharded {
                return Err(unsupported(
                    format!("in_shardings[{i}]"),
                    format!("{s}: the module's argument {i} carries no sharding (the converted module lost it)"),
                ));
            }
        }
        Ok(())
    }

    /// The calling convention, for `aot inspect`.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        let list = |v: &[Aval]| {
            v.iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let sh = |v: &[Sharding]| {
            v.iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        s.push_str(&format!("function: {}\n", self.function_name));
        s.push_str(&format!(
            "serialization version: {} stored, layout of version {}{}\n",
            self.serialization_version,
            self.layout_version,
            self.jax_version
                .as_ref()
                .map(|v| format!(" (written by JAX {v})"))
                .unwrap_or_default()
        ));
        s.push_str(&format!(
            "calling convention version: {}\n",
            self.calling_convention_version
        ));
        s.push_str(&format!("platforms: [{}]\n", self.platforms.join(", ")));
        s.push_str(&format!("nr_devices: {}\n", self.nr_devices));
        s.push_str(&format!("in_tree: {}\n", self.in_tree));
        s.push_str(&format!("in_avals: ({})\n", list(&self.in_avals)));
        s.push_str(&format!("in_shardings: ({})\n", sh(&self.in_shardings)));
        s.push_str(&format!("out_tree: {}\n", self.out_tree));
        s.push_str(&format!("out_avals: ({})\n", list(&self.out_avals)));
        s.push_str(&format!("out_shardings: ({})\n", sh(&self.out_shardings)));
        let kept: Vec<String> = self
            .module_kept_var_idx
            .iter()
            .map(|k| k.to_string())
            .collect();
        s.push_str(&format!("module_kept_var_idx: [{}]\n", kept.join(", ")));
        s.push_str(&format!(
            "ordered_effects: [{}]\n",
            self.ordered_effects.join(", ")
        ));
        s.push_str(&format!(
            "unordered_effects: [{}]\n",
            self.unordered_effects.join(", ")
        ));
        let checks: Vec<String> = self
            .disabled_checks
            .iter()
            .map(|c| match c {
                DisabledCheck::Platform => "platform".to_string(),
                DisabledCheck::CustomCall(t) => format!("custom_call({t})"),
                DisabledCheck::ShapeAssertions => "shape_assertions".to_string(),
            })
            .collect();
        s.push_str(&format!("disabled_checks: [{}]\n", checks.join(", ")));
        s.push_str(&format!(
            "uses_global_constants: {}\n",
            self.uses_global_constants
        ));
        s.push_str(&format!(
            "vjp: {}\n",
            if self.has_vjp { "attached" } else { "none" }
        ));
        s.push_str(&format!(
            "module: {} bytes of MLIR bytecode\n",
            self.mlir_module.len()
        ));
        s
    }
}

/// An aval as an MLIR tensor type (`tensor<2x3xf32>`).
fn aval_type(a: &Aval) -> String {
    let mut s = String::from("tensor<");
    for d in &a.shape {
        if let Dim::Fixed(n) = d {
            s.push_str(&format!("{n}x"));
        }
    }
    s.push_str(a.dtype.names().1.unwrap_or("none"));
    s.push('>');
    s
}
