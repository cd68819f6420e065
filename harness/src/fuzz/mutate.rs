//! The mutators: byte-level (any input), text-level (HLO, StableHLO, PTX, target configs, and the
//! PTX embedded in artifacts) and field-level over a decoded artifact (through prost-reflect, so
//! every field of the schema is reached, including ones added later).
use fastrand::Rng;
use proto::prost::bytes::Bytes;
use proto::prost_reflect::{DynamicMessage, FieldDescriptor, Kind, ReflectMessage, Value};

/// Integers at and around the bounds the loaders check: 32- and 64-bit edges, CUDA's grid and
/// block limits, shared memory per block (48 KiB, 227 KiB opt-in), the runtime flags' defaults
/// (1024 replicas, 4 streams, thunk depth 32), and sizes of 4 GiB and past the 8 GiB host memory.
pub const INTERESTING: &[i64] = &[
    0,
    -1,
    1,
    2,
    3,
    4,
    5,
    -2,
    31,
    32,
    33,
    64,
    127,
    128,
    255,
    256,
    1023,
    1024,
    1025,
    4096,
    49152,
    49153,
    65535,
    65536,
    232448,
    232449,
    1 << 24,
    (1 << 31) - 1,
    1 << 31,
    -(1 << 31),
    (1 << 32) - 1,
    1 << 32,
    4 << 30,
    (8 << 30) + 1,
    1 << 40,
    1_000_000_000,
    i64::MAX,
    i64::MIN,
    i64::MAX - 1,
];

fn interesting(rng: &mut Rng, old: i64) -> i64 {
    match rng.u8(0..8) {
        0 => old.wrapping_add(1),
        1 => old.wrapping_sub(1),
        2 => old.wrapping_mul(2),
        3 => old.wrapping_neg(),
        _ => INTERESTING[rng.usize(0..INTERESTING.len())],
    }
}

/// Applies one random byte-level mutation; `others` are inputs to splice from.
pub fn bytes(rng: &mut Rng, input: &mut Vec<u8>, others: &[&[u8]]) {
    let len = input.len();
    match rng.u8(0..8) {
        // Flip 1-8 bits.
        0 if len > 0 => {
            for _ in 0..rng.usize(1..=8) {
                let i = rng.usize(0..len);
                input[i] ^= 1 << rng.u8(0..8);
            }
        }
        // Truncate.
        1 if len > 0 => input.truncate(rng.usize(0..len)),
        // Insert random bytes.
        2 => {
            let at = rng.usize(0..=len);
            let n = rng.usize(1..=16);
            let fill: Vec<u8> = (0..n).map(|_| rng.u8(..)).collect();
            input.splice(at..at, fill);
        }
        // Delete a range.
        3 if len > 0 => {
            let a = rng.usize(0..len);
            let b = rng.usize(a..=len.min(a + 64));
            input.drain(a..b);
        }
        // Overwrite with bytes that are edges for varints and lengths.
        4 if len > 0 => {
            for _ in 0..rng.usize(1..=4) {
                let i = rng.usize(0..len);
                input[i] = [0x00, 0xff, 0x7f, 0x80, 0x01, 0xfe][rng.usize(0..6)];
            }
        }
        // Splice: a prefix of this input and a suffix of another.
        5 if !others.is_empty() => {
            let other = others[rng.usize(0..others.len())];
            let a = rng.usize(0..=len);
            let b = rng.usize(0..=other.len());
            input.truncate(a);
            input.extend_from_slice(&other[b..]);
        }
        // Duplicate a chunk in place.
        6 if len > 0 => {
            let a = rng.usize(0..len);
            let b = rng.usize(a..=len.min(a + 256));
            let chunk = input[a..b].to_vec();
            let at = rng.usize(0..=input.len());
            input.splice(at..at, chunk);
        }
        _ => {
            if len > 0 {
                let i = rng.usize(0..len);
                input[i] = rng.u8(..);
            } else {
                input.push(rng.u8(..));
            }
        }
    }
}

