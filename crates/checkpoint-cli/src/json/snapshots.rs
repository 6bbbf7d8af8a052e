//! The documents about the working tree's snapshots: `snapshot`, `snapshots`, `diff --files`,
//! `undo` and `redo`.

use checkpoint_core::snapshots::SnapshotRecord;
use chrono::{DateTime, Utc};
use serde::Serialize;

/// The JSON document of `checkpoint snapshots`.
#[derive(Debug, Serialize)]
pub(crate) struct SnapshotsReport {
    pub(crate) version: u32,
    pub(crate) snapshots: Vec<SnapshotRow>,
}

/// One snapshot, as `snapshots` and `snapshot` show it.
#[derive(Debug, Serialize)]
pub(crate) struct SnapshotRow {
    /// Its number (`@n`).
    pub(crate) n: u64,
    pub(crate) commit: String,
    pub(crate) at: DateTime<Utc>,
    /// Why it was taken: `turn_end`, `subagent_stop`, `pre_compact`, `session_start`,
    /// `phase_complete`, `before_restore`, `manual` or `mcp`.
    pub(crate) reason: &'static str,
    pub(crate) label: Option<String>,
    pub(crate) phase: Option<String>,
    pub(crate) session: Option<String>,
    pub(crate) agent: Option<String>,
    pub(crate) files_changed: u64,
    pub(crate) paths: Vec<String>,
    pub(crate) added: u64,
    pub(crate) removed: u64,
    /// Its journal entry.
    pub(crate) seq: u64,
}

impl From<&SnapshotRecord> for SnapshotRow {
    fn from(record: &SnapshotRecord) -> Self {
        Self {
            n: record.n,
            commit: record.commit.clone(),
            at: record.at,
            reason: record.reason.as_str(),
            label: record.label.clone(),
            phase: record.phase.as_ref().map(ToString::to_string),
            session: record.session_id.clone(),
            agent: record.agent_id.clone(),
            files_changed: record.files_changed,
            paths: record.paths.clone(),
            added: record.added,
            removed: record.removed,
            seq: record.seq,
        }
    }
}

/// The JSON document of `checkpoint snapshot`.
#[derive(Debug, Serialize)]
pub(crate) struct SnapshotTaken {
    pub(crate) version: u32,
    /// Whether a new snapshot was stored (false: nothing changed since the last one).
    pub(crate) created: bool,
    /// The snapshot, new or the last one; none when the workflow has none.
    pub(crate) snapshot: Option<SnapshotRow>,
    pub(crate) left_out: Vec<LeftOutRow>,
}

/// A changed file left out of a snapshot.
#[derive(Debug, Serialize)]
pub(crate) struct LeftOutRow {
    pub(crate) path: String,
    pub(crate) why: String,
}

/// The JSON document of `checkpoint diff --files`.
#[derive(Debug, Serialize)]
pub(crate) struct FilesDiffReport {
    pub(crate) version: u32,
    /// The earlier snapshot's commit.
    pub(crate) from: String,
    /// The later snapshot's commit; none for the working tree now.
    pub(crate) to: Option<String>,
    pub(crate) files: Vec<FileChangeRow>,
}

/// One file changed between two snapshots.
#[derive(Debug, Serialize)]
pub(crate) struct FileChangeRow {
    pub(crate) path: String,
    /// `added`, `modified`, `deleted`, `type_changed` (a file became a link, or back) or
    /// `mode_changed`.
    pub(crate) change: &'static str,
    /// Lines added and removed; none for a binary file.
    pub(crate) added: Option<u64>,
    pub(crate) removed: Option<u64>,
}

/// The JSON document of `checkpoint undo` and `redo`.
#[derive(Debug, Serialize)]
pub(crate) struct UndoReport {
    pub(crate) version: u32,
    pub(crate) dry_run: bool,
    /// The snapshot of the tree taken first (`redo` puts it back); a tree in a dry run.
    pub(crate) before: String,
    /// The commit whose files were put back.
    pub(crate) target: String,
    /// Its number, when it is one of the workflow's snapshots.
    pub(crate) target_n: Option<u64>,
    pub(crate) files: Vec<UndoFileRow>,
    /// Paths that could not be changed, with why.
    pub(crate) failed: Vec<LeftOutRow>,
    /// Changed files no snapshot holds (secret-looking, over the bound): left as they are.
    pub(crate) left_alone: Vec<LeftOutRow>,
}

/// One path an undo changes.
#[derive(Debug, Serialize)]
pub(crate) struct UndoFileRow {
    pub(crate) path: String,
    /// `create`, `modify` or `delete`.
    pub(crate) action: &'static str,
    /// Changed since the last snapshot: an edit made after it (a person's, or a session's that
    /// did not end its turn), kept by the undo's own snapshot.
    pub(crate) unsnapshotted: bool,
}
