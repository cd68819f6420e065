//! Instructions a pass puts in place of one it expands, named after it (`NAME.PREFIXk`, in
//! emission order) and carrying its metadata and location, so errors and profiles still point
//! at the source. Used by the expansions (`triangular_solve`, `rng_bit_generator`,
//! `complex_dot`).
use hlo::{ArrayLiteral, Attrs, ComparisonDirection, Computation, ConstantLiteral, LiteralValue};
use hlo::{ComputationId, HloModule, InstrId, Instruction, Opcode, PrimitiveType, Shape};

/// Emits instructions named after the instruction they replace (`NAME.PREFIXk`), with its
/// metadata and location.
pub(crate) struct Emit<'a> {
    pub(crate) like: &'a Instruction,
    prefix: &'static str,
    push: &'a mut dyn FnMut(Instruction) -> InstrId,
    count: usize,
    /// The name of the next instruction instead of a numbered one.
    pub(crate) next_name: Option<String>,
}

impl<'a> Emit<'a> {
    pub(crate) fn new(
        like: &'a Instruction,
        prefix: &'static str,
        push: &'a mut dyn FnMut(Instruction) -> InstrId,
    ) -> Self {
        Emit {
            like,
            prefix,
            push,
            count: 0,
            next_name: None,
        }
    }

    pub(crate) fn op(
        &mut self,
        opcode: Opcode,
        shape: Shape,
        operands: Vec<InstrId>,
        attrs: Attrs,
    ) -> InstrId {
        self.count += 1;
        let name = self
            .next_name
            .take()
            .unwrap_or_else(|| format!("{}.{}{}", self.like.name, self.prefix, self.count));
        (self.push)(Instruction {
            name,
            opcode,
            shape,
            operands,
            attrs,
            metadata: self.like.metadata.clone(),
            loc: self.like.loc,
        })
    }

    pub(crate) fn param(&mut self, shape: Shape, number: i64) -> InstrId {
        let attrs = Attrs {
            parameter_number: Some(number),
            ..Attrs::default()
        };
        self.op(Opcode::Parameter, shape, vec![], attrs)
    }

    pub(crate) fn constant(&mut self, ty: PrimitiveType, v: LiteralValue) -> InstrId {
        let attrs = Attrs {
            literal: Some(ConstantLiteral::Array(ArrayLiteral { values: vec![v] })),
            ..Attrs::default()
        };
        self.op(Opcode::Constant, Shape::scalar(ty), vec![], attrs)
    }

    pub(crate) fn with_dims(
        &mut self,
        opcode: Opcode,
        shape: Shape,
        x: InstrId,
        dims: Vec<i64>,
    ) -> InstrId {
        let attrs = Attrs {
            dimensions: Some(dims),
            ..Attrs::default()
        };
        self.op(opcode, shape, vec![x], attrs)
    }

    pub(crate) fn plain(
        &mut self,
        opcode: Opcode,
        shape: Shape,
        operands: Vec<InstrId>,
    ) -> InstrId {
        self.op(opcode, shape, operands, Attrs::default())
    }

    pub(crate) fn gte(&mut self, shape: Shape, t: InstrId, index: i64) -> InstrId {
        let attrs = Attrs {
            tuple_index: Some(index),
            ..Attrs::default()
        };
        self.op(Opcode::GetTupleElement, shape, vec![t], attrs)
    }

    pub(crate) fn compare(
        &mut self,
        shape: Shape,
        x: InstrId,
        y: InstrId,
        d: ComparisonDirection,
    ) -> InstrId {
        let attrs = Attrs {
            comparison_direction: Some(d),
            ..Attrs::default()
        };
        self.op(Opcode::Compare, shape, vec![x, y], attrs)
    }

    /// `pred[n, n]` of `row <direction> column`.
    pub(crate) fn triangle(&mut self, n: i64, direction: ComparisonDirection) -> InstrId {
        let s = Shape::array(PrimitiveType::S32, vec![n, n]);
        let iota = |e: &mut Self, d| {
            let attrs = Attrs {
                iota_dimension: Some(d),
                ..Attrs::default()
            };
            e.op(Opcode::Iota, s.clone(), vec![], attrs)
        };
        let (rows, cols) = (iota(self, 0), iota(self, 1));
        let pred = Shape::array(PrimitiveType::Pred, vec![n, n]);
        self.compare(pred, rows, cols, direction)
    }

    pub(crate) fn dynamic_slice(
        &mut self,
        shape: Shape,
        x: InstrId,
        starts: &[InstrId],
    ) -> InstrId {
        let attrs = Attrs {
            dynamic_slice_sizes: Some(shape.dims().to_vec()),
            ..Attrs::default()
        };
        let operands = [&[x], starts].concat();
        self.op(Opcode::DynamicSlice, shape, operands, attrs)
    }

    pub(crate) fn reduce_sum(
        &mut self,
        shape: Shape,
        x: InstrId,
        dim: i64,
        add: ComputationId,
    ) -> InstrId {
        let ty = shape.element_type().unwrap_or(PrimitiveType::F32);
        let z = self.constant(ty, zero(ty));
        let attrs = Attrs {
            dimensions: Some(vec![dim]),
            to_apply: Some(add),
            ..Attrs::default()
        };
        self.op(Opcode::Reduce, shape, vec![x, z], attrs)
    }
}

/// The zero of an element type.
/// An array `shape` with element type `ty` (dimensions and layout kept); other shapes as they
/// are.
pub(crate) fn retyped(shape: &Shape, ty: PrimitiveType) -> Shape {
    match shape {
        Shape::Array(a) => {
            let mut a = a.clone();
            a.element_type = ty;
            Shape::Array(a)
        }
        other => other.clone(),
    }
}

pub(crate) fn zero(ty: PrimitiveType) -> LiteralValue {
    if ty.is_float() {
        LiteralValue::Float(0.0)
    } else {
        LiteralValue::Int(0)
    }
}

/// Appends a computation that `build` fills (returning its parameters and root), named after
/// `like` and unique in the module.
pub(crate) fn push_computation(
    module: &mut HloModule,
    like: &Instruction,
    prefix: &'static str,
    build: impl FnOnce(&mut Emit<'_>) -> (Vec<InstrId>, InstrId),
) -> ComputationId {
    let mut instructions = Vec::new();
    let mut push = |i| {
        instructions.push(i);
        InstrId((instructions.len() - 1) as u32)
    };
    let (params, root) = build(&mut Emit::new(like, prefix, &mut push));
    let base = format!("{}.{}", like.name, prefix.trim_end_matches('.'));
    let mut name = base.clone();
    let mut k = 0;
    while module.find(&name).is_some() {
        k += 1;
        name = format!("{base}.{k}");
    }
    module.computations.push(Computation {
        name,
        instructions,
        params,
        root,
        execution_thread: None,
        loc: like.loc,
    });
    ComputationId((module.computations.len() - 1) as u32)
}
