//! Tests of the store: the write path, the journal tail and recovery, on real temporary directories.
#![expect(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files directly"
)]

use std::{fs, time::Duration};

use chrono::{DateTime, TimeZone, Utc};

use crate::{
    PhaseId, PhasePlan, Plan, Transition, WorkflowId,
    store::{
        DEFER_STATE_BYTES, JOURNAL_FILE, MAX_DEFERRED_ENTRIES, Recovery, STATE_FILE, Store,
        StoreOptions,
    },
};

pub(super) fn at(second: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, second).unwrap()
}

pub(super) fn store(dir: &std::path::Path) -> Store {
    Store::new(
        dir,
        StoreOptions {
            lock_timeout: Duration::from_millis(100),
            on_lock_wait: None,
            failpoint: None,
        },
    )
}

pub(super) fn create(store: &Store, n_phases: usize) -> WorkflowId {
    let id = WorkflowId::new("w").unwrap();
    let phases = (0..n_phases)
        .map(|i| PhasePlan::from_spec(&format!("phase-with-a-longish-name-{i:05}")).unwrap())
        .collect();
    let workflow = Plan {
        phases,
        ..Plan::default()
    }
    .into_workflow(id.clone(), None, at(0))
    .unwrap();
    store.create(workflow, at(0)).unwrap();
    id
}

#[test]
fn long_journal_lines_are_read_from_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    // The `init` line of 300 phases is far longer than the tail window.
    let id = create(&store, 300);
    let loaded = store.load(&id).unwrap();
    assert_eq!(loaded.recoveries, vec![]);
    let phase = PhaseId::new("phase-with-a-longish-name-00000").unwrap();
    store
        .apply(
            &id,
            at(1),
            Transition::PhaseStart {
                phase,
                force: false,
            },
        )
        .unwrap();
    // Drop the state back to before the start: the journal's last line must be found.
    fs::copy(
        dir.path().join("w/state.json.bak"),
        dir.path().join("w").join(STATE_FILE),
    )
    .unwrap();
    let loaded = store.load(&id).unwrap();
    assert_eq!(
        loaded.recoveries,
        vec![Recovery::JournalReplayed {
            from_seq: 1,
            to_seq: 2
        }]
    );
    assert_eq!(loaded.workflow.seq, 2);
}

#[test]
fn a_torn_init_line_alone_is_not_a_workflow() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    fs::create_dir_all(dir.path().join("w")).unwrap();
    fs::write(
        dir.path().join("w").join(JOURNAL_FILE),
        "{\"seq\":1,\"at\":\"2026",
    )
    .unwrap();
    let err = store.load(&WorkflowId::new("w").unwrap()).unwrap_err();
    assert!(
        err.to_string()
            .contains("no usable state, journal or backup"),
        "{err}"
    );
}

#[test]
fn refused_transitions_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let id = create(&store, 2);
    let journal = fs::read(dir.path().join("w").join(JOURNAL_FILE)).unwrap();
    let phase = PhaseId::new("phase-with-a-longish-name-00000").unwrap();
    let err = store
        .apply(
            &id,
            at(1),
            Transition::PhaseProgress {
                phase,
                note: "x".into(),
            },
        )
        .unwrap_err();
    assert!(err.to_string().contains("not in progress"), "{err}");
    assert_eq!(
        fs::read(dir.path().join("w").join(JOURNAL_FILE)).unwrap(),
        journal
    );
}

#[test]
fn archive_moves_the_directory_and_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let id = create(&store, 1);
    let target = store.archive(&id, at(5), false).unwrap();
    assert_eq!(target, dir.path().join(".archive/w_20260301_120005"));
    assert!(target.join(STATE_FILE).exists() && target.join(JOURNAL_FILE).exists());
    assert_eq!(store.list().unwrap(), vec![]);
    let id = create(&store, 1);
    assert_eq!(
        store.archive(&id, at(5), true).unwrap(),
        dir.path().join("failed/w_20260301_120005")
    );
}

