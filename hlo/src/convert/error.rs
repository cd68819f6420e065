//! The typed problems under [`ConvertError`](super::ConvertError): each `Display` is the text
//! that error's `message` (or `what`) carries, so callers that print see what they always did.

use proto::xla as px;
use thiserror::Error;

use crate::shape::PrimitiveType;

/// Why a `ShapeProto` (or program shape) from a proto is not a valid shape.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ShapeProtoError {
    /// Tuples nested past the limit (the limit is the data).
    #[error("tuple shape nested deeper than {0}")]
    TooDeep(usize),
    /// An element type number the proto enum does not have.
    #[error("unknown element type number {0}")]
    UnknownElementType(i32),
    /// `element_type` left at `PRIMITIVE_TYPE_INVALID`.
    #[error("element type is unset")]
    ElementTypeUnset,
    /// A proto element type that is not an array element type here.
    #[error("element type {0:?} is not an array type")]
    NotArrayType(px::PrimitiveType),
    /// A negative dimension size other than the unbounded marker.
    #[error("negative dimension size {0}")]
    NegativeDimension(i64),
    /// `is_dynamic_dimension` set with other than one flag per dimension.
    #[error("is_dynamic_dimension has {entries} entries for rank {rank}")]
    DynamicFlags { entries: usize, rank: usize },
    /// A layout whose `minor_to_major` is not a permutation of the dimensions.
    #[error("layout minor_to_major {minor_to_major:?} is not a permutation of rank {rank}")]
    LayoutNotPermutation {
        minor_to_major: Vec<i64>,
        rank: usize,
    },
    /// A program shape without its result.
    #[error("program shape has no result")]
    NoProgramResult,
}

/// What in the IR `HloModuleProto` cannot carry (the `what` of
/// [`ConvertError::Unrepresentable`](super::ConvertError::Unrepresentable)).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum Unrepresentable {
    /// An element type the proto enum lacks.
    #[error("element type {0}")]
    ElementType(PrimitiveType),
    /// Layout text the parser kept verbatim.
    #[error("layout attribute `{0}`")]
    LayoutAttribute(String),
    /// A constant printed as `{...}`: its values are not known.
    #[error("an elided constant (`{{...}}`)")]
    ElidedConstant,
    /// A constant with more or fewer values than its shape has elements.
    #[error("a constant with {values} values for {elements} elements")]
    ConstantValueCount { values: usize, elements: u64 },
    /// A constant of an element type `LiteralProto` has no field for.
    #[error("a constant of element type {0}")]
    ConstantElementType(PrimitiveType),
    /// A constant whose literal is a tuple where its shape is an array, or the reverse.
    #[error("a constant whose value does not match its shape")]
    ConstantMismatch,
    /// Replica groups in iota form (kept as text).
    #[error("iota replica groups `{0}`")]
    IotaReplicaGroups(String),
    /// Stack-frame table ids that are not 1, 2, ... in order.
    #[error("{what} id {id} at position {position} (ids must be 1, 2, ...)")]
    StackFrameIds {
        what: &'static str,
        id: i64,
        position: usize,
    },
}

/// Why an instruction of a proto is not valid: its literal, attributes or called computations.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ProtoError {
    /// A shape (see [`ShapeProtoError`]).
    #[error(transparent)]
    Shape(#[from] ShapeProtoError),
    /// A token-shaped constant.
    #[error("a token constant")]
    TokenConstant,
    /// A tuple constant with another element count than its shape.
    #[error("tuple constant has {elements} elements, its shape {shape}")]
    TupleConstant { elements: usize, shape: usize },
    /// A constant of an element type this build does not read.
    #[error("a constant of element type {0}")]
    ConstantElementType(PrimitiveType),
    /// A constant with more or fewer values than its shape has elements.
    #[error("constant has {values} values for {elements} elements")]
    ConstantValueCount { values: usize, elements: u64 },
    /// The literal of a constant is invalid (the inner error says how).
    #[error("literal: {0}")]
    Literal(Box<ProtoError>),
    /// A constant without a literal.
    #[error("constant has no literal")]
    NoLiteral,
    /// An iota with other than one dimension.
    #[error("iota needs one dimension, got {0:?}")]
    IotaDimensions(Vec<i64>),
    /// An unknown comparison direction.
    #[error("comparison direction \"{0}\"")]
    ComparisonDirection(String),
    /// A compare without a direction.
    #[error("compare has no comparison_direction")]
    NoComparisonDirection,
    /// An unknown comparison type.
    #[error("comparison type \"{0}\"")]
    ComparisonType(String),
    /// An unknown fusion kind.
    #[error("fusion kind \"{0}\"")]
    FusionKind(String),
    /// An operand precision this build does not know.
    #[error("unsupported operand precision {0}")]
    Precision(i32),
    /// A dot algorithm number this build does not know.
    #[error("unknown dot algorithm {0}")]
    DotAlgorithm(i32),
    /// A dot algorithm on an instruction that is not a dot.
    #[error("{0} has precision_config.algorithm {1}: only a dot takes an algorithm")]
    DotAlgorithmOn(&'static str, i32),
    /// A custom-call API version this build does not know.
    #[error("custom-call api version {0}")]
    ApiVersion(i32),
    /// A backend config that is not UTF-8.
    #[error("backend_config is not UTF-8")]
    BackendConfigUtf8,
    /// An unknown FFT type.
    #[error("fft type {0}")]
    FftType(i32),
    /// An unknown `TriangularSolveOptions.transpose_a`.
    #[error("triangular-solve transpose_a {0}")]
    Transpose(i32),
    /// An unknown `rng-bit-generator` algorithm.
    #[error("rng-bit-generator algorithm {0}")]
    RngAlgorithm(i32),
    /// An unknown RNG distribution.
    #[error("rng distribution {0}")]
    RngDistribution(i32),
    /// Maximal sharding on other than one device.
    #[error("maximal sharding with devices {0:?}")]
    MaximalSharding(Vec<i64>),
    /// A sharding whose tile assignment or parts do not fit together.
    #[error("sharding: {0}")]
    Sharding(String),
    /// A sharding that fails [`crate::ir::HloSharding::check`].
    #[error("sharding: {0}")]
    ShardingCheck(#[from] crate::ir::ShardingError),
    /// A sharding type this build does not read.
    #[error("sharding type {0}")]
    ShardingType(i32),
    /// A while with other than a condition and a body.
    #[error("while takes 2 called computations, got {0}")]
    WhileCallees(usize),
    /// A pred conditional with other than two branches.
    #[error("a pred conditional takes 2 branches, got {0}")]
    PredBranches(usize),
    /// A select-and-scatter with other than a select and a scatter.
    #[error("select-and-scatter takes 2 called computations, got {0}")]
    SelectAndScatterCallees(usize),
    /// An opcode that calls one computation, calling more.
    #[error("{opcode} takes one called computation, got {got}")]
    OneCallee { opcode: &'static str, got: usize },
    /// Parameter numbers that are not exactly `0..n`.
    #[error("parameter numbers must be 0..{n}, found {found}")]
    ParameterNumbers { n: usize, found: i64 },
}
