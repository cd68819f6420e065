//! Row allocation for the fast engine: the decoded function's registers packed into as few
//! rows as their live ranges allow.
//!
//! PTX from compilers is in SSA-like form: XLA's LLVM and this project's code generator give
//! every value a register of its own (`%f<268>`, `%rd<74>`), so a decoded kernel has a row per
//! value and a warp's register file (256 bytes a row) is mostly rows that are dead at any given
//! point: logsumexp's kernels declare 108 and 268 rows and pack into 37 and 75 (the constant
//! rows, live throughout, are most of those). Each row kernel writes a row the warp touched
//! recently instead of a fresh one: cachegrind's simulated L1 data misses of a logsumexp
//! execution fell by a fifth. Giving registers whose live ranges do not overlap one row is what
//! a register allocator does, and what ptxas does before the hardware runs a kernel.
//!
//! The analysis is per thread: liveness over the instruction-level control-flow graph (branches,
//! fall-through, exit), so a row holds one register at every point of every thread's path.
//! That is exact under SIMT execution too: an instruction writes only the lanes that execute
//! it, and a lane executes exactly its own thread's path, so the lanes of a row that another
//! register owns on another path are never written. Ranges are the hull, in instruction order,
//! of every point where a register is live or named (a superset of its live points, so sharing
//! is conservative), and a row is reused only strictly after the last point of its previous
//! owner (an instruction that reads one register and writes another never finds them in one row:
//! `shfl` reads other lanes' operands while it writes its own). Registers live at entry (read
//! before any write on some path: the constant rows, and registers a kernel reads uninitialized)
//! keep a row of their own, so what they read is what they read before.
//!
//! The reference engine runs the function as decoded; the fast engine runs this form, and every
//! differential test compares the two.
use super::{Inst, MatrixOp, Op, NONE, R};

/// A function's code with its registers renamed to fewer rows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Packed {
    pub code: Vec<Inst>,
    /// Rows the packed code uses (the register file's length).
    pub nrows: u32,
    /// `map[r]`: the row of register `r` (for the constant rows, which are filled by index).
    pub map: Vec<R>,
}

/// The most 64-bit words the liveness sets may take (per set kind; blocks × rows / 64): a
/// kernel beyond it keeps one row per register rather than take hundreds of megabytes to pack.
const MAX_WORDS: usize = 1 << 22;

/// The most liveness passes over the blocks (structured code needs its loop nesting depth
/// plus two).
const MAX_PASSES: u32 = 32;

/// How an instruction names a register.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    Use,
    Def,
}