/// Applies one random text-level mutation: lines deleted, duplicated, swapped or moved
/// (reordered instructions), lines spliced from another input, a number replaced by an
/// interesting one, a word replaced by a word of `dictionary` or of the text, nesting deepened,
/// a 10,000-character word inserted, or (one time in eight) a byte-level mutation.
pub fn text(rng: &mut Rng, input: &mut Vec<u8>, others: &[&[u8]], dictionary: &[&str]) {
    let choice = rng.u8(0..9);
    if choice == 0 {
        return bytes(rng, input, others);
    }
    if choice >= 6 {
        return text_in_place(rng, choice, input, dictionary);
    }
    // Only the line mutations split the text: a PTX seed is hundreds of lines, one allocation each.
    let mut lines: Vec<Vec<u8>> = input.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    let n = lines.len();
    match choice {
        1 => {
            lines.remove(rng.usize(0..n));
        }
        2 => {
            let i = rng.usize(0..n);
            let l = lines[i].clone();
            lines.insert(i, l);
        }
        3 => {
            let (i, j) = (rng.usize(0..n), rng.usize(0..n));
            lines.swap(i, j);
        }
        4 => {
            let l = lines.remove(rng.usize(0..n));
            lines.insert(rng.usize(0..n), l);
        }
        5 if !others.is_empty() => {
            let other = others[rng.usize(0..others.len())];
            let theirs: Vec<&[u8]> = other.split(|&b| b == b'\n').collect();
            let l = theirs[rng.usize(0..theirs.len())].to_vec();
            lines.insert(rng.usize(0..=n), l);
        }
        // 5 with nothing to splice from: an insertion instead.
        _ => return text_in_place(rng, 8, input, dictionary),
    }
    *input = lines.join(&b'\n');
}

/// The text mutations that work on the bytes directly: a number (6), a word (7), nesting or a
/// long word inserted (8).
fn text_in_place(rng: &mut Rng, choice: u8, input: &mut Vec<u8>, dictionary: &[&str]) {
    match choice {
        6 => replace_number(rng, input),
        7 => replace_word(rng, input, dictionary),
        _ => {
            let at = rng.usize(0..=input.len());
            let insert: Vec<u8> = match rng.u8(0..3) {
                0 => b"(".repeat(rng.usize(1..5000)),
                1 => b"{".repeat(rng.usize(1..5000)),
                _ => b"x".repeat(10_000),
            };
            input.splice(at..at, insert);
        }
    }
}

/// Spans of ASCII digit runs (with a leading `-`).
fn spans(s: &[u8], pred: impl Fn(u8) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if pred(s[i]) {
            let a = i;
            while i < s.len() && pred(s[i]) {
                i += 1;
            }
            out.push((a, i));
        } else {
            i += 1;
        }
    }
    out
}

fn replace_number(rng: &mut Rng, s: &mut Vec<u8>) {
    let numbers = spans(s, |b| b.is_ascii_digit());
    if numbers.is_empty() {
        return;
    }
    let (a, b) = numbers[rng.usize(0..numbers.len())];
    let old = std::str::from_utf8(&s[a..b])
        .ok()
        .and_then(|t| t.parse::<i64>().ok())
        .unwrap_or(0);
    let new = match rng.u8(0..6) {
        0 => "99999999999999999999999".to_string(),
        _ => interesting(rng, old).to_string(),
    };
    s.splice(a..b, new.into_bytes());
}

fn replace_word(rng: &mut Rng, s: &mut Vec<u8>, dictionary: &[&str]) {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'%';
    let words = spans(s, word);
    if words.is_empty() {
        return;
    }
    let (a, b) = words[rng.usize(0..words.len())];
    let new: Vec<u8> = if !dictionary.is_empty() && rng.bool() {
        dictionary[rng.usize(0..dictionary.len())]
            .as_bytes()
            .to_vec()
    } else {
        let (c, d) = words[rng.usize(0..words.len())];
        s[c..d].to_vec()
    };
    s.splice(a..b, new);
}

/// One step from a message to a field, or to an element of a repeated field.
#[derive(Debug, Clone)]
pub enum Step {
    /// The field (by number).
    Field(u32),
    /// Element `i` of the repeated field.
    Element(u32, usize),
}

/// A place a field-level mutation can act on: a path of steps from the root to a message, and
/// the field (by number) there.
#[derive(Debug, Clone)]
pub struct Site {
    /// From the root to the message that holds the field.
    pub path: Vec<Step>,
    /// The field's number in that message.
    pub field: u32,
}

/// Every field of every message present in `m` (set or not: setting an unset field is a
/// mutation too), depth first. Map fields are sites but are not descended into.
pub fn sites(m: &DynamicMessage) -> Vec<Site> {
    let mut out = Vec::new();
    walk(m, &mut Vec::new(), &mut out);
    out
}

fn walk(m: &DynamicMessage, path: &mut Vec<Step>, out: &mut Vec<Site>) {
    for fd in m.descriptor().fields() {
        out.push(Site {
            path: path.clone(),
            field: fd.number(),
        });
        if !m.has_field(&fd) || fd.is_map() {
            continue;
        }
        match m.get_field(&fd).as_ref() {
            Value::Message(inner) => {
                path.push(Step::Field(fd.number()));
                walk(inner, path, out);
                path.pop();
            }
            Value::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    if let Value::Message(inner) = item {
                        path.push(Step::Element(fd.number(), i));
                        walk(inner, path, out);
                        path.pop();
                    }
                }
            }
            _ => {}
        }
    }
}

