//! The five seed formats, and the import and export entry points that dispatch to them.

use std::{fmt, path::Path, path::PathBuf, str::FromStr};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::{
    error::{Error, Result},
    id::WorkflowId,
    model::check_invariants,
    model::{ContextSummary, Phase, PhaseStatus, SCHEMA_VERSION, Workflow, WorkflowStatus},
    seeds::{
        carry::{Builder, Carry, reconcile},
        checkpoints_dir, document, dotagent, nine_step, orchestkit, recovery,
    },
};

/// A checkpoint system whose state files `checkpoint` reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SeedFormat {
    /// dotagent's `memory/state/phase.json` and `execution.json`.
    Dotagent,
    /// OrchestKit's `.claude/pipeline-state.json`.
    Orchestkit,
    /// The checkpoint-recovery pattern's `.claude/data/checkpoints/<workflow>.json`.
    CheckpointRecovery,
    /// The checkpoints directory's `.claude/checkpoints/{type}_{project}_{YYYYMMDD_HHMMSS}.json`.
    CheckpointsDir,
    /// The nine-step workflow's state file in each git worktree (`.workflow-state.json`).
    NineStep,
}

impl SeedFormat {
    /// Every format, in the order they are documented.
    pub const ALL: [SeedFormat; 5] = [
        Self::Dotagent,
        Self::Orchestkit,
        Self::CheckpointRecovery,
        Self::CheckpointsDir,
        Self::NineStep,
    ];

    /// The name used on the command line, in JSON output and as the key in `extensions`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Dotagent => "dotagent",
            Self::Orchestkit => "orchestkit",
            Self::CheckpointRecovery => "checkpoint-recovery",
            Self::CheckpointsDir => "checkpoints-dir",
            Self::NineStep => "nine-step",
        }
    }

    /// What a file of this format is, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Dotagent => "dotagent state",
            Self::Orchestkit => "an OrchestKit pipeline state",
            Self::CheckpointRecovery => "a checkpoint-recovery checkpoint",
            Self::CheckpointsDir => "a checkpoints-directory checkpoint",
            Self::NineStep => "a nine-step workflow state",
        }
    }

    /// The names of all formats, for hints: "`dotagent`, `orchestkit`, …".
    pub fn names() -> String {
        Self::ALL
            .iter()
            .map(|format| format!("`{}`", format.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for SeedFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SeedFormat {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|format| format.name() == value)
            .ok_or_else(|| format!("unknown format `{value}`; known: {}", Self::names()))
    }
}

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

/// Recognises a file's format from its contents, else from where it lies.
///
/// Returns `None` for our own `state.json` and for anything else we do not read.
pub fn detect(path: &Path, bytes: &[u8]) -> Option<SeedFormat> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(object)) => detect_keys(&object).or_else(|| {
            (!object.contains_key("schema_version"))
                .then(|| detect_path(path))
                .flatten()
        }),
        Ok(_) => None,
        Err(_) => detect_path(path),
    }
}

fn detect_keys(object: &Map<String, Value>) -> Option<SeedFormat> {
    let has = |keys: &[&str]| keys.iter().any(|key| object.contains_key(*key));
    if has(&["schema_version"]) {
        None
    } else if has(&[
        "last_execution",
        "current_step",
        "completed_steps",
        "feature_name",
    ]) {
        Some(SeedFormat::NineStep)
    } else if has(&["phase_status", "user_checkpoints", "interruption_safe"]) {
        Some(SeedFormat::Dotagent)
    } else if has(&[
        "checkpoint_id",
        "workflow_type",
        "workflow_state",
        "total_phases",
    ]) {
        Some(SeedFormat::CheckpointsDir)
    } else if has(&[
        "phase_metadata",
        "replan_history",
        "replan_count",
        "artifact_paths",
    ]) {
        Some(SeedFormat::CheckpointRecovery)
    } else if has(&["remaining_phases", "context_summary"])
        || object.get("current_phase").is_some_and(Value::is_object)
    {
        Some(SeedFormat::Orchestkit)
    } else {
        None
    }
}

