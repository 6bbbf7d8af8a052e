//! The promises of `DURABILITY.md`, one test each: crashes (SIGKILL at random moments), injected
//! I/O errors at every step of the write path, concurrent writers, hostile and broken input, and
//! secrets.
//!
//! The counts are those of a CI run; `CHECKPOINT_LONG_TESTS=1` raises them for release checks,
//! and `CHECKPOINT_TEST_SEED=<n>` replays a random run.

#![expect(
    clippy::print_stdout,
    reason = "the tests report their seeds and counts (shown with `--nocapture`)"
)]

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    thread,
    time::{Duration, Instant},
};

use checkpoint_core::{
    PhaseId, Transition, WorkflowId,
    failpoint::Step,
    store::{Store, StoreOptions, Verification},
};

use crate::support::{self, SECRET_SAMPLES, TestEnv, record_secret_samples, render};

/// Whether the release-check counts apply (`CHECKPOINT_LONG_TESTS=1`).
fn long() -> bool {
    std::env::var_os("CHECKPOINT_LONG_TESTS").is_some_and(|value| value == "1")
}

/// A random generator seeded from `CHECKPOINT_TEST_SEED`, or the clock; the seed is printed.
fn rng(test: &str) -> fastrand::Rng {
    let seed = match std::env::var("CHECKPOINT_TEST_SEED") {
        Ok(seed) => seed.parse().expect("CHECKPOINT_TEST_SEED is a number"),
        Err(_) => fastrand::u64(..),
    };
    println!("{test}: seed {seed} (replay with CHECKPOINT_TEST_SEED={seed})");
    fastrand::Rng::with_seed(seed)
}

/// Runs `cmd`, asserts that it exits with `code`, and returns its rendered output.
#[track_caller]
fn exits(env: &TestEnv, cmd: &mut Command, code: i32) -> String {
    let output = cmd.output().unwrap();
    let rendered = render(env, &output);
    assert_eq!(output.status.code(), Some(code), "{rendered:.3000}");
    rendered
}

/// Runs `checkpoint <args>`, asserts that it exits with `code`, and returns its rendered output.
#[track_caller]
fn run_exits(env: &TestEnv, args: &[&str], code: i32) -> String {
    exits(env, env.cmd().args(args), code)
}

/// The store of a test environment, opened in-process to verify it against its journal.
fn verify(env: &TestEnv, id: &str) -> Verification {
    let store = Store::new(
        &env.store(),
        StoreOptions {
            lock_timeout: Duration::from_secs(10),
            on_lock_wait: None,
            failpoint: None,
        },
    );
    store.verify(&WorkflowId::new(id).unwrap()).unwrap()
}

#[track_caller]
fn assert_consistent(env: &TestEnv, id: &str) -> Verification {
    let verification = verify(env, id);
    assert_eq!(verification.mismatch, None, "{verification:?}");
    verification
}

/// The journal's transitions, in order.
fn journal(env: &TestEnv, id: &str) -> Vec<(u64, Transition)> {
    env.read(id, "journal.jsonl")
        .lines()
        .map(|line| {
            let entry: checkpoint_core::journal::Entry = serde_json::from_str(line).unwrap();
            (entry.seq, entry.transition)
        })
        .collect()
}

/// The workflow as `checkpoint status --format json` loads it.
#[track_caller]
fn status(env: &TestEnv, id: &str) -> serde_json::Value {
    env.json(&["--workflow", id, "status"])
}

fn notes(state: &serde_json::Value) -> Vec<String> {
    texts(&state["context"]["notes"])
}

fn texts(list: &serde_json::Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|item| item["text"].as_str().unwrap().to_owned())
        .collect()
}

/// Names of the files in a directory, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn phase(id: &str) -> PhaseId {
    PhaseId::new(id).unwrap()
}

fn started(env: &TestEnv, id: &str) {
    env.ok(&["init", id, "--phase", "design", "--phase", "build:design"]);
    env.ok(&["--workflow", id, "start", "design"]);
}

// Crash consistency.

/// What a killed command was asked to do, to check once it is acknowledged.
enum Expect {
    Note(String),
    Decision(String),
    Task(String),
    Progress(String),
}

#[derive(Debug, Default)]
struct CrashCounts {
    kills: usize,
    killed_mid_command: usize,
    completed_before_kill: usize,
    recoveries: std::collections::BTreeMap<String, usize>,
}

#[cfg(unix)]
#[test]
fn sigkill_at_random_moments_keeps_every_acknowledged_transition() {
    crash_loop("crash", if long() { 1000 } else { 200 }, started);
}

