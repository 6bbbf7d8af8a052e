//! Loading a workflow: the state and the journal's tail, replay of a lagging state, rebuild of a
//! corrupt one, `verify`, and the repairs a writer persists before its own write.

use std::{
    fs,
    io::{self, Read, Seek, SeekFrom},
    path::{Path, PathBuf},
    sync::Arc,
};

use chrono::{DateTime, Utc};
use miette::{NamedSource, SourceOffset};
use serde::Deserialize;

use crate::{
    error::{Error, Result, showable},
    fsx,
    id::WorkflowId,
    journal::{self, Entry, Scan, Tail},
    model::{SCHEMA_VERSION, Workflow, check_invariants},
    store::{
        handle::Store,
        layout::{BACKUP_FILE, JOURNAL_FILE, STATE_FILE, TEMP_PREFIX},
        loaded::{Loaded, Recovery, Repair, Verification},
        write::{may_defer, refuse_symlink, unused_path, write_new_file},
    },
    transition::Transition,
};

/// How many bytes of the journal's end are read at first to find its last entries.
const TAIL_BYTES: u64 = 4096;

impl Store {
    /// Checks a workflow against its journal, without the lock and without writing anything.
    ///
    /// The state as loaded (after recovery) must equal the replay of the whole journal, and
    /// `state.json` on disk must equal the replay up to its own sequence number: it may lag
    /// behind the journal (after a crash, or by design for a large state, see [`may_defer`]),
    /// but never differ from it.
    pub fn verify(&self, id: &WorkflowId) -> Result<Verification> {
        let loaded = self.load(id)?;
        let journal_path = loaded.dir.join(JOURNAL_FILE);
        let state_path = loaded.dir.join(STATE_FILE);
        let on_disk = match fsx::read_limited(&state_path)? {
            Some(bytes) => parse_state(&state_path, &bytes).ok(),
            None => None,
        };
        // The journal is replayed as it is read, one entry at a time: its size costs time,
        // not memory.
        let mut mismatch = None;
        let mut replayed: Option<Workflow> = None;
        let summary = for_each_entry(&journal_path, |entry, _| {
            if mismatch.is_some() {
                return Ok(());
            }
            match journal::replay(&journal_path, replayed.take(), std::slice::from_ref(&entry)) {
                Ok(state) => replayed = state,
                Err(err) => mismatch = Some(err.to_string()),
            }
            if let (Some(disk), Some(state)) = (&on_disk, &replayed)
                && disk.seq == entry.seq
            {
                mismatch = first_difference(disk, state).map(|path| {
                    format!(
                        "`{STATE_FILE}` differs from the journal's replay to entry {} at `{path}`",
                        entry.seq
                    )
                });
            }
            Ok(())
        })?;
        let journal_seq = summary.last_seq.unwrap_or(0);
        match &on_disk {
            Some(disk) if disk.seq > journal_seq => {
                mismatch = Some(format!(
                    "`{STATE_FILE}` is at entry {}, past the journal's last entry {journal_seq}",
                    disk.seq
                ));
            }
            _ if summary.last_seq.is_none() => {
                mismatch = Some("the journal has no entries".to_owned());
            }
            _ => {}
        }
        if mismatch.is_none()
            && let Some(state) = &replayed
        {
            mismatch = first_difference(&loaded.workflow, state).map(|path| {
                format!(
                    "the loaded state (entry {}) differs from the journal's replay (entry {}) at `{path}`",
                    loaded.workflow.seq, state.seq
                )
            });
        }
        Ok(Verification {
            journal_seq,
            state_file_seq: on_disk.map(|disk| disk.seq),
            loaded_seq: loaded.workflow.seq,
            recoveries: loaded.recoveries,
            mismatch,
        })
    }
}

