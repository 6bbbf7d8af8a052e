//! The short text a tool result gives the model beside its structured document: what happened,
//! where the workflow stands, and what comes next.

use std::fmt::Write as _;

use checkpoint_contract::document::{PlanHead, Summary, WorkflowHead};
use serde::Deserialize as _;
use serde_json::Value;

/// The text for a successful call: `headline`, then the workflow's phases (or the resume plan's
/// next action), then any warnings, then with `whole` the document itself.
pub(crate) fn describe(headline: &str, document: &Value, warnings: &str, whole: bool) -> String {
    let mut text = headline.to_owned();
    // A document the contract cannot read (a newer `checkpoint`) still goes whole to the client,
    // as structured content; only its summary is left out.
    let summary = Summary::deserialize(document).unwrap_or_default();
    if let Some(workflow) = &summary.workflow {
        text.push('\n');
        text.push_str(&workflow_line(workflow));
    }
    if let Some(plan) = &summary.plan {
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

/// "workflow `id` is `status`: `a` complete, `b` in_progress".
fn workflow_line(workflow: &WorkflowHead) -> String {
    let phases: Vec<String> = workflow
        .phases
        .iter()
        .map(|phase| format!("`{}` {}", phase.id, phase.status))
        .collect();
    format!(
        "workflow `{}` is `{}`: {}",
        workflow.id,
        workflow.status,
        phases.join(", ")
    )
}

/// The next action of a resume plan and its recoveries.
fn plan_lines(plan: &PlanHead) -> String {
    let mut text = String::new();
    let _ = write!(
        text,
        "next: {} (CLI: `{}`)",
        plan.next.reason,
        plan.next.command.as_deref().unwrap_or("?")
    );
    for recovery in &plan.recoveries {
        let _ = write!(text, "\nrecovery: {}", recovery.description);
    }
    if plan.decision_required {
        text.push_str("\na person must decide how to continue: ask the user");
    }
    text
}
