//! An outcome nobody saw, tied to the end of the call's turn: an intent journaled at
//! `PreToolUse` is in flight (running: a second identical call is refused as one running now,
//! the same call asked about again is not) until its outcome comes or its call can no longer
//! report (its turn ended: `Stop`, `SubagentStop`, `StopFailure`; a later session started; the
//! configured age); only then is it unknown ("may have happened"). On each client.

use serde_json::{Value, json};

use crate::support::{TestEnv, hook_payload};

const PUSH: &str = "git push origin release";

/// Workflow `w` with phase `deploy` in progress.
fn deploying(env: &TestEnv) {
    env.ok(&["init", "w", "--phase", "deploy"]);
    env.ok(&["start", "deploy"]);
}

/// A Claude Code Bash call's payload: `id` is its `tool_use_id`, `agent` the sub-agent that
/// made it, `session` its session (the default one when none).
fn call(env: &TestEnv, event: &str, command: &str, id: &str, agent: Option<&str>) -> Value {
    let mut extra = json!({
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": id,
    });
    if let Some(agent) = agent {
        extra["agent_id"] = json!(agent);
    }
    if event == "PostToolUse" {
        extra["tool_response"] = json!({"stdout": "pushed", "stderr": "", "interrupted": false});
    }
    serde_json::from_str(&hook_payload(env, event, extra)).unwrap()
}

/// The guard's answer to a headless `PreToolUse`: its reason when it refused.
fn guard(env: &TestEnv, payload: &Value) -> Option<String> {
    let (code, out, err) = env
        .hook_with_env(
            "PreToolUse",
            &payload.to_string(),
            &[("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")],
        )
        .wait();
    assert_eq!(code, 0, "{err}");
    if out.trim().is_empty() {
        return None;
    }
    let answer: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    Some(
        answer["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_owned(),
    )
}

/// Runs Claude Code's hook `event` with `payload`; it must succeed quietly.
fn hook(env: &TestEnv, event: &str, payload: &Value) {
    let (code, _, err) = env.hook(event, &payload.to_string()).wait();
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
}

/// The `effects --all` rows as JSON.
fn rows(env: &TestEnv) -> Vec<Value> {
    env.json(&["effects", "--all"])["effects"]
        .as_array()
        .unwrap()
        .clone()
}

/// Effect `number`'s state: `running`, `unknown`, `done` or `failed`.
fn state(env: &TestEnv, number: usize) -> &'static str {
    let row = &rows(env)[number - 1];
    match (
        row["in_flight"] == true,
        row["unknown"] == true,
        row["ok"] == true,
    ) {
        (true, true, _) => "running",
        (false, true, _) => "unknown",
        (false, false, true) => "done",
        (false, false, false) => "failed",
        (true, false, _) => panic!("in flight and known: {row}"),
    }
}

/// How many intents the journal holds (closings excluded).
fn intents(env: &TestEnv) -> usize {
    env.read("w", "journal.jsonl")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|entry| {
            entry["transition"]["intent"] == true && entry["transition"]["settles"].is_null()
        })
        .count()
}

