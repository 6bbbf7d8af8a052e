//! The Codex CLI client: headless `codex exec --json` sessions, continued with `codex exec
//! resume <id>`.
//!
//! What reaches a runner was measured with Codex 0.169.0 against a mock model on 127.0.0.1:
//! the session id in `thread.started`, each tool call as an `item.completed` (a
//! `command_execution`, a `file_change`, an `mcp_tool_call`), `turn.completed` with the
//! tokens used, and on a rate limit nothing the runner can wait by: Codex waits out a 429's
//! `Retry-After` itself (however long it is), retries `stream_max_retries` times (default 5,
//! each an `error` line "Reconnecting... n/5 (… last status: 429 Too Many Requests …)"), then
//! says `turn.failed` ("exceeded retry limit, last status: 429 Too Many Requests") and exits 1;
//! without a `Retry-After` it gives up at once. No reset time reaches the stream, so the runner
//! waits by its own backoff.
//! Sessions run with `--dangerously-bypass-hook-trust`: the person chose to run unattended,
//! and Codex skips a hook not yet reviewed without a word.
//! The lines are typed in `clients/codex/stream.rs`.

use std::{ffi::OsString, process::Command};

use crate::{
    clients::codex::stream::{Item, Line},
    clients::session::{AgentClient, SessionEvent},
};

/// `codex exec` run headless.
pub(crate) struct Codex {
    /// The program: `codex` on `PATH`, `[run] codex` or `--codex`.
    pub program: OsString,
    /// The user's extra arguments, given to `codex exec` (sandbox, model, configuration).
    pub extra: Vec<String>,
}

/// The options every session gets.
const OPTIONS: [&str; 2] = ["--json", "--dangerously-bypass-hook-trust"];

impl AgentClient for Codex {
    fn name(&self) -> &str {
        "codex"
    }

    fn start(&self, prompt: &str) -> Command {
        let mut command = Command::new(&self.program);
        command
            .arg("exec")
            .args(OPTIONS)
            .args(&self.extra)
            .arg("--")
            .arg(prompt);
        command
    }

    fn resume(&self, id: &str, prompt: &str) -> Command {
        let mut command = Command::new(&self.program);
        // `exec`'s options go before `resume`, which takes fewer of its own.
        command
            .arg("exec")
            .args(&self.extra)
            .arg("resume")
            .args(OPTIONS)
            .arg(id)
            .arg("--")
            .arg(prompt);
        command
    }

    fn events(&self, line: &str, _now: chrono::DateTime<chrono::Utc>) -> Vec<SessionEvent> {
        parse_line(line)
    }
}

/// The events of one `codex exec --json` line; anything else (or a line that is not JSON) has
/// none.
pub(crate) fn parse_line(line: &str) -> Vec<SessionEvent> {
    let Ok(line) = serde_json::from_str::<Line>(line) else {
        return Vec::new();
    };
    match line {
        Line::ThreadStarted { thread_id } => {
            thread_id.map(SessionEvent::SessionId).into_iter().collect()
        }
        Line::ItemCompleted { item } => tool_name(&item)
            .map(SessionEvent::ToolUse)
            .into_iter()
            .collect(),
        Line::TurnCompleted { usage } => {
            let mut events = Vec::new();
            if let Some(tokens) = usage.as_ref().and_then(|usage| usage.total()) {
                events.push(SessionEvent::Spent {
                    cost_usd: None,
                    tokens: Some(tokens),
                });
            }
            events.push(SessionEvent::Result {
                is_error: false,
                text: String::new(),
            });
            events
        }
        Line::TurnFailed { error } => {
            let text = error.and_then(|error| error.message).unwrap_or_default();
            let mut events = Vec::new();
            if is_rate_limit(&text) {
                events.push(SessionEvent::RateLimited { reset: None });
            }
            events.push(SessionEvent::Result {
                is_error: true,
                text,
            });
            events
        }
        // A retry Codex makes itself ("Reconnecting... 1/5 (…429…)") may succeed: only the
        // turn's failure says the session ended on the limit.
        Line::Error | Line::Other => Vec::new(),
    }
}

/// The tool an item is a call of, named as the hooks know it.
fn tool_name(item: &Item) -> Option<String> {
    match item {
        Item::CommandExecution => Some("Bash".to_owned()),
        Item::FileChange => Some("apply_patch".to_owned()),
        Item::McpToolCall { server, tool } => Some(format!(
            "mcp__{}__{}",
            server.as_deref().unwrap_or("?"),
            tool.as_deref().unwrap_or("?")
        )),
        Item::WebSearch => Some("web_search".to_owned()),
        Item::AgentMessage | Item::Other => None,
    }
}

