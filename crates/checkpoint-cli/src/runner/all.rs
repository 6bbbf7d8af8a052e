//! What `checkpoint run --all` carries from one workflow to the next (the spending of the
//! whole run) and what it says at the end; the order and the exit code are core's
//! (`checkpoint_core::run::all_order`, `most_serious`).

use checkpoint_core::{Transition, WorkflowId, budget::Spending, run::StopKind};
use chrono::{DateTime, Utc};
use miette::Result;

use crate::ctx::Ctx;

/// What `run --all` carries from one workflow to the next: what was spent (the budget is the
/// whole run's), or, at the start, the time from which the journal's spending counts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Carried {
    pub(crate) spent: Spending,
    pub(crate) since: Option<DateTime<Utc>>,
}

impl Carried {
    pub(crate) fn from_journal(since: Option<DateTime<Utc>>) -> Carried {
        Carried {
            spent: Spending::default(),
            since,
        }
    }
}

/// How one workflow's run ended.
pub(crate) struct Ran {
    pub(crate) exit: u8,
    pub(crate) kind: StopKind,
    pub(crate) spent: Spending,
}

/// `run --all: 3 workflows: a finished, b needs a person, c finished` (with `--dry-run`, the
/// order it would run them in, and that nothing ran), then every workflow it skipped because it
/// could not read it, and why.
pub(crate) fn summary(
    order: &[WorkflowId],
    stops: &[(WorkflowId, StopKind)],
    skipped: &[(WorkflowId, String)],
    dry_run: bool,
) -> String {
    let mut text = if dry_run {
        dry_run_summary(order)
    } else {
        ran_summary(order, stops)
    };
    if !skipped.is_empty() {
        text.push_str(&format!(
            "; skipped {} it could not read (fix or move each aside, then run again):",
            skipped.len()
        ));
        for (id, reason) in skipped {
            text.push_str(&format!("\n  `{id}`: {reason}"));
        }
    }
    text
}

fn dry_run_summary(order: &[WorkflowId]) -> String {
    if order.is_empty() {
        return "run --all --dry-run: no unfinished workflow".to_owned();
    }
    let ids: Vec<String> = order.iter().map(|id| format!("`{id}`")).collect();
    format!(
        "run --all --dry-run: nothing was run; it would run {} in this order",
        ids.join(", ")
    )
}

fn ran_summary(order: &[WorkflowId], stops: &[(WorkflowId, StopKind)]) -> String {
    let mut parts: Vec<String> = stops
        .iter()
        .map(|(id, kind)| format!("`{id}` {}", kind.as_str()))
        .collect();
    for id in order.iter().skip(stops.len()) {
        parts.push(format!("`{id}` not run"));
    }
    if parts.is_empty() {
        "run --all: no unfinished workflow".to_owned()
    } else {
        format!("run --all: {}", parts.join(", "))
    }
}

/// What the sessions journaled in `workflows` since `since` spent.
pub(crate) fn spent_in_journals(
    ctx: &Ctx,
    workflows: &[WorkflowId],
    since: DateTime<Utc>,
) -> Result<Spending> {
    let mut spent = Spending::default();
    for id in workflows {
        spent.merge(journal_spending(ctx, id, since)?);
    }
    Ok(spent)
}

/// What the sessions journaled in workflow `id` since `since` spent.
pub(crate) fn journal_spending(
    ctx: &Ctx,
    id: &WorkflowId,
    since: DateTime<Utc>,
) -> Result<Spending> {
    let journal = ctx.store.journal(id)?;
    Ok(Spending::since(
        journal
            .entries
            .iter()
            .filter_map(|entry| match &entry.transition {
                Transition::RunSessionEnd {
                    cost_usd, tokens, ..
                } => Some((entry.at, *cost_usd, *tokens)),
                _ => None,
            }),
        since,
    ))
}