pub(super) fn load_dir(id: &WorkflowId, root: &Path, dir: &Path) -> Result<Loaded> {
    let state_path = dir.join(STATE_FILE);
    let journal_path = dir.join(JOURNAL_FILE);
    let mut recoveries = Vec::new();
    let mut repair = Repair::default();

    let temp_files = temp_files(dir)?;
    if !temp_files.is_empty() {
        recoveries.push(Recovery::TempFiles {
            paths: temp_files.clone(),
            removed: false,
        });
        repair.temp_files = temp_files;
    }

    // The state is read before the journal: a writer appends to the journal before it replaces
    // the state, so a journal read afterwards holds every entry the state lacks.
    let state_bytes = fsx::read_limited(&state_path)?;
    let state = match &state_bytes {
        Some(bytes) => match parse_state(&state_path, bytes) {
            Err(err @ (Error::NewerVersion { .. } | Error::UnknownVersion { .. })) => {
                return Err(err);
            }
            parsed => parsed,
        },
        None => Err(Error::NotFound {
            id: id.to_string(),
            root: root.to_owned(),
            suggestion: String::new(),
        }),
    };
    let state_len = state_bytes.map_or(0, |bytes| bytes.len() as u64);

    let state_seq = state.as_ref().ok().map(|state| state.seq);
    let (tail, foreign) = read_tail(&journal_path, state_seq)?;
    let tail_seq = tail.last_seq;
    repair.journal_seq = tail_seq.unwrap_or(0);
    if let Some((offset, bytes)) = tail.torn {
        recoveries.push(Recovery::TornJournalLine {
            bytes: bytes.len(),
            held: journal::seq_of_line(&bytes)
                .is_some_and(|seq| state_seq.is_some_and(|state_seq| seq <= state_seq)),
            kept_as: None,
        });
        repair.torn_at = Some((offset, bytes));
    }
    if let Some(foreign) = foreign {
        recoveries.push(Recovery::ForeignJournalLines {
            line: foreign.line,
            bytes: foreign.bytes.len(),
            reason: foreign.reason,
            kept_as: None,
        });
        repair.foreign_at = Some((foreign.offset, foreign.bytes));
    }

    let workflow = match state {
        Ok(mut workflow) => {
            repair.state_len = state_len;
            repair.state_seq = workflow.seq;
            match tail_seq {
                Some(journal_seq) if journal_seq > workflow.seq => {
                    let from_seq = workflow.seq;
                    repair.lag_bytes = tail.after_bytes;
                    let whole = tail
                        .after
                        .iter()
                        .any(|entry| entry.transition.replaces_state());
                    workflow = journal::replay(&journal_path, Some(workflow), &tail.after)?
                        .expect("replay onto a state yields a state");
                    // A large state is rewritten only every so often (see `may_defer`): a lag
                    // within those bounds is how it is kept, not something to recover from.
                    if !may_defer(state_len, workflow.seq - from_seq, tail.after_bytes, whole) {
                        recoveries.push(Recovery::JournalReplayed {
                            from_seq,
                            to_seq: workflow.seq,
                        });
                        repair.state_stale = true;
                    }
                }
                Some(journal_seq) if journal_seq < workflow.seq => {
                    recoveries.push(Recovery::JournalBehind {
                        journal_seq,
                        state_seq: workflow.seq,
                    });
                    repair.journal_behind = true;
                }
                None if workflow.seq > 0 && journal_path.exists() => {
                    recoveries.push(Recovery::JournalBehind {
                        journal_seq: 0,
                        state_seq: workflow.seq,
                    });
                    repair.journal_behind = true;
                }
                _ => {}
            }
            workflow
        }
        Err(state_err) => {
            let missing = matches!(state_err, Error::NotFound { .. });
            if missing && tail_seq.is_none() && repair.torn_at.is_none() {
                return Err(state_err);
            }
            let (workflow, source) = match rebuild(dir, &journal_path) {
                Ok(rebuilt) => rebuilt,
                Err(rebuild_err) if missing => return Err(rebuild_err),
                Err(_) => return Err(state_err_with_help(state_err)),
            };
            if missing && source == "journal" && lags_from_nothing(dir, &journal_path)? {
                recoveries.push(Recovery::JournalReplayed {
                    from_seq: 0,
                    to_seq: workflow.seq,
                });
            } else {
                recoveries.push(Recovery::StateRebuilt {
                    reason: if missing {
                        format!("`{STATE_FILE}` is missing")
                    } else {
                        state_err.to_string()
                    },
                    source: source.into(),
                    kept_as: None,
                });
            }
            repair.corrupt_state = !missing;
            repair.state_stale = true;
            workflow
        }
    };
    Ok(Loaded {
        workflow,
        recoveries,
        dir: dir.to_owned(),
        redacted: 0,
        unpaused: None,
        repair,
    })
}

