//! Effects through the hooks: a push recorded on its phase, a failed one that guards nothing,
//! the guard's refusal (denied headless, asked interactive) of an exact repeat only, an allowed
//! repeat let through once, MCP tools and plan patterns, redaction, and a store the hook cannot
//! read.

use serde_json::{Value, json};

use crate::support::{SECRET_SAMPLES, TestEnv, hook_payload, session_start_context};

const SESSION: &str = "11111111-2222-3333-4444-555555555555";
const PUSH: &str = "git push origin release";
const PUSHED: &str = "To github.com:o/r.git\n * [new branch]      release -> release";

fn payload(env: &TestEnv, event: &str, extra: Value) -> String {
    hook_payload(env, event, extra)
}

/// Workflow `w`: `build` done, `deploy` in progress.
fn deploying(env: &TestEnv) {
    env.ok(&["init", "w", "--phase", "build", "--phase", "deploy:build"]);
    env.ok(&["start", "build"]);
    env.ok(&["complete", "build"]);
    env.ok(&["start", "deploy"]);
}

/// A Bash call that succeeded (PostToolUse), with what it printed.
fn ran(env: &TestEnv, command: &str, stdout: &str, stderr: &str) {
    let (code, out, err) = env
        .hook(
            "PostToolUse",
            &payload(
                env,
                "PostToolUse",
                json!({
                    "tool_name": "Bash",
                    "tool_input": {"command": command, "description": "run"},
                    "tool_response": {"stdout": stdout, "stderr": stderr, "interrupted": false},
                    "tool_use_id": "toolu_1",
                }),
            ),
        )
        .wait();
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
}

/// A Bash call that failed (PostToolUseFailure).
fn failed(env: &TestEnv, command: &str) {
    let (code, _, err) = env
        .hook(
            "PostToolUseFailure",
            &payload(
                env,
                "PostToolUseFailure",
                json!({
                    "tool_name": "Bash",
                    "tool_input": {"command": command},
                    "error": "Exit code 1\nfatal: could not read from remote repository",
                    "tool_use_id": "toolu_2",
                }),
            ),
        )
        .wait();
    assert_eq!(code, 0, "{err}");
}

/// What the PreToolUse hook answers for a Bash call, with the client's entrypoint: the
/// decision and its reason, or none when the call may run.
fn asked(env: &TestEnv, command: &str, entrypoint: Option<&str>) -> Option<(String, String)> {
    let vars: Vec<(&str, &str)> = entrypoint
        .map(|value| ("CLAUDE_CODE_ENTRYPOINT", value))
        .into_iter()
        .collect();
    let hook_payload = payload(
        env,
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "toolu_3"}),
    );
    let answer = decision(env.hook_with_env("PreToolUse", &hook_payload, &vars).wait());
    let intent = env.store().join("w").is_dir()
        && env
            .read("w", "journal.jsonl")
            .lines()
            .last()
            .is_some_and(|line| line.contains("\"intent\":true"));
    if answer.is_none() && intent {
        // A call let through runs; here it fails, which settles its intent.
        failed(env, command);
    }
    answer
}

fn decision((code, stdout, stderr): (i32, String, String)) -> Option<(String, String)> {
    assert_eq!(code, 0, "{stderr}");
    if stdout.trim().is_empty() {
        return None;
    }
    let out: Value = serde_json::from_str(&stdout).unwrap();
    let specific = &out["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PreToolUse");
    Some((
        specific["permissionDecision"].as_str().unwrap().to_owned(),
        specific["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_owned(),
    ))
}

/// The journal's `effect` and `effect_allow` entries.
fn effect_entries(env: &TestEnv) -> Vec<Value> {
    env.read("w", "journal.jsonl")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|entry| {
            entry["transition"]["op"]
                .as_str()
                .unwrap()
                .starts_with("effect")
        })
        .map(|entry| entry["transition"].clone())
        .collect()
}

#[test]
fn a_successful_push_is_recorded_on_the_phase_in_progress() {
    let env = TestEnv::new();
    deploying(&env);
    ran(&env, PUSH, "", PUSHED);
    let entries = effect_entries(&env);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let effect = &entries[0];
    assert_eq!(effect["op"], "effect");
    assert_eq!(effect["phase"], "deploy");
    assert_eq!(effect["attempt"], 1);
    assert_eq!(effect["tool"], "Bash");
    assert_eq!(effect["command"], PUSH);
    assert_eq!(effect["output"], PUSHED);
    assert_eq!(effect["ok"], true);
    assert_eq!(effect["session_id"], SESSION);
    assert_eq!(effect["source"], "hook");
    assert_eq!(effect["key"].as_str().unwrap().len(), 32);
}

