//! How often the code generator emits each member of a kernel, so fusion can stop before code
//! size explodes (XLA's `FusionNodeIndexingEvaluation` and its `kAllowedCodeDuplication`).
//!
//! The elemental emitter (`codegen::elemental`) computes a member at every index its users ask
//! for and reuses a value only when the same member is asked for at the same index. A user that
//! reads its operand at its own index (an elementwise op of the same shape) asks at the indices
//! it is itself asked at; any other user (slice, pad, broadcast, reduce, gather, ...) makes new
//! indices each time it is emitted. So a member is emitted once per *index source* that reaches
//! it: the root, once, and each other-indexing user, as often as that user is emitted. A value
//! read both directly and through `pad(slice(.))` doubles at each such level: 16 levels of
//! `a = add(a, pad(slice(a)))` gave one kernel of 2^16 copies (36 MB of PTX from a 2 KB module).
//! A producer that would be emitted more than [`MAX_CODE_DUPLICATION`] times in a kernel is not
//! fused into it: it gets its own kernel and is read from memory, so code size stays linear in
//! the module.
use std::collections::HashMap;

use hlo::Computation;
use hlo::{InstrId, Instruction, Opcode};

/// The most times one instruction's code may be emitted in one kernel (XLA's value).
pub const MAX_CODE_DUPLICATION: u64 = 15;

/// A member of a kernel: the index sources that reach it and how often it is emitted.
#[derive(Debug, Clone, Default)]
pub struct Emitted {
    /// The members whose indices it is computed at (itself, for the root or when no user
    /// shares its index).
    sources: Vec<InstrId>,
    /// How many times its code is emitted.
    pub count: u64,
}

/// Per kernel (group index) and member, how it is emitted.
#[derive(Debug, Default)]
pub struct Emissions {
    members: HashMap<(usize, InstrId), Emitted>,
}

impl Emissions {
    /// Records the root of a new kernel: emitted once.
    pub fn root(&mut self, group: usize, id: InstrId) {
        let e = Emitted {
            sources: vec![id],
            count: 1,
        };
        self.members.insert((group, id), e);
    }

    /// How `id` would be emitted in `group`, given its users there (already members: the
    /// planner visits consumers first). Users outside the group are not asked for.
    pub fn would_be(
        &self,
        comp: &Computation,
        group: usize,
        id: InstrId,
        users: &[InstrId],
    ) -> Emitted {
        let mut sources = Vec::new();
        for &u in users {
            let (Some(user), Some(info)) = (comp.get(u), self.members.get(&(group, u))) else {
                continue;
            };
            for _ in user.operands.iter().filter(|&&o| o == id) {
                if reads_at_own_index(comp, user, id) {
                    sources.extend_from_slice(&info.sources);
                } else {
                    sources.push(u);
                }
            }
        }
        sources.sort_unstable();
        sources.dedup();
        let count = sources.iter().fold(0u64, |n, s| {
            let c = self.members.get(&(group, *s)).map_or(1, |e| e.count);
            n.saturating_add(c)
        });
        Emitted { sources, count }
    }

    /// Records `id` as a member of `group`.
    pub fn record(&mut self, group: usize, id: InstrId, e: Emitted) {
        self.members.insert((group, id), e);
    }
}

/// Whether `user` reads operand `id` at the index it is itself computed at.
fn reads_at_own_index(comp: &Computation, user: &Instruction, id: InstrId) -> bool {
    let same_dims = comp
        .get(id)
        .is_some_and(|o| o.shape.is_array() && o.shape.dims() == user.shape.dims());
    let op = user.opcode;
    let elementwise = op.is_elementwise_unary()
        || op.is_elementwise_binary()
        || matches!(
            op,
            Opcode::Compare
                | Opcode::Select
                | Opcode::Clamp
                | Opcode::Convert
                | Opcode::Copy
                | Opcode::Bitcast
        );
    elementwise && same_dims
}
