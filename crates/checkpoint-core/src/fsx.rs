//! Thin filesystem helpers whose errors name the path they concern.

use std::{
    fs,
    io::{self, Read, Write},
    path::Path,
};

use crate::error::{Error, Result};

/// The largest state file we read whole; larger ones are refused, not loaded (journals are read
/// line by line instead, see `journal::MAX_LINE_BYTES`).
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

/// Writes `bytes` to `path` atomically: a temporary file beside it, fsynced, then renamed over.
///
/// Unless `overwrite` is set, an existing file is an [`Error::OutputExists`] and is left alone.
/// A replaced file keeps its permission bits; a new one is readable by everyone (mode 0644).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], overwrite: bool) -> Result<()> {
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let old_permissions = fs::metadata(path).ok().map(|meta| meta.permissions());
    if old_permissions.is_some() && !overwrite {
        return Err(Error::OutputExists {
            path: path.to_owned(),
        });
    }
    let mut temp = tempfile::Builder::new()
        .prefix(".checkpoint-export-")
        .tempfile_in(parent)
        .map_err(|err| Error::io("create a temporary file in", parent, err))?;
    let permissions = old_permissions.unwrap_or_else(default_permissions);
    temp.write_all(bytes)
        .and_then(|()| temp.as_file().set_permissions(permissions))
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|err| Error::io("write", temp.path().to_owned(), err))?;
    let persisted = if overwrite {
        temp.persist(path)
    } else {
        temp.persist_noclobber(path)
    };
    match persisted {
        Ok(_) => {}
        Err(err) if err.error.kind() == io::ErrorKind::AlreadyExists => {
            return Err(Error::OutputExists {
                path: path.to_owned(),
            });
        }
        Err(err) => return Err(Error::io("write", path, err.error)),
    }
    sync_dir(parent).map_err(|err| Error::io("sync", parent, err))
}

fn default_permissions() -> fs::Permissions {
    #[cfg(unix)]
    {
        std::os::unix::fs::PermissionsExt::from_mode(0o644)
    }
    #[cfg(not(unix))]
    {
        let mut permissions = fs::metadata(".")
            .map(|meta| meta.permissions())
            .expect("the current directory has metadata");
        permissions.set_readonly(false);
        permissions
    }
}