#[test]
fn a_call_that_is_no_effect_records_nothing() {
    let env = TestEnv::new();
    deploying(&env);
    let journal = env.read("w", "journal.jsonl");
    for command in [
        "ls -la",
        "echo git push",
        "git push --dry-run",
        "grep 'npm publish' x",
    ] {
        ran(&env, command, "", "");
        assert_eq!(asked(&env, command, None), None, "{command}");
    }
    assert_eq!(env.read("w", "journal.jsonl"), journal);
    assert!(!env.workflow_dir("w").join("effects.idx").exists());
}

#[test]
fn a_failed_push_is_recorded_as_failed_and_guards_nothing() {
    let env = TestEnv::new();
    deploying(&env);
    failed(&env, PUSH);
    let entries = effect_entries(&env);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["ok"], false);
    assert!(
        entries[0]["output"]
            .as_str()
            .unwrap()
            .contains("Exit code 1")
    );
    assert_eq!(asked(&env, PUSH, Some("sdk-cli")), None);
    // An interrupted one may have done part of its work: recorded, as failed.
    let (code, _, err) = env
        .hook(
            "PostToolUse",
            &payload(
                &env,
                "PostToolUse",
                json!({"tool_name": "Bash", "tool_input": {"command": PUSH}, "tool_response": {"interrupted": true}}),
            ),
        )
        .wait();
    assert_eq!(code, 0, "{err}");
    assert_eq!(effect_entries(&env)[1]["ok"], false);
    assert_eq!(asked(&env, PUSH, Some("sdk-cli")), None);
}

#[test]
fn a_repeat_is_denied_headless_and_asked_interactive() {
    let env = TestEnv::new();
    deploying(&env);
    ran(&env, PUSH, "", PUSHED);
    let (decision, reason) = asked(&env, PUSH, Some("sdk-cli")).unwrap();
    assert_eq!(decision, "deny");
    for part in [
        PUSH,
        "effect 1",
        "phase `deploy`",
        SESSION,
        "[new branch]",
        "`checkpoint effects allow 1`",
        "2026-",
    ] {
        assert!(reason.contains(part), "{part} in {reason}");
    }
    assert_eq!(asked(&env, PUSH, Some("cli")).unwrap().0, "ask");
    assert_eq!(asked(&env, PUSH, Some("sdk-py")).unwrap().0, "deny");
    assert_eq!(asked(&env, PUSH, None).unwrap().0, "deny");
    // The same command, however it is spaced or wrapped in the same words.
    assert!(asked(&env, "git  push   origin\trelease", Some("sdk-cli")).is_some());
}

#[test]
fn a_different_command_and_other_tools_run_as_before() {
    let env = TestEnv::new();
    deploying(&env);
    ran(&env, PUSH, "", PUSHED);
    // A nested repository's push is another push.
    std::fs::create_dir_all(env.project().join("vendor/.git")).unwrap();
    for command in [
        "git push origin main",
        "git push origin release --tags",
        "cd vendor && git push origin release",
        "ls",
        "echo git push origin release",
    ] {
        assert_eq!(asked(&env, command, Some("sdk-cli")), None, "{command}");
    }
    let write = payload(
        &env,
        "PreToolUse",
        json!({"tool_name": "Write", "tool_input": {"file_path": "a", "content": PUSH}}),
    );
    assert_eq!(decision(env.hook("PreToolUse", &write).wait()), None);
}

#[test]
fn an_allowed_repeat_goes_through_once() {
    let env = TestEnv::new();
    deploying(&env);
    ran(&env, PUSH, "", PUSHED);
    // `checkpoint effects allow 1`, as the journal records it.
    let journal = env.read("w", "journal.jsonl");
    let last: Value = serde_json::from_str(journal.lines().last().unwrap()).unwrap();
    let allow = json!({
        "seq": last["seq"].as_u64().unwrap() + 1,
        "at": "2026-03-01T12:30:00Z",
        "transition": {"op": "effect_allow", "effect": 1, "by": "ana"},
    });
    std::fs::write(
        env.workflow_dir("w").join("journal.jsonl"),
        format!("{journal}{allow}\n"),
    )
    .unwrap();
    assert_eq!(asked(&env, PUSH, Some("sdk-cli")), None);
    // A failed repeat keeps the allow.
    failed(&env, PUSH);
    assert_eq!(asked(&env, PUSH, Some("sdk-cli")), None);
    // The recorded repeat uses it up, and guards in its turn.
    ran(&env, PUSH, "", "Everything up-to-date");
    let (_, reason) = asked(&env, PUSH, Some("sdk-cli")).unwrap();
    // (Each let-through probe above journaled an intent its failure settled: effects 2 to 4.)
    assert!(reason.contains("effect 5"), "{reason}");
    assert!(reason.contains("Everything up-to-date"), "{reason}");
}

