//! The HLO IR: shapes and primitive types, host literals (real and complex), instructions,
//! computations and modules in arenas with typed handles (sharding included), conversion to and
//! from `HloModuleProto` and the excess-precision rewrite both back ends run.
//!
//! This is the part of HLO the runtime needs (it checks an artifact's embedded module and reads
//! its shapes), so it holds no front end, verifier or evaluator: those are the crates
//! `hlo_text` (HLO text), `hlo_front` (StableHLO, jax.export, format detection), `hlo_verify`
//! and `hlo_eval`, and `ci/crate_deps.sh` fails if the runtime ever reaches them. It knows
//! nothing of GPUs, thunks, buffer assignment or artifacts: the compiler and the runtime both use
//! it, and neither may leak its types into the other through here.
//!
//! # The face
//!
//! Every module is private; what other crates use is re-exported here, in five groups:
//! - **the IR**: [`HloModule`] of [`Computation`]s of [`Instruction`]s addressed by
//!   [`ComputationId`] / [`InstrId`], each with its [`Opcode`], [`Shape`] and typed [`Attrs`]
//!   (dimension numbers, windows, [`HloSharding`], ...). The literal of a `constant` instruction,
//!   kept as its text spelled it, is [`ConstantLiteral`] (the IR module's own name for it is
//!   `Literal`; here that name belongs to host values);
//! - **shapes**: [`Shape`], [`ArrayShape`], [`Layout`], [`PrimitiveType`], the size limit
//!   [`MAX_ELEMENTS`] and its [`SizeError`];
//! - **host values**: [`Literal`] (an [`Array`] or a tuple), the element storage [`Data`] and
//!   [`DType`] (with the 8-bit floats [`F8E4M3FN`] and [`F8E5M2`] and their [`Float8Format`]), the
//!   [`Complex`] scalar with [`parts_of`] / [`from_parts`] and index helpers
//!   ([`element_count`], [`strides`], [`next_index`]);
//! - **proto conversion**: [`from_proto`], [`to_proto`] / [`to_proto_with`], the pre-parse
//!   [`check_proto`], the shape and element-type conversions, all failing with [`ConvertError`];
//! - **rewrites**: [`allow_excess_precision`].
//!
//! [`complex_math`] stays a module: it is a namespace of XLA's elemental complex formulas named
//! after the functions they compute (`complex_math::exp`, `complex_math::sqrt`), which would
//! read wrongly at the crate root.
#![forbid(unsafe_code)]

mod complex;
pub mod complex_math;
mod convert;
mod float8;
mod ir;
mod literal;
mod precision;
mod shape;

pub use complex::{from_parts, parts_of, Complex, Real, C128, C64};
pub use convert::{
    check_proto, check_proto_bytes, check_shape, element_type_at_xla_number,
    element_type_from_proto, element_type_to_proto, from_proto, program_shape_at_xla_numbers,
    shape_from_proto, shape_to_proto, to_proto, to_proto_with, ConvertError, ProtoError,
    ProtoSummary, ShapeProtoError, Unrepresentable, WriteOptions,
};
pub use float8::{Float8Format, F8E4M3FN, F8E5M2};
pub use ir::{
    metadata_string, parse_source_target_pairs, print_source_target_pairs, quote, ArrayLiteral,
    Attrs, CholeskyOptions, ComparisonDirection, ComparisonType, Computation, ComputationId,
    ConvDimensionNumbers, DotAlgorithm, DotDimensionNumbers, FftType, FileLocation, FusionKind,
    GatherDimensionNumbers, HloModule, HloSharding, InstrId, Instruction, IoAlias,
    Literal as ConstantLiteral, LiteralValue, ModuleConfig, OpMetadata, Opcode, OutputOperandAlias,
    PadDim, Precision, ProgramLayout, RandomAlgorithm, RandomDistribution, ReplicaGroups,
    ScatterDimensionNumbers, ShardGroup, ShardingError, ShardingKind, SliceDim, SourceLoc,
    StackFrame, StackFrameIndex, SubgroupKind, TileAssignment, Tiling, Transpose,
    TriangularSolveOptions, Window, WindowDim, MAX_SHARDING_DEVICES, UNSUPPORTED_OPCODES,
};
pub use literal::{
    bf16_from_f64, element_count, f16_from_f64, next_index, strides, Array, DType, Data, Literal,
    LiteralError, NoHostValues, Wide, ALL_DTYPES,
};
pub use precision::allow_excess_precision;
pub use shape::{
    ArrayShape, Layout, PrimitiveType, Shape, SizeError, Tile, MAX_ELEMENTS, TILE_COMBINE_DIM,
    UNBOUNDED_DIM,
};
