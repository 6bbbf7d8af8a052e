//! Gemini CLI: `checkpoint hook --client gemini <event>` on every payload shape Gemini CLI
//! 0.61.0 sends (and malformed ones: a warning, exit 0, nothing recorded, JSON on stdout), and
//! `checkpoint setup gemini` (idempotent, keeps the user's settings and comments, `--remove`,
//! `--dry-run`, a malformed file reported with its line and left untouched).

use std::{fs, path::Path, process::Stdio};

use serde_json::{Value, json};

use crate::support::{TestEnv, git, repo};

const SESSION: &str = "b832e7c1-0000-4000-8000-000000000001";

/// A Gemini CLI payload of `event` in `env`'s project, with `extra` fields.
fn payload(env: &TestEnv, event: &str, extra: Value) -> String {
    let mut value = json!({
        "session_id": SESSION,
        "transcript_path": "/tmp/gemini/chats/session.jsonl",
        "cwd": env.project(),
        "hook_event_name": event,
        "timestamp": "2026-11-25T15:51:19.850Z",
    });
    value
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    value.to_string()
}

/// Runs `checkpoint hook --client gemini <event>` with `stdin`; returns (exit, stdout, stderr).
fn hook(env: &TestEnv, event: &str, stdin: &str) -> (i32, String, String) {
    let mut child = env
        .cmd()
        .args(["hook", "--client", "gemini", event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = std::io::Write::write_all(&mut child.stdin.take().unwrap(), stdin.as_bytes());
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// Asserts a hook exited 0 with one JSON object on stdout (Gemini CLI takes any other text,
/// or stderr when stdout is empty, as a message to show); returns it.
#[track_caller]
fn answered(run: &(i32, String, String)) -> Value {
    let (code, stdout, stderr) = run;
    assert_eq!(*code, 0, "{stderr}");
    let out: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|err| panic!("stdout is not JSON ({err}): {stdout:?}\n{stderr}"));
    assert!(out.is_object(), "{out}");
    out
}

/// Workflow `w`: phase `spec` (output `docs/spec.md`) in progress, `build` after it.
fn spec_in_progress(env: &TestEnv) {
    fs::write(
        env.project().join("plan.json"),
        r#"{"phases": [{"id": "spec", "outputs": ["docs/spec.md"]}, {"id": "build", "dependencies": ["spec"]}]}"#,
    )
    .unwrap();
    env.ok(&["init", "w", "--plan", "plan.json"]);
    env.ok(&["start", "spec"]);
}

fn phase_status(env: &TestEnv, phase: &str) -> String {
    env.state("w")["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|candidate| candidate["id"] == phase)
        .unwrap()["status"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn journal_ops(env: &TestEnv) -> Vec<String> {
    env.read("w", "journal.jsonl")
        .lines()
        .map(|line| {
            let entry: Value = serde_json::from_str(line).unwrap();
            entry["transition"]["op"].as_str().unwrap().to_owned()
        })
        .collect()
}

fn write_spec(env: &TestEnv) {
    fs::create_dir_all(env.project().join("docs")).unwrap();
    fs::write(env.project().join("docs/spec.md"), "# spec\n").unwrap();
}

#[test]
fn session_start_answers_with_where_the_work_stands() {
    let env = TestEnv::new();
    spec_in_progress(&env);
    env.ok(&["progress", "spec", "API sketched, data model next"]);
    for source in ["startup", "resume", "clear"] {
        let out = answered(&hook(
            &env,
            "SessionStart",
            &payload(&env, "SessionStart", json!({ "source": source })),
        ));
        assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
        let context = out["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap();
        assert!(context.contains("workflow `w`"), "{context}");
        assert!(
            context.contains("API sketched, data model next"),
            "{context}"
        );
    }
    // Without a workflow: still JSON.
    let empty = TestEnv::new();
    answered(&hook(
        &empty,
        "SessionStart",
        &payload(&empty, "SessionStart", json!({"source": "startup"})),
    ));
}

#[test]
fn a_file_written_with_write_file_or_replace_completes_its_phase() {
    // Every way Gemini CLI names the file: relative as the model gave it, absolute, and the
    // absolute path of `returnDisplay.filePath` beside a relative one.
    let shapes: [fn(&TestEnv) -> Value; 4] = [
        |_| {
            json!({"tool_name": "write_file", "tool_input": {"file_path": "docs/spec.md", "content": "# spec"},
                   "tool_response": {"llmContent": "Successfully created and wrote to new file", "returnDisplay": "ok"}})
        },
        |env| json!({"tool_name": "write_file", "tool_input": {"file_path": env.project().join("docs/spec.md"), "content": "# spec"}}),
        |env| {
            json!({"tool_name": "write_file", "tool_input": {"file_path": "somewhere/else.md"},
                   "tool_response": {"llmContent": "ok", "returnDisplay": {"fileName": "spec.md", "filePath": env.project().join("docs/spec.md"), "isNewFile": true}}})
        },
        |_| {
            json!({"tool_name": "replace", "tool_input": {"file_path": "docs/spec.md", "old_string": "a", "new_string": "b", "instruction": "bump"},
                   "tool_response": {"llmContent": "Successfully modified file", "returnDisplay": {"fileDiff": "", "filePath": 42}}})
        },
    ];
    for (index, shape) in shapes.iter().enumerate() {
        let env = TestEnv::new();
        spec_in_progress(&env);
        write_spec(&env);
        // Before the call ran, nothing completes.
        answered(&hook(
            &env,
            "BeforeTool",
            &payload(&env, "BeforeTool", shape(&env)),
        ));
        assert_eq!(phase_status(&env, "spec"), "in_progress", "shape {index}");
        answered(&hook(
            &env,
            "AfterTool",
            &payload(&env, "AfterTool", shape(&env)),
        ));
        assert_eq!(phase_status(&env, "spec"), "complete", "shape {index}");
    }
}

#[test]
fn a_write_elsewhere_or_by_another_tool_completes_nothing() {
    for extra in [
        json!({"tool_name": "write_file", "tool_input": {"file_path": "docs/other.md"}}),
        json!({"tool_name": "read_file", "tool_input": {"file_path": "docs/spec.md"}}),
        json!({"tool_name": "mcp_checkpoint_status", "tool_input": {}}),
        json!({"tool_name": "write_file", "tool_input": {"file_path": 7}}),
        json!({"tool_name": "write_file", "tool_input": "docs/spec.md"}),
    ] {
        let env = TestEnv::new();
        spec_in_progress(&env);
        write_spec(&env);
        answered(&hook(
            &env,
            "AfterTool",
            &payload(&env, "AfterTool", extra.clone()),
        ));
        assert_eq!(phase_status(&env, "spec"), "in_progress", "{extra}");
    }
}

#[test]
fn a_shell_git_commit_records_its_sha_on_the_phase_in_progress() {
    let env = repo();
    spec_in_progress(&env);
    fs::write(env.project().join("a.txt"), "a\n").unwrap();
    git(&env.project(), &["add", "a.txt"]);
    git(&env.project(), &["commit", "-qm", "work on spec"]);
    let sha = git(&env.project(), &["rev-parse", "HEAD"])
        .trim()
        .to_owned();
    let call = json!({
        "tool_name": "run_shell_command",
        "tool_input": {"command": "git add a.txt && git commit -m 'work on spec'"},
        "tool_response": {
            "llmContent": "<untrusted_context>\nOutput: [main 1a2b3c4] work on spec\nProcess Group PGID: 23327\n</untrusted_context>",
            "returnDisplay": "[main 1a2b3c4] work on spec",
        },
    });
    answered(&hook(&env, "AfterTool", &payload(&env, "AfterTool", call)));
    let state = env.state("w");
    let recorded = state.to_string();
    assert!(recorded.contains(&sha), "{recorded}");

    // A cancelled commit, or a command that is no commit, records nothing more.
    let before = journal_ops(&env).len();
    for (command, content) in [
        (
            "git commit -m x",
            "Command was cancelled by user before it could complete.",
        ),
        ("echo git commit", "Output: git commit"),
        ("ls", "Output: a.txt"),
    ] {
        let call = json!({
            "tool_name": "run_shell_command",
            "tool_input": {"command": command},
            "tool_response": {"llmContent": content, "returnDisplay": content},
        });
        answered(&hook(&env, "AfterTool", &payload(&env, "AfterTool", call)));
    }
    assert_eq!(journal_ops(&env).len(), before, "{:?}", journal_ops(&env));
}

#[test]
fn a_failed_tool_call_is_recorded_on_the_phase_in_progress() {
    let env = TestEnv::new();
    spec_in_progress(&env);
    let call = json!({
        "tool_name": "run_shell_command",
        "tool_input": {"command": "make"},
        "tool_response": {"llmContent": "Error: make: not found", "returnDisplay": "make: not found",
                          "error": {"message": "make: not found", "type": "SHELL_EXECUTE_ERROR"}},
    });
    answered(&hook(&env, "AfterTool", &payload(&env, "AfterTool", call)));
    let journal = env.read("w", "journal.jsonl");
    assert!(journal.contains("tool_failure"), "{journal}");
    assert!(journal.contains("make: not found"), "{journal}");
}

#[test]
fn pre_compress_is_no_compaction_and_session_end_does_nothing() {
    // PreCompress fires before every model call (measured with 0.61.0), compressed or not.
    let env = TestEnv::new();
    spec_in_progress(&env);
    let before = journal_ops(&env);
    for trigger in ["auto", "manual"] {
        answered(&hook(
            &env,
            "PreCompress",
            &payload(&env, "PreCompress", json!({ "trigger": trigger })),
        ));
    }
    answered(&hook(
        &env,
        "SessionEnd",
        &payload(&env, "SessionEnd", json!({"reason": "exit"})),
    ));
    assert_eq!(journal_ops(&env), before);
}

#[test]
fn after_agent_records_a_heartbeat_and_strict_stop_blocks_in_geminis_form() {
    let env = TestEnv::new();
    spec_in_progress(&env);
    let stop = payload(
        &env,
        "AfterAgent",
        json!({"prompt": "go", "prompt_response": "done", "stop_hook_active": false}),
    );
    answered(&hook(&env, "AfterAgent", &stop));
    assert_eq!(journal_ops(&env).last().unwrap(), "heartbeat");

    fs::write(
        env.store().join("config.toml"),
        "strict_stop = true\nprogress_fresh_minutes = 20\n",
    )
    .unwrap();
    env.set_now("2026-03-01T13:00:00Z");
    let out = answered(&hook(&env, "AfterAgent", &stop));
    assert_eq!(out["decision"], "block", "{out}");
    assert!(out["reason"].as_str().unwrap().contains("spec"), "{out}");
    // Already blocked once: it lets the agent stop.
    let again = payload(
        &env,
        "AfterAgent",
        json!({"prompt": "go", "prompt_response": "done", "stop_hook_active": true}),
    );
    let out = answered(&hook(&env, "AfterAgent", &again));
    assert!(out.get("decision").is_none(), "{out}");
}

#[test]
fn malformed_payloads_warn_exit_zero_and_change_nothing() {
    let env = TestEnv::new();
    spec_in_progress(&env);
    write_spec(&env);
    let before = env.read("w", "journal.jsonl");
    let cases = [
        ("AfterTool", String::new()),
        ("AfterTool", "not json".to_owned()),
        ("AfterTool", "[1, 2]".to_owned()),
        ("AfterTool", "{\"tool_name\": ".to_owned()),
        ("AfterTool", json!({"hook_event_name": "AfterTool", "cwd": env.project(), "tool_name": "write_file", "tool_input": {"file_path": "docs/spec.md"}}).to_string()),
        ("AfterTool", payload(&env, "BeforeTool", json!({"tool_name": "write_file", "tool_input": {"file_path": "docs/spec.md"}}))),
        ("AfterTool", payload(&env, "AfterTool", json!({"tool_name": 5, "tool_input": {"file_path": "docs/spec.md"}}))),
        ("AfterTool", payload(&env, "AfterTool", json!({"tool_input": {"file_path": "docs/spec.md"}}))),
        ("Notification", payload(&env, "Notification", json!({}))),
        ("PostToolUse", payload(&env, "PostToolUse", json!({"tool_name": "Write", "tool_input": {"file_path": "docs/spec.md"}}))),
    ];
    for (event, stdin) in cases {
        let run = hook(&env, event, &stdin);
        answered(&run);
        assert!(
            run.2.contains("checkpoint hook"),
            "{event} {stdin:?}: no warning: {}",
            run.2
        );
        assert_eq!(env.read("w", "journal.jsonl"), before, "{event} {stdin:?}");
    }
    assert_eq!(phase_status(&env, "spec"), "in_progress");
}

/// `checkpoint setup gemini` in `env`, with `args` after it; returns (exit, stdout, stderr).
fn setup(env: &TestEnv, args: &[&str]) -> (i32, String, String) {
    let output = env
        .cmd()
        .args(["setup", "gemini"])
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

fn project_settings(env: &TestEnv) -> std::path::PathBuf {
    env.project().join(".gemini").join("settings.json")
}

/// The settings without their comments (the texts here hold no `//` or `/*` in a string).
fn without_comments(text: &str) -> Value {
    let mut kept = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        kept.push_str(&rest[..start]);
        rest = &rest[start + rest[start..].find("*/").unwrap() + 2..];
    }
    kept.push_str(rest);
    let kept: Vec<&str> = kept
        .lines()
        .map(|line| line.split_once("//").map_or(line, |(code, _)| code))
        .collect();
    serde_json::from_str(&kept.join("\n")).unwrap()
}

fn our_groups<'a>(settings: &'a Value, event: &str) -> Vec<&'a Value> {
    settings["hooks"][event]
        .as_array()
        .map(|groups| {
            groups
                .iter()
                .filter(|group| group["hooks"][0]["name"] == "checkpoint")
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn setup_writes_the_hooks_and_the_trusted_mcp_server_once() {
    let env = TestEnv::new();
    let (code, stdout, stderr) = setup(&env, &[]);
    assert_eq!(code, 0, "{stderr}");
    let path = project_settings(&env);
    assert!(stdout.contains(&path.display().to_string()), "{stdout}");
    assert!(
        stdout.contains("GEMINI_CLI_TRUST_WORKSPACE=true"),
        "{stdout}"
    );
    let text = fs::read_to_string(&path).unwrap();
    let settings: Value = serde_json::from_str(&text).unwrap();
    for event in ["SessionStart", "BeforeTool", "AfterTool", "AfterAgent"] {
        let groups = our_groups(&settings, event);
        assert_eq!(groups.len(), 1, "{event}: {settings:#}");
        let hook = &groups[0]["hooks"][0];
        assert_eq!(hook["type"], "command");
        let command = hook["command"].as_str().unwrap();
        assert!(
            command.ends_with(&format!(" hook --client gemini {event}")),
            "{command}"
        );
        assert!(hook["timeout"].as_u64().unwrap() >= 1000, "milliseconds");
    }
    // PreCompress fires before every model call: not registered.
    assert!(settings["hooks"].get("PreCompress").is_none());
    let server = &settings["mcpServers"]["checkpoint"];
    assert_eq!(server["args"], json!(["mcp"]));
    assert_eq!(server["trust"], true);
    assert!(Path::new(server["command"].as_str().unwrap()).is_absolute());

    // Again: nothing changes, byte for byte.
    let (code, stdout, _) = setup(&env, &[]);
    assert_eq!(code, 0);
    assert!(stdout.contains("nothing to change"), "{stdout}");
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
}

const USERS_OWN: &str = r#"// My Gemini settings.
{
  /* the theme I like */
  "ui": { "theme": "GitHub" },
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "run_shell_command",
        "hooks": [{ "type": "command", "command": "./audit.sh", "timeout": 5000 }] // mine
      }
    ]
  },
  "mcpServers": {
    // a server of mine
    "mine": { "command": "node", "args": ["server.js"] }
  }
}
"#;

#[test]
fn setup_keeps_the_users_settings_and_comments_and_remove_restores_them() {
    let env = TestEnv::new();
    let path = project_settings(&env);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, USERS_OWN).unwrap();
    let (code, _, stderr) = setup(&env, &[]);
    assert_eq!(code, 0, "{stderr}");
    let text = fs::read_to_string(&path).unwrap();
    for comment in [
        "// My Gemini settings.",
        "/* the theme I like */",
        "// mine",
        "// a server of mine",
    ] {
        assert!(text.contains(comment), "{comment}: {text}");
    }
    let settings = without_comments(&text);
    assert_eq!(settings["ui"]["theme"], "GitHub");
    assert_eq!(settings["mcpServers"]["mine"]["command"], "node");
    assert_eq!(settings["mcpServers"]["checkpoint"]["trust"], true);
    let before_tool = settings["hooks"]["BeforeTool"].as_array().unwrap();
    assert_eq!(before_tool.len(), 2, "{settings:#}");
    assert_eq!(before_tool[0]["hooks"][0]["command"], "./audit.sh");
    assert_eq!(our_groups(&settings, "AfterTool").len(), 1);

    // Idempotent with the user's entries too.
    setup(&env, &[]);
    assert_eq!(fs::read_to_string(&path).unwrap(), text);

    // `--remove` takes out only ours: the user's file comes back as it was.
    let (code, _, stderr) = setup(&env, &["--remove"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(fs::read_to_string(&path).unwrap(), USERS_OWN);
    let (code, stdout, _) = setup(&env, &["--remove"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("Nothing to remove"), "{stdout}");
    assert_eq!(fs::read_to_string(&path).unwrap(), USERS_OWN);
}

#[test]
fn setup_replaces_an_older_install_instead_of_adding_a_second() {
    let env = TestEnv::new();
    let path = project_settings(&env);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let old = json!({
        "hooks": {
            "AfterTool": [
                {"matcher": "*", "hooks": [{"type": "command", "command": "/old/place/checkpoint hook --client gemini AfterTool"}]},
                {"matcher": "*", "hooks": [{"name": "checkpoint", "type": "command", "command": "/other/checkpoint hook --client gemini AfterTool"}]},
            ],
            "PreCompress": [
                {"matcher": "*", "hooks": [{"name": "checkpoint", "type": "command", "command": "/old/place/checkpoint hook --client gemini PreCompress"}]},
            ],
        },
        "mcpServers": {"checkpoint": {"command": "/old/place/checkpoint", "args": ["mcp"]}},
    });
    fs::write(&path, format!("{old:#}\n")).unwrap();
    let (code, _, stderr) = setup(&env, &[]);
    assert_eq!(code, 0, "{stderr}");
    let settings: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    let after_tool = settings["hooks"]["AfterTool"].as_array().unwrap();
    assert_eq!(after_tool.len(), 1, "{settings:#}");
    assert!(!after_tool[0].to_string().contains("/old/place"));
    assert!(
        settings["hooks"].get("PreCompress").is_none(),
        "{settings:#}"
    );
    assert_ne!(
        settings["mcpServers"]["checkpoint"]["command"],
        "/old/place/checkpoint"
    );
}

#[test]
fn setup_dry_run_prints_the_change_and_writes_nothing() {
    let env = TestEnv::new();
    let path = project_settings(&env);
    let (code, stdout, stderr) = setup(&env, &["--dry-run"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("+  \"hooks\""), "{stdout}");
    assert!(
        stdout.contains("hook --client gemini SessionStart"),
        "{stdout}"
    );
    assert!(!path.exists());
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, USERS_OWN).unwrap();
    let (code, stdout, _) = setup(&env, &["--dry-run"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("\"checkpoint\""), "{stdout}");
    assert_eq!(fs::read_to_string(&path).unwrap(), USERS_OWN);
    setup(&env, &[]);
    let installed = fs::read_to_string(&path).unwrap();
    let (code, stdout, _) = setup(&env, &["--remove", "--dry-run"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("-"), "{stdout}");
    assert_eq!(fs::read_to_string(&path).unwrap(), installed);
}

#[test]
fn setup_reports_a_malformed_file_with_its_line_and_leaves_it() {
    let cases = [
        ("{\n  \"ui\": {},\n  \"hooks\": {},\n}\n", 4),
        ("{\n  \"ui\": {\n    \"theme\" \"x\"\n  }\n}\n", 3),
        ("{\n  /* never closed\n}\n", 2),
        ("{\n  \"hooks\": []\n}\n", 2),
        ("{\n  \"hooks\": {\n    \"AfterTool\": {}\n  }\n}\n", 3),
        ("{\n\n  \"mcpServers\": \"none\"\n}\n", 3),
        ("[1, 2]\n", 1),
    ];
    for (text, line) in cases {
        for args in [&[][..], &["--remove"][..], &["--dry-run"][..]] {
            let env = TestEnv::new();
            let path = project_settings(&env);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, text).unwrap();
            let (code, stdout, stderr) = setup(&env, args);
            assert_ne!(code, 0, "{text:?} {args:?}: {stdout}");
            let place = format!("{}:{line}", path.display());
            assert!(stderr.contains(&place), "{text:?} {args:?}: {stderr}");
            assert_eq!(fs::read_to_string(&path).unwrap(), text);
        }
    }
}

#[test]
fn setup_for_the_user_writes_gemini_cli_home_or_the_home() {
    let env = TestEnv::new();
    let cli_home = env.dir.path().join("gemini-home");
    let output = env
        .cmd()
        .args(["setup", "gemini", "--scope", "user"])
        .env("GEMINI_CLI_HOME", &cli_home)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(cli_home.join(".gemini/settings.json").is_file());
    assert!(!project_settings(&env).exists());

    let (code, _, stderr) = setup(&env, &["--scope", "user"]);
    assert_eq!(code, 0, "{stderr}");
    let home = env.dir.path().join("home/.gemini/settings.json");
    let settings: Value = serde_json::from_str(&fs::read_to_string(&home).unwrap()).unwrap();
    assert_eq!(our_groups(&settings, "SessionStart").len(), 1);
    let (code, _, _) = setup(&env, &["--scope", "user", "--remove"]);
    assert_eq!(code, 0);
    assert!(
        !home.exists(),
        "the settings file setup created holds nothing else: removed"
    );
}

#[test]
fn run_client_gemini_drives_gemini_headless_from_the_option_or_the_config() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    let line = "--output-format stream-json --yolo --model gemini-3.8-flash\n";
    let output = env.ok(&[
        "run",
        "--dry-run",
        "--client",
        "gemini",
        "--gemini",
        "my-gemini",
        "--",
        "--model",
        "gemini-3.8-flash",
    ]);
    assert!(
        output.contains("my-gemini '--prompt=You are running unattended under `checkpoint run`"),
        "{output}"
    );
    assert!(output.contains(line), "{output}");
    assert!(!env.ok(&["log"]).contains("run_start"));
    // `[run] client` and `[run] gemini` choose the same.
    fs::write(
        env.store().join("config.toml"),
        "[run]\nclient = \"gemini\"\ngemini = \"configured-gemini\"\n",
    )
    .unwrap();
    let output = env.ok(&["run", "--dry-run", "--", "--model", "gemini-3.8-flash"]);
    assert!(output.contains("configured-gemini '--prompt="), "{output}");
    assert!(output.contains(line), "{output}");
    // The option wins over the config.
    let output = env.ok(&["run", "--dry-run", "--client", "claude", "--claude", "c"]);
    assert!(output.contains("c -p '"), "{output}");
    // A client `run` does not know is the config's error, named with its file.
    fs::write(
        env.store().join("config.toml"),
        "[run]\nclient = \"copilot\"\n",
    )
    .unwrap();
    let output = env.run(&["run", "--dry-run"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("config.toml"), "{stderr}");
    assert!(stderr.contains("copilot"), "{stderr}");
}

#[test]
fn a_repeat_of_a_recorded_push_is_denied_in_geminis_form() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "deploy"]);
    env.ok(&["start", "deploy"]);
    let call = |command: &str| {
        json!({
            "tool_name": "run_shell_command",
            "tool_input": {"command": command},
            "tool_response": {"llmContent": "Output: done", "returnDisplay": "done"},
        })
    };
    answered(&hook(
        &env,
        "AfterTool",
        &payload(&env, "AfterTool", call("git push origin main && echo ok")),
    ));
    for command in ["git push origin main", "bash -c 'git push origin main'"] {
        let out = answered(&hook(
            &env,
            "BeforeTool",
            &payload(&env, "BeforeTool", call(command)),
        ));
        // Gemini CLI reads its own `decision` (never Claude Code's `permissionDecision`).
        assert_eq!(out["decision"], "deny", "{out}");
        let reason = out["reason"].as_str().unwrap();
        assert!(reason.contains("checkpoint effects allow 1"), "{reason}");
        assert!(out.get("hookSpecificOutput").is_none(), "{out}");
    }
    let other = answered(&hook(
        &env,
        "BeforeTool",
        &payload(&env, "BeforeTool", call("git push origin other")),
    ));
    assert_eq!(other, json!({}));
}

/// The write guard through Gemini CLI's hooks: a `write_file` over a change this session has
/// not seen is refused in Gemini's form; a `read_file` of part of the file (`start_line`) or cut
/// by the client does not count as seeing it; a whole `read_file` does, and the write is let
/// through.
#[test]
fn a_write_over_an_unseen_change_is_denied_until_a_whole_read_file() {
    let env = TestEnv::new();
    spec_in_progress(&env);
    let file = env.project().join("shared.txt");
    fs::write(&file, "mine\n").unwrap();
    let call = |event: &str, tool: &str, input: Value, response: Value| {
        let mut extra = json!({"tool_name": tool, "tool_input": input});
        if event == "AfterTool" {
            extra["tool_response"] = response;
        }
        hook(&env, event, &payload(&env, event, extra))
    };
    let write_file = |event: &str| {
        call(
            event,
            "write_file",
            json!({"file_path": "shared.txt", "content": "mine\n"}),
            json!({"llmContent": "Successfully overwrote file", "returnDisplay": {"filePath": file}}),
        )
    };
    write_file("AfterTool");
    // A person changes it.
    fs::write(&file, "mine\ntheirs\n").unwrap();
    let refused = |run: &(i32, String, String)| {
        run.0 == 0 && run.1.contains("\"decision\":\"deny\"") && run.1.contains("shared.txt")
    };
    let before = write_file("BeforeTool");
    assert!(refused(&before), "{before:?}");
    for (input, response) in [
        (
            json!({"file_path": "shared.txt", "start_line": 1, "end_line": 1}),
            json!({"llmContent": "mine\n"}),
        ),
        (
            json!({"file_path": "shared.txt"}),
            json!({"llmContent": "\nIMPORTANT: The file content has been truncated.\n"}),
        ),
    ] {
        call("AfterTool", "read_file", input.clone(), response);
        let before = write_file("BeforeTool");
        assert!(refused(&before), "after {input}: {before:?}");
    }
    call(
        "AfterTool",
        "read_file",
        json!({"file_path": "shared.txt"}),
        json!({"llmContent": "mine\ntheirs\n", "returnDisplay": ""}),
    );
    let before = write_file("BeforeTool");
    assert!(!refused(&before), "{before:?}");
}