#[test]
fn a_finished_workflow_guards_nothing_and_no_workflow_is_no_guard() {
    let env = TestEnv::new();
    assert_eq!(asked(&env, PUSH, Some("sdk-cli")), None);
    ran(&env, PUSH, "", PUSHED);
    assert!(!env.store().exists(), "no workflow, nothing written");
    deploying(&env);
    ran(&env, PUSH, "", PUSHED);
    assert!(asked(&env, PUSH, Some("sdk-cli")).is_some());
    env.ok(&["complete", "deploy"]);
    assert_eq!(asked(&env, PUSH, Some("sdk-cli")), None);
}

#[test]
fn mcp_tools_and_plan_patterns_are_effects_when_named() {
    let env = TestEnv::new();
    std::fs::write(
        env.project().join("plan.toml"),
        "[[phases]]\nid = \"deploy\"\neffects = [\"./scripts/deploy.sh*\", \"mcp__slack__post*\"]\n",
    )
    .unwrap();
    env.ok(&["init", "w", "--plan", "plan.toml"]);
    env.ok(&["start", "deploy"]);
    ran(&env, "./scripts/deploy.sh prod", "deployed v2", "");
    let mcp = |event: &str, input: Value| {
        payload(
            &env,
            event,
            json!({
                "tool_name": "mcp__slack__post_message",
                "tool_input": input,
                "tool_response": "posted: https://slack.example/archives/C1/p42",
            }),
        )
    };
    let (code, _, err) = env
        .hook(
            "PostToolUse",
            &mcp("PostToolUse", json!({"channel": "C1", "text": "shipped"})),
        )
        .wait();
    assert_eq!(code, 0, "{err}");
    let entries = effect_entries(&env);
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_eq!(entries[0]["command"], "./scripts/deploy.sh prod");
    assert_eq!(entries[1]["tool"], "mcp__slack__post_message");
    assert_eq!(
        entries[1]["output"],
        "posted: https://slack.example/archives/C1/p42"
    );
    // The same call, its fields in another order, is a repeat; other arguments are not.
    let repeat = mcp("PreToolUse", json!({"text": "shipped", "channel": "C1"}));
    let answer = env
        .hook_with_env(
            "PreToolUse",
            &repeat,
            &[("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")],
        )
        .wait();
    assert_eq!(decision(answer).unwrap().0, "deny");
    let other = mcp("PreToolUse", json!({"text": "again", "channel": "C1"}));
    assert_eq!(decision(env.hook("PreToolUse", &other).wait()), None);
    assert!(asked(&env, "./scripts/deploy.sh   prod", Some("sdk-cli")).is_some());
}

#[test]
fn config_patterns_add_and_remove_and_the_builtin_list_turns_off() {
    let env = TestEnv::new();
    deploying(&env);
    std::fs::write(
        env.store().join("config.toml"),
        "[effects]\nbuiltin = false\ncommands = [\"make release*\", \"mcp__github__*\"]\n",
    )
    .unwrap();
    ran(&env, PUSH, "", PUSHED);
    ran(&env, "make release VERSION=2", "released", "");
    let entries = effect_entries(&env);
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["command"], "make release VERSION=2");
}

#[test]
fn secrets_in_a_command_and_its_output_never_reach_the_disk() {
    let env = TestEnv::new();
    deploying(&env);
    let [anthropic, aws, github, ..] = SECRET_SAMPLES;
    let command = format!(
        "curl -X POST -H 'Authorization: Bearer {anthropic}' https://x:{github}@api.example.com/hook"
    );
    ran(&env, &command, &format!("ok {aws} {github}"), "");
    let entries = effect_entries(&env);
    assert_eq!(entries.len(), 1);
    let dir = env.workflow_dir("w");
    for file in ["journal.jsonl", "state.json", "effects.idx"] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        for secret in [anthropic, aws, github] {
            assert!(!text.contains(secret), "{secret} in {file}");
        }
    }
    // The guard compares the call, not its redacted record.
    let (_, reason) = asked(&env, &command, Some("sdk-cli")).unwrap();
    for secret in [anthropic, aws, github] {
        assert!(!reason.contains(secret), "{secret} in {reason}");
    }
    // The key is the redacted call's: another secret in the same place is the same call, and
    // nothing stored depends on the secret; another URL is another call.
    let other = command.replace(github, "ghp_0000000000aaaaaaaaaaBBBBBBBBBB000000");
    assert!(asked(&env, &other, Some("sdk-cli")).is_some());
    let elsewhere = command.replace("api.example.com", "api.example.org");
    assert_eq!(asked(&env, &elsewhere, Some("sdk-cli")), None);
}

