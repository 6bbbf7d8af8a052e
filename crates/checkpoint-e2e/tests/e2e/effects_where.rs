//! Never twice where agents really work (issue 38), on the real client: a session started in a
//! git worktree (Claude Code's `.claude/worktrees/<name>/`) records its push in the project's
//! ledger and is refused its repeat, the commit form Claude Code itself writes (a here-document
//! in `$( … )`, an apostrophe in the message) included; a push whose `PostToolUse` never comes
//! (the client killed mid-call, after the push reached the remote) is unknown to the next
//! session, which is told so and refused, until a person runs `checkpoint effects resolve`.
//!
//! One remote counts what reaches it (see `effects.rs`); its `post-receive` hook holds the push
//! while a marker file exists, so that the test kills the client between the remote's update and
//! the call's end.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use checkpoint_e2e::Turn;
use serde_json::Value;

use crate::effects::{Remote, bash, git, result_text, tool_result};
use crate::support::{Project, assert_contains_all, ops, path_str, store_dir};

const WORKFLOW: &str = "where-e2e";
/// Claude Code's own commit form, an apostrophe in the message, then the worktree's push.
const COMMIT_AND_PUSH: &str = "git commit --allow-empty -m \"$(cat <<'EOF'\nFix the flow so it doesn't break\nEOF\n)\" && git push origin wt";
/// The push the killed session makes from the project's root.
const PUSH_MAIN: &str = "git push origin main";

