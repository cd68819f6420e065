//! What the compiler cannot compile in an instruction, typed: the reason of
//! [`CompileError::Unsupported`](crate::CompileError::Unsupported).
//!
//! One enum per concept, as naga's validator groups its errors: the instruction in general
//! ([`Unsupported`] itself), constants, gemms, control flow, custom calls, collectives,
//! collective-permutes, the passes that expand an instruction into others, and sharding. A caller
//! matches on what is missing instead of on a message; each variant's `Display` is the text the
//! reason had when it was a string, so messages are unchanged.
use hlo::{HloSharding, Opcode, PrimitiveType, RandomAlgorithm, Shape};

use crate::passes::fft::MAX_TWIDDLE_ELEMENTS;

/// Why an instruction cannot be compiled.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Unsupported {
    /// The opcode has no lowering to thunks (nothing earlier rewrote it).
    #[error("no lowering for this instruction")]
    NoLowering,
    /// An operand handle the lowering needs is missing.
    #[error("missing operand {0}")]
    MissingOperand(usize),
    /// A `get-tuple-element` index past its operand's elements.
    #[error("tuple index out of range")]
    TupleIndexOutOfRange,
    /// A bitcast whose result needs more bytes than its operand has.
    #[error("bitcast to a larger shape")]
    BitcastToLargerShape,
    /// A convolution with other than two operands.
    #[error("a convolution takes two operands")]
    ConvolutionOperands,
    /// A constant the lowering cannot embed.
    #[error(transparent)]
    Constant(#[from] UnsupportedConstant),
    /// A dot the gemm lowering cannot express.
    #[error(transparent)]
    Gemm(#[from] UnsupportedGemm),
    /// A `while` or `conditional` whose parts do not fit together.
    #[error(transparent)]
    ControlFlow(#[from] UnsupportedControlFlow),
    /// A custom call's API version, configuration or layouts.
    #[error(transparent)]
    CustomCall(#[from] UnsupportedCustomCall),
    /// An all-reduce, all-gather or reduce-scatter.
    #[error(transparent)]
    Collective(#[from] UnsupportedCollective),
    /// A collective-permute and its `source_target_pairs`.
    #[error(transparent)]
    Permute(#[from] UnsupportedPermute),
    /// An instruction a pass expands into others (complex dots, FFTs, random bits, triangular
    /// solves, Cholesky factorizations).
    #[error(transparent)]
    Expansion(#[from] UnsupportedExpansion),
    /// Sharding annotations and Shardy's calls.
    #[error(transparent)]
    Sharding(#[from] UnsupportedSharding),
}

/// A `constant` the lowering cannot embed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum UnsupportedConstant {
    /// A tuple-shaped constant.
    #[error("tuple constants are not supported")]
    Tuple,
    /// The text printed `{...}` instead of the values.
    #[error("the constant's values were elided")]
    Elided,
    /// The literal has another number of elements than the shape.
    #[error("the literal's element count does not match its shape")]
    ElementCount,
    /// An element type with no host encoding here.
    #[error("constants of type {0} are not supported")]
    ElementType(PrimitiveType),
}

/// A dot the gemm lowering cannot express.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum UnsupportedGemm {
    /// The dimension numbers name dimensions the operands lack.
    #[error("bad dot dimension numbers")]
    DimensionNumbers,
    /// The left operand's layout is not a (possibly transposed) row-major matrix batch.
    #[error("lhs is not in a gemm layout")]
    LhsLayout,
    /// The right operand's layout is not a (possibly transposed) row-major matrix batch.
    #[error("rhs is not in a gemm layout")]
    RhsLayout,
    /// A dot with other than two operands.
    #[error("dot needs two operands")]
    Operands,
    /// The operands' batch dimensions differ.
    #[error("batch sizes differ")]
    BatchSizes,
    /// The operands' contracting dimensions differ.
    #[error("contracting sizes differ")]
    ContractingSizes,
    /// An operand or the result is a tuple.
    #[error("operand is not an array")]
    NotAnArray,
    /// An element type the artifact cannot name.
    #[error("element type")]
    ElementType,
    /// A pair of element types no gemm computes.
    #[error("no gemm for {lhs} x {rhs}")]
    Types {
        /// The left operand's element type.
        lhs: PrimitiveType,
        /// The right operand's element type.
        rhs: PrimitiveType,
    },
    /// A dot algorithm XLA:GPU does not run on these types, or this compiler does not run
    /// (`hlo::DotAlgorithm::supports`).
    #[error("algorithm={} is not supported for {lhs} x {rhs} -> {out}", algorithm.name())]
    Algorithm {
        /// The algorithm.
        algorithm: hlo::DotAlgorithm,
        /// The left operand's element type.
        lhs: PrimitiveType,
        /// The right operand's element type.
        rhs: PrimitiveType,
        /// The result's element type.
        out: PrimitiveType,
    },
}

/// A `while` or `conditional` whose parts do not fit together.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum UnsupportedControlFlow {
    /// A `while` missing its condition or body computation.
    #[error("while without condition or body")]
    WhileParts,
    /// A `while` without its loop-state operand.
    #[error("while without operand")]
    WhileOperand,
    /// The initial value's shape is not the loop state's.
    #[error("the init value does not match the loop state")]
    InitValue,
    /// The condition computation does not return a `pred[]`.
    #[error("the condition does not return a pred")]
    Condition,
    /// The body computation does not return the loop state.
    #[error("the body does not return the loop state")]
    Body,
    /// A `conditional` without its selector operand.
    #[error("conditional without selector")]
    Selector,
    /// A `conditional` without branch computations.
    #[error("conditional without branches")]
    Branches,
    /// Branch operands and branch computations differ in number.
    #[error("operand count does not match the branches")]
    BranchOperands,
    /// A branch returns another shape than the conditional.
    #[error("a branch result does not match the conditional's shape")]
    BranchResult,
}

/// A custom call's API version, configuration or layouts.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum UnsupportedCustomCall {
    /// An `api_version` other than XLA's four.
    #[error("api_version {0}")]
    ApiVersion(String),
    /// A typed-FFI call whose backend config is not an attribute dictionary.
    #[error("typed-FFI backend_config {config:?}: {error}")]
    FfiAttributes {
        /// The backend config as written.
        config: String,
        /// What is wrong with it.
        error: crate::FfiAttributesError,
    },
    /// A target of XLA:CPU ([`proto::cpu_custom_call_library`]): the module was
    /// lowered for the CPU.
    #[error(
        "\"{target}\" is an XLA:CPU target ({library}): {}",
        proto::CPU_TARGET_ADVICE
    )]
    CpuTarget {
        /// The target name.
        target: String,
        /// The library behind it.
        library: &'static str,
    },
    /// A result with a non-default layout read other than through `get-tuple-element`.
    #[error("a result with a non-default layout is used other than through get-tuple-element")]
    ResultLayoutUse,
    /// `operand_layout_constraints` and operands differ in number.
    #[error("{constraints} operand_layout_constraints for {operands} operands")]
    LayoutConstraintCount {
        /// How many constraints.
        constraints: usize,
        /// How many operands.
        operands: usize,
    },
    /// An operand's shape differs from its layout constraint's.
    #[error("operand {operand} is {shape} but its layout constraint is {constraint}")]
    LayoutConstraint {
        /// The operand's number.
        operand: usize,
        /// Its shape, without layout (boxed, as the constraint: shapes are large).
        shape: Box<Shape>,
        /// The constraint.
        constraint: Box<Shape>,
    },
}

/// An all-reduce, all-gather or reduce-scatter the lowering cannot express.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum UnsupportedCollective {
    /// A reducing collective without its `to_apply` computation.
    #[error("no reduction computation")]
    NoReduction,
    /// A reduction computation whose root is not add, multiply, minimum or maximum (`None`:
    /// it has no root).
    #[error("reduction {0:?} is not sum/product/min/max")]
    Reduction(Option<Opcode>),
    /// An all-gather or reduce-scatter along a dimension with non-unit dimensions before it.
    #[error("only leading-dimension gathers/scatters are supported")]
    Dimension,
    /// Replica groups in iota form (`[2,2]<=[4]`), as their text.
    #[error("iota replica groups {0}")]
    IotaReplicaGroups(String),
    /// An element type the artifact cannot name.
    #[error("element type")]
    ElementType,
    /// Operand and result leaves differ in number.
    #[error("operands and results differ in number")]
    Leaves,
}

