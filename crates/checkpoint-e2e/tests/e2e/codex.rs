//! Codex CLI end to end: `checkpoint setup codex` in a scratch project, then the real `codex`
//! against the scripted Responses mock: the workflow in the first request, a patch completing a
//! phase, a shell `git commit` recorded, the MCP tools found and used, and `checkpoint run
//! --client codex` through a 429.

use std::process::Output;

use checkpoint_e2e::{CodexEnv, Plugin, ResponsesMock, ResponsesTurn};
use serde_json::{Value, json};

use crate::support::{phase, read_journal, read_json, store_dir};

/// A project with workflow `w` (phase `spec`, which declares `docs/spec.md`, then `build`),
/// `spec` started, and `checkpoint setup codex` run in it; returns the `checkpoint` under test.
fn set_up(mock: &ResponsesMock, retries: u32) -> (CodexEnv, std::path::PathBuf) {
    let env = CodexEnv::new(mock, retries);
    let checkpoint = Plugin::find().checkpoint_bin();
    let plan = json!({"phases": [{"id": "spec", "outputs": ["docs/spec.md"]}, {"id": "build", "dependencies": ["spec"]}]});
    std::fs::write(env.project().join("plan.json"), plan.to_string()).unwrap();
    for args in [
        &["init", "w", "--plan", "plan.json"][..],
        &["start", "spec"],
        &["progress", "spec", "outline agreed"],
        &["setup", "codex"],
    ] {
        let output = env.command(&checkpoint).args(args).output().unwrap();
        assert!(
            output.status.success(),
            "checkpoint {args:?}: {}",
            text(&output)
        );
    }
    (env, checkpoint)
}

