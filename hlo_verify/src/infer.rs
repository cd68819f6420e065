//! Shape inference: [`infer_shape`] delegates to one rule per opcode family (a submodule
//! each); the helpers here are what the families share (operand access, range checks, callee
//! signatures, window arithmetic).

use std::collections::HashSet;

use super::error::ShapeError;
use super::{contraction, control, elementwise, indexing, misc, movement, opaque, reduction};
use super::{CalleeLookup, Signature};
use hlo::*;
use hlo::{ArrayShape, PrimitiveType, Shape};

/// What one opcode's rule reads: the arguments of [`infer_shape`].
#[derive(Clone, Copy)]
pub(super) struct Inst<'a> {
    pub(super) opcode: Opcode,
    pub(super) ops: &'a [&'a Shape],
    pub(super) a: &'a Attrs,
    pub(super) declared: Option<&'a Shape>,
    /// `declared` when it is an array: computed once here so that no family rule repeats it.
    pub(super) declared_array: Option<&'a ArrayShape>,
    pub(super) callees: Option<CalleeLookup<'a>>,
}

impl Inst<'_> {
    /// The declared element type, when the declared shape is an array.
    pub(super) fn declared_ty(&self) -> Option<PrimitiveType> {
        self.declared_array.map(|d| d.element_type)
    }
}

/// Infers the result shape (without layout) of an instruction from its operands' shapes and
/// attributes.
///
/// `declared` is the instruction's declared shape, when known: opcodes whose result type or
/// dimensions are not determined by their operands (convert, broadcast, reshape, iota, ...)
/// take those from it and only check consistency. `callees` looks up called computations;
/// without it, call-like opcodes are not checked against their callees.
///
/// Returns `Ok(None)` when the shape cannot be inferred (the declared shape is then trusted),
/// and `Err` with a description when the operands and attributes are inconsistent.
pub fn infer_shape(
    opcode: Opcode,
    ops: &[&Shape],
    a: &Attrs,
    declared: Option<&Shape>,
    callees: Option<CalleeLookup<'_>>,
) -> R<Option<Shape>> {
    use Opcode::*;
    let cx = Inst {
        opcode,
        ops,
        a,
        declared,
        declared_array: declared.and_then(Shape::as_array),
        callees,
    };
    if opcode.is_elementwise_unary() {
        return elementwise::unary(&cx);
    }
    if opcode.is_elementwise_binary() {
        return elementwise::binary(&cx);
    }
    match opcode {
        Parameter
        | Constant
        | Rng
        | RngBitGenerator
        | RngGetAndUpdateState
        | CustomCall
        | Bitcast
        | Infeed
        | Outfeed
        | Send
        | SendDone
        | Recv
        | RecvDone
        | AllGather
        | AllGatherStart
        | AllGatherDone
        | AllReduceStart
        | AllReduceDone
        | AllToAll
        | RaggedAllToAll
        | ReduceScatter
        | CollectiveBroadcast
        | CollectivePermute
        | CollectivePermuteStart
        | CollectivePermuteDone
        | AsyncStart
        | AsyncUpdate
        | AsyncDone
        | CopyStart
        | CopyDone
        | Domain
        | DynamicReshape
        | SetDimensionSize
        | BatchNormGrad
        | BatchNormInference
        | BatchNormTraining
        | StochasticConvert
        | RaggedDot
        | ScaledDot
        | AllReduce => opaque::declared(&cx),
        Compare | Complex | Select | Clamp | Convert | BitcastConvert | ReducePrecision | Copy => {
            elementwise::others(&cx)
        }
        Broadcast | Reshape | Transpose | Reverse | Slice | Concatenate | Pad | Iota => {
            movement::infer(&cx)
        }
        Dot | Convolution => contraction::infer(&cx),
        Reduce | ReduceWindow | SelectAndScatter | Sort => reduction::infer(&cx),
        GetTupleElement | Tuple | DynamicSlice | DynamicUpdateSlice | Gather | Scatter => {
            indexing::infer(&cx)
        }
        Call | Fusion | Map | While | Conditional => control::infer(&cx),
        Fft | AfterAll | AddDependency | OptimizationBarrier | PartitionId | ReplicaId
        | GetDimensionSize | Cholesky | TriangularSolve | TopK => misc::infer(&cx),
        _ => Ok(None),
    }
}

