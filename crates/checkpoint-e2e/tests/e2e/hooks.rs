//! The bundled hooks never break a session: run directly with input claude would never send,
//! each hook exits 0, says at most a warning, and writes nothing.

use std::fs;
use std::io::Write;
use std::process::Stdio;

use checkpoint_e2e::Plugin;
use serde_json::Value;

use crate::support::{checkpoint_command, read_json, scratch_repo, store_dir};

/// Every event `hooks/hooks.json` wires to `checkpoint hook`.
#[track_caller]
fn wired_events(plugin: &Plugin) -> Vec<String> {
    let hooks = read_json(&plugin.dir().join("hooks").join("hooks.json"));
    let events: Vec<String> = hooks["hooks"]
        .as_object()
        .expect("hooks.json has a `hooks` object")
        .iter()
        // A command ends `exec "$c" hook <event>`, `$c` the installed binary or the launcher.
        .filter(|(event, groups)| {
            groups
                .to_string()
                .contains(&format!("\\\"$c\\\" hook {event}"))
        })
        .map(|(event, _)| event.clone())
        .collect();
    for expected in [
        "SessionStart",
        "PostToolUse",
        "Stop",
        "StopFailure",
        "PreCompact",
    ] {
        assert!(
            events.iter().any(|event| event == expected),
            "{expected} is not wired: {events:?}"
        );
    }
    events
}

#[test]
fn hooks_with_bad_input_exit_0_and_change_nothing() {
    let plugin = Plugin::find();
    let repo = scratch_repo();
    let run_ok = |args: &[&str]| {
        let output = checkpoint_command(&plugin, repo.path(), repo.path())
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "checkpoint {args:?}: {output:?}");
    };
    run_ok(&["init", "wf", "--phase", "design", "--phase", "build:design"]);
    run_ok(&["start", "design"]);
    run_ok(&["progress", "design", "halfway"]);
    let workflow_dir = store_dir(repo.path()).join("wf");
    let snapshot =
        || ["state.json", "journal.jsonl"].map(|name| fs::read(workflow_dir.join(name)).unwrap());
    let before = snapshot();

    let inputs = [
        ("empty stdin", String::new()),
        ("non-JSON stdin", "this is not JSON".to_owned()),
        ("a JSON array", "[1, 2]".to_owned()),
        ("an empty object", "{}".to_owned()),
        (
            "fields of the wrong type",
            r#"{"session_id": 7, "cwd": 7, "tool_name": 7, "error": 7}"#.to_owned(),
        ),
    ];
    let mut problems = Vec::new();
    for event in wired_events(&plugin) {
        for (what, input) in &inputs {
            let mut child = checkpoint_command(&plugin, repo.path(), repo.path())
                .args(["hook", &event])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
            let output = child.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout);
            let stderr = String::from_utf8_lossy(&output.stderr);
            let label = format!("`checkpoint hook {event}` with {what}");
            if output.status.code() != Some(0) {
                problems.push(format!("{label}: {}\n{stderr}", output.status));
            }
            if !stderr.lines().all(|line| line.starts_with("warning:")) {
                problems.push(format!("{label}: stderr is more than a warning:\n{stderr}"));
            }
            // Whatever a hook prints on stdout, claude reads as its output: JSON or nothing.
            if !stdout.trim().is_empty() && serde_json::from_str::<Value>(&stdout).is_err() {
                problems.push(format!("{label}: stdout is not JSON:\n{stdout}"));
            }
            let after = snapshot();
            if after != before {
                let journal = String::from_utf8_lossy(&after[1]);
                problems.push(format!(
                    "{label}: the state changed; journal now ends with {}",
                    journal.lines().last().unwrap_or_default()
                ));
                // Restore, so the next case is judged on its own.
                fs::write(workflow_dir.join("state.json"), &before[0]).unwrap();
                fs::write(workflow_dir.join("journal.jsonl"), &before[1]).unwrap();
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
