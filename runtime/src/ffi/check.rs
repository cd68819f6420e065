//! Helpers for the per-target load checks: operand and result counts, element types, dimensions
//! and layouts, each refusal naming the field and what the handler takes.
use proto::xla::PrimitiveType;

use super::schema::{column_major_layout, ArrayShape, CallShapes, ShapeError};

pub(crate) use super::error::Side;

impl Side {
    fn field(self) -> &'static str {
        match self {
            Side::Operand => "operands",
            Side::Result => "results",
        }
    }
    fn word(self) -> &'static str {
        match self {
            Side::Operand => "operand",
            Side::Result => "result",
        }
    }
}

pub(crate) use Side::{Operand, Result as Res};

type R<T = ()> = Result<T, ShapeError>;

/// The floating element types the solvers take.
pub(crate) const FLOATS: [PrimitiveType; 4] = [
    PrimitiveType::F32,
    PrimitiveType::F64,
    PrimitiveType::C64,
    PrimitiveType::C128,
];

/// A load check of one target's call.
pub(crate) struct Checker<'a> {
    pub(crate) s: &'a CallShapes<'a>,
    pub(crate) target: &'static str,
}

fn list<T: std::fmt::Debug>(v: &[T]) -> String {
    format!("{v:?}")
}

impl<'a> Checker<'a> {
    pub(crate) fn new(s: &'a CallShapes<'a>, target: &'static str) -> Checker<'a> {
        Checker { s, target }
    }

    fn err(&self, field: String, message: String) -> ShapeError {
        ShapeError {
            field,
            message: format!("{} {message}", self.target),
        }
    }

    /// Exactly `operands` operands and `results` results.
    pub(crate) fn counts(&self, operands: usize, results: usize) -> R {
        for (side, want, have) in [
            (Operand, operands, self.s.operands.len()),
            (Res, results, self.s.results.len()),
        ] {
            if want != have {
                let plural = if want == 1 { "" } else { "s" };
                return Err(self.err(
                    side.field().to_owned(),
                    format!(
                        "takes {want} {}{plural}, the artifact has {have}",
                        side.word()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The shape of operand or result `i` (counts checked first; the loader refuses null or
    /// shapeless slices of a checked target before this runs).
    pub(crate) fn shape(&self, side: Side, i: usize) -> R<&'a ArrayShape> {
        let v = match side {
            Side::Operand => self.s.operands,
            Side::Result => self.s.results,
        };
        v.get(i).and_then(Option::as_ref).ok_or_else(|| {
            self.err(
                format!("{}[{i}].shaped_slice", side.field()),
                format!("needs {} {i} with a shape", side.word()),
            )
        })
    }

    fn field(side: Side, i: usize, what: &str) -> String {
        format!("{}[{i}].shaped_slice.shape.{what}", side.field())
    }

    /// One of `allowed`.
    pub(crate) fn elem_in(
        &self,
        side: Side,
        i: usize,
        allowed: &[PrimitiveType],
    ) -> R<PrimitiveType> {
        let s = self.shape(side, i)?;
        match s.ty() {
            Some(t) if allowed.contains(&t) => Ok(t),
            _ => {
                let names: Vec<&str> = allowed.iter().map(|t| t.as_str_name()).collect();
                let have = s
                    .ty()
                    .map(|t| t.as_str_name().to_owned())
                    .unwrap_or_else(|| s.element_type.to_string());
                let takes = match names.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        format!("{} or {last}", rest.join(", "))
                    }
                    _ => names.join(""),
                };
                Err(self.err(
                    Self::field(side, i, "element_type"),
                    format!(
                        "takes {takes} for {} {i}, the artifact has {have}",
                        side.word()
                    ),
                ))
            }
        }
    }

    /// Exactly `want`.
    pub(crate) fn elem(&self, side: Side, i: usize, want: PrimitiveType) -> R {
        self.elem_in(side, i, &[want]).map(|_| ())
    }

    /// Dimensions exactly `want` (`what` says where they come from).
    pub(crate) fn dims(&self, side: Side, i: usize, want: &[i64], what: &str) -> R {
        let s = self.shape(side, i)?;
        if s.dimensions != want {
            return Err(self.err(
                Self::field(side, i, "dimensions"),
                format!(
                    "needs {} {i} of dimensions {} ({what}), the artifact has {}",
                    side.word(),
                    list(want),
                    list(&s.dimensions)
                ),
            ));
        }
        Ok(())
    }

    /// JAX's layout: column-major matrices with batch dimensions major, or the default
    /// row-major order.
    pub(crate) fn layout(&self, side: Side, i: usize, column_major: bool) -> R {
        let s = self.shape(side, i)?;
        let rank = s.dimensions.len();
        let (want, name) = if column_major && rank >= 2 {
            (
                column_major_layout(rank),
                "column-major matrices, batch dimensions major",
            )
        } else {
            ((0..rank as i64).rev().collect(), "row-major")
        };
        if s.minor_to_major != want {
            return Err(self.err(
                Self::field(side, i, "layout.minor_to_major"),
                format!(
                    "needs {} {i} laid out {} ({name}), the artifact has {}",
                    side.word(),
                    list(&want),
                    list(&s.minor_to_major)
                ),
            ));
        }
        Ok(())
    }

    /// A batch of matrices: `(batch dimensions, rows, cols)`.
    pub(crate) fn matrix(&self, side: Side, i: usize) -> R<(Vec<i64>, i64, i64)> {
        let s = self.shape(side, i)?;
        let r = s.dimensions.len();
        if r < 2 {
            return Err(self.err(
                Self::field(side, i, "dimensions"),
                format!(
                    "needs {} {i} of rank 2 or more (a batch of matrices), the artifact has {}",
                    side.word(),
                    list(&s.dimensions)
                ),
            ));
        }
        Ok((
            s.dimensions[..r - 2].to_vec(),
            s.dimensions[r - 2],
            s.dimensions[r - 1],
        ))
    }

    /// The shared head of the square-matrix solvers (potrf, syevd, sytrd): operand 0 a batch of
    /// square column-major matrices of a floating type, result 0 the same. Returns
    /// `(element type, batch dimensions, n)`.
    pub(crate) fn square_in_place(&self) -> R<(PrimitiveType, Vec<i64>, i64)> {
        let t = self.elem_in(Operand, 0, &FLOATS)?;
        let (batch, rows, cols) = self.matrix(Operand, 0)?;
        if rows != cols {
            return Err(self.refuse_dims(
                Operand,
                0,
                format!("needs square matrices, operand 0 is {rows}x{cols}"),
            ));
        }
        self.layout(Operand, 0, true)?;
        self.elem(Res, 0, t)?;
        self.dims(Res, 0, &cat(&batch, &[rows, cols]), "operand 0's")?;
        self.layout(Res, 0, true)?;
        Ok((t, batch, rows))
    }

    /// A refusal of `side` `i`'s dimensions with a free-form reason.
    pub(crate) fn refuse_dims(&self, side: Side, i: usize, why: String) -> ShapeError {
        self.err(Self::field(side, i, "dimensions"), why)
    }
}

/// `batch` followed by `rest`.
pub(crate) fn cat(batch: &[i64], rest: &[i64]) -> Vec<i64> {
    let mut v = batch.to_vec();
    v.extend_from_slice(rest);
    v
}

/// The real type of the same precision.
pub(crate) fn real_of(t: PrimitiveType) -> PrimitiveType {
    match t {
        PrimitiveType::C64 => PrimitiveType::F32,
        PrimitiveType::C128 => PrimitiveType::F64,
        t => t,
    }
}

/// The size in bytes of one element of the types handlers take (`None` for others).
pub(crate) fn byte_width(t: PrimitiveType) -> Option<u64> {
    Some(match t {
        PrimitiveType::Pred | PrimitiveType::S8 | PrimitiveType::U8 => 1,
        PrimitiveType::S16 | PrimitiveType::U16 | PrimitiveType::F16 | PrimitiveType::Bf16 => 2,
        PrimitiveType::S32 | PrimitiveType::U32 | PrimitiveType::F32 => 4,
        PrimitiveType::S64 | PrimitiveType::U64 | PrimitiveType::F64 | PrimitiveType::C64 => 8,
        PrimitiveType::C128 => 16,
        _ => return None,
    })
}
