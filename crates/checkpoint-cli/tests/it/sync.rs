//! `checkpoint push`, `pull` and `sync` between clones of one project, through a bare repository
//! and through `git daemon` on 127.0.0.1 (the real network protocol).

use std::{
    fs,
    process::{Command, Output, Stdio},
    thread,
    time::{Duration, Instant},
};

use assert_fs::TempDir;

use crate::support::{
    Remote, SECRET_SAMPLES, TestEnv, git, record_secret_samples, render, silent_remote,
};

/// Runs `checkpoint` and asserts its exit code; returns stdout and stderr rendered.
#[track_caller]
fn exits(env: &TestEnv, args: &[&str], code: i32) -> String {
    let output = env.run(args);
    let rendered = render(env, &output);
    assert_eq!(output.status.code(), Some(code), "{args:?}\n{rendered}");
    rendered
}

fn journal_len(env: &TestEnv, id: &str) -> usize {
    env.read(id, "journal.jsonl").lines().count()
}

fn statuses(env: &TestEnv, id: &str) -> Vec<String> {
    env.json(&["--workflow", id, "status"])["workflow"]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|phase| {
            format!(
                "{} {}",
                phase["id"].as_str().unwrap(),
                phase["status"].as_str().unwrap()
            )
        })
        .collect()
}

/// The laptop starts and pushes; a second clone pulls, completes two phases and pushes; the
/// laptop pulls and sees them.
fn laptop_then_second_machine(remote: &Remote) {
    let laptop = remote.clone();
    laptop.ok(&[
        "init", "demo", "--phase", "a", "--phase", "b", "--phase", "c:a",
    ]);
    laptop.ok(&["start", "a"]);
    let pushed = laptop.ok(&["push"]);
    assert!(pushed.contains("pushed entry 2 to `origin`"), "{pushed}");
    assert_eq!(remote.history("demo"), ["checkpoint: demo at entry 2"]);
    // The ref holds the journal and the state, nothing machine-local.
    let tree = git(
        &remote.git_dir(),
        &["ls-tree", "--name-only", "refs/checkpoints/demo"],
    );
    assert_eq!(tree, "journal.jsonl\nstate.json\n");
    assert!(
        !remote
            .file("demo", "state.json")
            .contains(&laptop.project().display().to_string())
    );
    assert!(
        !remote
            .file("demo", "journal.jsonl")
            .contains(&laptop.project().display().to_string())
    );

    let second = remote.clone();
    let pulled = second.ok(&["pull", "--workflow", "demo"]);
    assert!(
        pulled.contains("`demo`: created from `origin` (2 entries)"),
        "{pulled}"
    );
    // The pushed state is the replay of the pushed journal.
    assert_eq!(
        second.read("demo", "state.json"),
        remote.file("demo", "state.json")
    );
    second.ok(&["complete", "a"]);
    second.ok(&["start", "b"]);
    second.ok(&["complete", "b"]);
    second.ok(&["push"]);
    assert_eq!(
        remote.history("demo").len(),
        2,
        "each push is a new commit on the last"
    );

    let pulled = laptop.ok(&["pull"]);
    assert!(
        pulled.contains("pulled 4 entries from `origin` (now at entry 6)"),
        "{pulled}"
    );
    assert_eq!(
        statuses(&laptop, "demo"),
        ["a complete", "b complete", "c pending"]
    );
    // Each completion journals the snapshot of the files it took.
    assert_eq!(journal_len(&laptop, "demo"), 6);
    exits(&laptop, &["validate"], 0);
    let again = laptop.ok(&["sync"]);
    assert!(
        again.contains("up to date with `origin` (entry 6)"),
        "{again}"
    );
}

#[test]
fn a_second_clone_continues_through_a_bare_repository() {
    laptop_then_second_machine(&Remote::bare());
}

/// A push whose process died after the remote took the ref, before this clone recorded it: the
/// tracking ref is behind (here: at the first push, or gone), and the next push finishes by
/// itself, for a remote that holds a prefix of this copy; one with entries this copy lacks is
/// still refused.
#[test]
fn a_push_that_landed_unrecorded_is_finished_by_the_next_push() {
    let remote = Remote::bare();
    let laptop = remote.clone();
    laptop.ok(&[
        "init", "demo", "--phase", "a", "--phase", "b", "--phase", "c", "--phase", "d",
    ]);
    laptop.ok(&["push"]);
    let tracking = "refs/checkpoint-sync/origin/demo";
    let first = git(&laptop.project(), &["rev-parse", tracking]);
    let remote_len = || remote.file("demo", "journal.jsonl").lines().count();
    for (lost, phase) in [("behind", "a"), ("gone", "b")] {
        laptop.ok(&["start", phase]);
        laptop.ok(&["push"]);
        // The record of that push is lost, as if its process was killed before writing it.
        match lost {
            "behind" => git(&laptop.project(), &["update-ref", tracking, first.trim()]),
            _ => git(&laptop.project(), &["update-ref", "-d", tracking]),
        };
        // Nothing new: the remote already has it all, and keeps it (the push may make the same
        // commit again, which git takes as up to date).
        laptop.ok(&["push"]);
        assert_eq!(remote_len(), journal_len(&laptop, "demo"), "{lost}");
        // Something new: pushed on top of what the remote holds.
        laptop.ok(&["complete", phase]);
        let pushed = laptop.ok(&["push"]);
        assert!(pushed.contains("pushed entry"), "{lost}: {pushed}");
        assert_eq!(remote_len(), journal_len(&laptop, "demo"), "{lost}");
    }
    // A remote with entries this copy lacks still refuses, whatever the tracking ref says.
    let other = remote.clone();
    other.ok(&["pull", "--workflow", "demo"]);
    other.ok(&["start", "c"]);
    other.ok(&["push"]);
    laptop.ok(&["start", "d"]);
    git(&laptop.project(), &["update-ref", "-d", tracking]);
    let refused = exits(&laptop, &["push"], 3);
    assert!(refused.contains("run `checkpoint pull` first"), "{refused}");
}

