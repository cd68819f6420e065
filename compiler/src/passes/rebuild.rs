//! What every pass shares, so that a pass file holds only its rule (cranelift's shape: one pass
//! per file, over one computation):
//!
//! - `for_each_computation`: the loop over a module's computations, replacing each one the pass
//!   rewrote (in order, so a pass sees the computations it already rewrote, as callers see their
//!   rewritten callees);
//! - `rebuild`: a new instruction list for one computation, in topological order, with every
//!   operand, parameter and the root remapped to the new handles; the pass decides per
//!   instruction what it becomes (`Rebuild::keep`, a forward to an existing value, new
//!   instructions, or nothing);
//! - `Rebuild::inline`: a callee's body copied in place of a call site, nested calls expanded
//!   iteratively (a chain of 100,000 nested calls costs heap, not thread stack, and memory
//!   linear in what is copied);
//! - `transpose` and `permuted`: the `transpose` a pass puts in front of or behind the
//!   instruction it rewrites (collectives, gemm-operands), with its result shape.
use hlo::{Attrs, Computation};
use hlo::{ComputationId, HloModule, InstrId, Instruction, Opcode, Shape};

use crate::error::{CompileError, MalformedModule};
use crate::graph::{remap, topo_order};

/// Which computations a pass visits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Those reachable from the entry, callees before callers ([`HloModule::post_order`]).
    Reachable,
    /// Every computation, in text order.
    All,
    /// These, in this order.
    Listed(Vec<ComputationId>),
}

/// Runs `pass` over the computations in `scope`; a computation it returns replaces the one it
/// was given before the next is visited. `None` leaves the computation as it was (untouched,
/// not even renumbered).
pub(crate) fn for_each_computation(
    module: &mut HloModule,
    scope: Scope,
    mut pass: impl FnMut(&HloModule, &Computation) -> Result<Option<Computation>, CompileError>,
) -> Result<(), CompileError> {
    let ids: Vec<ComputationId> = match scope {
        Scope::Reachable => module.post_order(),
        Scope::All => (0..module.computations.len())
            .map(|i| ComputationId(i as u32))
            .collect(),
        Scope::Listed(ids) => ids,
    };
    for cid in ids {
        let Some(comp) = module.get(cid) else {
            continue;
        };
        if let Some(new) = pass(module, comp)? {
            if let Some(slot) = module.computations.get_mut(cid.index()) {
                *slot = new;
            }
        }
    }
    Ok(())
}

/// A computation being rebuilt: the source, the new instructions so far, and where each source
/// instruction went.
pub(crate) struct Rebuild<'c> {
    source: &'c Computation,
    map: Vec<Option<InstrId>>,
    instrs: Vec<Instruction>,
    // Per computation of the module, whether [`Rebuild::inline`] is inside it now (made once per
    // rebuild, not per call site: a computation with many call sites stays linear).
    open: Vec<bool>,
}

impl<'c> Rebuild<'c> {
    /// The new instructions so far (indexed by new handles).
    pub fn instrs(&self) -> &[Instruction] {
        &self.instrs
    }

    /// Appends an instruction whose operands are new handles, and returns its handle.
    pub fn push(&mut self, instr: Instruction) -> InstrId {
        self.instrs.push(instr);
        InstrId((self.instrs.len() - 1) as u32)
    }

    /// The new handles of a source instruction's operands (each operand precedes it in the
    /// topological order, so it is mapped unless the pass dropped it).
    pub fn operands(&self, old: &Instruction) -> Result<Vec<InstrId>, CompileError> {
        old.operands
            .iter()
            .map(|&o| remap(&self.map, o, &self.source.name))
            .collect()
    }

    /// A copy of a source instruction with its operands remapped.
    pub fn remapped(&self, old: &Instruction) -> Result<Instruction, CompileError> {
        let operands = self.operands(old)?;
        Ok(Instruction {
            operands,
            ..old.clone()
        })
    }

    /// Keeps a source instruction as it is (operands remapped).
    pub fn keep(&mut self, old: &Instruction) -> Result<InstrId, CompileError> {
        let new = self.remapped(old)?;
        Ok(self.push(new))
    }

