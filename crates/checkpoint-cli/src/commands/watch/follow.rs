//! Following a journal as it grows, the way `tail -f` does, without its lock: each read takes
//! the complete lines appended since the last one and leaves a torn last line (a writer
//! mid-append) for the next read.

use std::{
    fs::File,
    io::{self, Read as _, Seek, SeekFrom},
    path::{Path, PathBuf},
};

use checkpoint_core::journal::Entry;

/// The reader of one journal file.
pub(crate) struct Follower {
    path: PathBuf,
    /// Where the next read starts: just after the last complete line read.
    offset: u64,
    /// The file read so far (device and inode), to notice a journal replaced by another.
    file_id: Option<(u64, u64)>,
    /// The sequence number of the last entry returned, so that none is returned twice.
    last_seq: u64,
}

/// What one read found.
#[derive(Debug, Default)]
pub(crate) struct NewEntries {
    /// The new complete entries, in order.
    pub entries: Vec<Entry>,
    /// The journal was replaced or cut (a pull, a rebuild) and was read again from its start.
    pub replaced: bool,
    /// Lines that are not journal entries, with their error.
    pub bad_lines: Vec<String>,
}

impl Follower {
    /// A reader of the journal at `path`, from its start.
    pub(crate) fn new(path: &Path) -> Self {
        Self {
            path: path.to_owned(),
            offset: 0,
            file_id: None,
            last_seq: 0,
        }
    }

    /// The sequence number of the last entry read.
    pub(crate) fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Reads the complete lines appended since the last read. A missing journal reads as
    /// nothing new.
    pub(crate) fn read_new(&mut self) -> io::Result<NewEntries> {
        let mut file = match File::open(&self.path) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(NewEntries::default()),
            Err(err) => return Err(err),
        };
        let meta = file.metadata()?;
        let mut read = NewEntries::default();
        let file_id = file_id(&meta);
        if (self.file_id.is_some() && self.file_id != file_id) || meta.len() < self.offset {
            read.replaced = true;
            self.offset = 0;
        }
        self.file_id = file_id;
        if meta.len() == self.offset {
            return Ok(read);
        }
        file.seek(SeekFrom::Start(self.offset))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let Some(end) = bytes.iter().rposition(|&b| b == b'\n') else {
            return Ok(read);
        };
        self.offset += end as u64 + 1;
        for line in bytes[..end].split(|&b| b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Entry>(line) {
                // After a replacement, the entries already shown are skipped.
                Ok(entry) if entry.seq <= self.last_seq => {}
                Ok(entry) => {
                    self.last_seq = entry.seq;
                    read.entries.push(entry);
                }
                Err(err) => read.bad_lines.push(err.to_string()),
            }
        }
        Ok(read)
    }
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_id(_meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}