#[test]
fn a_second_clone_continues_through_git_daemon() {
    laptop_then_second_machine(&Remote::daemon());
}

/// Two clones that both changed the workflow offline after a shared entry 3: the laptop's copy
/// diverged from the remote's.
fn diverged(remote: &Remote, ours: &[&[&str]], theirs: &[&[&str]]) -> (TestEnv, TestEnv) {
    let laptop = remote.clone();
    laptop.ok(&[
        "init", "demo", "--phase", "a", "--phase", "b", "--phase", "c",
    ]);
    laptop.ok(&["start", "a"]);
    laptop.ok(&["note", "shared"]);
    laptop.ok(&["push"]);
    let other = remote.clone();
    other.ok(&["pull", "-w", "demo"]);
    for args in theirs {
        other.ok(args);
    }
    other.ok(&["push"]);
    for args in ours {
        laptop.ok(args);
    }
    (laptop, other)
}

#[test]
fn a_divergence_is_reported_with_its_point_and_changes_nothing() {
    let remote = Remote::bare();
    let (laptop, _) = diverged(
        &remote,
        &[&["complete", "a"], &["start", "b"]],
        &[&["start", "c"]],
    );
    let before = laptop.read("demo", "journal.jsonl");
    let rendered = exits(&laptop, &["pull"], 3);
    assert!(
        rendered.contains("`demo` diverged from `origin` after entry 3: since then we have 3 entries (4 `phase_complete` `a`, 5 `files_snapshot` `a`, 6 `phase_start` `b`), they have 1 entry (4 `phase_start` `c`)"),
        "{rendered}"
    );
    assert!(rendered.contains("`--merge` applies both"), "{rendered}");
    assert_eq!(laptop.read("demo", "journal.jsonl"), before);
    let json = laptop.run(&["--format", "json", "pull"]);
    assert_eq!(json.status.code(), Some(3));
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["workflows"][0]["action"], "diverged");
    assert_eq!(report["workflows"][0]["diverged_at"], 3);
    assert_eq!(report["workflows"][0]["mergeable"], true);
    // A push before the pull is refused too.
    let rendered = exits(&laptop, &["push"], 3);
    assert!(
        rendered.contains("run `checkpoint pull` first"),
        "{rendered}"
    );
}

#[test]
fn keeping_theirs_keeps_ours_as_a_fork() {
    let remote = Remote::bare();
    let (laptop, other) = diverged(
        &remote,
        &[&["complete", "a"], &["start", "b"]],
        &[&["start", "c"]],
    );
    let ours = journal_len(&laptop, "demo");
    let theirs = journal_len(&other, "demo");
    let rendered = laptop.ok(&["pull", "--theirs"]);
    let fork = "demo@local-20260301T120000Z";
    assert!(rendered.contains(&format!("kept theirs after the divergence at entry 3 (now at entry 5); the other side is kept as the workflow `{fork}`")), "{rendered}");
    assert_eq!(journal_len(&laptop, "demo"), theirs + 1);
    assert_eq!(journal_len(&laptop, fork), ours + 1);
    assert_eq!(statuses(&laptop, "demo"), statuses(&other, "demo"));
    assert_eq!(
        statuses(&laptop, fork),
        ["a complete", "b in_progress", "c pending"]
    );
    let last = laptop.json(&["log", "-n", "1"]);
    assert_eq!(last["entries"][0]["transition"]["op"], "sync_resolve");
    assert_eq!(last["entries"][0]["transition"]["keep"], "theirs");
    exits(&laptop, &["validate"], 0);
    exits(&laptop, &["validate", "--workflow", fork], 0);
    // The resolution extends the remote, so it pushes, and the other clone fast-forwards.
    laptop.ok(&["push"]);
    let pulled = other.ok(&["pull"]);
    assert!(pulled.contains("pulled 1 entry"), "{pulled}");
}