/// Sets the project up with Codex allowed `retries` retries, scripts the session that does
/// `build` (Codex's shell is a login shell: the model names the binary under test by its path),
/// and runs `checkpoint run --client codex` with `args` to the end.
fn run_build(mock: &ResponsesMock, retries: u32, args: &[&str]) -> (CodexEnv, Output) {
    let (env, checkpoint) = set_up(mock, retries);
    let ck = checkpoint.display();
    mock.push([
        ResponsesTurn::Shell(format!("'{ck}' start build && '{ck}' complete build")),
        ResponsesTurn::Text("build done".into()),
    ]);
    let output = env
        .command(&checkpoint)
        .env("CHECKPOINT_NO_PROGRESS", "1")
        .args(["run", "--client", "codex", "--codex"])
        .arg(env.codex_bin())
        .args(["--max-sessions", "4", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    (env, output)
}

fn text(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn state(env: &CodexEnv) -> Value {
    read_json(&store_dir(&env.project()).join("w").join("state.json"))
}

#[test]
fn codex_gets_the_workflow_and_its_patch_and_commit_are_recorded() {
    let mock = ResponsesMock::start(vec![
        ResponsesTurn::Shell(
            "echo n > notes.txt && git add notes.txt && git commit -qm notes".into(),
        ),
        ResponsesTurn::Patch(
            "*** Begin Patch\n*** Add File: docs/spec.md\n+# spec\n*** End Patch".into(),
        ),
        // A change only the turn's end sees: its snapshot holds it.
        ResponsesTurn::Shell("echo done > turn.txt".into()),
        ResponsesTurn::Text("done".into()),
    ]);
    let (env, _) = set_up(&mock, 0);
    let output = env.exec("Carry on with the work.");
    assert!(output.status.success(), "{}", text(&output));
    let requests = mock.requests();
    assert_eq!(requests.len(), 4, "{}", text(&output));
    let journal = read_journal(&store_dir(&env.project()).join("w").join("journal.jsonl"));
    let turn_end = journal
        .iter()
        .find(|entry| {
            entry["transition"]["op"] == "files_snapshot"
                && entry["transition"]["reason"] == "turn_end"
        })
        .unwrap_or_else(|| panic!("no turn-end snapshot in {journal:#?}"));
    assert_eq!(
        turn_end["transition"]["paths"],
        json!(["turn.txt"]),
        "{turn_end:#}"
    );
    let first = requests[0]["input"].to_string();
    assert!(first.contains("workflow `w`"), "{first}");
    assert!(first.contains("outline agreed"), "{first}");
    let state = state(&env);
    let head = env
        .command("git")
        .args(["log", "-1", "--format=%H"])
        .output()
        .unwrap()
        .stdout;
    let head = String::from_utf8(head).unwrap();
    let spec = phase(&state, "spec");
    assert_eq!(
        spec["commit_sha"],
        head.trim(),
        "the commit made while `spec` was in progress"
    );
    assert_eq!(spec["status"], "complete", "{state}");
    assert_eq!(spec["artifacts"][0]["path"], "docs/spec.md");
}

#[test]
fn the_checkpoint_mcp_tools_are_found_through_tool_search_and_used() {
    let mock = ResponsesMock::start(vec![
        ResponsesTurn::ToolSearch("checkpoint progress note".into()),
        ResponsesTurn::Namespaced {
            namespace: "mcp__checkpoint".into(),
            name: "progress".into(),
            arguments: json!({"phase": "spec", "note": "MCP-NOTE-1"}),
        },
        ResponsesTurn::Text("done".into()),
    ]);
    let (env, _) = set_up(&mock, 0);
    let output = env.exec("Record progress.");
    assert!(output.status.success(), "{}", text(&output));
    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "{}", text(&output));
    let found = requests[1]["input"].to_string();
    assert!(found.contains("mcp__checkpoint"), "{found}");
    assert!(found.contains("progress"), "{found}");
    assert_eq!(phase(&state(&env), "spec")["progress"], "MCP-NOTE-1");
}

#[test]
fn run_with_codex_carries_two_phases_through_a_429() {
    let mock = ResponsesMock::start(vec![
        // Session 1: `spec` is done by its output.
        ResponsesTurn::Patch(
            "*** Begin Patch\n*** Add File: docs/spec.md\n+x\n*** End Patch".into(),
        ),
        ResponsesTurn::Text("spec written".into()),
        // Session 2: a 429 (Codex waits its Retry-After and retries), then `build`.
        ResponsesTurn::Error {
            status: 429,
            retry_after: Some(1),
            message: "Rate limit reached. Please try again in 1s.".into(),
        },
    ]);
    let (env, output) = run_build(&mock, 1, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let state = state(&env);
    assert_eq!(phase(&state, "spec")["status"], "complete", "{state}");
    assert_eq!(phase(&state, "build")["status"], "complete", "{state}");
    let journal = read_journal(&store_dir(&env.project()).join("w").join("journal.jsonl"));
    let starts_of_spec = journal
        .iter()
        .filter(|entry| {
            entry["transition"]["op"] == "phase_start" && entry["transition"]["phase"] == "spec"
        })
        .count();
    assert_eq!(starts_of_spec, 1, "`spec` started once");
    assert_eq!(mock.requests().len(), 5, "{}", text(&output));
}

/// A 429 that outlasts Codex's own retries ends its session (`turn.failed`): the runner waits
/// (its backoff, bounded by `--max-wait`) and continues the same Codex thread with `codex exec
/// resume`, and the workflow still ends with no phase started twice.
#[test]
fn run_with_codex_waits_out_a_429_codex_gave_up_on_and_resumes_its_thread() {
    let mock = ResponsesMock::start(vec![
        // Session 1: `spec` is done by its output, then a 429 Codex does not retry.
        ResponsesTurn::Patch(
            "*** Begin Patch\n*** Add File: docs/spec.md\n+x\n*** End Patch".into(),
        ),
        ResponsesTurn::Error {
            status: 429,
            retry_after: None,
            message: "Rate limit reached.".into(),
        },
    ]);
    let (env, output) = run_build(&mock, 0, &["--max-wait", "5s"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let state = state(&env);
    assert_eq!(phase(&state, "spec")["status"], "complete", "{state}");
    assert_eq!(phase(&state, "build")["status"], "complete", "{state}");
    let journal = read_journal(&store_dir(&env.project()).join("w").join("journal.jsonl"));
    let ops = |op: &str| {
        journal
            .iter()
            .filter(|entry| entry["transition"]["op"] == op)
            .map(|entry| entry["transition"].clone())
            .collect::<Vec<_>>()
    };
    let waits = ops("run_wait");
    // Codex says only "429 Too Many Requests": a limit with no reset time, waited out by the
    // runner's backoff.
    assert!(
        waits.iter().any(|wait| wait["kind"] == "backoff"
            && wait["reason"]
                .as_str()
                .is_some_and(|reason| reason.contains("rate limit"))),
        "a wait for the limit: {waits:?}\n{}",
        text(&output)
    );
    let outcomes: Vec<Value> = ops("run_session_end")
        .iter()
        .map(|end| end["outcome"].clone())
        .collect();
    assert!(outcomes.contains(&json!("rate_limit")), "{outcomes:?}");
    // The session after the limit continues the limited session's Codex thread.
    let limited = ops("run_session_end")
        .into_iter()
        .find(|end| end["outcome"] == "rate_limit")
        .unwrap();
    let starts = ops("run_session_start");
    assert!(
        limited["session_id"].is_string()
            && starts
                .iter()
                .skip(1)
                .any(|start| start["resumed"] == limited["session_id"]),
        "the session after the limit continues {limited}: {starts:?}"
    );
    let starts_of_spec = ops("phase_start")
        .iter()
        .filter(|start| start["phase"] == "spec")
        .count();
    assert_eq!(starts_of_spec, 1, "`spec` started once");
}

/// A bare repository in the home, its `post-receive` hook appending a line per pushed ref to
/// `pushes.log` there, as `origin` of the project; returns the log.
fn counting_remote(home: &std::path::Path, project: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let remote = home.join("remote.git");
    let log = home.join("pushes.log");
    let git = |dir: &std::path::Path, args: &[&str]| {
        let output = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
    };
    git(home, &["init", "--quiet", "--bare", "remote.git"]);
    let hook = remote.join("hooks").join("post-receive");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\nwhile read old new ref; do echo \"$ref\" >> '{}'; done\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    git(
        project,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    );
    log
}

/// Never twice on Codex CLI: its `PreToolUse` hook refuses the repeat of a recorded push in
/// Codex's own form (`permissionDecision: "deny"`); the push reaches the remote once, and the
/// model reads the reason, which names `checkpoint effects allow`.
#[test]
fn codex_refuses_a_repeat_of_a_recorded_push_and_the_model_reads_why() {
    let push = "git push origin HEAD:main";
    let mock = ResponsesMock::start(vec![
        ResponsesTurn::Shell(push.into()),
        ResponsesTurn::Shell(push.into()),
        ResponsesTurn::Text("done".into()),
    ]);
    let (env, _) = set_up(&mock, 0);
    let pushes = counting_remote(&env.home(), &env.project());
    let output = env.exec("Push the work.");
    assert!(output.status.success(), "{}", text(&output));
    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "{}", text(&output));
    let log = std::fs::read_to_string(&pushes).unwrap_or_default();
    assert_eq!(log.lines().count(), 1, "{log}");
    // What the model got back for the repeat: the hook's reason.
    let told = requests[2]["input"].to_string();
    // Codex puts its own words before the hook's reason (measured on 0.169.0 and 0.171.0).
    for part in [
        "Command blocked by PreToolUse hook: checkpoint: this call already succeeded",
        "already succeeded",
        "git push origin HEAD:main",
        "checkpoint effects allow 1",
    ] {
        assert!(told.contains(part), "{part} in {told}");
    }
    let journal = read_journal(&store_dir(&env.project()).join("w").join("journal.jsonl"));
    let done = journal
        .iter()
        .filter(|entry| entry["transition"]["op"] == "effect" && entry["transition"]["ok"] == true)
        .count();
    assert_eq!(done, 1, "{journal:#?}");
}