/// A collective-permute and its `source_target_pairs`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum UnsupportedPermute {
    /// A permute of other than one array.
    #[error("a collective-permute of one array is supported")]
    NotOneArray,
    /// No `source_target_pairs` attribute.
    #[error("no source_target_pairs")]
    NoPairs,
    /// `source_target_pairs` that do not parse, as written.
    #[error("source_target_pairs={0} is not {{{{s,t}},...}}")]
    PairsSyntax(String),
    /// A pair naming a device outside the permute's devices.
    #[error("source_target_pairs has {{{sender},{receiver}}}, outside the {sources} sources and {targets} targets of its {}", if *.cross_partition { "partitions" } else { "replicas" })]
    PairOutside {
        /// The pair's source device.
        sender: i64,
        /// The pair's target device.
        receiver: i64,
        /// How many devices may send.
        sources: i64,
        /// How many devices may receive.
        targets: i64,
        /// Whether the devices are partitions (a channel id) or replicas.
        cross_partition: bool,
    },
    /// A device that sends twice or receives twice.
    #[error("source_target_pairs has {{{sender},{receiver}}}: a device is a source once and a target once")]
    PairRepeated {
        /// The pair's source device.
        sender: i64,
        /// The pair's target device.
        receiver: i64,
    },
}

/// An instruction a pass expands into others but cannot expand.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum UnsupportedExpansion {
    /// A complex dot or convolution with other than two operands.
    #[error("a {} takes two operands", .0.name())]
    ComplexOperands(Opcode),
    /// A dot or convolution of a complex and a real operand.
    #[error("a {} mixing complex and real operands is not supported", .0.name())]
    ComplexMixed(Opcode),
    /// An `fft` missing its operand, `fft_type` or `fft_length`.
    #[error("fft needs one operand, fft_type and fft_length")]
    FftParts,
    /// An FFT length whose DFT matrix is past what the fallback embeds.
    #[error("fft_length {length} needs a {length}x{columns} twiddle matrix, more than the {MAX_TWIDDLE_ELEMENTS} elements the DFT fallback embeds; compile with emit_fft_thunk (a runtime from {} on)", proto::rollout::FFT_THUNK.stage1)]
    FftTwiddles {
        /// The transform length.
        length: i64,
        /// The matrix's other dimension (`length`, or `length / 2 + 1` for real transforms).
        columns: i64,
    },
    /// A `rng-bit-generator` without its state operand.
    #[error("rng-bit-generator needs a state")]
    RngState,
    /// A `rng-bit-generator` whose result is not a (state, bits) pair.
    #[error("the result must be (state, bits)")]
    RngResult,
    /// A (state, bits) result whose parts are not arrays.
    #[error("the result must be (state, bits) arrays")]
    RngResultArrays,
    /// A state of the wrong type or length for the algorithm.
    #[error("{} needs a u64[{}] state, found {found}", .algorithm.name(), if *.algorithm == RandomAlgorithm::ThreeFry { "2" } else { "2 or 3" })]
    RngStateShape {
        /// The algorithm (`rng_default` is Philox).
        algorithm: RandomAlgorithm,
        /// The state's shape.
        found: Shape,
    },
    /// Random bits of a type that is not an 8- to 64-bit number.
    #[error("cannot generate {} bits", .0.name())]
    RngBits(PrimitiveType),
    /// A `triangular-solve` without its options.
    #[error("triangular-solve without options")]
    TriangularSolveOptions,
    /// A `triangular-solve` or `cholesky` with a tuple result.
    #[error("a tuple result")]
    TupleResult,
    /// A `triangular-solve` of rank below 2.
    #[error("triangular-solve of rank below 2")]
    TriangularSolveRank,
    /// A `cholesky` whose operand is not a batch of square matrices.
    #[error("cholesky needs [..., n, n]")]
    CholeskyShape,
}

