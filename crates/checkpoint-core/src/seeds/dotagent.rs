//! dotagent's `memory/state/phase.json` (five phases from REQUIREMENTS to REFLECTION, and user
//! approvals) with the executor's `execution.json` (tasks).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::{
    error::Result,
    id::{PhaseId, TaskId},
    model::{Approval, Artifact, Phase, PhaseStatus, Task, TaskStatus, Workflow},
    seeds::{
        carry::{Builder, Carry, Slot},
        common::{
            Built, ImportOptions, Imported, SeedFile, SeedSource, complete_pending, done_in_order,
            is_active, new_workflow, workflow_id,
        },
        document::{event_at, fields_of, id_from, objects, parse, time_of, time_value},
        format::SeedFormat,
    },
    timestamp::Timestamp,
};

const FORMAT: SeedFormat = SeedFormat::Dotagent;

/// The phases of every dotagent workflow, in order.
const PHASES: [&str; 5] = [
    "REQUIREMENTS",
    "ARCHITECTURE",
    "IMPLEMENTATION",
    "VERIFICATION",
    "REFLECTION",
];

/// The phases that end at a user checkpoint: approving the demand, and choosing a design.
const GATES: [&str; 2] = ["REQUIREMENTS", "ARCHITECTURE"];

/// The phase the executor's tasks belong to unless a task names another.
const TASK_PHASE: &str = "IMPLEMENTATION";

const ROOT: &str = "$";
const COMPLETED: &str = "$.completed_phases";
const CHECKPOINTS: &str = "$.user_checkpoints";
const EXECUTION: &str = "execution.json$";
const TASKS: &str = "execution.json$.tasks";

#[derive(Deserialize)]
struct PhaseFile {
    workflow_id: Option<String>,
    started_at: Option<Value>,
    last_updated: Option<Value>,
    current_phase: Option<String>,
    phase_status: Option<String>,
    completed_phases: Option<Vec<CompletedPhase>>,
    user_checkpoints: Option<Vec<UserCheckpoint>>,
    /// Why the current phase failed, as a reasonable writer records it.
    last_error: Option<String>,
    /// The phases in order, which `checkpoint export` writes for a workflow whose phases are not
    /// dotagent's five.
    phases: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct CompletedPhase {
    phase: String,
    completed_at: Option<Value>,
    output: Option<String>,
}

#[derive(Deserialize)]
struct UserCheckpoint {
    phase: String,
    approved_at: Option<Value>,
}

#[derive(Deserialize)]
struct ExecutionFile {
    tasks: Option<Vec<TaskEntry>>,
}

#[derive(Deserialize)]
struct TaskEntry {
    id: String,
    title: Option<String>,
    phase: Option<String>,
    status: Option<String>,
    attempts: Option<u32>,
    started_at: Option<Value>,
    completed_at: Option<Value>,
    output: Option<String>,
    error: Option<String>,
}

/// The phases of the workflow being read, by upper-case name.
struct Phases {
    phases: Vec<Phase>,
    by_name: HashMap<String, usize>,
}

impl Phases {
    /// The phases `names`, in order, or dotagent's five.
    fn new(names: Option<&[String]>) -> Self {
        let mut phases = Self {
            phases: Vec::new(),
            by_name: HashMap::new(),
        };
        match names {
            Some(names) => names.iter().for_each(|name| {
                phases.index(name);
            }),
            None => PHASES.iter().for_each(|name| {
                phases.index(name);
            }),
        }
        phases
    }

