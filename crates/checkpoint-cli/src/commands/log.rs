//! `checkpoint log`: the journal of a workflow.

use std::fmt::Write as _;

use checkpoint_core::{Transition, journal::Entry};
use clap::Args;
use miette::{IntoDiagnostic, Result};

use crate::{
    ctx::Ctx,
    json::LogReport,
    output::{self, Format, JSON_VERSION, Paint},
};

/// Arguments of `checkpoint log`.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// Show only the last N entries
    #[arg(long, short = 'n', value_name = "N")]
    pub limit: Option<usize>,
    /// Print notes, reasons and other free text whole, however long (by default each is cut
    /// at 200 columns, with an ellipsis and how much was left out)
    #[arg(long)]
    pub full: bool,
}

pub(crate) fn run(ctx: &Ctx, args: &LogArgs) -> Result<()> {
    let id = ctx.workflow_id()?;
    let journal = match args.limit {
        Some(limit) => ctx.store.last_entries(&id, limit)?,
        None => ctx.store.journal(&id)?,
    };
    if let Some((_, bytes)) = &journal.torn {
        output::warn(&format!(
            "the journal ends in a torn line of {} bytes (an interrupted append); it is not shown",
            bytes.len()
        ));
    }
    let skip = args
        .limit
        .map_or(0, |limit| journal.entries.len().saturating_sub(limit));
    let entries = &journal.entries[skip..];
    match ctx.format {
        Format::Json => output::emit_json(&LogReport {
            version: JSON_VERSION,
            entries,
        })
        .into_diagnostic(),
        _ => {
            let paint = Paint::new(ctx.color);
            let mut text = String::new();
            for entry in entries {
                let _ = writeln!(text, "{}", entry_line(entry, paint, args.full));
            }
            output::emit_human(ctx.color, &text).into_diagnostic()
        }
    }
}

/// One journal entry as a line of `checkpoint log` (and of `checkpoint watch --plain`): its
/// sequence number, time, kind, phase and arguments, these cut to [`output::TEXT_COLUMNS`]
/// unless `full`.
pub(crate) fn entry_line(entry: &Entry, paint: Paint, full: bool) -> String {
    let described = describe(&entry.transition);
    format!(
        "{:>5}  {}  {:<15} {}",
        entry.seq,
        paint.dim(&entry.at.format("%Y-%m-%d %H:%M:%S").to_string()),
        entry.transition.op(),
        if full {
            described.as_str().into()
        } else {
            output::shorten(&described, output::WHOLE_IN_LOG)
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
        Transition::Init { workflow } => output::count(workflow.phases.len(), "phase"),
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
                text.push_str(&format!(" @ {}", output::short_sha(sha)));
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
            crate::runner::display::spent_text(*cost_usd, *tokens)
        ),
        Transition::RunWait { until, reason, .. } => {
            format!("until {}: {reason}", until.to_rfc3339())
        }
        Transition::RunStop { reason, exit } => format!("{reason} (exit {exit})"),
        _ => phase,
    }
}
