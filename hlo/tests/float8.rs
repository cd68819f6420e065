//! `hlo::F8E4M3FN` and `hlo::F8E5M2` against XLA:CPU's `convert` on every input that decides a
//! rounding: every f16 value, f32 values either side of every f8 rounding boundary, and every f8
//! byte decoded (`testdata/float8/conversions.bin`, written by `tools/jax_exports/float8.py`;
//! its docstring gives the layout). Every value's bits match, NaNs excepted: they must be NaN.
use hlo::{F8E4M3FN, F8E5M2};

fn table() -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/float8/conversions.bin"
    );
    std::fs::read(path).expect("testdata/float8/conversions.bin")
}

fn show(bits: u8) -> String {
    format!("{bits:#04x}")
}

#[test]
fn every_f16_value_converts_as_xla_converts_it() {
    let t = table();
    let mut wrong = Vec::new();
    for (i, pair) in t[..65536 * 2].chunks_exact(2).enumerate() {
        let x = half::f16::from_bits(i as u16).to_f64();
        let (e4, e5) = (
            F8E4M3FN::from_f64(x).to_bits(),
            F8E5M2::from_f64(x).to_bits(),
        );
        if x.is_nan() {
            // XLA:CPU's f16 -> f8e5m2 writes 0x7f for every NaN, sign dropped, where its f32
            // path writes 0x7e with the sign (and XLA:GPU's hardware `cvt` its own canonical
            // NaN): which NaN is not part of the contract, that it is one is.
            let nan4 = F8E4M3FN::from_bits(pair[0]).to_f64().is_nan();
            let nan5 = F8E5M2::from_bits(pair[1]).to_f64().is_nan();
            assert!(
                nan4 && nan5,
                "f16 {i:#06x}: XLA's conversion of NaN is not NaN"
            );
            assert!(F8E4M3FN::from_bits(e4).to_f64().is_nan());
            assert!(F8E5M2::from_bits(e5).to_f64().is_nan());
            continue;
        }
        if (e4, e5) != (pair[0], pair[1]) {
            wrong.push(format!(
                "f16 {i:#06x} ({x}): ours {} {}, XLA {} {}",
                show(e4),
                show(e5),
                show(pair[0]),
                show(pair[1])
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of 65536 differ:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
}

#[test]
fn f32_values_at_every_rounding_boundary_convert_as_xla_converts_them() {
    let t = table();
    let rest = &t[65536 * 2..];
    let n = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize;
    let records = &rest[4..4 + n * 6];
    assert!(n > 2000, "{n} boundary records");
    let mut wrong = Vec::new();
    for r in records.chunks_exact(6) {
        let x = f32::from_le_bytes(r[..4].try_into().unwrap());
        let (e4, e5) = (
            F8E4M3FN::from_f32(x).to_bits(),
            F8E5M2::from_f32(x).to_bits(),
        );
        if (e4, e5) != (r[4], r[5]) {
            wrong.push(format!(
                "f32 {x:e} ({:#010x}): ours {} {}, XLA {} {}",
                x.to_bits(),
                show(e4),
                show(e5),
                show(r[4]),
                show(r[5])
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {n} differ:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
}

#[test]
fn every_f8_byte_decodes_as_xla_decodes_it() {
    let t = table();
    let rest = &t[65536 * 2..];
    let n = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize;
    let decoded = &rest[4 + n * 6..];
    assert_eq!(decoded.len(), 256 * 8);
    for (byte, r) in decoded.chunks_exact(8).enumerate() {
        let xla4 = f32::from_le_bytes(r[..4].try_into().unwrap());
        let xla5 = f32::from_le_bytes(r[4..].try_into().unwrap());
        let ours4 = F8E4M3FN::from_bits(byte as u8).to_f32();
        let ours5 = F8E5M2::from_bits(byte as u8).to_f32();
        let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        assert!(
            same(ours4, xla4),
            "f8e4m3fn {byte:#04x}: ours {ours4}, XLA {xla4}"
        );
        assert!(
            same(ours5, xla5),
            "f8e5m2 {byte:#04x}: ours {ours5}, XLA {xla5}"
        );
    }
}
