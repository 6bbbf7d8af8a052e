//! The runner's budgets (`--max-usage`, `--max-cost`, `--max-tokens`): what a run spent, the
//! usage the client last reported, and whether another session may start.
//!
//! Pure: the CLI reads the spending from the stream and the journal, and passes `now`.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The caps of a run; `None` is no cap (journaled in `run_start` when one is set).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Budget {
    /// The highest usage of a client's rate-limit window, in percent, at which a session may
    /// still start (`--max-usage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_usage: Option<f64>,
    /// The most dollars the sessions may cost in total (`--max-cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<f64>,
    /// The most tokens the sessions may use in total (`--max-tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
}

impl Budget {
    /// Whether it caps anything.
    pub fn is_set(&self) -> bool {
        self.max_usage.is_some() || self.max_cost.is_some() || self.max_tokens.is_some()
    }
}

/// What sessions spent, as their final results said.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spending {
    /// Sessions counted.
    pub sessions: u32,
    /// Their cost in dollars (`total_cost_usd`).
    pub cost_usd: f64,
    /// Their tokens: input, output and cache reads and writes.
    pub tokens: u64,
}

impl Spending {
    /// Adds one session's spending (a cost that is not a finite, non-negative number counts as
    /// none).
    pub fn add(&mut self, cost_usd: Option<f64>, tokens: Option<u64>) {
        self.sessions = self.sessions.saturating_add(1);
        self.cost_usd += Self::counted_cost(cost_usd);
        self.tokens = self.tokens.saturating_add(tokens.unwrap_or(0));
    }

    /// What a session's reported cost counts for in a total: itself when a finite,
    /// non-negative number, else nothing. The one rule of every total (budgets, `status`,
    /// `watch`, `report`).
    pub fn counted_cost(cost_usd: Option<f64>) -> f64 {
        cost_usd
            .filter(|cost| cost.is_finite() && *cost >= 0.0)
            .unwrap_or(0.0)
    }

    /// Adds what other sessions spent.
    pub fn merge(&mut self, other: Spending) {
        self.sessions = self.sessions.saturating_add(other.sessions);
        self.cost_usd += other.cost_usd;
        self.tokens = self.tokens.saturating_add(other.tokens);
    }

    /// The spending of the sessions journaled at or after `since`: `(when it ended, cost,
    /// tokens)` for each.
    pub fn since(
        sessions: impl IntoIterator<Item = (DateTime<Utc>, Option<f64>, Option<u64>)>,
        since: DateTime<Utc>,
    ) -> Spending {
        let mut spending = Spending::default();
        for (at, cost, tokens) in sessions {
            if at >= since {
                spending.add(cost, tokens);
            }
        }
        spending
    }

    /// `$1.23 and 4567 tokens in 2 sessions`.
    pub fn describe(&self) -> String {
        format!(
            "${:.2} and {} tokens in {} session{}",
            self.cost_usd,
            self.tokens,
            self.sessions,
            if self.sessions == 1 { "" } else { "s" }
        )
    }
}

/// The usage of one of the client's rate-limit windows, as it last reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct Usage {
    /// The window (`five_hour`, `seven_day`, …), when the client named it.
    pub window: Option<String>,
    /// The fraction used: 0 to 1, above 1 past the window's cap.
    pub utilization: f64,
    /// When the window resets.
    pub resets_at: Option<DateTime<Utc>>,
}

impl Usage {
    /// The usage in percent, as `--max-usage` counts it.
    pub fn percent(&self) -> f64 {
        self.utilization * 100.0
    }

    fn name(&self) -> &str {
        self.window.as_deref().unwrap_or("rate-limit")
    }
}

/// Takes a reading into `readings`: the newest reading of each window wins; a reading that is not
/// a finite, non-negative number is dropped.
pub(crate) fn note_usage(readings: &mut Vec<Usage>, usage: Usage) {
    if !usage.utilization.is_finite() || usage.utilization < 0.0 {
        return;
    }
    readings.retain(|seen| seen.window != usage.window);
    readings.push(usage);
}

/// What the budget allows now.
#[derive(Debug, Clone, PartialEq)]
pub enum Allowance {
    /// A session may start.
    Go,
    /// The usage is at or above `--max-usage` until a window resets: wait until then.
    WaitForReset {
        /// When the last window above the cap resets.
        until: DateTime<Utc>,
        /// Why, in a sentence.
        reason: String,
    },
    /// A cap is reached for this run: stop.
    Spent {
        /// Why, in a sentence, with what was spent.
        reason: String,
    },
}

impl Budget {
    /// Whether a session may start at `now`, after `spent`, with the client's last `usage`
    /// readings.
    /// A reading whose window has reset is stale and ignored; a reading above the cap with no
    /// reset time stops the run (nobody knows when it would go down).
    pub fn allows(&self, spent: &Spending, usage: &[Usage], now: DateTime<Utc>) -> Allowance {
        if let Some(max) = self.max_cost
            && spent.cost_usd >= max
        {
            return Allowance::Spent {
                reason: format!(
                    "the cost cap is reached: spent {} (`--max-cost` ${max:.2})",
                    spent.describe()
                ),
            };
        }
        if let Some(max) = self.max_tokens
            && spent.tokens >= max
        {
            return Allowance::Spent {
                reason: format!(
                    "the token cap is reached: spent {} (`--max-tokens` {max})",
                    spent.describe()
                ),
            };
        }
        let Some(max) = self.max_usage else {
            return Allowance::Go;
        };
        let over: Vec<&Usage> = usage
            .iter()
            .filter(|reading| reading.percent() >= max)
            .filter(|reading| reading.resets_at.is_none_or(|at| at > now))
            .collect();
        if let Some(blind) = over.iter().find(|reading| reading.resets_at.is_none()) {
            return Allowance::Spent {
                reason: format!(
                    "the {} window is at {:.0}% of its limit (`--max-usage` {max}%), and the client said no reset time",
                    blind.name(),
                    blind.percent()
                ),
            };
        }
        match over
            .iter()
            .filter_map(|reading| reading.resets_at.map(|at| (at, *reading)))
            .max_by_key(|(at, _)| *at)
        {
            Some((until, reading)) => Allowance::WaitForReset {
                until,
                reason: format!(
                    "the {} window is at {:.0}% of its limit (`--max-usage` {max}%); it resets at {}",
                    reading.name(),
                    reading.percent(),
                    until.to_rfc3339()
                ),
            },
            None => Allowance::Go,
        }
    }
}
