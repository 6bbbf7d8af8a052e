//! The working tree's snapshots as the journal records them, pure: their list numbered from 1
//! (`@n`), the last restore (what `redo` reverses), and the snapshot a target names (`@3`, a
//! phase id for its completion, `<phase>^` for its start, a journal sequence number).

use std::{fmt, str::FromStr};

use chrono::{DateTime, Utc};

use crate::{
    id::PhaseId,
    journal::Entry,
    transition::{RestoreKind, SnapshotReason, Transition},
};

/// The most changed paths a snapshot's journal entry names.
pub const MAX_PATHS: usize = 50;

/// One snapshot of the working tree, as journaled.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotRecord {
    /// Its number, from 1 in journal order.
    pub n: u64,
    /// Its journal entry's sequence number.
    pub seq: u64,
    /// When it was taken.
    pub at: DateTime<Utc>,
    /// Its git commit.
    pub commit: String,
    /// Why it was taken.
    pub reason: SnapshotReason,
    /// Its label, given by hand.
    pub label: Option<String>,
    /// The phase in progress, or the phase that completed.
    pub phase: Option<PhaseId>,
    /// The session that was running.
    pub session_id: Option<String>,
    /// The sub-agent whose stop took it.
    pub agent_id: Option<String>,
    /// How many files changed since the previous snapshot.
    pub files_changed: u64,
    /// The changed paths (at most [`MAX_PATHS`]).
    pub paths: Vec<String>,
    /// Lines added.
    pub added: u64,
    /// Lines removed.
    pub removed: u64,
}

/// A restore of files, as journaled.
#[derive(Debug, Clone, PartialEq)]
pub struct RestoreRecord {
    /// Its journal entry's sequence number.
    pub seq: u64,
    /// `undo` or `redo`.
    pub kind: RestoreKind,
    /// The snapshot taken just before.
    pub before: String,
    /// The commit put back.
    pub target: String,
    /// The paths it was limited to (empty: the whole tree).
    pub paths: Vec<String>,
}

/// The snapshots of a journal, in order.
pub fn list(entries: &[Entry]) -> Vec<SnapshotRecord> {
    let mut records = Vec::new();
    for entry in entries {
        if let Transition::FilesSnapshot {
            commit,
            reason,
            label,
            phase,
            session_id,
            agent_id,
            files_changed,
            paths,
            added,
            removed,
            left_out: _,
        } = &entry.transition
        {
            records.push(SnapshotRecord {
                n: records.len() as u64 + 1,
                seq: entry.seq,
                at: entry.at,
                commit: commit.clone(),
                reason: *reason,
                label: label.clone(),
                phase: phase.clone(),
                session_id: session_id.clone(),
                agent_id: agent_id.clone(),
                files_changed: *files_changed,
                paths: paths.clone(),
                added: *added,
                removed: *removed,
            });
        }
    }
    records
}

/// The last restore of files in the journal.
pub fn last_restore(entries: &[Entry]) -> Option<RestoreRecord> {
    entries
        .iter()
        .rev()
        .find_map(|entry| match &entry.transition {
            Transition::FilesRestore {
                kind,
                before,
                target,
                paths,
                files: _,
            } => Some(RestoreRecord {
                seq: entry.seq,
                kind: *kind,
                before: before.clone(),
                target: target.clone(),
                paths: paths.clone(),
            }),
            _ => None,
        })
}

/// A point of the workflow's history whose files a command means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `@n`: the n-th snapshot.
    Number(u64),
    /// A phase id: the files when it completed.
    PhaseEnd(PhaseId),
    /// `<phase>^`: the files when it last started.
    PhaseStart(PhaseId),
    /// A journal sequence number: the files as the last snapshot at or before it kept them.
    Seq(u64),
}

impl FromStr for Target {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let invalid = || {
            format!(
                "`{text}` names no snapshot: give `@<n>` (a snapshot's number), a phase id, `<phase>^` (its start) or a journal sequence number"
            )
        };
        if let Some(number) = text.strip_prefix('@') {
            return match number.parse::<u64>() {
                Ok(n) if n > 0 => Ok(Self::Number(n)),
                _ => Err(invalid()),
            };
        }
        if let Ok(seq) = text.parse::<u64>() {
            return Ok(Self::Seq(seq));
        }
        let (id, start) = match text.strip_suffix('^') {
            Some(id) => (id, true),
            None => (text, false),
        };
        let id: PhaseId = id.parse().map_err(|_| invalid())?;
        Ok(if start {
            Self::PhaseStart(id)
        } else {
            Self::PhaseEnd(id)
        })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "@{n}"),
            Self::PhaseEnd(phase) => write!(f, "{phase}"),
            Self::PhaseStart(phase) => write!(f, "{phase}^"),
            Self::Seq(seq) => write!(f, "{seq}"),
        }
    }
}

