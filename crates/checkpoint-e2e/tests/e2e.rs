//! End-to-end tests that drive the real `claude` client against the scripted mock Messages API.
//!
//! The client comes from `CHECKPOINT_CLAUDE_BIN` (or the copy `cargo xtask test` installs); without
//! one these tests fail with a hint rather than pass vacuously. The tests of the `checkpoint`
//! plugin also need its bundle (`CHECKPOINT_PLUGIN_DIR`, or what `cargo xtask dist` built); they
//! live in the modules under `tests/e2e/`, all in this one test binary.

#[path = "e2e/bundle.rs"]
mod bundle;
#[path = "e2e/client.rs"]
mod client;
#[path = "e2e/codex.rs"]
mod codex;
#[path = "e2e/commands.rs"]
mod commands;
#[cfg(unix)]
#[path = "e2e/effects.rs"]
mod effects;
#[cfg(unix)]
#[path = "e2e/effects_where.rs"]
mod effects_where;
#[cfg(unix)]
#[path = "e2e/files.rs"]
mod files;
#[path = "e2e/gemini.rs"]
mod gemini;
#[path = "e2e/handoff.rs"]
mod handoff;
#[path = "e2e/hooks.rs"]
mod hooks;
#[path = "e2e/install.rs"]
mod install;
#[path = "e2e/marketplace.rs"]
mod marketplace;
#[path = "e2e/mcp.rs"]
mod mcp;
#[path = "e2e/run.rs"]
mod run;
#[path = "e2e/session.rs"]
mod session;
#[path = "e2e/subagents.rs"]
mod subagents;
#[path = "e2e/support.rs"]
mod support;
#[path = "e2e/tools.rs"]
mod tools;
#[cfg(unix)]
#[path = "e2e/watch.rs"]
mod watch;
#[path = "e2e/workflow_runs.rs"]
mod workflow_runs;
#[cfg(unix)]
#[path = "e2e/writers.rs"]
mod writers;
#[cfg(unix)]
#[path = "e2e/writers_clients.rs"]
mod writers_clients;

use std::fs;

use checkpoint_e2e::{ClaudeEnv, MockApi, MockConfig, RequestKind, Turn};
use serde_json::json;

#[test]
fn print_mode_prints_the_mock_answer() {
    let mock = MockApi::start(vec![Turn::text("HELLO-FROM-MOCK")]);
    let env = ClaudeEnv::new(&mock);

    let output = env.run(&["-p", "hello"], &[]);

    assert_eq!(output.code(), Some(0), "{output}");
    assert!(output.stdout.contains("HELLO-FROM-MOCK"), "{output}");
    let main = mock.main_requests();
    assert_eq!(main.len(), 1, "{:#?}", mock.requests());
    assert!(mock.request_text(0).contains("hello"));
    let request = &main[0];
    assert_eq!(request.header("x-api-key"), Some("sk-dummy"));
    assert_eq!(request.body["stream"], true);
    // The prompt is the last text block of the first user message (facts §0).
    let first_user = &request.messages()[0]["content"];
    let blocks = first_user
        .as_array()
        .expect("the first user message is a list of blocks");
    assert_eq!(blocks.last().unwrap()["text"], "hello", "{first_user:#}");
    // The client never saw an exhausted script or an unknown route.
    assert_eq!(mock.remaining_turns(), 0);
    assert!(
        mock.requests()
            .iter()
            .all(|request| request.path != "/v1/unknown")
    );
}

#[test]
fn bash_tool_use_runs_in_the_project_and_returns_its_result() {
    let mock = MockApi::start(vec![
        Turn::tool_use("Bash", json!({ "command": "echo tool-ran > out.txt" })),
        Turn::text("DONE"),
    ]);
    let env = ClaudeEnv::new(&mock);

    let output = env.run(&["-p", "run the tool", "--allowedTools", "Bash"], &[]);

    assert_eq!(output.code(), Some(0), "{output}");
    assert!(output.stdout.contains("DONE"), "{output}");
    let out_txt = fs::read_to_string(env.project_dir().join("out.txt")).unwrap();
    assert_eq!(out_txt, "tool-ran\n");
    let main = mock.main_requests();
    assert_eq!(main.len(), 2);
    let results = main[1].tool_results();
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(results[0]["tool_use_id"], "toolu_mock_0001");
    assert_eq!(results[0]["is_error"], false, "{:#}", results[0]);
}

