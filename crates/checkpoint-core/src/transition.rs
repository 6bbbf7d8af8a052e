//! Transitions: every change to a workflow is one of these, applied by [`apply`] and recorded in
//! the journal with a timestamp and a sequence number.

use std::fmt;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    error::{Error, Result},
    id::{PhaseId, TaskId, WorkflowId},
    model::{
        Activity, Approval, Artifact, Decision, Holder, Note, Pause, Phase, PhaseStatus, Replan,
        Task, TaskStatus, Workflow, WorkflowStatus,
    },
    timestamp::Timestamp,
};

/// How many failed attempts a phase may have before a person must decide, unless it says otherwise.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// Which side a divergence was resolved to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Keep {
    /// The remote entries; ours are kept in a fork `<id>@local-<time>`.
    Theirs,
    /// Our entries, replayed after the remote ones from the shared state; theirs are kept in a
    /// fork `<id>@remote-<time>`.
    Ours,
    /// Both: the remote entries, then ours (allowed when each side touched different phases).
    Merge,
}

impl fmt::Display for Keep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Theirs => "theirs",
            Self::Ours => "ours",
            Self::Merge => "merge",
        })
    }
}

/// What a session of `checkpoint run` amounted to, as `run_session_end` journals it.
///
/// The runner decides on `run::Outcome`, the same but `Interrupted`: a signal stops the run
/// before the session is weighed, so a decision would have no arm for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionOutcome {
    /// It recorded work.
    Progress,
    /// It ended normally without recording any work.
    Stall,
    /// It hit a rate or usage limit.
    RateLimit,
    /// It failed for another reason.
    Crash,
    /// A signal to the runner stopped it.
    Interrupted,
}

impl SessionOutcome {
    /// Its word in the journal.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Progress => "progress",
            Self::Stall => "stall",
            Self::RateLimit => "rate_limit",
            Self::Crash => "crash",
            Self::Interrupted => "interrupted",
        }
    }
}

