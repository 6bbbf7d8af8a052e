//! The JSON contract: one snapshot per `--format json` document, byte for byte, from a workflow
//! that fills as many of its fields as the commands can (sub-agents, findings, recoveries,
//! warnings, another system's file), so that any change to a document shows in a snapshot.

use serde_json::{Value, json};

use crate::support::TestEnv;

const SESSION: &str = "11111111-2222-3333-4444-555555555555";

/// Runs `checkpoint --format json <args>`; returns the exit status, stdout (the document) and
/// stderr (where an error's document goes), with the temporary directory as `[TEMP]`.
#[track_caller]
fn document(env: &TestEnv, args: &[&str]) -> String {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let output = env.run(&all);
    let temp = env.dir.path().display().to_string();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap().replace(&temp, "[TEMP]");
    let stderr = text(output.stderr);
    let stderr = if stderr.is_empty() {
        String::new()
    } else {
        format!("----- stderr -----\n{stderr}")
    };
    format!(
        "exit status: {}\n{}{stderr}",
        output.status.code().unwrap_or(-1),
        text(output.stdout),
    )
}

/// Runs hook `event` with a payload of the client's shape plus `extra`.
#[track_caller]
fn hook(env: &TestEnv, event: &str, extra: Value) {
    let mut payload = json!({
        "session_id": SESSION,
        "transcript_path": env.dir.path().join(format!("home/projects/{SESSION}.jsonl")),
        "cwd": env.project(),
        "hook_event_name": event,
    });
    payload
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let (code, _, stderr) = env.hook(event, &payload.to_string()).wait();
    assert_eq!(code, 0, "{stderr}");
}

/// Dispatches a sub-agent to `phase` as the client's `Agent` tool does.
fn dispatch(env: &TestEnv, call: &str, phase: &str) {
    hook(
        env,
        "PreToolUse",
        json!({
            "tool_name": "Agent",
            "tool_use_id": call,
            "tool_input": {
                "description": format!("Work on {phase}"),
                "prompt": format!("Do the work.\ncheckpoint phase: {phase}\n"),
                "subagent_type": "general-purpose",
            },
        }),
    );
}

/// Workflow `contract`, two hours after its work stopped: `a` done, `b` held by a sub-agent that was lost, `c` waiting for approval after both, `d`
/// after `c`; notes, a decision, files, and a torn last journal line.
fn interrupted(env: &TestEnv) {
    std::fs::write(
        env.project().join("plan.json"),
        r#"{"title": "Contract", "phases": [
            {"id": "a", "description": "Write a", "outputs": ["a.md"]},
            {"id": "b"},
            {"id": "c", "dependencies": ["a", "b"], "requires_approval": true},
            {"id": "d", "dependencies": ["c"]}
        ]}"#,
    )
    .unwrap();
    env.ok(&["init", "contract", "--plan", "plan.json"]);
    dispatch(env, "toolu_a", "a");
    dispatch(env, "toolu_b", "b");
    env.set_now("2026-03-01T12:10:00Z");
    env.ok(&["progress", "b", "half of b"]);
    std::fs::write(env.project().join("a.md"), "a\n").unwrap();
    env.ok(&[
        "complete",
        "a",
        "--artifact",
        "a.md",
        "--commit-sha",
        "abc1234",
    ]);
    env.ok(&["note", "remember the API limit"]);
    env.ok(&["decide", "use sqlite"]);
    env.ok(&["files", "a.md"]);
    let journal = env.workflow_dir("contract").join("journal.jsonl");
    let mut text = std::fs::read_to_string(&journal).unwrap();
    text.push_str(r#"{"seq": 99, "at""#);
    std::fs::write(&journal, text).unwrap();
    env.set_now("2026-03-01T14:10:00Z");
}

