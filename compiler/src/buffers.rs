//! Buffer assignment: places the lowered program's values in allocations.
//!
//! Allocation order (deterministic): one allocation per entry-parameter leaf (by parameter
//! number, then leaf order), one per constant, one per output leaf, then one shared temp
//! allocation. Temporaries are packed into the temp allocation by interval colouring: largest
//! first, each at the lowest 64-byte-aligned offset where it overlaps no already-placed
//! temporary that is live at the same time. Values merged into another value (loop state,
//! conditional results, aliased outputs) share that value's memory.
use proto::xla::buffer_assignment::BufferAllocationSliceProto;
use proto::xla::BufferAllocationProto;

use crate::error::CompileError;
use crate::lower::{Loc, Placement, Value};

/// Alignment of temporaries inside the temp allocation.
pub const TEMP_ALIGNMENT: u64 = 64;
/// Alignment of constants inside `binary`.
pub const CONSTANT_ALIGNMENT: usize = 16;

/// The result of buffer assignment.
#[derive(Debug)]
pub struct Assignment {
    /// The allocations, index = position.
    pub allocations: Vec<BufferAllocationProto>,
    /// Per value: (allocation index, offset).
    pub placement: Vec<(i64, u64)>,
    /// Constants: (symbol, allocation index, bytes).
    pub constants: Vec<(String, i64, Vec<u8>)>,
    /// Size of the temp allocation (0 when there is none).
    pub temp_bytes: u64,
}

impl Assignment {
    /// The slice of a location.
    pub fn slice(&self, loc: Loc) -> Result<BufferAllocationSliceProto, CompileError> {
        let &(alloc, off) = self.placement.get(loc.value).ok_or_else(|| {
            CompileError::Internal(format!("value {} has no placement", loc.value))
        })?;
        Ok(BufferAllocationSliceProto {
            offset: (off + loc.offset) as i64,
            size: loc.size as i64,
            buffer_allocation_index: alloc,
        })
    }
}

fn resolve(values: &[Value], mut v: usize) -> usize {
    let mut steps = 0;
    while let Some(Some(next)) = values.get(v).map(|x| x.alias_of) {
        v = next;
        steps += 1;
        if steps > values.len() {
            break;
        }
    }
    v
}

/// Assigns every value to an allocation.
pub fn assign(values: &[Value]) -> Result<Assignment, CompileError> {
    let n = values.len();
    // Live ranges of roots cover everything merged into them.
    let mut def = vec![u32::MAX; n];
    let mut last = vec![0u32; n];
    for (i, v) in values.iter().enumerate() {
        let r = resolve(values, i);
        def[r] = def[r].min(v.def);
        last[r] = last[r].max(v.last_use);
    }
    let mut allocations: Vec<BufferAllocationProto> = Vec::new();
    let mut placement = vec![(-1i64, 0u64); n];
    let mut constants = Vec::new();
    let mut push = |alloc: BufferAllocationProto| -> i64 {
        let index = allocations.len() as i64;
        allocations.push(BufferAllocationProto { index, ..alloc });
        index
    };
    let roots: Vec<usize> = (0..n).filter(|&i| values[i].alias_of.is_none()).collect();
    let mut params: Vec<(i64, Vec<i64>, usize)> = roots
        .iter()
        .filter_map(|&i| match &values[i].placement {
            Placement::Param { number, index } => Some((*number, index.clone(), i)),
            _ => None,
        })
        .collect();
    params.sort();
    for (number, index, i) in params {
        let a = push(BufferAllocationProto {
            size: values[i].size as i64,
            is_entry_computation_parameter: true,
            parameter_number: number,
            parameter_shape_index: index,
            ..Default::default()
        });
        placement[i] = (a, 0);
    }
    for &i in &roots {
        if let Placement::Constant { symbol, bytes } = &values[i].placement {
            let a = push(BufferAllocationProto {
                size: values[i].size as i64,
                is_constant: true,
                ..Default::default()
            });
            placement[i] = (a, 0);
            constants.push((symbol.clone(), a, bytes.clone()));
        }
    }
    for &i in &roots {
        if values[i].placement == Placement::Output {
            let a = push(BufferAllocationProto {
                size: values[i].size as i64,
                maybe_live_out: true,
                ..Default::default()
            });
            placement[i] = (a, 0);
        }
    }
    // Temporaries: interval colouring.
    let mut temps: Vec<usize> = roots
        .iter()
        .copied()
        .filter(|&i| values[i].placement == Placement::Temp)
        .collect();
    temps.sort_by(|&a, &b| {
        values[b]
            .size
            .cmp(&values[a].size)
            .then(def[a].cmp(&def[b]))
            .then(a.cmp(&b))
    });
    let mut placed = LiveIndex::new(temps.iter().map(|&i| (def[i], last[i])).collect());
    let mut temp_bytes = 0u64;
    let mut temp_offsets = Vec::new();
    for (k, &i) in temps.iter().enumerate() {
        let size = values[i].size.max(1);
        let (d, l) = (def[i], last[i]);
        let mut conflicts: Vec<(u64, u64)> = Vec::new();
        placed.overlapping(d, l, &mut conflicts);
        conflicts.sort();
        let mut offset = 0u64;
        for (o, e) in conflicts {
            if offset + size <= o {
                break;
            }
            offset = offset.max(e.div_ceil(TEMP_ALIGNMENT) * TEMP_ALIGNMENT);
        }
        placed.place(k, offset, offset + size);
        temp_bytes = temp_bytes.max(offset + size);
        temp_offsets.push((i, offset));
    }
    if !temp_offsets.is_empty() {
        let a = push(BufferAllocationProto {
            size: temp_bytes as i64,
            ..Default::default()
        });
        for (i, off) in temp_offsets {
            placement[i] = (a, off);
        }
    }
    for i in 0..n {
        let r = resolve(values, i);
        if r != i {
            placement[i] = placement[r];
        }
        if placement[i].0 < 0 {
            return Err(CompileError::Internal(format!(
                "value {} was not placed",
                values[i].name
            )));
        }
    }
    Ok(Assignment {
        allocations,
        placement,
        constants,
        temp_bytes,
    })
}

