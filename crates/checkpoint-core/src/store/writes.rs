//! The project's record of writers and writes (`.writes/` in the store), shared by every
//! workflow, session and worktree of the project.
//!
//! - `paths/<xx>/<hash>.json`: one record per file ([`PathRecord`]: its last writes, what each
//!   writer last saw), named by a hash of the file's path, so the guard before a write is one
//!   file opened (none for a file nobody wrote), whatever the number of files and sessions.
//! - `log.jsonl`: every write, appended one line at a time (history for `who`, `watch` and the
//!   check after a Bash command, which reads its recent end); a torn last line is skipped.
//! - `writers.json`: each writer's last hook, end and checkout; `claims.json`: the claims;
//!   `notices.jsonl`: the overwrites a Bash command made, for `watch`.
//!
//! Every change is made under `.writes/lock` and each table is replaced atomically (a temporary
//! file renamed over it), so readers never take the lock and a process killed at any point
//! leaves every file whole. A record that cannot be read is reported and kept, never replaced.

use std::{
    fs,
    io::{self, Read, Seek, SeekFrom, Write as _},
    path::{Path, PathBuf},
};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize, de::DeserializeOwned};

use crate::{
    error::{Error, Result},
    fsx,
    store::{
        handle::Store,
        write::{create_private_dir, private_options},
    },
    writes::{Claim, PathRecord, Write, Writer, WriterState},
};

/// The directory of the records in the store.
pub(crate) const WRITES_DIR: &str = ".writes";
const LOG_FILE: &str = "log.jsonl";
const WRITERS_FILE: &str = "writers.json";
const CLAIMS_FILE: &str = "claims.json";
const NOTICES_FILE: &str = "notices.jsonl";
/// Each writer's last Bash command ([`BashRun`]).
const RUNNING_DIR: &str = "running";
/// A log over this many bytes is moved to `log.1.jsonl` (the previous one dropped).
const MAX_LOG_BYTES: u64 = 16 << 20;
/// How much of the log's end the check after a Bash command reads.
const TAIL_BYTES: u64 = 1 << 20;
/// A writer's last hook is rewritten when it is older than this (seconds): a hook in between
/// only reads.
const HEARD_EVERY_SECONDS: i64 = 60;

/// A writer's last Bash command: when it started and ended (nanoseconds of the real clock, as
/// file times are), to tell which commands may have made a change found later.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BashRun {
    pub writer: Writer,
    pub start_ns: i128,
    #[serde(default)]
    pub end_ns: Option<i128>,
}

impl BashRun {
    /// Whether the command ran at `at` (within `slack` either side, for coarse file times).
    pub fn ran_at(&self, at: i128, slack: i128) -> bool {
        self.start_ns - slack <= at && self.end_ns.is_none_or(|end| at <= end + slack)
    }
}

/// A Bash command's overwrite of another writer's change, as `watch` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notice {
    pub at: DateTime<Utc>,
    pub path: String,
    /// The writer whose command overwrote.
    pub by: Writer,
    /// The writer whose change was overwritten, and its write.
    pub overwritten: Write,
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<u64>,
}

impl Store {
    /// The directory of the project's write records.
    pub fn writes_dir(&self) -> PathBuf {
        self.root.join(WRITES_DIR)
    }

    fn record_path(&self, path: &str) -> PathBuf {
        let hash = crate::writes::content_hash(path.as_bytes());
        self.writes_dir()
            .join("paths")
            .join(&hash[..2])
            .join(format!("{}.json", &hash[2..]))
    }

    /// The record of `path` (absolute), without the lock; `None` when nobody wrote or read it.
    pub fn path_record(&self, path: &str) -> Result<Option<PathRecord>> {
        let file = self.record_path(path);
        let record: Option<PathRecord> = read_json(&file)?;
        // Two paths with one hash: the other's record is not this one's.
        Ok(record.filter(|record| record.path == path))
    }

