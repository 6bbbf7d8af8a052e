//! OrchestKit's `.claude/pipeline-state.json`: completed, current and remaining phases with
//! dependencies, commit SHAs and a context summary.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::{
    error::Result,
    id::PhaseId,
    model::{ContextSummary, Decision, GitContext, Phase, PhaseStatus, Workflow},
    seeds::{
        carry::{Builder, Carry, Slot},
        common::{
            Built, ImportOptions, Imported, SeedSource, done_in_order, is_active, new_workflow,
            workflow_id,
        },
        document::{event_at, fields_of, id_from, invalid, objects, parse, time_value},
        format::SeedFormat,
    },
    timestamp::Timestamp,
};

const FORMAT: SeedFormat = SeedFormat::Orchestkit;

const ROOT: &str = "$";
const COMPLETED: &str = "$.completed_phases";
const CURRENT: &str = "$.current_phase";
const REMAINING: &str = "$.remaining_phases";
const SUMMARY: &str = "$.context_summary";

#[derive(Deserialize)]
struct PipelineFile {
    completed_phases: Option<Vec<PipelinePhase>>,
    current_phase: Option<PipelinePhase>,
    remaining_phases: Option<Vec<PipelinePhase>>,
    context_summary: Option<ContextSummaryFile>,
    created_at: Option<Value>,
    updated_at: Option<Value>,
}

#[derive(Deserialize)]
struct PipelinePhase {
    id: String,
    name: Option<String>,
    dependencies: Option<Vec<String>>,
    status: Option<String>,
    timestamp: Option<Value>,
    commit_sha: Option<String>,
    progress_description: Option<String>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct ContextSummaryFile {
    branch: Option<String>,
    key_decisions: Option<Vec<String>>,
    file_paths: Option<Vec<String>>,
}

/// Which part of the file a phase entry is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Completed,
    Current,
    Remaining,
}

impl Part {
    /// The status a phase has by being in this part.
    fn status(self) -> PhaseStatus {
        match self {
            Self::Completed => PhaseStatus::Complete,
            Self::Current => PhaseStatus::InProgress,
            Self::Remaining => PhaseStatus::Pending,
        }
    }
}

pub(crate) fn read(source: &SeedSource, options: &ImportOptions) -> Result<Imported> {
    let path = &source.main.path;
    let (file, raw): (PipelineFile, _) = parse(FORMAT, path, &source.main.bytes)?;
    let mut carry = Carry::default();
    let top = carry.object(ROOT, &raw, fields_of::<PipelineFile>());
    let [created_at, updated_at] = [
        ("created_at", &file.created_at),
        ("updated_at", &file.updated_at),
    ]
    .map(|(field, value)| top.time(field, value.as_ref()).unwrap_or(options.now));

    let raw_completed = objects(&raw, "completed_phases");
    let raw_remaining = objects(&raw, "remaining_phases");
    let raw_current = raw
        .get("current_phase")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut entries: Vec<(Part, &PipelinePhase, &Map<String, Value>)> = Vec::new();
    for (entry, raw_entry) in file.completed_phases.iter().flatten().zip(&raw_completed) {
        entries.push((Part::Completed, entry, raw_entry));
    }
    if let Some(entry) = &file.current_phase {
        entries.push((Part::Current, entry, &raw_current));
    }
    for (entry, raw_entry) in file.remaining_phases.iter().flatten().zip(&raw_remaining) {
        entries.push((Part::Remaining, entry, raw_entry));
    }

    let (ids, holder) = phase_ids(&entries);
    let mut phases = Vec::new();
    for (index, (part, entry, raw_entry)) in entries.iter().enumerate() {
        let list = match part {
            Part::Completed => Some(COMPLETED),
            Part::Current => None,
            Part::Remaining => Some(REMAINING),
        };
        if holder[entry.id.as_str()] != index {
            if let Some(list) = list {
                carry
                    .list_mut(list)
                    .push(Slot::verbatim(Value::Object((*raw_entry).clone())));
            }
            continue;
        }
        let id = ids[entry.id.as_str()].clone();
        let mut slot = Slot::keyed(id.as_str(), raw_entry, fields_of::<PipelinePhase>());
        let dependencies = dependencies_of(source, &ids, entry)?;
        let mut phase = Phase::new(id, dependencies);
        let time = slot.time("timestamp", entry.timestamp.as_ref());
        fill_phase(&mut phase, *part, entry, time.map(Timestamp::from));
        match list {
            Some(COMPLETED) => carry.list_mut(COMPLETED).push(Slot::logged(
                phase.id.as_str(),
                event_at(phase.completed_at.map(Timestamp::utc)),
                raw_entry,
            )),
            Some(list) => carry.list_mut(list).push(slot),
            None => {
                let object = carry.object_mut(CURRENT);
                slot.key = Some(phase.id.to_string());
                *object = slot;
            }
        }
        phases.push(phase);
    }

    let (context, git) = match &file.context_summary {
        Some(summary) => read_summary(summary, &raw, updated_at, &mut carry),
        None => (ContextSummary::default(), None),
    };
    let branch = git
        .as_ref()
        .and_then(|git: &GitContext| git.branch.as_deref());
    let id = workflow_id(options, &[branch], "pipeline");
    let mut workflow = new_workflow(id, phases, created_at, updated_at);
    workflow.git = git;
    workflow.context = context;
    Ok(Imported {
        workflow,
        carry,
        documents: vec![(ROOT, raw)],
    })
}

