//! Trust under hostile input, the rest of issue 15: the journal's edge cases, `resume
//! --restart` of a phase with finished dependants, outputs and artifacts kept inside the
//! project, `restore` of what is an archive only, and the hints that were wrong.

use std::fs;

use crate::support::TestEnv;

/// A finished workflow `w`: `a`, then `b` after `a`, then `c` after `b`, and `d` on its own.
fn finished_chain() -> TestEnv {
    let env = TestEnv::new();
    env.ok(&[
        "init", "w", "--phase", "a", "--phase", "b:a", "--phase", "c:b", "--phase", "d",
    ]);
    for phase in ["a", "b", "c", "d"] {
        env.ok(&["start", phase]);
        env.ok(&["complete", phase]);
    }
    env
}

#[test]
fn restarting_a_phase_sends_its_finished_dependants_back_to_pending() {
    let env = finished_chain();
    let output = env.snapshot(&["resume", "--restart", "a"]);
    assert!(output.starts_with("exit status: 0"), "{output}");
    assert!(!output.contains("nothing to resume"), "{output}");
    // The output names the dependants it sent back.
    assert!(
        output.contains("`b`") && output.contains("`c`") && output.contains("back to pending"),
        "{output}"
    );
    let state = env.state("w");
    let status = |id: &str| {
        state["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|phase| phase["id"] == id)
            .unwrap()["status"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(status("a"), "in_progress");
    assert_eq!(status("b"), "pending");
    assert_eq!(status("c"), "pending");
    // A phase that does not depend on `a` keeps its work.
    assert_eq!(status("d"), "complete");
    // Journaled: one reset per dependant, before the restart.
    let journal = env.read("w", "journal.jsonl");
    let ops: Vec<String> = journal
        .lines()
        .map(|line| {
            let entry: serde_json::Value = serde_json::from_str(line).unwrap();
            format!(
                "{} {}",
                entry["transition"]["op"].as_str().unwrap(),
                entry["transition"]["phase"].as_str().unwrap_or("")
            )
        })
        .collect();
    let tail = &ops[ops.len() - 4..];
    assert_eq!(
        tail,
        [
            "phase_reset b",
            "phase_reset c",
            "phase_start a",
            "heartbeat "
        ],
        "{ops:?}"
    );
    // Never a state that `validate` rejects.
    env.ok(&["validate"]);
    // The JSON document lists them too.
    let env = finished_chain();
    let report = env.json(&["resume", "--restart", "b"]);
    assert_eq!(report["reset"], serde_json::json!(["c"]));
    assert_eq!(report["applied"], true);
}

#[test]
fn resume_restart_without_an_interrupted_workflow_acts_on_the_one_named_or_the_only_one() {
    let env = finished_chain();
    // Named.
    env.ok(&["resume", "w", "--restart", "d"]);
    assert_eq!(env.state("w")["phases"][3]["status"], "in_progress");
    env.ok(&["complete", "d"]);
    // The only one, unnamed.
    env.ok(&["resume", "--restart", "d"]);
    assert_eq!(env.state("w")["phases"][3]["status"], "in_progress");
    env.ok(&["complete", "d"]);
    // With two finished workflows and no name: ambiguous, exit 4, nothing written.
    env.ok(&["init", "v", "--phase", "x"]);
    env.ok(&["--workflow", "v", "skip", "x"]);
    let journal = env.read("w", "journal.jsonl");
    let output = env.snapshot(&["resume", "--restart", "d"]);
    assert!(output.starts_with("exit status: 4"), "{output}");
    assert!(output.contains("`v`") || output.contains(" v "), "{output}");
    assert!(!output.contains("nothing to resume"), "{output}");
    assert_eq!(env.read("w", "journal.jsonl"), journal);
    // A phase the named workflow lacks: exit 4.
    let output = env.snapshot(&["resume", "w", "--restart", "nosuch"]);
    assert!(output.starts_with("exit status: 4"), "{output}");
    // No workflow at all: exit 4.
    let empty = TestEnv::new();
    let output = empty.snapshot(&["resume", "--restart", "a"]);
    assert!(output.starts_with("exit status: 4"), "{output}");
}

/// The mode bits of a path.
#[cfg(unix)]
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[cfg(unix)]
#[test]
fn restore_takes_only_an_archive_whose_state_is_its_journals_replay() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&["start", "a"]);
    env.ok(&["complete", "a"]);
    let archived = env.json(&["archive"]);
    let archive = std::path::PathBuf::from(archived["archived_to"].as_str().unwrap());

    // A copy whose state was edited: it no longer equals its journal's replay.
    let forged = env.dir.path().join("forged");
    fs::create_dir(&forged).unwrap();
    for file in ["state.json", "journal.jsonl"] {
        fs::copy(archive.join(file), forged.join(file)).unwrap();
    }
    let state = fs::read_to_string(forged.join("state.json")).unwrap();
    fs::write(
        forged.join("state.json"),
        state.replace("\"complete\"", "\"failed\""),
    )
    .unwrap();
    let output = env.snapshot(&["restore", forged.to_str().unwrap()]);
    assert!(output.starts_with("exit status: 2"), "{output}");
    assert!(
        output.contains("forged") && output.contains("replay"),
        "names the directory and why: {output}"
    );
    assert!(forged.join("state.json").exists(), "never moved");
    assert!(!env.workflow_dir("w").exists());

    // A directory that is not an archive at all: never a hint to `init` it.
    for dir in ["/etc", env.project().to_str().unwrap()] {
        let output = env.snapshot(&["restore", dir]);
        assert!(output.starts_with("exit status: 4"), "{output}");
        assert!(!output.contains("checkpoint init"), "{output}");
    }

    // A real archive whose files lost their private modes is restored with the store's own.
    for entry in fs::read_dir(&archive).unwrap() {
        let path = entry.unwrap().path();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    }
    fs::set_permissions(&archive, fs::Permissions::from_mode(0o755)).unwrap();
    env.ok(&["restore", archive.to_str().unwrap()]);
    let dir = env.workflow_dir("w");
    assert_eq!(mode(&dir), 0o700);
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(mode(&path), 0o600, "{}", path.display());
    }
    env.ok(&["validate"]);
}

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

