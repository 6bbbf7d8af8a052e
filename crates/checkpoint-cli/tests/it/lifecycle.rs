//! Lifecycle and history: archives and retention, time travel, git checkpoints, replans.

use std::fs;

use insta::assert_snapshot;
use serde_json::Value;

use crate::support::{TestEnv, git, repo};

fn six_phases(env: &TestEnv) {
    env.ok(&[
        "init", "pipe", "--phase", "p1", "--phase", "p2:p1", "--phase", "p3:p2", "--phase",
        "p4:p3", "--phase", "p5:p4", "--phase", "p6:p5",
    ]);
}

fn finish(env: &TestEnv, phase: &str) {
    fs::write(env.project().join(format!("{phase}.txt")), phase).unwrap();
    env.ok(&["start", phase]);
    env.ok(&["complete", phase, "--artifact", &format!("{phase}.txt")]);
}

#[test]
fn commit_every_three_phases() {
    let env = repo();
    fs::create_dir_all(env.store()).unwrap();
    fs::write(env.store().join("config.toml"), "commit_every = 3\n").unwrap();
    six_phases(&env);
    finish(&env, "p1");
    finish(&env, "p2");
    assert_eq!(
        git(&env.project(), &["rev-list", "--count", "HEAD"]).trim(),
        "1",
        "no commit before the third phase"
    );
    finish(&env, "p3");
    let head = git(&env.project(), &["rev-parse", "HEAD"])
        .trim()
        .to_owned();
    let message = git(&env.project(), &["log", "-1", "--format=%B"]);
    assert_snapshot!(message.trim_end(), @r"
    checkpoint: phases 1-3 complete

    Workflow: pipe

    Completed:
    - Phase 1: p1
    - Phase 2: p2
    - Phase 3: p3

    Remaining: 3 phases
    ");
    let state = env.state("pipe");
    for i in 0..3 {
        assert_eq!(state["phases"][i]["commit_sha"], head.as_str());
    }
    let files = git(
        &env.project(),
        &["show", "--name-only", "--format=", "HEAD"],
    );
    // The work is committed, the store never (it is shared with `push` and `pull`).
    assert!(files.contains("p3.txt"), "{files}");
    assert!(!files.contains(".claude/checkpoints"), "{files}");
    finish(&env, "p4");
    finish(&env, "p5");
    finish(&env, "p6");
    assert_eq!(
        git(&env.project(), &["rev-list", "--count", "HEAD"]).trim(),
        "3",
        "a new commit each time, never an amend"
    );
    assert!(
        git(&env.project(), &["log", "-1", "--format=%s"])
            .starts_with("checkpoint: phases 4-6 complete")
    );
}

#[test]
fn commit_flag_and_nothing_to_commit() {
    let env = repo();
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&["start", "a"]);
    fs::write(env.project().join("a.txt"), "a\n").unwrap();
    let output = env.run(&["complete", "a", "--commit"]);
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("committed"));
    assert_eq!(
        git(&env.project(), &["log", "-1", "--format=%s"]).trim(),
        "checkpoint: phase 1 complete"
    );
    assert_eq!(env.ok(&["commit"]), "", "every phase is already committed");

    // With no change but the store's (never committed), there is nothing to commit.
    let env = repo();
    fs::write(env.project().join(".gitignore"), ".claude/\n").unwrap();
    git(&env.project(), &["add", ".gitignore"]);
    git(&env.project(), &["commit", "-qm", "ignore"]);
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&["start", "a"]);
    let output = env.run(&["complete", "a", "--commit"]);
    assert!(output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("nothing to commit"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(env.state("w")["phases"][0]["commit_sha"].is_null());
    assert_eq!(
        git(&env.project(), &["rev-list", "--count", "HEAD"]).trim(),
        "2"
    );
}

#[test]
fn the_document_of_a_command_that_commits_describes_the_state_after_the_commit() {
    // Both paths that make a checkpoint commit: `complete --commit` and `commit`.
    for commands in [
        &[&["start", "a"][..], &["complete", "a", "--commit"]][..],
        &[&["start", "a"][..], &["complete", "a"], &["commit"]],
    ] {
        let env = repo();
        env.ok(&["init", "w", "--phase", "a", "--phase", "b:a"]);
        let (last, first) = commands.split_last().unwrap();
        for args in first {
            env.ok(args);
        }
        // The phase's work: a checkpoint commit takes the project's files, never the store.
        fs::write(env.project().join("work.txt"), "done\n").unwrap();
        let report = env.json(last);
        let head = git(&env.project(), &["rev-parse", "HEAD"]);
        assert_eq!(report["checkpoint_commit"]["sha"], head.trim(), "{last:?}");
        // The phase in the document holds the commit its second write recorded, as the state
        // does.
        let phase = &report["workflow"]["phases"][0];
        assert_eq!(phase["commit_sha"], head.trim(), "{last:?}: {report}");
        let state = env.state("w");
        assert_eq!(report["workflow"]["seq"], state["seq"], "{last:?}");
        assert_eq!(report["workflow"]["phases"], state["phases"], "{last:?}");
    }
}

#[test]
fn failed_commit_leaves_the_state_consistent() {
    let env = TestEnv::bare();
    git(&env.project(), &["init", "-q", "-b", "main"]);
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&["start", "a"]);
    fs::write(env.project().join("a.txt"), "a\n").unwrap();
    // No identity anywhere: HOME is empty and the repository sets none.
    let output = env
        .cmd()
        .args(["complete", "a", "--commit"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    let rendered = crate::support::render(&env, &output);
    assert_eq!(output.status.code(), Some(1), "{rendered}");
    assert!(
        rendered.contains("failed to make the checkpoint commit"),
        "{rendered}"
    );
    assert!(
        rendered.contains("the phase is recorded as complete"),
        "{rendered}"
    );
    let state = env.state("w");
    assert_eq!(state["phases"][0]["status"], "complete");
    assert!(state["phases"][0]["commit_sha"].is_null());
    env.ok(&["validate"]);
}

#[test]
fn archive_gc_and_restore() {
    let env = TestEnv::new();
    env.ok(&["init", "old", "--kind", "implement", "--phase", "a"]);
    env.ok(&["complete", "a"]);
    assert_eq!(
        env.run(&["init", "busy", "--phase", "a"]).status.code(),
        Some(0)
    );
    let refused = env.snapshot(&["archive", "--workflow", "busy"]);
    assert!(
        refused.contains("workflow `busy` is pending, not finished"),
        "{refused}"
    );
    env.ok(&["archive", "--workflow", "old"]);
    assert!(
        env.store()
            .join(".archive/old_20260301_120000/state.json")
            .exists()
    );
    // Failed workflows go to `failed/`.
    env.ok(&["init", "broken", "--phase", "a"]);
    env.ok(&["start", "a", "--workflow", "broken"]);
    env.ok(&["fail", "a", "--reason", "x", "--workflow", "broken"]);
    env.ok(&["archive", "--workflow", "broken"]);
    assert!(env.store().join("failed/broken_20260301_120000").is_dir());
    // An unfinished workflow archived by `resume --fresh` is never collected.
    env.ok(&["resume", "busy", "--fresh"]);

    env.set_now("2026-03-10T12:00:00Z");
    let dry = env.json(&["gc", "--dry-run"]);
    let names: Vec<&str> = dry["deleted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["archive"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["old_20260301_120000"]);
    assert!(
        env.store().join(".archive/old_20260301_120000").exists(),
        "a dry run deletes nothing"
    );
    env.ok(&["gc"]);
    assert!(!env.store().join(".archive/old_20260301_120000").exists());
    assert!(
        env.store().join("failed/broken_20260301_120000").exists(),
        "failed archives are kept 30 days"
    );
    assert!(
        env.store().join(".archive/busy_20260301_120000").exists(),
        "unfinished workflows are never collected"
    );
    env.set_now("2026-04-10T12:00:00Z");
    env.ok(&["gc"]);
    assert!(!env.store().join("failed/broken_20260301_120000").exists());

    env.ok(&["abandon", "--workflow", "busy"]);
    env.ok(&["archive", "--workflow", "busy"]);
    let restored = env.json(&["restore", "busy_20260410_120000"]);
    assert_eq!(restored["workflow"], "busy");
    assert_eq!(env.state("busy")["status"], "abandoned");
}

#[test]
fn gc_keeps_the_newest_per_kind() {
    let env = TestEnv::new();
    for day in 1..=7 {
        env.set_now(&format!("2026-03-0{day}T12:00:00Z"));
        env.ok(&[
            "init",
            &format!("run{day}"),
            "--kind",
            "orchestrate",
            "--phase",
            "a",
        ]);
        env.ok(&["complete", "a", "--workflow", &format!("run{day}")]);
        env.ok(&["archive", "--workflow", &format!("run{day}")]);
    }
    let report = env.json(&["gc", "--dry-run"]);
    let names: Vec<&str> = report["deleted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["archive"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["run2_20260302_120000", "run1_20260301_120000"]);
    assert_eq!(report["kept"], 5);
}

#[test]
fn log_diff_rewind_and_fork() {
    let env = TestEnv::new();
    env.ok(&[
        "init", "w", "--phase", "a", "--phase", "b:a", "--phase", "c:b",
    ]);
    env.ok(&["start", "a"]);
    env.ok(&["complete", "a", "--artifact", "a.md"]);
    env.ok(&["start", "b"]);
    env.ok(&["progress", "b", "halfway"]);
    env.ok(&["decide", "use sqlite"]);
    assert_snapshot!(env.ok(&["log"]), @r"
        1  2026-03-01 12:00:00  init            3 phases
        2  2026-03-01 12:00:00  phase_start     a
        3  2026-03-01 12:00:00  phase_complete  a (a.md)
        4  2026-03-01 12:00:00  phase_start     b
        5  2026-03-01 12:00:00  phase_progress  b: halfway
        6  2026-03-01 12:00:00  decide          use sqlite
    ");
    assert_eq!(
        env.json(&["log", "-n", "2"])["entries"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_snapshot!(env.ok(&["diff", "1", "6"]), @r"
    changes from entry 1 to entry 6:
      workflow  status: pending → in_progress
      phase     a status: pending → complete
      phase     a attempts: 0 → 1
      artifact  a: a.md: — → recorded
      phase     b status: pending → in_progress
      phase     b progress: — → halfway
      phase     b attempts: 0 → 1
      decision  use sqlite: — → added
      file      a.md: — → added
    ");
    env.ok(&["rewind", "b"]);
    let state = env.state("w");
    assert_eq!(
        state["phases"][1]["status"], "pending",
        "redo b from where it last started"
    );
    assert_eq!(state["phases"][0]["status"], "complete");
    assert_eq!(state["seq"], 7, "the rewind is a new transition");
    assert_eq!(
        env.read("w", "journal.jsonl").lines().count(),
        7,
        "history is kept"
    );
    env.ok(&["rewind", "1"]);
    assert_eq!(env.state("w")["phases"][0]["status"], "pending");
    env.ok(&["validate"]);
    env.ok(&["fork", "5", "--as", "w2", "--workflow", "w"]);
    let fork = env.state("w2");
    assert_eq!(fork["phases"][1]["progress"], "halfway");
    assert_eq!(fork["extensions"]["forked_from"]["seq"], 5);
    // An entry that does not exist is not found (4), like every missing thing.
    assert_eq!(
        env.run(&["rewind", "99", "--workflow", "w"]).status.code(),
        Some(4)
    );
}

#[test]
fn graph_as_mermaid_and_dot() {
    let env = TestEnv::new();
    env.ok(&[
        "init",
        "w",
        "--phase",
        "design",
        "--phase",
        "build:design",
        "--phase",
        "docs:design",
    ]);
    env.ok(&["start", "design"]);
    env.ok(&["complete", "design"]);
    env.ok(&["start", "build"]);
    assert_snapshot!(env.ok(&["graph", "--format", "mermaid"]), @r#"
    flowchart TD
        design["design (complete)"]:::done
        build["build (in progress)"]:::active
        docs["docs (pending)"]:::pending
        design --> build
        design --> docs
        classDef done fill:#d4edda,stroke:#28a745
        classDef active fill:#cce5ff,stroke:#007bff
        classDef waiting fill:#fff3cd,stroke:#ffc107
        classDef failed fill:#f8d7da,stroke:#dc3545
        classDef pending fill:#f8f9fa,stroke:#6c757d
    "#);
    let dot = env.ok(&["graph", "--format", "dot"]);
    assert!(dot.starts_with("digraph \"w\" {"), "{dot}");
    assert!(dot.contains("\"design\" -> \"build\";"), "{dot}");
    let json: Value = env.json(&["graph"]);
    assert_eq!(json["edges"][0], serde_json::json!(["design", "build"]));
}

#[test]
fn replans_are_logged_and_limited() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    for i in 1..=3 {
        let out = env.ok(&[
            "replan",
            "a",
            "--reason",
            &format!("complexity exceeded {i}"),
        ]);
        assert_eq!(out.contains("over the limit"), i == 3, "{out}");
    }
    let state = env.state("w");
    assert_eq!(state["replans"].as_array().unwrap().len(), 3);
    assert_eq!(state["phases"][0]["replan_count"], 3);
    let plan = env.json(&["resume", "--dry-run"]);
    assert_eq!(plan["plan"]["next"]["action"], "decide");
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
    assert!(output.contains("not_an_archive"), "{output}");
    assert!(
        output.contains("forged") && output.contains("replay"),
        "names the directory and why: {output}"
    );
    assert!(forged.join("state.json").exists(), "never moved");
    assert!(!env.workflow_dir("w").exists());

    // A directory that is not an archive at all: the same code and exit as one whose journal
    // does not replay, never a hint to `init` it.
    for dir in ["/etc", env.project().to_str().unwrap()] {
        let output = env.snapshot(&["restore", dir]);
        assert!(output.starts_with("exit status: 2"), "{output}");
        assert!(output.contains("not_an_archive"), "{output}");
        assert!(!output.contains("checkpoint init"), "{output}");
    }
    // A name nothing has: not found, with its own code.
    let output = env.snapshot(&["restore", "nosuch"]);
    assert!(output.starts_with("exit status: 4"), "{output}");
    assert!(output.contains("archive::not_found"), "{output}");

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
