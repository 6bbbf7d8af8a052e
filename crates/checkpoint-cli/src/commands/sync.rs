//! `checkpoint push`, `pull` and `sync`: a workflow's state on a git remote as
//! `refs/checkpoints/<id>`, continued on another machine.
//!
//! [`remote_name`], [`pull_workflow`] and [`push_workflows`] are also what a runner calls before
//! and after each session (`checkpoint run --sync`): a pull whose [`Outcome`] is `diverged`
//! stops the run, and a push whose outcome is `rejected` asks for a pull.

use std::{fs, path::PathBuf, process::Stdio};

use checkpoint_core::{
    WorkflowId,
    journal::{self, Entry},
    sync::{self, Change, Comparison, Divergence, Keep},
};
use clap::Args;
use miette::{Diagnostic, IntoDiagnostic, Result};
use serde::Serialize;

use crate::{
    ctx::Ctx,
    output::{self, Format, JSON_VERSION},
    remote::{JOURNAL_BLOB, NewCommit, PushResult, REMOTE_PREFIX, Repo, STATE_BLOB},
};

/// Where a background push leaves its failure for the next command to report.
const FAILED_PUSH_DIR: &str = ".sync-failed";

/// Arguments of `checkpoint push`.
#[derive(Debug, Args)]
pub struct PushArgs {
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
pub struct PullArgs {
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

/// What a pull or push did to one workflow.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Outcome {
    pub id: String,
    /// `up_to_date`, `pulled`, `created`, `ahead`, `resolved`, `diverged`, `pushed`,
    /// `rejected` or `not_on_remote`.
    pub action: &'static str,
    /// How many entries moved.
    pub entries: usize,
    /// The local journal's last entry afterwards.
    pub seq: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep: Option<Keep>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fork: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diverged_at: Option<u64>,
    /// For a divergence: whether `--merge` can apply both sides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mergeable: Option<bool>,
    #[serde(
        skip_serializing_if = "Vec::is_empty",
        serialize_with = "crate::json::divergent_entries"
    )]
    pub ours: Vec<Change>,
    #[serde(
        skip_serializing_if = "Vec::is_empty",
        serialize_with = "crate::json::divergent_entries"
    )]
    pub theirs: Vec<Change>,
    #[serde(skip)]
    pub message: String,
}

impl Outcome {
    fn new(id: &WorkflowId, action: &'static str, seq: u64, message: String) -> Self {
        Self {
            id: id.to_string(),
            action,
            entries: 0,
            seq,
            commit: None,
            keep: None,
            fork: None,
            diverged_at: None,
            mergeable: None,
            ours: Vec::new(),
            theirs: Vec::new(),
            message,
        }
    }
}