/// Calls `f` on every register operand of `op` (never [`NONE`]), uses before definitions.
/// Exhaustive, so a new operation cannot be forgotten here.
fn operands(op: &mut Op, f: &mut impl FnMut(&mut R, Role)) {
    use Role::{Def, Use};
    let mut one = |r: &mut R, role: Role| {
        if *r != NONE {
            f(r, role)
        }
    };
    match op {
        Op::Nop | Op::Bra { .. } | Op::Exit | Op::Trap => {}
        Op::PMov { .. } | Op::PBin { .. } => {}
        Op::Mov { d, a }
        | Op::IUn { d, a, .. }
        | Op::FUn { d, a, .. }
        | Op::Cvt { d, a, .. }
        | Op::Cvta { d, a, .. }
        | Op::MatchAny { d, a, .. }
        | Op::MatchAll { d, a, .. }
        | Op::Redux { d, a, .. } => {
            one(a, Use);
            one(d, Def);
        }
        Op::Pack { d, parts, n, .. } => {
            for p in parts.iter_mut().take(*n as usize) {
                one(p, Use);
            }
            one(d, Def);
        }
        Op::Unpack { ds, n, a, .. } => {
            one(a, Use);
            for d in ds.iter_mut().take(*n as usize) {
                one(d, Def);
            }
        }
        Op::IBin { d, a, b, .. }
        | Op::FBin { d, a, b, .. }
        | Op::FMinMax { d, a, b, .. }
        | Op::Copysign { d, a, b, .. }
        | Op::Set { d, a, b, .. }
        | Op::Selp { d, a, b, .. }
        | Op::CvtPack { d, a, b, .. } => {
            one(a, Use);
            one(b, Use);
            one(d, Def);
        }
        Op::Mad { d, a, b, c, .. }
        | Op::Bfe { d, a, b, c, .. }
        | Op::Prmt { d, a, b, c, .. }
        | Op::Lop3 { d, a, b, c, .. }
        | Op::Shf { d, a, b, c, .. }
        | Op::Fma { d, a, b, c, .. }
        | Op::Slct { d, a, b, c, .. }
        | Op::Carry { d, a, b, c, .. }
        | Op::Shfl { d, a, b, c, .. } => {
            one(a, Use);
            one(b, Use);
            one(c, Use);
            one(d, Def);
        }
        Op::Bfi { d, a, b, c, e, .. } => {
            one(a, Use);
            one(b, Use);
            one(c, Use);
            one(e, Use);
            one(d, Def);
        }
        Op::Testp { a, .. } => one(a, Use),
        Op::Setp { a, b, .. } => {
            one(a, Use);
            one(b, Use);
        }
        Op::Ld { ds, n, addr, .. } => {
            one(&mut addr.base, Use);
            for d in ds.iter_mut().take(*n as usize) {
                one(d, Def);
            }
        }
        Op::St { ss, n, addr, .. } => {
            one(&mut addr.base, Use);
            for s in ss.iter_mut().take(*n as usize) {
                one(s, Use);
            }
        }
        Op::Atom { d, addr, b, c, .. } => {
            one(&mut addr.base, Use);
            one(b, Use);
            one(c, Use);
            one(d, Def);
        }
        Op::Bar { id, count, .. } => {
            one(id, Use);
            one(count, Use);
        }
        Op::Vote { d, .. } | Op::Activemask { d } => one(d, Def),
        Op::Matrix(m) => match &mut **m {
            MatrixOp::Ldmatrix { n, ds, addr, .. } => {
                one(&mut addr.base, Use);
                for d in ds.iter_mut().take(*n as usize) {
                    one(d, Def);
                }
            }
            MatrixOp::Stmatrix { n, srcs, addr, .. } => {
                one(&mut addr.base, Use);
                for s in srcs.iter_mut().take(*n as usize) {
                    one(s, Use);
                }
            }
            MatrixOp::Mma { d, a, b, c, .. } => {
                for r in a.iter_mut().chain(b.iter_mut()).chain(c.iter_mut()) {
                    one(r, Use);
                }
                for r in d.iter_mut() {
                    one(r, Def);
                }
            }
            MatrixOp::CpAsync {
                src_size, dst, src, ..
            } => {
                one(src_size, Use);
                one(&mut dst.base, Use);
                one(&mut src.base, Use);
            }
        },
    }
}

/// The pcs control may reach after `pc` (ascending order not promised).
fn successors(code: &[Inst], pc: usize) -> ([usize; 2], usize) {
    let i = &code[pc];
    let unguarded = i.guard == NONE;
    match i.op {
        Op::Bra { target } if unguarded => ([target as usize, 0], 1),
        Op::Bra { target } => ([target as usize, pc + 1], 2),
        Op::Exit | Op::Trap if unguarded => ([0, 0], 0),
        _ => ([pc + 1, 0], 1),
    }
}

/// A set of rows as bits.
struct Bits<'a>(&'a mut [u64]);

impl Bits<'_> {
    fn set(&mut self, r: R) {
        if let Some(w) = self.0.get_mut(r as usize / 64) {
            *w |= 1 << (r % 64);
        }
    }
}

/// Calls `f` on every row in `words`.
fn each_bit(words: &[u64], mut f: impl FnMut(R)) {
    for (i, &w) in words.iter().enumerate() {
        let mut w = w;
        while w != 0 {
            f((i * 64) as u32 + w.trailing_zeros());
            w &= w - 1;
        }
    }
}

