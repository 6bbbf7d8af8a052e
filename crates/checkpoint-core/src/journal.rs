//! The journal: `journal.jsonl`, one transition per line, append-only.
//!
//! Each line is `{"seq":N,"at":"<RFC 3339>","transition":{"op":...}}`. A crash in the middle of an
//! append leaves a last line without its newline (a torn line); readers ignore it and the next
//! writer moves it aside.

use std::{
    io::{self, BufRead, Read as _},
    path::Path,
};

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    error::{Error, Result},
    model::Workflow,
    transition::{Transition, apply_in_place},
};

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Entry {
    /// The sequence number, 1 for the first entry, then +1 for each.
    pub seq: u64,
    /// When the transition was applied.
    #[serde(with = "crate::timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub at: DateTime<Utc>,
    /// What changed.
    pub transition: Transition,
}

impl Entry {
    /// The entry as one journal line, newline included.
    pub fn to_line(&self) -> String {
        let mut line = serde_json::to_string(self).expect("a journal entry always serializes");
        line.push('\n');
        line
    }
}

/// A parsed journal.
#[derive(Debug, Default)]
pub struct Journal {
    /// The complete entries, in order.
    pub entries: Vec<Entry>,
    /// The bytes of a torn last line, if any, and the offset where it starts.
    pub torn: Option<(u64, Vec<u8>)>,
}

/// The first line of a journal that is not the next entry: one that does not parse, or whose
/// sequence number is not the one after the entry before it (a gap, or a step back).
#[derive(Debug)]
pub struct BadLine {
    /// Where the line starts.
    pub offset: u64,
    /// Its line number, from 1.
    pub line: usize,
    /// Whether it is the journal's last complete line (only blank lines or a torn line follow).
    pub last: bool,
    /// What is wrong with it, naming the file and the line.
    pub error: Error,
}

/// The hint of a bad last line.
const BAD_LAST_LINE_HELP: &str = "the last line is not the next entry of this journal: it was added by hand or by another tool; `state.json` is used meanwhile, and `checkpoint resume` moves the line aside as `journal.jsonl.foreign-<time>`, keeping it, after which `checkpoint log` reads the whole history again";
/// The hint of a bad line followed by others.
const BAD_MIDDLE_LINE_HELP: &str = "the journal is append-only and fsynced line by line, so a bad line in the middle means the file was edited or the disk is damaged; commands use `state.json` meanwhile; `checkpoint validate --repair` moves every unreadable line to `journal.jsonl.unreadable-<time>`, keeping its bytes, and keeps every readable entry";

/// The longest journal line a reader accepts, newline included, and so the longest a writer
/// writes: an `init` or a `snapshot` carries a whole state (at most 64 MiB, the limit of
/// `state.json`), and the entry around it needs a little more.
pub const MAX_LINE_BYTES: u64 = 65 * 1024 * 1024;

/// The largest journal a writer grows: an append that would take the journal past it is
/// refused, nothing written; `pull` refuses a remote journal larger than this before reading it.
///
/// Readers have no such limit: they read a journal line by line, holding one line at a time
/// (at most [`MAX_LINE_BYTES`]), so that a journal of any size stays readable by every command.
pub const MAX_JOURNAL_BYTES: u64 = 256 * 1024 * 1024;

/// Parses a whole journal. A torn last line is set aside; any other bad line is an error.
///
/// This is the definition of a valid journal that every reader shares: each complete line is
/// an [`Entry`] of at most [`MAX_LINE_BYTES`], and each entry's sequence number is the one after
/// the entry before it (the first may be any number: a journal restarted from a snapshot).
/// [`scan_tail`] checks the same rule on the lines it reads; [`read`] is the same parser over
/// a reader, line by line.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Journal> {
    match parse_prefix(path, bytes) {
        (journal, None) => Ok(journal),
        (_, Some(bad)) => Err(bad.error),
    }
}

/// Parses a journal up to its first bad line: the entries before it, and the bad line, if any
/// (then `torn` is `None`: a torn end belongs to what follows the bad line).
pub fn parse_prefix(path: &Path, bytes: &[u8]) -> (Journal, Option<BadLine>) {
    let mut entries = Vec::new();
    let summary = read_prefix(path, bytes, |entry, _| {
        entries.push(entry);
        Ok(())
    })
    .expect("reading bytes in memory with a visitor that never fails cannot fail");
    let journal = Journal {
        entries,
        torn: summary.torn,
    };
    (journal, summary.bad)
}

