//! Properties of the store: random transitions against the journal, truncated journals, secrets, and random bytes fed to every parser.
//! random bytes fed to every parser.

#![expect(
    clippy::disallowed_methods,
    reason = "tests read and damage the store's files directly"
)]

use std::{fs, path::Path, time::Duration};

use chrono::{DateTime, Utc};
use proptest::prelude::*;

use crate::store::*;
use crate::{Error, Transition, WorkflowId, redact};
use crate::{
    journal,
    plan::Plan,
    transition::tests::{arb_transition, initial},
};

fn store(root: &Path) -> Store {
    Store::new(
        root,
        StoreOptions {
            lock_timeout: Duration::from_secs(5),
            on_lock_wait: None,
            failpoint: None,
        },
    )
}

fn id() -> WorkflowId {
    WorkflowId::new("w").unwrap()
}

fn now() -> DateTime<Utc> {
    DateTime::UNIX_EPOCH
}

/// The bytes of every file in a workflow's directory, by name.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            (name, fs::read(entry.path()).unwrap_or_default())
        })
        .collect();
    files.sort();
    files
}

proptest! {
    // Every case writes files with fsync: few cases keep the suite fast.
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn journal_replay_equals_the_state_and_refusals_write_nothing(
        transitions in prop::collection::vec(arb_transition(), 1..25),
    ) {
        let temp = tempfile::tempdir().unwrap();
        let store = store(temp.path());
        let loaded = store.create(initial(), now()).unwrap();
        let mut seq = 1;
        for transition in transitions {
            let before = snapshot(&loaded.dir);
            // Work on a paused workflow journals its `Unpause` first.
            let paused = store.load(&id()).unwrap().workflow.pause.is_some();
            let unpause = u64::from(paused && transition.lifts_pause());
            match store.apply(&id(), now(), transition) {
                Ok(loaded) => {
                    seq += 1 + unpause;
                    prop_assert_eq!(loaded.workflow.seq, seq);
                    prop_assert!(loaded.workflow.pause.is_none() || unpause == 0);
                }
                Err(err) => {
                    prop_assert!(
                        matches!(err, Error::InvalidTransition { .. } | Error::UnknownPhase { .. } | Error::UnknownTask { .. }),
                        "{err}"
                    );
                    prop_assert_eq!(snapshot(&loaded.dir), before, "a refused transition writes nothing");
                }
            }
            let verification = store.verify(&id()).unwrap();
            prop_assert_eq!(verification.mismatch, None);
            prop_assert_eq!(verification.journal_seq, seq);
            prop_assert_eq!(verification.state_file_seq, Some(seq));
        }
    }
}

#[test]
fn verify_names_the_field_that_differs() {
    let temp = tempfile::tempdir().unwrap();
    let store = store(temp.path());
    let loaded = store.create(initial(), now()).unwrap();
    store
        .apply(
            &id(),
            now(),
            Transition::Note {
                text: "kept".into(),
            },
        )
        .unwrap();
    assert!(store.replay_matches(&id()).unwrap());
    let path = loaded.dir.join(STATE_FILE);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replace("\"kept\"", "\"edited\"")).unwrap();
    let verification = store.verify(&id()).unwrap();
    assert_eq!(
        verification.mismatch.as_deref(),
        Some(
            "`state.json` differs from the journal's replay to entry 2 at `context.notes[0].text`"
        )
    );
    assert!(!store.replay_matches(&id()).unwrap());
}

#[test]
fn a_journal_cut_anywhere_still_loads_and_accepts_writes() {
    let temp = tempfile::tempdir().unwrap();
    let store = store(temp.path());
    let loaded = store.create(initial(), now()).unwrap();
    for n in 0..4 {
        let text = format!("note {n}");
        store
            .apply(&id(), now(), Transition::Note { text })
            .unwrap();
    }
    let journal_path = loaded.dir.join(JOURNAL_FILE);
    let whole = fs::read(&journal_path).unwrap();
    let state = fs::read(loaded.dir.join(STATE_FILE)).unwrap();
    for cut in 0..whole.len() {
        fs::write(&journal_path, &whole[..cut]).unwrap();
        fs::write(loaded.dir.join(STATE_FILE), &state).unwrap();
        let loaded = store.load(&id()).unwrap();
        assert_eq!(loaded.workflow.context.notes.len(), 4, "cut at {cut}");
        let written = store
            .apply(
                &id(),
                now(),
                Transition::Note {
                    text: "after".into(),
                },
            )
            .unwrap();
        assert_eq!(written.workflow.context.notes.len(), 5, "cut at {cut}");
        assert_eq!(store.load(&id()).unwrap().workflow, written.workflow);
    }
}

