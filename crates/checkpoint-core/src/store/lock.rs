//! The workflow's advisory lock: taken with a bounded wait, said once when contended.

use std::{
    fs,
    io::{Read, Seek, Write},
    path::Path,
    thread,
    time::{Duration, Instant},
};

use crate::{
    error::{Error, Result},
    store::{
        handle::Store,
        layout::LOCK_FILE,
        write::{private_options, refuse_symlink},
    },
};

impl Store {
    /// The lock when it is free now, without waiting; `None` when another process holds it.
    pub(super) fn try_lock(&self, dir: &Path) -> Result<Option<fs::File>> {
        self.write_ignore_file();
        let (path, file) = open_lock_file(dir)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(self.signed(file))),
            Err(fs::TryLockError::WouldBlock) => Ok(None),
            Err(fs::TryLockError::Error(err)) => Err(Error::io("lock", &path, err)),
        }
    }

    /// The lock, waited for at most `limit` (and the store's lock timeout) without a word;
    /// `None` when another process held it all that time. For a reader that wants a view no
    /// write is halfway through.
    pub(super) fn wait_quietly(&self, dir: &Path, limit: Duration) -> Result<Option<fs::File>> {
        let limit = limit.min(self.options.lock_timeout);
        let started = Instant::now();
        let mut delay = Duration::from_millis(1);
        loop {
            if let Some(file) = self.try_lock(dir)? {
                return Ok(Some(file));
            }
            let waited = started.elapsed();
            if waited >= limit {
                return Ok(None);
            }
            thread::sleep(delay.min(limit.saturating_sub(waited)));
            delay = (delay * 2).min(Duration::from_millis(20));
        }
    }

    pub(super) fn lock(&self, dir: &Path) -> Result<fs::File> {
        self.write_ignore_file();
        let (path, file) = open_lock_file(dir)?;
        let started = Instant::now();
        let mut delay = Duration::from_millis(1);
        let mut warned = false;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(self.signed(file)),
                Err(fs::TryLockError::WouldBlock) => {}
                Err(fs::TryLockError::Error(err)) => return Err(Error::io("lock", &path, err)),
            }
            let waited = started.elapsed();
            if waited >= self.options.lock_timeout {
                let holder = holder_of(&path);
                return Err(Error::Locked {
                    help: locked_help(&path, holder.as_deref()),
                    holder: holder
                        .map_or_else(String::new, |holder| format!(" (held by {holder})")),
                    path,
                    waited_ms: waited.as_millis(),
                });
            }
            if !warned {
                warned = true;
                if let Some(on_wait) = self.options.on_lock_wait {
                    on_wait(&path, holder_of(&path).as_deref());
                }
            }
            thread::sleep(delay.min(self.options.lock_timeout.saturating_sub(waited)));
            delay = (delay * 2).min(Duration::from_millis(50));
        }
    }
}

impl Store {
    /// The lock file, once locked, with this process's holder line in place of the last one's
    /// (best effort: a holder that cannot be written only makes a waiting process's message
    /// vaguer).
    fn signed(&self, mut file: fs::File) -> fs::File {
        if let Some(holder) = &self.holder {
            let _ = file
                .set_len(0)
                .and_then(|()| file.rewind())
                .and_then(|()| file.write_all(format!("{holder}\n").as_bytes()));
        }
        file
    }
}

/// What the process holding the lock wrote in it: its pid, its command and since when.
pub(crate) fn holder_of(path: &Path) -> Option<String> {
    let mut text = String::new();
    fs::File::open(path)
        .ok()?
        .take(1024)
        .read_to_string(&mut text)
        .ok()?;
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then(|| line.to_owned())
}

/// What to do about a lock that stays held.
pub(crate) fn locked_help(path: &Path, holder: Option<&str>) -> String {
    let who = holder.map_or_else(
        || "another `checkpoint` process holds it".to_owned(),
        |holder| format!("{holder} holds it"),
    );
    format!(
        "{who}; let it finish, or raise the timeout with `CHECKPOINT_LOCK_TIMEOUT=<seconds>`. A lock ends with its process: if that process is gone and the lock is still held, a process it started holds `{}` (find it with `fuser {}` or `lsof {}`, and stop it)",
        path.display(),
        path.display(),
        path.display()
    )
}

/// The workflow's lock file, opened (created when missing), never through a symlink.
fn open_lock_file(dir: &Path) -> Result<(std::path::PathBuf, fs::File)> {
    let path = dir.join(LOCK_FILE);
    refuse_symlink(&path)?;
    let file = private_options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|err| Error::io("open lock file", &path, err))?;
    Ok((path, file))
}
