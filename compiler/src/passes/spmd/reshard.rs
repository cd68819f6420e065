//! Moving a value between shardings on each device, as XLA's partitioner does without
//! all-to-all: a replicated value is cut to a device's tile with a `dynamic-slice` at offsets
//! looked up by `partition-id`; a tiled value is made whole with one `all-gather` per split
//! dimension (`channel_id`, `use_global_device_ids=true`, replica groups over partitions); tiled
//! to differently tiled goes through whole.
use hlo::{ArrayLiteral, Attrs, ConstantLiteral, HloSharding, LiteralValue, ReplicaGroups};
use hlo::{InstrId, Instruction, Opcode, PrimitiveType, Shape};

use super::error::SpmdError;
use super::shard::{with_dims, Tiles};

/// How a value lies over the partitions. Two tiled places are equal when their tiles are (the
/// same devices hold the same pieces), however the sharding is spelled.
#[derive(Debug, Clone, Eq)]
pub(crate) enum Place {
    /// Whole on every device.
    Replicated,
    /// Each device holds its own value (a `shard_map` body).
    Manual,
    /// Split: the sharding and its tiles.
    Tiled(HloSharding, Tiles),
    /// A tuple, per element.
    Tuple(Vec<Place>),
}

impl PartialEq for Place {
    fn eq(&self, other: &Place) -> bool {
        match (self, other) {
            (Place::Replicated, Place::Replicated) | (Place::Manual, Place::Manual) => true,
            (Place::Tiled(_, a), Place::Tiled(_, b)) => a == b,
            (Place::Tuple(a), Place::Tuple(b)) => a == b,
            _ => false,
        }
    }
}

impl Place {
    /// The place a sharding gives a value of `shape`.
    pub fn of(s: &HloSharding, shape: &Shape, partitions: i64) -> Result<Place, SpmdError> {
        if let (hlo::ShardingKind::Tuple(elems), Shape::Tuple(shapes)) = (&s.kind, shape) {
            if elems.len() != shapes.len() {
                return Err(SpmdError::TupleArity {
                    sharding: Box::new(s.clone()),
                    elements: elems.len(),
                    values: shapes.len(),
                });
            }
            return elems
                .iter()
                .zip(shapes)
                .map(|(e, sh)| Place::of(e, sh, partitions))
                .collect::<Result<_, _>>()
                .map(Place::Tuple);
        }
        if s.is_manual() {
            return Ok(Place::Manual);
        }
        match shape {
            Shape::Tuple(shapes) => {
                // One sharding for a whole tuple applies to every element (XLA's rule).
                shapes
                    .iter()
                    .map(|sh| Place::of(s, sh, partitions))
                    .collect::<Result<_, _>>()
                    .map(Place::Tuple)
            }
            _ => Ok(match Tiles::of(s, shape.dims().len(), partitions)? {
                Some(t) => Place::Tiled(s.clone(), t),
                None => Place::Replicated,
            }),
        }
    }

    /// The shape a device holds of a value of global shape `global`.
    pub fn local_shape(&self, global: &Shape) -> Result<Shape, SpmdError> {
        match (self, global) {
            (Place::Tiled(_, t), _) => Ok(with_dims(global, t.local_dims(global.dims())?)),
            (Place::Tuple(places), Shape::Tuple(shapes)) if places.len() == shapes.len() => places
                .iter()
                .zip(shapes)
                .map(|(p, s)| p.local_shape(s))
                .collect::<Result<_, _>>()
                .map(Shape::Tuple),
            (Place::Tuple(_), _) => Err(SpmdError::TupleOnArray),
            _ => Ok(global.clone()),
        }
    }

    /// How it reads in an error.
    pub fn describe(&self) -> String {
        match self {
            Place::Replicated => "{replicated}".into(),
            Place::Manual => "{manual}".into(),
            Place::Tiled(s, _) => s.to_string(),
            Place::Tuple(p) => {
                let items: Vec<String> = p.iter().map(Place::describe).collect();
                format!("{{{}}}", items.join(", "))
            }
        }
    }
}