#[test]
fn keeping_ours_replays_ours_after_theirs_and_forks_theirs() {
    let remote = Remote::bare();
    let (laptop, other) = diverged(
        &remote,
        &[&["complete", "a"], &["start", "b"]],
        &[&["start", "c"]],
    );
    let theirs = journal_len(&other, "demo");
    let ours_state = statuses(&laptop, "demo");
    laptop.ok(&["pull", "--ours"]);
    let fork = "demo@remote-20260301T120000Z";
    // Theirs, the resolution, then our three entries since the divergence (the completion, the
    // snapshot of the files it took, the start).
    assert_eq!(journal_len(&laptop, "demo"), theirs + 1 + 3);
    assert_eq!(journal_len(&laptop, fork), theirs + 1);
    assert_eq!(statuses(&laptop, "demo"), ours_state);
    assert_eq!(statuses(&laptop, fork), statuses(&other, "demo"));
    exits(&laptop, &["validate"], 0);
    laptop.ok(&["push"]);
    other.ok(&["pull"]);
    assert_eq!(statuses(&other, "demo"), ours_state);
}

#[test]
fn merging_applies_both_sides_when_they_touched_different_phases() {
    let remote = Remote::bare();
    let (laptop, other) = diverged(
        &remote,
        &[&["complete", "a"], &["note", "from the laptop"]],
        &[&["start", "c"], &["note", "from the other clone"]],
    );
    let theirs = journal_len(&other, "demo");
    laptop.ok(&["pull", "--merge"]);
    // Theirs, the resolution, then ours: the completion, its snapshot of the files, the note.
    assert_eq!(journal_len(&laptop, "demo"), theirs + 1 + 3);
    assert_eq!(
        statuses(&laptop, "demo"),
        ["a complete", "b pending", "c in_progress"]
    );
    let notes = laptop.json(&["status"])["workflow"]["context"]["notes"].to_string();
    assert!(
        notes.contains("from the laptop") && notes.contains("from the other clone"),
        "{notes}"
    );
    assert!(!laptop.workflow_dir("demo@local-20260301T120000Z").exists());
    exits(&laptop, &["validate"], 0);
    // `sync` pushes the merge.
    let synced = laptop.ok(&["sync"]);
    assert!(synced.contains("pushed entry 9"), "{synced}");
}

#[test]
fn merging_the_same_phase_is_refused() {
    let remote = Remote::bare();
    let (laptop, _) = diverged(
        &remote,
        &[&["complete", "a"]],
        &[&["fail", "a", "-r", "broken"]],
    );
    let before = laptop.read("demo", "journal.jsonl");
    let rendered = exits(&laptop, &["pull", "--merge"], 3);
    assert!(
        rendered.contains("cannot merge: both sides changed `a`"),
        "{rendered}"
    );
    assert_eq!(laptop.read("demo", "journal.jsonl"), before);
}

#[test]
fn two_clones_racing_to_push_one_wins_and_the_other_is_told_to_pull() {
    let remote = Remote::daemon();
    let (laptop, other) = diverged(&remote, &[], &[]);
    other.ok(&["note", "other"]);
    laptop.ok(&["note", "laptop"]);
    let before = (
        laptop.read("demo", "journal.jsonl"),
        other.read("demo", "journal.jsonl"),
    );
    let spawn = |env: &TestEnv| {
        env.cmd()
            .arg("push")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(&laptop), spawn(&other));
    let outputs: Vec<Output> = [a, b]
        .into_iter()
        .map(|child| child.wait_with_output().unwrap())
        .collect();
    let codes: Vec<Option<i32>> = outputs.iter().map(|output| output.status.code()).collect();
    assert!(
        codes == [Some(0), Some(3)] || codes == [Some(3), Some(0)],
        "{codes:?}"
    );
    let loser = &outputs[if codes[0] == Some(3) { 0 } else { 1 }];
    let stderr = String::from_utf8_lossy(&loser.stderr);
    assert!(stderr.contains("run `checkpoint pull` first"), "{stderr}");
    assert_eq!(
        remote.history("demo").len(),
        2,
        "the first push, then the winner"
    );
    // Neither lost anything.
    assert_eq!(laptop.read("demo", "journal.jsonl"), before.0);
    assert_eq!(other.read("demo", "journal.jsonl"), before.1);
    // The loser pulls, keeps both, and its push (on the winner's commit, not on its own
    // rejected one) lands.
    let loser = if codes[0] == Some(3) { &laptop } else { &other };
    loser.ok(&["pull", "--merge"]);
    loser.ok(&["push"]);
    assert_eq!(remote.history("demo").len(), 3);
    let notes = remote.file("demo", "state.json");
    assert!(
        notes.contains("\"laptop\"") && notes.contains("\"other\""),
        "{notes}"
    );
}

