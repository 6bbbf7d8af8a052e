//! Pulling and pushing workflows to a git remote (`refs/checkpoints/<id>`), shared by
//! `checkpoint push`, `pull` and `sync`, the runner's `--sync`, the background push after a
//! completed phase, and the report of failed background pushes that runs on every command.
//!
//! A pull whose [`SyncOutcome`] is [`SyncAction::Diverged`] stops a run, and a push whose
//! outcome is [`SyncAction::Rejected`] asks for a pull.

use std::{fmt, path::PathBuf, process::Stdio};

use checkpoint_core::{
    WorkflowId,
    journal::{self, Entry},
    sync::{self, Change, Comparison, Divergence, Keep},
};
use miette::{IntoDiagnostic, Result};
use serde::Serialize;

use crate::{
    ctx::Ctx,
    output,
    remote::{JOURNAL_BLOB, NewCommit, PushResult, REMOTE_PREFIX, Repo, STATE_BLOB},
};

/// What a pull or push did to one workflow, as JSON spells it in `action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SyncAction {
    /// Both sides hold the same journal.
    UpToDate,
    /// The remote's new entries were applied here.
    Pulled,
    /// The workflow was new here, and was created from the remote's copy.
    Created,
    /// This side has entries the remote lacks: a push sends them.
    Ahead,
    /// A divergence was resolved as `--theirs`, `--ours` or `--merge` said.
    Resolved,
    /// Both sides went on from a common entry: a person chooses.
    Diverged,
    /// The remote now holds this side's journal.
    Pushed,
    /// The remote moved since the last pull: nothing was pushed.
    Rejected,
    /// The remote has no copy of the workflow yet.
    NotOnRemote,
}

impl SyncAction {
    /// The action as JSON spells it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::UpToDate => "up_to_date",
            Self::Pulled => "pulled",
            Self::Created => "created",
            Self::Ahead => "ahead",
            Self::Resolved => "resolved",
            Self::Diverged => "diverged",
            Self::Pushed => "pushed",
            Self::Rejected => "rejected",
            Self::NotOnRemote => "not_on_remote",
        }
    }
}