    /// Copies the body of `callee` here with `args` (new handles) for its parameters, and
    /// returns the new handle of its root. `site` is the instruction that calls it (for
    /// messages). A copied instruction for which `expand` names a computation is itself
    /// expanded in place, to any depth; every other copied instruction is renamed by `rename`,
    /// which gets, for an instruction at most [`MAX_NAMED_LEVELS`] calls below the site, the
    /// count of instructions each enclosing call level has taken from its callees so far,
    /// innermost first (what each level's own counter would say had it been inlined on its
    /// own, callees first), and `None` for deeper ones.
    ///
    /// Work and memory are linear in the number of instructions copied: the expansion keeps
    /// one frame per open call level on the heap, and names are renamed once, not once per
    /// level. A callee that calls itself (directly or not) is refused. How many instructions
    /// an expansion copies is the caller's to bound (a call graph that repeats its callees
    /// grows exponentially with its depth): see `inline_calls`.
    pub fn inline(
        &mut self,
        module: &HloModule,
        callee: ComputationId,
        args: Vec<InstrId>,
        site: &Instruction,
        expand: impl Fn(&Instruction) -> Option<ComputationId>,
        mut rename: impl FnMut(&str, Option<&[usize]>) -> String,
    ) -> Result<InstrId, CompileError> {
        if self.open.len() < module.computations.len() {
            self.open.resize(module.computations.len(), false);
        }
        let mut stack = vec![enter(
            module,
            &mut self.open,
            callee,
            args,
            site,
            InstrId(0),
            self.instrs.len(),
        )?];
        loop {
            let Some(top) = stack.last_mut() else {
                return Err(CompileError::Internal(format!(
                    "inlining into {} lost its call frames",
                    self.source.name
                )));
            };
            let Some(&cid) = top.order.get(top.next) else {
                let value = remap(&top.inner, top.comp.root, &top.comp.name)?;
                let (done_id, done_site) = (top.id, top.site);
                stack.pop();
                if let Some(flag) = self.open.get_mut(done_id.index()) {
                    *flag = false;
                }
                match stack.last_mut() {
                    Some(parent) => {
                        if let Some(slot) = parent.inner.get_mut(done_site.index()) {
                            *slot = Some(value);
                        }
                        continue;
                    }
                    None => return Ok(value),
                }
            };
            top.next += 1;
            if top.inner.get(cid.index()).copied().flatten().is_some() {
                continue;
            }
            let comp = top.comp;
            let ci = comp.get(cid).ok_or_else(|| {
                CompileError::Internal(format!("instruction {cid:?} of {} missing", comp.name))
            })?;
            if ci.opcode == Opcode::Parameter {
                return Err(CompileError::Malformed(
                    MalformedModule::ParameterNotListed {
                        parameter: ci.name.clone(),
                        computation: comp.name.clone(),
                    },
                ));
            }
            let operands = ci
                .operands
                .iter()
                .map(|&o| remap(&top.inner, o, &comp.name))
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(nested) = expand(ci) {
                let frame = enter(
                    module,
                    &mut self.open,
                    nested,
                    operands,
                    ci,
                    cid,
                    self.instrs.len(),
                )?;
                stack.push(frame);
                continue;
            }
            // How many instructions each enclosing call level has taken from its callees so far,
            // counting this one, innermost first: each level's own count, as if it had been
            // inlined on its own (see `rename`).
            let depth = stack.len() - 1;
            let levels: Option<Vec<usize>> = (depth <= MAX_NAMED_LEVELS).then(|| {
                let pushed = self.instrs.len();
                stack
                    .iter()
                    .take(depth)
                    .rev()
                    .map(|f| pushed - f.opened_at - f.direct + 1)
                    .collect()
            });
            let new = Instruction {
                name: rename(&ci.name, levels.as_deref()),
                operands,
                ..ci.clone()
            };
            let id = self.push(new);
            if let Some(top) = stack.last_mut() {
                top.direct += 1;
                if let Some(slot) = top.inner.get_mut(cid.index()) {
                    *slot = Some(id);
                }
            }
        }
    }
}

/// How many call levels below a call site an inlined instruction keeps a count per level in
/// its name (see `Rebuild::inline`): names stay those of inlining each level on its own for
/// the nesting real modules have, and do not grow with the depth of a chain of calls.
pub const MAX_NAMED_LEVELS: usize = 8;

