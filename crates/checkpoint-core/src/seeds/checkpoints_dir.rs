//! The checkpoints directory's `.claude/checkpoints/{type}_{project}_{YYYYMMDD_HHMMSS}.json` (and
//! `failed/`): a workflow type and description, a status, and numbered phases.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::{
    error::Result,
    model::{ContextSummary, Pause, PhaseStatus, Workflow, WorkflowStatus},
    seeds::{
        carry::{Builder, Carry},
        common::{
            Built, ImportOptions, Imported, MAX_PHASES, SeedSource, complete_pending,
            current_index, new_workflow, numbered_phases, workflow_id,
        },
        document::{Num, fields_of, invalid, parse, time_value},
        format::SeedFormat,
    },
};

const FORMAT: SeedFormat = SeedFormat::CheckpointsDir;

const ROOT: &str = "$";

#[derive(Deserialize)]
struct CheckpointFile {
    checkpoint_id: Option<String>,
    workflow_type: Option<String>,
    workflow_description: Option<String>,
    created_at: Option<Value>,
    updated_at: Option<Value>,
    status: Option<String>,
    current_phase: Option<Num>,
    total_phases: Option<Num>,
    completed_phases: Option<Vec<Num>>,
    last_error: Option<Value>,
}

pub(crate) fn read(source: &SeedSource, options: &ImportOptions) -> Result<Imported> {
    let path = &source.main.path;
    let (file, raw): (CheckpointFile, _) = parse(FORMAT, path, &source.main.bytes)?;
    let mut carry = Carry::default();
    let top = carry.object(ROOT, &raw, fields_of::<CheckpointFile>());
    let [created_at, updated_at] = [
        ("created_at", &file.created_at),
        ("updated_at", &file.updated_at),
    ]
    .map(|(field, value)| top.time(field, value.as_ref()).unwrap_or(options.now));

    let current = file.current_phase.and_then(Num::ordinal);
    let completed = Num::ordinals(file.completed_phases.as_ref());
    let n_phases = [file.total_phases.and_then(Num::ordinal), current]
        .into_iter()
        .flatten()
        .chain(completed.iter().copied())
        .max()
        .unwrap_or(0);
    if n_phases == 0 || n_phases > MAX_PHASES {
        return Err(invalid(
            FORMAT,
            path,
            &source.main.bytes,
            format!(
                "it names {n_phases} phases (from `total_phases`, `current_phase` and `completed_phases`)"
            ),
        ));
    }
    let mut phases = numbered_phases(n_phases, |n| format!("Phase {n}"));
    for n in &completed {
        let phase = &mut phases[*n as usize - 1];
        phase.status = PhaseStatus::Complete;
        phase.attempts = 1;
    }

    let status = file.status.as_deref().unwrap_or("").to_lowercase();
    let mut pause = None;
    if let Some(current) = current {
        complete_pending(&mut phases[..current as usize - 1]);
        let phase = &mut phases[current as usize - 1];
        if phase.status == PhaseStatus::Pending {
            match status.as_str() {
                "" | "pending" | "created" => {}
                "completed" | "complete" | "done" | "success" => {
                    phase.status = PhaseStatus::Complete;
                }
                "failed" | "error" => {
                    phase.status = PhaseStatus::Failed;
                    phase.attempts = 1;
                    phase.failures = 1;
                    phase.error = file.last_error.as_ref().and_then(error_text);
                }
                _ => {
                    phase.status = PhaseStatus::InProgress;
                    phase.attempts = 1;
                    // An error on a run that did not fail (paused, interrupted) is the note of
                    // where it stopped: the phase's progress, and the export writes it back.
                    if let Some(note) = file.last_error.as_ref().and_then(error_text) {
                        phase.progress = Some(note);
                        carry.object_mut(ROOT).keep(&raw, "last_error");
                    }
                }
            }
        }
    }
    if status == "paused" {
        pause = Some(Pause {
            reason: "paused".into(),
            at: updated_at,
            until: None,
        });
    }

    let mut context = ContextSummary::default();
    if let Some(plan_path) = raw
        .get("workflow_state")
        .and_then(|state| state.get("plan_path"))
        .and_then(Value::as_str)
    {
        context.file_paths.push(plan_path.to_owned());
    }
    let stem = path.file_stem().and_then(|stem| stem.to_str());
    let id = workflow_id(
        options,
        &[file.checkpoint_id.as_deref(), stem],
        "checkpoint",
    );
    let mut workflow = new_workflow(id, phases, created_at, updated_at);
    workflow.description = file.workflow_description.clone();
    workflow.kind = file.workflow_type.clone();
    workflow.context = context;
    workflow.pause = pause;
    Ok(Imported {
        workflow,
        carry,
        documents: vec![(ROOT, raw)],
    })
}

pub(crate) fn build(workflow: &Workflow, builder: &mut Builder<'_>) -> Result<Vec<Built>> {
    let n_phases = workflow.phases.len();
    let mut top = Map::new();
    top.insert("checkpoint_id".into(), Value::from(workflow.id.as_str()));
    if let Some(kind) = &workflow.kind {
        top.insert("workflow_type".into(), Value::from(kind.as_str()));
    }
    if let Some(description) = &workflow.description {
        top.insert(
            "workflow_description".into(),
            Value::from(description.as_str()),
        );
    }
    top.insert("created_at".into(), time_value(workflow.created_at));
    top.insert("updated_at".into(), time_value(workflow.updated_at));
    let status = match workflow.status {
        WorkflowStatus::Pending => "pending",
        WorkflowStatus::InProgress => "in_progress",
        WorkflowStatus::Paused => "paused",
        WorkflowStatus::AwaitingApproval => "awaiting_approval",
        WorkflowStatus::Failed => "failed",
        WorkflowStatus::Complete => "completed",
        WorkflowStatus::Abandoned => "abandoned",
    };
    top.insert("status".into(), Value::from(status));
    let current = current_index(workflow).min(n_phases.saturating_sub(1));
    top.insert("current_phase".into(), Value::from(current + 1));
    top.insert("total_phases".into(), Value::from(n_phases));
    top.insert(
        "completed_phases".into(),
        workflow
            .phases
            .iter()
            .enumerate()
            .filter(|(_, phase)| phase.status.is_done())
            .map(|(index, _)| Value::from(index + 1))
            .collect(),
    );
    if !builder.carry().keeps(ROOT, "workflow_state") {
        top.insert("workflow_state".into(), Value::Object(Map::new()));
    }
    let error = workflow
        .phases
        .iter()
        .find(|phase| phase.status == PhaseStatus::Failed)
        .and_then(|phase| phase.error.as_deref());
    if error.is_some() || !builder.carry().keeps(ROOT, "last_error") {
        top.insert("last_error".into(), error.map_or(Value::Null, Value::from));
    }
    Ok(vec![Built {
        root: ROOT,
        name: "checkpoint.json",
        value: builder.object(ROOT, top),
    }])
}

/// The text of `last_error`: a string, an object's `message`, or the JSON itself.
fn error_text(error: &Value) -> Option<String> {
    match error {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        Value::Object(object) => Some(
            object
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned),
        ),
        other => Some(other.to_string()),
    }
}