/// Whether Codex's message says the request met a rate limit (HTTP 429).
fn is_rate_limit(message: &str) -> bool {
    message.contains("429") || message.to_ascii_lowercase().contains("too many requests")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(command: &Command) -> Vec<String> {
        command
            .get_args()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn sessions_start_and_resume_with_the_prompt_last() {
        let codex = Codex {
            program: "codex".into(),
            extra: vec!["-s".into(), "danger-full-access".into()],
        };
        assert_eq!(
            args(&codex.start("-resume here")),
            [
                "exec",
                "--json",
                "--dangerously-bypass-hook-trust",
                "-s",
                "danger-full-access",
                "--",
                "-resume here"
            ]
        );
        assert_eq!(
            args(&codex.resume("t-1", "go on")),
            [
                "exec",
                "-s",
                "danger-full-access",
                "resume",
                "--json",
                "--dangerously-bypass-hook-trust",
                "t-1",
                "--",
                "go on"
            ]
        );
    }

    #[test]
    fn the_stream_says_the_session_its_tools_and_what_it_used() {
        assert_eq!(
            parse_line(r#"{"type":"thread.started","thread_id":"019a-t"}"#),
            [SessionEvent::SessionId("019a-t".into())]
        );
        for (item, tool) in [
            (
                r#"{"type":"command_execution","command":"ls","exit_code":0}"#,
                "Bash",
            ),
            (
                r#"{"type":"file_change","changes":[{"path":"/r/a","kind":"add"}]}"#,
                "apply_patch",
            ),
            (
                r#"{"type":"mcp_tool_call","server":"checkpoint","tool":"progress"}"#,
                "mcp__checkpoint__progress",
            ),
        ] {
            let line = format!(r#"{{"type":"item.completed","item":{item}}}"#);
            assert_eq!(
                parse_line(&line),
                [SessionEvent::ToolUse(tool.into())],
                "{line}"
            );
        }
        assert!(
            parse_line(r#"{"type":"item.completed","item":{"type":"agent_message","text":"hi"}}"#)
                .is_empty()
        );
        assert!(parse_line(r#"{"type":"item.completed","item":{"type":"reasoning"}}"#).is_empty());
        assert!(
            parse_line(r#"{"type":"item.started","item":{"type":"command_execution"}}"#).is_empty()
        );
        assert_eq!(
            parse_line(
                r#"{"type":"turn.completed","usage":{"input_tokens":120,"cached_input_tokens":100,"output_tokens":30}}"#
            ),
            [
                SessionEvent::Spent {
                    cost_usd: None,
                    tokens: Some(150)
                },
                SessionEvent::Result {
                    is_error: false,
                    text: String::new()
                }
            ]
        );
    }

    #[test]
    fn a_429_after_codexs_retries_is_a_rate_limit_without_a_reset() {
        let failed = r#"{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests, request id: r-1"}}"#;
        assert_eq!(
            parse_line(failed),
            [
                SessionEvent::RateLimited { reset: None },
                SessionEvent::Result {
                    is_error: true,
                    text:
                        "exceeded retry limit, last status: 429 Too Many Requests, request id: r-1"
                            .into()
                }
            ]
        );
        let retry = r#"{"type":"error","message":"Reconnecting... 1/5 (exceeded retry limit, last status: 429 Too Many Requests, request id: r-1)"}"#;
        assert!(parse_line(retry).is_empty(), "a retry may succeed");
        let other = r#"{"type":"turn.failed","error":{"message":"stream closed before response.completed"}}"#;
        assert_eq!(
            parse_line(other),
            [SessionEvent::Result {
                is_error: true,
                text: "stream closed before response.completed".into()
            }]
        );
        assert!(parse_line(r#"{"type":"error","message":"Model metadata not found"}"#).is_empty());
    }

    #[test]
    fn lines_that_are_not_the_streams_say_nothing() {
        for line in [
            "",
            "not json",
            "[]",
            "{}",
            r#"{"type":7}"#,
            r#"{"type":"turn.failed","error":"x"}"#,
            r#"{"type":"thread.started","thread_id":5}"#,
        ] {
            assert!(parse_line(line).is_empty(), "{line}");
        }
    }
}
