//! Switching from another checkpoint system: `import`, `export` and the seed files in `list`, on
//! the fixtures in `tests/fixtures/seeds/<format>/<scenario>/`.

use std::path::{Path, PathBuf};

use insta::assert_snapshot;
use serde_json::{Value, json};

use crate::support::{TestEnv, git};

/// The formats, each with the path of its state file in a fixture.
const FORMATS: [(&str, &str); 5] = [
    ("dotagent", "memory/state/phase.json"),
    ("orchestkit", ".claude/pipeline-state.json"),
    (
        "checkpoint-recovery",
        ".claude/data/checkpoints/implement_027_auth.json",
    ),
    (
        "checkpoints-dir",
        ".claude/checkpoints/orchestrate_auth_system_20251003_184530.json",
    ),
    ("nine-step", ".workflow-state.json"),
];

const SCENARIOS: [&str; 5] = [
    "fresh",
    "mid-run",
    "failed",
    "awaiting-approval",
    "complete",
];

fn fixture(format: &str, scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/seeds")
        .join(format)
        .join(scenario)
}

/// Copies a fixture into the test project, laid out as the seed puts it.
fn copy_fixture(env: &TestEnv, format: &str, scenario: &str) {
    copy_dir(&fixture(format, scenario), &env.project());
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// The only workflow in the store.
fn only_workflow(env: &TestEnv) -> String {
    let list = env.json(&["list"]);
    let ours: Vec<&Value> = list["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry.get("source").is_none())
        .collect();
    assert_eq!(ours.len(), 1, "{list:#}");
    ours[0]["id"].as_str().unwrap().to_owned()
}

/// Imports every scenario of every format from its project directory, snapshots the resulting
/// `state.json`, and checks that the original was not touched and that `export` gives it back.
#[test]
fn import_snapshots_and_round_trips() {
    let mut n = 0;
    for (format, state_file) in FORMATS {
        for scenario in SCENARIOS {
            if !fixture(format, scenario).exists() {
                continue;
            }
            n += 1;
            let env = TestEnv::new();
            copy_fixture(&env, format, scenario);
            let original_path = match (format, scenario) {
                ("checkpoints-dir", "failed") => env
                    .project()
                    .join(".claude/checkpoints/failed/implement_dark_mode_20251003_192230.json"),
                _ => env.project().join(state_file),
            };
            let original = read(&original_path);
            env.ok(&["import", "."]);
            assert_eq!(
                read(&original_path),
                original,
                "{format}/{scenario} is untouched"
            );
            let id = only_workflow(&env);
            assert_snapshot!(format!("{format}-{scenario}"), env.read(&id, "state.json"));
            let journal = env.read(&id, "journal.jsonl");
            assert_eq!(
                journal.lines().count(),
                1,
                "one `init` entry holds everything"
            );
            assert!(journal.contains("\"op\":\"init\""));

            let exported: Value =
                serde_json::from_str(&env.ok(&["export", "--to", format])).unwrap();
            let expected: Value = serde_json::from_str(&original).unwrap();
            assert_eq!(
                exported, expected,
                "{format}/{scenario} comes back from `export`"
            );
        }
    }
    assert_eq!(n, 22);
}

#[test]
fn import_prints_what_was_imported() {
    let env = TestEnv::new();
    copy_fixture(&env, "orchestkit", "mid-run");
    assert_snapshot!(env.snapshot(&["import", ".claude/pipeline-state.json"]), @r"
    exit status: 0
    ----- stdout -----
    imported an OrchestKit pipeline state `.claude/pipeline-state.json` as workflow feat-issue-42-dashboard with 5 phases in `[TEMP]/project/.claude/checkpoints/feat-issue-42-dashboard`

    feat-issue-42-dashboard  in progress
    2 of 5 phases done · updated 10 days ago

    ✓ create-issues    done  10 days ago
    ✓ scaffold-commit  done  10 days ago  (a1b2c3d)
    → write-source     in progress
                       progress: auth module done, starting billing
    · write-tests      blocked by write-source
    · final-commit     blocked by write-source, write-tests
    ----- stderr -----
    ");
    let env = TestEnv::new();
    copy_fixture(&env, "nine-step", "failed");
    let imported = env.json(&["import", ".workflow-state.json", "--as", "quotes"]);
    assert_eq!(imported["source"]["format"], "nine-step");
    assert_eq!(imported["source"]["path"], ".workflow-state.json");
    assert_eq!(imported["workflow"]["id"], "quotes");
    assert_eq!(imported["workflow"]["status"], "failed");
    let status = env.json(&["status"]);
    let failed: Vec<&Value> = status["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|phase| phase["view"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["id"], "p2-s4");
    assert_eq!(
        status["workflow"]["phases"][12]["on_failure"], "p2-s3",
        "the code review sends the work back to the implementation"
    );
}

#[test]
fn broken_files_are_diagnosed_and_left_alone() {
    let env = TestEnv::new();
    copy_fixture(&env, "dotagent", "broken");
    let path = env.project().join("memory/state/phase.json");
    let before = read(&path);
    assert_snapshot!(env.snapshot(&["import", "memory"]), @r#"
    exit status: 4
    ----- stdout -----
    ----- stderr -----
    checkpoint::seed::locate

      × found no state file of another checkpoint system in `[TEMP]/project/memory`
      help: looked for `memory/state/phase.json`, `.claude/pipeline-state.json`, `.claude/data/checkpoints/*.json`, `.claude/checkpoints/*.json` and `.workflow-state.json`; pass the file itself, with `--from <format>` if its name is unusual
    "#);
    assert_snapshot!(env.snapshot(&["import", "."]), @r#"
    exit status: 6
    ----- stdout -----
    ----- stderr -----
    checkpoint::seed::invalid

      × failed to import `[TEMP]/project/memory/state/phase.json` as dotagent state: invalid type: string "REQUIREMENTS", expected struct CompletedPhase at line 6 column 37 (in field `completed_phases`)
       ╭─[[TEMP]/project/memory/state/phase.json:6:37]
     5 │   "phase_status": "in_progress",
     6 │   "completed_phases": ["REQUIREMENTS"],
       ·                                     ▲
       ·                                     ╰── here
     7 │   "interruption_safe": false
       ╰────
      help: the file was left untouched; fix it at the marked place (or restore it from a backup) and import it again
    "#);
    assert_eq!(read(&path), before);
    assert!(!env.store().exists(), "nothing was created");

    let env = TestEnv::new();
    copy_fixture(&env, "nine-step", "broken");
    let output = env.snapshot(&["import", ".workflow-state.json", "--format", "json"]);
    assert!(output.starts_with("exit status: 6"), "{output}");
    assert!(
        output.contains("\"code\": \"checkpoint::seed::invalid\""),
        "{output}"
    );
    assert!(
        output.contains("at line 5 column 3 (in field `current_step`)"),
        "{output}"
    );
}

#[test]
fn formats_are_recognised_or_named() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.project().join("state")).unwrap();
    std::fs::copy(
        fixture("nine-step", "awaiting-approval").join(".workflow-state.json"),
        env.project().join("state/feature.json"),
    )
    .unwrap();
    let imported = env.json(&["import", "state/feature.json"]);
    assert_eq!(
        imported["source"]["format"], "nine-step",
        "known by its contents"
    );
    std::fs::write(env.project().join("notes.json"), "{\"todo\": []}\n").unwrap();
    assert_snapshot!(env.snapshot(&["import", "notes.json"]), @r"
    exit status: 2
    ----- stdout -----
    ----- stderr -----
    checkpoint::seed::unknown

      × failed to recognise `[TEMP]/project/notes.json` as the state of another checkpoint system
      help: name its format with `--from <format>`: `dotagent`, `orchestkit`, `checkpoint-recovery`, `checkpoints-dir`, `nine-step`
    ");
    let output = env.snapshot(&["import", "notes.json", "--from", "orchestkit"]);
    assert!(output.starts_with("exit status: 6"), "{output}");
    assert!(output.contains("the plan has no phases"), "{output}");
    // Only `--from` can tell what this file is: it has no key that is OrchestKit's alone.
    std::fs::write(
        env.project().join("pipeline.json"),
        r#"{"completed_phases": [{"id": "issues", "name": "Create issues", "timestamp": "2026-02-19T10:05:00Z"}], "current_phase": null}"#,
    )
    .unwrap();
    assert_eq!(env.run(&["import", "pipeline.json"]).status.code(), Some(2));
    let imported = env.json(&[
        "import",
        "pipeline.json",
        "--from",
        "orchestkit",
        "--as",
        "p",
    ]);
    assert_eq!(imported["workflow"]["status"], "complete");
}

#[test]
fn import_refuses_a_taken_id_unless_fresh() {
    let env = TestEnv::new();
    copy_fixture(&env, "dotagent", "mid-run");
    env.ok(&["import", "."]);
    let output = env.snapshot(&["import", "."]);
    assert!(output.starts_with("exit status: 3"), "{output}");
    assert!(
        output.contains("workflow `wf-20260301-auth` already exists"),
        "{output}"
    );
    env.ok(&["import", ".", "--as", "auth"]);
    env.ok(&["import", ".", "--fresh"]);
    assert!(
        env.store()
            .join(".archive/wf-20260301-auth_20260301_120000/state.json")
            .exists(),
        "the earlier import was archived"
    );
}

#[test]
fn list_shows_seed_files_after_our_workflows() {
    let env = TestEnv::new();
    copy_fixture(&env, "checkpoints-dir", "mid-run");
    copy_fixture(&env, "checkpoints-dir", "failed");
    copy_fixture(&env, "orchestkit", "broken");
    env.ok(&["init", "payments", "--phase", "design"]);
    assert_snapshot!(env.snapshot(&["list"]), @r"
    exit status: 0
    ----- stdout -----
    payments                                 pending  0 of 1 phase done, just now
    pipeline-state                           unreadable: failed to import `[TEMP]/project/.claude/pipeline-state.json` as an OrchestKit pipeline state: trailing comma at line 5 column 3 (in field `commit_sha`)  [orchestkit: `.claude/pipeline-state.json`]
    orchestrate_auth_system_20251003_184530  in progress  1 of 5 phases done, at `phase-2`, 149 days ago  [checkpoints-dir: `.claude/checkpoints/orchestrate_auth_system_20251003_184530.json`]
    implement_dark_mode_20251003_192230      failed  2 of 4 phases done, at `phase-3`, 149 days ago  [checkpoints-dir: `.claude/checkpoints/failed/implement_dark_mode_20251003_192230.json`]
    ----- stderr -----
    entries in [brackets] are other checkpoint systems' files, read-only here; switch with `checkpoint import <path>`
    ");
    // A checkpoints-directory file and our workflow directory of the same name live side by side.
    env.ok(&[
        "import",
        ".claude/checkpoints/orchestrate_auth_system_20251003_184530.json",
    ]);
    let list = env.json(&["list"]);
    let entries = list["workflows"].as_array().unwrap();
    let described: Vec<(String, Option<&str>)> = entries
        .iter()
        .map(|entry| {
            (
                entry["id"].as_str().unwrap().to_owned(),
                entry.get("source").and_then(Value::as_str),
            )
        })
        .collect();
    assert_eq!(
        described,
        [
            ("payments".to_owned(), None),
            ("orchestrate_auth_system_20251003_184530".to_owned(), None),
            ("pipeline-state".to_owned(), Some("orchestkit")),
            (
                "orchestrate_auth_system_20251003_184530".to_owned(),
                Some("checkpoints-dir")
            ),
            (
                "implement_dark_mode_20251003_192230".to_owned(),
                Some("checkpoints-dir")
            ),
        ]
    );
    assert_eq!(
        entries[3]["path"],
        ".claude/checkpoints/orchestrate_auth_system_20251003_184530.json"
    );
    assert!(
        entries[2]["error"]
            .as_str()
            .unwrap()
            .contains("trailing comma")
    );
}

#[test]
fn export_to_a_file_is_atomic_and_refuses_to_overwrite() {
    let env = TestEnv::new();
    copy_fixture(&env, "dotagent", "mid-run");
    env.ok(&["import", "."]);
    env.ok(&["task", "done", "implementation", "task-002"]);
    let stdout = env.snapshot(&["export", "--to", "dotagent"]);
    assert!(
        stdout.contains("warning: `execution.json` belongs beside the state file"),
        "{stdout}"
    );
    std::fs::create_dir_all(env.project().join("out")).unwrap();
    assert_snapshot!(env.snapshot(&["export", "--to", "dotagent", "--output", "out/phase.json"]), @r"
    exit status: 0
    ----- stdout -----
    wrote `out/phase.json`
    wrote `out/execution.json`
    ----- stderr -----
    ");
    let execution: Value =
        serde_json::from_str(&read(&env.project().join("out/execution.json"))).unwrap();
    assert_eq!(execution["tasks"][1]["status"], "completed");
    assert_eq!(execution["tasks"][1]["agent"], "executor-sonnet");
    let before = read(&env.project().join("out/phase.json"));
    assert_snapshot!(env.snapshot(&["export", "--to", "dotagent", "--output", "out/phase.json"]), @r"
    exit status: 3
    ----- stdout -----
    ----- stderr -----
    checkpoint::output_exists

      × refusing to overwrite `[TEMP]/project/out/phase.json`
      help: pass `--force` to replace it, or choose another `--output`
    ");
    assert_eq!(read(&env.project().join("out/phase.json")), before);
    env.ok(&["complete", "implementation", "--force"]);
    let written = env.json(&[
        "export",
        "--to",
        "dotagent",
        "--output",
        "out/phase.json",
        "--force",
    ]);
    assert_eq!(written["written"][0], "out/phase.json");
    let phase: Value = serde_json::from_str(&read(&env.project().join("out/phase.json"))).unwrap();
    assert_eq!(phase["current_phase"], "VERIFICATION");
    let leftovers: Vec<String> = std::fs::read_dir(env.project().join("out"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert_eq!(
        leftovers,
        Vec::<String>::new(),
        "no temporary files are left"
    );
}

#[test]
fn export_names_what_a_format_cannot_hold() {
    let env = TestEnv::new();
    env.ok(&[
        "init",
        "payments",
        "--phase",
        "design",
        "--phase",
        "build:design",
    ]);
    assert_snapshot!(env.snapshot(&["export", "--to", "nine-step"]), @r"
    exit status: 3
    ----- stdout -----
    ----- stderr -----
    checkpoint::seed::export

      × failed to export workflow `payments` as a nine-step workflow state: phase `design` is not a step of a nine-step phase
      help: the nine-step state holds phases of nine steps, with ids `p<phase>-s<step>` (for example `p2-s4`); export this workflow to another format
    ");
    let pipeline: Value = serde_json::from_str(&env.ok(&["export", "--to", "orchestkit"])).unwrap();
    assert_eq!(pipeline["remaining_phases"][1]["dependencies"][0], "design");
}

/// The nine-step workflow keeps a state file in each git worktree; `list` looks in all of them.
#[test]
fn list_finds_nine_step_state_in_git_worktrees() {
    let env = TestEnv::bare();
    git(&env.project(), &["init", "--quiet"]);
    git(
        &env.project(),
        &["commit", "--quiet", "--allow-empty", "-m", "start"],
    );
    git(
        &env.project(),
        &[
            "worktree",
            "add",
            "--quiet",
            "-b",
            "feat-real-time-quotes",
            "../worktree",
        ],
    );
    std::fs::copy(
        fixture("nine-step", "mid-run").join(".workflow-state.json"),
        env.dir.path().join("worktree/.workflow-state.json"),
    )
    .unwrap();
    let list = env.json(&["list"]);
    assert_eq!(list["workflows"][0]["source"], "nine-step");
    assert_eq!(list["workflows"][0]["id"], "real-time-quotes");
    assert_eq!(list["workflows"][0]["current_phase"], Value::Null);
    assert!(
        list["workflows"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("worktree/.workflow-state.json")
    );
}

/// Every file under `dir`, with its contents, to prove a read-only command wrote nothing.
fn snapshot_tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_file())
        .map(|entry| {
            (
                entry.path().to_owned(),
                std::fs::read(entry.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

/// Each seed's resume rule gives the same next step in our planner, read directly from its
/// file (nothing is written until the user imports).
#[test]
fn resume_follows_each_seeds_rules_read_only() {
    // (format, scenario, next action, its phase): the seeds' own rules, in our terms.
    let cases = [
        ("dotagent", "fresh", "start", "requirements"),
        // IMPLEMENTATION in progress: continue the execution loop.
        ("dotagent", "mid-run", "continue", "implementation"),
        // Interrupted during user approval: re-present it, do not re-run the architects.
        ("dotagent", "awaiting-approval", "approve", "architecture"),
        ("dotagent", "failed", "retry", "verification"),
        ("orchestkit", "fresh", "start", "create-issues"),
        // Continue from current_phase, respecting its progress description.
        ("orchestkit", "mid-run", "start", "write-source"),
        ("orchestkit", "failed", "retry", "write-tests"),
        ("checkpoint-recovery", "fresh", "start", "phase-1"),
        // Skip completed phases and execute from current_phase.
        ("checkpoint-recovery", "mid-run", "start", "phase-3"),
        ("checkpoints-dir", "fresh", "start", "phase-1"),
        // "(r)esume - Continue from Phase N+1" after N completed.
        ("checkpoints-dir", "mid-run", "start", "phase-2"),
        ("checkpoints-dir", "failed", "retry", "phase-3"),
        ("nine-step", "fresh", "start", "p1-s1"),
        // waiting_approval: the approval at step 2.5 comes next.
        ("nine-step", "awaiting-approval", "approve", "p1-s2"),
        // failed at a reviewer step (4): return to the step before (3).
        ("nine-step", "failed", "rollback", "p2-s3"),
        // completed or in progress: proceed to the next step.
        ("nine-step", "mid-run", "start", "p2-s6"),
    ];
    for (format, scenario, action, phase) in cases {
        let env = TestEnv::bare();
        env.set_now("2026-03-05T12:00:00Z");
        copy_fixture(&env, format, scenario);
        // The work the state refers to exists (validation of missing artifacts is tested elsewhere).
        for _ in 0..4 {
            let report = env.json(&["resume"]);
            let missing: Vec<String> = report["plan"]["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|finding| {
                    matches!(
                        finding["code"].as_str(),
                        Some("artifact.missing" | "output.missing")
                    )
                })
                .map(|finding| {
                    finding["message"]
                        .as_str()
                        .unwrap()
                        .split('`')
                        .nth(1)
                        .unwrap()
                        .to_owned()
                })
                .collect();
            for path in &missing {
                let path = env.project().join(path);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, "done").unwrap();
            }
        }
        let before = snapshot_tree(&env.project());
        let report = env.json(&["resume"]);
        let case = format!("{format}/{scenario}: {}", report["plan"]["next"]);
        assert_eq!(report["source"]["format"], format, "{case}");
        assert_eq!(report["applied"], false, "{case}");
        assert_eq!(report["plan"]["next"]["action"], action, "{case}");
        assert_eq!(report["plan"]["next"]["phase"], phase, "{case}");
        assert_eq!(
            snapshot_tree(&env.project()),
            before,
            "{case}: nothing may be written"
        );
        let prompt = env.ok(&["resume", "--format", "prompt"]);
        assert!(
            prompt.contains("read only") && prompt.contains("checkpoint import"),
            "{case}: {prompt}"
        );
    }
}

/// The stages in `tests/fixtures/seed-stages/<format>/<stage>/`, written from each system's own
/// document, with what each `expect.json` says.
fn stages() -> Vec<(String, String, PathBuf, Value)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/seed-stages");
    let mut stages = Vec::new();
    for (format, _) in FORMATS {
        for entry in std::fs::read_dir(root.join(format)).unwrap() {
            let dir = entry.unwrap().path();
            let expect: Value = serde_json::from_str(&read(&dir.join("expect.json"))).unwrap();
            let stage = dir.file_name().unwrap().to_string_lossy().into_owned();
            stages.push((format.to_owned(), stage, dir, expect));
        }
    }
    stages.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    stages
}

/// The seed state file of a project: the one `checkpoint list` shows.
fn seed_file(env: &TestEnv) -> PathBuf {
    let list = env.json(&["list"]);
    let seeds: Vec<&Value> = list["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry.get("source").is_some())
        .collect();
    assert_eq!(seeds.len(), 1, "{list:#}");
    env.project().join(seeds[0]["path"].as_str().unwrap())
}

/// Through the store, at every stage: `import` keeps the file's times and `export` gives back the
/// whole document; the imported workflow resumes as the read-only plan of the file did.
#[test]
fn every_stage_round_trips_through_the_store_and_resumes_alike() {
    let mut n = 0;
    for (format, stage, dir, expect) in stages() {
        if expect.get("error").is_some() {
            continue;
        }
        n += 1;
        let case = format!("{format}/{stage}");
        let env = TestEnv::bare();
        if let Some(now) = expect["now"].as_str() {
            env.set_now(now);
        }
        copy_dir(&dir, &env.project());
        std::fs::remove_file(env.project().join("expect.json")).unwrap();
        let path = seed_file(&env);
        let original = read(&path);
        // A finished file has nothing to resume.
        let finished = expect["next"]["action"] == "done";
        let read_only = env.json(&["resume", "--dry-run"]);
        // What the workflow and its step are for, whatever comes next (here no commit exists).
        for wanted in expect["text"].as_array().into_iter().flatten() {
            let wanted = wanted.as_str().unwrap();
            for format in ["human", "prompt"] {
                let text = env.ok(&["resume", "--dry-run", "--format", format]);
                assert!(
                    text.contains(wanted),
                    "{case}: `{wanted}` in {format}: {text}"
                );
            }
        }
        if !finished {
            assert_eq!(read_only["source"]["format"], format.as_str(), "{case}");
        }

        let imported = env.json(&["import", "."]);
        assert_eq!(read(&path), original, "{case}: the file is untouched");
        let exported: Value = serde_json::from_str(&env.ok(&["export", "--to", &format])).unwrap();
        let expected: Value = serde_json::from_str(&original).unwrap();
        assert_eq!(exported, expected, "{case}: `export` gives the file back");
        let execution = env.project().join("memory/state/execution.json");
        if execution.exists() {
            std::fs::create_dir_all(env.project().join("out")).unwrap();
            env.ok(&["export", "--to", &format, "--output", "out/phase.json"]);
            let written: Value =
                serde_json::from_str(&read(&env.project().join("out/execution.json"))).unwrap();
            let original: Value = serde_json::from_str(&read(&execution)).unwrap();
            assert_eq!(
                written, original,
                "{case}: `execution.json` comes back, zeros and all"
            );
        }

        // The file's own update time, not the import's (where the file holds any time).
        let updated_at = imported["workflow"]["updated_at"].as_str().unwrap();
        if original.contains("\"20") {
            assert!(
                original.contains(&updated_at[..16]),
                "{case}: the import keeps the file's time, not {updated_at}"
            );
        }
        if expect.get("missing_commits").is_none() && !finished {
            let ours = env.json(&["resume", "--dry-run"]);
            assert_eq!(ours.get("source"), None, "{case}");
            assert_eq!(
                ours["plan"]["next"], read_only["plan"]["next"],
                "{case}: the imported workflow resumes as its file did"
            );
            assert_eq!(
                ours["plan"]["next"]["action"], expect["next"]["action"],
                "{case}"
            );
        }
        // After `resume` applied its recoveries, the file still says where the work is: only
        // the update time moves (and a step sent back to pending has no start time). A phase
        // completed from its report on disk is a change the file records, and is left out here.
        let completes_work = read_only["plan"]["recoveries"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|recovery| recovery["code"] == "phase_output_present");
        if completes_work {
            continue;
        }
        env.ok(&["resume"]);
        let mut exported: Value =
            serde_json::from_str(&env.ok(&["export", "--to", &format])).unwrap();
        let mut expected = expected.clone();
        for value in [&mut exported, &mut expected] {
            let object = value.as_object_mut().unwrap();
            object.remove("updated_at");
            object.remove("last_updated");
            if let Some(last) = object
                .get_mut("last_execution")
                .and_then(Value::as_object_mut)
            {
                last.remove("timestamp");
            }
        }
        assert_eq!(exported, expected, "{case}: `export` after `resume`");
    }
    assert!(n >= 30, "{n} stages");
}

/// A broken state file is reported by `resume` as by `list` (file, line, column, field), with a
/// non-zero exit, left untouched, and shown to the model by `/checkpoint-resume`'s line.
#[test]
fn resume_reports_a_broken_seed_file() {
    let mut n = 0;
    for (format, stage, dir, expect) in stages() {
        let Some(error) = expect.get("error") else {
            continue;
        };
        n += 1;
        let case = format!("{format}/{stage}");
        let env = TestEnv::bare();
        copy_dir(&dir, &env.project());
        std::fs::remove_file(env.project().join("expect.json")).unwrap();
        let path = seed_file(&env);
        let relative = path
            .strip_prefix(env.project())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let before = read(&path);
        let wanted = [
            relative.clone(),
            format!("line {} column {}", error["line"], error["column"]),
            format!("field `{}`", error["field"].as_str().unwrap()),
        ];
        let output = env.run(&["resume"]);
        assert_eq!(output.status.code(), Some(6), "{case}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        for wanted in &wanted {
            assert!(
                stderr.contains(wanted.as_str()),
                "{case}: `{wanted}` in {stderr}"
            );
        }
        let prompt = env.ok(&["resume", "--format", "prompt", "--no-fail"]);
        for wanted in &wanted {
            assert!(
                prompt.contains(wanted.as_str()),
                "{case}: `{wanted}` in {prompt}"
            );
        }
        assert!(!prompt.contains("nothing to resume"), "{case}: {prompt}");
        let named = env.run(&["resume", &relative]);
        assert_eq!(named.status.code(), Some(6), "{case}: {named:?}");
        assert_eq!(read(&path), before, "{case}: the file is untouched");
    }
    assert_eq!(n, 5);
}

#[test]
fn resume_takes_a_seed_file_path_and_refuses_an_unknown_id() {
    let env = TestEnv::new();
    let (_, _, dir, _) = stages()
        .into_iter()
        .find(|(format, stage, _, _)| format == "orchestkit" && stage == "mid-run")
        .unwrap();
    copy_dir(&dir, &env.project());
    // A workflow of ours is unfinished too: the path still names the file.
    env.ok(&["init", "payments", "--phase", "design"]);
    let report = env.json(&["resume", ".claude/pipeline-state.json"]);
    assert_eq!(report["source"]["format"], "orchestkit");
    assert_eq!(report["source"]["path"], ".claude/pipeline-state.json");
    assert_eq!(report["applied"], false);
    assert_eq!(report["plan"]["workflow"], "feat-issue-42-dashboard");
    // A state file outside the places `checkpoint` looks is read by its path too.
    std::fs::create_dir_all(env.project().join("old")).unwrap();
    std::fs::copy(
        env.project().join(".claude/pipeline-state.json"),
        env.project().join("old/pipeline-state.json"),
    )
    .unwrap();
    let report = env.json(&["resume", "old/pipeline-state.json"]);
    assert_eq!(report["source"]["format"], "orchestkit");

    assert_snapshot!(env.snapshot(&["resume", "nope"]), @r"
    exit status: 4
    ----- stdout -----
    ----- stderr -----
    checkpoint::store::not_found

      × no workflow `nope` in `[TEMP]/project/.claude/checkpoints`, and no other system's state file by that name
      help: the workflows are: `payments`; resume one with `checkpoint resume <id>`
    ");
    let prompt = env.ok(&["resume", "nope", "--format", "prompt", "--no-fail"]);
    assert!(prompt.contains("no workflow `nope`"), "{prompt}");
}

/// dotagent keeps its state in two files: an import that starts from either one reads both and
/// makes the same workflow, every field kept (a running task's `attempts: 0` included).
#[test]
fn a_dotagent_import_from_either_of_its_files_keeps_every_field() {
    for scenario in [
        "mid-run",
        "fresh",
        "complete",
        "failed",
        "awaiting-approval",
    ] {
        let dir = fixture("dotagent", scenario);
        if !dir.join("memory/state/execution.json").exists() {
            continue;
        }
        let mut workflows = Vec::new();
        for file in ["memory/state/phase.json", "memory/state/execution.json"] {
            let env = TestEnv::new();
            copy_fixture(&env, "dotagent", scenario);
            // A running task that has not been attempted yet.
            let execution = env.project().join("memory/state/execution.json");
            let mut tasks: Value = serde_json::from_str(&read(&execution)).unwrap();
            if let Some(task) = tasks["tasks"]
                .as_array_mut()
                .and_then(|tasks| tasks.first_mut())
            {
                task["attempts"] = 0.into();
            }
            std::fs::write(&execution, tasks.to_string()).unwrap();
            env.ok(&["import", file]);
            let id = only_workflow(&env);
            let mut state = env.state(&id);
            // The source's path is the one thing that may differ.
            state["updated_at"] = Value::Null;
            workflows.push((file, state));
        }
        let (_, from_phase) = &workflows[0];
        let (_, from_execution) = &workflows[1];
        assert_eq!(
            from_phase["phases"], from_execution["phases"],
            "{scenario}: the same workflow from either file"
        );
        let tasks: usize = from_execution["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|phase| phase["tasks"].as_array().map_or(0, Vec::len))
            .sum();
        assert!(
            tasks > 0,
            "{scenario}: the tasks of `execution.json` are read"
        );
    }
}

/// The nine-step workflow's `error_message` on a step that did not fail is the note of where
/// the work stopped: it reaches `resume`'s text and its prompt, and the export writes it back.
#[test]
fn a_seed_note_about_the_interrupted_work_reaches_resume_and_its_prompt() {
    let note = "stopped halfway: the feed client is written, the reconnect logic is not";
    for status in ["in_progress", "started", "interrupted"] {
        let env = TestEnv::new();
        copy_fixture(&env, "nine-step", "mid-run");
        let path = env.project().join(".workflow-state.json");
        let mut state: Value = serde_json::from_str(&read(&path)).unwrap();
        state["last_execution"]["status"] = status.into();
        state["last_execution"]["error_message"] = note.into();
        std::fs::write(&path, serde_json::to_string_pretty(&state).unwrap()).unwrap();
        env.ok(&["import", ".workflow-state.json"]);
        for args in [
            &["resume", "--dry-run"][..],
            &["--format", "prompt", "resume", "--dry-run"],
        ] {
            let text = env.ok(args);
            assert!(text.contains(note), "{status} {args:?}: {text}");
        }
        let exported = env.project().join("out.json");
        env.ok(&[
            "export",
            "--to",
            "nine-step",
            "-o",
            exported.to_str().unwrap(),
        ]);
        let exported: Value = serde_json::from_str(&read(&exported)).unwrap();
        assert_eq!(
            exported["last_execution"]["error_message"], note,
            "{status}: {exported:#}"
        );
    }
}

/// Every other format's text about the interrupted work, whatever field holds it (OrchestKit's
/// `progress_description`, the checkpoints directory's `last_error` on a run that did not fail,
/// the recovery pattern's `error` on a phase that did not fail), reaches `resume`'s text and its
/// prompt, and the export writes it back where it was.
#[test]
fn every_formats_note_about_the_interrupted_work_reaches_resume_and_its_prompt() {
    let note = "stopped halfway: the token refresh is written, its tests are not";
    type Edit = fn(&mut Value, &str);
    let cases: [(&str, &str, Edit, &str); 5] = [
        (
            "orchestkit",
            ".claude/pipeline-state.json",
            |state, note| state["current_phase"]["progress_description"] = note.into(),
            "/current_phase/progress_description",
        ),
        (
            "checkpoints-dir",
            ".claude/checkpoints/orchestrate_auth_system_20251003_184530.json",
            |state, note| state["last_error"] = note.into(),
            "/last_error",
        ),
        (
            "checkpoints-dir",
            ".claude/checkpoints/orchestrate_auth_system_20251003_184530.json",
            |state, note| {
                state["status"] = "paused".into();
                state["last_error"] = json!({ "message": note, "phase": 2 });
            },
            "/last_error/message",
        ),
        (
            "checkpoint-recovery",
            ".claude/data/checkpoints/implement_027_auth.json",
            |state, note| {
                state["phase_metadata"]["3"] = json!({ "status": "in_progress", "error": note });
            },
            "/phase_metadata/3/error",
        ),
        (
            "checkpoint-recovery",
            ".claude/data/checkpoints/implement_027_auth.json",
            |state, note| {
                state["phase_metadata"]["3"] = json!({ "status": "started", "error": note });
            },
            "/phase_metadata/3/error",
        ),
    ];
    for (format, file, edit, pointer) in cases {
        let env = TestEnv::new();
        copy_fixture(&env, format, "mid-run");
        let path = env.project().join(file);
        let mut state: Value = serde_json::from_str(&read(&path)).unwrap();
        edit(&mut state, note);
        std::fs::write(&path, serde_json::to_string_pretty(&state).unwrap()).unwrap();
        env.ok(&["import", file]);
        for args in [
            &["resume", "--dry-run"][..],
            &["--format", "prompt", "resume", "--dry-run"],
        ] {
            let text = env.ok(args);
            assert!(text.contains(note), "{format} {pointer} {args:?}: {text}");
        }
        let exported = env.project().join("out.json");
        env.ok(&["export", "--to", format, "-o", exported.to_str().unwrap()]);
        let exported: Value = serde_json::from_str(&read(&exported)).unwrap();
        assert_eq!(
            exported.pointer(pointer),
            Some(&Value::from(note)),
            "{format} {pointer}: {exported:#}"
        );
    }
}