/// The snapshot `target` names, or why there is none.
pub fn resolve<'a>(
    entries: &[Entry],
    snapshots: &'a [SnapshotRecord],
    target: &Target,
) -> Result<&'a SnapshotRecord, String> {
    let at_or_before = |seq: u64, what: &str| {
        snapshots
            .iter()
            .rev()
            .find(|snapshot| snapshot.seq <= seq)
            .ok_or_else(|| format!("no snapshot of the files was taken at or before {what}"))
    };
    match target {
        Target::Number(n) => snapshots
            .get(usize::try_from(*n - 1).unwrap_or(usize::MAX))
            .ok_or_else(|| {
                format!(
                    "there is no snapshot @{n}: the workflow has {}",
                    snapshots.len()
                )
            }),
        Target::Seq(seq) => at_or_before(*seq, &format!("journal entry {seq}")),
        Target::PhaseEnd(phase) => {
            if let Some(snapshot) = snapshots.iter().rev().find(|snapshot| {
                snapshot.reason == SnapshotReason::PhaseComplete
                    && snapshot.phase.as_ref() == Some(phase)
            }) {
                return Ok(snapshot);
            }
            let seq = last_of(entries, phase, |transition| {
                matches!(transition, Transition::PhaseComplete { .. })
            })
            .ok_or_else(|| format!("phase `{phase}` never completed"))?;
            at_or_before(seq, &format!("the completion of phase `{phase}`"))
        }
        Target::PhaseStart(phase) => {
            let seq = last_of(entries, phase, |transition| {
                matches!(transition, Transition::PhaseStart { .. })
            })
            .ok_or_else(|| format!("phase `{phase}` never started"))?;
            at_or_before(seq, &format!("the start of phase `{phase}`"))
        }
    }
}

/// The sequence number of the last entry on `phase` that `kind` accepts.
fn last_of(entries: &[Entry], phase: &PhaseId, kind: impl Fn(&Transition) -> bool) -> Option<u64> {
    entries
        .iter()
        .rev()
        .find(|entry| kind(&entry.transition) && entry.transition.phase() == Some(phase))
        .map(|entry| entry.seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(seq: u64, transition: Transition) -> Entry {
        Entry {
            seq,
            at: DateTime::UNIX_EPOCH,
            transition,
        }
    }

    fn snapshot(commit: &str, reason: SnapshotReason, phase: Option<&str>) -> Transition {
        Transition::FilesSnapshot {
            commit: commit.to_owned(),
            reason,
            label: None,
            phase: phase.map(|phase| phase.parse().unwrap()),
            session_id: None,
            agent_id: None,
            files_changed: 1,
            paths: Vec::new(),
            added: 0,
            removed: 0,
            left_out: Vec::new(),
        }
    }

    fn journal() -> Vec<Entry> {
        let build: PhaseId = "build".parse().unwrap();
        vec![
            entry(2, snapshot("a", SnapshotReason::SessionStart, None)),
            entry(
                3,
                Transition::PhaseStart {
                    phase: build.clone(),
                    force: false,
                },
            ),
            entry(4, snapshot("b", SnapshotReason::TurnEnd, Some("build"))),
            entry(
                5,
                Transition::PhaseComplete {
                    phase: build,
                    artifacts: Vec::new(),
                    commit_sha: None,
                    force: false,
                },
            ),
            entry(6, snapshot("c", SnapshotReason::TurnEnd, None)),
        ]
    }

    #[test]
    fn targets_parse_in_every_form() {
        assert_eq!("@3".parse::<Target>(), Ok(Target::Number(3)));
        assert_eq!("12".parse::<Target>(), Ok(Target::Seq(12)));
        assert_eq!(
            "build".parse::<Target>(),
            Ok(Target::PhaseEnd("build".parse().unwrap()))
        );
        assert_eq!(
            "build^".parse::<Target>(),
            Ok(Target::PhaseStart("build".parse().unwrap()))
        );
        for bad in ["@0", "@x", "@", "^", "a b"] {
            assert!(bad.parse::<Target>().is_err(), "{bad}");
        }
    }

    #[test]
    fn targets_resolve_to_the_snapshot_of_their_point() {
        let entries = journal();
        let snapshots = list(&entries);
        assert_eq!(snapshots.iter().map(|s| s.n).collect::<Vec<_>>(), [1, 2, 3]);
        let commit = |target: &str| {
            resolve(&entries, &snapshots, &target.parse().unwrap())
                .map(|snapshot| snapshot.commit.clone())
        };
        assert_eq!(commit("@2").unwrap(), "b");
        assert_eq!(commit("@3").unwrap(), "c");
        assert!(commit("@4").unwrap_err().contains("has 3"));
        // Its completion took no snapshot of its own: the last one before it holds its files.
        assert_eq!(commit("build").unwrap(), "b");
        assert_eq!(commit("build^").unwrap(), "a");
        assert_eq!(commit("3").unwrap(), "a");
        assert_eq!(commit("6").unwrap(), "c");
        assert_eq!(commit("1000").unwrap(), "c");
        assert!(
            commit("1")
                .unwrap_err()
                .contains("at or before journal entry 1")
        );
        assert!(commit("other").unwrap_err().contains("never completed"));
    }

    #[test]
    fn a_completion_snapshot_names_its_phase() {
        let mut entries = journal();
        entries.push(entry(
            7,
            snapshot("d", SnapshotReason::PhaseComplete, Some("build")),
        ));
        let snapshots = list(&entries);
        let found = resolve(&entries, &snapshots, &"build".parse().unwrap()).unwrap();
        assert_eq!(found.commit, "d");
    }
}