/// Whether a missing `state.json`, rebuilt from the journal, only lagged it: the journal is
/// whole from its `init` (entry 1, no torn line) and there is no `state.json.bak`.
///
/// That is what a kill leaves between a workflow's first journal append and its first state
/// (`Store::adopt` creating a pulled workflow), or between the removal of the state and its
/// rewrite (`Store::adopt` replacing a journal, which removes the backup first). Any other
/// write links the old state aside as the backup before replacing it, never removing it; so a
/// state lost by other means, or a journal that lost its start, is still reported as rebuilt
/// and waits for a person.
fn lags_from_nothing(dir: &Path, journal_path: &Path) -> Result<bool> {
    let backup_path = dir.join(BACKUP_FILE);
    match fs::symlink_metadata(&backup_path) {
        Ok(_) => return Ok(false),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(Error::io("read", &backup_path, err)),
    }
    let mut first = None;
    let read = for_each_entry(journal_path, |entry, _| {
        first.get_or_insert(entry.seq == 1 && matches!(entry.transition, Transition::Init { .. }));
        Ok(())
    });
    Ok(matches!(read, Ok(summary) if summary.torn.is_none()) && first == Some(true))
}

/// Rebuilds a state from the journal, else from the backup plus the journal's later entries.
fn rebuild(dir: &Path, journal_path: &Path) -> Result<(Workflow, &'static str)> {
    // Read once for its lines alone, then replayed as it is read: one entry in memory at a time.
    let readable = for_each_entry(journal_path, |_, _| Ok(())).is_ok();
    // A replay from nothing refuses a journal that does not start with a whole state.
    if readable && let Ok(Some(workflow)) = replay_journal(journal_path, None, 0) {
        return Ok((workflow, "journal"));
    }
    let backup_path = dir.join(BACKUP_FILE);
    let backup = fsx::read_limited(&backup_path)?.ok_or_else(|| Error::Corrupt {
        path: dir.join(STATE_FILE),
        message: "no usable state, journal or backup".into(),
        help: format!(
            "nothing was changed; inspect the files in `{}`",
            dir.display()
        ),
        source_code: None,
        span: None,
    })?;
    let base = parse_state(&backup_path, &backup)?;
    let base_seq = base.seq;
    let workflow = if readable {
        replay_journal(journal_path, Some(base), base_seq)?
            .expect("replay onto a state yields a state")
    } else {
        base
    };
    Ok((workflow, "backup"))
}

fn state_err_with_help(err: Error) -> Error {
    with_help(
        err,
        format!(
            "neither the journal nor `{BACKUP_FILE}` could rebuild it; the file was left untouched: fix it by hand, or move it aside and start again"
        ),
    )
}

/// A corrupt file's error with `help` in place of its own.
fn with_help(err: Error, help: String) -> Error {
    match err {
        Error::Corrupt {
            path,
            message,
            source_code,
            span,
            ..
        } => Error::Corrupt {
            help,
            path,
            message,
            source_code,
            span,
        },
        other => other,
    }
}

/// The hint of a state file that does not parse.
const REBUILT_HELP: &str = "the state is rebuilt from `journal.jsonl` or `state.json.bak` by the next command that writes; the bad file is kept as `state.json.corrupt-<time>`";

/// Parses and checks a state file.
pub fn parse_state(path: &Path, bytes: &[u8]) -> Result<Workflow> {
    // A good state of a known version, the common case, takes one parse; anything else takes
    // the careful path below, which says why the file cannot be used.
    // UTF-8 is checked once for the whole file, which is cheaper than string by string.
    if let Ok(text) = std::str::from_utf8(bytes)
        && let Ok(workflow) = serde_json::from_str::<Workflow>(text)
        && (1..=SCHEMA_VERSION).contains(&workflow.schema_version)
        && check_invariants(&workflow).is_ok()
    {
        return Ok(workflow);
    }
    parse_state_carefully(path, bytes)
}

