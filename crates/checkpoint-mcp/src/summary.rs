//! The short text a tool result gives the model beside its structured document: what happened,
//! where the workflow stands, and what comes next.

use std::fmt::Write as _;

use serde_json::Value;

/// The text for a successful call: `headline`, then the workflow's phases (or the resume plan's
/// next action), then any warnings, then with `whole` the document itself.
pub(crate) fn describe(headline: &str, document: &Value, warnings: &str, whole: bool) -> String {
    let mut text = headline.to_owned();
    if let Some(workflow) = document.get("workflow").filter(|w| w.is_object()) {
        text.push('\n');
        text.push_str(&workflow_line(workflow));
    }
    if let Some(plan) = document.get("plan").filter(|p| p.is_object()) {
        text.push('\n');
        text.push_str(&plan_lines(plan));
    }
    if !warnings.is_empty() {
        text.push_str("\nwarnings:\n");
        text.push_str(warnings);
    }
    if whole {
        text.push_str("\n\n");
        text.push_str(&serde_json::to_string(document).unwrap_or_default());
    }
    text
}

/// "workflow `id` is `status`: `a` complete, `b` in_progress; ready: `c`".
fn workflow_line(workflow: &Value) -> String {
    let id = workflow["id"].as_str().unwrap_or("?");
    let status = workflow["status"].as_str().unwrap_or("?");
    let phases: Vec<String> = workflow["phases"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|phase| {
            format!(
                "`{}` {}",
                phase["id"].as_str().unwrap_or("?"),
                phase["status"].as_str().unwrap_or("?")
            )
        })
        .collect();
    format!("workflow `{id}` is `{status}`: {}", phases.join(", "))
}

/// The next action of a resume plan and its recoveries.
fn plan_lines(plan: &Value) -> String {
    let mut text = String::new();
    let next = &plan["next"];
    if next.is_object() {
        let _ = write!(
            text,
            "next: {} (CLI: `{}`)",
            next["reason"].as_str().unwrap_or("?"),
            next["command"].as_str().unwrap_or("?")
        );
    }
    for recovery in plan["recoveries"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let _ = write!(
            text,
            "\nrecovery: {}",
            recovery["description"].as_str().unwrap_or("?")
        );
    }
    if plan["decision_required"] == true {
        text.push_str("\na person must decide how to continue: ask the user");
    }
    text
}