impl fmt::Display for SessionOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One change to a workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Transition {
    /// Creates the workflow with this initial state.
    Init {
        /// The initial state.
        workflow: Box<Workflow>,
    },
    /// Replaces the whole state (a rewind, a recovery or an import).
    Snapshot {
        /// The new state; its `seq` and `updated_at` are set on apply.
        workflow: Box<Workflow>,
        /// Why the state was replaced.
        reason: String,
    },
    /// Starts (or retries) a phase.
    PhaseStart {
        /// The phase.
        phase: PhaseId,
        /// Start even if it is done, its dependencies are not, or it failed too often.
        #[serde(default)]
        force: bool,
    },
    /// Records partial progress on a phase.
    PhaseProgress {
        /// The phase.
        phase: PhaseId,
        /// What is done so far and what comes next.
        note: String,
    },
    /// Completes a phase (or sends it to its approval gate).
    PhaseComplete {
        /// The phase.
        phase: PhaseId,
        /// Artifacts produced.
        #[serde(default)]
        artifacts: Vec<String>,
        /// The commit holding the work.
        #[serde(default)]
        commit_sha: Option<String>,
        /// Complete even if dependencies or tasks are not done.
        #[serde(default)]
        force: bool,
    },
    /// Marks a phase failed.
    PhaseFail {
        /// The phase.
        phase: PhaseId,
        /// What went wrong.
        reason: String,
    },
    /// Skips a phase; it counts as done for its dependants.
    PhaseSkip {
        /// The phase.
        phase: PhaseId,
        /// Why.
        #[serde(default)]
        reason: Option<String>,
    },
    /// Puts an interrupted phase back to pending (resume recovery).
    PhaseReset {
        /// The phase.
        phase: PhaseId,
        /// Why.
        reason: String,
    },
    /// Approves a phase waiting at its gate.
    PhaseApprove {
        /// The phase.
        phase: PhaseId,
        /// Who approved.
        #[serde(default)]
        by: Option<String>,
        /// Any remark.
        #[serde(default)]
        note: Option<String>,
    },
    /// Rejects a phase waiting at its gate; it fails with the reason.
    PhaseReject {
        /// The phase.
        phase: PhaseId,
        /// Why.
        reason: String,
    },
    /// Records the commit holding a phase's work.
    PhaseCommit {
        /// The phase.
        phase: PhaseId,
        /// The commit.
        sha: String,
    },
    /// Records that a phase was replanned.
    Replan {
        /// The phase.
        phase: PhaseId,
        /// Why.
        reason: String,
    },
    /// Adds a task to a phase.
    TaskAdd {
        /// The phase.
        phase: PhaseId,
        /// The new task.
        task: TaskId,
        /// What it does.
        #[serde(default)]
        title: Option<String>,
        /// The file it writes.
        #[serde(default)]
        output: Option<String>,
    },
    /// Starts a task (and its phase, if pending).
    TaskStart {
        /// The phase.
        phase: PhaseId,
        /// The task.
        task: TaskId,
    },
    /// Finishes a task.
    TaskDone {
        /// The phase.
        phase: PhaseId,
        /// The task.
        task: TaskId,
        /// The file it wrote.
        #[serde(default)]
        output: Option<String>,
    },
    /// Marks a task failed.
    TaskFail {
        /// The phase.
        phase: PhaseId,
        /// The task.
        task: TaskId,
        /// What went wrong.
        reason: String,
    },
    /// Puts an interrupted task back to pending (resume recovery).
    TaskReset {
        /// The phase.
        phase: PhaseId,
        /// The task.
        task: TaskId,
        /// Why.
        reason: String,
    },
    /// Adds a free-text note to the context summary.
    Note {
        /// The note.
        text: String,
    },
    /// Adds a key decision to the context summary.
    Decide {
        /// The decision.
        text: String,
    },
    /// Adds a file path to the context summary.
    FilePath {
        /// The path.
        path: String,
    },
    /// Records a sign of life from an agent session.
    Heartbeat {
        /// What reported it.
        source: String,
        /// The session id.
        #[serde(default)]
        session_id: Option<String>,
    },
    /// Pauses the workflow.
    Pause {
        /// Why.
        reason: String,
        /// When it may continue.
        #[serde(default)]
        until: Option<DateTime<Utc>>,
    },
    /// Lifts a pause.
    Unpause,
    /// Gives the workflow up.
    Abandon {
        /// Why.
        #[serde(default)]
        reason: Option<String>,
    },
    /// Records a failed tool call on a phase in progress (the phase itself goes on).
    ToolFailure {
        /// The phase.
        phase: PhaseId,
        /// The tool, for example `Bash`.
        tool: String,
        /// What the tool reported.
        error: String,
    },
    /// Records that a sub-agent was dispatched to hold a phase in progress.
    HolderDispatch {
        /// The phase.
        phase: PhaseId,
        /// The id of the dispatching tool call.
        tool_use_id: String,
        /// The dispatch's short description.
        #[serde(default)]
        description: Option<String>,
        /// The session that dispatched it.
        #[serde(default)]
        session_id: Option<String>,
    },
    /// Records a sign of life of a phase's holder, and its agent id once known.
    HolderSeen {
        /// The phase.
        phase: PhaseId,
        /// The sub-agent's id.
        #[serde(default)]
        agent_id: Option<String>,
    },
    /// Records that a phase's holder ended: with its last message as the phase's progress note
    /// when the phase is still in progress, or with the error that stopped it.
    HolderEnd {
        /// The phase.
        phase: PhaseId,
        /// The sub-agent's last message, for the phase's progress note.
        #[serde(default)]
        note: Option<String>,
        /// What stopped it, for example `rate_limit`.
        #[serde(default)]
        error: Option<String>,
    },
    /// Records a context compaction in the agent session.
    Compaction {
        /// `manual` or `auto`.
        trigger: String,
        /// The session id.
        #[serde(default)]
        session_id: Option<String>,
    },
    /// Records how `checkpoint pull` resolved a journal that diverged from the remote one.
    SyncResolve {
        /// The side kept: `theirs`, `ours` or `merge`.
        keep: Keep,
        /// The last entry both sides shared (0 when none).
        diverged_at: u64,
        /// The workflow that keeps the other side, if any.
        #[serde(default)]
        fork: Option<WorkflowId>,
        /// For `ours`: the shared state, which our entries after this one are replayed onto.
        #[serde(default)]
        base: Option<Box<Workflow>>,
    },
    /// An unattended runner (`checkpoint run`) started on the workflow.
    RunStart {
        /// The runner's process id.
        pid: u32,
        /// The agent client it drives, for example `claude`.
        client: String,
    },
    /// The runner started an agent session.
    RunSessionStart {
        /// The session's number in this run, from 1.
        number: u32,
        /// The phase the plan named.
        #[serde(default)]
        phase: Option<PhaseId>,
        /// The session it continues, when it resumes one.
        #[serde(default)]
        resumed: Option<String>,
    },
    /// An agent session of the runner ended.
    RunSessionEnd {
        /// The session's number in this run.
        number: u32,
        /// The client's session id.
        #[serde(default)]
        session_id: Option<String>,
        /// Its exit code; none when a signal ended it.
        #[serde(default)]
        exit: Option<i32>,
        /// What it amounted to.
        outcome: SessionOutcome,
        /// How many transitions of work it recorded.
        #[serde(default)]
        transitions: u32,
    },
    /// The runner waits (for a rate limit to reset, or a backoff) before the next session.
    RunWait {
        /// When it continues.
        until: DateTime<Utc>,
        /// Why it waits.
        reason: String,
    },
    /// The runner stopped.
    RunStop {
        /// Why, in a sentence.
        reason: String,
        /// The runner's exit code.
        #[serde(default)]
        exit: u8,
    },
}

impl Transition {
    /// Whether the transition carries a whole workflow (`init`, `snapshot`) rather than a change.
    pub fn replaces_state(&self) -> bool {
        matches!(
            self,
            Self::Init { .. } | Self::Snapshot { .. } | Self::SyncResolve { base: Some(_), .. }
        )
    }