/// A pull or a push killed at any moment leaves a state `validate` accepts, and a retry finishes.
#[test]
fn a_kill_during_pull_or_push_leaves_a_valid_state_and_a_retry_finishes() {
    use std::os::unix::process::ExitStatusExt;

    let remote = Remote::bare();
    let writer = remote.clone();
    writer.ok(&["init", "big", "--phase", "a", "--phase", "b"]);
    writer.ok(&["start", "a"]);
    for n in 0..40 {
        writer.ok(&["note", &format!("note {n}")]);
    }
    writer.ok(&["push"]);
    let remote_len = || remote.file("big", "journal.jsonl").lines().count();
    let mut killed = 0;
    for delay_ms in [0u64, 2, 4, 6, 8, 10, 15, 20, 30, 45] {
        for push in [false, true] {
            let env = remote.clone();
            if push {
                env.ok(&["pull", "-w", "big"]);
                env.ok(&["note", "one more"]);
            }
            let before = remote_len();
            let mut child = env
                .cmd()
                .args([if push { "push" } else { "pull" }, "-w", "big"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            thread::sleep(Duration::from_millis(delay_ms));
            let _ = child.kill();
            if child.wait().unwrap().signal() == Some(9) {
                killed += 1;
            }
            if env.workflow_dir("big").join("journal.jsonl").exists() {
                exits(&env, &["validate", "-w", "big"], 0);
            }
            exits(&env, &["sync", "-w", "big"], 0);
            exits(&env, &["validate", "-w", "big"], 0);
            let want = before + usize::from(push);
            assert_eq!(
                journal_len(&env, "big"),
                want,
                "after a kill at {delay_ms} ms"
            );
            assert_eq!(remote_len(), want, "after a kill at {delay_ms} ms");
        }
    }
    assert!(killed > 0, "no command was killed mid-way");
}

/// The window of a kill while a pull creates a workflow, made deterministic: the journal is
/// written, the state is not.
#[test]
fn a_pull_cut_between_a_new_journal_and_its_state_leaves_a_valid_state() {
    let remote = Remote::bare();
    let writer = remote.clone();
    writer.ok(&["init", "w", "--phase", "a", "--phase", "b"]);
    writer.ok(&["start", "a"]);
    writer.ok(&["note", "from the writer"]);
    writer.ok(&["push"]);
    let env = remote.clone();
    let output = env
        .cmd()
        .args(["pull", "-w", "w"])
        .env("CHECKPOINT_TEST_FAILPOINT", "temp_write")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(7), "{}", render(&env, &output));
    let dir = env.workflow_dir("w");
    assert!(dir.join("journal.jsonl").exists());
    assert!(!dir.join("state.json").exists());
    exits(&env, &["validate", "-w", "w"], 0);
    assert_eq!(recovery_codes(&env, "w"), ["state.replayed"]);
    exits(&env, &["sync", "-w", "w"], 0);
    exits(&env, &["validate", "-w", "w"], 0);
    assert_eq!(journal_len(&env, "w"), journal_len(&writer, "w"));
    assert_eq!(statuses(&env, "w"), statuses(&writer, "w"));
    // The next write brings the state up to date.
    env.ok(&["note", "here"]);
    assert!(dir.join("state.json").exists());
    assert_eq!(recovery_codes(&env, "w"), Vec::<String>::new());
}

/// The codes of `validate`'s findings about the state and the journal.
fn recovery_codes(env: &TestEnv, id: &str) -> Vec<String> {
    env.json(&["validate", "-w", id])["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["code"].as_str().unwrap().to_owned())
        .filter(|code| code.starts_with("state.") || code.starts_with("journal."))
        .collect()
}

#[test]
fn a_synced_ref_holds_none_of_the_redaction_samples() {
    let remote = Remote::bare();
    let env = remote.clone();
    record_secret_samples(&env);
    env.ok(&["push"]);
    let objects = Command::new("git")
        .arg("--git-dir")
        .arg(remote.git_dir())
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&objects.stdout);
    assert!(text.contains("[REDACTED:api-key]"), "the note was pushed");
    for secret in SECRET_SAMPLES {
        assert!(!text.contains(secret), "{secret} reached the remote");
    }
}

#[test]
fn on_complete_pushes_in_the_background_and_a_failure_is_reported_next() {
    let remote = Remote::bare();
    let env = remote.clone();
    env.ok(&["init", "demo", "--phase", "a", "--phase", "b"]);
    fs::write(
        env.store().join("config.toml"),
        "[sync]\non_complete = true\n",
    )
    .unwrap();
    env.ok(&["start", "a"]);
    env.ok(&["complete", "a"]);
    let started = Instant::now();
    while !git(&remote.git_dir(), &["for-each-ref", "refs/checkpoints/"]).contains("demo") {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no background push"
        );
        thread::sleep(Duration::from_millis(50));
    }
    // The completion and the snapshot of the files it took.
    assert_eq!(remote.history("demo"), ["checkpoint: demo at entry 4"]);

    // A remote that cannot be reached: the push fails in the background, and the next command
    // says so, once.
    git(
        &env.project(),
        &["remote", "set-url", "origin", "/nonexistent/remote.git"],
    );
    env.ok(&["start", "b"]);
    env.ok(&["complete", "b"]);
    let started = Instant::now();
    loop {
        let output = env.run(&["status"]);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        if stderr.contains("the background push of `demo`") {
            assert!(
                stderr.contains("run `checkpoint push` to retry"),
                "{stderr}"
            );
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the failure was not reported"
        );
        thread::sleep(Duration::from_millis(50));
    }
    let output = env.run(&["status"]);
    assert!(!String::from_utf8_lossy(&output.stderr).contains("background push"));
}

