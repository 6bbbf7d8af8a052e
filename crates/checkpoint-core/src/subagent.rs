//! Phases held by sub-agents: the line that names a phase in a dispatch, and what the hooks saw
//! of a sub-agent (dispatched, seen, ended, failed), as transitions; pure, files through
//! [`Probe`].

use chrono::{DateTime, Duration, Utc};

use crate::{
    id::PhaseId,
    model::{Holder, Phase, PhaseStatus, TaskStatus, Workflow},
    resume::{Probe, unfinished_outputs},
    transition::{Transition, apply, over_max_in_progress},
};

/// The convention line in a sub-agent's prompt that names the phase it holds.
pub(crate) const PHASE_LINE: &str = Holder::PHASE_LINE;

/// The most of a sub-agent's last message kept as its phase's progress note, in characters.
pub(crate) const MAX_NOTE_CHARS: usize = 1000;

/// How often a holder's last activity is journaled while it works, at most.
pub(crate) const ACTIVITY_INTERVAL: Duration = Duration::seconds(15);

/// The phase a dispatch prompt names with the line `checkpoint phase: <id>` (the first such
/// line; the id may be in backticks), if any.
pub fn phase_named(prompt: &str) -> Option<PhaseId> {
    prompt.lines().find_map(|line| {
        let line = line.trim().trim_matches(['`', '*', '-', ' ']);
        let head = line.get(..PHASE_LINE.len())?;
        if !head.eq_ignore_ascii_case(PHASE_LINE) {
            return None;
        }
        let id = line[PHASE_LINE.len()..]
            .trim()
            .trim_matches(['`', '"', '\'', '.']);
        PhaseId::new(id).ok()
    })
}

/// A dispatch of a sub-agent, as the `Agent` tool call's PreToolUse hook saw it.
#[derive(Debug, Clone, Copy)]
pub struct Dispatch<'a> {
    /// The phase its prompt names.
    pub phase: &'a PhaseId,
    /// The tool call's id.
    pub tool_use_id: &'a str,
    /// The call's short description.
    pub description: Option<&'a str>,
    /// The dispatching session.
    pub session_id: Option<&'a str>,
}

/// A sub-agent was dispatched for a phase: the phase starts if it is not in progress (as
/// `checkpoint start` would: its dependencies done, its attempts left, and within
/// `max_in_progress` when that is not 0), and records its holder.
///
/// `Err` says why nothing is recorded (a warning for the session, which goes on); `Ok` with no
/// transitions when this call already holds the phase.
pub fn dispatched(
    workflow: &Workflow,
    dispatch: Dispatch<'_>,
    max_in_progress: u32,
    now: DateTime<Utc>,
) -> Result<Vec<Transition>, String> {
    let id = dispatch.phase;
    let Some(phase) = workflow.phase(id) else {
        return Err(format!("workflow `{}` has no phase `{id}`", workflow.id));
    };
    if phase
        .holder
        .as_ref()
        .is_some_and(|holder| holder.tool_use_id == dispatch.tool_use_id)
    {
        return Ok(Vec::new());
    }
    let mut transitions = Vec::new();
    if phase.status != PhaseStatus::InProgress {
        let start = Transition::PhaseStart {
            phase: id.clone(),
            force: false,
        };
        // The transition's own rules decide, on a copy: the refusal is the warning.
        let mut copy = workflow.clone();
        apply(&mut copy, &start, workflow.seq + 1, now).map_err(|err| {
            format!(
                "phase `{id}` was not started for the sub-agent: {err}{}",
                hint(&err)
            )
        })?;
        if let Some(running) = over_max_in_progress(workflow, id, max_in_progress) {
            let running: Vec<String> = running.iter().map(|other| format!("`{other}`")).collect();
            return Err(format!(
                "phase `{id}` was not started for the sub-agent: `max_in_progress` is {max_in_progress}, and {} in progress; dispatch it when one of them is done",
                running.join(", ")
            ));
        }
        transitions.push(start);
    }
    transitions.push(Transition::HolderDispatch {
        phase: id.clone(),
        tool_use_id: dispatch.tool_use_id.to_owned(),
        description: dispatch.description.map(str::to_owned),
        session_id: dispatch.session_id.map(str::to_owned),
    });
    Ok(transitions)
}

fn hint(err: &crate::Error) -> String {
    match miette::Diagnostic::help(err) {
        Some(help) => format!(" ({help})"),
        None => String::new(),
    }
}

/// How a hook names a sub-agent: its agent id, and the dispatching call's id where the hook (or
/// the client's meta file) tells it.
#[derive(Debug, Clone, Copy)]
pub struct Agent<'a> {
    /// The sub-agent's id, where known.
    pub agent_id: Option<&'a str>,
    /// The dispatching tool call's id, where known.
    pub tool_use_id: Option<&'a str>,
}

/// The phase `agent` holds: by its dispatching call (which the client's meta file or the
/// `Agent` call's own hooks tell for certain), else by its agent id, else, when exactly one
/// dispatched holder still runs without an agent id, that one. Sub-agents dispatched together
/// start in no fixed order, so with several such holders nothing is guessed.
pub fn held_by<'w>(workflow: &'w Workflow, agent: Agent<'_>) -> Option<&'w Phase> {
    let held = || {
        workflow
            .phases
            .iter()
            .filter_map(|phase| Some((phase, phase.holder.as_ref()?)))
    };
    if let Some(tool_use_id) = agent.tool_use_id {
        return held()
            .find(|(_, holder)| holder.tool_use_id == tool_use_id)
            .map(|(phase, _)| phase);
    }
    let agent_id = agent.agent_id?;
    if let Some((phase, _)) =
        held().find(|(_, holder)| holder.agent_id.as_deref() == Some(agent_id))
    {
        return Some(phase);
    }
    let mut unnamed =
        held().filter(|(_, holder)| holder.agent_id.is_none() && holder.ended_at.is_none());
    match (unnamed.next(), unnamed.next()) {
        (Some((phase, _)), None) => Some(phase),
        _ => None,
    }
}