/// Gives every entry's id a valid, unique phase id, and says which entry holds each id: the
/// current phase holds its id over other entries, and otherwise the first entry does.
fn phase_ids<'a>(
    entries: &[(Part, &'a PipelinePhase, &Map<String, Value>)],
) -> (HashMap<&'a str, PhaseId>, HashMap<&'a str, usize>) {
    let mut ids: HashMap<&str, PhaseId> = HashMap::new();
    let mut holder: HashMap<&str, usize> = HashMap::new();
    for (index, (part, entry, _)) in entries.iter().enumerate() {
        if !ids.contains_key(entry.id.as_str()) {
            let base = id_from(&entry.id).unwrap_or_else(|| "phase".into());
            let mut id = base.clone();
            let mut n = 1;
            while ids.values().any(|taken| taken.as_str() == id) {
                n += 1;
                id = format!("{base}-{n}");
            }
            ids.insert(
                &entry.id,
                PhaseId::new(&id).expect("`id_from` makes valid ids"),
            );
        }
        if *part == Part::Current || !holder.contains_key(entry.id.as_str()) {
            holder.insert(&entry.id, index);
        }
    }
    (ids, holder)
}

/// The phase ids an entry depends on; naming an id the pipeline lacks makes the file invalid.
fn dependencies_of(
    source: &SeedSource,
    ids: &HashMap<&str, PhaseId>,
    entry: &PipelinePhase,
) -> Result<Vec<PhaseId>> {
    entry
        .dependencies
        .iter()
        .flatten()
        .map(|dep| match ids.get(dep.as_str()) {
            Some(id) => Ok(id.clone()),
            None => Err(invalid(
                FORMAT,
                &source.main.path,
                &source.main.bytes,
                format!(
                    "phase `{}` depends on `{dep}`, which is not a phase of the pipeline",
                    entry.id
                ),
            )),
        })
        .collect()
}

/// Gives a phase what its entry says: name, status (else its part's), time, commit and notes.
fn fill_phase(phase: &mut Phase, part: Part, entry: &PipelinePhase, time: Option<Timestamp>) {
    if let Some(name) = &entry.name {
        phase.name = name.clone();
    }
    phase.status = entry
        .status
        .as_deref()
        .and_then(status_of)
        .unwrap_or(part.status());
    if phase.status.is_done() {
        phase.completed_at = time;
    } else {
        phase.started_at = time;
    }
    if phase.status != PhaseStatus::Pending {
        phase.attempts = 1;
    }
    if phase.status == PhaseStatus::Failed {
        phase.failures = 1;
    }
    phase.commit_sha = entry.commit_sha.clone();
    phase.progress = entry.progress_description.clone();
    phase.error = entry.error.clone();
}

/// The context summary: the decisions (at the file's update time), file paths and branch.
fn read_summary(
    summary: &ContextSummaryFile,
    raw: &Map<String, Value>,
    updated_at: DateTime<Utc>,
    carry: &mut Carry,
) -> (ContextSummary, Option<GitContext>) {
    let raw_summary = raw
        .get("context_summary")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    carry.object(SUMMARY, &raw_summary, fields_of::<ContextSummaryFile>());
    let git = summary.branch.as_ref().map(|branch| GitContext {
        branch: Some(branch.clone()),
        ..GitContext::default()
    });
    let mut context = ContextSummary {
        key_decisions: summary
            .key_decisions
            .iter()
            .flatten()
            .map(|text| Decision {
                text: text.clone(),
                at: updated_at,
            })
            .collect(),
        ..ContextSummary::default()
    };
    for path in summary.file_paths.iter().flatten() {
        if !context.file_paths.contains(path) {
            context.file_paths.push(path.clone());
        }
    }
    (context, git)
}

pub(crate) fn build(workflow: &Workflow, builder: &mut Builder<'_>) -> Result<Vec<Built>> {
    // The phase being worked on; else one an interruption sent back to pending, which
    // OrchestKit keeps in `current_phase` with its progress note until it is resumed.
    let current = workflow
        .phases
        .iter()
        .find(|phase| is_active(phase))
        .or_else(|| workflow.phases.iter().find(|phase| interrupted(phase)));
    let completed = done_in_order(workflow)
        .into_iter()
        .map(|phase| {
            let at = event_at(phase.completed_at.map(Timestamp::utc));
            (phase.id.to_string(), at, entry(phase, Part::Completed))
        })
        .collect();
    let remaining = workflow
        .phases
        .iter()
        .filter(|phase| {
            !phase.status.is_done()
                && Some(phase.id.as_str()) != current.map(|phase| phase.id.as_str())
        })
        .map(|phase| (phase.id.to_string(), entry(phase, Part::Remaining)))
        .collect();

    let mut top = Map::new();
    let completed = builder.log(COMPLETED, completed, &[CURRENT, REMAINING]);
    top.insert("completed_phases".into(), completed);
    let current = current.map_or(Value::Null, |phase| {
        Value::Object(builder.keyed_object(CURRENT, phase.id.as_str(), entry(phase, Part::Current)))
    });
    top.insert("current_phase".into(), current);
    let remaining = builder.list_moving(REMAINING, remaining, &[CURRENT]);
    top.insert("remaining_phases".into(), remaining);
    let mut summary = Map::new();
    if let Some(branch) = workflow.git.as_ref().and_then(|git| git.branch.as_deref()) {
        summary.insert("branch".into(), Value::from(branch));
    }
    summary.insert(
        "key_decisions".into(),
        workflow
            .context
            .key_decisions
            .iter()
            .map(|decision| Value::from(decision.text.as_str()))
            .collect(),
    );
    summary.insert(
        "file_paths".into(),
        workflow
            .context
            .file_paths
            .iter()
            .map(|path| Value::from(path.as_str()))
            .collect(),
    );
    top.insert(
        "context_summary".into(),
        Value::Object(builder.object(SUMMARY, summary)),
    );
    top.insert("created_at".into(), time_value(workflow.created_at));
    top.insert("updated_at".into(), time_value(workflow.updated_at));
    Ok(vec![Built {
        root: ROOT,
        name: "pipeline-state.json",
        value: builder.object(ROOT, top),
    }])
}

/// A phase as an entry of `part`; `status` is written only where the part does not imply it.
fn entry(phase: &Phase, part: Part) -> Map<String, Value> {
    let mut entry = Map::new();
    entry.insert("id".into(), Value::from(phase.id.as_str()));
    entry.insert("name".into(), Value::from(phase.name.as_str()));
    if part == Part::Remaining || !phase.dependencies.is_empty() {
        entry.insert(
            "dependencies".into(),
            phase
                .dependencies
                .iter()
                .map(|dep| Value::from(dep.as_str()))
                .collect(),
        );
    }
    if phase.status != part.status() && !(part == Part::Current && interrupted(phase)) {
        entry.insert("status".into(), Value::from(word(phase.status)));
    }
    let time = if phase.status.is_done() {
        phase.completed_at
    } else {
        phase.started_at
    };
    if let Some(time) = time {
        entry.insert("timestamp".into(), time_value(time.utc()));
    }
    if let Some(sha) = &phase.commit_sha {
        entry.insert("commit_sha".into(), Value::from(sha.as_str()));
    }
    if let Some(progress) = &phase.progress {
        entry.insert(
            "progress_description".into(),
            Value::from(progress.as_str()),
        );
    }
    // A phase back to pending after an interruption holds the reason, not a failure.
    if let Some(error) = phase
        .error
        .as_deref()
        .filter(|_| !phase.status.is_done() && !interrupted(phase))
    {
        entry.insert("error".into(), Value::from(error));
    }
    entry
}

/// Whether a phase was started and went back to pending (an interruption): it is resumed next.
fn interrupted(phase: &Phase) -> bool {
    phase.status == PhaseStatus::Pending && phase.attempts > 0
}

fn status_of(word: &str) -> Option<PhaseStatus> {
    match word.to_lowercase().as_str() {
        "pending" | "queued" | "not_started" => Some(PhaseStatus::Pending),
        "in_progress" | "running" | "active" => Some(PhaseStatus::InProgress),
        "awaiting_approval" | "waiting_approval" => Some(PhaseStatus::AwaitingApproval),
        "completed" | "complete" | "done" => Some(PhaseStatus::Complete),
        "failed" | "error" => Some(PhaseStatus::Failed),
        "skipped" => Some(PhaseStatus::Skipped),
        _ => None,
    }
}

fn word(status: PhaseStatus) -> &'static str {
    match status {
        PhaseStatus::Pending => "pending",
        PhaseStatus::InProgress => "in_progress",
        PhaseStatus::AwaitingApproval => "awaiting_approval",
        PhaseStatus::Complete => "completed",
        PhaseStatus::Failed => "failed",
        PhaseStatus::Skipped => "skipped",
    }
}
