//! The effect index of a workflow (`effects.idx`): the guard's lookup without reading the
//! journal, on the hot path of every Bash call.
//!
//! The index is a cache of the journal's `effect` and `effect_allow` entries: one line per
//! entry (number, sequence number, offset in the journal, outcome, key), under a header naming
//! how many bytes of the journal it covers and a fingerprint of the bytes just before that
//! point. A reader trusts it when the journal still holds those bytes, and reads only the
//! journal after them (the tail), whose lines it looks at only when they name an effect; a
//! missing, unreadable or stale index (a journal replaced by a pull, a line lost in a crash) is
//! rebuilt from the whole journal. Writers refresh it after journaling an effect, under the
//! workflow's lock; a reader that finds a long tail or no valid index refreshes it when the lock
//! is free, so the tail it reads stays short. The index is never the truth: deleting it loses
//! nothing.

use std::{
    fs,
    io::{self, BufRead, Read, Seek, SeekFrom},
    path::Path,
};

use crate::{
    effects::{IndexEvent, IndexGuard, Ledger, RecordedEffect, guard_of},
    error::{Error, Result},
    id::WorkflowId,
    journal::Entry,
    store::{
        handle::Store,
        layout::{EFFECTS_INDEX, JOURNAL_FILE},
        write::{fingerprint, refuse_symlink, write_cache},
    },
};

/// The index's first word and format version.
const HEADER: &str = "checkpoint-effects 1";
/// How many journal bytes before the covered end the fingerprint hashes.
const FINGERPRINT_BYTES: u64 = 64;
/// A reader refreshes the index when the tail it had to read is longer than this.
const REFRESH_TAIL_BYTES: u64 = 64 * 1024;
/// The largest index read; a larger one is rebuilt (a thousand effects take about 90 KB).
const MAX_INDEX_BYTES: u64 = 64 * 1024 * 1024;
/// What a journal line of an effect or an allow holds (`op` is a transition's first field).
const EFFECT_MARK: &str = "\"transition\":{\"op\":\"effect";

/// What `state.json` holds when a phase declares effect patterns (a quote inside a string is
/// escaped, so a note cannot hold it).
const PATTERNS_MARK: &[u8] = b"\"effects\":";

/// The index as read: how far into the journal it goes, and its events.
#[derive(Debug, Default)]
struct Index {
    /// The journal bytes covered (the end of the last complete line read).
    covered: u64,
    /// How many effects the journal holds up to there (the numbers of the tail's go on).
    effects: u64,
    /// The events, all of them; or, for a lookup of one key that the index does not hold,
    /// only the tail's.
    events: Vec<IndexEvent>,
}

impl Store {
    /// The successful effect that a repeat of the call with this key would repeat, unless a
    /// repeat of it was allowed since (see [`crate::effects::Ledger::guard`]); read through the
    /// index, never the whole journal, unless the index must be rebuilt.
    pub fn effect_guard(&self, id: &WorkflowId, key: &str) -> Result<Option<RecordedEffect>> {
        let dir = self.checked_dir(id)?;
        let index = self.current_index(&dir, Some(key))?;
        let Some(IndexGuard {
            number,
            offset,
            closed,
        }) = guard_of(&index.events, key)
        else {
            return Ok(None);
        };
        let entry = entry_at(&dir.join(JOURNAL_FILE), offset)?;
        Ok(
            RecordedEffect::from_entry(&entry, number).map(|mut effect| {
                effect.in_flight &= !closed;
                effect
            }),
        )
    }

    /// Whether the workflow's plan declares effect patterns of its own (a phase's `effects`),
    /// judged from the bytes of `state.json` without parsing it: only then must a call that
    /// no built-in rule or configured pattern names be weighed against the workflow.
    pub fn declares_effect_patterns(&self, id: &WorkflowId) -> bool {
        let path = self.workflow_dir(id).join(crate::store::STATE_FILE);
        match crate::fsx::read_limited(&path) {
            Ok(Some(bytes)) => bytes
                .windows(PATTERNS_MARK.len())
                .any(|window| window == PATTERNS_MARK),
            // A state that cannot be read is weighed the long way, which says why.
            Ok(None) | Err(_) => true,
        }
    }

    /// Whether the workflow has an effect index: one was written when an effect was journaled
    /// (or when a reader rebuilt it), so a call that no built-in rule or configured pattern
    /// names need not be looked up in a workflow without one.
    pub fn has_effects_index(&self, id: &WorkflowId) -> bool {
        self.workflow_dir(id).join(EFFECTS_INDEX).is_file()
    }

    /// The effects whose calls may still report (intents no outcome settled and no end of
    /// their turn closed), through the index: one read of each such effect's line.
    pub fn in_flight_effects(&self, id: &WorkflowId) -> Result<Vec<RecordedEffect>> {
        self.unsettled(id, false)
    }

