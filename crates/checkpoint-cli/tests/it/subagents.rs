//! Phases held by sub-agents, through the hooks as Claude Code runs them: the dispatch, the
//! sub-agent's start, end and failures, and what `status` and `resume` say of them.

use serde_json::{Value, json};

use crate::support::{TestEnv, finish_guarded};

const SESSION: &str = "11111111-2222-3333-4444-555555555555";

/// Workflow `par`: `a` (declares the output `a.md`) and `b`, independent, and `c` after both.
fn parallel(env: &TestEnv) {
    std::fs::write(
        env.project().join("plan.json"),
        r#"{"phases": [{"id": "a", "outputs": ["a.md"]}, {"id": "b"}, {"id": "c", "dependencies": ["a", "b"]}]}"#,
    )
    .unwrap();
    env.ok(&["init", "par", "--plan", "plan.json"]);
}

/// The transcript path of the session: its sub-agents' meta files live beside it.
fn transcript(env: &TestEnv) -> String {
    env.dir
        .path()
        .join(format!("home/projects/{SESSION}.jsonl"))
        .display()
        .to_string()
}

/// Runs hook `event` with a payload of the client's shape plus `extra`; returns (stdout,
/// stderr) after asserting the hook exited 0.
#[track_caller]
fn hook(env: &TestEnv, event: &str, extra: Value) -> (String, String) {
    let (code, stdout, stderr) = env.hook(event, &payload(env, event, extra)).wait();
    assert_eq!(code, 0, "{stderr}");
    (stdout, stderr)
}

/// A payload of the client's shape for hook `event`, plus `extra`.
fn payload(env: &TestEnv, event: &str, extra: Value) -> String {
    let mut payload = json!({
        "session_id": SESSION,
        "transcript_path": transcript(env),
        "cwd": env.project(),
        "hook_event_name": event,
    });
    payload
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    payload.to_string()
}

#[track_caller]
fn dispatch(env: &TestEnv, call: &str, phase: &str) -> (String, String) {
    hook(
        env,
        "PreToolUse",
        json!({
            "tool_name": "Agent",
            "tool_use_id": call,
            "tool_input": {
                "description": format!("Work on {phase}"),
                "prompt": format!("Do the work.\ncheckpoint phase: {phase}\n"),
                "subagent_type": "general-purpose",
            },
        }),
    )
}

/// Writes the meta file the client keeps for sub-agent `agent` of call `call`.
fn meta(env: &TestEnv, agent: &str, call: &str) {
    let dir = env
        .dir
        .path()
        .join(format!("home/projects/{SESSION}/subagents"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("agent-{agent}.meta.json")),
        json!({"agentType": "general-purpose", "toolUseId": call}).to_string(),
    )
    .unwrap();
}

/// Dispatches `a` and `b` at the current time, and starts their sub-agents `agenta` and
/// `agentb` at `started`.
fn two_held(env: &TestEnv, started: &str) {
    parallel(env);
    dispatch(env, "toolu_a", "a");
    dispatch(env, "toolu_b", "b");
    meta(env, "agenta", "toolu_a");
    meta(env, "agentb", "toolu_b");
    env.set_now(started);
    hook(env, "SubagentStart", json!({"agent_id": "agenta"}));
    hook(env, "SubagentStart", json!({"agent_id": "agentb"}));
}

