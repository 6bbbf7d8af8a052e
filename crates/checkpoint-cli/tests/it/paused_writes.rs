//! Writes on a paused workflow through every door of a command: work lifts the pause as a
//! journaled `unpause` and says so, whichever command wrote it (DURABILITY.md, "work on a paused
//! workflow"); what is no work keeps the pause and says nothing of it.

use std::fs;

use crate::support::{TestEnv, render};

/// The ops of the workflow's journal after its first `skip` entries.
fn ops_after(env: &TestEnv, skip: usize) -> Vec<String> {
    env.read("w", "journal.jsonl")
        .lines()
        .skip(skip)
        .map(|line| {
            let entry: serde_json::Value = serde_json::from_str(line).unwrap();
            entry["transition"]["op"].as_str().unwrap().to_owned()
        })
        .collect()
}

fn journaled(env: &TestEnv) -> usize {
    env.read("w", "journal.jsonl").lines().count()
}

/// `w` with phase `a` (which declares `a.md`) in progress, then `b`, paused until 2030.
fn paused(env: &TestEnv) {
    fs::write(
        env.project().join("plan.json"),
        r#"{"phases": [{"id": "a", "outputs": ["a.md"]}, {"id": "b", "depends_on": ["a"]}]}"#,
    )
    .unwrap();
    env.ok(&["init", "w", "--plan", "plan.json"]);
    env.ok(&["start", "a"]);
    pause(env);
}

fn pause(env: &TestEnv) {
    env.ok(&[
        "pause",
        "--reason",
        "rate_limit",
        "--until",
        "2030-01-01T00:00:00Z",
    ]);
}

/// The note and the warning of a lifted pause, as every command says them.
fn says_unpaused(rendered: &str) {
    assert!(
        rendered.contains(
            "unpaused: the workflow was paused (rate_limit) since 2026-03-01T12:00:00+00:00"
        ),
        "{rendered}"
    );
    assert!(
        rendered.contains(
            "warning: the pause was until 2030-01-01T00:00:00+00:00, still in the future"
        ),
        "{rendered}"
    );
}

/// `resume` writes through the recoveries' path, not a command's own transition: work among the
/// recoveries (a phase whose declared output is on disk, completed) and the work `--restart`
/// asks for lift the pause as `start` does, with the `unpause` journaled first and said; a dry
/// run writes nothing and says nothing of it.
#[test]
fn work_resume_writes_on_a_paused_workflow_lifts_the_pause_and_says_so() {
    let env = TestEnv::new();
    paused(&env);
    fs::write(env.project().join("a.md"), "the design").unwrap();

    let before = journaled(&env);
    let dry = env.run(&["resume", "--dry-run"]);
    assert_eq!(dry.status.code(), Some(0), "{}", render(&env, &dry));
    assert!(
        !render(&env, &dry).contains("unpaused"),
        "{}",
        render(&env, &dry)
    );
    assert_eq!(journaled(&env), before, "a dry run writes nothing");

    let output = env.run(&["resume"]);
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
    says_unpaused(&rendered);
    assert_eq!(
        ops_after(&env, before),
        ["unpause", "phase_complete", "heartbeat"],
        "the recovery's work, after its unpause"
    );
    assert!(env.state("w")["pause"].is_null());

    pause(&env);
    let before = journaled(&env);
    let output = env.run(&["resume", "--restart", "a", "--format", "json"]);
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
    says_unpaused(&rendered);
    assert_eq!(
        ops_after(&env, before),
        ["unpause", "phase_start", "heartbeat"],
        "{rendered}"
    );
    assert!(env.state("w")["pause"].is_null());
}

/// What is no work (a file to read first, an effect, a note, a decision, a failure) keeps the
/// pause, whichever door it goes through, and nothing is said of a pause.
#[test]
fn writes_that_are_no_work_keep_the_pause_and_say_nothing_of_it() {
    let env = TestEnv::new();
    paused(&env);
    fs::write(env.project().join("notes.md"), "notes").unwrap();
    for args in [
        &["files", "notes.md"][..],
        &["effect", "a", "emailed the customer"],
        &["note", "waiting for the reset"],
        &["decide", "keep going after the reset"],
        &["fail", "a", "--reason", "the limit"],
    ] {
        let before = journaled(&env);
        let output = env.run(args);
        let rendered = render(&env, &output);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {rendered}");
        assert!(!rendered.contains("unpaused"), "{args:?}: {rendered}");
        let ops = ops_after(&env, before);
        assert_eq!(ops.len(), 1, "{args:?}: {ops:?}");
        assert_ne!(ops[0], "unpause", "{args:?}");
        assert_eq!(env.state("w")["pause"]["reason"], "rate_limit", "{args:?}");
    }
}

/// `complete` writes three times (the phase, the checkpoint commit, the snapshot): the pause is
/// lifted once, said once, and the JSON document is the state after the last write.
#[test]
fn complete_on_a_paused_workflow_says_the_unpause_once_and_reports_the_last_state() {
    let env = crate::support::repo();
    paused(&env);
    fs::write(env.project().join("a.md"), "the design").unwrap();
    let before = journaled(&env);
    let output = env.run(&["complete", "a", "--commit", "--format", "json"]);
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
    says_unpaused(&rendered);
    assert_eq!(rendered.matches("unpaused:").count(), 1, "{rendered}");
    let ops = ops_after(&env, before);
    assert_eq!(ops[..2], ["unpause", "phase_complete"], "{ops:?}");
    assert!(ops.contains(&"phase_commit".to_owned()), "{ops:?}");
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        document["workflow"]["seq"],
        env.state("w")["seq"],
        "{rendered}"
    );
    assert!(document["workflow"]["pause"].is_null(), "{rendered}");
    assert!(
        document["checkpoint_commit"]["sha"].is_string(),
        "{rendered}"
    );
}
