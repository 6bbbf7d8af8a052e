//! The resume plan of a workflow after its recoveries are written, as `checkpoint resume` writes
//! them: what `checkpoint run` plans each session from.

use checkpoint_core::{
    WorkflowId,
    resume::{FindingCode, ResumePlan},
};
use miette::Result;

use crate::{ctx::Ctx, output, probe::FsProbe};

/// The plan of workflow `id` after its recoveries, which are written (as `checkpoint resume`
/// does) unless the state was rebuilt after corruption: that waits for a person's `--yes`.
pub(crate) fn plan_after_recoveries(ctx: &Ctx, id: &WorkflowId) -> Result<ResumePlan> {
    let probe = FsProbe::new(&ctx.project_root);
    let loaded = ctx.store.load(id)?;
    let plan = ctx.brief(&loaded.workflow, &loaded.recoveries, &probe).plan;
    let rebuilt = plan
        .findings
        .iter()
        .any(|finding| finding.code == FindingCode::StateRebuilt);
    if rebuilt || (plan.recoveries.is_empty() && loaded.recoveries.is_empty()) {
        return Ok(plan);
    }
    let updated = ctx.store.update(id, ctx.now, |workflow| {
        // Recompute under the lock: another process may have moved on.
        Ok(ctx
            .brief(workflow, &[], &probe)
            .plan
            .recoveries
            .into_iter()
            .map(|recovery| recovery.transition)
            .collect())
    })?;
    output::warn_recoveries(&updated.recoveries);
    Ok(ctx.brief(&updated.workflow, &[], &probe).plan)
}