/// The packed form of `code` over `nrows` registers, or `None` when packing saves nothing or
/// the kernel is too large to analyse within [`MAX_WORDS`] and [`MAX_PASSES`].
pub(crate) fn pack(code: &[Inst], nrows: u32) -> Option<Packed> {
    if code.is_empty() || nrows < 2 {
        return None;
    }
    let blocks = Blocks::of(code);
    let words = (nrows as usize).div_ceil(64);
    if blocks.len().checked_mul(words)? > MAX_WORDS {
        return None;
    }
    // The operand visitor takes `&mut Op` (it also renames), so the analyses walk a copy,
    // which becomes the packed code.
    let mut packed = code.to_vec();
    let live = Liveness::of(&mut packed, &blocks, words)?;
    let (lo, hi) = hulls(&mut packed, &blocks, &live, nrows);
    let (map, rows) = assign(&live.live_in[..words], &lo, &hi);
    if rows >= nrows {
        return None;
    }
    for i in &mut packed {
        operands(&mut i.op, &mut |r, _| {
            if let Some(&m) = map.get(*r as usize) {
                *r = m;
            }
        });
    }
    Some(Packed {
        code: packed,
        nrows: rows,
        map,
    })
}

/// The basic blocks of a function: leaders at 0, at branch targets and after control
/// transfers.
struct Blocks {
    /// Each block's first pc, ascending.
    starts: Vec<usize>,
    /// Each pc's block.
    block_of: Vec<u32>,
}

impl Blocks {
    fn of(code: &[Inst]) -> Blocks {
        let n = code.len();
        let mut leader = vec![false; n + 1];
        leader[0] = true;
        for (pc, i) in code.iter().enumerate() {
            if let Op::Bra { target } = i.op {
                leader[(target as usize).min(n)] = true;
            }
            if matches!(i.op, Op::Bra { .. } | Op::Exit | Op::Trap) {
                leader[pc + 1] = true;
            }
        }
        let starts: Vec<usize> = (0..n).filter(|&pc| leader[pc]).collect();
        let mut block_of = vec![0u32; n];
        for (b, &s) in starts.iter().enumerate() {
            let e = starts.get(b + 1).copied().unwrap_or(n);
            block_of[s..e].fill(b as u32);
        }
        Blocks { starts, block_of }
    }

    fn len(&self) -> usize {
        self.starts.len()
    }

    /// The pcs of block `b`.
    fn pcs(&self, b: usize) -> std::ops::Range<usize> {
        let end = self
            .starts
            .get(b + 1)
            .copied()
            .unwrap_or(self.block_of.len());
        self.starts[b]..end
    }
}

/// Each block's live-in and live-out rows, `words` words per block.
struct Liveness {
    words: usize,
    live_in: Vec<u64>,
    live_out: Vec<u64>,
}

impl Liveness {
    /// Liveness to a fixed point, blocks in reverse order (most edges go forward, so a few
    /// passes do; a control-flow graph that needs more than [`MAX_PASSES`] keeps its rows
    /// rather than make loading quadratic).
    fn of(code: &mut [Inst], blocks: &Blocks, words: usize) -> Option<Liveness> {
        let (gen, kill) = local_sets(code, blocks, words);
        let nb = blocks.len();
        let mut live_in = vec![0u64; nb * words];
        let mut live_out = vec![0u64; nb * words];
        let mut out = vec![0u64; words];
        let mut changed = true;
        let mut passes = 0;
        while changed {
            passes += 1;
            if passes > MAX_PASSES {
                return None;
            }
            changed = false;
            for b in (0..nb).rev() {
                out.fill(0);
                let (succ, ns) = successors(code, blocks.pcs(b).end - 1);
                for &s in succ[..ns].iter().filter(|&&s| s < code.len()) {
                    let sb = blocks.block_of[s] as usize * words;
                    for (o, x) in out.iter_mut().zip(&live_in[sb..sb + words]) {
                        *o |= x;
                    }
                }
                let r = b * words..b * words + words;
                live_out[r.clone()].copy_from_slice(&out);
                for (j, w) in r.enumerate() {
                    let v = gen[w] | (out[j] & !kill[w]);
                    changed |= v != live_in[w];
                    live_in[w] = v;
                }
            }
        }
        Some(Liveness {
            words,
            live_in,
            live_out,
        })
    }