/// Sharding annotations and Shardy's calls this compiler cannot partition.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum UnsupportedSharding {
    /// Annotations in a module of several partitions, compiled without SPMD partitioning.
    #[error("the module has {0} partitions: annotations need SPMD partitioning, which this compiler does not do")]
    AnnotationPartitions(i64),
    /// An annotation with other than one operand.
    #[error("an annotation takes one operand, this one has {0}")]
    AnnotationOperands(usize),
    /// An annotation whose result shape is not its operand's.
    #[error("an annotation whose result shape differs from its operand's")]
    AnnotationShape,
    /// A Shardy call without a frontend attribute it needs.
    #[error("no {0} attribute")]
    ShardyAttribute(String),
    /// A Shardy attribute that does not parse or convert.
    #[error(transparent)]
    Shardy(hlo_front::SdyError),
    /// A Shardy manual computation with shardings and operands differing in number.
    #[error("{shardings} shardings for {operands} operands")]
    ShardyOperands {
        /// How many shardings.
        shardings: usize,
        /// How many operands.
        operands: usize,
    },
    /// A Shardy manual computation without the result a sharding names.
    #[error("no result {0}")]
    ShardyResult(usize),
    /// A split sharding (`Some`) or an SPMD annotation (`None`) in a called computation.
    #[error("SPMD partitioning: {} inside a called computation (loop body, branch or reducer) is not partitioned", called_what(.0.as_ref()))]
    InCalledComputation(Option<HloSharding>),
}