    /// A short name of the operation, as in the journal's `op` field.
    pub fn op(&self) -> &'static str {
        match self {
            Self::Init { .. } => "init",
            Self::Snapshot { .. } => "snapshot",
            Self::PhaseStart { .. } => "phase_start",
            Self::PhaseProgress { .. } => "phase_progress",
            Self::PhaseComplete { .. } => "phase_complete",
            Self::PhaseFail { .. } => "phase_fail",
            Self::PhaseSkip { .. } => "phase_skip",
            Self::PhaseReset { .. } => "phase_reset",
            Self::PhaseApprove { .. } => "phase_approve",
            Self::PhaseReject { .. } => "phase_reject",
            Self::PhaseCommit { .. } => "phase_commit",
            Self::Replan { .. } => "replan",
            Self::TaskAdd { .. } => "task_add",
            Self::TaskStart { .. } => "task_start",
            Self::TaskDone { .. } => "task_done",
            Self::TaskFail { .. } => "task_fail",
            Self::TaskReset { .. } => "task_reset",
            Self::Note { .. } => "note",
            Self::Decide { .. } => "decide",
            Self::FilePath { .. } => "file_path",
            Self::Heartbeat { .. } => "heartbeat",
            Self::Pause { .. } => "pause",
            Self::Unpause => "unpause",
            Self::Abandon { .. } => "abandon",
            Self::ToolFailure { .. } => "tool_failure",
            Self::HolderDispatch { .. } => "holder_dispatch",
            Self::HolderSeen { .. } => "holder_seen",
            Self::HolderEnd { .. } => "holder_end",
            Self::Compaction { .. } => "compaction",
            Self::SyncResolve { .. } => "sync_resolve",
            Self::RunStart { .. } => "run_start",
            Self::RunSessionStart { .. } => "run_session_start",
            Self::RunSessionEnd { .. } => "run_session_end",
            Self::RunWait { .. } => "run_wait",
            Self::RunStop { .. } => "run_stop",
        }
    }

    /// The phase this transition concerns, if any.
    pub fn phase(&self) -> Option<&PhaseId> {
        match self {
            Self::PhaseStart { phase, .. }
            | Self::PhaseProgress { phase, .. }
            | Self::PhaseComplete { phase, .. }
            | Self::PhaseFail { phase, .. }
            | Self::PhaseSkip { phase, .. }
            | Self::PhaseReset { phase, .. }
            | Self::PhaseApprove { phase, .. }
            | Self::PhaseReject { phase, .. }
            | Self::PhaseCommit { phase, .. }
            | Self::Replan { phase, .. }
            | Self::TaskAdd { phase, .. }
            | Self::TaskStart { phase, .. }
            | Self::TaskDone { phase, .. }
            | Self::TaskFail { phase, .. }
            | Self::TaskReset { phase, .. }
            | Self::ToolFailure { phase, .. }
            | Self::HolderDispatch { phase, .. }
            | Self::HolderSeen { phase, .. }
            | Self::HolderEnd { phase, .. } => Some(phase),
            Self::Init { .. }
            | Self::Snapshot { .. }
            | Self::Note { .. }
            | Self::Decide { .. }
            | Self::FilePath { .. }
            | Self::Heartbeat { .. }
            | Self::Pause { .. }
            | Self::Unpause
            | Self::Abandon { .. }
            | Self::Compaction { .. }
            | Self::SyncResolve { .. }
            | Self::RunStart { .. }
            | Self::RunSessionStart { .. }
            | Self::RunSessionEnd { .. }
            | Self::RunWait { .. }
            | Self::RunStop { .. } => None,
        }
    }

    /// Whether the transition records work on the workflow (its phases, tasks or context), as
    /// opposed to a sign of life, a pause, a tool failure or a runner's own event: a session
    /// that recorded none made no progress.
    pub fn is_work(&self) -> bool {
        match self {
            Self::Init { .. }
            | Self::Snapshot { .. }
            | Self::PhaseStart { .. }
            | Self::PhaseProgress { .. }
            | Self::PhaseComplete { .. }
            | Self::PhaseFail { .. }
            | Self::PhaseSkip { .. }
            | Self::PhaseReset { .. }
            | Self::PhaseApprove { .. }
            | Self::PhaseReject { .. }
            | Self::PhaseCommit { .. }
            | Self::Replan { .. }
            | Self::TaskAdd { .. }
            | Self::TaskStart { .. }
            | Self::TaskDone { .. }
            | Self::TaskFail { .. }
            | Self::TaskReset { .. }
            | Self::Note { .. }
            | Self::Decide { .. }
            | Self::FilePath { .. }
            | Self::Abandon { .. }
            | Self::HolderDispatch { .. }
            | Self::HolderEnd { .. }
            | Self::SyncResolve { .. } => true,
            Self::Heartbeat { .. }
            | Self::Compaction { .. }
            | Self::ToolFailure { .. }
            | Self::HolderSeen { .. }
            | Self::Pause { .. }
            | Self::Unpause
            | Self::RunStart { .. }
            | Self::RunSessionStart { .. }
            | Self::RunSessionEnd { .. }
            | Self::RunWait { .. }
            | Self::RunStop { .. } => false,
        }
    }

    /// Whether the transition is work being done, which lifts a pause: the agent is evidently
    /// running again. [`lift_pause`] journals the `Unpause` before it.
    pub fn lifts_pause(&self) -> bool {
        match self {
            Self::PhaseStart { .. }
            | Self::PhaseProgress { .. }
            | Self::PhaseComplete { .. }
            | Self::TaskStart { .. }
            | Self::TaskDone { .. } => true,
            Self::Init { .. }
            | Self::Snapshot { .. }
            | Self::PhaseFail { .. }
            | Self::PhaseSkip { .. }
            | Self::PhaseReset { .. }
            | Self::PhaseApprove { .. }
            | Self::PhaseReject { .. }
            | Self::PhaseCommit { .. }
            | Self::Replan { .. }
            | Self::TaskAdd { .. }
            | Self::TaskFail { .. }
            | Self::TaskReset { .. }
            | Self::Note { .. }
            | Self::Decide { .. }
            | Self::FilePath { .. }
            | Self::Heartbeat { .. }
            | Self::Pause { .. }
            | Self::Unpause
            | Self::Abandon { .. }
            | Self::ToolFailure { .. }
            | Self::HolderDispatch { .. }
            | Self::HolderSeen { .. }
            | Self::HolderEnd { .. }
            | Self::Compaction { .. }
            | Self::SyncResolve { .. }
            | Self::RunStart { .. }
            | Self::RunSessionStart { .. }
            | Self::RunSessionEnd { .. }
            | Self::RunWait { .. }
            | Self::RunStop { .. } => false,
        }
    }

    /// Whether the transition is an event of an unattended runner (`checkpoint run`).
    pub fn is_run_event(&self) -> bool {
        match self {
            Self::RunStart { .. }
            | Self::RunSessionStart { .. }
            | Self::RunSessionEnd { .. }
            | Self::RunWait { .. }
            | Self::RunStop { .. } => true,
            Self::Init { .. }
            | Self::Snapshot { .. }
            | Self::PhaseStart { .. }
            | Self::PhaseProgress { .. }
            | Self::PhaseComplete { .. }
            | Self::PhaseFail { .. }
            | Self::PhaseSkip { .. }
            | Self::PhaseReset { .. }
            | Self::PhaseApprove { .. }
            | Self::PhaseReject { .. }
            | Self::PhaseCommit { .. }
            | Self::Replan { .. }
            | Self::TaskAdd { .. }
            | Self::TaskStart { .. }
            | Self::TaskDone { .. }
            | Self::TaskFail { .. }
            | Self::TaskReset { .. }
            | Self::Note { .. }
            | Self::Decide { .. }
            | Self::FilePath { .. }
            | Self::Heartbeat { .. }
            | Self::Pause { .. }
            | Self::Unpause
            | Self::Abandon { .. }
            | Self::ToolFailure { .. }
            | Self::HolderDispatch { .. }
            | Self::HolderSeen { .. }
            | Self::HolderEnd { .. }
            | Self::Compaction { .. }
            | Self::SyncResolve { .. } => false,
        }
    }
}