#[test]
fn the_documents_of_one_workflow() {
    let env = TestEnv::new();
    std::fs::write(
        env.project().join("plan.json"),
        r#"{"phases": [{"id": "x"}]}"#,
    )
    .unwrap();
    insta::assert_snapshot!(
        "init",
        document(&env, &["init", "first", "--plan", "plan.json"])
    );
    insta::assert_snapshot!("start", document(&env, &["start", "x"]));
    insta::assert_snapshot!("error", document(&env, &["start", "nope"]));
    insta::assert_snapshot!("complete", document(&env, &["complete", "x"]));
    insta::assert_snapshot!("archive", document(&env, &["archive"]));
    insta::assert_snapshot!("gc", document(&env, &["gc", "--dry-run"]));
    env.set_now("2026-04-01T12:00:00Z");
    insta::assert_snapshot!("gc_doomed", document(&env, &["gc", "--dry-run"]));
    insta::assert_snapshot!(
        "restore",
        document(&env, &["restore", "first_20260301_120000"])
    );
}

#[test]
fn the_documents_of_an_interrupted_workflow() {
    let env = TestEnv::new();
    interrupted(&env);
    insta::assert_snapshot!("resume_dry_run", document(&env, &["resume", "--dry-run"]));
    insta::assert_snapshot!(
        "run_dry_run",
        document(&env, &["run", "--dry-run", "--claude", "claude"])
    );
    insta::assert_snapshot!("status", document(&env, &["status"]));
    insta::assert_snapshot!("show", document(&env, &["show"]));
    std::fs::remove_file(env.project().join("a.md")).unwrap();
    insta::assert_snapshot!("validate", document(&env, &["validate"]));
    insta::assert_snapshot!(
        "resume_dry_run_findings",
        document(&env, &["resume", "--dry-run"])
    );
    insta::assert_snapshot!("log", document(&env, &["log"]));
    insta::assert_snapshot!("diff", document(&env, &["diff", "1"]));
    insta::assert_snapshot!("graph", document(&env, &["graph"]));
    insta::assert_snapshot!("list", document(&env, &["list"]));
    insta::assert_snapshot!("report", document(&env, &["report"]));
    insta::assert_snapshot!("watch", document(&env, &["watch", "--once"]));
    insta::assert_snapshot!(
        "export",
        document(
            &env,
            &[
                "export",
                "--to",
                "checkpoint-recovery",
                "--output",
                "exported.json"
            ]
        )
    );
    insta::assert_snapshot!(
        "resume_of_another_system",
        document(&env, &["resume", "exported.json"])
    );
    insta::assert_snapshot!(
        "import",
        document(&env, &["import", "exported.json", "--as", "copy"])
    );
    insta::assert_snapshot!("resume", document(&env, &["resume", "contract"]));
    insta::assert_snapshot!("rewind", document(&env, &["rewind", "2", "-w", "contract"]));
    insta::assert_snapshot!(
        "fork",
        document(&env, &["fork", "3", "--as", "forked", "-w", "contract"])
    );
    insta::assert_snapshot!(
        "resume_abandon",
        document(&env, &["resume", "contract", "--abandon"])
    );
}

/// Workflow `other`: `p` in progress with an interrupted task, `q` failed, `s` waiting for
/// approval, `r` ready, and a pause until 13:00.
fn paused(env: &TestEnv) {
    std::fs::write(
        env.project().join("plan.json"),
        r#"{"phases": [
            {"id": "p"}, {"id": "q"}, {"id": "r"}, {"id": "s", "requires_approval": true}
        ]}"#,
    )
    .unwrap();
    env.ok(&["init", "other", "--plan", "plan.json"]);
    env.ok(&[
        "task", "add", "p", "t1", "--title", "first", "--output", "t1.md",
    ]);
    env.ok(&["task", "add", "p", "t2", "--title", "second"]);
    env.ok(&["task", "start", "p", "t1"]);
    env.ok(&["task", "done", "p", "t1"]);
    env.ok(&["task", "start", "p", "t2"]);
    env.ok(&["start", "q"]);
    env.ok(&["fail", "q", "--reason", "it broke"]);
    env.ok(&["start", "s"]);
    env.ok(&["complete", "s"]);
    env.ok(&[
        "pause",
        "--reason",
        "rate_limit",
        "--until",
        "2026-03-01T13:00:00Z",
    ]);
}