/// Parses a state that may be newer or corrupt: the version first, so that a newer file is
/// never reported as corrupt, then the whole state.
fn parse_state_carefully(path: &Path, bytes: &[u8]) -> Result<Workflow> {
    #[derive(Deserialize)]
    struct VersionPeek {
        schema_version: Option<serde_json::Value>,
    }
    let corrupt = |message: String, err: Option<&serde_json::Error>| {
        let text = String::from_utf8_lossy(bytes).into_owned();
        if !showable(&text) {
            return Error::Corrupt {
                path: path.to_owned(),
                message,
                help: REBUILT_HELP.into(),
                source_code: None,
                span: None,
            };
        }
        let span = err.filter(|err| err.line() > 0).map(|err| {
            (
                SourceOffset::from_location(&text, err.line(), err.column()).offset(),
                0,
            )
                .into()
        });
        Error::Corrupt {
            path: path.to_owned(),
            message,
            help: REBUILT_HELP.into(),
            source_code: Some(Arc::new(NamedSource::new(path.display().to_string(), text))),
            span,
        }
    };
    let peek: VersionPeek =
        serde_json::from_slice(bytes).map_err(|err| corrupt(err.to_string(), Some(&err)))?;
    match peek.schema_version.as_ref().map(serde_json::Value::as_u64) {
        Some(Some(found)) if found > u64::from(SCHEMA_VERSION) => {
            return Err(Error::NewerVersion {
                path: path.to_owned(),
                found: u32::try_from(found).unwrap_or(u32::MAX),
                supported: SCHEMA_VERSION,
            });
        }
        Some(Some(0)) => {
            return Err(Error::UnknownVersion {
                path: path.to_owned(),
                found: 0,
                supported: SCHEMA_VERSION,
            });
        }
        Some(Some(_)) => {}
        _ => return Err(corrupt("missing or invalid `schema_version`".into(), None)),
    }
    let workflow: Workflow =
        serde_json::from_slice(bytes).map_err(|err| corrupt(err.to_string(), Some(&err)))?;
    check_invariants(&workflow).map_err(|message| corrupt(message, None))?;
    Ok(workflow)
}

/// The path of the first field where two workflows differ, like `phases[0].progress`.
pub(super) fn first_difference(a: &Workflow, b: &Workflow) -> Option<String> {
    use serde_json::Value;
    fn walk(a: &Value, b: &Value, path: &mut String) -> bool {
        let len = path.len();
        let differs = match (a, b) {
            (Value::Object(x), Value::Object(y)) => x.keys().chain(y.keys()).any(|key| {
                path.truncate(len);
                path.push_str(if len == 0 { "" } else { "." });
                path.push_str(key);
                match (x.get(key), y.get(key)) {
                    (Some(x), Some(y)) => walk(x, y, path),
                    _ => true,
                }
            }),
            (Value::Array(x), Value::Array(y)) => (0..x.len().max(y.len())).any(|index| {
                path.truncate(len);
                path.push_str(&format!("[{index}]"));
                match (x.get(index), y.get(index)) {
                    (Some(x), Some(y)) => walk(x, y, path),
                    _ => true,
                }
            }),
            _ => a != b,
        };
        if !differs {
            path.truncate(len);
        }
        differs
    }
    if a == b {
        return None;
    }
    let to_value = |workflow| serde_json::to_value(workflow).expect("a workflow always serializes");
    let mut path = String::new();
    walk(&to_value(a), &to_value(b), &mut path);
    Some(path)
}

/// The buffer of a journal read line by line.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// Reads and parses a whole journal into memory (see [`for_each_entry`] for a read that holds
/// one entry at a time); a journal that does not exist has no entries.
pub(super) fn read_journal(path: &Path) -> Result<journal::Journal> {
    let mut entries = Vec::new();
    let summary = for_each_entry(path, |entry, _| {
        entries.push(entry);
        Ok(())
    })?;
    Ok(journal::Journal {
        entries,
        torn: summary.torn,
    })
}

/// Reads a journal line by line ([`journal::read`]), handing each entry to `visit`; a bad line
/// is an error, a journal that does not exist has no entries. There is no limit on the
/// journal's size: only one line is held at a time.
pub(super) fn for_each_entry(
    path: &Path,
    visit: impl FnMut(Entry, u64) -> Result<()>,
) -> Result<journal::Summary> {
    match open_journal(path)? {
        Some(reader) => journal::read(path, reader, visit),
        None => Ok(journal::Summary::default()),
    }
}

