//! `checkpoint import`: create a workflow from another checkpoint system's state file, which is
//! left untouched.

use std::path::{Component, PathBuf};

use checkpoint_core::{
    WorkflowId,
    seeds::{self, ImportOptions, SeedFormat},
};
use clap::Args;
use miette::{IntoDiagnostic, Result};

use crate::{
    args::FormatArg,
    ctx::Ctx,
    inside,
    json::{ImportReport, ImportedFrom},
    output::{self, Format, JSON_VERSION, Paint},
    services::new_workflow,
};

/// Arguments of `checkpoint import`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The state file, or a project directory holding exactly one
    pub path: PathBuf,
    /// The file's format [default: recognised from its contents, else its place]
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub from: Option<FormatArg>,
    /// The id of the new workflow [default: the file's own id, feature or branch name]
    #[arg(long = "as", value_name = "ID")]
    pub id: Option<String>,
    /// Archive an existing workflow with this id first, then import
    #[arg(long)]
    pub fresh: bool,
}

pub(crate) fn import(ctx: &Ctx, args: &ImportArgs) -> Result<()> {
    // `.` components are left out, so that messages show `memory/…` rather than `./memory/…`.
    let path: PathBuf = ctx
        .cwd
        .join(&args.path)
        .components()
        .filter(|component| !matches!(component, Component::CurDir))
        .collect();
    let found = seeds::locate(&path, args.from.map(SeedFormat::from))?;
    let source = seeds::read_source(found.format, &found.path)?;
    let options = ImportOptions {
        id: args.id.as_deref().map(WorkflowId::new).transpose()?,
        now: ctx.now,
    };
    let workflow = seeds::import(found.format, &source, &options)?;
    inside::check_outputs(&ctx.project_root, &workflow, &ctx.display_path(&found.path))?;
    let loaded = new_workflow::create(ctx, workflow, args.fresh)?;
    let path = ctx.display_path(&found.path);
    match ctx.format {
        Format::Json => output::emit_json(&ImportReport {
            version: JSON_VERSION,
            source: ImportedFrom {
                format: found.format.name(),
                path: &path,
            },
            workflow: &loaded.workflow,
            recoveries: &loaded.recoveries,
        })
        .into_diagnostic(),
        _ => {
            let paint = Paint::new(ctx.color);
            let mut text = format!(
                "imported {} `{}` as workflow {} with {} in `{}`\n\n",
                found.format.describe(),
                path.display(),
                paint.bold(loaded.workflow.id.as_str()),
                output::count(loaded.workflow.phases.len(), "phase"),
                loaded.dir.display()
            );
            text.push_str(&output::render_status(
                &loaded.workflow,
                &output::EffectCounts::default(),
                ctx.now,
                paint,
            ));
            output::emit_human(ctx.color, &text).into_diagnostic()
        }
    }
}