/// What a line-by-line read of a journal found besides its entries.
#[derive(Debug, Default)]
pub struct Summary {
    /// The sequence number of the last entry read.
    pub last_seq: Option<u64>,
    /// A torn last line, if any (`None` after a bad line).
    pub torn: Option<TornLine>,
    /// The first line that is not the next entry, where the read stopped.
    pub bad: Option<BadLine>,
    /// Where the read stopped: the end of the last complete line before a torn or bad one.
    pub end: Position,
}

/// A point between two lines of a journal: a read may start there, after `line` lines.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// The byte offset.
    pub offset: u64,
    /// How many lines come before it.
    pub line: usize,
    /// The sequence number of the last entry before it.
    pub last_seq: Option<u64>,
}

/// Reads a journal line by line, handing each entry to `visit` with the size of its line,
/// newline included; stops at the first bad line (see [`parse`] for the rule), or at the first
/// error `visit` returns, which is returned.
///
/// Memory is one line at a time: a line longer than [`MAX_LINE_BYTES`] is a bad line, never
/// read whole.
pub(crate) fn read_prefix(
    path: &Path,
    reader: impl BufRead,
    visit: impl FnMut(Entry, u64) -> Result<()>,
) -> Result<Summary> {
    read_from(path, reader, Position::default(), visit)
}

/// Reads a journal as [`read_prefix`] does, from `start` (`reader` is at its offset): the lines
/// before it are taken as read.
pub(crate) fn read_from(
    path: &Path,
    mut reader: impl BufRead,
    start: Position,
    mut visit: impl FnMut(Entry, u64) -> Result<()>,
) -> Result<Summary> {
    let io_error = |err| Error::io("read", path, err);
    let mut summary = Summary {
        last_seq: start.last_seq,
        end: start,
        ..Summary::default()
    };
    let mut offset = start.offset;
    let mut line_no = start.line;
    let mut buf = Vec::new();
    loop {
        summary.end = Position {
            offset,
            line: line_no,
            last_seq: summary.last_seq,
        };
        buf.clear();
        let n = (&mut reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut buf)
            .map_err(io_error)? as u64;
        if n == 0 {
            return Ok(summary);
        }
        line_no += 1;
        let start = offset;
        offset += n;
        if buf.last() != Some(&b'\n') {
            if n <= MAX_LINE_BYTES {
                // The end of the file, inside a line: an interrupted append.
                summary.torn = Some((start, std::mem::take(&mut buf)));
                return Ok(summary);
            }
            // The line is the last when the file ends inside it, or only blank lines follow.
            let last = !skip_line(&mut reader).map_err(io_error)?
                || blank_to_the_end(&mut reader).map_err(io_error)?;
            summary.bad = Some(bad_line(
                path,
                start,
                line_no,
                last,
                format!(
                    "line {line_no} is longer than {MAX_LINE_BYTES} bytes, the longest line `checkpoint` writes"
                ),
            ));
            return Ok(summary);
        }
        let line = &buf[..buf.len() - 1];
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let message = match serde_json::from_slice::<Entry>(line) {
            Err(err) => format!("line {line_no}, column {}: {err}", err.column()),
            Ok(entry) => match summary.last_seq {
                Some(last) if last.checked_add(1) != Some(entry.seq) => format!(
                    "line {line_no}: sequence number {} follows {last}",
                    entry.seq
                ),
                _ => {
                    summary.last_seq = Some(entry.seq);
                    visit(entry, n)?;
                    continue;
                }
            },
        };
        let last = blank_to_the_end(&mut reader).map_err(io_error)?;
        summary.bad = Some(bad_line(path, start, line_no, last, message));
        return Ok(summary);
    }
}

/// Reads a journal line by line as [`read_prefix`] does; a bad line is an error.
pub fn read(
    path: &Path,
    reader: impl BufRead,
    visit: impl FnMut(Entry, u64) -> Result<()>,
) -> Result<Summary> {
    let summary = read_prefix(path, reader, visit)?;
    match summary.bad {
        Some(bad) => Err(bad.error),
        None => Ok(summary),
    }
}

fn bad_line(path: &Path, offset: u64, line: usize, last: bool, message: String) -> BadLine {
    BadLine {
        offset,
        line,
        last,
        error: Error::Corrupt {
            path: path.to_owned(),
            message,
            help: if last {
                BAD_LAST_LINE_HELP
            } else {
                BAD_MIDDLE_LINE_HELP
            }
            .into(),
            source_code: None,
            span: None,
        },
    }
}