#[test]
fn the_resume_plan_of_a_paused_workflow() {
    let env = TestEnv::new();
    paused(&env);
    insta::assert_snapshot!("resume_paused", document(&env, &["resume", "--dry-run"]));
    env.set_now("2026-03-01T14:00:00Z");
    insta::assert_snapshot!(
        "resume_after_pause",
        document(&env, &["resume", "--dry-run"])
    );
    insta::assert_snapshot!("status_after_pause", document(&env, &["status"]));
    env.ok(&["approve", "s"]);
    insta::assert_snapshot!(
        "resume_after_approval",
        document(&env, &["resume", "--dry-run"])
    );
}

#[test]
fn the_documents_of_sync() {
    let remote = crate::support::Remote::bare();
    let laptop = remote.clone();
    laptop.ok(&[
        "init", "demo", "--phase", "a", "--phase", "b", "--phase", "c",
    ]);
    laptop.ok(&["start", "a"]);
    insta::assert_snapshot!("push", document(&laptop, &["push"]));
    let other = remote.clone();
    insta::assert_snapshot!("pull", document(&other, &["pull", "-w", "demo"]));
    other.ok(&["start", "c"]);
    other.ok(&["push"]);
    laptop.ok(&["complete", "a"]);
    laptop.ok(&["start", "b"]);
    insta::assert_snapshot!("pull_diverged", document(&laptop, &["pull"]));
    insta::assert_snapshot!("sync_merge", document(&laptop, &["sync", "--merge"]));
}

/// The documents of `push --session` and `pull --session`: `sessions` holds what each did.
#[test]
fn the_documents_of_a_session_hand_off() {
    use crate::handoff::{SID, machine_a, machine_b};
    let remote = crate::support::Remote::bare();
    let a = machine_a(&remote);
    // The messages name temporary paths and this machine: the contract is the field.
    let shape = |env: &TestEnv, args: &[&str]| {
        let text = document(env, args);
        let (status, rest) = text.split_once('\n').unwrap();
        let json = rest.split("----- stderr -----").next().unwrap();
        let mut value: Value = serde_json::from_str(json).unwrap();
        let sessions = value["sessions"].as_array_mut().unwrap();
        assert_eq!(sessions.len(), 1, "{text}");
        sessions[0] = json!("[message]");
        for workflow in value["workflows"].as_array_mut().unwrap() {
            if workflow.get("commit").is_some() {
                workflow["commit"] = json!("[SHA]");
            }
        }
        format!("{status}\n{value:#}")
    };
    insta::assert_snapshot!(
        "push_session",
        shape(&a, &["push", "--session", SID, "--yes"])
    );
    let b = machine_b(&remote);
    insta::assert_snapshot!(
        "pull_session",
        shape(&b, &["pull", "-w", "demo", "--session"])
    );
}

