//! Thin filesystem helpers whose errors name the path they concern.

use std::{
    fs,
    io::{self, Read, Write},
    path::Path,
};

use crate::error::{Error, Result};

/// The largest state file we read whole; larger ones are refused, not loaded (journals are read
/// line by line instead, see `journal::MAX_LINE_BYTES`).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

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
    let Some(file) = open_regular(path)? else {
        return Ok(None);
    };
    match read_bounded(path, file, MAX_FILE_BYTES)? {
        Ok(bytes) => Ok(Some(bytes)),
        Err(size) => Err(Error::TooLarge {
            path: path.to_owned(),
            size,
            limit: MAX_FILE_BYTES,
        }),
    }
}

/// Reads a file the program did not write (a plan, another system's state file, the client's
/// files, the settings): opened without blocking (a FIFO or a device never hangs the reader),
/// checked to be a regular file once open, and read up to `limit` bytes; links are followed to
/// what they lead to, which is checked the same way.
///
/// Returns `Ok(None)` when the file does not exist; [`Error::Unreadable`] names the file and
/// what it is otherwise.
pub fn read_foreign(path: &Path, limit: u64) -> Result<Option<Vec<u8>>> {
    let Some(file) = open_regular(path)? else {
        return Ok(None);
    };
    match read_bounded(path, file, limit)? {
        Ok(bytes) => Ok(Some(bytes)),
        Err(_) => Err(Error::Unreadable {
            path: path.to_owned(),
            reason: format!("it is larger than the limit of {limit} bytes"),
        }),
    }
}

/// The end of a file the program did not write, read as [`read_foreign`] reads (never
/// blocking, a regular file only): what an incremental reader of an append-only file needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignTail {
    /// The bytes from the offset asked for to the end (none when the file is shorter).
    pub bytes: Vec<u8>,
    /// The file's size when it was opened.
    pub len: u64,
    /// The file's identity (its inode), which a rewrite by rename changes.
    pub inode: u64,
}

/// Reads a file the program did not write from byte `from` to its end, at most `limit` bytes
/// (an error past it, naming the file); `Ok(None)` when it does not exist.
pub fn read_foreign_from(path: &Path, from: u64, limit: u64) -> Result<Option<ForeignTail>> {
    use std::io::{Seek, SeekFrom};
    let Some(mut file) = open_regular(path)? else {
        return Ok(None);
    };
    let meta = file
        .metadata()
        .map_err(|err| Error::io("read", path, err))?;
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    let len = meta.len();
    if from > len {
        return Ok(Some(ForeignTail {
            bytes: Vec::new(),
            len,
            inode,
        }));
    }
    file.seek(SeekFrom::Start(from))
        .map_err(|err| Error::io("read", path, err))?;
    match read_bounded(path, file, limit)? {
        Ok(bytes) => Ok(Some(ForeignTail { bytes, len, inode })),
        Err(_) => Err(Error::Unreadable {
            path: path.to_owned(),
            reason: format!("it is larger than the limit of {limit} bytes"),
        }),
    }
}

/// Opens `path` for reading without blocking, and checks (with `fstat` on the open file, so
/// that nothing can swap it in between) that it is a regular file.
fn open_regular(path: &Path) -> Result<Option<fs::File>> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let file = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fs::File::from(fd),
        Err(err) if err == rustix::io::Errno::NOENT => return Ok(None),
        Err(err) => return Err(Error::io("open", path, err.into())),
    };
    let meta = file
        .metadata()
        .map_err(|err| Error::io("read", path, err))?;
    if !meta.is_file() {
        return Err(Error::Unreadable {
            path: path.to_owned(),
            reason: format!("it is {}, not a regular file", file_kind(&meta)),
        });
    }
    Ok(Some(file))
}

/// What a file that is not a regular file is, in words.
fn file_kind(meta: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a named pipe (FIFO)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// Reads at most `limit` bytes of an open file: the bytes, or how many it has at least when
/// it has more.
fn read_bounded(path: &Path, file: fs::File, limit: u64) -> Result<Result<Vec<u8>, u64>> {
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|err| Error::io("read", path, err))?;
    let size = bytes.len() as u64;
    Ok(if size > limit { Err(size) } else { Ok(bytes) })
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

/// The name of [`write_atomic`]'s temporary files start with this.
const EXPORT_PREFIX: &str = ".checkpoint-export-";

/// How old a temporary file of ours must be before another writer takes it for the scrap of a
/// killed one: far longer than any write takes.
pub(crate) const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(3600);

/// Removes, best effort, the files in `dir` whose names start with `prefix` and that were last
/// changed over [`STALE_TEMP`] ago: what a writer killed between creating its temporary file
/// and renaming it left behind. A live writer's file is younger, and kept.
pub fn remove_stale(dir: &Path, prefix: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for entry in entries.flatten() {
        let stale = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(prefix))
            && entry
                .metadata()
                .ok()
                .filter(fs::Metadata::is_file)
                .and_then(|meta| meta.modified().ok())
                .and_then(|modified| now.duration_since(modified).ok())
                .is_some_and(|age| age > STALE_TEMP);
        if stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, fsynced, then renamed over.
///
/// Unless `overwrite` is set, an existing file is an [`Error::OutputExists`] and is left alone.
/// A replaced file keeps its permission bits; a new one is readable by everyone (mode 0644).
pub fn write_atomic(path: &Path, bytes: &[u8], overwrite: bool) -> Result<()> {
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    remove_stale(parent, EXPORT_PREFIX);
    let old_permissions = fs::metadata(path).ok().map(|meta| meta.permissions());
    if old_permissions.is_some() && !overwrite {
        return Err(Error::OutputExists {
            path: path.to_owned(),
        });
    }
    let mut temp = tempfile::Builder::new()
        .prefix(EXPORT_PREFIX)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary file a killed writer left (an export's, the effects index's) is removed by
    /// the next write beside it once it is stale; a fresh one, maybe a live writer's, is kept,
    /// and so is every other file.
    #[test]
    fn the_next_writer_removes_stale_temporary_files() {
        let dir = tempfile::tempdir().unwrap();
        let old = std::time::SystemTime::now() - STALE_TEMP - std::time::Duration::from_secs(60);
        let names = [
            ".checkpoint-export-old",
            ".checkpoint-export-fresh",
            ".effects.idx.tmp-123",
            "notes.md",
        ];
        for name in names {
            let file = fs::File::create(dir.path().join(name)).unwrap();
            if name != ".checkpoint-export-fresh" {
                file.set_modified(old).unwrap();
            }
        }
        write_atomic(&dir.path().join("out.md"), b"x", true).unwrap();
        let exists = |name: &str| dir.path().join(name).exists();
        assert!(!exists(".checkpoint-export-old"));
        assert!(exists(".checkpoint-export-fresh"));
        assert!(
            exists(".effects.idx.tmp-123"),
            "another prefix is not ours to remove here"
        );
        assert!(exists("notes.md") && exists("out.md"));
        remove_stale(dir.path(), ".effects.idx.tmp-");
        assert!(!exists(".effects.idx.tmp-123"));
        assert!(exists("notes.md"));
    }
}
