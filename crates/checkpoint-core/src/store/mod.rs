//! The crash-safe store: one directory per workflow holding `state.json`, its backup, the journal
//! and a lock file.
//!
//! A write holds the lock, appends the transitions to the journal (fsynced), then replaces
//! `state.json` atomically (temp file, fsync, rename, fsync of the directory). The journal is the
//! source of truth: a state that lags behind it is brought up to date by replay, and a state that
//! does not parse is rebuilt from it (or from the backup) and kept aside, never overwritten.

mod archive;
mod load;
mod sync;
mod write;

use std::{
    fs, io,
    path::{Path, PathBuf},
    thread,
    time::{Duration, Instant},
};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::{
    error::{Error, Result},
    failpoint::Failpoint,
    id::WorkflowId,
    journal::{self, Entry},
    model::Workflow,
    redact,
    store::{
        load::{Repair, load_dir, persist_repairs, read_journal},
        write::{commit, create_private_dir, private_options, refuse_symlink},
    },
    transition::{Transition, apply_in_place},
};

pub use crate::{
    model::check_invariants,
    store::{
        archive::{ARCHIVE_DIR, FAILED_DIR},
        load::{CHECK_JOURNAL_BYTES, parse_state},
        write::{DEFER_STATE_BYTES, MAX_DEFERRED_BYTES, MAX_DEFERRED_ENTRIES, may_defer},
    },
};

/// The current state, as JSON (indented unless it is large, see [`DEFER_STATE_BYTES`]).
pub const STATE_FILE: &str = "state.json";
/// The state before the last write.
pub const BACKUP_FILE: &str = "state.json.bak";
/// The append-only journal of transitions.
pub const JOURNAL_FILE: &str = "journal.jsonl";
/// The advisory lock file.
pub const LOCK_FILE: &str = "lock";
/// The prefix of temporary state files; leftovers are removed by the next writer.
pub const TEMP_PREFIX: &str = ".state.json.tmp-";

/// Settings of a [`Store`], chosen by the caller.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// How long to wait for another process's lock before failing.
    pub lock_timeout: Duration,
    /// Called once when a lock is contended, before waiting (the CLI prints a message).
    pub on_lock_wait: Option<fn(&Path)>,
    /// An I/O error to inject in the write path; honoured only when the crate is built with the
    /// `failpoints` feature (see [`failpoint::ENABLED`]), ignored otherwise.
    pub failpoint: Option<Failpoint>,
}

/// A directory of workflows, usually `.claude/checkpoints/`.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
    options: StoreOptions,
}

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

/// One sentence describing a recovery, as warnings and `validate` put it.
impl std::fmt::Display for Recovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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
    repair: Repair,
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
    pub fn replay_matches(&self) -> bool {
        self.mismatch.is_none()
    }
}

impl Store {
    /// A store rooted at `root` (which need not exist yet).
    pub fn new(root: &Path, options: StoreOptions) -> Self {
        Self {
            root: root.to_owned(),
            options,
        }
    }

    /// The store's root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory of a workflow.
    pub fn workflow_dir(&self, id: &WorkflowId) -> PathBuf {
        self.root.join(id.as_str())
    }

