//! Following a journal as it grows, the way `tail -f` does, without its lock: each read takes
//! the complete lines appended since the last one and leaves a torn last line (a writer
//! mid-append) for the next read.
//!
//! The journal is followed as the store defines it (`checkpoint_core::journal::parse`): each
//! entry is numbered one after the entry before it. A line that is not the next entry (added
//! by hand or by another tool) is reported, never shown as an entry; while it is the last line,
//! the follower waits before it, because the next writer moves it aside (cutting the journal
//! where it starts) and appends the real next entry there. A journal replaced by another file,
//! cut back or rewritten in place is read again from its start and compared with the entries
//! already shown: the same entries are not shown twice, and entries that differ are shown as
//! they now are.

use std::{
    fs::File,
    hash::{DefaultHasher, Hash as _, Hasher as _},
    io::{self, Read as _, Seek, SeekFrom},
    path::{Path, PathBuf},
};

use checkpoint_core::journal::Entry;

/// The reader of one journal file.
pub(crate) struct Follower {
    path: PathBuf,
    /// Where the next read of new lines starts: just after the last entry read (or after
    /// lines that are not entries, once an entry follows them).
    offset: u64,
    /// The file read so far (device and inode), to notice a journal replaced by another.
    file_id: Option<(u64, u64)>,
    /// Where the line of the last entry read starts: read again with the new lines, to notice a
    /// journal rewritten in place.
    last_line_start: Option<u64>,
    /// The entries read so far, in the journal's order: the first one's sequence number, and a
    /// hash of each one's line.
    first_seq: u64,
    hashes: Vec<u64>,
    /// The line that is not the next entry, last at the journal's end: where it starts, its
    /// hash, and what is wrong with it; reported once.
    foreign: Option<(u64, u64, String)>,
}

/// What one read found.
#[derive(Debug, Default)]
pub(crate) struct NewEntries {
    /// The new complete entries, in order.
    pub entries: Vec<Entry>,
    /// How the journal changed other than by appends, when it did.
    pub change: Option<Change>,
    /// Lines that are not the next entry, with what is wrong with them, each reported once.
    pub bad_lines: Vec<String>,
}

/// A journal that changed other than by appends, read again from its start.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// Another file took its place (a pull, a rebuild), with the entries already read.
    Replaced,
    /// Its entries differ from those read from entry `from` on: they are read again.
    Rewritten { from: u64 },
    /// It ends at entry `to` (`None`: it holds none), before the last one read.
    CutBack { to: Option<u64> },
}

impl Follower {
    /// A reader of the journal at `path`, from its start.
    pub(crate) fn new(path: &Path) -> Self {
        Self {
            path: path.to_owned(),
            offset: 0,
            file_id: None,
            last_line_start: None,
            first_seq: 0,
            hashes: Vec::new(),
            foreign: None,
        }
    }

    /// The sequence number of the last entry read.
    pub(crate) fn last_seq(&self) -> Option<u64> {
        self.seq_at(self.hashes.len().checked_sub(1)?)
    }

    /// What is wrong with the journal's last line, while it is not the next entry.
    pub(crate) fn foreign_tail(&self) -> Option<&str> {
        self.foreign.as_ref().map(|(_, _, what)| what.as_str())
    }

    fn seq_at(&self, idx: usize) -> Option<u64> {
        self.first_seq.checked_add(u64::try_from(idx).ok()?)
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
        let file_id = file_id(&meta);
        let replaced = self.file_id.is_some() && self.file_id != file_id;
        self.file_id = file_id;
        if !replaced && meta.len() == self.offset {
            return Ok(NewEntries::default());
        }
        if !replaced && meta.len() > self.offset {
            let Some(start) = self.last_line_start else {
                let bytes = read_from(&mut file, self.offset)?;
                return Ok(self.take_lines(&bytes, self.offset, false));
            };
            // The last entry's line, read again: still there, the journal only grew.
            let bytes = read_from(&mut file, start)?;
            let len = usize::try_from(self.offset - start).unwrap_or(usize::MAX);
            let same = bytes
                .get(..len)
                .and_then(|line| line.strip_suffix(b"\n"))
                .is_some_and(|line| Some(&hash(line)) == self.hashes.last());
            if same {
                return Ok(self.take_lines(&bytes[len..], self.offset, false));
            }
        }
        let bytes = read_from(&mut file, 0)?;
        let mut read = self.take_lines(&bytes, 0, true);
        if replaced && read.change.is_none() {
            read.change = Some(Change::Replaced);
        }
        Ok(read)
    }

