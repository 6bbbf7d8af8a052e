//! The JSON documents commands print, as dedicated types.

use std::path::{Path, PathBuf};

use checkpoint_core::{
    PhaseId, Workflow, WorkflowStatus,
    history::Change,
    journal::Entry,
    resume::{Finding, ResumePlan},
    retention,
    store::{Loaded, Recovery},
};
use chrono::{DateTime, Utc};
use miette::{IntoDiagnostic, Result};
use serde::Serialize;

use crate::{
    git::LeftOut,
    output::{self, JSON_VERSION, PhaseView},
};

/// The result of a command that reads or changes one workflow.
#[derive(Debug, Serialize)]
pub(crate) struct WorkflowReport<'a> {
    version: u32,
    workflow: &'a Workflow,
    recoveries: &'a [Recovery],
    /// What the command warned about (as on stderr).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
    /// The checkpoint commit the command made or tried, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    checkpoint_commit: Option<CommitReport>,
}

/// A checkpoint commit: its SHA (none when there was nothing to commit), and the changed files
/// left out of it.
#[derive(Debug, Serialize)]
pub(crate) struct CommitReport {
    pub(crate) sha: Option<String>,
    pub(crate) left_out: Vec<LeftOut>,
}

impl<'a> WorkflowReport<'a> {
    pub(crate) fn new(loaded: &'a Loaded) -> Self {
        Self {
            version: JSON_VERSION,
            workflow: &loaded.workflow,
            recoveries: &loaded.recoveries,
            warnings: Vec::new(),
            checkpoint_commit: None,
        }
    }

    pub(crate) fn with_warnings(self, warnings: Vec<String>) -> Self {
        Self { warnings, ..self }
    }

    pub(crate) fn with_commit(self, commit: CommitReport) -> Self {
        Self {
            checkpoint_commit: Some(commit),
            ..self
        }
    }

    pub(crate) fn emit(&self) -> Result<()> {
        output::emit_json(self).into_diagnostic()
    }
}

/// The JSON document of `checkpoint resume`.
#[derive(Debug, Serialize)]
pub(crate) struct ResumeReport<'a> {
    pub(crate) version: u32,
    /// Whether the recoveries (and any chosen action) were written.
    pub(crate) applied: bool,
    /// Where an archived workflow went (`--fresh`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) archived_to: Option<String>,
    /// The phases `--restart` sent back to pending because they depend on the restarted one.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) reset: &'a [PhaseId],
    pub(crate) plan: Option<&'a ResumePlan>,
    /// When the plan is of another system's state file: its format and path (read only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) source: Option<SeedOrigin>,
}

/// Another checkpoint system's state file that a read-only plan was made from.
#[derive(Debug, Serialize)]
pub(crate) struct SeedOrigin {
    pub(crate) format: &'static str,
    pub(crate) path: String,
}

/// The JSON document of `checkpoint list`.
#[derive(Debug, Serialize)]
pub(crate) struct ListReport {
    pub(crate) version: u32,
    pub(crate) workflows: Vec<ListEntry>,
}

/// One workflow in the list.
#[derive(Debug, Serialize)]
pub(crate) struct ListEntry {
    pub(crate) id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<String>,
    pub(crate) status: Option<WorkflowStatus>,
    pub(crate) phases_done: usize,
    pub(crate) phases_total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) current_phase: Option<String>,
    pub(crate) updated_at: Option<DateTime<Utc>>,
    /// The workflow's directory.
    pub(crate) dir: String,
    /// The worktree (or directory) where it was found.
    pub(crate) root: String,
    /// For another system's state file: its format.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) source: Option<&'static str>,
    /// For another system's state file: its path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

/// The JSON document of `checkpoint gc`.
#[derive(Debug, Serialize)]
pub(crate) struct GcReport<'a> {
    pub(crate) version: u32,
    pub(crate) dry_run: bool,
    pub(crate) deleted: &'a [retention::Doomed],
    pub(crate) kept: usize,
}

/// The JSON document of `checkpoint diff`.
#[derive(Debug, Serialize)]
pub(crate) struct DiffReport<'a> {
    pub(crate) version: u32,
    pub(crate) from: u64,
    pub(crate) to: u64,
    pub(crate) changes: &'a [Change],
}

/// The JSON document of `checkpoint validate`.
#[derive(Debug, Serialize)]
pub(crate) struct ValidateReport<'a> {
    pub(crate) version: u32,
    pub(crate) workflow: &'a str,
    pub(crate) valid: bool,
    pub(crate) findings: &'a [Finding],
}

/// The JSON document of `checkpoint log`.
#[derive(Debug, Serialize)]
pub(crate) struct LogReport<'a> {
    pub(crate) version: u32,
    pub(crate) entries: &'a [Entry],
}

/// The JSON document of `checkpoint export --output`.
#[derive(Debug, Serialize)]
pub(crate) struct ExportReport {
    pub(crate) version: u32,
    pub(crate) format: &'static str,
    pub(crate) written: Vec<PathBuf>,
}

/// The JSON document of `checkpoint status`.
#[derive(Debug, Serialize)]
pub(crate) struct StatusReport<'a> {
    pub(crate) version: u32,
    pub(crate) workflow: &'a Workflow,
    pub(crate) phases: Vec<PhaseSummary<'a>>,
    pub(crate) recoveries: &'a [Recovery],
    /// The unattended runner (`checkpoint run`) working on the workflow now, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) runner: Option<crate::runner::lock::LockOwner>,
}

/// Where one phase stands.
#[derive(Debug, Serialize)]
pub(crate) struct PhaseSummary<'a> {
    pub(crate) id: &'a PhaseId,
    pub(crate) view: PhaseView,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) waiting_for: Vec<&'a PhaseId>,
    /// The sub-agent that holds the phase, while it is in progress: who, since when, and its
    /// last activity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) holder: Option<&'a checkpoint_core::Holder>,
}

impl<'a> PhaseSummary<'a> {
    /// Where each phase of `workflow` stands, in order.
    pub(crate) fn all(workflow: &'a Workflow) -> Vec<Self> {
        let done = workflow.done_set();
        workflow
            .phases
            .iter()
            .map(|phase| PhaseSummary {
                id: &phase.id,
                view: output::phase_view(&done, phase),
                waiting_for: done.waiting_for(phase).collect(),
                holder: phase
                    .holder
                    .as_ref()
                    .filter(|_| phase.status == checkpoint_core::PhaseStatus::InProgress),
            })
            .collect()
    }
}

/// The JSON document of `checkpoint import`.
#[derive(Debug, Serialize)]
pub(crate) struct ImportReport<'a> {
    pub(crate) version: u32,
    pub(crate) source: ImportedFrom<'a>,
    pub(crate) workflow: &'a Workflow,
    pub(crate) recoveries: &'a [Recovery],
}

/// The file a workflow was imported from.
#[derive(Debug, Serialize)]
pub(crate) struct ImportedFrom<'a> {
    pub(crate) format: &'static str,
    pub(crate) path: &'a Path,
}
