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

pub use error::{LayoutError, Needs, ShapeError, VerifyError};
pub use hlo::shape::SizeError;
pub use infer::infer_shape;

use std::collections::HashSet;

use hlo::ir::*;
use hlo::shape::{Layout, Shape};

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

/// Verifies a module; returns every problem found.
pub fn verify(module: &HloModule) -> Result<(), Vec<VerifyError>> {
    let mut errs = Vec::new();
    let lookup = |id: ComputationId| module.get(id).map(Signature::of);
    if module.get(module.entry).is_none() {
        errs.push(VerifyError {
            computation: String::new(),
            instruction: String::new(),
            loc: SourceLoc::default(),
            message: format!("entry computation {} does not exist", module.entry.0),
        });
        return Err(errs);
    }
    let mut comp_names = HashSet::new();
    for (_, c) in module.iter() {
        let cerr = |errs: &mut Vec<VerifyError>, m: String| {
            errs.push(VerifyError {
                computation: c.name.clone(),
                instruction: String::new(),
                loc: c.loc,
                message: m,
            })
        };
        if !comp_names.insert(c.name.as_str()) {
            cerr(
                &mut errs,
                format!("computation name '{}' is used twice", c.name),
            );
        }
        if c.get(c.root).is_none() {
            cerr(
                &mut errs,
                "the root is not an instruction of the computation".into(),
            );
        }
        for (n, &p) in c.params.iter().enumerate() {
            match c.get(p) {
                Some(i)
                    if i.opcode == Opcode::Parameter
                        && i.attrs.parameter_number == Some(n as i64) => {}
                _ => cerr(&mut errs, format!("params[{n}] is not parameter({n})")),
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
                format!(
                    "{nparams} parameter instructions but {} registered",
                    c.params.len()
                ),
            );
        }
        if has_cycle(c) {
            cerr(&mut errs, "the instructions' operands form a cycle".into());
        }
        let mut names = HashSet::new();
        for (_, instr) in c.iter() {
            let mut ierr = |m: String| {
                errs.push(VerifyError {
                    computation: c.name.clone(),
                    instruction: instr.name.clone(),
                    loc: instr.loc,
                    message: m,
                })
            };
            if !names.insert(instr.name.as_str()) {
                ierr(format!("instruction name '{}' is used twice", instr.name));
            }
            if let Err(m) = check_layout(&instr.shape) {
                ierr(m.to_string());
            }
            let sized = match check_size(&instr.shape) {
                Ok(()) => true,
                Err(m) => {
                    ierr(m.to_string());
                    false
                }
            };
            let mut bad_callee = false;
            for callee in instr.called_computations() {
                if module.get(callee).is_none() {
                    ierr(format!(
                        "calls computation #{} which does not exist",
                        callee.0
                    ));
                    bad_callee = true;
                }
            }
            let mut ops = Vec::with_capacity(instr.operands.len());
            for &o in &instr.operands {
                match c.get(o) {
                    Some(op) => ops.push(&op.shape),
                    None => {
                        ierr(format!("operand #{} does not exist", o.0));
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
                        ierr(format!(
                            "{} declares shape {} but its operands give {s}",
                            instr.opcode, instr.shape
                        ));
                    }
                }
                Ok(None) => {}
                Err(m) => ierr(format!("{}: {m}", instr.opcode)),
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
                message:
                    "entry_computation_layout does not match the entry computation's signature"
                        .into(),
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