    /// The intents no outcome settled, in flight or unknown (what a late outcome may settle),
    /// through the index: one read of each such effect's line, not of the whole ledger.
    pub fn unsettled_effects(&self, id: &WorkflowId) -> Result<Vec<RecordedEffect>> {
        self.unsettled(id, true)
    }

    fn unsettled(&self, id: &WorkflowId, closed_too: bool) -> Result<Vec<RecordedEffect>> {
        let dir = self.checked_dir(id)?;
        let index = self.current_index(&dir, None)?;
        let mut pending: Vec<(u64, u64)> = Vec::new();
        for event in &index.events {
            if let IndexEvent::Effect {
                number,
                offset,
                intent,
                settles,
                ..
            } = event
            {
                if *settles && !(*intent && closed_too) {
                    pending.retain(|(open, _)| open != number);
                } else if *intent && !*settles {
                    pending.push((*number, *offset));
                }
            }
        }
        let journal = dir.join(JOURNAL_FILE);
        let mut found = Vec::new();
        for (number, offset) in pending {
            found.extend(RecordedEffect::from_entry(
                &entry_at(&journal, offset)?,
                number,
            ));
        }
        Ok(found)
    }

    /// The workflow's effects, in order, allows applied (through the index: one read of each
    /// effect's line).
    pub fn ledger(&self, id: &WorkflowId) -> Result<Ledger> {
        let dir = self.checked_dir(id)?;
        let index = self.current_index(&dir, None)?;
        let journal = dir.join(JOURNAL_FILE);
        let mut ledger = Ledger::default();
        for event in &index.events {
            let offset = match event {
                IndexEvent::Effect { offset, .. } | IndexEvent::Allow { offset, .. } => *offset,
            };
            ledger.push(&entry_at(&journal, offset)?);
        }
        Ok(ledger)
    }

    /// The index brought up to date with the journal, written back when that saves later
    /// readers work and the lock is free.
    ///
    /// With `key`, the index's events are left out when the key is not among them (none can
    /// guard it): a lookup costs a search of the index's text, not a parse of every line.
    fn current_index(&self, dir: &Path, key: Option<&str>) -> Result<Index> {
        let (index, tail) = read_current(dir, key)?;
        if tail > REFRESH_TAIL_BYTES
            && let Some(_lock) = self.try_lock(dir)?
        {
            // Read again under the lock: a writer may have appended meanwhile.
            let (index, _) = read_current(dir, None)?;
            let _ = write_index(dir, &index);
            return Ok(index);
        }
        Ok(index)
    }

    /// After a write that journaled an effect, under the lock: the index made current. A
    /// failure is left to readers, who rebuild the index.
    pub(super) fn refresh_effects_index(dir: &Path) {
        if let Ok((index, _)) = read_current(dir, None) {
            let _ = write_index(dir, &index);
        }
    }
}

/// Whether a journal line's text is an effect's or an allow's.
pub(super) fn is_effect_line(line: &str) -> bool {
    line.contains(EFFECT_MARK)
}

/// The index, trusted as far as it still matches the journal, followed by the journal's tail;
/// and how many tail bytes were read (the whole journal when the index was not trusted).
fn read_current(dir: &Path, key: Option<&str>) -> Result<(Index, u64)> {
    let journal_path = dir.join(JOURNAL_FILE);
    refuse_symlink(&journal_path)?;
    let mut journal = match fs::File::open(&journal_path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok((Index::default(), 0)),
        Err(err) => return Err(Error::io("open", &journal_path, err)),
    };
    let io_error = |err| Error::io("read", &journal_path, err);
    let len = journal.metadata().map_err(io_error)?.len();
    let mut index = read_index(&dir.join(EFFECTS_INDEX), key)
        .filter(|(index, print)| {
            index.covered <= len
                && fingerprint(&mut journal, index.covered, FINGERPRINT_BYTES)
                    .ok()
                    .as_deref()
                    == Some(print.as_str())
        })
        .map(|(index, _)| index)
        .unwrap_or_default();
    let start = index.covered;
    journal.seek(SeekFrom::Start(start)).map_err(io_error)?;
    let mut reader = io::BufReader::with_capacity(64 * 1024, journal);
    let mut line = Vec::new();
    let mut offset = start;
    let mut numbered = index.effects;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(io_error)? as u64;
        if n == 0 || line.last() != Some(&b'\n') {
            // The end, or a torn last line, which is not an entry yet.
            break;
        }
        let text = String::from_utf8_lossy(&line);
        if is_effect_line(&text) {
            // A line that does not parse is the journal's business (its readers say where it
            // is); the guard goes on without it.
            if let Ok(entry) = serde_json::from_str::<Entry>(&text)
                && let Some(event) = event_of(&entry, offset, &mut numbered)
            {
                index.events.push(event);
            }
        }
        offset += n;
        index.covered = offset;
    }
    index.effects = numbered;
    Ok((index, offset - start))
}

