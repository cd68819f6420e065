//! Malformed input never panics the emulator: every corpus kernel, mutated at random in its
//! typed model (instructions deleted, duplicated, operands and types replaced, opcodes swapped),
//! either fails to load, fails to launch with a typed error, or runs (within a small budget).
mod emu_common;

use ptx::{Immediate, Instruction, Modifier, Opcode, Operand, Register, Statement, Type};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn instructions(stmts: &mut [Statement]) -> Vec<&mut Instruction> {
    let mut out = Vec::new();
    for s in stmts {
        match s {
            Statement::Instruction(i) => out.push(i),
            Statement::Block(b) => out.extend(instructions(b)),
            _ => {}
        }
    }
    out
}

fn mutate(module: &mut ptx::Module, rng: &mut Rng, regs: &[String]) {
    let Some(f) = module.directives.iter_mut().find_map(|d| match d {
        ptx::Directive::Function(f) if f.body.is_some() => Some(f),
        _ => None,
    }) else {
        return;
    };
    let Some(body) = f.body.as_mut() else { return };
    let kind = rng.below(6);
    if kind == 0 && !body.is_empty() {
        let k = rng.below(body.len());
        body.remove(k);
        return;
    }
    if kind == 1 && !body.is_empty() {
        let k = rng.below(body.len());
        let s = body[k].clone();
        body.insert(k, s);
        return;
    }
    let mut insts = instructions(body);
    if insts.is_empty() {
        return;
    }
    let n = insts.len();
    let i = &mut insts[rng.below(n)];
    match kind {
        2 if !i.operands.is_empty() => {
            let k = rng.below(i.operands.len());
            i.operands[k] = match rng.below(5) {
                0 => Operand::Imm(Immediate::Int(rng.next() as i64 >> rng.below(64))),
                1 => Operand::Imm(Immediate::F32(rng.next() as u32)),
                2 => Operand::Sink,
                _ => Operand::Reg(Register(regs[rng.below(regs.len())].clone())),
            };
        }
        3 => {
            let types = [
                Type::U8,
                Type::S16,
                Type::U32,
                Type::S64,
                Type::F16,
                Type::Bf16,
                Type::F32,
                Type::F64,
                Type::Pred,
                Type::B128,
                Type::F16x2,
            ];
            if let Some(m) = i.mods.iter_mut().find(|m| matches!(m, Modifier::Type(_))) {
                *m = Modifier::Type(types[rng.below(types.len())]);
            }
        }
        4 => {
            let ops = Opcode::ALL;
            i.op = ops[rng.below(ops.len())];
        }
        _ => {
            if let Some(Operand::Address(a)) = i
                .operands
                .iter_mut()
                .find(|o| matches!(o, Operand::Address(_)))
            {
                a.offset = rng.next() as i64 >> rng.below(64);
            } else if !i.operands.is_empty() {
                let k = rng.below(i.operands.len());
                i.operands.remove(k);
            }
        }
    }
}

#[test]
fn mutated_corpus_kernels_never_panic() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/corpus/ptx");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".launch.json"))
                .map(String::from)
        })
        .collect();
    names.sort();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut ran, mut failed) = (0, 0);
    for name in &names {
        let text = std::fs::read_to_string(dir.join(format!("{name}.ptx"))).unwrap();
        let spec: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{name}.launch.json"))).unwrap(),
        )
        .unwrap();
        let base = ptx::parse(&text).unwrap();
        let regs: Vec<String> = [
            "%r1", "%r2", "%rd1", "%rd2", "%f1", "%p1", "%rs1", "%nosuch",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for round in 0..150 {
            let mut m = base.clone();
            for _ in 0..1 + rng.below(3) {
                mutate(&mut m, &mut rng, &regs);
            }
            let r = catch_unwind(AssertUnwindSafe(|| {
                emu_common::run_spec_ast(&m, &spec, 1, 2_000_000)
            }));
            match r {
                Ok(Ok(_)) => ran += 1,
                Ok(Err(_)) => failed += 1,
                Err(_) => panic!(
                    "{name} mutation round {round} panicked:\n{}",
                    ptx::print(&m)
                ),
            }
        }
    }
    // The mutations must exercise both outcomes.
    assert!(ran > 50 && failed > 50, "ran {ran}, failed {failed}");
}

/// 300 register ranges of 65,536 (a 9 KB kernel) took 46 s and 2.3 GB to load, one map entry
/// per register; the kernel's registers are now counted before any is made.
#[test]
fn a_kernel_declaring_millions_of_registers_is_refused_before_making_them() {
    let regs: String = (0..300)
        .map(|i| format!(".reg .b32 %r{i}_<65536>;\n"))
        .collect();
    let text = emu_common::module(&format!(".visible .entry k() {{\n{regs} ret; }}"));
    let err = ptx::emu::LoadedModule::load(&ptx::parse(&text).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot load function `k`: declaring %r0_<65536> would take the kernel past 65536 registers (1 declared before it)"
    );
    // Real kernels declare a few thousand: XLA's largest range here is %r<526>.
    let fits = emu_common::module(".visible .entry k() { .reg .b32 %r<60000>; ret; }");
    assert!(ptx::emu::LoadedModule::load(&ptx::parse(&fits).unwrap()).is_ok());
}

/// A call tree eight wide at each of ten levels (f_k calls f_{k-1} eight times) is 8^10 inlined
/// leaves from 1 KB of PTX; the inliner stops at the instruction limit.
#[test]
fn an_exponential_call_tree_stops_at_the_instruction_limit() {
    // No registers in the leaf: the register limit would stop it first.
    let mut text = String::from(".func f0() { ret; }\n");
    for k in 1..=10 {
        let calls = format!("call f{}; ", k - 1).repeat(8);
        text += &format!(".func f{k}() {{ {calls}ret; }}\n");
    }
    text += ".visible .entry k() { call f10; ret; }";
    let started = std::time::Instant::now();
    let err = ptx::emu::LoadedModule::load(&ptx::parse(&emu_common::module(&text)).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("cannot load function `")
            && err.ends_with("would take the kernel past 2097152 instructions"),
        "{err}"
    );
    // Bounded by the limit, not by 8^10 leaves (a loose bound: shared CI machines are slow).
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}
