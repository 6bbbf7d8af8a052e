//! Tests of reading a `claude -p --output-format stream-json` session, from lines the real
//! client printed.

use checkpoint_core::{budget::Usage, run::Reset};
use chrono::{DateTime, Duration, FixedOffset, TimeZone, Utc};

use super::{Claude, parse_line, reset_from_text};
use crate::clients::session::{AgentClient, SessionEvent, command_line};

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
}

fn utc() -> FixedOffset {
    FixedOffset::east_opt(0).unwrap()
}

#[track_caller]
fn check(line: &str, expect: &[SessionEvent]) {
    assert_eq!(parse_line(line, now(), utc()), expect, "{line}");
}

#[test]
fn reads_the_session_id_tools_retries_and_a_rate_limit() {
    check(
        r#"{"type":"system","subtype":"init","cwd":"/tmp/p","session_id":"d767-1","tools":["Bash"]}"#,
        &[SessionEvent::SessionId("d767-1".into())],
    );
    check(
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"x"},{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},"session_id":"d767-1"}"#,
        &[SessionEvent::ToolUse("Bash".into())],
    );
    check(
        r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":4000,"error_status":429,"error":"rate_limit","session_id":"s"}"#,
        &[SessionEvent::Retry {
            status: Some(429),
            delay_ms: 4000,
        }],
    );
    check(
        r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: Request rejected (429) · mock rate limit"}]},"session_id":"s","error":"rate_limit"}"#,
        &[SessionEvent::RateLimited { reset: None }],
    );
    check(
        r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error: Request rejected (429) · mock rate limit","session_id":"s"}"#,
        &[
            SessionEvent::RateLimited { reset: None },
            SessionEvent::Result {
                is_error: true,
                text: "API Error: Request rejected (429) · mock rate limit".into(),
            },
        ],
    );
    check(
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1772370000,"rateLimitType":"five_hour"},"session_id":"s"}"#,
        &[SessionEvent::RateLimited {
            reset: Some(Reset::precise(Utc.timestamp_opt(1_772_370_000, 0).unwrap())),
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
        let got = reset_from_text(text, now(), utc()).map(|reset| reset.unwrap().at.to_rfc3339());
        assert_eq!(got.as_deref(), expect, "{text}");
    }
    // The time of day is local.
    let paris = FixedOffset::east_opt(3600).unwrap();
    let got = reset_from_text("resets 2pm", now(), paris)
        .unwrap()
        .unwrap();
    assert_eq!(got.at.to_rfc3339(), "2026-03-01T13:00:00+00:00");
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

#[track_caller]
fn reset_at(text: &str, now: DateTime<Utc>) -> (String, Duration) {
    let reset = reset_from_text(text, now, utc()).unwrap().unwrap();
    (reset.at.to_rfc3339(), reset.resolution)
}

#[test]
fn a_time_of_day_passed_by_less_than_its_resolution_is_kept_not_tomorrow() {
    let at = |h, m, s| Utc.with_ymd_and_hms(2026, 3, 1, h, m, s).unwrap();
    let minute = Duration::minutes(1);
    let hour = Duration::hours(1);
    // "resets 3:46pm" read a few seconds after 15:46: today's 15:46, said to the minute.
    assert_eq!(
        reset_at("resets 3:46pm", at(15, 46, 4)),
        ("2026-03-01T15:46:00+00:00".into(), minute)
    );
    assert_eq!(
        reset_at("resets 3:46pm", at(15, 46, 59)),
        ("2026-03-01T15:46:00+00:00".into(), minute)
    );
    // A minute later, it is tomorrow's.
    assert_eq!(
        reset_at("resets 3:46pm", at(15, 47, 0)),
        ("2026-03-02T15:46:00+00:00".into(), minute)
    );
    // "resets 2pm" at every real reset on the hour, and within that hour.
    assert_eq!(
        reset_at("resets 2pm", at(14, 0, 20)),
        ("2026-03-01T14:00:00+00:00".into(), hour)
    );
    assert_eq!(
        reset_at("resets 2pm", at(14, 59, 59)),
        ("2026-03-01T14:00:00+00:00".into(), hour)
    );
    assert_eq!(
        reset_at("resets 2pm", at(15, 0, 0)),
        ("2026-03-02T14:00:00+00:00".into(), hour)
    );
    assert_eq!(
        reset_at("resets at 14:00", at(14, 0, 0)),
        ("2026-03-01T14:00:00+00:00".into(), minute)
    );
    // Ahead, today; an exact Unix time has no resolution.
    assert_eq!(
        reset_at("resets 2pm", at(13, 59, 59)),
        ("2026-03-01T14:00:00+00:00".into(), hour)
    );
    assert!(
        reset_from_text("limit reached|1772380800", now(), utc())
            .unwrap()
            .unwrap()
            .is_precise()
    );
}

#[test]
fn absurd_reset_times_are_said_and_taken_as_missing() {
    for text in [
        "Claude AI usage limit reached|8210266876799",
        "Claude AI usage limit reached|99999999999999999999999",
        "Claude AI usage limit reached|9223372036854775807",
    ] {
        let err = reset_from_text(text, now(), utc()).unwrap().unwrap_err();
        assert!(err.starts_with("the reset time "), "{text}: {err}");
    }
    for resets_at in [
        "8210266876799",
        "9223372036854775807",
        "1e300",
        "\"soon\"",
        "18446744073709551615",
        "-1e300",
        "1e15",
    ] {
        let line = format!(
            r#"{{"type":"rate_limit_event","rate_limit_info":{{"status":"rejected","resetsAt":{resets_at}}}}}"#
        );
        let events = parse_line(&line, now(), utc());
        assert!(
            matches!(events.as_slice(), [SessionEvent::Ignored(why), SessionEvent::RateLimited { reset: None }] if why.starts_with("the reset time ")),
            "{line}: {events:?}"
        );
    }
    // Zero and negative Unix times are times: in the past, which the runner treats as none.
    for resets_at in [0_i64, -1, -8_210_266_876_799] {
        let line = format!(
            r#"{{"type":"rate_limit_event","rate_limit_info":{{"status":"rejected","resetsAt":{resets_at}}}}}"#
        );
        let events = parse_line(&line, now(), utc());
        let [SessionEvent::RateLimited { reset: Some(reset) }] = events.as_slice() else {
            panic!("{line}: {events:?}");
        };
        assert!(reset.at <= now());
    }
    // A fractional time is read to the second.
    check(
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1772370000.75}}"#,
        &[SessionEvent::RateLimited {
            reset: Some(Reset::precise(Utc.timestamp_opt(1_772_370_000, 0).unwrap())),
        }],
    );
    // A retry delay that is no number of milliseconds is said.
    for delay in ["-5", "1.5", "\"soon\"", "-9223372036854775808"] {
        let line = format!(
            r#"{{"type":"system","subtype":"api_retry","retry_delay_ms":{delay},"error_status":429}}"#
        );
        let events = parse_line(&line, now(), utc());
        assert!(
            matches!(events.as_slice(), [SessionEvent::Ignored(why)] if why.starts_with("the retry delay ")),
            "{line}: {events:?}"
        );
    }
    // A retry delay of 2^63-1 ms is read as said: the runner checks it (`Reset::after_delay`).
    check(
        r#"{"type":"system","subtype":"api_retry","retry_delay_ms":9223372036854775807,"error_status":429}"#,
        &[SessionEvent::Retry {
            status: Some(429),
            delay_ms: 9_223_372_036_854_775_807,
        }],
    );
}

