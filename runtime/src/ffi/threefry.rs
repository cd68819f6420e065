//! `cu_threefry2x32_ffi`: jaxlib's Threefry-2x32 kernel (20 rounds, Salmon et al. 2011), one
//! block per element: `(out0, out1)[i] = threefry2x32((keys0, keys1)[i], (data0, data1)[i])`.
//! JAX broadcasts the keys to the data's shape before the call, so all six arrays have the same
//! dimensions.
use proto::xla::PrimitiveType;

use super::check::{Checker, Operand, Res};
use super::schema::{CallShapes, ShapeError};
use super::HandlerError;
use super::{operand, put_u32};
use crate::registry::CallFrame;

/// Four uint32 operands and two uint32 results, all of the same dimensions, row-major.
pub(crate) fn check(s: &CallShapes<'_>) -> Result<(), ShapeError> {
    let c = Checker::new(s, "cu_threefry2x32_ffi");
    c.counts(4, 2)?;
    let dims = c.shape(Operand, 2)?.dimensions.clone();
    for (side, n) in [(Operand, 4), (Res, 2)] {
        for i in 0..n {
            c.elem(side, i, PrimitiveType::U32)?;
            c.dims(side, i, &dims, "operand 2's")?;
            c.layout(side, i, false)?;
        }
    }
    Ok(())
}

const ROTATIONS: [u32; 8] = [13, 15, 26, 6, 17, 29, 16, 24];

/// One Threefry-2x32 block.
pub fn threefry2x32_block(key: [u32; 2], data: [u32; 2]) -> [u32; 2] {
    let ks = [key[0], key[1], 0x1BD1_1BDA ^ key[0] ^ key[1]];
    let mut x = [data[0].wrapping_add(ks[0]), data[1].wrapping_add(ks[1])];
    let rounds = |x: &mut [u32; 2], rot: &[u32]| {
        for &r in rot {
            x[0] = x[0].wrapping_add(x[1]);
            x[1] = x[1].rotate_left(r) ^ x[0];
        }
    };
    for step in 1..=5u32 {
        let rot = if step % 2 == 1 {
            &ROTATIONS[..4]
        } else {
            &ROTATIONS[4..]
        };
        rounds(&mut x, rot);
        x[0] = x[0].wrapping_add(ks[step as usize % 3]);
        x[1] = x[1]
            .wrapping_add(ks[(step as usize + 1) % 3])
            .wrapping_add(step);
    }
    x
}

pub(crate) fn threefry2x32(frame: &mut CallFrame<'_>) -> Result<(), HandlerError> {
    let read = |i| -> Result<Vec<u32>, HandlerError> {
        let (b, _) = operand(frame, i)?;
        Ok(b.chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect())
    };
    let (k0, k1, d0, d1) = (read(0)?, read(1)?, read(2)?, read(3)?);
    let n = d0.len();
    if k0.len() != n || k1.len() != n || d1.len() != n {
        return Err(HandlerError::ThreefryCounts {
            k0: k0.len(),
            k1: k1.len(),
            d0: n,
            d1: d1.len(),
        });
    }
    let (mut o0, mut o1) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        let [a, b] = threefry2x32_block([k0[i], k1[i]], [d0[i], d1[i]]);
        o0.push(a);
        o1.push(b);
    }
    put_u32(frame, 0, &o0)?;
    put_u32(frame, 1, &o1)
}
