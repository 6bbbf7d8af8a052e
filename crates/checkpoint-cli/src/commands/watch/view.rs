//! What `checkpoint watch` shows: the workflow's phases as `checkpoint status` draws them (with
//! elapsed times), what a `checkpoint run` is doing (its session, or the wait before the next
//! one) as its journal entries tell, and a footer with the last update. Pure: no I/O.

use std::fmt::Write as _;

use checkpoint_core::{
    Transition, Workflow,
    budget::{Budget, Spending},
    effects::{self, RecordedEffect},
    journal::Entry,
};
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::output::{self, EffectCounts, Paint};

/// What the journal says of the workflow's last `checkpoint run`, folded entry by entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct RunActivity {
    /// The runner's process id.
    pub pid: u32,
    /// When it started.
    pub started_at: Option<DateTime<Utc>>,
    /// The session it runs now.
    pub session: Option<Session>,
    /// The wait before its next session.
    pub wait: Option<Wait>,
    /// How it stopped, once it did.
    pub stopped: Option<Stopped>,
    /// What its sessions spent so far, once one said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spent: Option<Spent>,
    /// Its caps, when it has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
}

/// What a run's sessions spent so far, as their results said.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Spent {
    pub cost_usd: f64,
    pub tokens: u64,
}

/// A session of the runner in progress.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Session {
    pub number: u32,
    pub phase: Option<String>,
    pub started_at: DateTime<Utc>,
}

/// A wait of the runner (a rate limit's reset, a backoff).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Wait {
    pub until: DateTime<Utc>,
    pub reason: String,
}

/// The end of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Stopped {
    pub reason: String,
    pub exit: u8,
    pub at: DateTime<Utc>,
}

/// The runner's activity as the journal tells it: `None` until a run started.
#[derive(Debug, Default)]
pub(crate) struct RunTracker {
    pub last: Option<RunActivity>,
}

impl RunTracker {
    /// Takes one journal entry into account.
    pub(crate) fn observe(&mut self, entry: &Entry) {
        match &entry.transition {
            Transition::RunStart { pid, budget, .. } => {
                self.last = Some(RunActivity {
                    pid: *pid,
                    started_at: Some(entry.at),
                    budget: budget.clone(),
                    ..RunActivity::default()
                });
            }
            Transition::RunSessionStart { number, phase, .. } => {
                let run = self.last.get_or_insert_with(RunActivity::default);
                run.wait = None;
                run.session = Some(Session {
                    number: *number,
                    phase: phase.as_ref().map(ToString::to_string),
                    started_at: entry.at,
                });
            }
            Transition::RunSessionEnd {
                cost_usd, tokens, ..
            } => {
                if let Some(run) = &mut self.last {
                    run.session = None;
                    if cost_usd.is_some() || tokens.is_some() {
                        let spent = run.spent.get_or_insert_with(Spent::default);
                        // The rule the runner's budgets count with.
                        spent.cost_usd += Spending::counted_cost(*cost_usd);
                        spent.tokens = spent.tokens.saturating_add(tokens.unwrap_or(0));
                    }
                }
            }
            Transition::RunWait { until, reason, .. } => {
                let run = self.last.get_or_insert_with(RunActivity::default);
                run.wait = Some(Wait {
                    until: *until,
                    reason: reason.clone(),
                });
            }
            Transition::RunStop { reason, exit } => {
                let run = self.last.get_or_insert_with(RunActivity::default);
                run.session = None;
                run.wait = None;
                run.stopped = Some(Stopped {
                    reason: reason.clone(),
                    exit: *exit,
                    at: entry.at,
                });
            }
            _ => {}
        }
    }
}

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

/// `spent $1.20 and 3000 tokens (caps: $20.00, 1000000 tokens, usage 80%)`, when the run spent
/// anything or has caps.
pub(crate) fn spending_line(run: &RunActivity) -> Option<String> {
    let spent = run.spent.clone().unwrap_or_default();
    let mut caps = Vec::new();
    if let Some(budget) = &run.budget {
        caps.extend(budget.max_cost.map(|cost| format!("${cost:.2}")));
        caps.extend(budget.max_tokens.map(|tokens| format!("{tokens} tokens")));
        caps.extend(budget.max_usage.map(|usage| format!("usage {usage}%")));
    }
    if run.spent.is_none() && caps.is_empty() {
        return None;
    }
    let caps = if caps.is_empty() {
        String::new()
    } else {
        format!(" (caps: {})", caps.join(", "))
    };
    Some(format!(
        "spent ${:.2} and {} tokens{caps}",
        spent.cost_usd, spent.tokens
    ))
}

/// A time of day, in UTC like `checkpoint log`'s times.
fn time_of_day(at: DateTime<Utc>) -> String {
    at.format("%H:%M:%S UTC").to_string()
}

#[cfg(test)]
mod tests;
