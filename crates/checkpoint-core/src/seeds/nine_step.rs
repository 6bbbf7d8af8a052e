//! The nine-step workflow's state file in each git worktree: phases of nine steps each (plan,
//! review, implement, review, document, review, test, review, commit), the user's approval at step
//! 2.5, the last execution and the completed steps.
//!
//! Each phase × step becomes a phase of ours, `p<phase>-s<step>`, depending on the step before.
//! Reviewer steps (2, 4, 6, 8) go back to the step before when they fail, and step 2 waits for the
//! user's approval, so the resume rules of `/workflow-resume` hold in our model.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::{
    error::Result,
    id::PhaseId,
    model::{Approval, ContextSummary, GitContext, Phase, PhaseStatus, Workflow},
    seeds::{
        carry::{Builder, Carry, Slot},
        common::{
            Built, ImportOptions, Imported, MAX_PHASES, SeedSource, complete_pending, is_active,
            new_workflow, times_of, unexportable, workflow_id,
        },
        document::{
            Num, event_at, fields_of, invalid, number, objects, parse, time_of, time_value,
        },
        format::SeedFormat,
    },
    timestamp::Timestamp,
};

const FORMAT: SeedFormat = SeedFormat::NineStep;

/// What each of the nine steps does.
const STEPS: [&str; 9] = [
    "plan",
    "plan review",
    "implementation",
    "code review",
    "documentation",
    "documentation review",
    "testing",
    "test review",
    "commit",
];

/// The steps that review the one before and send the work back to it when they fail.
const REVIEWERS: [u32; 4] = [2, 4, 6, 8];

/// How many failed reviews of the same step `/workflow-resume` allows before a person decides.
const REVIEW_LIMIT: u32 = 3;

/// The step whose result waits for the user's approval (the approval itself is step 2.5).
const GATE: u32 = 2;

/// How the state file numbers the user's approval.
const APPROVAL_STEP: f64 = 2.5;

const ROOT: &str = "$";
const LAST: &str = "$.last_execution";
const COMPLETED: &str = "$.completed_steps";

#[derive(Deserialize)]
struct StateFile {
    feature_name: Option<String>,
    worktree_path: Option<String>,
    branch_name: Option<String>,
    current_phase: Option<Num>,
    current_step: Option<Num>,
    total_phases: Option<Num>,
    last_execution: Option<Execution>,
    completed_steps: Option<Vec<StepEntry>>,
}

#[derive(Deserialize)]
struct Execution {
    phase: Option<Num>,
    step: Option<Num>,
    status: Option<String>,
    timestamp: Option<Value>,
    error_message: Option<Value>,
}

#[derive(Deserialize)]
struct StepEntry {
    phase: Option<Num>,
    step: Option<Num>,
    status: Option<String>,
    timestamp: Option<Value>,
    commit_sha: Option<String>,
}

/// A step of a phase: one of the nine, or the user's approval after step 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Work(u32),
    Approval,
}

impl Step {
    fn of(number: Num) -> Option<Self> {
        if number.0 == APPROVAL_STEP {
            return Some(Self::Approval);
        }
        number.ordinal().filter(|step| *step <= 9).map(Self::Work)
    }

    /// The step of ours that holds it.
    fn work(self) -> u32 {
        match self {
            Self::Work(step) => step,
            Self::Approval => GATE,
        }
    }

    fn value(self) -> Value {
        match self {
            Self::Work(step) => Value::from(step),
            Self::Approval => number(APPROVAL_STEP),
        }
    }
}

/// A position in the workflow: a phase (from 1) and a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Position {
    phase: u32,
    step: Step,
}

impl Position {
    fn of(phase: Option<Num>, step: Option<Num>) -> Option<Self> {
        Some(Self {
            phase: phase?.ordinal()?,
            step: Step::of(step?)?,
        })
    }

    /// The index of the phase of ours holding this position.
    fn index(self) -> usize {
        (self.phase as usize - 1) * 9 + self.step.work() as usize - 1
    }

