//! The store's one write for sync: a workflow's journal made to equal one brought from another
//! machine (see [`crate::sync`]).

use std::{fs, io, path::Path};

use chrono::{DateTime, Utc};

use crate::{
    error::{Error, Result},
    fsx,
    id::WorkflowId,
    journal::{self, Entry},
    redact,
    store::{
        BACKUP_FILE, JOURNAL_FILE, Loaded, STATE_FILE, Store, TEMP_PREFIX,
        load::{load_dir, persist_repairs, read_journal},
        write::{commit, create_private_dir, private_options, state_text, write_state_atomically},
    },
    sync::make_portable,
};

impl Store {
    /// Makes the journal of `id` equal `entries` and its state their replay, under the lock.
    ///
    /// `expected` is the last sequence number of the local journal when the caller compared it
    /// (`None` when the workflow did not exist); when it changed since, nothing is written.
    /// When `entries` extend the local journal, only the new ones are appended, as any write
    /// does. Otherwise (a resolved divergence, whose other side the caller kept as a fork first)
    /// the journal is replaced: the state and its backup are removed first, so that an
    /// interruption at any point leaves a journal, old or new, that the state is replayed from.
    /// A new workflow's journal is written before its state the same way: a `state.json` missing
    /// beside a journal whole from its `init` and no backup is loaded as a state that lags its
    /// journal, not as damage (see `load::lags_from_nothing`).
    pub fn adopt(
        &self,
        id: &WorkflowId,
        expected: Option<u64>,
        entries: &[Entry],
        now: DateTime<Utc>,
    ) -> Result<Loaded> {
        let dir = self.workflow_dir(id);
        let journal_path = dir.join(JOURNAL_FILE);
        // Entries from elsewhere were redacted where they were written; this pass only guards
        // against a writer that did not.
        let mut entries = entries.to_vec();
        let redacted: usize = entries
            .iter_mut()
            .map(|entry| redact::transition(&mut entry.transition))
            .sum();
        let state = journal::replay(&journal_path, None, &entries)?.ok_or_else(|| {
            Error::transition(
                format!("the journal brought for `{id}` is empty or has no `init`"),
                "check the remote's `refs/checkpoints/<id>`; nothing was written",
            )
        })?;
        if state.id != *id {
            return Err(Error::transition(
                format!(
                    "the journal brought for `{id}` is the journal of `{}`",
                    state.id
                ),
                "check the remote's `refs/checkpoints/<id>`; nothing was written",
            ));
        }
        let lines: Vec<String> = entries.iter().map(Entry::to_line).collect();
        if expected.is_none() {
            create_private_dir(self.root())?;
            create_private_dir(&dir)?;
        }
        let dir = self.checked_dir(id)?;
        let _lock = self.lock(&dir)?;
        let exists = dir.join(STATE_FILE).exists() || journal_path.exists();
        let (current, local_state) = match (exists, expected) {
            (false, None) => (Vec::new(), None),
            (true, Some(expected)) => {
                let mut loaded = load_dir(id, self.root(), &dir)?;
                persist_repairs(&dir, now, &mut loaded)?;
                let mut current = read_journal(&journal_path)?.entries;
                make_portable(&mut current);
                let last = current.last().map_or(0, |entry| entry.seq);
                if last != expected {
                    return Err(changed(id, expected, last));
                }
                (current, Some(loaded.workflow))
            }
            (true, None) => {
                return Err(Error::AlreadyExists {
                    id: id.to_string(),
                    dir,
                });
            }
            (false, Some(expected)) => return Err(changed(id, expected, 0)),
        };
        if let (true, Some(local_state)) = (entries.starts_with(&current), local_state) {
            // The local entries keep what they hold of this machine: the new ones are replayed
            // onto the local state, not the portable one.
            let new = &entries[current.len()..];
            let state = journal::replay(&journal_path, Some(local_state), new)?
                .expect("replay onto a state yields a state");
            commit(
                &dir,
                &lines[current.len()..],
                Some(&state),
                self.options.failpoint,
            )?;
        } else if current.is_empty() {
            commit(&dir, &lines, Some(&state), self.options.failpoint)?;
        } else {
            replace(&dir, &lines.concat(), &state_text(&state))?;
        }
        let mut loaded = load_dir(id, self.root(), &dir)?;
        loaded.redacted = redacted;
        Ok(loaded)
    }
}

fn changed(id: &WorkflowId, expected: u64, last: u64) -> Error {
    Error::transition(
        format!(
            "`{id}` changed while it was being pulled (its journal ends at entry {last}, not {expected})"
        ),
        "run `checkpoint pull` again",
    )
}

/// Replaces the journal and the state of `dir`: the state goes first, then the journal is
/// replaced atomically, then the new state is written.
fn replace(dir: &Path, journal_text: &str, state: &[u8]) -> Result<()> {
    for name in [BACKUP_FILE, STATE_FILE] {
        let path = dir.join(name);
        match fs::remove_file(&path) {
            Err(err) if err.kind() != io::ErrorKind::NotFound => {
                return Err(Error::io("remove", &path, err));
            }
            _ => {}
        }
    }
    fsx::sync_dir(dir).map_err(|err| Error::io("sync", dir, err))?;
    let temp = dir.join(format!("{TEMP_PREFIX}journal"));
    let _ = fs::remove_file(&temp);
    let mut file = private_options()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(|err| Error::io("create", &temp, err))?;
    io::Write::write_all(&mut file, journal_text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|err| Error::io("write", &temp, err))?;
    fsx::rename(&temp, &dir.join(JOURNAL_FILE))?;
    fsx::sync_dir(dir).map_err(|err| Error::io("sync", dir, err))?;
    write_state_atomically(dir, state, None)
        .map_err(|err| Error::io("write", dir.join(STATE_FILE), err))
}
