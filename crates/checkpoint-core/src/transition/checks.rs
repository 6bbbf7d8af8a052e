//! The lookups and refusals every applier shares: a phase or task by id (or the error that
//! names the known ones), a phase's status as expected, its dependencies done.

use crate::{
    error::{Error, Result},
    id::{PhaseId, TaskId},
    model::{Phase, PhaseStatus, Task, Workflow},
};

pub(super) fn push_path(workflow: &mut Workflow, path: String) {
    if !workflow.context.file_paths.contains(&path) {
        workflow.context.file_paths.push(path);
    }
}

/// Refuses a transition unless `phase` is `expected`: "phase `x` is y, not <expected>".
pub(super) fn expect_status(
    phase: &Phase,
    expected: PhaseStatus,
    help: impl Into<String>,
) -> Result<()> {
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
pub(super) fn refuse_done(phase: &Phase) -> Result<()> {
    if !phase.status.is_done() {
        return Ok(());
    }
    Err(Error::transition(
        format!("phase `{}` is already {}", phase.id, phase.status.as_str()),
        format!("to redo it, run `checkpoint start {} --force`", phase.id),
    ))
}

/// The error of a phase `workflow` does not have, naming the phases it has.
pub fn unknown_phase(workflow: &Workflow, id: &PhaseId) -> Error {
    Error::UnknownPhase {
        workflow: workflow.id.to_string(),
        phase: id.to_string(),
        known: workflow
            .phases
            .iter()
            .map(|phase| format!("`{}`", phase.id))
            .collect::<Vec<_>>()
            .join(", "),
        suggestion: crate::suggest::did_you_mean(
            id.as_str(),
            workflow.phases.iter().map(|phase| phase.id.as_str()),
        ),
    }
}

pub(super) fn phase_mut<'a>(workflow: &'a mut Workflow, id: &PhaseId) -> Result<&'a mut Phase> {
    match workflow.phase_index(id) {
        Some(index) => Ok(&mut workflow.phases[index]),
        None => Err(unknown_phase(workflow, id)),
    }
}

pub(super) fn task_mut<'a>(phase: &'a mut Phase, id: &TaskId) -> Result<&'a mut Task> {
    match phase.tasks.iter().position(|task| &task.id == id) {
        Some(index) => Ok(&mut phase.tasks[index]),
        None => Err(Error::UnknownTask {
            phase: phase.id.to_string(),
            task: id.to_string(),
            suggestion: crate::suggest::did_you_mean(
                id.as_str(),
                phase.tasks.iter().map(|task| task.id.as_str()),
            ),
        }),
    }
}

pub(super) fn unfinished_dependencies(workflow: &Workflow, id: &PhaseId) -> Result<Vec<String>> {
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
