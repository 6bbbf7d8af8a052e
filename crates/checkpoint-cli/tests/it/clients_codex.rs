//! `checkpoint hook --client codex <event>`: Codex CLI's payloads (as 0.169.0 sends them)
//! through the same rules as Claude Code's, and the never-fail contract.

use serde_json::{Value, json};

use crate::support::{TestEnv, git, repo};

/// A Codex payload of `event` from `cwd` with `extra` fields.
fn payload(cwd: &std::path::Path, event: &str, extra: Value) -> String {
    let mut value = json!({
        "session_id": "01a2b3c4-0000-0000-0000-000000000000",
        "turn_id": "t-1",
        "transcript_path": "/tmp/codex/sessions/rollout.jsonl",
        "cwd": cwd,
        "hook_event_name": event,
        "model": "gpt-5.5",
        "permission_mode": "bypassPermissions",
    });
    value
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    value.to_string()
}

/// A `PostToolUse` of `apply_patch` with `patch`, answered with `response`.
fn patch(cwd: &std::path::Path, patch: &str, response: &str) -> String {
    payload(
        cwd,
        "PostToolUse",
        json!({"tool_name": "apply_patch", "tool_input": {"command": patch}, "tool_response": response, "tool_use_id": "call_mock_0004"}),
    )
}

const PATCHED: &str = "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA docs/spec.md\n";

/// Workflow `w`: phase `spec` (in progress) declares `outputs`, phase `build` follows it.
fn spec_in_progress(env: &TestEnv, outputs: &[&str]) {
    let plan = json!({"phases": [{"id": "spec", "outputs": outputs}, {"id": "build", "dependencies": ["spec"]}]});
    std::fs::write(env.project().join("plan.json"), plan.to_string()).unwrap();
    env.ok(&["init", "w", "--plan", "plan.json"]);
    env.ok(&["start", "spec"]);
}

fn write(env: &TestEnv, path: &str) {
    let path = env.project().join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "# spec\n").unwrap();
}

#[track_caller]
fn run_ok(env: &TestEnv, event: &str, payload: &str) -> (String, String) {
    let (code, stdout, stderr) = env.client_hook("codex", event, payload).wait();
    assert_eq!(code, 0, "{stderr}");
    (stdout, stderr)
}