/// Opens a journal for a read line by line, never through a symlink; `None` when there is none.
fn open_journal(path: &Path) -> Result<Option<io::BufReader<fs::File>>> {
    refuse_symlink(path)?;
    match fs::File::open(path) {
        Ok(file) => Ok(Some(io::BufReader::with_capacity(READ_BUFFER_BYTES, file))),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(Error::io("open", path, err)),
    }
}

/// Replays the journal at `path` onto `base` (from nothing when `None`) as it reads it, one
/// entry at a time, skipping the entries up to sequence number `after`.
pub(super) fn replay_journal(
    path: &Path,
    base: Option<Workflow>,
    after: u64,
) -> Result<Option<Workflow>> {
    let mut state = base;
    for_each_entry(path, |entry, _| {
        if entry.seq > after {
            state = journal::replay(path, state.take(), std::slice::from_ref(&entry))?;
        }
        Ok(())
    })?;
    Ok(state)
}

/// Reads the journal's end: its last complete sequence number, a torn last line, and the
/// entries after sequence number `after` when one is given.
///
/// Reads backwards from the end a few kilobytes at a time, so that the cost follows what is
/// needed, not the journal's length. Anything unusual in those lines (one that is not an entry,
/// numbers out of order) is left to the whole-file parser, which says where it is.
fn read_tail(path: &Path, after: Option<u64>) -> Result<(Tail, Option<ForeignTail>)> {
    refuse_symlink(path)?;
    let mut file = match fs::File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok((Tail::default(), None)),
        Err(err) => return Err(Error::io("open", path, err)),
    };
    let len = file
        .metadata()
        .map_err(|err| Error::io("read", path, err))?
        .len();
    let mut window = TAIL_BYTES.min(len);
    loop {
        let start = len - window;
        let whole = start == 0;
        file.seek(SeekFrom::Start(start))
            .map_err(|err| Error::io("read", path, err))?;
        let mut bytes = Vec::with_capacity(window as usize);
        (&mut file)
            .take(window)
            .read_to_end(&mut bytes)
            .map_err(|err| Error::io("read", path, err))?;
        match journal::scan_tail(&bytes, start, whole, after) {
            Scan::Done(tail) => return Ok((tail, None)),
            Scan::NeedMore if !whole => window = (window * 4).min(len),
            Scan::NeedMore | Scan::Unusual => return read_tail_whole(path, after),
        }
    }
}

/// The end of a journal, from its first line that is not the next entry: lines added by hand
/// or by another tool after the entries of a state that is itself whole.
pub(super) struct ForeignTail {
    offset: u64,
    bytes: Vec<u8>,
    line: usize,
    reason: String,
}

/// [`read_tail`] from a parse of the whole journal, whose errors name the line.
///
/// A bad last line after every entry the state holds, which does not claim to be the next
/// entry (no number, or another one), is not an error: the state is used, and the line is
/// reported (and moved aside by the next writer). Any other bad line is an error.
fn read_tail_whole(path: &Path, after: Option<u64>) -> Result<(Tail, Option<ForeignTail>)> {
    // Line by line, keeping only the entries asked for: a long journal costs time, not memory.
    let mut kept = Vec::new();
    let mut after_bytes = 0;
    let summary = match open_journal(path)? {
        Some(reader) => journal::read_prefix(path, reader, |entry, len| {
            if after.is_some_and(|after| entry.seq > after) {
                after_bytes += len;
                kept.push(entry);
            }
            Ok(())
        })?,
        None => journal::Summary::default(),
    };
    let last_seq = summary.last_seq;
    let foreign = match summary.bad {
        None => None,
        Some(bad) => {
            let state_is_whole = after
                .zip(last_seq)
                .is_some_and(|(state_seq, last_seq)| state_seq <= last_seq);
            let bytes = read_from(path, bad.offset)?;
            // A line numbered as the next entry may be one: damaged, or of a newer version.
            let claims_next = journal::seq_of_line(&bytes)
                .is_some_and(|seq| Some(seq) == last_seq.and_then(|last| last.checked_add(1)));
            if !(bad.last && state_is_whole) || claims_next {
                return Err(with_repair_help(bad.error));
            }
            let reason = match bad.error {
                Error::Corrupt { message, .. } => message,
                other => other.to_string(),
            };
            Some(ForeignTail {
                offset: bad.offset,
                bytes,
                line: bad.line,
                reason,
            })
        }
    };
    let tail = Tail {
        last_seq,
        torn: summary.torn,
        after: kept,
        after_bytes,
    };
    Ok((tail, foreign))
}

