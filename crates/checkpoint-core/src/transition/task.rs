//! The appliers of a task's transitions.

use chrono::{DateTime, Utc};

use crate::{
    error::{Error, Result},
    id::{PhaseId, TaskId},
    model::{PhaseStatus, Task, TaskStatus, Workflow},
    transition::checks::{expect_status, phase_mut, task_mut, unfinished_dependencies},
};

pub(super) fn task_add(
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
        agent_id: None,
        note: None,
    });
    Ok(())
}

pub(super) fn task_start(
    workflow: &mut Workflow,
    phase_id: &PhaseId,
    task: &TaskId,
    agent_id: Option<&str>,
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
    if let Some(agent_id) = agent_id {
        task.agent_id = Some(agent_id.to_owned());
    }
    Ok(())
}

pub(super) fn task_done(
    workflow: &mut Workflow,
    phase: &PhaseId,
    task: &TaskId,
    (output, note): (Option<&str>, Option<&str>),
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
    if let Some(note) = note {
        task.note = Some(note.to_owned());
    }
    Ok(())
}

pub(super) fn task_fail(
    workflow: &mut Workflow,
    phase: &PhaseId,
    task: &TaskId,
    reason: &str,
) -> Result<()> {
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

pub(super) fn task_reset(
    workflow: &mut Workflow,
    phase: &PhaseId,
    task: &TaskId,
    reason: &str,
) -> Result<()> {
    let task = task_mut(phase_mut(workflow, phase)?, task)?;
    task.status = TaskStatus::Pending;
    task.started_at = None;
    task.error = Some(reason.to_owned());
    Ok(())
}
