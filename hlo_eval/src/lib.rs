//! The reference evaluator: the independent oracle for "identical semantics".
//!
//! [`evaluate`] runs an [`HloModule`]'s entry computation on [`Literal`] arguments by walking
//! each computation's instructions in dependency order, calling sub-computations (`call`,
//! `while`, `conditional`, `map`, reducers, comparators) recursively. Every value is checked
//! against its instruction's declared shape, so a malformed module or a kernel bug is an error
//! rather than a silently wrong answer.
//!
//! Kernels live in one file per op family and work on [`Array`]s:
//! `elementwise`, `movement`, `dot`, `reduce`, `gather`, `sort`. Reducer
//! computations of the form `op(p0, p1)` (add, multiply, maximum, minimum, and, or) are
//! recognised and run natively instead of through the interpreter.
//!
//! Numerics: floats compute in `f64` and round once to the result type; reductions with a
//! recognised reducer accumulate in `f64`; `dot` accumulates in `f64` (`f32`/`f64`) or `f32`
//! (`f16`/`bf16` results). Integer semantics are XLA's (see `elementwise`). A `while` loop
//! runs until its condition is false, unless [`EvalOptions::max_while_iterations`] caps it.
//!
//! Opcodes: see [`SUPPORTED_OPCODES`]; anything else is [`EvalError::Unimplemented`].
//!
//! Dispatch: `Interp::instruction` handles parameters and constants itself and hands every
//! other opcode to one function per family in `dispatch` (values, elementwise, movement,
//! contraction, reduction, control), which reads operands through `dispatch::Step`. That
//! routing, each family's own match and [`SUPPORTED_OPCODES`] list the opcodes separately; a
//! test puts every opcode through the evaluator and fails when one of them is unimplemented
//! though listed as supported, or the other way round, so the lists cannot drift apart.
#![forbid(unsafe_code)]
// The public face is the `pub use` list below; the modules are how the crate is kept (one per
// family of opcodes, and `io`, the corpus's case files).
mod complex_ops;
mod convolution;
mod dispatch;
mod dot;
mod elementwise;
mod error;
mod fft;
mod gather;
mod io;
mod linalg;
mod movement;
mod reduce;
mod rng;
mod sort;

// Case files (`*.io.json`): reading, writing, comparing with tolerances.
pub use io::{
    array_to_json, case_to_json, compare, io_array_to_json, parse_array, parse_io_array, unravel,
    Comparison, ComplexArray, ComplexArrayError, Expected, IoArray, IoCase, IoError, IoFile,
    Mismatch, Scalar, Tolerance, MAX_IO_FILE_BYTES,
};
// Shared with the compiler (one validation of a convolution's attributes) and the harness.
pub use convolution::ConvGeometry;
pub use movement::slice;

use hlo::{Array, DType, Data, Literal};
use hlo::{
    Computation, ComputationId, ConstantLiteral, HloModule, Instruction, LiteralValue, Opcode,
};
use hlo::{PrimitiveType, Shape};

use dispatch::one;
use elementwise::{BinaryOp, UnaryOp};
pub(crate) use error::invalid;
pub use error::EvalError;
use reduce::Reducer;

/// A sub-computation as seen by kernels: scalar (or array) arguments in parameter order, the
/// result's array leaves out.
pub type Callback<'a> = dyn FnMut(&[Array]) -> Result<Vec<Array>, EvalError> + 'a;

/// Maximum nesting of computation calls.
pub const MAX_DEPTH: usize = 256;

/// The opcodes that get past [`hlo::UNSUPPORTED_OPCODES`] but that the evaluator does
/// not implement: collectives (they need several devices), custom calls (foreign code) and token
/// plumbing. Only the compiler implements the first two.
pub const NOT_EVALUATED: &[Opcode] = &[
    Opcode::AddDependency,
    Opcode::AfterAll,
    Opcode::AllGather,
    Opcode::AllReduce,
    Opcode::CollectivePermute,
    Opcode::CustomCall,
    Opcode::ReduceScatter,
];

/// Every opcode the evaluator implements, in [`Opcode::ALL`] order: every opcode but the
/// refused ones ([`hlo::UNSUPPORTED_OPCODES`]) and [`NOT_EVALUATED`]. A new opcode is
/// thereby claimed as evaluated until listed otherwise, and the dispatch test fails until the
/// evaluator implements it or one of the two lists names it.
pub static SUPPORTED_OPCODES: std::sync::LazyLock<Vec<Opcode>> = std::sync::LazyLock::new(|| {
    Opcode::ALL
        .iter()
        .copied()
        .filter(|op| !hlo::UNSUPPORTED_OPCODES.contains(op) && !NOT_EVALUATED.contains(op))
        .collect()
});

/// The evaluator's element type for an IR primitive type.
pub fn dtype_of(t: PrimitiveType) -> Result<DType, EvalError> {
    DType::from_primitive(t).ok_or_else(|| EvalError::UnsupportedType {
        dtype: t.name().to_string(),
    })
}

/// Whether a literal has the given shape (element types and dimensions; layouts ignored).
pub fn literal_matches_shape(lit: &Literal, shape: &Shape) -> bool {
    match (lit, shape) {
        (Literal::Array(a), Shape::Array(s)) => {
            dtype_of(s.element_type).ok() == Some(a.dtype())
                && s.dims.len() == a.rank()
                && s.dims
                    .iter()
                    .zip(a.dims())
                    .all(|(d, n)| usize::try_from(*d).ok() == Some(*n))
        }
        (Literal::Tuple(t), Shape::Tuple(s)) => {
            t.len() == s.len() && t.iter().zip(s).all(|(l, s)| literal_matches_shape(l, s))
        }
        _ => false,
    }
}