/// The same on workflows large enough for their state to be replaced only every few writes:
/// most kills land while `state.json` lags behind the journal by design.
#[test]
fn sigkill_on_a_large_workflow_keeps_every_acknowledged_transition() {
    crash_loop("crash-large", if long() { 300 } else { 60 }, started_large);
}

/// A started workflow whose `state.json` is over the size where its writes are deferred.
fn started_large(env: &TestEnv, id: &str) {
    let mut phases = vec![
        serde_json::json!({"id": "design"}),
        serde_json::json!({"id": "build", "dependencies": ["design"]}),
    ];
    phases.extend((0..2_000).map(|i| {
        serde_json::json!({
            "id": format!("later-{i:04}"),
            "name": format!("A later phase with a name of some length, number {i}"),
            "dependencies": ["build"],
        })
    }));
    let plan = env.dir.path().join(format!("{id}-plan.json"));
    fs::write(&plan, serde_json::json!({ "phases": phases }).to_string()).unwrap();
    env.ok(&["init", id, "--plan", plan.to_str().unwrap()]);
    env.ok(&["--workflow", id, "start", "design"]);
    let size = fs::metadata(env.workflow_dir(id).join("state.json"))
        .unwrap()
        .len();
    assert!(
        size >= checkpoint_core::store::DEFER_STATE_BYTES,
        "{size} bytes"
    );
}

