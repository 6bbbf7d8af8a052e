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
