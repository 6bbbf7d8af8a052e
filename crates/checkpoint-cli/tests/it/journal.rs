//! The journal's edge cases: an entry that skips ahead, a foreign or bad line, a torn line the
//! state already holds; what is kept aside and what `resume` reports.

use std::fs;

use crate::support::TestEnv;

/// A workflow `w` at entry 3 (`init`, `start a`, a note), its journal and its state agreeing.
fn at_entry_three() -> TestEnv {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a", "--phase", "b:a"]);
    env.ok(&["start", "a"]);
    env.ok(&["note", "hello"]);
    assert_eq!(env.state("w")["seq"], 3);
    env
}

fn append(env: &TestEnv, text: &str) {
    let path = env.workflow_dir("w").join("journal.jsonl");
    let mut journal = fs::read_to_string(&path).unwrap();
    journal.push_str(text);
    fs::write(&path, journal).unwrap();
}

/// The files of the workflow's directory whose name starts with `prefix`.
fn kept_aside(env: &TestEnv, prefix: &str) -> Vec<String> {
    fs::read_dir(env.workflow_dir("w"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(prefix))
        .collect()
}

fn seqs(env: &TestEnv) -> Vec<u64> {
    env.read("w", "journal.jsonl")
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

#[test]
fn an_entry_that_skips_ahead_is_never_replayed_nor_extended() {
    let env = at_entry_three();
    let last = env
        .read("w", "journal.jsonl")
        .lines()
        .last()
        .unwrap()
        .to_owned();
    append(
        &env,
        &format!("{}\n", last.replacen("\"seq\":3", "\"seq\":999", 1)),
    );
    let reason = "sequence number 999 follows 3";
    // Every path says the same thing about it.
    let status = env.snapshot(&["status"]);
    assert!(status.starts_with("exit status: 0"), "{status}");
    assert!(status.contains(reason), "{status}");
    assert_eq!(env.json(&["show"])["seq"], 3, "never replayed");
    let validate = env.snapshot(&["validate"]);
    assert!(validate.starts_with("exit status: 8"), "{validate}");
    assert!(validate.contains(reason), "{validate}");
    let log = env.snapshot(&["log"]);
    assert!(log.starts_with("exit status: 6"), "{log}");
    assert!(log.contains(reason), "{log}");
    // The next write sets the entry aside and goes on from entry 3: never 1000.
    let progress = env.snapshot(&["progress", "a", "more"]);
    assert!(progress.starts_with("exit status: 0"), "{progress}");
    assert!(progress.contains(reason), "{progress}");
    assert_eq!(seqs(&env), [1, 2, 3, 4]);
    let kept = kept_aside(&env, "journal.jsonl.foreign-");
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(env.read("w", &kept[0]).contains("\"seq\":999"));
    env.ok(&["log"]);
    env.ok(&["validate"]);
}

#[test]
fn a_foreign_last_line_beside_a_current_state_is_a_warning_and_a_finding() {
    let env = at_entry_three();
    append(&env, "{\"foo\":1}\n");
    let status = env.snapshot(&["status"]);
    assert!(status.starts_with("exit status: 0"), "{status}");
    assert!(status.contains("line 4"), "{status}");
    let validate = env.snapshot(&["--format", "json", "validate"]);
    assert!(validate.starts_with("exit status: 8"), "{validate}");
    assert!(validate.contains("journal.foreign"), "{validate}");
    // The finding says how to repair it without losing the history.
    assert!(validate.contains("checkpoint resume"), "{validate}");
    let log = env.snapshot(&["log"]);
    assert!(log.starts_with("exit status: 6"), "{log}");
    assert!(!log.contains("in the middle"), "{log}");
    assert!(log.contains("checkpoint resume"), "{log}");
    // The repair: `resume` moves the line aside, keeping it, and the whole history reads again.
    let resume = env.snapshot(&["resume"]);
    assert!(resume.starts_with("exit status: 0"), "{resume}");
    let kept = kept_aside(&env, "journal.jsonl.foreign-");
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(env.read("w", &kept[0]), "{\"foo\":1}\n");
    let log = env.ok(&["log"]);
    assert!(log.contains("hello"), "{log}");
    env.ok(&["validate"]);
}

#[test]
fn a_bad_line_in_the_middle_is_reported_by_resume_too() {
    let env = at_entry_three();
    let path = env.workflow_dir("w").join("journal.jsonl");
    let journal = fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = journal.lines().collect();
    lines[1] = "garbage";
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    for args in [&["resume", "--dry-run"][..], &["resume"]] {
        let output = env.snapshot(args);
        assert!(output.starts_with("exit status: 0"), "{output}");
        assert!(
            output.contains("journal.unreadable") || output.contains("line 2"),
            "{args:?}: {output}"
        );
    }
    let report = env.json(&["resume", "--dry-run"]);
    let findings = report["plan"]["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .any(|finding| finding["code"] == "journal.unreadable"
                && finding["message"].as_str().unwrap().contains("line 2")),
        "{findings:?}"
    );
}

#[test]
fn a_torn_line_the_state_already_holds_is_not_to_be_repeated() {
    let env = at_entry_three();
    let path = env.workflow_dir("w").join("journal.jsonl");
    let journal = fs::read_to_string(&path).unwrap();
    // The journal lost the end of its last line, which the state holds.
    fs::write(&path, &journal[..journal.len() - 10]).unwrap();
    let output = env.snapshot(&["validate"]);
    assert!(
        output.contains("journal.torn") || output.contains("torn"),
        "{output}"
    );
    assert!(!output.contains("repeat it"), "{output}");
    assert!(output.contains("the state holds"), "{output}");
    // A torn line the state does not hold is the interrupted change: repeat it if it matters.
    let env = at_entry_three();
    append(
        &env,
        "{\"seq\":4,\"at\":\"2026-03-01T12:00:00Z\",\"transition\":{\"op\":\"no",
    );
    let output = env.snapshot(&["validate"]);
    assert!(output.contains("repeat it if it matters"), "{output}");
}
