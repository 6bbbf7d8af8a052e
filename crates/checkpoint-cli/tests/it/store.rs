//! The store on disk: interrupted writes, corruption, newer versions, symlinks and the lock.

use std::{fs, io::Write};

use insta::assert_snapshot;

use crate::support::TestEnv;

fn started(env: &TestEnv) {
    env.ok(&["init", "w", "--phase", "design", "--phase", "build:design"]);
    env.ok(&["start", "design"]);
}

#[test]
fn torn_journal_line_is_ignored_then_moved_aside() {
    let env = TestEnv::new();
    started(&env);
    let journal = env.workflow_dir("w").join("journal.jsonl");
    fs::OpenOptions::new()
        .append(true)
        .open(&journal)
        .unwrap()
        .write_all(b"{\"seq\":3,\"at\":\"2026-03-")
        .unwrap();
    assert_snapshot!(env.snapshot(&["status", "--format", "json"]).lines().next().unwrap(), @"exit status: 0");
    let output = env.snapshot(&["progress", "design", "half done"]);
    assert_snapshot!(output, @r"
    exit status: 0
    ----- stdout -----
    recorded progress on phase `design`
    ----- stderr -----
    warning: the journal ended in a torn line of 23 bytes (an interrupted append); it was moved to `[TEMP]/project/.claude/checkpoints/w/journal.jsonl.torn-20260301T120000.000Z`
    ");
    let lines: Vec<serde_json::Value> = env
        .read("w", "journal.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        lines
            .iter()
            .map(|line| line["seq"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(
        env.read("w", "journal.jsonl.torn-20260301T120000.000Z"),
        "{\"seq\":3,\"at\":\"2026-03-"
    );
}

#[test]
fn state_lagging_behind_the_journal_is_replayed() {
    let env = TestEnv::new();
    started(&env);
    env.ok(&["progress", "design", "drafted"]);
    // A crash after the journal append and before the rename leaves the previous state.
    let dir = env.workflow_dir("w");
    fs::copy(dir.join("state.json.bak"), dir.join("state.json")).unwrap();
    assert_eq!(env.state("w")["seq"], 2);
    let status = env.snapshot(&["status"]);
    assert!(status.contains("progress: drafted"), "{status}");
    assert!(status.contains("replayed entries 3 to 3"), "{status}");
    env.ok(&["complete", "design"]);
    let state = env.state("w");
    assert_eq!(state["seq"], 4);
    assert_eq!(state["phases"][0]["progress"], "drafted");
}

#[test]
fn corrupt_state_is_rebuilt_from_the_journal_and_kept() {
    let env = TestEnv::new();
    started(&env);
    let dir = env.workflow_dir("w");
    fs::write(dir.join("state.json"), "{\"schema_version\": 1, \"id\": ").unwrap();
    let status = env.snapshot(&["status"]);
    assert!(status.starts_with("exit status: 0"), "{status}");
    assert!(status.contains("→ design  in progress"), "{status}");
    assert!(
        status.contains("rebuilt from the journal in memory"),
        "{status}"
    );
    assert_eq!(
        fs::read_to_string(dir.join("state.json")).unwrap(),
        "{\"schema_version\": 1, \"id\": ",
        "a read changes nothing"
    );
    let output = env.snapshot(&["progress", "design", "after the crash"]);
    assert!(output.contains("the bad file is kept as `[TEMP]/project/.claude/checkpoints/w/state.json.corrupt-20260301T120000.000Z`"), "{output}");
    assert_eq!(
        fs::read_to_string(dir.join("state.json.corrupt-20260301T120000.000Z")).unwrap(),
        "{\"schema_version\": 1, \"id\": "
    );
    assert_eq!(env.state("w")["phases"][0]["progress"], "after the crash");
}

#[test]
fn corrupt_state_without_history_is_reported_and_untouched() {
    let env = TestEnv::new();
    started(&env);
    let dir = env.workflow_dir("w");
    fs::remove_file(dir.join("journal.jsonl")).unwrap();
    fs::remove_file(dir.join("state.json.bak")).unwrap();
    fs::write(
        dir.join("state.json"),
        "{\n  \"schema_version\": 1,\n  \"id\": oops\n}",
    )
    .unwrap();
    let output = env.snapshot(&["start", "build"]);
    assert_snapshot!(output, @r#"
    exit status: 6
    ----- stdout -----
    ----- stderr -----
    checkpoint::store::corrupt

      × failed to load `[TEMP]/project/.claude/checkpoints/w/state.json`: expected value at line 3 column 9
       ╭─[[TEMP]/project/.claude/checkpoints/w/state.json:3:9]
     2 │   "schema_version": 1,
     3 │   "id": oops
       ·         ▲
       ·         ╰── here
     4 │ }
       ╰────
      help: neither the journal nor `state.json.bak` could rebuild it; the file was left untouched: fix it by hand, or move it aside and start again
    "#);
    assert_eq!(
        fs::read_to_string(dir.join("state.json")).unwrap(),
        "{\n  \"schema_version\": 1,\n  \"id\": oops\n}"
    );
}

#[test]
fn newer_schema_version_is_refused_not_rewritten() {
    let env = TestEnv::new();
    started(&env);
    let dir = env.workflow_dir("w");
    let mut state = env.state("w");
    state["schema_version"] = 99.into();
    state["some_future_field"] = "x".into();
    let text = serde_json::to_string_pretty(&state).unwrap();
    fs::write(dir.join("state.json"), &text).unwrap();
    for args in [&["status"][..], &["progress", "design", "x"]] {
        let output = env.snapshot(args);
        assert!(output.starts_with("exit status: 6"), "{output}");
        assert!(
            output.contains("has schema version 99, newer than this binary's 1"),
            "{output}"
        );
    }
    assert_eq!(fs::read_to_string(dir.join("state.json")).unwrap(), text);
}

#[cfg(unix)]
#[test]
fn symlinked_state_is_refused() {
    let env = TestEnv::new();
    started(&env);
    let dir = env.workflow_dir("w");
    let outside = env.dir.path().join("outside.json");
    fs::copy(dir.join("state.json"), &outside).unwrap();
    let before = fs::read_to_string(&outside).unwrap();
    fs::remove_file(dir.join("state.json")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("state.json")).unwrap();
    let output = env.snapshot(&["progress", "design", "x"]);
    assert!(output.starts_with("exit status: 6"), "{output}");
    assert!(output.contains("it is a symbolic link"), "{output}");
    assert_eq!(fs::read_to_string(&outside).unwrap(), before);
}

#[test]
fn leftover_temp_files_are_removed_by_the_next_write() {
    let env = TestEnv::new();
    started(&env);
    let temp = env.workflow_dir("w").join(".state.json.tmp-abc123");
    fs::write(&temp, "{\"half\": ").unwrap();
    let status = env.snapshot(&["status"]);
    assert!(
        status.contains("1 temporary file of an interrupted write found"),
        "{status}"
    );
    assert!(temp.exists());
    let output = env.snapshot(&["progress", "design", "x"]);
    assert!(
        output.contains("1 temporary file of an interrupted write removed"),
        "{output}"
    );
    assert!(!temp.exists());
}

#[cfg(unix)]
#[test]
fn files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    started(&env);
    let dir = env.workflow_dir("w");
    assert_eq!(
        fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    for file in ["state.json", "state.json.bak", "journal.jsonl", "lock"] {
        assert_eq!(
            fs::metadata(dir.join(file)).unwrap().permissions().mode() & 0o777,
            0o600,
            "{file}"
        );
    }
}

#[test]
fn lock_contention_waits_then_names_the_lock() {
    let env = TestEnv::new();
    started(&env);
    let lock_path = env.workflow_dir("w").join("lock");
    let lock = fs::OpenOptions::new().write(true).open(&lock_path).unwrap();
    lock.lock().unwrap();
    let output = env
        .cmd()
        .args(["progress", "design", "x"])
        .env("CHECKPOINT_LOCK_TIMEOUT", "0.2")
        .output()
        .unwrap();
    let rendered = crate::support::render(&env, &output);
    assert_eq!(output.status.code(), Some(5), "{rendered}");
    assert!(
        rendered.contains(
            "warning: waiting for the lock on `[TEMP]/project/.claude/checkpoints/w/lock`"
        ),
        "{rendered}"
    );
    assert!(rendered.contains("CHECKPOINT_LOCK_TIMEOUT"), "{rendered}");
    lock.unlock().unwrap();
    env.ok(&["progress", "design", "x"]);
}

#[test]
fn parallel_writers_lose_nothing() {
    let env = TestEnv::new();
    started(&env);
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            let mut cmd = env.cmd();
            std::thread::spawn(move || {
                for i in 0..15 {
                    let output = cmd
                        .args(["note", &format!("writer {writer} note {i}")])
                        .output()
                        .unwrap();
                    assert!(
                        output.status.success(),
                        "{}",
                        String::from_utf8_lossy(&output.stderr)
                    );
                    cmd = crate::support::copy(&cmd);
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let state = env.state("w");
    assert_eq!(state["context"]["notes"].as_array().unwrap().len(), 60);
    let seqs: Vec<u64> = env
        .read("w", "journal.jsonl")
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, (1..=62).collect::<Vec<_>>());
    assert_eq!(state["seq"], 62);
}

/// Makes workflow `id` as a binary from before reserved ids were refused would have: created
/// under another id, then renamed in its files and directory.
fn legacy_workflow(env: &TestEnv, id: &str, phases: &[&str]) {
    let stand_in = "stand-in-for-a-legacy-id";
    let mut args = vec!["init", stand_in];
    for phase in phases {
        args.extend(["--phase", phase]);
    }
    env.ok(&args);
    let from = env.workflow_dir(stand_in);
    for file in ["state.json", "journal.jsonl"] {
        let path = from.join(file);
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, text.replace(stand_in, id)).unwrap();
    }
    fs::rename(&from, env.workflow_dir(id)).unwrap();
}

#[test]
fn ids_the_store_uses_are_refused_and_old_ones_stay_readable() {
    let env = TestEnv::new();
    for id in ["config.toml", "failed", "FAILED", "lock", "archive"] {
        let output = env.run(&["init", id, "--phase", "a"]);
        let rendered = crate::support::render(&env, &output);
        assert_eq!(output.status.code(), Some(2), "{rendered}");
        assert!(
            rendered.contains("the store uses the name") && rendered.contains("choose another id"),
            "{rendered}"
        );
        assert!(!env.store().join(id).exists(), "{id} was created");
    }
    let output = env.run(&["init", ".", "--phase", "a"]);
    let rendered = crate::support::render(&env, &output);
    assert!(
        rendered.contains("it is `.`") && !rendered.contains("contains `..`"),
        "{rendered}"
    );

    // A store from before: a workflow named `config.toml` and one named `failed`.
    legacy_workflow(&env, "config.toml", &["a"]);
    legacy_workflow(&env, "failed", &["a"]);
    env.ok(&["init", "other", "--phase", "a"]);
    let output = env.run(&["--workflow", "config.toml", "status"]);
    let rendered = crate::support::render(&env, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
    assert!(
        rendered.contains("is a directory (a workflow of that name?)"),
        "{rendered}"
    );
    assert!(
        rendered.contains("the workflow `failed` has the name"),
        "{rendered}"
    );
    env.ok(&["--workflow", "failed", "status"]);
    // Archiving a failed workflow does not land inside the live `failed` workflow.
    env.ok(&["--workflow", "other", "start", "a"]);
    env.ok(&["--workflow", "other", "fail", "a", "--reason", "broke"]);
    env.ok(&["--workflow", "other", "archive"]);
    let inside: Vec<_> = fs::read_dir(env.workflow_dir("failed"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("other"))
        .collect();
    assert!(inside.is_empty(), "{inside:?}");
    let list = env.ok(&["list"]);
    assert!(
        list.contains("failed") && list.contains("config.toml"),
        "{list}"
    );
    assert!(!list.contains("unreadable"), "{list}");
}

#[test]
fn schema_version_zero_is_refused_not_rewritten() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    let path = env.workflow_dir("w").join("state.json");
    let mut state = env.state("w");
    state["schema_version"] = 0.into();
    let text = serde_json::to_string_pretty(&state).unwrap();
    fs::write(&path, &text).unwrap();
    for args in [&["status"][..], &["start", "a"]] {
        let output = env.snapshot(args);
        assert!(output.starts_with("exit status: 6"), "{output}");
        assert!(
            output.contains("has schema version 0, which no `checkpoint` writes"),
            "{output}"
        );
    }
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn a_state_over_the_read_limit_is_refused_at_write_time() {
    let env = TestEnv::new();
    // 65 MiB of description: over the 64 MiB that readers accept.
    let description = "a".repeat(65 * 1024 * 1024);
    let plan = env.dir.path().join("plan.json");
    fs::write(
        &plan,
        serde_json::json!({"description": description, "phases": [{"id": "a"}]}).to_string(),
    )
    .unwrap();
    let output = env.snapshot(&["init", "w", "--plan", plan.to_str().unwrap()]);
    assert!(
        output.starts_with("exit status: 3"),
        "{}",
        &output[..output.len().min(2000)]
    );
    assert!(
        output.contains("bytes, over the limit of 67108864 bytes")
            && output.contains("nothing was written"),
        "{}",
        &output[..output.len().min(2000)]
    );
    assert!(!env.workflow_dir("w").join("journal.jsonl").exists());
    assert!(!env.workflow_dir("w").join("state.json").exists());
    // Nothing is left behind: no empty workflow directory that `list` or `init` trips over.
    assert!(!env.workflow_dir("w").exists());
    // The id stays free.
    env.ok(&["init", "w", "--phase", "a"]);
}
