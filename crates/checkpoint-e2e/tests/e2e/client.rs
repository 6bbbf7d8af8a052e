//! Behaviour of the client that `shared/claude-code-facts.md` does not (yet) describe, measured
//! with small probe plugins rather than the product, so that each fact stays checked whatever the
//! plugin ships.

use std::fs;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use checkpoint_e2e::{ClaudeEnv, MockApi, MockConfig, RequestKind, Turn};
use serde_json::json;

use crate::support::{HOOK_WAIT, path_str};

/// Writes a probe plugin named `name` into `dir`: a manifest, a `bin/checkpoint` that echoes its
/// arguments, one skill per `(skill, allowed-tools, bang command)`, and `hooks` when given.
fn probe_plugin(
    dir: &Path,
    name: &str,
    skills: &[(&str, &str, &str)],
    hooks: Option<serde_json::Value>,
) -> PathBuf {
    let root = dir.join(name);
    let write = |relative: &str, text: &str| {
        let path = root.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
    };
    write(
        ".claude-plugin/plugin.json",
        &json!({
            "name": name,
            "version": "0.0.1",
            "description": "probe plugin of the checkpoint end-to-end tests",
            "author": { "name": "checkpoint e2e" },
        })
        .to_string(),
    );
    write(
        "bin/checkpoint",
        "#!/bin/sh\necho \"PROBE-BIN-STDERR $*\" >&2\necho \"PROBE-BIN-RAN $*\"\n",
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(
            root.join("bin/checkpoint"),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    for (skill, allowed_tools, bang) in skills {
        write(
            &format!("skills/{skill}/SKILL.md"),
            &format!(
                "---\nname: {skill}\ndescription: Probe skill that runs one bang line for the e2e tests\nallowed-tools: {allowed_tools}\n---\n\nPROBE-BODY {skill}\n\n!`{bang}`\n"
            ),
        );
    }
    if let Some(hooks) = hooks {
        write("hooks/hooks.json", &hooks.to_string());
    }
    root
}

/// A `!` line is permission-checked against the skill's `allowed-tools` after
/// `${CLAUDE_PLUGIN_ROOT}` is substituted: the prefix rule `Bash(checkpoint:*)` does not cover
/// `<root>/bin/checkpoint …` ("This command requires approval", and the whole command is
/// dropped, facts §b GOTCHA 2); a rule written with `${CLAUDE_PLUGIN_ROOT}` does, and so does
/// `Bash(checkpoint:*)` for the bare name (the plugin `bin/` is on the bang line's PATH).
/// The output that replaces a line that ran holds its stderr as well as its stdout.
#[test]
fn bang_line_permission_rules_match_the_command_as_written() {
    let work = tempfile::tempdir().unwrap();
    let plugin = probe_plugin(
        work.path(),
        "probe-bang",
        &[
            (
                "probe-abs",
                "Bash(checkpoint:*)",
                "${CLAUDE_PLUGIN_ROOT}/bin/checkpoint abs-path",
            ),
            (
                "probe-root-rule",
                "Bash(${CLAUDE_PLUGIN_ROOT}/bin/checkpoint:*)",
                "${CLAUDE_PLUGIN_ROOT}/bin/checkpoint root-rule",
            ),
            ("probe-bare", "Bash(checkpoint:*)", "checkpoint bare-name"),
        ],
        None,
    );
    let mock = MockApi::start(vec![Turn::text("RAN-1"), Turn::text("RAN-2")]);
    let env = ClaudeEnv::new(&mock);
    let run = |skill: &str| {
        env.run(
            &[
                "-p",
                &format!("/{skill}"),
                "--plugin-dir",
                path_str(&plugin),
            ],
            &[],
        )
    };

    let dropped = run("probe-abs");
    assert_eq!(dropped.code(), Some(0), "{dropped}");
    // Changed after 2.1.197: the refusal used to print nothing; 2.1.330 prints it as the result.
    if newer_than_oldest(&env) {
        assert!(
            dropped
                .stdout
                .contains("Shell command permission check failed")
                && dropped.stdout.contains("This command requires approval"),
            "{dropped}"
        );
    } else {
        assert_eq!(dropped.stdout.trim(), "", "{dropped}");
    }
    assert_eq!(
        mock.main_requests().len(),
        0,
        "the abs-path line was allowed\n{dropped}"
    );
    let transcripts = env.all_transcripts_text();
    assert!(
        transcripts.contains("Shell command permission check failed")
            && transcripts.contains("bin/checkpoint abs-path")
            && transcripts.contains("This command requires approval"),
        "{transcripts}"
    );

    let root_rule = run("probe-root-rule");
    assert_eq!(root_rule.stdout.trim(), "RAN-1", "{root_rule}");
    let expanded = mock.main_requests()[0].role_text("user");
    assert!(expanded.contains("PROBE-BIN-RAN root-rule"), "{expanded}");
    assert!(
        expanded.contains("PROBE-BIN-STDERR root-rule"),
        "{expanded}"
    );

    let bare = run("probe-bare");
    assert_eq!(bare.stdout.trim(), "RAN-2", "{bare}");
    assert!(mock.request_text(1).contains("PROBE-BIN-RAN bare-name"));
}

/// In `-p` on 2.1.197, a StopFailure hook runs reliably only when some SessionEnd hook holds the
/// exit back: without one, claude nearly always exits 1 before the StopFailure hook has started
/// (facts §i measured with a probe that hooked every event, SessionEnd included).
/// 2.1.330 runs it without a SessionEnd hook too, but races it against its exit, with or without
/// one: the hook was seen missing in some runs of each, so a run here gets up to three tries.
/// The plugin keeps its SessionEnd hook for the older clients.
#[test]
fn stop_failure_hooks_need_a_session_end_hook_only_on_2_1_197() {
    const TRIES: usize = 3;
    let work = tempfile::tempdir().unwrap();
    let stop_failure = json!([{ "hooks": [{
        "type": "command",
        "command": "cat > \"${CLAUDE_PLUGIN_ROOT}/stop-failure.json\"",
        "timeout": 5,
    }] }]);
    let without = probe_plugin(
        work.path(),
        "probe-sf-alone",
        &[],
        Some(json!({ "hooks": { "StopFailure": stop_failure } })),
    );
    let with = probe_plugin(
        work.path(),
        "probe-sf-session-end",
        &[],
        Some(json!({ "hooks": {
            "StopFailure": stop_failure,
            "SessionEnd": [{ "hooks": [{ "type": "command", "command": "true", "timeout": 5 }] }],
        } })),
    );
    let rate_limit = || Turn::Error {
        status: 429,
        error_type: "rate_limit_error".to_owned(),
        message: "mock rate_limit_error".to_owned(),
        retry_after: Some(0),
    };
    let mock = MockApi::start((0..2 * TRIES).map(|_| rate_limit()).collect());
    let env = ClaudeEnv::new(&mock);
    let newer = newer_than_oldest(&env);
    // Runs claude once with `plugin`; returns the StopFailure payload if the hook ran.
    let run = |plugin: &Path, wait: Duration| {
        let marker = plugin.join("stop-failure.json");
        let _ = fs::remove_file(&marker);
        let requests_before = mock.main_requests().len();
        let output = env.run(
            &["-p", "hi", "--plugin-dir", path_str(plugin)],
            &[("CLAUDE_CODE_MAX_RETRIES", "0")],
        );
        assert_eq!(output.code(), Some(1), "{output}");
        assert_eq!(mock.main_requests().len(), requests_before + 1);
        let deadline = Instant::now() + wait;
        while !marker.is_file() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(50));
        }
        fs::read_to_string(&marker).ok()
    };
    let tries = if newer { TRIES } else { 1 };

    let payload = (0..tries)
        .find_map(|_| run(&with, HOOK_WAIT))
        .expect("StopFailure did not run alongside a SessionEnd hook");
    assert!(payload.contains("\"error\":\"rate_limit\""), "{payload}");

    // Without a SessionEnd hook, 2.1.197 races the hook against its exit and nearly always exits
    // first; under heavy load the hook has been seen to win, so that is not asserted. 2.1.330
    // runs it (the hook above wrote its file within milliseconds; a late one gets 3 s).
    if newer {
        assert!(
            (0..TRIES).any(|_| run(&without, Duration::from_secs(3)).is_some()),
            "StopFailure no longer runs without a SessionEnd hook: update the facts and this test"
        );
    }
}

