//! Tests of reading a `gemini -p --output-format stream-json` session, from lines the real
//! client printed (Gemini CLI 0.61.0), and of the waits its limit messages name.

use checkpoint_core::run::Reset;
use chrono::{DateTime, Duration, TimeZone, Utc};

use super::{Gemini, parse_line, retry_delay};
use crate::clients::session::{AgentClient, SessionEvent, command_line};

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
}

/// The final line of a session that gave up on a 429 whose message is `message`.
fn limit_line(message: &str) -> String {
    serde_json::json!({
        "type": "result",
        "timestamp": "2026-11-25T15:51:19.850Z",
        "status": "error",
        "error": {
            "type": "unknown",
            "message": format!("[API Error: {message}]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method"),
        },
        "stats": {"total_tokens": 0, "input_tokens": 0, "output_tokens": 0, "duration_ms": 2100, "tool_calls": 0},
    })
    .to_string()
}

fn text_of(events: &[SessionEvent]) -> String {
    events
        .iter()
        .find_map(|event| match event {
            SessionEvent::Result { text, .. } => Some(text.clone()),
            _ => None,
        })
        .unwrap()
}

#[test]
fn reads_the_session_id_tools_and_a_success() {
    assert_eq!(
        parse_line(
            r#"{"type":"init","timestamp":"2026-11-25T15:51:19.850Z","session_id":"b832-1","model":"gemini-3.8-flash"}"#,
            now()
        ),
        [SessionEvent::SessionId("b832-1".into())]
    );
    assert_eq!(
        parse_line(
            r#"{"type":"tool_use","timestamp":"t","tool_name":"write_file","tool_id":"write_file_1_0","parameters":{"file_path":"a.md"}}"#,
            now()
        ),
        [SessionEvent::ToolUse("write_file".into())]
    );
    for quiet in [
        r#"{"type":"message","role":"assistant","content":"done","delta":true}"#,
        r#"{"type":"tool_result","tool_id":"x","status":"success","output":"ok"}"#,
        r#"{"type":"error","severity":"warning","message":"Loop detected, stopping execution"}"#,
        r#"{"type":"init"}"#,
        "not json",
        "",
        r#"{"type":42}"#,
    ] {
        assert_eq!(parse_line(quiet, now()), [], "{quiet}");
    }
    assert_eq!(
        parse_line(
            r#"{"type":"result","status":"success","stats":{"total_tokens":1234,"input_tokens":1000,"output_tokens":234}}"#,
            now()
        ),
        [
            SessionEvent::Spent {
                cost_usd: None,
                tokens: Some(1234)
            },
            SessionEvent::Result {
                is_error: false,
                text: String::new()
            }
        ]
    );
}

#[test]
fn a_429_given_up_waits_the_delay_its_message_names() {
    let cases: [(&str, Option<i64>); 9] = [
        ("Quota exceeded. Please retry in 2s.", Some(2_000)),
        (
            "You exceeded your current quota. Please retry in 56.185908122s.",
            Some(56_186),
        ),
        ("Quota exceeded. Please retry in 500ms.", Some(500)),
        ("Quota exceeded. Please retry in 2m.", Some(120_000)),
        ("Quota exceeded. Please retry in 1m30s.", Some(90_000)),
        ("Quota exceeded. Please retry in 2 minutes.", Some(120_000)),
        ("Quota exceeded. Please retry in 1h.", Some(3_600_000)),
        ("Quota exceeded. Please retry in 0s.", Some(0)),
        (
            r#"Quota exceeded: {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"45s"}"#,
            Some(45_000),
        ),
    ];
    for (message, delay_ms) in cases {
        let events = parse_line(&limit_line(message), now());
        let reset = delay_ms.map(|ms| Reset::precise(now() + Duration::milliseconds(ms)));
        assert_eq!(events[0], SessionEvent::RateLimited { reset }, "{message}");
        assert_eq!(
            events[1],
            SessionEvent::Spent {
                cost_usd: None,
                tokens: Some(0)
            }
        );
        assert!(text_of(&events).contains(message), "{message}");
    }
}

