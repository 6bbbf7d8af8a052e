//! `checkpoint hook <event>`: payload handling, state written, and the never-fail contract.

use serde_json::{Value, json};

use crate::support::{
    TestEnv, exits_by_itself, git, hook_payload, hook_with_open_stdin, session_start_context,
};

fn payload(env: &TestEnv, event: &str, extra: Value) -> String {
    let mut fields = json!({"trigger": "manual", "tool_name": "Bash", "error": "unknown"});
    fields
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    hook_payload(env, event, fields)
}

fn interrupted(env: &TestEnv) {
    env.ok(&[
        "init",
        "payments",
        "--phase",
        "design",
        "--phase",
        "build:design",
    ]);
    env.ok(&["start", "design"]);
    env.ok(&["progress", "design", "API sketched, data model next"]);
}

#[test]
fn session_start_injects_the_resume_prompt() {
    let env = TestEnv::new();
    interrupted(&env);
    let (code, stdout, stderr) = env
        .hook(
            "SessionStart",
            &payload(&env, "SessionStart", json!({"source": "startup"})),
        )
        .wait();
    assert_eq!(code, 0, "{stderr}");
    let out: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let context = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("workflow `payments`"), "{context}");
    assert!(
        context.contains("API sketched, data model next"),
        "{context}"
    );
    assert!(context.contains("**Next:**"), "{context}");
    assert_eq!(
        env.state("payments")["phases"][0]["status"],
        "in_progress",
        "SessionStart writes nothing"
    );
}

#[test]
fn a_live_phase_is_not_an_interrupted_one() {
    let env = TestEnv::new();
    // Started and given a progress note from the terminal a moment ago; no session yet.
    interrupted(&env);
    let context = session_start_context(&env);
    assert!(!context.contains("back to pending"), "{context}");
    assert!(
        context.contains("phase `design` is in progress and was active recently"),
        "{context}"
    );
    let plan = env.json(&["resume"]);
    assert_eq!(plan["plan"]["next"]["action"], "continue");
    assert_eq!(plan["plan"]["recoveries"], json!([]));
    assert_eq!(env.state("payments")["phases"][0]["attempts"], 1);

    // Sessions opened and closed without working on it do not use up its attempts.
    env.set_now("2026-03-01T14:00:00Z");
    let context = session_start_context(&env);
    assert!(!context.contains("back to pending"), "{context}");
    env.ok(&["resume"]);
    let state = env.state("payments");
    assert_eq!(state["phases"][0]["status"], "in_progress");
    assert_eq!(state["phases"][0]["attempts"], 1);

    // A session that worked on it and is gone: that is an interruption.
    let stop = payload(&env, "Stop", json!({"stop_hook_active": false}));
    assert_eq!(env.hook("Stop", &stop).wait().0, 0);
    env.set_now("2026-03-01T14:05:00Z");
    let context = session_start_context(&env);
    assert!(
        context.contains("make sure no other session is still running it"),
        "a heartbeat five minutes ago is recent: {context}"
    );
    env.set_now("2026-03-01T16:00:00Z");
    let context = session_start_context(&env);
    assert!(
        context.contains(
            "phase `design` was in progress when the session stopped: back to pending for attempt 2"
        ),
        "{context}"
    );
    env.ok(&["resume"]);
    env.ok(&["start", "design"]);
    assert_eq!(env.state("payments")["phases"][0]["attempts"], 2);
}

#[test]
fn session_start_without_a_workflow_prints_nothing() {
    let env = TestEnv::new();
    let (code, stdout, stderr) = env
        .hook(
            "SessionStart",
            &payload(&env, "SessionStart", json!({"source": "startup"})),
        )
        .wait();
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (0, "", ""));
    assert!(
        !env.project().join(".claude").exists(),
        "no directory is created"
    );
    env.ok(&["init", "done", "--phase", "a"]);
    env.ok(&["complete", "a"]);
    let (_, stdout, _) = env
        .hook(
            "SessionStart",
            &payload(&env, "SessionStart", json!({"source": "resume"})),
        )
        .wait();
    assert_eq!(stdout, "", "a finished workflow is not re-injected");
}

