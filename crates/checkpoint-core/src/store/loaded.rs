//! What loading a workflow yields: the state, what was recovered (`Recovery`), the repairs a
//! writer persists first, and what `verify` found.

use std::{fmt, path::PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::{Pause, Workflow};

/// Something the store found and repaired (or, on a read, would repair) while loading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Recovery {
    /// `state.json` lagged behind the journal (a crash between the two writes); the missing
    /// entries were replayed.
    JournalReplayed {
        /// The state's sequence number before the replay.
        from_seq: u64,
        /// The journal's last sequence number.
        to_seq: u64,
    },
    /// `state.json` was missing or unreadable and was rebuilt.
    StateRebuilt {
        /// Why the state could not be used.
        reason: String,
        /// `journal` or `backup`.
        source: String,
        /// Where the unreadable file was kept, once a writer moved it aside.
        kept_as: Option<PathBuf>,
    },
    /// The journal ended in a torn line (a crash mid-append); it was ignored.
    TornJournalLine {
        /// Its length in bytes.
        bytes: usize,
        /// Whether the state already holds the entry it began (its sequence number is not past
        /// the state's): then there is nothing to repeat.
        #[serde(default)]
        held: bool,
        /// Where it was kept, once a writer moved it aside.
        kept_as: Option<PathBuf>,
    },
    /// The journal ends in lines that are not its next entries (added by hand or by another
    /// tool) after every entry the state holds; the state is used, and they are ignored.
    ForeignJournalLines {
        /// The line number of the first of them.
        line: usize,
        /// Their length in bytes, to the end of the journal.
        bytes: usize,
        /// What is wrong with the first, as the journal's parser says it.
        reason: String,
        /// Where they were kept, once a writer moved them aside.
        kept_as: Option<PathBuf>,
    },
    /// A line of the journal before its end is not its next entry (it does not parse, is not
    /// UTF-8, is of a kind this version does not know, or is numbered out of order): found by
    /// the readers that check the journal whole ([`crate::Store::check_journal`]), never
    /// repaired by a load; the state is used meanwhile.
    UnreadableJournalLine {
        /// The journal.
        path: PathBuf,
        /// The line's number, from 1.
        line: usize,
        /// What is wrong with it, as the journal's parser says it.
        reason: String,
    },
    /// Temporary files of an interrupted write were found.
    TempFiles {
        /// Their paths.
        paths: Vec<PathBuf>,
        /// Whether they were removed (only a writer removes them).
        removed: bool,
    },
    /// The journal ends before the state (it was truncated or replaced).
    JournalBehind {
        /// The journal's last sequence number.
        journal_seq: u64,
        /// The state's.
        state_seq: u64,
    },
}

impl Recovery {
    /// Whether a write still at work (its lock held) shows the same: the journal appended
    /// before the state is replaced, a temporary file before its rename, a line half appended.
    pub(crate) fn may_be_a_write_at_work(&self) -> bool {
        match self {
            Self::JournalReplayed { .. }
            | Self::TempFiles { .. }
            | Self::TornJournalLine { .. } => true,
            Self::StateRebuilt { .. }
            | Self::ForeignJournalLines { .. }
            | Self::UnreadableJournalLine { .. }
            | Self::JournalBehind { .. } => false,
        }
    }
}

