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
    let _ = fs::metadata(empty.store());
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