/// The index event of an effect or an allow entry found at `offset`.
fn event_of(entry: &Entry, offset: u64, numbered: &mut u64) -> Option<IndexEvent> {
    let settles = RecordedEffect::settles(entry).filter(|number| *number <= *numbered);
    let number = settles.unwrap_or(*numbered + 1);
    if let Some(effect) = RecordedEffect::from_entry(entry, number) {
        if settles.is_none() {
            *numbered += 1;
        }
        return Some(IndexEvent::Effect {
            number: effect.number,
            seq: entry.seq,
            offset,
            ok: effect.ok,
            key: effect.key,
            intent: effect.unknown,
            settles: settles.is_some(),
        });
    }
    if let crate::transition::Transition::EffectAllow { effect, .. } = &entry.transition {
        return Some(IndexEvent::Allow {
            number: *effect,
            offset,
        });
    }
    None
}

/// The journal entry whose line starts at `offset`.
fn entry_at(path: &Path, offset: u64) -> Result<Entry> {
    refuse_symlink(path)?;
    let io_error = |err| Error::io("read", path, err);
    let mut file = fs::File::open(path).map_err(io_error)?;
    file.seek(SeekFrom::Start(offset)).map_err(io_error)?;
    let mut line = Vec::new();
    io::BufReader::new(file.take(crate::journal::MAX_LINE_BYTES))
        .read_until(b'\n', &mut line)
        .map_err(io_error)?;
    serde_json::from_slice(&line).map_err(|err| {
        Error::io(
            "read",
            path,
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the effect entry at byte {offset} does not parse ({err}); delete `{EFFECTS_INDEX}` beside it to rebuild the index"),
            ),
        )
    })
}

/// The index file and the fingerprint it recorded; none when it is missing or unreadable.
/// With `key`, its events only when the key is among them.
fn read_index(path: &Path, key: Option<&str>) -> Option<(Index, String)> {
    let bytes = crate::fsx::read_limited(path).ok()??;
    if bytes.len() as u64 > MAX_INDEX_BYTES {
        return None;
    }
    let text = std::str::from_utf8(&bytes).ok()?;
    let (header, body) = text.split_once('\n')?;
    let mut words = header.strip_prefix(HEADER)?.split_whitespace();
    let covered = words.next()?.parse().ok()?;
    let effects = words.next()?.parse().ok()?;
    let print = words.next()?.to_owned();
    let mut events = Vec::new();
    if key.is_none_or(|key| body.contains(key)) {
        for line in body.lines() {
            events.push(parse_event(line)?);
        }
    }
    Some((
        Index {
            covered,
            effects,
            events,
        },
        print,
    ))
}

/// One line of the index.
fn parse_event(line: &str) -> Option<IndexEvent> {
    let words: Vec<&str> = line.split(' ').collect();
    Some(match words.as_slice() {
        // The outcome word: `1` done, `0` failed, `2` an intent, `3` a failed outcome that
        // settles one, `4` a done one that does, `5` an intent whose call can no longer
        // report (an older reader takes 2 to 5 as failed).
        ["e", number, seq, offset, ok, key] => IndexEvent::Effect {
            number: number.parse().ok()?,
            seq: seq.parse().ok()?,
            offset: offset.parse().ok()?,
            ok: matches!(*ok, "1" | "4"),
            key: (*key).to_owned(),
            intent: matches!(*ok, "2" | "5"),
            settles: matches!(*ok, "3" | "4" | "5"),
        },
        ["a", number, offset] => IndexEvent::Allow {
            number: number.parse().ok()?,
            offset: offset.parse().ok()?,
        },
        _ => return None,
    })
}

/// Writes the index beside the journal, atomically (a temporary file renamed over it), without
/// fsync: it is a cache.
fn write_index(dir: &Path, index: &Index) -> Result<()> {
    let journal_path = dir.join(JOURNAL_FILE);
    let mut journal =
        fs::File::open(&journal_path).map_err(|err| Error::io("open", &journal_path, err))?;
    let print = fingerprint(&mut journal, index.covered, FINGERPRINT_BYTES)
        .map_err(|err| Error::io("read", &journal_path, err))?;
    let mut text = format!("{HEADER} {} {} {print}\n", index.covered, index.effects);
    for event in &index.events {
        match event {
            IndexEvent::Effect {
                number,
                seq,
                offset,
                ok,
                key,
                intent,
                settles,
            } => {
                let word = match (intent, settles, ok) {
                    (true, true, _) => 5,
                    (true, false, _) => 2,
                    (false, true, false) => 3,
                    (false, true, true) => 4,
                    (false, false, ok) => u8::from(*ok),
                };
                text.push_str(&format!("e {number} {seq} {offset} {word} {key}\n"));
            }
            IndexEvent::Allow { number, offset } => {
                text.push_str(&format!("a {number} {offset}\n"));
            }
        }
    }
    write_cache(dir, EFFECTS_INDEX, text.as_bytes())
}
