//! What `checkpoint watch` shows: the workflow's phases as `checkpoint status` draws them (with
//! elapsed times), what a `checkpoint run` is doing (its session, or the wait before the next
//! one) as its journal entries tell, what each session and agent wrote and the Bash commands'
//! overwrites, and a footer with the last update. Pure: no I/O.

use std::fmt::Write as _;

use checkpoint_core::{
    Workflow,
    effects::{self, RecordedEffect},
    journal::Entry,
};
use chrono::{DateTime, Utc};

pub(crate) use crate::run_activity::{RunActivity, RunTracker};
use crate::{
    output::{self, EffectCounts, Paint},
    run_activity::spending_line,
    services::writers::Writers,
};

/// Everything one frame of the view shows.
pub(crate) struct Frame<'a> {
    pub workflow: &'a Workflow,
    /// How many effects each phase has done.
    pub effects: &'a EffectCounts,
    /// The last effect recorded (or attempted), shown as the latest event of its kind.
    pub last_effect: Option<&'a RecordedEffect>,
    pub run: Option<&'a RunActivity>,
    /// Whether the runner's process is alive, where that can be told.
    pub runner_alive: Option<bool>,
    pub last_entry: Option<&'a Entry>,
    /// A problem reading the workflow since the last frame.
    pub problem: Option<&'a str>,
    /// What each session and agent wrote, and the Bash commands' overwrites.
    pub written: &'a Writers,
    /// The end of the footer: how changes are noticed, how to quit.
    pub how: &'a str,
    pub now: DateTime<Utc>,
}

/// The view as text: the status view with elapsed times, the runner, and the footer.
pub(crate) fn render(frame: &Frame<'_>, paint: Paint) -> String {
    let now = frame.now;
    let mut out = output::render_workflow(frame.workflow, frame.effects, now, paint, true);
    if let Some(effect) = frame.last_effect {
        let _ = writeln!(out);
        let _ = writeln!(out, "{}", effect_line(effect, now, paint));
    }
    if !frame.written.is_empty() {
        let _ = writeln!(out);
        for line in frame.written.lines() {
            let line = output::shorten(&line, output::WHOLE_IN_REPORT);
            if line.contains(" overwritten: ") {
                let _ = writeln!(out, "{}", paint.yellow(&line));
            } else {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    if let Some(run) = frame.run {
        let _ = writeln!(out);
        render_run(&mut out, run, frame.runner_alive, now, paint);
    }
    let _ = writeln!(out);
    if let Some(problem) = frame.problem {
        let _ = writeln!(out, "{}", paint.yellow(&format!("warning: {problem}")));
    }
    let last = frame
        .last_entry
        .map(|entry| {
            let phase = entry
                .transition
                .phase()
                .map(|phase| format!(" {phase}"))
                .unwrap_or_default();
            format!(
                "last update: entry {} `{}`{phase} at {} ({})",
                entry.seq,
                entry.transition.op(),
                time_of_day(entry.at),
                output::ago(entry.at, now)
            )
        })
        .unwrap_or_else(|| "no journal entry yet".to_owned());
    let _ = writeln!(out, "{}", paint.dim(&format!("{last} · {}", frame.how)));
    out
}

/// The last effect: its number, phase, command, outcome and when, and its output's start.
fn effect_line(effect: &RecordedEffect, now: DateTime<Utc>, paint: Paint) -> String {
    let phase = effect
        .phase
        .as_ref()
        .map(|phase| format!(" ({phase})"))
        .unwrap_or_default();
    let outcome = if effect.ok {
        paint.green("done")
    } else {
        paint.red("failed")
    };
    let output = effect
        .output
        .as_deref()
        .filter(|output| !output.is_empty())
        .map(|output| {
            format!(
                " → {}",
                output::shorten(&effects::normalized(output), output::WHOLE_IN_LOG)
            )
        })
        .unwrap_or_default();
    format!(
        "last effect: #{}{phase} `{}` {outcome} {} at {}{output}",
        effect.number,
        output::shorten(&effects::normalized(&effect.command), output::WHOLE_IN_LOG),
        output::ago(effect.at, now),
        time_of_day(effect.at),
    )
}

/// The lines of a run: who runs, its session or its wait, or how it stopped.
fn render_run(
    out: &mut String,
    run: &RunActivity,
    alive: Option<bool>,
    now: DateTime<Utc>,
    paint: Paint,
) {
    let since = run
        .started_at
        .map(|at| format!(", started {}", output::ago(at, now)))
        .unwrap_or_default();
    if let Some(stopped) = &run.stopped {
        let _ = writeln!(
            out,
            "{}",
            paint.dim(&format!(
                "last run: `checkpoint run` pid {}{since}, stopped {} (exit {}): {}",
                run.pid,
                output::ago(stopped.at, now),
                stopped.exit,
                output::shorten(&stopped.reason, output::WHOLE_IN_LOG)
            ))
        );
        return;
    }
    let gone = if alive == Some(false) {
        paint.red(" — its process is gone; `checkpoint run` again continues")
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{} `checkpoint run` pid {}{since}{gone}",
        paint.bold("runner:"),
        run.pid
    );
    if alive == Some(false) {
        return;
    }
    if let Some(line) = spending_line(run) {
        let _ = writeln!(out, "  {line}");
    }
    if let Some(session) = &run.session {
        let phase = session
            .phase
            .as_deref()
            .map(|phase| format!(" on {phase}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  session {}{phase}, running for {}",
            session.number,
            checkpoint_core::run::human_duration(now - session.started_at)
        );
    }
    if let Some(wait) = &run.wait {
        let text = if wait.until > now {
            format!(
                "  waiting until {} (in {}): {}",
                time_of_day(wait.until),
                checkpoint_core::run::human_duration(wait.until - now),
                output::shorten(&wait.reason, output::WHOLE_IN_LOG)
            )
        } else {
            format!(
                "  waited until {}: {}; the next session starts",
                time_of_day(wait.until),
                output::shorten(&wait.reason, output::WHOLE_IN_LOG)
            )
        };
        let _ = writeln!(out, "{}", paint.yellow(&text));
    }
}

/// A time of day, in UTC like `checkpoint log`'s times.
fn time_of_day(at: DateTime<Utc>) -> String {
    at.format("%H:%M:%S UTC").to_string()
}

#[cfg(test)]
mod tests;
