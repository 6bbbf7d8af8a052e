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
    transition::{Transition, apply},
};

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Entry {
    /// The sequence number, 1 for the first entry, then +1 for each.
    pub seq: u64,
    /// When the transition was applied.
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

/// Finds the sequence number of the last complete line from the journal's last bytes.
///
/// `tail` is the end of the file; returns `None` if no complete line starts inside it.
pub fn last_seq_in_tail(tail: &[u8], tail_is_whole_file: bool) -> Option<u64> {
    let end = tail.iter().rposition(|&b| b == b'\n')?;
    let body = &tail[..end];
    let start = match body.iter().rposition(|&b| b == b'\n') {
        Some(newline) => newline + 1,
        None if tail_is_whole_file => 0,
        None => return None,
    };
    seq_of_line(&body[start..])
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
            (_, Transition::Init { workflow }) | (_, Transition::Snapshot { workflow, .. }) => {
                let mut next = (**workflow).clone();
                apply(&mut next, &entry.transition, entry.seq, entry.at)?;
                state = Some(next);
            }
            (Some(workflow), transition) => {
                apply(workflow, transition, entry.seq, entry.at).map_err(|err| Error::Corrupt {
                    path: path.to_owned(),
                    message: format!(
                        "entry {} (`{}`) does not apply: {err}",
                        entry.seq,
                        transition.op()
                    ),
                    help: "the journal does not match the state it starts from".into(),
                    source_code: None,
                    span: None,
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

    #[test]
    fn last_seq_reads_only_the_last_complete_line() {
        let tail = b"{\"seq\":7,\"at\":\"x\"}\n{\"seq\":8,\"at\":\"y\"}\n{\"seq\":9,\"at";
        assert_eq!(last_seq_in_tail(tail, true), Some(8));
        assert_eq!(
            last_seq_in_tail(b"q\":3}\n{\"seq\":12,\"a\":1}\n", false),
            Some(12)
        );
        assert_eq!(last_seq_in_tail(b"{\"seq\":12,\"a\":1}\n", false), None);
        assert_eq!(last_seq_in_tail(b"{\"seq\":12,\"a\":1}\n", true), Some(12));
        assert_eq!(last_seq_in_tail(b"", true), None);
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
