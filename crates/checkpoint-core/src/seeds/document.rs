//! Reading a seed file's JSON with diagnostics that point at the line, column and field, plus the
//! readers of times, numbers and ids every format shares.

use std::{fmt, path::Path, sync::Arc};

use chrono::{DateTime, NaiveDate, NaiveDateTime, SecondsFormat, Utc};
use miette::{NamedSource, SourceOffset};
use serde::{
    Deserialize, Deserializer,
    de::{self, DeserializeOwned, Visitor},
};
use serde_json::{Map, Value};

use crate::{error::Error, error::Result, seeds::format::SeedFormat};

/// The hint for a file that does not parse.
const PARSE_HELP: &str = "the file was left untouched; fix it at the marked place (or restore it from a backup) and import it again";

/// Parses a seed file as `T`, and also as a raw JSON object for the fields `T` does not map.
pub(crate) fn parse<T: DeserializeOwned>(
    format: SeedFormat,
    path: &Path,
    bytes: &[u8],
) -> Result<(T, Map<String, Value>)> {
    let raw = match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(raw)) => raw,
        Ok(other) => {
            return Err(invalid(
                format,
                path,
                bytes,
                format!("the file holds a JSON {}, not an object", kind(&other)),
            ));
        }
        Err(err) => return Err(parse_error(format, path, bytes, &err)),
    };
    let typed =
        serde_json::from_slice::<T>(bytes).map_err(|err| parse_error(format, path, bytes, &err))?;
    Ok((typed, raw))
}

/// The entries of the list `field` of `raw`, as objects (typed parsing has checked they are).
pub(crate) fn objects(raw: &Map<String, Value>, field: &str) -> Vec<Map<String, Value>> {
    raw.get(field)
        .and_then(Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .map(|entry| entry.as_object().cloned().unwrap_or_default())
                .collect()
        })
        .unwrap_or_default()
}

/// An error for a file that parses but does not describe a workflow.
pub(crate) fn invalid(format: SeedFormat, path: &Path, bytes: &[u8], message: String) -> Error {
    Error::SeedParse {
        path: path.to_owned(),
        format: format.describe(),
        message,
        help: "the file was left untouched; correct it by hand and import it again",
        source_code: Arc::new(NamedSource::new(path.display().to_string(), text_of(bytes))),
        span: None,
    }
}

fn parse_error(format: SeedFormat, path: &Path, bytes: &[u8], err: &serde_json::Error) -> Error {
    let text = text_of(bytes);
    let offset = (err.line() > 0)
        .then(|| SourceOffset::from_location(&text, err.line(), err.column()).offset());
    let mut message = err.to_string();
    if let Some(field) = offset.and_then(|offset| field_at(&text, offset)) {
        message.push_str(&format!(" (in field `{field}`)"));
    }
    Error::SeedParse {
        path: path.to_owned(),
        format: format.describe(),
        message,
        help: PARSE_HELP,
        source_code: Arc::new(NamedSource::new(path.display().to_string(), text)),
        span: offset.map(|offset| (offset, 0).into()),
    }
}

fn text_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The name of the last object key written before `offset`, where the error most likely is.
fn field_at(text: &str, offset: usize) -> Option<String> {
    let before = text.get(..offset.min(text.len()))?;
    let mut rest = before;
    while let Some(colon) = rest.rfind(':') {
        let key_end = rest[..colon].trim_end();
        if let Some(body) = key_end.strip_suffix('"')
            && let Some(start) = body.rfind('"')
        {
            let key = &body[start + 1..];
            if !key.is_empty() && !key.contains(['{', '}', '[', ']', ',']) {
                return Some(key.to_owned());
            }
        }
        rest = &rest[..colon];
    }
    None
}

/// The field names a derived `Deserialize` struct reads, so the rest can be kept verbatim.
pub(crate) fn fields_of<T: DeserializeOwned>() -> &'static [&'static str] {
    struct Peek<'a>(&'a mut &'static [&'static str]);

    impl<'de> Deserializer<'de> for Peek<'_> {
        type Error = de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("only the field names were wanted"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }

    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Peek(&mut fields));
    fields
}

/// A number written as a JSON number or as a numeric string (`4`, `2.5`, `"3"`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Num(pub f64);

impl Num {
    /// The number as a whole number of at least 1, if it is one.
    pub(crate) fn ordinal(self) -> Option<u32> {
        (self.0 >= 1.0 && self.0.fract() == 0.0 && self.0 <= f64::from(u32::MAX))
            .then_some(self.0 as u32)
    }

    /// The whole numbers of at least 1 in a list of numbers (a `completed_phases`), in order;
    /// the others left out.
    pub(crate) fn ordinals(list: Option<&Vec<Num>>) -> Vec<u32> {
        list.into_iter()
            .flatten()
            .filter_map(|n| n.ordinal())
            .collect()
    }
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NumVisitor;

        impl Visitor<'_> for NumVisitor {
            type Value = Num;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Num, E> {
                Ok(Num(value as f64))
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Num, E> {
                Ok(Num(value as f64))
            }

            fn visit_f64<E: de::Error>(self, value: f64) -> Result<Num, E> {
                Ok(Num(value))
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<Num, E> {
                value
                    .trim()
                    .parse()
                    .map(Num)
                    .map_err(|_| E::invalid_value(de::Unexpected::Str(value), &self))
            }
        }

        deserializer.deserialize_any(NumVisitor)
    }
}

/// A whole number as JSON, or a fraction such as nine-step's step `2.5`.
pub(crate) fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value >= 0.0 && value <= u32::MAX as f64 {
        Value::from(value as u32)
    } else {
        Value::from(value)
    }
}

/// Reads a time the way the seeds write them: RFC 3339, or without an offset (read as UTC), or a
/// date alone (midnight UTC).
pub(crate) fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Some(time.with_timezone(&Utc));
    }
    if let Ok(time) = DateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f%:z") {
        return Some(time.with_timezone(&Utc));
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(time) = NaiveDateTime::parse_from_str(text, format) {
            return Some(time.and_utc());
        }
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .map(|time| time.and_utc())
}

/// The time a field holds, if it holds a readable one.
pub(crate) fn time_of(value: Option<&Value>) -> Option<DateTime<Utc>> {
    value.and_then(Value::as_str).and_then(parse_time)
}

/// The time of a log entry's event, as a JSON value (`null` when unknown).
pub(crate) fn event_at(time: Option<DateTime<Utc>>) -> Value {
    time.map_or(Value::Null, time_value)
}

/// A time as exports write it: RFC 3339 in UTC with a `Z`, with as many fractional digits as needed.
pub(crate) fn time_text(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// A time as a JSON string, as exports write it.
pub(crate) fn time_value(time: DateTime<Utc>) -> Value {
    Value::String(time_text(time))
}

/// The longest id [`id_from`] makes, leaving room for a `-<n>` that tells apart two names that
/// make the same id (ids may have 128 characters).
const MAX_ID_FROM: usize = 120;

/// Turns a name into a valid id: other characters become `-`, and a leading `.` or `..` go.
pub(crate) fn id_from(text: &str) -> Option<String> {
    let mut id: String = text
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    while id.contains("..") {
        id = id.replace("..", ".");
    }
    let id = id.trim_start_matches('.');
    // Every character is ASCII by now, so any byte index is a character boundary.
    let id = &id[..id.len().min(MAX_ID_FROM)];
    (!id.is_empty()).then(|| id.to_owned())
}