/// The version the end-to-end tests support as the oldest; `cargo xtask test` runs them against
/// it by default, and against the latest release tested with `CHECKPOINT_CLAUDE_CODE=latest`.
const OLDEST: (u32, u32, u32) = (2, 1, 197);

/// Whether the client under test is newer than the oldest supported one: the facts below were
/// measured on 2.1.197 and 2.1.330, and a version in between is taken to behave like 2.1.330.
fn newer_than_oldest(env: &ClaudeEnv) -> bool {
    env.client_version() > OLDEST
}

/// The tools a `-p` session offers the model by default, and the model it asks for: 2.1.197
/// (with `claude-opus-4-8`) offers the task tools (`TaskCreate`, `TaskUpdate`, …) that a
/// workflow's phases compete with; 2.1.330 (with `claude-opus-5-5`) no longer does, and adds
/// `ToolSearch` for tools it defers.
#[test]
fn task_tools_are_offered_by_default_only_before_2_1_330() {
    let mock = MockApi::start(vec![Turn::text("A1")]);
    let env = ClaudeEnv::new(&mock);
    let output = env.run(&["-p", "hi"], &[]);
    assert_eq!(output.code(), Some(0), "{output}");
    let request = &mock.main_requests()[0];
    let tools: Vec<&str> = request.body["tools"]
        .as_array()
        .expect("a main request has tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    let model = request.body["model"].as_str().unwrap_or_default();
    assert!(
        tools.contains(&"Bash") && tools.contains(&"Skill"),
        "{tools:?}"
    );
    if newer_than_oldest(&env) {
        assert!(!tools.contains(&"TaskCreate"), "{tools:?}");
        assert!(tools.contains(&"ToolSearch"), "{tools:?}");
        assert!(!model.starts_with("claude-opus-4"), "{model}");
    } else {
        for tool in ["TaskCreate", "TaskUpdate", "TaskList"] {
            assert!(tools.contains(&tool), "{tool} missing: {tools:?}");
        }
        assert!(!tools.contains(&"ToolSearch"), "{tools:?}");
        assert_eq!(model, "claude-opus-4-8");
    }
}

/// `/compact` asks for the summary once when the answer holds a `<summary>` block; when it does
/// not, 2.1.330 asks once more with a paragraph insisting on the tags (2.1.197 takes any answer).
/// The mock's default summary carries the tags, so compaction tests see one request on both.
#[test]
fn compaction_asks_again_for_a_summary_without_tags_after_2_1_197() {
    let count_summary_requests = |summary: &str| {
        let config = MockConfig {
            summary: summary.to_owned(),
            ..MockConfig::default()
        };
        let mock = MockApi::start_with(vec![Turn::text("A1"), Turn::text("A2")], config);
        let env = ClaudeEnv::new(&mock);
        let session_id = env
            .run(&["-p", "first", "--output-format", "json"], &[])
            .json_result()
            .session_id;
        env.run(&["-p", "--resume", &session_id, "second"], &[]);
        let compact = env.run(&["-p", "--resume", &session_id, "/compact"], &[]);
        assert_eq!(compact.code(), Some(0), "{compact}");
        let requests = mock.requests_of_kind(RequestKind::Summary);
        let insisted = requests.iter().any(|request| {
            request
                .role_text("user")
                .contains("inside <summary></summary> tags")
        });
        (requests.len(), insisted, newer_than_oldest(&env))
    };
    assert_eq!(
        count_summary_requests("<summary>TAGGED-SUMMARY</summary>").0,
        1
    );
    let (untagged, insisted, newer) = count_summary_requests("UNTAGGED-SUMMARY");
    assert_eq!(
        (untagged, insisted),
        if newer { (2, true) } else { (1, false) }
    );
}

/// MCP servers of a plugin (measured with 2.1.197):
/// - `.mcp.json` at the plugin root is started in `-p` without any approval, and its tools are
///   in the first model request as `mcp__plugin_<plugin>_<server>__<tool>`, with the server's
///   input schema as `input_schema`;
/// - a call without an allow rule is refused (`is_error`), and the server never sees it;
/// - a successful result that has `structuredContent` reaches the model as that JSON only: the
///   text content beside it is dropped, and `is_error` is absent rather than `false`;
/// - an error result (`isError`) reaches it as its text content, with `is_error: true`.
///
/// The probe runs the bundle's `checkpoint-mcp` under another plugin and server name.
#[test]
fn plugin_mcp_tools_are_named_by_plugin_and_server_and_results_are_structured() {
    let work = tempfile::tempdir().unwrap();
    let plugin = probe_plugin(work.path(), "probe-mcp", &[], None);
    let server = crate::support::Project::bundle_mcp_server();
    fs::write(
        plugin.join(".mcp.json"),
        json!({ "mcpServers": { "probesrv": { "command": path_str(&server) } } }).to_string(),
    )
    .unwrap();
    let status = "mcp__plugin_probe-mcp_probesrv__status";
    let start = "mcp__plugin_probe-mcp_probesrv__start";
    let mock = MockApi::start(vec![
        Turn::tool_use(status, json!({})),
        Turn::tool_use(start, json!({ "phase": "nope" })),
        Turn::tool_use(
            "mcp__plugin_probe-mcp_probesrv__note",
            json!({ "text": "x" }),
        ),
        Turn::text("DONE"),
    ]);
    let env = ClaudeEnv::new(&mock);
    let project = env.project_dir();
    let checkpoint = server.with_file_name("checkpoint");
    let init = std::process::Command::new(&checkpoint)
        .args(["init", "probe", "--phase", "design"])
        .current_dir(project)
        .env("HOME", env.home())
        .output()
        .unwrap();
    assert!(init.status.success(), "{init:?}");
    let rules = format!("{status} {start}");

    let output = env.run(
        &[
            "-p",
            "probe",
            "--plugin-dir",
            path_str(&plugin),
            "--allowedTools",
            &rules,
        ],
        &[],
    );

    assert_eq!(output.code(), Some(0), "{output}");
    let main = mock.main_requests();
    assert_eq!(main.len(), 4, "{output}");
    let offered = &main[0].body["tools"];
    let listed = offered
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == status);
    if newer_than_oldest(&env) {
        // 2.1.330 defers MCP tools: they are not in `tools`, only named to the model in the
        // request, with `ToolSearch` to fetch their schemas; a call by name still runs them
        // (below).
        assert!(listed.is_none(), "`{status}` is listed: {offered:#}");
        assert!(
            offered
                .as_array()
                .unwrap()
                .iter()
                .any(|tool| tool["name"] == "ToolSearch"),
            "no ToolSearch in {offered:#}"
        );
        assert!(
            main[0].body.to_string().contains(status),
            "`{status}` is not named in the request"
        );
    } else {
        let status_tool = listed.unwrap_or_else(|| panic!("no `{status}` in {offered:#}"));
        assert_eq!(
            status_tool["input_schema"]["type"], "object",
            "{status_tool:#}"
        );
    }

    let ok = main[1].tool_results()[0].clone();
    assert!(ok.get("is_error").is_none(), "{ok:#}");
    let content = ok["content"].as_str().unwrap();
    let document: serde_json::Value = serde_json::from_str(content).unwrap();
    assert_eq!(document["workflow"]["id"], "probe", "{ok:#}");
    assert!(
        !content.contains("status of the workflow"),
        "the text was kept: {ok:#}"
    );

    let refused = (*main[2].tool_results().last().unwrap()).clone();
    assert_eq!(refused["is_error"], true, "{refused:#}");
    assert!(
        refused["content"]
            .to_string()
            .contains("error [checkpoint::unknown_phase]"),
        "{refused:#}"
    );

    let denied = (*main[3].tool_results().last().unwrap()).clone();
    assert_eq!(denied["is_error"], true, "{denied:#}");
    let state = fs::read_to_string(project.join(".claude/checkpoints/probe/state.json")).unwrap();
    assert!(
        !state.contains("\"notes\":[{"),
        "the denied call ran: {state}"
    );
    assert!(
        !state.contains("\"text\": \"x\""),
        "the denied call ran: {state}"
    );
}