/// Prints a shape without layout, `f32[4,5]` / `(f32[], s32[3])`.
fn shape_string(shape: &Shape) -> String {
    match shape {
        Shape::Array(a) => {
            let dims: Vec<String> = a.dims.iter().map(|d| d.to_string()).collect();
            format!("{}[{}]", a.element_type.name(), dims.join(","))
        }
        Shape::Tuple(t) => {
            let parts: Vec<String> = t.iter().map(shape_string).collect();
            format!("({})", parts.join(", "))
        }
        Shape::Token => "token[]".to_string(),
    }
}

/// Evaluation settings.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EvalOptions {
    /// Fail with [`EvalError::WhileLimit`] after this many iterations of any one `while` loop
    /// (`None`: no limit, a non-terminating loop runs forever, as it would on a device).
    pub max_while_iterations: Option<u64>,
    /// XLA's `--xla_allow_excess_precision` (default true, as XLA and the compiler's
    /// `CompileOptions`): evaluate the module as [`hlo::allow_excess_precision`]
    /// rewrites it, so results compare like with like against XLA and against compiled
    /// executables. False: every `f16`/`bf16` result is rounded (strict).
    pub allow_excess_precision: bool,
}

impl Default for EvalOptions {
    fn default() -> EvalOptions {
        EvalOptions {
            max_while_iterations: None,
            allow_excess_precision: true,
        }
    }
}

impl EvalOptions {
    /// Options with a `while` iteration limit.
    pub fn with_while_limit(limit: u64) -> EvalOptions {
        EvalOptions {
            max_while_iterations: Some(limit),
            ..EvalOptions::default()
        }
    }

    /// These options with excess precision allowed or not.
    pub fn excess_precision(mut self, allow: bool) -> EvalOptions {
        self.allow_excess_precision = allow;
        self
    }
}

/// Evaluates the entry computation of `module` on `args` (one per entry parameter, in order).
/// A tuple result stays a tuple; [`Literal::into_leaves`] flattens it as io files list outputs.
pub fn evaluate(module: &HloModule, args: &[Literal]) -> Result<Literal, EvalError> {
    evaluate_with(module, args, &EvalOptions::default())
}

/// [`evaluate`] with explicit [`EvalOptions`].
pub fn evaluate_with(
    module: &HloModule,
    args: &[Literal],
    options: &EvalOptions,
) -> Result<Literal, EvalError> {
    let rewritten;
    let module = if options.allow_excess_precision {
        rewritten = hlo::allow_excess_precision(module);
        &rewritten
    } else {
        module
    };
    let entry = module.get(module.entry).ok_or_else(|| {
        EvalError::Malformed("the entry computation handle is out of range".into())
    })?;
    if args.len() != entry.params.len() {
        return Err(EvalError::ArgumentCount {
            expected: entry.params.len(),
            got: args.len(),
        });
    }
    for (index, (arg, &pid)) in args.iter().zip(&entry.params).enumerate() {
        let p = entry.get(pid).ok_or_else(|| {
            EvalError::Malformed(format!("parameter {index} handle out of range"))
        })?;
        if !literal_matches_shape(arg, &p.shape) {
            return Err(EvalError::Argument {
                index,
                name: p.name.clone(),
                expected: shape_string(&p.shape),
                got: arg.shape_string(),
            });
        }
    }
    // Every declared shape within the pipeline's element limit before any array is sized by
    // one (the kernels' own checks cover arrays computed from attributes).
    for (_, c) in module.iter() {
        for (_, instr) in c.iter() {
            instr
                .shape
                .check_elements(hlo::MAX_ELEMENTS)
                .map_err(|error| EvalError::TooManyElements {
                    computation: c.name.clone(),
                    instruction: instr.name.clone(),
                    error,
                })?;
        }
    }
    Interp { module, options }.run(module.entry, args.to_vec(), 0)
}

/// Evaluates `module` on array arguments and returns the result's array leaves in order.
pub fn evaluate_flat(module: &HloModule, args: &[Array]) -> Result<Vec<Array>, EvalError> {
    let args: Vec<Literal> = args.iter().cloned().map(Literal::Array).collect();
    Ok(evaluate(module, &args)?.into_leaves())
}

/// Recognises a reducer computation `op(p0, p1)` (or `op(p1, p0)`) on scalars, or one that
/// returns its second parameter.
fn builtin_reducer<'a>(module: &HloModule, id: ComputationId) -> Option<Reducer<'a>> {
    let comp = module.get(id)?;
    if comp.params.len() != 2 {
        return None;
    }
    let root = comp.get(comp.root)?;
    if Some(comp.root) == comp.params.get(1).copied() {
        return Some(Reducer::Replace);
    }
    let op = match root.opcode {
        Opcode::Add => BinaryOp::Add,
        Opcode::Multiply => BinaryOp::Multiply,
        Opcode::Maximum => BinaryOp::Maximum,
        Opcode::Minimum => BinaryOp::Minimum,
        Opcode::And => BinaryOp::And,
        Opcode::Or => BinaryOp::Or,
        _ => return None,
    };
    let (p0, p1) = (comp.params[0], comp.params[1]);
    let ops = root.operands.as_slice();
    if ops == [p0, p1] || ops == [p1, p0] {
        Some(Reducer::Builtin(op))
    } else {
        None
    }
}