/// The transitions to journal for `transitions` on `workflow`, whoever observed them (a command
/// or a hook): when the workflow is paused and one of them [lifts the
/// pause](Transition::lifts_pause), an `Unpause` of its own goes before the first such one.
/// Returns the pause so lifted, for the caller to say so.
pub fn lift_pause(workflow: &Workflow, transitions: &mut Vec<Transition>) -> Option<Pause> {
    let pause = workflow.pause.as_ref()?;
    let first = transitions.iter().position(Transition::lifts_pause)?;
    transitions.insert(first, Transition::Unpause);
    Some(pause.clone())
}

/// The phases in progress besides `phase` when starting it would pass `max_in_progress` (0 is
/// no limit): the one rule of `checkpoint start` and of a sub-agent's dispatch, which each word
/// the refusal.
pub fn over_max_in_progress(
    workflow: &Workflow,
    phase: &PhaseId,
    max_in_progress: u32,
) -> Option<Vec<PhaseId>> {
    let running: Vec<PhaseId> = workflow
        .phases
        .iter()
        .filter(|other| other.status == PhaseStatus::InProgress && other.id != *phase)
        .map(|other| other.id.clone())
        .collect();
    (max_in_progress > 0 && running.len() >= max_in_progress as usize).then_some(running)
}

/// Applies `transition` at time `at` to `workflow`, or refuses it and leaves `workflow` unchanged.
///
/// `seq` is the journal sequence number of the transition.
pub fn apply(
    workflow: &mut Workflow,
    transition: &Transition,
    seq: u64,
    at: DateTime<Utc>,
) -> Result<()> {
    if transition.replaces_state() {
        return apply_in_place(workflow, transition, seq, at);
    }
    let mut next = workflow.clone();
    apply_in_place(&mut next, transition, seq, at)?;
    *workflow = next;
    Ok(())
}

/// Applies `transition` like [`apply`], without copying the workflow first: a refused transition
/// may leave it partly changed.
///
/// For callers that discard the workflow on a refusal (a write under the lock, a replay), where
/// a copy of a large workflow would cost more than the change itself.
pub fn apply_in_place(
    workflow: &mut Workflow,
    transition: &Transition,
    seq: u64,
    at: DateTime<Utc>,
) -> Result<()> {
    match transition {
        Transition::Init { workflow: init }
        | Transition::Snapshot { workflow: init, .. }
        | Transition::SyncResolve {
            base: Some(init), ..
        } => {
            workflow.clone_from(init);
        }
        // Taking the remote side is allowed whatever the state.
        Transition::SyncResolve { base: None, .. } => {}
        _ => {
            if workflow.status == WorkflowStatus::Abandoned
                && !matches!(
                    transition,
                    Transition::Note { .. } | Transition::Heartbeat { .. }
                )
            {
                return Err(Error::transition(
                    format!("workflow `{}` was abandoned", workflow.id),
                    "start a new workflow with `checkpoint init`, or restore an earlier point with `checkpoint rewind`",
                ));
            }
            apply_change(workflow, transition, at)?;
        }
    }
    workflow.seq = seq;
    // A new workflow keeps its own times: an import carries the times of the file it read, so
    // that a state untouched for months does not look fresh.
    if !matches!(transition, Transition::Init { .. }) {
        workflow.updated_at = at;
    }
    workflow.refresh_status();
    Ok(())
}