/// Boxed: the error carries shapes, and the success path (every instruction verified) should
/// not pay for moving them.
pub(super) type R<T> = Result<T, Box<ShapeError>>;

/// The error `e`, boxed.
pub(super) fn fail<T>(e: ShapeError) -> R<T> {
    Err(Box::new(e))
}

pub(super) fn arr<'a>(ops: &[&'a Shape], i: usize) -> R<&'a ArrayShape> {
    match ops.get(i) {
        Some(Shape::Array(a)) => Ok(a),
        Some(s) => fail(ShapeError::NotArray {
            index: i,
            found: (*s).clone(),
        }),
        None => fail(ShapeError::MissingOperand { index: i }),
    }
}

/// A required attribute, or the error that names it as the text format spells it (`attr`,
/// e.g. `"dimensions="`): the one place the families turn an absent attribute into an error.
pub(super) fn required<T>(v: Option<T>, opcode: Opcode, attr: &'static str) -> R<T> {
    v.ok_or_else(|| Box::new(ShapeError::MissingAttribute { opcode, attr }))
}

/// The result of an opcode whose outputs mirror its operands (all-reduce, sort): the one
/// operand's shape, or a tuple of all of them.
pub(super) fn mirror_operands(ops: &[&Shape]) -> Shape {
    if ops.len() == 1 {
        ops.first()
            .map(|s| s.without_layout())
            .unwrap_or(Shape::Token)
    } else {
        Shape::Tuple(ops.iter().map(|s| s.without_layout()).collect())
    }
}

pub(super) fn count(ops: &[&Shape], n: usize, opcode: Opcode) -> R<()> {
    if ops.len() != n {
        return fail(ShapeError::OperandCount {
            opcode,
            expected: n,
            found: ops.len(),
        });
    }
    Ok(())
}

pub(super) fn dims_of(s: &ArrayShape) -> Vec<i64> {
    s.dims.clone()
}

pub(super) fn array(ty: PrimitiveType, dims: Vec<i64>) -> Shape {
    Shape::array(ty, dims)
}

pub(super) fn idx(d: i64, rank: usize, what: &str) -> R<usize> {
    usize::try_from(d)
        .ok()
        .filter(|&u| u < rank)
        .ok_or_else(|| {
            Box::new(ShapeError::OutOfRange {
                what: what.to_owned(),
                value: d,
                rank,
            })
        })
}

pub(super) fn check_unique(v: &[i64], what: &'static str) -> R<()> {
    let mut seen = HashSet::new();
    for d in v {
        if !seen.insert(d) {
            return fail(ShapeError::Repeated {
                what,
                dims: v.to_vec(),
                repeated: *d,
            });
        }
    }
    Ok(())
}

pub(super) fn window_out(d: i64, w: &WindowDim) -> R<i64> {
    if w.stride <= 0 || w.lhs_dilation <= 0 || w.rhs_dilation <= 0 || w.size < 0 {
        return fail(ShapeError::InvalidWindow(*w));
    }
    let dilated_base = if d == 0 {
        0
    } else {
        d.saturating_sub(1)
            .saturating_mul(w.lhs_dilation)
            .saturating_add(1)
    };
    let padded = dilated_base
        .saturating_add(w.pad_low)
        .saturating_add(w.pad_high);
    let dilated_window = if w.size == 0 {
        0
    } else {
        (w.size - 1)
            .saturating_mul(w.rhs_dilation)
            .saturating_add(1)
    };
    if padded < dilated_window {
        return Ok(0);
    }
    Ok(padded.saturating_sub(dilated_window) / w.stride + 1)
}

