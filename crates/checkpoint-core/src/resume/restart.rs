//! `resume --restart <phase>` and `start <phase> --force`: the transitions that run a phase
//! again without leaving its finished dependants done on top of work that is being redone.

use crate::{
    error::Result,
    id::PhaseId,
    model::{PhaseStatus, Workflow},
    transition::{Transition, unknown_phase},
};

/// What restarting a phase does.
#[derive(Debug, Clone, PartialEq)]
pub struct Restart {
    /// The phases that depend on it, directly or not, and were no longer pending: each goes
    /// back to pending, in plan order.
    pub reset: Vec<PhaseId>,
    /// The transitions, in order: one `phase_reset` per phase of `reset`, then the forced start.
    pub transitions: Vec<Transition>,
}

/// Restarts `phase` (even if done), sending every dependant that is not pending back to
/// pending first, so that no phase stays done while a phase it depends on runs again;
/// `command` is what the user ran (`checkpoint start <phase> --force`), named in the reason of
/// each reset.
pub fn restart(workflow: &Workflow, phase: &PhaseId, command: &str) -> Result<Restart> {
    restart_where(workflow, phase, command, |status| {
        status != PhaseStatus::Pending
    })
}

/// `start <phase> --force`: restarts `phase`, sending back to pending only the dependants that
/// would otherwise stand on work being redone (done, waiting for approval, or in progress); a
/// failed dependant keeps its failure (the feedback a rollback redoes its dependency with) and a
/// skipped one stays skipped.
pub fn rerun(workflow: &Workflow, phase: &PhaseId, command: &str) -> Result<Restart> {
    restart_where(workflow, phase, command, |status| {
        matches!(
            status,
            PhaseStatus::Complete | PhaseStatus::AwaitingApproval | PhaseStatus::InProgress
        )
    })
}

/// Restarts `phase` after sending back to pending its dependants whose status `reopen` says.
fn restart_where(
    workflow: &Workflow,
    phase: &PhaseId,
    command: &str,
    reopen: impl Fn(PhaseStatus) -> bool,
) -> Result<Restart> {
    if workflow.phase(phase).is_none() {
        return Err(unknown_phase(workflow, phase));
    }
    // Phases are few next to the cost of a command, and a dependency may be listed after its
    // dependant: repeat until nothing new depends on what is marked.
    let mut marked = vec![false; workflow.phases.len()];
    let mut changed = true;
    while changed {
        changed = false;
        for (index, candidate) in workflow.phases.iter().enumerate() {
            if marked[index] {
                continue;
            }
            let depends = candidate.dependencies.iter().any(|dependency| {
                dependency == phase
                    || workflow
                        .phase_index(dependency)
                        .is_some_and(|index| marked[index])
            });
            if depends {
                marked[index] = true;
                changed = true;
            }
        }
    }
    let reset: Vec<PhaseId> = workflow
        .phases
        .iter()
        .zip(&marked)
        .filter(|(candidate, marked)| **marked && reopen(candidate.status))
        .map(|(candidate, _)| candidate.id.clone())
        .collect();
    let mut transitions: Vec<Transition> = reset
        .iter()
        .map(|dependant| Transition::PhaseReset {
            phase: dependant.clone(),
            reason: format!("`{phase}`, which it depends on, was restarted with `{command}`"),
        })
        .collect();
    transitions.push(Transition::PhaseStart {
        phase: phase.clone(),
        force: true,
    });
    Ok(Restart { reset, transitions })
}