/// The documents of the working tree's snapshots; commits (which carry the time git committed
/// them) are shown as `[SHA]`.
#[test]
fn the_documents_of_the_files() {
    let env = crate::support::repo();
    let root = env.project();
    env.ok(&["init", "files", "--phase", "build"]);
    env.ok(&["start", "build"]);
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    std::fs::write(root.join(".env"), "TOKEN=x\n").unwrap();
    let shas = |text: String| {
        text.split('"')
            .map(|part| {
                if part.len() == 40 && part.chars().all(|c| c.is_ascii_hexdigit()) {
                    "[SHA]"
                } else {
                    part
                }
            })
            .collect::<Vec<_>>()
            .join("\"")
    };
    insta::assert_snapshot!(
        "snapshot",
        shas(document(&env, &["snapshot", "-m", "first"]))
    );
    std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
    hook(&env, "Stop", json!({ "stop_hook_active": false }));
    insta::assert_snapshot!("snapshots", shas(document(&env, &["snapshots"])));
    insta::assert_snapshot!(
        "diff_files",
        shas(document(&env, &["diff", "--files", "@1", "@2"]))
    );
    std::fs::write(root.join("b.txt"), "mine\n").unwrap();
    // The files each phase and session changed (status, report), and those changed since the
    // last snapshot and by the phase in progress (resume).
    let status = env.json(&["status"]);
    assert_eq!(
        status["phases"][0]["files"],
        json!({ "changed": 1, "added": 2, "removed": 0, "paths": ["a.txt"] })
    );
    let report = env.json(&["report"]);
    assert_eq!(
        report["files_by_phase"],
        json!([{ "phase": "build", "changed": 1, "added": 2, "removed": 0 }])
    );
    assert_eq!(
        report["files_by_session"],
        json!([
            { "changed": 1, "added": 1, "removed": 0 },
            { "session": "11111111-2222-3333-4444-555555555555", "changed": 1, "added": 1, "removed": 0 }
        ])
    );
    insta::assert_snapshot!(
        "resume_files",
        shas(document(&env, &["resume", "--dry-run"]))
    );
    insta::assert_snapshot!(
        "undo_dry_run",
        shas(document(&env, &["undo", "--to", "@1", "--dry-run"]))
    );
    insta::assert_snapshot!(
        "undo",
        shas(document(&env, &["undo", "--to", "@1", "--yes"]))
    );
    insta::assert_snapshot!("redo", shas(document(&env, &["redo", "--yes"])));
}

/// `who`: a file's writers (the issue's document), and a file nobody wrote.
#[test]
fn the_document_of_who() {
    let env = crate::support::repo();
    env.ok(&["init", "writes", "--phase", "build"]);
    env.ok(&["start", "build"]);
    let path = env.project().join("a.txt");
    std::fs::write(&path, "one\n").unwrap();
    hook(
        &env,
        "PostToolUse",
        json!({"tool_name": "Write", "tool_input": {"file_path": path, "content": "one\n"},
               "tool_response": {"type": "create", "filePath": path, "content": "one\n", "structuredPatch": [], "originalFile": null}}),
    );
    insta::assert_snapshot!("who", document(&env, &["who", "a.txt", "b.txt"]));
}

/// `report` and `watch --once`: the files each session and sub-agent wrote (`writers`), and a
/// Bash command's overwrite of another session's change (`overwrites`, with its `undo`).
#[test]
fn the_documents_of_writers() {
    let env = crate::support::repo();
    env.ok(&["init", "writes", "--phase", "build"]);
    env.ok(&["start", "build"]);
    crate::support::git(&env.project(), &["add", "-A"]);
    let path = env.project().join("a.txt");
    std::fs::write(&path, "one\n").unwrap();
    hook(
        &env,
        "PostToolUse",
        json!({"tool_name": "Write", "tool_input": {"file_path": path, "content": "one\n"},
               "tool_response": {"type": "create", "filePath": path, "content": "one\n", "structuredPatch": [], "originalFile": null}}),
    );
    let command = "echo two > a.txt";
    let bash = |event: &str| {
        let payload = json!({
            "session_id": "s-two", "cwd": env.project(), "hook_event_name": event,
            "tool_name": "Bash", "tool_input": {"command": command},
            "tool_response": {"stdout": "", "stderr": "", "interrupted": false, "isImage": false},
        });
        let (code, _, stderr) = env.hook(event, &payload.to_string()).wait();
        assert_eq!(code, 0, "{stderr}");
    };
    bash("PreToolUse");
    std::fs::write(&path, "two\n").unwrap();
    bash("PostToolUse");
    insta::assert_snapshot!("report_writers", document(&env, &["report"]));
    // The watch's document holds the whole state (with a commit of this run): its parts here.
    let watch = env.json(&["watch", "--once"]);
    let parts = json!({"writers": watch["writers"], "overwrites": watch["overwrites"]});
    insta::assert_snapshot!(
        "watch_writers",
        serde_json::to_string_pretty(&parts).unwrap()
    );
}

