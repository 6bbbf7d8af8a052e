//! The journal checked whole at a cost independent of its length: `journal.checked` remembers
//! how far the journal was found readable, so that a reader parses only the lines after it.
//!
//! Loading reads only the entries the state lacks, so a bad line before them (a hand edit, a
//! damaged disk) goes unseen by a load. The readers that sum a workflow up (`status`, `resume`,
//! the session-start briefing) call [`Store::check_journal`]: it trusts the mark while the
//! journal is the same file (its inode), at least as long, and still holds the bytes just
//! before the point checked (a fingerprint), and parses every line after it as an entry. A
//! missing, stale or unreadable mark is made again from the whole journal, once. The mark is a
//! cache: deleting it loses nothing, and a torn write of it only makes the next reader read the
//! whole journal again. An edit in place of the same length, far before the point checked, is
//! found by `checkpoint validate`, which reads the whole journal every time.

use std::{
    fs,
    io::{self, Seek, SeekFrom},
    path::Path,
};

use crate::{
    error::{Error, Result},
    id::WorkflowId,
    journal::{self, Position},
    store::{
        handle::Store,
        layout::JOURNAL_FILE,
        loaded::Recovery,
        write::{fingerprint, refuse_symlink, write_cache},
    },
};

/// The mark's file, beside the journal.
pub(crate) const CHECKED_FILE: &str = "journal.checked";
/// The mark's first words and format version.
const HEADER: &str = "checkpoint-journal-checked 1";
/// How many journal bytes before the point checked the fingerprint hashes.
const FINGERPRINT_BYTES: u64 = 4096;

/// How far the journal was found readable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mark {
    at: Position,
    inode: u64,
}

impl Store {
    /// The first line of the workflow's journal that is not its next entry (one that does not
    /// parse as JSON, is not UTF-8, is an entry of a kind this version does not know, or is
    /// numbered out of order), wherever it is, as the recovery a reader reports; `None` when
    /// every complete line is an entry. A torn last line is loading's business, not this.
    ///
    /// Only the lines after `journal.checked`'s mark are parsed, and the mark is moved to the
    /// last entry read (best effort, without the lock: it is a cache).
    pub fn check_journal(&self, id: &WorkflowId) -> Result<Option<Recovery>> {
        let dir = self.checked_dir(id)?;
        let path = dir.join(JOURNAL_FILE);
        refuse_symlink(&path)?;
        let mut file = match fs::File::open(&path) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(Error::io("open", &path, err)),
        };
        let io_error = |err| Error::io("read", &path, err);
        let meta = file.metadata().map_err(io_error)?;
        let inode = inode(&meta);
        let mark_path = dir.join(CHECKED_FILE);
        let start = read_mark(&mark_path)
            .filter(|(mark, print)| {
                mark.inode == inode
                    && mark.at.offset <= meta.len()
                    && fingerprint(&mut file, mark.at.offset, FINGERPRINT_BYTES)
                        .ok()
                        .as_ref()
                        == Some(print)
            })
            .map_or(Position::default(), |(mark, _)| mark.at);
        file.seek(SeekFrom::Start(start.offset)).map_err(io_error)?;
        let reader = io::BufReader::with_capacity(64 * 1024, file);
        let summary = journal::read_from(&path, reader, start, |_, _| Ok(()))?;
        if summary.end != start {
            let _ = write_mark(&dir, &path, summary.end, inode);
        }
        Ok(summary.bad.map(|bad| unreadable(&path, bad)))
    }
}

/// The recovery that reports a bad line.
fn unreadable(path: &Path, bad: journal::BadLine) -> Recovery {
    let reason = match &bad.error {
        Error::Corrupt { message, .. } => message.clone(),
        other => other.to_string(),
    };
    Recovery::UnreadableJournalLine {
        path: path.to_owned(),
        line: bad.line,
        reason,
    }
}

#[cfg(unix)]
fn inode(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_meta: &fs::Metadata) -> u64 {
    0
}

/// The mark's words: `<header> <offset> <lines> <last seq or -> <inode> <fingerprint>`.
fn read_words(path: &Path) -> Option<Vec<String>> {
    let bytes = crate::fsx::read_limited(path).ok()??;
    let text = std::str::from_utf8(&bytes).ok()?;
    let rest = text.strip_prefix(HEADER)?.trim_end_matches('\n');
    let words: Vec<String> = rest.split_whitespace().map(str::to_owned).collect();
    (words.len() == 5).then_some(words)
}

/// The mark and the fingerprint it recorded; none when it is missing or unreadable.
fn read_mark(path: &Path) -> Option<(Mark, String)> {
    let words = read_words(path)?;
    let mark = Mark {
        at: Position {
            offset: words[0].parse().ok()?,
            line: words[1].parse().ok()?,
            last_seq: match words[2].as_str() {
                "-" => None,
                seq => Some(seq.parse().ok()?),
            },
        },
        inode: words[3].parse().ok()?,
    };
    Some((mark, words[4].clone()))
}

/// Writes the mark atomically (a temporary file renamed over it), without fsync: a cache.
fn write_mark(dir: &Path, journal_path: &Path, at: Position, inode: u64) -> Result<()> {
    let mut journal =
        fs::File::open(journal_path).map_err(|err| Error::io("open", journal_path, err))?;
    let print = fingerprint(&mut journal, at.offset, FINGERPRINT_BYTES)
        .map_err(|err| Error::io("read", journal_path, err))?;
    let seq = at
        .last_seq
        .map_or_else(|| "-".to_owned(), |seq| seq.to_string());
    let text = format!("{HEADER} {} {} {seq} {inode} {print}\n", at.offset, at.line);
    write_cache(dir, CHECKED_FILE, text.as_bytes())
}
