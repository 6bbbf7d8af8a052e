//! The documents about a workflow's history and the store's other workflows: `validate`, `log`,
//! `diff`, `graph`, `list`, `archive`, `gc`, `restore` and `export`.

use std::path::{Path, PathBuf};

use checkpoint_core::{
    PhaseId, PhaseStatus, WorkflowId, WorkflowStatus, history, journal::Entry, resume, retention,
};
use chrono::{DateTime, Utc};
use serde::{Serialize, Serializer};

use crate::json::resume::Finding;

/// The JSON document of `checkpoint validate`.
#[derive(Debug, Serialize)]
pub(crate) struct ValidateReport<'a> {
    pub(crate) version: u32,
    pub(crate) workflow: &'a str,
    pub(crate) valid: bool,
    #[serde(serialize_with = "findings")]
    pub(crate) findings: &'a [resume::Finding],
}

/// The JSON document of `checkpoint log`: the journal's entries, in their on-disk format
/// (`docs/journal.schema.json`).
#[derive(Debug, Serialize)]
pub(crate) struct LogReport<'a> {
    pub(crate) version: u32,
    pub(crate) entries: &'a [Entry],
}

/// The JSON document of `checkpoint diff`.
#[derive(Debug, Serialize)]
pub(crate) struct DiffReport<'a> {
    pub(crate) version: u32,
    pub(crate) from: u64,
    pub(crate) to: u64,
    #[serde(serialize_with = "changes")]
    pub(crate) changes: &'a [history::Change],
}

/// One difference between two states.
#[derive(Debug, Serialize)]
struct Change<'a> {
    /// `workflow`, `phase`, `task`, `artifact`, `decision`, `note` or `file`.
    what: &'a str,
    subject: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    before: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    after: Option<&'a str>,
}

impl<'a> From<&'a history::Change> for Change<'a> {
    fn from(change: &'a history::Change) -> Self {
        Self {
            what: change.what,
            subject: &change.subject,
            before: change.before.as_deref(),
            after: change.after.as_deref(),
        }
    }
}

/// The JSON document of `checkpoint graph --format json`.
#[derive(Debug, Serialize)]
pub(crate) struct GraphReport<'a> {
    pub(crate) version: u32,
    pub(crate) nodes: Vec<GraphNode<'a>>,
    /// Each dependency as `[dependency, dependant]`.
    pub(crate) edges: Vec<(&'a str, &'a str)>,
}

/// A phase of the graph.
#[derive(Debug, Serialize)]
pub(crate) struct GraphNode<'a> {
    pub(crate) id: &'a PhaseId,
    pub(crate) status: PhaseStatus,
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
    /// Chosen with `checkpoint use` in this worktree (present only then).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) used: bool,
}

/// The JSON document of `checkpoint archive`.
#[derive(Debug, Serialize)]
pub(crate) struct ArchiveReport<'a> {
    pub(crate) version: u32,
    pub(crate) workflow: &'a WorkflowId,
    pub(crate) archived_to: &'a Path,
}

/// The JSON document of `checkpoint restore`.
#[derive(Debug, Serialize)]
pub(crate) struct RestoreReport<'a> {
    pub(crate) version: u32,
    pub(crate) workflow: &'a WorkflowId,
    /// The restored workflow's directory.
    pub(crate) dir: &'a Path,
}

/// The JSON document of `checkpoint gc`.
#[derive(Debug, Serialize)]
pub(crate) struct GcReport<'a> {
    pub(crate) version: u32,
    pub(crate) dry_run: bool,
    #[serde(serialize_with = "doomed")]
    pub(crate) deleted: &'a [retention::Doomed],
    pub(crate) kept: usize,
}

/// An archive `gc` deletes, and why.
#[derive(Debug, Serialize)]
struct Doomed<'a> {
    archive: Archive<'a>,
    reason: &'a str,
}

/// An archived workflow.
#[derive(Debug, Serialize)]
struct Archive<'a> {
    /// Its directory name, `<id>_<YYYYMMDD_HHMMSS>`.
    name: &'a str,
    kind: &'a str,
    status: Option<WorkflowStatus>,
    archived_at: DateTime<Utc>,
    /// Whether it lives in `failed/`.
    failed: bool,
}

impl<'a> From<&'a retention::Doomed> for Doomed<'a> {
    fn from(doomed: &'a retention::Doomed) -> Self {
        let archive = &doomed.archive;
        Self {
            archive: Archive {
                name: &archive.name,
                kind: &archive.kind,
                status: archive.status,
                archived_at: archive.archived_at,
                failed: archive.failed,
            },
            reason: &doomed.reason,
        }
    }
}

/// The JSON document of `checkpoint export --output`.
#[derive(Debug, Serialize)]
pub(crate) struct ExportReport {
    pub(crate) version: u32,
    pub(crate) format: &'static str,
    pub(crate) written: Vec<PathBuf>,
}

fn findings<S: Serializer>(
    findings: &&[resume::Finding],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(findings.iter().map(Finding::from))
}

fn changes<S: Serializer>(changes: &&[history::Change], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(changes.iter().map(Change::from))
}

fn doomed<S: Serializer>(doomed: &&[retention::Doomed], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(doomed.iter().map(Doomed::from))
}