/// The lines of a `--output-format stream-json` run, parsed.
fn stream(output: &checkpoint_e2e::ClaudeOutput) -> Vec<serde_json::Value> {
    output
        .stdout
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// What reaches a runner of a long rate limit (a subscription's usage limit, or a 429 whose
/// `retry-after` is more than a minute): the client does not retry, exits 1, and the stream says
/// "rate limit" with no reset time. None of the 429's headers (`retry-after`,
/// `anthropic-ratelimit-requests-reset`, `anthropic-ratelimit-unified-reset`) reaches the stream,
/// and with an API key there is no `rate_limit_event` line, even with the subscription headers.
#[test]
fn a_long_rate_limit_reaches_a_runner_without_a_reset_time() {
    let mock = MockApi::start(vec![Turn::RateLimit {
        message: "mock rate limit".to_owned(),
        retry_after: 3600,
        window: Duration::from_secs(3600),
        unified: true,
    }]);
    let env = ClaudeEnv::new(&mock);
    let output = env.run(
        &["-p", "hi", "--output-format", "stream-json", "--verbose"],
        &[],
    );

    assert_eq!(output.code(), Some(1), "{output}");
    assert_eq!(
        mock.main_requests().len(),
        1,
        "the client retried\n{output}"
    );
    let lines = stream(&output);
    assert!(
        lines
            .iter()
            .any(|line| line["type"] == "assistant" && line["error"] == "rate_limit"),
        "{output}"
    );
    let result = lines.iter().find(|line| line["type"] == "result").unwrap();
    assert_eq!(result["api_error_status"], 429);
    assert_eq!(result["is_error"], true);
    assert!(
        lines.iter().all(|line| line["type"] != "rate_limit_event"),
        "a rate_limit_event now reaches an API-key session: use its resetsAt\n{output}"
    );
    for needle in ["3600", "anthropic-ratelimit", "resetsAt", "resets"] {
        assert!(
            !output.stdout.contains(needle) && !output.stderr.contains(needle),
            "{needle:?} reached the stream: use it\n{output}"
        );
    }
}

/// What reaches a runner of a short rate limit that outlasts the client's retries: one
/// `system`/`api_retry` line per retry, whose `retry_delay_ms` is the 429's `retry-after`, then
/// the same ending as a long limit. `CLAUDE_CODE_MAX_RETRIES` bounds the retries (facts §d).
#[test]
fn a_short_rate_limit_reaches_a_runner_as_the_clients_retry_delay() {
    let mock = MockApi::start(vec![Turn::RateLimit {
        message: "mock rate limit".to_owned(),
        retry_after: 2,
        window: Duration::from_secs(6),
        unified: false,
    }]);
    let env = ClaudeEnv::new(&mock);
    let started = Instant::now();
    let output = env.run(
        &["-p", "hi", "--output-format", "stream-json", "--verbose"],
        &[("CLAUDE_CODE_MAX_RETRIES", "1")],
    );

    assert_eq!(output.code(), Some(1), "{output}");
    assert_eq!(mock.main_requests().len(), 2, "{output}");
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "the client did not wait"
    );
    let lines = stream(&output);
    let retries: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|line| line["type"] == "system" && line["subtype"] == "api_retry")
        .collect();
    assert_eq!(retries.len(), 1, "{output}");
    // 2.1.197 waits exactly the 429's `retry-after`; 2.1.330 adds jitter (2,160 ms seen).
    let delay = retries[0]["retry_delay_ms"].as_u64().unwrap();
    if newer_than_oldest(&env) {
        assert!((2000..=2500).contains(&delay), "{output}");
    } else {
        assert_eq!(delay, 2000, "{output}");
    }
    assert_eq!(retries[0]["error_status"], 429);
    assert_eq!(retries[0]["error"], "rate_limit");
    let result = lines.iter().find(|line| line["type"] == "result").unwrap();
    assert_eq!(result["api_error_status"], 429);
}

