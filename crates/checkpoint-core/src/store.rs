//! The crash-safe store: one directory per workflow holding `state.json`, its backup, the journal
//! and a lock file.
//!
//! A write holds the lock, appends the transitions to the journal (fsynced), then replaces
//! `state.json` atomically (temp file, fsync, rename, fsync of the directory). The journal is the
//! source of truth: a state that lags behind it is brought up to date by replay, and a state that
//! does not parse is rebuilt from it (or from the backup) and kept aside, never overwritten.

use std::{
    fs,
    io::{self, Read, Seek, SeekFrom, Write},
    path::{Path, PathBuf},
    sync::Arc,
    thread,
    time::{Duration, Instant},
};

use chrono::{DateTime, Utc};
use miette::{NamedSource, SourceOffset};
use serde::{Deserialize, Serialize};

use crate::{
    error::{Error, Result, showable},
    failpoint::{self, Failpoint, Step},
    fsx,
    id::WorkflowId,
    journal::{self, Entry, Scan, Tail},
    model::{SCHEMA_VERSION, Workflow},
    plan::validate_graph,
    redact,
    transition::{Transition, apply_in_place},
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

/// The directory of archived workflows, under the store root.
pub const ARCHIVE_DIR: &str = ".archive";
/// The directory of archived failed workflows, under the store root.
pub const FAILED_DIR: &str = "failed";

/// How many bytes of the journal's end are read at first to find its last entries.
const TAIL_BYTES: u64 = 4096;

/// A `state.json` at least this large is not rewritten by every write: see [`may_defer`].
pub const DEFER_STATE_BYTES: u64 = 256 * 1024;
/// The most journal entries a large `state.json` may lag behind by design.
pub const MAX_DEFERRED_ENTRIES: u64 = 16;
/// The most journal bytes a large `state.json` may lag behind by design.
pub const MAX_DEFERRED_BYTES: u64 = 64 * 1024;

/// Whether a `state.json` of `state_len` bytes may stay `lag` journal entries (`lag_bytes`
/// bytes) behind the journal rather than be rewritten; `whole` when those entries include one
/// that carries a whole workflow (`init`, `snapshot`), which is never left to a replay.
///
/// Rewriting a large state costs a serialization and a write of the whole file for a change of a
/// few bytes, so a write to a large workflow appends to the journal (the source of truth, fsynced
/// first as always) and rewrites `state.json` only once the journal is that far ahead; readers
/// replay the difference. Small states, the usual case, are rewritten every time. Writers and
/// readers ask the same question: what a writer leaves behind, a reader does not report.
pub fn may_defer(state_len: u64, lag: u64, lag_bytes: u64, whole: bool) -> bool {
    !whole
        && state_len >= DEFER_STATE_BYTES
        && lag < MAX_DEFERRED_ENTRIES
        && lag_bytes < MAX_DEFERRED_BYTES
}

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
        /// Where it was kept, once a writer moved it aside.
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
            Recovery::TornJournalLine { bytes, kept_as } => match kept_as {
                Some(kept) => format!(
                    "the journal ended in a torn line of {bytes} bytes (an interrupted append); it was moved to `{}`",
                    kept.display()
                ),
                None => format!(
                    "the journal ends in a torn line of {bytes} bytes (an interrupted append); it is ignored"
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

/// Repairs a writer must persist before its own write.
#[derive(Debug, Clone, Default)]
struct Repair {
    corrupt_state: bool,
    torn_at: Option<(u64, Vec<u8>)>,
    temp_files: Vec<PathBuf>,
    journal_seq: u64,
    state_stale: bool,
    /// The journal ends before the state: it is moved aside and restarted from the state.
    journal_behind: bool,
    /// The size of `state.json` as read (0 when it was missing or unusable).
    state_len: u64,
    /// The sequence number of `state.json` as read.
    state_seq: u64,
    /// The size of the journal entries after `state_seq`, newlines included.
    lag_bytes: u64,
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
        let dir = self.workflow_dir(&workflow.id);
        create_private_dir(&self.root)?;
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
        commit(
            &dir,
            &[entry.to_line()],
            Some(&next),
            self.options.failpoint,
        )?;
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

    /// Moves a workflow's directory to `.archive/<id>_<YYYYMMDD_HHMMSS>/` (or `failed/` when
    /// `failed` is set) under the store root, under its lock. Nothing is deleted.
    pub fn archive(&self, id: &WorkflowId, now: DateTime<Utc>, failed: bool) -> Result<PathBuf> {
        let dir = self.checked_dir(id)?;
        let _lock = self.lock(&dir)?;
        // An archive is read by its `state.json` alone, so a state left behind the journal on
        // purpose (see `may_defer`) is brought up to date first.
        if let Ok(loaded) = load_dir(id, &self.root, &dir)
            && loaded.recoveries.is_empty()
            && loaded.workflow.seq > loaded.repair.state_seq
        {
            commit(&dir, &[], Some(&loaded.workflow), self.options.failpoint)?;
        }
        let parent = self
            .root
            .join(if failed { FAILED_DIR } else { ARCHIVE_DIR });
        create_private_dir(&parent)?;
        let stamp = now.format("%Y%m%d_%H%M%S");
        let mut target = parent.join(format!("{id}_{stamp}"));
        let mut n = 1;
        while target.exists() {
            n += 1;
            target = parent.join(format!("{id}_{stamp}_{n}"));
        }
        fsx::rename(&dir, &target)?;
        fsx::sync_dir(&self.root).map_err(|source| Error::MaybeSaved {
            path: target.clone(),
            source,
        })?;
        Ok(target)
    }

    /// The archived workflows in `.archive/` and `failed/`.
    pub fn list_archives(&self) -> Result<Vec<(PathBuf, crate::retention::Archive)>> {
        let mut archives = Vec::new();
        for (sub, failed) in [(ARCHIVE_DIR, false), (FAILED_DIR, true)] {
            let parent = self.root.join(sub);
            let entries = match fs::read_dir(&parent) {
                Ok(entries) => entries,
                Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                Err(err) => return Err(Error::io("list", &parent, err)),
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                if !path.is_dir() {
                    continue;
                }
                let state = fsx::read_limited(&path.join(STATE_FILE))
                    .ok()
                    .flatten()
                    .and_then(|bytes| parse_state(&path.join(STATE_FILE), &bytes).ok());
                let archived_at = archive_time(&name)
                    .or_else(|| {
                        entry
                            .metadata()
                            .ok()?
                            .modified()
                            .ok()
                            .map(DateTime::<Utc>::from)
                    })
                    .unwrap_or(DateTime::UNIX_EPOCH);
                let id = name.rsplitn(3, '_').last().unwrap_or(&name).to_owned();
                archives.push((
                    path,
                    crate::retention::Archive {
                        kind: state
                            .as_ref()
                            .and_then(|workflow| workflow.kind.clone())
                            .unwrap_or(id),
                        status: state.map(|workflow| workflow.status),
                        name,
                        archived_at,
                        failed,
                    },
                ));
            }
        }
        archives.sort_by(|a, b| a.1.name.cmp(&b.1.name));
        Ok(archives)
    }

    /// Brings an archived workflow back under its id; refuses when that id is taken.
    pub fn restore(&self, archive: &Path) -> Result<WorkflowId> {
        let state_path = archive.join(STATE_FILE);
        let bytes = fsx::read_limited(&state_path)?.ok_or_else(|| Error::NotFound {
            id: archive.display().to_string(),
            root: self.root.clone(),
        })?;
        let workflow = parse_state(&state_path, &bytes)?;
        let target = self.workflow_dir(&workflow.id);
        if target.exists() {
            return Err(Error::AlreadyExists {
                id: workflow.id.to_string(),
                dir: target,
            });
        }
        fsx::rename(archive, &target)?;
        fsx::sync_dir(&self.root).map_err(|source| Error::MaybeSaved {
            path: target,
            source,
        })?;
        Ok(workflow.id)
    }

    /// Deletes an archive directory (only `checkpoint gc` does this).
    pub fn delete_archive(&self, archive: &Path) -> Result<()> {
        let inside = [ARCHIVE_DIR, FAILED_DIR]
            .iter()
            .any(|sub| archive.parent() == Some(self.root.join(sub).as_path()));
        if !inside {
            return Err(Error::transition(
                format!("`{}` is not an archive of this store", archive.display()),
                "only directories in `.archive/` and `failed/` can be deleted",
            ));
        }
        fs::remove_dir_all(archive).map_err(|err| Error::io("delete", archive, err))
    }

    /// Reads and parses the whole journal of a workflow.
    pub fn journal(&self, id: &WorkflowId) -> Result<journal::Journal> {
        let dir = self.checked_dir(id)?;
        let path = dir.join(JOURNAL_FILE);
        match fsx::read_limited(&path)? {
            Some(bytes) => journal::parse(&path, &bytes),
            None => Ok(journal::Journal::default()),
        }
    }

    /// Checks a workflow against its journal, without the lock and without writing anything.
    ///
    /// The state as loaded (after recovery) must equal the replay of the whole journal, and
    /// `state.json` on disk must equal the replay up to its own sequence number: it may lag
    /// behind the journal (after a crash, or by design for a large state, see [`may_defer`]),
    /// but never differ from it.
    pub fn verify(&self, id: &WorkflowId) -> Result<Verification> {
        let loaded = self.load(id)?;
        let journal_path = loaded.dir.join(JOURNAL_FILE);
        let journal = read_journal(&journal_path)?;
        let journal_seq = journal.entries.last().map_or(0, |entry| entry.seq);
        let state_path = loaded.dir.join(STATE_FILE);
        let on_disk = match fsx::read_limited(&state_path)? {
            Some(bytes) => parse_state(&state_path, &bytes).ok(),
            None => None,
        };
        let mut mismatch = match &on_disk {
            Some(disk) if disk.seq > journal_seq => Some(format!(
                "`{STATE_FILE}` is at entry {}, past the journal's last entry {journal_seq}",
                disk.seq
            )),
            _ if journal.entries.is_empty() => Some("the journal has no entries".to_owned()),
            _ => None,
        };
        let mut replayed: Option<Workflow> = None;
        for entry in &journal.entries {
            if mismatch.is_some() {
                break;
            }
            match journal::replay(&journal_path, replayed.take(), std::slice::from_ref(entry)) {
                Ok(state) => replayed = state,
                Err(err) => mismatch = Some(err.to_string()),
            }
            if let (Some(disk), Some(state)) = (&on_disk, &replayed)
                && disk.seq == entry.seq
            {
                mismatch = first_difference(disk, state).map(|path| {
                    format!(
                        "`{STATE_FILE}` differs from the journal's replay to entry {} at `{path}`",
                        entry.seq
                    )
                });
            }
        }
        if mismatch.is_none()
            && let Some(state) = &replayed
        {
            mismatch = first_difference(&loaded.workflow, state).map(|path| {
                format!(
                    "the loaded state (entry {}) differs from the journal's replay (entry {}) at `{path}`",
                    loaded.workflow.seq, state.seq
                )
            });
        }
        Ok(Verification {
            journal_seq,
            state_file_seq: on_disk.map(|disk| disk.seq),
            loaded_seq: loaded.workflow.seq,
            recoveries: loaded.recoveries,
            mismatch,
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

/// The time in an archive name `<id>_<YYYYMMDD_HHMMSS>[_<n>]`.
fn archive_time(name: &str) -> Option<DateTime<Utc>> {
    let parts: Vec<&str> = name.rsplit('_').collect();
    [(1, 0), (2, 1)].iter().find_map(|&(date, time)| {
        let stamp = format!("{}{}", parts.get(date)?, parts.get(time)?);
        chrono::NaiveDateTime::parse_from_str(&stamp, "%Y%m%d%H%M%S")
            .ok()
            .map(|naive| naive.and_utc())
    })
}

fn load_dir(id: &WorkflowId, root: &Path, dir: &Path) -> Result<Loaded> {
    let state_path = dir.join(STATE_FILE);
    let journal_path = dir.join(JOURNAL_FILE);
    let mut recoveries = Vec::new();
    let mut repair = Repair::default();

    let temp_files = temp_files(dir)?;
    if !temp_files.is_empty() {
        recoveries.push(Recovery::TempFiles {
            paths: temp_files.clone(),
            removed: false,
        });
        repair.temp_files = temp_files;
    }

    // The state is read before the journal: a writer appends to the journal before it replaces
    // the state, so a journal read afterwards holds every entry the state lacks.
    let state_bytes = fsx::read_limited(&state_path)?;
    let state = match &state_bytes {
        Some(bytes) => match parse_state(&state_path, bytes) {
            Err(err @ Error::NewerVersion { .. }) => return Err(err),
            parsed => parsed,
        },
        None => Err(Error::NotFound {
            id: id.to_string(),
            root: root.to_owned(),
        }),
    };
    let state_len = state_bytes.map_or(0, |bytes| bytes.len() as u64);

    let tail = read_tail(&journal_path, state.as_ref().ok().map(|state| state.seq))?;
    let tail_seq = tail.last_seq;
    repair.journal_seq = tail_seq.unwrap_or(0);
    if let Some((offset, bytes)) = tail.torn {
        recoveries.push(Recovery::TornJournalLine {
            bytes: bytes.len(),
            kept_as: None,
        });
        repair.torn_at = Some((offset, bytes));
    }

    let workflow = match state {
        Ok(mut workflow) => {
            repair.state_len = state_len;
            repair.state_seq = workflow.seq;
            match tail_seq {
                Some(journal_seq) if journal_seq > workflow.seq => {
                    let from_seq = workflow.seq;
                    repair.lag_bytes = tail.after_bytes;
                    let whole = tail
                        .after
                        .iter()
                        .any(|entry| entry.transition.replaces_state());
                    workflow = journal::replay(&journal_path, Some(workflow), &tail.after)?
                        .expect("replay onto a state yields a state");
                    // A large state is rewritten only every so often (see `may_defer`): a lag
                    // within those bounds is how it is kept, not something to recover from.
                    if !may_defer(state_len, workflow.seq - from_seq, tail.after_bytes, whole) {
                        recoveries.push(Recovery::JournalReplayed {
                            from_seq,
                            to_seq: workflow.seq,
                        });
                        repair.state_stale = true;
                    }
                }
                Some(journal_seq) if journal_seq < workflow.seq => {
                    recoveries.push(Recovery::JournalBehind {
                        journal_seq,
                        state_seq: workflow.seq,
                    });
                    repair.journal_behind = true;
                }
                None if workflow.seq > 0 && journal_path.exists() => {
                    recoveries.push(Recovery::JournalBehind {
                        journal_seq: 0,
                        state_seq: workflow.seq,
                    });
                    repair.journal_behind = true;
                }
                _ => {}
            }
            workflow
        }
        Err(state_err) => {
            let missing = matches!(state_err, Error::NotFound { .. });
            if missing && tail_seq.is_none() && repair.torn_at.is_none() {
                return Err(state_err);
            }
            let (workflow, source) = match rebuild(dir, &journal_path) {
                Ok(rebuilt) => rebuilt,
                Err(rebuild_err) if missing => return Err(rebuild_err),
                Err(_) => return Err(state_err_with_help(state_err)),
            };
            recoveries.push(Recovery::StateRebuilt {
                reason: if missing {
                    format!("`{STATE_FILE}` is missing")
                } else {
                    state_err.to_string()
                },
                source: source.into(),
                kept_as: None,
            });
            repair.corrupt_state = !missing;
            repair.state_stale = true;
            workflow
        }
    };
    Ok(Loaded {
        workflow,
        recoveries,
        dir: dir.to_owned(),
        redacted: 0,
        repair,
    })
}

/// Rebuilds a state from the journal, else from the backup plus the journal's later entries.
fn rebuild(dir: &Path, journal_path: &Path) -> Result<(Workflow, &'static str)> {
    let journal = read_journal(journal_path);
    if let Ok(journal) = &journal {
        let starts_whole = journal.entries.first().is_some_and(|entry| {
            matches!(
                entry.transition,
                Transition::Init { .. } | Transition::Snapshot { .. }
            )
        });
        if starts_whole
            && let Ok(Some(workflow)) = journal::replay(journal_path, None, &journal.entries)
        {
            return Ok((workflow, "journal"));
        }
    }
    let backup_path = dir.join(BACKUP_FILE);
    let backup = fsx::read_limited(&backup_path)?.ok_or_else(|| Error::Corrupt {
        path: dir.join(STATE_FILE),
        message: "no usable state, journal or backup".into(),
        help: format!(
            "nothing was changed; inspect the files in `{}`",
            dir.display()
        ),
        source_code: None,
        span: None,
    })?;
    let base = parse_state(&backup_path, &backup)?;
    let base_seq = base.seq;
    let later: Vec<Entry> = match journal {
        Ok(journal) => journal
            .entries
            .into_iter()
            .filter(|entry| entry.seq > base_seq)
            .collect(),
        Err(_) => Vec::new(),
    };
    let workflow = journal::replay(journal_path, Some(base), &later)?
        .expect("replay onto a state yields a state");
    Ok((workflow, "backup"))
}

fn state_err_with_help(err: Error) -> Error {
    match err {
        Error::Corrupt {
            path,
            message,
            source_code,
            span,
            ..
        } => Error::Corrupt {
            help: format!(
                "neither the journal nor `{BACKUP_FILE}` could rebuild it; the file was left untouched: fix it by hand, or move it aside and start again"
            ),
            path,
            message,
            source_code,
            span,
        },
        other => other,
    }
}

/// The hint of a state file that does not parse.
const REBUILT_HELP: &str = "the state is rebuilt from `journal.jsonl` or `state.json.bak` by the next command that writes; the bad file is kept as `state.json.corrupt-<time>`";

/// Parses and checks a state file.
pub fn parse_state(path: &Path, bytes: &[u8]) -> Result<Workflow> {
    // A good state of a known version, the common case, takes one parse; anything else takes
    // the careful path below, which says why the file cannot be used.
    // UTF-8 is checked once for the whole file, which is cheaper than string by string.
    if let Ok(text) = std::str::from_utf8(bytes)
        && let Ok(workflow) = serde_json::from_str::<Workflow>(text)
        && workflow.schema_version <= SCHEMA_VERSION
        && check_invariants(&workflow).is_ok()
    {
        return Ok(workflow);
    }
    parse_state_carefully(path, bytes)
}

/// Parses a state that may be newer or corrupt: the version first, so that a newer file is
/// never reported as corrupt, then the whole state.
fn parse_state_carefully(path: &Path, bytes: &[u8]) -> Result<Workflow> {
    #[derive(Deserialize)]
    struct VersionPeek {
        schema_version: Option<serde_json::Value>,
    }
    let corrupt = |message: String, err: Option<&serde_json::Error>| {
        let text = String::from_utf8_lossy(bytes).into_owned();
        if !showable(&text) {
            return Error::Corrupt {
                path: path.to_owned(),
                message,
                help: REBUILT_HELP.into(),
                source_code: None,
                span: None,
            };
        }
        let span = err.filter(|err| err.line() > 0).map(|err| {
            (
                SourceOffset::from_location(&text, err.line(), err.column()).offset(),
                0,
            )
                .into()
        });
        Error::Corrupt {
            path: path.to_owned(),
            message,
            help: REBUILT_HELP.into(),
            source_code: Some(Arc::new(NamedSource::new(path.display().to_string(), text))),
            span,
        }
    };
    let peek: VersionPeek =
        serde_json::from_slice(bytes).map_err(|err| corrupt(err.to_string(), Some(&err)))?;
    match peek.schema_version.as_ref().map(serde_json::Value::as_u64) {
        Some(Some(found)) if found > u64::from(SCHEMA_VERSION) => {
            return Err(Error::NewerVersion {
                path: path.to_owned(),
                found: u32::try_from(found).unwrap_or(u32::MAX),
                supported: SCHEMA_VERSION,
            });
        }
        Some(Some(_)) => {}
        _ => return Err(corrupt("missing or invalid `schema_version`".into(), None)),
    }
    let workflow: Workflow =
        serde_json::from_slice(bytes).map_err(|err| corrupt(err.to_string(), Some(&err)))?;
    check_invariants(&workflow).map_err(|message| corrupt(message, None))?;
    Ok(workflow)
}

/// The path of the first field where two workflows differ, like `phases[0].progress`.
fn first_difference(a: &Workflow, b: &Workflow) -> Option<String> {
    use serde_json::Value;
    fn walk(a: &Value, b: &Value, path: &mut String) -> bool {
        let len = path.len();
        let differs = match (a, b) {
            (Value::Object(x), Value::Object(y)) => x.keys().chain(y.keys()).any(|key| {
                path.truncate(len);
                path.push_str(if len == 0 { "" } else { "." });
                path.push_str(key);
                match (x.get(key), y.get(key)) {
                    (Some(x), Some(y)) => walk(x, y, path),
                    _ => true,
                }
            }),
            (Value::Array(x), Value::Array(y)) => (0..x.len().max(y.len())).any(|index| {
                path.truncate(len);
                path.push_str(&format!("[{index}]"));
                match (x.get(index), y.get(index)) {
                    (Some(x), Some(y)) => walk(x, y, path),
                    _ => true,
                }
            }),
            _ => a != b,
        };
        if !differs {
            path.truncate(len);
        }
        differs
    }
    if a == b {
        return None;
    }
    let to_value = |workflow| serde_json::to_value(workflow).expect("a workflow always serializes");
    let mut path = String::new();
    walk(&to_value(a), &to_value(b), &mut path);
    Some(path)
}

/// Checks what serde cannot: the phase graph and references.
pub fn check_invariants(workflow: &Workflow) -> std::result::Result<(), String> {
    validate_graph(workflow.phases.iter().map(|phase| {
        (
            &phase.id,
            phase.dependencies.as_slice(),
            phase.on_failure.as_ref(),
        )
    }))
    .map_err(|err| err.to_string())?;
    for phase in &workflow.phases {
        let mut seen = foldhash::HashSet::default();
        for task in &phase.tasks {
            if !seen.insert(&task.id) {
                return Err(format!(
                    "task `{}` appears twice in phase `{}`",
                    task.id, phase.id
                ));
            }
        }
    }
    Ok(())
}

fn read_journal(path: &Path) -> Result<journal::Journal> {
    match fsx::read_limited(path)? {
        Some(bytes) => journal::parse(path, &bytes),
        None => Ok(journal::Journal::default()),
    }
}

/// Reads the journal's end: its last complete sequence number, a torn last line, and the
/// entries after sequence number `after` when one is given.
///
/// Reads backwards from the end a few kilobytes at a time, so that the cost follows what is
/// needed, not the journal's length. Anything unusual in those lines (one that is not an entry,
/// numbers out of order) is left to the whole-file parser, which says where it is.
fn read_tail(path: &Path, after: Option<u64>) -> Result<Tail> {
    refuse_symlink(path)?;
    let mut file = match fs::File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Tail::default()),
        Err(err) => return Err(Error::io("open", path, err)),
    };
    let len = file
        .metadata()
        .map_err(|err| Error::io("read", path, err))?
        .len();
    let mut window = TAIL_BYTES.min(len);
    loop {
        let start = len - window;
        let whole = start == 0;
        file.seek(SeekFrom::Start(start))
            .map_err(|err| Error::io("read", path, err))?;
        let mut bytes = Vec::with_capacity(window as usize);
        (&mut file)
            .take(window)
            .read_to_end(&mut bytes)
            .map_err(|err| Error::io("read", path, err))?;
        match journal::scan_tail(&bytes, start, whole, after) {
            Scan::Done(tail) => return Ok(tail),
            Scan::NeedMore if !whole => window = (window * 4).min(len),
            Scan::NeedMore | Scan::Unusual => return read_tail_whole(path, after),
        }
    }
}

/// [`read_tail`] from a parse of the whole journal, whose errors name the line.
fn read_tail_whole(path: &Path, after: Option<u64>) -> Result<Tail> {
    let journal = read_journal(path)?;
    let last_seq = journal.entries.last().map(|entry| entry.seq);
    let after: Vec<Entry> = match after {
        Some(after) => journal
            .entries
            .into_iter()
            .filter(|entry| entry.seq > after)
            .collect(),
        None => Vec::new(),
    };
    Ok(Tail {
        last_seq,
        torn: journal.torn,
        after_bytes: after.iter().map(|entry| entry.to_line().len() as u64).sum(),
        after,
    })
}

fn temp_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(Error::io("list", dir, err)),
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(TEMP_PREFIX))
        {
            found.push(entry.path());
        }
    }
    found.sort();
    Ok(found)
}

fn persist_repairs(dir: &Path, now: DateTime<Utc>, loaded: &mut Loaded) -> Result<()> {
    let stamp = now.format("%Y%m%dT%H%M%S%.3fZ");
    for path in &loaded.repair.temp_files {
        match fs::remove_file(path) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(Error::io("remove", path, err)),
        }
    }
    if loaded.repair.journal_behind {
        let journal_path = dir.join(JOURNAL_FILE);
        let kept = unused_path(dir, &format!("{JOURNAL_FILE}.behind-{stamp}"));
        fsx::rename(&journal_path, &kept)?;
        // A torn tail belonged to the journal that was just kept aside.
        loaded.repair.torn_at = None;
    }
    if let Some((offset, bytes)) = loaded.repair.torn_at.take() {
        let kept = unused_path(dir, &format!("{JOURNAL_FILE}.torn-{stamp}"));
        write_new_file(&kept, &bytes)?;
        let journal_path = dir.join(JOURNAL_FILE);
        let file = fs::OpenOptions::new()
            .write(true)
            .open(&journal_path)
            .map_err(|err| Error::io("open", &journal_path, err))?;
        file.set_len(offset)
            .map_err(|err| Error::io("truncate", &journal_path, err))?;
        file.sync_all()
            .map_err(|err| Error::io("sync", &journal_path, err))?;
        for recovery in &mut loaded.recoveries {
            if let Recovery::TornJournalLine { kept_as, .. } = recovery {
                *kept_as = Some(kept.clone());
            }
        }
    }
    if loaded.repair.corrupt_state {
        let state_path = dir.join(STATE_FILE);
        let kept = unused_path(dir, &format!("{STATE_FILE}.corrupt-{stamp}"));
        fsx::rename(&state_path, &kept)?;
        for recovery in &mut loaded.recoveries {
            if let Recovery::StateRebuilt { kept_as, .. } = recovery {
                *kept_as = Some(kept.clone());
            }
        }
    }
    for recovery in &mut loaded.recoveries {
        if let Recovery::TempFiles { removed, .. } = recovery {
            *removed = true;
        }
    }
    if !loaded.repair.temp_files.is_empty() || loaded.repair.corrupt_state {
        fsx::sync_dir(dir).map_err(|err| Error::io("sync", dir, err))?;
    }
    Ok(())
}

/// Appends `lines` (journal entries) to the journal, then replaces the state when `state` is
/// given. Failures after the journal append began are [`Error::MaybeSaved`]: the journal may
/// hold the transitions.
///
/// `failpoint` injects an error at one step (tests only, see [`failpoint`]); each step is marked
/// by a `failpoint::check` call just before the operation it stands for.
fn commit(
    dir: &Path,
    lines: &[String],
    state: Option<&Workflow>,
    failpoint: Option<Failpoint>,
) -> Result<()> {
    // Serialized before anything is written, so that nothing can fail between the two writes
    // but the writes themselves.
    let text = state.map(state_text);
    let journal_path = dir.join(JOURNAL_FILE);
    if !lines.is_empty() {
        let lines = lines.concat();
        refuse_symlink(&journal_path)?;
        let created = !journal_path.exists();
        let mut journal = private_options()
            .append(true)
            .create(true)
            .open(&journal_path)
            .map_err(|err| Error::io("open", &journal_path, err))?;
        let maybe = |source: io::Error| Error::MaybeSaved {
            path: journal_path.clone(),
            source,
        };
        if let Err(err) = failpoint::check(failpoint, Step::JournalAppend) {
            // As a crash mid-append would, the injected failure leaves a torn line.
            let half = &lines.as_bytes()[..lines.len() / 2];
            journal.write_all(half).and(Err(err)).map_err(maybe)?;
        }
        journal.write_all(lines.as_bytes()).map_err(maybe)?;
        failpoint::check(failpoint, Step::JournalFsync)
            .and_then(|()| journal.sync_data())
            .map_err(maybe)?;
        if created {
            failpoint::check(failpoint, Step::DirFsync)
                .and_then(|()| fsx::sync_dir(dir))
                .map_err(maybe)?;
        }
    }
    let Some(text) = text else {
        return Ok(());
    };
    let maybe = |source: io::Error| Error::MaybeSaved {
        path: dir.join(STATE_FILE),
        source,
    };
    write_state_atomically(dir, &text, failpoint).map_err(maybe)
}

/// The text of `state.json`: indented JSON, or for a state of [`DEFER_STATE_BYTES`] or more,
/// JSON without indentation, which is a third smaller and as much faster to read back.
fn state_text(state: &Workflow) -> Vec<u8> {
    let mut text = serde_json::to_vec(state).expect("a workflow always serializes");
    if (text.len() as u64) < DEFER_STATE_BYTES {
        text = serde_json::to_vec_pretty(state).expect("a workflow always serializes");
    }
    text.push(b'\n');
    text
}

fn write_state_atomically(
    dir: &Path,
    bytes: &[u8],
    failpoint: Option<Failpoint>,
) -> io::Result<()> {
    let state_path = dir.join(STATE_FILE);
    let mut temp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .permissions(private_file_permissions())
        .tempfile_in(dir)?;
    failpoint::check(failpoint, Step::TempWrite)?;
    temp.write_all(bytes)?;
    failpoint::check(failpoint, Step::TempFsync)?;
    temp.as_file().sync_all()?;
    if state_path.exists() {
        // The backup is a hard link to the old file, which is never written in place; it is
        // made under a temporary name and renamed, so that it never writes through a link.
        failpoint::check(failpoint, Step::BackupLink)?;
        let backup_tmp = dir.join(format!("{TEMP_PREFIX}bak"));
        let _ = fs::remove_file(&backup_tmp);
        if fs::hard_link(&state_path, &backup_tmp).is_err() {
            fs::copy(&state_path, &backup_tmp)?;
        }
        #[expect(
            clippy::disallowed_methods,
            reason = "the caller names the path in the error"
        )]
        fs::rename(&backup_tmp, dir.join(BACKUP_FILE))?;
        // When the backup already was this very file (a write failed after linking it), the
        // rename of one link onto another of the same file does nothing: drop the extra link.
        match fs::remove_file(&backup_tmp) {
            Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
            _ => {}
        }
    }
    failpoint::check(failpoint, Step::Rename)?;
    temp.persist(&state_path).map_err(|err| err.error)?;
    failpoint::check(failpoint, Step::DirFsync)?;
    fsx::sync_dir(dir)
}

