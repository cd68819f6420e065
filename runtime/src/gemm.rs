//! Native gemm, following docs/artifact.md "Gemm" exactly: products accumulated in the compute
//! type (F32 for f16/bf16/f32, F64 for f64, S32 for s8/s32) in increasing k order, then
//! `alpha * acc + beta * old` in the compute type, converted to the output type with round to
//! nearest even. `beta == 0` never reads the old output.
use half::{bf16, f16};

use crate::error::{Error, Result};
use crate::thunks::{ElemType, GemmConfig, MatrixLayout};

fn load(buf: &[u8], t: ElemType, i: u64) -> Option<f64> {
    let sz = t.size() as usize;
    let o = usize::try_from(i).ok()?.checked_mul(sz)?;
    let b = buf.get(o..o.checked_add(sz)?)?;
    Some(match t {
        ElemType::F16 => f16::from_le_bytes([b[0], b[1]]).to_f64(),
        ElemType::Bf16 => bf16::from_le_bytes([b[0], b[1]]).to_f64(),
        ElemType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]).into(),
        ElemType::F64 => f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        ElemType::S8 => (b[0] as i8).into(),
        ElemType::S32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]).into(),
        _ => return None,
    })
}

fn load_i(buf: &[u8], t: ElemType, i: u64) -> Option<i32> {
    let sz = t.size() as usize;
    let o = usize::try_from(i).ok()?.checked_mul(sz)?;
    let b = buf.get(o..o.checked_add(sz)?)?;
    Some(match t {
        ElemType::S8 => (b[0] as i8).into(),
        ElemType::S32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        _ => return None,
    })
}

/// The compute-type value written back to the output element type.
enum Acc {
    F(f64),
    I(i32),
}

fn store(buf: &mut [u8], t: ElemType, i: u64, v: Acc) -> Option<()> {
    let sz = t.size() as usize;
    let o = usize::try_from(i).ok()?.checked_mul(sz)?;
    let b = buf.get_mut(o..o.checked_add(sz)?)?;
    match (t, v) {
        (ElemType::F16, Acc::F(v)) => b.copy_from_slice(&f16::from_f64(v).to_le_bytes()),
        (ElemType::Bf16, Acc::F(v)) => b.copy_from_slice(&bf16::from_f64(v).to_le_bytes()),
        (ElemType::F32, Acc::F(v)) => b.copy_from_slice(&(v as f32).to_le_bytes()),
        (ElemType::F64, Acc::F(v)) => b.copy_from_slice(&v.to_le_bytes()),
        (ElemType::S32, Acc::I(v)) => b.copy_from_slice(&v.to_le_bytes()),
        (ElemType::S8, Acc::I(v)) => b.copy_from_slice(&[v as i8 as u8]),
        (ElemType::S32, Acc::F(v)) => b.copy_from_slice(&(v as i32).to_le_bytes()),
        (ElemType::S8, Acc::F(v)) => b.copy_from_slice(&[v as i8 as u8]),
        (_, Acc::I(v)) => return store(buf, t, i, Acc::F(f64::from(v))),
        _ => return None,
    }
    Some(())
}

/// Element `(r, c)` of `op(X)` for batch `b`: the stored element index.
fn op_index(l: &MatrixLayout, b: u64, r: u64, c: u64) -> u64 {
    if l.transpose {
        l.offset(b, c, r)
    } else {
        l.offset(b, r, c)
    }
}

/// Runs the gemm on host buffers (sizes were validated at load; a short buffer is an INTERNAL
/// error, never a panic).
pub fn gemm(cfg: &GemmConfig, lhs: &[u8], rhs: &[u8], out: &mut [u8]) -> Result<()> {
    let oob = || Error::Internal("gemm operand access out of bounds".into());
    for b in 0..cfg.batch {
        for i in 0..cfg.m {
            for j in 0..cfg.n {
                let oi = op_index(&cfg.output, b, i, j);
                let v = match cfg.compute_type {
                    ElemType::S32 => {
                        let mut acc: i32 = 0;
                        for k in 0..cfg.k {
                            let x = load_i(lhs, cfg.lhs.dtype, op_index(&cfg.lhs, b, i, k))
                                .ok_or_else(oob)?;
                            let y = load_i(rhs, cfg.rhs.dtype, op_index(&cfg.rhs, b, k, j))
                                .ok_or_else(oob)?;
                            acc = acc.wrapping_add(x.wrapping_mul(y));
                        }
                        let mut r = (cfg.alpha_real as i32).wrapping_mul(acc);
                        if cfg.beta != 0.0 {
                            let old = load_i(out, cfg.output.dtype, oi).ok_or_else(oob)?;
                            r = r.wrapping_add((cfg.beta as i32).wrapping_mul(old));
                        }
                        Acc::I(r)
                    }
                    ElemType::F64 => {
                        let mut acc = 0f64;
                        for k in 0..cfg.k {
                            let x = load(lhs, cfg.lhs.dtype, op_index(&cfg.lhs, b, i, k))
                                .ok_or_else(oob)?;
                            let y = load(rhs, cfg.rhs.dtype, op_index(&cfg.rhs, b, k, j))
                                .ok_or_else(oob)?;
                            acc += x * y;
                        }
                        let mut r = cfg.alpha_real * acc;
                        if cfg.beta != 0.0 {
                            r += cfg.beta * load(out, cfg.output.dtype, oi).ok_or_else(oob)?;
                        }
                        Acc::F(r)
                    }
                    _ => {
                        let mut acc = 0f32;
                        for k in 0..cfg.k {
                            let x = load(lhs, cfg.lhs.dtype, op_index(&cfg.lhs, b, i, k))
                                .ok_or_else(oob)? as f32;
                            let y = load(rhs, cfg.rhs.dtype, op_index(&cfg.rhs, b, k, j))
                                .ok_or_else(oob)? as f32;
                            acc += x * y;
                        }
                        let mut r = cfg.alpha_real as f32 * acc;
                        if cfg.beta != 0.0 {
                            let old = load(out, cfg.output.dtype, oi).ok_or_else(oob)? as f32;
                            r += cfg.beta as f32 * old;
                        }
                        Acc::F(f64::from(r))
                    }
                };
                store(out, cfg.output.dtype, oi, v).ok_or_else(oob)?;
            }
        }
    }
    Ok(())
}
