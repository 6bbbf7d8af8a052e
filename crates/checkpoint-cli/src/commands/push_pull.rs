//! `checkpoint push`, `pull` and `sync`: a workflow's state on a git remote as
//! `refs/checkpoints/<id>`, continued on another machine (the work is `services::remote_sync`).

use checkpoint_core::{WorkflowId, sync::Keep};
use clap::Args;
use miette::{Diagnostic, IntoDiagnostic, Result};
use serde::Serialize;

use crate::{
    ctx::Ctx,
    output::{self, Format, JSON_VERSION},
    remote::{REMOTE_PREFIX, Repo},
    services::remote_sync::{
        SyncAction, SyncOutcome, pull_fetched, pull_workflow, push_workflows, remember_failed_push,
        remote_name,
    },
};

/// Arguments of `checkpoint push`.
#[derive(Debug, Args)]
pub(crate) struct PushArgs {
    /// The git remote [default: the current branch's upstream remote, else `origin`]
    pub remote: Option<String>,
    /// Push every workflow of the store
    #[arg(long)]
    pub all: bool,
    /// Run as the background push after a completed phase: a failure is kept for the next
    /// command to report
    #[arg(long, hide = true)]
    pub background: bool,
}

/// Arguments of `checkpoint pull` and `checkpoint sync`.
#[derive(Debug, Args)]
pub(crate) struct PullArgs {
    /// The git remote [default: the current branch's upstream remote, else `origin`]
    pub remote: Option<String>,
    /// Pull every workflow of the remote and of the store
    #[arg(long)]
    pub all: bool,
    /// On a divergence, keep the remote side; ours is kept as the workflow `<id>@local-<time>`
    #[arg(long, group = "keep")]
    pub theirs: bool,
    /// On a divergence, keep our side (replayed after theirs); theirs is kept as the workflow
    /// `<id>@remote-<time>`
    #[arg(long, group = "keep")]
    pub ours: bool,
    /// On a divergence, apply both sides in journal order (only when each side touched
    /// different phases)
    #[arg(long, group = "keep")]
    pub merge: bool,
}

impl PullArgs {
    fn keep(&self) -> Option<Keep> {
        match (self.theirs, self.ours, self.merge) {
            (true, _, _) => Some(Keep::Theirs),
            (_, true, _) => Some(Keep::Ours),
            (_, _, true) => Some(Keep::Merge),
            _ => None,
        }
    }
}

/// The local journal went on from an entry the remote went on from too.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{message}")]
#[diagnostic(code(checkpoint::sync::diverged), help("{help}"))]
pub(crate) struct Diverged {
    pub message: String,
    pub help: String,
}

/// The remote moved since the last pull: nothing was pushed.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{message}")]
#[diagnostic(
    code(checkpoint::sync::rejected),
    help("run `checkpoint pull` first (or `checkpoint sync`), then push again")
)]
pub(crate) struct Rejected {
    pub message: String,
}

#[derive(Serialize)]
struct Report<'a> {
    version: u32,
    remote: &'a str,
    workflows: &'a [SyncOutcome],
}

/// `checkpoint push`.
pub(crate) fn push(ctx: &Ctx, args: &PushArgs) -> Result<()> {
    let result = (|| {
        let remote = remote_name(ctx, args.remote.as_deref())?;
        let ids = if args.all {
            ctx.store.list()?
        } else {
            vec![ctx.workflow_id()?]
        };
        let outcomes = push_workflows(ctx, &remote, &ids)?;
        finish(ctx, &remote, &outcomes)
    })();
    if let (true, Err(err)) = (args.background, &result) {
        let id = ctx.workflow.as_deref().unwrap_or("all");
        remember_failed_push(ctx, id, &err.to_string());
    }
    result
}

/// `checkpoint pull`.
pub(crate) fn pull(ctx: &Ctx, args: &PullArgs) -> Result<()> {
    let remote = remote_name(ctx, args.remote.as_deref())?;
    let outcomes = pull_all(ctx, &remote, args)?;
    finish(ctx, &remote, &outcomes)
}

