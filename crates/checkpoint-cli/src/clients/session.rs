//! The agent client a runner drives, as a small trait, so that other clients (Codex CLI's
//! `codex exec`, Gemini CLI) can be added without touching the loop.

use std::process::Command;

use checkpoint_core::{budget::Usage, run::Reset};
use chrono::{DateTime, Utc};

/// Something a session reported on its output.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SessionEvent {
    /// The client's id of the session (to continue it later).
    SessionId(String),
    /// The model called a tool.
    ToolUse(String),
    /// The client retries a failed request itself after `delay_ms` (`status` is the HTTP status).
    Retry { status: Option<u16>, delay_ms: u64 },
    /// The session met a rate or usage limit; `reset` when the client said when it resets.
    RateLimited { reset: Option<Reset> },
    /// A time or a delay in the stream that cannot be believed (it is taken as missing), and why.
    Ignored(String),
    /// The client reported the usage of one of its rate-limit windows.
    Usage(Usage),
    /// What the session spent, from its final result.
    Spent {
        cost_usd: Option<f64>,
        tokens: Option<u64>,
    },
    /// The session's final result.
    Result { is_error: bool, text: String },
}

/// An agent client: start a session with a prompt, resume one, read its events.
pub(crate) trait AgentClient {
    /// Its name, journaled in `run_start`.
    fn name(&self) -> &str;
    /// The command that starts a headless session on `prompt`.
    fn start(&self, prompt: &str) -> Command;
    /// The command that continues session `id` with `prompt`, keeping its context.
    fn resume(&self, id: &str, prompt: &str) -> Command;
    /// The events in one line of a session's standard output, read at `now`.
    fn events(&self, line: &str, now: DateTime<Utc>) -> Vec<SessionEvent>;
}

/// A command line as a person would type it (for `--dry-run`).
pub(crate) fn command_line(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|arg| shell_quote(&arg.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}
