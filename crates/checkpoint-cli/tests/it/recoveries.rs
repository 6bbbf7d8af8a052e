//! The recoveries of an interruption are applied once for every command: `checkpoint run` and
//! `checkpoint resume` journal the same entries, and `run --dry-run` plans what the real run
//! does, in every state a run may start from.

use std::{fs, path::PathBuf};

use serde_json::Value;

use crate::support::{TestEnv, bin, render};

/// A stand-in for `claude` whose session does nothing but keep its prompt.
fn idle_claude(env: &TestEnv) -> PathBuf {
    let path = env.dir.path().join("idle-claude");
    fs::write(
        &path,
        "#!/bin/sh\n\
         printf '%s' \"$2\" > \"$(dirname \"$0\")/prompt.txt\"\n\
         echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"sess-1\"}'\n\
         echo '{\"type\":\"result\",\"is_error\":false,\"result\":\"done\"}'\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

/// A Claude Code session ends a turn: its `Stop` hook records a sign of life.
fn session_stop(env: &TestEnv) {
    let payload = serde_json::json!({
        "session_id": "11111111-2222-3333-4444-555555555555",
        "cwd": env.project(),
        "hook_event_name": "Stop",
        "stop_hook_active": false,
    });
    assert_eq!(env.hook("Stop", &payload.to_string()).wait().0, 0);
}

/// The journal's entries after the first `skip` ones, without their time and number.
fn journal_after(env: &TestEnv, skip: usize) -> Vec<Value> {
    env.read("w", "journal.jsonl")
        .lines()
        .skip(skip)
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["transition"].clone())
        .collect()
}

/// One session of `checkpoint run`, with its JSON events.
fn run_once(env: &TestEnv) -> (Option<i32>, Vec<Value>) {
    let output = env
        .cmd()
        .env("CK", bin())
        .args(["run", "--format", "json", "--max-sessions", "1", "--claude"])
        .arg(idle_claude(env))
        .output()
        .unwrap();
    let events = String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|_| panic!("{}", render(env, &output)))
        })
        .collect();
    (output.status.code(), events)
}

/// A phase in progress whose session stopped.
fn in_progress(env: &TestEnv) {
    env.ok(&["init", "w", "--phase", "a", "--phase", "b:a"]);
    env.ok(&["start", "a"]);
    env.ok(&["progress", "a", "half done"]);
    session_stop(env);
}

/// A phase in progress whose session died two hours ago.
fn interrupted(env: &TestEnv) {
    in_progress(env);
    env.set_now("2026-03-01T14:00:00Z");
}

#[test]
fn run_and_resume_journal_the_same_recoveries_after_the_same_interruption() {
    for pause in [None, Some("2026-03-01T13:00:00Z")] {
        let [by_resume, by_run] = [TestEnv::new(), TestEnv::new()];
        for env in [&by_resume, &by_run] {
            in_progress(env);
            // A rate-limit pause (with a time passed, or none) is lifted by the recovery.
            if let Some(until) = pause {
                env.ok(&["pause", "--reason", "rate_limit", "--until", until]);
            } else {
                env.ok(&["pause", "--reason", "rate_limit"]);
            }
            env.set_now("2026-03-01T14:00:00Z");
        }
        let before = by_resume.read("w", "journal.jsonl").lines().count();
        by_resume.ok(&["resume"]);
        let (code, _) = run_once(&by_run);
        assert_eq!(
            code,
            Some(10),
            "one session, then the `--max-sessions` stop"
        );

        let resumed = journal_after(&by_resume, before);
        let ran: Vec<Value> = journal_after(&by_run, before)
            .into_iter()
            .filter(|transition| transition["op"] != "run_start")
            .take(resumed.len())
            .collect();
        let ops: Vec<&str> = resumed.iter().map(|t| t["op"].as_str().unwrap()).collect();
        assert_eq!(
            ops,
            ["unpause", "phase_reset", "heartbeat"],
            "the recovery with its sign of life ({pause:?})"
        );
        assert_eq!(resumed, ran, "the same entries whichever command resumes");
        // The run's (idle) session went on from the recovered state.
        assert_eq!(by_run.state("w")["phases"][0]["status"], "pending");
    }
}