/// Every dotted path the skills, the slash commands, the MCP tools' texts and the README mention in
/// backticks (`plan.next.command`), exists in a real document: renaming a field of the contract
/// breaks this test instead of every client.
#[test]
fn every_field_the_mcp_server_and_the_skills_name_exists() {
    let env = TestEnv::new();
    interrupted(&env);
    let mut documents = vec![env.json(&["status", "-w", "contract"])];
    documents.push(env.json(&["resume", "--dry-run", "-w", "contract"]));
    let other = TestEnv::new();
    paused(&other);
    other.set_now("2026-03-01T14:00:00Z");
    documents.push(other.json(&["resume", "--dry-run"]));
    documents.push(other.json(&["validate"]));

    let top_level: Vec<&str> = documents
        .iter()
        .flat_map(|document| document.as_object().unwrap().keys())
        .map(String::as_str)
        .collect();
    let mut named: Vec<(String, String)> = Vec::new();
    for file in texts() {
        let text = std::fs::read_to_string(&file).unwrap();
        for path in backticked_paths(&text, &top_level) {
            named.push((path, file.display().to_string()));
        }
    }
    for known in ["plan.next.command", "plan.next.action", "plan.recoveries"] {
        assert!(
            named.iter().any(|(path, _)| path == known),
            "no text names `{known}` any more: {named:?}"
        );
    }
    for (path, source) in &named {
        assert!(
            documents.iter().any(|document| exists(document, path)),
            "`{path}`, named in {source}, is in no JSON document: the contract changed (rename it \
             there too, or write the change in CHANGELOG.md)"
        );
    }
}

/// The MCP server reads documents through the contract's types (`checkpoint_contract::document`):
/// each real document it reads deserializes into its type, and the type serializes back into a
/// part of the same document, so a field renamed, retyped or moved breaks this test, not the
/// server. A failed command's error report and exit code are the contract's too.
#[test]
fn the_mcp_server_reads_the_documents_typed() {
    use checkpoint_contract::{
        diagnostic,
        document::{ErrorReport, Listing, Summary},
        exit_code,
    };
    let env = TestEnv::new();
    interrupted(&env);
    let other = TestEnv::new();
    paused(&other);
    other.set_now("2026-03-01T14:00:00Z");

    let status = env.json(&["status", "-w", "contract"]);
    let summary: Summary = serde_json::from_value(status.clone()).unwrap();
    let workflow = summary
        .workflow
        .as_ref()
        .expect("status carries its workflow");
    assert_eq!(
        (workflow.id.as_str(), workflow.phases.len()),
        ("contract", 4)
    );
    assert_part_of(&serde_json::to_value(&summary).unwrap(), &status);

    for (env, args) in [
        (&env, &["resume", "--dry-run", "-w", "contract"][..]),
        (&other, &["resume", "--dry-run"][..]),
    ] {
        let resume = env.json(args);
        let summary: Summary = serde_json::from_value(resume.clone()).unwrap();
        assert!(summary.plan.is_some(), "{resume}");
        assert_part_of(&serde_json::to_value(&summary).unwrap(), &resume);
    }
    // A document that names its workflow by id has no workflow to summarize.
    let validate: Summary = serde_json::from_value(other.json(&["validate"])).unwrap();
    assert_eq!(validate.workflow, None);

    let list = env.json(&["list"]);
    let listing: Listing = serde_json::from_value(list.clone()).unwrap();
    assert_eq!(listing.workflows[0].id, "contract");
    assert_part_of(&serde_json::to_value(&listing).unwrap(), &list);

    let failed = env.run(&["--format", "json", "status", "-w", "nowhere"]);
    let stderr = String::from_utf8(failed.stderr).unwrap();
    let last = stderr.lines().rev().find(|line| !line.trim().is_empty());
    let report: ErrorReport = serde_json::from_str(last.unwrap()).unwrap();
    assert_eq!(report.code.as_deref(), Some(diagnostic::STORE_NOT_FOUND));
    assert_eq!(
        failed.status.code(),
        Some(exit_code::of_diagnostic(diagnostic::STORE_NOT_FOUND).into())
    );
    assert_eq!(failed.status.code(), Some(exit_code::NOT_FOUND.into()));
}