/// Skips the rest of a line; `false` when the file ends first.
fn skip_line(reader: &mut impl BufRead) -> io::Result<bool> {
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(false);
        }
        if let Some(end) = chunk.iter().position(|&b| b == b'\n') {
            reader.consume(end + 1);
            return Ok(true);
        }
        let len = chunk.len();
        reader.consume(len);
    }
}

/// Whether the rest of a journal holds no complete line but blank ones (a torn end may follow).
fn blank_to_the_end(reader: &mut impl BufRead) -> io::Result<bool> {
    let mut pending = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(true);
        }
        for &byte in chunk {
            if byte == b'\n' {
                if pending {
                    return Ok(false);
                }
            } else if !byte.is_ascii_whitespace() {
                pending = true;
            }
        }
        let len = chunk.len();
        reader.consume(len);
    }
}

/// A torn last line of the journal: where it starts, and its bytes.
pub(crate) type TornLine = (u64, Vec<u8>);

/// The end of the journal, as much of it as a load needs.
#[derive(Debug, Default, PartialEq)]
pub struct Tail {
    /// The sequence number of the last complete line.
    pub last_seq: Option<u64>,
    /// A torn last line, if any.
    pub torn: Option<TornLine>,
    /// The complete entries after the sequence number asked for, in order.
    pub after: Vec<Entry>,
    /// Their size in bytes, newlines included.
    pub after_bytes: u64,
}

/// What [`scan_tail`] made of a window at the end of the journal.
#[derive(Debug, PartialEq)]
pub enum Scan {
    /// The lines asked for.
    Done(Tail),
    /// The window starts after the lines asked for.
    NeedMore,
    /// A line that is not a well-formed entry, or numbers out of order.
    Unusual,
}

/// Reads the lines of `bytes`, the journal from offset `start` to its end, from the last one
/// back; `whole` when `start` is the start of the file.
pub fn scan_tail(bytes: &[u8], start: u64, whole: bool, after: Option<u64>) -> Scan {
    let Some(end) = bytes.iter().rposition(|&b| b == b'\n') else {
        if !whole {
            return Scan::NeedMore;
        }
        return Scan::Done(Tail {
            torn: (!bytes.is_empty()).then(|| (0, bytes.to_vec())),
            ..Tail::default()
        });
    };
    let torn = (end + 1 < bytes.len()).then(|| (start + end as u64 + 1, bytes[end + 1..].to_vec()));
    let mut last_seq = None;
    // The sequence number of the last line not asked for, which the first asked for follows.
    let mut boundary = None;
    let mut lines = Vec::new();
    let mut line_end = end;
    loop {
        let line_start = match bytes[..line_end].iter().rposition(|&b| b == b'\n') {
            Some(newline) => newline + 1,
            None if whole => 0,
            // The line may begin before the window.
            None => return Scan::NeedMore,
        };
        let line = &bytes[line_start..line_end];
        if !line.iter().all(u8::is_ascii_whitespace) {
            if let Some(boundary) = boundary {
                // The line before the boundary, read for its number only: the boundary must
                // follow it, or the journal ends in a line out of order. A line without a
                // number there is one in the middle, which loading does not read.
                if seq_of_line(line).is_some_and(|seq| seq.checked_add(1) != Some(boundary)) {
                    return Scan::Unusual;
                }
                break;
            }
            let Some(seq) = seq_of_line(line) else {
                return Scan::Unusual;
            };
            if last_seq.is_none() {
                last_seq = Some(seq);
            }
            match after {
                Some(after) if seq > after => lines.push(line),
                // A journal that ends before the entry asked after was cut short, or ends
                // in a line out of order: the whole parser tells which.
                Some(after) if seq < after => return Scan::Unusual,
                _ => boundary = Some(seq),
            }
        }
        if line_start == 0 {
            break;
        }
        line_end = line_start - 1;
    }
    let mut entries = Vec::with_capacity(lines.len());
    let mut after_bytes = 0;
    for line in lines.iter().rev() {
        let Ok(entry) = serde_json::from_slice::<Entry>(line) else {
            return Scan::Unusual;
        };
        // The same rule as `parse`: each entry follows the one before it, here the boundary
        // line too, so that an entry that skips ahead is never replayed from the tail.
        let previous = entries
            .last()
            .map_or(boundary, |last: &Entry| Some(last.seq));
        if previous.is_some_and(|previous| previous.checked_add(1) != Some(entry.seq)) {
            return Scan::Unusual;
        }
        after_bytes += line.len() as u64 + 1;
        entries.push(entry);
    }
    Scan::Done(Tail {
        last_seq,
        torn,
        after: entries,
        after_bytes,
    })
}