impl fmt::Display for SyncAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a pull or push did to one workflow.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SyncOutcome {
    pub id: String,
    pub action: SyncAction,
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

impl SyncOutcome {
    pub(crate) fn new(id: &WorkflowId, action: SyncAction, seq: u64, message: String) -> Self {
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

/// Pulls one workflow from `remote` (fetch included), resolving a divergence as `keep` says;
/// a divergence with no choice is an [`SyncOutcome`] with the action `diverged`.
pub(crate) fn pull_workflow(
    ctx: &Ctx,
    remote: &str,
    id: &WorkflowId,
    keep: Option<Keep>,
) -> Result<SyncOutcome> {
    let repo = Repo::new(&ctx.project_root);
    repo.fetch(remote, Some(std::slice::from_ref(id)))?;
    pull_fetched(ctx, &repo, remote, id, keep)
}

pub(crate) fn pull_fetched(
    ctx: &Ctx,
    repo: &Repo,
    remote: &str,
    id: &WorkflowId,
    keep: Option<Keep>,
) -> Result<SyncOutcome> {
    let exists = ctx.store.list()?.contains(id);
    let mut local = if exists {
        ctx.store.journal(id)?.entries
    } else {
        Vec::new()
    };
    sync::make_portable(&mut local);
    let local_seq = local.last().map_or(0, |entry| entry.seq);
    let Some(remote_entries) = remote_journal(repo, remote, id)? else {
        return Ok(SyncOutcome::new(
            id,
            SyncAction::NotOnRemote,
            local_seq,
            format!("`{id}`: not on `{remote}` yet; `checkpoint push` puts it there"),
        ));
    };
    if !exists {
        if let Some(name) = id.reserved() {
            return Err(crate::failure::Failure::new(
                "checkpoint::reserved_id",
                format!("`{id}` on `{remote}` cannot be pulled: the store uses the name `{name}` for itself"),
            )
            .with_help(format!(
                "rename it on the remote, or delete it: `git push {remote} --delete {REMOTE_PREFIX}{id}`"
            ))
            .into());
        }
        let loaded = ctx.store.adopt(id, None, &remote_entries, ctx.now)?;
        let mut outcome = SyncOutcome::new(
            id,
            SyncAction::Created,
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
        Comparison::Same => Ok(SyncOutcome::new(
            id,
            SyncAction::UpToDate,
            local_seq,
            format!("`{id}`: up to date with `{remote}` (entry {local_seq})"),
        )),
        Comparison::LocalAhead(n) => {
            let mut outcome = SyncOutcome::new(
                id,
                SyncAction::Ahead,
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
            let mut outcome = SyncOutcome::new(
                id,
                SyncAction::Pulled,
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
fn diverged(id: &WorkflowId, remote: &str, local_seq: u64, divergence: Divergence) -> SyncOutcome {
    let mut outcome = SyncOutcome::new(
        id,
        SyncAction::Diverged,
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
) -> Result<SyncOutcome> {
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
    let journal_path = ctx.store.journal_path(id);
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
    let mut outcome = SyncOutcome::new(
        id,
        SyncAction::Resolved,
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
///
/// A push refused because the remote's ref is not where this clone last saw it is looked at
/// again once, from a fresh fetch of that ref: when the remote holds a prefix of this copy's
/// journal (an earlier push landed, but its process was killed before it recorded so), the
/// push is finished with the lease it now knows; otherwise it stays `rejected`.
pub(crate) fn push_workflows(
    ctx: &Ctx,
    remote: &str,
    ids: &[WorkflowId],
) -> Result<Vec<SyncOutcome>> {
    let mut outcomes = push_once(ctx, remote, ids)?;
    let refused: Vec<WorkflowId> = ids
        .iter()
        .filter(|id| {
            outcomes
                .iter()
                .any(|outcome| outcome.id == id.as_str() && outcome.action == SyncAction::Rejected)
        })
        .cloned()
        .collect();
    if refused.is_empty() {
        return Ok(outcomes);
    }
    Repo::new(&ctx.project_root).fetch(remote, Some(&refused))?;
    for again in push_once(ctx, remote, &refused)? {
        if let Some(outcome) = outcomes.iter_mut().find(|outcome| outcome.id == again.id) {
            *outcome = again;
        }
    }
    Ok(outcomes)
}

/// One attempt of [`push_workflows`], against the tracking refs as they are.
fn push_once(ctx: &Ctx, remote: &str, ids: &[WorkflowId]) -> Result<Vec<SyncOutcome>> {
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
                    outcomes.push(SyncOutcome::new(
                        id,
                        SyncAction::UpToDate,
                        local_seq,
                        format!("`{id}`: `{remote}` already has entry {local_seq}"),
                    ));
                    continue;
                }
                Comparison::LocalAhead(_) => {}
                Comparison::RemoteAhead(_) | Comparison::Diverged(_) => {
                    outcomes.push(SyncOutcome::new(
                        id,
                        SyncAction::Rejected,
                        local_seq,
                        format!("`{id}`: not pushed: `{remote}` has entries this copy lacks"),
                    ));
                    continue;
                }
            }
        }
        // The state is the replay of the very entries pushed, even if a write lands meanwhile.
        let journal_path = ctx.store.journal_path(id);
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
        outcomes.push(SyncOutcome::new(
            id,
            SyncAction::Pushed,
            local_seq,
            String::new(),
        ));
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
                outcome.action = SyncAction::Rejected;
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
    for message in ctx.store.take_failed_pushes() {
        output::warn(&format!(
            "{}; run `checkpoint push` to retry",
            message.trim_end()
        ));
    }
}

pub(crate) fn remember_failed_push(ctx: &Ctx, id: &str, reason: &str) {
    ctx.store.remember_failed_push(
        id,
        &format!(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The actions keep the spellings of the JSON documents and of their messages.
    #[test]
    fn actions_are_spelled_as_json_spells_them() {
        for action in [
            SyncAction::UpToDate,
            SyncAction::Pulled,
            SyncAction::Created,
            SyncAction::Ahead,
            SyncAction::Resolved,
            SyncAction::Diverged,
            SyncAction::Pushed,
            SyncAction::Rejected,
            SyncAction::NotOnRemote,
        ] {
            let json = serde_json::to_value(action).unwrap();
            assert_eq!(json, action.as_str());
            assert_eq!(action.to_string(), action.as_str());
        }
    }
}
