//! Claude Code's own `Workflow` runs as workflows of ours, pure: the workflow a launched run
//! becomes (ids made safe from the run id and the phase titles), what its agents' starts, ends
//! and failures change (a task of their phase each), when a phase is complete or failed, and
//! the briefing a new session gets about an unfinished run.

use std::{collections::HashMap, fmt::Write as _};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::{
    id::{PhaseId, TaskId, WorkflowId},
    model::{Phase, PhaseStatus, Task, TaskStatus, Workflow},
    transition::{Transition, apply},
};

/// The key of a run's record in [`Workflow::extensions`].
pub(crate) const EXTENSION: &str = "claude_workflow_run";

/// The `kind` of a workflow that mirrors a Claude Code `Workflow` run.
pub const KIND: &str = "claude-workflow-run";

/// The most of an agent's result kept as its task's note, in characters, the cut mark included.
pub(crate) const MAX_NOTE_CHARS: usize = 1000;

/// What a run's launch tells: its id, its script's `meta` and where the client keeps its files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The client's run id (`wf_…`).
    pub run_id: String,
    /// The script on disk, as the client named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_path: Option<String>,
    /// The run's directory under the session (journal, agents' transcripts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_dir: Option<String>,
    /// The session that launched the run; only it can resume the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// A run as launched: the record and the script's `meta`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launch {
    /// Where the run is.
    pub record: RunRecord,
    /// `meta.name`.
    pub name: Option<String>,
    /// `meta.description`.
    pub description: Option<String>,
    /// `meta.phases`' titles and details, in order.
    pub phases: Vec<(String, Option<String>)>,
    /// The `agent()` calls found in the script: label and phase title, in order.
    pub agents: Vec<(String, Option<String>)>,
}

/// How far an agent got, as the hooks and the client's files show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentState {
    /// Started, no result yet.
    Started,
    /// Finished, with its result's excerpt.
    Done(String),
    /// Failed, with the error.
    Failed(String),
}

/// One agent of a run: its id, label and phase title where known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSeen {
    /// The client's agent id.
    pub agent_id: String,
    /// Its `label`, where known.
    pub label: Option<String>,
    /// Its phase's title, where known.
    pub phase: Option<String>,
    /// How far it got.
    pub state: AgentState,
}

/// The workflow id of run `run_id`: its letters, digits, `-` and `_`, others made `-`; when
/// that loses anything but case (`""`, `.`, `..`, `a b` and `a.b`), a hash of the whole run id
/// follows, so that distinct runs get distinct workflows.
pub fn workflow_id(run_id: &str) -> Result<WorkflowId, String> {
    let mut id = safe(run_id, 80);
    if id != run_id.to_ascii_lowercase() {
        id = format!("{id}-{:016x}", fnv1a(run_id.as_bytes()));
    }
    WorkflowId::new(&id).map_err(|err| format!("run id `{run_id}` cannot name a workflow: {err}"))
}

/// The 64-bit FNV-1a hash of `bytes`: stable across versions and machines, as an id must be.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `text` as an id: lower-case letters, digits and `-`, at most `max` characters, never empty.
fn safe(text: &str, max: usize) -> String {
    let mut out = String::new();
    for c in text.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= max {
            break;
        }
    }
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "x".to_owned()
    } else {
        out.to_owned()
    }
}

/// An id made from `title`, not among `taken` (a `-2`, `-3`… suffix when it is).
fn unique(title: &str, taken: &[&str]) -> String {
    let base = safe(title, 60);
    let mut id = base.clone();
    let mut n = 1;
    while taken.contains(&id.as_str()) {
        n += 1;
        id = format!("{base}-{n}");
    }
    id
}

