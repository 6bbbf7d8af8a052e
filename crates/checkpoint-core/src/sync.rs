//! Sync between two copies of a workflow's journal: how they compare, and how to bring two that
//! went on from a common entry back together without losing either side.
//!
//! Pure: the CLI brings the other side's journal (through git), and the store writes the result
//! ([`crate::store::Store::adopt`]). Every result keeps the remote journal as its prefix, so the
//! shared history only ever grows and a push is always a fast forward.

use std::{collections::BTreeSet, path::Path};

use chrono::{DateTime, Utc};

use crate::{
    error::{Error, Result},
    history,
    id::{PhaseId, WorkflowId},
    journal::{self, Entry},
    model::{Note, Workflow, WorkflowStatus},
    transition::Transition,
};

pub use crate::transition::Keep;

/// How a local journal compares with a remote one.
#[derive(Debug, Clone, PartialEq)]
pub enum Comparison {
    /// Both hold the same entries.
    Same,
    /// The local journal extends the remote one by this many entries: push next.
    LocalAhead(usize),
    /// The remote journal extends the local one by this many entries: append them.
    RemoteAhead(usize),
    /// Both went on from a common entry.
    Diverged(Divergence),
}

/// Where two journals parted, and what each side did since.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// The last entry both hold (0 when they share none).
    pub common_seq: u64,
    /// How many leading entries both hold.
    pub common_len: usize,
    /// Our entries since.
    pub ours: Vec<Change>,
    /// Their entries since.
    pub theirs: Vec<Change>,
}

/// One entry after a divergence, as a report shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Its sequence number.
    pub seq: u64,
    /// Its operation, as in the journal.
    pub op: &'static str,
    /// The phase it concerns, if any.
    pub phase: Option<PhaseId>,
}

/// What [`resolve`] makes of a divergence.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The workflow's new journal: the remote one, the resolution, then (for `ours` and
    /// `merge`) our entries renumbered.
    pub journal: Vec<Entry>,
    /// The side not kept, as a workflow of its own: its id and whole journal.
    pub fork: Option<(WorkflowId, Vec<Entry>)>,
}

/// Drops what only makes sense on this machine (the worktree's absolute path in `init`,
/// `snapshot` and `sync_resolve` states) from entries about to be compared or shared, and
/// redacts them.
pub fn make_portable(entries: &mut [Entry]) {
    for entry in entries {
        // What leaves the machine holds no secret the journal redacts today, even in an entry
        // an older version journaled before its rule existed (a no-op on a redacted entry).
        crate::redact::transition(&mut entry.transition);
        match &mut entry.transition {
            Transition::Init { workflow }
            | Transition::Snapshot { workflow, .. }
            | Transition::SyncResolve {
                base: Some(workflow),
                ..
            } => make_state_portable(workflow),
            _ => {}
        }
    }
}

/// Drops what only makes sense on this machine from a state about to be shared.
pub fn make_state_portable(workflow: &mut Workflow) {
    if let Some(git) = &mut workflow.git {
        git.worktree = None;
    }
}

/// Compares the local journal with the remote one, entry by entry (both portable, see
/// [`make_portable`]).
pub fn compare(local: &[Entry], remote: &[Entry]) -> Comparison {
    let common_len = local
        .iter()
        .zip(remote)
        .take_while(|(ours, theirs)| ours == theirs)
        .count();
    match (common_len == local.len(), common_len == remote.len()) {
        (true, true) => Comparison::Same,
        (false, true) => Comparison::LocalAhead(local.len() - common_len),
        (true, false) => Comparison::RemoteAhead(remote.len() - common_len),
        (false, false) => Comparison::Diverged(Divergence {
            common_seq: common_len.checked_sub(1).map_or(0, |last| local[last].seq),
            common_len,
            ours: changes(&local[common_len..]),
            theirs: changes(&remote[common_len..]),
        }),
    }
}

/// Why the two sides of a divergence cannot be merged, or `None` when they touched different
/// phases and nothing else that conflicts.
pub fn merge_conflict(divergence: &Divergence) -> Option<String> {
    let (ours, ours_status) = touched(&divergence.ours);
    let (theirs, theirs_status) = touched(&divergence.theirs);
    if let Some(change) = divergence
        .ours
        .iter()
        .chain(&divergence.theirs)
        .find(|change| matches!(change.op, "init" | "snapshot" | "sync_resolve"))
    {
        return Some(format!(
            "entry {} (`{}`) replaces the whole state",
            change.seq, change.op
        ));
    }
    if ours_status && theirs_status {
        return Some("both sides paused, resumed or abandoned the workflow".into());
    }
    let both: Vec<String> = ours
        .intersection(&theirs)
        .map(|phase| format!("`{phase}`"))
        .collect();
    (!both.is_empty()).then(|| format!("both sides changed {}", both.join(", ")))
}