struct Interp<'m> {
    module: &'m HloModule,
    options: &'m EvalOptions,
}

/// Converts an IR constant literal to an evaluator literal of `shape`.
fn constant(lit: &ConstantLiteral, shape: &Shape) -> Result<Literal, EvalError> {
    match (lit, shape) {
        (ConstantLiteral::Tuple(items), Shape::Tuple(shapes)) if items.len() == shapes.len() => {
            Ok(Literal::Tuple(
                items
                    .iter()
                    .zip(shapes)
                    .map(|(l, s)| constant(l, s))
                    .collect::<Result<_, _>>()?,
            ))
        }
        (ConstantLiteral::Array(a), Shape::Array(s)) => {
            let dtype = dtype_of(s.element_type)?;
            let dims = movement::sizes("constant", &s.dims)?;
            let v = &a.values;
            let data = if dtype.is_complex() {
                let parts = v.iter().map(|x| {
                    let (re, im) = x.as_complex();
                    hlo::Complex::new(re, im)
                });
                Data::from_complex(dtype, parts.collect())
            } else if dtype.is_float() {
                Data::from_wide_f(dtype, v.iter().map(|x| x.as_f64()).collect())
            } else if dtype == DType::Pred {
                Data::Pred(v.iter().map(|x| x.as_bool()).collect())
            } else if dtype.is_signed_int() {
                Data::from_wide_s(dtype, v.iter().map(|x| x.as_i128() as i64).collect())
            } else {
                Data::from_wide_u(
                    dtype,
                    v.iter()
                        .map(|x| match x {
                            LiteralValue::Int(i) => *i as u64,
                            other => other.as_i128() as u64,
                        })
                        .collect(),
                )
            };
            Ok(Literal::Array(Array::new(dims, data)?))
        }
        (ConstantLiteral::Elided, _) => {
            Err(invalid("constant", "the literal's values were elided"))
        }
        _ => Err(invalid(
            "constant",
            format!("literal does not fit {}", shape_string(shape)),
        )),
    }
}

/// Evaluation order: operands before users (depth-first from each instruction in text order).
fn topo_order(comp: &Computation) -> Result<Vec<usize>, EvalError> {
    let n = comp.instructions.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    let mut order = Vec::with_capacity(n);
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        state[start] = 1;
        while let Some(&mut (i, ref mut next)) = stack.last_mut() {
            let ops = &comp.instructions[i].operands;
            if let Some(op) = ops.get(*next) {
                *next += 1;
                let j = op.index();
                match state.get(j) {
                    None => {
                        return Err(EvalError::Malformed(format!(
                            "{}: operand handle {j} out of range",
                            comp.instructions[i].name
                        )))
                    }
                    Some(0) => {
                        state[j] = 1;
                        stack.push((j, 0));
                    }
                    Some(1) => {
                        return Err(EvalError::Malformed(format!(
                            "{}: cycle through {}",
                            comp.name, comp.instructions[i].name
                        )))
                    }
                    _ => {}
                }
            } else {
                state[i] = 2;
                order.push(i);
                stack.pop();
            }
        }
    }
    Ok(order)
}

fn arr<'a>(lit: &'a Literal, what: &str) -> Result<&'a Array, EvalError> {
    lit.as_array()
        .map_err(|_| invalid(what, "expected an array operand, got a tuple"))
}

fn attr<'a, T>(v: &'a Option<T>, op: Opcode, name: &str) -> Result<&'a T, EvalError> {
    v.as_ref()
        .ok_or_else(|| invalid(op.name(), format!("missing attribute `{name}`")))
}

fn unary_op(op: Opcode) -> Option<UnaryOp> {
    Some(match op {
        Opcode::Abs => UnaryOp::Abs,
        Opcode::Negate => UnaryOp::Negate,
        Opcode::Sign => UnaryOp::Sign,
        Opcode::Exp => UnaryOp::Exp,
        Opcode::Expm1 => UnaryOp::Expm1,
        Opcode::Log => UnaryOp::Log,
        Opcode::Log1p => UnaryOp::Log1p,
        Opcode::Sqrt => UnaryOp::Sqrt,
        Opcode::Rsqrt => UnaryOp::Rsqrt,
        Opcode::Cbrt => UnaryOp::Cbrt,
        Opcode::Tanh => UnaryOp::Tanh,
        Opcode::Logistic => UnaryOp::Logistic,
        Opcode::Sin => UnaryOp::Sin,
        Opcode::Cos => UnaryOp::Cos,
        Opcode::Tan => UnaryOp::Tan,
        Opcode::Floor => UnaryOp::Floor,
        Opcode::Ceil => UnaryOp::Ceil,
        Opcode::RoundNearestAfz => UnaryOp::RoundNearestAfz,
        Opcode::RoundNearestEven => UnaryOp::RoundNearestEven,
        Opcode::IsFinite => UnaryOp::IsFinite,
        Opcode::Not => UnaryOp::Not,
        Opcode::PopulationCount => UnaryOp::PopulationCount,
        Opcode::Clz => UnaryOp::Clz,
        Opcode::Erf => UnaryOp::Erf,
        _ => return None,
    })
}

