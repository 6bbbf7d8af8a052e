//! The Claude Code client: headless `claude -p` sessions with `--output-format stream-json`.
//!
//! What reaches a runner was measured against the real client (see the end-to-end tests in
//! `crates/checkpoint-e2e/tests/e2e/client.rs`): the session id in the `system`/`init` line,
//! tool calls in `assistant` lines, `system`/`api_retry` lines with the delay the client waits
//! (a 429's `retry-after` when it sent one), an `assistant` line with `"error": "rate_limit"`
//! and a `result` with `api_error_status: 429` when the session ends on a limit, and for
//! claude.ai subscriptions `rate_limit_event` lines with `resetsAt` and texts such as
//! "resets 2pm". The rate-limit headers of a 429 (`retry-after` above 60 seconds,
//! `anthropic-ratelimit-*-reset`) never reach the stream.
//! A subscription's usage reaches it as `rate_limit_event` lines with `utilization` (the
//! fraction of a window used) and `rateLimitType`, which the client reads from the
//! `anthropic-ratelimit-unified-<window>-utilization` headers; the final `result` says
//! `total_cost_usd` and `usage`.
//! The lines are typed in `clients/claude/stream.rs`.

#[cfg(test)]
mod tests;

use std::{ffi::OsString, process::Command};

use checkpoint_core::{budget::Usage, run::Reset};
use chrono::{DateTime, Duration, FixedOffset, NaiveTime, TimeZone, Utc};

use crate::{
    clients::claude::stream::{Block, Line, RateLimitEvent, TokenUsage},
    clients::session::{AgentClient, SessionEvent},
};

/// `claude` run headless.
pub(crate) struct Claude {
    /// The program: `claude` on `PATH`, `[run] claude` or `--claude`.
    pub program: OsString,
    /// The user's extra arguments (permission mode, allowed tools, model, plugin directory).
    pub extra: Vec<String>,
    /// The local time zone's offset now, for reset times said as a time of day.
    pub local_offset: FixedOffset,
}

impl Claude {
    fn command(&self, prompt: &str, resume: Option<&str>) -> Command {
        let mut command = Command::new(&self.program);
        // The prompt comes first: options such as `--allowedTools` take several values.
        command.arg("-p").arg(prompt);
        if let Some(id) = resume {
            command.arg("--resume").arg(id);
        }
        command
            .args(["--output-format", "stream-json", "--verbose"])
            .args(&self.extra);
        command
    }
}

impl AgentClient for Claude {
    fn name(&self) -> &str {
        "claude"
    }

    fn start(&self, prompt: &str) -> Command {
        self.command(prompt, None)
    }

    fn resume(&self, id: &str, prompt: &str) -> Command {
        self.command(prompt, Some(id))
    }

    fn events(&self, line: &str, now: DateTime<Utc>) -> Vec<SessionEvent> {
        parse_line(line, now, self.local_offset)
    }
}

/// The events of one stream-json line; anything else (or a line that is not JSON) has none.
pub(crate) fn parse_line(line: &str, now: DateTime<Utc>, local: FixedOffset) -> Vec<SessionEvent> {
    let Ok(line) = serde_json::from_str::<Line>(line) else {
        return Vec::new();
    };
    let mut events = Vec::new();
    match line {
        Line::System(system) => match system.subtype.as_deref() {
            Some("init") => events.extend(system.session_id.map(SessionEvent::SessionId)),
            Some("api_retry") => {
                let delay = &system.retry_delay_ms;
                match delay.as_u64() {
                    Some(delay_ms) => events.push(SessionEvent::Retry {
                        status: system
                            .error_status
                            .as_u64()
                            .and_then(|status| u16::try_from(status).ok()),
                        delay_ms,
                    }),
                    None if delay.is_null() => {}
                    None => events.push(SessionEvent::Ignored(format!(
                        "the retry delay {delay} is not a number of milliseconds"
                    ))),
                }
            }
            _ => {}
        },
        Line::Assistant(assistant) => {
            for block in &assistant.message.content {
                if let Block::ToolUse { name: Some(name) } = block {
                    events.push(SessionEvent::ToolUse(name.clone()));
                }
            }
            if assistant.error.as_deref() == Some("rate_limit") {
                let text = assistant.message.text();
                limited(&mut events, reset_from_text(&text, now, local));
            }
        }
        Line::RateLimitEvent(RateLimitEvent {
            rate_limit_info: info,
        }) => {
            let resets_at = &info.resets_at;
            // A fractional time is read to the second.
            let secs = resets_at.as_i64().or_else(|| {
                resets_at
                    .as_f64()
                    .filter(|secs| secs.is_finite() && secs.abs() < 1e15)
                    .map(|secs| secs.trunc() as i64)
            });
            let reset = match secs {
                Some(secs) => Some(Reset::from_unix_seconds(secs, now)),
                None if resets_at.is_null() => None,
                None => Some(Err(format!("the reset time {resets_at} is not a time"))),
            };
            if let Some(utilization) = info.utilization.as_f64() {
                events.push(SessionEvent::Usage(Usage {
                    window: info.rate_limit_type.clone(),
                    utilization,
                    resets_at: reset
                        .as_ref()
                        .and_then(|reset| reset.as_ref().ok())
                        .map(|reset| reset.at),
                }));
            }
            if info.status.as_deref() == Some("rejected") {
                limited(&mut events, reset);
            }
        }
        Line::Result(outcome) => {
            let text = outcome.result.unwrap_or_default();
            if outcome.api_error_status == 429 {
                limited(&mut events, reset_from_text(&text, now, local));
            }
            let cost_usd = outcome.total_cost_usd.as_f64();
            let tokens = outcome.usage.as_ref().and_then(TokenUsage::total);
            if cost_usd.is_some() || tokens.is_some() {
                events.push(SessionEvent::Spent { cost_usd, tokens });
            }
            events.push(SessionEvent::Result {
                is_error: outcome.is_error,
                text,
            });
        }
        Line::Other => {}
    }
    events
}