#[test]
fn a_call_still_running_is_in_flight_until_its_turn_ends_then_unknown() {
    let env = TestEnv::new();
    deploying(&env);
    // A long push is let through; its PostToolUse has not come.
    assert_eq!(
        guard(&env, &call(&env, "PreToolUse", PUSH, "toolu_a", None)),
        None
    );
    assert_eq!(state(&env, 1), "running");
    let listed = env.ok(&["effects"]);
    assert!(
        listed.contains("running: its outcome has not come yet"),
        "{listed}"
    );
    // The client asks again about the same call: not a repeat, and no second intent.
    assert_eq!(
        guard(&env, &call(&env, "PreToolUse", PUSH, "toolu_a", None)),
        None
    );
    assert_eq!(intents(&env), 1);
    // Another call of the same push meanwhile (a parallel call, or another session): refused
    // as one running now, not as one that may have happened.
    let reason = guard(&env, &call(&env, "PreToolUse", PUSH, "toolu_b", None)).unwrap();
    assert!(reason.contains("running now"), "{reason}");
    assert!(!reason.contains("cut off"), "{reason}");
    assert_eq!(intents(&env), 1);
    // Its outcome comes: done, and a repeat is refused as done.
    hook(
        &env,
        "PostToolUse",
        &call(&env, "PostToolUse", PUSH, "toolu_a", None),
    );
    assert_eq!(state(&env, 1), "done");
    let reason = guard(&env, &call(&env, "PreToolUse", PUSH, "toolu_c", None)).unwrap();
    assert!(reason.contains("already succeeded"), "{reason}");
    // A publish whose outcome never comes: the turn's end makes it unknown.
    let publish = "npm publish";
    assert_eq!(
        guard(&env, &call(&env, "PreToolUse", publish, "toolu_d", None)),
        None
    );
    assert_eq!(state(&env, 2), "running");
    hook(
        &env,
        "Stop",
        &serde_json::from_str(&hook_payload(
            &env,
            "Stop",
            json!({"stop_hook_active": false}),
        ))
        .unwrap(),
    );
    assert_eq!(state(&env, 2), "unknown");
    let listed = env.ok(&["effects"]);
    assert!(listed.contains("unknown: may have happened"), "{listed}");
    // The same call, retried in the next turn, is refused as one that may have happened.
    for id in ["toolu_d", "toolu_e"] {
        let reason = guard(&env, &call(&env, "PreToolUse", publish, id, None)).unwrap();
        assert!(reason.contains("cut off"), "{reason}");
        assert!(reason.contains("checkpoint effects resolve 2"), "{reason}");
    }
    // A person says it did not happen: the repeat runs.
    env.ok(&["effects", "resolve", "2", "--not-done"]);
    assert_eq!(
        guard(&env, &call(&env, "PreToolUse", publish, "toolu_f", None)),
        None
    );
    // A late outcome of a call taken as unknown still settles it.
    let late = "curl -X POST https://hooks.example.com/deploy";
    assert_eq!(
        guard(&env, &call(&env, "PreToolUse", late, "toolu_g", None)),
        None
    );
    let stop = hook_payload(&env, "Stop", json!({"stop_hook_active": false}));
    hook(&env, "Stop", &serde_json::from_str(&stop).unwrap());
    let number = rows(&env).len();
    assert_eq!(state(&env, number), "unknown");
    hook(
        &env,
        "PostToolUse",
        &call(&env, "PostToolUse", late, "toolu_g", None),
    );
    assert_eq!(state(&env, number), "done");
}

#[test]
fn a_sub_agents_call_outlives_the_leads_stop_until_the_sub_agent_stops() {
    let env = TestEnv::new();
    deploying(&env);
    let stop = |event: &str, agent: Option<&str>| {
        let mut extra = json!({"stop_hook_active": false});
        if let Some(agent) = agent {
            extra["agent_id"] = json!(agent);
            extra["agent_type"] = json!("general-purpose");
            extra["last_assistant_message"] = json!("done");
        }
        serde_json::from_str::<Value>(&hook_payload(&env, event, extra)).unwrap()
    };
    // A background sub-agent pushes; the lead's turn ends before the push reports.
    assert_eq!(
        guard(
            &env,
            &call(&env, "PreToolUse", PUSH, "toolu_s1", Some("ag1"))
        ),
        None
    );
    // And the lead's own call, cut off.
    let lead = "gh pr create --title T --body B";
    assert_eq!(
        guard(&env, &call(&env, "PreToolUse", lead, "toolu_l1", None)),
        None
    );
    hook(&env, "Stop", &stop("Stop", None));
    assert_eq!(
        state(&env, 1),
        "running",
        "the sub-agent's call can still report"
    );
    assert_eq!(state(&env, 2), "unknown");
    // Its PostToolUse arrives after the lead's Stop: it settles the intent, done.
    hook(
        &env,
        "PostToolUse",
        &call(&env, "PostToolUse", PUSH, "toolu_s1", Some("ag1")),
    );
    assert_eq!(state(&env, 1), "done");
    assert_eq!(rows(&env).len(), 2);
    // Another of its calls that never reports: unknown once that sub-agent stops, not when
    // another one does.
    let post = "curl -X POST https://hooks.example.com/a";
    assert_eq!(
        guard(
            &env,
            &call(&env, "PreToolUse", post, "toolu_s2", Some("ag1"))
        ),
        None
    );
    hook(&env, "SubagentStop", &stop("SubagentStop", Some("ag2")));
    assert_eq!(state(&env, 3), "running");
    hook(&env, "SubagentStop", &stop("SubagentStop", Some("ag1")));
    assert_eq!(state(&env, 3), "unknown");
    // A turn that fails on an API error ends the lead's calls too.
    let put = "curl -X PUT https://hooks.example.com/b";
    assert_eq!(
        guard(&env, &call(&env, "PreToolUse", put, "toolu_l2", None)),
        None
    );
    let failed = hook_payload(
        &env,
        "StopFailure",
        json!({"error": "rate_limit", "last_assistant_message": "API Error: 429"}),
    );
    let (code, _, err) = env.hook("StopFailure", &failed).wait();
    assert_eq!(code, 0, "{err}");
    assert_eq!(state(&env, 4), "unknown");
}