fn binary_op(op: Opcode) -> Option<BinaryOp> {
    Some(match op {
        Opcode::Add => BinaryOp::Add,
        Opcode::Subtract => BinaryOp::Subtract,
        Opcode::Multiply => BinaryOp::Multiply,
        Opcode::Divide => BinaryOp::Divide,
        Opcode::Remainder => BinaryOp::Remainder,
        Opcode::Maximum => BinaryOp::Maximum,
        Opcode::Minimum => BinaryOp::Minimum,
        Opcode::Power => BinaryOp::Power,
        Opcode::Atan2 => BinaryOp::Atan2,
        Opcode::And => BinaryOp::And,
        Opcode::Or => BinaryOp::Or,
        Opcode::Xor => BinaryOp::Xor,
        Opcode::ShiftLeft => BinaryOp::ShiftLeft,
        Opcode::ShiftRightLogical => BinaryOp::ShiftRightLogical,
        Opcode::ShiftRightArithmetic => BinaryOp::ShiftRightArithmetic,
        _ => return None,
    })
}

fn array_shape(shape: &Shape, op: Opcode) -> Result<(DType, &[i64]), EvalError> {
    match shape {
        Shape::Array(a) => Ok((dtype_of(a.element_type)?, &a.dims)),
        other => Err(invalid(
            op.name(),
            format!(
                "expected an array result shape, got {}",
                shape_string(other)
            ),
        )),
    }
}

impl<'m> Interp<'m> {
    fn computation(&self, id: ComputationId) -> Result<&'m Computation, EvalError> {
        self.module.get(id).ok_or_else(|| {
            EvalError::Malformed(format!("computation handle {} out of range", id.0))
        })
    }

    /// Runs computation `id` on `args`.
    fn run(
        &self,
        id: ComputationId,
        args: Vec<Literal>,
        depth: usize,
    ) -> Result<Literal, EvalError> {
        if depth > MAX_DEPTH {
            return Err(EvalError::TooDeep { limit: MAX_DEPTH });
        }
        let comp = self.computation(id)?;
        if args.len() != comp.params.len() {
            return Err(invalid(
                &comp.name,
                format!(
                    "called with {} arguments, takes {}",
                    args.len(),
                    comp.params.len()
                ),
            ));
        }
        let mut args: Vec<Option<Literal>> = args.into_iter().map(Some).collect();
        let mut values: Vec<Option<Literal>> = vec![None; comp.instructions.len()];
        for i in topo_order(comp)? {
            let instr = &comp.instructions[i];
            let value = self
                .instruction(comp, instr, &values, &mut args, depth)
                .and_then(|v| {
                    if literal_matches_shape(&v, &instr.shape) {
                        Ok(v)
                    } else {
                        Err(invalid(
                            instr.opcode.name(),
                            format!(
                                "computed {} but the instruction declares {}",
                                v.shape_string(),
                                shape_string(&instr.shape)
                            ),
                        ))
                    }
                })
                .map_err(|e| EvalError::At {
                    computation: comp.name.clone(),
                    instruction: instr.name.clone(),
                    loc: instr.loc,
                    error: Box::new(e),
                })?;
            values[i] = Some(value);
        }
        values
            .get_mut(comp.root.index())
            .and_then(Option::take)
            .ok_or_else(|| EvalError::Malformed(format!("{}: root handle out of range", comp.name)))
    }

    /// Calls a sub-computation with array arguments and returns its array leaves.
    fn call_arrays(
        &self,
        id: ComputationId,
        args: &[Array],
        depth: usize,
    ) -> Result<Vec<Array>, EvalError> {
        let lits = args.iter().cloned().map(Literal::Array).collect();
        Ok(self.run(id, lits, depth + 1)?.into_leaves())
    }

    fn instruction(
        &self,
        comp: &Computation,
        instr: &Instruction,
        values: &[Option<Literal>],
        args: &mut [Option<Literal>],
        depth: usize,
    ) -> Result<Literal, EvalError> {
        let op = instr.opcode;
        let a = &instr.attrs;
        let s = dispatch::Step {
            interp: self,
            comp,
            instr,
            values,
            depth,
        };
        if let Some(u) = unary_op(op) {
            s.nops(1)?;
            return one(elementwise::unary(u, s.array(0)?)?);
        }
        if let Some(b) = binary_op(op) {
            s.nops(2)?;
            return one(elementwise::binary(b, s.array(0)?, s.array(1)?)?);
        }
        match op {
            Opcode::Parameter => {
                let n = *attr(&a.parameter_number, op, "parameter number")?;
                usize::try_from(n)
                    .ok()
                    .and_then(|n| args.get_mut(n))
                    .and_then(Option::take)
                    .ok_or_else(|| invalid("parameter", format!("no argument for parameter {n}")))
            }
            Opcode::Constant => constant(attr(&a.literal, op, "literal")?, &instr.shape),
            Opcode::Copy
            | Opcode::OptimizationBarrier
            | Opcode::Tuple
            | Opcode::GetTupleElement
            | Opcode::ReplicaId
            | Opcode::PartitionId => dispatch::values(&s),
            Opcode::Compare
            | Opcode::Select
            | Opcode::Clamp
            | Opcode::ReducePrecision
            | Opcode::Convert
            | Opcode::BitcastConvert => dispatch::elementwise(&s),
            Opcode::Real | Opcode::Imag => {
                s.nops(1)?;
                one(complex_ops::part(s.array(0)?, op == Opcode::Imag)?)
            }
            Opcode::Complex => {
                s.nops(2)?;
                one(complex_ops::make(s.array(0)?, s.array(1)?)?)
            }
            Opcode::Broadcast
            | Opcode::Reshape
            | Opcode::Bitcast
            | Opcode::Transpose
            | Opcode::Slice
            | Opcode::Reverse
            | Opcode::Concatenate
            | Opcode::Pad
            | Opcode::Iota
            | Opcode::DynamicSlice
            | Opcode::DynamicUpdateSlice
            | Opcode::Gather => dispatch::movement(&s),
            Opcode::Dot
            | Opcode::Convolution
            | Opcode::TriangularSolve
            | Opcode::Cholesky
            | Opcode::Fft => dispatch::contraction(&s),
            Opcode::Reduce
            | Opcode::ReduceWindow
            | Opcode::Scatter
            | Opcode::Sort
            | Opcode::TopK
            | Opcode::SelectAndScatter => dispatch::reduction(&s),
            Opcode::RngBitGenerator => dispatch::random(&s),
            Opcode::Map | Opcode::Fusion | Opcode::Call | Opcode::While | Opcode::Conditional => {
                dispatch::control(&s)
            }
            other => Err(EvalError::Unimplemented {
                opcode: other.name().to_string(),
            }),
        }
    }
}