pub(super) fn callee(
    lookup: Option<CalleeLookup<'_>>,
    id: Option<ComputationId>,
    what: &'static str,
) -> R<Option<Signature>> {
    let Some(id) = id else {
        return fail(ShapeError::MissingCallee { what });
    };
    Ok(match lookup {
        Some(f) => Some(f(id).ok_or(ShapeError::UnknownCallee { what })?),
        None => None,
    })
}

pub(super) fn check_params(sig: &Signature, args: &[&Shape], what: &str) -> R<()> {
    if sig.params.len() != args.len() {
        return fail(ShapeError::ParamCount {
            what: what.to_owned(),
            params: sig.params.len(),
            args: args.len(),
        });
    }
    for (i, (p, a)) in sig.params.iter().zip(args).enumerate() {
        if !p.compatible(a) {
            return fail(ShapeError::ParamShape {
                what: what.to_owned(),
                index: i,
                param: p.clone(),
                arg: (*a).clone(),
            });
        }
    }
    Ok(())
}

/// Checks a reducer-like computation (reduce, reduce-window, sort comparator excluded): `2n`
/// scalar parameters and a result of `n` scalars matching the init values.
pub(super) fn check_reducer(sig: &Signature, inits: &[PrimitiveType], what: &'static str) -> R<()> {
    let n = inits.len();
    if sig.params.len() != 2 * n {
        return fail(ShapeError::ReducerParamCount {
            what,
            found: sig.params.len(),
            expected: 2 * n,
        });
    }
    let results: Vec<&Shape> = match (&sig.result, n) {
        (Shape::Tuple(t), n) if n > 1 || t.len() == 1 => t.iter().collect(),
        (s, 1) => vec![s],
        (s, _) => {
            return fail(ShapeError::ReducerNotTuple {
                what,
                n,
                result: s.clone(),
            })
        }
    };
    if results.len() != n {
        return fail(ShapeError::ReducerResultCount {
            what,
            found: results.len(),
            expected: n,
        });
    }
    for (i, (r, t)) in results.iter().zip(inits).enumerate() {
        if !r.compatible(&Shape::scalar(*t)) {
            return fail(ShapeError::ReducerResultType {
                what,
                index: i,
                found: (*r).clone(),
                expected: *t,
            });
        }
    }
    Ok(())
}

/// Ceiling division for a non-negative numerator and positive divisor.
pub(super) trait DivCeilNonneg {
    fn div_ceil_nonneg(self, d: i64) -> i64;
}

impl DivCeilNonneg for i64 {
    fn div_ceil_nonneg(self, d: i64) -> i64 {
        self / d + i64::from(self % d != 0)
    }
}

/// True when a constant's literal has the tuple / array structure of its shape (element counts
/// are checked separately).
pub(super) fn literal_matches(l: Option<&ConstantLiteral>, s: &Shape) -> bool {
    match (l, s) {
        (None, _) => false,
        (Some(ConstantLiteral::Elided), _) => true,
        (Some(ConstantLiteral::Array(_)), Shape::Array(_)) => true,
        (Some(ConstantLiteral::Tuple(t)), Shape::Token) => t.is_empty(),
        (Some(ConstantLiteral::Tuple(t)), Shape::Tuple(ss)) => {
            t.len() == ss.len() && t.iter().zip(ss).all(|(l, s)| literal_matches(Some(l), s))
        }
        _ => false,
    }
}

pub(super) fn check_indices(ops: &[&Shape], from: usize, rank: usize, opcode: Opcode) -> R<()> {
    let n = ops.len().saturating_sub(from);
    if n != rank {
        return fail(ShapeError::StartIndexCount {
            opcode,
            rank,
            found: n,
        });
    }
    for i in from..ops.len() {
        let s = arr(ops, i)?;
        if s.rank() != 0 || !s.element_type.is_int() {
            return fail(ShapeError::StartIndexType {
                opcode,
                index: i - from,
                found: s.clone(),
            });
        }
    }
    Ok(())
}
