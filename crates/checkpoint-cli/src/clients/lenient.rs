//! Reading the clients' documents leniently: a payload must be one JSON object, and a field read
//! only when present never makes it unusable: one of another type reads as absent.

use std::{fmt, marker::PhantomData};

use serde::{
    Deserialize, Deserializer,
    de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor, value::MapAccessDeserializer},
};

/// Checks that `bytes` hold a JSON object (the error says why not, for the warning).
pub(crate) fn check_object(bytes: &[u8]) -> Result<(), String> {
    if bytes.trim_ascii().is_empty() {
        return Err("no payload on stdin; nothing recorded".into());
    }
    if !bytes.trim_ascii_start().starts_with(b"{") {
        return Err(match serde_json::from_slice::<IgnoredAny>(bytes) {
            Ok(_) => "the payload on stdin is not a JSON object; nothing recorded".into(),
            Err(err) => format!("the payload on stdin is not JSON ({err}); nothing recorded"),
        });
    }
    Ok(())
}

/// Parses the payload of the event named `event` as `T`.
pub(crate) fn parse<'de, T: Deserialize<'de>>(event: &str, bytes: &'de [u8]) -> Result<T, String> {
    serde_json::from_slice(bytes).map_err(|err| {
        if err.is_data() {
            format!("the payload is not a `{event}` payload we can use ({err}); nothing recorded")
        } else {
            format!("the payload on stdin is not JSON ({err}); nothing recorded")
        }
    })
}

/// A string, or `None` for a value of any other type.
pub(crate) fn lenient_str<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    deserializer.deserialize_any(Lenient::<String>(PhantomData))
}

/// A boolean, or `None` for a value of any other type.
pub(crate) fn lenient_bool<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<bool>, D::Error> {
    deserializer.deserialize_any(Lenient::<bool>(PhantomData))
}

/// An object's fields, or the defaults for a value of any other type.
pub(crate) fn lenient_map<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(deserializer
        .deserialize_any(Lenient::<Object<T>>(PhantomData))?
        .map(|object| object.0)
        .unwrap_or_default())
}

/// An array's objects (other elements left out), or none for a value of any other type.
pub(crate) fn lenient_seq<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(deserializer
        .deserialize_any(Lenient::<Vec<T>>(PhantomData))?
        .unwrap_or_default())
}

/// An object's fields as `T`.
struct Object<T>(T);

/// Visits a value of any type, keeping it only when it has the shape of `T`.
struct Lenient<T>(PhantomData<T>);

impl<'de, T> Lenient<T> {
    fn skip_map<A: MapAccess<'de>>(mut map: A) -> Result<Option<T>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn skip_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Option<T>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// The visits that keep nothing: every scalar of another type than the one kept.
macro_rules! skip_scalars {
    ($($method:ident: $ty:ty),*) => {
        $(fn $method<E: de::Error>(self, _: $ty) -> Result<Self::Value, E> {
            Ok(None)
        })*
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    };
}

impl<'de> Visitor<'de> for Lenient<String> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
        Ok(Some(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Self::Value, E> {
        Ok(Some(value))
    }

    skip_scalars!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64);

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Self::skip_map(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Self::skip_seq(seq)
    }
}

impl<'de> Visitor<'de> for Lenient<bool> {
    type Value = Option<bool>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Self::Value, E> {
        Ok(Some(value))
    }

    skip_scalars!(visit_str: &str, visit_i64: i64, visit_u64: u64, visit_f64: f64);

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Self::skip_map(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Self::skip_seq(seq)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Lenient<Object<T>> {
    type Value = Option<Object<T>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    skip_scalars!(visit_bool: bool, visit_str: &str, visit_i64: i64, visit_u64: u64, visit_f64: f64);

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(|value| Some(Object(value)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Self::skip_seq(seq)
    }
}

impl<'de, T: Deserialize<'de> + Default> Visitor<'de> for Lenient<Vec<T>> {
    type Value = Option<Vec<T>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    skip_scalars!(visit_bool: bool, visit_str: &str, visit_i64: i64, visit_u64: u64, visit_f64: f64);

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Self::skip_map(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut kept = Vec::new();
        while let Some(element) = seq.next_element::<ObjectOrNothing<T>>()? {
            kept.extend(element.0);
        }
        Ok(Some(kept))
    }
}

/// An array element: an object as `T`, anything else left out.
struct ObjectOrNothing<T>(Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOrNothing<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = deserializer.deserialize_any(Lenient::<Object<T>>(PhantomData))?;
        Ok(Self(object.map(|object| object.0)))
    }
}