fn navigate<'a>(m: &'a mut DynamicMessage, path: &[Step]) -> Option<&'a mut DynamicMessage> {
    let Some((first, rest)) = path.split_first() else {
        return Some(m);
    };
    let (number, index) = match first {
        Step::Field(n) => (*n, None),
        Step::Element(n, i) => (*n, Some(*i)),
    };
    let fd = m.descriptor().get_field(number)?;
    let value = m.get_field_mut(&fd);
    let inner = match (value, index) {
        (Value::Message(inner), None) => inner,
        (Value::List(items), Some(i)) => match items.get_mut(i)? {
            Value::Message(inner) => inner,
            _ => return None,
        },
        _ => return None,
    };
    navigate(inner, rest)
}

/// Mutates the field at `site` of `root`: a number to 0, -1, a type edge or just past a bound;
/// a bool flipped; an enum to an unknown value; a string or bytes replaced by a mutated version
/// (PTX text by a text mutation); a message cleared; a oneof cleared or switched to another of
/// its variants; a repeated field shortened, an element duplicated or swapped. `text_dictionary`
/// feeds the text mutations of embedded PTX.
pub fn field(rng: &mut Rng, root: &mut DynamicMessage, site: &Site, text_dictionary: &[&str]) {
    let Some(m) = navigate(root, &site.path) else {
        return;
    };
    let Some(fd) = m.descriptor().get_field(site.field) else {
        return;
    };
    // A oneof member: clear the oneof, or set a different member to its default.
    if let Some(oneof) = fd.containing_oneof() {
        if rng.u8(0..3) == 0 {
            if rng.bool() {
                m.clear_field(&fd);
            } else {
                let members: Vec<FieldDescriptor> = oneof.fields().collect();
                let other = &members[rng.usize(0..members.len())];
                m.set_field(other, Value::default_value_for_field(other));
            }
            return;
        }
    }
    if fd.is_list() {
        let value = m.get_field_mut(&fd);
        if let Value::List(items) = value {
            let n = items.len();
            match rng.u8(0..5) {
                0 => items.clear(),
                1 if n > 0 => {
                    items.remove(rng.usize(0..n));
                }
                2 if n > 0 => {
                    let e = items[rng.usize(0..n)].clone();
                    items.insert(rng.usize(0..=n), e);
                }
                3 if n > 1 => items.swap(rng.usize(0..n), rng.usize(0..n)),
                _ if n > 0 => {
                    let i = rng.usize(0..n);
                    mutate_scalar(rng, &fd.kind(), &mut items[i], text_dictionary);
                }
                _ => items.push(Value::default_value(&fd.kind())),
            }
        }
        return;
    }
    if fd.is_map() {
        m.clear_field(&fd);
        return;
    }
    if let Kind::Message(_) = fd.kind() {
        if m.has_field(&fd) {
            m.clear_field(&fd);
        } else {
            m.set_field(&fd, Value::default_value_for_field(&fd));
        }
        return;
    }
    let value = m.get_field_mut(&fd);
    mutate_scalar(rng, &fd.kind(), value, text_dictionary);
}

fn mutate_scalar(rng: &mut Rng, kind: &Kind, value: &mut Value, dictionary: &[&str]) {
    match value {
        Value::I32(v) => *v = interesting(rng, *v as i64) as i32,
        Value::I64(v) => *v = interesting(rng, *v),
        Value::U32(v) => *v = interesting(rng, *v as i64) as u32,
        Value::U64(v) => *v = interesting(rng, *v as i64) as u64,
        Value::F32(v) => *v = [0.0, -0.0, f32::NAN, f32::INFINITY, -1.0, 1e38][rng.usize(0..6)],
        Value::F64(v) => {
            *v = [0.0, -0.0, f64::NAN, f64::NEG_INFINITY, -1.0, 1e300][rng.usize(0..6)]
        }
        Value::Bool(b) => *b = !*b,
        Value::EnumNumber(e) => {
            *e = match rng.u8(0..3) {
                0 => e.wrapping_add(1),
                1 => -1,
                _ => i32::MAX,
            }
        }
        Value::String(s) => {
            let mut b = std::mem::take(s).into_bytes();
            match rng.u8(0..6) {
                0 => b.clear(),
                1 => b = b"x".repeat(10_000),
                _ => text(rng, &mut b, &[], dictionary),
            }
            *s = String::from_utf8_lossy(&b).into_owned();
        }
        Value::Bytes(bs) => {
            let mut b = bs.to_vec();
            bytes(rng, &mut b, &[]);
            *bs = Bytes::from(b);
        }
        Value::Message(inner) => {
            // An element of a repeated message field: mutate one of its own fields.
            let s = sites(inner);
            if !s.is_empty() {
                let site = s[rng.usize(0..s.len())].clone();
                field(rng, inner, &site, dictionary);
            }
        }
        Value::List(_) | Value::Map(_) => *value = Value::default_value(kind),
    }
}
