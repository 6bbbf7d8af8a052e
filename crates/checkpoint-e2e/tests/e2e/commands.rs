//! The slash commands as a user types them: `/checkpoint-resume` (a skill, so unnamespaced) and
//! `/checkpoint:status` (a command, so namespaced; facts §a).

use std::fs;

use checkpoint_e2e::Turn;
use serde_json::Value;

use crate::support::{NOTE, Project, WORKFLOW, assert_contains_all, ops, phase};

/// Text of the resume skill's body around its `!` line, proof that the skill was expanded.
const RESUME_BODY: &str = "has validated the saved state";

#[test]
fn checkpoint_resume_puts_the_plan_in_the_request_and_applies_the_recovery() {
    let project = Project::interrupted(vec![Turn::text("RESUMING")]);

    let output = project.claude(&["-p", "/checkpoint-resume"]);

    assert_eq!(output.code(), Some(0), "{output}");
    project.assert_requests(1, &output);
    assert!(output.stdout.contains("RESUMING"), "{output}");
    let main = project.mock.main_requests();
    assert_eq!(main.len(), 1, "{output}");
    // The bang line's output is in the expanded body, a user message (facts §a); the client
    // records the skill typed without its namespace under its full name.
    let user = main[0].role_text("user");
    assert_contains_all(
        "the expanded /checkpoint-resume",
        &user,
        &[
            "<command-name>/checkpoint:checkpoint-resume</command-name>",
            RESUME_BODY,
            &format!("workflow `{WORKFLOW}`"),
            "**Next:**",
            NOTE,
            "`checkpoint start design`",
        ],
    );
    assert!(!user.contains("!`"), "the bang line was not run:\n{user}");
    // `checkpoint resume` (not `--dry-run`) put the interrupted phase back to pending.
    let state = project.state(WORKFLOW);
    let design = phase(&state, "design");
    assert_eq!(design["status"], "pending", "{state:#}");
    assert_eq!(design["progress"], NOTE, "{state:#}");
    assert!(
        ops(&project.journal(WORKFLOW)).contains(&"phase_reset".to_owned()),
        "{:?}",
        ops(&project.journal(WORKFLOW))
    );
}

#[test]
fn checkpoint_resume_with_an_id_picks_that_workflow() {
    let project = Project::new(vec![Turn::text("RESUMING")]);
    project.start_interrupted("alpha-wf", "ALPHA-NOTE");
    project.start_interrupted("beta-wf", "BETA-NOTE");

    let output = project.claude(&["-p", "/checkpoint-resume beta-wf"]);

    assert_eq!(output.code(), Some(0), "{output}");
    project.assert_requests(1, &output);
    let user = project.mock.main_requests()[0].role_text("user");
    assert_contains_all(
        "the expanded /checkpoint-resume beta-wf",
        &user,
        &[
            "<command-args>beta-wf</command-args>",
            "workflow `beta-wf`",
            "BETA-NOTE",
            "**Next:**",
        ],
    );
    assert!(!user.contains("ALPHA-NOTE"), "{user}");
    assert_eq!(
        phase(&project.state("beta-wf"), "design")["status"],
        "pending"
    );
    // The other workflow is left as it was.
    assert_eq!(
        phase(&project.state("alpha-wf"), "design")["status"],
        "in_progress"
    );
    assert!(!ops(&project.journal("alpha-wf")).contains(&"phase_reset".to_owned()));
}

#[test]
fn checkpoint_resume_with_nothing_to_resume_still_reaches_the_model() {
    let project = Project::new(vec![Turn::text("NOTHING-HERE")]);

    let output = project.claude(&["-p", "/checkpoint-resume"]);

    assert_eq!(output.code(), Some(0), "{output}");
    // A failing bang line would drop the whole command silently (facts §b GOTCHA 2).
    project.assert_requests(1, &output);
    assert!(output.stdout.contains("NOTHING-HERE"), "{output}");
    let main = project.mock.main_requests();
    assert_eq!(main.len(), 1, "{output}");
    let user = main[0].role_text("user");
    assert_contains_all(
        "the expanded /checkpoint-resume",
        &user,
        &[RESUME_BODY, "nothing to resume"],
    );
}