/// A sub-agent was seen working (it started, or one of its tools ran): its holder learns (or
/// corrects) its agent id, and its last activity, at most every [`ACTIVITY_INTERVAL`].
pub fn seen(workflow: &Workflow, agent: Agent<'_>, now: DateTime<Utc>) -> Vec<Transition> {
    let Some(phase) = held_by(workflow, agent) else {
        return Vec::new();
    };
    let Some(holder) = &phase.holder else {
        return Vec::new();
    };
    if !learns_id(holder, agent) && now - holder.last_activity_at < ACTIVITY_INTERVAL {
        return Vec::new();
    }
    vec![Transition::HolderSeen {
        phase: phase.id.clone(),
        agent_id: agent.agent_id.map(str::to_owned),
    }]
}

/// Whether `agent` tells `holder` an agent id it does not have yet (or has wrong).
fn learns_id(holder: &Holder, agent: Agent<'_>) -> bool {
    agent
        .agent_id
        .is_some_and(|agent_id| holder.agent_id.as_deref() != Some(agent_id))
}

/// A sub-agent ended (SubagentStop, or its `Agent` call returned): its phase completes when its
/// declared outputs all exist, written after the phase started, and its tasks and dependencies
/// are done; a phase it already completed stays so; otherwise its last message becomes the
/// phase's progress note (cut to [`MAX_NOTE_CHARS`]) and the phase stays in progress, held.
///
/// Nothing when no phase is held by it, or its end is already recorded.
pub fn ended(
    workflow: &Workflow,
    agent: Agent<'_>,
    last_message: Option<&str>,
    probe: &dyn Probe,
) -> Vec<Transition> {
    let Some(phase) = held_by(workflow, agent) else {
        return Vec::new();
    };
    let Some(holder) = &phase.holder else {
        return Vec::new();
    };
    let mut transitions = Vec::new();
    if learns_id(holder, agent) {
        transitions.push(Transition::HolderSeen {
            phase: phase.id.clone(),
            agent_id: agent.agent_id.map(str::to_owned),
        });
    }
    if holder.ended_at.is_some() {
        return transitions;
    }
    let mut note = None;
    if phase.status == PhaseStatus::InProgress {
        if outputs_done(workflow, phase, probe) {
            transitions.push(Transition::PhaseComplete {
                phase: phase.id.clone(),
                artifacts: phase.outputs.clone(),
                commit_sha: None,
                force: false,
            });
        } else {
            note = last_message
                .map(str::trim)
                .filter(|message| !message.is_empty())
                .map(cut);
        }
    }
    transitions.push(Transition::HolderEnd {
        phase: phase.id.clone(),
        note,
        error: None,
    });
    transitions
}

/// A sub-agent failed (its own rate limit or API error, or its `Agent` call failed): the failure
/// is recorded on its phase, which stays in progress for another sub-agent to pick up.
pub fn failed(workflow: &Workflow, agent: Agent<'_>, error: &str) -> Vec<Transition> {
    let Some(phase) = held_by(workflow, agent) else {
        return Vec::new();
    };
    if phase
        .holder
        .as_ref()
        .is_some_and(|holder| holder.error.is_some())
    {
        return Vec::new();
    }
    vec![Transition::HolderEnd {
        phase: phase.id.clone(),
        note: None,
        error: Some(cut(error.trim())),
    }]
}

/// `workflow` as a new session sees it: no sub-agent of an earlier session runs in it, so a
/// holder that never ended is taken to have ended at its last activity (in this copy only;
/// nothing is recorded, as another session may still be running it).
pub fn as_seen_by_new_session(workflow: &Workflow) -> std::borrow::Cow<'_, Workflow> {
    let running = |phase: &Phase| {
        phase
            .holder
            .as_ref()
            .is_some_and(|holder| holder.ended_at.is_none())
    };
    if !workflow.phases.iter().any(running) {
        return std::borrow::Cow::Borrowed(workflow);
    }
    let mut copy = workflow.clone();
    for holder in copy
        .phases
        .iter_mut()
        .filter_map(|phase| phase.holder.as_mut())
        .filter(|holder| holder.ended_at.is_none())
    {
        holder.ended_at = Some(holder.last_activity_at.into());
    }
    std::borrow::Cow::Owned(copy)
}

/// Whether `phase` declares outputs and they all exist, are not empty, and were not written
/// before the phase started (where the probe knows when), with its tasks and dependencies done.
fn outputs_done(workflow: &Workflow, phase: &Phase, probe: &dyn Probe) -> bool {
    !phase.outputs.is_empty()
        && unfinished_outputs(phase, probe).is_empty()
        && phase
            .tasks
            .iter()
            .all(|task| task.status == TaskStatus::Done)
        && workflow.dependencies_done(phase)
}

/// A sub-agent's text as kept: redacted first, then cut, so that no secret straddles the cut.
fn cut(text: &str) -> String {
    crate::redact::shortened(text, MAX_NOTE_CHARS)
}

#[cfg(test)]
mod tests;
