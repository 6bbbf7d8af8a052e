//! The lines of `gemini -p --output-format stream-json`, as typed structs: only the fields a
//! runner reads, every other field ignored, so that a newer client's additions never stop the
//! reading.
//!
//! Measured with Gemini CLI 0.61.0: `init` (the session id), `message`, `tool_use` (its
//! `tool_name`), `tool_result`, `error` (a warning or an error the client goes on after) and a
//! final `result`, whose `status` is `error` with the client's formatted message when the
//! session ends on an API error such as a 429 it gave up on.

use serde::Deserialize;
use serde_json::Value;

/// One line of the stream, by its `type`; a type the runner does not read is `Other`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Line {
    /// The session's id and model.
    Init(Init),
    /// The model called a tool.
    ToolUse(ToolUse),
    /// The session's final result.
    Result(ResultLine),
    /// Any other line (`message`, `tool_result`, `error`, …).
    #[serde(other)]
    Other,
}

/// An `init` line.
#[derive(Debug, Deserialize)]
pub(crate) struct Init {
    #[serde(default)]
    pub session_id: Option<String>,
}

/// A `tool_use` line.
#[derive(Debug, Deserialize)]
pub(crate) struct ToolUse {
    #[serde(default)]
    pub tool_name: Option<String>,
}

/// A `result` line.
#[derive(Debug, Deserialize)]
pub(crate) struct ResultLine {
    /// `success` or `error`.
    #[serde(default)]
    pub status: Option<String>,
    /// What ended the session, when it ended on an error.
    #[serde(default)]
    pub error: Option<Failure>,
    /// The tokens the session used.
    #[serde(default)]
    pub stats: Option<Stats>,
}

/// The `error` of a `result`.
#[derive(Debug, Deserialize)]
pub(crate) struct Failure {
    #[serde(default)]
    pub message: Option<String>,
}

/// The `stats` of a `result`: kept as a JSON value, as a forged stream may put anything there.
#[derive(Debug, Deserialize)]
pub(crate) struct Stats {
    #[serde(default)]
    pub total_tokens: Value,
}

impl ResultLine {
    /// Whether the session ended on an error.
    pub(crate) fn is_error(&self) -> bool {
        self.status.as_deref() != Some("success")
    }

    /// The error's message, or an empty text.
    pub(crate) fn message(&self) -> &str {
        self.error
            .as_ref()
            .and_then(|error| error.message.as_deref())
            .unwrap_or_default()
    }
}