fn apply_change(workflow: &mut Workflow, transition: &Transition, at: DateTime<Utc>) -> Result<()> {
    // Journals before the explicit `Unpause` of `lift_pause` relied on this.
    if transition.lifts_pause() {
        workflow.pause = None;
    }
    match transition {
        Transition::Init { .. } | Transition::Snapshot { .. } | Transition::SyncResolve { .. } => {
            unreachable!("handled by `apply`")
        }
        Transition::PhaseStart { phase, force } => phase_start(workflow, phase, *force, at)?,
        Transition::PhaseProgress { phase, note } => phase_progress(workflow, phase, note, at)?,
        Transition::PhaseComplete {
            phase,
            artifacts,
            commit_sha,
            force,
        } => phase_complete(
            workflow,
            phase,
            artifacts,
            commit_sha.as_deref(),
            *force,
            at,
        )?,
        Transition::PhaseFail { phase, reason } => phase_fail(workflow, phase, reason)?,
        Transition::PhaseSkip { phase, reason } => {
            phase_skip(workflow, phase, reason.as_deref(), at)?;
        }
        Transition::PhaseReset { phase, reason } => phase_reset(workflow, phase, reason)?,
        Transition::PhaseApprove { phase, by, note } => {
            phase_approve(workflow, phase, by.as_deref(), note.as_deref(), at)?;
        }
        Transition::PhaseReject { phase, reason } => phase_reject(workflow, phase, reason)?,
        Transition::PhaseCommit { phase, sha } => {
            phase_mut(workflow, phase)?.commit_sha = Some(sha.clone());
        }
        Transition::Replan { phase, reason } => replan(workflow, phase, reason, at)?,
        Transition::TaskAdd {
            phase,
            task,
            title,
            output,
        } => task_add(workflow, phase, task, title.as_deref(), output.as_deref())?,
        Transition::TaskStart { phase, task } => task_start(workflow, phase, task, at)?,
        Transition::TaskDone {
            phase,
            task,
            output,
        } => task_done(workflow, phase, task, output.as_deref(), at)?,
        Transition::TaskFail {
            phase,
            task,
            reason,
        } => task_fail(workflow, phase, task, reason)?,
        Transition::TaskReset {
            phase,
            task,
            reason,
        } => task_reset(workflow, phase, task, reason)?,
        Transition::Note { text } => workflow.context.notes.push(Note {
            text: text.clone(),
            at,
        }),
        Transition::Decide { text } => workflow.context.key_decisions.push(Decision {
            text: text.clone(),
            at,
        }),
        Transition::FilePath { path } => push_path(workflow, path.clone()),
        Transition::Heartbeat { source, session_id } => {
            workflow.last_activity = Some(Activity {
                at,
                source: source.clone(),
                session_id: session_id.clone(),
            });
        }
        Transition::Pause { reason, until } => {
            workflow.pause = Some(Pause {
                reason: reason.clone(),
                at,
                until: until.map(Timestamp::from),
            });
        }
        Transition::Unpause => workflow.pause = None,
        Transition::Abandon { reason } => abandon(workflow, reason.as_deref(), at),
        Transition::ToolFailure { phase, tool, error } => {
            phase_mut(workflow, phase)?.error = Some(format!("{tool}: {error}"));
        }
        Transition::HolderDispatch {
            phase,
            tool_use_id,
            description,
            session_id,
        } => {
            let phase = phase_mut(workflow, phase)?;
            expect_status(
                phase,
                PhaseStatus::InProgress,
                format!("start it first with `checkpoint start {}`", phase.id),
            )?;
            phase.holder = Some(Holder {
                tool_use_id: tool_use_id.clone(),
                agent_id: None,
                description: description.clone(),
                session_id: session_id.clone(),
                started_at: at,
                last_activity_at: at,
                ended_at: None,
                error: None,
            });
        }
        Transition::HolderSeen { phase, agent_id } => {
            let holder = holder_mut(workflow, phase)?;
            if agent_id.is_some() {
                holder.agent_id.clone_from(agent_id);
            }
            holder.last_activity_at = at;
        }
        Transition::HolderEnd { phase, note, error } => {
            holder_end(workflow, phase, note.as_deref(), error.as_deref(), at)?;
        }
        Transition::Compaction { session_id, .. } => {
            workflow.last_activity = Some(Activity {
                at,
                source: "PreCompact".into(),
                session_id: session_id.clone(),
            });
        }
        // The runner's events are history for `checkpoint log` and `report`; the phases and
        // tasks are the sessions' business.
        Transition::RunStart { .. }
        | Transition::RunSessionStart { .. }
        | Transition::RunSessionEnd { .. }
        | Transition::RunWait { .. }
        | Transition::RunStop { .. } => {}
    }
    Ok(())
}

fn phase_reset(workflow: &mut Workflow, phase: &PhaseId, reason: &str) -> Result<()> {
    let phase = phase_mut(workflow, phase)?;
    phase.status = PhaseStatus::Pending;
    phase.started_at = None;
    phase.completed_at = None;
    phase.error = Some(reason.to_owned());
    Ok(())
}

