//! The files of a workflow's directory in the store.

/// The current state, as JSON (indented unless it is large, see [`DEFER_STATE_BYTES`]).
pub const STATE_FILE: &str = "state.json";
/// The state before the last write.
pub(crate) const BACKUP_FILE: &str = "state.json.bak";
/// The append-only journal of transitions.
pub const JOURNAL_FILE: &str = "journal.jsonl";
/// The advisory lock file.
pub(crate) const LOCK_FILE: &str = "lock";
/// The prefix of temporary state files; leftovers are removed by the next writer.
pub(crate) const TEMP_PREFIX: &str = ".state.json.tmp-";
