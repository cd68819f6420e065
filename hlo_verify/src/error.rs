//! Why shape inference refused an instruction: one variant per check, the values it compared
//! as data (naga's style), and a `Display` that is the message the verifier and the parser
//! report. The instruction itself is not in here: [`crate::VerifyError`] (computation,
//! instruction, location) and the parser's error wrap these.

use thiserror::Error;

use hlo::{ArrayShape, PrimitiveType, Shape};
use hlo::{Opcode, PadDim, WindowDim};

/// What kind of element type an opcode needs (the `needs` of [`ShapeError::ElementType`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// A floating-point (or, where allowed, complex) operand.
    FloatOperand,
    /// A pred or integer operand.
    PredOrIntOperand,
    /// An integer operand.
    IntOperand,
    /// Pred or integer operands (binary bitwise ops).
    PredOrIntOperands,
    /// Integer operands (shifts).
    IntOperands,
    /// f32 or f64 operands (complex).
    F32OrF64Operands,
}

impl std::fmt::Display for Needs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Needs::FloatOperand => "a floating-point operand",
            Needs::PredOrIntOperand => "a pred or integer operand",
            Needs::IntOperand => "an integer operand",
            Needs::PredOrIntOperands => "pred or integer operands",
            Needs::IntOperands => "integer operands",
            Needs::F32OrF64Operands => "f32 or f64 operands",
        })
    }
}