    /// Takes the complete lines of `bytes`, which start at `base` in the journal. `again`: the
    /// journal is read again from its start, and compared with the entries read before.
    fn take_lines(&mut self, bytes: &[u8], base: u64, again: bool) -> NewEntries {
        let mut read = NewEntries::default();
        // Reading again: the entries are compared with those read before until one differs or
        // goes past them; `matched` is the index of the last one found unchanged.
        let mut compare = again && !self.hashes.is_empty();
        let mut matched: Option<usize> = None;
        let mut next = if again { None } else { self.last_seq() };
        if again {
            self.offset = 0;
            self.last_line_start = None;
        }
        let mut foreign: Option<(u64, u64, String)> = None;
        let mut pos = 0usize;
        while let Some(len) = bytes[pos..].iter().position(|&b| b == b'\n') {
            let line = &bytes[pos..pos + len];
            let at = base + pos as u64;
            pos += len + 1;
            if line.iter().all(u8::is_ascii_whitespace) {
                if foreign.is_none() {
                    self.offset = base + pos as u64;
                }
                continue;
            }
            let entry = match serde_json::from_slice::<Entry>(line) {
                Ok(entry) if next.is_none_or(|last| last.checked_add(1) == Some(entry.seq)) => {
                    entry
                }
                Ok(entry) => {
                    let what = format!(
                        "a journal line numbered {} where entry {} is next",
                        entry.seq,
                        next.map_or(0, |last| last.saturating_add(1))
                    );
                    foreign = foreign.or(Some((at, hash(line), what)));
                    continue;
                }
                Err(err) => {
                    let what = format!("a journal line is not an entry: {err}");
                    foreign = foreign.or(Some((at, hash(line), what)));
                    continue;
                }
            };
            // Lines that are not entries, followed by one: past them for good.
            if let Some(passed) = foreign.take()
                && !self.reported(&passed)
            {
                read.bad_lines.push(passed.2);
            }
            let line_hash = hash(line);
            next = Some(entry.seq);
            self.offset = base + pos as u64;
            self.last_line_start = Some(at);
            if compare {
                let idx = entry
                    .seq
                    .checked_sub(self.first_seq)
                    .and_then(|idx| usize::try_from(idx).ok());
                match idx {
                    Some(idx) if self.hashes.get(idx) == Some(&line_hash) => {
                        matched = Some(idx);
                        continue;
                    }
                    Some(idx) if idx < self.hashes.len() => {
                        read.change = Some(Change::Rewritten { from: entry.seq });
                        self.hashes.truncate(idx);
                    }
                    // The entry after the last one read: the journal only grew.
                    Some(idx) if idx == self.hashes.len() => {}
                    // Past a gap, or before the first entry read: a history of its own.
                    Some(_) => self.hashes.clear(),
                    None => {
                        read.change = Some(Change::Rewritten { from: entry.seq });
                        self.hashes.clear();
                    }
                }
                compare = false;
            }
            if self.hashes.is_empty() {
                self.first_seq = entry.seq;
            }
            self.hashes.push(line_hash);
            read.entries.push(entry);
        }
        if compare {
            // Every entry was one read before: the journal ends before the last of them?
            let keep = matched.map_or(0, |idx| idx + 1);
            if keep < self.hashes.len() {
                self.hashes.truncate(keep);
                read.change = Some(Change::CutBack {
                    to: self.last_seq(),
                });
            }
        }
        if let Some(tail) = &foreign
            && !self.reported(tail)
        {
            read.bad_lines.push(tail.2.clone());
        }
        self.foreign = foreign;
        read
    }

    /// Whether `line` (where it starts, its hash, what is wrong with it) was reported already,
    /// as the journal's last line.
    fn reported(&self, line: &(u64, u64, String)) -> bool {
        self.foreign
            .as_ref()
            .is_some_and(|old| (old.0, old.1) == (line.0, line.1))
    }
}

/// The file's bytes from `offset` to its end.
fn read_from(file: &mut File, offset: u64) -> io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn hash(line: &[u8]) -> u64 {
    let mut hasher = DefaultHasher::new();
    line.hash(&mut hasher);
    hasher.finish()
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

#[cfg(test)]
mod tests;
