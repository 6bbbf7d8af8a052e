//! What the journal says of a workflow's last `checkpoint run` (its session, its wait, its stop,
//! what it spent), folded entry by entry: `watch` draws it and `status` tells its spending.
//! Pure: no I/O.

use checkpoint_core::{
    Transition,
    budget::{Budget, Spending},
    journal::Entry,
};
use chrono::{DateTime, Utc};
use serde::Serialize;

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
