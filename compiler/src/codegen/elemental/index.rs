//! Index arithmetic of the emitter: index components, linear and multi-indices.
use ptx::{Opcode as O, Type};

use super::*;

impl Emitter<'_> {
    /// An index component in a register.
    pub fn ix_reg(&mut self, x: Ix) -> Reg {
        match x {
            Ix::R(r) => r,
            Ix::C(c) => self.b.mov(Type::B32, Src::I(i64::from(c))),
        }
    }

    /// `a + b`.
    pub fn ix_add(&mut self, a: Ix, b: Ix) -> Ix {
        match (a, b) {
            (Ix::C(x), Ix::C(y)) => Ix::C(x.wrapping_add(y)),
            (x, Ix::C(0)) | (Ix::C(0), x) => x,
            _ => Ix::R(self.b.bin(O::Add, &[], Type::U32, a.src(), b.src())),
        }
    }

    /// `a * k`.
    pub fn ix_mul(&mut self, a: Ix, k: u64) -> Ix {
        match a {
            Ix::C(x) => Ix::C((u64::from(x) * k) as u32),
            _ if k == 1 => a,
            _ if k == 0 => Ix::C(0),
            _ => Ix::R(self.b.mul_lo(Type::U32, a.src(), Src::I(k as i64))),
        }
    }

    fn ix_divrem(&mut self, a: Ix, k: u64, rem: bool) -> Ix {
        match a {
            Ix::C(x) => Ix::C(if rem {
                (u64::from(x) % k) as u32
            } else {
                (u64::from(x) / k) as u32
            }),
            _ if k == 1 => {
                if rem {
                    Ix::C(0)
                } else {
                    a
                }
            }
            // A power of two: a mask or a shift, the same unsigned result (what ptxas makes
            // of the division; the emulator runs it as one row operation, not a division
            // per lane).
            _ if k.is_power_of_two() && rem => {
                Ix::R(
                    self.b
                        .bin(O::And, &[], Type::B32, a.src(), Src::I(k as i64 - 1)),
                )
            }
            _ if k.is_power_of_two() => Ix::R(self.b.bin(
                O::Shr,
                &[],
                Type::U32,
                a.src(),
                Src::I(i64::from(k.trailing_zeros())),
            )),
            _ => Ix::R(self.b.bin(
                if rem { O::Rem } else { O::Div },
                &[],
                Type::U32,
                a.src(),
                Src::I(k as i64),
            )),
        }
    }

    /// Row-major linear index of a multi-index.
    pub fn linearize(&mut self, idx: &[Ix], dims: &[u64]) -> Ix {
        // A multi-index `delinearize` made: its linear index, with no multiply or add.
        let memo = self.delinearized.iter().find(|m| m.0 == idx && m.1 == dims);
        if let Some(m) = memo {
            return m.2;
        }
        let mut acc = Ix::C(0);
        for (k, (&i, &d)) in idx.iter().zip(dims).enumerate() {
            if k > 0 {
                acc = self.ix_mul(acc, d);
            }
            acc = self.ix_add(acc, i);
        }
        acc
    }

    /// Records that multi-index `idx` of `dims` has linear index `lin` (an index a kernel built
    /// from a delinearized one), so that [`Emitter::linearize`] returns `lin` for it.
    pub fn note_linear(&mut self, idx: &[Ix], dims: &[u64], lin: Ix) {
        if idx.len() > 1 {
            let old = self.delinearized.len().saturating_sub(15);
            self.delinearized.drain(..old);
            self.delinearized.push((idx.to_vec(), dims.to_vec(), lin));
        }
    }

    /// Multi-index of a row-major linear index.
    pub fn delinearize(&mut self, lin: Ix, dims: &[u64]) -> Vec<Ix> {
        let mut out = vec![Ix::C(0); dims.len()];
        let mut rest = lin;
        for k in (0..dims.len()).rev() {
            let d = dims[k];
            if d <= 1 {
                out[k] = Ix::C(0);
                continue;
            }
            if k == 0 {
                out[k] = rest;
            } else {
                out[k] = self.ix_divrem(rest, d, true);
                rest = self.ix_divrem(rest, d, false);
            }
        }
        // Kept with a register computed here (written once: equal means this very index).
        if out.iter().any(|&x| x != lin && matches!(x, Ix::R(_))) {
            let old = self.delinearized.len().saturating_sub(15);
            self.delinearized.drain(..old);
            self.delinearized.push((out.clone(), dims.to_vec(), lin));
        }
        out
    }
}