/// What [`UnsupportedSharding::InCalledComputation`] found.
fn called_what(sharding: Option<&HloSharding>) -> String {
    sharding.map_or_else(
        || "an SPMD annotation".to_string(),
        |s| format!("sharding {s}"),
    )
}

#[cfg(test)]
mod tests {
    //! One exact-message test per family: each text is the one the reason had as a string, so a
    //! change here is a change of the compiler's messages.
    use super::*;

    fn text(u: impl Into<Unsupported>) -> String {
        u.into().to_string()
    }

    fn array(t: PrimitiveType, dims: &[i64]) -> Shape {
        Shape::array(t, dims.to_vec())
    }

    #[test]
    fn instruction_messages() {
        assert_eq!(
            text(Unsupported::NoLowering),
            "no lowering for this instruction"
        );
        assert_eq!(text(Unsupported::MissingOperand(2)), "missing operand 2");
        assert_eq!(
            text(Unsupported::TupleIndexOutOfRange),
            "tuple index out of range"
        );
        assert_eq!(
            text(Unsupported::BitcastToLargerShape),
            "bitcast to a larger shape"
        );
        assert_eq!(
            text(Unsupported::ConvolutionOperands),
            "a convolution takes two operands"
        );
    }

    #[test]
    fn constant_messages() {
        use UnsupportedConstant as C;
        assert_eq!(text(C::Tuple), "tuple constants are not supported");
        assert_eq!(text(C::Elided), "the constant's values were elided");
        assert_eq!(
            text(C::ElementCount),
            "the literal's element count does not match its shape"
        );
        assert_eq!(
            text(C::ElementType(PrimitiveType::F8E5M2)),
            "constants of type f8e5m2 are not supported"
        );
    }

