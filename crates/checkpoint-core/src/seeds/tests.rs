//! Tests of the seed formats: import, export, round trips and the resume rules, on the fixtures in
//! `tests/fixtures/seeds/<format>/<scenario>/`.

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
};

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::{
    Error, PhaseId, PhaseStatus, Transition, Workflow, apply,
    seeds::{
        ImportOptions, SeedFormat, SeedSource, discover, export, format::detect, import, locate,
        read_source,
    },
};

const NOW: &str = "2026-03-01T12:00:00Z";

fn now() -> DateTime<Utc> {
    NOW.parse().unwrap()
}

fn fixture_dir(format: SeedFormat, scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/seeds")
        .join(format.name())
        .join(scenario)
}

/// Reads a fixture the way `checkpoint import <dir>` does.
fn source(format: SeedFormat, scenario: &str) -> SeedSource {
    let found = locate(&fixture_dir(format, scenario), None).unwrap();
    assert_eq!(found.format, format, "{scenario} is detected as its format");
    read_source(format, &found.path).unwrap()
}

fn import_fixture(format: SeedFormat, scenario: &str) -> Workflow {
    let options = ImportOptions {
        id: None,
        now: now(),
    };
    import(format, &source(format, scenario), &options).unwrap()
}

/// The phase to work on next, by the rule of the resume planner: a phase awaiting approval, else
/// a failed phase's `on_failure` target (or the phase itself), else a phase in progress, else the
/// first pending phase whose dependencies are done.
fn next_step(workflow: &Workflow) -> Option<PhaseId> {
    let first = |status: PhaseStatus| workflow.phases.iter().find(|phase| phase.status == status);
    if let Some(phase) = first(PhaseStatus::AwaitingApproval) {
        return Some(phase.id.clone());
    }
    if let Some(phase) = first(PhaseStatus::Failed) {
        return Some(phase.on_failure.clone().unwrap_or_else(|| phase.id.clone()));
    }
    if let Some(phase) = first(PhaseStatus::InProgress) {
        return Some(phase.id.clone());
    }
    workflow
        .phases
        .iter()
        .find(|phase| phase.status == PhaseStatus::Pending && workflow.dependencies_done(phase))
        .map(|phase| phase.id.clone())
}

/// One line per phase that is not pending, plus the next step: what an import made of a file.
fn summary(workflow: &Workflow) -> String {
    let mut out = format!("{} ({})\n", workflow.id, workflow.status.as_str());
    for phase in &workflow.phases {
        if phase.status == PhaseStatus::Pending {
            continue;
        }
        let _ = write!(out, "{} {}", phase.id, phase.status.as_str());
        if let Some(at) = phase.completed_at {
            let _ = write!(out, " at {}", at.to_rfc3339());
        }
        if let Some(approval) = &phase.approval {
            let _ = write!(out, " approved {}", approval.at.to_rfc3339());
        }
        if let Some(error) = &phase.error {
            let _ = write!(out, " error {error:?}");
        }
        out.push('\n');
    }
    let next = next_step(workflow).map_or("none".to_owned(), |id| id.to_string());
    let _ = write!(out, "next: {next}");
    out
}

fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

/// Import, then export: the files come back equal as JSON.
#[track_caller]
fn check_round_trip(format: SeedFormat, scenario: &str) {
    let source = source(format, scenario);
    let workflow = import_fixture(format, scenario);
    let exported = export(format, &workflow).unwrap();
    assert_eq!(
        parse(&exported.bytes),
        parse(&source.main.bytes),
        "{format}/{scenario}: the state file comes back\n{}",
        String::from_utf8_lossy(&exported.bytes)
    );
    match &source.execution {
        Some(execution) => {
            let (name, bytes) = &exported.companions[0];
            assert_eq!(name, "execution.json");
            assert_eq!(
                parse(bytes),
                parse(&execution.bytes),
                "{scenario}: execution.json"
            );
        }
        None => assert!(exported.companions.is_empty(), "{scenario}: no companions"),
    }
}

#[test]
fn every_fixture_round_trips() {
    let scenarios = [
        "fresh",
        "mid-run",
        "failed",
        "awaiting-approval",
        "complete",
    ];
    let mut n = 0;
    for format in SeedFormat::ALL {
        for scenario in scenarios {
            if fixture_dir(format, scenario).exists() {
                check_round_trip(format, scenario);
                n += 1;
            }
        }
    }
    assert_eq!(n, 22, "every format has its scenarios");
}