    /// The index of the phase named `name` (in any case), added after the others if new.
    fn index(&mut self, name: &str) -> usize {
        let upper = name.trim().to_uppercase();
        if let Some(&index) = self.by_name.get(&upper) {
            return index;
        }
        let base = id_from(&upper.to_lowercase()).unwrap_or_else(|| "phase".into());
        let mut id = base.clone();
        let mut n = 1;
        while self.phases.iter().any(|phase| phase.id.as_str() == id) {
            n += 1;
            id = format!("{base}-{n}");
        }
        let dependencies = self
            .phases
            .last()
            .map(|phase| vec![phase.id.clone()])
            .unwrap_or_default();
        let mut phase = Phase::new(
            PhaseId::new(&id).expect("`id_from` makes valid ids"),
            dependencies,
        );
        phase.name = if PHASES.contains(&upper.as_str()) {
            upper.clone()
        } else {
            name.trim().to_owned()
        };
        phase.requires_approval = GATES.contains(&upper.as_str());
        self.phases.push(phase);
        self.by_name.insert(upper, self.phases.len() - 1);
        self.phases.len() - 1
    }
}

pub(crate) fn read(source: &SeedSource, options: &ImportOptions) -> Result<Imported> {
    let (file, raw): (PhaseFile, _) = parse(FORMAT, &source.main.path, &source.main.bytes)?;
    let mut carry = Carry::default();
    let top = carry.object(ROOT, &raw, fields_of::<PhaseFile>());
    let created_at = top
        .time("started_at", file.started_at.as_ref())
        .unwrap_or(options.now);
    let updated_at = top
        .time("last_updated", file.last_updated.as_ref())
        .unwrap_or(options.now);

    let mut phases = Phases::new(file.phases.as_deref());
    read_completed(&file, &raw, updated_at, &mut phases, &mut carry);
    read_checkpoints(&file, &raw, updated_at, &mut phases, &mut carry);
    if let Some(name) = file.current_phase.as_deref() {
        let index = phases.index(name);
        read_current(&file, source, &mut phases.phases[index]);
        // The phases before the current one are done, whether or not they were recorded.
        complete_pending(&mut phases.phases[..index]);
    }

    let failed = phases
        .phases
        .iter()
        .any(|phase| phase.status == PhaseStatus::Failed);
    if !failed {
        carry.object_mut(ROOT).keep(&raw, "last_error");
    }
    let mut documents = vec![(ROOT, raw.clone())];
    if let Some(execution) = &source.execution {
        let raw = read_tasks(execution, &mut phases, &mut carry)?;
        documents.push((EXECUTION, raw));
    }

    let id = workflow_id(options, &[file.workflow_id.as_deref()], "dotagent");
    let mut workflow = new_workflow(id, phases.phases, created_at, updated_at);
    workflow.context.file_paths = source.reports.clone();
    Ok(Imported {
        workflow,
        carry,
        documents,
    })
}

/// Completes the phases `completed_phases` records, with their outputs as artifacts.
///
/// A phase completed twice keeps both entries; the model holds the last completion.
fn read_completed(
    file: &PhaseFile,
    raw: &Map<String, Value>,
    updated_at: DateTime<Utc>,
    phases: &mut Phases,
    carry: &mut Carry,
) {
    for (entry, raw_entry) in file
        .completed_phases
        .iter()
        .flatten()
        .zip(objects(raw, "completed_phases"))
    {
        let index = phases.index(&entry.phase);
        let completed_at = time_of(entry.completed_at.as_ref());
        carry.list_mut(COMPLETED).push(Slot::logged(
            phases.phases[index].id.as_str(),
            event_at(completed_at),
            &raw_entry,
        ));
        let phase = &mut phases.phases[index];
        phase.status = PhaseStatus::Complete;
        phase.attempts = phase.attempts.max(1);
        phase.completed_at = completed_at.map(Timestamp::from);
        phase.artifacts = entry
            .output
            .iter()
            .map(|path| Artifact {
                path: path.clone(),
                recorded_at: completed_at.unwrap_or(updated_at),
            })
            .collect();
    }
}

/// Approves the phases `user_checkpoints` records.
fn read_checkpoints(
    file: &PhaseFile,
    raw: &Map<String, Value>,
    updated_at: DateTime<Utc>,
    phases: &mut Phases,
    carry: &mut Carry,
) {
    for (entry, raw_entry) in file
        .user_checkpoints
        .iter()
        .flatten()
        .zip(objects(raw, "user_checkpoints"))
    {
        let index = phases.index(&entry.phase);
        let phase = &mut phases.phases[index];
        let at = time_of(entry.approved_at.as_ref())
            .or(phase.completed_at.map(Timestamp::utc))
            .unwrap_or(updated_at);
        phase.requires_approval = true;
        phase.approval = Some(Approval {
            by: None,
            at,
            note: None,
        });
        carry.list_mut(CHECKPOINTS).push(Slot::logged(
            phase.id.as_str(),
            event_at(Some(at)),
            &raw_entry,
        ));
    }
}

/// Gives the current phase the status `phase_status` says.
fn read_current(file: &PhaseFile, source: &SeedSource, phase: &mut Phase) {
    let status = file.phase_status.as_deref().unwrap_or("").to_lowercase();
    match status.as_str() {
        "pending" | "" => {}
        // The completing agent adds the phase to `completed_phases`, moves `current_phase`
        // on and sets `complete`: the current phase has not started.
        "complete" | "completed" | "done" => {}
        "failed" | "error" => {
            phase.status = PhaseStatus::Failed;
            phase.attempts = phase.attempts.max(1);
            phase.failures = 1;
            phase.completed_at = None;
            phase.error = file.last_error.clone();
        }
        "awaiting_approval" | "waiting_approval" => {
            phase.status = PhaseStatus::AwaitingApproval;
            phase.requires_approval = true;
            phase.attempts = phase.attempts.max(1);
        }
        _ => {
            phase.attempts = if phase.status == PhaseStatus::Complete {
                phase.attempts + 1
            } else {
                phase.attempts.max(1)
            };
            phase.status = PhaseStatus::InProgress;
            phase.completed_at = None;
            resume_in_progress(phase, &source.reports);
        }
    }
}

/// Reads `execution.json`'s tasks into their phases; returns the document.
fn read_tasks(
    execution: &SeedFile,
    phases: &mut Phases,
    carry: &mut Carry,
) -> Result<Map<String, Value>> {
    let (file, raw): (ExecutionFile, _) = parse(FORMAT, &execution.path, &execution.bytes)?;
    carry.object(EXECUTION, &raw, fields_of::<ExecutionFile>());
    let raw_tasks = objects(&raw, "tasks");
    for (entry, raw_entry) in file.tasks.iter().flatten().zip(&raw_tasks) {
        let index = phases.index(entry.phase.as_deref().unwrap_or(TASK_PHASE));
        let task_id = id_from(&entry.id).and_then(|id| TaskId::new(&id).ok());
        let phase = &mut phases.phases[index];
        let Some(task_id) = task_id.filter(|id| phase.task(id).is_none()) else {
            carry
                .list_mut(TASKS)
                .push(Slot::verbatim(Value::Object(raw_entry.clone())));
            continue;
        };
        let key = task_key(&phase.id, &task_id);
        let mut slot = Slot::keyed(&key, raw_entry, fields_of::<TaskEntry>());
        let status = task_status(entry.status.as_deref().unwrap_or("pending"));
        phase.tasks.push(Task {
            id: task_id,
            title: entry.title.clone(),
            status,
            attempts: entry
                .attempts
                .unwrap_or(u32::from(status != TaskStatus::Pending)),
            started_at: slot
                .time("started_at", entry.started_at.as_ref())
                .map(Timestamp::from),
            completed_at: slot
                .time("completed_at", entry.completed_at.as_ref())
                .map(Timestamp::from),
            output: entry.output.clone(),
            error: entry.error.clone(),
            agent_id: None,
            note: None,
        });
        carry.list_mut(TASKS).push(slot);
    }
    Ok(raw)
}

/// A task's status as `execution.json` words it.
fn task_status(text: &str) -> TaskStatus {
    match text.to_lowercase().as_str() {
        "running" | "in_progress" | "started" => TaskStatus::Running,
        "completed" | "complete" | "done" | "success" => TaskStatus::Done,
        "failed" | "error" => TaskStatus::Failed,
        _ => TaskStatus::Pending,
    }
}

pub(crate) fn build(workflow: &Workflow, builder: &mut Builder<'_>) -> Result<Vec<Built>> {
    let mut top = Map::new();
    top.insert("workflow_id".into(), Value::from(workflow.id.as_str()));
    top.insert("started_at".into(), time_value(workflow.created_at));
    top.insert("last_updated".into(), time_value(workflow.updated_at));
    let (current, status) = position(workflow);
    top.insert(
        "current_phase".into(),
        current.map_or(Value::Null, |phase| Value::from(phase.name.as_str())),
    );
    top.insert("phase_status".into(), Value::from(status));
    if let Some(error) = current
        .filter(|phase| phase.status == PhaseStatus::Failed)
        .and_then(|phase| phase.error.as_deref())
    {
        top.insert("last_error".into(), Value::from(error));
    }

    let completed = done_in_order(workflow)
        .into_iter()
        .map(|phase| {
            let mut entry = Map::new();
            entry.insert("phase".into(), Value::from(phase.name.as_str()));
            if let Some(at) = phase.completed_at {
                entry.insert("completed_at".into(), time_value(at.utc()));
            }
            if let Some(artifact) = phase.artifacts.first() {
                entry.insert("output".into(), Value::from(artifact.path.as_str()));
            }
            (
                phase.id.to_string(),
                event_at(phase.completed_at.map(Timestamp::utc)),
                entry,
            )
        })
        .collect();
    let completed = builder.log(COMPLETED, completed, &[]);
    top.insert("completed_phases".into(), completed);

    let mut approved: Vec<(&Phase, DateTime<Utc>)> = workflow
        .phases
        .iter()
        .filter_map(|phase| Some((phase, phase.approval.as_ref()?.at)))
        .collect();
    approved.sort_by_key(|(_, at)| *at);
    let approved = approved
        .into_iter()
        .map(|(phase, at)| {
            let mut entry = Map::new();
            entry.insert("phase".into(), Value::from(phase.name.as_str()));
            entry.insert("approved_at".into(), time_value(at));
            (phase.id.to_string(), event_at(Some(at)), entry)
        })
        .collect();
    let approved = builder.log(CHECKPOINTS, approved, &[]);
    top.insert("user_checkpoints".into(), approved);
    top.insert("interruption_safe".into(), Value::Bool(true));
    let names: Vec<&str> = workflow
        .phases
        .iter()
        .map(|phase| phase.name.as_str())
        .collect();
    if names != PHASES {
        top.insert("phases".into(), names.into());
    }

    let mut built = vec![Built {
        root: ROOT,
        name: "phase.json",
        value: builder.object(ROOT, top),
    }];
    let has_tasks = workflow.phases.iter().any(|phase| !phase.tasks.is_empty());
    if has_tasks || builder.carry().has_object(EXECUTION) {
        let tasks = workflow
            .phases
            .iter()
            .flat_map(|phase| phase.tasks.iter().map(move |task| (phase, task)))
            .map(|(phase, task)| (task_key(&phase.id, &task.id), task_entry(phase, task)))
            .collect();
        let mut execution = Map::new();
        execution.insert("workflow_id".into(), Value::from(workflow.id.as_str()));
        let tasks = builder.list(TASKS, tasks);
        execution.insert("tasks".into(), tasks);
        built.push(Built {
            root: EXECUTION,
            name: "execution.json",
            value: builder.object(EXECUTION, execution),
        });
    }
    Ok(built)
}

fn task_entry(phase: &Phase, task: &Task) -> Map<String, Value> {
    let mut entry = Map::new();
    entry.insert("id".into(), Value::from(task.id.as_str()));
    if let Some(title) = &task.title {
        entry.insert("title".into(), Value::from(title.as_str()));
    }
    if phase.name != TASK_PHASE {
        entry.insert("phase".into(), Value::from(phase.name.as_str()));
    }
    let status = match task.status {
        TaskStatus::Pending => "pending",
        TaskStatus::Running => "running",
        TaskStatus::Done => "completed",
        TaskStatus::Failed => "failed",
    };
    entry.insert("status".into(), Value::from(status));
    entry.insert("attempts".into(), Value::from(task.attempts));
    if let Some(at) = task.started_at {
        entry.insert("started_at".into(), time_value(at.utc()));
    }
    if let Some(at) = task.completed_at {
        entry.insert("completed_at".into(), time_value(at.utc()));
    }
    if let Some(output) = &task.output {
        entry.insert("output".into(), Value::from(output.as_str()));
    }
    if let Some(error) = &task.error {
        entry.insert("error".into(), Value::from(error.as_str()));
    }
    entry
}

/// `current_phase` and `phase_status` as dotagent writes them for the workflow's state.
fn position(workflow: &Workflow) -> (Option<&Phase>, &'static str) {
    if let Some(phase) = workflow.phases.iter().find(|phase| is_active(phase)) {
        let status = match phase.status {
            PhaseStatus::Failed => "failed",
            PhaseStatus::AwaitingApproval => "awaiting_approval",
            _ => "in_progress",
        };
        return (Some(phase), status);
    }
    let next = workflow
        .phases
        .iter()
        .find(|phase| phase.status == PhaseStatus::Pending && workflow.dependencies_done(phase))
        .or_else(|| {
            workflow
                .phases
                .iter()
                .find(|phase| phase.status == PhaseStatus::Pending)
        });
    match next {
        Some(phase) if workflow.n_done() == 0 => (Some(phase), "pending"),
        Some(phase) => (Some(phase), "complete"),
        None => (workflow.phases.last(), "complete"),
    }
}

/// The files in `memory/reports/` that hold each phase's finished work, by dotagent's resume
/// logic (by the start of their path; "the reflection file" has no name there). IMPLEMENTATION
/// has none: it continues by its tasks in `execution.json`.
const WORK: [(&str, &str); 4] = [
    ("REQUIREMENTS", "demand.json"),
    ("ARCHITECTURE", "designs/final_design.json"),
    ("VERIFICATION", "verification.json"),
    ("REFLECTION", "reflection"),
];

/// Applies dotagent's resume logic to the phase in progress, given the reports on disk.
///
/// A phase that ends at a user checkpoint and whose work is on disk waits for the user's choice
/// (scenario 3: the architects' designs without the final design; the demand without its
/// approval): the work is not redone. Otherwise the phase declares the report that finishes it as
/// its output, so the resume planner completes it when that report exists.
fn resume_in_progress(phase: &mut Phase, reports: &[String]) {
    let report = |name: &str| {
        reports.iter().find(|path| {
            path.strip_prefix("memory/reports/")
                .is_some_and(|file| file.starts_with(name))
        })
    };
    let upper = phase.name.to_uppercase();
    let Some((_, finished)) = WORK.iter().find(|(name, _)| *name == upper) else {
        return;
    };
    let gate = GATES.contains(&upper.as_str());
    let work_on_disk = match upper.as_str() {
        "ARCHITECTURE" => report(finished).is_some() || report("designs/").is_some(),
        _ => report(finished).is_some(),
    };
    if gate && work_on_disk && phase.approval.is_none() {
        phase.status = PhaseStatus::AwaitingApproval;
        phase.requires_approval = true;
    } else if let Some(path) = report(finished) {
        phase.outputs = vec![path.clone()];
    }
}

fn task_key(phase: &PhaseId, task: &TaskId) -> String {
    format!("{phase}/{task}")
}
