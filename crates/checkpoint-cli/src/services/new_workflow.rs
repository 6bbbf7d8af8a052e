//! Creating a workflow in the store, as `checkpoint init` and `checkpoint import` do.

use checkpoint_core::{Workflow, store::Loaded};
use miette::Result;

use crate::{ctx::Ctx, output};

/// Creates a workflow in the store; with `fresh`, an existing one with its id is archived first.
pub(crate) fn create(ctx: &Ctx, workflow: Workflow, fresh: bool) -> Result<Loaded> {
    let id = workflow.id.clone();
    let mut archived = None;
    if fresh && ctx.store.workflow_dir(&id).exists() {
        archived = Some(ctx.store.archive(&id, ctx.now, false)?);
    }
    let loaded = ctx.store.create(workflow, ctx.now)?;
    output::warn_redacted(loaded.redacted);
    if let Some(path) = &archived {
        output::note(&format!(
            "archived the previous `{id}` to `{}`",
            path.display()
        ));
    }
    Ok(loaded)
}
