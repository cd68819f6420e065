//! Lowering: one StableHLO / CHLO op (read into an [`Op`]) becomes HLO instructions, the way
//! XLA's MLIR-to-HLO translation does it: `broadcast_in_dim` that expands size-1 dimensions gets
//! a reshape first, `while` threads captured values through its tuple, `if`/`case` pass their
//! captured values as branch operands, multi-result ops produce a tuple read with
//! `get-tuple-element`, and the CHLO ops JAX leaves in are decomposed (or refused by name).

mod approx_top_k;
mod chlo;
mod chlo_ops;
mod complex;
mod constants;
mod control;
mod convolution;
mod custom_call;
mod dot_algorithm;
mod ops;
mod sdy;

use super::parse::{Front, Lowered, Op, RegionOut};
use super::scan::{Attr, Dense, Elem, Part, Result};
use hlo::*;
use hlo::{PrimitiveType, Shape};
use hlo_text::ParseErrorKind;

/// Most elements a constant may expand to (a splat `dense<0.0> : tensor<...>` is expanded into
/// the literal): bounds the memory a small input can make the front end allocate.
pub const MAX_CONSTANT_ELEMENTS: u64 = 1 << 26;

/// StableHLO element-wise ops and their HLO opcodes.
pub(crate) const ELEMENTWISE: &[(&str, Opcode)] = &[
    ("abs", Opcode::Abs),
    ("add", Opcode::Add),
    ("and", Opcode::And),
    ("atan2", Opcode::Atan2),
    ("bitcast_convert", Opcode::BitcastConvert),
    ("cbrt", Opcode::Cbrt),
    ("ceil", Opcode::Ceil),
    ("clamp", Opcode::Clamp),
    ("complex", Opcode::Complex),
    ("convert", Opcode::Convert),
    ("cosine", Opcode::Cos),
    ("count_leading_zeros", Opcode::Clz),
    ("divide", Opcode::Divide),
    ("exponential", Opcode::Exp),
    ("exponential_minus_one", Opcode::Expm1),
    ("floor", Opcode::Floor),
    ("imag", Opcode::Imag),
    ("is_finite", Opcode::IsFinite),
    ("log", Opcode::Log),
    ("log_plus_one", Opcode::Log1p),
    ("logistic", Opcode::Logistic),
    ("maximum", Opcode::Maximum),
    ("minimum", Opcode::Minimum),
    ("multiply", Opcode::Multiply),
    ("negate", Opcode::Negate),
    ("not", Opcode::Not),
    ("or", Opcode::Or),
    ("popcnt", Opcode::PopulationCount),
    ("power", Opcode::Power),
    ("real", Opcode::Real),
    ("remainder", Opcode::Remainder),
    ("reshape", Opcode::Reshape),
    ("round_nearest_afz", Opcode::RoundNearestAfz),
    ("round_nearest_even", Opcode::RoundNearestEven),
    ("rsqrt", Opcode::Rsqrt),
    ("select", Opcode::Select),
    ("shift_left", Opcode::ShiftLeft),
    ("shift_right_arithmetic", Opcode::ShiftRightArithmetic),
    ("shift_right_logical", Opcode::ShiftRightLogical),
    ("sign", Opcode::Sign),
    ("sine", Opcode::Sin),
    ("sqrt", Opcode::Sqrt),
    ("subtract", Opcode::Subtract),
    ("tan", Opcode::Tan),
    ("tanh", Opcode::Tanh),
    ("xor", Opcode::Xor),
];

