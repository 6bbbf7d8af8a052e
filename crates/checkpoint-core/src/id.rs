//! Validated identifiers: workflow, phase and task ids are safe to use as file names.

use std::fmt;

use compact_str::CompactString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The longest id we accept, in bytes.
const MAX_ID_LEN: usize = 128;

fn validate(what: &'static str, value: &str) -> Result<()> {
    if is_plain(value.as_bytes()) {
        return Ok(());
    }
    let reason = if value.is_empty() {
        Some("it is empty")
    } else if value.len() > MAX_ID_LEN {
        Some("it is longer than 128 characters")
    } else if value == "." {
        Some("it is `.`, the current directory")
    } else if value.contains("..") {
        Some("it contains `..`")
    } else if value.starts_with('.') {
        Some("it starts with `.`, which is reserved for the store's own directories")
    } else if value.contains(['/', '\\']) {
        Some("it contains a path separator")
    } else if value.contains('\0') {
        Some("it contains a NUL byte")
    } else if !value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'@'))
    {
        Some("it contains a character other than letters, digits, `.`, `_`, `-` and `@`")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(Error::InvalidId {
            what,
            value: shown(value),
            reason,
        }),
        None => Ok(()),
    }
}

/// Names in the store's root that a new workflow may not take (compared ignoring case, for
/// file systems that do): the ones the store uses (`config.toml`, `failed/`, a lock) and a few
/// kept for later.
pub(crate) const RESERVED_WORKFLOW_IDS: &[&str] = &[
    "config.toml",
    "failed",
    "lock",
    "archive",
    "archives",
    "config",
    "cache",
    "tmp",
    "trash",
];

/// Whether `value` is a valid id, in one pass: the common case of every id read from a state.
fn is_plain(value: &[u8]) -> bool {
    // A dot after a dot, or at the start, is refused.
    let mut after_dot = true;
    for &b in value {
        let dot = b == b'.';
        if (dot && after_dot)
            || !(b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'@'))
        {
            return false;
        }
        after_dot = dot;
    }
    !value.is_empty() && value.len() <= MAX_ID_LEN
}

/// A refused id as an error shows it: escaped, and cut after 64 characters.
fn shown(value: &str) -> String {
    const SHOWN: usize = 64;
    let escaped: String = value
        .chars()
        .take(SHOWN)
        .flat_map(char::escape_debug)
        .collect();
    if value.chars().nth(SHOWN).is_some() {
        format!("{escaped}… ({} bytes)", value.len())
    } else {
        escaped
    }
}

macro_rules! id_type {
    ($(#[$meta:meta])* $name:ident, $what:literal) => {
        $(#[$meta])*
        // Ids are short: kept inline (up to 24 bytes) they cost no allocation, and a large
        // workflow holds tens of thousands of them.
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
        #[serde(try_from = "CompactString")]
        pub struct $name(CompactString);

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "type": "string",
                    "description": concat!("A ", $what, ": letters, digits, `.`, `_`, `-` and `@`, not starting with `.`."),
                    "pattern": "^[A-Za-z0-9_@-][A-Za-z0-9._@-]{0,127}$"
                })
            }
        }

        impl $name {
            /// Validates `value` as this kind of id.
            pub fn new(value: &str) -> Result<Self> {
                validate($what, value)?;
                Ok(Self(CompactString::new(value)))
            }

            /// The id as a string.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<CompactString> for $name {
            type Error = Error;

            fn try_from(value: CompactString) -> Result<Self> {
                validate($what, &value)?;
                Ok(Self(value))
            }
        }

        impl TryFrom<String> for $name {
            type Error = Error;

            fn try_from(value: String) -> Result<Self> {
                validate($what, &value)?;
                Ok(Self(value.into()))
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0.into()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = Error;

            fn from_str(value: &str) -> Result<Self> {
                Self::new(value)
            }
        }
    };
}

id_type!(
    /// The id of a workflow; also the name of its directory in the store.
    WorkflowId,
    "workflow id"
);
id_type!(
    /// The id of a phase, unique within its workflow.
    PhaseId,
    "phase id"
);
id_type!(
    /// The id of a task, unique within its phase.
    TaskId,
    "task id"
);

impl WorkflowId {
    /// The name the store reserves that this id clashes with, if any: such an id is read where
    /// it exists already, and refused for a new workflow.
    pub fn reserved(&self) -> Option<&'static str> {
        RESERVED_WORKFLOW_IDS
            .iter()
            .copied()
            .find(|name| name.eq_ignore_ascii_case(self.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_ids() {
        for ok in [
            "payments",
            "a",
            "v1.2",
            "feat_x-y",
            "implement_027_auth",
            "0",
        ] {
            assert!(WorkflowId::new(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_hostile_ids() {
        let long = "a".repeat(129);
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "a/b",
            "a\\b",
            "a\0b",
            "a..b",
            ".hidden",
            "a b",
            "é",
            long.as_str(),
        ] {
            let err = WorkflowId::new(bad).unwrap_err();
            assert!(matches!(err, Error::InvalidId { .. }), "{bad:?}: {err}");
        }
    }

    #[test]
    fn deserialization_validates() {
        let err = serde_json::from_str::<PhaseId>("\"../etc\"").unwrap_err();
        assert!(err.to_string().contains("invalid phase id"), "{err}");
    }
}