/// How `claude -p` ends on SIGINT sent to its process group (what `checkpoint run` does on
/// Ctrl-C) while a Bash tool runs: it exits on its own well within the runner's five-second
/// grace, with exit code 1 (or 0 with an interrupted result) and the tool's process gone too, and never asks the model again.
#[test]
fn sigint_ends_a_headless_session_and_its_tool() {
    let mock = MockApi::start(vec![
        Turn::tool_use(
            "Bash",
            json!({ "command": "echo $$ > tool.pid; exec sleep 60" }),
        ),
        Turn::text("NEVER"),
    ]);
    let env = ClaudeEnv::new(&mock);
    let args = [
        "-p",
        "run it",
        "--allowedTools",
        "Bash",
        "--output-format",
        "stream-json",
        "--verbose",
    ];
    let mut child = env.command(&args, &[]).spawn().unwrap();
    let pid_file = env.project_dir().join("tool.pid");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pid_file.is_file() {
        assert!(Instant::now() < deadline, "the tool never started");
        thread::sleep(Duration::from_millis(50));
    }
    thread::sleep(Duration::from_millis(300));
    let tool: u32 = fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let interrupted = Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-INT", "--", &format!("-{}", child.id())])
        .status()
        .unwrap();
    assert!(status.success());
    let output = env.wait(&mut child, &args);
    let took = interrupted.elapsed();

    // Measured: exit 1 in about 0.2 s; or, seen once under load, exit 0 after a result of
    // subtype `error_during_execution` ("Request interrupted by user for tool use"). Either
    // way the session is over, which is all a runner relies on.
    assert!(took < Duration::from_secs(5), "took {took:?}\n{output}");
    match output.code() {
        Some(1) => {}
        Some(0) => assert!(
            output
                .stdout
                .contains("\"subtype\":\"error_during_execution\""),
            "{output}"
        ),
        _ => panic!("unexpected exit\n{output}"),
    }
    let gone = |pid: u32| {
        fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| stat.contains(") Z "))
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while !gone(tool) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    assert!(gone(tool), "the tool's process outlived the session");
    assert_eq!(mock.main_requests().len(), 1, "{output}");
}

