//! The plugin's MCP server (`.mcp.json` starts `bin/checkpoint mcp`) as the real client loads it:
//! its tools reach the model under the client's names, and a tool call changes the state.

use checkpoint_e2e::Turn;
use serde_json::json;

use crate::support::{Project, WORKFLOW, assert_contains_all, ops, phase};

/// What Claude Code puts before the name of a tool of the plugin's `checkpoint` server
/// (`mcp__plugin_<plugin>_<server>__<tool>`, see `client.rs`).
pub const MCP_PREFIX: &str = "mcp__plugin_checkpoint_checkpoint__";

/// The server's tools.
const TOOLS: [&str; 16] = [
    "status",
    "resume",
    "init",
    "start",
    "progress",
    "complete",
    "fail",
    "skip",
    "task_add",
    "task_start",
    "task_done",
    "task_fail",
    "note",
    "decide",
    "files",
    "pause",
];

#[test]
fn mcp_tools_reach_the_model_and_complete_changes_the_state_on_disk() {
    let complete = format!("{MCP_PREFIX}complete");
    let project = Project::interrupted(vec![
        Turn::tool_use(
            &complete,
            json!({ "phase": "design", "artifacts": ["README.md"] }),
        ),
        Turn::text("DONE"),
    ]);
    std::fs::write(project.dir().join("README.md"), "# Payments\n").unwrap();

    let output = project.claude(&["-p", "finish the design", "--allowedTools", &complete]);

    assert_eq!(output.code(), Some(0), "{output}");
    let main = project.mock.main_requests();
    assert_eq!(main.len(), 2, "{output}");
    let offered: Vec<&str> = main[0].body["tools"]
        .as_array()
        .expect("the request lists tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    // 2.1.330 defers MCP tools behind `ToolSearch`: they are named in the request, not listed
    // in `tools` (`client.rs`); 2.1.197 lists them with their schemas.
    let deferred = project.env.client_version() > (2, 1, 197);
    let request = main[0].body.to_string();
    for tool in TOOLS {
        let name = format!("{MCP_PREFIX}{tool}");
        if deferred {
            assert!(
                request.contains(&name),
                "`{name}` is not named in the model request"
            );
        } else {
            assert!(
                offered.contains(&name.as_str()),
                "`{name}` is not among the tools of the model request: {offered:?}"
            );
        }
    }
    if deferred {
        assert!(offered.contains(&"ToolSearch"), "{offered:?}");
    } else {
        // The schema the server gives reaches the model as the tool's input schema.
        let offered_complete = main[0].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["name"] == complete.as_str())
            .unwrap();
        assert_eq!(
            offered_complete["input_schema"]["required"],
            json!(["phase"]),
            "{offered_complete:#}"
        );
    }

    // The client gives the model the structured result, the command's JSON document, and drops
    // the text beside it (`client.rs`).
    let result = main[1].tool_results()[0].clone();
    assert_ne!(result["is_error"], true, "{result:#}");
    let document: serde_json::Value = serde_json::from_str(
        result["content"]
            .as_str()
            .expect("the result is one string"),
    )
    .unwrap_or_else(|err| panic!("the result is not the JSON document ({err}): {result:#}"));
    assert_eq!(document["version"], 1, "{result:#}");
    assert_eq!(phase(&document["workflow"], "design")["status"], "complete");
    let state = project.state(WORKFLOW);
    let design = phase(&state, "design");
    assert_eq!(design["status"], "complete", "{state:#}");
    assert_eq!(design["artifacts"][0]["path"], "README.md", "{state:#}");
}

#[test]
fn a_refused_mcp_call_is_a_tool_error_with_the_cli_hint_and_writes_nothing() {
    let complete = format!("{MCP_PREFIX}complete");
    let project = Project::interrupted(vec![
        Turn::tool_use(&complete, json!({ "phase": "build" })),
        Turn::text("DONE"),
    ]);

    let output = project.claude(&["-p", "finish the build", "--allowedTools", &complete]);

    assert_eq!(output.code(), Some(0), "{output}");
    let main = project.mock.main_requests();
    let result = main[1].tool_results()[0].clone();
    assert_eq!(result["is_error"], true, "{result:#}");
    // An error reaches the model as the result's text: the CLI's message, code and hint.
    let text = result["content"].to_string();
    assert_contains_all(
        "the refused MCP `complete`",
        &text,
        &["error [checkpoint::", "hint: ", "design"],
    );
    // The hooks journal their own entries; the refused call adds none.
    let ops = ops(&project.journal(WORKFLOW));
    assert!(!ops.iter().any(|op| op == "phase_complete"), "{ops:?}");
    let state = project.state(WORKFLOW);
    assert_eq!(phase(&state, "build")["status"], "pending", "{state:#}");
    assert_eq!(
        phase(&state, "design")["status"],
        "in_progress",
        "{state:#}"
    );
}