    #[test]
    fn gemm_messages() {
        use UnsupportedGemm as G;
        assert_eq!(text(G::DimensionNumbers), "bad dot dimension numbers");
        assert_eq!(text(G::LhsLayout), "lhs is not in a gemm layout");
        assert_eq!(text(G::RhsLayout), "rhs is not in a gemm layout");
        assert_eq!(text(G::Operands), "dot needs two operands");
        assert_eq!(text(G::BatchSizes), "batch sizes differ");
        assert_eq!(text(G::ContractingSizes), "contracting sizes differ");
        assert_eq!(text(G::NotAnArray), "operand is not an array");
        assert_eq!(text(G::ElementType), "element type");
        let types = G::Types {
            lhs: PrimitiveType::U8,
            rhs: PrimitiveType::F32,
        };
        assert_eq!(text(types), "no gemm for u8 x f32");
        let algorithm = G::Algorithm {
            algorithm: hlo::DotAlgorithm::F16F16F32,
            lhs: PrimitiveType::F32,
            rhs: PrimitiveType::F32,
            out: PrimitiveType::F32,
        };
        assert_eq!(
            text(algorithm),
            "algorithm=dot_f16_f16_f32 is not supported for f32 x f32 -> f32"
        );
    }

    #[test]
    fn control_flow_messages() {
        use UnsupportedControlFlow as F;
        assert_eq!(text(F::WhileParts), "while without condition or body");
        assert_eq!(text(F::WhileOperand), "while without operand");
        assert_eq!(
            text(F::InitValue),
            "the init value does not match the loop state"
        );
        assert_eq!(text(F::Condition), "the condition does not return a pred");
        assert_eq!(text(F::Body), "the body does not return the loop state");
        assert_eq!(text(F::Selector), "conditional without selector");
        assert_eq!(text(F::Branches), "conditional without branches");
        assert_eq!(
            text(F::BranchOperands),
            "operand count does not match the branches"
        );
        assert_eq!(
            text(F::BranchResult),
            "a branch result does not match the conditional's shape"
        );
    }

    #[test]
    fn custom_call_messages() {
        use UnsupportedCustomCall as C;
        assert_eq!(
            text(C::ApiVersion("API_VERSION_X".into())),
            "api_version API_VERSION_X"
        );
        let ffi = C::FfiAttributes {
            config: "x".into(),
            error: crate::FfiAttributesError::NotADictionary,
        };
        assert_eq!(
            text(ffi),
            "typed-FFI backend_config \"x\": not a dictionary {...}"
        );
        let cpu = C::CpuTarget {
            target: "lapack_strsm_ffi".into(),
            library: "LAPACK",
        };
        assert_eq!(
            text(cpu),
            "\"lapack_strsm_ffi\" is an XLA:CPU target (LAPACK): the module was lowered for the \
             CPU; lower it for the GPU (`jax.export.export(jax.jit(f), platforms=[\"cuda\"])`, or \
             `jax.jit(f).lower(...)` with a GPU backend)"
        );
        assert_eq!(
            text(C::ResultLayoutUse),
            "a result with a non-default layout is used other than through get-tuple-element"
        );
        let count = C::LayoutConstraintCount {
            constraints: 1,
            operands: 2,
        };
        assert_eq!(text(count), "1 operand_layout_constraints for 2 operands");
        let constraint = C::LayoutConstraint {
            operand: 0,
            shape: Box::new(array(PrimitiveType::F32, &[2, 3])),
            constraint: Box::new(array(PrimitiveType::F32, &[3, 2])),
        };
        assert_eq!(
            text(constraint),
            "operand 0 is f32[2,3] but its layout constraint is f32[3,2]"
        );
    }

    #[test]
    fn collective_messages() {
        use UnsupportedCollective as C;
        assert_eq!(text(C::NoReduction), "no reduction computation");
        assert_eq!(
            text(C::Reduction(Some(Opcode::Subtract))),
            "reduction Some(Subtract) is not sum/product/min/max"
        );
        assert_eq!(
            text(C::Reduction(None)),
            "reduction None is not sum/product/min/max"
        );
        assert_eq!(
            text(C::Dimension),
            "only leading-dimension gathers/scatters are supported"
        );
        assert_eq!(
            text(C::IotaReplicaGroups("[1,2]<=[2]".into())),
            "iota replica groups [1,2]<=[2]"
        );
        assert_eq!(text(C::ElementType), "element type");
        assert_eq!(text(C::Leaves), "operands and results differ in number");
    }