/// The hook payloads of a probe plugin that logs every event of `events` into `dir`, one file a
/// call, read back in the order the calls were made.
fn logging_hooks(events: &[&str]) -> serde_json::Value {
    let mut hooks = serde_json::Map::new();
    for event in events {
        hooks.insert(
            (*event).to_owned(),
            json!([{ "hooks": [{
                "type": "command",
                "command": "mkdir -p \"${CLAUDE_PLUGIN_ROOT}/log\" && cat > \"$(mktemp \"${CLAUDE_PLUGIN_ROOT}/log/$(date +%s%N).XXXXXX\")\"",
                "timeout": 5,
            }] }]),
        );
    }
    json!({ "hooks": hooks })
}

/// The payloads that [`logging_hooks`] wrote under `plugin`, in the order they were written.
fn logged_payloads(plugin: &Path) -> Vec<serde_json::Value> {
    let Ok(entries) = fs::read_dir(plugin.join("log")) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries.map(|entry| entry.unwrap().path()).collect();
    files.sort();
    files
        .iter()
        .filter_map(|file| serde_json::from_str(&fs::read_to_string(file).ok()?).ok())
        .collect()
}

/// A dispatch of a sub-agent through the `Agent` tool, in the foreground on every client.
fn agent_call(description: &str, prompt: &str) -> (String, serde_json::Value) {
    (
        "Agent".to_owned(),
        json!({
            "description": description,
            "prompt": prompt,
            "subagent_type": "general-purpose",
            "run_in_background": false,
        }),
    )
}