#[test]
fn write_of_the_last_declared_output_completes_the_phase() {
    let env = TestEnv::new();
    std::fs::write(env.project().join("plan.json"), r#"{"phases": [{"id": "design", "outputs": ["docs/design.md", "docs/api.md"]}, {"id": "build", "dependencies": ["design"]}]}"#).unwrap();
    env.ok(&["init", "w", "--plan", "plan.json"]);
    env.ok(&["start", "design"]);
    std::fs::create_dir_all(env.project().join("docs")).unwrap();
    std::fs::write(env.project().join("docs/design.md"), "# Design").unwrap();
    let write = |path: &str| {
        payload(
            &env,
            "PostToolUse",
            json!({"tool_name": "Write", "tool_input": {"file_path": env.project().join(path), "content": "x"}, "tool_response": {"type": "create"}}),
        )
    };
    assert_eq!(
        env.hook("PostToolUse", &write("docs/design.md")).wait().0,
        0
    );
    let state = env.state("w");
    assert_eq!(
        state["phases"][0]["status"], "in_progress",
        "one output is still missing"
    );
    assert_eq!(state["context"]["file_paths"], json!(["docs/design.md"]));
    std::fs::write(env.project().join("docs/api.md"), "# API").unwrap();
    assert_eq!(env.hook("PostToolUse", &write("docs/api.md")).wait().0, 0);
    let state = env.state("w");
    assert_eq!(state["phases"][0]["status"], "complete");
    assert_eq!(state["phases"][0]["artifacts"].as_array().unwrap().len(), 2);
}

#[test]
fn git_commit_records_the_sha() {
    let env = TestEnv::bare();
    git(&env.project(), &["init", "-q"]);
    interrupted(&env);
    std::fs::write(env.project().join("a.txt"), "a").unwrap();
    git(&env.project(), &["add", "a.txt"]);
    git(&env.project(), &["commit", "-qm", "work"]);
    let head = git(&env.project(), &["rev-parse", "HEAD"])
        .trim()
        .to_owned();
    let bash = payload(
        &env,
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "git add a.txt && git commit -qm work"}, "tool_response": {"stdout": "", "stderr": "", "interrupted": false}}),
    );
    assert_eq!(env.hook("PostToolUse", &bash).wait().0, 0);
    assert_eq!(
        env.state("payments")["phases"][0]["commit_sha"],
        head.as_str()
    );
    let other = payload(
        &env,
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {}}),
    );
    let before = env.read("payments", "journal.jsonl");
    env.hook("PostToolUse", &other).wait();
    assert_eq!(
        env.read("payments", "journal.jsonl"),
        before,
        "an unrelated command writes nothing"
    );
}

#[test]
fn tool_failure_is_noted_on_the_phase() {
    let env = TestEnv::new();
    interrupted(&env);
    let failure = payload(
        &env,
        "PostToolUseFailure",
        json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "error": "Exit code 101", "is_interrupt": false}),
    );
    assert_eq!(env.hook("PostToolUseFailure", &failure).wait().0, 0);
    let state = env.state("payments");
    assert_eq!(state["phases"][0]["error"], "Bash: Exit code 101");
    assert_eq!(
        state["phases"][0]["status"], "in_progress",
        "a failed command does not fail the phase"
    );
}

/// A failed tool's error text is redacted before it is cut to 500 characters: a token across
/// the cut leaves nothing of itself in the state or the journal.
#[test]
fn a_tool_error_is_redacted_before_it_is_cut() {
    let token = "ghp_1234567890abcdefghijABCDEFGHIJ123456";
    for before in [470, 479, 490, 499] {
        let env = TestEnv::new();
        interrupted(&env);
        let error = format!("{} {token} tail", "é".repeat(before));
        let failure = payload(
            &env,
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_input": {"command": "x"}, "error": error, "is_interrupt": false}),
        );
        assert_eq!(env.hook("PostToolUseFailure", &failure).wait().0, 0);
        let stored = env.state("payments")["phases"][0]["error"].to_string();
        let journal = env.read("payments", "journal.jsonl");
        for text in [&stored, &journal] {
            assert!(!text.contains("ghp_"), "{before}: {text}");
            assert!(!text.contains("1234567890"), "{before}: {text}");
        }
        assert!(stored.contains("é"), "{stored}");
    }
}