#[test]
fn state_files_parse_or_say_why_not() {
    #[track_caller]
    fn check(state: &serde_json::Value, expect: &str) {
        let path = std::path::Path::new("state.json");
        let text = serde_json::to_string_pretty(state).unwrap();
        let outcome = match crate::store::parse_state(path, text.as_bytes()) {
            Ok(workflow) => format!("ok: `{}`", workflow.id),
            Err(crate::Error::NewerVersion { found, .. }) => format!("newer: {found}"),
            Err(crate::Error::Corrupt { message, .. }) => format!("corrupt: {message}"),
            Err(err) => format!("other: {err}"),
        };
        assert_eq!(outcome, expect);
    }
    let workflow = Plan {
        phases: vec![
            PhasePlan::from_spec("design").unwrap(),
            PhasePlan::from_spec("build:design").unwrap(),
        ],
        ..Plan::default()
    }
    .into_workflow(WorkflowId::new("w").unwrap(), None, at(0))
    .unwrap();
    let good = serde_json::to_value(&workflow).unwrap();
    check(&good, "ok: `w`");

    // A newer version is refused as such, whether or not it still reads as this version.
    let mut newer = good.clone();
    newer["schema_version"] = 2.into();
    newer["future_field"] = "x".into();
    check(&newer, "newer: 2");
    newer["phases"] = "a newer shape".into();
    check(&newer, "newer: 2");

    let mut unversioned = good.clone();
    unversioned
        .as_object_mut()
        .unwrap()
        .remove("schema_version");
    check(&unversioned, "corrupt: missing or invalid `schema_version`");

    let mut twice = good.clone();
    twice["phases"][1]["id"] = "design".into();
    twice["phases"][1]["dependencies"] = serde_json::json!([]);
    check(
        &twice,
        "corrupt: invalid plan: phase `design` is declared twice",
    );

    let mut wrong_type = good;
    wrong_type["seq"] = "one".into();
    check(
        &wrong_type,
        "corrupt: invalid type: string \"one\", expected u64 at line 7 column 14",
    );
}

mod effects_index;
mod missing_state;
mod props;

/// The sequence number of `state.json` as it is on disk.
fn seq_on_disk(dir: &std::path::Path) -> u64 {
    let bytes = fs::read(dir.join(STATE_FILE)).unwrap();
    crate::store::parse_state(&dir.join(STATE_FILE), &bytes)
        .unwrap()
        .seq
}

/// A workflow whose `state.json` is large enough for its writes to be deferred.
fn create_large(store: &Store) -> (WorkflowId, std::path::PathBuf) {
    let id = create(store, 3_000);
    let dir = store.workflow_dir(&id);
    let len = fs::metadata(dir.join(STATE_FILE)).unwrap().len();
    assert!(len >= DEFER_STATE_BYTES, "the state is only {len} bytes");
    let phase = PhaseId::new("phase-with-a-longish-name-00000").unwrap();
    let start = Transition::PhaseStart {
        phase,
        force: false,
    };
    store.apply(&id, at(1), start).unwrap();
    (id, dir)
}

pub(super) fn note(i: u64) -> Transition {
    Transition::Note {
        text: format!("note {i}"),
    }
}

#[test]
fn a_large_state_is_rewritten_every_so_often_and_always_loads_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let (id, wdir) = create_large(&store);
    // A large state is written without indentation, a small one with it.
    let text = fs::read_to_string(wdir.join(STATE_FILE)).unwrap();
    assert!(text.starts_with("{\"schema_version\":") && text.lines().count() == 1);
    let small_store = Store::new(&dir.path().join("small"), store.options.clone());
    let small = create(&small_store, 3);
    let small = fs::read_to_string(small_store.workflow_dir(&small).join(STATE_FILE)).unwrap();
    assert!(small.starts_with("{\n  \"schema_version\": 1,"));
    let mut deferred = 0;
    let mut rewritten = 0;
    for i in 0..(2 * MAX_DEFERRED_ENTRIES) {
        let before = seq_on_disk(&wdir);
        let loaded = store.apply(&id, at(2), note(i)).unwrap();
        let after = seq_on_disk(&wdir);
        if after == before {
            deferred += 1;
        } else {
            assert_eq!(
                after, loaded.workflow.seq,
                "a rewrite writes the newest state"
            );
            rewritten += 1;
        }
        assert!(loaded.workflow.seq - after < MAX_DEFERRED_ENTRIES);
        // A reader gets every entry, and a lag by design is not reported as a recovery.
        let read = store.load(&id).unwrap();
        assert_eq!(read.recoveries, vec![]);
        assert_eq!(read.workflow, loaded.workflow);
    }
    assert!(
        deferred > rewritten && rewritten >= 2,
        "{deferred} deferred, {rewritten} rewritten"
    );
    let verification = store.verify(&id).unwrap();
    assert!(verification.replay_matches(), "{verification:?}");
    assert!(verification.state_file_seq < Some(verification.journal_seq));
}

