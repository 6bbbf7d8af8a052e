//! Never twice (issue 29): a `git push` that succeeded in a session cut off before its phase
//! completed does not reach the remote again from the next session; the model is told why, a
//! different push goes through, and `checkpoint effects allow <n>` lets exactly one repeat by.
//!
//! The remote is a local bare repository whose `post-receive` hook appends a line per updated
//! ref to a file: the file's lines are the pushes that reached it.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use checkpoint_e2e::Turn;
use serde_json::{Value, json};

use crate::support::{Project, assert_contains_all, ops, path_str, phase};

const WORKFLOW: &str = "release-e2e";
/// The push of session 1, repeated by the later sessions.
const PUSH: &str = "git push origin main";
/// A different push: another branch.
const OTHER_PUSH: &str = "git push origin main:hotfix";

/// A bare repository beside the project, its `post-receive` hook counting what reaches it.
pub(crate) struct Remote {
    pub(crate) dir: PathBuf,
    pushes: PathBuf,
}

impl Remote {
    #[track_caller]
    pub(crate) fn new(project: &Project) -> Remote {
        let dir = project.env.home().join("remote.git");
        git(
            project.env.home(),
            &["init", "--quiet", "--bare", path_str(&dir)],
        );
        let pushes = project.env.home().join("pushes.log");
        let hook = dir.join("hooks").join("post-receive");
        fs::write(
            &hook,
            format!(
                "#!/bin/sh\nwhile read old new ref; do echo \"$ref $new\" >> '{}'; done\n",
                path_str(&pushes)
            ),
        )
        .unwrap();
        fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
        git(project.dir(), &["remote", "add", "origin", path_str(&dir)]);
        Remote { dir, pushes }
    }

    /// The pushes that reached the remote, one `<ref> <sha>` line each, in order.
    pub(crate) fn pushes(&self) -> Vec<String> {
        fs::read_to_string(&self.pushes)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The remote's `refs/heads/<branch>`, if it has one.
    pub(crate) fn head(&self, branch: &str) -> Option<String> {
        let output = Command::new("git")
            .args([
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{branch}"),
            ])
            .current_dir(&self.dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }
}

#[track_caller]
pub(crate) fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {output:?}");
}

pub(crate) fn bash(command: &str) -> Turn {
    Turn::tool_use("Bash", json!({ "command": command, "description": "push" }))
}

/// The tool results of main request `idx` (0-based over every session so far).
pub(crate) fn tool_result(project: &Project, idx: usize) -> Value {
    let main = project.mock.main_requests();
    let request = main
        .get(idx)
        .unwrap_or_else(|| panic!("no main request {idx}: only {}", main.len()));
    request
        .tool_results()
        .last()
        .copied()
        .cloned()
        .unwrap_or_else(|| panic!("main request {idx} carries no tool result"))
}

/// The text of a tool result, whether its `content` is a string or a list of blocks.
pub(crate) fn result_text(result: &Value) -> String {
    match &result["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[test]
fn a_push_done_before_a_cut_off_is_not_repeated_until_allowed_once() {
    let project = Project::new(vec![bash(PUSH), Turn::text("CUT-OFF")]);
    let remote = Remote::new(&project);
    project.checkpoint_ok(&[
        "init",
        WORKFLOW,
        "--phase",
        "deploy",
        "--phase",
        "announce:deploy",
    ]);
    project.checkpoint_ok(&["start", "deploy"]);

    // Session 1 pushes, then ends before completing `deploy`.
    let first = project.claude(&["-p", "deploy the release", "--allowedTools", "Bash"]);
    assert_eq!(first.code(), Some(0), "{first}");
    assert_eq!(tool_result(&project, 1)["is_error"], false, "{first}");
    assert_eq!(remote.pushes().len(), 1, "session 1's push did not arrive");
    let pushed = remote.head("main").expect("main reached the remote");
    let journal = project.journal(WORKFLOW);
    // The intent, journaled before the push ran, then its outcome settling it.
    let intent = journal
        .iter()
        .find(|entry| entry["transition"]["op"] == "effect")
        .unwrap_or_else(|| panic!("no effect entry in {:?}", ops(&journal)));
    assert_eq!(intent["transition"]["intent"], true, "{intent:#}");
    let effect = journal
        .iter()
        .find(|entry| {
            entry["transition"]["op"] == "effect" && entry["transition"]["intent"] != true
        })
        .unwrap_or_else(|| panic!("no settled effect in {:?}", ops(&journal)));
    assert_eq!(effect["transition"]["ok"], true, "{effect:#}");
    assert_eq!(effect["transition"]["phase"], "deploy", "{effect:#}");
    let state = project.state(WORKFLOW);
    assert_eq!(
        phase(&state, "deploy")["status"],
        "in_progress",
        "{state:#}"
    );

    // New work since: a repeat of the push would now change the remote.
    git(
        project.dir(),
        &[
            "commit",
            "--quiet",
            "--allow-empty",
            "-m",
            "after the cut-off",
        ],
    );

    // Session 2 redoes the phase: the same push is refused, another branch goes through.
    let before = project.mock.main_requests().len();
    project
        .mock
        .push_turns([bash(PUSH), bash(OTHER_PUSH), Turn::text("SESSION-2-DONE")]);
    let second = project.claude(&["-p", "redo the deploy phase", "--allowedTools", "Bash"]);
    assert_eq!(second.code(), Some(0), "{second}");
    let system = project.mock.main_requests()[before].role_text("system");
    assert_contains_all(
        "session 2's first request",
        &system,
        &[PUSH, "checkpoint effects allow"],
    );
    let refused = tool_result(&project, before + 1);
    assert_eq!(refused["is_error"], true, "{refused:#}");
    assert_contains_all(
        "the refused repeat's tool result",
        &result_text(&refused),
        &[PUSH, "deploy", "checkpoint effects allow 1"],
    );
    assert_eq!(remote.head("main").as_deref(), Some(pushed.as_str()));
    let other = tool_result(&project, before + 2);
    assert_eq!(other["is_error"], false, "{other:#}");
    let pushes = remote.pushes();
    assert_eq!(pushes.len(), 2, "{pushes:?}");
    assert!(pushes[1].starts_with("refs/heads/hotfix "), "{pushes:?}");

    // A person lets one repeat through: the first goes, the second is refused again.
    project.checkpoint_ok(&["effects", "allow", "1"]);
    let before = project.mock.main_requests().len();
    project
        .mock
        .push_turns([bash(PUSH), bash(PUSH), Turn::text("SESSION-3-DONE")]);
    let third = project.claude(&["-p", "push again", "--allowedTools", "Bash"]);
    assert_eq!(third.code(), Some(0), "{third}");
    let allowed = tool_result(&project, before + 1);
    assert_eq!(allowed["is_error"], false, "{allowed:#}");
    let again = tool_result(&project, before + 2);
    assert_eq!(again["is_error"], true, "{again:#}");
    assert_contains_all(
        "the second repeat's tool result",
        &result_text(&again),
        &[PUSH, "checkpoint effects allow"],
    );
    let pushes = remote.pushes();
    assert_eq!(pushes.len(), 3, "{pushes:?}");
    assert!(pushes[2].starts_with("refs/heads/main "), "{pushes:?}");
    assert_ne!(remote.head("main").as_deref(), Some(pushed.as_str()));
    let journal = project.journal(WORKFLOW);
    let ops = ops(&journal);
    assert!(ops.iter().any(|op| op == "effect_allow"), "{ops:?}");
}
