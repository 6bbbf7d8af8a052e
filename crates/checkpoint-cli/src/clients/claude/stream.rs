//! The lines of `claude -p --output-format stream-json --verbose`, as typed structs: only the
//! fields a runner reads, every other field ignored, so that a newer client's additions never
//! stop the reading.
//!
//! Values whose type a broken or forged stream might change (a delay, a reset time) are kept as
//! JSON values, so that the reader can say why it does not believe them.

use serde::Deserialize;
use serde_json::Value;

/// One line of the stream, by its `type`; a type the runner does not read is `Other`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Line {
    /// `system` lines: `init` (the session id), `api_retry` (the client retries a request).
    System(System),
    /// A message of the model: its tool calls, or the client's synthetic error message.
    Assistant(Assistant),
    /// The usage and status of a subscription's rate-limit window.
    RateLimitEvent(RateLimitEvent),
    /// The session's final result.
    Result(ResultLine),
    /// Any other line.
    #[serde(other)]
    Other,
}

/// A `system` line.
#[derive(Debug, Deserialize)]
pub(crate) struct System {
    /// `init`, `api_retry`, …
    #[serde(default)]
    pub subtype: Option<String>,
    /// The session's id (in `init`).
    #[serde(default)]
    pub session_id: Option<String>,
    /// How long the client waits before it retries (in `api_retry`), in milliseconds.
    #[serde(default)]
    pub retry_delay_ms: Value,
    /// The HTTP status that made it retry.
    #[serde(default)]
    pub error_status: Value,
}

/// An `assistant` line.
#[derive(Debug, Deserialize)]
pub(crate) struct Assistant {
    #[serde(default)]
    pub message: Message,
    /// `rate_limit` when the client gave up on a limit.
    #[serde(default)]
    pub error: Option<String>,
}

/// A model message.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Message {
    #[serde(default)]
    pub content: Vec<Block>,
}

/// A block of a message's content.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        #[serde(default)]
        name: Option<String>,
    },
    #[serde(other)]
    Other,
}

/// A `rate_limit_event` line.
#[derive(Debug, Deserialize)]
pub(crate) struct RateLimitEvent {
    pub rate_limit_info: RateLimitInfo,
}

/// A rate-limit window's state, read by the client from the `anthropic-ratelimit-unified-*`
/// response headers of a subscription.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RateLimitInfo {
    /// `allowed`, `allowed_warning` or `rejected`.
    #[serde(default)]
    pub status: Option<String>,
    /// When the window resets, in Unix seconds.
    #[serde(default)]
    pub resets_at: Value,
    /// The window: `five_hour`, `seven_day`, …
    #[serde(default)]
    pub rate_limit_type: Option<String>,
    /// The fraction of the window used (0 to 1, above 1 past its cap).
    #[serde(default)]
    pub utilization: Value,
}

/// A `result` line.
#[derive(Debug, Deserialize)]
pub(crate) struct ResultLine {
    /// The final text, or the error message.
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub is_error: bool,
    /// The HTTP status of the error that ended the session, if one did.
    #[serde(default)]
    pub api_error_status: Value,
    /// What the session cost in dollars.
    #[serde(default)]
    pub total_cost_usd: Value,
    /// The tokens the session used.
    #[serde(default)]
    pub usage: Option<TokenUsage>,
}

/// The `usage` of a result.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct TokenUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
}

impl TokenUsage {
    /// Every token counted: input, output, cache writes and reads; `None` when none was said.
    pub(crate) fn total(&self) -> Option<u64> {
        let parts = [
            self.input_tokens,
            self.output_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        ];
        parts.iter().any(Option::is_some).then(|| {
            parts
                .iter()
                .flatten()
                .fold(0_u64, |sum, n| sum.saturating_add(*n))
        })
    }
}

impl Message {
    /// The text blocks, joined by newlines.
    pub(crate) fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|block| match block {
                Block::Text { text } => Some(text.as_str()),
                Block::ToolUse { .. } | Block::Other => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}
