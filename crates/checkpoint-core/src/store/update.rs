//! The store's reads and writes of one workflow: `load`, and `create` and `update`, each under
//! the workflow's lock (repairs found while loading persisted first), and its journal.

use std::{fs, time::Duration};

use chrono::{DateTime, Utc};

use crate::{
    error::{Error, Result},
    id::WorkflowId,
    journal::{self, Entry},
    model::Workflow,
    redact,
    store::{
        archive, effects_index,
        handle::Store,
        layout::{JOURNAL_FILE, LOCK_FILE, STATE_FILE},
        load::{self, load_dir, persist_repairs, read_journal},
        loaded::{Loaded, Recovery, Repair},
        write::{self, commit, create_private_dir, may_defer},
    },
    transition::{Transition, apply_in_place, unpause_before_work},
};

/// How long a reader waits for a writer at work before it reads what is there (writes take
/// milliseconds; a hook must not wait long).
const READER_LOCK_WAIT: Duration = Duration::from_millis(500);

impl Store {
    /// Loads a workflow without taking the lock; recoveries are computed in memory only.
    ///
    /// A write under way looks like an interrupted one to a reader that takes no lock (the
    /// journal ahead of the state, a temporary file, a line half appended): when the first read
    /// finds any of that, the reader waits briefly for the lock and reads again, so that only
    /// what a write left behind is reported; a writer that holds the lock all that time is at
    /// work, and its write is not reported as interrupted.
    pub fn load(&self, id: &WorkflowId) -> Result<Loaded> {
        let dir = self.checked_dir(id)?;
        let loaded = load_dir(id, &self.root, &dir)?;
        if !loaded
            .recoveries
            .iter()
            .any(Recovery::may_be_a_write_at_work)
        {
            return Ok(loaded);
        }
        match self.wait_quietly(&dir, READER_LOCK_WAIT) {
            Ok(Some(_lock)) => load_dir(id, &self.root, &dir),
            Ok(None) => Ok(Loaded {
                recoveries: loaded
                    .recoveries
                    .into_iter()
                    .filter(|recovery| !recovery.may_be_a_write_at_work())
                    .collect(),
                ..loaded
            }),
            // A store this process cannot lock (read-only): the first read stands.
            Err(_) => Ok(loaded),
        }
    }

    /// Rebuilds `state.json` from the whole journal when the two disagree (a hand edit of the
    /// state, which every later write would otherwise carry on): the journal is the record,
    /// and the state file that disagrees is kept beside it as `state.json.mismatch-<time>`.
    /// Returns where it was kept, or `None` when the state already is the journal's replay.
    /// A journal that does not read whole is an error, and nothing is changed.
    pub fn rebuild_from_journal(
        &self,
        id: &WorkflowId,
        now: DateTime<Utc>,
    ) -> Result<Option<std::path::PathBuf>> {
        let dir = self.checked_dir(id)?;
        let _lock = self.lock(&dir)?;
        let journal_path = dir.join(JOURNAL_FILE);
        let journal = read_journal(&journal_path)?;
        let Some(replayed) = journal::replay(&journal_path, None, &journal.entries)? else {
            return Err(Error::NotFound {
                id: id.to_string(),
                root: self.root.clone(),
                suggestion: String::new(),
            });
        };
        let state_path = dir.join(STATE_FILE);
        let on_disk = crate::fsx::read_limited(&state_path)?
            .and_then(|bytes| load::parse_state(&state_path, &bytes).ok());
        if on_disk.as_ref() == Some(&replayed) {
            return Ok(None);
        }
        let stamp = now.format("%Y%m%dT%H%M%SZ");
        let kept = write::unused_path(&dir, &format!("{STATE_FILE}.mismatch-{stamp}"));
        if state_path.exists() {
            crate::fsx::rename(&state_path, &kept)?;
        }
        commit(&dir, &[], Some(&replayed), self.options.failpoint)?;
        Ok(Some(kept))
    }

    /// Creates a workflow from its initial state.
    pub fn create(&self, workflow: Workflow, now: DateTime<Utc>) -> Result<Loaded> {
        archive::refuse_reserved(&workflow.id)?;
        let dir = self.workflow_dir(&workflow.id);
        create_private_dir(&self.root)?;
        let new_dir = !dir.exists();
        create_private_dir(&dir)?;
        let dir = self.checked_dir(&workflow.id)?;
        let _lock = self.lock(&dir)?;
        if dir.join(STATE_FILE).exists() || dir.join(JOURNAL_FILE).exists() {
            return Err(Error::AlreadyExists {
                id: workflow.id.to_string(),
                dir,
            });
        }
        let mut workflow = workflow;
        // Secrets are redacted before anything is applied or written.
        let redacted = redact::workflow(&mut workflow);
        let mut next = workflow.clone();
        let transition = Transition::Init {
            workflow: Box::new(workflow),
        };
        apply_in_place(&mut next, &transition, 1, now)?;
        let entry = Entry {
            seq: 1,
            at: now,
            transition,
        };
        let committed = commit(
            &dir,
            &[entry.to_line()],
            Some(&next),
            self.options.failpoint,
        );
        if let Err(err @ (Error::StateTooLarge { .. } | Error::EntryTooLarge { .. })) = committed {
            // Refused before anything was written: the directory made for it goes too.
            if new_dir {
                let _ = fs::remove_file(dir.join(LOCK_FILE));
                let _ = fs::remove_dir(&dir);
            }
            return Err(err);
        }
        committed?;
        Ok(Loaded {
            workflow: next,
            recoveries: Vec::new(),
            dir,
            redacted,
            unpaused: None,
            repair: Repair::default(),
        })
    }

