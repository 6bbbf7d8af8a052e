//! `checkpoint resume` and `checkpoint validate`: one test per recovery scenario of the seeds,
//! checking the plan (JSON), the state written afterwards, and the human and prompt renderings.

use std::fs;

use insta::assert_snapshot;
use serde_json::Value;

use crate::support::{TestEnv, git};

fn plan(env: &TestEnv, args: &[&str]) -> Value {
    let mut all = vec!["resume"];
    all.extend_from_slice(args);
    let report = env.json(&all);
    assert_eq!(report["version"], 1);
    report
}

fn four_phases(env: &TestEnv) {
    env.ok(&[
        "init",
        "payments",
        "--title",
        "Payments",
        "--phase",
        "design",
        "--phase",
        "build:design",
        "--phase",
        "docs:design",
        "--phase",
        "ship:build,docs",
    ]);
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

fn write_plan(env: &TestEnv, plan: &str) {
    fs::write(env.project().join("plan.json"), plan).unwrap();
    env.ok(&["init", "w", "--plan", "plan.json"]);
}

#[test]
fn orphaned_phase_goes_back_to_pending_with_its_progress() {
    let env = TestEnv::new();
    four_phases(&env);
    env.ok(&["start", "design"]);
    env.ok(&["complete", "design"]);
    env.ok(&["start", "build"]);
    env.ok(&["progress", "build", "auth done, starting billing"]);
    env.ok(&["decide", "REST over GraphQL"]);
    session_stop(&env);
    env.set_now("2026-03-01T14:00:00Z");

    let dry = plan(&env, &["--dry-run"]);
    assert_eq!(dry["applied"], false);
    assert_eq!(dry["plan"]["recoveries"][0]["code"], "orphaned_phase");
    assert_eq!(
        env.state("payments")["phases"][1]["status"],
        "in_progress",
        "a dry run writes nothing"
    );

    assert_snapshot!(env.snapshot(&["resume"]), @r"
    exit status: 0
    ----- stdout -----
    payments — Payments  in progress
    1 of 4 phases done · last active 2 hours ago (2026-03-01 12:00 UTC)

    Recovered after the interruption:
      • phase `build` was in progress when the session stopped: back to pending for attempt 2, keeping its progress note

    ✓ design  2 hours ago
    · build  ready — earlier progress: auth done, starting billing
    · docs  ready
    · ship  blocked by build, docs

    Next: phase `build` is ready; an earlier attempt noted: auth done, starting billing
      run: checkpoint start build
      also ready (can run in parallel): docs
    ----- stderr -----
    ");
    let state = env.state("payments");
    assert_eq!(state["phases"][1]["status"], "pending");
    assert_eq!(
        state["phases"][1]["progress"],
        "auth done, starting billing"
    );
    env.ok(&["start", "build"]);
    assert_eq!(env.state("payments")["phases"][1]["attempts"], 2);
}

#[test]
fn running_task_without_output_is_orphaned_and_with_output_is_done() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "impl"]);
    env.ok(&["task", "add", "impl", "task-001", "--output", "out/1.json"]);
    env.ok(&["task", "add", "impl", "task-002", "--output", "out/2.json"]);
    env.ok(&["task", "start", "impl", "task-001"]);
    env.ok(&["task", "start", "impl", "task-002"]);
    // Scenario 2: the work finished but the state update did not happen.
    fs::create_dir_all(env.project().join("out")).unwrap();
    fs::write(env.project().join("out/2.json"), "{\"status\": \"done\"}").unwrap();
    // The tasks were started from the terminal and no session took them up: the finished one is
    // recorded, the other is left running.
    let live = plan(&env, &["--dry-run"]);
    let codes: Vec<&str> = live["plan"]["recoveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["task_output_present"]);
    session_stop(&env);
    env.set_now("2026-03-01T13:00:00Z");
    let report = plan(&env, &[]);
    let codes: Vec<&str> = report["plan"]["recoveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        ["orphaned_task", "task_output_present"],
        "the phase goes on with its tasks"
    );
    let state = env.state("w");
    let tasks = &state["phases"][0]["tasks"];
    assert_eq!(state["phases"][0]["status"], "in_progress");
    assert_eq!(tasks[0]["status"], "pending");
    assert_eq!(tasks[0]["attempts"], 1);
    assert_eq!(tasks[1]["status"], "done");
    let next = &report["plan"]["next"];
    assert_eq!(next["action"], "continue");
    assert_eq!(next["phase"], "impl");
    assert_eq!(next["task"], "task-001", "the orphaned task is named");
    assert!(
        next["reason"]
            .as_str()
            .unwrap()
            .contains("next: task `task-001` (attempt 2)"),
        "{next}"
    );
}

