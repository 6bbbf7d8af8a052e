//! `checkpoint list`: the workflows in the checkpoint directory.

use std::fmt::Write as _;

use checkpoint_core::{PhaseStatus, WorkflowId, WorkflowStatus};
use chrono::{DateTime, Utc};
use miette::{IntoDiagnostic, Result};
use serde::Serialize;

use crate::{
    cli::Format,
    ctx::Ctx,
    output::{self, JSON_VERSION, Paint},
};

/// The JSON document of `checkpoint list`.
#[derive(Debug, Serialize)]
struct ListReport {
    version: u32,
    workflows: Vec<ListEntry>,
}

/// One workflow in the list.
#[derive(Debug, Serialize)]
struct ListEntry {
    id: WorkflowId,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    status: Option<WorkflowStatus>,
    phases_done: usize,
    phases_total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    current_phase: Option<String>,
    updated_at: Option<DateTime<Utc>>,
    dir: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

pub(crate) fn run(ctx: &Ctx) -> Result<()> {
    let mut entries: Vec<ListEntry> = ctx
        .store
        .list()?
        .into_iter()
        .map(|id| {
            let dir = ctx.store.workflow_dir(&id).to_string_lossy().into_owned();
            match ctx.store.load(&id) {
                Ok(loaded) => {
                    let workflow = loaded.workflow;
                    let current = workflow
                        .phases
                        .iter()
                        .find(|phase| {
                            matches!(
                                phase.status,
                                PhaseStatus::InProgress
                                    | PhaseStatus::AwaitingApproval
                                    | PhaseStatus::Failed
                            )
                        })
                        .map(|phase| phase.id.to_string());
                    ListEntry {
                        phases_done: workflow.n_done(),
                        phases_total: workflow.phases.len(),
                        title: workflow.title,
                        status: Some(workflow.status),
                        current_phase: current,
                        updated_at: Some(workflow.updated_at),
                        id,
                        dir,
                        error: None,
                    }
                }
                Err(err) => ListEntry {
                    id,
                    title: None,
                    status: None,
                    phases_done: 0,
                    phases_total: 0,
                    current_phase: None,
                    updated_at: None,
                    dir,
                    error: Some(err.to_string()),
                },
            }
        })
        .collect();
    entries.sort_by(|a, b| {
        b.updated_at
            .cmp(&a.updated_at)
            .then_with(|| a.id.cmp(&b.id))
    });
    match ctx.format {
        Format::Json => output::emit_json(&ListReport {
            version: JSON_VERSION,
            workflows: entries,
        })
        .into_diagnostic(),
        Format::Human => {
            let paint = Paint::new(ctx.color);
            if entries.is_empty() {
                output::note(&format!("no workflows in `{}`", ctx.store.root().display()));
                return Ok(());
            }
            let width = entries
                .iter()
                .map(|entry| entry.id.as_str().len())
                .max()
                .unwrap_or(0);
            let mut text = String::new();
            for entry in &entries {
                let id = format!("{:width$}", entry.id.as_str());
                match entry.status {
                    None => {
                        let error = entry.error.as_deref().unwrap_or("unknown error");
                        let _ = writeln!(
                            text,
                            "{}  {}",
                            paint.bold(&id),
                            paint.red(&format!("unreadable: {error}"))
                        );
                    }
                    Some(status) => {
                        let current = entry
                            .current_phase
                            .as_deref()
                            .map(|phase| format!(", at `{phase}`"))
                            .unwrap_or_default();
                        let when = entry
                            .updated_at
                            .map(|at| output::ago(at, ctx.now))
                            .unwrap_or_default();
                        let _ = writeln!(
                            text,
                            "{}  {}  {} of {} phases done{current}, {when}",
                            paint.bold(&id),
                            output::workflow_status(status, paint),
                            entry.phases_done,
                            entry.phases_total
                        );
                    }
                }
            }
            output::emit(&text).into_diagnostic()
        }
    }
}