#[test]
fn session_start_answers_with_the_workflow_in_codexs_form() {
    let env = TestEnv::new();
    spec_in_progress(&env, &["docs/spec.md"]);
    env.ok(&["progress", "spec", "outline agreed"]);
    for source in ["startup", "resume", "compact", "unknown"] {
        let start = payload(&env.project(), "SessionStart", json!({"source": source}));
        let (stdout, stderr) = run_ok(&env, "SessionStart", &start);
        assert_eq!(stderr, "");
        let out: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
        let context = out["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap();
        assert!(context.contains("workflow `w`"), "{context}");
        assert!(context.contains("outline agreed"), "{context}");
    }
}

#[test]
fn an_apply_patch_that_adds_the_declared_output_completes_the_phase() {
    let env = TestEnv::new();
    spec_in_progress(&env, &["docs/spec.md"]);
    write(&env, "docs/spec.md");
    let add = "*** Begin Patch\n*** Add File: docs/spec.md\n+# spec\n*** End Patch";
    run_ok(&env, "PostToolUse", &patch(&env.project(), add, PATCHED));
    let state = env.state("w");
    assert_eq!(state["phases"][0]["status"], "complete");
    assert_eq!(state["phases"][0]["artifacts"][0]["path"], "docs/spec.md");
    assert_eq!(state["context"]["file_paths"], json!(["docs/spec.md"]));
}

#[test]
fn one_patch_writing_every_output_completes_the_phase_once() {
    let env = TestEnv::new();
    spec_in_progress(&env, &["docs/spec.md", "src/lib.rs"]);
    write(&env, "docs/spec.md");
    write(&env, "src/lib.rs");
    let both = "*** Begin Patch\n*** Update File: docs/spec.md\n@@\n-a\n+b\n*** Add File: src/lib.rs\n+x\n*** Update File: docs/spec.md\n*** End Patch";
    run_ok(&env, "PostToolUse", &patch(&env.project(), both, PATCHED));
    let state = env.state("w");
    assert_eq!(state["phases"][0]["status"], "complete");
    assert_eq!(
        state["context"]["file_paths"],
        json!(["docs/spec.md", "src/lib.rs"])
    );
    let completions = env
        .read("w", "journal.jsonl")
        .lines()
        .filter(|line| line.contains("\"phase_complete\""))
        .count();
    assert_eq!(completions, 1);
}

#[test]
fn patch_paths_are_taken_from_the_sessions_directory() {
    let env = TestEnv::new();
    spec_in_progress(&env, &["sub/out.md"]);
    write(&env, "sub/out.md");
    let add = "*** Begin Patch\n*** Add File: out.md\n+x\n*** End Patch";
    run_ok(
        &env,
        "PostToolUse",
        &patch(&env.project().join("sub"), add, PATCHED),
    );
    assert_eq!(env.state("w")["phases"][0]["status"], "complete");
    // A move's destination is written; a deleted file is not.
    let env = TestEnv::new();
    spec_in_progress(&env, &["new.md", "gone.md"]);
    write(&env, "new.md");
    let moved = "*** Begin Patch\n*** Update File: old.md\n*** Move to: new.md\n@@\n-a\n+b\n*** Delete File: gone.md\n*** End Patch";
    run_ok(&env, "PostToolUse", &patch(&env.project(), moved, PATCHED));
    let state = env.state("w");
    assert_eq!(state["context"]["file_paths"], json!(["new.md"]));
    assert_eq!(state["phases"][0]["status"], "in_progress");
}

#[test]
fn a_failed_patch_or_one_before_it_ran_records_nothing() {
    let env = TestEnv::new();
    spec_in_progress(&env, &["docs/spec.md"]);
    write(&env, "docs/spec.md");
    let before = env.read("w", "journal.jsonl");
    let add = "*** Begin Patch\n*** Add File: docs/spec.md\n+# spec\n*** End Patch";
    let failed = "Exit code: 1\nWall time: 0 seconds\nOutput:\npatch rejected: writing is blocked by read-only sandbox\n";
    run_ok(&env, "PostToolUse", &patch(&env.project(), add, failed));
    let pre = payload(
        &env.project(),
        "PreToolUse",
        json!({"tool_name": "apply_patch", "tool_input": {"command": add}}),
    );
    run_ok(&env, "PreToolUse", &pre);
    // The shell writing a declared output is not a write the hook sees (it counts at resume).
    let shell = payload(
        &env.project(),
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "echo '# spec' > docs/spec.md"}, "tool_response": ""}),
    );
    run_ok(&env, "PostToolUse", &shell);
    assert_eq!(env.read("w", "journal.jsonl"), before);
}

#[test]
fn a_shell_git_commit_records_its_sha_on_the_phase_in_progress() {
    let env = repo();
    spec_in_progress(&env, &["docs/spec.md"]);
    std::fs::write(env.project().join("a.txt"), "a").unwrap();
    git(&env.project(), &["add", "a.txt"]);
    git(&env.project(), &["commit", "-qm", "work"]);
    let head = git(&env.project(), &["rev-parse", "HEAD"])
        .trim()
        .to_owned();
    let commit = payload(
        &env.project(),
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "git add a.txt && git commit -qm work"}, "tool_response": "[main 1a2b3c4] work\n 1 file changed\n", "tool_use_id": "call_mock_0002"}),
    );
    run_ok(&env, "PostToolUse", &commit);
    assert_eq!(env.state("w")["phases"][0]["commit_sha"], head.as_str());
    // Any other command records nothing.
    let before = env.read("w", "journal.jsonl");
    let ls = payload(
        &env.project(),
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": "a.txt\n"}),
    );
    run_ok(&env, "PostToolUse", &ls);
    assert_eq!(env.read("w", "journal.jsonl"), before);
}

#[test]
fn stop_and_compaction_are_recorded_like_claude_codes() {
    let env = TestEnv::new();
    spec_in_progress(&env, &["docs/spec.md"]);
    let stop = payload(
        &env.project(),
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "done"}),
    );
    run_ok(&env, "Stop", &stop);
    let compact = payload(&env.project(), "PreCompact", json!({}));
    run_ok(&env, "PreCompact", &compact);
    let journal = env.read("w", "journal.jsonl");
    assert!(journal.contains("\"heartbeat\""), "{journal}");
    assert!(journal.contains("\"source\":\"Stop\""), "{journal}");
    assert!(journal.contains("\"compaction\""), "{journal}");
    assert!(
        journal.contains("01a2b3c4-0000-0000-0000-000000000000"),
        "{journal}"
    );
}

