//! Reading timestamps fast: `#[serde(with = "crate::timestamp")]` on the model's times, and
//! [`Timestamp`] for its optional ones.
//!
//! A large state holds tens of thousands of times, all written by us as RFC 3339 in UTC
//! (`2026-11-23T02:28:59.013535023Z`). This reads that form directly, about ten times faster than
//! chrono's general parser, and hands anything else (an offset, a lower-case `t`, a leap second)
//! to chrono, so what is accepted and what is written are exactly as before.

use std::{borrow::Cow, cmp::Ordering, fmt, ops::Deref};

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveTime, Utc};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

/// Writes a time as chrono does.
pub(crate) fn serialize<S: Serializer>(
    at: &DateTime<Utc>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    at.serialize(serializer)
}

/// Reads a time as chrono does, the common form faster.
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<DateTime<Utc>, D::Error> {
    deserializer.deserialize_str(Visitor)
}

/// A point in time on the model's optional fields (`Option<Timestamp>`).
///
/// It reads and writes exactly as `DateTime<Utc>` does, through the fast reader above, and its
/// JSON Schema is chrono's, so wrapping a time in it changes neither the JSON nor the schemas.
/// It dereferences to the `DateTime<Utc>` it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(DateTime<Utc>);

impl Timestamp {
    /// The time it holds.
    pub fn utc(self) -> DateTime<Utc> {
        self.0
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(at: DateTime<Utc>) -> Timestamp {
        Timestamp(at)
    }
}

impl From<Timestamp> for DateTime<Utc> {
    fn from(at: Timestamp) -> DateTime<Utc> {
        at.0
    }
}

impl Deref for Timestamp {
    type Target = DateTime<Utc>;

    fn deref(&self) -> &DateTime<Utc> {
        &self.0
    }
}

impl PartialEq<DateTime<Utc>> for Timestamp {
    fn eq(&self, other: &DateTime<Utc>) -> bool {
        self.0 == *other
    }
}

impl PartialOrd<DateTime<Utc>> for Timestamp {
    fn partial_cmp(&self, other: &DateTime<Utc>) -> Option<Ordering> {
        self.0.partial_cmp(other)
    }
}

impl PartialEq<Timestamp> for DateTime<Utc> {
    fn eq(&self, other: &Timestamp) -> bool {
        *self == other.0
    }
}

impl PartialOrd<Timestamp> for DateTime<Utc> {
    fn partial_cmp(&self, other: &Timestamp) -> Option<Ordering> {
        self.partial_cmp(&other.0)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, formatter)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize(&self.0, serializer)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Timestamp, D::Error> {
        deserialize(deserializer).map(Timestamp)
    }
}

/// Chrono's schema, item for item, so the generated schemas stay as they were.
impl JsonSchema for Timestamp {
    fn inline_schema() -> bool {
        <DateTime<Utc>>::inline_schema()
    }

    fn schema_name() -> Cow<'static, str> {
        <DateTime<Utc>>::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        <DateTime<Utc>>::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        <DateTime<Utc>>::json_schema(generator)
    }
}

struct Visitor;