#[test]
fn all_workflows_move_through_a_named_remote() {
    let remote = Remote::bare();
    let laptop = remote.clone();
    git(
        &laptop.project(),
        &["remote", "rename", "origin", "upstream"],
    );
    for id in ["one", "two"] {
        laptop.ok(&["init", id, "--phase", "a"]);
        laptop.ok(&["--workflow", id, "start", "a"]);
    }
    let pushed = laptop.ok(&["push", "upstream", "--all"]);
    assert!(
        pushed.contains("`one`: pushed entry 2 to `upstream`")
            && pushed.contains("`two`: pushed entry 2 to `upstream`"),
        "{pushed}"
    );
    // Without a remote named `origin` or an upstream, the default remote is missing.
    let rendered = exits(&laptop, &["push", "--all"], 1);
    assert!(
        rendered.contains("failed to fetch") || rendered.contains("failed to push"),
        "{rendered}"
    );

    let second = remote.clone();
    git(
        &second.project(),
        &["remote", "rename", "origin", "upstream"],
    );
    let pulled = second.ok(&["pull", "upstream", "--all"]);
    assert!(
        pulled.contains("`one`: created from `upstream` (2 entries)")
            && pulled.contains("`two`: created from `upstream` (2 entries)"),
        "{pulled}"
    );
    second.ok(&["--workflow", "two", "complete", "a"]);
    let synced = second.json(&["sync", "upstream", "--all"]);
    let actions: Vec<String> = synced["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|outcome| {
            format!(
                "{} {}",
                outcome["id"].as_str().unwrap(),
                outcome["action"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(actions, ["one up_to_date", "two pushed"]);
}

#[test]
fn one_resolution_at_a_time() {
    let env = Remote::bare().clone();
    let rendered = exits(&env, &["pull", "--theirs", "--ours"], 2);
    assert!(rendered.contains("cannot be used with"), "{rendered}");
    let help = env.ok(&["pull", "--help"]);
    for flag in ["--theirs", "--ours", "--merge", "--all", "[REMOTE]"] {
        assert!(help.contains(flag), "{flag} in {help}");
    }
}

#[test]
fn a_phase_the_hook_completes_is_pushed_in_the_background_too() {
    let remote = Remote::bare();
    let env = remote.clone();
    fs::write(
        env.project().join("plan.json"),
        r#"{"phases": [{"id": "design", "outputs": ["docs/design.md"]}, {"id": "build"}]}"#,
    )
    .unwrap();
    env.ok(&["init", "w", "--plan", "plan.json"]);
    fs::write(
        env.store().join("config.toml"),
        "[sync]\non_complete = true\n",
    )
    .unwrap();
    env.ok(&["start", "design"]);
    fs::create_dir_all(env.project().join("docs")).unwrap();
    fs::write(env.project().join("docs/design.md"), "# Design").unwrap();
    let payload = serde_json::json!({
        "session_id": "s",
        "transcript_path": env.project().join("t.jsonl"),
        "cwd": env.project(),
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": env.project().join("docs/design.md"), "content": "# Design"},
        "tool_response": {"type": "create"},
    });
    let (code, _, stderr) = env.hook("PostToolUse", &payload.to_string()).wait();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(env.state("w")["phases"][0]["status"], "complete");
    let started = Instant::now();
    while !git(&remote.git_dir(), &["for-each-ref", "refs/checkpoints/"])
        .contains("refs/checkpoints/w")
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no background push"
        );
        thread::sleep(Duration::from_millis(50));
    }
    assert!(remote.file("w", "journal.jsonl").contains("phase_complete"));
}

/// Runs `checkpoint` with `args`, failing the test if it takes more than a minute.
#[track_caller]
fn bounded(env: &TestEnv, args: &[&str], extra_env: &[(&str, &str)]) -> Output {
    let mut command = env.cmd();
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in extra_env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`checkpoint {args:?}` hung on an unresponsive remote");
        }
        thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn every_git_network_call_is_bounded_in_time() {
    // A socket that says nothing, and an ssh transport that never returns.
    let hung_ssh = TempDir::new().unwrap();
    let ssh = hung_ssh.path().join("ssh");
    fs::write(&ssh, "#!/bin/sh\nexec sleep 300\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&ssh, fs::Permissions::from_mode(0o755)).unwrap();
    }
    for url in [silent_remote(), "ssh://git.example/remote.git".to_owned()] {
        let env = TestEnv::new();
        git(&env.project(), &["init", "--quiet"]);
        git(&env.project(), &["remote", "add", "origin", &url]);
        git(
            &env.project(),
            &["config", "core.sshCommand", &ssh.display().to_string()],
        );
        env.ok(&["init", "w", "--phase", "a"]);
        for args in [
            &["pull"][..],
            &["push"],
            &["sync"],
            &["pull", "--all"],
            &["push", "--all"],
            &["pull", "origin"],
        ] {
            let output = bounded(&env, args, &[("CHECKPOINT_SYNC_TIMEOUT", "1")]);
            let rendered = render(&env, &output);
            assert_eq!(output.status.code(), Some(1), "{url} {args:?}\n{rendered}");
            assert!(
                rendered.contains("`origin` did not answer within 1s"),
                "{url} {args:?}\n{rendered}"
            );
            assert!(rendered.contains("CHECKPOINT_SYNC_TIMEOUT"), "{rendered}");
        }
        // Nothing local changed.
        exits(&env, &["validate"], 0);
    }
    // A timeout that is not a number of seconds is a usage error.
    let env = Remote::bare().clone();
    env.ok(&["init", "w", "--phase", "a"]);
    for bad in ["0", "-1", "soon", "1e300", "NaN"] {
        let output = bounded(&env, &["push"], &[("CHECKPOINT_SYNC_TIMEOUT", bad)]);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{bad}: {}",
            render(&env, &output)
        );
    }
}