/// The step of `checkpoint run --dry-run`, the phase it names and the command it would run.
fn planned(env: &TestEnv) -> (String, Value, Value) {
    let dry = env.json(&["run", "--dry-run", "--claude", "my-claude"]);
    let step = dry["step"].as_str().unwrap().to_owned();
    (
        step,
        dry["plan"]["next"]["phase"].clone(),
        dry["command"].clone(),
    )
}

/// `arg` quoted for a shell, as the dry run prints it.
fn quoted(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// What the real run did first, and on which phase.
fn done(env: &TestEnv) -> (String, Value) {
    let (_, events) = run_once(env);
    let first = events
        .iter()
        .find(|event| event["event"] != "run_started")
        .expect("an event after the start");
    let step = match first["event"].as_str().unwrap() {
        "session_started" => "session",
        "waiting" => "wait",
        "stopped" => "stop",
        other => panic!("unexpected first event {other}: {events:?}"),
    };
    (step.to_owned(), first["phase"].clone())
}

#[test]
fn dry_run_plans_what_the_real_run_does_in_every_starting_state() {
    type Setup = fn(&TestEnv);
    let states: [(&str, Setup, &str); 6] = [
        (
            "pending",
            |env| {
                env.ok(&["init", "w", "--phase", "a", "--phase", "b:a"]);
            },
            "session",
        ),
        ("in progress with a dead session", interrupted, "session"),
        (
            "paused with no time",
            |env| {
                env.ok(&["init", "w", "--phase", "a"]);
                env.ok(&["pause", "--reason", "rate_limit"]);
            },
            "session",
        ),
        (
            "paused until a time passed",
            |env| {
                env.ok(&["init", "w", "--phase", "a"]);
                env.ok(&[
                    "pause",
                    "--reason",
                    "rate_limit",
                    "--until",
                    "2026-03-01T12:30:00Z",
                ]);
                env.set_now("2026-03-01T14:00:00Z");
            },
            "session",
        ),
        (
            "waiting for approval",
            |env| {
                fs::write(
                env.project().join("plan.json"),
                r#"{"phases": [{"id": "design", "requires_approval": true}, {"id": "build", "dependencies": ["design"]}]}"#,
            )
            .unwrap();
                env.ok(&["init", "w", "--plan", "plan.json"]);
                env.ok(&["start", "design"]);
                env.ok(&["complete", "design"]);
            },
            "stop",
        ),
        (
            "failed with retries left",
            |env| {
                env.ok(&["init", "w", "--phase", "a", "--phase", "b:a"]);
                env.ok(&["start", "a"]);
                env.ok(&["fail", "a", "--reason", "tests failed"]);
            },
            "session",
        ),
    ];
    for (name, setup, expected) in states {
        let env = TestEnv::new();
        setup(&env);
        let journal = env.read("w", "journal.jsonl");
        let (step, phase, command) = planned(&env);
        assert_eq!(
            env.read("w", "journal.jsonl"),
            journal,
            "{name}: a dry run writes nothing"
        );
        assert_eq!(step, expected, "{name}: the dry run's step");
        assert_eq!(
            done(&env),
            (step, phase),
            "{name}: the real run did as planned"
        );
        // The session was given the very prompt the dry run showed.
        let prompt = fs::read_to_string(env.dir.path().join("prompt.txt")).ok();
        match (command.as_str(), prompt) {
            (Some(command), Some(prompt)) => assert!(
                command.starts_with(&format!("my-claude -p {} ", quoted(&prompt))),
                "{name}: the dry run's command\n{command}\nand the session's prompt\n{prompt}"
            ),
            (None, None) => {}
            other => panic!("{name}: a session in one run only: {other:?}"),
        }
    }
}
