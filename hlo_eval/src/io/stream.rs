//! The io-file reader without a JSON document tree.
//!
//! Reading through `serde_json::Value` built the whole file as a tree (32 bytes and an
//! allocation per element, plus the maps) before any array was converted, so a 42 MB file took
//! ~600 ms and an 80 MB one gigabytes. Here serde's visitors walk the text once: each `ARRAY`
//! object's fields are collected (its `data` as compact [`Elem`]s, at most `limit` of them kept:
//! the rest are counted, not stored) and converted to an array as soon as the object closes, so
//! at most one array's raw elements are alive. Conversion, checks and messages are those of the
//! tree reader (`array_of` in the parent module), whichever order the keys come in (this
//! project's writer sorts them: `data` first).
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};
use std::fmt;

use super::IoError;

/// One element of a `data` list as written: what the conversion needs, and the JSON text of a
/// bad element for its message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Elem {
    /// A JSON number.
    Num(Number),
    /// `true` / `false`.
    Bool(bool),
    /// A string (`"nan"`, `"inf"`, `"-inf"`, or a mistake).
    Str(Box<str>),
    /// Anything else (null, a list, an object): always an element error.
    Other(Box<Value>),
}

impl Elem {
    /// The element of a document tree.
    pub(crate) fn of(v: &Value) -> Elem {
        match v {
            Value::Number(n) => Elem::Num(n.clone()),
            Value::Bool(b) => Elem::Bool(*b),
            Value::String(s) => Elem::Str(s.as_str().into()),
            other => Elem::Other(Box::new(other.clone())),
        }
    }

    /// Its JSON text, as `Value`'s `to_string` writes it.
    pub(crate) fn text(&self) -> String {
        match self {
            Elem::Num(n) => n.to_string(),
            Elem::Bool(b) => b.to_string(),
            Elem::Str(s) => Value::from(&**s).to_string(),
            Elem::Other(v) => v.to_string(),
        }
    }
}

/// The fields of one `ARRAY` object, as the conversion reads them: `None` where a field is
/// missing or of the wrong JSON type.
#[derive(Debug, Default)]
pub(crate) struct Fields {
    pub dtype: Option<String>,
    pub shape: Option<Value>,
    /// The elements kept (at most the limit) and how many the list had.
    pub data: Option<(Vec<Elem>, usize)>,
}

/// Converts the fields of one array (given its location, `inputs[2]`).
pub(crate) type Convert<T> = fn(&Fields, &str) -> Result<T, IoError>;

/// The element counts of each list's arrays (`limits[i]` for the i-th, the rest unbounded).
/// An array's list keeps at most twice its count (a complex element is two numbers; the
/// conversion checks the exact count) and one that has more is refused after it is counted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits<'a> {
    pub inputs: &'a [usize],
    pub outputs: &'a [usize],
}

/// The `inputs` and `outputs` lists of io-file text, each array converted by `convert`.
pub(crate) fn read_lists<T>(
    text: &str,
    convert: Convert<T>,
    limits: Limits<'_>,
) -> Result<(Vec<T>, Vec<T>), IoError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let lists = de.deserialize_any(FileVisitor { convert, limits })?;
    de.end()?;
    let missing = |key: &str| IoError::Structure {
        location: key.to_string(),
        problem: "missing or not a list".into(),
    };
    let inputs = lists.inputs.ok_or_else(|| missing("inputs"))??;
    let outputs = lists.outputs.ok_or_else(|| missing("outputs"))??;
    Ok((inputs, outputs))
}

/// The six scalar visits of a visitor that wants a map or a list: each is `value` (the
/// visitor's "missing or of the wrong JSON type").
macro_rules! scalars_are {
    ($value:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
}

/// Each list: `None` when missing or not a list, else its conversion (stopped at its first bad
/// array; the others are still walked, unconverted).
struct Lists<T> {
    inputs: Option<Result<Vec<T>, IoError>>,
    outputs: Option<Result<Vec<T>, IoError>>,
}

impl<T> Lists<T> {
    fn none() -> Lists<T> {
        Lists {
            inputs: None,
            outputs: None,
        }
    }
}

struct FileVisitor<'a, T> {
    convert: Convert<T>,
    limits: Limits<'a>,
}

impl<'de, T> Visitor<'de> for FileVisitor<'_, T> {
    type Value = Lists<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an io file")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Lists<T>, A::Error> {
        let mut lists = Lists::none();
        while let Some(key) = map.next_key::<String>()? {
            let (slot, limits) = match key.as_str() {
                "inputs" => (&mut lists.inputs, self.limits.inputs),
                "outputs" => (&mut lists.outputs, self.limits.outputs),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            let seed = ListSeed {
                key: &key,
                convert: self.convert,
                limits,
            };
            *slot = map.next_value_seed(seed)?;
        }
        Ok(lists)
    }

    // Any other JSON value is a file with neither list.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Lists<T>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Lists::none())
    }
    scalars_are!(Lists::none());
}