/// Whether the complete lines of `bytes` look like the lines `checkpoint` writes, numbered one
/// after the other: `{"seq":N,"at":"…` to a closing `}`. A cheap check of a journal's shape,
/// with no JSON parsing; `whole` when `bytes` start at the start of the file (otherwise the
/// first, partial, line is skipped). A journal that fails it is parsed to say why.
pub fn looks_whole(bytes: &[u8], whole: bool) -> bool {
    let Some(end) = bytes.iter().rposition(|&b| b == b'\n') else {
        return true;
    };
    let mut rest = &bytes[..end];
    if !whole {
        match rest.iter().position(|&b| b == b'\n') {
            Some(first) => rest = &rest[first + 1..],
            None => return true,
        }
    }
    let mut previous: Option<u64> = None;
    for line in rest.split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Some(seq) = seq_of_line(line) else {
            return false;
        };
        let digits = line[7..].iter().take_while(|b| b.is_ascii_digit()).count();
        let shaped = line[7 + digits..].starts_with(b",\"at\":\"") && line.ends_with(b"}");
        if !shaped || previous.is_some_and(|previous| previous.checked_add(1) != Some(seq)) {
            return false;
        }
        previous = Some(seq);
    }
    true
}

/// Reads the `seq` at the start of a journal line (complete or torn) without parsing the rest.
pub(crate) fn seq_of_line(line: &[u8]) -> Option<u64> {
    let rest = line.strip_prefix(b"{\"seq\":")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()
}

