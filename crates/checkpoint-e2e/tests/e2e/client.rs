//! Behaviour of the client that `shared/claude-code-facts.md` does not (yet) describe, measured
//! with small probe plugins rather than the product, so that each fact stays checked whatever the
//! plugin ships.

use std::fs;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use checkpoint_e2e::{ClaudeEnv, MockApi, Turn};
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
    assert_eq!(dropped.stdout.trim(), "", "{dropped}");
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

/// In `-p`, a StopFailure hook runs only when some SessionEnd hook holds the exit back: without
/// one, claude exits 1 before the StopFailure hook has started, and it never runs (facts §i
/// measured with a probe that hooked every event, SessionEnd included).
#[test]
fn stop_failure_hooks_run_only_alongside_a_session_end_hook() {
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
    let mock = MockApi::start(vec![rate_limit(), rate_limit()]);
    let env = ClaudeEnv::new(&mock);
    let run = |plugin: &Path| {
        env.run(
            &["-p", "hi", "--plugin-dir", path_str(plugin)],
            &[("CLAUDE_CODE_MAX_RETRIES", "0")],
        )
    };

    let output = run(&with);
    assert_eq!(output.code(), Some(1), "{output}");
    let marker = with.join("stop-failure.json");
    let deadline = Instant::now() + HOOK_WAIT;
    while !marker.is_file() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    let payload =
        fs::read_to_string(&marker).unwrap_or_else(|_| panic!("StopFailure did not run\n{output}"));
    assert!(payload.contains("\"error\":\"rate_limit\""), "{payload}");

    let output = run(&without);
    assert_eq!(output.code(), Some(1), "{output}");
    assert_eq!(mock.main_requests().len(), 2);
    // Give a late hook ample time; the hook above wrote its file within milliseconds.
    thread::sleep(Duration::from_secs(3));
    assert!(
        !without.join("stop-failure.json").exists(),
        "StopFailure now runs without a SessionEnd hook: update the facts and this test"
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
    let status_tool = offered
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == status)
        .unwrap_or_else(|| panic!("no `{status}` in {offered:#}"));
    assert_eq!(
        status_tool["input_schema"]["type"], "object",
        "{status_tool:#}"
    );

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
