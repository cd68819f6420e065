//! Copy folding: `op X, ...; mov Y, X` becomes `op Y, ...` when `X` is a temporary that nothing
//! else names.
//!
//! The emitters compute a value into a fresh register and then move it into a loop-carried one
//! (a reduction's accumulator: `add.rn.f32 %f51, %f2, %f17; mov.f32 %f2, %f51`), because the
//! builder hands out a new register per value. ptxas folds such copies; the emulator runs every
//! instruction for every thread, so the `mov` was a fifth of a max reduction's loop and an
//! eighth of logsumexp's. Writing `Y` directly is the same computation: an instruction reads
//! its operands before it writes its destination, so `add.rn.f32 %f2, %f2, %f17` is exact.
//!
//! The rule is local and conservative: the two instructions are adjacent (no label between
//! them, so no branch enters between the write and the copy), both unguarded, `X` and `Y` are
//! registers of the same class, and `X` occurs nowhere else in the kernel (one write, one
//! read). The defining instruction writes only its first operand: a pure operation or a scalar
//! load (`folds_into`).
use std::collections::HashMap;

use ptx::{AddressBase, Instruction, Opcode, Operand, Statement};

/// Folds every foldable copy in `body`, repeatedly (a fold can make the next one adjacent).
/// A body with nested scopes is left alone, as dead-code elimination leaves it.
pub(super) fn fold_copies(body: &mut Vec<Statement>) {
    if body.iter().any(|st| matches!(st, Statement::Block(_))) {
        return;
    }
    while fold_once(body) {}
}

/// One pass; true when something was folded.
fn fold_once(body: &mut Vec<Statement>) -> bool {
    let uses = occurrences(body);
    let mut drop = vec![false; body.len()];
    let mut changed = false;
    for k in 0..body.len().saturating_sub(1) {
        if drop[k] {
            continue;
        }
        let (head, tail) = body.split_at_mut(k + 1);
        let (Statement::Instruction(def), Some(Statement::Instruction(copy))) =
            (&mut head[k], tail.first())
        else {
            continue;
        };
        let Some((x, y)) = foldable(def, copy) else {
            continue;
        };
        if uses.get(&x) != Some(&2) {
            continue;
        }
        def.operands[0] = Operand::Reg(ptx::Register(y));
        drop[k + 1] = true;
        changed = true;
    }
    let mut k = 0;
    body.retain(|_| {
        k += 1;
        !drop[k - 1]
    });
    changed
}

/// `(X, Y)` when `def` writes register `X` and `copy` is `mov Y, X` with both of one class.
fn foldable(def: &Instruction, copy: &Instruction) -> Option<(String, String)> {
    if !folds_into(def) || copy.op != Opcode::Mov || copy.guard.is_some() {
        return None;
    }
    let [Operand::Reg(y), Operand::Reg(x)] = copy.operands.as_slice() else {
        return None;
    };
    let Some(Operand::Reg(dx)) = def.operands.first() else {
        return None;
    };
    (dx == x && x != y && class(&x.0) == class(&y.0)).then(|| (x.0.clone(), y.0.clone()))
}

/// Whether `def` is unguarded and writes exactly its first operand, a register: a pure
/// operation (dead-code elimination's list) or a scalar load (its address is read before the
/// destination is written, like any operand).
fn folds_into(def: &Instruction) -> bool {
    def.guard.is_none()
        && (super::builder::PURE.contains(&def.op) || matches!(def.op, Opcode::Ex2 | Opcode::Ld))
        && matches!(def.operands.first(), Some(Operand::Reg(_)))
}

/// The register class of a builder register name: its prefix (`%f`, `%fd`, `%r`, `%rd`, ...).
fn class(name: &str) -> &str {
    name.trim_end_matches(|c: char| c.is_ascii_digit())
}