/// Replays entries onto a state (or from nothing, when the first entry is an `init`).
pub fn replay(path: &Path, base: Option<Workflow>, entries: &[Entry]) -> Result<Option<Workflow>> {
    let mut state = base;
    for entry in entries {
        match (&mut state, &entry.transition) {
            (_, Transition::Init { workflow: whole })
            | (
                _,
                Transition::Snapshot {
                    workflow: whole, ..
                },
            ) => {
                let next = state.get_or_insert_with(|| (**whole).clone());
                apply_in_place(next, &entry.transition, entry.seq, entry.at)?;
            }
            // A refusal ends the replay and drops the state, so no copy is kept to roll back to.
            (Some(workflow), transition) => {
                apply_in_place(workflow, transition, entry.seq, entry.at).map_err(|err| {
                    Error::Corrupt {
                        path: path.to_owned(),
                        message: format!(
                            "entry {} (`{}`) does not apply: {err}",
                            entry.seq,
                            transition.op()
                        ),
                        help: "the journal does not match the state it starts from".into(),
                        source_code: None,
                        span: None,
                    }
                })?;
            }
            (None, transition) => {
                return Err(Error::Corrupt {
                    path: path.to_owned(),
                    message: format!(
                        "entry {} (`{}`) comes before any `init`",
                        entry.seq,
                        transition.op()
                    ),
                    help: "the start of the journal is missing".into(),
                    source_code: None,
                    span: None,
                });
            }
        }
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(seq: u64) -> String {
        Entry {
            seq,
            at: DateTime::UNIX_EPOCH,
            transition: Transition::Note {
                text: format!("note {seq}"),
            },
        }
        .to_line()
    }

    #[test]
    fn tail_reads_only_the_lines_it_needs() {
        let text: String = (1..=9).map(line).collect::<String>() + "{\"seq\":10,\"at";
        let bytes = text.as_bytes();
        let Scan::Done(tail) = scan_tail(bytes, 0, true, None) else {
            panic!("a whole journal is always read");
        };
        assert_eq!(tail.last_seq, Some(9));
        assert_eq!(tail.torn.as_ref().map(|(_, torn)| torn.len()), Some(13));
        assert!(tail.after.is_empty());

        let Scan::Done(tail) = scan_tail(bytes, 0, true, Some(6)) else {
            panic!("a whole journal is always read");
        };
        let seqs: Vec<u64> = tail.after.iter().map(|entry| entry.seq).collect();
        assert_eq!(seqs, [7, 8, 9]);
        assert_eq!(
            tail.after_bytes,
            (7..=9).map(|seq| line(seq).len() as u64).sum::<u64>()
        );

        // A window that starts in the middle of the lines asked for needs more.
        let cut = text.find("{\"seq\":8").unwrap() + 3;
        assert_eq!(
            scan_tail(&bytes[cut..], cut as u64, false, Some(6)),
            Scan::NeedMore
        );
        // One that holds the line before the first line not asked for is enough: the
        // number of that line is checked too.
        let cut = text.find("{\"seq\":7").unwrap() - 1;
        assert!(matches!(
            scan_tail(&bytes[cut..], cut as u64, false, Some(8)),
            Scan::Done(tail) if tail.after.len() == 1 && tail.torn.as_ref().is_some_and(|(at, _)| *at as usize == text.rfind('\n').unwrap() + 1)
        ));
        assert_eq!(
            scan_tail(b"", 0, true, Some(3)),
            Scan::Done(Tail::default())
        );
    }

    #[test]
    fn tail_leaves_unusual_lines_to_the_whole_parser() {
        let garbled = line(1) + "not an entry\n" + &line(3);
        assert_eq!(
            scan_tail(garbled.as_bytes(), 0, true, Some(1)),
            Scan::Unusual
        );
        let gap = line(1) + &line(2) + &line(4);
        assert_eq!(scan_tail(gap.as_bytes(), 0, true, Some(1)), Scan::Unusual);
        // An entry that repeats the one asked after, or steps back.
        for end in [3, 1] {
            let repeat = line(1) + &line(2) + &line(3) + &line(end);
            assert_eq!(
                scan_tail(repeat.as_bytes(), 0, true, Some(3)),
                Scan::Unusual
            );
            assert_eq!(scan_tail(repeat.as_bytes(), 0, true, None), Scan::Unusual);
        }
        let numbered_garbage = line(1) + "{\"seq\":2,oops\n";
        assert_eq!(
            scan_tail(numbered_garbage.as_bytes(), 0, true, Some(1)),
            Scan::Unusual
        );
    }

    #[test]
    fn tail_agrees_with_the_whole_parser_at_every_window() {
        let path = Path::new("journal.jsonl");
        let text: String = (1..=12).map(line).collect::<String>() + "\n{\"seq\":13";
        let bytes = text.as_bytes();
        let parsed = parse(path, bytes).unwrap();
        for after in [None, Some(0), Some(5), Some(11), Some(12), Some(40)] {
            let expected = Tail {
                last_seq: parsed.entries.last().map(|entry| entry.seq),
                torn: parsed.torn.clone(),
                after: parsed
                    .entries
                    .iter()
                    .filter(|entry| after.is_some_and(|after| entry.seq > after))
                    .cloned()
                    .collect(),
                after_bytes: parsed
                    .entries
                    .iter()
                    .filter(|entry| after.is_some_and(|after| entry.seq > after))
                    .map(|entry| entry.to_line().len() as u64)
                    .sum(),
            };
            for start in 0..bytes.len() {
                match scan_tail(&bytes[start..], start as u64, start == 0, after) {
                    Scan::Done(tail) => assert_eq!(tail, expected, "after {after:?}, from {start}"),
                    Scan::NeedMore => assert!(start > 0),
                    // Only a journal that ends before the entry asked after is left to the
                    // whole parser.
                    Scan::Unusual => assert!(after > Some(12), "after {after:?}, from {start}"),
                }
            }
        }
    }

    #[test]
    fn torn_last_line_is_set_aside() {
        let path = Path::new("journal.jsonl");
        let line = Entry {
            seq: 1,
            at: DateTime::UNIX_EPOCH,
            transition: Transition::Unpause,
        }
        .to_line();
        let mut bytes = line.clone().into_bytes();
        bytes.extend_from_slice(b"{\"seq\":2,\"at\":\"19");
        let journal = parse(path, &bytes).unwrap();
        assert_eq!(journal.entries.len(), 1);
        assert_eq!(
            journal.torn,
            Some((line.len() as u64, b"{\"seq\":2,\"at\":\"19".to_vec()))
        );
    }

    #[test]
    fn an_entry_that_skips_ahead_of_the_one_asked_after_is_unusual() {
        let path = Path::new("journal.jsonl");
        let gap = line(1) + &line(2) + &line(3) + &line(999);
        for after in [Some(3), Some(2)] {
            assert_eq!(
                scan_tail(gap.as_bytes(), 0, true, after),
                Scan::Unusual,
                "{after:?}"
            );
        }
        let (journal, bad) = parse_prefix(path, gap.as_bytes());
        assert_eq!(journal.entries.len(), 3);
        let bad = bad.unwrap();
        assert_eq!((bad.line, bad.last), (4, true));
        assert_eq!(bad.offset as usize, gap.len() - line(999).len());
        assert!(
            bad.error
                .to_string()
                .contains("line 4: sequence number 999 follows 3")
        );
        let middle = line(1) + "{\"foo\":1}\n" + &line(2);
        let (_, bad) = parse_prefix(path, middle.as_bytes());
        assert_eq!(bad.map(|bad| (bad.line, bad.last)), Some((2, false)));
    }

    #[test]
    fn the_shape_check_finds_what_the_parser_refuses() {
        let good: String = (1..=5).map(line).collect();
        assert!(looks_whole(good.as_bytes(), true));
        assert!(looks_whole(&good.as_bytes()[10..], false));
        for bad in [
            line(1) + "garbage\n" + &line(3),
            line(1) + &line(3),
            line(1) + "{\"foo\":1}\n",
            line(1) + &line(2).replace("\"at\"", "\"x\""),
            line(1) + &line(2).replace("\"}}\n", "\n"),
        ] {
            assert!(!looks_whole(bad.as_bytes(), true), "{bad}");
            assert!(parse(Path::new("j"), bad.as_bytes()).is_err(), "{bad}");
        }
    }

    /// A line longer than any writer writes is a bad line, found without holding more than the
    /// bound in memory, wherever it is and whether or not it ends.
    #[test]
    fn a_line_over_the_bound_is_a_bad_line() {
        use std::io::Read as _;
        let path = Path::new("journal.jsonl");
        let long = || io::repeat(b'x').take(MAX_LINE_BYTES + 10);
        let (first, third) = (line(1), line(3));
        let reader = first
            .as_bytes()
            .chain(long())
            .chain(&b"\n"[..])
            .chain(third.as_bytes());
        let summary = read_prefix(path, io::BufReader::new(reader), |_, _| Ok(())).unwrap();
        let bad = summary.bad.unwrap();
        assert_eq!((bad.line, bad.last, summary.last_seq), (2, false, Some(1)));
        assert!(
            bad.error.to_string().contains("longer than"),
            "{}",
            bad.error
        );
        // At the end, with no newline: the last line, not a torn one.
        let reader = first.as_bytes().chain(long());
        let summary = read_prefix(path, io::BufReader::new(reader), |_, _| Ok(())).unwrap();
        let bad = summary.bad.unwrap();
        assert_eq!((bad.line, bad.last, summary.torn), (2, true, None));
    }

    /// The line-by-line reader agrees with itself whatever the size of its buffer.
    #[test]
    fn the_reader_agrees_at_every_buffer_size() {
        let path = Path::new("journal.jsonl");
        let cases = [
            (1..=4).map(line).collect::<String>() + "{\"seq\":5",
            line(1) + "garbage\n" + &line(3),
            line(1) + "garbage\n \n\n{\"seq\":3",
            line(1) + &line(3),
            "\n\n".to_owned() + &line(7) + &line(8),
        ];
        for case in &cases {
            let (journal, bad) = parse_prefix(path, case.as_bytes());
            for capacity in [1, 2, 7, 64] {
                let reader = io::BufReader::with_capacity(capacity, case.as_bytes());
                let mut seqs = Vec::new();
                let summary = read_prefix(path, reader, |entry, len| {
                    assert_eq!(len as usize, entry.to_line().len());
                    seqs.push(entry.seq);
                    Ok(())
                })
                .unwrap();
                let expected: Vec<u64> = journal.entries.iter().map(|entry| entry.seq).collect();
                assert_eq!(seqs, expected, "{case:?}");
                assert_eq!(summary.torn, journal.torn, "{case:?}");
                assert_eq!(
                    summary.bad.map(|bad| (bad.line, bad.last, bad.offset)),
                    bad.as_ref().map(|bad| (bad.line, bad.last, bad.offset)),
                    "{case:?}"
                );
            }
        }
    }

    #[test]
    fn bad_middle_line_is_an_error() {
        let path = Path::new("journal.jsonl");
        let err = parse(path, b"{\"seq\":1}\n{}\n").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
    }
}