/// The temporaries placed so far, found by live range: a segment tree over all temporaries
/// sorted by definition tick, each node holding the latest last use among its placed members.
/// Finding those live at the same time as `[d, l]` visits only subtrees that hold one, so
/// placing N temporaries costs O((N + conflicts) log N) where scanning every placed temporary
/// was quadratic (issue 17). Hand-written: about forty lines, no crate offers this exact query
/// with incremental insertion over a known set.
struct LiveIndex {
    /// (def, last) per temporary, in placement order.
    ranges: Vec<(u32, u32)>,
    /// Temporaries (placement-order index) sorted by def.
    by_def: Vec<usize>,
    /// Position of each temporary in `by_def`.
    slot: Vec<usize>,
    /// (offset, end) of each placed temporary.
    extent: Vec<Option<(u64, u64)>>,
    /// Segment tree over `by_def`: the latest last use of a placed temporary below the node.
    tree: Vec<Option<u32>>,
    size: usize,
}

impl LiveIndex {
    fn new(ranges: Vec<(u32, u32)>) -> LiveIndex {
        let n = ranges.len();
        let mut by_def: Vec<usize> = (0..n).collect();
        by_def.sort_by_key(|&k| (ranges[k].0, k));
        let mut slot = vec![0; n];
        for (p, &k) in by_def.iter().enumerate() {
            slot[k] = p;
        }
        let size = n.next_power_of_two().max(1);
        LiveIndex {
            ranges,
            by_def,
            slot,
            extent: vec![None; n],
            tree: vec![None; 2 * size],
            size,
        }
    }

    fn place(&mut self, k: usize, offset: u64, end: u64) {
        self.extent[k] = Some((offset, end));
        let last = self.ranges[k].1;
        let mut node = self.size + self.slot[k];
        while node >= 1 {
            self.tree[node] = Some(self.tree[node].map_or(last, |m| m.max(last)));
            node /= 2;
        }
    }

    /// Appends the extents of placed temporaries whose live range meets `[d, l]`.
    fn overlapping(&self, d: u32, l: u32, out: &mut Vec<(u64, u64)>) {
        // Candidates are defined no later than l: a prefix of `by_def`.
        let limit = self.by_def.partition_point(|&k| self.ranges[k].0 <= l);
        let mut stack = vec![(1usize, 0usize, self.size)];
        while let Some((node, lo, hi)) = stack.pop() {
            if lo >= limit || self.tree[node].is_none_or(|m| m < d) {
                continue;
            }
            if node >= self.size {
                if let Some(e) = self.by_def.get(lo).and_then(|&k| self.extent[k]) {
                    out.push(e);
                }
                continue;
            }
            let mid = (lo + hi) / 2;
            stack.push((2 * node, lo, mid));
            stack.push((2 * node + 1, mid, hi));
        }
    }
}