#[test]
fn a_later_session_or_the_age_ends_the_calls_of_earlier_ones() {
    let env = TestEnv::new();
    deploying(&env);
    let other = |event: &str, extra: Value| {
        let mut payload: Value = serde_json::from_str(&hook_payload(&env, event, extra)).unwrap();
        payload["session_id"] = json!("99999999-2222-3333-4444-555555555555");
        payload
    };
    // Session 1's lead and one of its sub-agents each leave a call in flight.
    assert_eq!(
        guard(&env, &call(&env, "PreToolUse", PUSH, "toolu_1", None)),
        None
    );
    let post = "curl -X POST https://hooks.example.com/a";
    assert_eq!(
        guard(
            &env,
            &call(&env, "PreToolUse", post, "toolu_2", Some("ag1"))
        ),
        None
    );
    // Session 1 is compacted: its lead's call is cut off, its sub-agent runs on.
    let compact = hook_payload(&env, "SessionStart", json!({"source": "compact"}));
    let (code, _, err) = env.hook("SessionStart", &compact).wait();
    assert_eq!(code, 0, "{err}");
    assert_eq!((state(&env, 1), state(&env, 2)), ("unknown", "running"));
    // A later session starts: every earlier call is taken as cut off, and it is told so.
    let start = other("SessionStart", json!({"source": "startup"}));
    let (code, out, err) = env.hook("SessionStart", &start.to_string()).wait();
    assert_eq!(code, 0, "{err}");
    assert_eq!(state(&env, 2), "unknown");
    assert!(out.contains("may have happened"), "{out}");
    // The age: a call with no end seen is unknown once older than `unknown_after_minutes`.
    std::fs::write(
        env.store().join("config.toml"),
        "[effects]\nunknown_after_minutes = 5\n",
    )
    .unwrap();
    let put = "curl -X PUT https://hooks.example.com/b";
    let mut pre = call(&env, "PreToolUse", put, "toolu_3", None);
    pre["session_id"] = json!("99999999-2222-3333-4444-555555555555");
    assert_eq!(guard(&env, &pre), None);
    assert_eq!(state(&env, 3), "running");
    pre["tool_use_id"] = json!("toolu_4");
    let reason = guard(&env, &pre).unwrap();
    assert!(reason.contains("running now"), "{reason}");
    env.set_now("2026-03-01T12:06:00Z");
    assert_eq!(state(&env, 3), "unknown");
    let reason = guard(&env, &pre).unwrap();
    assert!(reason.contains("cut off"), "{reason}");
}

#[test]
fn the_other_clients_turn_ends_make_their_calls_unknown() {
    let env = TestEnv::new();
    deploying(&env);
    let root = env.project();
    let payload = |event: &str, extra: Value| {
        let mut value = json!({"session_id": "s-1", "turn_id": "t", "cwd": root,
            "hook_event_name": event, "transcript_path": null, "stop_hook_active": false,
            "prompt": "p", "prompt_response": "done", "last_assistant_message": "done",
            "model": "m", "permission_mode": "bypassPermissions",
            "timestamp": "2026-11-25T15:51:19.850Z"});
        value
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        value.to_string()
    };
    let run = |client: &str, event: &str, payload: &str| {
        let (code, out, err) = env.client_hook(client, event, payload).wait();
        assert_eq!(code, 0, "{err}");
        out
    };
    // Codex CLI: PreToolUse lets the push through, Stop ends the turn with no outcome.
    let codex =
        json!({"tool_name": "Bash", "tool_input": {"command": PUSH}, "tool_use_id": "call_1"});
    assert_eq!(
        run("codex", "PreToolUse", &payload("PreToolUse", codex.clone())),
        ""
    );
    assert_eq!(state(&env, 1), "running");
    run("codex", "Stop", &payload("Stop", json!({})));
    assert_eq!(state(&env, 1), "unknown");
    let mut again = codex.clone();
    again["tool_use_id"] = json!("call_2");
    let out: Value =
        serde_json::from_str(&run("codex", "PreToolUse", &payload("PreToolUse", again))).unwrap();
    assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
    // Gemini CLI: BeforeTool lets a publish through, AfterAgent ends the turn.
    let gemini =
        json!({"tool_name": "run_shell_command", "tool_input": {"command": "npm publish"}});
    assert_eq!(
        run(
            "gemini",
            "BeforeTool",
            &payload("BeforeTool", gemini.clone())
        )
        .trim(),
        "{}"
    );
    assert_eq!(state(&env, 2), "running");
    run("gemini", "AfterAgent", &payload("AfterAgent", json!({})));
    assert_eq!(state(&env, 2), "unknown");
    let out: Value =
        serde_json::from_str(&run("gemini", "BeforeTool", &payload("BeforeTool", gemini))).unwrap();
    assert_eq!(out["decision"], "deny", "{out}");
    assert!(out["reason"].as_str().unwrap().contains("cut off"), "{out}");
}