/// The workflow a launched run becomes: one phase per `meta.phases` entry (one phase `run`
/// when there is none), a pending task per `agent()` call found in the script.
pub fn launched(launch: &Launch, now: DateTime<Utc>) -> Result<Workflow, String> {
    let id = workflow_id(&launch.record.run_id)?;
    let mut phases: Vec<Phase> = Vec::new();
    let declared: Vec<(String, Option<String>)> = if launch.phases.is_empty() {
        vec![("run".to_owned(), None)]
    } else {
        launch.phases.clone()
    };
    for (title, detail) in &declared {
        let taken: Vec<&str> = phases.iter().map(|phase| phase.id.as_str()).collect();
        let phase_id = PhaseId::new(&unique(title, &taken)).map_err(|err| err.to_string())?;
        let mut phase = Phase::new(phase_id, Vec::new());
        phase.name.clone_from(title);
        phase.description.clone_from(detail);
        phases.push(phase);
    }
    let record = serde_json::to_value(&launch.record).map_err(|err| err.to_string())?;
    let mut workflow = crate::seeds::common::new_workflow(id, phases, now, now);
    workflow.title.clone_from(&launch.name);
    workflow.description.clone_from(&launch.description);
    workflow.kind = Some(KIND.to_owned());
    workflow.extensions.insert(EXTENSION.to_owned(), record);
    for (label, phase) in &launch.agents {
        let Some(index) = phase_of(&workflow, phase.as_deref()) else {
            continue;
        };
        let phase = &mut workflow.phases[index];
        let taken: Vec<&str> = phase.tasks.iter().map(|task| task.id.as_str()).collect();
        let task_id = TaskId::new(&unique(label, &taken)).map_err(|err| err.to_string())?;
        phase.tasks.push(Task {
            id: task_id,
            title: Some(label.clone()),
            status: TaskStatus::Pending,
            attempts: 0,
            started_at: None,
            completed_at: None,
            output: None,
            error: None,
            agent_id: None,
            note: None,
        });
    }
    Ok(workflow)
}

/// The run a workflow mirrors, if it mirrors one.
pub fn record(workflow: &Workflow) -> Option<RunRecord> {
    serde_json::from_value(workflow.extensions.get(EXTENSION)?.clone()).ok()
}

/// The index of the phase titled `title` (by title, then by id); with no title, the only phase.
fn phase_of(workflow: &Workflow, title: Option<&str>) -> Option<usize> {
    match title {
        Some(title) => workflow
            .phases
            .iter()
            .position(|phase| phase.name == title)
            .or_else(|| {
                workflow
                    .phases
                    .iter()
                    .position(|phase| phase.id.as_str() == safe(title, 60))
            }),
        None if workflow.phases.len() == 1 => Some(0),
        None => None,
    }
}

/// Transitions applied one by one to a copy, so that each is decided on the state the ones
/// before it leave; one the rules refuse is left out.
struct Steps {
    copy: Workflow,
    out: Vec<Transition>,
    now: DateTime<Utc>,
    /// Where each agent's task is in `copy` (phase and task positions), so that an agent
    /// already placed is found without a scan of every task (a run of 1,000 agents would
    /// otherwise compare a million ids per hook); checked on use, since a task may pass to
    /// another agent.
    placed: HashMap<String, (usize, usize)>,
}

impl Steps {
    fn push(&mut self, transition: Transition) -> bool {
        let seq = self.copy.seq + 1;
        if apply(&mut self.copy, &transition, seq, self.now).is_err() {
            return false;
        }
        self.out.push(transition);
        true
    }
}

