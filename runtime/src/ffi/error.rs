//! What a custom-call handler reports when it cannot fill its results: one variant per problem,
//! so a caller (or a test) tells them apart by kind, never by text. The executor reports any of
//! them as `INTERNAL: custom call TARGET failed: {error}`: the load checks refuse every artifact a
//! handler cannot take, so reaching one at run time is a mismatch between a load check and its
//! handler (or a registration without a check).
use std::fmt;

/// Which side of a call a buffer is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// An argument of the call.
    Operand,
    /// A buffer the call writes.
    Result,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Operand => "operand",
            Side::Result => "result",
        })
    }
}

/// A custom-call handler's failure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum HandlerError {
    /// A buffer the handler needs is absent, or the artifact passed a null one.
    #[error("{side} {index} is missing or null")]
    Missing {
        /// Operand or result.
        side: Side,
        /// Its position.
        index: usize,
    },
    /// A buffer the handler needs was written without a shape.
    #[error("{side} {index} has no shape")]
    NoShape {
        /// Operand or result.
        side: Side,
        /// Its position.
        index: usize,
    },
    /// A buffer's shape names an element type of no fixed byte width here.
    #[error("{side} {index} has an unsupported element type")]
    NoByteWidth {
        /// Operand or result.
        side: Side,
        /// Its position.
        index: usize,
    },
    /// An operand's shape names an element type this schema does not know.
    #[error("operand {index} has an unknown element type")]
    UnknownElementType {
        /// The operand's position.
        index: usize,
    },
    /// The handler does not compute in this element type.
    #[error("unsupported element type {0}")]
    UnsupportedElementType(&'static str),
    /// A shape whose byte size cannot be computed.
    #[error(
        "{side} {index} has the shape {dims:?}: a negative dimension or a size past 2^64 bytes"
    )]
    Unsizable {
        /// Operand or result.
        side: Side,
        /// Its position.
        index: usize,
        /// The shape's dimensions.
        dims: Vec<i64>,
    },
    /// A buffer whose length is not its shape's byte size.
    #[error("{side} {index} has {len} bytes, its shape {dims:?} needs {want}")]
    WrongSize {
        /// Operand or result.
        side: Side,
        /// Its position.
        index: usize,
        /// The buffer's length in bytes.
        len: usize,
        /// The shape's dimensions.
        dims: Vec<i64>,
        /// The shape's byte size.
        want: u64,
    },
    /// A result buffer that does not hold the number of elements the handler computed.
    #[error("result {index} has {len} bytes for {elements} {}elements", unit(*.words))]
    ResultElements {
        /// The result's position.
        index: usize,
        /// Its length in bytes.
        len: usize,
        /// The elements computed for it.
        elements: usize,
        /// Whether they are 32-bit words (pivots, info) rather than the call's scalars.
        words: bool,
    },
    /// A buffer that must have at least one dimension has none.
    #[error("{side} {index} has rank 0")]
    RankZero {
        /// Operand or result.
        side: Side,
        /// Its position.
        index: usize,
    },
    /// A result shape whose element count cannot be computed.
    #[error("result {index}'s shape has a negative dimension or overflows")]
    Uncountable {
        /// The result's position.
        index: usize,
    },
    /// A shape that is not a batch of matrices (rank below 2, or a negative dimension).
    #[error("{0:?} is not a batch of matrices")]
    NotABatch(Vec<i64>),
    /// A batch of matrices with more elements than a `usize` counts.
    #[error("{0:?} has more elements than this host can address")]
    TooLarge(Vec<i64>),
    /// `xla.runtime.memcpy`'s operand and result differ in size.
    #[error("operand 0 has {operand} bytes, result 0 has {result}")]
    CopySizes {
        /// The operand's length in bytes.
        operand: usize,
        /// The result's length in bytes.
        result: usize,
    },
    /// `xla.runtime.axpy_f32`'s buffers differ in size or are not whole f32s.
    #[error("operands of {x} and {y} bytes and a result of {result} bytes: need equal sizes, a multiple of 4")]
    AxpySizes {
        /// Operand 0's length in bytes.
        x: usize,
        /// Operand 1's length in bytes.
        y: usize,
        /// The result's length in bytes.
        result: usize,
    },
    /// Threefry's keys and counters differ in element count.
    #[error("operands of {k0}, {k1}, {d0}, {d1} elements: need equal counts")]
    ThreefryCounts {
        /// Key word 0's count.
        k0: usize,
        /// Key word 1's count.
        k1: usize,
        /// Counter word 0's count.
        d0: usize,
        /// Counter word 1's count.
        d1: usize,
    },
    /// A tridiagonal solve's diagonals do not match its right-hand sides.
    #[error("diagonals of {lower}, {main}, {upper} elements for {batch} systems of {m}")]
    DiagonalSizes {
        /// The sub-diagonal's element count.
        lower: usize,
        /// The main diagonal's element count.
        main: usize,
        /// The super-diagonal's element count.
        upper: usize,
        /// The systems in the batch.
        batch: usize,
        /// The order of each system.
        m: usize,
    },
    /// Householder factors (`tau`) that do not match the matrices.
    #[error("tau of {len} elements for {batch} {m}x{n} matrices")]
    TauSize {
        /// `tau`'s element count.
        len: usize,
        /// The matrices in the batch.
        batch: usize,
        /// Rows.
        m: usize,
        /// Columns.
        n: usize,
    },
    /// An attribute the handler reads is absent.
    #[error("attribute {0} is missing")]
    MissingAttribute(String),
    /// An attribute that does not hold a bool.
    #[error("attribute {0} is not a bool")]
    NotABool(String),
    /// An attribute that does not hold an f32.
    #[error("attribute {name} = {value:?} is not an f32")]
    NotAnF32 {
        /// The attribute.
        name: String,
        /// Its printed value.
        value: String,
    },
}