/// Logical dimensions from most major to most minor under `shape`'s layout (row-major when
/// the shape has no layout).
fn major_to_minor(shape: &Shape, rank: usize) -> Result<Vec<i64>, EvalError> {
    match shape.layout() {
        Some(l) if !l.minor_to_major.is_empty() || rank == 0 => {
            let order: Vec<i64> = l.minor_to_major.iter().rev().copied().collect();
            let mut sorted = order.clone();
            sorted.sort_unstable();
            if sorted != (0..rank as i64).collect::<Vec<_>>() {
                return Err(invalid(
                    "bitcast",
                    "layout is not a permutation of the dimensions",
                ));
            }
            Ok(order)
        }
        _ => Ok((0..rank as i64).collect()),
    }
}

/// `bitcast`: reinterprets the operand's physical (layout-ordered) elements under the result's
/// shape and layout (and, for a same-width element type change, their bits). Without layouts,
/// or with equal row-major ones, it is a reshape.
fn bitcast(x: &Array, from: &Shape, to: &Shape) -> Result<Array, EvalError> {
    let (dtype, dims) = array_shape(to, Opcode::Bitcast)?;
    // An element type change of the same width reinterprets the bits (as bitcast-convert).
    let converted;
    let x = if x.dtype() != dtype {
        converted = x.bitcast_convert(dtype)?;
        &converted
    } else {
        x
    };
    let src_order = major_to_minor(from, x.rank())?;
    let dst_order = major_to_minor(to, dims.len())?;
    // Physical order of the operand: its dimensions from major to minor.
    let physical = movement::transpose(x, &src_order)?;
    let phys_dims: Vec<i64> = dst_order
        .iter()
        .map(|d| dims.get(*d as usize).copied().unwrap_or(0))
        .collect();
    let reshaped = movement::reshape(&physical, &phys_dims)?;
    // Back to logical order: logical dimension i is physical position j where dst_order[j] = i.
    let mut inverse = vec![0i64; dst_order.len()];
    for (j, d) in dst_order.iter().enumerate() {
        if let Some(slot) = inverse.get_mut(*d as usize) {
            *slot = j as i64;
        }
    }
    movement::transpose(&reshaped, &inverse)
}

/// The single `pred` scalar a comparator or selector computation returns.
fn pred_result(op: Opcode, r: Vec<Array>) -> Result<bool, EvalError> {
    match r.as_slice() {
        [p] if p.rank() == 0 && p.dtype() == DType::Pred => p
            .data()
            .get_bool(0)
            .ok_or_else(|| invalid(op.name(), "empty comparator result")),
        _ => Err(invalid(
            op.name(),
            "the called computation must return a pred scalar",
        )),
    }
}