/// What the agents `seen` change, then the phases' verdicts (`settled`: the run has ended).
///
/// Returns the transitions and a warning per agent that could not be placed.
pub fn observed(
    workflow: &Workflow,
    seen: &[AgentSeen],
    settled: bool,
    now: DateTime<Utc>,
) -> (Vec<Transition>, Vec<String>) {
    let mut placed = HashMap::new();
    for (p, phase) in workflow.phases.iter().enumerate() {
        for (t, task) in phase.tasks.iter().enumerate() {
            if let Some(agent_id) = &task.agent_id {
                // The first, as a scan in order finds.
                placed.entry(agent_id.clone()).or_insert((p, t));
            }
        }
    }
    let mut steps = Steps {
        copy: workflow.clone(),
        out: Vec::new(),
        now,
        placed,
    };
    let mut warnings = Vec::new();
    for agent in seen {
        match (agent_step(&mut steps, agent), &agent.state) {
            // Placed once its files name it (2.1.197 writes its label only later).
            (Ok(()), _) | (Err(_), AgentState::Started) => {}
            (Err(warning), AgentState::Done(_) | AgentState::Failed(_)) => warnings.push(warning),
        }
    }
    verdicts(&mut steps, settled);
    (steps.out, warnings)
}

/// The phase and task of `agent`: by its id, else a task of its label not yet run by another
/// agent that finished, else a new task.
fn place(steps: &mut Steps, agent: &AgentSeen) -> Result<(PhaseId, TaskId), String> {
    let workflow = &steps.copy;
    let ours = |task: &Task| task.agent_id.as_deref() == Some(agent.agent_id.as_str());
    // An agent not in `placed` had no task when the workflow was read, and is placed once.
    if let Some(&(p, t)) = steps.placed.get(&agent.agent_id) {
        if let Some(task) = workflow.phases[p].tasks.get(t).filter(|task| ours(task)) {
            return Ok((workflow.phases[p].id.clone(), task.id.clone()));
        }
        // The task passed to another agent since: the scan decides.
        for phase in &workflow.phases {
            if let Some(task) = phase.tasks.iter().find(|task| ours(task)) {
                return Ok((phase.id.clone(), task.id.clone()));
            }
        }
    }
    let Some(label) = agent.label.as_deref() else {
        return Err(format!(
            "agent `{}` of the run has no label in the client's files yet; recorded when they name it",
            agent.agent_id
        ));
    };
    let index = phase_of(workflow, agent.phase.as_deref())
        .or_else(|| {
            workflow.phases.iter().position(|phase| {
                phase
                    .tasks
                    .iter()
                    .any(|task| task.title.as_deref() == Some(label))
            })
        })
        .ok_or_else(|| {
            format!(
                "agent `{label}` names phase {}, which the run's `meta.phases` does not declare; not recorded",
                agent.phase.as_deref().map_or("(none)".to_owned(), |title| format!("`{title}`"))
            )
        })?;
    let phase = &workflow.phases[index];
    let again = phase.tasks.iter().find(|task| {
        task.title.as_deref() == Some(label)
            && match task.status {
                TaskStatus::Pending | TaskStatus::Failed => true,
                TaskStatus::Running | TaskStatus::Done => false,
            }
    });
    if let Some(task) = again {
        return Ok((phase.id.clone(), task.id.clone()));
    }
    let taken: Vec<&str> = phase.tasks.iter().map(|task| task.id.as_str()).collect();
    let task = TaskId::new(&unique(label, &taken)).map_err(|err| err.to_string())?;
    let phase_id = phase.id.clone();
    steps.push(Transition::TaskAdd {
        phase: phase_id.clone(),
        task: task.clone(),
        title: Some(label.to_owned()),
        output: None,
    });
    Ok((phase_id, task))
}

