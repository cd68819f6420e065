//! A convolution outside any fusion: the convolution thunk of the cuDNN call XLA's conv
//! rewriter makes of it ([`crate::conv_rewriter`]). Only reached with
//! `CompileOptions::emit_convolution_thunk`, for the convolutions the rewriter accepts (the
//! fusion planner keeps every other one a kernel).
use hlo::Computation;
use hlo::Instruction;

use crate::error::CompileError;
use crate::unsupported::Unsupported;

use super::*;

impl Lowerer<'_> {
    pub(super) fn lower_convolution(
        &mut self,
        comp: &Computation,
        instr: &Instruction,
        env: &mut [Option<Vec<Loc>>],
        ops: &mut Vec<Op>,
    ) -> Result<Vec<Loc>, CompileError> {
        let conv = crate::conv_rewriter::classify(comp, instr).ok_or_else(|| {
            CompileError::Internal(format!(
                "{}: planned as a convolution thunk, but the conv rewriter does not take it",
                instr.name
            ))
        })?;
        let [a, b] = match instr.operands.as_slice() {
            &[a, b] => [a, b],
            _ => {
                return Err(CompileError::unsupported(
                    &comp.name,
                    instr,
                    Unsupported::ConvolutionOperands,
                ))
            }
        };
        let (la, lb) = (self.one_loc(comp, a, env)?, self.one_loc(comp, b, env)?);
        let t = self.tick();
        self.use_loc(la, t);
        self.use_loc(lb, t);
        let out_shape = instr.shape.without_layout();
        let dst = self.temp(&out_shape, &instr.name, t);
        ops.push(Op::Convolution {
            name: instr.name.clone(),
            conv: Box::new(conv),
            operands: [
                (la, comp[a].shape.without_layout()),
                (lb, comp[b].shape.without_layout()),
            ],
            result: (dst, out_shape),
        });
        Ok(vec![dst])
    }
}
