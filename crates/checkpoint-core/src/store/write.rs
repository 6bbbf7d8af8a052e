//! Writing a workflow: journal append, atomic replace of `state.json` with its backup, deferral
//! of the rewrite of a large state, and private permissions.

use std::{
    fs,
    io::{self, Write},
    path::{Path, PathBuf},
};

use crate::{
    error::{Error, Result},
    failpoint::{self, Failpoint, Step},
    fsx, journal,
    model::Workflow,
    store::layout::{BACKUP_FILE, JOURNAL_FILE, STATE_FILE, TEMP_PREFIX},
};

/// A `state.json` at least this large is not rewritten by every write: see [`may_defer`].
pub const DEFER_STATE_BYTES: u64 = 256 * 1024;
/// The most journal entries a large `state.json` may lag behind by design.
pub(crate) const MAX_DEFERRED_ENTRIES: u64 = 16;
/// The most journal bytes a large `state.json` may lag behind by design.
pub(crate) const MAX_DEFERRED_BYTES: u64 = 64 * 1024;

/// Whether a `state.json` of `state_len` bytes may stay `lag` journal entries (`lag_bytes`
/// bytes) behind the journal rather than be rewritten; `whole` when those entries include one
/// that carries a whole workflow (`init`, `snapshot`), which is never left to a replay.
///
/// Rewriting a large state costs a serialization and a write of the whole file for a change of a
/// few bytes, so a write to a large workflow appends to the journal (the source of truth, fsynced
/// first as always) and rewrites `state.json` only once the journal is that far ahead; readers
/// replay the difference. Small states, the usual case, are rewritten every time. Writers and
/// readers ask the same question: what a writer leaves behind, a reader does not report.
pub(crate) fn may_defer(state_len: u64, lag: u64, lag_bytes: u64, whole: bool) -> bool {
    !whole
        && state_len >= DEFER_STATE_BYTES
        && lag < MAX_DEFERRED_ENTRIES
        && lag_bytes < MAX_DEFERRED_BYTES
}