/// The effects of the workflow, as `effects --all --format json` lists them.
fn effects(project: &Project) -> Vec<Value> {
    let out = project.checkpoint_ok(&["effects", "--all", "--format", "json"]);
    serde_json::from_str::<Value>(&out).unwrap()["effects"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_worktree_push_the_commit_form_and_a_killed_push_are_never_repeated_unasked() {
    let project = Project::new(vec![
        bash(COMMIT_AND_PUSH),
        bash(COMMIT_AND_PUSH),
        bash("git push origin wt"),
        Turn::text("WORKTREE-DONE"),
    ]);
    let remote = Remote::new(&project);
    let hold = project.env.home().join("hold-push");
    let pushes_log = project.env.home().join("pushes.log");
    fs::write(
        remote.dir.join("hooks").join("post-receive"),
        format!(
            "#!/bin/sh\nwhile read old new ref; do echo \"$ref $new\" >> '{}'; done\nn=0\nwhile [ -f '{}' ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done\n",
            path_str(&pushes_log),
            path_str(&hold)
        ),
    )
    .unwrap();
    fs::set_permissions(
        remote.dir.join("hooks").join("post-receive"),
        fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    project.checkpoint_ok(&["init", WORKFLOW, "--phase", "deploy"]);
    project.checkpoint_ok(&["start", "deploy"]);
    let worktree = project.dir().join(".claude/worktrees/agent-1");
    git(
        project.dir(),
        &[
            "worktree",
            "add",
            "--quiet",
            "-b",
            "wt",
            path_str(&worktree),
        ],
    );

    // Session 1 runs in the worktree: the commit form pushes once, its repeat and a plain push
    // of the same branch are refused from the project's ledger.
    let mut command = project.env.command(
        &[
            "-p",
            "ship the fix",
            "--allowedTools",
            "Bash",
            "--plugin-dir",
            path_str(project.plugin.dir()),
        ],
        &[],
    );
    command.current_dir(&worktree);
    let mut child = command.spawn().expect("claude starts");
    let first = project.env.wait(&mut child, &["-p", "ship the fix"]);
    assert_eq!(first.code(), Some(0), "{first}");
    assert_eq!(tool_result(&project, 1)["is_error"], false, "{first}");
    assert_eq!(remote.pushes().len(), 1, "{:?}", remote.pushes());
    let pushed = remote.head("wt").expect("wt reached the remote");
    for idx in [2, 3] {
        let refused = tool_result(&project, idx);
        assert_eq!(refused["is_error"], true, "{refused:#}");
        assert_contains_all(
            "the refused repeat",
            &result_text(&refused),
            &["git push origin wt", "checkpoint effects allow 1"],
        );
    }
    assert_eq!(remote.pushes().len(), 1, "{:?}", remote.pushes());
    assert_eq!(remote.head("wt").as_deref(), Some(pushed.as_str()));
    let listed = effects(&project);
    assert_eq!(listed[0]["ok"], true, "{listed:?}");
    assert_eq!(listed[0]["command"], "git push origin wt", "{listed:?}");
    assert!(
        !store_dir(&worktree).exists(),
        "a store was made in the worktree"
    );

    // Session 2 pushes from the root; the client is killed after the push reached the remote
    // and before the call ended: no PostToolUse.
    fs::write(&hold, "").unwrap();
    // Only the push: the client is killed before it asks for more.
    project.mock.push_turns([bash(PUSH_MAIN)]);
    let mut child = project
        .env
        .command(
            &[
                "-p",
                "push main",
                "--allowedTools",
                "Bash",
                "--plugin-dir",
                path_str(project.plugin.dir()),
            ],
            &[],
        )
        .spawn()
        .expect("claude starts");
    let started = Instant::now();
    while !remote
        .pushes()
        .iter()
        .any(|line| line.starts_with("refs/heads/main "))
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the push never reached the remote; journal: {:?}",
            ops(&project.journal(WORKFLOW))
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status();
    let _ = child.kill();
    let _ = child.wait();
    fs::remove_file(&hold).unwrap();
    let main = remote.head("main").expect("main reached the remote");
    let cut = effects(&project);
    let intent = cut
        .iter()
        .find(|row| row["command"] == PUSH_MAIN)
        .unwrap_or_else(|| panic!("no intent of the push: {cut:?}"));
    assert_eq!(intent["unknown"], true, "{intent}");
    let number = intent["number"].as_u64().unwrap().to_string();

    // Session 3 is told the push may have happened, and its repeat is refused.
    let before = project.mock.main_requests().len();
    project
        .mock
        .push_turns([bash(PUSH_MAIN), Turn::text("SESSION-3-DONE")]);
    let third_args = ["-p", "push main again", "--allowedTools", "Bash"];
    let third = project.claude(&third_args);
    assert_eq!(third.code(), Some(0), "{third}");
    let request = &project.mock.main_requests()[before];
    let told = format!(
        "{}\n{}",
        request.role_text("system"),
        request.role_text("user")
    );
    assert_contains_all(
        "session 3's first request",
        &told,
        &[PUSH_MAIN, "may have happened", "git ls-remote origin main"],
    );
    let refused = tool_result(&project, before + 1);
    assert_eq!(refused["is_error"], true, "{refused:#}");
    assert_contains_all(
        "the unknown push's refusal",
        &result_text(&refused),
        &[
            PUSH_MAIN,
            "outcome unknown",
            "git ls-remote origin main",
            &format!("checkpoint effects resolve {number}"),
        ],
    );
    let pushes = remote.pushes();
    assert_eq!(pushes.len(), 2, "{pushes:?}");

    // A person checks and says it did not happen (say the remote was reset): a repeat runs.
    git(&remote.dir, &["update-ref", "-d", "refs/heads/main"]);
    project.checkpoint_ok(&["effects", "resolve", &number, "--not-done"]);
    let before = project.mock.main_requests().len();
    project
        .mock
        .push_turns([bash(PUSH_MAIN), Turn::text("SESSION-4-DONE")]);
    let fourth = project.claude(&third_args);
    assert_eq!(fourth.code(), Some(0), "{fourth}");
    let ran = tool_result(&project, before + 1);
    assert_eq!(ran["is_error"], false, "{ran:#}");
    assert_eq!(remote.pushes().len(), 3, "{:?}", remote.pushes());
    assert_eq!(remote.head("main").as_deref(), Some(main.as_str()));
}