#[test]
fn a_malformed_payload_warns_changes_nothing_and_exits_0() {
    let env = TestEnv::new();
    spec_in_progress(&env, &["docs/spec.md"]);
    write(&env, "docs/spec.md");
    let before = env.read("w", "journal.jsonl");
    let project = env.project();
    let add = "*** Begin Patch\n*** Add File: docs/spec.md\n+# spec\n*** End Patch";
    let cases: Vec<(&str, String, &str)> = vec![
        ("PostToolUse", String::new(), "no payload"),
        ("PostToolUse", "not json".into(), "not JSON"),
        ("PostToolUse", "[1, 2]".into(), "not a JSON object"),
        ("PostToolUse", "{\"cwd\": \"/x\"".into(), "not JSON"),
        (
            "PostToolUse",
            json!({"hook_event_name": "PostToolUse", "tool_name": "apply_patch", "tool_input": {"command": add}}).to_string(),
            "not a `PostToolUse` payload",
        ),
        (
            "PostToolUse",
            patch(&project, add, PATCHED).replace("PostToolUse", "Stop"),
            "the payload is for `Stop`",
        ),
        ("AfterTool", patch(&project, add, PATCHED), "unknown Codex hook event"),
        ("postToolUse", patch(&project, add, PATCHED), "unknown Codex hook event"),
        (
            "PostToolUse",
            payload(&project, "PostToolUse", json!({"tool_input": {"command": add}})),
            "not a `PostToolUse` payload",
        ),
    ];
    for (event, payload, warning) in cases {
        let (code, stdout, stderr) = env.client_hook("codex", event, &payload).wait();
        assert_eq!(code, 0, "{payload}: {stderr}");
        assert_eq!(stdout, "", "{payload}");
        assert!(stderr.starts_with("warning: "), "{payload}: {stderr}");
        assert!(stderr.contains(warning), "{payload}: {stderr}");
        assert_eq!(env.read("w", "journal.jsonl"), before, "{payload}");
    }
}

#[test]
fn fields_of_another_type_read_as_absent() {
    let env = TestEnv::new();
    spec_in_progress(&env, &["docs/spec.md"]);
    write(&env, "docs/spec.md");
    let before = env.read("w", "journal.jsonl");
    for odd in [
        json!({"tool_name": "apply_patch", "tool_input": "*** Add File: docs/spec.md", "tool_response": PATCHED}),
        json!({"tool_name": "apply_patch", "tool_input": {"command": 7}, "tool_response": {"stdout": "x"}}),
        json!({"tool_name": "Bash", "tool_input": {"command": ["git", "commit"]}, "tool_response": null}),
        json!({"tool_name": "mcp__checkpoint__progress", "tool_input": {"phase": "spec"}, "tool_response": "ok"}),
    ] {
        let odd = payload(&env.project(), "PostToolUse", odd);
        let (stdout, stderr) = run_ok(&env, "PostToolUse", &odd);
        assert_eq!((stdout.as_str(), stderr.as_str()), ("", ""), "{odd}");
    }
    assert_eq!(env.read("w", "journal.jsonl"), before);
}

#[test]
fn no_workflow_no_output_and_no_state_written() {
    let env = TestEnv::new();
    let start = payload(&env.project(), "SessionStart", json!({"source": "startup"}));
    let (stdout, stderr) = run_ok(&env, "SessionStart", &start);
    assert_eq!((stdout.as_str(), stderr.as_str()), ("", ""));
    assert!(!env.store().exists());
}

#[test]
fn an_unknown_client_is_a_warning_and_exit_0() {
    let env = TestEnv::new();
    spec_in_progress(&env, &["docs/spec.md"]);
    let before = env.read("w", "journal.jsonl");
    let stop = payload(&env.project(), "Stop", json!({}));
    for client in ["vim", "Codex", "claude-code"] {
        let (code, stdout, stderr) = env.client_hook(client, "Stop", &stop).wait();
        assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
        assert!(
            stderr.contains(&format!("unknown client `{client}`")),
            "{stderr}"
        );
    }
    assert_eq!(env.read("w", "journal.jsonl"), before);
}

