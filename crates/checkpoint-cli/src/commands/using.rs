//! `checkpoint use`: the workflow this worktree means until `use --none`, kept in the store
//! (never committed, never pushed) and honoured by every command, hook and the MCP server.

use checkpoint_core::{WorkflowId, suggest};
use clap::Args;
use miette::{IntoDiagnostic, Result};
use serde::Serialize;

use crate::{
    ctx::Ctx,
    failure::Failure,
    output::{self, Format, JSON_VERSION},
};

/// Arguments of `checkpoint use`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  checkpoint use payments-fork   # every command here now means `payments-fork`
  checkpoint status              # …so this is its status
  checkpoint use --none          # back to the only unfinished workflow")]
pub(crate) struct UseArgs {
    /// The workflow this worktree means from now on
    #[arg(
        value_name = "ID",
        required_unless_present = "none",
        conflicts_with = "none"
    )]
    pub id: Option<String>,
    /// Forget the choice: commands mean the only unfinished workflow again
    #[arg(long)]
    pub none: bool,
}

/// The document of `checkpoint use --format json`.
#[derive(Serialize)]
struct UseReport {
    version: u32,
    /// The workflow chosen, `null` after `--none`.
    used: Option<String>,
}

/// Chooses (or forgets) the workflow this worktree means.
pub(crate) fn use_workflow(ctx: &Ctx, args: &UseArgs) -> Result<()> {
    let id = match &args.id {
        Some(id) => {
            let id = WorkflowId::new(id)?;
            let known = ctx.store.list()?;
            if !known.contains(&id) {
                let names: Vec<&str> = known.iter().map(WorkflowId::as_str).collect();
                return Err(Failure::new(
                    "checkpoint::store::not_found",
                    format!(
                        "no workflow `{id}` in `{}`{}",
                        ctx.store.root().display(),
                        suggest::did_you_mean(id.as_str(), names.iter().copied())
                    ),
                )
                .with_help(ctx.known_workflows_help("use")?)
                .into());
            }
            Some(id)
        }
        None => None,
    };
    ctx.store.set_used(id.as_ref())?;
    match ctx.format {
        Format::Json => output::emit_json(&UseReport {
            version: JSON_VERSION,
            used: id.map(|id| id.to_string()),
        })
        .into_diagnostic(),
        _ => output::emit(&match id {
            Some(id) => format!(
                "Every command in this worktree now means `{id}` (until `checkpoint use --none`).\n"
            ),
            None => "No workflow chosen: commands mean the only unfinished workflow.\n".to_owned(),
        })
        .into_diagnostic(),
    }
}