#[test]
fn phase_whose_declared_outputs_exist_is_completed() {
    let env = TestEnv::new();
    write_plan(
        &env,
        r#"{"phases": [{"id": "requirements", "outputs": ["memory/reports/demand.json"]}, {"id": "architecture", "dependencies": ["requirements"]}]}"#,
    );
    env.ok(&["start", "requirements"]);
    fs::create_dir_all(env.project().join("memory/reports")).unwrap();
    fs::write(env.project().join("memory/reports/demand.json"), "{}").unwrap();
    let report = plan(&env, &[]);
    assert_eq!(
        report["plan"]["recoveries"][0]["code"],
        "phase_output_present"
    );
    assert_eq!(report["plan"]["next"]["phase"], "architecture");
    let state = env.state("w");
    assert_eq!(state["phases"][0]["status"], "complete");
    assert_eq!(
        state["phases"][0]["artifacts"][0]["path"],
        "memory/reports/demand.json"
    );
}

#[test]
fn approval_gate_is_never_rerun() {
    let env = TestEnv::new();
    write_plan(
        &env,
        r#"{"phases": [{"id": "architecture", "requires_approval": true}, {"id": "implementation", "dependencies": ["architecture"]}]}"#,
    );
    env.ok(&["start", "architecture"]);
    env.ok(&["complete", "architecture"]);
    let report = plan(&env, &[]);
    assert_eq!(report["plan"]["recoveries"], serde_json::json!([]));
    assert_eq!(report["plan"]["next"]["action"], "approve");
    assert_eq!(
        report["plan"]["next"]["command"],
        "checkpoint approve architecture"
    );
    assert_eq!(report["plan"]["decision_required"], true);
    assert_eq!(env.state("w")["phases"][0]["status"], "awaiting_approval");
    assert_snapshot!(env.ok(&["resume", "--format", "prompt"]), @r#"
    ## checkpoint: workflow `w`
    Status: awaiting approval · 0 of 2 phases done · last active just now (2026-03-01 12:00 UTC)

    **Next:** phase `architecture` is done and waits at its approval gate; ask the user, do not redo the work → `checkpoint approve architecture`
    **Ask the user before continuing:** this needs a person's decision.

    Awaiting approval:
    - `architecture` (approve: `checkpoint approve architecture`)
    Blocked:
    - `implementation` (waits for `architecture`)

    Record state with the `checkpoint` MCP tools when they are present (`start`, `progress`, `complete`, `decide`), else with the `checkpoint` CLI, never by editing its JSON: `checkpoint start <phase>`, `checkpoint progress <phase> "<note>"`, `checkpoint complete <phase> --artifact <path>`, `checkpoint decide "<decision>"`.
    "#);
}

#[test]
fn failed_step_goes_back_to_its_on_failure_phase() {
    let env = TestEnv::new();
    write_plan(
        &env,
        r#"{"phases": [{"id": "implement"}, {"id": "review", "dependencies": ["implement"], "on_failure": "implement"}, {"id": "docs", "dependencies": ["review"]}]}"#,
    );
    env.ok(&["start", "implement"]);
    env.ok(&["complete", "implement"]);
    env.set_now("2026-03-01T12:10:00Z");
    env.ok(&["start", "review"]);
    env.ok(&[
        "fail",
        "review",
        "--reason",
        "NEEDS_REVISION: input validation missing",
    ]);
    let report = plan(&env, &[]);
    assert_eq!(report["plan"]["next"]["action"], "rollback");
    assert_eq!(report["plan"]["next"]["phase"], "implement");
    assert_eq!(
        report["plan"]["next"]["command"],
        "checkpoint start implement --force"
    );
    // Once the rollback is under way, the redone phase is the work.
    env.set_now("2026-03-01T12:20:00Z");
    env.ok(&["start", "implement", "--force"]);
    assert_eq!(
        plan(&env, &["--dry-run"])["plan"]["next"]["phase"],
        "implement"
    );
    env.ok(&["complete", "implement"]);
    let report = plan(&env, &[]);
    assert_eq!(report["plan"]["next"]["action"], "retry");
    assert_eq!(report["plan"]["next"]["phase"], "review");
}

#[test]
fn failed_step_without_on_failure_is_retried() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&["start", "a"]);
    env.ok(&["fail", "a", "--reason", "tests red"]);
    let report = plan(&env, &[]);
    assert_eq!(report["plan"]["next"]["action"], "retry");
    assert_eq!(report["plan"]["next"]["command"], "checkpoint start a");
    assert_eq!(report["plan"]["decision_required"], false);
}