/// What the hooks see of two sub-agents dispatched in one turn: PreToolUse and PostToolUse of
/// each `Agent` call carry its `tool_use_id` and its input; SubagentStart and SubagentStop carry
/// the sub-agent's `agent_id` (SubagentStop also its last message and transcript), and so do the
/// sub-agent's own tool hooks; the session directory's `subagents/agent-<id>.meta.json` maps the
/// agent id to the dispatching call.
#[test]
fn sub_agents_are_told_apart_in_hooks_by_tool_use_id_and_agent_id() {
    let work = tempfile::tempdir().unwrap();
    let plugin = probe_plugin(
        work.path(),
        "probe-subagents",
        &[],
        Some(logging_hooks(&[
            "PreToolUse",
            "PostToolUse",
            "SubagentStart",
            "SubagentStop",
            "Stop",
            "SessionEnd",
        ])),
    );
    let mock = MockApi::start(vec![
        Turn::Tools(vec![
            agent_call("Probe one", "PROBE-ROUTE-ONE do the first part"),
            agent_call("Probe two", "PROBE-ROUTE-TWO do the second part"),
        ]),
        Turn::text("MAIN-DONE"),
    ]);
    mock.route(
        "PROBE-ROUTE-ONE",
        [
            Turn::tool_use("Bash", json!({ "command": "echo sub-one" })),
            Turn::text("ONE-FINAL"),
        ],
    );
    mock.route("PROBE-ROUTE-TWO", [Turn::text("TWO-FINAL")]);
    let env = ClaudeEnv::new(&mock);
    let output = env.run(
        &[
            "-p",
            "dispatch",
            "--plugin-dir",
            path_str(&plugin),
            "--allowedTools",
            "Bash",
        ],
        &[],
    );
    assert_eq!(output.code(), Some(0), "{output}");
    let payloads = logged_payloads(&plugin);
    let of = |event: &str, tool: Option<&str>| -> Vec<&serde_json::Value> {
        payloads
            .iter()
            .filter(|payload| {
                payload["hook_event_name"] == event
                    && tool.is_none_or(|tool| payload["tool_name"] == tool)
            })
            .collect()
    };
    let all = || format!("{payloads:#?}");

    let dispatches = of("PreToolUse", Some("Agent"));
    assert_eq!(dispatches.len(), 2, "{}", all());
    for dispatch in &dispatches {
        assert!(dispatch.get("agent_id").is_none(), "{}", all());
        assert!(dispatch["tool_use_id"].is_string(), "{}", all());
        assert!(dispatch["tool_input"]["prompt"].is_string(), "{}", all());
        assert!(
            dispatch["tool_input"]["description"].is_string(),
            "{}",
            all()
        );
    }
    let starts = of("SubagentStart", None);
    assert_eq!(starts.len(), 2, "{}", all());
    for start in &starts {
        assert!(start["agent_id"].is_string(), "{}", all());
        // SubagentStart does not say which dispatch it serves.
        assert!(start.get("tool_use_id").is_none(), "{}", all());
        assert!(start.get("tool_input").is_none(), "{}", all());
    }
    let stops = of("SubagentStop", None);
    assert_eq!(stops.len(), 2, "{}", all());
    let stop_one = stops
        .iter()
        .find(|stop| stop["last_assistant_message"] == "ONE-FINAL")
        .unwrap_or_else(|| panic!("{}", all()));
    let agent_one = stop_one["agent_id"].as_str().unwrap();
    assert!(
        starts.iter().any(|start| start["agent_id"] == agent_one),
        "{}",
        all()
    );
    let transcript = stop_one["agent_transcript_path"].as_str().unwrap();
    assert!(
        transcript.ends_with(&format!("/subagents/agent-{agent_one}.jsonl")),
        "{transcript}"
    );
    // The sub-agent's own tool calls carry its id.
    let bash = of("PostToolUse", Some("Bash"));
    assert_eq!(bash.len(), 1, "{}", all());
    assert_eq!(bash[0]["agent_id"], agent_one, "{}", all());
    // The dispatch's PostToolUse pairs the call with the agent, and has its final message.
    let done = of("PostToolUse", Some("Agent"));
    assert_eq!(done.len(), 2, "{}", all());
    let done_one = done
        .iter()
        .find(|payload| payload["tool_response"]["agentId"] == agent_one)
        .unwrap_or_else(|| panic!("{}", all()));
    assert!(done_one.get("agent_id").is_none(), "{}", all());
    let call_one = dispatches
        .iter()
        .find(|dispatch| dispatch["tool_input"]["description"] == "Probe one")
        .unwrap()["tool_use_id"]
        .clone();
    assert_eq!(done_one["tool_use_id"], call_one, "{}", all());
    assert_eq!(
        done_one["tool_response"]["status"],
        "completed",
        "{}",
        all()
    );
    // The session keeps a meta file per sub-agent: agent id to dispatching call.
    let session_dir = dispatches[0]["transcript_path"]
        .as_str()
        .unwrap()
        .trim_end_matches(".jsonl")
        .to_owned();
    let meta_path = Path::new(&session_dir).join(format!("subagents/agent-{agent_one}.meta.json"));
    let meta: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(&meta_path)
            .unwrap_or_else(|err| panic!("{}: {err}", meta_path.display())),
    )
    .unwrap();
    assert_eq!(meta["toolUseId"], call_one, "{meta}");
    assert_eq!(meta["description"], "Probe one", "{meta}");
    // The two sub-agents ran at the same time: both started before either stopped.
    let position = |event: &str| {
        payloads
            .iter()
            .enumerate()
            .filter(|(_, payload)| payload["hook_event_name"] == event)
            .map(|(index, _)| index)
            .collect::<Vec<_>>()
    };
    assert!(
        position("SubagentStart").iter().max() < position("SubagentStop").iter().min(),
        "{}",
        all()
    );
    assert_eq!(mock.requests_of_kind(RequestKind::Routed).len(), 3);
    assert_eq!(mock.main_requests().len(), 2);
}

