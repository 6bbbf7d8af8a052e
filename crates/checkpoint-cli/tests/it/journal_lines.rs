//! A bad line anywhere in the journal (first, middle, last, several, invalid UTF-8, an entry of
//! an unknown kind, in a journal of any length): seen by every command that sums a workflow up,
//! named with its file and line, and repaired by the command the hint names, keeping every
//! readable entry and every byte moved.

use std::fs;

use crate::support::{TestEnv, session_start_context};

/// A workflow `w` with `notes` notes after `init` and `start a`.
fn with_notes(notes: usize) -> TestEnv {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a", "--phase", "b:a"]);
    env.ok(&["start", "a"]);
    for n in 0..notes {
        env.ok(&["note", &format!("note {n}")]);
    }
    env
}

fn journal_path(env: &TestEnv) -> std::path::PathBuf {
    env.workflow_dir("w").join("journal.jsonl")
}

/// The journal's lines as bytes, newlines included.
fn lines(env: &TestEnv) -> Vec<Vec<u8>> {
    let bytes = fs::read(journal_path(env)).unwrap();
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

/// The files of the workflow's directory whose name starts with `prefix`.
fn kept(env: &TestEnv, prefix: &str) -> Vec<Vec<u8>> {
    let mut files: Vec<_> = fs::read_dir(env.workflow_dir("w"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(prefix)
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| fs::read(path).unwrap())
        .collect()
}

/// What a bad line is made of, for each kind of damage.
fn damaged(kind: &str, line: &[u8]) -> Vec<u8> {
    match kind {
        "garbage" => b"this is not json\n".to_vec(),
        "cut" => line[..line.len() / 2]
            .iter()
            .copied()
            .chain([b'\n'])
            .collect(),
        "utf8" => {
            // The same entry, with a byte that is no UTF-8 inside a string.
            let text = String::from_utf8(line.to_vec()).unwrap();
            let at = text.find("note ").expect("a note line") + 2;
            let mut bytes = line.to_vec();
            bytes[at] = 0xff;
            bytes
        }
        // Valid JSON, numbered in order, of a kind this version does not know (a newer one's).
        "unknown" => {
            let text = String::from_utf8(line.to_vec()).unwrap();
            let cut = text.find("\"transition\"").unwrap();
            format!(
                "{}\"transition\":{{\"op\":\"from_the_future\",\"x\":[1,2]}}}}\n",
                &text[..cut]
            )
            .into_bytes()
        }
        _ => unreachable!(),
    }
}

/// Damages the lines at `at` (indices from 0) with `kind`; returns the journal as written.
fn damage(env: &TestEnv, at: &[usize], kind: &str) -> Vec<Vec<u8>> {
    let mut all = lines(env);
    for &index in at {
        all[index] = damaged(kind, &all[index]);
    }
    fs::write(journal_path(env), all.concat()).unwrap();
    all
}

/// Every summary names the journal, line `line` and the repair; `validate` fails on it; the
/// repair moves exactly the bad lines, keeps every other one, and `validate` then accepts the
/// workflow, whose state is the one before the repair.
fn seen_and_repaired(env: &TestEnv, written: &[Vec<u8>], bad: &[usize], case: &str) {
    let line = format!("line {}", bad[0] + 1);
    // A damaged last entry the state holds stops every command (exit 6), naming the repair;
    // any other bad line is a warning, the state used meanwhile.
    let stops = case == "last";
    let status = env.snapshot(&["status"]);
    let resume = env.snapshot(&["--format", "json", "resume", "--dry-run"]);
    for text in [&status, &resume] {
        let code = if stops {
            "exit status: 6"
        } else {
            "exit status: 0"
        };
        assert!(text.starts_with(code), "{case}: {text}");
        assert!(text.contains(&line), "{case}: {text}");
        assert!(text.contains("journal.jsonl"), "{case}: {text}");
        assert!(
            text.contains("checkpoint validate --repair"),
            "{case}: {text}"
        );
    }
    if !stops {
        assert!(resume.contains("journal.unreadable"), "{case}: {resume}");
    }
    let context = session_start_context(env);
    assert!(context.contains(&line), "{case}: {context}");
    assert!(context.contains("validate --repair"), "{case}: {context}");
    let validate = env.snapshot(&["validate"]);
    let code = if stops {
        "exit status: 6"
    } else {
        "exit status: 8"
    };
    assert!(validate.starts_with(code), "{case}: {validate}");
    assert!(validate.contains(&line), "{case}: {validate}");
    assert!(
        validate.contains("checkpoint validate --repair"),
        "{case}: {validate}"
    );
    let before = env.state("w");
    let repair = env.snapshot(&["validate", "--repair"]);
    assert!(repair.starts_with("exit status: 0"), "{case}: {repair}");
    // The bad lines, byte for byte, in the side file; every other line still in the journal.
    let side = kept(env, "journal.jsonl.unreadable-");
    assert_eq!(side.len(), 1, "{case}");
    let moved: Vec<u8> = bad.iter().flat_map(|&i| written[i].clone()).collect();
    assert_eq!(side[0], moved, "{case}");
    let after = lines(env);
    for (index, line) in written.iter().enumerate() {
        if !bad.contains(&index) {
            assert!(after.contains(line), "{case}: line {} lost", index + 1);
        }
    }
    env.ok(&["validate"]);
    env.ok(&["log"]);
    let state = env.state("w");
    for field in ["phases", "context", "status"] {
        assert_eq!(state[field], before[field], "{case}: {field}");
    }
    // Nothing left to see, and the workflow goes on.
    let status = env.snapshot(&["status"]);
    assert!(!status.contains("cannot be read"), "{case}: {status}");
    env.ok(&["note", "after the repair"]);
    env.ok(&["validate"]);
}

#[test]
fn a_bad_line_anywhere_is_seen_named_and_repaired() {
    // Lines: 1 init, 2 start a, 3.. notes (9 lines in all).
    let cases: &[(&str, &[usize], &str)] = &[
        ("first", &[0], "garbage"),
        ("second", &[1], "cut"),
        ("middle", &[4], "garbage"),
        ("before the last", &[7], "cut"),
        ("last", &[8], "garbage"),
        ("several", &[2, 3, 6], "garbage"),
        ("invalid UTF-8", &[5], "utf8"),
        ("an unknown kind", &[5], "unknown"),
    ];
    for &(case, bad, kind) in cases {
        let env = with_notes(7);
        let written = damage(&env, bad, kind);
        seen_and_repaired(&env, &written, bad, case);
    }
}

#[test]
fn an_entry_of_an_unknown_kind_is_kept_whole_and_the_state_keeps_what_it_did() {
    let env = with_notes(3);
    let written = damage(&env, &[3], "unknown");
    env.ok(&["validate", "--repair"]);
    let side = kept(&env, "journal.jsonl.unreadable-");
    assert_eq!(side, [written[3].clone()]);
    assert!(String::from_utf8_lossy(&side[0]).contains("from_the_future"));
    // Its number is kept by a placeholder: the entries after it keep theirs.
    let seqs: Vec<u64> = lines(&env)
        .iter()
        .map(|line| {
            serde_json::from_slice::<serde_json::Value>(line).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs[..5], [1, 2, 3, 4, 5], "{seqs:?}");
}

#[test]
fn a_bad_line_early_in_a_long_journal_is_seen_and_later_ones_too() {
    let env = with_notes(1);
    // A journal of some 20,000 entries (megabytes), written as `checkpoint` writes them.
    let mut all = lines(&env);
    let template = String::from_utf8(all.last().unwrap().clone()).unwrap();
    for seq in 4..20_000u64 {
        all.push(
            template
                .replacen("\"seq\":3,", &format!("\"seq\":{seq},"), 1)
                .replace("note 0", &format!("note {seq}"))
                .into_bytes(),
        );
    }
    fs::write(journal_path(&env), all.concat()).unwrap();
    env.ok(&["note", "the state written"]);
    assert!(fs::metadata(journal_path(&env)).unwrap().len() > 1_000_000);
    let status = env.snapshot(&["status"]);
    assert!(!status.contains("cannot be read"), "{status}");
    // Line 10, megabytes before the end, damaged in place.
    let written = damage(&env, &[9], "garbage");
    let status = env.snapshot(&["status"]);
    assert!(status.contains("line 10 of"), "{status}");
    let resume = env.snapshot(&["resume", "--dry-run"]);
    assert!(resume.contains("line 10 of"), "{resume}");
    let repair = env.snapshot(&["validate", "--repair"]);
    assert!(repair.starts_with("exit status: 0"), "{repair}");
    env.ok(&["validate"]);
    assert_eq!(
        kept(&env, "journal.jsonl.unreadable-"),
        [written[9].clone()]
    );
    // A bad line written where the journal was checked before is seen too.
    env.ok(&["status"]);
    let mut now = lines(&env);
    let last = now.len() - 1;
    now.insert(last, b"{\"broken\n".to_vec());
    fs::write(journal_path(&env), now.concat()).unwrap();
    let status = env.snapshot(&["status"]);
    assert!(
        status.contains(&format!("line {} of", last + 1)),
        "{status}"
    );
}

/// An entry that no longer applies once a line before it is gone moves too, and its placeholder
/// holds the state before it, even when the refused entry had begun to change it (a phase start
/// lifts the pause before it is refused: the placeholder keeps the pause).
#[test]
fn an_entry_refused_after_a_lost_line_moves_and_its_placeholder_holds_the_state_before_it() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a", "--phase", "b:a"]);
    env.ok(&["start", "a"]);
    env.ok(&["complete", "a"]);
    env.ok(&["pause", "--reason", "lunch"]);
    // Lines: 1 init, 2 start a, 3 complete a, 4 pause, 5 unpause, 6 start b.
    env.ok(&["start", "b"]);
    let before = env.state("w");
    // Without `complete a`, `start b` is refused; without the `unpause`, it lifts the pause.
    let written = damage(&env, &[2, 4], "garbage");
    let repair = env.snapshot(&["validate", "--repair"]);
    assert!(repair.starts_with("exit status: 0"), "{repair}");
    assert!(repair.contains("line 3, 5, 6"), "{repair}");
    let side = kept(&env, "journal.jsonl.unreadable-");
    assert_eq!(side, [[&written[2][..], &written[4], &written[5]].concat()]);
    let entries: Vec<serde_json::Value> = lines(&env)
        .iter()
        .map(|line| serde_json::from_slice(line).unwrap())
        .collect();
    let seqs: Vec<u64> = entries.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5, 6, 7]);
    let held = &entries[5]["transition"];
    assert_eq!(held["op"], "snapshot", "{held}");
    assert_eq!(held["workflow"]["pause"]["reason"], "lunch", "{held}");
    assert_eq!(held["workflow"]["phases"][0]["status"], "in_progress");
    assert_eq!(held["workflow"]["phases"][1]["status"], "pending");
    env.ok(&["validate"]);
    let state = env.state("w");
    for field in ["phases", "context", "status"] {
        assert_eq!(state[field], before[field], "{field}");
    }
}
