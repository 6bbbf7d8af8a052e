//! `checkpoint status` and `checkpoint show`.

use checkpoint_core::Workflow;
use miette::{IntoDiagnostic, Result};

use crate::{
    ctx::Ctx,
    json::{PhaseSummary, StatusReport},
    output::{self, EffectCounts, Format, JSON_VERSION, Paint},
};

pub(crate) fn status(ctx: &Ctx) -> Result<()> {
    let loaded = ctx.load_checked()?;
    output::warn_recoveries(&loaded.recoveries);
    let workflow = &loaded.workflow;
    let runner = crate::runner::lock::holder(&ctx.store.workflow_dir(&workflow.id));
    let effects = effect_counts(ctx, workflow)?;
    match ctx.format {
        Format::Json => output::emit_json(&StatusReport {
            version: JSON_VERSION,
            workflow,
            phases: PhaseSummary::all(workflow, &effects),
            recoveries: &loaded.recoveries,
            runner: runner.as_ref().map(Into::into),
        })
        .into_diagnostic(),
        Format::Prompt => {
            let probe = crate::probe::FsProbe::new(&ctx.project_root);
            let briefing = ctx.brief(&loaded.workflow, &loaded.recoveries, &probe);
            output::emit_human(ctx.color, &briefing.prompt()).into_diagnostic()
        }
        _ => {
            let mut text =
                output::render_status(workflow, &effects, ctx.now, Paint::new(ctx.color));
            if ctx.workflow.is_none() && ctx.used()?.as_ref() == Some(&workflow.id) {
                text.push_str(
                    "\nused in this worktree: `checkpoint use --none` to forget, `checkpoint use <id>` for another\n",
                );
            }
            if let Some(runner) = runner {
                let since = runner
                    .started_at
                    .map(|at| format!(", started {}", output::ago(at, ctx.now)))
                    .unwrap_or_default();
                let session = runner
                    .child_pid
                    .map(|pid| format!(", session pid {pid}"))
                    .unwrap_or_default();
                text.push_str(&format!(
                    "\na runner is active: `checkpoint run` pid {}{since}{session}\n",
                    runner.pid
                ));
                // What it spent so far and its caps, from its journal entries.
                let journal = ctx.store.journal(&workflow.id)?;
                let mut tracker = crate::run_activity::RunTracker::default();
                for entry in &journal.entries {
                    tracker.observe(entry);
                }
                if let Some(line) = tracker
                    .last
                    .as_ref()
                    .and_then(crate::run_activity::spending_line)
                {
                    text.push_str(&format!("  {line}\n"));
                }
            }
            output::emit_human(ctx.color, &text).into_diagnostic()
        }
    }
}

/// How many effects each phase of `workflow` has done, from the store's effect index, and the
/// files each phase, session and agent changed, from its snapshot entries.
fn effect_counts(ctx: &Ctx, workflow: &Workflow) -> Result<EffectCounts> {
    Ok(EffectCounts::of(&ctx.store.ledger(&workflow.id)?)
        .with_tally(crate::services::snapshots::file_tally(ctx, &workflow.id)))
}

pub(crate) fn show(ctx: &Ctx) -> Result<()> {
    let loaded = ctx.load()?;
    output::warn_recoveries(&loaded.recoveries);
    output::emit_json(&loaded.workflow).into_diagnostic()
}
