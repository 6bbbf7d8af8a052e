//! The claims the hooks keep: a phase held by a sub-agent holds its declared outputs and its
//! plan `claims` for it; a claim whose phase is no longer in progress ends, found when the
//! claims are brought in line or when a write meets it.

use checkpoint_core::writes::{self, Writer, claimed_by_other};
use miette::{IntoDiagnostic, Result};

use crate::{commands::hook::Hook, output};

impl Hook {
    /// Brings the claims in line with the workflows: a phase held by a sub-agent holds its
    /// declared outputs for it; a claim of a phase no longer in progress (completed, failed,
    /// skipped) ends.
    pub(super) fn refresh_claims(&self) -> Result<()> {
        let (active, _) = self.scan()?;
        let in_progress = |workflow: Option<&str>, phase: &str| {
            active.iter().any(|candidate| {
                workflow.is_none_or(|id| candidate.id.as_str() == id)
                    && candidate.phases.iter().any(|candidate| {
                        candidate.id.as_str() == phase
                            && candidate.status == checkpoint_core::PhaseStatus::InProgress
                    })
            })
        };
        let mut held = Vec::new();
        for workflow in &active {
            for phase in workflow
                .phases
                .iter()
                .filter(|phase| phase.status == checkpoint_core::PhaseStatus::InProgress)
            {
                let Some(agent) = phase.holder.as_ref().and_then(|h| h.agent_id.as_deref()) else {
                    continue;
                };
                let session = phase
                    .holder
                    .as_ref()
                    .and_then(|holder| holder.session_id.clone())
                    .unwrap_or_else(|| self.envelope.session_id.clone());
                for output in phase.outputs.iter().chain(&phase.claims) {
                    held.push(writes::Claim {
                        glob: output.clone(),
                        phase: phase.id.to_string(),
                        workflow: Some(workflow.id.to_string()),
                        holder: Writer::new(&session, Some(agent)),
                        agent_type: None,
                        since: self.ctx.now,
                    });
                }
            }
        }
        let known = self.ctx.store.claims().into_diagnostic()?;
        let stale = known
            .iter()
            .any(|claim| !in_progress(claim.workflow.as_deref(), &claim.phase));
        let missing = held.iter().any(|claim| {
            !known
                .iter()
                .any(|known| known.glob == claim.glob && known.holder == claim.holder)
        });
        if !stale && !missing {
            return Ok(());
        }
        self.ctx
            .store
            .update_claims(|claims| {
                claims.retain(|claim| in_progress(claim.workflow.as_deref(), &claim.phase));
                for claim in held {
                    if !claims
                        .iter()
                        .any(|known| known.glob == claim.glob && known.holder == claim.holder)
                    {
                        claims.push(claim);
                    }
                }
            })
            .into_diagnostic()
    }

    /// The claim of another live writer on `relative` whose phase is still in progress (a phase
    /// completed, failed, skipped or reset by any means ends its claims: those found are
    /// dropped). Workflows are read only when a claim matches.
    pub(super) fn held_by_other(
        &self,
        mut claims: Vec<writes::Claim>,
        relative: &str,
        writer: &Writer,
        live: &dyn Fn(&Writer) -> bool,
    ) -> Option<writes::Claim> {
        let mut ended = Vec::new();
        let held = loop {
            let Some(claim) = claimed_by_other(&claims, relative, writer, live).cloned() else {
                break None;
            };
            let in_progress = claim.workflow.as_deref().is_none_or(|id| {
                checkpoint_core::WorkflowId::new(id)
                    .and_then(|id| self.ctx.store.load(&id))
                    .map_or(true, |loaded| {
                        loaded.workflow.phases.iter().any(|phase| {
                            phase.id.as_str() == claim.phase
                                && phase.status == checkpoint_core::PhaseStatus::InProgress
                        })
                    })
            });
            if in_progress {
                break Some(claim);
            }
            claims.retain(|other| other != &claim);
            ended.push(claim);
        };
        if !ended.is_empty()
            && let Err(err) = self
                .ctx
                .store
                .update_claims(|claims| claims.retain(|claim| !ended.contains(claim)))
        {
            output::warn(&format!("the ended claims are kept: {err}"));
        }
        held
    }
}