    /// The key of a `completed_steps` entry at this position.
    fn key(self) -> String {
        match self.step {
            Step::Work(step) => step_id(self.phase, step).to_string(),
            Step::Approval => format!("p{}-s2.5", self.phase),
        }
    }
}

pub(crate) fn read(source: &SeedSource, options: &ImportOptions) -> Result<Imported> {
    let path = &source.main.path;
    let (file, raw): (StateFile, _) = parse(FORMAT, path, &source.main.bytes)?;
    let mut carry = Carry::default();
    carry.object(ROOT, &raw, fields_of::<StateFile>());
    let now = options.now;

    let last = file
        .last_execution
        .as_ref()
        .and_then(|last| Some((Position::of(last.phase, last.step)?, last)));
    let current = Position::of(file.current_phase, file.current_step);
    let at = last.map(|(position, _)| position).or(current);
    let n_phases = count_phases(&file, last, at);
    if n_phases > MAX_PHASES {
        return Err(invalid(
            FORMAT,
            path,
            &source.main.bytes,
            format!("it names {n_phases} phases"),
        ));
    }
    let mut phases: Vec<Phase> = (1..=n_phases)
        .flat_map(|phase| (1..=9).map(move |step| (phase, step)))
        .map(|(phase, step)| new_step(phase, step))
        .collect();
    read_completed(&file, &raw, n_phases, now, &mut phases, &mut carry);
    if let Some((position, last)) = last.filter(|(position, _)| position.phase <= n_phases) {
        let raw_last = raw
            .get("last_execution")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let outcome = outcome(last.status.as_deref());
        let slot = carry.object(LAST, &raw_last, fields_of::<Execution>());
        slot.key = Some(last_key(position, outcome));
        let time = slot.time("timestamp", last.timestamp.as_ref());
        let phase = &mut phases[position.index()];
        // What the step is doing, as the file says it: shown when the work resumes.
        phase.description = step_description(&raw_last)
            .or_else(|| raw.get("phase_description").and_then(Value::as_str))
            .map(str::to_owned);
        // A failure's message becomes the phase's error; on a step that did not fail, it is the
        // note of where the work stopped, the phase's progress (what `resume` shows), and is kept
        // as written for the export, as one that is not text.
        let error = match &last.error_message {
            Some(Value::String(message)) if outcome == StepOutcome::Failed => Some(message.clone()),
            Some(_) => {
                slot.keep(&raw_last, "error_message");
                None
            }
            None => None,
        };
        let stopped_at = match &last.error_message {
            Some(Value::String(message)) if outcome != StepOutcome::Failed => {
                Some(message.trim().to_owned()).filter(|message| !message.is_empty())
            }
            _ => None,
        };
        let last_step = LastStep {
            position,
            outcome,
            time,
            error,
        };
        apply_last(&file, &last_step, now, phase);
        if phase.progress.is_none() {
            phase.progress = stopped_at;
        }
    }
    // Every step before the one the file is at is done, recorded or not.
    if let Some(at) = at.filter(|position| position.phase <= n_phases) {
        complete_pending(&mut phases[..at.index()]);
    }
    Ok(Imported {
        workflow: workflow_of(&file, &raw, path, options, phases),
        carry,
        documents: vec![(ROOT, raw)],
    })
}

/// How many phases the file holds: its `total_phases`, or as many as it mentions (one more after a
/// completed step 9, which the next phase's step 1 follows).
fn count_phases(
    file: &StateFile,
    last: Option<(Position, &Execution)>,
    at: Option<Position>,
) -> u32 {
    let last_completed = last.is_some_and(|(position, last)| {
        position.step == Step::Work(9) && outcome(last.status.as_deref()) == StepOutcome::Completed
    });
    let mentioned = file
        .completed_steps
        .iter()
        .flatten()
        .filter_map(|entry| Some(Position::of(entry.phase, entry.step)?.phase))
        .chain(at.map(|position| position.phase))
        .max()
        .unwrap_or(1);
    match file.total_phases.and_then(Num::ordinal) {
        Some(total) => total.max(mentioned),
        // After step 9 comes the next phase's step 1.
        None if last_completed => mentioned.saturating_add(1),
        None => mentioned,
    }
}

