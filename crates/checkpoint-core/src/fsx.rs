//! Thin filesystem helpers whose errors name the path they concern.

use std::{
    fs,
    io::{self, Read},
    path::Path,
};

use crate::error::{Error, Result};

/// The largest state or journal file we read whole; larger ones are refused, not loaded.
pub(crate) const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Reads a regular file (never through a symlink) of at most [`MAX_FILE_BYTES`].
///
/// Returns `Ok(None)` when the file does not exist.
pub(crate) fn read_limited(path: &Path) -> Result<Option<Vec<u8>>> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Error::io("read", path, err)),
    };
    if meta.file_type().is_symlink() {
        return Err(Error::Symlink {
            path: path.to_owned(),
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(Error::TooLarge {
            path: path.to_owned(),
            size: meta.len(),
            limit: MAX_FILE_BYTES,
        });
    }
    let file = match fs::File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Error::io("open", path, err)),
    };
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| Error::io("read", path, err))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Error::TooLarge {
            path: path.to_owned(),
            size: bytes.len() as u64,
            limit: MAX_FILE_BYTES,
        });
    }
    Ok(Some(bytes))
}

/// Renames `from` to `to`, naming `to` in the error.
pub(crate) fn rename(from: &Path, to: &Path) -> Result<()> {
    #[expect(
        clippy::disallowed_methods,
        reason = "this is the wrapper that names the path"
    )]
    fs::rename(from, to).map_err(|err| Error::io("rename into", to, err))
}

/// Fsyncs a directory so that renames inside it are durable.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}