    /// The ids of all workflows in the store, sorted.
    pub fn list(&self) -> Result<Vec<WorkflowId>> {
        let entries = match fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(Error::io("list", &self.root, err)),
        };
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|err| Error::io("list", &self.root, err))?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let Ok(id) = WorkflowId::new(&name) else {
                continue;
            };
            let path = entry.path();
            if path.join(STATE_FILE).exists() || path.join(JOURNAL_FILE).exists() {
                ids.push(id);
            }
        }
        ids.sort();
        Ok(ids)
    }

    /// Loads a workflow without taking the lock; recoveries are computed in memory only.
    pub fn load(&self, id: &WorkflowId) -> Result<Loaded> {
        let dir = self.checked_dir(id)?;
        load_dir(id, &self.root, &dir)
    }

    /// Creates a workflow from its initial state.
    pub fn create(&self, workflow: Workflow, now: DateTime<Utc>) -> Result<Loaded> {
        archive::refuse_reserved(&workflow.id)?;
        let dir = self.workflow_dir(&workflow.id);
        create_private_dir(&self.root)?;
        let new_dir = !dir.exists();
        create_private_dir(&dir)?;
        let dir = self.checked_dir(&workflow.id)?;
        let _lock = self.lock(&dir)?;
        if dir.join(STATE_FILE).exists() || dir.join(JOURNAL_FILE).exists() {
            return Err(Error::AlreadyExists {
                id: workflow.id.to_string(),
                dir,
            });
        }
        let mut workflow = workflow;
        // Secrets are redacted before anything is applied or written.
        let redacted = redact::workflow(&mut workflow);
        let mut next = workflow.clone();
        let transition = Transition::Init {
            workflow: Box::new(workflow),
        };
        apply_in_place(&mut next, &transition, 1, now)?;
        let entry = Entry {
            seq: 1,
            at: now,
            transition,
        };
        let committed = commit(
            &dir,
            &[entry.to_line()],
            Some(&next),
            self.options.failpoint,
        );
        if let Err(err @ (Error::StateTooLarge { .. } | Error::EntryTooLarge { .. })) = committed {
            // Refused before anything was written: the directory made for it goes too.
            if new_dir {
                let _ = fs::remove_file(dir.join(LOCK_FILE));
                let _ = fs::remove_dir(&dir);
            }
            return Err(err);
        }
        committed?;
        Ok(Loaded {
            workflow: next,
            recoveries: Vec::new(),
            dir,
            redacted,
            repair: Repair::default(),
        })
    }

    /// Applies the transitions `decide` returns for the current state, under the lock.
    ///
    /// Repairs found while loading are persisted first. When `decide` returns no transition
    /// and nothing needs repair, nothing is written.
    pub fn update(
        &self,
        id: &WorkflowId,
        now: DateTime<Utc>,
        decide: impl FnOnce(&Workflow) -> Result<Vec<Transition>>,
    ) -> Result<Loaded> {
        let dir = self.checked_dir(id)?;
        let _lock = self.lock(&dir)?;
        let mut loaded = load_dir(id, &self.root, &dir)?;
        let transitions = decide(&loaded.workflow)?;
        // A refusal fails the whole update and drops the loaded state, so it is changed in
        // place rather than copied first.
        let next = &mut loaded.workflow;
        let mut seq = loaded.repair.journal_seq.max(next.seq);
        let mut entries = Vec::with_capacity(transitions.len() + 1);
        if loaded.repair.journal_behind {
            // Appending after a journal that ends before the state would leave a gap in its
            // numbering: the old journal is kept aside, and a new one starts from the state.
            let transition = Transition::Snapshot {
                workflow: Box::new(next.clone()),
                reason: format!(
                    "the journal ended at entry {} before the state's entry {}; it is kept as `{JOURNAL_FILE}.behind-<time>` and restarts here",
                    loaded.repair.journal_seq, next.seq
                ),
            };
            seq += 1;
            apply_in_place(next, &transition, seq, now)?;
            entries.push(Entry {
                seq,
                at: now,
                transition,
            });
        }
        for mut transition in transitions {
            // Secrets are redacted before anything is applied or written.
            loaded.redacted += redact::transition(&mut transition);
            seq += 1;
            apply_in_place(next, &transition, seq, now)?;
            entries.push(Entry {
                seq,
                at: now,
                transition,
            });
        }
        let lines: Vec<String> = entries.iter().map(Entry::to_line).collect();
        let repair = &loaded.repair;
        // How far `state.json` would lag behind the journal if it were not rewritten.
        let lag = next.seq.saturating_sub(repair.state_seq);
        let lag_bytes = repair.lag_bytes + lines.iter().map(|line| line.len() as u64).sum::<u64>();
        let write_state = repair.corrupt_state
            || repair.state_stale
            || (lag > 0
                && !may_defer(
                    repair.state_len,
                    lag,
                    lag_bytes,
                    entries
                        .iter()
                        .any(|entry| entry.transition.replaces_state()),
                ));
        persist_repairs(&dir, now, &mut loaded)?;
        if !lines.is_empty() || write_state {
            let state = write_state.then_some(&loaded.workflow);
            commit(&dir, &lines, state, self.options.failpoint)?;
        }
        Ok(loaded)
    }

    /// Applies one transition under the lock.
    pub fn apply(
        &self,
        id: &WorkflowId,
        now: DateTime<Utc>,
        transition: Transition,
    ) -> Result<Loaded> {
        self.update(id, now, |_| Ok(vec![transition]))
    }

    /// Reads and parses the whole journal of a workflow.
    pub fn journal(&self, id: &WorkflowId) -> Result<journal::Journal> {
        let dir = self.checked_dir(id)?;
        read_journal(&dir.join(JOURNAL_FILE))
    }

    /// Reads the whole journal of a workflow, keeping only its last `n` entries in memory (and
    /// a torn last line): `checkpoint log -n <n>` costs one line's memory, not the journal's.
    pub fn last_entries(&self, id: &WorkflowId, n: usize) -> Result<journal::Journal> {
        let dir = self.checked_dir(id)?;
        let mut kept = std::collections::VecDeque::with_capacity(n.min(1024));
        let summary = load::for_each_entry(&dir.join(JOURNAL_FILE), |entry, _| {
            if kept.len() == n {
                kept.pop_front();
            }
            if n > 0 {
                kept.push_back(entry);
            }
            Ok(())
        })?;
        Ok(journal::Journal {
            entries: kept.into(),
            torn: summary.torn,
        })
    }

    /// Whether the workflow's state equals the replay of its journal (see [`Store::verify`]).
    pub fn replay_matches(&self, id: &WorkflowId) -> Result<bool> {
        Ok(self.verify(id)?.replay_matches())
    }

    fn checked_dir(&self, id: &WorkflowId) -> Result<PathBuf> {
        let dir = self.workflow_dir(id);
        match fs::symlink_metadata(&dir) {
            Ok(meta) if meta.file_type().is_symlink() => Err(Error::Symlink { path: dir }),
            Ok(_) => Ok(dir),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Err(Error::NotFound {
                id: id.to_string(),
                root: self.root.clone(),
            }),
            Err(err) => Err(Error::io("open", dir, err)),
        }
    }

    fn lock(&self, dir: &Path) -> Result<fs::File> {
        let path = dir.join(LOCK_FILE);
        refuse_symlink(&path)?;
        let file = private_options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|err| Error::io("open lock file", &path, err))?;
        let started = Instant::now();
        let mut delay = Duration::from_millis(1);
        let mut warned = false;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(file),
                Err(fs::TryLockError::WouldBlock) => {}
                Err(fs::TryLockError::Error(err)) => return Err(Error::io("lock", &path, err)),
            }
            let waited = started.elapsed();
            if waited >= self.options.lock_timeout {
                return Err(Error::Locked {
                    path,
                    waited_ms: waited.as_millis(),
                });
            }
            if !warned {
                warned = true;
                if let Some(on_wait) = self.options.on_lock_wait {
                    on_wait(&path);
                }
            }
            thread::sleep(delay.min(self.options.lock_timeout.saturating_sub(waited)));
            delay = (delay * 2).min(Duration::from_millis(50));
        }
    }
}

#[cfg(test)]
mod tests;
