//! Reading timestamps fast: `#[serde(with = "crate::timestamp")]` on the model's times.
//!
//! A large state holds tens of thousands of times, all written by us as RFC 3339 in UTC
//! (`2026-11-23T02:28:59.013535023Z`). This reads that form directly, about ten times faster than
//! chrono's general parser, and hands anything else (an offset, a lower-case `t`, a leap second)
//! to chrono, so what is accepted and what is written are exactly as before.

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveTime, Utc};
use serde::{Deserializer, Serialize, Serializer, de};

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

/// The same for `Option<DateTime<Utc>>` (a missing field is `None` through `#[serde(default)]`).
pub(crate) mod option {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(
        at: &Option<DateTime<Utc>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        at.serialize(serializer)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<DateTime<Utc>>, D::Error> {
        deserializer.deserialize_option(OptionVisitor)
    }

    struct OptionVisitor;

    impl<'de> de::Visitor<'de> for OptionVisitor {
        type Value = Option<DateTime<Utc>>;

        fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
            formatter.write_str("an RFC 3339 date and time, or null")
        }

        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(
            self,
            deserializer: D,
        ) -> Result<Self::Value, D::Error> {
            super::deserialize(deserializer).map(Some)
        }
    }
}

struct Visitor;

impl de::Visitor<'_> for Visitor {
    type Value = DateTime<Utc>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
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
            #[serde(default, with = "super::option")]
            maybe: Option<DateTime<Utc>>,
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
                .map(|at| (at.at, at.maybe));
            let theirs = chrono(text).map(|at| (at, Some(at)));
            assert_eq!(ours, theirs, "{text}");
        }
        let at: At = serde_json::from_str(r#"{"at":"2026-11-23T02:28:59Z","maybe":null}"#).unwrap();
        assert_eq!(at.maybe, None);
        let at: At = serde_json::from_str(r#"{"at":"2026-11-23T02:28:59Z"}"#).unwrap();
        assert_eq!(at.maybe, None);
    }
}
