//! Which workflow a command means when none is named: the one rule every command, hook and the
//! MCP server follow.
//!
//! A workflow named with `--workflow` is meant; else the one `checkpoint use` chose; else the
//! only unfinished one. Only unfinished workflows can make the choice ambiguous: a complete or
//! abandoned one never stands in the way. With none unfinished, the most recently active one is
//! meant (and said to be finished).

use chrono::{DateTime, Utc};

use crate::{id::WorkflowId, model::Workflow};

/// A workflow of the store as the rule sees it.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub id: WorkflowId,
    /// Complete or abandoned; a workflow that cannot be read counts as unfinished.
    pub finished: bool,
    /// When it was last active (see [`active_at`]); `None` when it cannot be read.
    pub active_at: Option<DateTime<Utc>>,
}

impl Candidate {
    /// The candidate a loaded workflow is.
    pub fn of(workflow: &Workflow) -> Self {
        Self {
            id: workflow.id.clone(),
            finished: workflow.status.is_finished(),
            active_at: Some(active_at(workflow)),
        }
    }
}

/// The workflow meant, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The only unfinished workflow.
    Unfinished(WorkflowId),
    /// No workflow is unfinished: the most recently active one, finished.
    Finished(WorkflowId),
    /// Several unfinished workflows, most recently active first.
    Several(Vec<WorkflowId>),
    /// The store holds no workflow.
    None,
}

/// When a workflow was last active: its last recorded activity or its last update, the later.
pub fn active_at(workflow: &Workflow) -> DateTime<Utc> {
    workflow
        .last_activity
        .as_ref()
        .map_or(workflow.updated_at, |activity| {
            activity.at.max(workflow.updated_at)
        })
}

/// Sorts most recently active first (unreadable last), then by id, so that every list of
/// workflows (`list`, `resume`, the session-start briefing, `run --all`) has one order.
pub(crate) fn by_recency(candidates: &mut [Candidate]) {
    candidates.sort_by(|a, b| b.active_at.cmp(&a.active_at).then_with(|| a.id.cmp(&b.id)));
}

/// The workflow meant among `candidates` when none was named or chosen with `use`.
pub fn choose(mut candidates: Vec<Candidate>) -> Choice {
    by_recency(&mut candidates);
    let unfinished: Vec<WorkflowId> = candidates
        .iter()
        .filter(|candidate| !candidate.finished)
        .map(|candidate| candidate.id.clone())
        .collect();
    match unfinished.len() {
        1 => Choice::Unfinished(
            unfinished
                .into_iter()
                .next()
                .unwrap_or_else(|| unreachable!()),
        ),
        0 => candidates
            .into_iter()
            .next()
            .map_or(Choice::None, |candidate| Choice::Finished(candidate.id)),
        _ => Choice::Several(unfinished),
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn candidate(id: &str, finished: bool, hour: Option<u32>) -> Candidate {
        Candidate {
            id: WorkflowId::new(id).unwrap(),
            finished,
            active_at: hour.map(|hour| Utc.with_ymd_and_hms(2026, 1, 1, hour, 0, 0).unwrap()),
        }
    }

    fn id(id: &str) -> WorkflowId {
        WorkflowId::new(id).unwrap()
    }

    #[test]
    fn finished_workflows_never_make_the_choice_ambiguous() {
        // One complete, one abandoned: the most recent, said to be finished.
        let choice = choose(vec![
            candidate("old", true, Some(1)),
            candidate("new", true, Some(3)),
        ]);
        assert_eq!(choice, Choice::Finished(id("new")));
        // The only unfinished one wins over more recent finished ones.
        let choice = choose(vec![
            candidate("done", true, Some(9)),
            candidate("work", false, Some(1)),
            candidate("gone", true, Some(5)),
        ]);
        assert_eq!(choice, Choice::Unfinished(id("work")));
    }

    #[test]
    fn several_unfinished_are_listed_most_recent_first_and_unreadable_ones_count() {
        let choice = choose(vec![
            candidate("a", false, Some(1)),
            candidate("b", false, Some(7)),
            candidate("done", true, Some(9)),
            candidate("broken", false, None),
        ]);
        assert_eq!(
            choice,
            Choice::Several(vec![id("b"), id("a"), id("broken")])
        );
    }

    #[test]
    fn an_empty_store_means_none() {
        assert_eq!(choose(Vec::new()), Choice::None);
        assert_eq!(
            choose(vec![candidate("only", false, None)]),
            Choice::Unfinished(id("only"))
        );
    }
}