#[test]
fn rate_limit_error_without_retries_exits_1() {
    let mock = MockApi::start(vec![Turn::Error {
        status: 429,
        error_type: "rate_limit_error".to_owned(),
        message: "mock rate_limit_error".to_owned(),
        retry_after: Some(0),
    }]);
    let env = ClaudeEnv::new(&mock);

    let output = env.run(&["-p", "hello"], &[("CLAUDE_CODE_MAX_RETRIES", "0")]);

    assert_eq!(output.code(), Some(1), "{output}");
    assert!(output.stdout.contains("API Error"), "{output}");
    assert!(output.stdout.contains("429"), "{output}");
    assert!(output.stdout.contains("mock rate_limit_error"), "{output}");
    assert_eq!(mock.main_requests().len(), 1);

    // The JSON result reports the status, but its subtype still says `success`.
    mock.push_turns([Turn::error(
        429,
        "rate_limit_error",
        "mock rate_limit_error",
    )]);
    let output = env.run(
        &["-p", "hello", "--output-format", "json"],
        &[("CLAUDE_CODE_MAX_RETRIES", "0")],
    );
    assert_eq!(output.code(), Some(1), "{output}");
    let result = output.json_result();
    assert!(result.is_error, "{output}");
    assert_eq!(result.api_error_status, Some(429));
    assert_eq!(result.subtype.as_deref(), Some("success"));
}

#[test]
fn resume_sends_the_previous_conversation() {
    let mock = MockApi::start(vec![
        Turn::text("FIRST-ANSWER"),
        Turn::text("SECOND-ANSWER"),
    ]);
    let env = ClaudeEnv::new(&mock);

    let first = env.run(&["-p", "FIRST-PROMPT", "--output-format", "json"], &[]);
    assert_eq!(first.code(), Some(0), "{first}");
    let result = first.json_result();
    assert!(!result.is_error, "{first}");
    assert_eq!(result.result.as_deref(), Some("FIRST-ANSWER"));
    let session_id = result.session_id;
    assert_eq!(env.session_ids(), std::slice::from_ref(&session_id));
    assert!(env.transcript_text(&session_id).contains("FIRST-PROMPT"));

    let second = env.run(&["-p", "--resume", &session_id, "SECOND-PROMPT"], &[]);

    assert_eq!(second.code(), Some(0), "{second}");
    assert!(second.stdout.contains("SECOND-ANSWER"), "{second}");
    let main = mock.main_requests();
    assert_eq!(main.len(), 2);
    let resumed = mock.request_text(1);
    for expected in ["FIRST-PROMPT", "FIRST-ANSWER", "SECOND-PROMPT"] {
        assert!(
            resumed.contains(expected),
            "{expected} missing from the resumed request"
        );
    }
    // Both runs belong to the same session, as the facts say (§d "Resume").
    for request in &main {
        assert_eq!(
            request.header("x-claude-code-session-id"),
            Some(session_id.as_str())
        );
    }
    assert_eq!(env.session_ids(), [session_id]);
    assert!(mock.requests_of_kind(RequestKind::Side).is_empty());
}

#[test]
fn compaction_request_gets_the_configured_summary_without_consuming_the_script() {
    let config = MockConfig {
        summary: "<summary>CUSTOM-SUMMARY-MARKER</summary>".to_owned(),
        ..MockConfig::default()
    };
    let mock = MockApi::start_with(vec![Turn::text("A1"), Turn::text("A2")], config);
    let env = ClaudeEnv::new(&mock);
    let session_id = env
        .run(&["-p", "first", "--output-format", "json"], &[])
        .json_result()
        .session_id;
    // One exchange is too little: the client answers `Not enough messages to compact.`.
    let second = env.run(&["-p", "--resume", &session_id, "second"], &[]);
    assert_eq!(second.stdout.trim(), "A2", "{second}");

    let compact = env.run(&["-p", "--resume", &session_id, "/compact"], &[]);

    assert_eq!(compact.code(), Some(0), "{compact}");
    assert_eq!(
        mock.requests_of_kind(RequestKind::Summary).len(),
        1,
        "{compact}"
    );
    assert_eq!(mock.main_requests().len(), 2);
    mock.push_turns([Turn::text("AFTER-COMPACT")]);
    let after = env.run(&["-p", "--resume", &session_id, "third"], &[]);
    assert_eq!(after.stdout.trim(), "AFTER-COMPACT", "{after}");
    assert!(mock.request_text(2).contains("CUSTOM-SUMMARY-MARKER"));
}