    /// Applies the transitions `decide` returns for the current state, under the lock.
    ///
    /// Repairs found while loading are persisted first. When `decide` returns no transition
    /// and nothing needs repair, nothing is written.
    pub fn update(
        &self,
        id: &WorkflowId,
        now: DateTime<Utc>,
        decide: impl FnOnce(&Workflow) -> Result<Vec<Transition>>,
    ) -> Result<Loaded> {
        let dir = self.checked_dir(id)?;
        let _lock = self.lock(&dir)?;
        let mut loaded = load_dir(id, &self.root, &dir)?;
        let mut transitions = decide(&loaded.workflow)?;
        // Work lifts a pause, on every write path, with the `Unpause` journaled and reported.
        loaded.unpaused = unpause_before_work(&loaded.workflow, &mut transitions);
        // A refusal fails the whole update and drops the loaded state, so it is changed in
        // place rather than copied first.
        let next = &mut loaded.workflow;
        let mut seq = loaded.repair.journal_seq.max(next.seq);
        let mut entries = Vec::with_capacity(transitions.len() + 1);
        if loaded.repair.journal_behind {
            // Appending after a journal that ends before the state would leave a gap in its
            // numbering: the old journal is kept aside, and a new one starts from the state.
            let transition = Transition::Snapshot {
                workflow: Box::new(next.clone()),
                reason: format!(
                    "the journal ended at entry {} before the state's entry {}; it is kept as `{JOURNAL_FILE}.behind-<time>` and restarts here",
                    loaded.repair.journal_seq, next.seq
                ),
            };
            seq += 1;
            apply_in_place(next, &transition, seq, now)?;
            entries.push(Entry {
                seq,
                at: now,
                transition,
            });
        }
        for mut transition in transitions {
            // Secrets are redacted before anything is applied or written.
            loaded.redacted += redact::transition(&mut transition);
            seq += 1;
            apply_in_place(next, &transition, seq, now)?;
            entries.push(Entry {
                seq,
                at: now,
                transition,
            });
        }
        let lines: Vec<String> = entries.iter().map(Entry::to_line).collect();
        let repair = &loaded.repair;
        // How far `state.json` would lag behind the journal if it were not rewritten.
        let lag = next.seq.saturating_sub(repair.state_seq);
        let lag_bytes = repair.lag_bytes + lines.iter().map(|line| line.len() as u64).sum::<u64>();
        let write_state = repair.corrupt_state
            || repair.state_stale
            || (lag > 0
                && !may_defer(
                    repair.state_len,
                    lag,
                    lag_bytes,
                    entries
                        .iter()
                        .any(|entry| entry.transition.replaces_state()),
                ));
        persist_repairs(&dir, now, &mut loaded)?;
        if !lines.is_empty() || write_state {
            let state = write_state.then_some(&loaded.workflow);
            commit(&dir, &lines, state, self.options.failpoint)?;
        }
        if lines.iter().any(|line| effects_index::is_effect_line(line)) {
            Self::refresh_effects_index(&dir);
        }
        Ok(loaded)
    }

    /// Applies one transition under the lock.
    pub fn apply(
        &self,
        id: &WorkflowId,
        now: DateTime<Utc>,
        transition: Transition,
    ) -> Result<Loaded> {
        self.update(id, now, |_| Ok(vec![transition]))
    }

    /// Reads and parses the whole journal of a workflow.
    pub fn journal(&self, id: &WorkflowId) -> Result<journal::Journal> {
        let dir = self.checked_dir(id)?;
        read_journal(&dir.join(JOURNAL_FILE))
    }

    /// Reads the whole journal of a workflow, keeping only its last `n` entries in memory (and
    /// a torn last line): `checkpoint log -n <n>` costs one line's memory, not the journal's.
    pub fn last_entries(&self, id: &WorkflowId, n: usize) -> Result<journal::Journal> {
        let dir = self.checked_dir(id)?;
        let mut kept = std::collections::VecDeque::with_capacity(n.min(1024));
        let summary = load::for_each_entry(&dir.join(JOURNAL_FILE), |entry, _| {
            if kept.len() == n {
                kept.pop_front();
            }
            if n > 0 {
                kept.push_back(entry);
            }
            Ok(())
        })?;
        Ok(journal::Journal {
            entries: kept.into(),
            torn: summary.torn,
        })
    }

    /// Whether the workflow's state equals the replay of its journal (see [`Store::verify`]).
    #[cfg(test)]
    pub(crate) fn replay_matches(&self, id: &WorkflowId) -> Result<bool> {
        Ok(self.verify(id)?.replay_matches())
    }
}
