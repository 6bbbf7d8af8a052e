//! Files and paths that come from outside: every path that reaches the store stays inside the
//! project, and files of others that are not regular files are refused, never waited on.

use std::fs;

use crate::support::{TestEnv, finish_guarded, render};

/// Runs `checkpoint` with `args`, giving up (and killing it) after a generous patience: a
/// guard against a hang, not a timing goal. Returns (exit code, stderr), `None` when it hung.
fn run_guarded(env: &TestEnv, args: &[&str]) -> Option<(i32, String)> {
    let child = env
        .cmd()
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    finish_guarded(child)
}

/// A plan or a seed file that is a FIFO, a device, a link to a device or a directory is
/// refused at once with an error naming it; nothing waits on it, reads it without end, or is
/// created.
#[test]
fn files_of_others_that_are_not_regular_files_are_refused_never_waited_on() {
    let env = TestEnv::new();
    let project = env.project();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(project.join("fifo.json"))
            .status()
            .unwrap()
            .success()
    );
    std::os::unix::fs::symlink("/dev/zero", project.join("zero.json")).unwrap();
    fs::create_dir(project.join("dir.toml")).unwrap();
    for path in ["fifo.json", "zero.json", "/dev/zero", "dir.toml"] {
        let cases: [&[&str]; 3] = [
            &["init", "w", "--plan", path],
            &["import", path, "--from", "orchestkit"],
            &["import", path],
        ];
        for args in cases {
            let Some((code, stderr)) = run_guarded(&env, args) else {
                panic!("`{}` hung", args.join(" "));
            };
            assert_ne!(code, 0, "{args:?}: {stderr}");
            let name = path.trim_end_matches(".json").trim_end_matches(".toml");
            assert!(stderr.contains(name), "{args:?}: {stderr}");
        }
    }
    assert!(!env.workflow_dir("w").exists(), "nothing was created");
    // The FIFO of a settings file does not hang a command either.
    fs::create_dir_all(env.store()).unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(env.store().join("config.toml"))
            .status()
            .unwrap()
            .success()
    );
    let Some((_, stderr)) = run_guarded(&env, &["list"]) else {
        panic!("`list` hung on a FIFO `config.toml`");
    };
    assert!(stderr.contains("config.toml"), "{stderr}");
}