fn phase_approve(
    workflow: &mut Workflow,
    phase: &PhaseId,
    by: Option<&str>,
    note: Option<&str>,
    at: DateTime<Utc>,
) -> Result<()> {
    let phase = phase_mut(workflow, phase)?;
    expect_status(
        phase,
        PhaseStatus::AwaitingApproval,
        "only a phase that reached its approval gate can be approved",
    )?;
    phase.approval = Some(Approval {
        by: by.map(str::to_owned),
        at,
        note: note.map(str::to_owned),
    });
    phase.status = PhaseStatus::Complete;
    Ok(())
}

fn replan(workflow: &mut Workflow, id: &PhaseId, reason: &str, at: DateTime<Utc>) -> Result<()> {
    phase_mut(workflow, id)?.replan_count += 1;
    workflow.replans.push(Replan {
        phase: id.clone(),
        reason: reason.to_owned(),
        at,
    });
    Ok(())
}

fn task_fail(workflow: &mut Workflow, phase: &PhaseId, task: &TaskId, reason: &str) -> Result<()> {
    let task = task_mut(phase_mut(workflow, phase)?, task)?;
    if task.status == TaskStatus::Done {
        return Err(Error::transition(
            format!("task `{}` is already done", task.id),
            format!(
                "a done task stays done: record what went wrong with `checkpoint note`, or add a task to redo it with `checkpoint task add {phase} <task>`"
            ),
        ));
    }
    task.status = TaskStatus::Failed;
    task.error = Some(reason.to_owned());
    Ok(())
}

fn phase_progress(
    workflow: &mut Workflow,
    id: &PhaseId,
    note: &str,
    at: DateTime<Utc>,
) -> Result<()> {
    let phase = phase_mut(workflow, id)?;
    expect_status(
        phase,
        PhaseStatus::InProgress,
        format!("start it first with `checkpoint start {id}`"),
    )?;
    phase.progress = Some(note.to_owned());
    phase.progress_at = Some(at.into());
    // A note on a held phase is its sub-agent's sign of life, as far as anyone can tell.
    if let Some(holder) = phase
        .holder
        .as_mut()
        .filter(|holder| holder.ended_at.is_none())
    {
        holder.last_activity_at = at;
    }
    Ok(())
}

fn holder_end(
    workflow: &mut Workflow,
    id: &PhaseId,
    note: Option<&str>,
    error: Option<&str>,
    at: DateTime<Utc>,
) -> Result<()> {
    let phase = phase_mut(workflow, id)?;
    let Some(holder) = phase.holder.as_mut() else {
        return Err(no_holder(id));
    };
    holder.ended_at.get_or_insert(at.into());
    holder.last_activity_at = at;
    // A failure counts once, however many hooks report it.
    let new_error = error.filter(|_| holder.error.is_none());
    if let Some(error) = new_error {
        holder.error = Some(error.to_owned());
    }
    let agent = holder
        .agent_id
        .clone()
        .unwrap_or_else(|| holder.tool_use_id.clone());
    if let Some(error) = new_error {
        phase.failures += 1;
        phase.error = Some(format!("sub-agent `{agent}`: {error}"));
    }
    if let Some(note) = note
        && phase.status == PhaseStatus::InProgress
    {
        phase.progress = Some(note.to_owned());
        phase.progress_at = Some(at.into());
    }
    Ok(())
}

fn no_holder(id: &PhaseId) -> Error {
    Error::transition(
        format!("phase `{id}` is not held by a sub-agent"),
        format!("dispatch a sub-agent with the line `checkpoint phase: {id}` in its prompt"),
    )
}

fn holder_mut<'a>(workflow: &'a mut Workflow, id: &PhaseId) -> Result<&'a mut Holder> {
    phase_mut(workflow, id)?
        .holder
        .as_mut()
        .ok_or_else(|| no_holder(id))
}

fn phase_reject(workflow: &mut Workflow, id: &PhaseId, reason: &str) -> Result<()> {
    let phase = phase_mut(workflow, id)?;
    expect_status(
        phase,
        PhaseStatus::AwaitingApproval,
        "only a phase that reached its approval gate can be rejected",
    )?;
    phase.status = PhaseStatus::Failed;
    phase.failures += 1;
    phase.completed_at = None;
    phase.error = Some(format!("rejected: {reason}"));
    Ok(())
}

fn task_reset(workflow: &mut Workflow, phase: &PhaseId, task: &TaskId, reason: &str) -> Result<()> {
    let task = task_mut(phase_mut(workflow, phase)?, task)?;
    task.status = TaskStatus::Pending;
    task.started_at = None;
    task.error = Some(reason.to_owned());
    Ok(())
}

fn abandon(workflow: &mut Workflow, reason: Option<&str>, at: DateTime<Utc>) {
    workflow.status = WorkflowStatus::Abandoned;
    if let Some(reason) = reason {
        workflow.context.notes.push(Note {
            text: format!("abandoned: {reason}"),
            at,
        });
    }
}

/// Refuses a transition unless `phase` is `expected`: "phase `x` is y, not <expected>".
fn expect_status(phase: &Phase, expected: PhaseStatus, help: impl Into<String>) -> Result<()> {
    if phase.status == expected {
        return Ok(());
    }
    Err(Error::transition(
        format!(
            "phase `{}` is {}, not {}",
            phase.id,
            phase.status.as_str(),
            expected.as_str().replace('_', " ")
        ),
        help,
    ))
}