    /// Changes the records of `paths` under the lock: `change` gets each one (new when absent)
    /// and says whether to keep it; writes are appended to the log.
    pub fn update_paths(
        &self,
        paths: &[String],
        mut change: impl FnMut(&mut PathRecord) -> Vec<Write>,
    ) -> Result<()> {
        let dir = self.writes_dir();
        create_private_dir(&dir)?;
        let _lock = self.lock(&dir)?;
        let mut log = Vec::new();
        for path in paths {
            let file = self.record_path(path);
            let mut record = match read_json::<PathRecord>(&file)? {
                Some(record) if record.path == *path => record,
                _ => PathRecord::new(path),
            };
            let written = change(&mut record);
            if let Some(parent) = file.parent() {
                create_private_dir(parent)?;
            }
            write_json(&file, &record)?;
            log.extend(written);
        }
        if !log.is_empty() {
            self.append_lines(&dir.join(LOG_FILE), &log)?;
        }
        Ok(())
    }

    /// The writes of the log's recent end (up to about a megabyte), oldest first.
    pub fn recent_writes(&self) -> Result<Vec<Write>> {
        read_tail(&self.writes_dir().join(LOG_FILE), TAIL_BYTES)
    }

    /// The writers as last heard.
    pub fn writers(&self) -> Result<Vec<WriterState>> {
        Ok(read_json(&self.writes_dir().join(WRITERS_FILE))?.unwrap_or_default())
    }

    /// Notes a hook of `state.writer`: rewritten when new, moved, ended, or heard more than a
    /// minute ago; otherwise only read.
    pub fn heard(&self, state: &WriterState) -> Result<()> {
        // A last hook ahead of this one (another clock) is rewritten: it would stay fresh until
        // this clock caught up with it.
        let fresh = |known: &[WriterState]| {
            known.iter().any(|known| {
                known.writer == state.writer
                    && !known.ended
                    && known.checkout == state.checkout
                    && (0..HEARD_EVERY_SECONDS)
                        .contains(&state.last.signed_duration_since(known.last).num_seconds())
            })
        };
        if fresh(&self.writers()?) {
            return Ok(());
        }
        self.update_writers(|writers| {
            if fresh(writers) {
                return;
            }
            writers.retain(|known| known.writer != state.writer);
            writers.push(state.clone());
        })
    }

    /// Changes the writers' table under the lock.
    pub fn update_writers(&self, change: impl FnOnce(&mut Vec<WriterState>)) -> Result<()> {
        let dir = self.writes_dir();
        create_private_dir(&dir)?;
        let _lock = self.lock(&dir)?;
        let file = dir.join(WRITERS_FILE);
        let mut writers: Vec<WriterState> = read_json(&file)?.unwrap_or_default();
        change(&mut writers);
        write_json(&file, &writers)
    }

    /// The claims.
    pub fn claims(&self) -> Result<Vec<Claim>> {
        Ok(read_json(&self.writes_dir().join(CLAIMS_FILE))?.unwrap_or_default())
    }

    /// Changes the claims under the lock.
    pub fn update_claims(&self, change: impl FnOnce(&mut Vec<Claim>)) -> Result<()> {
        let dir = self.writes_dir();
        create_private_dir(&dir)?;
        let _lock = self.lock(&dir)?;
        let file = dir.join(CLAIMS_FILE);
        let mut claims: Vec<Claim> = read_json(&file)?.unwrap_or_default();
        change(&mut claims);
        write_json(&file, &claims)
    }

    /// Notes that `writer`'s Bash command starts now (`at`, nanoseconds of the real clock).
    pub fn bash_started(&self, writer: &Writer, at: i128) -> Result<()> {
        self.write_run(&BashRun {
            writer: writer.clone(),
            start_ns: at,
            end_ns: None,
        })
    }

    /// `writer`'s Bash command ended at `at`; its run is kept, for the changes found later.
    pub fn bash_ended(&self, writer: &Writer, at: i128) {
        let file = self
            .writes_dir()
            .join(RUNNING_DIR)
            .join(running_name(writer));
        let Some(mut run) = fsx::read_limited(&file)
            .ok()
            .flatten()
            .and_then(|bytes| serde_json::from_slice::<BashRun>(&bytes).ok())
        else {
            return;
        };
        run.end_ns = Some(at);
        let _ = self.write_run(&run);
    }