/// Every failed command writes its error, typed, to the file `CHECKPOINT_ERROR_FILE` names,
/// whatever `--format` and whichever kind of error (clap's refusal of the command line, invalid
/// input, a refusal, something not found, an untrusted state; the runner's own path too), with
/// the exit code of its diagnostic code; a command that succeeds leaves the file as it was.
#[test]
fn every_failed_command_writes_its_typed_error_file() {
    use checkpoint_contract::{
        diagnostic, document::ErrorReport, env::CHECKPOINT_ERROR_FILE, exit_code,
    };
    let env = TestEnv::new();
    env.ok(&[
        "init",
        "pay",
        "--phase",
        "design",
        "--phase",
        "build:design",
    ]);
    let newer = TestEnv::new();
    newer.ok(&["init", "pay", "--phase", "design"]);
    let state = newer.workflow_dir("pay").join("state.json");
    let text = std::fs::read_to_string(&state).unwrap();
    std::fs::write(
        &state,
        text.replace("\"schema_version\": 1", "\"schema_version\": 99"),
    )
    .unwrap();
    let file = env.dir.path().join("error.json");

    for (env, args, code) in [
        (&env, &["nope"][..], diagnostic::USAGE),
        (&env, &["files"], diagnostic::USAGE),
        (&env, &["status", "--bogus"], diagnostic::USAGE),
        (&env, &["--workflow=../x", "status"], diagnostic::INVALID_ID),
        (&env, &["complete", "build"], diagnostic::INVALID_TRANSITION),
        (&env, &["start", "nope"], diagnostic::UNKNOWN_PHASE),
        (
            &env,
            &["--workflow=nowhere", "status"],
            diagnostic::STORE_NOT_FOUND,
        ),
        (
            &env,
            &["run", "--workflow=nowhere"],
            diagnostic::STORE_NOT_FOUND,
        ),
        (&newer, &["status"], diagnostic::STORE_NEWER_VERSION),
    ] {
        for format in ["human", "json"] {
            std::fs::write(&file, "").unwrap();
            let output = env
                .cmd()
                .env(CHECKPOINT_ERROR_FILE, &file)
                .args(["--format", format])
                .args(args)
                .output()
                .unwrap();
            let written = std::fs::read_to_string(&file).unwrap();
            let report: ErrorReport = serde_json::from_str(&written)
                .unwrap_or_else(|err| panic!("{args:?} {format}: {err}: {written:?}"));
            assert_eq!(report.code.as_deref(), Some(code), "{args:?} {format}");
            assert!(!report.message.is_empty(), "{args:?}");
            assert_eq!(
                output.status.code(),
                Some(exit_code::of_diagnostic(code).into()),
                "{args:?} {format}: {report:?}"
            );
            if format == "json" && code != diagnostic::USAGE {
                // The same error as the last line of stderr, for scripts that read it there
                // (clap's refusals are its text there).
                let stderr = String::from_utf8(output.stderr).unwrap();
                let last = stderr.lines().rev().find(|line| !line.trim().is_empty());
                let line: ErrorReport = serde_json::from_str(last.unwrap()).unwrap();
                assert_eq!(line, report, "{args:?}");
            }
        }
    }
    std::fs::write(&file, "").unwrap();
    let output = env
        .cmd()
        .env(CHECKPOINT_ERROR_FILE, &file)
        .args(["status"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "",
        "a success wrote the error file"
    );
}

/// Every field of `part` is in `whole` with the same value (an array's elements in order).
#[track_caller]
fn assert_part_of(part: &Value, whole: &Value) {
    match (part, whole) {
        (Value::Object(part), Value::Object(whole)) => {
            for (key, value) in part {
                let Some(there) = whole.get(key) else {
                    panic!("`{key}` is in no document: {whole:?}");
                };
                assert_part_of(value, there);
            }
        }
        (Value::Array(part), Value::Array(whole)) => {
            assert_eq!(part.len(), whole.len());
            for (part, whole) in part.iter().zip(whole) {
                assert_part_of(part, whole);
            }
        }
        _ => assert_eq!(part, whole),
    }
}

/// The texts that name fields of the documents to people and models.
fn texts() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = vec![root.join("README.md")];
    for dir in [
        "docs",
        "plugin/skills",
        "plugin/commands",
        "crates/checkpoint-mcp/src",
    ] {
        let mut pending = vec![root.join(dir)];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    pending.push(path);
                } else if path
                    .extension()
                    .is_some_and(|extension| extension == "md" || extension == "rs")
                {
                    files.push(path);
                }
            }
        }
    }
    files
}

