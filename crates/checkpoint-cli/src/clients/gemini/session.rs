//! The Gemini CLI client: headless `gemini -p` sessions with `--output-format stream-json`,
//! `--yolo` (a headless session otherwise offers no shell, no file write and no untrusted MCP
//! tool) and `GEMINI_CLI_TRUST_WORKSPACE=true` (without it the project's `.gemini/settings.json`,
//! its hooks and its MCP server are ignored, and an untrusted folder exits 55).
//!
//! What reaches a runner was measured against Gemini CLI 0.61.0 (see `docs/clients.md`): the
//! session id in the `init` line, tool calls in `tool_use` lines, and on a 429 the client ignores
//! `Retry-After`, retries up to `general.maxAttempts` times itself, then exits 173 with a final
//! `result` line whose `error.message` is the server's message, ending in "Please wait and try
//! again later": the message's "Please retry in 2s." (or a `retryDelay`) is the only reset time
//! the stream carries. No hook fires on it.
//! The lines are typed in `clients/gemini/stream.rs`.

#[cfg(test)]
mod tests;

use std::{ffi::OsString, process::Command};

use checkpoint_core::run::Reset;
use chrono::{DateTime, Utc};

use crate::{
    clients::gemini::stream::{Line, ResultLine},
    clients::session::{AgentClient, SessionEvent},
    env,
};

/// Words of a final error that say it was a rate or quota limit (matched in lower case).
const LIMIT_MARKERS: [&str; 6] = [
    "please wait and try again later",
    "resource_exhausted",
    "resource has been exhausted",
    "quota exceeded",
    "exhausted your capacity",
    "rate limit",
];

/// `gemini` run headless.
pub(crate) struct Gemini {
    /// The program: `gemini` on `PATH`, or the one configured.
    pub program: OsString,
    /// The user's extra arguments (model, approval mode, extensions).
    pub extra: Vec<String>,
}

impl Gemini {
    fn command(&self, prompt: &str) -> Command {
        let mut command = Command::new(&self.program);
        command.env(env::GEMINI_CLI_TRUST_WORKSPACE, "true");
        // `--prompt=…` as one argument: a prompt that starts with `-` is not read as an option.
        command.arg(format!("--prompt={prompt}"));
        command
            .args(["--output-format", "stream-json", "--yolo"])
            .args(&self.extra);
        command
    }
}

impl AgentClient for Gemini {
    fn name(&self) -> &str {
        "gemini"
    }

    fn start(&self, prompt: &str) -> Command {
        self.command(prompt)
    }

    /// A new session: Gemini CLI saves no session that failed before its first answer, and
    /// `--resume <id>` of one exits 42 ("No previous sessions found", measured with 0.61.0),
    /// so after a limit the session starts afresh on the resume prompt, which carries where
    /// the work stands.
    fn resume(&self, _id: &str, prompt: &str) -> Command {
        self.command(prompt)
    }

    fn events(&self, line: &str, now: DateTime<Utc>) -> Vec<SessionEvent> {
        parse_line(line, now)
    }
}

/// The events of one stream-json line; anything else (or a line that is not JSON) has none.
pub(crate) fn parse_line(line: &str, now: DateTime<Utc>) -> Vec<SessionEvent> {
    let Ok(line) = serde_json::from_str::<Line>(line) else {
        return Vec::new();
    };
    let mut events = Vec::new();
    match line {
        Line::Init(init) => events.extend(init.session_id.map(SessionEvent::SessionId)),
        Line::ToolUse(tool) => events.extend(tool.tool_name.map(SessionEvent::ToolUse)),
        Line::Other => {}
        Line::Result(outcome) => result_events(&mut events, &outcome, now),
    }
    events
}

/// The events of the final `result`: the limit it ended on, what it spent, the result itself.
fn result_events(events: &mut Vec<SessionEvent>, outcome: &ResultLine, now: DateTime<Utc>) {
    let text = outcome.message().to_owned();
    if outcome.is_error() && is_limit(&text) {
        match retry_delay(&text) {
            Some(Ok(delay_ms)) => match Reset::after_delay(delay_ms, now) {
                Ok(reset) => events.push(SessionEvent::RateLimited { reset: Some(reset) }),
                Err(why) => {
                    events.push(SessionEvent::Ignored(why));
                    events.push(SessionEvent::RateLimited { reset: None });
                }
            },
            Some(Err(why)) => {
                events.push(SessionEvent::Ignored(why));
                events.push(SessionEvent::RateLimited { reset: None });
            }
            None => events.push(SessionEvent::RateLimited { reset: None }),
        }
    }
    let tokens = outcome
        .stats
        .as_ref()
        .and_then(|stats| stats.total_tokens.as_u64());
    if tokens.is_some() {
        events.push(SessionEvent::Spent {
            cost_usd: None,
            tokens,
        });
    }
    events.push(SessionEvent::Result {
        is_error: outcome.is_error(),
        text,
    });
}

/// Whether a final error is a rate or quota limit.
fn is_limit(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    LIMIT_MARKERS.iter().any(|marker| lower.contains(marker))
}

/// The wait a limit message names, in milliseconds: "Please retry in 2s." (Gemini CLI's own
/// reading), "1.5s", "500ms", "2m", "1m30s", "2 minutes", "1h", or a RetryInfo
/// `"retryDelay": "30s"` quoted in the text. `None` when it names none; an error when the wait
/// it names cannot be read as one.
pub(crate) fn retry_delay(text: &str) -> Option<Result<u64, String>> {
    let lower = text.to_ascii_lowercase();
    let start = ["retry in", "retrydelay"]
        .iter()
        .find_map(|marker| lower.find(marker).map(|at| at + marker.len()))?;
    let rest = lower[start..].trim_start_matches(|c: char| c.is_whitespace() || "\":=".contains(c));
    Some(duration_ms(rest))
}

/// The duration at the start of `text` (`2s`, `1.5 s`, `500ms`, `1m30s`, `2 minutes`, `1h`,
/// up to the first word that is not part of it), in milliseconds, rounded up so that a wait is
/// never short.
fn duration_ms(text: &str) -> Result<u64, String> {
    let said: String = text.chars().take(24).collect();
    let unreadable = || format!("the retry delay `{}` is not a duration", said.trim_end());
    let mut total = 0.0_f64;
    let mut rest = text;
    let mut parts = 0;
    while rest.starts_with(|c: char| c.is_ascii_digit()) {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..number_len].parse().map_err(|_| unreadable())?;
        let after = rest[number_len..].trim_start();
        let unit_len = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let millis_per = match &after[..unit_len] {
            "ms" | "millisecond" | "milliseconds" => 1.0,
            "s" | "sec" | "secs" | "second" | "seconds" => 1_000.0,
            "m" | "min" | "mins" | "minute" | "minutes" => 60_000.0,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000.0,
            _ => return Err(unreadable()),
        };
        total += number * millis_per;
        rest = after[unit_len..].trim_start();
        parts += 1;
    }
    if parts == 0 || !total.is_finite() {
        return Err(unreadable());
    }
    let millis = total.ceil();
    if millis >= u64::MAX as f64 {
        return Err(format!(
            "the retry delay `{}` is too long to believe",
            said.trim_end()
        ));
    }
    Ok(millis as u64)
}
