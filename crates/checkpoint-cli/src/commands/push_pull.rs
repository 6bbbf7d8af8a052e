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
    services::{
        handoff::{Send, send as send_session},
        handoff_receive::{Receive, receive as receive_session},
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
    /// Send a session too (the workflow's last one, or the one named): its uncommitted work
    /// and its redacted transcript, to go on on another machine (`pull --session`)
    #[arg(long, value_name = "SESSION_ID", num_args = 0..=1, default_missing_value = "")]
    pub session: Option<String>,
    /// With `--session`: the session's sub-agents' transcripts too
    #[arg(long, requires = "session")]
    pub with_subagents: bool,
    /// With `--session`: do not ask at a terminal the first time for a remote
    #[arg(long, short = 'y')]
    pub yes: bool,
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
    /// Put a session sent with `push --session` in place here: its uncommitted work and its
    /// transcript (the workflow's last hand-off, or the session named)
    #[arg(long, value_name = "SESSION_ID", num_args = 0..=1, default_missing_value = "", conflicts_with = "all")]
    pub session: Option<String>,
    /// With `--session`: write over local uncommitted changes to the same files (kept in an
    /// undo snapshot: `checkpoint redo` puts them back)
    #[arg(long, requires = "session")]
    pub force: bool,
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
    /// What `--session` sent or put in place, one message per workflow.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    sessions: &'a [String],
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
        let sessions = send_sessions(ctx, &remote, &ids, args)?;
        let outcomes = push_workflows(ctx, &remote, &ids)?;
        finish(ctx, &remote, &outcomes, &sessions)
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
    let mut sessions = Vec::new();
    if let Some(session) = &args.session
        && let [outcome] = outcomes.as_slice()
        && outcome.action != SyncAction::Diverged
    {
        let id = WorkflowId::new(&outcome.id)?;
        let receive = Receive {
            session: Some(session.as_str()).filter(|session| !session.is_empty()),
            force: args.force,
        };
        sessions.push(receive_session(ctx, &remote, &id, &receive)?);
    }
    finish(ctx, &remote, &outcomes, &sessions)
}

/// `push --session` (or `[sync] session = true`): each workflow's session sent before the
/// workflow, whose journal then holds the hand-off.
fn send_sessions(
    ctx: &Ctx,
    remote: &str,
    ids: &[WorkflowId],
    args: &PushArgs,
) -> Result<Vec<String>> {
    if args.session.is_none() && !ctx.config.sync.session {
        return Ok(Vec::new());
    }
    let named = args
        .session
        .as_deref()
        .filter(|session| !session.is_empty());
    if named.is_some() && args.all {
        return Err(miette::miette!(
            help = "name the workflow: `checkpoint push --workflow <id> --session <session>`",
            "`--all` sends each workflow's last session: a session id names one"
        ));
    }
    let send = Send {
        session: named,
        with_subagents: args.with_subagents,
        yes: args.yes,
    };
    let mut sent = Vec::new();
    for id in ids {
        match send_session(ctx, remote, id, &send) {
            Ok(message) => sent.push(message),
            // `--all`: a workflow with no session to send is said, the others go.
            Err(err) if args.all => output::warn(&format!("`{id}`: no session sent: {err}")),
            Err(err) => return Err(err),
        }
    }
    Ok(sent)
}

/// `checkpoint sync`: pull, then push what is ahead.
pub(crate) fn sync(ctx: &Ctx, args: &PullArgs) -> Result<()> {
    let remote = remote_name(ctx, args.remote.as_deref())?;
    if args.session.is_some() {
        return Err(miette::miette!(
            help = "`checkpoint pull --session`, then `checkpoint push`",
            "`sync` does not move sessions"
        ));
    }
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
    finish(ctx, &remote, &outcomes, &[])
}

/// Prints the outcomes; a divergence or a rejected push is the command's error (exit 3).
fn finish(ctx: &Ctx, remote: &str, outcomes: &[SyncOutcome], sessions: &[String]) -> Result<()> {
    match ctx.format {
        Format::Json => output::emit_json(&Report {
            version: JSON_VERSION,
            remote,
            workflows: outcomes,
            sessions,
        })
        .into_diagnostic()?,
        _ => {
            let text: String = outcomes
                .iter()
                .filter(|outcome| {
                    !matches!(outcome.action, SyncAction::Diverged | SyncAction::Rejected)
                })
                .map(|outcome| format!("{}\n", outcome.message))
                .chain(sessions.iter().map(|session| format!("{session}\n")))
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
        waiting_sessions(repo, remote);
        ids
    } else {
        let id = ctx.workflow_id()?;
        return Ok(vec![pull_workflow(ctx, remote, &id, args.keep())?]);
    };
    ids.iter()
        .map(|id| pull_fetched(ctx, repo, remote, id, args.keep()))
        .collect()
}

/// `pull --all`: fetches the sessions sent to `remote` and says how to take each.
fn waiting_sessions(repo: &Repo, remote: &str) {
    use crate::remote::session::tracking_session_prefix;
    let listed = repo
        .fetch_handoff(remote, "*")
        .and_then(|_| repo.refs_under(&tracking_session_prefix(remote)));
    match listed {
        Ok(refs) => {
            for name in refs {
                if let Some((workflow, session)) = name.split_once('/') {
                    output::note(&format!(
                        "session {} of `{}` is on `{remote}`: `checkpoint pull --workflow {} --session {}` puts it in place",
                        output::escape(session),
                        output::escape(workflow),
                        output::escape(workflow),
                        output::escape(session)
                    ));
                }
            }
        }
        Err(err) => output::warn(&format!(
            "the sessions on `{remote}` were not fetched: {err}"
        )),
    }
}