/// Appends `lines` (journal entries) to the journal, then replaces the state when `state` is
/// given. Failures after the journal append began are [`Error::MaybeSaved`]: the journal may
/// hold the transitions.
///
/// `failpoint` injects an error at one step (tests only, see [`failpoint`]); each step is marked
/// by a `failpoint::check` call just before the operation it stands for.
pub(super) fn commit(
    dir: &Path,
    lines: &[String],
    state: Option<&Workflow>,
    failpoint: Option<Failpoint>,
) -> Result<()> {
    // Serialized before anything is written, so that nothing can fail between the two writes
    // but the writes themselves.
    let text = state.map(state_text);
    // One limit for writing and reading: a state no reader would accept is never written.
    if let Some(text) = &text
        && text.len() as u64 > fsx::MAX_FILE_BYTES
    {
        return Err(Error::StateTooLarge {
            path: dir.join(STATE_FILE),
            size: text.len() as u64,
            limit: fsx::MAX_FILE_BYTES,
        });
    }
    let journal_path = dir.join(JOURNAL_FILE);
    // One limit for writing and reading: a line no reader would accept is never written.
    if let Some(line) = lines
        .iter()
        .find(|line| line.len() as u64 > journal::MAX_LINE_BYTES)
    {
        return Err(Error::EntryTooLarge {
            path: journal_path,
            size: line.len() as u64,
            limit: journal::MAX_LINE_BYTES,
        });
    }
    if !lines.is_empty() {
        let lines = lines.concat();
        refuse_symlink(&journal_path)?;
        let created = !journal_path.exists();
        let mut journal = private_options()
            .append(true)
            .create(true)
            .open(&journal_path)
            .map_err(|err| Error::io("open", &journal_path, err))?;
        let len_before = refuse_growth_past(
            &journal,
            &journal_path,
            lines.len(),
            journal::MAX_JOURNAL_BYTES,
        )?;
        let maybe = |source: io::Error| Error::MaybeSaved {
            path: journal_path.clone(),
            source,
        };
        if let Err(err) = failpoint::check(failpoint, Step::JournalAppend) {
            // As a crash mid-append would, the injected failure leaves a torn line.
            let half = &lines.as_bytes()[..lines.len() / 2];
            journal.write_all(half).and(Err(err)).map_err(maybe)?;
        }
        if let Err(err) = journal.write_all(lines.as_bytes()) {
            // A full disk: cut back what part of the entry went in, so that nothing is torn and
            // nothing was saved (the next writer has nothing to move aside); the cause is named.
            return Err(match journal.set_len(len_before) {
                Ok(()) => Error::io("append to", &journal_path, err),
                Err(_) => maybe(err),
            });
        }
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

/// Refuses an append of `n_bytes` to the open journal at `path` that would take it past
/// `limit` bytes, before anything is written; returns the journal's length.
fn refuse_growth_past(journal: &fs::File, path: &Path, n_bytes: usize, limit: u64) -> Result<u64> {
    let len = journal
        .metadata()
        .map_err(|err| Error::io("read", path, err))?
        .len();
    let size = len.saturating_add(n_bytes as u64);
    if size > limit {
        return Err(Error::JournalFull {
            path: path.to_owned(),
            size,
            limit,
        });
    }
    Ok(len)
}

/// The text of `state.json`: indented JSON, or for a state of [`DEFER_STATE_BYTES`] or more,
/// JSON without indentation, which is a third smaller and as much faster to read back.
pub(super) fn state_text(state: &Workflow) -> Vec<u8> {
    let mut text = serde_json::to_vec(state).expect("a workflow always serializes");
    if (text.len() as u64) < DEFER_STATE_BYTES {
        text = serde_json::to_vec_pretty(state).expect("a workflow always serializes");
    }
    text.push(b'\n');
    text
}

pub(super) fn write_state_atomically(
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
pub(super) fn unused_path(dir: &Path, name: &str) -> PathBuf {
    let mut path = dir.join(name);
    let mut n = 1;
    while fs::symlink_metadata(&path).is_ok() {
        n += 1;
        path = dir.join(format!("{name}-{n}"));
    }
    path
}

/// Refuses a path that is a symbolic link: the store never reads or writes through one.
pub(super) fn refuse_symlink(path: &Path) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(Error::Symlink {
            path: path.to_owned(),
        }),
        _ => Ok(()),
    }
}

pub(super) fn write_new_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = private_options()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|err| Error::io("create", path, err))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|err| {
            // A full disk leaves no empty or partial file behind: the next try starts clean.
            let _ = fs::remove_file(path);
            Error::io("write", path, err)
        })
}

pub(super) fn create_private_dir(path: &Path) -> Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(path)
        .map_err(|err| Error::io("create directory", path, err))
}

pub(super) fn private_options() -> fs::OpenOptions {
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

/// Writes a cache file of the store (`name` in `dir`) atomically: a temporary file renamed over
/// it, without fsync (a torn or lost cache is rebuilt by its next reader); a killed writer's
/// temporary file is removed once stale.
pub(super) fn write_cache(dir: &Path, name: &str, text: &[u8]) -> Result<()> {
    let temp_prefix = format!(".{name}.tmp-");
    fsx::remove_stale(dir, &temp_prefix);
    let temp_path = dir.join(format!("{temp_prefix}{}", std::process::id()));
    let mut temp = private_options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&temp_path)
        .map_err(|err| Error::io("create", &temp_path, err))?;
    temp.write_all(text)
        .map_err(|err| Error::io("write", &temp_path, err))?;
    fsx::rename(&temp_path, &dir.join(name))
}

/// A hash of the `span` bytes of the journal just before `end`: what a cache of the journal
/// checks to trust that the journal still holds what it covers.
pub(super) fn fingerprint(journal: &mut fs::File, end: u64, span: u64) -> io::Result<String> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let start = end.saturating_sub(span);
    journal.seek(SeekFrom::Start(start))?;
    let mut bytes = vec![0; (end - start) as usize];
    journal.read_exact(&mut bytes)?;
    Ok(format!("{:032x}", crate::effects::fnv1a_128(&bytes)))
}