#[test]
fn repeated_failure_stops_for_a_human() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    for _ in 0..3 {
        env.ok(&["start", "a"]);
        env.ok(&["fail", "a", "--reason", "NEEDS_REVISION"]);
    }
    let report = plan(&env, &[]);
    assert_eq!(report["plan"]["next"]["action"], "decide");
    assert_eq!(report["plan"]["decision_required"], true);
    assert_eq!(
        report["plan"]["findings"][0]["code"],
        "phase.repeated_failure"
    );
    assert_eq!(
        env.run(&["start", "a"]).status.code(),
        Some(3),
        "the automatic path is closed"
    );
    // A lower limit from config.toml applies too.
    let env = TestEnv::new();
    fs::create_dir_all(env.store()).unwrap();
    fs::write(env.store().join("config.toml"), "max_attempts = 1\n").unwrap();
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&["start", "a"]);
    env.ok(&["fail", "a", "--reason", "x"]);
    assert_eq!(plan(&env, &[])["plan"]["next"]["action"], "decide");
}

#[test]
fn replan_limit_stops_for_a_human() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    let dir = env.workflow_dir("w");
    let mut state = env.state("w");
    state["phases"][0]["replan_count"] = 3.into();
    // An imported state may carry replans; the store takes it as written by a snapshot.
    fs::write(
        dir.join("state.json"),
        serde_json::to_string_pretty(&state).unwrap(),
    )
    .unwrap();
    let report = plan(&env, &["--dry-run"]);
    assert_eq!(report["plan"]["next"]["action"], "decide");
    assert!(
        report["plan"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "phase.replan_limit")
    );
}

#[test]
fn stale_state_is_flagged_and_fresh_archives_it() {
    let env = TestEnv::new();
    four_phases(&env);
    env.ok(&["start", "design"]);
    env.set_now("2026-03-12T12:00:00Z");
    let report = plan(&env, &["--dry-run"]);
    let stale = report["plan"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "state.stale")
        .unwrap()
        .clone();
    assert_eq!(stale["severity"], "warning");
    assert_eq!(report["plan"]["decision_required"], true);
    let fresh = plan(&env, &["--fresh"]);
    assert_eq!(fresh["applied"], true);
    assert!(
        fresh["archived_to"]
            .as_str()
            .unwrap()
            .ends_with(".archive/payments_20260312_120000")
    );
    assert!(
        env.store()
            .join(".archive/payments_20260312_120000/journal.jsonl")
            .exists(),
        "nothing is deleted"
    );
    let state = env.state("payments");
    assert_eq!(state["phases"][0]["status"], "pending");
    assert_eq!(state["title"], "Payments");
}

#[test]
fn corrupt_state_needs_confirmation() {
    let env = TestEnv::new();
    four_phases(&env);
    env.ok(&["start", "design"]);
    let dir = env.workflow_dir("w").with_file_name("payments");
    fs::write(dir.join("state.json"), "{ not json").unwrap();
    let report = plan(&env, &[]);
    assert_eq!(report["applied"], false);
    assert_eq!(report["plan"]["next"]["action"], "confirm");
    assert_eq!(report["plan"]["next"]["command"], "checkpoint resume --yes");
    assert_eq!(
        fs::read_to_string(dir.join("state.json")).unwrap(),
        "{ not json",
        "nothing is written before the user confirms"
    );
    let confirmed = plan(&env, &["--yes"]);
    assert_eq!(confirmed["applied"], true);
    assert!(dir.join("state.json.corrupt-20260301T120000.000Z").exists());
    assert_eq!(
        env.state("payments")["phases"][0]["status"],
        "in_progress",
        "a phase started a moment ago is live, not interrupted"
    );
}

#[test]
fn paused_workflow_says_when_it_can_continue() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&[
        "pause",
        "--reason",
        "rate_limit",
        "--until",
        "2026-03-01T13:00:00Z",
    ]);
    let report = plan(&env, &[]);
    assert_eq!(report["plan"]["next"]["action"], "wait");
    assert_eq!(report["plan"]["paused_until"], "2026-03-01T13:00:00Z");
    env.set_now("2026-03-01T13:30:00Z");
    let report = plan(&env, &[]);
    assert_eq!(report["plan"]["recoveries"][0]["code"], "pause_expired");
    assert_eq!(report["plan"]["next"]["action"], "start");
    assert!(env.state("w").get("pause").is_none());
}