/// A fake `codex`: logs its arguments, says its thread, then on its first run meets a 429
/// (after Codex's own retries, as 0.169.0 reports them) and exits 1; on every later run does
/// the phase the plan names (starting it, completing it) and ends its turn well.
fn fake_codex(env: &TestEnv) -> std::path::PathBuf {
    let path = env.dir.path().join("fake-codex");
    let script = r#"#!/bin/sh
dir=$(dirname "$0")
printf '%s|' "$@" | tr '\n' ' ' >> "$dir/codex-args.log"; echo >> "$dir/codex-args.log"
echo '{"type":"thread.started","thread_id":"019a-thread-'$$'"}'
echo '{"type":"turn.started"}'
if [ ! -e "$dir/limited-once" ]; then
  touch "$dir/limited-once"
  echo '{"type":"error","message":"Reconnecting... 1/5 (exceeded retry limit, last status: 429 Too Many Requests, request id: r-1)"}'
  echo '{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests, request id: r-1"}}'
  exit 1
fi
PHASE=$("$CK" resume --dry-run --format json | sed -n 's/.*"phase": "\([a-z0-9-]*\)".*/\1/p' | head -n 1)
echo "$PHASE" >> work.log
echo '{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"checkpoint start","exit_code":0,"status":"completed"}}'
"$CK" start "$PHASE" >/dev/null 2>&1; "$CK" complete "$PHASE" >/dev/null
echo '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"done"}}'
echo '{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":20}}'
"#;
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn run_with_codex_carries_a_workflow_through_a_429_without_redoing_a_phase() {
    for how in ["flag", "config"] {
        let env = TestEnv::new();
        env.ok(&["init", "w", "--phase", "a", "--phase", "b:a"]);
        let codex = fake_codex(&env);
        let mut cmd = env.cmd();
        cmd.env("CK", crate::support::bin()).arg("run");
        if how == "flag" {
            cmd.args(["--client", "codex", "--codex"]).arg(&codex);
        } else {
            let config = format!(
                "[run]\nclient = \"codex\"\ncodex = {}\n",
                Value::String(codex.display().to_string())
            );
            std::fs::write(env.store().join("config.toml"), config).unwrap();
        }
        let output = cmd
            .args([
                "--max-sessions",
                "5",
                "--format",
                "json",
                "--",
                "-s",
                "danger-full-access",
            ])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{how}: {stdout}\n{stderr}");
        let work = std::fs::read_to_string(env.project().join("work.log")).unwrap();
        assert_eq!(work, "a\nb\n", "{how}: each phase worked on once");
        let events: Vec<Value> = stdout
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let outcomes: Vec<&str> = events
            .iter()
            .filter(|event| event["event"] == "session_ended")
            .map(|event| event["outcome"].as_str().unwrap())
            .collect();
        assert_eq!(outcomes, ["rate_limit", "progress", "progress"], "{how}");
        assert!(
            events
                .iter()
                .any(|event| event["event"] == "tool_use" && event["tool"] == "Bash"),
            "{stdout}"
        );
        let args = std::fs::read_to_string(env.dir.path().join("codex-args.log")).unwrap();
        let lines: Vec<&str> = args.lines().collect();
        assert_eq!(lines.len(), 3, "{args}");
        assert!(
            lines[0].starts_with(
                "exec|--json|--dangerously-bypass-hook-trust|-s|danger-full-access|--|"
            ),
            "{args}"
        );
        // After the limit, the same thread goes on.
        assert!(
            lines[1].starts_with(
                "exec|-s|danger-full-access|resume|--json|--dangerously-bypass-hook-trust|019a-thread-"
            ),
            "{args}"
        );
        let journal = env.read("w", "journal.jsonl");
        let start = journal
            .lines()
            .find(|line| line.contains("\"run_start\""))
            .unwrap();
        assert!(start.contains("\"client\":\"codex\""), "{start}");
    }
}

#[test]
fn run_refuses_an_unknown_client() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    for client in ["vim", "Codex", ""] {
        let output = env.run(&["run", "--dry-run", "--client", client]);
        assert_eq!(output.status.code(), Some(2), "{client}");
    }
    std::fs::write(env.store().join("config.toml"), "[run]\nclient = \"vim\"\n").unwrap();
    let output = env.run(&["run", "--dry-run"]);
    assert_ne!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("config.toml"), "{stderr}");
}

