//! Where the store is in a project, and the files of a workflow's directory in it.

use std::path::{Path, PathBuf};

/// The store's directory under the project root when no other is given (`--dir`,
/// `CHECKPOINT_DIR`), as path components: `.claude/checkpoints`.
pub const DEFAULT_STORE: [&str; 2] = [".claude", "checkpoints"];

/// The project around `cwd`: the nearest ancestor holding `.git` (a directory, or a file in a
/// worktree), else `cwd` itself.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(cwd)
        .to_owned()
}

/// The default store of the project at `project_root`.
pub fn default_store(project_root: &Path) -> PathBuf {
    DEFAULT_STORE
        .iter()
        .fold(project_root.to_owned(), |path, part| path.join(part))
}

/// The current state, as JSON (indented unless it is large, see [`DEFER_STATE_BYTES`]).
pub const STATE_FILE: &str = "state.json";
/// The state before the last write.
pub(crate) const BACKUP_FILE: &str = "state.json.bak";
/// The append-only journal of transitions.
pub const JOURNAL_FILE: &str = "journal.jsonl";
/// The index of the journal's effects, a cache the guard reads (see `store/effects.rs`).
pub(crate) const EFFECTS_INDEX: &str = "effects.idx";
/// The advisory lock file.
pub(crate) const LOCK_FILE: &str = "lock";
/// The prefix of temporary state files; leftovers are removed by the next writer.
pub(crate) const TEMP_PREFIX: &str = ".state.json.tmp-";
