//! The repair of a journal with unreadable lines (`checkpoint validate --repair`): every line
//! that is not its next entry moves, byte for byte, to `journal.jsonl.unreadable-<time>`, and
//! every readable entry stays, so that the journal replays again.
//!
//! The numbers the moved lines held are kept by placeholders: a `snapshot` entry of the state
//! replayed so far, naming the line and the file it went to (as many as the numbers missing,
//! never more than the lines moved). An entry that no longer applies once a line before it is
//! gone moves too, and its number gets a placeholder. When the replay then differs from
//! `state.json` (which saw the lost entries), a last `snapshot` entry of `state.json` makes the
//! journal end where the state is. Nothing is ever deleted: an entry of a kind this version does
//! not know (a newer version's) is kept in the side file as it was.

use std::{
    fs,
    io::{self, BufRead, Read},
    path::PathBuf,
};

use chrono::{DateTime, Utc};

use crate::{
    error::{Error, Result},
    fsx,
    id::WorkflowId,
    journal::{self, Entry},
    model::Workflow,
    store::{
        checked::CHECKED_FILE,
        handle::Store,
        layout::{EFFECTS_INDEX, JOURNAL_FILE, STATE_FILE, TEMP_PREFIX},
        load::parse_state,
        write::{commit, refuse_symlink, unused_path, write_new_file},
    },
    transition::{Transition, apply_in_place},
};

/// The side file's name after the journal's: `journal.jsonl.unreadable-<time>`.
pub(crate) const UNREADABLE_SUFFIX: &str = "unreadable";

/// What [`Store::repair_journal`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalRepair {
    /// Where the moved lines are kept.
    pub kept_as: PathBuf,
    /// The numbers of the lines moved, from 1, in the journal as it was.
    pub lines: Vec<usize>,
    /// How many placeholders keep the numbers of the moved entries.
    pub placeholders: usize,
    /// Whether a last `snapshot` of `state.json` was journaled (the replay without the moved
    /// lines differed from it).
    pub state_kept: bool,
}

/// The journal being rebuilt, line by line.
struct Rebuild {
    out: Vec<u8>,
    moved: Vec<u8>,
    lines: Vec<usize>,
    /// Lines moved since the last entry kept: the numbers they may have held.
    pending: usize,
    state: Option<Workflow>,
    /// `state.json`, the base of a placeholder for a lost `init`.
    on_disk: Option<Workflow>,
    last_seq: u64,
    placeholders: usize,
    now: DateTime<Utc>,
    /// The state `out[..mark.1]` replays to: an entry applies to `state` in place (a copy per
    /// line made a long journal's repair quadratic), and a refused one, which may have changed
    /// it partly, rolls it back by replaying `out` from there.
    mark: (Option<Workflow>, usize),
}

impl Rebuild {
    fn move_line(&mut self, line_no: usize, bytes: &[u8]) {
        self.moved.extend_from_slice(bytes);
        self.lines.push(line_no);
        self.pending += 1;
    }

    /// A `snapshot` of the state so far in place of entry `seq`, moved from `line_no`.
    fn placeholder(&mut self, seq: u64, line_no: usize) -> Result<()> {
        if self.state.is_none() {
            // The `init` is lost: what follows goes on from the plan `state.json` holds, every
            // phase pending (the last entry brings back the state itself).
            self.state = self.on_disk.as_ref().map(Workflow::fresh);
        }
        let Some(state) = &mut self.state else {
            return Err(lost_start());
        };
        let transition = Transition::Snapshot {
            workflow: Box::new(state.clone()),
            reason: format!(
                "entry {seq} could not be read (line {line_no} of `{JOURNAL_FILE}`); the line was moved to `{JOURNAL_FILE}.{UNREADABLE_SUFFIX}-<time>` by `checkpoint validate --repair`, and this entry keeps its number"
            ),
        };
        apply_in_place(state, &transition, seq, self.now)?;
        let entry = Entry {
            seq,
            at: self.now,
            transition,
        };
        self.out.extend_from_slice(entry.to_line().as_bytes());
        self.placeholders += 1;
        self.last_seq = seq;
        Ok(())
    }

    /// One line of the journal as it was, newline included (none on a torn last line).
    fn line(&mut self, line_no: usize, bytes: &[u8]) -> Result<()> {
        let Some(body) = bytes.strip_suffix(b"\n") else {
            self.move_line(line_no, bytes);
            return Ok(());
        };
        if body.iter().all(u8::is_ascii_whitespace) {
            self.out.extend_from_slice(bytes);
            return Ok(());
        }
        let Ok(entry) = serde_json::from_slice::<Entry>(body) else {
            self.move_line(line_no, bytes);
            return Ok(());
        };
        // An entry follows the one before it, or takes a number one of the lines moved since
        // may have held; any other number is out of order.
        let gap = entry.seq.checked_sub(self.last_seq + 1);
        if gap.is_none_or(|gap| gap > self.pending as u64) {
            self.move_line(line_no, bytes);
            return Ok(());
        }
        let first_moved = self.lines.len() - self.pending;
        for (k, seq) in (self.last_seq + 1..entry.seq).enumerate() {
            let moved = self.lines[first_moved + k];
            self.placeholder(seq, moved)?;
        }
        let applied = match &mut self.state {
            Some(state) => apply_in_place(state, &entry.transition, entry.seq, entry.at).is_ok(),
            None => match journal::replay(&PathBuf::new(), None, std::slice::from_ref(&entry)) {
                Ok(Some(state)) => {
                    self.state = Some(state);
                    true
                }
                _ => false,
            },
        };
        if applied {
            self.out.extend_from_slice(bytes);
            self.last_seq = entry.seq;
        } else {
            // It applied on the state the lost lines left: it moves, its number kept.
            self.roll_back()?;
            self.move_line(line_no, bytes);
            self.placeholder(entry.seq, line_no)?;
        }
        self.pending = 0;
        Ok(())
    }