#[test]
fn stop_records_a_heartbeat_and_strict_stop_blocks() {
    let env = TestEnv::new();
    interrupted(&env);
    let stop = payload(
        &env,
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "done"}),
    );
    let (code, stdout, _) = env.hook("Stop", &stop).wait();
    assert_eq!(
        (code, stdout.as_str()),
        (0, ""),
        "Stop never emits context unless it blocks"
    );
    let state = env.state("payments");
    assert_eq!(state["last_activity"]["source"], "Stop");
    assert_eq!(
        state["last_activity"]["session_id"],
        "11111111-2222-3333-4444-555555555555"
    );

    std::fs::write(
        env.store().join("config.toml"),
        "strict_stop = true\nprogress_fresh_minutes = 20\n",
    )
    .unwrap();
    env.set_now("2026-03-01T13:00:00Z");
    let (code, stdout, _) = env.hook("Stop", &stop).wait();
    assert_eq!(code, 0);
    let out: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["decision"], "block");
    assert!(
        out["reason"]
            .as_str()
            .unwrap()
            .contains("checkpoint progress design"),
        "{out}"
    );
    let again = payload(&env, "Stop", json!({"stop_hook_active": true}));
    assert_eq!(
        env.hook("Stop", &again).wait().1,
        "",
        "a stop is blocked at most once in a row"
    );
    env.ok(&["progress", "design", "fresh note"]);
    assert_eq!(
        env.hook("Stop", &stop).wait().1,
        "",
        "a recent progress note lets the session stop"
    );
}

#[test]
fn stop_failure_pauses_and_compaction_is_journaled() {
    let env = TestEnv::new();
    interrupted(&env);
    let failure = payload(
        &env,
        "StopFailure",
        json!({"error": "rate_limit", "last_assistant_message": "API Error: Request rejected (429)"}),
    );
    assert_eq!(env.hook("StopFailure", &failure).wait().0, 0);
    let state = env.state("payments");
    assert_eq!(state["status"], "paused");
    assert_eq!(state["pause"]["reason"], "API error: rate_limit");
    let plan = env.json(&["resume", "--dry-run"]);
    assert_eq!(
        plan["plan"]["recoveries"][0]["description"],
        "the workflow was paused (API error: rate_limit); resuming lifts the pause"
    );
    // The session that hit the rate limit worked on the phase a moment ago: it is live, so it
    // goes on without spending an attempt.
    assert_eq!(plan["plan"]["next"]["action"], "continue");
    assert_eq!(plan["plan"]["next"]["phase"], "design");
    let compact = payload(
        &env,
        "PreCompact",
        json!({"trigger": "manual", "custom_instructions": null}),
    );
    assert_eq!(env.hook("PreCompact", &compact).wait().0, 0);
    let last: Value = serde_json::from_str(
        env.read("payments", "journal.jsonl")
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["transition"]["op"], "compaction");
    assert_eq!(last["transition"]["trigger"], "manual");
    env.ok(&["progress", "design", "back at it"]);
    assert_eq!(
        env.state("payments")["status"],
        "in_progress",
        "doing work lifts the pause"
    );
}

