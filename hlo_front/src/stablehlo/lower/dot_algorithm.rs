//! `algorithm = <...>` of `stablehlo.dot_general` (`#stablehlo.dot_algorithm<...>` in the
//! generic form and in VHLO bytecode): StableHLO's known algorithms
//! (`stablehlo/dialect/Base.cpp`, `getKnownDotAlgorithm`) become XLA's `algorithm=` of the dot,
//! as XLA's import does (`ConvertDotAlgorithm`). What each one computes is the compiler's
//! `dot-algorithm` pass.

use super::*;

/// The words a precision or accumulation type is written with: `f16`, `tf32`, `f8E4M3FN`.
fn type_word(a: &Attr) -> Option<String> {
    match a {
        Attr::Type(s) => s.element_type().map(|t| t.name().to_owned()),
        Attr::Enum(w) => Some(w.to_ascii_lowercase()),
        _ => None,
    }
}

impl Front<'_> {
    /// The dot's `algorithm`, if it has one.
    pub(super) fn dot_algorithm(&self, op: &Op) -> Result<Option<DotAlgorithm>> {
        let Some(attr) = op.get(&["algorithm"]) else {
            return Ok(None);
        };
        let Attr::Struct(_, fields) = attr else {
            return Err(self.bad(
                op,
                "algorithm must be written <lhs_precision_type = ..., ...>",
            ));
        };
        let ty = |name: &str| {
            field(fields, name).and_then(type_word).ok_or_else(|| {
                self.bad(
                    op,
                    format!("dot algorithm: {name} is missing or not a type"),
                )
            })
        };
        let int = |name: &str| match field(fields, name) {
            Some(Attr::Int(i)) => i64::try_from(*i)
                .map_err(|_| self.bad(op, format!("dot algorithm: {name} out of range"))),
            _ => Err(self.bad(
                op,
                format!("dot algorithm: {name} is missing or not an integer"),
            )),
        };
        let (lhs, rhs, acc) = (
            ty("lhs_precision_type")?,
            ty("rhs_precision_type")?,
            ty("accumulation_type")?,
        );
        let counts = (int("lhs_component_count")?, int("rhs_component_count")?);
        let ops = int("num_primitive_operations")?;
        let imprecise = match field(fields, "allow_imprecise_accumulation") {
            Some(Attr::Bool(b)) => *b,
            _ => {
                return Err(self.bad(
                    op,
                    "dot algorithm: allow_imprecise_accumulation is missing or not a bool",
                ))
            }
        };
        let known = known(&lhs, &rhs, &acc, counts, ops, imprecise);
        known.map(Some).ok_or_else(|| {
            self.bad(
                op,
                format!(
                    "unknown dot algorithm <{lhs}, {rhs}, accumulation {acc}, components {} x {}, \
                     {ops} operation(s), allow_imprecise_accumulation = {imprecise}>: StableHLO \
                     knows f16/bf16/tf32/f32/f64 ones and 8-bit float ones",
                    counts.0, counts.1
                ),
            )
        })
    }
}

/// StableHLO's table of known algorithms.
fn known(
    lhs: &str,
    rhs: &str,
    acc: &str,
    counts: (i64, i64),
    ops: i64,
    imprecise: bool,
) -> Option<DotAlgorithm> {
    if counts != (1, 1) {
        return None;
    }
    let f8 = |t: &str| t.starts_with("f8");
    if f8(lhs) && f8(rhs) && acc == "f32" && ops == 1 {
        return Some(match imprecise {
            true => DotAlgorithm::AnyF8AnyF8F32FastAccum,
            false => DotAlgorithm::AnyF8AnyF8F32,
        });
    }
    if imprecise {
        return None;
    }
    Some(match (lhs, rhs, acc, ops) {
        ("f16", "f16", "f16", 1) => DotAlgorithm::F16F16F16,
        ("f16", "f16", "f32", 1) => DotAlgorithm::F16F16F32,
        ("bf16", "bf16", "bf16", 1) => DotAlgorithm::Bf16Bf16Bf16,
        ("bf16", "bf16", "f32", 1) => DotAlgorithm::Bf16Bf16F32,
        ("bf16", "bf16", "f32", 3) => DotAlgorithm::Bf16Bf16F32X3,
        ("bf16", "bf16", "f32", 6) => DotAlgorithm::Bf16Bf16F32X6,
        ("bf16", "bf16", "f32", 9) => DotAlgorithm::Bf16Bf16F32X9,
        ("tf32", "tf32", "f32", 1) => DotAlgorithm::Tf32Tf32F32,
        ("tf32", "tf32", "f32", 3) => DotAlgorithm::Tf32Tf32F32X3,
        ("f32", "f32", "f32", 1) => DotAlgorithm::F32F32F32,
        ("f64", "f64", "f64", 1) => DotAlgorithm::F64F64F64,
        _ => return None,
    })
}