#[test]
fn checkpoint_status_works_as_typed_and_changes_nothing() {
    let project = Project::interrupted(vec![Turn::text("STATUS-SHOWN")]);
    let state_before = project.state(WORKFLOW);
    let n_journal_before = project.journal(WORKFLOW).len();

    let output = project.claude(&["-p", "/checkpoint:status"]);

    assert_eq!(output.code(), Some(0), "{output}");
    project.assert_requests(1, &output);
    assert!(output.stdout.contains("STATUS-SHOWN"), "{output}");
    let user = project.mock.main_requests()[0].role_text("user");
    assert_contains_all(
        "the expanded /checkpoint:status",
        &user,
        &[
            "<command-name>/checkpoint:status</command-name>",
            "read-only view",
            &format!("workflow `{WORKFLOW}`"),
            NOTE,
            "**Next:**",
        ],
    );
    // The phases are untouched; the only new journal entries are the session's heartbeats.
    let state_after = project.state(WORKFLOW);
    assert_eq!(state_after["phases"], state_before["phases"]);
    let journal = project.journal(WORKFLOW);
    let new_ops = ops(&journal[n_journal_before..]);
    assert!(new_ops.iter().all(|op| op == "heartbeat"), "{new_ops:?}");
}

/// A state the binary cannot read must not silence `/checkpoint-resume`: the bang line exits 0
/// and the model learns why there is no plan.
#[test]
fn checkpoint_resume_with_a_state_from_a_newer_version_explains_it_to_the_model() {
    let project = Project::interrupted(vec![Turn::text("EXPLAINED")]);
    let state_path = project.store().join(WORKFLOW).join("state.json");
    let mut state: Value = project.state(WORKFLOW);
    state["schema_version"] = 99.into();
    fs::write(&state_path, serde_json::to_string_pretty(&state).unwrap()).unwrap();

    let output = project.claude(&["-p", "/checkpoint-resume"]);

    assert_eq!(output.code(), Some(0), "{output}");
    project.assert_requests(1, &output);
    let main = project.mock.main_requests();
    assert_eq!(main.len(), 1, "{output}");
    let user = main[0].role_text("user");
    assert_contains_all(
        "the expanded /checkpoint-resume",
        &user,
        &[RESUME_BODY, WORKFLOW, "schema version 99"],
    );
    // FIXME: today the bang line prints "nothing to resume" (the unreadable workflow is only
    // skipped with a warning on stderr, which does not reach the model): wrong advice.
    assert!(!user.contains("nothing to resume"), "{user}");
    // The file is left untouched.
    let left: Value = serde_json::from_str(&fs::read_to_string(&state_path).unwrap()).unwrap();
    assert_eq!(left, state);
}

/// Words after the id are pasted into the `!` line (facts §b), so they must not make it fail: a
/// failing line drops the command without a word (facts §b GOTCHA 2).
#[test]
fn checkpoint_resume_with_extra_words_still_reaches_the_model() {
    let project = Project::interrupted(vec![Turn::text("RESUMING")]);

    let output = project.claude(&["-p", &format!("/checkpoint-resume {WORKFLOW} please")]);

    assert_eq!(output.code(), Some(0), "{output}");
    // FIXME: today `checkpoint resume --no-fail payments-e2e please` exits 2 (clap: unexpected
    // argument `please`), so claude drops the command and prints an empty line.
    project.assert_requests(1, &output);
    assert!(output.stdout.contains("RESUMING"), "{output}");
    let user = project.mock.main_requests()[0].role_text("user");
    assert_contains_all(
        "the expanded /checkpoint-resume",
        &user,
        &[RESUME_BODY, WORKFLOW],
    );
}

/// Another checkpoint system's state file that does not parse is the only record of its work:
/// `/checkpoint-resume` shows the model where it is broken (file, line, column, field) instead of
/// "nothing to resume", and the file is left untouched.
#[test]
fn checkpoint_resume_shows_a_broken_seed_file_to_the_model() {
    let project = Project::new(vec![Turn::text("EXPLAINED")]);
    let path = project.dir().join(".claude/pipeline-state.json");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let broken = "{\n  \"completed_phases\": [],\n  \"current_phase\": {\"id\": \"write-source\", \"name\": \"Write Source Files\",},\n  \"remaining_phases\": []\n}\n";
    fs::write(&path, broken).unwrap();

    let output = project.claude(&["-p", "/checkpoint-resume"]);

    assert_eq!(output.code(), Some(0), "{output}");
    project.assert_requests(1, &output);
    let user = project.mock.main_requests()[0].role_text("user");
    assert_contains_all(
        "the expanded /checkpoint-resume",
        &user,
        &[
            RESUME_BODY,
            ".claude/pipeline-state.json",
            "line 3 column",
            "field `name`",
        ],
    );
    assert!(!user.contains("nothing to resume"), "{user}");
    assert_eq!(fs::read_to_string(&path).unwrap(), broken);
}