/// The ops journaled after the first `skip` entries.
fn ops_after(env: &TestEnv, id: &str, skip: usize) -> Vec<String> {
    env.read(id, "journal.jsonl")
        .lines()
        .skip(skip)
        .map(|line| {
            let entry: Value = serde_json::from_str(line).unwrap();
            entry["transition"]["op"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// Work a hook observes on a paused workflow journals the same `Unpause` as a command's work:
/// a completion from a written output, and a sub-agent's dispatch that starts its phase; what
/// is no work (a heartbeat, a file that completes nothing) leaves the pause.
#[test]
fn work_a_hook_observes_lifts_a_pause_as_a_command_does() {
    let env = TestEnv::new();
    std::fs::write(
        env.project().join("plan.json"),
        r#"{"phases": [{"id": "design", "outputs": ["design.md"]}, {"id": "build"}, {"id": "ship"}]}"#,
    )
    .unwrap();
    env.ok(&["init", "w", "--plan", "plan.json"]);
    env.ok(&["start", "design"]);
    let pause = |reason: &str| env.ok(&["pause", "--reason", reason]);
    let journaled = || env.read("w", "journal.jsonl").lines().count();
    let write = |path: &str| {
        std::fs::write(env.project().join(path), "x").unwrap();
        payload(
            &env,
            "PostToolUse",
            json!({"tool_name": "Write", "tool_input": {"file_path": env.project().join(path), "content": "x"}, "tool_response": {"type": "create"}}),
        )
    };

    pause("lunch");
    let before = journaled();
    assert_eq!(
        env.hook("Stop", &payload(&env, "Stop", json!({}))).wait().0,
        0
    );
    assert_eq!(env.hook("PostToolUse", &write("notes.md")).wait().0, 0);
    assert_eq!(ops_after(&env, "w", before), ["heartbeat", "file_path"]);
    assert_eq!(env.state("w")["status"], "paused", "no work, no unpause");

    let before = journaled();
    assert_eq!(env.hook("PostToolUse", &write("design.md")).wait().0, 0);
    assert_eq!(
        ops_after(&env, "w", before),
        ["file_path", "unpause", "phase_complete"]
    );
    assert_eq!(env.state("w")["pause"], Value::Null);

    pause("again");
    let before = journaled();
    let dispatch = payload(
        &env,
        "PreToolUse",
        json!({"tool_name": "Agent", "tool_use_id": "call-1", "tool_input": {"description": "Build", "prompt": "Do it.\ncheckpoint phase: build\n"}}),
    );
    assert_eq!(env.hook("PreToolUse", &dispatch).wait().0, 0);
    assert_eq!(
        ops_after(&env, "w", before),
        ["unpause", "phase_start", "holder_dispatch"]
    );

    pause("once more");
    let before = journaled();
    env.ok(&["start", "ship"]);
    assert_eq!(
        ops_after(&env, "w", before),
        ["unpause", "phase_start"],
        "the command journals the same"
    );
}

#[test]
fn bad_payloads_never_fail_the_session_and_change_nothing() {
    let env = TestEnv::new();
    interrupted(&env);
    let before = env.read("payments", "journal.jsonl");
    let wrong_types = payload(&env, "Stop", json!({"session_id": 7, "cwd": 7}));
    for event in [
        "SessionStart",
        "PreCompact",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SubagentStop",
        "StopFailure",
        "SessionEnd",
        "NoSuchEvent",
    ] {
        let other_event = payload(
            &env,
            if event == "Stop" {
                "PreCompact"
            } else {
                "Stop"
            },
            json!({}),
        );
        let missing = json!({"hook_event_name": event, "cwd": env.project()}).to_string();
        for input in [
            "",
            "not json",
            "[1, 2]",
            "{}",
            "{\"cwd\": 42}",
            &wrong_types,
            &other_event,
            &missing,
        ] {
            let (code, stdout, stderr) = env.hook(event, input).wait();
            assert_eq!(code, 0, "{event} with {input:?}: {stderr}");
            assert_eq!(stdout, "", "{event} with {input:?}");
            if event != "SessionEnd" {
                assert!(
                    stderr.starts_with("warning: checkpoint hook"),
                    "{event} with {input:?}: {stderr}"
                );
            }
        }
    }
    assert_eq!(
        env.read("payments", "journal.jsonl"),
        before,
        "nothing was recorded"
    );
}

#[test]
fn a_locked_workflow_makes_the_hook_warn_not_fail() {
    let env = TestEnv::new();
    interrupted(&env);
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(env.workflow_dir("payments").join("lock"))
        .unwrap();
    lock.lock().unwrap();
    let start = std::time::Instant::now();
    let (code, _, stderr) = env.hook("Stop", &payload(&env, "Stop", json!({}))).wait();
    assert_eq!(code, 0);
    assert!(stderr.contains("timed out after"), "{stderr}");
    assert!(
        start.elapsed() < std::time::Duration::from_secs(5),
        "within the hook's timeout"
    );
}

#[test]
fn session_start_explains_an_unreadable_workflow() {
    let env = TestEnv::new();
    interrupted(&env);
    let mut state = env.state("payments");
    state["schema_version"] = 99.into();
    std::fs::write(
        env.workflow_dir("payments").join("state.json"),
        state.to_string(),
    )
    .unwrap();
    let (code, stdout, _) = env
        .hook(
            "SessionStart",
            &payload(&env, "SessionStart", json!({"source": "startup"})),
        )
        .wait();
    assert_eq!(code, 0);
    let out: Value = serde_json::from_str(&stdout).unwrap();
    let context = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("cannot be read"), "{context}");
    assert!(context.contains("schema version 99"), "{context}");
    let resume = env.snapshot(&["resume", "--no-fail", "--format", "prompt"]);
    assert!(resume.starts_with("exit status: 0"), "{resume}");
    assert!(
        resume.contains("schema version 99") && !resume.contains("nothing to resume"),
        "{resume}"
    );
}

#[test]
fn session_start_brings_back_another_systems_unfinished_workflow() {
    let env = TestEnv::new();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/seeds/orchestkit/mid-run/.claude/pipeline-state.json");
    std::fs::create_dir_all(env.project().join(".claude")).unwrap();
    std::fs::copy(&fixture, env.project().join(".claude/pipeline-state.json")).unwrap();
    let before = std::fs::read(env.project().join(".claude/pipeline-state.json")).unwrap();
    let (code, stdout, stderr) = env
        .hook(
            "SessionStart",
            &payload(&env, "SessionStart", json!({"source": "startup"})),
        )
        .wait();
    assert_eq!(code, 0, "{stderr}");
    let out: Value = serde_json::from_str(&stdout).unwrap();
    let context = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("orchestkit's state file `.claude/pipeline-state.json`"),
        "{context}"
    );
    assert!(
        context.contains("checkpoint import .claude/pipeline-state.json"),
        "{context}"
    );
    assert!(context.contains("write-source"), "{context}");
    assert_eq!(
        std::fs::read(env.project().join(".claude/pipeline-state.json")).unwrap(),
        before,
        "read only"
    );
    assert!(!env.store().exists(), "nothing is created");
}

#[test]
fn hooks_act_on_a_complete_payload_while_stdin_stays_open() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&["start", "a"]);
    let payload = serde_json::json!({
        "session_id": "open-stdin", "transcript_path": "/t", "cwd": env.project(),
        "hook_event_name": "Stop", "stop_hook_active": false,
    });
    let (mut child, stdin) = hook_with_open_stdin(&env, "Stop", payload.to_string().as_bytes());
    let status = exits_by_itself(&mut child, std::time::Duration::from_secs(30));
    drop(stdin);
    assert_eq!(
        status.and_then(|status| status.code()),
        Some(0),
        "the hook waited for EOF"
    );
    let state = env.state("w");
    assert_eq!(state["last_activity"]["source"], "Stop");
    assert_eq!(state["last_activity"]["session_id"], "open-stdin");

    // An incomplete payload is given up at the deadline, with a warning and exit code 0.
    let (mut child, stdin) = hook_with_open_stdin(&env, "Stop", br#"{"session_id": "cut"#);
    let status = exits_by_itself(&mut child, std::time::Duration::from_secs(30));
    drop(stdin);
    assert_eq!(
        status.and_then(|status| status.code()),
        Some(0),
        "the hook hung"
    );
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no complete JSON payload"), "{stderr}");
    assert_eq!(env.state("w")["last_activity"]["session_id"], "open-stdin");
}

/// A payload over the 16 MiB limit (an effect with a 20 MB output) is not dropped: the call is
/// recorded with its output cut, and the hook says so.
#[test]
fn a_payload_over_the_limit_keeps_the_call_and_warns() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&["start", "a"]);
    let payload = serde_json::json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": env.project(),
        "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "git push origin main"},
        "tool_response": {"stdout": "x".repeat(20 * 1024 * 1024), "stderr": "", "interrupted": false},
    });
    let (code, _, stderr) = env.hook("PostToolUse", &payload.to_string()).wait();
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("were cut"), "{stderr}");
    let journal = env.read("w", "journal.jsonl");
    assert!(
        journal.contains("git push origin main"),
        "the call is recorded"
    );
    assert!(journal.len() < 1024 * 1024, "without its whole output");
}