/// Refuses a transition of a phase that is already done (complete or skipped).
fn refuse_done(phase: &Phase) -> Result<()> {
    if !phase.status.is_done() {
        return Ok(());
    }
    Err(Error::transition(
        format!("phase `{}` is already {}", phase.id, phase.status.as_str()),
        format!("to redo it, run `checkpoint start {} --force`", phase.id),
    ))
}

fn phase_start(
    workflow: &mut Workflow,
    id: &PhaseId,
    force: bool,
    at: DateTime<Utc>,
) -> Result<()> {
    let blockers = unfinished_dependencies(workflow, id)?;
    let phase = phase_mut(workflow, id)?;
    if !force {
        check_startable(phase)?;
        if !blockers.is_empty() {
            return Err(Error::transition(
                format!("phase `{id}` waits for {}", blockers.join(", ")),
                "finish those phases first, or start anyway with `--force`",
            ));
        }
    }
    phase.status = PhaseStatus::InProgress;
    phase.attempts += 1;
    phase.started_at = Some(at.into());
    phase.completed_at = None;
    phase.approval = None;
    // A new attempt has no holder until a dispatch records one (right after, from the hook).
    phase.holder = None;
    workflow.pause = None;
    Ok(())
}

/// Refuses to start a phase that is running, done, waiting for approval, or out of attempts
/// (unless forced).
fn check_startable(phase: &Phase) -> Result<()> {
    let max_attempts = phase.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS);
    match phase.status {
        PhaseStatus::InProgress => Err(Error::transition(
            format!("phase `{}` is already in progress", phase.id),
            format!(
                "record progress with `checkpoint progress {} \"<note>\"`, or restart it with `checkpoint start {} --force`",
                phase.id, phase.id
            ),
        )),
        PhaseStatus::Complete | PhaseStatus::Skipped | PhaseStatus::AwaitingApproval => {
            Err(Error::transition(
                format!("phase `{}` is {}", phase.id, phase.status.as_str()),
                format!("to redo it, run `checkpoint start {} --force`", phase.id),
            ))
        }
        PhaseStatus::Failed if phase.failures >= max_attempts => Err(Error::transition(
            format!(
                "phase `{}` failed {} times, the limit is {max_attempts}",
                phase.id, phase.failures
            ),
            format!(
                "a person should decide: retry with `checkpoint start {} --force`, skip it with `checkpoint skip {}`, or abandon the workflow",
                phase.id, phase.id
            ),
        )),
        PhaseStatus::Pending | PhaseStatus::Failed => Ok(()),
    }
}

fn phase_complete(
    workflow: &mut Workflow,
    id: &PhaseId,
    artifacts: &[String],
    commit_sha: Option<&str>,
    force: bool,
    at: DateTime<Utc>,
) -> Result<()> {
    let blockers = unfinished_dependencies(workflow, id)?;
    let phase = phase_mut(workflow, id)?;
    if !force {
        check_completable(phase, &blockers)?;
    }
    if phase.attempts == 0 {
        phase.attempts = 1;
        phase.started_at = Some(at.into());
    }
    for path in artifacts {
        if !phase
            .artifacts
            .iter()
            .any(|artifact| &artifact.path == path)
        {
            phase.artifacts.push(Artifact {
                path: path.clone(),
                recorded_at: at,
            });
        }
    }
    if let Some(sha) = commit_sha {
        phase.commit_sha = Some(sha.to_owned());
    }
    phase.error = None;
    phase.completed_at = Some(at.into());
    phase.status = if phase.requires_approval && phase.approval.is_none() {
        PhaseStatus::AwaitingApproval
    } else {
        PhaseStatus::Complete
    };
    for path in artifacts {
        push_path(workflow, path.clone());
    }
    Ok(())
}

/// Refuses to complete a phase that is already done, whose dependencies (`blockers`) are not,
/// or whose tasks are not (unless forced).
fn check_completable(phase: &Phase, blockers: &[String]) -> Result<()> {
    let id = &phase.id;
    match phase.status {
        PhaseStatus::InProgress | PhaseStatus::Pending | PhaseStatus::Failed => {}
        status => {
            return Err(Error::transition(
                format!("phase `{id}` is already {}", status.as_str()),
                match status {
                    PhaseStatus::AwaitingApproval => {
                        format!("approve it with `checkpoint approve {id}`")
                    }
                    _ => "nothing to do".to_owned(),
                },
            ));
        }
    }
    if !blockers.is_empty() {
        return Err(Error::transition(
            format!(
                "cannot complete phase `{id}`: it depends on {}, which {} not done",
                blockers.join(", "),
                if blockers.len() == 1 { "is" } else { "are" }
            ),
            "complete the dependencies first, or pass `--force`",
        ));
    }
    let open: Vec<String> = phase
        .tasks
        .iter()
        .filter(|task| task.status != TaskStatus::Done)
        .map(|task| format!("`{}`", task.id))
        .collect();
    if !open.is_empty() {
        return Err(Error::transition(
            format!(
                "cannot complete phase `{id}`: tasks {} are not done",
                open.join(", ")
            ),
            format!("finish them with `checkpoint task done {id} <task>`, or pass `--force`"),
        ));
    }
    Ok(())
}