/// A limit, with its reset time when one was said and can be believed (else why not).
fn limited(events: &mut Vec<SessionEvent>, reset: Option<Result<Reset, String>>) {
    match reset {
        Some(Ok(reset)) => events.push(SessionEvent::RateLimited { reset: Some(reset) }),
        Some(Err(why)) => {
            events.push(SessionEvent::Ignored(why));
            events.push(SessionEvent::RateLimited { reset: None });
        }
        None => events.push(SessionEvent::RateLimited { reset: None }),
    }
}

/// The reset time in a limit message: `…limit reached|<unix seconds>` (older clients), or a
/// time of day after "reset"/"resets" ("resets 2pm", "will reset at 5:30pm", "resets at
/// 14:00"), read in the local time zone, said to the hour or the minute.
/// A time of day is the next such time, but one passed by less than its resolution ("resets
/// 3:46pm" at 15:46:20) is kept: the limit resets now, not tomorrow.
/// `None` when the text says no time; an error when the time it says cannot be believed.
pub(crate) fn reset_from_text(
    text: &str,
    now: DateTime<Utc>,
    local: FixedOffset,
) -> Option<Result<Reset, String>> {
    if let Some((_, after)) = text.split_once("limit reached|") {
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        if !digits.is_empty() {
            return Some(match digits.parse::<i64>() {
                Ok(secs) => Reset::from_unix_seconds(secs, now),
                Err(_) => Err(format!("the reset time {digits} is not a time")),
            });
        }
    }
    let lower = text.to_ascii_lowercase();
    let (_, rest) = lower.split_once("reset")?;
    let rest = rest.strip_prefix('s').unwrap_or(rest).trim_start();
    let rest = rest.strip_prefix("at ").unwrap_or(rest).trim_start();
    let (time, resolution) = time_of_day(rest)?;
    let today = now.with_timezone(&local).date_naive();
    let mut at = local
        .from_local_datetime(&today.and_time(time))
        .single()?
        .with_timezone(&Utc);
    if at <= now && now - at >= resolution {
        at = at.checked_add_signed(Duration::days(1))?;
    }
    Some(Ok(Reset { at, resolution }))
}

/// `2pm`, `2 pm`, `2:30pm`, `14:00` at the start of `text`, with its resolution (an hour, or a
/// minute when the minutes are said).
fn time_of_day(text: &str) -> Option<(NaiveTime, Duration)> {
    let hour_len = text.chars().take_while(char::is_ascii_digit).count();
    if hour_len == 0 || hour_len > 2 {
        return None;
    }
    let mut hour: u32 = text[..hour_len].parse().ok()?;
    let mut rest = &text[hour_len..];
    let mut minute = 0;
    let mut resolution = Duration::hours(1);
    if let Some(after) = rest.strip_prefix(':') {
        resolution = Duration::minutes(1);
        let minute_len = after.chars().take_while(char::is_ascii_digit).count();
        if minute_len != 2 {
            return None;
        }
        minute = after[..2].parse().ok()?;
        rest = &after[2..];
    }
    let rest = rest.trim_start();
    if rest.starts_with("pm") || rest.starts_with("p.m.") {
        if hour == 0 || hour > 12 {
            return None;
        }
        hour = hour % 12 + 12;
    } else if rest.starts_with("am") || rest.starts_with("a.m.") {
        if hour == 0 || hour > 12 {
            return None;
        }
        hour %= 12;
    } else if minute_len_missing(text, hour_len) {
        // A bare number such as "resets 5 times" is not a time.
        return None;
    }
    Some((NaiveTime::from_hms_opt(hour, minute, 0)?, resolution))
}

/// Whether a time without am/pm also lacks minutes (then it is not taken as a time).
fn minute_len_missing(text: &str, hour_len: usize) -> bool {
    !text[hour_len..].starts_with(':')
}