/// StableHLO ops with their own lowering (besides [`ELEMENTWISE`]).
pub(crate) const STRUCTURED: &[&str] = &[
    "after_all",
    "all_gather",
    "all_reduce",
    "all_to_all",
    "broadcast_in_dim",
    "case",
    "cholesky",
    "collective_broadcast",
    "collective_permute",
    "compare",
    "composite",
    "concatenate",
    "constant",
    "convolution",
    "custom_call",
    "dot",
    "dot_general",
    "dynamic_slice",
    "dynamic_update_slice",
    "fft",
    "gather",
    "get_tuple_element",
    "if",
    "iota",
    "map",
    "optimization_barrier",
    "pad",
    "partition_id",
    "reduce",
    "reduce_precision",
    "reduce_scatter",
    "reduce_window",
    "replica_id",
    "reverse",
    "rng_bit_generator",
    "scatter",
    "select_and_scatter",
    "slice",
    "sort",
    "transpose",
    "triangular_solve",
    "tuple",
    "while",
];

/// Every CHLO op that is decomposed (or mapped to its HLO opcode), sorted.
pub(crate) fn chlo_supported() -> Vec<&'static str> {
    let mut v: Vec<&str> = chlo_ops::CHLO_DIRECT
        .iter()
        .chain(chlo::MATH_OPS)
        .copied()
        .collect();
    v.sort_unstable();
    v
}

/// Elements of an integer-list attribute (`array<i64: ...>`, `[1, 2]`, `dense<[1, 2]>`).
fn ints(a: &Attr) -> Option<Vec<i64>> {
    match a {
        Attr::IntArray(v) => Some(v.clone()),
        Attr::List(items) => items
            .iter()
            .map(|i| match i {
                Attr::Int(x) => i64::try_from(*x).ok(),
                Attr::Bool(b) => Some(i64::from(*b)),
                _ => None,
            })
            .collect(),
        Attr::Dense(Dense::Elems(e), ty) => {
            let v: Vec<i64> = e
                .iter()
                .map(|x| match x {
                    Elem::Int(i) => i64::try_from(*i).ok(),
                    Elem::Bool(b) => Some(i64::from(*b)),
                    _ => None,
                })
                .collect::<Option<_>>()?;
            // A splat (`dense<0> : tensor<4x2xi64>`) stands for every element.
            let n = ty.element_count();
            match v.as_slice() {
                [one] if n != 1 && n <= 1 << 20 => Some(vec![*one; n as usize]),
                _ => Some(v),
            }
        }
        Attr::Int(i) => i64::try_from(*i).ok().map(|x| vec![x]),
        _ => None,
    }
}

/// Rows of a 2-D integer attribute (`dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>`, `[[0, 1]]`).
fn int_rows(a: &Attr) -> Option<Vec<Vec<i64>>> {
    match a {
        Attr::Dense(_, ty) => {
            let flat = ints(a)?;
            let dims = ty.dims();
            let cols = match dims {
                [_, c] => usize::try_from(*c).ok()?,
                [] | [_] if flat.is_empty() => return Some(Vec::new()),
                _ => return None,
            };
            if cols == 0 {
                let rows = usize::try_from(*dims.first()?).ok()?;
                return Some(vec![Vec::new(); rows.min(1 << 16)]);
            }
            Some(flat.chunks(cols).map(<[i64]>::to_vec).collect())
        }
        Attr::List(rows) => rows.iter().map(ints).collect(),
        _ => None,
    }
}

fn field<'a>(fields: &'a [(String, Attr)], name: &str) -> Option<&'a Attr> {
    fields.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

impl Op {
    fn get(&self, names: &[&str]) -> Option<&Attr> {
        names.iter().find_map(|n| field(&self.attrs, n))
    }
}

