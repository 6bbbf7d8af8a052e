//! Journal entries as text: one line of `checkpoint log` and of `checkpoint watch --plain`.

use checkpoint_core::{Transition, journal::Entry};

use crate::output::{
    paint::Paint,
    snapshots::describe as files,
    text::{WHOLE_IN_LOG, count, one_line, short_sha, shorten, spent_text},
};

/// One journal entry as a line of `checkpoint log` (and of `checkpoint watch --plain`): its
/// sequence number, time, kind, phase and arguments, these cut to [`TEXT_COLUMNS`]
/// unless `full`.
pub(crate) fn entry_line(entry: &Entry, paint: Paint, full: bool) -> String {
    let described = one_line(&describe(&entry.transition)).into_owned();
    format!(
        "{:>5}  {}  {:<15} {}",
        entry.seq,
        paint.dim(&entry.at.format("%Y-%m-%d %H:%M:%S").to_string()),
        entry.transition.op(),
        if full {
            described.as_str().into()
        } else {
            shorten(&described, WHOLE_IN_LOG)
        }
    )
}

/// The arguments of a transition, briefly.
pub(crate) fn describe(transition: &Transition) -> String {
    let phase = transition
        .phase()
        .map(|phase| phase.to_string())
        .unwrap_or_default();
    match transition {
        Transition::Init { workflow } => count(workflow.phases.len(), "phase"),
        Transition::Snapshot { reason, .. } => reason.clone(),
        Transition::PhaseProgress { note, .. } => format!("{phase}: {note}"),
        Transition::PhaseFail { reason, .. }
        | Transition::PhaseReject { reason, .. }
        | Transition::PhaseReset { reason, .. }
        | Transition::Replan { reason, .. } => {
            format!("{phase}: {reason}")
        }
        Transition::PhaseComplete {
            artifacts,
            commit_sha,
            ..
        } => {
            let mut text = phase;
            if !artifacts.is_empty() {
                text.push_str(&format!(" ({})", artifacts.join(", ")));
            }
            if let Some(sha) = commit_sha {
                text.push_str(&format!(" @ {}", short_sha(sha)));
            }
            text
        }
        Transition::TaskAdd { task, .. }
        | Transition::TaskStart { task, .. }
        | Transition::TaskDone { task, .. }
        | Transition::TaskFail { task, .. }
        | Transition::TaskReset { task, .. } => {
            format!("{phase}/{task}")
        }
        Transition::Note { text } | Transition::Decide { text } => text.clone(),
        Transition::FilePath { path } => path.clone(),
        Transition::Heartbeat { source, .. } => source.clone(),
        Transition::Pause { reason, .. } => reason.clone(),
        Transition::Abandon { reason } => reason.clone().unwrap_or_default(),
        Transition::Compaction { trigger, .. } => trigger.clone(),
        Transition::HolderDispatch {
            tool_use_id,
            description,
            ..
        } => match description {
            Some(description) => format!("{phase}: {description} ({tool_use_id})"),
            None => format!("{phase}: {tool_use_id}"),
        },
        Transition::HolderSeen {
            agent_id: Some(agent_id),
            ..
        } => format!("{phase}: agent {agent_id}"),
        Transition::HolderEnd { note, error, .. } => match (error, note) {
            (Some(error), _) => format!("{phase}: {error}"),
            (None, Some(note)) => format!("{phase}: {note}"),
            (None, None) => phase,
        },
        Transition::SyncResolve {
            keep,
            diverged_at,
            fork,
            ..
        } => match fork {
            Some(fork) => format!("kept {keep} after entry {diverged_at}; other side in `{fork}`"),
            None => format!("kept {keep} after entry {diverged_at}"),
        },
        Transition::SessionHandoff {
            session_id,
            client,
            machine,
            user,
            files,
            ..
        } => format!(
            "{client} session {session_id} sent by {user} on {machine} ({})",
            count(*files as usize, "changed file")
        ),
        Transition::RunStart { pid, client, .. } => format!("pid {pid} ({client})"),
        Transition::RunSessionStart {
            number,
            phase,
            resumed,
        } => {
            let mut text = format!("session {number}");
            if let Some(phase) = phase {
                text.push_str(&format!(" on {phase}"));
            }
            if let Some(id) = resumed {
                text.push_str(&format!(", continuing {id}"));
            }
            text
        }
        Transition::RunSessionEnd {
            number,
            session_id,
            exit,
            outcome,
            transitions,
            cost_usd,
            tokens,
        } => format!(
            "session {number}{}: {outcome}, {}, {transitions} transitions{}",
            session_id
                .as_deref()
                .map(|id| format!(" ({id})"))
                .unwrap_or_default(),
            exit.map_or_else(
                || "killed by a signal".to_owned(),
                |code| format!("exit {code}")
            ),
            spent_text(*cost_usd, *tokens)
        ),
        Transition::RunWait { until, reason, .. } => {
            format!("until {}: {reason}", until.to_rfc3339())
        }
        Transition::RunStop { reason, exit } => format!("{reason} (exit {exit})"),
        Transition::Effect { .. } => effect_text(transition, &phase),
        Transition::EffectAllow { effect, by } => {
            let mut text = format!("effect {effect} may run once more");
            if let Some(by) = by {
                text.push_str(&format!(" (by {by})"));
            }
            text
        }
        Transition::FilesSnapshot { .. } | Transition::FilesRestore { .. } => files(transition),
        // What the entry's kind and phase say in full.
        Transition::PhaseStart { .. }
        | Transition::PhaseSkip { .. }
        | Transition::PhaseApprove { .. }
        | Transition::PhaseCommit { .. }
        | Transition::ToolFailure { .. }
        | Transition::HolderSeen { agent_id: None, .. }
        | Transition::Unpause => phase,
    }
}

/// What an `effect` entry says: its phase, tool and command, and its outcome.
fn effect_text(transition: &Transition, phase: &str) -> String {
    let Transition::Effect {
        tool,
        command,
        output,
        ok,
        intent,
        settles,
        ..
    } = transition
    else {
        return String::new();
    };
    let mut text = if phase.is_empty() {
        String::new()
    } else {
        format!("{phase}: ")
    };
    if let Some(tool) = tool.as_deref().filter(|tool| *tool != "Bash") {
        text.push_str(&format!("{tool} "));
    }
    text.push_str(command);
    match (intent, settles) {
        (true, Some(number)) => {
            text.push_str(&format!(
                " (the call of effect {number} can no longer report: outcome unknown)"
            ));
            return text;
        }
        (true, None) => {
            text.push_str(" (about to run)");
            return text;
        }
        (false, _) => {}
    }
    if let Some(number) = settles {
        text.push_str(&format!(" (the outcome of effect {number})"));
    }
    match (ok, output) {
        (false, _) => text.push_str(" (failed)"),
        (true, Some(output)) if !output.is_empty() => {
            text.push_str(&format!(" → {output}"));
        }
        (true, _) => {}
    }
    text
}