#[derive(Serialize)]
struct Report<'a> {
    version: u32,
    remote: &'a str,
    workflows: &'a [Outcome],
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
        .filter(|outcome| matches!(outcome.action, "ahead" | "resolved" | "not_on_remote"))
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
fn finish(ctx: &Ctx, remote: &str, outcomes: &[Outcome]) -> Result<()> {
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
                .filter(|outcome| !matches!(outcome.action, "diverged" | "rejected"))
                .map(|outcome| format!("{}\n", outcome.message))
                .collect();
            output::emit(&text).into_diagnostic()?;
        }
    }
    let rejected: Vec<&Outcome> = outcomes
        .iter()
        .filter(|outcome| outcome.action == "rejected")
        .collect();
    if let Some(first) = outcomes.iter().find(|outcome| outcome.action == "diverged") {
        let more = outcomes
            .iter()
            .filter(|outcome| outcome.action == "diverged")
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

/// The remote a sync uses: `remote` when given, else the current branch's upstream remote,
/// else `origin`.
pub(crate) fn remote_name(ctx: &Ctx, remote: Option<&str>) -> Result<String> {
    match remote {
        Some(remote) => {
            crate::remote::check_remote(remote, "given on the command line")?;
            Ok(remote.to_owned())
        }
        None => Repo::new(&ctx.project_root).default_remote(),
    }
}

fn pull_all(ctx: &Ctx, remote: &str, args: &PullArgs) -> Result<Vec<Outcome>> {
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

/// Pulls one workflow from `remote` (fetch included), resolving a divergence as `keep` says;
/// a divergence with no choice is an [`Outcome`] with the action `diverged`.
pub(crate) fn pull_workflow(
    ctx: &Ctx,
    remote: &str,
    id: &WorkflowId,
    keep: Option<Keep>,
) -> Result<Outcome> {
    let repo = Repo::new(&ctx.project_root);
    repo.fetch(remote, Some(std::slice::from_ref(id)))?;
    pull_fetched(ctx, &repo, remote, id, keep)
}

fn pull_fetched(
    ctx: &Ctx,
    repo: &Repo,
    remote: &str,
    id: &WorkflowId,
    keep: Option<Keep>,
) -> Result<Outcome> {
    let exists = ctx.store.list()?.contains(id);
    let mut local = if exists {
        ctx.store.journal(id)?.entries
    } else {
        Vec::new()
    };
    sync::make_portable(&mut local);
    let local_seq = local.last().map_or(0, |entry| entry.seq);
    let Some(remote_entries) = remote_journal(repo, remote, id)? else {
        return Ok(Outcome::new(
            id,
            "not_on_remote",
            local_seq,
            format!("`{id}`: not on `{remote}` yet; `checkpoint push` puts it there"),
        ));
    };
    if !exists {
        if let Some(name) = id.reserved() {
            return Err(crate::failure::Failure::usage(
                "checkpoint::reserved_id",
                format!("`{id}` on `{remote}` cannot be pulled: the store uses the name `{name}` for itself"),
            )
            .with_help(format!(
                "rename it on the remote, or delete it: `git push {remote} --delete {REMOTE_PREFIX}{id}`"
            ))
            .into());
        }
        let loaded = ctx.store.adopt(id, None, &remote_entries, ctx.now)?;
        let mut outcome = Outcome::new(
            id,
            "created",
            loaded.workflow.seq,
            format!(
                "`{id}`: created from `{remote}` ({} entries)",
                remote_entries.len()
            ),
        );
        outcome.entries = remote_entries.len();
        return Ok(outcome);
    }
    match sync::compare(&local, &remote_entries) {
        Comparison::Same => Ok(Outcome::new(
            id,
            "up_to_date",
            local_seq,
            format!("`{id}`: up to date with `{remote}` (entry {local_seq})"),
        )),
        Comparison::LocalAhead(n) => {
            let mut outcome = Outcome::new(
                id,
                "ahead",
                local_seq,
                format!(
                    "`{id}`: {n} {} ahead of `{remote}`; `checkpoint push` sends {}",
                    entries_word(n),
                    if n == 1 { "it" } else { "them" }
                ),
            );
            outcome.entries = n;
            Ok(outcome)
        }
        Comparison::RemoteAhead(n) => {
            let loaded = ctx
                .store
                .adopt(id, Some(local_seq), &remote_entries, ctx.now)?;
            output::warn_redacted(loaded.redacted);
            let mut outcome = Outcome::new(
                id,
                "pulled",
                loaded.workflow.seq,
                format!(
                    "`{id}`: pulled {n} {} from `{remote}` (now at entry {})",
                    entries_word(n),
                    loaded.workflow.seq
                ),
            );
            outcome.entries = n;
            Ok(outcome)
        }
        Comparison::Diverged(divergence) => match keep {
            None => Ok(diverged(id, remote, local_seq, divergence)),
            Some(keep) => resolve(ctx, id, &local, &remote_entries, &divergence, keep),
        },
    }
}

/// What `pull` says of a divergence it was not told how to resolve.
fn diverged(id: &WorkflowId, remote: &str, local_seq: u64, divergence: Divergence) -> Outcome {
    let mut outcome = Outcome::new(
        id,
        "diverged",
        local_seq,
        format!(
            "`{id}` diverged from `{remote}` after entry {}: since then we have {}, they have {}",
            divergence.common_seq,
            describe(&divergence.ours),
            describe(&divergence.theirs)
        ),
    );
    outcome.diverged_at = Some(divergence.common_seq);
    outcome.mergeable = Some(sync::merge_conflict(&divergence).is_none());
    outcome.ours = divergence.ours;
    outcome.theirs = divergence.theirs;
    outcome
}

/// Resolves a divergence keeping one side; the other is kept as a fork workflow.
fn resolve(
    ctx: &Ctx,
    id: &WorkflowId,
    local: &[Entry],
    remote_entries: &[Entry],
    divergence: &Divergence,
    keep: Keep,
) -> Result<Outcome> {
    let local_seq = local.last().map_or(0, |entry| entry.seq);
    let side = if keep == Keep::Ours {
        "remote"
    } else {
        "local"
    };
    // Unique even for two resolutions within the same second: `-2`, `-3`… after the time.
    let base = format!("{id}@{side}-{}", ctx.now.format("%Y%m%dT%H%M%SZ"));
    let taken = ctx.store.list()?;
    let fork_id = (1..)
        .map(|n| match n {
            1 => WorkflowId::new(&base),
            n => WorkflowId::new(&format!("{base}-{n}")),
        })
        .find(|fork| fork.as_ref().map_or(true, |fork| !taken.contains(fork)))
        .expect("some suffix is free")?;
    let journal_path = ctx.store.workflow_dir(id).join("journal.jsonl");
    let resolved = sync::resolve(
        &journal_path,
        local,
        remote_entries,
        divergence,
        keep,
        fork_id,
        ctx.now,
    )?;
    // The side not kept is written first: whatever happens next, it is not lost.
    if let Some((fork_id, fork)) = &resolved.fork {
        ctx.store.adopt(fork_id, None, fork, ctx.now)?;
    }
    let loaded = ctx
        .store
        .adopt(id, Some(local_seq), &resolved.journal, ctx.now)?;
    let fork = resolved.fork.map(|(fork_id, _)| fork_id.to_string());
    let mut outcome = Outcome::new(
        id,
        "resolved",
        loaded.workflow.seq,
        format!(
            "`{id}`: kept {keep} after the divergence at entry {} (now at entry {}){}; `checkpoint push` shares it",
            divergence.common_seq,
            loaded.workflow.seq,
            fork.as_ref()
                .map(|fork| format!("; the other side is kept as the workflow `{fork}`"))
                .unwrap_or_default()
        ),
    );
    outcome.entries = resolved.journal.len();
    outcome.keep = Some(keep);
    outcome.fork = fork;
    outcome.diverged_at = Some(divergence.common_seq);
    Ok(outcome)
}

/// Pushes each workflow in `ids` that is ahead of where the last pull saw `remote`, in one
/// `git push`; a workflow the remote moved on from is `rejected`.
pub(crate) fn push_workflows(ctx: &Ctx, remote: &str, ids: &[WorkflowId]) -> Result<Vec<Outcome>> {
    let repo = Repo::new(&ctx.project_root);
    let mut outcomes = Vec::with_capacity(ids.len());
    let mut pending = Vec::new();
    let tracked = repo.read_tracked(remote, ids)?;
    for (id, tracked) in ids.iter().zip(tracked) {
        let mut local = ctx.store.journal(id)?.entries;
        sync::make_portable(&mut local);
        let local_seq = local.last().map_or(0, |entry| entry.seq);
        if let Some(tracked) = &tracked {
            let seen = parse_remote(remote, id, &tracked.journal)?;
            match sync::compare(&local, &seen) {
                Comparison::Same => {
                    outcomes.push(Outcome::new(
                        id,
                        "up_to_date",
                        local_seq,
                        format!("`{id}`: `{remote}` already has entry {local_seq}"),
                    ));
                    continue;
                }
                Comparison::LocalAhead(_) => {}
                Comparison::RemoteAhead(_) | Comparison::Diverged(_) => {
                    outcomes.push(Outcome::new(
                        id,
                        "rejected",
                        local_seq,
                        format!("`{id}`: not pushed: `{remote}` has entries this copy lacks"),
                    ));
                    continue;
                }
            }
        }
        // The state is the replay of the very entries pushed, even if a write lands meanwhile.
        let journal_path = ctx.store.workflow_dir(id).join("journal.jsonl");
        let workflow = match journal::replay(&journal_path, None, &local)? {
            Some(workflow) => workflow,
            None => {
                let mut workflow = ctx.store.load(id)?.workflow;
                sync::make_state_portable(&mut workflow);
                workflow
            }
        };
        let journal_text: String = local.iter().map(Entry::to_line).collect();
        let mut state_text = serde_json::to_vec_pretty(&workflow).into_diagnostic()?;
        state_text.push(b'\n');
        outcomes.push(Outcome::new(id, "pushed", local_seq, String::new()));
        pending.push((
            id.clone(),
            journal_text,
            state_text,
            tracked.map(|tracked| tracked.commit),
            format!("checkpoint: {id} at entry {local_seq}"),
        ));
    }
    let files: Vec<[(&str, &[u8]); 2]> = pending
        .iter()
        .map(|(_, journal, state, _, _)| {
            [
                (JOURNAL_BLOB, journal.as_bytes()),
                (STATE_BLOB, state.as_slice()),
            ]
        })
        .collect();
    let commits: Vec<NewCommit<'_>> = pending
        .iter()
        .zip(&files)
        .map(|((id, _, _, parent, message), files)| NewCommit {
            id,
            files,
            parent: parent.as_deref(),
            message,
        })
        .collect();
    let shas = if commits.is_empty() {
        Vec::new()
    } else {
        repo.commit_all(&commits, ctx.now)?
    };
    let updates: Vec<(WorkflowId, String, Option<String>)> = pending
        .iter()
        .zip(shas)
        .map(|((id, _, _, parent, _), sha)| (id.clone(), sha, parent.clone()))
        .collect();
    if updates.is_empty() {
        return Ok(outcomes);
    }
    let results = repo.push(remote, &updates)?;
    for ((id, commit, _), result) in updates.iter().zip(results) {
        let outcome = outcomes
            .iter_mut()
            .find(|outcome| outcome.id == id.as_str())
            .expect("every update has its outcome");
        match result {
            PushResult::Updated => {
                outcome.message = format!(
                    "`{id}`: pushed entry {} to `{remote}` as `{REMOTE_PREFIX}{id}` ({})",
                    outcome.seq,
                    output::short_sha(commit)
                );
            }
            PushResult::Rejected(reason) => {
                outcome.action = "rejected";
                outcome.commit = None;
                outcome.message =
                    format!("`{id}`: not pushed: `{remote}` moved since the last pull ({reason})");
            }
        }
    }
    Ok(outcomes)
}

/// Starts `checkpoint push` for `id` in the background, detached from this process and its
/// terminal: the command that completed a phase returns at once, and a failure is reported by
/// the next command.
pub(crate) fn push_in_background(ctx: &Ctx, id: &WorkflowId) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut command = std::process::Command::new(exe);
    command
        .args(["push", "--background", "--workflow", id.as_str(), "--dir"])
        .arg(ctx.store.root())
        .current_dir(&ctx.project_root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    if let Err(err) = command.spawn() {
        remember_failed_push(ctx, id.as_str(), &err.to_string());
    }
}

/// Says on stderr which background pushes failed since the last command, once.
pub(crate) fn report_failed_pushes(ctx: &Ctx) {
    let dir = ctx.store.root().join(FAILED_PUSH_DIR);
    let Ok(entries) = fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if let Ok(message) = fs::read_to_string(&path) {
            output::warn(&format!(
                "{}; run `checkpoint push` to retry",
                message.trim_end()
            ));
        }
        let _ = fs::remove_file(&path);
    }
}

fn remember_failed_push(ctx: &Ctx, id: &str, reason: &str) {
    let dir: PathBuf = ctx.store.root().join(FAILED_PUSH_DIR);
    let _ = fs::create_dir_all(&dir);
    let _ = fs::write(
        dir.join(id),
        format!(
            "the background push of `{id}` at {} failed: {reason}\n",
            ctx.now.to_rfc3339()
        ),
    );
}

/// The journal of `id` where the last fetch saw it on `remote`, or `None` when it is not there.
fn remote_journal(repo: &Repo, remote: &str, id: &WorkflowId) -> Result<Option<Vec<Entry>>> {
    let tracked = repo.read_tracked(remote, std::slice::from_ref(id))?;
    match tracked.into_iter().next().flatten() {
        Some(tracked) => Ok(Some(parse_remote(remote, id, &tracked.journal)?)),
        None => Ok(None),
    }
}

/// The entries of a journal read from `remote`; one that does not parse is the remote's copy
/// damaged, not the local one.
fn parse_remote(remote: &str, id: &WorkflowId, bytes: &[u8]) -> Result<Vec<Entry>> {
    let name = PathBuf::from(format!("{remote}:{REMOTE_PREFIX}{id}:{JOURNAL_BLOB}"));
    let parsed = journal::parse(&name, bytes).map_err(|err| {
        crate::remote::remote_damaged(remote, id, &format!("its `{JOURNAL_BLOB}`: {err}"))
    })?;
    if parsed.torn.is_some() {
        return Err(crate::remote::remote_damaged(
            remote,
            id,
            &format!(
                "its `{JOURNAL_BLOB}` ends in a torn line (a push only ever sends complete entries)"
            ),
        ));
    }
    // Entries that parse but do not replay (a forged or cut journal) are the remote's damage
    // too, found before anything is written here.
    match journal::replay(&name, None, &parsed.entries) {
        Ok(Some(_)) => Ok(parsed.entries),
        Ok(None) => Err(crate::remote::remote_damaged(
            remote,
            id,
            &format!("its `{JOURNAL_BLOB}` holds no workflow"),
        )),
        Err(err) => Err(crate::remote::remote_damaged(
            remote,
            id,
            &format!(
                "its `{JOURNAL_BLOB}` does not replay: {}",
                first_line(&err.to_string())
            ),
        )),
    }
}

/// The message of an error about a remote journal, without the local path it names.
fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or_default()
}

fn describe(changes: &[Change]) -> String {
    let shown: Vec<String> = changes
        .iter()
        .take(5)
        .map(|change| match &change.phase {
            Some(phase) => format!("{} `{}` `{phase}`", change.seq, change.op),
            None => format!("{} `{}`", change.seq, change.op),
        })
        .collect();
    let more = changes.len().saturating_sub(shown.len());
    format!(
        "{} {} ({}{})",
        changes.len(),
        entries_word(changes.len()),
        shown.join(", "),
        if more > 0 {
            format!(", and {more} more")
        } else {
            String::new()
        }
    )
}

fn entries_word(n: usize) -> &'static str {
    if n == 1 { "entry" } else { "entries" }
}