/// `checkpoint sync`: pull, then push what is ahead.
pub(crate) fn sync(ctx: &Ctx, args: &PullArgs) -> Result<()> {
    let remote = remote_name(ctx, args.remote.as_deref())?;
    let mut outcomes = pull_all(ctx, &remote, args)?;
    let ahead: Vec<WorkflowId> = outcomes
        .iter()
        .filter(|outcome| {
            matches!(
                outcome.action,
                SyncAction::Ahead | SyncAction::Resolved | SyncAction::NotOnRemote
            )
        })
        .map(|outcome| WorkflowId::new(&outcome.id))
        .collect::<checkpoint_core::Result<_>>()?;
    if !ahead.is_empty() {
        let pushed = push_workflows(ctx, &remote, &ahead)?;
        for outcome in pushed {
            if let Some(slot) = outcomes.iter_mut().find(|slot| slot.id == outcome.id) {
                *slot = outcome;
            }
        }
    }
    finish(ctx, &remote, &outcomes)
}

/// Prints the outcomes; a divergence or a rejected push is the command's error (exit 3).
fn finish(ctx: &Ctx, remote: &str, outcomes: &[SyncOutcome]) -> Result<()> {
    match ctx.format {
        Format::Json => output::emit_json(&Report {
            version: JSON_VERSION,
            remote,
            workflows: outcomes,
        })
        .into_diagnostic()?,
        _ => {
            let text: String = outcomes
                .iter()
                .filter(|outcome| {
                    !matches!(outcome.action, SyncAction::Diverged | SyncAction::Rejected)
                })
                .map(|outcome| format!("{}\n", outcome.message))
                .collect();
            output::emit(&text).into_diagnostic()?;
        }
    }
    let rejected: Vec<&SyncOutcome> = outcomes
        .iter()
        .filter(|outcome| outcome.action == SyncAction::Rejected)
        .collect();
    if let Some(first) = outcomes
        .iter()
        .find(|outcome| outcome.action == SyncAction::Diverged)
    {
        let more = outcomes
            .iter()
            .filter(|outcome| outcome.action == SyncAction::Diverged)
            .skip(1)
            .map(|outcome| format!("\n{}", outcome.message))
            .collect::<String>();
        let mergeable = first.mergeable == Some(true);
        return Err(Diverged {
            message: format!("{}{more}", first.message),
            help: format!(
                "nothing was changed; choose: `checkpoint pull --theirs` keeps the remote side (ours is kept as the workflow `<id>@local-<time>`), `--ours` keeps ours (theirs is kept as `<id>@remote-<time>`){}",
                if mergeable {
                    ", `--merge` applies both (each side touched different phases)"
                } else {
                    ""
                }
            ),
        }
        .into());
    }
    if !rejected.is_empty() {
        return Err(Rejected {
            message: rejected
                .iter()
                .map(|outcome| outcome.message.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        }
        .into());
    }
    Ok(())
}

fn pull_all(ctx: &Ctx, remote: &str, args: &PullArgs) -> Result<Vec<SyncOutcome>> {
    let repo = &Repo::new(&ctx.project_root);
    let ids = if args.all {
        repo.fetch(remote, None)?;
        let mut ids = ctx.store.list()?;
        for name in repo.tracked_ids(remote)? {
            // A ref name comes from outside: it is taken as any new workflow's id would be.
            match WorkflowId::new(&name) {
                Ok(id) if ids.contains(&id) => {}
                Ok(id) if id.reserved().is_some() => output::warn(&format!(
                    "skipped `{REMOTE_PREFIX}{}` on `{remote}`: the store uses the name `{}` for itself",
                    output::escape(&name),
                    output::escape(&name)
                )),
                Ok(id) => ids.push(id),
                Err(err) => output::warn(&format!(
                    "skipped `{REMOTE_PREFIX}{}` on `{remote}`: {err}",
                    output::escape(&name)
                )),
            }
        }
        ids.sort();
        ids
    } else {
        let id = ctx.workflow_id()?;
        return Ok(vec![pull_workflow(ctx, remote, &id, args.keep())?]);
    };
    ids.iter()
        .map(|id| pull_fetched(ctx, repo, remote, id, args.keep()))
        .collect()
}