#[test]
fn dotagent() {
    let format = SeedFormat::Dotagent;
    insta::assert_snapshot!(summary(&import_fixture(format, "fresh")), @"
    wf-20260301-auth (pending)
    next: requirements
    ");
    let mid = import_fixture(format, "mid-run");
    insta::assert_snapshot!(summary(&mid), @"
    wf-20260301-auth (in_progress)
    requirements complete at 2026-03-01T09:35:00+00:00 approved 2026-03-01T09:40:00+00:00
    architecture complete at 2026-03-01T10:50:00+00:00 approved 2026-03-01T10:55:00+00:00
    implementation in_progress
    next: implementation
    ");
    let implementation = &mid.phases[2];
    let tasks: Vec<(&str, &str)> = implementation
        .tasks
        .iter()
        .map(|task| (task.id.as_str(), task.status.as_str()))
        .collect();
    assert_eq!(
        tasks,
        [
            ("task-001", "done"),
            ("task-002", "running"),
            ("task-003", "pending")
        ]
    );
    assert_eq!(
        mid.phases[0].artifacts[0].path,
        "memory/reports/demand.json"
    );
    assert!(
        mid.context
            .file_paths
            .contains(&"memory/reports/designs/design_b.json".to_owned()),
        "reports are listed: {:?}",
        mid.context.file_paths
    );
    insta::assert_snapshot!(summary(&import_fixture(format, "failed")), @r#"
    wf-20260301-auth (failed)
    requirements complete at 2026-03-01T09:35:00+00:00 approved 2026-03-01T09:40:00+00:00
    architecture complete at 2026-03-01T10:50:00+00:00 approved 2026-03-01T10:55:00+00:00
    implementation complete at 2026-03-01T13:30:00+00:00
    verification failed error "3 of 41 tests fail in tests/test_session.py"
    next: verification
    "#);
    insta::assert_snapshot!(summary(&import_fixture(format, "awaiting-approval")), @"
    wf-20260301-auth (awaiting_approval)
    requirements complete at 2026-03-01T09:35:00+00:00 approved 2026-03-01T09:40:00+00:00
    architecture awaiting_approval
    next: architecture
    ");
    insta::assert_snapshot!(summary(&import_fixture(format, "complete")), @"
    wf-20260301-auth (complete)
    requirements complete at 2026-03-01T09:35:00+00:00 approved 2026-03-01T09:40:00+00:00
    architecture complete at 2026-03-01T10:50:00+00:00 approved 2026-03-01T10:55:00+00:00
    implementation complete at 2026-03-01T13:30:00+00:00
    verification complete at 2026-03-01T15:20:00+00:00
    reflection complete at 2026-03-01T16:10:00+00:00
    next: none
    ");
}

#[test]
fn orchestkit() {
    let format = SeedFormat::Orchestkit;
    let fresh = import_fixture(format, "fresh");
    insta::assert_snapshot!(summary(&fresh), @"
    feat-issue-42-dashboard (pending)
    next: create-issues
    ");
    assert_eq!(
        fresh.git.as_ref().and_then(|git| git.branch.as_deref()),
        Some("feat/issue-42-dashboard")
    );
    let mid = import_fixture(format, "mid-run");
    insta::assert_snapshot!(summary(&mid), @"
    feat-issue-42-dashboard (in_progress)
    create-issues complete at 2026-02-19T10:05:00+00:00
    scaffold-commit complete at 2026-02-19T10:20:00+00:00
    write-source in_progress
    next: write-source
    ");
    assert_eq!(mid.phases[1].commit_sha.as_deref(), Some("a1b2c3d"));
    assert_eq!(
        mid.phases[2].progress.as_deref(),
        Some("auth module done, starting billing")
    );
    assert_eq!(mid.phases[4].dependencies.len(), 2);
    let decisions: Vec<&str> = mid
        .context
        .key_decisions
        .iter()
        .map(|decision| decision.text.as_str())
        .collect();
    assert_eq!(decisions, ["REST over GraphQL", "Postgres for storage"]);
    insta::assert_snapshot!(summary(&import_fixture(format, "failed")), @r#"
    feat-issue-42-dashboard (failed)
    create-issues complete at 2026-02-19T10:05:00+00:00
    scaffold-commit complete at 2026-02-19T10:20:00+00:00
    write-source complete at 2026-02-19T11:10:00+00:00
    write-tests failed error "vitest: 2 failed, 38 passed"
    next: write-tests
    "#);
    insta::assert_snapshot!(summary(&import_fixture(format, "complete")), @"
    feat-issue-42-dashboard (complete)
    create-issues complete at 2026-02-19T10:05:00+00:00
    scaffold-commit complete at 2026-02-19T10:20:00+00:00
    write-source complete at 2026-02-19T11:10:00+00:00
    write-tests complete at 2026-02-19T11:50:00+00:00
    final-commit complete at 2026-02-19T12:00:00+00:00
    next: none
    ");
}

#[test]
fn checkpoint_recovery() {
    let format = SeedFormat::CheckpointRecovery;
    let fresh = import_fixture(format, "fresh");
    insta::assert_snapshot!(summary(&fresh), @"
    implement_027_auth (pending)
    next: phase-1
    ");
    assert_eq!(fresh.phases.len(), 5, "the plan names five phases");
    assert_eq!(fresh.phases[1].name, "Phase 2: OAuth provider integration");
    assert_eq!(
        fresh.title.as_deref(),
        Some("Implementation Plan: OAuth Authentication")
    );
    let mid = import_fixture(format, "mid-run");
    insta::assert_snapshot!(summary(&mid), @"
    implement_027_auth (in_progress)
    phase-1 complete at 2025-10-21T10:30:00+00:00
    phase-2 complete at 2025-10-21T11:45:00+00:00
    next: phase-3
    ");
    assert_eq!(mid.phases[2].replan_count, 1);
    assert_eq!(mid.replans[0].reason, "complexity_exceeded");
    assert!(
        mid.context
            .file_paths
            .contains(&"specs/027_auth/implementation/".to_owned())
    );
    let failed = import_fixture(format, "failed");
    insta::assert_snapshot!(summary(&failed), @r#"
    implement_027_auth (failed)
    phase-1 complete at 2025-10-21T10:30:00+00:00
    phase-2 complete at 2025-10-21T11:45:00+00:00
    phase-3 complete at 2025-10-21T13:10:00+00:00
    phase-4 complete at 2025-10-21T13:45:00+00:00
    phase-5 failed error "test_refresh_rotation: expected 401, got 200"
    next: phase-5
    "#);
    assert_eq!(failed.phases[4].replan_count, 2);
    assert_eq!(failed.replans.len(), 3);
    let complete = import_fixture(format, "complete");
    assert_eq!(
        complete.phases.len(),
        5,
        "`current_phase: 6` is past the plan's end"
    );
    assert_eq!(complete.status.as_str(), "complete");
}

#[test]
fn checkpoints_dir() {
    let format = SeedFormat::CheckpointsDir;
    let fresh = import_fixture(format, "fresh");
    insta::assert_snapshot!(summary(&fresh), @"
    orchestrate_auth_system_20251003_184530 (in_progress)
    phase-1 in_progress
    next: phase-1
    ");
    assert_eq!(fresh.kind.as_deref(), Some("orchestrate"));
    assert_eq!(
        fresh.description.as_deref(),
        Some("Implement authentication system")
    );
    insta::assert_snapshot!(summary(&import_fixture(format, "mid-run")), @"
    orchestrate_auth_system_20251003_184530 (in_progress)
    phase-1 complete
    phase-2 in_progress
    next: phase-2
    ");
    insta::assert_snapshot!(summary(&import_fixture(format, "failed")), @r#"
    implement_dark_mode_20251003_192230 (failed)
    phase-1 complete
    phase-2 complete
    phase-3 failed error "npm test: 4 snapshot tests failed"
    next: phase-3
    "#);
    insta::assert_snapshot!(summary(&import_fixture(format, "complete")), @"
    orchestrate_auth_system_20251003_184530 (complete)
    phase-1 complete
    phase-2 complete
    phase-3 complete
    phase-4 complete
    phase-5 complete
    next: none
    ");
}

#[test]
fn nine_step() {
    let format = SeedFormat::NineStep;
    let fresh = import_fixture(format, "fresh");
    insta::assert_snapshot!(summary(&fresh), @"
    real-time-quotes (in_progress)
    p1-s1 in_progress
    next: p1-s1
    ");
    assert_eq!(fresh.phases.len(), 27, "three phases of nine steps");
    assert_eq!(
        fresh.phases[3].on_failure.as_ref().map(PhaseId::as_str),
        Some("p1-s3")
    );
    assert!(
        fresh.phases[1].requires_approval,
        "step 2.5 is the gate of step 2"
    );
    let mid = import_fixture(format, "mid-run");
    assert_eq!(next_step(&mid).unwrap().as_str(), "p2-s6");
    assert_eq!(
        mid.phases[11].attempts, 2,
        "step 3 of phase 2 was done twice"
    );
    assert_eq!(mid.phases[8].commit_sha.as_deref(), Some("a1b2c3d"));
    // A reviewer's failure sends the work back to the step before, as `/workflow-resume` does.
    let failed = import_fixture(format, "failed");
    insta::assert_snapshot!(summary(&failed).lines().skip(9).collect::<Vec<_>>().join("\n"), @r#"
    p1-s9 complete at 2026-03-01T11:15:00+00:00
    p2-s1 complete at 2026-03-01T12:00:00+00:00
    p2-s2 complete at 2026-03-01T12:10:00+00:00 approved 2026-03-01T12:12:00+00:00
    p2-s3 complete at 2026-03-01T13:00:00+00:00
    p2-s4 failed error "NEEDS_REVISION: user_input validation missing; rate limiter not applied"
    next: p2-s3
    "#);
    insta::assert_snapshot!(summary(&import_fixture(format, "awaiting-approval")), @"
    real-time-quotes (awaiting_approval)
    p1-s1 complete at 2026-03-01T09:10:00+00:00
    p1-s2 awaiting_approval at 2026-03-01T09:20:00+00:00
    next: p1-s2
    ");
    // Approving step 2 adds the approval to the history, and no second completion of step 2.
    let mut approved = import_fixture(format, "awaiting-approval");
    run(
        &mut approved,
        vec![Transition::PhaseApprove {
            phase: phase("p1-s2"),
            by: None,
            note: None,
        }],
    );
    let state = parse(&export(format, &approved).unwrap().bytes);
    let steps: Vec<(f64, &str)> = state["completed_steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["step"].as_f64().unwrap(),
                entry["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [(1.0, "completed"), (2.0, "completed"), (2.5, "approved")]
    );
    assert_eq!(state["last_execution"]["status"], "approved");
    let complete = import_fixture(format, "complete");
    assert_eq!(complete.phases.len(), 18);
    assert_eq!(complete.status.as_str(), "complete");
}

/// After step 9, the next phase's step 1 comes, even when the file does not say how many phases
/// there are.
#[test]
fn nine_step_goes_on_to_the_next_phase() {
    let state = r#"{"feature_name": "x", "current_phase": 1, "current_step": 9,
        "last_execution": {"phase": 1, "step": 9, "status": "completed", "timestamp": "2026-03-01T10:00:00"},
        "completed_steps": []}"#;
    let options = ImportOptions {
        id: None,
        now: now(),
    };
    let source = SeedSource::new(Path::new(".workflow-state.json"), state.as_bytes().to_vec());
    let workflow = import(SeedFormat::NineStep, &source, &options).unwrap();
    assert_eq!(next_step(&workflow).unwrap().as_str(), "p2-s1");
    assert!(
        workflow.phases[..9]
            .iter()
            .all(|phase| phase.status.is_done())
    );
}

#[test]
fn broken_files_are_diagnosed_with_line_column_and_field() {
    let mut messages = String::new();
    for format in SeedFormat::ALL {
        let dir = fixture_dir(format, "broken");
        let found = locate(&dir, None).unwrap();
        let source = read_source(found.format, &found.path).unwrap();
        let options = ImportOptions {
            id: None,
            now: now(),
        };
        let err = import(found.format, &source, &options).unwrap_err();
        let Error::SeedParse { span, path, .. } = &err else {
            panic!("{format}: {err:?}")
        };
        assert!(span.is_some(), "{format}: the error points at the place");
        assert_eq!(path, &found.path);
        let message = err.to_string();
        let message = message.replace(&format!("{}", dir.display()), "<fixture>");
        messages.push_str(&message);
        messages.push('\n');
    }
    insta::assert_snapshot!(messages, @r#"
    failed to import `<fixture>/memory/state/phase.json` as dotagent state: invalid type: string "REQUIREMENTS", expected struct CompletedPhase at line 6 column 37 (in field `completed_phases`)
    failed to import `<fixture>/.claude/pipeline-state.json` as an OrchestKit pipeline state: trailing comma at line 5 column 3 (in field `commit_sha`)
    failed to import `<fixture>/.claude/data/checkpoints/implement_027_auth.json` as a checkpoint-recovery checkpoint: invalid value: string "three", expected a number at line 4 column 26 (in field `current_phase`)
    failed to import `<fixture>/.claude/checkpoints/orchestrate_auth_system_20251003_184530.json` as a checkpoints-directory checkpoint: EOF while parsing a list at line 8 column 0 (in field `completed_phases`)
    failed to import `<fixture>/.workflow-state.json` as a nine-step workflow state: expected `,` or `}` at line 5 column 3 (in field `current_step`)
    "#);
}

#[test]
fn semantic_errors_name_the_problem() {
    let options = ImportOptions {
        id: None,
        now: now(),
    };
    let pipeline = r#"{"remaining_phases": [{"id": "a", "dependencies": ["ghost"]}]}"#;
    let source = SeedSource::new(
        Path::new("pipeline-state.json"),
        pipeline.as_bytes().to_vec(),
    );
    let err = import(SeedFormat::Orchestkit, &source, &options).unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to import `pipeline-state.json` as an OrchestKit pipeline state: phase `a` depends on `ghost`, which is not a phase of the pipeline"
    );
    let source = SeedSource::new(Path::new("x.json"), b"[1, 2]".to_vec());
    let err = import(SeedFormat::CheckpointsDir, &source, &options).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("the file holds a JSON array, not an object"),
        "{err}"
    );
    let source = SeedSource::new(
        Path::new("x.json"),
        b"{\"status\": \"in_progress\"}".to_vec(),
    );
    let err = import(SeedFormat::CheckpointsDir, &source, &options).unwrap_err();
    assert!(err.to_string().contains("it names 0 phases"), "{err}");
}

#[test]
fn detection_by_contents_then_by_place() {
    for format in SeedFormat::ALL {
        for scenario in ["fresh", "mid-run", "failed", "complete"] {
            let source = source(format, scenario);
            let anywhere = Path::new("/tmp/state.json");
            assert_eq!(
                detect(anywhere, &source.main.bytes),
                Some(format),
                "{format}/{scenario} by contents"
            );
        }
        let broken = locate(&fixture_dir(format, "broken"), None).unwrap();
        assert_eq!(
            broken.format, format,
            "a broken {format} file is known by its place"
        );
    }
    let ours = br#"{"schema_version": 1, "id": "w", "phases": []}"#;
    assert_eq!(
        detect(Path::new(".claude/checkpoints/w/state.json"), ours),
        None
    );
    assert_eq!(detect(Path::new("notes.json"), b"{\"a\": 1}"), None);
    assert_eq!(
        detect(Path::new("wt/.workflow-state.json"), b"{}"),
        Some(SeedFormat::NineStep)
    );
}

#[test]
fn discovery_looks_where_the_seeds_write() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |path: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut file = std::fs::File::create(path).unwrap();
        std::io::Write::write_all(&mut file, b"{}").unwrap();
    };
    write("memory/state/phase.json");
    write(".claude/pipeline-state.json");
    write(".claude/data/checkpoints/implement_027_auth.json");
    write(".claude/checkpoints/orchestrate_a_20251003_184530.json");
    write(".claude/checkpoints/failed/implement_b_20251003_192230.json");
    write(".claude/checkpoints/README.md");
    // Our own workflows are directories in the same place; they are not seeds.
    write(".claude/checkpoints/payments/state.json");
    write(".workflow-state.json");
    write("worktrees/feat-x/.workflow-state.json");
    write("worktrees/feat-y/notes.json");
    let worktrees = [root.join("worktrees/feat-x"), root.join("worktrees/feat-y")];
    let found: Vec<String> = discover(root, &worktrees)
        .into_iter()
        .map(|found| {
            let path = found.path.strip_prefix(root).unwrap().display().to_string();
            format!("{} {path}", found.format)
        })
        .collect();
    insta::assert_snapshot!(found.join("\n"), @"
    dotagent memory/state/phase.json
    orchestkit .claude/pipeline-state.json
    checkpoint-recovery .claude/data/checkpoints/implement_027_auth.json
    checkpoints-dir .claude/checkpoints/orchestrate_a_20251003_184530.json
    checkpoints-dir .claude/checkpoints/failed/implement_b_20251003_192230.json
    nine-step .workflow-state.json
    nine-step worktrees/feat-x/.workflow-state.json
    ");
    let err = locate(root, None).unwrap_err();
    assert!(
        err.to_string().starts_with("found 6 state files"),
        "a directory is a project, without worktrees: {err}"
    );
    let one = locate(root, Some(SeedFormat::Orchestkit)).unwrap();
    assert_eq!(one.path, root.join(".claude/pipeline-state.json"));
    let empty = tempfile::tempdir().unwrap();
    let err = locate(empty.path(), None).unwrap_err();
    assert!(matches!(err, Error::SeedLocate { .. }), "{err:?}");
}

/// Applies transitions as the CLI would, one journal entry each.
fn run(workflow: &mut Workflow, transitions: Vec<Transition>) {
    for (seq, transition) in transitions.into_iter().enumerate() {
        apply(workflow, &transition, seq as u64 + 1, now()).unwrap();
    }
}

fn phase(id: &str) -> PhaseId {
    PhaseId::new(id).unwrap()
}

#[test]
fn dotagent_export_follows_the_work_done_since() {
    let mut workflow = import_fixture(SeedFormat::Dotagent, "mid-run");
    let implementation = phase("implementation");
    let task = |id: &str| crate::TaskId::new(id).unwrap();
    run(
        &mut workflow,
        vec![
            Transition::TaskDone {
                phase: implementation.clone(),
                task: task("task-002"),
                output: None,
                note: None,
            },
            Transition::TaskStart {
                phase: implementation.clone(),
                task: task("task-003"),
                agent_id: None,
            },
            Transition::TaskDone {
                phase: implementation.clone(),
                task: task("task-003"),
                output: None,
                note: None,
            },
            Transition::PhaseComplete {
                phase: implementation,
                artifacts: vec!["memory/reports/implementation.json".into()],
                commit_sha: None,
                force: false,
            },
        ],
    );
    let exported = export(SeedFormat::Dotagent, &workflow).unwrap();
    let state = parse(&exported.bytes);
    assert_eq!(state["current_phase"], "VERIFICATION");
    assert_eq!(state["phase_status"], "complete");
    assert_eq!(state["last_updated"], NOW);
    assert_eq!(
        state["started_at"], "2026-03-01T09:00:00+00:00",
        "unchanged times keep their spelling"
    );
    assert_eq!(
        state["completed_phases"][1]["design_choice"], "B",
        "unmapped fields stay"
    );
    assert_eq!(
        state["completed_phases"][2],
        serde_json::json!({"phase": "IMPLEMENTATION", "completed_at": NOW, "output": "memory/reports/implementation.json"})
    );
    let execution = parse(&exported.companions[0].1);
    let statuses: Vec<&str> = execution["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| task["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["completed", "completed", "completed"]);
    assert_eq!(execution["tasks"][1]["agent"], "executor-sonnet");
    assert_eq!(
        execution["plan"],
        "memory/reports/designs/final_design.json"
    );
}

#[test]
fn orchestkit_export_moves_a_completed_phase() {
    let mut workflow = import_fixture(SeedFormat::Orchestkit, "mid-run");
    run(
        &mut workflow,
        vec![Transition::PhaseComplete {
            phase: phase("write-source"),
            artifacts: Vec::new(),
            commit_sha: Some("e5f6a7b".into()),
            force: false,
        }],
    );
    let state = parse(&export(SeedFormat::Orchestkit, &workflow).unwrap().bytes);
    assert_eq!(state["current_phase"], Value::Null);
    assert_eq!(
        state["completed_phases"][2],
        serde_json::json!({"id": "write-source", "name": "Write Source Files", "timestamp": NOW, "commit_sha": "e5f6a7b", "progress_description": "auth module done, starting billing"})
    );
    assert_eq!(state["remaining_phases"].as_array().unwrap().len(), 2);
    assert_eq!(state["context_summary"]["task"], "Dashboard for issue #42");
}

#[test]
fn nine_step_export_follows_a_review_loop() {
    let mut workflow = import_fixture(SeedFormat::NineStep, "failed");
    run(
        &mut workflow,
        vec![
            Transition::PhaseStart {
                phase: phase("p2-s3"),
                force: true,
            },
            Transition::PhaseComplete {
                phase: phase("p2-s3"),
                artifacts: Vec::new(),
                commit_sha: None,
                force: false,
            },
            Transition::PhaseStart {
                phase: phase("p2-s4"),
                force: false,
            },
        ],
    );
    let state = parse(&export(SeedFormat::NineStep, &workflow).unwrap().bytes);
    // The fields kept for step 4 (its agent) still describe step 4.
    assert_eq!(
        state["last_execution"],
        serde_json::json!({"phase": 2, "step": 4, "status": "in_progress", "timestamp": NOW, "agent": "code-reviewer"})
    );
    assert_eq!(state["current_step"], 4);
    let steps = state["completed_steps"].as_array().unwrap();
    let last = &steps[steps.len() - 1];
    assert_eq!(last["step"], 3);
    assert_eq!(last["timestamp"], NOW);
    assert_eq!(
        steps
            .iter()
            .filter(|entry| entry["phase"] == 2 && entry["step"] == 3)
            .count(),
        2,
        "the first implementation stays in the history"
    );
}

#[test]
fn native_workflows_export_and_import_back() {
    let plan = crate::Plan {
        phases: ["design", "build:design", "docs:design"]
            .iter()
            .map(|spec| crate::PhasePlan::from_spec(spec).unwrap())
            .collect(),
        ..crate::Plan::default()
    };
    let mut workflow = plan
        .into_workflow(crate::WorkflowId::new("payments").unwrap(), None, now())
        .unwrap();
    run(
        &mut workflow,
        vec![
            Transition::PhaseStart {
                phase: phase("design"),
                force: false,
            },
            Transition::PhaseComplete {
                phase: phase("design"),
                artifacts: vec!["design.md".into()],
                commit_sha: None,
                force: false,
            },
            Transition::PhaseStart {
                phase: phase("build"),
                force: false,
            },
        ],
    );
    let statuses = |workflow: &Workflow| -> Vec<&'static str> {
        workflow
            .phases
            .iter()
            .map(|phase| phase.status.as_str())
            .collect()
    };
    for format in [
        SeedFormat::Dotagent,
        SeedFormat::Orchestkit,
        SeedFormat::CheckpointRecovery,
        SeedFormat::CheckpointsDir,
    ] {
        let exported = export(format, &workflow).unwrap();
        let source = SeedSource::new(Path::new("exported.json"), exported.bytes);
        let options = ImportOptions {
            id: None,
            now: now(),
        };
        let back = import(format, &source, &options).unwrap();
        assert_eq!(
            statuses(&back),
            ["complete", "in_progress", "pending"],
            "{format}"
        );
        assert_eq!(
            next_step(&back).map(|id| back.phase_index(&id)),
            Some(Some(1)),
            "{format}"
        );
    }
    let err = export(SeedFormat::NineStep, &workflow).unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to export workflow `payments` as a nine-step workflow state: phase `design` is not a step of a nine-step phase"
    );
}

#[test]
fn an_id_given_on_import_leaves_the_file_id_alone() {
    let options = ImportOptions {
        id: Some(crate::WorkflowId::new("auth").unwrap()),
        now: now(),
    };
    let workflow = import(
        SeedFormat::Dotagent,
        &source(SeedFormat::Dotagent, "fresh"),
        &options,
    )
    .unwrap();
    assert_eq!(workflow.id.as_str(), "auth");
    let state = parse(&export(SeedFormat::Dotagent, &workflow).unwrap().bytes);
    assert_eq!(state["workflow_id"], "wf-20260301-auth");
}

/// Hostile or odd values are errors or kept as written, never a panic.
#[test]
fn odd_values_do_not_panic() {
    let options = ImportOptions {
        id: None,
        now: now(),
    };
    let long = "P".repeat(300);
    let phase_file = format!(
        r#"{{"current_phase": "{long}", "completed_phases": [{{"phase": "{long}x"}}], "phase_status": "in_progress"}}"#
    );
    let source = SeedSource::new(Path::new("phase.json"), phase_file.into_bytes());
    let workflow = import(SeedFormat::Dotagent, &source, &options).unwrap();
    assert!(
        workflow
            .phases
            .iter()
            .all(|phase| phase.id.as_str().len() <= 128)
    );
    let huge = r#"{"last_execution": {"phase": 4294967295, "step": 9, "status": "completed"}}"#;
    let source = SeedSource::new(Path::new("s.json"), huge.as_bytes().to_vec());
    let err = import(SeedFormat::NineStep, &source, &options).unwrap_err();
    assert!(
        err.to_string().contains("it names 4294967295 phases"),
        "{err}"
    );
    let times =
        r#"{"completed_phases": [{"id": "a", "timestamp": "yesterday"}], "current_phase": null}"#;
    let source = SeedSource::new(Path::new("p.json"), times.as_bytes().to_vec());
    let workflow = import(SeedFormat::Orchestkit, &source, &options).unwrap();
    assert_eq!(workflow.phases[0].completed_at, None);
    let back = parse(&export(SeedFormat::Orchestkit, &workflow).unwrap().bytes);
    assert_eq!(
        back["completed_phases"][0]["timestamp"], "yesterday",
        "kept as written"
    );
}

/// Every step a nine-step `last_execution` can name (the nine and the user's approval, 2.5, as
/// written by either the reviewer or the user), with every status, round trips: the step keeps
/// its number (2.5 stays 2.5, 2 stays 2) and `agent` stays.
#[test]
fn nine_step_last_execution_round_trips_at_every_step_and_status() {
    let options = ImportOptions {
        id: None,
        now: now(),
    };
    let statuses = [
        "completed",
        "approved",
        "in_progress",
        "failed",
        "needs_revision",
        "rejected",
        "waiting_approval",
        "awaiting_approval",
    ];
    let steps: Vec<Value> = (1..=9)
        .map(Value::from)
        .chain([serde_json::json!(2.5)])
        .collect();
    let mut problems = Vec::new();
    for phase in [1, 2] {
        for step in &steps {
            for status in statuses {
                let mut completed = Vec::new();
                for (n, m) in (1..=phase).flat_map(|n| (1..=9).map(move |m| (n, m))) {
                    let before = (n, f64::from(m)) < (phase, step.as_f64().unwrap());
                    if before {
                        completed.push(serde_json::json!({"phase": n, "step": m, "agent": "a", "status": "completed", "timestamp": format!("2026-03-01T0{n}:{m:02}:00")}));
                    }
                }
                let file = serde_json::json!({
                    "feature_name": "quotes",
                    "current_phase": phase,
                    "current_step": step,
                    "total_phases": 2,
                    "phase_description": "Quote service",
                    "last_execution": {"phase": phase, "step": step, "agent": "plan-reviewer", "status": status, "timestamp": "2026-03-01T09:59:00"},
                    "completed_steps": completed,
                });
                let bytes = serde_json::to_vec_pretty(&file).unwrap();
                let source = SeedSource::new(Path::new(".workflow-state.json"), bytes);
                let workflow = import(SeedFormat::NineStep, &source, &options).unwrap();
                let back = parse(&export(SeedFormat::NineStep, &workflow).unwrap().bytes);
                if back != file {
                    problems.push(format!(
                        "phase {phase} step {step} {status}: {}",
                        back["last_execution"]
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A dotagent task's `attempts` comes back as written for every status, zero included, and so
/// does its absence.
#[test]
fn dotagent_task_attempts_round_trip_zero_included() {
    let options = ImportOptions {
        id: None,
        now: now(),
    };
    let phase_file = r#"{"workflow_id": "wf", "current_phase": "IMPLEMENTATION", "phase_status": "in_progress"}"#;
    let statuses = [
        "pending",
        "running",
        "in_progress",
        "completed",
        "done",
        "failed",
        "blocked",
    ];
    for status in statuses {
        for attempts in [Some(0), Some(1), Some(3), None] {
            let mut task =
                serde_json::json!({"id": "task-001", "phase": "IMPLEMENTATION", "status": status});
            if let Some(attempts) = attempts {
                task["attempts"] = attempts.into();
            }
            let execution = serde_json::json!({"tasks": [task, {"id": "task-002", "status": status, "attempts": 0}]});
            let mut source =
                SeedSource::new(Path::new("memory/state/phase.json"), phase_file.into());
            source.execution = Some(crate::seeds::SeedFile {
                path: "memory/state/execution.json".into(),
                bytes: serde_json::to_vec(&execution).unwrap(),
            });
            let workflow = import(SeedFormat::Dotagent, &source, &options).unwrap();
            // Through the store's format too: `state.json` leaves zero counters out.
            let stored: Workflow =
                serde_json::from_str(&serde_json::to_string(&workflow).unwrap()).unwrap();
            for workflow in [&workflow, &stored] {
                let exported = export(SeedFormat::Dotagent, workflow).unwrap();
                let (_, bytes) = &exported.companions[0];
                assert_eq!(parse(bytes), execution, "{status} {attempts:?}");
            }
        }
    }
}