#[cfg(unix)]
#[test]
fn outputs_and_artifacts_outside_the_project_are_refused() {
    let env = TestEnv::new();
    let outside = env.dir.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "not the project's").unwrap();
    std::os::unix::fs::symlink(&outside, env.project().join("escape")).unwrap();
    fs::create_dir(env.project().join("docs")).unwrap();
    let plan = env.dir.path().join("plan.json");
    for output in [
        "/etc/passwd",
        "../outside/secret.txt",
        "docs/../../outside/secret.txt",
        "escape/secret.txt",
        "escape/new.txt",
    ] {
        fs::write(
            &plan,
            serde_json::json!({"phases": [{"id": "a", "outputs": ["a.md", output]}]}).to_string(),
        )
        .unwrap();
        let output_text = env.snapshot(&["init", "w", "--plan", plan.to_str().unwrap()]);
        assert!(
            output_text.starts_with("exit status: 2"),
            "{output}: {output_text}"
        );
        assert!(
            output_text.contains("outside the project") || output_text.contains("`..`"),
            "{output_text}"
        );
        assert!(!env.workflow_dir("w").exists(), "{output}: nothing created");
    }
    // Inside the project, a path through a directory of its own is fine.
    fs::write(
        &plan,
        serde_json::json!({"phases": [{"id": "a", "outputs": ["docs/a.md"]}, {"id": "b", "dependencies": ["a"]}]}).to_string(),
    )
    .unwrap();
    env.ok(&["init", "w", "--plan", plan.to_str().unwrap()]);
    env.ok(&["start", "a"]);
    let journal = env.read("w", "journal.jsonl");
    for artifact in ["/etc/passwd", "../outside/secret.txt", "escape/secret.txt"] {
        let output = env.snapshot(&["complete", "a", "--artifact", artifact]);
        assert!(output.starts_with("exit status: 2"), "{artifact}: {output}");
        assert!(
            output.contains("hint") || output.contains("help"),
            "{output}"
        );
    }
    assert_eq!(env.read("w", "journal.jsonl"), journal, "nothing written");
    fs::write(env.project().join("docs/a.md"), "the design").unwrap();
    env.ok(&["complete", "a", "--artifact", "docs/a.md"]);
}

#[test]
fn an_output_older_than_its_phase_does_not_complete_it() {
    let env = TestEnv::new();
    let plan = env.dir.path().join("plan.json");
    fs::write(
        &plan,
        serde_json::json!({"phases": [{"id": "a", "outputs": ["a.md"]}, {"id": "b", "dependencies": ["a"]}]}).to_string(),
    )
    .unwrap();
    env.ok(&["init", "w", "--plan", plan.to_str().unwrap()]);
    // The file was there long before the phase started (at the fixed clock, 2026-03-01 12:00).
    let file = env.project().join("a.md");
    fs::write(&file, "an old file").unwrap();
    let set_modified = |unix: u64| {
        fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix))
            .unwrap();
    };
    set_modified(1_700_000_000);
    env.ok(&["start", "a"]);
    let completes = || {
        let report = env.json(&["resume", "--dry-run"]);
        report["plan"]["recoveries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|recovery| recovery["code"] == "phase_output_present")
    };
    // Neither resume's output check nor the hook completes the phase.
    assert!(!completes());
    let payload = serde_json::json!({
        "session_id": "11111111-2222-3333-4444-555555555555",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": env.project(),
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": file, "content": "x"},
        "tool_response": {"type": "update"},
    })
    .to_string();
    assert_eq!(env.hook("PostToolUse", &payload).wait().0, 0);
    assert_eq!(env.state("w")["phases"][0]["status"], "in_progress");
    // Written after the phase started (2026-03-01 13:00), it counts, for both.
    set_modified(1_772_370_000);
    assert!(completes());
    assert_eq!(env.hook("PostToolUse", &payload).wait().0, 0);
    assert_eq!(env.state("w")["phases"][0]["status"], "complete");
}

#[test]
fn a_plan_of_many_phases_is_cut_with_counts() {
    let env = TestEnv::new();
    let phases: Vec<serde_json::Value> = (0..300)
        .map(|i| match i {
            0..200 => serde_json::json!({"id": format!("p{i}")}),
            _ => serde_json::json!({"id": format!("p{i}"), "dependencies": ["p0"]}),
        })
        .collect();
    let plan = env.dir.path().join("plan.json");
    fs::write(&plan, serde_json::json!({ "phases": phases }).to_string()).unwrap();
    env.ok(&["init", "w", "--plan", plan.to_str().unwrap()]);
    let output = env.ok(&["resume", "--dry-run"]);
    assert!(output.lines().count() < 130, "{output}");
    assert!(output.contains("… and 150 more ready"), "{output}");
    assert!(output.contains("… and 50 more blocked"), "{output}");
    assert!(output.contains("p12 and 187 more"), "{output}");
    // `status` still lists every phase.
    assert!(env.ok(&["status"]).contains("p299"));
}
