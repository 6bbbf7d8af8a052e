//! Applying a transition: [`apply`] and [`apply_in_place`], which dispatch to one function per
//! subject (`phase.rs`, `task.rs`), and the rules on what to journal ([`unpause_before_work`],
//! [`over_max_in_progress`]).

use chrono::{DateTime, Utc};

use crate::{
    error::{Error, Result},
    id::PhaseId,
    model::{Activity, Decision, Holder, Note, Pause, PhaseStatus, Workflow, WorkflowStatus},
    timestamp::Timestamp,
    transition::{
        Transition,
        checks::{expect_status, phase_mut, push_path},
        phase::{
            holder_end, holder_mut, phase_approve, phase_complete, phase_fail, phase_progress,
            phase_reject, phase_reset, phase_skip, phase_start, replan,
        },
        task::{task_add, task_done, task_fail, task_reset, task_start},
    },
};

/// The transitions to journal for `transitions` on `workflow`, whoever observed them (a command
/// or a hook): when the workflow is paused and one of them [is work](Transition::lifts_pause),
/// an `Unpause` of its own goes before the first such one. Returns the pause so lifted.
///
/// The store applies it to every update, so no write path lifts a pause without its `Unpause`,
/// and reports the pause it lifted (`Loaded::unpaused`) for the command to say so; an `Unpause`
/// already before the first work is enough, and nothing is added. (Not the resume planner's
/// `pause_recovery`, the recovery that lifts an expired or untimed pause.)
pub fn unpause_before_work(
    workflow: &Workflow,
    transitions: &mut Vec<Transition>,
) -> Option<Pause> {
    let pause = workflow.pause.as_ref()?;
    let first = transitions.iter().position(Transition::lifts_pause)?;
    if transitions[..first]
        .iter()
        .any(|transition| matches!(transition, Transition::Unpause))
    {
        return None;
    }
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
pub(crate) fn apply_in_place(
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
            if workflow.status == WorkflowStatus::Abandoned && !transition.applies_when_abandoned()
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
    // Journals before the explicit `Unpause` of `unpause_before_work` relied on this.
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
        Transition::TaskStart {
            phase,
            task,
            agent_id,
        } => task_start(workflow, phase, task, agent_id.as_deref(), at)?,
        Transition::TaskDone {
            phase,
            task,
            output,
            note,
        } => task_done(
            workflow,
            phase,
            task,
            (output.as_deref(), note.as_deref()),
            at,
        )?,
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
            workflow.last_activity = Some(Activity::new(at, source, session_id.clone()));
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
        Transition::HolderDispatch { .. }
        | Transition::HolderSeen { .. }
        | Transition::HolderEnd { .. } => apply_holder(workflow, transition, at)?,
        Transition::SessionHandoff { .. } => workflow.handoff = handoff(transition, at),
        Transition::Compaction { session_id, .. } => {
            workflow.last_activity = Some(Activity::new(at, "PreCompact", session_id.clone()));
        }
        // Effects are history, read by the ledger; an effect's phase must exist.
        Transition::Effect { phase, .. } => {
            if let Some(phase) = phase {
                phase_mut(workflow, phase)?;
            }
        }
        Transition::EffectAllow { .. } => {}
        // Snapshots and restores of the files are history, read by `snapshots` and `undo`.
        Transition::FilesSnapshot { .. } | Transition::FilesRestore { .. } => {}
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

/// Applies a transition of a phase's sub-agent (its holder): dispatched, seen, ended.
fn apply_holder(workflow: &mut Workflow, transition: &Transition, at: DateTime<Utc>) -> Result<()> {
    match transition {
        Transition::HolderDispatch {
            phase,
            tool_use_id,
            description,
            session_id,
        } => holder_dispatch(
            workflow,
            phase,
            Holder {
                tool_use_id: tool_use_id.clone(),
                agent_id: None,
                description: description.clone(),
                session_id: session_id.clone(),
                started_at: at,
                last_activity_at: at,
                ended_at: None,
                error: None,
            },
        )?,
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
        _ => unreachable!("only a holder's transitions reach `apply_holder`"),
    }
    Ok(())
}

impl Activity {
    fn new(at: DateTime<Utc>, source: &str, session_id: Option<String>) -> Self {
        Self {
            at,
            source: source.to_owned(),
            session_id,
        }
    }
}

/// A sub-agent dispatched to hold a phase in progress.
fn holder_dispatch(workflow: &mut Workflow, phase: &PhaseId, holder: Holder) -> Result<()> {
    let phase = phase_mut(workflow, phase)?;
    expect_status(
        phase,
        PhaseStatus::InProgress,
        format!("start it first with `checkpoint start {}`", phase.id),
    )?;
    phase.holder = Some(holder);
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

/// The hand-off a `session_handoff` entry records.
fn handoff(transition: &Transition, at: DateTime<Utc>) -> Option<crate::model::Handoff> {
    let Transition::SessionHandoff {
        session_id,
        client,
        machine,
        user,
        base,
        ..
    } = transition
    else {
        return None;
    };
    Some(crate::model::Handoff {
        session_id: session_id.clone(),
        client: client.clone(),
        machine: machine.clone(),
        user: user.clone(),
        at,
        base: base.clone(),
    })
}
