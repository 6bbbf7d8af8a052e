//! The effect index: the guard through it with 0, one and many effects, and an index that is
//! missing, stale, corrupt or behind a journal that moved on.
#![expect(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files directly"
)]

use std::fs;

use crate::{
    Transition, WorkflowId,
    effects::{self, Call, Observed},
    store::{
        JOURNAL_FILE, Store,
        layout::EFFECTS_INDEX,
        tests::{at, create, store},
    },
    transition::EffectSource,
};

fn key(command: &str) -> String {
    effects::key(Call::Bash(command), "", command)
}

fn record(store: &Store, id: &WorkflowId, command: &str, ok: bool) {
    store
        .update(id, at(1), |workflow| {
            Ok(vec![effects::record(
                workflow,
                None,
                Observed {
                    call: Call::Bash(command),
                    input: command,
                    dir: None,
                    place: "",
                    output: Some("done"),
                    ok,
                    session_id: Some("s"),
                    agent_id: None,
                    call_id: None,
                    source: EffectSource::Hook,
                },
            )])
        })
        .unwrap();
}

fn note(store: &Store, id: &WorkflowId, i: usize) {
    let text = format!("note {i} {}", "x".repeat(1000));
    store.apply(id, at(2), Transition::Note { text }).unwrap();
}

fn guard(store: &Store, id: &WorkflowId, command: &str) -> Option<u64> {
    store
        .effect_guard(id, &key(command))
        .unwrap()
        .map(|effect| effect.number)
}

#[test]
fn no_effect_guards_nothing_and_writes_no_index() {
    let temp = tempfile::tempdir().unwrap();
    let store = store(temp.path());
    let id = create(&store, 1);
    note(&store, &id, 0);
    assert_eq!(guard(&store, &id, "git push"), None);
    assert!(store.ledger(&id).unwrap().effects.is_empty());
    assert!(!store.workflow_dir(&id).join(EFFECTS_INDEX).exists());
}

#[test]
fn a_successful_effect_guards_its_exact_repeat() {
    let temp = tempfile::tempdir().unwrap();
    let store = store(temp.path());
    let id = create(&store, 1);
    record(&store, &id, "git push origin broken", false);
    record(&store, &id, "git push origin release", true);
    assert!(store.workflow_dir(&id).join(EFFECTS_INDEX).exists());
    assert_eq!(guard(&store, &id, "git push origin release"), Some(2));
    assert_eq!(guard(&store, &id, "  git push   origin release "), Some(2));
    assert_eq!(guard(&store, &id, "git push origin main"), None);
    assert_eq!(guard(&store, &id, "git push origin broken"), None);
    let effect = store
        .effect_guard(&id, &key("git push origin release"))
        .unwrap()
        .unwrap();
    assert_eq!(effect.command, "git push origin release");
    assert_eq!(effect.output.as_deref(), Some("done"));
    assert_eq!(effect.session_id.as_deref(), Some("s"));
}

#[test]
fn an_allow_lets_one_repeat_through() {
    let temp = tempfile::tempdir().unwrap();
    let store = store(temp.path());
    let id = create(&store, 1);
    record(&store, &id, "git push", true);
    let ledger = store.ledger(&id).unwrap();
    store
        .apply(
            &id,
            at(3),
            effects::allow(&ledger, 1, Some("ana".into())).unwrap(),
        )
        .unwrap();
    assert_eq!(guard(&store, &id, "git push"), None);
    assert!(store.ledger(&id).unwrap().effects[0].allowed);
    record(&store, &id, "git push", true);
    assert_eq!(guard(&store, &id, "git push"), Some(2));
}

#[test]
fn many_effects_and_a_long_tail_are_indexed() {
    let temp = tempfile::tempdir().unwrap();
    let store = store(temp.path());
    let id = create(&store, 1);
    for i in 0..120 {
        record(&store, &id, &format!("git push origin b{i}"), true);
    }
    // Entries after the last effect are the tail: read, then indexed when it grows long.
    for i in 0..70 {
        note(&store, &id, i);
    }
    let index_path = store.workflow_dir(&id).join(EFFECTS_INDEX);
    let before = fs::read_to_string(&index_path).unwrap();
    assert_eq!(guard(&store, &id, "git push origin b0"), Some(1));
    assert_eq!(guard(&store, &id, "git push origin b119"), Some(120));
    assert_eq!(guard(&store, &id, "git push origin b120"), None);
    let after = fs::read_to_string(&index_path).unwrap();
    assert_ne!(
        before.lines().next(),
        after.lines().next(),
        "the reader moved the index on"
    );
    assert_eq!(store.ledger(&id).unwrap().effects.len(), 120);
}

#[test]
fn a_missing_or_corrupt_index_is_rebuilt_from_the_journal() {
    let temp = tempfile::tempdir().unwrap();
    let store = store(temp.path());
    let id = create(&store, 1);
    record(&store, &id, "git push", true);
    let index_path = store.workflow_dir(&id).join(EFFECTS_INDEX);
    fs::remove_file(&index_path).unwrap();
    assert_eq!(guard(&store, &id, "git push"), Some(1));
    for garbage in [
        "",
        "nonsense\n",
        "checkpoint-effects 1 99999999 0\n",
        "checkpoint-effects 1 10 x\ne 1\n",
    ] {
        fs::write(&index_path, garbage).unwrap();
        assert_eq!(guard(&store, &id, "git push"), Some(1), "{garbage:?}");
    }
}

#[test]
fn an_index_of_a_replaced_journal_is_not_trusted() {
    let temp = tempfile::tempdir().unwrap();
    let store = store(temp.path());
    let id = create(&store, 1);
    record(&store, &id, "git push origin a", true);
    let dir = store.workflow_dir(&id);
    let journal = fs::read_to_string(dir.join(JOURNAL_FILE)).unwrap();
    let index = fs::read(dir.join(EFFECTS_INDEX)).unwrap();
    // Another journal of the same length, whose effect is a different push (a pull replaced
    // it): the old index would say `a` is guarded.
    let replaced = journal
        .replace("git push origin a", "git push origin b")
        .replace(&key("git push origin a"), &key("git push origin b"));
    assert_eq!(replaced.len(), journal.len());
    fs::write(dir.join(JOURNAL_FILE), &replaced).unwrap();
    fs::write(dir.join(EFFECTS_INDEX), &index).unwrap();
    assert_eq!(guard(&store, &id, "git push origin a"), None);
    assert_eq!(guard(&store, &id, "git push origin b"), Some(1));
    // A journal cut shorter than the index is not trusted either.
    let first_line = journal.lines().next().unwrap();
    fs::write(dir.join(JOURNAL_FILE), format!("{first_line}\n")).unwrap();
    fs::write(dir.join(EFFECTS_INDEX), &index).unwrap();
    assert_eq!(guard(&store, &id, "git push origin a"), None);
}

#[test]
fn an_effect_journaled_after_the_index_is_still_seen() {
    // As after a crash between the journal append and the index write.
    let temp = tempfile::tempdir().unwrap();
    let store = store(temp.path());
    let id = create(&store, 1);
    record(&store, &id, "git push origin a", true);
    let index_path = store.workflow_dir(&id).join(EFFECTS_INDEX);
    let old = fs::read(&index_path).unwrap();
    record(&store, &id, "git push origin b", true);
    fs::write(&index_path, old).unwrap();
    assert_eq!(guard(&store, &id, "git push origin b"), Some(2));
    assert_eq!(guard(&store, &id, "git push origin a"), Some(1));
}
