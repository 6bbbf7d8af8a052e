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

#[test]
fn the_store_is_never_committed_and_never_in_git_status() {
    let env = repo();
    let project = env.project();
    workflow(&env, "w", "2026-03-01T09:00:00Z");
    env.ok(&["start", "design"]);
    // The store's private files, as crashes and repairs leave them.
    let dir = env.workflow_dir("w");
    std::fs::write(dir.join("state.json.corrupt-2026"), "{").unwrap();
    std::fs::write(dir.join("journal.jsonl.torn-2026"), "{").unwrap();
    std::fs::write(dir.join(".state.json.tmp-1"), "{").unwrap();
    env.ok(&["use", "w"]);
    std::fs::write(project.join("work.txt"), "done\n").unwrap();
    env.ok(&["complete", "design", "--commit"]);
    let committed = git(&project, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(committed.trim(), "work.txt");
    let status = git(
        &project,
        &["status", "--porcelain", "--untracked-files=all"],
    );
    assert_eq!(status, "", "nothing of the store shows");
    assert!(
        std::fs::read_to_string(env.store().join(".gitignore"))
            .unwrap()
            .lines()
            .any(|line| line == "*")
    );
    // A copy committed before the store ignored itself is never committed again.
    git(&project, &["add", "-f", ".claude/checkpoints/w/state.json"]);
    git(&project, &["commit", "-q", "-m", "an old habit"]);
    std::fs::write(project.join("more.txt"), "more\n").unwrap();
    env.ok(&["complete", "build", "--commit"]);
    let committed = git(&project, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(committed.trim(), "more.txt");
    // A store elsewhere in the project (`--dir`) ignores itself too.
    env.ok(&["--dir", "elsewhere", "init", "x", "--phase", "a"]);
    let status = git(
        &project,
        &["status", "--porcelain", "--untracked-files=all"],
    );
    assert!(!status.contains("elsewhere"), "{status}");
    // A user's own ignore file in the store is left as it is.
    std::fs::write(project.join("elsewhere/.gitignore"), "lock\n").unwrap();
    env.ok(&["--dir", "elsewhere", "start", "a"]);
    assert_eq!(
        std::fs::read_to_string(project.join("elsewhere/.gitignore")).unwrap(),
        "lock\n"
    );
}

#[test]
fn typos_get_the_closest_phase_task_workflow_and_effect() {
    let env = TestEnv::new();
    workflow(&env, "payments", "2026-03-01T09:00:00Z");
    let cases: [(&[&str], &str); 5] = [
        (&["start", "desgin"], "did you mean `design`?"),
        (&["complete", "biuld"], "did you mean `build`?"),
        (&["status", "-w", "paymnets"], "did you mean `payments`?"),
        (
            &["task", "start", "design", "tsk-1"],
            "did you mean `task-1`?",
        ),
        (&["effects", "allow", "122"], "did you mean `12`?"),
    ];
    env.ok(&["task", "add", "design", "task-1"]);
    env.ok(&["task", "add", "design", "review-notes"]);
    for n in 1..=12 {
        env.ok(&["effect", "design", &format!("sent mail {n}")]);
    }
    for (args, wanted) in cases {
        let output = env.run(args);
        assert!(!output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(wanted), "{args:?}: {stderr}");
    }
    // A name close to nothing gets no guess, only the list.
    let stderr =
        String::from_utf8_lossy(&env.run(&["start", "deploy-to-production"]).stderr).into_owned();
    assert!(!stderr.contains("did you mean"), "{stderr}");
    assert!(stderr.contains("phases are: `design`, `build`"), "{stderr}");
}

#[test]
fn waiting_on_a_lock_names_its_holder_and_what_to_do_when_it_is_gone() {
    let env = TestEnv::new();
    workflow(&env, "w", "2026-03-01T09:00:00Z");
    // Any write leaves its holder line in the lock file.
    env.ok(&["note", "first"]);
    let line = std::fs::read_to_string(env.workflow_dir("w").join("lock")).unwrap();
    assert!(line.starts_with(&format!("pid ")), "{line}");
    assert!(line.contains("(`checkpoint note`)"), "{line}");
    assert!(line.contains("since 2026-03-01T09:00:00Z"), "{line}");
    // Held by another process: the waiting one names it, and times out naming it too.
    let lock_path = env.workflow_dir("w").join("lock");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&lock_path)
        .unwrap();
    file.lock().unwrap();
    std::fs::write(
        &lock_path,
        "pid 4242 (`checkpoint run`) since 2026-03-01T08:00:00Z\n",
    )
    .unwrap();
    let output = env
        .cmd()
        .args(["note", "second"])
        .env("CHECKPOINT_LOCK_TIMEOUT", "0.2")
        .output()
        .unwrap();
    file.unlock().unwrap();
    assert_eq!(output.status.code(), Some(5));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("held by pid 4242 (`checkpoint run`) since 2026-03-01T08:00:00Z"),
        "{stderr}"
    );
    assert!(stderr.contains("if that process is gone"), "{stderr}");
    assert!(stderr.contains("fuser"), "{stderr}");
}

#[test]
fn init_outside_a_git_repository_says_where_the_store_goes_and_why() {
    let env = TestEnv::bare();
    let output = env.run(&["init", "w", "--phase", "a"]);
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not inside a git repository"), "{stderr}");
    assert!(stderr.contains(".claude/checkpoints"), "{stderr}");
    assert!(stderr.contains("git init"), "{stderr}");
    // Inside a repository, nothing to say.
    let env = TestEnv::new();
    let output = env.run(&["init", "w", "--phase", "a"]);
    assert!(!String::from_utf8_lossy(&output.stderr).contains("git repository"));
    // A subdirectory of a repository: the store is at the top level, also without a word.
    std::fs::create_dir_all(env.project().join("sub")).unwrap();
    let output = env
        .cmd()
        .current_dir(env.project().join("sub"))
        .args(["init", "v", "--phase", "a"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(!String::from_utf8_lossy(&output.stderr).contains("git repository"));
    assert!(env.workflow_dir("v").join("state.json").exists());
}