/// What the hooks see of a sub-agent's rate limit: StopFailure fires with the sub-agent's
/// `agent_id` (and `error: rate_limit`) under the parent's session id; 2.1.330 also fires
/// PostToolUseFailure for the `Agent` call, while 2.1.197 returns the error as the call's result
/// (PostToolUse). Neither ends the session: the main agent carries on.
#[test]
fn a_sub_agents_rate_limit_is_reported_with_its_agent_id_and_the_session_goes_on() {
    let work = tempfile::tempdir().unwrap();
    let plugin = probe_plugin(
        work.path(),
        "probe-subagent-429",
        &[],
        Some(logging_hooks(&[
            "PostToolUse",
            "PostToolUseFailure",
            "SubagentStart",
            "SubagentStop",
            "StopFailure",
            "SessionEnd",
        ])),
    );
    let mock = MockApi::start(vec![
        Turn::Tools(vec![agent_call(
            "Probe limit",
            "PROBE-ROUTE-LIMIT hit the limit",
        )]),
        Turn::text("MAIN-DONE"),
    ]);
    mock.route(
        "PROBE-ROUTE-LIMIT",
        [Turn::Error {
            status: 429,
            error_type: "rate_limit_error".to_owned(),
            message: "mock rate_limit_error".to_owned(),
            retry_after: Some(0),
        }],
    );
    let env = ClaudeEnv::new(&mock);
    let output = env.run(
        &["-p", "dispatch", "--plugin-dir", path_str(&plugin)],
        &[("CLAUDE_CODE_MAX_RETRIES", "0")],
    );
    assert_eq!(output.code(), Some(0), "{output}");
    assert_eq!(mock.main_requests().len(), 2, "{output}");
    // claude does not wait for StopFailure hooks (facts §i).
    let deadline = Instant::now() + HOOK_WAIT;
    let payloads = loop {
        let payloads = logged_payloads(&plugin);
        if payloads
            .iter()
            .any(|payload| payload["hook_event_name"] == "StopFailure")
            || Instant::now() >= deadline
        {
            break payloads;
        }
        thread::sleep(Duration::from_millis(50));
    };
    let all = format!("{payloads:#?}");
    let agent_id = payloads
        .iter()
        .find(|payload| payload["hook_event_name"] == "SubagentStart")
        .and_then(|payload| payload["agent_id"].as_str())
        .unwrap_or_else(|| panic!("{all}"))
        .to_owned();
    let session = payloads[0]["session_id"].clone();
    let failure = payloads
        .iter()
        .find(|payload| payload["hook_event_name"] == "StopFailure")
        .unwrap_or_else(|| panic!("no StopFailure: {all}"));
    assert_eq!(failure["agent_id"], agent_id.as_str(), "{all}");
    assert_eq!(failure["error"], "rate_limit", "{all}");
    assert_eq!(failure["session_id"], session, "{all}");
    let agent_failed = payloads.iter().any(|payload| {
        payload["hook_event_name"] == "PostToolUseFailure" && payload["tool_name"] == "Agent"
    });
    let agent_returned = payloads.iter().find(|payload| {
        payload["hook_event_name"] == "PostToolUse" && payload["tool_name"] == "Agent"
    });
    if newer_than_oldest(&env) {
        assert!(agent_failed, "{all}");
        assert!(agent_returned.is_none(), "{all}");
    } else {
        assert!(!agent_failed, "{all}");
        let returned = agent_returned.unwrap_or_else(|| panic!("{all}"));
        assert_eq!(
            returned["tool_response"]["agentId"],
            agent_id.as_str(),
            "{all}"
        );
        // The error is the call's result, with status `completed`.
        assert_eq!(returned["tool_response"]["status"], "completed", "{all}");
        assert!(
            returned["tool_response"]["content"][0]["text"]
                .as_str()
                .is_some_and(|text| text.starts_with("API Error: ")),
            "{all}"
        );
    }
}