/// How [`HandlerError::ResultElements`] names its elements.
fn unit(words: bool) -> &'static str {
    if words {
        "32-bit "
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One exact message per variant a handler can report (wasmtime's serialization tests).
    #[test]
    fn each_handler_error_has_its_message() {
        use HandlerError::*;
        use Side::{Operand, Result as Res};
        let cases: Vec<(HandlerError, &str)> = vec![
            (Missing { side: Operand, index: 1 }, "operand 1 is missing or null"),
            (NoShape { side: Res, index: 0 }, "result 0 has no shape"),
            (
                NoByteWidth { side: Operand, index: 2 },
                "operand 2 has an unsupported element type",
            ),
            (UnknownElementType { index: 0 }, "operand 0 has an unknown element type"),
            (UnsupportedElementType("S8"), "unsupported element type S8"),
            (
                Unsizable { side: Res, index: 1, dims: vec![-1, 2] },
                "result 1 has the shape [-1, 2]: a negative dimension or a size past 2^64 bytes",
            ),
            (
                WrongSize { side: Operand, index: 0, len: 12, dims: vec![2, 2], want: 16 },
                "operand 0 has 12 bytes, its shape [2, 2] needs 16",
            ),
            (
                ResultElements { index: 0, len: 8, elements: 4, words: false },
                "result 0 has 8 bytes for 4 elements",
            ),
            (
                ResultElements { index: 1, len: 8, elements: 4, words: true },
                "result 1 has 8 bytes for 4 32-bit elements",
            ),
            (RankZero { side: Operand, index: 1 }, "operand 1 has rank 0"),
            (
                Uncountable { index: 0 },
                "result 0's shape has a negative dimension or overflows",
            ),
            (NotABatch(vec![3]), "[3] is not a batch of matrices"),
            (
                TooLarge(vec![1 << 40, 1 << 40, 2, 2]),
                "[1099511627776, 1099511627776, 2, 2] has more elements than this host can address",
            ),
            (CopySizes { operand: 4, result: 8 }, "operand 0 has 4 bytes, result 0 has 8"),
            (
                AxpySizes { x: 4, y: 8, result: 4 },
                "operands of 4 and 8 bytes and a result of 4 bytes: need equal sizes, a multiple of 4",
            ),
            (
                ThreefryCounts { k0: 1, k1: 2, d0: 3, d1: 4 },
                "operands of 1, 2, 3, 4 elements: need equal counts",
            ),
            (
                DiagonalSizes { lower: 3, main: 4, upper: 3, batch: 1, m: 4 },
                "diagonals of 3, 4, 3 elements for 1 systems of 4",
            ),
            (
                TauSize { len: 3, batch: 1, m: 4, n: 2 },
                "tau of 3 elements for 1 4x2 matrices",
            ),
            (MissingAttribute("lower".into()), "attribute lower is missing"),
            (NotABool("lower".into()), "attribute lower is not a bool"),
            (
                NotAnF32 { name: "alpha".into(), value: "x".into() },
                "attribute alpha = \"x\" is not an f32",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(e.to_string(), want, "{e:?}");
        }
    }
}