fn phase_fail(workflow: &mut Workflow, id: &PhaseId, reason: &str) -> Result<()> {
    let phase = phase_mut(workflow, id)?;
    refuse_done(phase)?;
    phase.status = PhaseStatus::Failed;
    phase.failures += 1;
    phase.error = Some(reason.to_owned());
    Ok(())
}

fn phase_skip(
    workflow: &mut Workflow,
    id: &PhaseId,
    reason: Option<&str>,
    at: DateTime<Utc>,
) -> Result<()> {
    let phase = phase_mut(workflow, id)?;
    if phase.status == PhaseStatus::Complete {
        return Err(Error::transition(
            format!("phase `{}` is already complete", phase.id),
            "nothing to skip",
        ));
    }
    phase.status = PhaseStatus::Skipped;
    phase.completed_at = Some(at.into());
    if let Some(reason) = reason {
        phase.progress = Some(format!("skipped: {reason}"));
    }
    Ok(())
}

fn task_add(
    workflow: &mut Workflow,
    phase: &PhaseId,
    task: &TaskId,
    title: Option<&str>,
    output: Option<&str>,
) -> Result<()> {
    let phase = phase_mut(workflow, phase)?;
    if phase.task(task).is_some() {
        return Err(Error::transition(
            format!("task `{task}` already exists in phase `{}`", phase.id),
            "pick another task id",
        ));
    }
    phase.tasks.push(Task {
        id: task.clone(),
        title: title.map(str::to_owned),
        status: TaskStatus::Pending,
        attempts: 0,
        started_at: None,
        completed_at: None,
        output: output.map(str::to_owned),
        error: None,
    });
    Ok(())
}

fn task_start(
    workflow: &mut Workflow,
    phase_id: &PhaseId,
    task: &TaskId,
    at: DateTime<Utc>,
) -> Result<()> {
    let blockers = unfinished_dependencies(workflow, phase_id)?;
    let phase = phase_mut(workflow, phase_id)?;
    match phase.status {
        PhaseStatus::InProgress => {}
        PhaseStatus::Pending | PhaseStatus::Failed if blockers.is_empty() => {
            phase.status = PhaseStatus::InProgress;
            phase.attempts += 1;
            phase.started_at = Some(at.into());
        }
        status => {
            return Err(Error::transition(
                format!(
                    "cannot start a task of phase `{phase_id}`: the phase is {}",
                    status.as_str()
                ),
                format!("start the phase first with `checkpoint start {phase_id}`"),
            ));
        }
    }
    let task = task_mut(phase, task)?;
    if task.status == TaskStatus::Done {
        return Err(Error::transition(
            format!("task `{}` is already done", task.id),
            "nothing to do",
        ));
    }
    task.status = TaskStatus::Running;
    task.attempts += 1;
    task.started_at = Some(at.into());
    task.completed_at = None;
    Ok(())
}

fn task_done(
    workflow: &mut Workflow,
    phase: &PhaseId,
    task: &TaskId,
    output: Option<&str>,
    at: DateTime<Utc>,
) -> Result<()> {
    let phase_id = phase;
    let phase = phase_mut(workflow, phase)?;
    expect_status(
        phase,
        PhaseStatus::InProgress,
        format!("start the phase first with `checkpoint start {phase_id}`"),
    )?;
    let task = task_mut(phase, task)?;
    if task.attempts == 0 {
        task.attempts = 1;
        task.started_at = Some(at.into());
    }
    task.status = TaskStatus::Done;
    task.completed_at = Some(at.into());
    task.error = None;
    if let Some(output) = output {
        task.output = Some(output.to_owned());
    }
    Ok(())
}

fn push_path(workflow: &mut Workflow, path: String) {
    if !workflow.context.file_paths.contains(&path) {
        workflow.context.file_paths.push(path);
    }
}

pub(crate) fn unknown_phase(workflow: &Workflow, id: &PhaseId) -> Error {
    Error::UnknownPhase {
        workflow: workflow.id.to_string(),
        phase: id.to_string(),
        known: workflow
            .phases
            .iter()
            .map(|phase| format!("`{}`", phase.id))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn phase_mut<'a>(workflow: &'a mut Workflow, id: &PhaseId) -> Result<&'a mut Phase> {
    match workflow.phase_index(id) {
        Some(index) => Ok(&mut workflow.phases[index]),
        None => Err(unknown_phase(workflow, id)),
    }
}

fn task_mut<'a>(phase: &'a mut Phase, id: &TaskId) -> Result<&'a mut Task> {
    let phase_id = phase.id.to_string();
    phase
        .tasks
        .iter_mut()
        .find(|task| &task.id == id)
        .ok_or_else(|| Error::UnknownTask {
            phase: phase_id,
            task: id.to_string(),
        })
}

fn unfinished_dependencies(workflow: &Workflow, id: &PhaseId) -> Result<Vec<String>> {
    let phase = workflow
        .phase(id)
        .ok_or_else(|| unknown_phase(workflow, id))?;
    Ok(phase
        .dependencies
        .iter()
        .filter(|dep| !workflow.phase(dep).is_some_and(|dep| dep.status.is_done()))
        .map(|dep| format!("`{dep}`"))
        .collect())
}

#[cfg(test)]
pub(crate) mod tests;
