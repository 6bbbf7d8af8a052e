//! One runner per workflow: an advisory lock on `run.lock` in the workflow's directory, held
//! for the runner's whole life and released by the kernel however the runner ends (a SIGKILL
//! leaves nothing that stops the next `run`). The file names the runner and its session.

use std::{
    fs::{File, OpenOptions},
    io::{Read, Seek, SeekFrom, Write},
    path::{Path, PathBuf},
};

use chrono::{DateTime, Utc};
use miette::{Diagnostic, IntoDiagnostic, Result, WrapErr};
use serde::{Deserialize, Serialize};

/// The lock file's name in a workflow's directory.
pub(crate) const RUN_LOCK_FILE: &str = "run.lock";

/// What the lock file says about its runner.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct LockOwner {
    /// The runner's process id.
    pub pid: u32,
    /// When it started.
    pub started_at: Option<DateTime<Utc>>,
    /// The agent session it runs now: its process id (also its process group).
    #[serde(default)]
    pub child_pid: Option<u32>,
    /// That process's start time in clock ticks after boot (`/proc/<pid>/stat`), so that a
    /// later runner never mistakes a new process with a reused id for it.
    #[serde(default)]
    pub child_start: Option<u64>,
}

impl From<&LockOwner> for crate::json::RunnerReport {
    fn from(owner: &LockOwner) -> Self {
        Self {
            pid: owner.pid,
            started_at: owner.started_at,
            child_pid: owner.child_pid,
            child_start: owner.child_start,
        }
    }
}

/// Another runner holds the workflow.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{what} already has a runner: pid {pid}{since}")]
#[diagnostic(
    code(checkpoint::run::busy),
    help(
        "wait for it, or stop it (Ctrl-C, or `kill -INT {pid}`); one runner per workflow, one `run --all` per project"
    )
)]
pub(crate) struct RunnerBusy {
    /// "workflow `w`", or "this project's `checkpoint run --all`".
    what: String,
    pid: u32,
    since: String,
}

impl RunnerBusy {
    pub(crate) fn new(what: String, holder: &LockOwner) -> RunnerBusy {
        RunnerBusy {
            what,
            pid: holder.pid,
            since: holder
                .started_at
                .map(|at| format!(", since {}", at.to_rfc3339()))
                .unwrap_or_default(),
        }
    }
}

/// The held lock.
pub(crate) struct RunLock {
    file: File,
    holder: LockOwner,
}

/// The outcome of trying to take the lock.
pub(crate) enum Acquired {
    /// Ours; with what the previous runner left in the file, if anything.
    Held(RunLock, Option<LockOwner>),
    /// Another runner holds it.
    Busy(LockOwner),
}

fn path(workflow_dir: &Path) -> PathBuf {
    workflow_dir.join(RUN_LOCK_FILE)
}

/// How many times [`acquire`] tries a lock it finds taken, [`RETRY_PAUSE`] apart: `status` and
/// `watch` take it shared for an instant to see whether a runner is there, and a `run` starting
/// in that instant must not take them for a runner.
const TRIES: u32 = 20;
const RETRY_PAUSE: std::time::Duration = std::time::Duration::from_millis(10);

/// Takes the runner lock of the workflow in `workflow_dir`; a lock held for longer than about
/// 200 ms is another runner's.
pub(crate) fn acquire(workflow_dir: &Path, holder: LockOwner) -> Result<Acquired> {
    let path = path(workflow_dir);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .into_diagnostic()
        .wrap_err_with(|| format!("failed to open `{}`", path.display()))?;
    let mut tries = 1;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(std::fs::TryLockError::WouldBlock) if tries < TRIES => {
                tries += 1;
                std::thread::sleep(RETRY_PAUSE);
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Ok(Acquired::Busy(read_holder(&mut file).unwrap_or_default()));
            }
            Err(std::fs::TryLockError::Error(err)) => {
                return Err(err)
                    .into_diagnostic()
                    .wrap_err_with(|| format!("failed to lock `{}`", path.display()));
            }
        }
    }
    // Read again under the lock: the file may have changed in between.
    let previous = read_holder(&mut file);
    let mut lock = RunLock { file, holder };
    lock.write()?;
    Ok(Acquired::Held(lock, previous))
}

/// The runner holding the workflow's lock now, if any (for `status`).
pub(crate) fn holder(workflow_dir: &Path) -> Option<LockOwner> {
    let mut file = File::open(path(workflow_dir)).ok()?;
    match file.try_lock_shared() {
        Ok(()) => None,
        Err(std::fs::TryLockError::WouldBlock) => Some(read_holder(&mut file).unwrap_or_default()),
        Err(std::fs::TryLockError::Error(_)) => None,
    }
}

fn read_holder(file: &mut File) -> Option<LockOwner> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

impl RunLock {
    /// Records the session the runner runs now (`None` once it ended).
    pub(crate) fn set_child(&mut self, child: Option<(u32, Option<u64>)>) -> Result<()> {
        self.holder.child_pid = child.map(|(pid, _)| pid);
        self.holder.child_start = child.and_then(|(_, start)| start);
        self.write()
    }

    fn write(&mut self) -> Result<()> {
        let text = serde_json::to_string(&self.holder).into_diagnostic()?;
        self.file
            .set_len(0)
            .and_then(|()| self.file.seek(SeekFrom::Start(0)))
            .and_then(|_| self.file.write_all(text.as_bytes()))
            .into_diagnostic()
            .wrap_err("failed to write the runner lock")
    }
}

/// The start time of process `pid` in clock ticks after boot, where the system says (Linux).
pub(crate) fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after its end.
    let (_, after) = stat.rsplit_once(')')?;
    after.split_whitespace().nth(19)?.parse().ok()
}