/// Completes the steps `completed_steps` records, keeping each entry for the export.
///
/// A step done again after a review sent the work back keeps both entries; the model holds the last
/// time.
fn read_completed(
    file: &StateFile,
    raw: &Map<String, Value>,
    n_phases: u32,
    now: DateTime<Utc>,
    phases: &mut [Phase],
    carry: &mut Carry,
) {
    for (entry, raw_entry) in file
        .completed_steps
        .iter()
        .flatten()
        .zip(objects(raw, "completed_steps"))
    {
        // Only completions and approvals are appended; anything else is kept as written.
        let position = Position::of(entry.phase, entry.step).filter(|position| {
            position.phase <= n_phases
                && outcome(entry.status.as_deref().or(Some("completed"))) == StepOutcome::Completed
        });
        let Some(position) = position else {
            carry
                .list_mut(COMPLETED)
                .push(Slot::verbatim(Value::Object(raw_entry)));
            continue;
        };
        let time = time_of(entry.timestamp.as_ref());
        let phase = &mut phases[position.index()];
        let at = match position.step {
            Step::Approval => {
                let at = time.unwrap_or(now);
                phase.approval = Some(Approval {
                    by: None,
                    at,
                    note: None,
                });
                phase.status = PhaseStatus::Complete;
                Some(at)
            }
            Step::Work(_) => {
                phase.attempts += 1;
                phase.status = PhaseStatus::Complete;
                phase.completed_at = time.map(Timestamp::from);
                phase.commit_sha = entry.commit_sha.clone().or(phase.commit_sha.take());
                time
            }
        };
        carry
            .list_mut(COMPLETED)
            .push(Slot::logged(&position.key(), event_at(at), &raw_entry));
    }
}

/// What `last_execution` says of the step it names.
struct LastStep {
    position: Position,
    outcome: StepOutcome,
    time: Option<DateTime<Utc>>,
    error: Option<String>,
}

/// Gives the phase of the last execution's step its status, times and error.
fn apply_last(file: &StateFile, last: &LastStep, now: DateTime<Utc>, phase: &mut Phase) {
    let time = last.time.map(Timestamp::from);
    match last.outcome {
        StepOutcome::Failed => {
            phase.status = PhaseStatus::Failed;
            phase.attempts += 1;
            // Each completion of the step a reviewer sends back to was followed by a review:
            // with the review failing now, none of them passed ("same Step failed 3+ times").
            phase.failures += match last.position.step {
                Step::Work(step) if REVIEWERS.contains(&step) => {
                    reworked(file, last.position.phase, step - 1).max(1)
                }
                _ => 1,
            };
            phase.started_at = time;
            phase.completed_at = None;
            if let Some(error) = &last.error {
                phase.error = Some(error.clone());
            }
        }
        StepOutcome::WaitingApproval => {
            phase.status = PhaseStatus::AwaitingApproval;
            phase.requires_approval = true;
            phase.attempts = phase.attempts.max(1);
            phase.completed_at = phase.completed_at.or(time);
            phase.approval = None;
        }
        StepOutcome::InProgress => {
            phase.status = PhaseStatus::InProgress;
            phase.attempts += 1;
            phase.started_at = time;
            phase.completed_at = None;
        }
        StepOutcome::Completed => {
            phase.status = PhaseStatus::Complete;
            phase.attempts = phase.attempts.max(1);
            if last.position.step == Step::Approval {
                let at = last
                    .time
                    .or(phase.approval.as_ref().map(|approval| approval.at));
                phase.approval = Some(Approval {
                    by: None,
                    at: at.unwrap_or(now),
                    note: None,
                });
            } else {
                phase.completed_at = time.or(phase.completed_at);
            }
        }
    }
}

