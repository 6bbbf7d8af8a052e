//! The appliers of a phase's transitions and of its holder (a sub-agent): each checks what it
//! needs, then changes the phase.

use chrono::{DateTime, Utc};

use crate::{
    error::{Error, Result},
    id::PhaseId,
    model::{Approval, Artifact, Holder, Phase, PhaseStatus, Replan, TaskStatus, Workflow},
    transition::{
        DEFAULT_MAX_ATTEMPTS,
        checks::{expect_status, phase_mut, push_path, refuse_done, unfinished_dependencies},
    },
};

pub(super) fn phase_start(
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

pub(super) fn phase_progress(
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

pub(super) fn phase_complete(
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

pub(super) fn phase_fail(workflow: &mut Workflow, id: &PhaseId, reason: &str) -> Result<()> {
    let phase = phase_mut(workflow, id)?;
    refuse_done(phase)?;
    phase.status = PhaseStatus::Failed;
    phase.failures += 1;
    phase.error = Some(reason.to_owned());
    Ok(())
}

pub(super) fn phase_skip(
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

pub(super) fn phase_reset(workflow: &mut Workflow, phase: &PhaseId, reason: &str) -> Result<()> {
    let phase = phase_mut(workflow, phase)?;
    phase.status = PhaseStatus::Pending;
    phase.started_at = None;
    phase.completed_at = None;
    phase.error = Some(reason.to_owned());
    Ok(())
}

pub(super) fn phase_approve(
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

pub(super) fn phase_reject(workflow: &mut Workflow, id: &PhaseId, reason: &str) -> Result<()> {
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

pub(super) fn replan(
    workflow: &mut Workflow,
    id: &PhaseId,
    reason: &str,
    at: DateTime<Utc>,
) -> Result<()> {
    phase_mut(workflow, id)?.replan_count += 1;
    workflow.replans.push(Replan {
        phase: id.clone(),
        reason: reason.to_owned(),
        at,
    });
    Ok(())
}

pub(super) fn holder_end(
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

pub(super) fn holder_mut<'a>(workflow: &'a mut Workflow, id: &PhaseId) -> Result<&'a mut Holder> {
    phase_mut(workflow, id)?
        .holder
        .as_mut()
        .ok_or_else(|| no_holder(id))
}