#[test]
fn a_repeat_of_a_recorded_push_is_denied_in_codexs_form() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "deploy"]);
    env.ok(&["start", "deploy"]);
    let root = env.project();
    let push = "cd . && git push origin main";
    let done = payload(
        &root,
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": push}, "tool_response": "To o/r\n", "tool_use_id": "call_1"}),
    );
    run_ok(&env, "PostToolUse", &done);
    for command in ["git push origin main", "sudo git push origin main"] {
        let pre = payload(
            &root,
            "PreToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "call_2"}),
        );
        let (stdout, _) = run_ok(&env, "PreToolUse", &pre);
        let out: Value = serde_json::from_str(&stdout).unwrap();
        // Codex runs a call its hook only asks about: the guard denies, with the fields its
        // parser requires and no other inside `hookSpecificOutput`.
        let specific = out["hookSpecificOutput"].as_object().unwrap();
        assert_eq!(specific.len(), 3, "{out}");
        assert_eq!(specific["hookEventName"], "PreToolUse");
        assert_eq!(specific["permissionDecision"], "deny");
        let reason = specific["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("checkpoint effects allow 1"), "{reason}");
    }
    let other = payload(
        &root,
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "git push origin other"}, "tool_use_id": "call_3"}),
    );
    assert_eq!(run_ok(&env, "PreToolUse", &other).0, "");
}

/// The write guard through Codex CLI's hooks: an `apply_patch` over a change this session has
/// not seen is refused in Codex's form; Codex has no read tool, and only a lone `cat` of the
/// whole file (not one piped into `head`, not one of a file too long to be shown whole) counts
/// as seeing it.
#[test]
fn an_apply_patch_over_an_unseen_change_is_denied_until_a_lone_cat_of_the_file() {
    // A fresh project for each file: no command of one case is running in the other.
    for (name, long) in [("shared.txt", false), ("long.txt", true)] {
        denied_until_a_lone_cat(name, long);
    }
}

fn denied_until_a_lone_cat(name: &str, long: bool) {
    let env = TestEnv::new();
    spec_in_progress(&env, &["docs/spec.md"]);
    let cwd = env.project();
    let update = "*** Begin Patch\n*** Update File: shared.txt\n@@\n-mine\n+ours\n*** End Patch";
    let pre = |patch: &str| {
        let payload = payload(
            &cwd,
            "PreToolUse",
            json!({"tool_name": "apply_patch", "tool_input": {"command": patch}, "tool_use_id": "call_1"}),
        );
        run_ok(&env, "PreToolUse", &payload).0
    };
    let shell = |command: &str, output: &str| {
        for event in ["PreToolUse", "PostToolUse"] {
            let mut extra = json!({"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "call_2"});
            if event == "PostToolUse" {
                extra["tool_response"] = json!(output);
            }
            run_ok(&env, event, &payload(&cwd, event, extra));
        }
    };
    let refused = |answer: &str| answer.contains("\"permissionDecision\":\"deny\"");
    {
        let added = format!("*** Begin Patch\n*** Add File: {name}\n+mine\n*** End Patch");
        std::fs::write(cwd.join(name), "mine\n").unwrap();
        run_ok(&env, "PostToolUse", &patch(&cwd, &added, PATCHED));
        // A person changes it.
        let theirs = if long {
            "x".repeat(20_000)
        } else {
            "theirs\n".to_owned()
        };
        std::fs::write(cwd.join(name), format!("mine\n{theirs}")).unwrap();
        // Well before the session's next command: a change within the hooks' 20 ms slack of a
        // command's start (file times are coarse) is taken as that command's own.
        std::thread::sleep(std::time::Duration::from_millis(100));
        let update = update.replace("shared.txt", name);
        assert!(refused(&pre(&update)), "{name}");
        shell(&format!("cat {name} | head -1"), "mine\n");
        assert!(refused(&pre(&update)), "{name} after a cut cat");
        shell(&format!("cat {name}"), "mine\n…");
        assert_eq!(refused(&pre(&update)), long, "{name} after cat");
    }
}