/// A bad line no command can go on past, with the command that repairs it as its help.
fn with_repair_help(err: Error) -> Error {
    with_help(
        err,
        format!(
            "the state does not go on from the journal's entries before this line; {}",
            crate::store::JOURNAL_REPAIR_HINT
        ),
    )
}

/// The bytes of a file from `offset` to its end.
fn read_from(path: &Path, offset: u64) -> Result<Vec<u8>> {
    let mut file = fs::File::open(path).map_err(|err| Error::io("open", path, err))?;
    let mut bytes = Vec::new();
    file.seek(SeekFrom::Start(offset))
        .and_then(|_| file.read_to_end(&mut bytes))
        .map_err(|err| Error::io("read", path, err))?;
    Ok(bytes)
}

fn temp_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(Error::io("list", dir, err)),
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(TEMP_PREFIX))
        {
            found.push(entry.path());
        }
    }
    found.sort();
    Ok(found)
}

pub(super) fn persist_repairs(dir: &Path, now: DateTime<Utc>, loaded: &mut Loaded) -> Result<()> {
    let stamp = now.format("%Y%m%dT%H%M%S%.3fZ");
    for path in &loaded.repair.temp_files {
        match fs::remove_file(path) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(Error::io("remove", path, err)),
        }
    }
    if loaded.repair.journal_behind {
        let journal_path = dir.join(JOURNAL_FILE);
        let kept = unused_path(dir, &format!("{JOURNAL_FILE}.behind-{stamp}"));
        fsx::rename(&journal_path, &kept)?;
        // A torn or foreign tail belonged to the journal that was just kept aside.
        loaded.repair.torn_at = None;
        loaded.repair.foreign_at = None;
    }
    if let Some((offset, bytes)) = loaded.repair.torn_at.take() {
        let kept = cut_journal(dir, &format!("{JOURNAL_FILE}.torn-{stamp}"), offset, &bytes)?;
        for recovery in &mut loaded.recoveries {
            if let Recovery::TornJournalLine { kept_as, .. } = recovery {
                *kept_as = Some(kept.clone());
            }
        }
    }
    if let Some((offset, bytes)) = loaded.repair.foreign_at.take() {
        let kept = cut_journal(
            dir,
            &format!("{JOURNAL_FILE}.foreign-{stamp}"),
            offset,
            &bytes,
        )?;
        for recovery in &mut loaded.recoveries {
            if let Recovery::ForeignJournalLines { kept_as, .. } = recovery {
                *kept_as = Some(kept.clone());
            }
        }
    }
    if loaded.repair.corrupt_state {
        let state_path = dir.join(STATE_FILE);
        let kept = unused_path(dir, &format!("{STATE_FILE}.corrupt-{stamp}"));
        fsx::rename(&state_path, &kept)?;
        for recovery in &mut loaded.recoveries {
            if let Recovery::StateRebuilt { kept_as, .. } = recovery {
                *kept_as = Some(kept.clone());
            }
        }
    }
    for recovery in &mut loaded.recoveries {
        if let Recovery::TempFiles { removed, .. } = recovery {
            *removed = true;
        }
    }
    if !loaded.repair.temp_files.is_empty() || loaded.repair.corrupt_state {
        fsx::sync_dir(dir).map_err(|err| Error::io("sync", dir, err))?;
    }
    Ok(())
}

/// Keeps the journal's end from `offset` (its `bytes`) as the new file `name`, then cuts the
/// journal there; returns where the end was kept.
fn cut_journal(dir: &Path, name: &str, offset: u64, bytes: &[u8]) -> Result<PathBuf> {
    let kept = unused_path(dir, name);
    write_new_file(&kept, bytes)?;
    let journal_path = dir.join(JOURNAL_FILE);
    let file = fs::OpenOptions::new()
        .write(true)
        .open(&journal_path)
        .map_err(|err| Error::io("open", &journal_path, err))?;
    file.set_len(offset)
        .map_err(|err| Error::io("truncate", &journal_path, err))?;
    file.sync_all()
        .map_err(|err| Error::io("sync", &journal_path, err))?;
    Ok(kept)
}
