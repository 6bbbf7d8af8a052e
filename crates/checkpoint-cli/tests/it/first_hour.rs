//! The first hour: which workflow a command means (`checkpoint use`, and only unfinished
//! workflows making a choice ambiguous), the store kept out of git, "did you mean", a lock's
//! holder named, `init` outside a repository.

use crate::support::{TestEnv, git, repo, session_start_context};

/// A workflow `id` with phases `design` and `build`, created at `now`.
fn workflow(env: &TestEnv, id: &str, now: &str) {
    env.set_now(now);
    env.ok(&["init", id, "--phase", "design", "--phase", "build:design"]);
}

#[test]
fn finished_workflows_never_make_the_choice_ambiguous() {
    let env = TestEnv::new();
    workflow(&env, "old", "2026-03-01T09:00:00Z");
    workflow(&env, "newer", "2026-03-01T10:00:00Z");
    env.ok(&["abandon", "-w", "old", "--reason", "superseded"]);
    env.set_now("2026-03-01T11:00:00Z");
    for phase in ["design", "build"] {
        env.ok(&["complete", phase, "-w", "newer"]);
    }
    // None unfinished: the most recently active one, said to be finished.
    env.set_now("2026-03-01T12:00:00Z");
    let output = env.run(&["status"]);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stdout.starts_with("newer"), "{stdout}");
    assert!(stdout.contains("complete"), "{stdout}");
    assert!(
        stderr.contains("no workflow is unfinished: `newer`"),
        "{stderr}"
    );
    // The same rule for every command: `log` and `resume` mean it too.
    assert!(
        env.ok(&["log"]).contains("newer") || env.json(&["log"]).to_string().contains("complete")
    );
    // One unfinished among finished ones is meant, however old it is.
    workflow(&env, "ancient", "2026-01-01T00:00:00Z");
    env.set_now("2026-03-01T12:00:00Z");
    assert!(env.ok(&["status"]).starts_with("ancient"));
    assert_eq!(env.json(&["status"])["workflow"]["id"], "ancient");
    // Two unfinished are ambiguous: only those are listed, most recent first.
    workflow(&env, "fresh", "2026-02-01T00:00:00Z");
    env.set_now("2026-03-01T12:00:00Z");
    let output = env.run(&["status"]);
    assert_eq!(output.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("2 workflows are unfinished"), "{stderr}");
    assert!(stderr.contains("`fresh`, `ancient`"), "{stderr}");
    assert!(
        !stderr.contains("`old`") && !stderr.contains("`newer`"),
        "{stderr}"
    );
}

#[test]
fn use_chooses_the_workflow_every_command_and_hook_means_until_none() {
    let env = repo();
    workflow(&env, "main-line", "2026-03-01T09:00:00Z");
    env.ok(&["fork", "1", "--as", "experiment"]);
    env.set_now("2026-03-01T12:00:00Z");
    assert_eq!(env.run(&["status"]).status.code(), Some(4));
    // The older one, chosen: every command means it.
    let said = env.ok(&["use", "main-line"]);
    assert!(said.contains("`main-line`"), "{said}");
    assert!(env.ok(&["status"]).starts_with("main-line"));
    assert!(env.ok(&["status"]).contains("used in this worktree"));
    env.ok(&["start", "design"]);
    assert_eq!(env.state("main-line")["phases"][0]["status"], "in_progress");
    assert_eq!(env.state("experiment")["phases"][0]["status"], "pending");
    // `--workflow` still wins for one command.
    env.ok(&["note", "-w", "experiment", "tried it"]);
    assert!(env.read("experiment", "journal.jsonl").contains("tried it"));
    // `list` shows it, in text and JSON.
    let list = env.ok(&["list"]);
    let line = list
        .lines()
        .find(|line| line.starts_with("main-line"))
        .unwrap();
    assert!(line.contains("used here"), "{list}");
    let json = env.json(&["list"]);
    let used: Vec<&str> = json["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["used"] == true)
        .map(|entry| entry["id"].as_str().unwrap())
        .collect();
    assert_eq!(used, ["main-line"]);
    // The session-start hook briefs it first, though the other was active more recently.
    env.set_now("2026-03-01T12:30:00Z");
    env.ok(&["note", "-w", "experiment", "more recent"]);
    let context = session_start_context(&env);
    let at_used = context.find("main-line").unwrap();
    let at_other = context.find("experiment").unwrap_or(usize::MAX);
    assert!(at_used < at_other, "{context}");
    // Stored with the store, never committed nor pushed: git does not see it.
    let status = git(
        &env.project(),
        &["status", "--porcelain", "--untracked-files=all"],
    );
    assert!(!status.contains("checkpoints"), "{status}");
    // `use --none`: the rule decides again.
    env.ok(&["use", "--none"]);
    assert_eq!(env.run(&["status"]).status.code(), Some(4));
    // A choice whose workflow went away says how to choose again.
    env.ok(&["use", "experiment"]);
    std::fs::remove_dir_all(env.workflow_dir("experiment")).unwrap();
    let output = env.run(&["status"]);
    assert_eq!(output.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("`checkpoint use --none`"), "{stderr}");
    // A typo is not stored, and gets the closest id.
    let output = env.run(&["use", "main-lien"]);
    assert_eq!(output.status.code(), Some(4));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("did you mean `main-line`?"),
        "{output:?}"
    );
}
