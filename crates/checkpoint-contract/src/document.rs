//! The `--format json` documents the MCP server reads, as typed counterparts of the parts it
//! reads (serialize and deserialize; serde ignores the rest of a document). The command line's
//! contract tests deserialize real documents into them and serialize them back into a part of
//! the same document, so a renamed or retyped field fails a test instead of every MCP client.
//!
//! Statuses are strings here: their words are `checkpoint-core`'s (`docs/state.schema.json`),
//! and a reader only shows them.

use std::{fmt, marker::PhantomData};

use serde::{
    Deserialize, Deserializer, Serialize,
    de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor, value::MapAccessDeserializer},
};

/// What the MCP server shows of any command's document: its workflow (the documents of
/// `status` and of every change of state carry the whole workflow), and its resume plan
/// (`resume`, `run --dry-run`). Either is `None` when the document has none, or names its
/// workflow by id only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    #[serde(
        default,
        deserialize_with = "object_or_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub workflow: Option<WorkflowHead>,
    #[serde(
        default,
        deserialize_with = "object_or_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub plan: Option<PlanHead>,
}

/// A workflow's id, status and phases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkflowHead {
    pub id: String,
    pub status: String,
    pub phases: Vec<PhaseHead>,
}

/// A phase's id and status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseHead {
    pub id: String,
    pub status: String,
}

/// A resume plan: the next action, the recoveries, and whether a person must decide.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanHead {
    pub next: NextHead,
    pub recoveries: Vec<RecoveryHead>,
    pub decision_required: bool,
}

/// The single next action of a plan: why, and the command line that takes it (none when a
/// person must act).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NextHead {
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// A recovery of a plan, as a sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecoveryHead {
    pub description: String,
}

/// The document of `checkpoint list`: the workflows found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Listing {
    pub workflows: Vec<Listed>,
}

/// A workflow of `checkpoint list`: its id, its status (none when its state cannot be read),
/// and its directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Listed {
    pub id: String,
    pub status: Option<String>,
    pub dir: String,
}

/// A failed command's error: the document it writes to the file `CHECKPOINT_ERROR_FILE` names,
/// whatever `--format` (a bad command line's included, with the code `checkpoint::usage`); with
/// `--format json` also the last line of stderr (miette's JSON report, of which these are the
/// fields a reader needs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorReport {
    pub message: String,
    /// The stable diagnostic code ([`crate::diagnostic`]).
    #[serde(default)]
    pub code: Option<String>,
    /// The fix, when there is one.
    #[serde(default)]
    pub help: Option<String>,
}

/// An object read as `T`; anything else (a workflow named by its id, `null`) as `None`.
fn object_or_none<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct ObjectOrNone<T>(PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectOrNone<T> {
        type Value = Option<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object, or any other value for none")
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            T::deserialize(MapAccessDeserializer::new(map)).map(Some)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }

        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }

    deserializer.deserialize_any(ObjectOrNone(PhantomData))
}

#[cfg(test)]
mod tests;