#[test]
fn restart_and_abandon_choices() {
    let env = TestEnv::new();
    four_phases(&env);
    env.ok(&["start", "design"]);
    env.ok(&["complete", "design"]);
    let report = plan(&env, &["--restart", "design"]);
    assert_eq!(report["plan"]["in_progress"][0]["id"], "design");
    assert_eq!(env.state("payments")["phases"][0]["attempts"], 2);
    plan(&env, &["--abandon"]);
    assert_eq!(env.state("payments")["status"], "abandoned");
    assert_eq!(
        plan(&env, &[])["plan"],
        Value::Null,
        "an abandoned workflow is not offered again"
    );
}

#[test]
fn nothing_to_resume_and_several_to_choose_from() {
    let env = TestEnv::new();
    assert_snapshot!(env.snapshot(&["resume"]), @r"
    exit status: 0
    ----- stdout -----
    No interrupted workflow in `[TEMP]/project/.claude/checkpoints`: nothing to resume.
    Start one with `checkpoint init <id> --phase <id>` (can be repeated).
    ----- stderr -----
    ");
    env.ok(&["init", "one", "--phase", "a"]);
    env.set_now("2026-03-01T12:05:00Z");
    env.ok(&["init", "two", "--phase", "a"]);
    let output = env.snapshot(&["resume"]);
    assert!(output.starts_with("exit status: 4"), "{output}");
    let two = output
        .find("1. two (0 of 1 phase done, just now)")
        .expect(&output);
    let one = output
        .find("2. one (0 of 1 phase done, 5 minutes ago)")
        .expect(&output);
    assert!(two < one, "{output}");
    assert!(
        output.contains("checkpoint resume --workflow <id>"),
        "{output}"
    );
}

#[test]
fn prompt_respects_its_budget() {
    let env = TestEnv::new();
    let phases: Vec<String> = (0..200).map(|i| format!("phase-{i:03}")).collect();
    let mut args = vec!["init", "big"];
    for phase in &phases {
        args.extend(["--phase", phase.as_str()]);
    }
    env.ok(&args);
    for i in 0..40 {
        env.ok(&[
            "decide",
            &format!("decision number {i} with some words to take room"),
        ]);
    }
    let prompt = env.ok(&[
        "resume",
        "--format",
        "prompt",
        "--budget",
        "900",
        "--dry-run",
    ]);
    assert!(prompt.len() <= 900, "{} bytes", prompt.len());
    assert!(
        prompt.contains("**Next:** phase `phase-000` is ready"),
        "{prompt}"
    );
    assert!(prompt.contains("cut to fit"), "{prompt}");
}

#[test]
fn validate_reports_files_git_and_journal() {
    let env = TestEnv::new();
    git(&env.project(), &["init", "-q", "-b", "main"]);
    git(
        &env.project(),
        &["commit", "-q", "--allow-empty", "-m", "start"],
    );
    write_plan(
        &env,
        r#"{"phases": [{"id": "a", "outputs": ["a.md"]}, {"id": "b", "dependencies": ["a"]}]}"#,
    );
    fs::write(env.project().join("a.md"), "done").unwrap();
    env.ok(&["start", "a"]);
    env.ok(&[
        "complete",
        "a",
        "--artifact",
        "a.md",
        "--commit-sha",
        "0123456789abcdef0123456789abcdef01234567",
    ]);
    // A squash merge or a rebase loses the commit, not the work: with `a.md` there, a warning.
    let validate = |env: &TestEnv| -> Value {
        let report = env
            .cmd()
            .args(["--format", "json", "validate"])
            .output()
            .unwrap();
        serde_json::from_slice(&report.stdout).unwrap()
    };
    assert_eq!(env.run(&["validate"]).status.code(), Some(0));
    let report = validate(&env);
    assert_eq!(report["valid"], true);
    let findings: Vec<(&str, &str)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["severity"].as_str().unwrap(), f["code"].as_str().unwrap()))
        .collect();
    assert_eq!(findings, [("warning", "git.commit_missing")]);
    let next = &plan(&env, &["--dry-run"])["plan"]["next"];
    assert_eq!(next["action"], "start", "the plan goes on: {next}");
    assert_eq!(next["phase"], "b");
    // Without the work, a person decides.
    fs::remove_file(env.project().join("a.md")).unwrap();
    assert_eq!(env.run(&["validate"]).status.code(), Some(8));
    let report = validate(&env);
    assert_eq!(report["valid"], false);
    let codes: Vec<(&str, &str)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["severity"].as_str().unwrap(), f["code"].as_str().unwrap()))
        .collect();
    assert_eq!(
        codes,
        [
            ("error", "artifact.missing"),
            ("error", "output.missing"),
            ("error", "git.commit_missing")
        ]
    );
    let next = &plan(&env, &["--dry-run"])["plan"]["next"];
    assert_eq!(next["action"], "decide", "{next}");

    let env = TestEnv::new();
    git(&env.project(), &["init", "-q", "-b", "main"]);
    write_plan(&env, r#"{"phases": [{"id": "a", "outputs": ["a.md"]}]}"#);
    env.ok(&["start", "a"]);
    env.ok(&["complete", "a", "--force"]);
    git(&env.project(), &["checkout", "-q", "-b", "other"]);
    let journal = env.workflow_dir("w").join("journal.jsonl");
    let text = fs::read_to_string(&journal).unwrap();
    let output = env.snapshot(&["validate"]);
    assert!(output.starts_with("exit status: 8"), "{output}");
    assert!(
        output.contains(
            "error [output.missing] declared output `a.md` of completed phase `a` does not exist"
        ),
        "{output}"
    );
    assert!(output.contains("warning [git.branch_changed] the workflow started on branch `main` but `other` is checked out"), "{output}");
    fs::write(env.project().join("a.md"), "").unwrap();
    let lines: Vec<&str> = text.lines().take(2).collect();
    fs::write(&journal, format!("{}\n", lines.join("\n"))).unwrap();
    let output = env.snapshot(&["validate"]);
    assert!(output.contains("warning [output.empty]"), "{output}");
    assert!(output.contains("warning [journal.behind]"), "{output}");
    assert!(output.contains("error [journal.mismatch]"), "{output}");
}