/// The workflow around the phases: its id, title, git context and plan file.
fn workflow_of(
    file: &StateFile,
    raw: &Map<String, Value>,
    path: &Path,
    options: &ImportOptions,
    phases: Vec<Phase>,
) -> Workflow {
    let git = (file.branch_name.is_some() || file.worktree_path.is_some()).then(|| GitContext {
        branch: file.branch_name.clone(),
        worktree: file.worktree_path.clone(),
        head: None,
    });
    let mut context = ContextSummary::default();
    if let Some(plan) = raw.get("plan_reference").and_then(Value::as_str) {
        context.file_paths.push(plan.to_owned());
    }
    let worktree = path
        .parent()
        .and_then(|dir| dir.file_name())
        .and_then(|name| name.to_str());
    let id = workflow_id(
        options,
        &[file.feature_name.as_deref(), worktree],
        "nine-step",
    );
    let (created_at, updated_at) = times_of(&phases, options.now);
    let mut workflow = new_workflow(id, phases, created_at, updated_at);
    workflow.title = file.feature_name.clone();
    workflow.git = git;
    workflow.context = context;
    workflow
}

pub(crate) fn build(workflow: &Workflow, builder: &mut Builder<'_>) -> Result<Vec<Built>> {
    let positions = workflow
        .phases
        .iter()
        .map(|phase| {
            parse_step_id(&phase.id).ok_or_else(|| {
                unexportable(
                    FORMAT,
                    workflow,
                    format!("phase `{}` is not a step of a nine-step phase", phase.id),
                    "the nine-step state holds phases of nine steps, with ids `p<phase>-s<step>` (for example `p2-s4`); export this workflow to another format".into(),
                )
            })
        })
        .collect::<Result<Vec<(u32, u32)>>>()?;
    let n_phases = positions.iter().map(|(phase, _)| *phase).max().unwrap_or(1);
    let steps: Vec<(&Phase, u32, u32)> = workflow
        .phases
        .iter()
        .zip(positions)
        .map(|(phase, (n, m))| (phase, n, m))
        .collect();

    let mut top = Map::new();
    top.insert(
        "feature_name".into(),
        Value::from(workflow.title.as_deref().unwrap_or(workflow.id.as_str())),
    );
    if let Some(git) = &workflow.git {
        if let Some(worktree) = &git.worktree {
            top.insert("worktree_path".into(), Value::from(worktree.as_str()));
        }
        if let Some(branch) = &git.branch {
            top.insert("branch_name".into(), Value::from(branch.as_str()));
        }
    }
    let last = last_event(&steps);
    let (phase, step) = last.as_ref().map_or((1, Step::Work(1)), |event| {
        (event.position.phase, event.position.step)
    });
    top.insert("current_phase".into(), Value::from(phase));
    top.insert("current_step".into(), step.value());
    top.insert("total_phases".into(), Value::from(n_phases));
    let last = last.map_or(Value::Null, |event| {
        let mut object = Map::new();
        object.insert("phase".into(), Value::from(event.position.phase));
        object.insert("step".into(), event.position.step.value());
        object.insert("status".into(), Value::from(event.status));
        if let Some(time) = event.time {
            object.insert("timestamp".into(), time_value(time));
        }
        if let Some(error) = event.error {
            object.insert("error_message".into(), Value::from(error));
        }
        // A workflow imported before the key was the phase's holds the key of the step.
        let held = builder
            .carry()
            .objects
            .get(LAST)
            .and_then(|slot| slot.key.as_deref());
        let key = match held {
            Some(held) if held == event.position.key() => held.to_owned(),
            _ => last_key(event.position, outcome(Some(event.status))),
        };
        Value::Object(builder.keyed_object(LAST, &key, object))
    });
    top.insert("last_execution".into(), last);

    // Each entry with its time, and its plan order (an approval right after its step) for ties.
    let mut completed: Vec<Completion> = Vec::new();
    for (index, (phase, n, m)) in steps.iter().enumerate() {
        if let (true, Some(time)) = (
            phase.status.is_done(),
            phase.completed_at.map(Timestamp::utc),
        ) {
            let position = Position {
                phase: *n,
                step: Step::Work(*m),
            };
            let mut entry = Map::new();
            entry.insert("phase".into(), Value::from(*n));
            entry.insert("step".into(), Value::from(*m));
            let status = if phase.status == PhaseStatus::Skipped {
                "skipped"
            } else {
                "completed"
            };
            entry.insert("status".into(), Value::from(status));
            entry.insert("timestamp".into(), time_value(time));
            if let Some(sha) = &phase.commit_sha {
                entry.insert("commit_sha".into(), Value::from(sha.as_str()));
            }
            completed.push((Some(time), 2 * index, position.key(), entry));
        }
        if let Some(approval) = &phase.approval {
            let position = Position {
                phase: *n,
                step: Step::Approval,
            };
            let mut entry = Map::new();
            entry.insert("phase".into(), Value::from(*n));
            entry.insert("step".into(), Step::Approval.value());
            entry.insert("status".into(), Value::from("approved"));
            entry.insert("timestamp".into(), time_value(approval.at));
            completed.push((Some(approval.at), 2 * index + 1, position.key(), entry));
        }
    }
    completed.sort_by_key(|(time, order, _, _)| (*time, *order));
    let completed = completed
        .into_iter()
        .map(|(time, _, key, entry)| (key, event_at(time), entry))
        .collect();
    let completed = builder.log(COMPLETED, completed, &[]);
    top.insert("completed_steps".into(), completed);
    Ok(vec![Built {
        root: ROOT,
        name: "workflow-state.json",
        value: builder.object(ROOT, top),
    }])
}

