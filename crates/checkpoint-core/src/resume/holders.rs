//! Parallel phases held by sub-agents, as a resume sees them: done (by which sub-agent),
//! interrupted mid-flight (the holder, its last note, how long ago), not yet dispatched; and
//! the dispatch that finishes them, one sub-agent a phase, in parallel.

use chrono::{DateTime, Utc};

use crate::{
    id::PhaseId,
    model::{Holder, Phase, PhaseStatus, Workflow},
    resume::{codes::Action, next::NextAction},
};

/// The phases of a workflow that uses sub-agents (any phase ever held by one).
#[derive(Debug, Clone, PartialEq)]
pub struct SubAgents {
    /// Phases a sub-agent held that are done, with the sub-agent.
    pub done: Vec<Held>,
    /// Unfinished phases whose sub-agent ended or was lost with its session.
    pub interrupted: Vec<Held>,
    /// Sub-agents still at work (their session is live).
    pub running: Vec<Held>,
    /// Ready phases no sub-agent was dispatched to yet.
    pub not_dispatched: Vec<PhaseId>,
    /// What to dispatch now, one sub-agent a phase, in parallel, within `max_in_progress`: the
    /// interrupted phases first, then the ones not yet dispatched.
    pub dispatch: Vec<Dispatch>,
}

/// A phase and the sub-agent that held it.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    /// The phase.
    pub phase: PhaseId,
    /// Its holder.
    pub holder: Holder,
    /// Its progress note.
    pub note: Option<String>,
    /// Minutes since the holder was last seen working.
    pub idle_minutes: i64,
}

/// One sub-agent to dispatch.
#[derive(Debug, Clone, PartialEq)]
pub struct Dispatch {
    /// The phase.
    pub phase: PhaseId,
    /// The line its prompt must carry, `checkpoint phase: <id>`.
    pub line: String,
    /// Where the last sub-agent left it.
    pub note: Option<String>,
}

/// The sub-agents' view of `workflow` (after the resume's recoveries), or `None` when no phase
/// was ever held by a sub-agent. `live` says whether the session that dispatched them may still
/// be running: a holder that has not ended is then at work, not lost.
pub(crate) fn sub_agents(
    workflow: &Workflow,
    live: bool,
    max_in_progress: u32,
    now: DateTime<Utc>,
) -> Option<SubAgents> {
    workflow
        .phases
        .iter()
        .find(|phase| phase.holder.is_some())?;
    let held = |phase: &Phase, holder: &Holder| Held {
        phase: phase.id.clone(),
        holder: holder.clone(),
        note: phase.progress.clone(),
        idle_minutes: (now - holder.last_activity_at).num_minutes().max(0),
    };
    let mut view = SubAgents {
        done: Vec::new(),
        interrupted: Vec::new(),
        running: Vec::new(),
        not_dispatched: Vec::new(),
        dispatch: Vec::new(),
    };
    let ready = |phase: &Phase| {
        matches!(phase.status, PhaseStatus::Pending | PhaseStatus::InProgress)
            && workflow.dependencies_done(phase)
    };
    for phase in &workflow.phases {
        match &phase.holder {
            Some(holder) if phase.status.is_done() => view.done.push(held(phase, holder)),
            Some(holder) if live && holder.ended_at.is_none() => {
                view.running.push(held(phase, holder));
            }
            Some(holder) if phase.status != PhaseStatus::AwaitingApproval => {
                view.interrupted.push(held(phase, holder));
            }
            None if phase.status == PhaseStatus::Pending && ready(phase) => {
                view.not_dispatched.push(phase.id.clone());
            }
            _ => {}
        }
    }
    let interrupted = view
        .interrupted
        .iter()
        .filter(|held| workflow.phase(&held.phase).is_some_and(ready))
        .map(|held| Dispatch {
            phase: held.phase.clone(),
            line: Holder::phase_line(&held.phase),
            note: held.note.clone(),
        });
    let fresh = view.not_dispatched.iter().map(|phase| Dispatch {
        phase: phase.clone(),
        line: Holder::phase_line(phase),
        note: None,
    });
    let mut dispatch: Vec<Dispatch> = interrupted.chain(fresh).collect();
    if max_in_progress > 0 {
        // Phases in progress that are not to be dispatched again keep their places.
        let others = workflow
            .phases
            .iter()
            .filter(|phase| phase.status == PhaseStatus::InProgress)
            .filter(|phase| !dispatch.iter().any(|item| item.phase == phase.id))
            .count();
        dispatch.truncate((max_in_progress as usize).saturating_sub(others));
    }
    view.dispatch = dispatch;
    Some(view)
}

/// The next action that dispatches `view.dispatch`: the first phase, the others in parallel.
pub(crate) fn dispatch_next(view: &SubAgents) -> Option<NextAction> {
    let (first, rest) = view.dispatch.split_first()?;
    let items: Vec<String> = view
        .dispatch
        .iter()
        .map(|item| {
            let state = if item.note.is_some()
                || view.interrupted.iter().any(|held| held.phase == item.phase)
            {
                "interrupted mid-flight"
            } else {
                "not yet dispatched"
            };
            format!("`{}` ({state})", item.phase)
        })
        .collect();
    let mut reason = format!(
        "dispatch {} to sub-agents, one each, in parallel, each prompt carrying its line `{} <id>` and its note",
        items.join(", "),
        Holder::PHASE_LINE
    );
    for (label, list) in [
        ("done, do not redo", &view.done),
        ("still at work", &view.running),
    ] {
        if !list.is_empty() {
            let phases: Vec<String> = list
                .iter()
                .map(|held| format!("`{}` ({})", held.phase, by(&held.holder)))
                .collect();
            reason.push_str(&format!("; {label}: {}", phases.join(", ")));
        }
    }
    Some(NextAction {
        action: Action::Dispatch,
        phase: Some(first.phase.clone()),
        task: None,
        parallel: rest.iter().map(|item| item.phase.clone()).collect(),
        command: None,
        reason,
    })
}

/// "sub-agent `<id>`: <description>", as far as the holder is known.
pub(crate) fn by(holder: &Holder) -> String {
    let who = holder.who();
    match &holder.description {
        Some(description) => format!("{who}: {description}"),
        None => who,
    }
}