/// The per-device entry computation being built, with what resharding needs: the partition
/// count, the next free channel id and the device's partition id (emitted once).
pub(crate) struct Builder {
    pub instrs: Vec<Instruction>,
    pub partitions: i64,
    pub next_channel: i64,
    partition_id: Option<InstrId>,
    /// The id the first computation added to the module will have.
    first_new_computation: u32,
    /// Element types of the `add` reducers the all-reduces need, one computation each.
    pub reducers: Vec<PrimitiveType>,
}

impl Builder {
    pub fn new(partitions: i64, next_channel: i64, first_new_computation: u32) -> Builder {
        Builder {
            instrs: Vec::new(),
            partitions,
            next_channel,
            partition_id: None,
            first_new_computation,
            reducers: Vec::new(),
        }
    }

    /// The `add` computation over `ty` scalars (added to the module after the walk).
    pub fn reducer(&mut self, ty: PrimitiveType) -> hlo::ComputationId {
        let i = match self.reducers.iter().position(|&t| t == ty) {
            Some(i) => i,
            None => {
                self.reducers.push(ty);
                self.reducers.len() - 1
            }
        };
        hlo::ComputationId(self.first_new_computation + i as u32)
    }

    pub fn push(&mut self, instr: Instruction) -> InstrId {
        self.instrs.push(instr);
        InstrId(u32::try_from(self.instrs.len() - 1).unwrap_or(u32::MAX))
    }

    pub fn shape(&self, id: InstrId) -> Shape {
        self.instrs
            .get(id.index())
            .map_or(Shape::Tuple(Vec::new()), |i| i.shape.clone())
    }

    /// A new instruction named `base.suffix<n>`.
    pub fn op(
        &mut self,
        base: &str,
        opcode: Opcode,
        shape: Shape,
        operands: Vec<InstrId>,
        attrs: Attrs,
    ) -> InstrId {
        let name = format!("{base}.spmd{}", self.instrs.len());
        self.push(Instruction {
            name,
            opcode,
            shape,
            operands,
            attrs,
            metadata: None,
            loc: Default::default(),
        })
    }

    fn s32(&mut self, base: &str, values: Vec<i64>) -> InstrId {
        let n = values.len() as i64;
        let shape = if n == 1 {
            Shape::scalar(PrimitiveType::S32)
        } else {
            Shape::array(PrimitiveType::S32, vec![n])
        };
        let attrs = Attrs {
            literal: Some(ConstantLiteral::Array(ArrayLiteral {
                values: values
                    .into_iter()
                    .map(|v| LiteralValue::Int(i128::from(v)))
                    .collect(),
            })),
            ..Attrs::default()
        };
        self.op(base, Opcode::Constant, shape, vec![], attrs)
    }

    /// This device's partition id as an `s32[]`.
    fn partition_id(&mut self, base: &str) -> InstrId {
        if let Some(id) = self.partition_id {
            return id;
        }
        let pid = self.op(
            base,
            Opcode::PartitionId,
            Shape::scalar(PrimitiveType::U32),
            vec![],
            Attrs::default(),
        );
        let s = self.op(
            base,
            Opcode::Convert,
            Shape::scalar(PrimitiveType::S32),
            vec![pid],
            Attrs::default(),
        );
        self.partition_id = Some(s);
        s
    }

    /// One entry of `table` (indexed by partition id) for this device, as an `s32[]`.
    pub fn per_device(&mut self, base: &str, table: Vec<i64>) -> InstrId {
        if table.iter().all(|&v| v == table[0]) {
            return self.s32(base, vec![table[0]]);
        }
        let pid = self.partition_id(base);
        let t = self.s32(base, table);
        let attrs = Attrs {
            dynamic_slice_sizes: Some(vec![1]),
            ..Attrs::default()
        };
        let one = self.op(
            base,
            Opcode::DynamicSlice,
            Shape::array(PrimitiveType::S32, vec![1]),
            vec![t, pid],
            attrs,
        );
        self.op(
            base,
            Opcode::Reshape,
            Shape::scalar(PrimitiveType::S32),
            vec![one],
            Attrs::default(),
        )
    }