#[test]
fn a_remote_name_like_an_option_is_refused_and_reaches_no_git() {
    let remote = Remote::bare();
    let env = remote.clone();
    env.ok(&["init", "w", "--phase", "a"]);
    let marker = env.dir.path().join("pwned");
    let hostile = format!("--upload-pack=touch {}", marker.display());
    let receive = format!("--receive-pack=touch {}", marker.display());
    for args in [
        vec!["pull", "--", &hostile],
        vec!["push", "--", &receive],
        vec!["sync", "--", &hostile],
        vec!["pull", "--all", "--", &hostile],
        vec!["push", "--all", "--", &receive],
        vec!["pull", "--", "-"],
        vec!["pull", ""],
    ] {
        let output = bounded(&env, &args, &[]);
        let rendered = render(&env, &output);
        assert_eq!(output.status.code(), Some(2), "{args:?}\n{rendered}");
        assert!(rendered.contains("it is not a remote"), "{rendered}");
        assert!(!marker.exists(), "{args:?} ran a command");
    }
    let output = bounded(
        &env,
        &[
            "run",
            "--claude",
            "true",
            "--sync",
            &format!("--remote={hostile}"),
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(2), "{}", render(&env, &output));
    assert!(!marker.exists());
    // The same name as the current branch's upstream remote in git's config.
    let project = env.project();
    git(&project, &["commit", "--quiet", "--allow-empty", "-m", "x"]);
    let branch = git(&project, &["symbolic-ref", "--short", "HEAD"]);
    let branch = branch.trim();
    git(
        &project,
        &["config", &format!("remote.{hostile}.url"), &remote.url],
    );
    git(
        &project,
        &[
            "config",
            &format!("remote.{hostile}.fetch"),
            "+refs/heads/*:refs/remotes/x/*",
        ],
    );
    git(
        &project,
        &["config", &format!("branch.{branch}.remote"), &hostile],
    );
    git(
        &project,
        &[
            "config",
            &format!("branch.{branch}.merge"),
            &format!("refs/heads/{branch}"),
        ],
    );
    git(
        &project,
        &["update-ref", &format!("refs/remotes/x/{branch}"), "HEAD"],
    );
    for args in [&["pull"][..], &["push"], &["sync"]] {
        let output = bounded(&env, args, &[]);
        let rendered = render(&env, &output);
        assert_eq!(output.status.code(), Some(2), "{args:?}\n{rendered}");
        assert!(
            rendered.contains(&format!("`branch.{branch}.remote` in git's config")),
            "{rendered}"
        );
        assert!(!marker.exists(), "{args:?} ran a command");
    }
}

#[test]
fn a_url_or_a_path_works_as_the_remote() {
    let remote = Remote::bare();
    let path = remote.url.clone();
    let file_url = format!("file://{path}");
    for url in [path.as_str(), file_url.as_str()] {
        let laptop = TestEnv::new();
        git(&laptop.project(), &["init", "--quiet"]);
        let id = if url == path { "by-path" } else { "by-url" };
        laptop.ok(&["init", id, "--phase", "a"]);
        let pushed = laptop.ok(&["push", url]);
        assert!(
            pushed.contains(&format!("pushed entry 1 to `{url}`")),
            "{pushed}"
        );
        let other = TestEnv::new();
        git(&other.project(), &["init", "--quiet"]);
        let pulled = other.ok(&["pull", url, "-w", id]);
        assert!(pulled.contains("created from"), "{pulled}");
        other.ok(&["start", "a"]);
        other.ok(&["push", url]);
        let pulled = laptop.ok(&["sync", url]);
        assert!(pulled.contains("pulled 1 entry"), "{pulled}");
        assert_eq!(statuses(&laptop, id), ["a in_progress"]);
    }
}

/// Points `refs/checkpoints/<id>` of the bare remote at what `object` (`blob`, `tree`, a commit
/// without a journal, a commit whose journal is `journal`) makes.
fn forge_ref(remote: &Remote, id: &str, object: &str, journal: &str) {
    let dir = remote.git_dir();
    // `git <args>` in the remote with `input` on its stdin; its output, trimmed.
    let git_in = |args: &[&str], input: &str| {
        let mut child = Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.as_bytes()).unwrap();
        drop(stdin);
        String::from_utf8(child.wait_with_output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_owned()
    };
    let blob = git_in(&["hash-object", "-w", "--stdin"], journal);
    let tree_of = |name: &str| git_in(&["mktree"], &format!("100644 blob {blob}\t{name}\n"));
    let target = match object {
        "blob" => blob.clone(),
        "tree" => tree_of("journal.jsonl"),
        "no-journal" => git(&dir, &["commit-tree", &tree_of("other.txt"), "-m", "x"])
            .trim()
            .to_owned(),
        _ => git(&dir, &["commit-tree", &tree_of("journal.jsonl"), "-m", "x"])
            .trim()
            .to_owned(),
    };
    git(
        &dir,
        &["update-ref", &format!("refs/checkpoints/{id}"), &target],
    );
}

#[test]
fn a_damaged_remote_copy_is_said_for_what_it_is_with_no_pull_push_loop() {
    let cases = [
        (
            "blob",
            "",
            "`refs/checkpoints/w` points at a blob, not a commit",
        ),
        (
            "tree",
            "",
            "`refs/checkpoints/w` points at a tree, not a commit",
        ),
        ("no-journal", "", "holds no `journal.jsonl` file"),
        // Entries that parse but do not replay, and none at all.
        (
            "commit",
            "{\"seq\":1,\"at\":\"2026-03-01T12:00:00Z\",\"transition\":{\"op\":\"phase_complete\",\"phase\":\"zzz\"}}\n",
            "its `journal.jsonl` does not replay",
        ),
        ("commit", "", "its `journal.jsonl` holds no workflow"),
        ("commit", "not json\n", "its `journal.jsonl`:"),
        (
            "commit",
            "{\"seq\":1,\"at\":\"2026-03-01T12:00:00Z\",\"transition\":{\"op\":\"note\"",
            "its `journal.jsonl`",
        ),
    ];
    for (object, journal, what) in cases {
        let remote = Remote::bare();
        let env = remote.clone();
        env.ok(&["init", "w", "--phase", "a"]);
        forge_ref(&remote, "w", object, journal);
        let before = env.read("w", "journal.jsonl");
        for args in [&["pull"][..], &["push"], &["sync"], &["pull", "--all"]] {
            let rendered = exits(&env, args, 6);
            assert!(
                rendered.contains("the copy of `w` on `origin` is damaged: ")
                    && rendered.contains(what),
                "{object} {args:?}\n{rendered}"
            );
            assert!(
                rendered.contains("git push origin --delete refs/checkpoints/w"),
                "{rendered}"
            );
            assert!(
                !rendered.contains(".claude/checkpoints"),
                "no local path: {rendered}"
            );
        }
        assert_eq!(
            env.read("w", "journal.jsonl"),
            before,
            "nothing local changed"
        );
        // A clone without the workflow is told the same, and creates nothing.
        let other = remote.clone();
        let rendered = exits(&other, &["pull", "-w", "w"], 6);
        assert!(rendered.contains("is damaged"), "{rendered}");
        assert!(!other.workflow_dir("w").exists());
        // The hint works: delete the remote's copy, then sync puts this one there.
        git(
            &remote.git_dir(),
            &["update-ref", "-d", "refs/checkpoints/w"],
        );
        env.ok(&["sync"]);
        assert_eq!(remote.history("w").len(), 1);
    }
}

/// Remote ref names that are no workflow's id: the store's own names, and a path.
const FORBIDDEN_REF_NAMES: [&str; 7] = [
    "config.toml",
    "failed",
    "lock",
    "archive",
    "tmp",
    "Config.TOML",
    "nested/id",
];

#[test]
fn pull_all_takes_remote_ref_names_as_ids_and_skips_the_stores_own_names() {
    let remote = Remote::bare();
    let laptop = remote.clone();
    laptop.ok(&["init", "w", "--phase", "a"]);
    laptop.ok(&["push"]);
    let dir = remote.git_dir();
    for name in FORBIDDEN_REF_NAMES {
        git(
            &dir,
            &[
                "update-ref",
                &format!("refs/checkpoints/{name}"),
                "refs/checkpoints/w",
            ],
        );
    }
    let other = remote.clone();
    let output = other.run(&["pull", "--all"]);
    let rendered = render(&other, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
    assert!(
        rendered.contains("`w`: created from `origin`"),
        "{rendered}"
    );
    for name in FORBIDDEN_REF_NAMES {
        assert!(
            rendered.contains(&format!("skipped `refs/checkpoints/{name}` on `origin`")),
            "{name}: {rendered}"
        );
    }
    let store: Vec<String> = fs::read_dir(other.store())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with('.'))
        .collect();
    assert_eq!(store, ["w"], "{rendered}");
    // Named one by one, such a workflow is refused.
    for name in ["config.toml", "tmp"] {
        let rendered = exits(&other, &["pull", "-w", name], 2);
        assert!(rendered.contains("the store uses the name"), "{rendered}");
        assert!(!other.store().join(name).exists());
    }
    other.ok(&["status"]);
}

#[test]
fn fork_names_are_unique_within_the_same_second() {
    let remote = Remote::bare();
    let (laptop, other) = diverged(&remote, &[&["complete", "a"]], &[&["start", "c"]]);
    laptop.ok(&["pull", "--theirs"]);
    // Both sides go on again, and the next resolution falls in the same second.
    let diverge_again = |round: usize| {
        laptop.ok(&["push"]);
        other.ok(&["pull"]);
        other.ok(&["note", &format!("theirs, round {round}")]);
        other.ok(&["push"]);
        laptop.ok(&["note", &format!("ours, round {round}")]);
    };
    diverge_again(2);
    let rendered = laptop.ok(&["pull", "--theirs"]);
    assert!(
        rendered.contains("kept as the workflow `demo@local-20260301T120000Z-2`"),
        "{rendered}"
    );
    // And for `--ours`, whose fork keeps the remote's side.
    diverge_again(3);
    laptop.ok(&["pull", "--ours"]);
    diverge_again(4);
    let rendered = laptop.ok(&["pull", "--ours"]);
    assert!(
        rendered.contains("kept as the workflow `demo@remote-20260301T120000Z-2`"),
        "{rendered}"
    );
    let list = laptop.ok(&["list"]);
    for fork in [
        "demo@local-20260301T120000Z",
        "demo@local-20260301T120000Z-2",
        "demo@remote-20260301T120000Z",
        "demo@remote-20260301T120000Z-2",
    ] {
        assert!(list.contains(fork), "{fork}: {list}");
    }
}

/// The forms of secret an effect's command may hold (issue 38), `{}` where the secret goes,
/// each with a secret of its own.
pub(crate) const EFFECT_SECRET_FORMS: [(&str, &str); 11] = [
    (
        "curl -u ana:{} -X POST https://api.example.com/a",
        "pw1hunter2xq",
    ),
    (
        "curl --user ana:{} -d x=1 https://api.example.com/b",
        "pw2hunter2xq",
    ),
    (
        "curl --oauth2-bearer {} -X PUT https://api.example.com/c",
        "pw3hunter2xq",
    ),
    (
        "curl -H 'Cookie: sid={}' -X POST https://api.example.com/d",
        "pw4hunter2xq",
    ),
    (
        "curl -b 'sid={}' -X DELETE https://api.example.com/e",
        "pw5hunter2xq",
    ),
    (
        "curl -X POST 'https://api.example.com/f?key={}&q=1'",
        "pw6hunter2xq",
    ),
    (
        "curl -X POST 'https://api.example.com/g?api_key={}'",
        "pw7hunter2xq",
    ),
    (
        "curl -X POST 'https://api.example.com/h?token={}'",
        "pw8hunter2xq",
    ),
    (
        "curl -X POST 'https://api.example.com/i?sig={}'",
        "pw9hunter2xq",
    ),
    (
        "gh api -X POST repos/o/r/issues --password {}",
        "pwAhunter2xq",
    ),
    (
        "gh api -X POST repos/o/r/pulls --password={}",
        "pwBhunter2xq",
    ),
];

/// What `push` sends holds no secret the journal redacts: not the effects the hooks recorded
/// (each form of issue 38), nor an entry an older version journaled before a rule existed.
#[test]
fn a_pushed_ref_holds_no_secret_of_an_effect_nor_of_an_older_entry() {
    let remote = Remote::bare();
    let env = remote.clone();
    env.ok(&["init", "w", "--phase", "deploy"]);
    env.ok(&["start", "deploy"]);
    for (form, secret) in EFFECT_SECRET_FORMS {
        let payload = crate::support::hook_payload(
            &env,
            "PostToolUse",
            serde_json::json!({"tool_name": "Bash", "tool_input": {"command": form.replace("{}", secret)},
                "tool_use_id": "toolu_1", "tool_response": {"stdout": "sent", "stderr": "", "interrupted": false}}),
        );
        let (code, _, err) = env.hook("PostToolUse", &payload).wait();
        assert_eq!(code, 0, "{err}");
    }
    // An older version's entry, journaled verbatim before its secret had a rule.
    let journal_path = env.workflow_dir("w").join("journal.jsonl");
    let journal = fs::read_to_string(&journal_path).unwrap();
    let seq = journal.lines().count() + 1;
    let legacy = "curl -u ana:oldpw9legacy -X POST https://api.example.com/z";
    fs::write(
        &journal_path,
        format!(
            "{journal}{}\n",
            serde_json::json!({"seq": seq, "at": "2026-03-01T12:00:00Z",
                "transition": {"op": "note", "text": legacy}})
        ),
    )
    .unwrap();
    env.ok(&["push"]);
    let objects = Command::new("git")
        .arg("--git-dir")
        .arg(remote.git_dir())
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&objects.stdout);
    assert!(
        text.contains("api.example.com/a"),
        "the effects were pushed"
    );
    assert!(
        text.contains("api.example.com/z"),
        "the older entry was pushed"
    );
    for (form, secret) in EFFECT_SECRET_FORMS {
        assert!(
            !text.contains(secret),
            "{form}: its secret reached the remote"
        );
    }
    assert!(
        !text.contains("oldpw9legacy"),
        "the older entry's secret reached the remote"
    );
    // Pushed again, it is the same journal (redacted alike on both sides): nothing to push.
    let again = env.ok(&["push"]);
    assert!(again.contains("already has"), "{again}");
}
