//! The rules of phase and task transitions as the commands apply them: what is refused, what
//! is warned about, `max_in_progress`, and how work on a paused workflow lifts the pause.

use std::fs;

use crate::support::{TestEnv, render};

#[test]
fn tasks_finish_only_in_a_phase_in_progress_and_done_tasks_do_not_fail() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a", "--phase", "b:a"]);
    env.ok(&["task", "add", "a", "t1"]);
    env.ok(&["task", "add", "b", "t2"]);
    let journal = env.read("w", "journal.jsonl");
    // A pending phase, and a phase blocked by its dependency.
    for args in [["task", "done", "a", "t1"], ["task", "done", "b", "t2"]] {
        let output = env.snapshot(&args);
        assert!(output.starts_with("exit status: 3"), "{args:?}\n{output}");
        assert!(output.contains("start the phase first"), "{output}");
    }
    assert_eq!(
        env.read("w", "journal.jsonl"),
        journal,
        "a refusal writes nothing"
    );
    env.ok(&["start", "a"]);
    env.ok(&["task", "done", "a", "t1"]);
    let output = env.snapshot(&["task", "fail", "a", "t1", "--reason", "late"]);
    assert!(output.starts_with("exit status: 3"), "{output}");
    assert!(output.contains("task `t1` is already done"), "{output}");
    assert_eq!(env.state("w")["phases"][0]["tasks"][0]["status"], "done");
}

#[test]
fn a_missing_artifact_is_warned_about_at_complete() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a", "--phase", "b"]);
    env.ok(&["start", "a"]);
    fs::write(env.project().join("here.md"), "x").unwrap();
    let output = env.run(&[
        "--format",
        "json",
        "complete",
        "a",
        "--artifact",
        "here.md",
        "--artifact",
        "gone.md",
    ]);
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
    assert!(
        rendered.contains("warning: artifact `gone.md` does not exist"),
        "{rendered}"
    );
    assert!(!rendered.contains("artifact `here.md`"), "{rendered}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        report["warnings"],
        serde_json::json!([
            "artifact `gone.md` does not exist; `checkpoint resume` will ask about it"
        ])
    );
    // Without a missing artifact there is no `warnings` field.
    env.ok(&["start", "b"]);
    let report = env.json(&["complete", "b", "--artifact", "here.md"]);
    assert!(report.get("warnings").is_none(), "{report}");
}

#[test]
fn max_in_progress_is_enforced_on_start_and_in_the_plan() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a", "--phase", "b", "--phase", "c"]);
    fs::write(env.store().join("config.toml"), "max_in_progress = 1\n").unwrap();
    let plan = env.json(&["resume", "--dry-run"]);
    assert_eq!(plan["plan"]["next"]["phase"], "a");
    let parallel = |plan: &serde_json::Value| plan["plan"]["next"]["parallel"].clone();
    assert!(
        parallel(&plan).as_array().is_none_or(Vec::is_empty),
        "one at a time: nothing runs beside the next phase: {plan}"
    );
    env.ok(&["start", "a"]);
    let journal = env.read("w", "journal.jsonl");
    let output = env.snapshot(&["start", "b"]);
    assert!(output.starts_with("exit status: 3"), "{output}");
    assert!(
        output.contains("`max_in_progress` is 1, and phase `a` is in progress"),
        "{output}"
    );
    assert_eq!(
        env.read("w", "journal.jsonl"),
        journal,
        "a refusal writes nothing"
    );
    env.ok(&["start", "b", "--force"]);

    // Two at a time: one phase runs beside the next.
    fs::write(env.store().join("config.toml"), "max_in_progress = 2\n").unwrap();
    env.ok(&["init", "v", "--phase", "a", "--phase", "b", "--phase", "c"]);
    let plan = env.json(&["--workflow", "v", "resume", "--dry-run"]);
    assert_eq!(parallel(&plan), serde_json::json!(["b"]), "{plan}");
}

#[test]
fn work_on_a_paused_workflow_lifts_the_pause_as_a_journaled_transition_and_says_so() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&["start", "a"]);
    env.ok(&[
        "pause",
        "--reason",
        "rate_limit",
        "--until",
        "2030-01-01T00:00:00Z",
    ]);
    let output = env.run(&["progress", "a", "halfway"]);
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
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
    let journal = env.read("w", "journal.jsonl");
    let kinds: Vec<String> = journal
        .lines()
        .map(|line| {
            let entry: serde_json::Value = serde_json::from_str(line).unwrap();
            entry["transition"]["op"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(
        kinds[kinds.len() - 2..],
        ["unpause", "phase_progress"],
        "{journal}"
    );
    assert!(env.state("w")["pause"].is_null());
    // Without a pause, nothing is said and nothing extra is journaled.
    let output = env.run(&["progress", "a", "more"]);
    assert!(!String::from_utf8_lossy(&output.stderr).contains("unpaused"));
    assert_eq!(
        env.read("w", "journal.jsonl").lines().count(),
        kinds.len() + 1
    );
}

/// `complete` needs what the hooks need to complete a phase: every declared output written since
/// the phase started. Missing, empty or older is refused (exit 3, named) unless `--force`.
#[test]
fn complete_refuses_a_phase_whose_declared_outputs_are_not_its_work() {
    let env = TestEnv::new();
    fs::write(
        env.project().join("plan.json"),
        r#"{"phases": [{"id": "a", "outputs": ["out/a.md", "b.md"]}]}"#,
    )
    .unwrap();
    env.ok(&["init", "w", "--plan", "plan.json"]);
    env.ok(&["start", "a"]);
    let project = env.project();
    fs::create_dir_all(project.join("out")).unwrap();
    fs::write(project.join("b.md"), "done").unwrap();
    let old = || {
        fs::File::options()
            .write(true)
            .open(project.join("out/a.md"))
            .unwrap()
            .set_modified(
                std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000),
            )
            .unwrap();
    };
    for (prepare, why) in [
        (None, "missing"),
        (Some(""), "empty"),
        (Some("old"), "older than the phase's start"),
    ] {
        if let Some(text) = prepare {
            fs::write(project.join("out/a.md"), text).unwrap();
            if text == "old" {
                old();
            }
        }
        let output = env.snapshot(&["complete", "a"]);
        assert!(output.starts_with("exit status: 3"), "{why}: {output}");
        assert!(output.contains(&format!("`out/a.md` ({why})")), "{output}");
        assert!(
            !output.contains("b.md"),
            "a done output is not named: {output}"
        );
        assert!(output.contains("--force"), "{output}");
        assert_eq!(env.state("w")["phases"][0]["status"], "in_progress");
    }
    // Forced, it completes, and `validate` says what is missing.
    fs::remove_file(project.join("out/a.md")).unwrap();
    env.ok(&["complete", "a", "--force"]);
    assert_eq!(env.run(&["validate"]).status.code(), Some(8));
    // Written since the start, it completes.
    env.ok(&["start", "a", "--force"]);
    fs::write(project.join("out/a.md"), "done").unwrap();
    env.ok(&["complete", "a"]);
    env.ok(&["validate"]);
}
