//! The verifier: structural checks and per-opcode shape inference.
//!
//! [`verify`] reports every problem it finds (not just the first), each with the computation,
//! the instruction and its source location. Shape inference ([`infer_shape`]) covers the
//! elementwise, data-movement, reduction, control-flow and indexing opcodes; opcodes it cannot
//! infer (custom-call, collectives, rng, bitcast, ...) are accepted with their declared shape.
//!
//! `infer_shape` dispatches on the opcode to one rule per family (`elementwise`, `movement`,
//! `indexing`, `contraction`, `reduction`, `control`, `misc`, and `opaque` for the opcodes whose
//! declared shape is trusted); each failure is a [`ShapeError`] variant carrying the values it
//! compared, whose `Display` is the message the verifier reports.
#![forbid(unsafe_code)]

mod contraction;
mod control;
mod elementwise;
mod error;
mod indexing;
mod infer;
mod misc;
mod movement;
mod opaque;
mod reduction;

pub use error::{LayoutError, Needs, ShapeError, VerifyError, VerifyErrorKind};
pub use hlo::SizeError;
pub use infer::infer_shape;

use std::collections::HashSet;

use hlo::*;
use hlo::{Layout, Shape};

/// The signature of a called computation: parameter shapes by number and the root shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// Parameter shapes, by parameter number.
    pub params: Vec<Shape>,
    /// Root shape.
    pub result: Shape,
}

impl Signature {
    /// The signature of a computation.
    pub fn of(c: &Computation) -> Signature {
        Signature {
            params: c.param_shapes().into_iter().cloned().collect(),
            result: c
                .root_instruction()
                .map_or(Shape::Tuple(Vec::new()), |r| r.shape.clone()),
        }
    }
}

/// Looks up the signature of a called computation.
pub type CalleeLookup<'a> = &'a dyn Fn(ComputationId) -> Option<Signature>;

fn check_layout(shape: &Shape) -> Result<(), LayoutError> {
    match shape {
        Shape::Array(a) => {
            if let Some(Layout { minor_to_major, .. }) = &a.layout {
                if minor_to_major.is_empty() && a.rank() > 0 {
                    return Ok(());
                }
                let mut seen = vec![false; a.rank()];
                let ok = minor_to_major.len() == a.rank()
                    && minor_to_major.iter().all(|&d| {
                        usize::try_from(d)
                            .ok()
                            .and_then(|d| seen.get_mut(d))
                            .is_some_and(|s| !std::mem::replace(s, true))
                    });
                if !ok {
                    return Err(LayoutError::NotPermutation(Box::new(a.clone())));
                }
            }
            if a.dims.len() != a.dynamic.len() {
                return Err(LayoutError::DynamicFlags(Box::new(a.clone())));
            }
            Ok(())
        }
        Shape::Tuple(t) => t.iter().try_for_each(check_layout),
        Shape::Token => Ok(()),
    }
}

/// Every array of `shape` has a byte size that fits `i64` (negative dimensions are reported by
/// shape inference and the parser, and count as 0 here).
pub fn check_size(shape: &Shape) -> Result<(), SizeError> {
    shape.checked_byte_size().map(drop)
}

/// Every instruction's shape (each array of it) has at most `limit` elements
/// ([`hlo::MAX_ELEMENTS`] unless a flag says otherwise): the first one over is the
/// error, naming its computation, instruction, location, shape and the limit. The compiler and
/// the evaluator run it where a module enters them, before any pass or evaluation sizes
/// anything by a shape.
pub fn check_elements(module: &HloModule, limit: u64) -> Result<(), VerifyError> {
    for (_, c) in module.iter() {
        for (_, instr) in c.iter() {
            if let Err(e) = instr.shape.check_elements(limit) {
                return Err(VerifyError {
                    computation: c.name.clone(),
                    instruction: instr.name.clone(),
                    loc: instr.loc,
                    kind: e.into(),
                });
            }
        }
    }
    Ok(())
}

