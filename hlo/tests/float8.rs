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

/// `x` converted to both formats against XLA's bytes: `None` when they agree, else the line
/// that says how they differ. NaN needs only be NaN: XLA:CPU's f16 -> f8e5m2 writes 0x7f for
/// every NaN, sign dropped, where its f32 path writes 0x7e with the sign (and XLA:GPU's hardware
/// `cvt` its own canonical NaN); which NaN is not part of the contract, that it is one is.
fn difference(what: &str, x: f64, xla: [u8; 2]) -> Option<String> {
    let ours = [
        F8E4M3FN::from_f64(x).to_bits(),
        F8E5M2::from_f64(x).to_bits(),
    ];
    let agree = if x.is_nan() {
        let nan = |b: [u8; 2]| {
            F8E4M3FN::from_bits(b[0]).to_f64().is_nan() && F8E5M2::from_bits(b[1]).to_f64().is_nan()
        };
        nan(ours) && nan(xla)
    } else {
        ours == xla
    };
    (!agree).then(|| {
        format!(
            "{what} ({x:e}): ours {:#04x} {:#04x}, XLA {:#04x} {:#04x}",
            ours[0], ours[1], xla[0], xla[1]
        )
    })
}

fn assert_none_differ(wrong: Vec<String>, of: usize) {
    assert!(
        wrong.is_empty(),
        "{} of {of} differ:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
}

#[test]
fn every_f16_value_converts_as_xla_converts_it() {
    let t = table();
    let wrong = t[..65536 * 2]
        .chunks_exact(2)
        .enumerate()
        .filter_map(|(i, pair)| {
            let x = half::f16::from_bits(i as u16).to_f64();
            difference(&format!("f16 {i:#06x}"), x, [pair[0], pair[1]])
        })
        .collect();
    assert_none_differ(wrong, 65536);
}

#[test]
fn f32_values_at_every_rounding_boundary_convert_as_xla_converts_them() {
    let t = table();
    let rest = &t[65536 * 2..];
    let n = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize;
    assert!(n > 2000, "{n} boundary records");
    let wrong = rest[4..4 + n * 6]
        .chunks_exact(6)
        .filter_map(|r| {
            let x = f32::from_le_bytes(r[..4].try_into().unwrap());
            difference(
                &format!("f32 {:#010x}", x.to_bits()),
                f64::from(x),
                [r[4], r[5]],
            )
        })
        .collect();
    assert_none_differ(wrong, n);
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