    /// This device's tile of a whole value `x` of shape `global`.
    pub fn slice_to(
        &mut self,
        base: &str,
        x: InstrId,
        global: &Shape,
        t: &Tiles,
    ) -> Result<InstrId, SpmdError> {
        let local = t.local_dims(global.dims())?;
        let index = t.index_of_device();
        let mut starts = Vec::new();
        for (d, &size) in local.iter().enumerate() {
            let table: Vec<i64> = index
                .iter()
                .map(|i| i.get(d).copied().unwrap_or(0) * size)
                .collect();
            starts.push(self.per_device(base, table));
        }
        let attrs = Attrs {
            dynamic_slice_sizes: Some(local.clone()),
            ..Attrs::default()
        };
        let mut operands = vec![x];
        operands.extend(starts);
        Ok(self.op(
            base,
            Opcode::DynamicSlice,
            with_dims(global, local),
            operands,
            attrs,
        ))
    }

    /// The whole value from each device's tile `x` (global shape `global`).
    pub fn gather(
        &mut self,
        base: &str,
        x: InstrId,
        global: &Shape,
        t: &Tiles,
    ) -> Result<InstrId, SpmdError> {
        let mut dims = t.local_dims(global.dims())?;
        let mut value = x;
        for d in 0..t.data.len() {
            if t.data[d] == 1 {
                continue;
            }
            dims[d] = global.dims()[d];
            let channel = self.next_channel;
            self.next_channel += 1;
            let attrs = Attrs {
                dimensions: Some(vec![d as i64]),
                channel_id: Some(channel),
                replica_groups: Some(ReplicaGroups::List(t.groups_along(d))),
                use_global_device_ids: Some(true),
                ..Attrs::default()
            };
            value = self.op(
                base,
                Opcode::AllGather,
                with_dims(global, dims.clone()),
                vec![value],
                attrs,
            );
        }
        Ok(value)
    }

    /// `x` (global shape `global`) moved from `from` to `to`.
    pub fn reshard(
        &mut self,
        base: &str,
        x: InstrId,
        global: &Shape,
        from: &Place,
        to: &Place,
    ) -> Result<InstrId, SpmdError> {
        match (from, to) {
            _ if from == to => Ok(x),
            (Place::Replicated, Place::Manual) => Ok(x),
            (Place::Replicated, Place::Tiled(_, t)) => {
                // A broadcast scalar is made at the tile's shape instead of being cut.
                if let Some(i) = self.instrs.get(x.index()).filter(|i| {
                    i.opcode == Opcode::Broadcast
                        && i.operands.len() == 1
                        && self.shape(i.operands[0]).dims().is_empty()
                }) {
                    let mut local = i.clone();
                    local.name = format!("{base}.spmd{}", self.instrs.len());
                    local.shape = with_dims(global, t.local_dims(global.dims())?);
                    return Ok(self.push(local));
                }
                self.slice_to(base, x, global, t)
            }
            (Place::Tiled(_, f), Place::Replicated) => self.gather(base, x, global, f),
            (Place::Tiled(_, f), Place::Tiled(_, t)) => {
                let whole = self.gather(base, x, global, f)?;
                self.slice_to(base, whole, global, t)
            }
            (Place::Tuple(fs), Place::Tuple(ts)) if fs.len() == ts.len() => {
                let Shape::Tuple(shapes) = global else {
                    return Err(SpmdError::TupleOnArray);
                };
                let mut elems = Vec::new();
                let mut local = Vec::new();
                for (i, ((f, t), s)) in fs.iter().zip(ts).zip(shapes).enumerate() {
                    let attrs = Attrs {
                        tuple_index: Some(i as i64),
                        ..Attrs::default()
                    };
                    let here = f.local_shape(s)?;
                    let e = self.op(base, Opcode::GetTupleElement, here, vec![x], attrs);
                    let moved = self.reshard(base, e, s, f, t)?;
                    local.push(self.shape(moved));
                    elems.push(moved);
                }
                Ok(self.op(
                    base,
                    Opcode::Tuple,
                    Shape::Tuple(local),
                    elems,
                    Attrs::default(),
                ))
            }
            _ => Err(SpmdError::CannotMove {
                from: from.describe(),
                to: to.describe(),
            }),
        }
    }
}