#[test]
fn list_finds_workflows_in_every_worktree() {
    let env = TestEnv::bare();
    git(&env.project(), &["init", "-q", "-b", "main"]);
    git(
        &env.project(),
        &["commit", "-q", "--allow-empty", "-m", "start"],
    );
    let other = env.dir.path().join("feature-tree");
    git(
        &env.project(),
        &[
            "worktree",
            "add",
            "-q",
            other.to_str().unwrap(),
            "-b",
            "feature",
        ],
    );
    env.ok(&["init", "main-work", "--phase", "a"]);
    let output = env
        .cmd()
        .args(["init", "feature-work", "--phase", "a", "--phase", "b:a"])
        .current_dir(&other)
        .output()
        .unwrap();
    assert!(output.status.success());
    let list = env.json(&["list"]);
    let ids: Vec<&str> = list["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{list}");
    assert!(
        ids.contains(&"feature-work") && ids.contains(&"main-work"),
        "{list}"
    );
    // From inside the linked worktree, the main one is found too.
    let output = env
        .cmd()
        .args(["--format", "json", "list"])
        .current_dir(&other)
        .output()
        .unwrap();
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(list["workflows"].as_array().unwrap().len(), 2, "{list}");
    // `--all` walks directories that are not worktrees.
    let nested = env.project().join("vendor/tool");
    fs::create_dir_all(&nested).unwrap();
    env.cmd()
        .args(["init", "nested", "--phase", "a"])
        .env("CHECKPOINT_DIR", nested.join(".claude/checkpoints"))
        .output()
        .unwrap();
    assert_eq!(
        env.json(&["list"])["workflows"].as_array().unwrap().len(),
        2
    );
    assert_eq!(
        env.json(&["list", "--all"])["workflows"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn commits_are_checked_together() {
    let env = TestEnv::new();
    fs::remove_dir_all(env.project().join(".git")).unwrap();
    git(&env.project(), &["init", "-q", "-b", "main"]);
    git(
        &env.project(),
        &["commit", "-q", "--allow-empty", "-m", "start"],
    );
    let head = String::from_utf8(
        std::process::Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(env.project())
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    env.ok(&["init", "w", "--phase", "a", "--phase", "b", "--phase", "c"]);
    for (phase, sha) in [
        ("a", head.trim()),
        ("b", "0123456789abcdef0123456789abcdef01234567"),
        ("c", &head.trim()[..7]),
    ] {
        env.ok(&["complete", phase, "--commit-sha", sha]);
    }
    let report = env
        .cmd()
        .args(["--format", "json", "validate"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    let missing: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "git.commit_missing")
        .map(|f| f["phase"].as_str().unwrap())
        .collect();
    assert_eq!(missing, ["b"], "{report}");
}

#[test]
fn a_long_list_of_ready_phases_is_cut_with_a_count() {
    let env = TestEnv::new();
    let mut args = vec!["init".to_owned(), "w".to_owned()];
    for i in 0..40 {
        args.extend(["--phase".to_owned(), format!("p{i:02}")]);
    }
    env.ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let plan = env.ok(&["resume", "--dry-run"]);
    let line = plan
        .lines()
        .find(|line| line.contains("also ready"))
        .unwrap_or_else(|| panic!("{plan}"));
    assert!(line.ends_with("p12 and 27 more"), "{line}");
    assert!(!line.contains("p13"), "{line}");
}

#[test]
fn resume_of_a_name_that_matches_nothing_is_not_found() {
    let env = TestEnv::new();
    env.ok(&["init", "real", "--phase", "a"]);
    env.ok(&["init", "other", "--phase", "a"]);
    env.ok(&["--workflow", "other", "start", "a"]);
    let journal = env.read("other", "journal.jsonl");
    for args in [
        &["resume", "nosuchwf"][..],
        &["resume", "nosuchwf", "--dry-run"],
    ] {
        let output = env.snapshot(args);
        assert!(output.starts_with("exit status: 4"), "{args:?}\n{output}");
        assert!(output.contains("nosuchwf"), "{output}");
        // The workflows there are, so the user can pick one.
        assert!(
            output.contains("`real`") && output.contains("`other`"),
            "{output}"
        );
        assert!(
            !output.contains("choosing as if none was named"),
            "{output}"
        );
    }
    assert_eq!(
        env.read("other", "journal.jsonl"),
        journal,
        "nothing was applied"
    );
    // Named, a workflow is resumed as before.
    env.ok(&["resume", "real", "--dry-run"]);
}

/// A finished workflow `w`: `a`, then `b` after `a`, then `c` after `b`, and `d` on its own.
fn finished_chain() -> TestEnv {
    let env = TestEnv::new();
    env.ok(&[
        "init", "w", "--phase", "a", "--phase", "b:a", "--phase", "c:b", "--phase", "d",
    ]);
    for phase in ["a", "b", "c", "d"] {
        env.ok(&["start", phase]);
        env.ok(&["complete", phase]);
    }
    env
}

#[test]
fn restarting_a_phase_sends_its_finished_dependants_back_to_pending() {
    let env = finished_chain();
    let output = env.snapshot(&["resume", "--restart", "a"]);
    assert!(output.starts_with("exit status: 0"), "{output}");
    assert!(!output.contains("nothing to resume"), "{output}");
    // The output names the dependants it sent back.
    assert!(
        output.contains("`b`") && output.contains("`c`") && output.contains("back to pending"),
        "{output}"
    );
    let state = env.state("w");
    let status = |id: &str| {
        state["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|phase| phase["id"] == id)
            .unwrap()["status"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(status("a"), "in_progress");
    assert_eq!(status("b"), "pending");
    assert_eq!(status("c"), "pending");
    // A phase that does not depend on `a` keeps its work.
    assert_eq!(status("d"), "complete");
    // Journaled: one reset per dependant, before the restart.
    let journal = env.read("w", "journal.jsonl");
    let ops: Vec<String> = journal
        .lines()
        .map(|line| {
            let entry: Value = serde_json::from_str(line).unwrap();
            format!(
                "{} {}",
                entry["transition"]["op"].as_str().unwrap(),
                entry["transition"]["phase"].as_str().unwrap_or("")
            )
        })
        .collect();
    let tail = &ops[ops.len() - 4..];
    assert_eq!(
        tail,
        [
            "phase_reset b",
            "phase_reset c",
            "phase_start a",
            "heartbeat "
        ],
        "{ops:?}"
    );
    // Never a state that `validate` rejects.
    env.ok(&["validate"]);
    // The JSON document lists them too.
    let env = finished_chain();
    let report = env.json(&["resume", "--restart", "b"]);
    assert_eq!(report["reset"], serde_json::json!(["c"]));
    assert_eq!(report["applied"], true);
}

#[test]
fn resume_restart_without_an_interrupted_workflow_acts_on_the_one_named_or_the_only_one() {
    let env = finished_chain();
    // Named.
    env.ok(&["resume", "w", "--restart", "d"]);
    assert_eq!(env.state("w")["phases"][3]["status"], "in_progress");
    env.ok(&["complete", "d"]);
    // The only one, unnamed.
    env.ok(&["resume", "--restart", "d"]);
    assert_eq!(env.state("w")["phases"][3]["status"], "in_progress");
    env.ok(&["complete", "d"]);
    // With two finished workflows and no name: ambiguous, exit 4, nothing written.
    env.ok(&["init", "v", "--phase", "x"]);
    env.ok(&["--workflow", "v", "skip", "x"]);
    let journal = env.read("w", "journal.jsonl");
    let output = env.snapshot(&["resume", "--restart", "d"]);
    assert!(output.starts_with("exit status: 4"), "{output}");
    assert!(output.contains("`v`") || output.contains(" v "), "{output}");
    assert!(!output.contains("nothing to resume"), "{output}");
    assert_eq!(env.read("w", "journal.jsonl"), journal);
    // A phase the named workflow lacks: exit 4.
    let output = env.snapshot(&["resume", "w", "--restart", "nosuch"]);
    assert!(output.starts_with("exit status: 4"), "{output}");
    // No workflow at all: exit 4.
    let empty = TestEnv::new();
    let output = empty.snapshot(&["resume", "--restart", "a"]);
    assert!(output.starts_with("exit status: 4"), "{output}");
}

#[test]
fn an_output_older_than_its_phase_does_not_complete_it() {
    let env = TestEnv::new();
    let plan = env.dir.path().join("plan.json");
    fs::write(
        &plan,
        serde_json::json!({"phases": [{"id": "a", "outputs": ["a.md"]}, {"id": "b", "dependencies": ["a"]}]}).to_string(),
    )
    .unwrap();
    env.ok(&["init", "w", "--plan", plan.to_str().unwrap()]);
    // The file was there long before the phase started (at the fixed clock, 2026-03-01 12:00).
    let file = env.project().join("a.md");
    fs::write(&file, "an old file").unwrap();
    let set_modified = |unix: u64| {
        fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix))
            .unwrap();
    };
    set_modified(1_700_000_000);
    env.ok(&["start", "a"]);
    let completes = || {
        let report = env.json(&["resume", "--dry-run"]);
        report["plan"]["recoveries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|recovery| recovery["code"] == "phase_output_present")
    };
    // Neither resume's output check nor the hook completes the phase.
    assert!(!completes());
    let payload = serde_json::json!({
        "session_id": "11111111-2222-3333-4444-555555555555",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": env.project(),
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": file, "content": "x"},
        "tool_response": {"type": "update"},
    })
    .to_string();
    assert_eq!(env.hook("PostToolUse", &payload).wait().0, 0);
    assert_eq!(env.state("w")["phases"][0]["status"], "in_progress");
    // Written after the phase started (2026-03-01 13:00), it counts, for both.
    set_modified(1_772_370_000);
    assert!(completes());
    assert_eq!(env.hook("PostToolUse", &payload).wait().0, 0);
    assert_eq!(env.state("w")["phases"][0]["status"], "complete");
}

#[test]
fn a_plan_of_many_phases_is_cut_with_counts() {
    let env = TestEnv::new();
    let phases: Vec<Value> = (0..300)
        .map(|i| match i {
            0..200 => serde_json::json!({"id": format!("p{i}")}),
            _ => serde_json::json!({"id": format!("p{i}"), "dependencies": ["p0"]}),
        })
        .collect();
    let plan = env.dir.path().join("plan.json");
    fs::write(&plan, serde_json::json!({ "phases": phases }).to_string()).unwrap();
    env.ok(&["init", "w", "--plan", plan.to_str().unwrap()]);
    let output = env.ok(&["resume", "--dry-run"]);
    assert!(output.lines().count() < 130, "{output}");
    assert!(output.contains("… and 150 more ready"), "{output}");
    assert!(output.contains("… and 50 more blocked"), "{output}");
    assert!(output.contains("p12 and 187 more"), "{output}");
    // `status` still lists every phase.
    assert!(env.ok(&["status"]).contains("p299"));
}

/// A diamond: `a`; `b` and `c` after `a` (`b` going back to `a` when it fails); `d` after `c`.
fn diamond_with_b_failed() -> TestEnv {
    let env = TestEnv::new();
    write_plan(
        &env,
        r#"{"phases": [{"id": "a"}, {"id": "b", "dependencies": ["a"], "on_failure": "a"}, {"id": "c", "dependencies": ["a"]}, {"id": "d", "dependencies": ["c"]}]}"#,
    );
    for phase in ["a", "c", "d"] {
        env.ok(&["start", phase]);
        env.ok(&["complete", phase]);
    }
    env.set_now("2026-03-01T12:10:00Z");
    env.ok(&["start", "b"]);
    env.ok(&["fail", "b", "--reason", "NEEDS_REVISION: a is wrong"]);
    env
}

fn status_of(env: &TestEnv, id: &str) -> String {
    let state = env.state("w");
    state["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|phase| phase["id"] == id)
        .unwrap()["status"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn following_the_rollback_resume_advises_leaves_a_state_validate_accepts() {
    let env = diamond_with_b_failed();
    let report = plan(&env, &["--dry-run"]);
    let command = report["plan"]["next"]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(command, "checkpoint start a --force");
    // The advice says what it reopens.
    let reason = report["plan"]["next"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("`c`") && reason.contains("`d`") && reason.contains("back to pending"),
        "{reason}"
    );
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    env.set_now("2026-03-01T12:20:00Z");
    let output = env.snapshot(&args);
    assert!(output.starts_with("exit status: 0"), "{output}");
    assert!(
        output.contains("back to pending: `c`, `d`"),
        "the command names what it reopened: {output}"
    );
    assert_eq!(status_of(&env, "a"), "in_progress");
    assert_eq!(status_of(&env, "c"), "pending");
    assert_eq!(status_of(&env, "d"), "pending");
    // The failed phase keeps its failure: the feedback the rollback redoes `a` with.
    assert_eq!(status_of(&env, "b"), "failed");
    env.ok(&["validate"]);
    // The rollback then goes on as planned: `a` done, `b` retried.
    env.ok(&["complete", "a"]);
    assert_eq!(plan(&env, &["--dry-run"])["plan"]["next"]["phase"], "b");
    env.ok(&["validate"]);
}

#[test]
fn start_force_on_any_phase_never_leaves_a_dependant_done_on_top_of_it() {
    // Every phase of a finished workflow, forced to start again, from the root to a leaf.
    for phase in ["a", "b", "c", "d"] {
        let env = finished_chain();
        env.ok(&["start", phase, "--force"]);
        env.ok(&["validate"]);
        assert_eq!(status_of(&env, phase), "in_progress", "{phase}");
    }
    // A dependant in progress goes back too; one already pending is not journaled again.
    let env = finished_chain();
    env.ok(&["start", "b", "--force"]);
    env.ok(&["start", "a", "--force"]);
    env.ok(&["validate"]);
    assert_eq!(status_of(&env, "b"), "pending");
    let report = env.json(&["validate"]);
    assert_eq!(report["valid"], true, "{report}");
}

/// A hand edit of `state.json` that disagrees with the journal: `validate` finds it and names
/// the one command that repairs it; later writes do not hide it; `validate --repair` rebuilds
/// the state from the journal and keeps the edited file beside it.
#[test]
fn a_state_that_disagrees_with_its_journal_is_found_and_repaired_by_the_command_named() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a", "--phase", "b:a"]);
    env.ok(&["start", "a"]);
    env.ok(&["progress", "a", "half way"]);
    let state_path = env.workflow_dir("w").join("state.json");
    let mut state = env.state("w");
    state["phases"][0]["progress"] = "edited by hand".into();
    fs::write(&state_path, serde_json::to_string_pretty(&state).unwrap()).unwrap();
    let check = |env: &TestEnv| {
        let output = env.snapshot(&["validate"]);
        assert!(output.starts_with("exit status: 8"), "{output}");
        assert!(output.contains("checkpoint validate --repair"), "{output}");
    };
    check(&env);
    // `resume` finds it too, with the same command.
    let output = env.snapshot(&["resume", "--dry-run"]);
    assert!(
        output.contains("does not agree with its journal")
            && output.contains("checkpoint validate --repair"),
        "{output}"
    );
    // A later write carries the edit on: still found.
    env.ok(&["note", "later"]);
    check(&env);
    let output = env.snapshot(&["validate", "--repair"]);
    assert!(output.starts_with("exit status: 0"), "{output}");
    assert!(output.contains("state.json.mismatch-"), "{output}");
    assert_eq!(env.state("w")["phases"][0]["progress"], "half way");
    let kept: Vec<_> = fs::read_dir(env.workflow_dir("w"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("state.json.mismatch-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let kept = fs::read_to_string(env.workflow_dir("w").join(&kept[0])).unwrap();
    assert!(kept.contains("edited by hand"), "the bad file is kept");
    env.ok(&["validate"]);
    // Nothing to repair: said, and nothing kept.
    let output = env.snapshot(&["validate", "--repair"]);
    assert!(output.contains("nothing to repair"), "{output}");
}