#[test]
fn secrets_never_reach_the_disk() {
    let temp = tempfile::tempdir().unwrap();
    let store = store(temp.path());
    let key = "sk-ant-api03-0123456789abcdefghijklmnopqrstuvwxyz";
    let mut workflow = initial();
    workflow.title = Some(format!("deploy with {key}"));
    let loaded = store.create(workflow, now()).unwrap();
    assert_eq!(loaded.redacted, 1);
    let loaded = store
        .apply(
            &id(),
            now(),
            Transition::Note {
                text: format!("use {key} and password=hunter2"),
            },
        )
        .unwrap();
    assert_eq!(loaded.redacted, 2);
    assert_eq!(
        loaded.workflow.context.notes[0].text,
        "use [REDACTED:api-key] and password=[REDACTED:secret]"
    );
    for (name, bytes) in snapshot(&loaded.dir) {
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(key) && !text.contains("hunter2"), "{name}");
    }
    assert!(store.replay_matches(&id()).unwrap());
}

/// Mutates `seed` like a fuzzer: flip, insert, delete, duplicate or splice bytes.
fn mutate(rng: &mut fastrand::Rng, seed: &[u8]) -> Vec<u8> {
    const INTERESTING: &[&[u8]] = &[
        b"{",
        b"}",
        b"[",
        b"]",
        b"\"",
        b"\n",
        b"\\u0000",
        b"\xff",
        b"99999999999999999999",
        b"-1",
        b"null",
        b"\"seq\":",
        b"\"op\":\"init\"",
        b"\"schema_version\":",
    ];
    let mut bytes = seed.to_vec();
    for _ in 0..=rng.usize(..8) {
        let at = rng.usize(..bytes.len() + 1);
        match rng.usize(..5) {
            0 if at < bytes.len() => bytes[at] ^= 1 << rng.usize(..8),
            1 => {
                let piece = INTERESTING[rng.usize(..INTERESTING.len())];
                bytes.splice(at..at, piece.iter().copied());
            }
            2 if at < bytes.len() => {
                let end = (at + rng.usize(..16)).min(bytes.len());
                bytes.drain(at..end);
            }
            3 => {
                let from = rng.usize(..bytes.len() + 1);
                let end = (from + rng.usize(..64)).min(bytes.len());
                let piece = bytes[from..end].to_vec();
                bytes.splice(at..at, piece);
            }
            _ => bytes.truncate(at),
        }
    }
    bytes
}

/// Feeds random and mutated bytes to every parser: none may panic, whatever it is given.
///
/// This is the libFuzzer-free counterpart of the `fuzz/` targets, small enough for every run.
#[test]
fn parsers_survive_random_and_mutated_input() {
    let temp = tempfile::tempdir().unwrap();
    let store = store(temp.path());
    let loaded = store.create(initial(), now()).unwrap();
    for transition in [
        Transition::PhaseStart {
            phase: crate::PhaseId::new("a").unwrap(),
            force: false,
        },
        Transition::Note { text: "n".into() },
    ] {
        store.apply(&id(), now(), transition).unwrap();
    }
    let state = fs::read(loaded.dir.join(STATE_FILE)).unwrap();
    let journal_bytes = fs::read(loaded.dir.join(JOURNAL_FILE)).unwrap();
    let plan = br#"{"title": "t", "phases": [{"id": "a"}, {"id": "b", "dependencies": ["a"], "on_failure": "a"}]}"#;
    let plan_toml = b"[[phases]]\nid = \"a\"\n[[phases]]\nid = \"b\"\ndepends_on = [\"a\"]\n";
    let mut rng = fastrand::Rng::with_seed(0x9E37_79B9_7F4A_7C15);
    for round in 0..3000 {
        let input = match round % 5 {
            0 => (0..rng.usize(..256)).map(|_| rng.u8(..)).collect(),
            1 => mutate(&mut rng, &state),
            2 => mutate(&mut rng, &journal_bytes),
            3 => mutate(&mut rng, plan),
            _ => mutate(&mut rng, plan_toml),
        };
        let _ = parse_state(Path::new("state.json"), &input);
        if let Ok(parsed) = journal::parse(Path::new("journal.jsonl"), &input) {
            let _ = journal::replay(Path::new("journal.jsonl"), None, &parsed.entries);
        }
        let _ = journal::scan_tail(&input, 0, true, Some(round % 7));
        let _ = journal::scan_tail(&input, 1, false, None);
        let text = String::from_utf8_lossy(&input);
        let _ = Plan::parse(Path::new("plan.json"), &text).and_then(|plan| plan.validate());
        let _ = Plan::parse(Path::new("plan.toml"), &text).and_then(|plan| plan.validate());
        let mut redacted = text.into_owned();
        redact::text(&mut redacted);
    }
}