/// A `completed_steps` entry with its time and plan order.
type Completion = (Option<DateTime<Utc>>, usize, String, Map<String, Value>);

/// The key of the `last_execution` object: the phase of ours it is about, so that the fields the
/// file wrote there (its `agent`, its step written as 2 or 2.5) stay with it whether the step
/// waits at its gate, is in progress or failed; the user's approval itself (a completed step 2.5)
/// is an event of its own.
fn last_key(position: Position, outcome: StepOutcome) -> String {
    match (position.step, outcome) {
        (Step::Approval, StepOutcome::Completed) => position.key(),
        (step, _) => step_id(position.phase, step.work()).to_string(),
    }
}

/// What a step's last execution came to, in our terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StepOutcome {
    Completed,
    Failed,
    WaitingApproval,
    InProgress,
}

fn outcome(status: Option<&str>) -> StepOutcome {
    match status.unwrap_or("").to_lowercase().as_str() {
        "completed" | "complete" | "approved" | "done" | "success" => StepOutcome::Completed,
        "failed" | "needs_revision" | "rejected" | "error" => StepOutcome::Failed,
        "waiting_approval" | "awaiting_approval" | "pending_approval" => {
            StepOutcome::WaitingApproval
        }
        _ => StepOutcome::InProgress,
    }
}

/// The last execution as the state file records it.
struct Event<'a> {
    position: Position,
    status: &'static str,
    time: Option<DateTime<Utc>>,
    error: Option<&'a str>,
}

