//! The hooks' snapshots of the working tree: at a turn's end, a sub-agent's stop, before a
//! compaction, at a session's start (what changed while no session watched) and when a phase
//! completes, each attributed to its session and agent, within a time bound.

use std::time::{Duration, Instant};

use checkpoint_core::{PhaseId, SnapshotReason, Workflow, WorkflowId};

use crate::{
    commands::hook::Hook,
    ctx::env_seconds,
    env, output,
    services::snapshots::{self, Request},
    snapshot::{Changed, display},
};

/// How long a hook's snapshot may spend adding files, by default.
const DEFAULT_BUDGET: Duration = Duration::from_millis(2500);

impl Hook {
    /// Takes a snapshot of the files for each of `workflows`; an error is a warning.
    pub(super) fn snapshot_files(
        &self,
        workflows: &[&Workflow],
        reason: SnapshotReason,
        agent_id: Option<&str>,
    ) -> Vec<Changed> {
        let mut changed = Vec::new();
        for workflow in workflows {
            match self.snapshot_one(&workflow.id, reason, agent_id, None) {
                Ok(files) => changed = files,
                Err(err) => output::warn(&format!(
                    "no snapshot of the files for workflow `{}`: {err}",
                    workflow.id
                )),
            }
        }
        changed
    }

    /// Takes the snapshot of a phase's completion.
    pub(super) fn snapshot_completed(&self, id: &WorkflowId, phase: &PhaseId) {
        if let Err(err) =
            self.snapshot_one(id, SnapshotReason::PhaseComplete, None, Some(phase.clone()))
        {
            output::warn(&format!(
                "no snapshot of the files for workflow `{id}`: {err}"
            ));
        }
    }

    fn snapshot_one(
        &self,
        id: &WorkflowId,
        reason: SnapshotReason,
        agent_id: Option<&str>,
        phase: Option<PhaseId>,
    ) -> miette::Result<Vec<Changed>> {
        if !self.ctx.config.files.snapshots {
            return Ok(Vec::new());
        }
        let budget = env_seconds(env::CHECKPOINT_SNAPSHOT_BUDGET, DEFAULT_BUDGET)?;
        let recorded = snapshots::take_if_git(
            &self.ctx,
            id,
            Request {
                reason,
                label: None,
                session_id: self.session_id(),
                agent_id: agent_id.map(str::to_owned),
                phase,
                deadline: Some(Instant::now() + budget),
            },
        )?;
        Ok(recorded
            .map(|recorded| recorded.taken.changed)
            .unwrap_or_default())
    }
}

/// The lines of a session's context that name the files changed since the last snapshot.
pub(super) fn changed_context(changed: &[Changed]) -> String {
    let paths: Vec<String> = changed.iter().map(|change| display(&change.path)).collect();
    snapshots::changed_text(&paths)
}