    fn write_run(&self, run: &BashRun) -> Result<()> {
        let dir = self.writes_dir().join(RUNNING_DIR);
        create_private_dir(&dir)?;
        let file = dir.join(running_name(&run.writer));
        let bytes = serde_json::to_vec(run)
            .map_err(|err| Error::io("encode", &file, io::Error::other(err)))?;
        fsx::write_atomic(&file, &bytes, true)
    }

    /// Each writer's last Bash command (a run older than `stale` is left out).
    pub fn bash_runs(&self, stale: std::time::Duration) -> Vec<BashRun> {
        let Ok(entries) = fs::read_dir(self.writes_dir().join(RUNNING_DIR)) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter(|entry| {
                entry
                    .metadata()
                    .and_then(|meta| meta.modified())
                    .ok()
                    .and_then(|modified| modified.elapsed().ok())
                    .is_some_and(|age| age < stale)
            })
            .filter_map(|entry| {
                serde_json::from_slice(&fsx::read_limited(&entry.path()).ok()??).ok()
            })
            .collect()
    }

    /// Journals a Bash command's overwrites, for `watch`.
    pub fn add_notices(&self, notices: &[Notice]) -> Result<()> {
        let dir = self.writes_dir();
        create_private_dir(&dir)?;
        let _lock = self.lock(&dir)?;
        self.append_lines(&dir.join(NOTICES_FILE), notices)
    }

    /// The recent overwrites, oldest first.
    pub fn notices(&self) -> Result<Vec<Notice>> {
        read_tail(&self.writes_dir().join(NOTICES_FILE), TAIL_BYTES)
    }

    /// Appends one JSON line per item in one write (the caller holds the lock); a log over
    /// [`MAX_LOG_BYTES`] is moved aside first.
    fn append_lines<T: Serialize>(&self, file: &Path, items: &[T]) -> Result<()> {
        if fs::metadata(file).is_ok_and(|meta| meta.len() > MAX_LOG_BYTES) {
            let aside = file.with_extension("1.jsonl");
            fsx::rename(file, &aside)?;
        }
        let mut text = String::new();
        // A writer killed in the middle of its line left it torn: the next line starts on a
        // line of its own, so that only the torn one is lost.
        if !ends_a_line(file)? {
            text.push('\n');
        }
        for item in items {
            let line = serde_json::to_string(item)
                .map_err(|err| Error::io("encode", file, io::Error::other(err)))?;
            text.push_str(&line);
            text.push('\n');
        }
        let mut out = private_options()
            .append(true)
            .create(true)
            .open(file)
            .map_err(|err| Error::io("open", file, err))?;
        out.write_all(text.as_bytes())
            .map_err(|err| Error::io("append to", file, err))
    }
}

/// Whether `file` is missing, empty or ends with a newline.
fn ends_a_line(file: &Path) -> Result<bool> {
    let mut handle = match fs::File::open(file) {
        Ok(handle) => handle,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(true),
        Err(err) => return Err(Error::io("open", file, err)),
    };
    if handle
        .seek(SeekFrom::End(0))
        .map_err(|err| Error::io("read", file, err))?
        == 0
    {
        return Ok(true);
    }
    let mut last = [0u8];
    handle
        .seek(SeekFrom::End(-1))
        .and_then(|_| handle.read_exact(&mut last))
        .map_err(|err| Error::io("read", file, err))?;
    Ok(last[0] == b'\n')
}

/// The name of a writer's running mark.
fn running_name(writer: &Writer) -> String {
    crate::writes::content_hash(writer.key().as_bytes())
}

/// A JSON table, `None` when missing; one that does not parse is an error naming it (and is
/// kept: no writer replaces what it cannot read).
fn read_json<T: DeserializeOwned>(file: &Path) -> Result<Option<T>> {
    let Some(bytes) = fsx::read_limited(file)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|err| Error::Unreadable {
            path: file.to_owned(),
            reason: format!(
                "not a record `checkpoint` wrote ({err}); move it away to start it anew"
            ),
        })
}

