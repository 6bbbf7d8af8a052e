//! The workflow's advisory lock: taken with a bounded wait, said once when contended.

use std::{
    fs,
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
        let (path, file) = open_lock_file(dir)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(file)),
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
        let (path, file) = open_lock_file(dir)?;
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
