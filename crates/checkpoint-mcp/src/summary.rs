//! The short text a tool result gives the model beside its structured document: what happened,
//! where the workflow stands, and what comes next.

use std::fmt::Write as _;

use serde_json::Value;

/// The fields of the commands' JSON documents that the server reads (here) or names to the model
/// (in the tools' descriptions), as dotted paths, `[]` for each element of an array. The
/// command line's tests check each against real documents, so a rename in the contract breaks
/// a test instead of every MCP client.
pub const DOCUMENT_FIELDS: &[&str] = &[
    WORKFLOW_ID,
    WORKFLOW_STATUS,
    PHASE_ID,
    PHASE_STATUS,
    NEXT_REASON,
    NEXT_COMMAND,
    RECOVERY_DESCRIPTION,
    DECISION_REQUIRED,
];

const WORKFLOW: &str = "workflow";
const WORKFLOW_ID: &str = "workflow.id";
const WORKFLOW_STATUS: &str = "workflow.status";
const PHASES: &str = "workflow.phases";
const PHASE_ID: &str = "workflow.phases[].id";
const PHASE_STATUS: &str = "workflow.phases[].status";
const PLAN: &str = "plan";
const NEXT: &str = "plan.next";
const NEXT_REASON: &str = "plan.next.reason";
/// Named in the `resume` tool's description too.
const NEXT_COMMAND: &str = "plan.next.command";
const RECOVERIES: &str = "plan.recoveries";
const RECOVERY_DESCRIPTION: &str = "plan.recoveries[].description";
const DECISION_REQUIRED: &str = "plan.decision_required";

/// The value at `path` (a dotted path of [`DOCUMENT_FIELDS`]) in `document`; for a path inside an
/// array's elements (`a[].b`), `document` is the element and the part after the last `[].` is
/// read.
fn field<'a>(document: &'a Value, path: &str) -> &'a Value {
    let relative = path.rsplit_once("[].").map_or(path, |(_, rest)| rest);
    relative.split('.').fold(document, |value, key| &value[key])
}

/// The elements of the array at `path`.
fn elements<'a>(document: &'a Value, path: &str) -> &'a [Value] {
    field(document, path)
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The text for a successful call: `headline`, then the workflow's phases (or the resume plan's
/// next action), then any warnings, then with `whole` the document itself.
pub(crate) fn describe(headline: &str, document: &Value, warnings: &str, whole: bool) -> String {
    let mut text = headline.to_owned();
    if field(document, WORKFLOW).is_object() {
        text.push('\n');
        text.push_str(&workflow_line(document));
    }
    if field(document, PLAN).is_object() {
        text.push('\n');
        text.push_str(&plan_lines(document));
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
fn workflow_line(document: &Value) -> String {
    let id = field(document, WORKFLOW_ID).as_str().unwrap_or("?");
    let status = field(document, WORKFLOW_STATUS).as_str().unwrap_or("?");
    let phases: Vec<String> = elements(document, PHASES)
        .iter()
        .map(|phase| {
            format!(
                "`{}` {}",
                field(phase, PHASE_ID).as_str().unwrap_or("?"),
                field(phase, PHASE_STATUS).as_str().unwrap_or("?")
            )
        })
        .collect();
    format!("workflow `{id}` is `{status}`: {}", phases.join(", "))
}

/// The next action of a resume plan and its recoveries.
fn plan_lines(document: &Value) -> String {
    let mut text = String::new();
    if field(document, NEXT).is_object() {
        let _ = write!(
            text,
            "next: {} (CLI: `{}`)",
            field(document, NEXT_REASON).as_str().unwrap_or("?"),
            field(document, NEXT_COMMAND).as_str().unwrap_or("?")
        );
    }
    for recovery in elements(document, RECOVERIES) {
        let _ = write!(
            text,
            "\nrecovery: {}",
            field(recovery, RECOVERY_DESCRIPTION)
                .as_str()
                .unwrap_or("?")
        );
    }
    if field(document, DECISION_REQUIRED) == &Value::Bool(true) {
        text.push_str("\na person must decide how to continue: ask the user");
    }
    text
}