fn phase(env: &TestEnv, id: &str) -> Value {
    let state = env.state("par");
    state["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|phase| phase["id"] == id)
        .unwrap()
        .clone()
}

#[test]
fn a_dispatched_sub_agent_holds_its_phase_until_it_ends() {
    let env = TestEnv::new();
    parallel(&env);
    let (stdout, stderr) = dispatch(&env, "toolu_a", "a");
    assert_eq!((stdout.as_str(), stderr.as_str()), ("", ""));
    env.set_now("2026-03-01T12:01:00Z");
    dispatch(&env, "toolu_b", "b");
    let a = phase(&env, "a");
    assert_eq!(a["status"], "in_progress");
    assert_eq!(
        a["holder"],
        json!({
            "tool_use_id": "toolu_a",
            "description": "Work on a",
            "session_id": SESSION,
            "started_at": "2026-03-01T12:00:00Z",
            "last_activity_at": "2026-03-01T12:00:00Z",
        })
    );
    assert_eq!(phase(&env, "b")["holder"]["tool_use_id"], "toolu_b");

    // The client's meta file names b's call for the first sub-agent to start; the second one is
    // then the only sub-agent running without an id.
    meta(&env, "agentb", "toolu_b");
    env.set_now("2026-03-01T12:02:00Z");
    hook(
        &env,
        "SubagentStart",
        json!({"agent_id": "agentb", "agent_type": "general-purpose"}),
    );
    hook(
        &env,
        "SubagentStart",
        json!({"agent_id": "agenta", "agent_type": "general-purpose"}),
    );
    assert_eq!(phase(&env, "a")["holder"]["agent_id"], "agenta");
    assert_eq!(phase(&env, "b")["holder"]["agent_id"], "agentb");

    // The sub-agent of `a` writes its output and stops: `a` completes.
    std::fs::write(env.project().join("a.md"), "# A\n").unwrap();
    env.set_now("2026-03-01T12:05:00Z");
    hook(
        &env,
        "SubagentStop",
        json!({"agent_id": "agenta", "last_assistant_message": "Wrote a.md.", "stop_hook_active": false}),
    );
    let a = phase(&env, "a");
    assert_eq!(a["status"], "complete");
    assert_eq!(a["holder"]["agent_id"], "agenta");
    assert_eq!(a["holder"]["ended_at"], "2026-03-01T12:05:00Z");

    // The sub-agent of `b` stops without finishing: its last message is the note.
    env.set_now("2026-03-01T12:06:00Z");
    hook(
        &env,
        "SubagentStop",
        json!({"agent_id": "agentb", "last_assistant_message": "Parsed the grammar; the emitter is next.", "stop_hook_active": false}),
    );
    let b = phase(&env, "b");
    assert_eq!(b["status"], "in_progress");
    assert_eq!(b["progress"], "Parsed the grammar; the emitter is next.");
    assert_eq!(b["holder"]["ended_at"], "2026-03-01T12:06:00Z");

    // The journal holds every step, in order.
    let ops: Vec<String> = env
        .read("par", "journal.jsonl")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .map(|entry| {
            entry["transition"]["op"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .filter(|op| op.starts_with("holder") || op.starts_with("phase"))
        .collect();
    assert_eq!(
        ops,
        [
            "phase_start",
            "holder_dispatch",
            "phase_start",
            "holder_dispatch",
            "holder_seen",
            "holder_seen",
            "phase_complete",
            "holder_end",
            "holder_end",
        ]
    );
}

#[test]
fn a_dispatch_that_cannot_start_its_phase_warns_and_the_session_goes_on() {
    let env = TestEnv::new();
    parallel(&env);
    let (stdout, stderr) = dispatch(&env, "toolu_c", "c");
    insta::assert_snapshot!(stderr, @"warning: checkpoint hook PreToolUse: phase `c` was not started for the sub-agent: phase `c` waits for `a`, `b` (finish those phases first, or start anyway with `--force`)");
    let out: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert!(
        out["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("phase `c` waits for `a`, `b`"),
        "{stdout}"
    );
    assert_eq!(phase(&env, "c")["status"], "pending");
    assert!(phase(&env, "c").get("holder").is_none());

    // `max_in_progress` bounds the dispatches as it bounds `checkpoint start`.
    std::fs::write(env.store().join("config.toml"), "max_in_progress = 1\n").unwrap();
    dispatch(&env, "toolu_a", "a");
    let (_, stderr) = dispatch(&env, "toolu_b", "b");
    assert!(
        stderr.contains("`max_in_progress` is 1, and `a` in progress"),
        "{stderr}"
    );
    assert_eq!(phase(&env, "b")["status"], "pending");

    // A prompt without the convention line is no dispatch of a phase.
    let (stdout, stderr) = hook(
        &env,
        "PreToolUse",
        json!({"tool_name": "Agent", "tool_use_id": "toolu_x", "tool_input": {"prompt": "Look around."}}),
    );
    assert_eq!((stdout.as_str(), stderr.as_str()), ("", ""));
}

#[test]
fn a_sub_agents_failure_marks_its_phase_and_not_the_workflow() {
    let env = TestEnv::new();
    two_held(&env, "2026-03-01T12:00:00Z");

    // A tool of b's sub-agent fails: recorded on b, not on the first phase in progress.
    hook(
        &env,
        "PostToolUseFailure",
        json!({"tool_name": "Bash", "agent_id": "agentb", "error": "exit 3", "tool_use_id": "toolu_9"}),
    );
    assert_eq!(phase(&env, "b")["error"], "Bash: exit 3");
    assert!(phase(&env, "a").get("error").is_none());

    // b's sub-agent hits its rate limit.
    hook(
        &env,
        "StopFailure",
        json!({"agent_id": "agentb", "error": "rate_limit", "last_assistant_message": "API Error: Request rejected (429)"}),
    );
    let state = env.state("par");
    assert!(state.get("pause").is_none(), "{state:#}");
    let b = phase(&env, "b");
    assert_eq!(b["status"], "in_progress");
    assert_eq!(b["failures"], 1);
    assert_eq!(b["error"], "sub-agent `agentb`: rate_limit");
    assert_eq!(b["holder"]["error"], "rate_limit");
    assert_eq!(phase(&env, "a")["holder"].get("error"), None);

    // The Agent call of a fails too (2.1.330 reports it): a is marked the same way.
    hook(
        &env,
        "PostToolUseFailure",
        json!({"tool_name": "Agent", "tool_use_id": "toolu_a", "error": "API Error: Request rejected (429)"}),
    );
    assert_eq!(phase(&env, "a")["failures"], 1);
    assert!(env.state("par").get("pause").is_none());

    // The main agent's own rate limit still pauses the whole workflow.
    hook(&env, "StopFailure", json!({"error": "rate_limit"}));
    assert_eq!(env.state("par")["pause"]["reason"], "API error: rate_limit");
}

#[test]
fn status_and_resume_show_who_holds_each_parallel_phase() {
    let env = TestEnv::new();
    two_held(&env, "2026-03-01T12:02:00Z");
    std::fs::write(env.project().join("a.md"), "# A\n").unwrap();
    env.set_now("2026-03-01T12:05:00Z");
    hook(
        &env,
        "SubagentStop",
        json!({"agent_id": "agenta", "last_assistant_message": "Wrote a.md.", "stop_hook_active": false}),
    );
    // b's sub-agent records its progress through the CLI, then its session is killed.
    env.set_now("2026-03-01T12:07:00Z");
    env.ok(&["progress", "b", "lexer done, parser next"]);

    env.set_now("2026-03-01T12:10:00Z");
    insta::assert_snapshot!(env.ok(&["status"]), @r"
    par  in progress
    1 of 3 phases done · updated 3 minutes ago

    ✓ a  done  5 minutes ago
    → b  in progress
         progress: lexer done, parser next
         held by sub-agent `agentb` (Work on b), dispatched 10 minutes ago, last active 3 minutes ago
    · c  blocked by b
    ");
    let status = env.json(&["status"]);
    let b = &status["phases"][1];
    assert_eq!(b["id"], "b");
    assert_eq!(b["holder"]["agent_id"], "agentb");
    assert_eq!(b["holder"]["last_activity_at"], "2026-03-01T12:07:00Z");
    assert!(
        status["phases"][0].get("holder").is_none(),
        "a is done: {status:#}"
    );

    // The next session, two hours later: `a` is done by its sub-agent, `b` was lost mid-flight,
    // and only `b` is dispatched again, with its note.
    env.set_now("2026-03-01T14:10:00Z");
    let plan = env.json(&["resume", "--dry-run"]);
    let plan = &plan["plan"];
    assert_eq!(plan["next"]["action"], "dispatch", "{plan:#}");
    assert_eq!(plan["next"]["phase"], "b");
    assert_eq!(plan["next"].get("parallel"), None);
    let view = &plan["sub_agents"];
    assert_eq!(view["done"][0]["phase"], "a");
    assert_eq!(view["done"][0]["holder"]["agent_id"], "agenta");
    assert_eq!(view["interrupted"][0]["phase"], "b");
    assert_eq!(view["interrupted"][0]["note"], "lexer done, parser next");
    assert_eq!(view["interrupted"][0]["idle_minutes"], 123);
    assert_eq!(
        view["dispatch"],
        json!([{"phase": "b", "line": "checkpoint phase: b", "note": "lexer done, parser next"}])
    );
    let prompt = env.ok(&["status", "--format", "prompt"]);
    assert!(
        prompt.contains("- done: `a` by sub-agent `agenta`: Work on a"),
        "{prompt}"
    );
    assert!(
        prompt.contains("- interrupted mid-flight: `b` held by sub-agent `agentb`: Work on b, last active 123 min ago — last note: lexer done, parser next"),
        "{prompt}"
    );
    assert!(
        prompt.contains("- `checkpoint phase: b` — continue from: lexer done, parser next"),
        "{prompt}"
    );
    assert!(!prompt.contains("`checkpoint phase: a`"), "{prompt}");
}

/// The context of a new session re-dispatches a sub-agent that never ended (its session is
/// gone), while a compacted session still runs its own and is told so.
#[test]
fn a_new_session_redispatches_a_sub_agent_that_never_ended_and_a_compacted_one_does_not() {
    let env = TestEnv::new();
    two_held(&env, "2026-03-01T12:01:00Z");
    env.set_now("2026-03-01T12:03:00Z");
    let context = |source: &str| {
        let (stdout, _) = hook(&env, "SessionStart", json!({"source": source}));
        let out: Value = serde_json::from_str(&stdout).unwrap();
        out["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let fresh = context("startup");
    assert!(
        fresh.contains("- interrupted mid-flight: `a` held by sub-agent `agenta`"),
        "{fresh}"
    );
    assert!(
        fresh.contains("- `checkpoint phase: a`\n- `checkpoint phase: b`"),
        "{fresh}"
    );
    let compacted = context("compact");
    assert!(
        compacted.contains("- at work: `a` by sub-agent `agenta`"),
        "{compacted}"
    );
    assert!(!compacted.contains("`checkpoint phase: a`"), "{compacted}");
    // Nothing was recorded: the holders still run as far as the state knows.
    assert!(phase(&env, "a")["holder"].get("ended_at").is_none());
}

/// A sub-agent's last message becomes its phase's note, redacted like any note, and cut to a
/// sane length.
#[test]
fn a_sub_agents_last_message_is_redacted_before_it_is_journaled() {
    let env = TestEnv::new();
    two_held(&env, "2026-03-01T12:01:00Z");
    let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH";
    let message = format!(
        "Set ANTHROPIC_API_KEY={key} and ran the tests. {}",
        "x".repeat(3000)
    );
    hook(
        &env,
        "SubagentStop",
        json!({"agent_id": "agentb", "last_assistant_message": message, "stop_hook_active": false}),
    );
    let note = phase(&env, "b")["progress"].as_str().unwrap().to_owned();
    assert!(
        note.starts_with("Set ANTHROPIC_API_KEY=[REDACTED"),
        "{note}"
    );
    assert!(note.chars().count() <= 1001, "{}", note.len());
    for file in ["state.json", "journal.jsonl"] {
        assert!(!env.read("par", file).contains(key), "{file}");
    }
}

/// 2.1.197 returns a sub-agent's API error as its `Agent` call's result: that is a failure of
/// its phase, not a progress note; an ordinary result ends the holder with its note.
#[test]
fn an_api_error_returned_as_the_agent_result_marks_its_phase() {
    let env = TestEnv::new();
    two_held(&env, "2026-03-01T12:01:00Z");
    let result = |call: &str, agent: &str, text: &str| {
        json!({
            "tool_name": "Agent",
            "tool_use_id": call,
            "tool_input": {"prompt": "checkpoint phase: x"},
            "tool_response": {"status": "completed", "agentId": agent, "content": [{"type": "text", "text": text}]},
        })
    };
    hook(
        &env,
        "PostToolUse",
        result(
            "toolu_a",
            "agenta",
            "API Error: Request rejected (429) · rate limited",
        ),
    );
    let a = phase(&env, "a");
    assert_eq!(a["failures"], 1);
    assert_eq!(
        a["holder"]["error"],
        "API Error: Request rejected (429) · rate limited"
    );
    assert!(a.get("progress").is_none(), "{a:#}");
    hook(
        &env,
        "PostToolUse",
        result("toolu_b", "agentb", "Half of b is done."),
    );
    let b = phase(&env, "b");
    assert_eq!(b["progress"], "Half of b is done.");
    assert!(b.get("failures").is_none(), "{b:#}");
    assert!(env.state("par").get("pause").is_none());
}

/// Runs hook `event` like [`hook`], but gives up (and kills it) if it has not exited after a
/// generous patience: a guard against a hang, not a timing goal. Returns (exit code, stderr),
/// `None` for a hook that hung.
fn hook_guarded(env: &TestEnv, event: &str, extra: Value) -> Option<(i32, String)> {
    use std::io::Write as _;
    let mut child = env.spawn_hook(event);
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(payload(env, event, extra).as_bytes());
    finish_guarded(child)
}

/// A FIFO, or a link to `/dev/zero`, where the client keeps a sub-agent's meta file never
/// blocks the hooks that read it: each exits 0 with a warning naming the file, and the
/// sub-agent is still known as the only one running.
#[test]
fn a_meta_file_that_is_not_a_regular_file_never_blocks_a_hook() {
    let dir_of = |env: &TestEnv| {
        let dir = env
            .dir
            .path()
            .join(format!("home/projects/{SESSION}/subagents"));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    };
    type Make = fn(&std::path::Path);
    let makers: [(&str, Make); 3] = [
        ("fifo", |path| {
            let status = std::process::Command::new("mkfifo")
                .arg(path)
                .status()
                .unwrap();
            assert!(status.success());
        }),
        ("link to /dev/zero", |path| {
            std::os::unix::fs::symlink("/dev/zero", path).unwrap();
        }),
        ("directory", |path| std::fs::create_dir(path).unwrap()),
    ];
    for (what, make) in makers {
        let env = TestEnv::new();
        parallel(&env);
        dispatch(&env, "toolu_a", "a");
        make(&dir_of(&env).join("agent-agenta.meta.json"));
        for (event, extra) in [
            ("SubagentStart", json!({"agent_id": "agenta"})),
            (
                "PostToolUse",
                json!({"agent_id": "agenta", "tool_name": "Write", "tool_input": {"file_path": "x.md"}, "tool_response": {}}),
            ),
            (
                "SubagentStop",
                json!({"agent_id": "agenta", "last_assistant_message": "Half done.", "stop_hook_active": false}),
            ),
        ] {
            let Some((code, stderr)) = hook_guarded(&env, event, extra) else {
                panic!("{what}: `{event}` hung on the meta file");
            };
            assert_eq!(code, 0, "{what}: {event}: {stderr}");
            assert!(
                stderr.contains("agent-agenta.meta.json") && stderr.contains("not a regular file"),
                "{what}: {event}: {stderr}"
            );
        }
        let a = phase(&env, "a");
        assert_eq!(a["holder"]["agent_id"], "agenta", "{what}: {a:#}");
        assert_eq!(a["progress"], "Half done.", "{what}: {a:#}");
    }
}

/// The holder's own `Write` of its phase's declared output completes the phase at its end, not
/// at the write: until then the phase's claim keeps the output from the other sub-agent, whose
/// write is refused naming the holder; a write of the output by the main agent (no sub-agent)
/// after the holder ended is no longer held.
#[test]
fn a_sub_agents_write_of_its_own_output_completes_its_phase_at_its_end_and_holds_it_till_then() {
    let env = TestEnv::new();
    two_held(&env, "2026-03-01T12:01:00Z");
    env.set_now("2026-03-01T12:02:00Z");
    let output = env.project().join("a.md");
    let write = |agent: Option<&str>, event: &str| {
        let mut extra = json!({
            "tool_name": "Write",
            "tool_input": {"file_path": output, "content": "# A\n"},
            "tool_response": {"type": "create", "filePath": output, "content": "# A\n"},
        });
        if let Some(agent) = agent {
            extra["agent_id"] = json!(agent);
        }
        hook(&env, event, extra)
    };
    write(Some("agenta"), "PreToolUse");
    std::fs::write(&output, "# A\n").unwrap();
    write(Some("agenta"), "PostToolUse");
    assert_eq!(phase(&env, "a")["status"], "in_progress");
    // The other sub-agent's write of it is refused, naming the holder and the phase.
    let (stdout, _) = write(Some("agentb"), "PreToolUse");
    assert!(
        stdout.contains("\"deny\"")
            && stdout.contains("is held by sub-agent agenta")
            && stdout.contains("for phase `a`"),
        "{stdout}"
    );
    env.set_now("2026-03-01T12:05:00Z");
    hook(
        &env,
        "SubagentStop",
        json!({"agent_id": "agenta", "last_assistant_message": "Wrote a.md.", "stop_hook_active": false}),
    );
    let a = phase(&env, "a");
    assert_eq!(a["status"], "complete");
    assert_eq!(a["completed_at"], "2026-03-01T12:05:00Z");
    // Its claim ended with it.
    let (stdout, _) = write(Some("agentb"), "PreToolUse");
    assert!(!stdout.contains("is held by"), "{stdout}");
}
