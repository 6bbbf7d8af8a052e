//! The JSON documents commands print, as dedicated types.

use checkpoint_core::{
    Workflow, WorkflowStatus,
    resume::ResumePlan,
    store::{Loaded, Recovery},
};
use chrono::{DateTime, Utc};
use miette::{IntoDiagnostic, Result};
use serde::Serialize;

use crate::output::{self, JSON_VERSION};

/// The result of a command that reads or changes one workflow.
#[derive(Debug, Serialize)]
pub(crate) struct WorkflowReport<'a> {
    version: u32,
    workflow: &'a Workflow,
    recoveries: &'a [Recovery],
}

impl<'a> WorkflowReport<'a> {
    pub(crate) fn new(loaded: &'a Loaded) -> Self {
        Self {
            version: JSON_VERSION,
            workflow: &loaded.workflow,
            recoveries: &loaded.recoveries,
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
