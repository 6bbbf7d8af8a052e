//! The working tree's snapshots as the journal records them, pure: their list numbered from 1
//! (`@n`), the last restore (what `redo` reverses), and the snapshot a target names (`@3`, a
//! phase id for its completion, `<phase>^` for its start, a journal sequence number).

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt,
    str::FromStr,
};

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

/// The files changed by one phase, session or agent, summed over its snapshots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileChanges {
    /// The snapshots that changed files.
    pub snapshots: u64,
    /// The distinct paths named (each snapshot names at most [`MAX_PATHS`]).
    pub paths: BTreeSet<String>,
    /// Changed files a snapshot counted past the paths it names.
    pub unnamed: u64,
    /// Lines added.
    pub added: u64,
    /// Lines removed.
    pub removed: u64,
}

impl FileChanges {
    /// How many files changed: the distinct paths named, and those counted but not named.
    pub fn files(&self) -> u64 {
        self.paths.len() as u64 + self.unnamed
    }

    fn add(&mut self, record: &SnapshotRecord) {
        self.snapshots += 1;
        self.paths.extend(record.paths.iter().cloned());
        self.unnamed += record
            .files_changed
            .saturating_sub(record.paths.len() as u64);
        self.added += record.added;
        self.removed += record.removed;
    }
}

/// Who changed a snapshot's files: its session, and the sub-agent whose stop took it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Author {
    pub session_id: Option<String>,
    pub agent_id: Option<String>,
}

/// The files changed per phase and per session and agent, from the snapshot entries of a
/// journal (a snapshot holds what changed since the previous one: its phase, session and agent
/// are the ones it is attributed to). Snapshots that changed nothing, and the snapshot an undo
/// takes of the tree before it (what a person changed, not the workflow), count for none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileTally {
    pub phases: BTreeMap<PhaseId, FileChanges>,
    /// By session and agent, in order of their first snapshot.
    pub authors: Vec<(Author, FileChanges)>,
}

impl FileTally {
    /// The tally of `entries`.
    pub fn of(entries: &[Entry]) -> Self {
        let mut tally = Self::default();
        for record in list(entries) {
            tally.add(&record);
        }
        tally
    }

    /// Counts one more entry (a snapshot's; any other is ignored).
    pub fn observe(&mut self, entry: &Entry) {
        if let Some(record) = list(std::slice::from_ref(entry)).first() {
            self.add(record);
        }
    }

    fn add(&mut self, record: &SnapshotRecord) {
        if record.files_changed == 0 || record.reason == SnapshotReason::BeforeRestore {
            return;
        }
        if let Some(phase) = &record.phase {
            self.phases.entry(phase.clone()).or_default().add(record);
        }
        let author = Author {
            session_id: record.session_id.clone(),
            agent_id: record.agent_id.clone(),
        };
        match self.authors.iter_mut().find(|(known, _)| *known == author) {
            Some((_, changes)) => changes.add(record),
            None => {
                let mut changes = FileChanges::default();
                changes.add(record);
                self.authors.push((author, changes));
            }
        }
    }

    /// The files phase `phase` changed, if any.
    pub fn of_phase(&self, phase: &PhaseId) -> Option<&FileChanges> {
        self.phases.get(phase)
    }
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
    fn files_are_tallied_per_phase_and_per_session_and_agent() {
        let build: PhaseId = "build".parse().unwrap();
        let record = |seq, phase: Option<&str>, session: Option<&str>, agent: Option<&str>| {
            let Transition::FilesSnapshot {
                commit,
                reason,
                label,
                left_out,
                ..
            } = snapshot("x", SnapshotReason::TurnEnd, None)
            else {
                unreachable!()
            };
            entry(
                seq,
                Transition::FilesSnapshot {
                    commit,
                    reason,
                    label,
                    phase: phase.map(|phase| phase.parse().unwrap()),
                    session_id: session.map(str::to_owned),
                    agent_id: agent.map(str::to_owned),
                    files_changed: 2,
                    paths: vec!["a.rs".to_owned(), format!("{seq}.rs")],
                    added: 3,
                    removed: 1,
                    left_out,
                },
            )
        };
        let mut entries = vec![
            record(1, Some("build"), Some("s1"), None),
            record(2, Some("build"), Some("s1"), Some("helper")),
            record(3, Some("build"), Some("s1"), None),
            record(4, None, None, None),
        ];
        // An undo's snapshot of the tree before it, and one that changed nothing: no files.
        entries.push(entry(
            5,
            snapshot("y", SnapshotReason::BeforeRestore, Some("build")),
        ));
        let mut empty = snapshot("z", SnapshotReason::TurnEnd, Some("build"));
        if let Transition::FilesSnapshot { files_changed, .. } = &mut empty {
            *files_changed = 0;
        }
        entries.push(entry(6, empty));
        let tally = FileTally::of(&entries);
        let phase = tally.of_phase(&build).unwrap();
        assert_eq!(phase.snapshots, 3);
        // `a.rs` changed at every turn: counted once.
        assert_eq!(phase.files(), 4);
        assert_eq!((phase.added, phase.removed), (9, 3));
        let authors: Vec<(Option<&str>, Option<&str>, u64)> = tally
            .authors
            .iter()
            .map(|(author, changes)| {
                (
                    author.session_id.as_deref(),
                    author.agent_id.as_deref(),
                    changes.files(),
                )
            })
            .collect();
        assert_eq!(
            authors,
            [
                (Some("s1"), None, 3),
                (Some("s1"), Some("helper"), 2),
                (None, None, 2)
            ]
        );
        // One entry at a time, as `watch` reads them: the same tally.
        let mut observed = FileTally::default();
        for entry in &entries {
            observed.observe(entry);
        }
        assert_eq!(observed, tally);
        // A snapshot counting more files than it names.
        let mut many = snapshot("m", SnapshotReason::TurnEnd, Some("build"));
        if let Transition::FilesSnapshot {
            files_changed,
            paths,
            ..
        } = &mut many
        {
            *files_changed = 120;
            *paths = vec!["a.rs".to_owned()];
        }
        observed.observe(&entry(7, many));
        assert_eq!(observed.of_phase(&build).unwrap().files(), 4 + 119);
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
