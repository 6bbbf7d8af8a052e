//! The journal: `journal.jsonl`, one transition per line, append-only.
//!
//! Each line is `{"seq":N,"at":"<RFC 3339>","transition":{"op":...}}`. A crash in the middle of an
//! append leaves a last line without its newline (a torn line); readers ignore it and the next
//! writer moves it aside.

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

/// Parses a whole journal. A torn last line is set aside; any other bad line is an error.
pub fn parse(path: &std::path::Path, bytes: &[u8]) -> Result<Journal> {
    let mut journal = Journal::default();
    let mut offset = 0usize;
    let mut line_no = 0usize;
    while offset < bytes.len() {
        line_no += 1;
        let Some(len) = bytes[offset..].iter().position(|&b| b == b'\n') else {
            journal.torn = Some((offset as u64, bytes[offset..].to_vec()));
            break;
        };
        let line = &bytes[offset..offset + len];
        offset += len + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let entry: Entry = serde_json::from_slice(line).map_err(|err| Error::Corrupt {
            path: path.to_owned(),
            message: format!("line {line_no}, column {}: {err}", err.column()),
            help: "the journal is append-only and fsynced line by line, so a bad line in the middle means the file was edited or the disk is damaged; move the file aside to continue from `state.json`".into(),
            source_code: None,
            span: None,
        })?;
        let expected = journal
            .entries
            .last()
            .map_or(entry.seq, |last| last.seq + 1);
        if entry.seq != expected {
            return Err(Error::Corrupt {
                path: path.to_owned(),
                message: format!("line {line_no}: sequence number {} follows {}", entry.seq, expected.saturating_sub(1)),
                help: "the journal must be strictly ordered; it was edited or two writers ran without the lock".into(),
                source_code: None,
                span: None,
            });
        }
        journal.entries.push(entry);
    }
    Ok(journal)
}

/// A torn last line of the journal: where it starts, and its bytes.
pub type TornLine = (u64, Vec<u8>);

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
            let Some(seq) = seq_of_line(line) else {
                return Scan::Unusual;
            };
            if last_seq.is_none() {
                last_seq = Some(seq);
            }
            match after {
                Some(after) if seq > after => lines.push(line),
                _ => break,
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
        if entries
            .last()
            .is_some_and(|last: &Entry| entry.seq != last.seq + 1)
        {
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

/// Reads the `seq` at the start of a journal line without parsing the rest.
fn seq_of_line(line: &[u8]) -> Option<u64> {
    let rest = line.strip_prefix(b"{\"seq\":")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()
}

/// Replays entries onto a state (or from nothing, when the first entry is an `init`).
pub fn replay(
    path: &std::path::Path,
    base: Option<Workflow>,
    entries: &[Entry],
) -> Result<Option<Workflow>> {
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
        // One that holds the newline before the first line not asked for is enough.
        let cut = text.find("{\"seq\":8").unwrap() - 1;
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
        let numbered_garbage = line(1) + "{\"seq\":2,oops\n";
        assert_eq!(
            scan_tail(numbered_garbage.as_bytes(), 0, true, Some(1)),
            Scan::Unusual
        );
    }

    #[test]
    fn tail_agrees_with_the_whole_parser_at_every_window() {
        let path = std::path::Path::new("journal.jsonl");
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
                    Scan::Unusual => panic!("a well-formed journal is never unusual"),
                }
            }
        }
    }

    #[test]
    fn torn_last_line_is_set_aside() {
        let path = std::path::Path::new("journal.jsonl");
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
    fn bad_middle_line_is_an_error() {
        let path = std::path::Path::new("journal.jsonl");
        let err = parse(path, b"{\"seq\":1}\n{}\n").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
    }
}