/// The dotted paths in backticks of `text` that start at a document's top-level field (`plan.…`,
/// `workflow.…`), file names (`plan.json`) left out.
fn backticked_paths(text: &str, top_level: &[&str]) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|token| {
            token.contains('.')
                && token
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || "_.[]".contains(c))
                && token.split('.').all(|part| !part.is_empty())
                && top_level.contains(&token.split('.').next().unwrap().trim_end_matches("[]"))
                && !["json", "jsonl", "toml", "md", "rs", "sh"]
                    .contains(&token.rsplit('.').next().unwrap())
        })
        .map(str::to_owned)
        .collect()
}

/// Whether `path` (dotted, `[]` for any element of an array) leads to a value in `document`.
fn exists(document: &Value, path: &str) -> bool {
    let (key, rest) = path.split_once('.').unwrap_or((path, ""));
    let (key, each) = match key.strip_suffix("[]") {
        Some(key) => (key, true),
        None => (key, false),
    };
    let Some(value) = document.get(key).filter(|value| !value.is_null()) else {
        return false;
    };
    match (each, rest.is_empty()) {
        (false, true) => true,
        (false, false) => exists(value, rest),
        (true, _) => value.as_array().is_some_and(|elements| {
            elements
                .iter()
                .any(|element| rest.is_empty() || exists(element, rest))
        }),
    }
}

/// The documents of the effect ledger: `effect`, `effects` (each listing) and `effects allow`.
#[test]
fn the_documents_of_the_effect_ledger() {
    let env = TestEnv::new();
    env.ok(&[
        "init",
        "fx",
        "--phase",
        "deploy",
        "--phase",
        "announce:deploy",
    ]);
    env.ok(&["start", "deploy"]);
    hook(
        &env,
        "PostToolUse",
        json!({
            "tool_name": "Bash",
            "tool_use_id": "toolu_01",
            "tool_input": { "command": "git push origin main", "description": "push" },
            "tool_response": {
                "stdout": "",
                "stderr": "To example.invalid:fx.git\n   1111111..2222222  main -> main",
                "interrupted": false,
                "isImage": false,
            },
        }),
    );
    insta::assert_snapshot!(
        "effect",
        document(
            &env,
            &[
                "effect",
                "deploy",
                "emailed the customer",
                "--output",
                "sent"
            ]
        )
    );
    insta::assert_snapshot!("effects_allow", document(&env, &["effects", "allow", "1"]));
    env.ok(&["complete", "deploy"]);
    insta::assert_snapshot!("effects", document(&env, &["effects"]));
    insta::assert_snapshot!("effects_all", document(&env, &["effects", "--all"]));
    insta::assert_snapshot!(
        "effects_allow_unknown",
        document(&env, &["effects", "allow", "7"])
    );
}