#[test]
fn a_429_without_a_believable_delay_is_a_limit_with_no_reset() {
    // None said: the runner falls back to its own wait.
    for message in [
        "Resource has been exhausted (e.g. check quota).",
        "RESOURCE_EXHAUSTED",
        "You have exhausted your capacity on this model.",
    ] {
        let events = parse_line(&limit_line(message), now());
        assert_eq!(
            events[0],
            SessionEvent::RateLimited { reset: None },
            "{message}"
        );
    }
    // Said, but not believable: the reason is kept, the limit still counts.
    for (message, why) in [
        (
            "Quota exceeded. Please retry in 99999999999999999999999999h.",
            "too long to believe",
        ),
        ("Quota exceeded. Please retry in 9000000h.", "is more than"),
        ("Quota exceeded. Please retry in soon.", "is not a duration"),
        ("Quota exceeded. Please retry in -5s.", "is not a duration"),
        (
            "Quota exceeded. Please retry in 5 parsecs.",
            "is not a duration",
        ),
        (
            "Quota exceeded. Please retry in 1.2.3s.",
            "is not a duration",
        ),
    ] {
        let events = parse_line(&limit_line(message), now());
        match &events[0] {
            SessionEvent::Ignored(said) => assert!(said.contains(why), "{message}: {said}"),
            other => panic!("{message}: {other:?}"),
        }
        assert_eq!(
            events[1],
            SessionEvent::RateLimited { reset: None },
            "{message}"
        );
    }
}

#[test]
fn an_error_that_is_not_a_limit_is_only_a_failed_result() {
    let line = r#"{"type":"result","status":"error","error":{"type":"FatalToolExecutionError","message":"Please retry in 2s. disk full"}}"#;
    assert_eq!(
        parse_line(line, now()),
        [SessionEvent::Result {
            is_error: true,
            text: "Please retry in 2s. disk full".into()
        }]
    );
    // A success that quotes a limit's words is no limit.
    let line = r#"{"type":"result","status":"success","error":{"message":"Quota exceeded. Please retry in 2s."}}"#;
    assert_eq!(parse_line(line, now()).len(), 1);
}

#[test]
fn retry_delays_in_every_form() {
    assert_eq!(retry_delay("no delay here"), None);
    assert_eq!(retry_delay("Please retry in 2s."), Some(Ok(2_000)));
    assert_eq!(retry_delay("please RETRY IN 1.5S then"), Some(Ok(1_500)));
    assert_eq!(retry_delay("Please retry in 0.0001s"), Some(Ok(1)));
    assert_eq!(retry_delay("Please retry in 3 sec"), Some(Ok(3_000)));
    assert_eq!(retry_delay("Please retry in 1h2m3s"), Some(Ok(3_723_000)));
    assert_eq!(retry_delay("\"retryDelay\": \"7s\""), Some(Ok(7_000)));
    assert!(retry_delay("Please retry in ").unwrap().is_err());
}

#[test]
fn sessions_run_headless_in_a_trusted_folder_and_start_afresh_after_a_limit() {
    let gemini = Gemini {
        program: "gemini".into(),
        extra: vec!["--model".into(), "gemini-3.8-flash".into()],
    };
    let start = gemini.start("-go on");
    assert_eq!(
        command_line(&start),
        "gemini '--prompt=-go on' --output-format stream-json --yolo --model gemini-3.8-flash"
    );
    let trusted = start
        .get_envs()
        .any(|(key, value)| key == "GEMINI_CLI_TRUST_WORKSPACE" && value == Some("true".as_ref()));
    assert!(trusted);
    assert_eq!(
        command_line(&gemini.resume("b832-1", "resume")),
        "gemini --prompt=resume --output-format stream-json --yolo --model gemini-3.8-flash"
    );
    assert_eq!(gemini.name(), "gemini");
}