#[test]
fn reads_the_usage_of_a_window_and_what_a_session_spent() {
    let resets = Utc.timestamp_opt(1_772_370_000, 0).unwrap();
    // An `allowed_warning` with its utilization (what the client reads from the
    // `anthropic-ratelimit-unified-5h-utilization` header): a reading, not a limit.
    check(
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1772370000,"rateLimitType":"five_hour","utilization":0.91,"surpassedThreshold":0.9},"session_id":"s"}"#,
        &[SessionEvent::Usage(Usage {
            window: Some("five_hour".into()),
            utilization: 0.91,
            resets_at: Some(resets),
        })],
    );
    // Rejected with its utilization: a reading and a limit.
    check(
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1772370000,"rateLimitType":"seven_day","utilization":1}}"#,
        &[
            SessionEvent::Usage(Usage {
                window: Some("seven_day".into()),
                utilization: 1.0,
                resets_at: Some(resets),
            }),
            SessionEvent::RateLimited {
                reset: Some(Reset::precise(resets)),
            },
        ],
    );
    // A utilization that is not a number, and a reset time that is not believed: no reading of
    // the time, nothing invented.
    check(
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","utilization":"lots"}}"#,
        &[],
    );
    check(
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":99999999999999,"utilization":0.5}}"#,
        &[SessionEvent::Usage(Usage {
            window: None,
            utilization: 0.5,
            resets_at: None,
        })],
    );
    // The final result: its cost and every kind of token, summed; unknown fields ignored.
    check(
        r#"{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0.4213,"usage":{"input_tokens":10,"output_tokens":200,"cache_creation_input_tokens":3000,"cache_read_input_tokens":40000,"server_tool_use":{"web_search_requests":0}},"modelUsage":{},"session_id":"s"}"#,
        &[
            SessionEvent::Spent {
                cost_usd: Some(0.4213),
                tokens: Some(43_210),
            },
            SessionEvent::Result {
                is_error: false,
                text: "done".into(),
            },
        ],
    );
    // Huge counts saturate; a cost that is not a number is none.
    check(
        r#"{"type":"result","is_error":false,"result":"","total_cost_usd":"free","usage":{"input_tokens":18446744073709551615,"output_tokens":5}}"#,
        &[
            SessionEvent::Spent {
                cost_usd: None,
                tokens: Some(u64::MAX),
            },
            SessionEvent::Result {
                is_error: false,
                text: String::new(),
            },
        ],
    );
}
