//! `checkpoint init`: create a workflow from `--phase` specs or a plan file.

use std::path::PathBuf;

use checkpoint_core::{GitContext, PhasePlan, Plan, WorkflowId};
use clap::Args;
use miette::{IntoDiagnostic, Result};

use crate::{
    ctx::Ctx,
    failure::Failure,
    inside,
    json::WorkflowReport,
    output::{self, Format, Paint},
    services::new_workflow,
};

/// The largest plan file read, in bytes: above the state's own limit, so that a plan too large
/// to become a state is refused by the store with its own message.
const MAX_PLAN_BYTES: u64 = 4 * checkpoint_core::MAX_FILE_BYTES;

/// Arguments of `checkpoint init`.
#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// The workflow id (letters, digits, `.`, `_`, `-`, `@`)
    pub id: String,
    /// A phase as `id` or `id:dep,dep`, in order (can be repeated)
    #[arg(
        long = "phase",
        short = 'p',
        value_name = "SPEC",
        conflicts_with = "plan"
    )]
    pub phases: Vec<String>,
    /// A plan file (JSON, or TOML by extension) listing the phases
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// A one-line title
    #[arg(long)]
    pub title: Option<String>,
    /// A longer description of the goal
    #[arg(long)]
    pub description: Option<String>,
    /// The workflow kind, for example `implement` or `orchestrate`
    #[arg(long)]
    pub kind: Option<String>,
    /// Archive an existing workflow with this id first, then start over
    #[arg(long)]
    pub fresh: bool,
}

pub(crate) fn init(ctx: &Ctx, args: &InitArgs) -> Result<()> {
    let id = WorkflowId::new(&args.id)?;
    let mut plan = match &args.plan {
        Some(path) => {
            let path = ctx.cwd.join(path);
            let unreadable = |reason: String| {
                Failure::new(
                    "checkpoint::plan_unreadable",
                    format!("failed to read plan file `{}`: {reason}", path.display()),
                )
                .with_help(
                    "give the path of a TOML or JSON plan file, or the phases with `--phase`",
                )
            };
            // A plan is the user's file: a FIFO or a device is refused, never waited on.
            let bytes = match checkpoint_core::read_foreign(&path, MAX_PLAN_BYTES) {
                Ok(Some(bytes)) => bytes,
                Ok(None) => return Err(unreadable("it does not exist".into()).into()),
                Err(checkpoint_core::Error::Unreadable { reason, .. }) => {
                    return Err(unreadable(reason).into());
                }
                Err(err) => return Err(unreadable(err.to_string()).into()),
            };
            let text =
                String::from_utf8(bytes).map_err(|_| unreadable("it is not UTF-8 text".into()))?;
            Plan::parse(&path, &text)?
        }
        None => Plan {
            phases: args
                .phases
                .iter()
                .map(|spec| PhasePlan::from_spec(spec))
                .collect::<Result<_, _>>()?,
            ..Plan::default()
        },
    };
    // Declared outputs complete their phase when written: only files of the project may.
    for phase in &plan.phases {
        for output in &phase.outputs {
            inside::check(
                &ctx.project_root,
                &ctx.project_root,
                output,
                &format!("declared output of phase `{}`", phase.id),
            )?;
        }
    }
    if args.title.is_some() {
        plan.title = args.title.clone();
    }
    if args.description.is_some() {
        plan.description = args.description.clone();
    }
    if args.kind.is_some() {
        plan.kind = args.kind.clone();
    }
    let workflow = plan.into_workflow(id.clone(), git_context(ctx), ctx.now)?;
    let loaded = new_workflow::create(ctx, workflow, args.fresh)?;
    if !ctx.project_root.join(".git").exists()
        && ctx.store.root() == crate::locate::default_store(&ctx.project_root)
    {
        output::note(&format!(
            "not inside a git repository: the store is `{}`, in the current directory, which stands for the project (in a repository it is at the top level, found from any subdirectory); to have one, run `git init` here, or choose the store with `--dir` or `CHECKPOINT_DIR`",
            ctx.display_path(ctx.store.root()).display()
        ));
    }
    match ctx.format {
        Format::Json => WorkflowReport::new(&loaded).emit(),
        _ => {
            let paint = Paint::new(ctx.color);
            let mut text = format!(
                "created workflow {} with {} in `{}`\n\n",
                paint.bold(id.as_str()),
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

/// The branch, worktree and `HEAD` of the project, where git knows them.
fn git_context(ctx: &Ctx) -> Option<GitContext> {
    if !ctx.project_root.join(".git").exists() {
        return None;
    }
    let git = |args: &[&str]| crate::git::read(&ctx.project_root, args);
    Some(GitContext {
        branch: git(&["symbolic-ref", "--quiet", "--short", "HEAD"]),
        worktree: Some(ctx.project_root.to_string_lossy().into_owned()),
        head: git(&["rev-parse", "--verify", "--quiet", "HEAD"]),
    })
}