/// Replaces a table atomically.
fn write_json<T: Serialize>(file: &Path, value: &T) -> Result<()> {
    let bytes = serde_json::to_vec(value)
        .map_err(|err| Error::io("encode", file, io::Error::other(err)))?;
    fsx::write_atomic(file, &bytes, true)
}

/// The lines of the last `limit` bytes of a JSONL file that parse, oldest first (the first,
/// cut, line and a torn last one are skipped).
fn read_tail<T: DeserializeOwned>(file: &Path, limit: u64) -> Result<Vec<T>> {
    let mut handle = match fs::File::open(file) {
        Ok(handle) => handle,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(Error::io("open", file, err)),
    };
    let len = handle
        .metadata()
        .map_err(|err| Error::io("read", file, err))?
        .len();
    let start = len.saturating_sub(limit);
    handle
        .seek(SeekFrom::Start(start))
        .map_err(|err| Error::io("read", file, err))?;
    let mut bytes = Vec::new();
    handle
        .take(limit)
        .read_to_end(&mut bytes)
        .map_err(|err| Error::io("read", file, err))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines();
    if start > 0 {
        lines.next();
    }
    Ok(lines
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "the test plants a corrupt record and reads it back raw"
)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn write(path: &str, session: &str, hash: &str) -> Write {
        Write {
            at: Utc.with_ymd_and_hms(2026, 11, 27, 10, 0, 0).unwrap(),
            path: path.into(),
            session: session.into(),
            agent: None,
            agent_type: None,
            phase: None,
            tool: "Write".into(),
            hash: hash.into(),
            size: 1,
            mtime_ns: 1,
            added: Some(1),
            removed: Some(0),
            also: Vec::new(),
        }
    }

    /// A record made under the lock is read back without it; a path nobody wrote has none; the
    /// log holds the writes, its torn last line skipped.
    #[test]
    fn records_round_trip_and_a_torn_log_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::tests::store(dir.path());
        let paths = vec!["/repo/a".to_owned(), "/repo/b".to_owned()];
        store
            .update_paths(&paths, |record| {
                let written = write(&record.path, "s1", "h1");
                record.wrote(written.clone());
                vec![written]
            })
            .unwrap();
        let record = store.path_record("/repo/a").unwrap().unwrap();
        assert_eq!(record.writes.len(), 1);
        assert_eq!(record.seen["s1"].hash, "h1");
        assert_eq!(store.path_record("/repo/c").unwrap(), None);
        let log = store.writes_dir().join(LOG_FILE);
        fs::OpenOptions::new()
            .append(true)
            .open(&log)
            .unwrap()
            .write_all(b"{\"at\":\"2026-11-27T10:0")
            .unwrap();
        let recent = store.recent_writes().unwrap();
        assert_eq!(
            recent.iter().map(|w| w.path.as_str()).collect::<Vec<_>>(),
            ["/repo/a", "/repo/b"]
        );
        // The next write after the torn line is read whole: only the torn one is lost.
        let more = vec!["/repo/c".to_owned()];
        store
            .update_paths(&more, |record| vec![write(&record.path, "s2", "h2")])
            .unwrap();
        let recent = store.recent_writes().unwrap();
        assert_eq!(
            recent.iter().map(|w| w.path.as_str()).collect::<Vec<_>>(),
            ["/repo/a", "/repo/b", "/repo/c"]
        );
    }

    /// A record that does not parse is an error naming it, and is kept as it is.
    #[test]
    fn a_corrupt_record_is_reported_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::tests::store(dir.path());
        let file = store.record_path("/repo/a");
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(&file, b"{not json").unwrap();
        let err = store.path_record("/repo/a").unwrap_err().to_string();
        assert!(err.contains(&file.display().to_string()), "{err}");
        let paths = vec!["/repo/a".to_owned()];
        assert!(store.update_paths(&paths, |_| Vec::new()).is_err());
        assert_eq!(fs::read(&file).unwrap(), b"{not json");
    }
}