/// Verifies a module; returns every problem found.
pub fn verify(module: &HloModule) -> Result<(), Vec<VerifyError>> {
    let mut errs = Vec::new();
    let lookup = |id: ComputationId| module.get(id).map(Signature::of);
    if module.get(module.entry).is_none() {
        errs.push(VerifyError {
            computation: String::new(),
            instruction: String::new(),
            loc: SourceLoc::default(),
            kind: VerifyErrorKind::NoEntry(module.entry.0),
        });
        return Err(errs);
    }
    let mut comp_names = HashSet::new();
    for (_, c) in module.iter() {
        let cerr = |errs: &mut Vec<VerifyError>, kind: VerifyErrorKind| {
            errs.push(VerifyError {
                computation: c.name.clone(),
                instruction: String::new(),
                loc: c.loc,
                kind,
            })
        };
        if !comp_names.insert(c.name.as_str()) {
            cerr(
                &mut errs,
                VerifyErrorKind::DuplicateComputation(c.name.clone()),
            );
        }
        if c.get(c.root).is_none() {
            cerr(&mut errs, VerifyErrorKind::NoRoot);
        }
        for (n, &p) in c.params.iter().enumerate() {
            match c.get(p) {
                Some(i)
                    if i.opcode == Opcode::Parameter
                        && i.attrs.parameter_number == Some(n as i64) => {}
                _ => cerr(&mut errs, VerifyErrorKind::ParamSlot(n)),
            }
        }
        let nparams = c
            .instructions
            .iter()
            .filter(|i| i.opcode == Opcode::Parameter)
            .count();
        if nparams != c.params.len() {
            cerr(
                &mut errs,
                VerifyErrorKind::ParamCount {
                    instructions: nparams,
                    registered: c.params.len(),
                },
            );
        }
        if has_cycle(c) {
            cerr(&mut errs, VerifyErrorKind::Cycle);
        }
        let mut names = HashSet::new();
        for (_, instr) in c.iter() {
            let mut ierr = |kind: VerifyErrorKind| {
                errs.push(VerifyError {
                    computation: c.name.clone(),
                    instruction: instr.name.clone(),
                    loc: instr.loc,
                    kind,
                })
            };
            if !names.insert(instr.name.as_str()) {
                ierr(VerifyErrorKind::DuplicateInstruction(instr.name.clone()));
            }
            if let Err(e) = check_layout(&instr.shape) {
                ierr(e.into());
            }
            let sized = match check_size(&instr.shape) {
                Ok(()) => true,
                Err(e) => {
                    ierr(e.into());
                    false
                }
            };
            let mut bad_callee = false;
            for callee in instr.called_computations() {
                if module.get(callee).is_none() {
                    ierr(VerifyErrorKind::MissingCallee(callee.0));
                    bad_callee = true;
                }
            }
            let mut ops = Vec::with_capacity(instr.operands.len());
            for &o in &instr.operands {
                match c.get(o) {
                    Some(op) => ops.push(&op.shape),
                    None => {
                        ierr(VerifyErrorKind::MissingOperand(o.0));
                    }
                }
            }
            if ops.len() != instr.operands.len() || bad_callee {
                continue;
            }
            // Shape inference multiplies these dimensions; a shape too large is reported where
            // it is declared, once.
            if !sized || ops.iter().any(|o| check_size(o).is_err()) {
                continue;
            }
            match infer_shape(
                instr.opcode,
                &ops,
                &instr.attrs,
                Some(&instr.shape),
                Some(&lookup),
            ) {
                Ok(Some(s)) => {
                    if !s.compatible(&instr.shape) {
                        ierr(VerifyErrorKind::DeclaredShape {
                            opcode: instr.opcode,
                            declared: Box::new(instr.shape.clone()),
                            inferred: Box::new(s),
                        });
                    }
                }
                Ok(None) => {}
                Err(error) => ierr(VerifyErrorKind::Shape {
                    opcode: instr.opcode,
                    error,
                }),
            }
        }
    }
    // The entry layout must match the entry computation's signature.
    let entry = module.entry_computation();
    if let Some(l) = &module.config.entry_computation_layout {
        let sig = Signature::of(entry);
        let ok = l.params.len() == sig.params.len()
            && l.params
                .iter()
                .zip(&sig.params)
                .all(|(a, b)| a.compatible(b))
            && l.result.compatible(&sig.result);
        if !ok {
            errs.push(VerifyError {
                computation: entry.name.clone(),
                instruction: String::new(),
                loc: entry.loc,
                kind: VerifyErrorKind::EntryLayout,
            });
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs)
    }
}

/// True when the operand graph of `c` has a cycle (the walk behind `post_order`).
fn has_cycle(c: &Computation) -> bool {
    c.operand_walk().1
}