/// The step being worked on (or sent back to pending by an interruption, which
/// `/workflow-resume` retries as `in_progress`), else the latest completion or approval.
fn last_event<'a>(steps: &[(&'a Phase, u32, u32)]) -> Option<Event<'a>> {
    let interrupted = |phase: &Phase| phase.status == PhaseStatus::Pending && phase.attempts > 0;
    if let Some((phase, n, m)) = steps
        .iter()
        .find(|(phase, _, _)| is_active(phase) || interrupted(phase))
    {
        let work = Position {
            phase: *n,
            step: Step::Work(*m),
        };
        return Some(match phase.status {
            PhaseStatus::Failed => Event {
                position: work,
                status: "failed",
                time: phase.started_at.map(Timestamp::utc),
                error: phase.error.as_deref(),
            },
            PhaseStatus::AwaitingApproval => Event {
                position: Position {
                    phase: *n,
                    step: if *m == GATE {
                        Step::Approval
                    } else {
                        Step::Work(*m)
                    },
                },
                status: "waiting_approval",
                time: phase.completed_at.map(Timestamp::utc),
                error: None,
            },
            _ => Event {
                position: work,
                status: "in_progress",
                time: phase.started_at.map(Timestamp::utc),
                error: None,
            },
        });
    }
    let mut latest: Option<(Option<DateTime<Utc>>, usize, Event<'a>)> = None;
    for (index, (phase, n, m)) in steps.iter().enumerate() {
        let mut candidates = Vec::new();
        if phase.status.is_done() {
            candidates.push((
                phase.completed_at.map(Timestamp::utc),
                2 * index,
                Event {
                    position: Position {
                        phase: *n,
                        step: Step::Work(*m),
                    },
                    status: "completed",
                    time: phase.completed_at.map(Timestamp::utc),
                    error: None,
                },
            ));
        }
        if let Some(approval) = &phase.approval {
            candidates.push((
                Some(approval.at),
                2 * index + 1,
                Event {
                    position: Position {
                        phase: *n,
                        step: Step::Approval,
                    },
                    status: "approved",
                    time: Some(approval.at),
                    error: None,
                },
            ));
        }
        for candidate in candidates {
            if latest
                .as_ref()
                .is_none_or(|(time, order, _)| (candidate.0, candidate.1) > (*time, *order))
            {
                latest = Some(candidate);
            }
        }
    }
    latest.map(|(_, _, event)| event)
}

/// How many times the file records step `step` of phase `phase` as completed.
fn reworked(file: &StateFile, phase: u32, step: u32) -> u32 {
    let count = file
        .completed_steps
        .iter()
        .flatten()
        .filter(|entry| {
            Position::of(entry.phase, entry.step)
                == Some(Position {
                    phase,
                    step: Step::Work(step),
                })
        })
        .count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// The task or target a `last_execution` names, under the first of the names the plugin's
/// agent context uses for it.
fn step_description(last: &Map<String, Value>) -> Option<&str> {
    ["task", "target", "task_scope", "description"]
        .iter()
        .find_map(|key| last.get(*key).and_then(Value::as_str))
        .filter(|text| !text.trim().is_empty())
}

fn new_step(phase: u32, step: u32) -> Phase {
    let dependencies = match (phase, step) {
        (1, 1) => Vec::new(),
        (_, 1) => vec![step_id(phase - 1, 9)],
        _ => vec![step_id(phase, step - 1)],
    };
    let mut new = Phase::new(step_id(phase, step), dependencies);
    new.name = format!("Phase {phase} step {step}: {}", STEPS[step as usize - 1]);
    if REVIEWERS.contains(&step) {
        new.on_failure = Some(step_id(phase, step - 1));
        // `/workflow-resume` asks a person once the same step has failed three times.
        new.max_attempts = Some(REVIEW_LIMIT);
    }
    new.requires_approval = step == GATE;
    new
}

/// `p<phase>-s<step>`.
fn step_id(phase: u32, step: u32) -> PhaseId {
    PhaseId::new(&format!("p{phase}-s{step}")).expect("`p<n>-s<m>` is a valid id")
}

/// The phase and step of an id `p<phase>-s<step>`.
fn parse_step_id(id: &PhaseId) -> Option<(u32, u32)> {
    let (phase, step) = id.as_str().strip_prefix('p')?.split_once("-s")?;
    let phase: u32 = phase.parse().ok().filter(|phase| *phase >= 1)?;
    let step: u32 = step.parse().ok().filter(|step| (1..=9).contains(step))?;
    Some((phase, step))
}