#[test]
fn a_large_state_lagging_past_the_bounds_is_reported_and_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let (id, wdir) = create_large(&store);
    let old = fs::read(wdir.join(STATE_FILE)).unwrap();
    let old_seq = seq_on_disk(&wdir);
    for i in 0..(MAX_DEFERRED_ENTRIES + 5) {
        store.apply(&id, at(2), note(i)).unwrap();
    }
    // As after a crash between the journal's append and the state's rewrite, or a state put back
    // by hand: further behind than any writer leaves it.
    fs::write(wdir.join(STATE_FILE), &old).unwrap();
    let loaded = store.load(&id).unwrap();
    let last = loaded.workflow.seq;
    assert_eq!(
        loaded.recoveries,
        vec![Recovery::JournalReplayed {
            from_seq: old_seq,
            to_seq: last
        }]
    );
    store.apply(&id, at(3), note(99)).unwrap();
    assert_eq!(seq_on_disk(&wdir), last + 1);
    assert_eq!(store.load(&id).unwrap().recoveries, vec![]);
}

#[test]
fn a_large_state_is_brought_up_to_date_before_it_is_archived() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let (id, wdir) = create_large(&store);
    store.apply(&id, at(2), note(1)).unwrap();
    let last = store.load(&id).unwrap().workflow.seq;
    assert!(seq_on_disk(&wdir) < last, "the note's write was deferred");
    let target = store.archive(&id, at(5), false).unwrap();
    assert_eq!(seq_on_disk(&target), last);
}

/// A write is refused, nothing written, when one of its lines is longer than readers accept or
/// when it would take the journal past the size writers keep it under; the journal stays
/// readable and takes the next write that fits.
#[test]
fn a_write_past_the_journal_limits_is_refused_and_changes_nothing() {
    use crate::{
        Error,
        journal::{Entry, MAX_JOURNAL_BYTES, MAX_LINE_BYTES},
        store::write::commit,
    };
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let id = create(&store, 1);
    let wf_dir = dir.path().join("w");
    let journal_path = wf_dir.join(JOURNAL_FILE);
    let before = fs::read(&journal_path).unwrap();
    let line = |text: String| {
        Entry {
            seq: 2,
            at: at(1),
            transition: Transition::Note { text },
        }
        .to_line()
    };

    // One line over the bound, by one byte and by far.
    let overhead = line(String::new()).len() as u64;
    for extra in [1, 1024 * 1024] {
        let text = "x".repeat((MAX_LINE_BYTES - overhead + extra) as usize);
        let err = commit(&wf_dir, &[line(text)], None, None).unwrap_err();
        assert!(
            matches!(err, Error::EntryTooLarge { size, limit, .. } if size == MAX_LINE_BYTES + extra && limit == MAX_LINE_BYTES),
            "{err}"
        );
        assert_eq!(fs::read(&journal_path).unwrap(), before);
    }
    // A line of exactly the bound is written, and read back.
    let text = "x".repeat((MAX_LINE_BYTES - overhead) as usize);
    commit(&wf_dir, &[line(text)], None, None).unwrap();
    assert_eq!(store.journal(&id).unwrap().entries.len(), 2);

    // A journal at the size limit (the rest of the file is left sparse: appending never reads
    // it) takes nothing more, whatever the size of the write.
    let file = fs::OpenOptions::new()
        .write(true)
        .open(&journal_path)
        .unwrap();
    file.set_len(MAX_JOURNAL_BYTES - 10).unwrap();
    drop(file);
    for text in ["", "a longer note than the ten bytes left"] {
        let err = commit(&wf_dir, &[line(text.into())], None, None).unwrap_err();
        assert!(
            matches!(err, Error::JournalFull { size, limit, .. } if size > limit && limit == MAX_JOURNAL_BYTES),
            "{err}"
        );
        assert_eq!(
            fs::metadata(&journal_path).unwrap().len(),
            MAX_JOURNAL_BYTES - 10
        );
    }
    let err = store
        .apply(&id, at(2), Transition::Note { text: "n".into() })
        .unwrap_err();
    assert!(err.to_string().contains("over the limit"), "{err}");
}