/// Resolves a divergence found by [`compare`] the way `keep` says; `fork_id` names the workflow
/// that keeps the side not kept (unused for [`Keep::Merge`]). `path` names the journal in errors.
pub fn resolve(
    path: &Path,
    local: &[Entry],
    remote: &[Entry],
    divergence: &Divergence,
    keep: Keep,
    fork_id: WorkflowId,
    now: DateTime<Utc>,
) -> Result<Resolved> {
    let common_len = divergence.common_len;
    let remote_last = remote.last().map_or(0, |entry| entry.seq);
    let (base, fork_side) = match keep {
        Keep::Theirs => (None, Some(local)),
        Keep::Ours => {
            let base = match divergence.common_seq {
                0 => None,
                seq => Some(Box::new(history::state_at(path, local, seq)?)),
            };
            (base, Some(remote))
        }
        Keep::Merge => {
            if let Some(conflict) = merge_conflict(divergence) {
                return Err(Error::transition(
                    format!("cannot merge: {conflict}"),
                    "keep one side with `--theirs` or `--ours`; the other is kept as a fork",
                ));
            }
            (None, None)
        }
    };
    let fork_id = fork_side.map(|_| fork_id);
    let mut journal = remote.to_vec();
    journal.push(Entry {
        seq: remote_last + 1,
        at: now,
        transition: Transition::SyncResolve {
            keep,
            diverged_at: divergence.common_seq,
            fork: fork_id.clone(),
            base,
        },
    });
    if keep != Keep::Theirs {
        for (n, entry) in local[common_len..].iter().enumerate() {
            journal.push(Entry {
                seq: remote_last + 2 + n as u64,
                at: entry.at,
                transition: entry.transition.clone(),
            });
        }
    }
    // The result must replay: a merge whose sides depend on each other is refused here.
    if let Err(err) = journal::replay(path, None, &journal) {
        return Err(Error::transition(
            format!(
                "cannot {keep} after the divergence at entry {}: {err}",
                divergence.common_seq
            ),
            "keep one side with `--theirs` or `--ours`; the other is kept as a fork",
        ));
    }
    let fork = match (fork_id, fork_side) {
        (Some(id), Some(side)) => Some((id.clone(), fork(path, side, id, divergence, now)?)),
        _ => None,
    };
    Ok(Resolved { journal, fork })
}

/// The journal of a fork: `side` whole, then a snapshot that gives it its own id.
fn fork(
    path: &Path,
    side: &[Entry],
    id: WorkflowId,
    divergence: &Divergence,
    now: DateTime<Utc>,
) -> Result<Vec<Entry>> {
    let mut state: Workflow = journal::replay(path, None, side)?.ok_or_else(|| {
        Error::transition(
            "the journal to keep as a fork has no `init`",
            "pull again; the remote journal may be incomplete",
        )
    })?;
    let from = state.id.clone();
    state.id = id;
    // The fork is a record of the side not kept: finished, so that commands that pick the only
    // unfinished workflow still mean the one that goes on.
    state.status = WorkflowStatus::Abandoned;
    state.context.notes.push(Note {
        text: format!(
            "the sync of `{from}` after entry {} did not keep this side; it is kept here whole",
            divergence.common_seq
        ),
        at: now,
    });
    let mut entries = side.to_vec();
    entries.push(Entry {
        seq: side.last().map_or(0, |entry| entry.seq) + 1,
        at: now,
        transition: Transition::Snapshot {
            workflow: Box::new(state),
            reason: format!(
                "kept as a fork of `{from}` when a sync diverged after entry {}",
                divergence.common_seq
            ),
        },
    });
    Ok(entries)
}

fn changes(entries: &[Entry]) -> Vec<Change> {
    entries
        .iter()
        .map(|entry| Change {
            seq: entry.seq,
            op: entry.transition.op(),
            phase: entry.transition.phase().cloned(),
        })
        .collect()
}

/// The phases a side touched, and whether it changed the workflow's own status.
fn touched(changes: &[Change]) -> (BTreeSet<&PhaseId>, bool) {
    let phases = changes.iter().filter_map(|change| change.phase.as_ref());
    let status = changes
        .iter()
        .any(|change| matches!(change.op, "pause" | "unpause" | "abandon"));
    (phases.collect(), status)
}

#[cfg(test)]
mod tests;