fn agent_step(steps: &mut Steps, agent: &AgentSeen) -> Result<(), String> {
    let (phase, task) = place(steps, agent)?;
    let position = steps
        .copy
        .phases
        .iter()
        .position(|p| p.id == phase)
        .and_then(|p| {
            let t = match steps.placed.get(&agent.agent_id) {
                Some(&(q, t)) if q == p && steps.copy.phases[p].tasks.get(t)?.id == task => t,
                _ => steps.copy.phases[p]
                    .tasks
                    .iter()
                    .position(|t| t.id == task)?,
            };
            Some((p, t))
        })
        .ok_or_else(|| format!("task `{task}` vanished from phase `{phase}`"))?;
    steps.placed.insert(agent.agent_id.clone(), position);
    let current = steps.copy.phases[position.0].tasks[position.1].clone();
    let ours = current.agent_id.as_deref() == Some(agent.agent_id.as_str());
    let start = Transition::TaskStart {
        phase: phase.clone(),
        task: task.clone(),
        agent_id: Some(agent.agent_id.clone()),
    };
    let needs_start = match current.status {
        TaskStatus::Pending => true,
        TaskStatus::Failed => !ours,
        TaskStatus::Running => !ours,
        TaskStatus::Done => false,
    };
    match (&agent.state, current.status) {
        (_, TaskStatus::Done) => {}
        (AgentState::Started, _) => {
            if needs_start {
                steps.push(start);
            }
        }
        (AgentState::Done(excerpt), _) => {
            if needs_start || current.status == TaskStatus::Failed {
                steps.push(start);
            }
            steps.push(Transition::TaskDone {
                phase,
                task,
                output: None,
                note: Some(excerpt.clone()),
            });
        }
        (AgentState::Failed(error), status) => {
            if needs_start {
                steps.push(start);
            }
            if needs_start || status != TaskStatus::Failed {
                steps.push(Transition::TaskFail {
                    phase,
                    task,
                    reason: error.clone(),
                });
            }
        }
    }
    Ok(())
}

/// What a phase's agents make of it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    /// Every agent succeeded and the run went past the phase.
    Complete,
    /// An agent failed (named) and none still runs.
    Failed(String),
    /// Not decided yet.
    Open,
}

fn verdict(phase: &Phase, run_past: bool) -> Verdict {
    let (mut failed, mut running, mut pending) = (None, false, false);
    for task in &phase.tasks {
        match task.status {
            TaskStatus::Done => {}
            TaskStatus::Failed => failed = failed.or(Some(task)),
            TaskStatus::Running => running = true,
            TaskStatus::Pending => pending = true,
        }
    }
    match (failed, running) {
        (Some(task), false) if run_past || !pending => Verdict::Failed(format!(
            "agent `{}` failed: {}",
            task.title.as_deref().unwrap_or(task.id.as_str()),
            task.error.as_deref().unwrap_or("no error given")
        )),
        (None, false) if run_past => Verdict::Complete,
        (Some(_), _) | (None, _) => Verdict::Open,
    }
}

/// Completes or fails each phase as its agents and the run's progress decide.
fn verdicts(steps: &mut Steps, settled: bool) {
    let last_started = steps.copy.phases.iter().rposition(|phase| {
        phase
            .tasks
            .iter()
            .any(|task| task.status != TaskStatus::Pending)
    });
    for index in 0..steps.copy.phases.len() {
        let run_past = settled || last_started.is_some_and(|last| index < last);
        let phase = &steps.copy.phases[index];
        let id = phase.id.clone();
        let status = phase.status;
        match (verdict(phase, run_past), status) {
            (Verdict::Open, _)
            | (Verdict::Complete, PhaseStatus::Complete | PhaseStatus::Skipped)
            | (Verdict::Failed(_), PhaseStatus::Failed) => {}
            (Verdict::Complete, _) => {
                if status != PhaseStatus::InProgress {
                    steps.push(Transition::PhaseStart {
                        phase: id.clone(),
                        force: true,
                    });
                }
                steps.push(Transition::PhaseComplete {
                    phase: id,
                    artifacts: Vec::new(),
                    commit_sha: None,
                    force: true,
                });
            }
            (Verdict::Failed(reason), _) => {
                if status != PhaseStatus::InProgress {
                    steps.push(Transition::PhaseStart {
                        phase: id.clone(),
                        force: true,
                    });
                }
                steps.push(Transition::PhaseFail { phase: id, reason });
            }
        }
    }
}

/// Whether the run `workflow` mirrors is unfinished: a phase not complete or skipped.
pub fn unfinished(workflow: &Workflow) -> bool {
    record(workflow).is_some() && !workflow.status.is_finished()
}

