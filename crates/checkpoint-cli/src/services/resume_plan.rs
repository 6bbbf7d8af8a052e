//! Applying the recoveries of an interrupted workflow, once for every command: `checkpoint
//! resume` and `checkpoint run` (and `run --dry-run`, which applies them in memory only) journal
//! the same entries and plan from the same state.

use checkpoint_core::{
    Transition, Workflow, WorkflowId,
    resume::{FindingCode, ResumePlan},
    store::Loaded,
};
use miette::Result;

use crate::{ctx::Ctx, probe::FsProbe, services::store_write};

/// The source of the heartbeat journaled with the recoveries: resuming is a sign of life,
/// whichever command resumes.
const RESUME_SOURCE: &str = "resume";

/// Whether the recoveries are written or only applied in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Write {
    Journal,
    DryRun,
}

/// The plan of a workflow after its recoveries, and the plan before them.
pub(crate) struct Recovered {
    /// The plan to follow: from the state after the recoveries.
    pub(crate) plan: ResumePlan,
    before: ResumePlan,
}

impl Recovered {
    /// The plan a dry run shows: the one to follow, with the recoveries it would take, the
    /// last activity before them and the findings of the state as it still is.
    pub(crate) fn shown(&self) -> ResumePlan {
        let mut plan = self.plan.clone();
        show_recoveries(&mut plan, &self.before);
        plan.findings.clone_from(&self.before.findings);
        plan
    }
}

/// Names in `after` the recoveries `before` planned and the activity before them.
pub(crate) fn show_recoveries(after: &mut ResumePlan, before: &ResumePlan) {
    after.recoveries.clone_from(&before.recoveries);
    after.last_active = before.last_active;
}

/// The plan of workflow `id` after its recoveries, which are written (as `checkpoint resume`
/// does) unless the state was rebuilt after corruption, which waits for a person's `--yes`.
///
/// With [`Write::DryRun`] nothing is written: the recoveries are applied to a copy of the state,
/// and the plan is the one the real run would follow.
pub(crate) fn plan_after_recoveries(ctx: &Ctx, id: &WorkflowId, write: Write) -> Result<Recovered> {
    let probe = FsProbe::new(&ctx.project_root);
    let loaded = ctx.store.load(id)?;
    let before = ctx.brief(&loaded.workflow, &loaded.recoveries, &probe).plan;
    if rebuilt(&before) || !wants_write(&before, &loaded) {
        return Ok(Recovered {
            plan: before.clone(),
            before,
        });
    }
    let after = match write {
        Write::Journal => apply_recoveries(ctx, id, &probe, |_| Ok(Vec::new()), None)?.workflow,
        Write::DryRun => recovered_in_memory(ctx, &loaded.workflow, &probe)?,
    };
    Ok(Recovered {
        plan: ctx.brief(&after, &[], &probe).plan,
        before,
    })
}

/// Whether the state was rebuilt after corruption: recoveries then wait for a person.
pub(crate) fn rebuilt(plan: &ResumePlan) -> bool {
    plan.findings
        .iter()
        .any(|finding| finding.code == FindingCode::StateRebuilt)
}

/// Whether resuming `loaded` writes anything: a recovery to apply, or a repair found on loading.
pub(crate) fn wants_write(plan: &ResumePlan, loaded: &Loaded) -> bool {
    !plan.recoveries.is_empty() || !loaded.recoveries.is_empty()
}

/// Applies the recoveries of workflow `id` under the lock, then the transitions `work` asks for
/// (computed from the state under the lock, before the recoveries), then a heartbeat when any of
/// these is journaled, then `last` (an abandon), through the one door (which says what a person
/// must know: a pause the recoveries' work lifted, the repairs made on loading).
///
/// The one place recoveries are written: every command that resumes calls it.
pub(crate) fn apply_recoveries(
    ctx: &Ctx,
    id: &WorkflowId,
    probe: &FsProbe,
    work: impl FnOnce(&Workflow) -> checkpoint_core::Result<Vec<Transition>>,
    last: Option<Transition>,
) -> Result<Loaded> {
    store_write::update(ctx, id, |workflow| {
        // Recomputed under the lock: another process may have moved on.
        let mut transitions = recovery_transitions(ctx, workflow, probe);
        transitions.extend(work(workflow)?);
        with_heartbeat(&mut transitions);
        transitions.extend(last);
        Ok(transitions)
    })
}

/// The recoveries `workflow` calls for now.
fn recovery_transitions(ctx: &Ctx, workflow: &Workflow, probe: &FsProbe) -> Vec<Transition> {
    ctx.brief(workflow, &[], probe)
        .plan
        .recoveries
        .into_iter()
        .map(|recovery| recovery.transition)
        .collect()
}

/// Ends `transitions` with the heartbeat that says the workflow is no longer interrupted, when
/// there are any.
fn with_heartbeat(transitions: &mut Vec<Transition>) {
    if !transitions.is_empty() {
        transitions.push(Transition::Heartbeat {
            source: RESUME_SOURCE.into(),
            session_id: None,
        });
    }
}

/// `workflow` with its recoveries applied in memory, as [`apply_recoveries`] would journal them
/// (a pause lifted the store's way), and nothing written.
fn recovered_in_memory(ctx: &Ctx, workflow: &Workflow, probe: &FsProbe) -> Result<Workflow> {
    let mut transitions = recovery_transitions(ctx, workflow, probe);
    with_heartbeat(&mut transitions);
    checkpoint_core::unpause_before_work(workflow, &mut transitions);
    let mut after = workflow.clone();
    let mut seq = after.seq;
    for transition in &transitions {
        seq += 1;
        checkpoint_core::apply(&mut after, transition, seq, ctx.now)?;
    }
    Ok(after)
}