    /// Where block `b`'s set lies in `live_in` and `live_out`.
    fn set(&self, b: usize) -> std::ops::Range<usize> {
        b * self.words..(b + 1) * self.words
    }
}

/// Per block: the rows used before any unguarded definition in it (gen) and the rows it
/// defines unguarded (kill). A guarded definition keeps the old value in the lanes whose guard
/// is false, so it is a use and kills nothing.
fn local_sets(code: &mut [Inst], blocks: &Blocks, words: usize) -> (Vec<u64>, Vec<u64>) {
    let mut gen = vec![0u64; blocks.len() * words];
    let mut kill = vec![0u64; blocks.len() * words];
    for b in 0..blocks.len() {
        let (g, k) = (b * words, b * words + words);
        for i in &mut code[blocks.pcs(b)] {
            let guarded = i.guard != NONE;
            operands(&mut i.op, &mut |r, role| {
                let killed = kill[g..k]
                    .get(*r as usize / 64)
                    .is_some_and(|w| w >> (*r % 64) & 1 != 0);
                if (role == Role::Use || guarded) && !killed {
                    Bits(&mut gen[g..k]).set(*r);
                }
                if role == Role::Def && !guarded {
                    Bits(&mut kill[g..k]).set(*r);
                }
            });
        }
    }
    (gen, kill)
}

/// Each register's hull `lo[r]..=hi[r]`: every point where it is live or named (`lo` is
/// `u32::MAX` for a register no instruction names). Inside a block a register is live between
/// points where it is named or the block's ends, so those points bound its live range.
fn hulls(code: &mut [Inst], blocks: &Blocks, live: &Liveness, nrows: u32) -> (Vec<u32>, Vec<u32>) {
    let mut lo = vec![u32::MAX; nrows as usize];
    let mut hi = vec![0u32; nrows as usize];
    let mut extend = |r: R, pc: usize| {
        if let (Some(l), Some(h)) = (lo.get_mut(r as usize), hi.get_mut(r as usize)) {
            *l = (*l).min(pc as u32);
            *h = (*h).max(pc as u32);
        }
    };
    for b in 0..blocks.len() {
        let pcs = blocks.pcs(b);
        let set = live.set(b);
        each_bit(&live.live_in[set.clone()], |r| extend(r, pcs.start));
        each_bit(&live.live_out[set], |r| extend(r, pcs.end - 1));
    }
    for (pc, i) in code.iter_mut().enumerate() {
        operands(&mut i.op, &mut |r, _| extend(*r, pc));
    }
    (lo, hi)
}

/// Rows for the registers: those live at entry (`entry`) one each, the others by linear scan
/// over the hulls (a row is free strictly after its owner's last point), and the registers no
/// instruction names one row together (a constant row the code never reads is still filled,
/// into that row). Returns each register's row and how many rows there are.
fn assign(entry: &[u64], lo: &[u32], hi: &[u32]) -> (Vec<R>, R) {
    let mut map = vec![NONE; lo.len()];
    let mut next: R = 0;
    each_bit(entry, |r| {
        if let Some(m) = map.get_mut(r as usize) {
            *m = next;
            next += 1;
        }
    });
    let mut order: Vec<usize> = (0..lo.len())
        .filter(|&r| map[r] == NONE && lo[r] != u32::MAX)
        .collect();
    order.sort_by_key(|&r| (lo[r], r));
    // Rows in use, as (last point, row), soonest free first; and the free rows.
    let mut active = std::collections::BinaryHeap::new();
    let mut free: Vec<R> = Vec::new();
    for r in order {
        while let Some(&std::cmp::Reverse((end, row))) = active.peek() {
            if end >= lo[r] {
                break;
            }
            active.pop();
            free.push(row);
        }
        let row = free.pop().unwrap_or_else(|| {
            next += 1;
            next - 1
        });
        map[r] = row;
        active.push(std::cmp::Reverse((hi[r], row)));
    }
    if map.contains(&NONE) {
        for m in map.iter_mut().filter(|m| **m == NONE) {
            *m = next;
        }
        next += 1;
    }
    (map, next)
}