impl de::Visitor<'_> for Visitor {
    type Value = DateTime<Utc>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("an RFC 3339 date and time")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        match parse_utc(text.as_bytes()) {
            Some(at) => Ok(at),
            None => text
                .parse::<DateTime<FixedOffset>>()
                .map(|at| at.with_timezone(&Utc))
                .map_err(E::custom),
        }
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z`, or `None` for any other form (chrono then decides).
fn parse_utc(text: &[u8]) -> Option<DateTime<Utc>> {
    let text = text.strip_suffix(b"Z")?;
    if text.len() < 19 || text[4] != b'-' || text[7] != b'-' || text[10] != b'T' {
        return None;
    }
    if text[13] != b':' || text[16] != b':' {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        text[range].iter().try_fold(0u32, |n, &digit| {
            digit
                .is_ascii_digit()
                .then(|| n * 10 + u32::from(digit - b'0'))
        })
    };
    let nanos = match &text[19..] {
        [] => 0,
        [b'.', fraction @ ..] if (1..=9).contains(&fraction.len()) => {
            let digits = number(20..text.len())?;
            digits * 10u32.pow(9 - fraction.len() as u32)
        }
        _ => return None,
    };
    let date = NaiveDate::from_ymd_opt(number(0..4)? as i32, number(5..7)?, number(8..10)?)?;
    // Seconds past 59 (a leap second) are left to chrono.
    let time =
        NaiveTime::from_hms_nano_opt(number(11..13)?, number(14..16)?, number(17..19)?, nanos)?;
    Some(date.and_time(time).and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chrono(text: &str) -> Option<DateTime<Utc>> {
        text.parse::<DateTime<FixedOffset>>()
            .ok()
            .map(|at| at.with_timezone(&Utc))
    }

    #[test]
    fn reads_what_chrono_reads() {
        for text in [
            "2026-11-23T02:28:59.013535023Z",
            "2026-11-23T02:28:59Z",
            "2026-11-23T02:28:59.5Z",
            "2024-02-29T23:59:59.999999999Z",
            "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59.000000001Z",
        ] {
            assert_eq!(parse_utc(text.as_bytes()), chrono(text), "{text}");
            assert!(
                parse_utc(text.as_bytes()).is_some(),
                "{text} takes the fast path"
            );
        }
    }

    #[test]
    fn leaves_other_forms_to_chrono() {
        for text in [
            "2026-11-23T02:28:59+02:00",
            "2026-11-23t02:28:59Z",
            "2026-11-23 02:28:59Z",
            "2026-12-31T23:59:60Z",
            "2026-11-23T02:28:59.0123456789Z",
            "2026-11-23T02:28:59.Z",
            "2026-11-23T02:28Z",
            "2025-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-11-23T24:00:00Z",
            "+2026-11-23T02:28:59Z",
            "２026-11-23T02:28:59Z",
            "",
            "Z",
        ] {
            assert_eq!(parse_utc(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn deserializes_like_chrono_in_every_case() {
        #[derive(serde::Deserialize)]
        struct At {
            #[serde(with = "super")]
            at: DateTime<Utc>,
            #[serde(default)]
            maybe: Option<Timestamp>,
        }
        for text in [
            "2026-11-23T02:28:59.013535023Z",
            "2026-11-23T04:28:59.5+02:00",
            "2026-12-31T23:59:60Z",
            "2026-11-23 02:28:59Z",
            "2025-02-29T00:00:00Z",
            "not a time",
        ] {
            let json = format!("{{\"at\":\"{text}\",\"maybe\":\"{text}\"}}");
            let ours = serde_json::from_str::<At>(&json)
                .ok()
                .map(|at| (at.at, at.maybe.map(Timestamp::utc)));
            let theirs = chrono(text).map(|at| (at, Some(at)));
            assert_eq!(ours, theirs, "{text}");
        }
        let at: At = serde_json::from_str(r#"{"at":"2026-11-23T02:28:59Z","maybe":null}"#).unwrap();
        assert_eq!(at.maybe, None);
        let at: At = serde_json::from_str(r#"{"at":"2026-11-23T02:28:59Z"}"#).unwrap();
        assert_eq!(at.maybe, None);
    }

    #[test]
    fn timestamp_writes_and_describes_itself_as_chrono_does() {
        let at: DateTime<Utc> = "2026-11-23T02:28:59.013535023Z".parse().unwrap();
        assert_eq!(
            serde_json::to_string(&Some(Timestamp::from(at))).unwrap(),
            serde_json::to_string(&Some(at)).unwrap()
        );
        assert_eq!(serde_json::to_string(&None::<Timestamp>).unwrap(), "null");
        assert_eq!(
            serde_json::to_value(schemars::schema_for!(Option<Timestamp>)).unwrap(),
            serde_json::to_value(schemars::schema_for!(Option<DateTime<Utc>>)).unwrap()
        );
        assert_eq!(
            serde_json::to_value(schemars::schema_for!(Timestamp)).unwrap(),
            serde_json::to_value(schemars::schema_for!(DateTime<Utc>)).unwrap()
        );
    }

    #[test]
    fn timestamp_compares_with_the_time_it_holds() {
        let at: DateTime<Utc> = "2026-11-23T02:28:59Z".parse().unwrap();
        let later = at + chrono::Duration::seconds(1);
        let stamp = Timestamp::from(at);
        assert_eq!(stamp, at);
        assert_eq!(at, stamp);
        assert!(stamp < later);
        assert!(later > stamp);
        assert_eq!(stamp.utc(), at);
        assert_eq!(DateTime::<Utc>::from(stamp), at);
        assert_eq!(stamp.timestamp(), at.timestamp(), "dereferences to chrono");
        assert_eq!(stamp.to_string(), at.to_string());
    }
}