    #[test]
    fn permute_messages() {
        use UnsupportedPermute as P;
        assert_eq!(
            text(P::NotOneArray),
            "a collective-permute of one array is supported"
        );
        assert_eq!(text(P::NoPairs), "no source_target_pairs");
        assert_eq!(
            text(P::PairsSyntax("{0,1".into())),
            "source_target_pairs={0,1 is not {{s,t},...}"
        );
        let outside = |cross_partition| P::PairOutside {
            sender: 0,
            receiver: 4,
            sources: 2,
            targets: 2,
            cross_partition,
        };
        assert_eq!(
            text(outside(false)),
            "source_target_pairs has {0,4}, outside the 2 sources and 2 targets of its replicas"
        );
        assert_eq!(
            text(outside(true)),
            "source_target_pairs has {0,4}, outside the 2 sources and 2 targets of its partitions"
        );
        assert_eq!(
            text(P::PairRepeated {
                sender: 1,
                receiver: 0
            }),
            "source_target_pairs has {1,0}: a device is a source once and a target once"
        );
    }

    #[test]
    fn expansion_messages() {
        use UnsupportedExpansion as E;
        assert_eq!(
            text(E::ComplexOperands(Opcode::Dot)),
            "a dot takes two operands"
        );
        assert_eq!(
            text(E::ComplexMixed(Opcode::Convolution)),
            "a convolution mixing complex and real operands is not supported"
        );
        assert_eq!(
            text(E::FftParts),
            "fft needs one operand, fft_type and fft_length"
        );
        assert_eq!(
            text(E::FftTwiddles { length: 2048, columns: 1025 }),
            format!(
                "fft_length 2048 needs a 2048x1025 twiddle matrix, more than the 1048576 elements the DFT fallback embeds; compile with emit_fft_thunk (a runtime from {} on)",
                proto::rollout::FFT_THUNK.stage1
            )
        );
        assert_eq!(text(E::RngState), "rng-bit-generator needs a state");
        assert_eq!(text(E::RngResult), "the result must be (state, bits)");
        assert_eq!(
            text(E::RngResultArrays),
            "the result must be (state, bits) arrays"
        );
        let state = |algorithm| E::RngStateShape {
            algorithm,
            found: array(PrimitiveType::U64, &[3]),
        };
        assert_eq!(
            text(state(RandomAlgorithm::ThreeFry)),
            "rng_three_fry needs a u64[2] state, found u64[3]"
        );
        assert_eq!(
            text(state(RandomAlgorithm::Philox)),
            "rng_philox needs a u64[2 or 3] state, found u64[3]"
        );
        assert_eq!(
            text(E::RngBits(PrimitiveType::Pred)),
            "cannot generate pred bits"
        );
        assert_eq!(
            text(E::TriangularSolveOptions),
            "triangular-solve without options"
        );
        assert_eq!(text(E::TupleResult), "a tuple result");
        assert_eq!(
            text(E::TriangularSolveRank),
            "triangular-solve of rank below 2"
        );
        assert_eq!(text(E::CholeskyShape), "cholesky needs [..., n, n]");
    }

    #[test]
    fn sharding_messages() {
        use UnsupportedSharding as S;
        assert_eq!(
            text(S::AnnotationPartitions(4)),
            "the module has 4 partitions: annotations need SPMD partitioning, which this compiler does not do"
        );
        assert_eq!(
            text(S::AnnotationOperands(2)),
            "an annotation takes one operand, this one has 2"
        );
        assert_eq!(
            text(S::AnnotationShape),
            "an annotation whose result shape differs from its operand's"
        );
        assert_eq!(
            text(S::ShardyAttribute("xla.sdy.manual_axes".into())),
            "no xla.sdy.manual_axes attribute"
        );
        assert_eq!(
            text(S::ShardyOperands {
                shardings: 1,
                operands: 2
            }),
            "1 shardings for 2 operands"
        );
        assert_eq!(text(S::ShardyResult(1)), "no result 1");
        assert_eq!(
            text(S::InCalledComputation(None)),
            "SPMD partitioning: an SPMD annotation inside a called computation (loop body, branch or reducer) is not partitioned"
        );
    }
}