fn crash_loop(label: &str, kills: usize, start: fn(&TestEnv, &str)) {
    use std::os::unix::process::ExitStatusExt;

    let mut rng = rng(label);
    let env = TestEnv::new();
    let started_at = Instant::now();

    // The kill lands anywhere from the spawn to a little after an uninterrupted command's end.
    start(&env, "calibrate");
    let mut durations: Vec<Duration> = (0..5)
        .map(|n| {
            let start = Instant::now();
            env.ok(&["--workflow", "calibrate", "note", &format!("{n}")]);
            start.elapsed()
        })
        .collect();
    durations.sort();
    let window = durations[2].as_micros() as u64 * 3 / 2;

    let mut counts = CrashCounts::default();
    let mut id = String::new();
    let mut acknowledged: Vec<Expect> = Vec::new();
    for kill in 0..kills {
        // A new workflow every 50 kills keeps each journal short to verify.
        if kill % 50 == 0 {
            id = format!("w{kill}");
            start(&env, &id);
            acknowledged.clear();
        }
        let text = format!("k{kill}");
        let (args, expect): (Vec<&str>, Expect) = match rng.usize(..4) {
            0 => (vec!["note", &text], Expect::Note(text.clone())),
            1 => (vec!["decide", &text], Expect::Decision(text.clone())),
            2 => (
                vec!["task", "add", "design", &text],
                Expect::Task(text.clone()),
            ),
            _ => (
                vec!["progress", "design", &text],
                Expect::Progress(text.clone()),
            ),
        };
        let mut child = env
            .cmd()
            .args(["--workflow", &id])
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        thread::sleep(Duration::from_micros(rng.u64(..=window)));
        // SIGKILL; an error means the command had already exited.
        let _ = child.kill();
        let exit = child.wait().unwrap();
        counts.kills += 1;
        match (exit.code(), exit.signal()) {
            (Some(0), _) => {
                counts.completed_before_kill += 1;
                acknowledged.push(expect);
            }
            (_, Some(9)) => counts.killed_mid_command += 1,
            _ => panic!("`checkpoint {args:?}` failed on its own: {exit:?}"),
        }

        let state = status(&env, &id);
        for recovery in state["recoveries"].as_array().unwrap() {
            let kind = recovery["kind"].as_str().unwrap().to_owned();
            *counts.recoveries.entry(kind).or_default() += 1;
        }
        let workflow = &state["workflow"];
        let journal = journal(&env, &id);
        for expect in &acknowledged {
            let found = match expect {
                Expect::Note(text) => notes(workflow).contains(text),
                Expect::Decision(text) => {
                    texts(&workflow["context"]["key_decisions"]).contains(text)
                }
                Expect::Task(task) => workflow["phases"][0]["tasks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|item| item["id"] == task.as_str()),
                Expect::Progress(note) => journal.iter().any(|(_, transition)| {
                    *transition
                        == Transition::PhaseProgress {
                            phase: phase("design"),
                            note: note.clone(),
                        }
                }),
            };
            assert!(
                found,
                "kill {kill}: an acknowledged transition is lost\n{state:#}"
            );
        }
        let verification = assert_consistent(&env, &id);
        assert_eq!(verification.loaded_seq, workflow["seq"].as_u64().unwrap());
    }
    println!(
        "{label}: {} kills in {:.1?} ({} mid-command, {} after the command finished; kill window {window} µs); recoveries seen by the next read: {:?}",
        counts.kills,
        started_at.elapsed(),
        counts.killed_mid_command,
        counts.completed_before_kill,
        counts.recoveries
    );
    assert!(
        counts.killed_mid_command > 0,
        "no kill landed before its command finished: {counts:?}"
    );
}

// Injected failures in the write path.

#[test]
fn a_failure_at_any_write_step_leaves_the_old_state_or_the_new_one() {
    for step in Step::ALL {
        for failure in ["", ":enospc"] {
            let spec = format!("{}{failure}", step.as_str());
            let env = TestEnv::new();
            started(&env, "w");
            env.ok(&["note", "before"]);
            let dir = env.workflow_dir("w");
            let old_state = env.read("w", "state.json");

            let rendered = exits(
                &env,
                env.cmd()
                    .args(["note", "new"])
                    .env("CHECKPOINT_TEST_FAILPOINT", &spec),
                7,
            );
            assert!(
                rendered.contains("it may have been saved"),
                "{spec}: {rendered}"
            );
            assert!(rendered.contains("re-read the state"), "{spec}: {rendered}");
            if failure.is_empty() {
                assert!(rendered.contains("injected failure"), "{spec}: {rendered}");
            } else {
                assert!(
                    rendered.contains("no space left on device"),
                    "{spec}: {rendered}"
                );
            }

            // On disk, `state.json` is the old file or a whole new one that the journal backs.
            let new_state = env.read("w", "state.json");
            let on_disk_is_new = new_state != old_state;
            assert_eq!(
                on_disk_is_new,
                step == Step::DirFsync,
                "{spec}: only a failed directory fsync comes after the rename"
            );
            assert_consistent(&env, "w");
            // As loaded, the note is there exactly when its journal append completed.
            let expected: &[&str] = match step {
                Step::JournalAppend => &["before"],
                _ => &["before", "new"],
            };
            assert_eq!(notes(&status(&env, "w")["workflow"]), expected, "{spec}");

            // The next write repairs what is left and loses nothing.
            env.ok(&["note", "after"]);
            let state = env.state("w");
            let mut all = expected.to_vec();
            all.push("after");
            assert_eq!(notes(&state), all, "{spec}");
            assert_consistent(&env, "w");
            let leftovers: Vec<String> = files(&dir)
                .into_iter()
                .filter(|name| name.starts_with(".state.json.tmp-"))
                .collect();
            assert!(leftovers.is_empty(), "{spec}: {leftovers:?}");
        }
    }
}

#[test]
fn failpoints_are_refused_when_misspelled() {
    let env = TestEnv::new();
    started(&env, "w");
    let rendered = exits(
        &env,
        env.cmd()
            .args(["note", "x"])
            .env("CHECKPOINT_TEST_FAILPOINT", "renmae"),
        1,
    );
    assert!(
        rendered.contains("journal_append, journal_fsync"),
        "{rendered}"
    );
    assert_eq!(notes(&env.state("w")), Vec::<String>::new());
}

// Concurrency.

#[test]
fn eight_writers_lose_nothing_and_keep_the_journal_ordered() {
    let per_writer: usize = if long() { 1000 } else { 250 };
    let env = TestEnv::new();
    started(&env, "w");
    let started_at = Instant::now();
    let writers: Vec<_> = (0..8)
        .map(|writer| {
            let cmd = env.cmd();
            thread::spawn(move || {
                for i in 0..per_writer {
                    let task = format!("k{writer}-{}", i - i % 5);
                    let text = format!("w{writer} {i}");
                    let args: Vec<&str> = match i % 5 {
                        0 => vec!["task", "add", "design", &task],
                        1 => vec!["task", "start", "design", &task],
                        2 => vec!["task", "done", "design", &task],
                        3 => vec!["progress", "design", &text],
                        _ => vec!["note", &text],
                    };
                    let output = support::copy(&cmd)
                        .args(&args)
                        .env("CHECKPOINT_LOCK_TIMEOUT", "120")
                        .output()
                        .unwrap();
                    assert!(
                        output.status.success(),
                        "writer {writer}, `{args:?}`: {}",
                        String::from_utf8_lossy(&output.stderr)
                    );
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let elapsed = started_at.elapsed();

    let total = 8 * per_writer as u64 + 2;
    let journal = journal(&env, "w");
    let seqs: Vec<u64> = journal.iter().map(|(seq, _)| *seq).collect();
    assert_eq!(seqs, (1..=total).collect::<Vec<_>>(), "seq 1..N, each once");
    let state = env.state("w");
    assert_eq!(state["seq"], total);
    assert_consistent(&env, "w");
    // Each writer's transitions appear in the order it ran them, and none is missing.
    for writer in 0..8 {
        let mine: Vec<String> = journal
            .iter()
            .filter_map(|(_, transition)| match transition {
                Transition::PhaseProgress { note: text, .. } | Transition::Note { text } => {
                    Some(text.clone())
                }
                _ => None,
            })
            .filter(|text| text.starts_with(&format!("w{writer} ")))
            .collect();
        let expected: Vec<String> = (0..per_writer)
            .filter(|i| i % 5 >= 3)
            .map(|i| format!("w{writer} {i}"))
            .collect();
        assert_eq!(mine, expected, "writer {writer}");
    }
    let tasks = state["phases"][0]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 8 * per_writer.div_ceil(5));
    assert!(
        tasks.iter().all(|task| task["status"] == "done"),
        "{tasks:?}"
    );
    let names = files(&env.workflow_dir("w"));
    assert_eq!(
        names,
        ["journal.jsonl", "lock", "state.json", "state.json.bak"],
        "no torn line, temp file or corrupt state was left"
    );
    println!(
        "concurrency: 8 writers × {per_writer} transitions = {} in {elapsed:.1?}",
        8 * per_writer
    );
}

/// Two different commands race: `complete` and `progress` on the same phase. Progress lands
/// before the completion (both succeed) or is refused after it (exit 3); it is never lost once
/// acknowledged, and never recorded once refused.
#[test]
fn two_different_commands_racing_are_serialized() {
    let rounds = if long() { 200 } else { 40 };
    let env = TestEnv::new();
    let (mut progress_first, mut complete_first) = (0, 0);
    for round in 0..rounds {
        let id = format!("r{round}");
        started(&env, &id);
        let spawn = |args: &[&str]| {
            env.cmd()
                .args(["--workflow", &id])
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let complete = spawn(&["complete", "design"]);
        let progress = spawn(&["progress", "design", "late"]);
        let complete = complete.wait_with_output().unwrap();
        let progress = progress.wait_with_output().unwrap();
        assert!(complete.status.success(), "{complete:?}");
        let journal = journal(&env, &id);
        let position = |op: &str| journal.iter().position(|(_, t)| t.op() == op);
        let state = env.state(&id);
        match progress.status.code() {
            Some(0) => {
                progress_first += 1;
                assert!(position("phase_progress") < position("phase_complete"));
                assert_eq!(state["phases"][0]["progress"], "late");
            }
            Some(3) => {
                complete_first += 1;
                assert_eq!(position("phase_progress"), None);
                assert_eq!(state["phases"][0].get("progress"), None);
                let stderr = String::from_utf8_lossy(&progress.stderr);
                assert!(stderr.contains("is complete, not in progress"), "{stderr}");
            }
            _ => panic!("{progress:?}"),
        }
        assert_eq!(state["phases"][0]["status"], "complete");
        assert_consistent(&env, &id);
    }
    println!(
        "race: {rounds} rounds, progress first {progress_first}, complete first {complete_first}"
    );
}

#[test]
fn hooks_and_commands_racing_are_serialized() {
    let rounds = if long() { 100 } else { 20 };
    let env = TestEnv::new();
    for round in 0..rounds {
        let id = format!("h{round}");
        started(&env, &id);
        let base =
            serde_json::json!({"session_id": "s", "transcript_path": "/t", "cwd": env.project()});
        let mut stop = base.clone();
        stop["hook_event_name"] = "Stop".into();
        let mut failure = base.clone();
        failure["hook_event_name"] = "PostToolUseFailure".into();
        failure["tool_name"] = "Bash".into();
        failure["error"] = format!("Exit code {round}").into();
        let hooks = [
            env.hook("Stop", &stop.to_string()),
            env.hook("PostToolUseFailure", &failure.to_string()),
        ];
        let progress = env
            .cmd()
            .args([
                "--workflow",
                &id,
                "progress",
                "design",
                &format!("note {round}"),
            ])
            .output()
            .unwrap();
        assert!(progress.status.success(), "{progress:?}");
        for hook in hooks {
            let (code, _, stderr) = hook.wait();
            assert_eq!(code, 0, "{stderr}");
        }
        // With several workflows the hooks touch every unfinished one; this round's must have all three.
        let ops: Vec<&str> = journal(&env, &id).iter().map(|(_, t)| t.op()).collect();
        for op in ["heartbeat", "tool_failure", "phase_progress"] {
            assert!(ops.contains(&op), "round {round}: {ops:?}");
        }
        let state = env.state(&id);
        assert_eq!(state["phases"][0]["progress"], format!("note {round}"));
        assert_consistent(&env, &id);
    }
}

#[test]
fn secrets_in_hook_payloads_never_reach_the_disk() {
    let env = TestEnv::new();
    started(&env, "w");
    let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH";
    let failure = serde_json::json!({
        "session_id": "s", "transcript_path": "/t", "cwd": env.project(),
        "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
        "error": format!("curl failed: Authorization: Bearer {key}"),
    });
    let (code, _, _) = env.hook("PostToolUseFailure", &failure.to_string()).wait();
    assert_eq!(code, 0);
    for file in ["state.json", "journal.jsonl"] {
        let text = env.read("w", file);
        assert!(
            !text.contains(key) && !text.contains("abcdefghijklmnop"),
            "{file}: {text}"
        );
        assert!(text.contains("[REDACTED"), "{file}");
    }
}

// Hostile and broken input.

#[test]
fn hostile_workflow_ids_are_refused_before_touching_the_disk() {
    let env = TestEnv::new();
    let huge = "a".repeat(100_000);
    for id in [
        "../escape",
        "../../../../tmp/x",
        "/etc",
        "a/b",
        "..",
        ".archive",
        "a\u{1}b",
        huge.as_str(),
    ] {
        for args in [
            &["init", id, "--phase", "a"][..],
            &["--workflow", id, "status"],
            &["--workflow", id, "note", "x"],
        ] {
            let rendered = run_exits(&env, args, 2);
            assert!(rendered.contains("invalid workflow id"), "{rendered:.300}");
            assert!(
                rendered.len() < 1000,
                "the error stays short: {rendered:.300}"
            );
        }
    }
    // A NUL byte cannot even reach the command line (the core refuses it too: `id.rs`).
    assert!(env.cmd().args(["init", "a\0b"]).output().is_err());
    assert_eq!(files(&env.project()), [".git"], "nothing was created");
    assert_eq!(files(env.dir.path()), ["home", "project"]);
}

#[cfg(unix)]
#[test]
fn symlinked_journal_lock_and_backup_are_never_written_through() {
    let env = TestEnv::new();
    started(&env, "w");
    let dir = env.workflow_dir("w");
    for file in ["journal.jsonl", "lock"] {
        let outside = env.dir.path().join(format!("outside-{file}"));
        fs::rename(dir.join(file), &outside).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join(file)).unwrap();
        let before = fs::read(&outside).unwrap();
        for args in [&["note", "x"][..], &["status"]] {
            // A read takes no lock.
            let reads_the_lock = !(file == "lock" && args == ["status"]);
            let rendered = run_exits(&env, args, if reads_the_lock { 6 } else { 0 });
            assert_eq!(
                rendered.contains("it is a symbolic link"),
                reads_the_lock,
                "{rendered}"
            );
        }
        assert_eq!(fs::read(&outside).unwrap(), before, "{file}");
        fs::remove_file(dir.join(file)).unwrap();
        fs::rename(&outside, dir.join(file)).unwrap();
    }
    // The backup is replaced, never written through.
    let outside = env.dir.path().join("outside-backup");
    fs::write(&outside, "mine").unwrap();
    fs::remove_file(dir.join("state.json.bak")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("state.json.bak")).unwrap();
    env.ok(&["note", "x"]);
    assert_eq!(fs::read_to_string(&outside).unwrap(), "mine");
    assert!(
        !fs::symlink_metadata(dir.join("state.json.bak"))
            .unwrap()
            .is_symlink()
    );
    assert_consistent(&env, "w");
}

#[cfg(unix)]
#[test]
fn a_100_mb_state_file_is_refused_in_bounded_memory() {
    let env = TestEnv::new();
    started(&env, "w");
    let path = env.workflow_dir("w").join("state.json");
    let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(100 * 1024 * 1024).unwrap();
    // With at most 96 MiB of address space, reading the file whole would abort the process.
    for args in ["status", "note x"] {
        let mut shell = Command::new("sh");
        shell
            .arg("-c")
            .arg(format!("ulimit -v 98304 && exec \"$0\" {args}"))
            .arg(support::bin())
            .env_clear()
            .envs(env.cmd().get_envs().filter_map(|(k, v)| Some((k, v?))))
            .current_dir(env.project());
        let rendered = exits(&env, &mut shell, 6);
        assert!(
            rendered.contains("104857600 bytes is over the limit of 67108864 bytes"),
            "{rendered}"
        );
    }
    assert_eq!(fs::metadata(&path).unwrap().len(), 100 * 1024 * 1024);
}

#[test]
fn deeply_nested_json_is_a_clear_error_and_is_kept() {
    let env = TestEnv::new();
    started(&env, "w");
    let dir = env.workflow_dir("w");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));

    // In the journal: refused, untouched.
    let journal_path = dir.join("journal.jsonl");
    let journal_before = fs::read(&journal_path).unwrap();
    let mut bad = journal_before.clone();
    bad.extend_from_slice(
        format!(
            "{{\"seq\":3,\"at\":\"2026-03-01T12:00:00Z\",\"transition\":{{\"op\":\"note\",\"text\":\"x\",\"deep\":{deep}}}}}\n"
        )
        .as_bytes(),
    );
    fs::write(&journal_path, &bad).unwrap();
    for args in [&["status"][..], &["note", "x"]] {
        let rendered = run_exits(&env, args, 6);
        assert!(
            rendered.contains("recursion limit exceeded"),
            "{rendered:.2000}"
        );
    }
    assert_eq!(fs::read(&journal_path).unwrap(), bad);
    fs::write(&journal_path, &journal_before).unwrap();

    // In the state, with a journal: rebuilt, and the bad file kept.
    let nested = format!("{{\"schema_version\":1,\"extensions\":{{\"deep\":{deep}}}}}");
    fs::write(dir.join("state.json"), &nested).unwrap();
    env.ok(&["note", "rebuilt"]);
    assert_eq!(notes(&env.state("w")), ["rebuilt"]);
    let kept: Vec<String> = files(&dir)
        .into_iter()
        .filter(|name| name.starts_with("state.json.corrupt-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(fs::read_to_string(dir.join(&kept[0])).unwrap(), nested);

    // In the state, without history: refused, untouched.
    for file in ["journal.jsonl", "state.json.bak"] {
        fs::remove_file(dir.join(file)).unwrap();
    }
    fs::write(dir.join("state.json"), &nested).unwrap();
    let rendered = run_exits(&env, &["note", "x"], 6);
    assert!(
        rendered.contains("recursion limit exceeded"),
        "{rendered:.2000}"
    );
    assert_eq!(fs::read_to_string(dir.join("state.json")).unwrap(), nested);
}

#[test]
fn invalid_utf8_is_a_clear_error_and_nothing_is_lost() {
    let env = TestEnv::new();
    started(&env, "w");
    let dir = env.workflow_dir("w");

    // On the command line: refused before anything is read.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let journal = env.read("w", "journal.jsonl");
        let rendered = exits(
            &env,
            env.cmd()
                .arg("note")
                .arg(std::ffi::OsStr::from_bytes(b"caf\xe9")),
            2,
        );
        assert!(rendered.contains("invalid UTF-8"), "{rendered}");
        assert_eq!(env.read("w", "journal.jsonl"), journal);
    }

    // In the state: rebuilt from the journal, the bad file kept.
    let mut state = fs::read(dir.join("state.json")).unwrap();
    let at = state.windows(6).position(|w| w == b"design").unwrap();
    state[at] = 0xff;
    fs::write(dir.join("state.json"), &state).unwrap();
    run_exits(&env, &["status"], 0);
    env.ok(&["note", "after"]);
    assert_eq!(notes(&env.state("w")), ["after"]);
    assert_consistent(&env, "w");

    // Without history: refused, untouched.
    for file in ["journal.jsonl", "state.json.bak"] {
        fs::remove_file(dir.join(file)).unwrap();
    }
    fs::write(dir.join("state.json"), &state).unwrap();
    let rendered = run_exits(&env, &["note", "x"], 6);
    assert!(rendered.contains("failed to load"), "{rendered}");
    assert_eq!(fs::read(dir.join("state.json")).unwrap(), state);
}

#[test]
fn a_journal_truncated_before_the_state_loses_nothing() {
    let env = TestEnv::new();
    started(&env, "w");
    for n in 0..3 {
        env.ok(&["note", &format!("n{n}")]);
    }
    let path = env.workflow_dir("w").join("journal.jsonl");
    let journal = env.read("w", "journal.jsonl");
    let keep: String = journal
        .lines()
        .take(2)
        .map(|line| format!("{line}\n"))
        .collect();
    fs::write(&path, format!("{keep}{{\"seq\":3,\"at\"")).unwrap();
    let rendered = run_exits(&env, &["status"], 0);
    assert!(
        rendered.contains("the journal ends at entry 2 but the state is at 5"),
        "{rendered}"
    );
    env.ok(&["note", "after"]);
    assert_eq!(notes(&env.state("w")), ["n0", "n1", "n2", "after"]);
    // The short journal is kept aside, and the new one starts from the state, so the history
    // that remains replays to the state with no gap in its numbering.
    let dir = env.workflow_dir("w");
    let kept: Vec<String> = files(&dir)
        .into_iter()
        .filter(|name| name.starts_with("journal.jsonl.behind-"))
        .collect();
    assert_eq!(kept.len(), 1, "{:?}", files(&dir));
    assert_eq!(
        fs::read_to_string(dir.join(&kept[0])).unwrap(),
        format!("{keep}{{\"seq\":3,\"at\"")
    );
    let ops: Vec<&str> = crate::durability::journal(&env, "w")
        .iter()
        .map(|(_, t)| t.op())
        .collect();
    assert_eq!(ops, ["snapshot", "note"]);
    assert_consistent(&env, "w");
    env.ok(&["validate"]);
}

/// Undoes `chattr +i` even when the test fails, so that the temporary directory can be removed.
struct Immutable(PathBuf);

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

#[cfg(unix)]
#[test]
fn an_unwritable_checkpoint_directory_is_a_clean_error() {
    use std::os::unix::fs::PermissionsExt;

    let env = TestEnv::new();
    started(&env, "w");
    let dir = env.workflow_dir("w");

    // A directory that refuses new files: `chattr +i` (root ignores permission bits), else 0500.
    let is_root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let guard = if is_root {
        let immutable = Command::new("chattr")
            .arg("+i")
            .arg(&dir)
            .status()
            .is_ok_and(|status| status.success());
        if immutable {
            Some(Immutable(dir.clone()))
        } else {
            println!(
                "skipped the read-only directory case: running as root and `chattr +i` is not available here"
            );
            None
        }
    } else {
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o500)).unwrap();
        None
    };
    if guard.is_some() || !is_root {
        // The journal (an existing file) took the note; the new state file could not be made.
        let rendered = run_exits(&env, &["note", "blocked"], 7);
        assert!(rendered.contains("it may have been saved"), "{rendered}");
        drop(guard);
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(notes(&status(&env, "w")["workflow"]), ["blocked"]);
        env.ok(&["note", "after"]);
        assert_eq!(notes(&env.state("w")), ["blocked", "after"]);
    }

    // A workflow directory replaced by a file: refused before anything is written.
    let aside = env.dir.path().join("aside");
    fs::rename(&dir, &aside).unwrap();
    fs::write(&dir, "not a directory").unwrap();
    for args in [
        &["--workflow", "w", "note", "x"][..],
        &["--workflow", "w", "status"],
    ] {
        let rendered = run_exits(&env, args, 1);
        assert!(rendered.contains("Not a directory"), "{rendered}");
    }
    assert_eq!(fs::read_to_string(&dir).unwrap(), "not a directory");
}

/// Unmounts a tmpfs even when the test fails.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[cfg(unix)]
#[test]
fn a_full_disk_is_a_clean_error_and_loses_nothing() {
    // The failpoints inject ENOSPC at every step (see above); this is the real thing, where a
    // small tmpfs can be mounted.
    let env = TestEnv::new();
    let small = env.dir.path().join("small");
    fs::create_dir(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=512k", "tmpfs"])
        .arg(&small)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !mounted {
        println!(
            "skipped the real full disk: no tmpfs can be mounted here (the ENOSPC failpoints still ran)"
        );
        return;
    }
    let _mount = Mount(small.clone());
    let store = small.join("checkpoints");
    let run = |args: &[&str]| -> Output {
        env.cmd()
            .arg("--dir")
            .arg(&store)
            .args(args)
            .output()
            .unwrap()
    };
    assert!(run(&["init", "w", "--phase", "a"]).status.success());
    assert!(run(&["note", "before"]).status.success());
    assert!(run(&["start", "a"]).status.success());
    // Fill the disk.
    let mut filler = fs::File::create(small.join("filler")).unwrap();
    let chunk = vec![b'x'; 4096];
    while std::io::Write::write_all(&mut filler, &chunk).is_ok() {}
    drop(filler);
    let mut acknowledged = vec!["before".to_owned()];
    let mut full = 0;
    for n in 0..20 {
        let text = format!("n{n}-{}", "x".repeat(200));
        let output = run(&["note", &text]);
        match output.status.code() {
            Some(0) => acknowledged.push(text),
            // 7 once the journal append began, 1 before (moving a torn line aside failed).
            Some(1 | 7) => {
                full += 1;
                let stderr = String::from_utf8_lossy(&output.stderr);
                assert!(stderr.contains("No space left on device"), "{stderr}");
            }
            _ => panic!("{}", render(&env, &output)),
        }
    }
    assert!(full > 0, "the disk never filled");
    // Hooks on the full disk: each warns naming the cause and exits 0, and a failed append
    // that left nothing moves nothing aside (no `journal.jsonl.torn-*` file, empty or not).
    for n in 0..30 {
        let payload = serde_json::json!({"session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": env.project(), "hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": {"file_path": format!("docs/f{n}-{}.md", "y".repeat(200)), "content": "x"}});
        let mut child = env
            .cmd()
            .arg("--dir")
            .arg(&store)
            .args(["hook", "PostToolUse"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(
            &mut child.stdin.take().unwrap(),
            payload.to_string().as_bytes(),
        )
        .unwrap();
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("No space left on device"),
            "hook {n}: {stderr}"
        );
    }
    let aside: Vec<String> = fs::read_dir(store.join("w"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".torn-") || name.contains(".tmp"))
        .collect();
    assert_eq!(
        aside,
        Vec::<String>::new(),
        "nothing torn was left or moved aside"
    );
    fs::remove_file(small.join("filler")).unwrap();
    let output = run(&["--format", "json", "status"]);
    assert!(output.status.success(), "{}", render(&env, &output));
    let state: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let loaded = notes(&state["workflow"]);
    for text in &acknowledged {
        assert!(loaded.contains(text), "lost {text:.10}");
    }
    assert!(run(&["note", "after"]).status.success());
}

// Secrets.

#[test]
fn secrets_in_notes_never_reach_the_disk() {
    let env = TestEnv::new();
    let rendered = render(&env, &record_secret_samples(&env));
    assert!(
        rendered.contains("warning: 2 secrets were redacted before saving"),
        "{rendered}"
    );
    let state = env.state("w");
    assert_eq!(
        notes(&state),
        ["use [REDACTED:api-key] with [REDACTED:aws-key]"]
    );
    assert_eq!(
        state["phases"][0]["progress"],
        "export GITHUB_TOKEN=[REDACTED:secret]; curl -H 'Authorization: Bearer [REDACTED:bearer-token]'; mysql password=[REDACTED:secret]; Server=x;uid=etl;pwd=[REDACTED:secret];Encrypt=yes; xxxx[REDACTED:github-token]"
    );
    let dir = env.workflow_dir("w");
    for name in files(&dir) {
        let text = String::from_utf8_lossy(&fs::read(dir.join(&name)).unwrap()).into_owned();
        for secret in SECRET_SAMPLES {
            assert!(!text.contains(secret), "{secret} reached {name}");
        }
    }
    assert_consistent(&env, "w");
}

/// What a write at work shows a reader that takes no lock, each kind of it: the journal appended
/// before the state is replaced, a temporary state file before its rename, a line half appended.
fn leave_a_write_halfway(env: &TestEnv, kind: &str) {
    let dir = env.workflow_dir("w");
    match kind {
        "lag" => {
            let state = fs::read(dir.join("state.json")).unwrap();
            env.ok(&["progress", "a", "halfway"]);
            fs::write(dir.join("state.json"), state).unwrap();
        }
        "temp" => fs::write(dir.join(".state.json.tmp-abc123"), b"{").unwrap(),
        "torn" => {
            let mut journal = fs::read(dir.join("journal.jsonl")).unwrap();
            journal.extend_from_slice(br#"{"seq":99,"at":"2026-03-01T12:00:00Z","trans"#);
            fs::write(dir.join("journal.jsonl"), journal).unwrap();
        }
        _ => unreachable!(),
    }
}

#[test]
fn a_write_at_work_is_not_reported_as_interrupted_and_one_left_behind_is() {
    for kind in ["lag", "temp", "torn"] {
        let env = TestEnv::new();
        env.ok(&["init", "w", "--phase", "a"]);
        env.ok(&["start", "a"]);
        leave_a_write_halfway(&env, kind);
        // A writer holds the lock all the while the readers run.
        let lock = fs::File::open(env.workflow_dir("w").join("lock")).unwrap();
        lock.lock().unwrap();
        for args in [
            &["status"][..],
            &["--format", "json", "status"],
            &["resume", "--dry-run"],
        ] {
            let output = env.run(args);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(output.status.success(), "{kind} {args:?}: {stderr}");
            assert!(
                !stderr.contains("interrupted") && !stderr.contains("warning"),
                "{kind} {args:?}: a write at work is not an interrupted one: {stderr}"
            );
        }
        if kind == "lag" {
            // The reader sees the journal's latest entry all the same.
            assert!(env.ok(&["status"]).contains("halfway"));
        }
        lock.unlock().unwrap();
        // The same files with the lock free were left by a write that did not finish.
        let output = env.run(&["status"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("warning")
                && (stderr.contains("interrupted") || stderr.contains("temporary")),
            "{kind}: {stderr}"
        );
    }
}