/// On 2.1.330 an `Agent` call without `run_in_background: false` runs in the background: its
/// PostToolUse comes at once, without a `completed` status, and the sub-agent's end is its
/// SubagentStop. 2.1.197 runs it in the foreground.
#[test]
fn agent_calls_run_in_the_background_by_default_only_after_2_1_197() {
    let work = tempfile::tempdir().unwrap();
    let plugin = probe_plugin(
        work.path(),
        "probe-subagent-background",
        &[],
        Some(logging_hooks(&["PostToolUse", "SubagentStop", "Stop"])),
    );
    let mock = MockApi::start(vec![
        Turn::tool_use(
            "Agent",
            json!({
                "description": "Probe background",
                "prompt": "PROBE-ROUTE-BG work",
                "subagent_type": "general-purpose",
            }),
        ),
        Turn::text("MAIN-DONE"),
        Turn::text("MAIN-AFTER"),
    ]);
    mock.route("PROBE-ROUTE-BG", [Turn::text("BG-FINAL")]);
    let env = ClaudeEnv::new(&mock);
    let output = env.run(&["-p", "dispatch", "--plugin-dir", path_str(&plugin)], &[]);
    assert_eq!(output.code(), Some(0), "{output}");
    let deadline = Instant::now() + HOOK_WAIT;
    let payloads = loop {
        let payloads = logged_payloads(&plugin);
        if payloads
            .iter()
            .any(|payload| payload["hook_event_name"] == "SubagentStop")
            || Instant::now() >= deadline
        {
            break payloads;
        }
        thread::sleep(Duration::from_millis(50));
    };
    let all = format!("{payloads:#?}");
    let returned = payloads
        .iter()
        .find(|payload| payload["hook_event_name"] == "PostToolUse")
        .unwrap_or_else(|| panic!("{all}"));
    let stop = payloads
        .iter()
        .find(|payload| payload["hook_event_name"] == "SubagentStop")
        .unwrap_or_else(|| panic!("{all}"));
    assert_eq!(stop["last_assistant_message"], "BG-FINAL", "{all}");
    if newer_than_oldest(&env) {
        assert_ne!(returned["tool_response"]["status"], "completed", "{all}");
    } else {
        assert_eq!(returned["tool_response"]["status"], "completed", "{all}");
    }
}
