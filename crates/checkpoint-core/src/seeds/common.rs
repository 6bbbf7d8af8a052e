//! What the seed formats share: the files an import reads, what a reader and a writer return,
//! and the helpers several formats use to make a workflow.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::{
    error::Error,
    id::{PhaseId, WorkflowId},
    model::{ContextSummary, Phase, PhaseStatus, SCHEMA_VERSION, Workflow, WorkflowStatus},
    seeds::{SeedFormat, carry::Carry, document},
    timestamp::Timestamp,
};

/// The most phases a file may describe; more is taken for a broken file.
pub(crate) const MAX_PHASES: u32 = 1000;

/// A file read for an import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedFile {
    /// Where it was read.
    pub path: PathBuf,
    /// Its contents.
    pub bytes: Vec<u8>,
}

/// Everything an import reads: the state file, and the files the format keeps beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedSource {
    /// The state file.
    pub main: SeedFile,
    /// dotagent's `execution.json`, read from beside `phase.json`.
    pub execution: Option<SeedFile>,
    /// The plan a checkpoint-recovery file names in `plan_path`, for its phase names and count.
    pub plan: Option<SeedFile>,
    /// The files in dotagent's `memory/reports/`, as paths relative to the project.
    pub reports: Vec<String>,
}

impl SeedSource {
    /// A source of one file and nothing beside it.
    pub fn new(path: &Path, bytes: Vec<u8>) -> Self {
        Self {
            main: SeedFile {
                path: path.to_owned(),
                bytes,
            },
            execution: None,
            plan: None,
            reports: Vec::new(),
        }
    }
}

/// Settings of an import, chosen by the caller.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// The id of the new workflow; by default it is derived from the file.
    pub id: Option<WorkflowId>,
    /// The time of the import, used where the file has no time of its own.
    pub now: DateTime<Utc>,
}

/// A workflow written in a seed format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    /// The state file.
    pub bytes: Vec<u8>,
    /// Files that belong beside it, by file name (dotagent's `execution.json`).
    pub companions: Vec<(String, Vec<u8>)>,
}

/// What a format's reader makes of a file: the workflow, the carry, and the parsed documents.
pub(crate) struct Imported {
    pub workflow: Workflow,
    pub carry: Carry,
    /// Each document by its root path in the carry (`$` for the state file).
    pub documents: Vec<(&'static str, Map<String, Value>)>,
}

/// One file a format's writer produces.
pub(crate) struct Built {
    /// Its root path in the carry.
    pub root: &'static str,
    /// Its file name, for companions.
    pub name: &'static str,
    pub value: Map<String, Value>,
}

/// A new workflow of `phases` with nothing else set, for a format's reader to fill in.
pub(crate) fn new_workflow(
    id: WorkflowId,
    phases: Vec<Phase>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
) -> Workflow {
    Workflow {
        schema_version: SCHEMA_VERSION,
        id,
        title: None,
        description: None,
        kind: None,
        status: WorkflowStatus::Pending,
        created_at,
        updated_at,
        seq: 0,
        git: None,
        context: ContextSummary::default(),
        phases,
        pause: None,
        last_activity: None,
        replans: Vec::new(),
        priority: None,
        handoff: None,
        extensions: Map::new(),
    }
}

/// The creation and update times of a workflow read from a file that has no times of its own
/// but its events': the first and the last time any phase records, else `now`.
pub(crate) fn times_of(phases: &[Phase], now: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
    let times = phases.iter().flat_map(|phase| {
        [
            phase.started_at.map(Timestamp::utc),
            phase.completed_at.map(Timestamp::utc),
            phase.approval.as_ref().map(|approval| approval.at),
        ]
        .into_iter()
        .flatten()
    });
    let first = times.clone().min().unwrap_or(now);
    let last = times.max().unwrap_or(now);
    (first, last)
}

/// The id of an imported workflow: the one asked for, else the first name that makes a valid
/// id, else `fallback`.
pub(crate) fn workflow_id(
    options: &ImportOptions,
    names: &[Option<&str>],
    fallback: &str,
) -> WorkflowId {
    options.id.clone().unwrap_or_else(|| {
        names
            .iter()
            .flatten()
            .find_map(|name| WorkflowId::new(&document::id_from(name)?).ok())
            .unwrap_or_else(|| WorkflowId::new(fallback).expect("fallback ids are valid"))
    })
}

/// Whether a phase is where the work is: started and not done (in progress, failed, or waiting
/// for approval).
pub(crate) fn is_active(phase: &Phase) -> bool {
    matches!(
        phase.status,
        PhaseStatus::InProgress | PhaseStatus::AwaitingApproval | PhaseStatus::Failed
    )
}

/// The phases that are done, in the order they were completed (undated ones first).
pub(crate) fn done_in_order(workflow: &Workflow) -> Vec<&Phase> {
    let mut done: Vec<&Phase> = workflow
        .phases
        .iter()
        .filter(|phase| phase.status.is_done())
        .collect();
    done.sort_by_key(|phase| phase.completed_at);
    done
}

/// Marks the pending phases done: the ones before where a file says the work is.
pub(crate) fn complete_pending(phases: &mut [Phase]) {
    for phase in phases {
        if phase.status == PhaseStatus::Pending {
            phase.status = PhaseStatus::Complete;
        }
    }
}

/// An error for a workflow that a format cannot hold.
pub(crate) fn unexportable(
    format: SeedFormat,
    workflow: &Workflow,
    message: String,
    help: String,
) -> Error {
    Error::SeedExport {
        id: workflow.id.to_string(),
        format: format.describe(),
        message,
        help,
    }
}

/// The index of the phase `current_phase` names: the first one active, else the next one ready,
/// else one past the last (as the pattern writes after the last phase completes).
pub(crate) fn current_index(workflow: &Workflow) -> usize {
    workflow
        .phases
        .iter()
        .position(is_active)
        .or_else(|| {
            workflow.phases.iter().position(|phase| {
                phase.status == PhaseStatus::Pending && workflow.dependencies_done(phase)
            })
        })
        .unwrap_or(workflow.phases.len())
}

/// Phases `phase-1` to `phase-<n>`, each depending on the one before, named by `name`.
pub(crate) fn numbered_phases(n: u32, name: impl Fn(u32) -> String) -> Vec<Phase> {
    (1..=n)
        .map(|n| {
            let dependencies = if n > 1 {
                vec![phase_id(n - 1)]
            } else {
                Vec::new()
            };
            let mut phase = Phase::new(phase_id(n), dependencies);
            phase.name = name(n);
            phase
        })
        .collect()
}

/// `phase-<n>`, the id of the `n`th numbered phase.
pub(crate) fn phase_id(n: u32) -> PhaseId {
    PhaseId::new(&format!("phase-{n}")).expect("`phase-<n>` is a valid id")
}
