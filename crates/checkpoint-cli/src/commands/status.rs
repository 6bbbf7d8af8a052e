//! `checkpoint status` and `checkpoint show`.

use checkpoint_core::{PhaseId, Workflow, store::Recovery};
use miette::{IntoDiagnostic, Result};
use serde::Serialize;

use crate::{
    ctx::Ctx,
    output::{self, Format, JSON_VERSION, Paint, PhaseView},
};

/// The JSON document of `checkpoint status`.
#[derive(Debug, Serialize)]
struct StatusReport<'a> {
    version: u32,
    workflow: &'a Workflow,
    phases: Vec<PhaseSummary<'a>>,
    recoveries: &'a [Recovery],
}

/// Where one phase stands.
#[derive(Debug, Serialize)]
struct PhaseSummary<'a> {
    id: &'a PhaseId,
    view: PhaseView,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    waiting_for: Vec<&'a PhaseId>,
}

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
            output::emit(&briefing.prompt()).into_diagnostic()
        }
        _ => output::emit(&output::render_status(
            workflow,
            ctx.now,
            Paint::new(ctx.color),
        ))
        .into_diagnostic(),
    }
}

pub(crate) fn show(ctx: &Ctx) -> Result<()> {
    let loaded = ctx.load()?;
    output::warn_recoveries(&loaded.recoveries);
    output::emit_json(&loaded.workflow).into_diagnostic()
}
