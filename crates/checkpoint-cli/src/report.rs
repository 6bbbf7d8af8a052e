//! The JSON documents commands print, as dedicated types.

use checkpoint_core::{
    Workflow,
    store::{Loaded, Recovery},
};
use miette::{IntoDiagnostic, Result};
use serde::Serialize;

use crate::output::{self, JSON_VERSION};

/// The result of a command that reads or changes one workflow.
#[derive(Debug, Serialize)]
pub(crate) struct WorkflowReport<'a> {
    version: u32,
    workflow: &'a Workflow,
    recoveries: &'a [Recovery],
}

impl<'a> WorkflowReport<'a> {
    pub(crate) fn new(loaded: &'a Loaded) -> Self {
        Self {
            version: JSON_VERSION,
            workflow: &loaded.workflow,
            recoveries: &loaded.recoveries,
        }
    }

    pub(crate) fn emit(&self) -> Result<()> {
        output::emit_json(self).into_diagnostic()
    }
}

/// Applies one transition to the workflow the command means and reports the result:
/// `summary` gives the human line.
pub(crate) fn apply(
    ctx: &crate::ctx::Ctx,
    transition: checkpoint_core::Transition,
    summary: impl FnOnce(&Workflow) -> String,
) -> Result<&'static Loaded> {
    let id = ctx.workflow_id()?;
    let loaded = crate::ctx::keep_until_exit(ctx.store.apply(&id, ctx.now, transition)?);
    output::warn_recoveries(&loaded.recoveries);
    output::warn_redacted(loaded.redacted);
    match ctx.format {
        crate::cli::Format::Json => WorkflowReport::new(loaded).emit()?,
        _ => {
            let mut line = summary(&loaded.workflow);
            line.push('\n');
            output::emit(&line).into_diagnostic()?;
        }
    }
    Ok(loaded)
}