/// Wraps kernel results as the instruction's result: a tuple when the shape is a tuple.
fn leaves_to_literal(mut out: Vec<Array>, shape: &Shape) -> Literal {
    if shape.is_tuple() || out.len() != 1 {
        Literal::Tuple(out.into_iter().map(Literal::Array).collect())
    } else {
        Literal::Array(out.remove(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hlo::InstrId;

    fn module(text: &str) -> HloModule {
        match hlo_text::parse_module(text) {
            Ok(m) => m,
            Err(e) => panic!("test module does not parse: {e}\n{text}"),
        }
    }

    #[test]
    fn an_error_names_the_instruction_and_its_line_once() {
        let m = module(
            "HloModule m\n\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  r = f32[8] rng(a, b), distribution=rng_uniform\n  ROOT n = f32[8] negate(r)\n}\n",
        );
        let args = [
            Literal::array(vec![], Data::F32(vec![0.0])).unwrap(),
            Literal::array(vec![], Data::F32(vec![1.0])).unwrap(),
        ];
        let e = evaluate(&m, &args).unwrap_err();
        assert_eq!(e.to_string(), "6:3: e/r: unimplemented opcode `rng`");
        // No source chain: printers that walk it (anyhow's `{:#}`) say the reason once.
        assert!(std::error::Error::source(&e).is_none());
    }

    #[test]
    fn a_deep_call_chain_names_its_ends_and_counts_the_frames_between() {
        // c0 negates; c_i calls c_(i-1); the entry calls c299: 301 computations deep.
        let mut text = String::from(
            "HloModule m\n\nc0 {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] negate(p)\n}\n\n",
        );
        for i in 1..300 {
            text.push_str(&format!(
                "c{i} {{\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] call(p), to_apply=c{}\n}}\n\n",
                i - 1
            ));
        }
        text.push_str(
            "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] call(x), to_apply=c299\n}\n",
        );
        let m = module(&text);
        let e = evaluate(&m, &[f32s(vec![2], vec![1.0, 2.0])]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "1505:8: e/r: 1500:8: c299/r: 1495:8: c298/r: 1490:8: c297/r: … (249 more frames): \
             240:8: c47/r: 235:8: c46/r: 230:8: c45/r: 225:8: c44/r: \
             computations nest deeper than 256 calls"
        );
    }

    fn f32s(dims: Vec<usize>, v: Vec<f32>) -> Literal {
        Literal::array(dims, Data::F32(v)).unwrap()
    }

    fn s32s(dims: Vec<usize>, v: Vec<i32>) -> Literal {
        Literal::array(dims, Data::S32(v)).unwrap()
    }

    fn entry(m: &mut HloModule) -> &mut Computation {
        let e = m.entry.index();
        &mut m.computations[e]
    }

    fn run(m: &HloModule, args: &[Literal]) -> Result<Vec<Vec<f64>>, EvalError> {
        Ok(evaluate(m, args)?
            .leaves()
            .iter()
            .map(|a| a.data().to_f64_vec())
            .collect())
    }

    const ADD: &str = "HloModule m\n\nENTRY main {\n  x = f32[2]{0} parameter(0)\n  \
                       y = f32[2]{0} parameter(1)\n  ROOT a = f32[2]{0} add(x, y)\n}\n";

    #[test]
    fn unimplemented_opcode_is_named() {
        let m = module(
            "HloModule m\n\nENTRY main {\n  x = f32[2]{0} parameter(0)\n  \
             ROOT c = f32[2]{0} custom-call(x), custom_call_target=\"foo\"\n}\n",
        );
        let e = evaluate(&m, &[f32s(vec![2], vec![1.0, 2.0])]).unwrap_err();
        assert_eq!(
            e.root_cause(),
            &EvalError::Unimplemented {
                opcode: "custom-call".into()
            }
        );
        assert!(e.to_string().contains("main/c"), "{e}");
    }

    #[test]
    fn argument_errors_name_the_parameter() {
        let m = module(ADD);
        let x = f32s(vec![2], vec![1.0, 2.0]);
        assert_eq!(
            evaluate(&m, std::slice::from_ref(&x)).unwrap_err(),
            EvalError::ArgumentCount {
                expected: 2,
                got: 1
            }
        );
        let e = evaluate(&m, &[x.clone(), s32s(vec![2], vec![1, 2])]).unwrap_err();
        assert!(
            matches!(&e, EvalError::Argument { index: 1, name, .. } if name == "y"),
            "{e}"
        );
        let e = evaluate(&m, &[x.clone(), f32s(vec![1], vec![1.0])]).unwrap_err();
        assert!(e.to_string().contains("expected f32[2], got f32[1]"), "{e}");
        let e = evaluate(&m, &[x.clone(), Literal::Tuple(vec![])]).unwrap_err();
        assert!(matches!(e, EvalError::Argument { index: 1, .. }));
        assert_eq!(run(&m, &[x.clone(), x]).unwrap(), vec![vec![2.0, 4.0]]);
    }

    #[test]
    fn malformed_modules_are_errors_not_panics() {
        let x = f32s(vec![2], vec![1.0, 2.0]);
        let args = [x.clone(), x];
        // Wrong operand count.
        let mut m = module(ADD);
        entry(&mut m).instructions[2].operands.pop();
        let e = evaluate(&m, &args).unwrap_err();
        assert!(e.to_string().contains("takes 2 operands, got 1"), "{e}");
        // Dangling operand handle.
        let mut m = module(ADD);
        entry(&mut m).instructions[2].operands[1] = InstrId(99);
        assert!(matches!(
            evaluate(&m, &args).unwrap_err(),
            EvalError::Malformed(_)
        ));
        // A cycle.
        let mut m = module(ADD);
        entry(&mut m).instructions[2].operands[1] = InstrId(2);
        assert!(matches!(
            evaluate(&m, &args).unwrap_err(),
            EvalError::Malformed(_)
        ));
        // Root out of range.
        let mut m = module(ADD);
        entry(&mut m).root = InstrId(42);
        assert!(evaluate(&m, &args).is_err());
        // Declared shape differs from the computed one.
        let mut m = module(ADD);
        entry(&mut m).instructions[2].shape = Shape::array(PrimitiveType::F32, vec![3]);
        let e = evaluate(&m, &args).unwrap_err();
        assert!(e.to_string().contains("declares f32[3]"), "{e}");
        // Broadcast dimension out of range.
        let mut m = module(
            "HloModule m\n\nENTRY main {\n  x = f32[2]{0} parameter(0)\n  \
             ROOT b = f32[3,2]{1,0} broadcast(x), dimensions={1}\n}\n",
        );
        assert!(evaluate(&m, &args[..1]).is_ok());
        entry(&mut m).instructions[1].attrs.dimensions = Some(vec![7]);
        let e = evaluate(&m, &args[..1]).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        // A computation that calls itself.
        let mut m = module(
            "HloModule m\n\nf {\n  p = f32[2]{0} parameter(0)\n  ROOT n = f32[2]{0} negate(p)\n}\n\n\
             ENTRY main {\n  x = f32[2]{0} parameter(0)\n  ROOT c = f32[2]{0} call(x), to_apply=f\n}\n",
        );
        assert_eq!(run(&m, &args[..1]).unwrap(), vec![vec![-1.0, -2.0]]);
        let f = m.find("f").unwrap();
        m.computations[f.index()].instructions[1] = {
            let mut call = m.entry_computation().instructions[1].clone();
            call.operands = vec![InstrId(0)];
            call.attrs.to_apply = Some(f);
            call
        };
        assert_eq!(
            evaluate(&m, &args[..1]).unwrap_err().root_cause(),
            &EvalError::TooDeep { limit: MAX_DEPTH }
        );
    }

    #[test]
    fn conditional_index_out_of_range_runs_last_branch() {
        let m = module(
            "HloModule m\n\nb0 {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}\n\n\
             b1 {\n  p = f32[] parameter(0)\n  ROOT r = f32[] multiply(p, p)\n}\n\n\
             ENTRY main {\n  i = s32[] parameter(0)\n  x = f32[] parameter(1)\n  \
             ROOT c = f32[] conditional(i, x, x), branch_computations={b0, b1}\n}\n",
        );
        let x = f32s(vec![], vec![3.0]);
        let at = |i: i32| run(&m, &[s32s(vec![], vec![i]), x.clone()]).unwrap()[0][0];
        assert_eq!(at(0), -3.0);
        assert_eq!(at(1), 9.0);
        assert_eq!(at(7), 9.0);
        assert_eq!(at(-1), 9.0);
        let m = module(
            "HloModule m\n\nt {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}\n\n\
             f {\n  p = f32[] parameter(0)\n  ROOT r = f32[] multiply(p, p)\n}\n\n\
             ENTRY main {\n  b = pred[] parameter(0)\n  x = f32[] parameter(1)\n  \
             ROOT c = f32[] conditional(b, x, x), true_computation=t, false_computation=f\n}\n",
        );
        let p = |b: bool| Literal::pred(b);
        assert_eq!(run(&m, &[p(true), x.clone()]).unwrap()[0][0], -3.0);
        assert_eq!(run(&m, &[p(false), x]).unwrap()[0][0], 9.0);
    }

    #[test]
    fn scatter_add_and_custom_combiner() {
        let text = |root: &str| {
            format!(
                "HloModule m\n\ncomb {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
                 two = f32[] constant(2)\n  m = f32[] multiply(b, two)\n  {root}\n}}\n\n\
                 ENTRY main {{\n  x = f32[5]{{0}} parameter(0)\n  i = s32[3,1]{{1,0}} parameter(1)\n  \
                 u = f32[3]{{0}} parameter(2)\n  ROOT r = f32[5]{{0}} scatter(x, i, u), \
                 update_window_dims={{}}, inserted_window_dims={{0}}, \
                 scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=comb\n}}\n"
            )
        };
        let args = [
            f32s(vec![5], vec![1.0; 5]),
            s32s(vec![3, 1], vec![1, 1, 9]),
            f32s(vec![3], vec![10.0, 20.0, 30.0]),
        ];
        let m = module(&text("ROOT s = f32[] add(a, b)"));
        assert_eq!(
            run(&m, &args).unwrap(),
            vec![vec![1.0, 31.0, 1.0, 1.0, 1.0]]
        );
        let m = module(&text("ROOT s = f32[] add(a, m)"));
        assert_eq!(
            run(&m, &args).unwrap(),
            vec![vec![1.0, 61.0, 1.0, 1.0, 1.0]]
        );
        let m = module(&text("ROOT s = f32[] add(m, b)"));
        assert_eq!(
            run(&m, &args).unwrap(),
            vec![vec![1.0, 60.0, 1.0, 1.0, 1.0]]
        );
    }

    #[test]
    fn select_and_scatter_max_pool_gradient() {
        let m = module(
            "HloModule m\n\nge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
             ROOT c = pred[] compare(a, b), direction=GE\n}\n\n\
             add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n\
             ENTRY main {\n  x = f32[5]{0} parameter(0)\n  s = f32[3]{0} parameter(1)\n  \
             z = f32[] constant(0)\n  ROOT r = f32[5]{0} select-and-scatter(x, s, z), \
             window={size=2 stride=2 pad=0_1}, select=ge, scatter=add\n}\n",
        );
        let out = run(
            &m,
            &[
                f32s(vec![5], vec![1.0, 3.0, 5.0, 5.0, 2.0]),
                f32s(vec![3], vec![10.0, 20.0, 30.0]),
            ],
        )
        .unwrap();
        assert_eq!(out, vec![vec![0.0, 10.0, 20.0, 0.0, 30.0]]);
    }

    #[test]
    fn sort_two_operands_and_map_and_while() {
        let m = module(
            "HloModule m\n\nlt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
             c = s32[] parameter(2)\n  d = s32[] parameter(3)\n  \
             ROOT r = pred[] compare(a, b), direction=LT\n}\n\n\
             ENTRY main {\n  k = f32[4]{0} parameter(0)\n  v = s32[4]{0} parameter(1)\n  \
             ROOT s = (f32[4]{0}, s32[4]{0}) sort(k, v), dimensions={0}, is_stable=true, to_apply=lt\n}\n",
        );
        let out = run(
            &m,
            &[
                f32s(vec![4], vec![2.0, 1.0, 2.0, 0.0]),
                s32s(vec![4], vec![0, 1, 2, 3]),
            ],
        )
        .unwrap();
        assert_eq!(
            out,
            vec![vec![0.0, 1.0, 2.0, 2.0], vec![3.0, 1.0, 0.0, 2.0]]
        );

        let m = module(
            "HloModule m\n\nf {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
             ROOT r = f32[] subtract(a, b)\n}\n\n\
             ENTRY main {\n  x = f32[3]{0} parameter(0)\n  y = f32[3]{0} parameter(1)\n  \
             ROOT m = f32[3]{0} map(x, y), dimensions={0}, to_apply=f\n}\n",
        );
        let out = run(
            &m,
            &[
                f32s(vec![3], vec![5.0, 6.0, 7.0]),
                f32s(vec![3], vec![1.0, 1.0, 2.0]),
            ],
        )
        .unwrap();
        assert_eq!(out, vec![vec![4.0, 5.0, 5.0]]);

        let m = module(
            "HloModule m\n\ncond {\n  p = (s32[], f32[]) parameter(0)\n  \
             i = s32[] get-tuple-element(p), index=0\n  n = s32[] constant(4)\n  \
             ROOT c = pred[] compare(i, n), direction=LT\n}\n\n\
             body {\n  p = (s32[], f32[]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n  \
             x = f32[] get-tuple-element(p), index=1\n  one = s32[] constant(1)\n  \
             j = s32[] add(i, one)\n  y = f32[] add(x, x)\n  ROOT t = (s32[], f32[]) tuple(j, y)\n}\n\n\
             ENTRY main {\n  x = f32[] parameter(0)\n  z = s32[] constant(0)\n  \
             t = (s32[], f32[]) tuple(z, x)\n  \
             ROOT w = (s32[], f32[]) while(t), condition=cond, body=body\n}\n",
        );
        let out = run(&m, &[f32s(vec![], vec![1.5])]).unwrap();
        assert_eq!(out, vec![vec![4.0], vec![24.0]]);
        let x = [f32s(vec![], vec![1.5])];
        assert!(evaluate_with(&m, &x, &EvalOptions::with_while_limit(4)).is_ok());
        assert_eq!(
            evaluate_with(&m, &x, &EvalOptions::with_while_limit(3))
                .unwrap_err()
                .root_cause(),
            &EvalError::WhileLimit { limit: 3 }
        );
    }

    #[test]
    fn variadic_reduce_argmax_through_the_interpreter() {
        let m = module(
            "HloModule m\n\nr {\n  a = f32[] parameter(0)\n  i = s32[] parameter(1)\n  \
             b = f32[] parameter(2)\n  j = s32[] parameter(3)\n  \
             g = pred[] compare(a, b), direction=GE\n  v = f32[] select(g, a, b)\n  \
             k = s32[] select(g, i, j)\n  ROOT t = (f32[], s32[]) tuple(v, k)\n}\n\n\
             ENTRY main {\n  x = f32[2,3]{1,0} parameter(0)\n  \
             io = s32[2,3]{1,0} iota(), iota_dimension=1\n  ninf = f32[] constant(-inf)\n  \
             z = s32[] constant(0)\n  ROOT red = (f32[2]{0}, s32[2]{0}) reduce(x, io, ninf, z), \
             dimensions={1}, to_apply=r\n}\n",
        );
        let out = run(&m, &[f32s(vec![2, 3], vec![1.0, 9.0, 3.0, 7.0, 2.0, 7.0])]).unwrap();
        assert_eq!(out, vec![vec![9.0, 7.0], vec![1.0, 0.0]]);
    }

    #[test]
    fn bitcast_follows_layouts_and_fusion_runs_its_computation() {
        let m = module(
            "HloModule m\n\nENTRY main {\n  x = f32[2,3]{1,0} parameter(0)\n  \
             ROOT b = f32[3,2]{0,1} bitcast(x)\n}\n",
        );
        let x = f32s(vec![2, 3], vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(
            run(&m, std::slice::from_ref(&x)).unwrap(),
            vec![vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]]
        );
        let m = module(
            "HloModule m\n\nENTRY main {\n  x = f32[2,3]{1,0} parameter(0)\n  \
             ROOT b = s32[6]{0} bitcast(x)\n}\n",
        );
        let out = evaluate(&m, std::slice::from_ref(&x)).unwrap();
        assert_eq!(
            out.as_array().unwrap().data().get_i64(1),
            Some(i64::from(1.0f32.to_bits()))
        );
        let m = module(
            "HloModule m\n\nf {\n  p = f32[2,3]{1,0} parameter(0)\n  \
             ROOT n = f32[2,3]{1,0} negate(p)\n}\n\n\
             ENTRY main {\n  x = f32[2,3]{1,0} parameter(0)\n  \
             ROOT r = f32[2,3]{1,0} fusion(x), kind=kLoop, calls=f\n}\n",
        );
        assert_eq!(
            run(&m, &[x]).unwrap(),
            vec![vec![-0.0, -1.0, -2.0, -3.0, -4.0, -5.0]]
        );
    }

    #[test]
    fn every_supported_opcode_is_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for op in SUPPORTED_OPCODES.iter() {
            assert!(seen.insert(*op), "{op} listed twice");
        }
    }

    #[test]
    fn every_refused_opcode_is_unknown_to_the_evaluator() {
        for op in hlo::UNSUPPORTED_OPCODES {
            assert!(
                !SUPPORTED_OPCODES.contains(op),
                "{op} is refused but the evaluator implements it"
            );
        }
    }
}