impl Front<'_> {
    fn bad(&self, op: &Op, msg: impl Into<String>) -> hlo_text::ParseError {
        self.err_at(op.loc, ParseErrorKind::BadAttribute, msg)
    }

    fn ints_attr(&self, op: &Op, names: &[&str]) -> Result<Option<Vec<i64>>> {
        match op.get(names) {
            None => Ok(None),
            Some(a) => ints(a)
                .map(Some)
                .ok_or_else(|| self.bad(op, format!("{} must be a list of integers", names[0]))),
        }
    }

    fn req_ints(&self, op: &Op, names: &[&str]) -> Result<Vec<i64>> {
        self.ints_attr(op, names)?
            .ok_or_else(|| self.bad(op, format!("missing attribute {}", names[names.len() - 1])))
    }

    fn int_attr(&self, op: &Op, names: &[&str]) -> Result<Option<i64>> {
        match op.get(names) {
            None => Ok(None),
            Some(Attr::Int(i)) => i64::try_from(*i)
                .map(Some)
                .map_err(|_| self.bad(op, format!("{} out of range", names[0]))),
            Some(_) => Err(self.bad(op, format!("{} must be an integer", names[0]))),
        }
    }

    fn req_int(&self, op: &Op, names: &[&str]) -> Result<i64> {
        self.int_attr(op, names)?
            .ok_or_else(|| self.bad(op, format!("missing attribute {}", names[names.len() - 1])))
    }

    fn bool_attr(&self, op: &Op, names: &[&str]) -> Result<Option<bool>> {
        match op.get(names) {
            None => Ok(None),
            Some(Attr::Bool(b)) => Ok(Some(*b)),
            Some(Attr::Unit) => Ok(Some(true)),
            Some(_) => Err(self.bad(op, format!("{} must be true or false", names[0]))),
        }
    }

    /// `[DEFAULT, HIGH]` / `[#stablehlo<precision DEFAULT>, ...]`, dropped when all default
    /// (as XLA prints it).
    fn precision(&self, op: &Op) -> Result<Option<Vec<Precision>>> {
        let Some(a) = op.get(&["precision", "precision_config"]) else {
            return Ok(None);
        };
        let Attr::List(items) = a else {
            return Err(self.bad(op, "precision_config must be a list"));
        };
        let mut out = Vec::new();
        for i in items {
            let p = match i {
                Attr::Enum(e) => Precision::from_name(e),
                _ => None,
            };
            out.push(p.ok_or_else(|| {
                self.bad(
                    op,
                    "precision_config entries must be DEFAULT, HIGH or HIGHEST",
                )
            })?);
        }
        Ok(if out.iter().all(|p| *p == Precision::Default) {
            None
        } else {
            Some(out)
        })
    }

    fn result_shape(&self, op: &Op) -> Shape {
        match op.result_types.as_slice() {
            [one] => one.clone(),
            many => Shape::Tuple(many.to_vec()),
        }
    }

    fn emit(&mut self, op: &Op, opcode: Opcode, operands: Vec<InstrId>, attrs: Attrs) -> Lowered {
        let shape = self.result_shape(op);
        let id = self.add(opcode, shape, operands, attrs, op.loc);
        if op.result_types.len() == 1 {
            Lowered::One(id)
        } else {
            Lowered::Tuple(id, op.result_types.len())
        }
    }

    fn region_at<'o>(&self, op: &'o Op, i: usize) -> Result<&'o RegionOut> {
        op.regions.get(i).ok_or_else(|| {
            self.err_at(
                op.loc,
                ParseErrorKind::Structure,
                format!("expected at least {} region(s)", i + 1),
            )
        })
    }

    fn operand_at(&self, op: &Op, i: usize) -> Result<InstrId> {
        op.operands.get(i).copied().ok_or_else(|| {
            self.err_at(
                op.loc,
                ParseErrorKind::Structure,
                format!("expected at least {} operand(s)", i + 1),
            )
        })
    }

    fn count(&self, op: &Op, n: usize) -> Result<()> {
        if op.operands.len() != n {
            return Err(self.err_at(
                op.loc,
                ParseErrorKind::Structure,
                format!("expected {n} operand(s), found {}", op.operands.len()),
            ));
        }
        Ok(())
    }

    pub(crate) fn lower(&mut self, op: Op) -> Result<Lowered> {
        let name = op.name.clone();
        let (dialect, short) = name.split_once('.').unwrap_or(("", name.as_str()));
        match (dialect, short) {
            ("func", "call") | ("", "call") => self.lower_call(&op),
            ("stablehlo", s) => self.lower_stablehlo(s, &op),
            ("chlo", s) => self.lower_chlo(s, &op),
            ("sdy", "sharding_constraint") => self.lower_sharding_constraint(&op),
            ("sdy", "manual_computation") => self.lower_manual_computation(&op),
            ("sdy", _) => {
                Err(self.err_at(op.loc, ParseErrorKind::UnknownOpcode, super::parse::SHARDY))
            }
            ("mhlo", _) => Err(self.err_at(
                op.loc,
                ParseErrorKind::UnknownOpcode,
                "MHLO ops are not accepted: export StableHLO (jax.jit(f).lower(...).as_text())",
            )),
            _ => Err(self.err_at(
                op.loc,
                ParseErrorKind::UnknownOpcode,
                format!("unsupported operation \"{name}\""),
            )),
        }
    }

    fn lower_call(&mut self, op: &Op) -> Result<Lowered> {
        let generic = match op.get(&["callee"]) {
            Some(Attr::Symbol(f)) => Some(f.clone()),
            _ => None,
        };
        let Some(callee) = op.callee.clone().or(generic) else {
            return Err(self.err_at(op.loc, ParseErrorKind::Syntax, "call without a callee"));
        };
        let id = self.func_id(&callee, op.loc);
        let attrs = Attrs {
            to_apply: Some(id),
            ..Attrs::default()
        };
        Ok(self.emit(op, Opcode::Call, op.operands.clone(), attrs))
    }

    fn lower_stablehlo(&mut self, s: &str, op: &Op) -> Result<Lowered> {
        if let Some(lowered) = self.lower_complex_elementwise(s, op)? {
            return Ok(lowered);
        }
        if let Some(&(_, opcode)) = ELEMENTWISE.iter().find(|(n, _)| *n == s) {
            return Ok(self.emit(op, opcode, op.operands.clone(), Attrs::default()));
        }
        match s {
            "constant"
            | "compare"
            | "broadcast_in_dim"
            | "iota"
            | "transpose"
            | "reverse"
            | "concatenate"
            | "slice"
            | "dynamic_slice"
            | "dynamic_update_slice"
            | "pad"
            | "get_tuple_element"
            | "tuple"
            | "after_all"
            | "replica_id"
            | "partition_id" => self.lower_data(s, op),
            "dot_general" | "dot" | "reduce" | "reduce_window" | "select_and_scatter" | "sort"
            | "gather" | "scatter" => self.lower_indexed(s, op),
            "optimization_barrier"
            | "composite"
            | "map"
            | "reduce_precision"
            | "rng_bit_generator"
            | "fft"
            | "cholesky"
            | "triangular_solve" => self.lower_misc(s, op),
            "convolution" => self.lower_convolution(op),
            "while" => self.lower_while(op),
            "if" | "case" => self.lower_branches(s, op),
            "custom_call" => self.lower_custom_call(op),
            "all_reduce"
            | "all_gather"
            | "reduce_scatter"
            | "all_to_all"
            | "collective_permute"
            | "collective_broadcast" => self.lower_collective(s, op),
            _ => Err(self.err_at(
                op.loc,
                ParseErrorKind::UnknownOpcode,
                format!("unsupported operation \"stablehlo.{s}\""),
            )),
        }
    }

    /// `broadcast_in_dim`: HLO `broadcast` cannot stretch a size-1 dimension, so those are
    /// reshaped away first (as XLA's translation does).
    fn lower_broadcast(&mut self, op: &Op) -> Result<Lowered> {
        self.count(op, 1)?;
        let x = self.operand_at(op, 0)?;
        let dims = self.req_ints(op, &["dims", "broadcast_dimensions"])?;
        let out = self.result_shape(op);
        let xs = self.shape_of(x).clone();
        let (Some(xa), Some(oa)) = (xs.as_array(), out.as_array()) else {
            return Err(self.bad(op, "broadcast_in_dim needs array operand and result"));
        };
        if dims.len() != xa.rank() {
            return Err(self.bad(
                op,
                format!(
                    "broadcast_dimensions has {} entries for an operand of rank {}",
                    dims.len(),
                    xa.rank()
                ),
            ));
        }
        let mut keep_dims = Vec::new();
        let mut keep_sizes = Vec::new();
        for (i, &d) in dims.iter().enumerate() {
            let out_size = usize::try_from(d)
                .ok()
                .and_then(|d| oa.dims.get(d))
                .copied()
                .ok_or_else(|| {
                    self.bad(
                        op,
                        format!(
                            "broadcast dimension {d} out of range for rank {}",
                            oa.rank()
                        ),
                    )
                })?;
            let size = xa.dims.get(i).copied().unwrap_or(1);
            if size == 1 && out_size != 1 {
                continue;
            }
            keep_dims.push(d);
            keep_sizes.push(size);
        }
        let mut operand = x;
        if keep_dims.len() != dims.len() {
            let shape = Shape::array(xa.element_type, keep_sizes);
            operand = self.add(Opcode::Reshape, shape, vec![x], Attrs::default(), op.loc);
        }
        let a = Attrs {
            dimensions: Some(keep_dims),
            ..Attrs::default()
        };
        Ok(self.emit(op, Opcode::Broadcast, vec![operand], a))
    }

    fn lower_collective(&mut self, s: &str, op: &Op) -> Result<Lowered> {
        let mut a = Attrs::default();
        if let Some(g) = op.get(&["replica_groups"]) {
            let rows = int_rows(g)
                .ok_or_else(|| self.bad(op, "replica_groups must be a 2-D integer tensor"))?;
            // Padding entries (-1) of a ragged group list are not members.
            a.replica_groups = Some(ReplicaGroups::List(
                rows.into_iter()
                    .map(|r| r.into_iter().filter(|&x| x >= 0).collect())
                    .collect(),
            ));
        }
        if let Some(Attr::Struct(_, f)) = op.get(&["channel_handle"]) {
            let h = field(f, "handle")
                .and_then(ints)
                .and_then(|v| v.first().copied())
                .unwrap_or(0);
            if h > 0 {
                a.channel_id = Some(h);
            }
        }
        if self.bool_attr(op, &["use_global_device_ids"])? == Some(true) {
            a.use_global_device_ids = Some(true);
        }
        let opcode = match s {
            "all_reduce" => {
                a.to_apply = Some(self.region_at(op, 0)?.comp);
                Opcode::AllReduce
            }
            "reduce_scatter" => {
                a.dimensions = Some(vec![self.req_int(op, &["scatter_dimension"])?]);
                a.to_apply = Some(self.region_at(op, 0)?.comp);
                Opcode::ReduceScatter
            }
            "all_gather" => {
                a.dimensions = Some(vec![self.req_int(op, &["all_gather_dim"])?]);
                Opcode::AllGather
            }
            "all_to_all" => {
                let split = self.req_int(op, &["split_dimension"])?;
                let concat = self.req_int(op, &["concat_dimension"])?;
                if split != concat {
                    return Err(self.bad(op, format!("all_to_all with split_dimension {split} != concat_dimension {concat} is not supported")));
                }
                a.dimensions = Some(vec![split]);
                Opcode::AllToAll
            }
            "collective_permute" => {
                let pairs = op
                    .get(&["source_target_pairs"])
                    .and_then(int_rows)
                    .ok_or_else(|| self.bad(op, "collective_permute needs source_target_pairs"))?;
                let text: Vec<String> = pairs
                    .iter()
                    .map(|p| {
                        format!(
                            "{{{}}}",
                            p.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
                        )
                    })
                    .collect();
                a.raw.push((
                    "source_target_pairs".into(),
                    format!("{{{}}}", text.join(",")),
                ));
                Opcode::CollectivePermute
            }
            _ => Opcode::CollectiveBroadcast,
        };
        Ok(self.emit(op, opcode, op.operands.clone(), a))
    }
}

fn show(s: &Shape) -> String {
    format!("{s}")
}