#[cfg(test)]
mod tests {
    use crate::emu::LoadedModule;

    fn func(body: &str) -> crate::emu::decode::Func {
        let text = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 out)\n{{\n .reg .pred %p<4>;\n .reg .b32 %r<64>;\n .reg .b64 %rd<8>;\n{body}\n ret;\n}}\n"
        );
        let ast = crate::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let m = LoadedModule::load(&ast).unwrap_or_else(|e| panic!("{e}"));
        m.kernels[0].clone()
    }

    /// The decoded row of `%rN`: `.reg` declarations take consecutive rows, and every test
    /// body starts with `mov.u32 %r1, %tid.x`.
    fn r(f: &crate::emu::decode::Func, n: u32) -> u32 {
        match f.code[0].op {
            crate::emu::decode::Op::Mov { d, .. } => d - 1 + n,
            ref op => panic!("first instruction {op:?}"),
        }
    }

    #[test]
    fn a_chain_of_temporaries_shares_rows() {
        // 32 values, each live for one instruction: packed, a handful of rows.
        let mut body = String::from(" mov.u32 %r1, %tid.x;\n mov.u32 %r0, %r1;\n");
        for i in 1..32 {
            body += &format!(" add.u32 %r{i}, %r{}, {i};\n", i - 1);
        }
        body += " ld.param.u64 %rd0, [out];\n st.global.u32 [%rd0], %r31;\n";
        let f = func(&body);
        let p = f.packed.as_ref().expect("packing saves rows");
        assert!(f.nrows > 40, "decoded rows {}", f.nrows);
        assert!(
            p.nrows < f.nrows / 2,
            "{} rows packed of {}",
            p.nrows,
            f.nrows
        );
    }

    #[test]
    fn a_value_live_across_a_loop_keeps_its_row() {
        // %r1 is set before the loop and read after it; the loop's temporaries must not take
        // its row, and the loop-carried %r3 must not share with the temporaries either.
        let f = func(
            " mov.u32 %r1, %tid.x;\n mov.u32 %r3, 0;\n mov.u32 %r2, 0;\nL:\n add.u32 %r10, %r2, 3;\n mul.lo.u32 %r11, %r10, %r10;\n add.u32 %r3, %r3, %r11;\n add.u32 %r2, %r2, 1;\n setp.lt.u32 %p0, %r2, 5;\n @%p0 bra L;\n add.u32 %r4, %r3, %r1;\n ld.param.u64 %rd0, [out];\n st.global.u32 [%rd0], %r4;\n",
        );
        let p = f.packed.as_ref().expect("packing saves rows");
        let row = |n: u32| p.map[r(&f, n) as usize];
        // Decoded rows are numbered in declaration order: %p are not rows, %r<64> come first.
        for t in [10, 11, 2, 3] {
            assert_ne!(row(1), row(t), "%r1 shares a row with %r{t}");
        }
        assert_ne!(row(3), row(10));
        assert_ne!(row(3), row(11));
    }

    #[test]
    fn registers_read_before_written_keep_their_own_rows() {
        // %r5 is read uninitialized; it must not share with anything.
        let f = func(
            " mov.u32 %r1, %tid.x;\n add.u32 %r6, %r5, %r1;\n add.u32 %r7, %r6, 1;\n add.u32 %r8, %r7, 1;\n ld.param.u64 %rd0, [out];\n st.global.u32 [%rd0], %r8;\n",
        );
        let p = f.packed.as_ref().expect("packing saves rows");
        let r5 = p.map[r(&f, 5) as usize];
        let shared = (0..f.nrows)
            .filter(|&x| x != r(&f, 5) && p.map[x as usize] == r5)
            .count();
        assert_eq!(shared, 0, "the uninitialized %r5 shares its row");
    }
}
