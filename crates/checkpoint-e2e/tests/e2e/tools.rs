//! Tool calls of the model change the state: `checkpoint` through the Bash tool (the plugin's
//! `bin/` is on its PATH, facts §c), a Write of a declared output and a `git commit` through the
//! PostToolUse hook.

use std::fs;
use std::time::Duration;

use checkpoint_e2e::Turn;
use serde_json::json;

use crate::support::{Project, WORKFLOW, assert_contains_all, path_str, phase};

#[test]
fn bash_tool_runs_the_bundled_checkpoint_to_record_progress_and_complete() {
    let project = Project::interrupted(vec![
        Turn::tool_use(
            "Bash",
            json!({ "command": "checkpoint progress design \"NOTE-FROM-BASH\"", "description": "progress" }),
        ),
        Turn::tool_use(
            "Bash",
            json!({ "command": "checkpoint complete design && command -v checkpoint", "description": "complete" }),
        ),
        Turn::text("DONE"),
    ]);

    let output = project.claude(&["-p", "record it", "--allowedTools", "Bash"]);

    assert_eq!(output.code(), Some(0), "{output}");
    let main = project.mock.main_requests();
    assert_eq!(main.len(), 3, "{output}");
    let progress_result = main[1].tool_results().last().copied().cloned().unwrap();
    assert_eq!(progress_result["is_error"], false, "{progress_result:#}");
    let complete_result = main[2].tool_results().last().copied().cloned().unwrap();
    assert_eq!(complete_result["is_error"], false, "{complete_result:#}");
    // The `checkpoint` that ran is the bundle's, not some other one on PATH.
    let bundled = project.plugin.checkpoint_bin();
    assert_contains_all(
        "the result of `checkpoint complete`",
        &main[2].model_text(),
        &["completed phase `design`", path_str(&bundled)],
    );
    let state = project.state(WORKFLOW);
    let design = phase(&state, "design");
    assert_eq!(design["status"], "complete", "{state:#}");
    assert_eq!(design["progress"], "NOTE-FROM-BASH", "{state:#}");
}

/// The skills allow only `Bash(checkpoint:*)`; that rule alone lets the model record state.
#[test]
fn bash_prefix_rule_for_checkpoint_is_enough_to_record_progress() {
    let project = Project::interrupted(vec![
        Turn::tool_use(
            "Bash",
            json!({ "command": "checkpoint progress design \"NOTE-UNDER-PREFIX-RULE\"", "description": "progress" }),
        ),
        Turn::text("DONE"),
    ]);

    let output = project.claude(&["-p", "record it", "--allowedTools", "Bash(checkpoint:*)"]);

    assert_eq!(output.code(), Some(0), "{output}");
    let result = project.mock.main_requests()[1].tool_results()[0].clone();
    assert_eq!(result["is_error"], false, "{result:#}");
    let state = project.state(WORKFLOW);
    assert_eq!(
        phase(&state, "design")["progress"],
        "NOTE-UNDER-PREFIX-RULE",
        "{state:#}"
    );
}

#[test]
fn write_of_the_declared_output_completes_the_phase() {
    let project = Project::new(vec![]);
    let plan = project.dir().join("plan.json");
    fs::write(
        &plan,
        json!({ "phases": [
            { "id": "design", "outputs": ["docs/design.md"] },
            { "id": "build", "dependencies": ["design"] },
        ] })
        .to_string(),
    )
    .unwrap();
    project.checkpoint_ok(&["init", WORKFLOW, "--plan", path_str(&plan)]);
    project.checkpoint_ok(&["start", "design"]);
    let target = project.dir().join("docs").join("design.md");
    project.mock.push_turns([
        Turn::tool_use(
            "Write",
            json!({ "file_path": path_str(&target), "content": "# Design\n\nThe API.\n" }),
        ),
        Turn::text("WRITTEN"),
    ]);

    let output = project.claude(&["-p", "write the design", "--allowedTools", "Write"]);

    assert_eq!(output.code(), Some(0), "{output}");
    assert_eq!(
        fs::read_to_string(&target).unwrap(),
        "# Design\n\nThe API.\n"
    );
    let state = project.wait_for_state(WORKFLOW, Duration::from_secs(5), |state| {
        phase(state, "design")["status"] == "complete"
    });
    let design = phase(&state, "design");
    let artifacts: Vec<&str> = design["artifacts"]
        .as_array()
        .map(|artifacts| {
            artifacts
                .iter()
                .filter_map(|a| a["path"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(artifacts, ["docs/design.md"], "{state:#}");
    assert_eq!(phase(&state, "build")["status"], "pending", "{state:#}");
}

#[test]
fn git_commit_records_the_sha_on_the_phase_in_progress() {
    let project = Project::interrupted(vec![
        Turn::tool_use(
            "Bash",
            json!({
                "command": "echo feature > feature.txt && git add feature.txt && git commit -q -m 'Add the feature'",
                "description": "commit",
            }),
        ),
        Turn::text("COMMITTED"),
    ]);
    let head_before = project.head_sha();

    let output = project.claude(&["-p", "commit it", "--allowedTools", "Bash"]);

    assert_eq!(output.code(), Some(0), "{output}");
    let head = project.head_sha();
    assert_ne!(
        head, head_before,
        "the scripted commit did not happen\n{output}"
    );
    let state = project.wait_for_state(WORKFLOW, Duration::from_secs(5), |state| {
        !phase(state, "design")["commit_sha"].is_null()
    });
    let design = phase(&state, "design");
    assert_eq!(design["commit_sha"], head.as_str(), "{state:#}");
    assert_eq!(design["status"], "in_progress", "{state:#}");
}
