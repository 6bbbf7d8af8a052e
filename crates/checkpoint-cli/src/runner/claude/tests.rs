//! Tests of reading a `claude -p --output-format stream-json` session, from lines the real
//! client printed.

use chrono::{DateTime, FixedOffset, TimeZone, Utc};

use super::{Claude, parse_line, reset_from_text};
use crate::runner::client::{AgentClient, AgentEvent, command_line};

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
}

fn utc() -> FixedOffset {
    FixedOffset::east_opt(0).unwrap()
}

#[track_caller]
fn check(line: &str, expect: &[AgentEvent]) {
    assert_eq!(parse_line(line, now(), utc()), expect, "{line}");
}

#[test]
fn reads_the_session_id_tools_retries_and_a_rate_limit() {
    check(
        r#"{"type":"system","subtype":"init","cwd":"/tmp/p","session_id":"d767-1","tools":["Bash"]}"#,
        &[AgentEvent::SessionId("d767-1".into())],
    );
    check(
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"x"},{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},"session_id":"d767-1"}"#,
        &[AgentEvent::ToolUse("Bash".into())],
    );
    check(
        r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":4000,"error_status":429,"error":"rate_limit","session_id":"s"}"#,
        &[AgentEvent::Retry {
            status: Some(429),
            delay_ms: 4000,
        }],
    );
    check(
        r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: Request rejected (429) · mock rate limit"}]},"session_id":"s","error":"rate_limit"}"#,
        &[AgentEvent::RateLimited { reset_at: None }],
    );
    check(
        r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error: Request rejected (429) · mock rate limit","session_id":"s"}"#,
        &[
            AgentEvent::RateLimited { reset_at: None },
            AgentEvent::Result {
                is_error: true,
                text: "API Error: Request rejected (429) · mock rate limit".into(),
            },
        ],
    );
    check(
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1772370000,"rateLimitType":"five_hour"},"session_id":"s"}"#,
        &[AgentEvent::RateLimited {
            reset_at: Some(Utc.timestamp_opt(1_772_370_000, 0).unwrap()),
        }],
    );
    // A warning is not a limit; a line that is not JSON is nothing.
    check(
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1772370000}}"#,
        &[],
    );
    check("not json", &[]);
}

#[test]
fn reads_reset_times_from_limit_messages() {
    let cases = [
        (
            "Claude usage limit reached. Your limit will reset at 5pm (Europe/Paris).",
            Some("2026-03-01T17:00:00+00:00"),
        ),
        (
            "5-hour limit reached ∙ resets 2pm",
            Some("2026-03-01T14:00:00+00:00"),
        ),
        (
            "limit reached, resets at 2:30 pm",
            Some("2026-03-01T14:30:00+00:00"),
        ),
        // A time already past today is tomorrow's.
        (
            "usage limit reached; resets 9am",
            Some("2026-03-02T09:00:00+00:00"),
        ),
        ("resets at 14:05", Some("2026-03-01T14:05:00+00:00")),
        (
            "Claude AI usage limit reached|1772380800",
            Some("2026-03-01T16:00:00+00:00"),
        ),
        ("the counter resets 5 times a day", None),
        ("API Error: Request rejected (429) · rate limited", None),
    ];
    for (text, expect) in cases {
        let got = reset_from_text(text, now(), utc()).map(|at| at.to_rfc3339());
        assert_eq!(got.as_deref(), expect, "{text}");
    }
    // The time of day is local.
    let paris = FixedOffset::east_opt(3600).unwrap();
    let got = reset_from_text("resets 2pm", now(), paris).unwrap();
    assert_eq!(got.to_rfc3339(), "2026-03-01T13:00:00+00:00");
}

#[test]
fn sessions_are_headless_stream_json_with_the_users_arguments() {
    let claude = Claude {
        program: "claude".into(),
        extra: vec!["--allowedTools".into(), "Bash Write".into()],
        local_offset: utc(),
    };
    insta::assert_snapshot!(command_line(&claude.start("do it")), @"claude -p 'do it' --output-format stream-json --verbose --allowedTools 'Bash Write'");
    insta::assert_snapshot!(command_line(&claude.resume("s-1", "go on")), @"claude -p 'go on' --resume s-1 --output-format stream-json --verbose --allowedTools 'Bash Write'");
}