    /// Puts back the state `out` replays to, after a refused entry (see [`Rebuild::mark`]).
    fn roll_back(&mut self) -> Result<()> {
        let (base, from) = &self.mark;
        let entries = self.out[*from..]
            .split(|&b| b == b'\n')
            .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
            .map(serde_json::from_slice::<Entry>)
            .collect::<std::result::Result<Vec<_>, _>>()
            .expect("the lines kept are entries this repair parsed or wrote");
        self.state = journal::replay(&PathBuf::new(), base.clone(), &entries)?;
        self.mark = (self.state.clone(), self.out.len());
        Ok(())
    }
}

fn lost_start() -> Error {
    Error::Corrupt {
        path: PathBuf::from(JOURNAL_FILE),
        message: "the journal's first entry (`init`) cannot be read".into(),
        help: "no entry can be replayed without it: restore `journal.jsonl` from a copy (git, a backup); `state.json` is used meanwhile".into(),
        source_code: None,
        span: None,
    }
}

impl Store {
    /// Moves every line of the journal that is not its next entry to
    /// `journal.jsonl.unreadable-<time>` (see the module's documentation), under the lock, and
    /// writes the state the repaired journal replays to. `None` when every line is an entry
    /// that applies: nothing is changed.
    pub fn repair_journal(
        &self,
        id: &WorkflowId,
        now: DateTime<Utc>,
    ) -> Result<Option<JournalRepair>> {
        let dir = self.checked_dir(id)?;
        let _lock = self.lock(&dir)?;
        let path = dir.join(JOURNAL_FILE);
        refuse_symlink(&path)?;
        let io_error = |err| Error::io("read", &path, err);
        let file = match fs::File::open(&path) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(Error::io("open", &path, err)),
        };
        let state_path = dir.join(STATE_FILE);
        let on_disk =
            fsx::read_limited(&state_path)?.and_then(|bytes| parse_state(&state_path, &bytes).ok());
        let mut reader = io::BufReader::with_capacity(64 * 1024, file);
        let mut rebuild = Rebuild {
            out: Vec::new(),
            moved: Vec::new(),
            lines: Vec::new(),
            pending: 0,
            state: None,
            on_disk,
            last_seq: 0,
            placeholders: 0,
            now,
            mark: (None, 0),
        };
        let mut buf = Vec::new();
        let mut line_no = 0;
        loop {
            buf.clear();
            let n = (&mut reader)
                .take(journal::MAX_LINE_BYTES + 1)
                .read_until(b'\n', &mut buf)
                .map_err(io_error)?;
            if n == 0 {
                break;
            }
            line_no += 1;
            rebuild.line(line_no, &buf)?;
        }
        if rebuild.lines.is_empty() {
            return Ok(None);
        }
        let Some(mut state) = rebuild.state.take() else {
            return Err(lost_start());
        };
        // `state.json` saw the entries the moved lines held: where the replay differs from it,
        // it is journaled as the last entry.
        let on_disk = rebuild
            .on_disk
            .take()
            .filter(|disk| disk.seq >= state.seq && !same_but_numbering(disk, &state));
        let mut last = Vec::new();
        if let Some(disk) = on_disk {
            let transition = Transition::Snapshot {
                workflow: Box::new(disk),
                reason: format!(
                    "`{STATE_FILE}` as it was before `checkpoint validate --repair`, which holds what the moved lines of `{JOURNAL_FILE}` did"
                ),
            };
            let seq = rebuild.last_seq + 1;
            apply_in_place(&mut state, &transition, seq, now)?;
            last.push(
                Entry {
                    seq,
                    at: now,
                    transition,
                }
                .to_line(),
            );
        }
        let stamp = now.format("%Y%m%dT%H%M%S%.3fZ");
        let kept_as = unused_path(&dir, &format!("{JOURNAL_FILE}.{UNREADABLE_SUFFIX}-{stamp}"));
        // The moved lines are safe on disk before the journal loses them.
        write_new_file(&kept_as, &rebuild.moved)?;
        let temp = dir.join(format!("{TEMP_PREFIX}journal-{}", std::process::id()));
        let _ = fs::remove_file(&temp);
        write_new_file(&temp, &rebuild.out)?;
        fsx::rename(&temp, &path)?;
        fsx::sync_dir(&dir).map_err(|err| Error::io("sync", &dir, err))?;
        // Caches of the journal's offsets: rebuilt by their next reader.
        let _ = fs::remove_file(dir.join(EFFECTS_INDEX));
        let _ = fs::remove_file(dir.join(CHECKED_FILE));
        commit(&dir, &last, Some(&state), self.options.failpoint)?;
        Ok(Some(JournalRepair {
            kept_as,
            lines: rebuild.lines,
            placeholders: rebuild.placeholders,
            state_kept: !last.is_empty(),
        }))
    }
}

/// Whether two states differ only in their sequence number and update time.
fn same_but_numbering(a: &Workflow, b: &Workflow) -> bool {
    let mut a = a.clone();
    a.seq = b.seq;
    a.updated_at = b.updated_at;
    &a == b
}
