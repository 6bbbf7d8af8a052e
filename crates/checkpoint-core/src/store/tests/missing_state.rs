//! A missing `state.json` beside a journal whole from its `init`: what a kill leaves while a
//! workflow is created or its journal replaced, loaded as a lag, while other damage still is not.

#![expect(
    clippy::disallowed_methods,
    reason = "tests set up and damage the store's files directly"
)]

use std::fs;

use crate::store::{
    BACKUP_FILE, JOURNAL_FILE, Recovery, STATE_FILE,
    tests::{at, create, note, store},
};

/// A workflow of two journal entries, its state and backup written, in a temporary store.
fn two_entries() -> (tempfile::TempDir, crate::store::Store, crate::WorkflowId) {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let id = create(&store, 2);
    store.apply(&id, at(1), note(1)).unwrap();
    assert!(store.workflow_dir(&id).join(BACKUP_FILE).exists());
    (dir, store, id)
}

fn is_rebuilt(recoveries: &[Recovery]) -> bool {
    recoveries
        .iter()
        .any(|recovery| matches!(recovery, Recovery::StateRebuilt { .. }))
}

#[test]
fn a_state_missing_before_its_first_write_lags_its_journal_and_the_next_write_catches_up() {
    let (_dir, store, id) = two_entries();
    let dir = store.workflow_dir(&id);
    // What `Store::adopt` leaves when killed after the journal of a new workflow, or after it
    // removed the state and its backup to replace the journal.
    for name in [BACKUP_FILE, STATE_FILE] {
        fs::remove_file(dir.join(name)).unwrap();
    }
    let loaded = store.load(&id).unwrap();
    assert_eq!(
        loaded.recoveries,
        vec![Recovery::JournalReplayed {
            from_seq: 0,
            to_seq: 2
        }]
    );
    assert_eq!(loaded.workflow.seq, 2);
    let verification = store.verify(&id).unwrap();
    assert_eq!(verification.mismatch, None);
    store.apply(&id, at(2), note(2)).unwrap();
    assert!(dir.join(STATE_FILE).exists());
    assert_eq!(store.load(&id).unwrap().recoveries, vec![]);
}

#[test]
fn a_state_missing_beside_its_backup_is_still_rebuilt_for_a_person_to_check() {
    let (_dir, store, id) = two_entries();
    // A write never removes `state.json` while a backup exists: this is damage.
    fs::remove_file(store.workflow_dir(&id).join(STATE_FILE)).unwrap();
    assert!(is_rebuilt(&store.load(&id).unwrap().recoveries));
}

#[test]
fn a_state_missing_beside_a_torn_journal_is_still_rebuilt_for_a_person_to_check() {
    let (_dir, store, id) = two_entries();
    let dir = store.workflow_dir(&id);
    for name in [BACKUP_FILE, STATE_FILE] {
        fs::remove_file(dir.join(name)).unwrap();
    }
    let mut journal = fs::read(dir.join(JOURNAL_FILE)).unwrap();
    journal.extend_from_slice(b"{\"seq\":3,\"at\":\"2026");
    fs::write(dir.join(JOURNAL_FILE), journal).unwrap();
    assert!(is_rebuilt(&store.load(&id).unwrap().recoveries));
}

#[test]
fn a_state_missing_beside_a_journal_without_its_init_is_still_rebuilt_or_refused() {
    let (_dir, store, id) = two_entries();
    let dir = store.workflow_dir(&id);
    // A journal cut to its `init` behind a state at entry 2 is restarted from a snapshot of the
    // state by the next write: a journal that does not start at its `init`.
    let snapshot_first = {
        let journal = fs::read_to_string(dir.join(JOURNAL_FILE)).unwrap();
        let init = journal.split_inclusive('\n').next().unwrap();
        fs::write(dir.join(JOURNAL_FILE), init).unwrap();
        let loaded = store.load(&id).unwrap();
        assert!(matches!(
            loaded.recoveries[..],
            [Recovery::JournalBehind { .. }]
        ));
        store.apply(&id, at(3), note(3)).unwrap();
        fs::read_to_string(dir.join(JOURNAL_FILE)).unwrap()
    };
    assert!(
        !snapshot_first.starts_with("{\"seq\":1,"),
        "{snapshot_first}"
    );
    for name in [BACKUP_FILE, STATE_FILE] {
        fs::remove_file(dir.join(name)).unwrap();
    }
    match store.load(&id) {
        Ok(loaded) => assert!(is_rebuilt(&loaded.recoveries), "{:?}", loaded.recoveries),
        Err(err) => assert!(err.to_string().contains("journal"), "{err}"),
    }
}