/// `last_entries` keeps the journal's last `n` entries, for every `n`, and its torn line.
#[test]
fn the_last_entries_are_the_end_of_the_whole_journal() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let id = create(&store, 1);
    for second in 1..=5 {
        store
            .apply(
                &id,
                at(second),
                Transition::Note {
                    text: format!("n{second}"),
                },
            )
            .unwrap();
    }
    let journal_path = dir.path().join("w").join(JOURNAL_FILE);
    let mut bytes = fs::read(&journal_path).unwrap();
    bytes.extend_from_slice(b"{\"seq\":7,\"at\"");
    fs::write(&journal_path, bytes).unwrap();
    let whole = store.journal(&id).unwrap();
    assert_eq!(whole.entries.len(), 6);
    for n in [0, 1, 3, 6, 7, 1000] {
        let last = store.last_entries(&id, n).unwrap();
        assert_eq!(
            last.entries,
            whole.entries[6usize.saturating_sub(n)..],
            "{n}"
        );
        assert_eq!(last.torn, whole.torn, "{n}");
    }
}

/// Whoever writes (a command, a hook, a `Workflow` run's hooks), work on a paused workflow
/// journals the `Unpause` before it, once, and never when nothing lifts the pause.
#[test]
fn every_update_that_lifts_a_pause_journals_the_unpause() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let id = create(&store, 2);
    let phase = PhaseId::new("phase-with-a-longish-name-00000").unwrap();
    let pause = || Transition::Pause {
        reason: "rate limit".into(),
        until: None,
    };
    let ops = |store: &Store| -> Vec<String> {
        let text = fs::read_to_string(store.workflow_dir(&id).join(JOURNAL_FILE)).unwrap();
        text.lines()
            .map(|line| {
                let value: serde_json::Value = serde_json::from_str(line).unwrap();
                value["transition"]["op"].as_str().unwrap().to_owned()
            })
            .collect()
    };
    store.update(&id, at(1), |_| Ok(vec![pause()])).unwrap();
    // A heartbeat is no work: the pause stays.
    let loaded = store
        .update(&id, at(2), |_| {
            Ok(vec![Transition::Heartbeat {
                source: "hook".into(),
                session_id: None,
            }])
        })
        .unwrap();
    assert!(loaded.workflow.pause.is_some());
    assert_eq!(loaded.unpaused, None, "nothing lifted, nothing reported");
    // Work written without asking for the unpause gets it from the store, which reports it.
    let start = Transition::PhaseStart {
        phase: phase.clone(),
        force: false,
    };
    let loaded = store
        .update(&id, at(3), |_| Ok(vec![start.clone()]))
        .unwrap();
    assert!(loaded.workflow.pause.is_none());
    assert_eq!(
        loaded.unpaused.map(|pause| pause.reason),
        Some("rate limit".to_owned())
    );
    assert_eq!(
        ops(&store)[1..],
        ["pause", "heartbeat", "unpause", "phase_start"]
    );
    // A writer that journaled it itself gets no second one.
    store.update(&id, at(4), |_| Ok(vec![pause()])).unwrap();
    store
        .update(&id, at(5), |workflow| {
            let mut transitions = vec![Transition::PhaseProgress {
                phase: phase.clone(),
                note: "on".into(),
            }];
            assert!(crate::unpause_before_work(workflow, &mut transitions).is_some());
            Ok(transitions)
        })
        .unwrap();
    assert_eq!(ops(&store)[5..], ["pause", "unpause", "phase_progress"]);
}
