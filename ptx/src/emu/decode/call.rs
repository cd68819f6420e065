//! `call` of a `.func`: inlined at decode time (recursion is rejected), arguments and results
//! passed through per-thread `.param` slots in local memory, `ret` a branch to the end.
use std::collections::HashMap;

use crate::ast::{Instruction, Operand, StateSpace};

use super::super::error::EmuError;
use super::*;

impl<'m> Ctx<'m> {
    /// Inlines `call (rets), f, (args);`.
    pub(super) fn call(
        &mut self,
        scope: &mut HashMap<String, Sym>,
        i: &Instruction,
        fname: &str,
    ) -> Result<(), EmuError> {
        if i.guard.is_some() {
            return Err(self.err(fname, "guarded calls are not supported"));
        }
        let mut ops = i.operands.iter();
        let mut rets: Vec<&Operand> = Vec::new();
        let mut first = ops.next();
        if let Some(Operand::List(r)) = first {
            rets = r.iter().collect();
            first = ops.next();
        }
        let callee_name = match first {
            Some(Operand::Symbol { name, .. }) => name.clone(),
            _ => return Err(self.err(fname, "indirect calls are not supported")),
        };
        let args: Vec<&Operand> = match ops.next() {
            Some(Operand::List(a)) => a.iter().collect(),
            None => Vec::new(),
            Some(o) => vec![o],
        };
        let callee = self
            .module
            .function(&callee_name)
            .filter(|f| f.body.is_some())
            .ok_or_else(|| {
                self.err(fname, format!("call of `{callee_name}`, which has no body"))
            })?;
        // Each call is inlined: a call tree doubling at each of 30 levels is 2^30 copies of a
        // leaf from 1 KB of PTX (3.7 GB). Counting decoded instructions at every call bounds
        // the work by the limit plus one callee body.
        if self.code.len() as u64 > super::MAX_KERNEL_INSTRUCTIONS {
            return Err(self.err(
                fname,
                format!(
                    "inlining `{callee_name}` would take the kernel past {} instructions",
                    super::MAX_KERNEL_INSTRUCTIONS
                ),
            ));
        }
        if self.depth >= 16 {
            return Err(self.err(
                fname,
                format!("call depth limit reached calling `{callee_name}` (recursion?)"),
            ));
        }
        // Callee scope: module symbols only, plus parameters bound to the caller's slots.
        let mut cscope: HashMap<String, Sym> = HashMap::new();
        for (k, p) in callee.params().iter().enumerate() {
            let sym = match args.get(k) {
                Some(Operand::Symbol { name, .. })
                | Some(Operand::Address(ast::Address {
                    base: AddressBase::Symbol(name),
                    ..
                })) => self.lookup(scope, name, fname)?,
                Some(Operand::Reg(r)) if p.space == StateSpace::Reg => {
                    self.lookup(scope, r.name(), fname)?
                }
                _ => {
                    return Err(self.err(
                        fname,
                        format!("unsupported argument {k} of call to `{callee_name}`"),
                    ))
                }
            };
            cscope.insert(p.name.clone(), sym);
        }
        for (k, p) in callee
            .return_params
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            let sym = match rets.get(k) {
                Some(Operand::Symbol { name, .. }) => self.lookup(scope, name, fname)?,
                Some(Operand::Reg(r)) if p.space == StateSpace::Reg => {
                    self.lookup(scope, r.name(), fname)?
                }
                _ => {
                    return Err(self.err(
                        fname,
                        format!("unsupported return value {k} of call to `{callee_name}`"),
                    ))
                }
            };
            cscope.insert(p.name.clone(), sym);
        }
        // Module-scope shared variables stay visible.
        for (name, sym) in scope.iter() {
            if matches!(
                sym,
                Sym::Addr {
                    space: Space::Shared,
                    ..
                }
            ) && !cscope.contains_key(name)
            {
                cscope.insert(name.clone(), *sym);
            }
        }
        self.depth += 1;
        let mut frame = InlineFrame {
            ret_fixups: Vec::new(),
        };
        let body = callee.body.as_deref().unwrap_or(&[]);
        self.body(&mut cscope, body, Some(&mut frame), &callee.name)?;
        self.depth -= 1;
        let end = self.code.len() as u32;
        for pc in frame.ret_fixups {
            if let Some(Inst {
                op: Op::Bra { target },
                ..
            }) = self.code.get_mut(pc)
            {
                *target = end;
            }
        }
        Ok(())
    }
}
