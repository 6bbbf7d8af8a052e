//! `checkpoint status` and `checkpoint show`.

use miette::{IntoDiagnostic, Result};

use crate::{
    ctx::Ctx,
    output::{self, Format, JSON_VERSION, Paint},
    report::{PhaseSummary, StatusReport},
};

pub(crate) fn status(ctx: &Ctx) -> Result<()> {
    let loaded = ctx.load()?;
    output::warn_recoveries(&loaded.recoveries);
    let workflow = &loaded.workflow;
    match ctx.format {
        Format::Json => {
            let done = workflow.done_set();
            let phases = workflow
                .phases
                .iter()
                .map(|phase| PhaseSummary {
                    id: &phase.id,
                    view: output::phase_view(&done, phase),
                    waiting_for: done.waiting_for(phase).collect(),
                })
                .collect();
            output::emit_json(&StatusReport {
                version: JSON_VERSION,
                workflow,
                phases,
                recoveries: &loaded.recoveries,
            })
            .into_diagnostic()
        }
        Format::Prompt => {
            let probe = crate::probe::FsProbe::new(&ctx.project_root);
            let briefing = ctx.brief(&loaded.workflow, &loaded.recoveries, &probe);
            output::emit_human(ctx.color, &briefing.prompt()).into_diagnostic()
        }
        _ => output::emit_human(
            ctx.color,
            &output::render_status(workflow, ctx.now, Paint::new(ctx.color)),
        )
        .into_diagnostic(),
    }
}

pub(crate) fn show(ctx: &Ctx) -> Result<()> {
    let loaded = ctx.load()?;
    output::warn_recoveries(&loaded.recoveries);
    output::emit_json(&loaded.workflow).into_diagnostic()
}
