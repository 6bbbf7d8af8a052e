//! The lines of `codex exec --json` (measured on 0.169.0), as typed structs: only the fields a
//! runner reads, every other field ignored, so that a newer client's additions never stop the
//! reading.

use serde::Deserialize;

/// One line of the stream, by its `type`; a type the runner does not read is `Other`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub(crate) enum Line {
    /// The session (Codex's thread) started: its id.
    #[serde(rename = "thread.started")]
    ThreadStarted {
        #[serde(default)]
        thread_id: Option<String>,
    },
    /// An item (a message, a command, a file change, a tool call) is complete.
    #[serde(rename = "item.completed")]
    ItemCompleted {
        #[serde(default)]
        item: Item,
    },
    /// The turn ended well: what it used.
    #[serde(rename = "turn.completed")]
    TurnCompleted {
        #[serde(default)]
        usage: Option<TokenUsage>,
    },
    /// The turn failed (after the client's own retries).
    #[serde(rename = "turn.failed")]
    TurnFailed {
        #[serde(default)]
        error: Option<Failure>,
    },
    /// An error the client reports (a retry: `Reconnecting... 1/5 (…429 Too Many Requests…)`,
    /// or the last one before `turn.failed`).
    #[serde(rename = "error")]
    Error,
    /// Any other line.
    #[serde(other)]
    Other,
}

/// An item of a turn, by its `type`.
#[derive(Debug, Default, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Item {
    /// The model's text.
    AgentMessage,
    /// A shell command ran.
    CommandExecution,
    /// A patch changed files.
    FileChange,
    /// An MCP tool was called.
    McpToolCall {
        #[serde(default)]
        server: Option<String>,
        #[serde(default)]
        tool: Option<String>,
    },
    /// A web search ran.
    WebSearch,
    /// Any other item.
    #[default]
    #[serde(other)]
    Other,
}

/// What a turn used.
#[derive(Debug, Deserialize)]
pub(crate) struct TokenUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
}

impl TokenUsage {
    /// The tokens in and out, when either is said.
    pub(crate) fn total(&self) -> Option<u64> {
        match (self.input_tokens, self.output_tokens) {
            (None, None) => None,
            (input, output) => Some(input.unwrap_or(0).saturating_add(output.unwrap_or(0))),
        }
    }
}

/// Why a turn failed.
#[derive(Debug, Deserialize)]
pub(crate) struct Failure {
    #[serde(default)]
    pub message: Option<String>,
}