/// `dir/name`, or `dir/name-2`, `dir/name-3`… when taken: a file kept aside never replaces an
/// earlier one kept in the same millisecond (the caller holds the lock).
fn unused_path(dir: &Path, name: &str) -> PathBuf {
    let mut path = dir.join(name);
    let mut n = 1;
    while fs::symlink_metadata(&path).is_ok() {
        n += 1;
        path = dir.join(format!("{name}-{n}"));
    }
    path
}

/// Refuses a path that is a symbolic link: the store never reads or writes through one.
fn refuse_symlink(path: &Path) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(Error::Symlink {
            path: path.to_owned(),
        }),
        _ => Ok(()),
    }
}

fn write_new_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = private_options()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|err| Error::io("create", path, err))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|err| Error::io("write", path, err))
}

fn create_private_dir(path: &Path) -> Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(path)
        .map_err(|err| Error::io("create directory", path, err))
}

fn private_options() -> fs::OpenOptions {
    let mut options = fs::OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

fn private_file_permissions() -> fs::Permissions {
    #[cfg(unix)]
    {
        std::os::unix::fs::PermissionsExt::from_mode(0o600)
    }
    #[cfg(not(unix))]
    {
        fs::metadata(".")
            .map(|meta| meta.permissions())
            .expect("the current directory has metadata")
    }
}

#[cfg(test)]
mod tests;