/// One sentence describing a recovery, as warnings and `validate` put it.
impl fmt::Display for Recovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Recovery::JournalReplayed { from_seq, to_seq } => {
                format!(
                    "`state.json` lagged behind the journal (a write was interrupted); replayed entries {} to {to_seq}",
                    from_seq + 1
                )
            }
            Recovery::StateRebuilt {
                reason,
                source,
                kept_as,
            } => match kept_as {
                Some(kept) => format!(
                    "rebuilt the state from the {source} ({reason}); the bad file is kept as `{}`",
                    kept.display()
                ),
                None => format!(
                    "the state was rebuilt from the {source} in memory ({reason}); the next write keeps the bad file aside"
                ),
            },
            Recovery::TornJournalLine {
                bytes,
                held,
                kept_as,
            } => {
                let held = if *held {
                    ", an entry the state already holds"
                } else {
                    ""
                };
                match kept_as {
                    Some(kept) => format!(
                        "the journal ended in a torn line of {bytes} bytes (an interrupted append{held}); it was moved to `{}`",
                        kept.display()
                    ),
                    None => format!(
                        "the journal ends in a torn line of {bytes} bytes (an interrupted append{held}); it is ignored"
                    ),
                }
            }
            Recovery::ForeignJournalLines {
                line,
                bytes,
                reason,
                kept_as,
            } => match kept_as {
                Some(kept) => format!(
                    "the journal's end is not its next entry ({reason}); from line {line}, {bytes} bytes were moved to `{}`, and the journal goes on from the state",
                    kept.display()
                ),
                None => format!(
                    "the journal's end is not its next entry ({reason}); from line {line}, {bytes} bytes are ignored and the state is used as is"
                ),
            },
            Recovery::UnreadableJournalLine { path, line, reason } => format!(
                "line {line} of `{}` cannot be read ({reason}); commands use `state.json` meanwhile; {JOURNAL_REPAIR_HINT}",
                path.display()
            ),
            Recovery::TempFiles { paths, removed } => format!(
                "{} temporary file{} of an interrupted write {}",
                paths.len(),
                if paths.len() == 1 { "" } else { "s" },
                if *removed {
                    "removed"
                } else {
                    "found; the next write removes them"
                }
            ),
            Recovery::JournalBehind {
                journal_seq,
                state_seq,
            } => format!(
                "the journal ends at entry {journal_seq} but the state is at {state_seq}: the journal was truncated or replaced, so its history is incomplete"
            ),
        };
        f.write_str(&text)
    }
}

/// The command that repairs a journal with unreadable lines, and what it does.
pub const JOURNAL_REPAIR_HINT: &str = "`checkpoint validate --repair` moves every unreadable line to `journal.jsonl.unreadable-<time>`, keeping its bytes, and keeps every readable entry";

/// A loaded workflow and what was recovered to load it.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The current state.
    pub workflow: Workflow,
    /// What was found and repaired.
    pub recoveries: Vec<Recovery>,
    /// The workflow's directory.
    pub dir: PathBuf,
    /// How many secrets were redacted from the transitions before they were written.
    pub redacted: usize,
    /// The pause this write lifted, with an `Unpause` journaled before its first work (see
    /// [`crate::unpause_before_work`]), for the writer to say so; `None` after a load.
    pub unpaused: Option<Pause>,
    pub(super) repair: Repair,
}

/// What [`Store::verify`] found: whether a workflow's state agrees with its journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// The sequence number of the journal's last complete entry (0 when it has none).
    pub journal_seq: u64,
    /// The sequence number of `state.json` on disk, when it parses.
    pub state_file_seq: Option<u64>,
    /// The sequence number of the state as loaded, after recovery.
    pub loaded_seq: u64,
    /// What loading recovered, in memory only: verifying writes nothing.
    pub recoveries: Vec<Recovery>,
    /// Why the state does not match the journal, or `None` when it does.
    pub mismatch: Option<String>,
}

impl Verification {
    /// Whether the state equals the journal's replay.
    #[cfg(test)]
    pub(crate) fn replay_matches(&self) -> bool {
        self.mismatch.is_none()
    }
}

/// Repairs a writer must persist before its own write.
#[derive(Debug, Clone, Default)]
pub(super) struct Repair {
    pub(super) corrupt_state: bool,
    pub(super) torn_at: Option<(u64, Vec<u8>)>,
    /// The journal's end from a line that is not its next entry: moved aside, as a torn line is.
    pub(super) foreign_at: Option<(u64, Vec<u8>)>,
    pub(super) temp_files: Vec<PathBuf>,
    pub(super) journal_seq: u64,
    pub(super) state_stale: bool,
    /// The journal ends before the state: it is moved aside and restarted from the state.
    pub(super) journal_behind: bool,
    /// The size of `state.json` as read (0 when it was missing or unusable).
    pub(super) state_len: u64,
    /// The sequence number of `state.json` as read.
    pub(super) state_seq: u64,
    /// The size of the journal entries after `state_seq`, newlines included.
    pub(super) lag_bytes: u64,
}