/// [`briefing_within`] whole.
pub fn briefing(workflow: &Workflow, results_dir: &str) -> Option<String> {
    briefing_within(workflow, results_dir, usize::MAX)
}

/// The most unfinished agents a briefing names in its instructions.
const NAMED_UNFINISHED: usize = 20;

/// What a session is told about the run a workflow mirrors, `None` for any other workflow: what
/// to do first (the unfinished agents, how to go on without starting over), then each phase and
/// agent while the text stays within about `budget` bytes, the rest counted with the command
/// that prints it whole (a 1,000-agent run briefs in a few kilobytes, not a megabyte).
pub fn briefing_within(workflow: &Workflow, results_dir: &str, budget: usize) -> Option<String> {
    let record = record(workflow)?;
    let run = &record.run_id;
    let mut out = format!(
        "## Claude Code `Workflow` run `{run}`{} (checkpoint workflow `{}`)\n\n",
        workflow
            .title
            .as_deref()
            .map_or(String::new(), |title| format!(" \"{title}\"")),
        workflow.id
    );
    let mut unfinished = Vec::new();
    let mut lines = Vec::new();
    for phase in &workflow.phases {
        lines.push(format!(
            "- Phase \"{}\" (`{}`): {}",
            phase.name,
            phase.id,
            phase.status.as_str()
        ));
        for task in &phase.tasks {
            let label = task.title.as_deref().unwrap_or(task.id.as_str());
            let line = match task.status {
                TaskStatus::Done => format!(
                    "done; result: {}",
                    task.note.as_deref().unwrap_or("(none recorded)")
                ),
                TaskStatus::Failed => format!(
                    "FAILED: {}",
                    task.error.as_deref().unwrap_or("no error given")
                ),
                TaskStatus::Running => {
                    "never finished (it was running when the run stopped)".to_owned()
                }
                TaskStatus::Pending => "never started".to_owned(),
            };
            if task.status != TaskStatus::Done {
                unfinished.push(format!("\"{label}\" (phase \"{}\")", phase.name));
            }
            lines.push(format!("  - agent \"{label}\": {line}"));
        }
    }
    let script = record
        .script_path
        .as_deref()
        .map_or(String::new(), |path| format!(" (script `{path}`)"));
    let named = match unfinished.len() {
        0 => "none".to_owned(),
        n if n <= NAMED_UNFINISHED => unfinished.join(", "),
        n => format!(
            "{}, and {} more",
            unfinished[..NAMED_UNFINISHED].join(", "),
            n - NAMED_UNFINISHED
        ),
    };
    let _ = write!(
        out,
        "Unfinished agents: {named}.\n\nClaude Code resumes a run with `Workflow({{scriptPath, resumeFromRunId: \"{run}\"}})` only inside the session that launched it{}; from any other session it cannot (the run's journal is not in that session). Do not start the run over. Instead write a continuation script{script} that runs only the unfinished agents and the phases after them, and reads the finished agents' full results from `{results_dir}` (one file per agent, `<phase>/<task>.md`) where it needs them.\n\n",
        record
            .session_id
            .as_deref()
            .map_or(String::new(), |session| format!(" (`{session}`)")),
    );
    let total = lines.len();
    for (shown, line) in lines.iter().enumerate() {
        if out.len() + line.len() + 1 > budget {
            let _ = writeln!(
                out,
                "- … {} more lines of phases and agents: `checkpoint resume --dry-run --workflow {}` prints them all.",
                total - shown,
                workflow.id
            );
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    Some(out)
}

/// An agent's result as its task's note: redacted, at most [`MAX_NOTE_CHARS`] characters.
pub fn excerpt(result: &str) -> String {
    crate::redact::shortened(result.trim(), MAX_NOTE_CHARS - 1)
}

#[cfg(test)]
mod tests;