/// An inconsistency between an instruction's operands, attributes, callees and declared shape.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ShapeError {
    // Operands and attributes in general.
    /// Operand `index` is a tuple or token where an array is needed.
    #[error("operand {index} must be an array, found {found}")]
    NotArray { index: usize, found: Shape },
    /// Fewer operands than the opcode reads.
    #[error("missing operand {index}")]
    MissingOperand { index: usize },
    /// An opcode with a fixed operand count.
    #[error("{opcode} takes {expected} operand(s), found {found}")]
    OperandCount {
        opcode: Opcode,
        expected: usize,
        found: usize,
    },
    /// An opcode that needs one operand or more.
    #[error("{opcode} needs at least one operand")]
    NoOperands { opcode: Opcode },
    /// A required attribute is absent (`attr` is how the text format spells it).
    #[error("{opcode} needs {attr}")]
    MissingAttribute { opcode: Opcode, attr: &'static str },
    /// A dimension number (or index) outside `0..rank`.
    #[error("{what} {value} is out of range for rank {rank}")]
    OutOfRange {
        what: String,
        value: i64,
        rank: usize,
    },
    /// A dimension list that names a dimension twice.
    #[error("{what} {dims:?} repeats {repeated}")]
    Repeated {
        what: &'static str,
        dims: Vec<i64>,
        repeated: i64,
    },
    /// A window dimension with a non-positive stride or dilation, or a negative size.
    #[error("invalid window dimension {0:?}")]
    InvalidWindow(WindowDim),
    /// The element type is not one the opcode accepts.
    #[error("{opcode} needs {needs}, found {found}")]
    ElementType {
        opcode: Opcode,
        needs: Needs,
        found: PrimitiveType,
    },
    /// Two operands of an elementwise binary op (or compare) differ in shape.
    #[error("{opcode} operands must have the same shape, found {lhs} and {rhs}")]
    OperandShapes {
        opcode: Opcode,
        lhs: ArrayShape,
        rhs: ArrayShape,
    },

    // Called computations.
    /// The attribute naming the called computation is absent.
    #[error("missing {what}")]
    MissingCallee { what: &'static str },
    /// The called computation id names no computation.
    #[error("{what} refers to a missing computation")]
    UnknownCallee { what: &'static str },
    /// A callee's parameter count differs from the arguments passed.
    #[error("{what} takes {params} parameter(s) but is given {args}")]
    ParamCount {
        what: String,
        params: usize,
        args: usize,
    },
    /// A callee's parameter shape differs from its argument.
    #[error("{what} parameter {index} has shape {param}, but is given {arg}")]
    ParamShape {
        what: String,
        index: usize,
        param: Shape,
        arg: Shape,
    },
    /// A reducer with other than two parameters per input.
    #[error("{what} takes {found} parameter(s), expected {expected}")]
    ReducerParamCount {
        what: &'static str,
        found: usize,
        expected: usize,
    },
    /// A multi-input reducer that does not return a tuple.
    #[error("{what} must return a tuple of {n} scalars, returns {result}")]
    ReducerNotTuple {
        what: &'static str,
        n: usize,
        result: Shape,
    },
    /// A reducer returning other than one value per input.
    #[error("{what} returns {found} value(s), expected {expected}")]
    ReducerResultCount {
        what: &'static str,
        found: usize,
        expected: usize,
    },
    /// A reducer result that is not the scalar of its init value's type.
    #[error("{what} result {index} is {found}, expected {expected}[]")]
    ReducerResultType {
        what: &'static str,
        index: usize,
        found: Shape,
        expected: PrimitiveType,
    },

    // Elementwise.
    /// `complex` of differently shaped parts.
    #[error("complex operands differ: {lhs} and {rhs}")]
    ComplexOperands { lhs: ArrayShape, rhs: ArrayShape },
    /// A select predicate that is not pred.
    #[error("select predicate must be pred, found {0}")]
    SelectPredicateType(ArrayShape),
    /// Select branches of different shapes.
    #[error("select branches differ: {on_true} and {on_false}")]
    SelectBranches {
        on_true: ArrayShape,
        on_false: ArrayShape,
    },
    /// A non-scalar select predicate of other dimensions than the branches.
    #[error("select predicate {pred} does not match {on_true}")]
    SelectPredicateShape {
        pred: ArrayShape,
        on_true: ArrayShape,
    },
    /// A clamp bound that is neither a scalar nor the operand's shape, or of another type.
    #[error("clamp bound {bound} does not match operand {operand}")]
    ClampBound {
        bound: ArrayShape,
        operand: ArrayShape,
    },
    /// A constant whose literal is a tuple where the shape is an array, or the reverse.
    #[error("constant literal does not have the structure of {0}")]
    ConstantStructure(Shape),
    /// A constant with more or fewer values than its shape has elements.
    #[error("constant has {values} values, its shape {shape} needs {needs}")]
    ConstantValueCount {
        values: usize,
        shape: ArrayShape,
        needs: u64,
    },

    // Data movement.
    /// Broadcast dimensions not one per operand dimension.
    #[error("broadcast dimensions {dims:?} must have one entry per operand dimension ({rank})")]
    BroadcastRank { dims: Vec<i64>, rank: usize },
    /// A broadcast operand dimension (neither 1 nor equal) mapped onto a result dimension.
    #[error("broadcast operand dimension {operand_dim} ({size}) does not match result dimension {result_dim} ({result_size})")]
    BroadcastDim {
        operand_dim: usize,
        size: i64,
        result_dim: usize,
        result_size: i64,
    },
    /// A reshape that changes the element count.
    #[error("reshape changes the element count: {operand} has {operand_count}, {result} has {result_count}")]
    ReshapeCount {
        operand: ArrayShape,
        operand_count: u64,
        result: ArrayShape,
        result_count: u64,
    },
    /// A transpose permutation of the wrong length.
    #[error("transpose permutation {perm:?} does not match rank {rank}")]
    TransposeRank { perm: Vec<i64>, rank: usize },
    /// `slice=` with other than one entry per operand dimension.
    #[error("slice has {dims} dimension(s), operand rank is {rank}")]
    SliceRank { dims: usize, rank: usize },
    /// A slice range outside its dimension, reversed, or with a non-positive stride.
    #[error("slice dimension {dim} [{start}:{limit}:{stride}] is invalid for size {size}")]
    SliceDim {
        dim: usize,
        start: i64,
        limit: i64,
        stride: i64,
        size: i64,
    },
    /// `concatenate` with other than one dimension.
    #[error("concatenate needs exactly one dimension, found {0:?}")]
    ConcatenateDims(Vec<i64>),
    /// A concatenate operand of another type or rank than the first.
    #[error("concatenate operand {index} ({operand}) does not match {first}")]
    ConcatenateOperand {
        index: usize,
        operand: ArrayShape,
        first: ArrayShape,
    },
    /// A concatenate operand differing from the first outside the concatenated dimension.
    #[error("concatenate operand {index} ({operand}) differs from {first} in dimension {dim}")]
    ConcatenateDim {
        index: usize,
        operand: ArrayShape,
        first: ArrayShape,
        dim: usize,
    },
    /// A pad value that is not a scalar of the operand's type.
    #[error("pad value must be a {ty}[] scalar, found {value}")]
    PadValue {
        ty: PrimitiveType,
        value: ArrayShape,
    },
    /// `padding=` with other than one entry per operand dimension.
    #[error("padding has {dims} dimension(s), operand rank is {rank}")]
    PaddingRank { dims: usize, rank: usize },
    /// Negative interior padding.
    #[error("negative interior padding {0}")]
    NegativeInterior(i64),
    /// Padding (negative edges) that leaves a dimension below zero.
    #[error("padding {padding:?} makes dimension {size} negative")]
    NegativePadding { padding: PadDim, size: i64 },
    /// `get-tuple-element` of a non-tuple.
    #[error("get-tuple-element needs a tuple operand")]
    TupleOperand,
    /// A tuple index past the tuple (already range-checked: kept so no path can panic).
    #[error("bad index")]
    TupleIndex,
    /// `dynamic_slice_sizes=` of the wrong length.
    #[error("dynamic_slice_sizes {sizes:?} does not match rank {rank}")]
    DynamicSliceRank { sizes: Vec<i64>, rank: usize },
    /// A dynamic-slice size larger than its dimension (or negative).
    #[error("dynamic slice size {size} exceeds dimension {dim}")]
    DynamicSliceSize { size: i64, dim: i64 },
    /// A dynamic-update-slice update of another rank or type.
    #[error("update {update} does not match operand {operand}")]
    UpdateMismatch {
        update: ArrayShape,
        operand: ArrayShape,
    },
    /// A dynamic-update-slice update larger than the operand in some dimension.
    #[error("update {update} is larger than operand {operand}")]
    UpdateTooLarge {
        update: ArrayShape,
        operand: ArrayShape,
    },
    /// Other than one start index per operand dimension.
    #[error("{opcode} needs {rank} start index operand(s), found {found}")]
    StartIndexCount {
        opcode: Opcode,
        rank: usize,
        found: usize,
    },
    /// A start index that is not an integer scalar.
    #[error("{opcode} start index {index} must be an integer scalar, found {found}")]
    StartIndexType {
        opcode: Opcode,
        index: usize,
        found: ArrayShape,
    },
    /// `gather` without dimension numbers.
    #[error("gather needs dimension numbers")]
    GatherDimensionNumbers,
    /// Gather `slice_sizes=` of the wrong length.
    #[error("slice_sizes {sizes:?} does not match operand rank {rank}")]
    GatherSliceRank { sizes: Vec<i64>, rank: usize },
    /// `index_vector_dim` past the indices' rank.
    #[error("index_vector_dim {0} out of range")]
    IndexVectorDim(i64),
    /// `start_index_map` of another length than the index vector.
    #[error("start_index_map {map:?} has {} entries, the index vector has {index_len}", map.len())]
    StartIndexMap { map: Vec<i64>, index_len: i64 },
    /// `offset_dims` of another length than the slice dimensions kept.
    #[error("offset_dims {dims:?} has {} entries, expected {expected}", dims.len())]
    OffsetDims { dims: Vec<i64>, expected: usize },
    /// `offset_dims` naming a dimension past the result's rank.
    #[error("gather offset_dims out of range")]
    OffsetDimsRange,
    /// Scatter with other than 2n+1 operands.
    #[error("scatter takes 2n+1 operands, found {0}")]
    ScatterOperands(usize),

    // Contractions.
    /// Dot batch or contracting lists of different lengths on the two sides.
    #[error("dot batch / contracting dimension lists differ in length")]
    DotDimsLength,
    /// A dot dimension listed twice (as batch and contracting, or twice in one list).
    #[error("dot dimension used twice ({what} {lhs}/{rhs})")]
    DotDimTwice {
        what: &'static str,
        lhs: i64,
        rhs: i64,
    },
    /// A batch or contracting pair of different sizes.
    #[error("dot {what} dimensions differ: lhs {lhs_dim} of {lhs} vs rhs {rhs_dim} of {rhs}")]
    DotDimSize {
        what: &'static str,
        lhs_dim: i64,
        lhs: ArrayShape,
        rhs_dim: i64,
        rhs: ArrayShape,
    },
    /// Convolution operand ranks that do not fit `dim_labels=`.
    #[error("convolution ranks do not match dim_labels: {lhs}, {kernel}")]
    ConvolutionRanks { lhs: ArrayShape, kernel: ArrayShape },
    /// Input features other than kernel input features times the feature group count.
    #[error("convolution input features ({input}) != kernel input features ({kernel}) x feature_group_count ({groups})")]
    ConvolutionFeatures {
        input: i64,
        kernel: i64,
        groups: i64,
    },
    /// A convolution window of another rank than the spatial dimensions.
    #[error("window has {window} dimension(s), convolution has {spatial} spatial")]
    ConvolutionWindowRank { window: usize, spatial: usize },
    /// A window size other than the kernel's spatial size.
    #[error("window size {size} does not match kernel spatial dimension {dim} of {kernel}")]
    ConvolutionWindowSize {
        size: i64,
        dim: i64,
        kernel: ArrayShape,
    },
    /// rfft of other than f32 or f64.
    #[error("rfft needs f32 or f64, found {0}")]
    RfftElementType(PrimitiveType),
    /// An fft_length of other than 1 to 3 positive lengths, or longer than the operand's rank.
    #[error("fft_length {length:?} must hold 1 to 3 positive lengths, at most the operand's rank {rank}")]
    FftLength { length: Vec<i64>, rank: usize },
    /// An fft, ifft or irfft operand that is not complex.
    #[error("{fft_type} needs a c64 or c128 operand, found {found}")]
    FftElementType {
        fft_type: &'static str,
        found: PrimitiveType,
    },
    /// A transformed dimension that does not match fft_length (irfft's last: length/2+1).
    #[error("{fft_type} of {operand} with fft_length {length:?}: dimension {dim} must be {want}")]
    FftDimension {
        fft_type: &'static str,
        operand: ArrayShape,
        length: Vec<i64>,
        dim: usize,
        want: i64,
    },
    /// triangular-solve's or cholesky's `a` that is not `[..., n, n]`.
    #[error("a must be [..., n, n], found {0}")]
    TriangularSolveA(ArrayShape),
    /// triangular-solve's `b` whose batch or solved dimension does not fit `a`.
    #[error("b {b} does not fit a {a}: left_side={left_side} needs b {need}")]
    TriangularSolveB {
        a: ArrayShape,
        b: ArrayShape,
        left_side: bool,
        need: &'static str,
    },
    /// triangular-solve operands of different or non-floating element types.
    #[error("needs floating-point or complex operands of one type, found {a} and {b}")]
    TriangularSolveType { a: PrimitiveType, b: PrimitiveType },
    /// cholesky of an operand that is neither floating-point nor complex.
    #[error("needs a floating-point or complex operand, found {0}")]
    CholeskyType(PrimitiveType),
    /// `bitcast-convert` between widths that do not divide each other, from or to `pred` or a
    /// complex type, or to a wider type from an operand whose minor dimension is not the ratio.
    #[error("{operand} to {to}: the widths must divide each other (no pred or complex), and to a wider type the minor dimension must be the ratio")]
    BitcastShape {
        operand: ArrayShape,
        to: PrimitiveType,
    },
    /// `topk` with k past the last dimension.
    #[error("topk k={k} exceeds the last dimension {dim}")]
    TopK { k: i64, dim: i64 },

    // Reductions and sort.
    /// Reduce with an odd or zero operand count.
    #[error("reduce takes 2n operands (inputs then inits), found {0}")]
    ReduceOperands(usize),
    /// Reduce-window with an odd or zero operand count.
    #[error("reduce-window takes 2n operands, found {0}")]
    ReduceWindowOperands(usize),
    /// A reduce (or reduce-window) input of other dimensions than the first.
    #[error("{opcode} input {index} ({input}) differs from {first}")]
    ReduceInput {
        opcode: Opcode,
        index: usize,
        input: ArrayShape,
        first: ArrayShape,
    },
    /// A reduce init value that is not a scalar.
    #[error("reduce init value {index} must be a scalar, found {init}")]
    ReduceInit { index: usize, init: ArrayShape },
    /// A reduce-window init value that is not a scalar.
    #[error("reduce-window init {index} must be a scalar, found {init}")]
    ReduceWindowInit { index: usize, init: ArrayShape },
    /// A reduce-window window of another rank than the operand.
    #[error("window has {window} dimension(s), operand rank is {rank}")]
    WindowRank { window: usize, rank: usize },
    /// Sort operands of different dimensions.
    #[error("sort operands must have equal dimensions")]
    SortDims,
    /// A sort comparator without two parameters per operand.
    #[error("sort comparator takes {found} parameter(s), expected {expected}")]
    ComparatorParams { found: usize, expected: usize },
    /// A sort comparator that does not return pred[].
    #[error("sort comparator must return pred[], returns {0}")]
    ComparatorResult(Shape),

    // Control flow.
    /// Map operands of different dimensions.
    #[error("map operands must have equal dimensions")]
    MapDims,
    /// A map computation with other than one parameter per operand.
    #[error("map to_apply parameter count differs from operand count")]
    MapParamCount,
    /// A map computation whose result is not a scalar.
    #[error("map to_apply must return a scalar")]
    MapResult,
    /// `while` without its operand (already counted: kept so no path can panic).
    #[error("while needs an operand")]
    WhileOperand,
    /// A while condition that does not return pred[].
    #[error("while condition must return pred[], returns {0}")]
    WhileCondition(Shape),
    /// A while body whose result is not the loop state.
    #[error("while body returns {body}, but the loop state is {state}")]
    WhileBody { body: Shape, state: Shape },
    /// An indexed conditional whose index is not s32[].
    #[error("conditional branch index must be s32[], found {0}")]
    BranchIndex(ArrayShape),
    /// A true/false conditional whose predicate is not pred[].
    #[error("conditional predicate must be pred[], found {0}")]
    ConditionalPredicate(ArrayShape),
    /// A conditional naming no branches.
    #[error("conditional needs branch_computations= or true_/false_computation=")]
    ConditionalBranches,
    /// Other than one branch operand per branch.
    #[error("conditional has {branches} branch(es) but {operands} branch operand(s)")]
    BranchOperands { branches: usize, operands: usize },
    /// A branch returning other than branch 0 does.
    #[error("conditional branch {index} returns {result}, branch 0 returns {first}")]
    BranchResult {
        index: usize,
        result: Shape,
        first: Shape,
    },
}

/// A declared array shape whose layout or dynamic flags do not fit its dimensions.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// `minor_to_major` is not a permutation of `0..rank`.
    #[error("layout of {0} is not a permutation of its dimensions")]
    NotPermutation(Box<ArrayShape>),
    /// Not one dynamic flag per dimension.
    #[error("shape {0} has mismatched dynamic flags")]
    DynamicFlags(Box<ArrayShape>),
}

/// One problem found by the verifier.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{loc}: {computation}/{instruction}: {kind}")]
#[non_exhaustive]
pub struct VerifyError {
    /// Name of the computation.
    pub computation: String,
    /// Name of the instruction (empty for computation-level problems).
    pub instruction: String,
    /// Where the instruction (or computation) was parsed from; `0:0` when not from text.
    pub loc: hlo::SourceLoc,
    /// What is wrong, as data; its `Display` is the message.
    pub kind: VerifyErrorKind,
}

/// What the verifier found wrong with a module: one variant per check, the values it compared as
/// data, and a `Display` that is the message [`crate::VerifyError`] reports after the place.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum VerifyErrorKind {
    /// The module's entry computation id names no computation.
    #[error("entry computation {0} does not exist")]
    NoEntry(u32),
    /// Two computations share a name.
    #[error("computation name '{0}' is used twice")]
    DuplicateComputation(String),
    /// The computation's root handle names none of its instructions.
    #[error("the root is not an instruction of the computation")]
    NoRoot,
    /// `params[n]` is not the `parameter(n)` instruction.
    #[error("params[{0}] is not parameter({0})")]
    ParamSlot(usize),
    /// The parameter instructions and the parameter list differ in count.
    #[error("{instructions} parameter instructions but {registered} registered")]
    ParamCount {
        /// `parameter` instructions in the computation.
        instructions: usize,
        /// Entries of its parameter list.
        registered: usize,
    },
    /// The operand graph has a cycle.
    #[error("the instructions' operands form a cycle")]
    Cycle,
    /// Two instructions of one computation share a name.
    #[error("instruction name '{0}' is used twice")]
    DuplicateInstruction(String),
    /// A layout that does not fit its shape.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// A shape too large for 64-bit sizes.
    #[error(transparent)]
    Size(#[from] hlo::SizeError),
    /// A called computation id names no computation.
    #[error("calls computation #{0} which does not exist")]
    MissingCallee(u32),
    /// An operand handle names no instruction of the computation.
    #[error("operand #{0} does not exist")]
    MissingOperand(u32),
    /// The declared shape is not the one the operands give.
    #[error("{opcode} declares shape {declared} but its operands give {inferred}")]
    DeclaredShape {
        /// The instruction's opcode.
        opcode: Opcode,
        /// Its declared shape (boxed, as `inferred`: shapes are large, most variants small).
        declared: Box<Shape>,
        /// The shape inference gives.
        inferred: Box<Shape>,
    },
    /// Shape inference refused the instruction.
    #[error("{opcode}: {error}")]
    Shape {
        /// The instruction's opcode.
        opcode: Opcode,
        /// Why (boxed: shape inference returns it so, and most variants are small).
        error: Box<ShapeError>,
    },
    /// `entry_computation_layout` differs from the entry computation's signature.
    #[error("entry_computation_layout does not match the entry computation's signature")]
    EntryLayout,
}