/// Every path that reaches the store is checked by the same rule (no `..`, nothing outside the
/// project, no link leading out): task outputs and context files from the CLI (which the MCP
/// tools run), artifacts, and the outputs of an imported file; and no file outside the project
/// completes a phase or a task through the hook or the planner.
#[test]
fn paths_outside_the_project_never_reach_the_store_nor_complete_work() {
    let env = TestEnv::new();
    let project = env.project();
    let elsewhere = env.dir.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::write(elsewhere.join("a.md"), "not the project's").unwrap();
    fs::create_dir_all(project.join("out")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, project.join("linked")).unwrap();
    fs::write(
        project.join("plan.json"),
        r#"{"phases": [{"id": "a", "outputs": ["out/a.md"]}, {"id": "b", "dependencies": ["a"]}]}"#,
    )
    .unwrap();
    env.ok(&["init", "w", "--plan", "plan.json"]);
    env.ok(&["start", "a"]);
    let before = env.read("w", "journal.jsonl");
    let outside = [
        "/etc/passwd",
        "../../../etc/hostname",
        "out/../../x",
        "linked/a.md",
        elsewhere.join("a.md").to_str().unwrap(),
    ]
    .map(str::to_owned);
    for path in &outside {
        for args in [
            vec!["task", "add", "a", "t3", "--output", path],
            vec!["task", "done", "a", "t3", "--output", path],
            vec!["files", path],
            vec!["complete", "a", "--artifact", path],
        ] {
            let output = env.run(&args);
            assert_eq!(
                output.status.code(),
                Some(2),
                "{args:?}: {}",
                render(&env, &output)
            );
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(stderr.contains("outside the project"), "{args:?}: {stderr}");
        }
    }
    assert_eq!(env.read("w", "journal.jsonl"), before, "nothing was stored");
    env.ok(&["files", "src/main.rs"]);
    assert_eq!(env.state("w")["context"]["file_paths"][0], "src/main.rs");

    // A declared output, and a task's, reached through a link leading out of the project.
    std::os::unix::fs::symlink(elsewhere.join("a.md"), project.join("out/a.md")).unwrap();
    let write = serde_json::json!({
        "session_id": "s",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": project,
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": project.join("out/a.md"), "content": "x"},
        "tool_response": {"type": "create"},
    });
    assert_eq!(env.hook("PostToolUse", &write.to_string()).wait().0, 0);
    let state = env.state("w");
    assert_eq!(state["phases"][0]["status"], "in_progress", "{state:#}");
    let plan = env.json(&["resume", "--dry-run"]);
    assert_eq!(
        plan["plan"]["recoveries"],
        serde_json::json!([]),
        "{plan:#}"
    );
    env.ok(&["task", "add", "a", "t1", "--output", "out/t1.md"]);
    env.ok(&["task", "start", "a", "t1"]);
    std::os::unix::fs::symlink(elsewhere.join("a.md"), project.join("out/t1.md")).unwrap();
    env.set_now("2026-03-01T18:00:00Z");
    let plan = env.json(&["resume", "--dry-run"]);
    let codes: Vec<&str> = plan["plan"]["recoveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|recovery| recovery["code"].as_str().unwrap())
        .collect();
    assert!(
        !codes.contains(&"phase_output_present") && !codes.contains(&"task_output_present"),
        "{plan:#}"
    );

    // An imported file whose task names an output outside the project is refused whole.
    let other = TestEnv::new();
    let state_dir = other.project().join("memory/state");
    fs::create_dir_all(&state_dir).unwrap();
    fs::write(
        state_dir.join("phase.json"),
        r#"{"workflow_id": "wf", "current_phase": "IMPLEMENTATION", "phase_status": "in_progress"}"#,
    )
    .unwrap();
    for output in ["/etc/passwd", "../../etc/hostname"] {
        fs::write(
            state_dir.join("execution.json"),
            serde_json::json!({"tasks": [{"id": "t1", "status": "running", "output": output}]})
                .to_string(),
        )
        .unwrap();
        let result = other.run(&["import", "."]);
        assert_eq!(result.status.code(), Some(2), "{}", render(&other, &result));
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert!(
            stderr.contains("outside the project") && stderr.contains("phase.json"),
            "{stderr}"
        );
        assert!(!other.workflow_dir("wf").exists());
    }
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

/// One rule for every client's write hooks, as for `checkpoint files`: a file written outside
/// the project (absolute elsewhere, up with `..`, through a link out) by Claude Code's `Write`,
/// Codex's `apply_patch` or Gemini CLI's `write_file` and `replace` never reaches the store's
/// files (nor, through them, a resume prompt); a file inside still does.
#[cfg(unix)]
#[test]
fn every_clients_write_hooks_keep_paths_outside_the_project_out_of_the_store() {
    let env = TestEnv::new();
    let project = env.project();
    let elsewhere = env.dir.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, project.join("linked")).unwrap();
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&["start", "a"]);
    let before = env.read("w", "journal.jsonl");
    let outside = [
        "/etc/passwd".to_owned(),
        "../../../../root/.bashrc".to_owned(),
        "linked/a.md".to_owned(),
        elsewhere.join("b.md").to_string_lossy().into_owned(),
    ];
    let base =
        serde_json::json!({"session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": project});
    let with = |extra: serde_json::Value| {
        let mut payload = base.clone();
        payload
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        payload.to_string()
    };
    for path in &outside {
        let calls = [
            (
                "claude",
                "PostToolUse",
                with(
                    serde_json::json!({"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": {"file_path": path, "content": "x"}, "tool_response": {"type": "create"}}),
                ),
            ),
            (
                "claude",
                "PostToolUse",
                with(
                    serde_json::json!({"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": path, "old_string": "a", "new_string": "b"}}),
                ),
            ),
            (
                "codex",
                "PostToolUse",
                with(
                    serde_json::json!({"hook_event_name": "PostToolUse", "turn_id": "t", "tool_name": "apply_patch", "tool_input": {"command": format!("*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch\n")}, "tool_response": "Exit code: 0\nOutput:\nSuccess.\n", "tool_use_id": "c1"}),
                ),
            ),
            (
                "gemini",
                "AfterTool",
                with(
                    serde_json::json!({"hook_event_name": "AfterTool", "tool_name": "write_file", "tool_input": {"file_path": path, "content": "x"}}),
                ),
            ),
            (
                "gemini",
                "AfterTool",
                with(
                    serde_json::json!({"hook_event_name": "AfterTool", "tool_name": "replace", "tool_input": {"file_path": path, "old_string": "a", "new_string": "b"}}),
                ),
            ),
        ];
        for (client, event, payload) in calls {
            let (code, _, stderr) = env.client_hook(client, event, &payload).wait();
            assert_eq!(code, 0, "{client} {path}: {stderr}");
            assert_eq!(
                env.read("w", "journal.jsonl"),
                before,
                "{client} {event} {path}: nothing is stored"
            );
        }
    }
    let inside = with(
        serde_json::json!({"hook_event_name": "AfterTool", "tool_name": "write_file", "tool_input": {"file_path": "docs/in.md", "content": "x"}}),
    );
    assert_eq!(env.client_hook("gemini", "AfterTool", &inside).wait().0, 0);
    assert_eq!(
        env.state("w")["context"]["file_paths"],
        serde_json::json!(["docs/in.md"])
    );
}

/// A `TZ` naming a FIFO, a device or a directory (absolute, after `:`, or up from the zone
/// directory) is never read: the command warns, runs in UTC and finishes; a real zone name is
/// used without a word.
#[cfg(unix)]
#[test]
fn a_hostile_tz_is_never_read_and_the_command_runs_in_utc() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    let fifo = env.dir.path().join("tz-fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let fifo = fifo.to_str().unwrap().to_owned();
    for tz in [
        ":/dev/zero".to_owned(),
        "/dev/zero".to_owned(),
        fifo.clone(),
        format!(":{fifo}"),
        "../../../../dev/zero".to_owned(),
        "/tmp".to_owned(),
    ] {
        for args in [vec!["status"], vec!["run", "--dry-run"]] {
            let child = env
                .cmd()
                .args(&args)
                .env("TZ", &tz)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let (code, stderr) = finish_guarded(child).unwrap_or_else(|| panic!("{tz}: hung"));
            assert_eq!(code, 0, "{tz} {args:?}: {stderr}");
            assert!(stderr.contains("times are in UTC"), "{tz}: {stderr}");
        }
    }
    if std::path::Path::new("/usr/share/zoneinfo/Europe/Berlin").is_file() {
        let output = env
            .cmd()
            .arg("status")
            .env("TZ", "Europe/Berlin")
            .output()
            .unwrap();
        assert!(output.status.success());
        assert!(!String::from_utf8_lossy(&output.stderr).contains("UTC"));
    }
}