/// How many times each register is named in `body` (operands and guards, any position).
fn occurrences(body: &[Statement]) -> HashMap<String, u32> {
    let mut n: HashMap<&str, u32> = HashMap::new();
    for st in body {
        if let Statement::Instruction(i) = st {
            if let Some(g) = &i.guard {
                *n.entry(g.reg.0.as_str()).or_insert(0) += 1;
            }
            for o in &i.operands {
                count(o, &mut n);
            }
        }
    }
    n.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

fn count<'a>(o: &'a Operand, n: &mut HashMap<&'a str, u32>) {
    match o {
        Operand::Reg(r) | Operand::Not(r) => *n.entry(r.0.as_str()).or_insert(0) += 1,
        Operand::Address(a) => {
            if let AddressBase::Reg(r) = &a.base {
                *n.entry(r.0.as_str()).or_insert(0) += 1;
            }
        }
        Operand::Vector(v) | Operand::List(v) => v.iter().for_each(|o| count(o, n)),
        Operand::Pair(a, r) => {
            count(a, n);
            *n.entry(r.0.as_str()).or_insert(0) += 1;
        }
        Operand::Special(_) | Operand::Imm(_) | Operand::Symbol { .. } | Operand::Sink => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel `body` (PTX statements) printed, after folding when `folding`.
    fn printed(body: &str, folding: bool) -> String {
        let src = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n\
             .reg .pred %p<4>;\n.reg .b32 %r<9>;\n.reg .b64 %rd<9>;\n.reg .f32 %f<9>;\n\
             {body}\n}}\n"
        );
        let mut module = ptx::parse(&src).unwrap();
        let ptx::Directive::Function(f) = &mut module.directives[0] else {
            panic!("no function");
        };
        if folding {
            fold_copies(f.body.as_mut().unwrap());
        }
        let printed = ptx::print(&module);
        let start = printed.find("%f<9>;").unwrap() + "%f<9>;".len();
        let end = printed.rfind('}').unwrap();
        printed[start..end]
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn fold(body: &str) -> String {
        printed(body, true)
    }

    #[test]
    fn an_accumulator_update_writes_the_accumulator() {
        let got = fold(
            "mov.f32 %f1, 0f00000000;\n$L1:\nld.global.f32 %f2, [%rd1];\n\
             add.rn.f32 %f3, %f1, %f2;\nmov.f32 %f1, %f3;\nbra $L1;",
        );
        assert_eq!(
            got,
            "mov.f32\t%f1, 0f00000000;\n$L1:\nld.global.f32\t%f2, [%rd1];\n\
             add.rn.f32\t%f1, %f1, %f2;\nbra\t$L1;"
        );
    }

    #[test]
    fn a_load_and_a_chain_of_copies_fold() {
        let got = fold("ld.global.f32 %f2, [%rd1];\nmov.f32 %f3, %f2;\nmov.f32 %f4, %f3;\nst.global.f32 [%rd2], %f4;");
        assert_eq!(
            got,
            "ld.global.f32\t%f4, [%rd1];\nst.global.f32\t[%rd2], %f4;"
        );
    }

    /// Each case keeps its copy: the temporary read again, a label between, a guarded
    /// definition, a guarded copy, registers of two classes, a vector load.
    #[test]
    fn copies_that_must_stay() {
        for body in [
            "add.rn.f32 %f3, %f1, %f2;\nmov.f32 %f1, %f3;\nst.global.f32 [%rd2], %f3;",
            "add.rn.f32 %f3, %f1, %f2;\n$L1:\nmov.f32 %f1, %f3;\nbra $L1;",
            "@%p1 add.rn.f32 %f3, %f1, %f2;\nmov.f32 %f1, %f3;",
            "add.rn.f32 %f3, %f1, %f2;\n@%p1 mov.f32 %f1, %f3;",
            "shl.b32 %r2, %r1, 23;\nmov.b32 %f1, %r2;",
            "ld.global.v2.f32 {%f1, %f2}, [%rd1];\nmov.f32 %f3, %f1;",
        ] {
            let before = printed(body, false);
            assert_eq!(fold(body), before, "{body}");
        }
    }
}