fn detect_path(path: &Path) -> Option<SeedFormat> {
    let name = path.file_name()?.to_str()?;
    let parents: Vec<&str> = path
        .ancestors()
        .skip(1)
        .take(3)
        .map(|dir| dir.file_name().and_then(|name| name.to_str()).unwrap_or(""))
        .collect();
    let parent = |i: usize| parents.get(i).copied().unwrap_or("");
    if name == "phase.json" && parent(0) == "state" && parent(1) == "memory" {
        Some(SeedFormat::Dotagent)
    } else if name == "pipeline-state.json" {
        Some(SeedFormat::Orchestkit)
    } else if name == crate::seeds::NINE_STEP_STATE_FILE {
        Some(SeedFormat::NineStep)
    } else if !name.ends_with(".json") {
        None
    } else if parent(0) == "checkpoints" && parent(1) == "data" {
        Some(SeedFormat::CheckpointRecovery)
    } else if parent(0) == "checkpoints" || (parent(0) == "failed" && parent(1) == "checkpoints") {
        Some(SeedFormat::CheckpointsDir)
    } else {
        None
    }
}

/// Converts a seed file (and its companions) into a new workflow.
///
/// Nothing is lost: fields the model has no place for, and the spelling of those it mapped, are
/// kept in `extensions[<format>]` for [`export`].
pub fn import(
    format: SeedFormat,
    source: &SeedSource,
    options: &ImportOptions,
) -> Result<Workflow> {
    let Imported {
        mut workflow,
        mut carry,
        documents,
    } = match format {
        SeedFormat::Dotagent => dotagent::read(source, options)?,
        SeedFormat::Orchestkit => orchestkit::read(source, options)?,
        SeedFormat::CheckpointRecovery => recovery::read(source, options)?,
        SeedFormat::CheckpointsDir => checkpoints_dir::read(source, options)?,
        SeedFormat::NineStep => nine_step::read(source, options)?,
    };
    workflow.refresh_status();
    check_invariants(&workflow).map_err(|message| {
        document::invalid(
            format,
            &source.main.path,
            &source.main.bytes,
            format!("it does not describe a valid workflow: {message}"),
        )
    })?;
    let mut builder = Builder::new(&carry);
    let built = build(format, &workflow, &mut builder)?;
    let placed = builder.into_placed();
    for (root, raw) in &documents {
        if let Some(canonical) = built.iter().find(|built| built.root == *root) {
            reconcile(&mut carry, &placed, root, raw, &canonical.value);
        }
    }
    carry.store(&mut workflow, format);
    Ok(workflow)
}

/// Writes a workflow in a seed format.
///
/// A workflow imported from that format comes back as the file it was read from, with the changes
/// made since; fields the format has no place for are left out.
pub fn export(format: SeedFormat, workflow: &Workflow) -> Result<Exported> {
    let carry = Carry::load(workflow, format);
    let mut builder = Builder::new(&carry);
    let mut built = build(format, workflow, &mut builder)?.into_iter();
    let main = built.next().expect("every format builds its state file");
    Ok(Exported {
        bytes: to_bytes(main.value),
        companions: built
            .map(|built| (built.name.to_owned(), to_bytes(built.value)))
            .collect(),
    })
}

fn build(format: SeedFormat, workflow: &Workflow, builder: &mut Builder<'_>) -> Result<Vec<Built>> {
    match format {
        SeedFormat::Dotagent => dotagent::build(workflow, builder),
        SeedFormat::Orchestkit => orchestkit::build(workflow, builder),
        SeedFormat::CheckpointRecovery => recovery::build(workflow, builder),
        SeedFormat::CheckpointsDir => checkpoints_dir::build(workflow, builder),
        SeedFormat::NineStep => nine_step::build(workflow, builder),
    }
}

fn to_bytes(value: Map<String, Value>) -> Vec<u8> {
    let mut bytes =
        serde_json::to_vec_pretty(&Value::Object(value)).expect("a JSON value always serializes");
    bytes.push(b'\n');
    bytes
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
        extensions: Map::new(),
    }
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
