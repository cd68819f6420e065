//! Numeric words of the text format: integers, decimal and hex floats, inf and NaN with payloads.

pub(super) fn is_numeric_word(w: &str) -> bool {
    let w = w.strip_prefix('-').unwrap_or(w);
    w.chars().next().is_some_and(|c| c.is_ascii_digit())
}

/// Parses an integer word: decimal or `0x` hex, optional leading `-`.
pub(super) fn parse_int_word(w: &str) -> Option<i128> {
    let (neg, body) = match w.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, w),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i128::from_str_radix(h, 16).ok()?
    } else {
        if !body.chars().all(|c| c.is_ascii_digit()) || body.is_empty() {
            return None;
        }
        body.parse::<i128>().ok()?
    };
    Some(if neg { -v } else { v })
}

pub(super) fn parse_hex_float(body: &str) -> Option<f64> {
    // body: hex digits [. hex digits] p [+-] decimal
    let (mant, exp) = match body.find(['p', 'P']) {
        Some(i) => (&body[..i], body[i + 1..].parse::<i32>().ok()?),
        None => (body, 0),
    };
    let (int_part, frac_part) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for c in int_part.chars() {
        v = v * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in frac_part.chars() {
        v += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    Some(v * 2f64.powi(exp))
}

/// Parses a float word: decimal, exponent, `inf`, `nan`, hex float (`0x1.8p3`).
pub(super) fn parse_float_word(w: &str) -> Option<f64> {
    let lower = w.to_ascii_lowercase();
    let (neg, body) = match lower.strip_prefix('-') {
        Some(b) => (true, b.to_string()),
        None => (false, lower.strip_prefix('+').unwrap_or(&lower).to_string()),
    };
    let v = match body.as_str() {
        "inf" | "infinity" => f64::INFINITY,
        "nan" => f64::NAN,
        _ => {
            if let Some(h) = body.strip_prefix("0x") {
                if h.contains(['p', '.']) {
                    parse_hex_float(h)?
                } else {
                    // An integer in hex.
                    u64::from_str_radix(h, 16).ok()? as f64
                }
            } else {
                if !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
                    return None;
                }
                body.parse::<f64>().ok()?
            }
        }
    };
    Some(if neg { -v } else { v })
}

pub(super) fn canonical_nan(neg: bool, payload: Option<u64>) -> f64 {
    let exp_bits = 0x7ff0_0000_0000_0000u64;
    let sign = if neg { 1u64 << 63 } else { 0 };
    let mant = payload.unwrap_or(0x8_0000_0000_0000) & 0xf_ffff_ffff_ffff;
    let mant = if mant == 0 { 0x8_0000_0000_0000 } else { mant };
    f64::from_bits(sign | exp_bits | mant)
}
