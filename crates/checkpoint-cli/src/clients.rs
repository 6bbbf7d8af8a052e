//! What the agent clients send us and print, one module per client: their payloads and
//! streams as typed documents (their own formats, read leniently), converted to the canonical
//! events of `event`.

pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod event;
pub(crate) mod gemini;
pub(crate) mod lenient;

/// An agent client `checkpoint` works with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Client {
    /// Claude Code
    Claude,
    /// OpenAI's Codex CLI
    Codex,
    /// Google's Gemini CLI
    Gemini,
}

impl Client {
    /// The client's name on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
        }
    }
}

impl From<checkpoint_core::RunClient> for Client {
    fn from(client: checkpoint_core::RunClient) -> Self {
        match client {
            checkpoint_core::RunClient::Claude => Self::Claude,
            checkpoint_core::RunClient::Codex => Self::Codex,
            checkpoint_core::RunClient::Gemini => Self::Gemini,
        }
    }
}