/// One of the two lists.
struct ListSeed<'a, T> {
    key: &'a str,
    convert: Convert<T>,
    limits: &'a [usize],
}

impl<'de, T> DeserializeSeed<'de> for ListSeed<'_, T> {
    type Value = Option<Result<Vec<T>, IoError>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, T> Visitor<'de> for ListSeed<'_, T> {
    type Value = Option<Result<Vec<T>, IoError>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of arrays")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Ok(Vec::new());
        let mut i = 0usize;
        loop {
            if out.is_err() {
                // Walk the rest unconverted: the first error is the one reported.
                if seq.next_element::<IgnoredAny>()?.is_none() {
                    break;
                }
                continue;
            }
            let limit = self.limits.get(i).map(|n| n.saturating_mul(2));
            let Some(fields) = seq.next_element_seed(ArraySeed { limit })? else {
                break;
            };
            let location = format!("{}[{i}]", self.key);
            match (self.convert)(&fields, &location) {
                Ok(t) => {
                    if let Ok(v) = &mut out {
                        v.push(t);
                    }
                }
                Err(e) => out = Err(e),
            }
            i += 1;
        }
        Ok(Some(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    scalars_are!(None);
}

/// One `ARRAY` object (anything else has no fields: each is "missing").
struct ArraySeed {
    limit: Option<usize>,
}

impl<'de> DeserializeSeed<'de> for ArraySeed {
    type Value = Fields;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Fields, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ArraySeed {
    type Value = Fields;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
        let mut fields = Fields::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "dtype" => {
                    let v: Value = map.next_value()?;
                    fields.dtype = v.as_str().map(str::to_owned);
                }
                "shape" => fields.shape = Some(map.next_value()?),
                "data" => fields.data = map.next_value_seed(DataSeed { limit: self.limit })?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(fields)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Fields, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Fields::default())
    }
    scalars_are!(Fields::default());
}

/// A `data` list: its elements (the first `limit`) and its length; `None` when not a list.
struct DataSeed {
    limit: Option<usize>,
}

impl<'de> DeserializeSeed<'de> for DataSeed {
    type Value = Option<(Vec<Elem>, usize)>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DataSeed {
    type Value = Option<(Vec<Elem>, usize)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a data list")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let limit = self.limit.unwrap_or(usize::MAX);
        // The size hint is unknown for JSON; grow as elements come, never beyond the limit.
        let mut kept = Vec::new();
        let mut len = 0usize;
        while len < limit {
            match seq.next_element::<ElemDe>()? {
                Some(ElemDe(e)) => kept.push(e),
                None => return Ok(Some((kept, len))),
            }
            len += 1;
        }
        // Past the limit: counted, not kept.
        while seq.next_element::<IgnoredAny>()?.is_some() {
            len += 1;
        }
        Ok(Some((kept, len)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    scalars_are!(None);
}

/// One element, deserialized without a tree unless it is a list or object.
struct ElemDe(Elem);

impl<'de> de::Deserialize<'de> for ElemDe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ElemDe, D::Error> {
        d.deserialize_any(ElemVisitor)
    }
}

struct ElemVisitor;

impl<'de> Visitor<'de> for ElemVisitor {
    type Value = ElemDe;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an element")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ElemDe, E> {
        Ok(ElemDe(Elem::Num(v.into())))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ElemDe, E> {
        Ok(ElemDe(Elem::Num(v.into())))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<ElemDe, E> {
        // JSON has no non-finite numbers, so this is always a number.
        Ok(ElemDe(match Number::from_f64(v) {
            Some(n) => Elem::Num(n),
            None => Elem::Other(Box::new(Value::Null)),
        }))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<ElemDe, E> {
        Ok(ElemDe(Elem::Bool(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<ElemDe, E> {
        Ok(ElemDe(Elem::Str(v.into())))
    }
    fn visit_unit<E: de::Error>(self) -> Result<ElemDe, E> {
        Ok(ElemDe(Elem::Other(Box::new(Value::Null))))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ElemDe, A::Error> {
        let v = Value::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
        Ok(ElemDe(Elem::Other(Box::new(v))))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ElemDe, A::Error> {
        let v = Value::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(ElemDe(Elem::Other(Box::new(v))))
    }
}

use serde::Deserialize as _;