/// One open call level of [`Rebuild::inline`].
struct Frame<'m> {
    id: ComputationId,
    comp: &'m Computation,
    order: Vec<InstrId>,
    next: usize,
    // Where each instruction of `comp` went in the rebuild.
    inner: Vec<Option<InstrId>>,
    // The call instruction, in the caller's frame, that this frame's root value replaces.
    site: InstrId,
    // Instructions in the rebuild when the frame opened, and those copied from `comp` itself
    // since: the rest since then came from its callees.
    opened_at: usize,
    direct: usize,
}

/// Opens a frame for a call of `callee` with `args` from `site` (`site_id` in the caller).
fn enter<'m>(
    module: &'m HloModule,
    open: &mut [bool],
    callee: ComputationId,
    args: Vec<InstrId>,
    site: &Instruction,
    site_id: InstrId,
    opened_at: usize,
) -> Result<Frame<'m>, CompileError> {
    let comp = module
        .get(callee)
        .ok_or_else(|| CompileError::Malformed(MalformedModule::NoCallee(site.name.clone())))?;
    if comp.params.len() != args.len() {
        return Err(CompileError::Malformed(MalformedModule::CallArity {
            site: site.name.clone(),
            operands: args.len(),
            callee: comp.name.clone(),
            parameters: comp.params.len(),
        }));
    }
    match open.get_mut(callee.index()) {
        Some(flag) if !*flag => *flag = true,
        _ => {
            return Err(CompileError::Malformed(MalformedModule::Recursion {
                site: site.name.clone(),
                callee: comp.name.clone(),
            }))
        }
    }
    let mut inner: Vec<Option<InstrId>> = vec![None; comp.instructions.len()];
    for (&p, arg) in comp.params.iter().zip(args) {
        if let Some(slot) = inner.get_mut(p.index()) {
            *slot = Some(arg);
        }
    }
    Ok(Frame {
        id: callee,
        comp,
        order: topo_order(comp)?,
        next: 0,
        inner,
        site: site_id,
        opened_at,
        direct: 0,
    })
}

/// Rebuilds `comp`: visits its instructions in topological order, and `visit` returns the new
/// handle each one becomes (`None`: dropped; nothing may use it then). Parameters and the root
/// are remapped the same way.
pub(crate) fn rebuild(
    comp: &Computation,
    mut visit: impl FnMut(
        &mut Rebuild<'_>,
        InstrId,
        &Instruction,
    ) -> Result<Option<InstrId>, CompileError>,
) -> Result<Computation, CompileError> {
    let mut r = Rebuild {
        source: comp,
        map: vec![None; comp.instructions.len()],
        instrs: Vec::new(),
        open: Vec::new(),
    };
    for id in topo_order(comp)? {
        let old = comp.get(id).ok_or_else(|| {
            CompileError::Internal(format!("instruction {id:?} of {} missing", comp.name))
        })?;
        let new = visit(&mut r, id, old)?;
        if let Some(slot) = r.map.get_mut(id.index()) {
            *slot = new;
        }
    }
    let params = comp
        .params
        .iter()
        .map(|&p| remap(&r.map, p, &comp.name))
        .collect::<Result<Vec<_>, _>>()?;
    let root = remap(&r.map, comp.root, &comp.name)?;
    Ok(Computation {
        name: comp.name.clone(),
        instructions: r.instrs,
        params,
        root,
        execution_thread: comp.execution_thread.clone(),
        loc: comp.loc,
    })
}

/// `shape` with its dimensions in the order `perm` (`perm[i]` is the input dimension that
/// becomes dimension `i`): the result shape of a transpose. A tuple or token (which no pass
/// transposes) would come out as an `f32` array.
pub(crate) fn permuted(shape: &Shape, perm: &[usize]) -> Shape {
    let dims = perm
        .iter()
        .filter_map(|&p| shape.dims().get(p).copied())
        .collect();
    Shape::array(
        shape.element_type().unwrap_or(hlo::PrimitiveType::F32),
        dims,
    )
}

/// A `transpose` of `operand` by `perm` into `shape`, carrying `like`'s metadata and source
/// location: what a pass inserts in front of or behind the instruction it rewrites.
pub(crate) fn transpose(
    name: String,
    operand: InstrId,
    shape: Shape,
    perm: &[usize],
    like: &Instruction,
) -> Instruction {
    Instruction {
        name,
        opcode: Opcode::Transpose,
        shape,
        operands: vec![operand],
        attrs: Attrs {
            dimensions: Some(perm.iter().map(|&p| p as i64).collect()),
            ..Attrs::default()
        },
        metadata: like.metadata.clone(),
        loc: like.loc,
    }
}