#[test]
fn an_output_is_cut_to_a_thousand_characters() {
    let env = TestEnv::new();
    deploying(&env);
    ran(&env, PUSH, &"é".repeat(5000), "");
    let output = effect_entries(&env)[0]["output"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(output.chars().count(), 1000);
    assert!(output.ends_with('…'));
}

#[test]
fn hooks_on_a_store_they_cannot_read_exit_zero() {
    let env = TestEnv::new();
    deploying(&env);
    ran(&env, PUSH, "", PUSHED);
    let dir = env.workflow_dir("w");
    std::fs::write(dir.join("effects.idx"), "garbage").unwrap();
    assert!(
        asked(&env, PUSH, Some("sdk-cli")).is_some(),
        "a bad index is rebuilt"
    );
    std::fs::write(dir.join("journal.jsonl"), "{not json\n").unwrap();
    std::fs::write(dir.join("state.json"), "{not json").unwrap();
    let hook_payload = payload(
        &env,
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": PUSH}}),
    );
    let (code, _, _) = env.hook("PreToolUse", &hook_payload).wait();
    assert_eq!(code, 0);
    let (code, _, _) = env
        .hook(
            "PostToolUse",
            &payload(
                &env,
                "PostToolUse",
                json!({"tool_name": "Bash", "tool_input": {"command": PUSH}, "tool_response": {"stdout": "x"}}),
            ),
        )
        .wait();
    assert_eq!(code, 0);
    for bad in ["", "[]", "{\"tool_name\": 3}"] {
        let (code, _, _) = env.hook("PreToolUse", bad).wait();
        assert_eq!(code, 0, "{bad}");
    }
}

#[test]
fn a_resume_lists_the_effects_of_unfinished_phases() {
    let env = TestEnv::new();
    env.ok(&[
        "init",
        "w",
        "--phase",
        "deploy",
        "--phase",
        "announce:deploy",
    ]);
    env.ok(&["start", "deploy"]);
    ran(&env, PUSH, "", PUSHED);
    ran(
        &env,
        "gh pr create --fill",
        "https://github.com/o/r/pull/42",
        "",
    );
    let plan = env.json(&["resume", "--dry-run"]);
    let effects = plan["plan"]["effects"].as_array().unwrap();
    assert_eq!(effects.len(), 2, "{plan}");
    assert_eq!(effects[0]["number"], 1);
    assert_eq!(effects[0]["command"], PUSH);
    assert_eq!(effects[0]["phase"], "deploy");
    assert_eq!(effects[0]["output"], PUSHED);
    assert_eq!(effects[0]["session_id"], SESSION);
    assert_eq!(effects[1]["output"], "https://github.com/o/r/pull/42");
    let mentions = |text: &str| {
        for part in [
            "Already done",
            "do not repeat",
            "`git push origin release`",
            "(phase deploy)",
            "→ To github.com:o/r.git",
            "`gh pr create --fill`",
            "→ https://github.com/o/r/pull/42",
            "`checkpoint effects allow <n>`",
        ] {
            assert!(text.contains(part), "{part} in {text}");
        }
    };
    mentions(&env.ok(&["resume", "--dry-run", "--format", "prompt"]));
    mentions(&session_start_context(&env));
    let run = env.json(&["run", "--dry-run", "--claude", "my-claude"]);
    let command = run["command"].as_str().unwrap();
    mentions(command);
    assert!(
        command.contains("Never repeat a call listed under"),
        "{command}"
    );
    // Once its phase is done, an effect is history: a resume no longer lists it.
    env.ok(&["complete", "deploy"]);
    let plan = env.json(&["resume", "--dry-run"]);
    assert_eq!(plan["plan"]["effects"], json!([]), "{plan}");
    assert!(
        !env.ok(&["resume", "--dry-run", "--format", "prompt"])
            .contains("Already done")
    );
}
