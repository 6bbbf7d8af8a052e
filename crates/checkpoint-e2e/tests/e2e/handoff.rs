//! Continue on another machine (issue 43): machine A (its own HOME, a clone of a bare remote)
//! runs a session that edits files through Bash and Write without committing and prints a
//! secret-looking token; `checkpoint push --session` sends it; machine B (another HOME, a clone
//! at another path) `checkpoint pull --session`s it: B's tree equals A's, and `claude -p
//! --resume <id>` on B sends the whole earlier conversation to the model, the token redacted.
//! Without `--session` no transcript reaches the remote, and the token is in no object of it.

use std::{collections::BTreeMap, fs, path::Path, process::Command};

use checkpoint_e2e::{ClaudeEnv, Turn};
use serde_json::json;

use crate::support::{Project, checkpoint_command, path_str};

const WORKFLOW: &str = "handoff-e2e";
const TOKEN: &str = "ghp_1234567890abcdefghijABCDEFGHIJ123456";

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Every file under `root` but `.git` and `.claude`, with its bytes.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if relative == ".git" || relative == ".claude" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(relative, fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// Every object of the bare repository `remote`, as text.
fn remote_objects(remote: &Path) -> String {
    let output = Command::new("git")
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .current_dir(remote)
        .output()
        .expect("git runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_session_goes_on_on_another_machine_with_its_files_and_its_conversation() {
    let remote_dir = tempfile::tempdir().unwrap();
    let remote = remote_dir.path().join("remote.git");
    git(
        remote_dir.path(),
        &["init", "--quiet", "--bare", "remote.git"],
    );
    let remote_url = path_str(&remote).to_owned();

    // Machine A: a clone with committed files on the remote's `main`.
    let a = Project::new(Vec::new());
    let dir_a = a.dir().to_path_buf();
    fs::write(dir_a.join("a.txt"), "one\n").unwrap();
    fs::write(dir_a.join("gone.txt"), "to be removed\n").unwrap();
    git(&dir_a, &["add", "-A"]);
    git(&dir_a, &["commit", "-qm", "base"]);
    git(&dir_a, &["remote", "add", "origin", &remote_url]);
    git(&dir_a, &["push", "-q", "origin", "main"]);
    a.checkpoint_ok(&["init", WORKFLOW, "--phase", "edit"]);
    a.checkpoint_ok(&["start", "edit"]);

    // The session edits through Bash and Write, prints a token, and commits nothing.
    a.mock.push_turns([
        Turn::tool_use(
            "Bash",
            json!({
                "command": format!("sed -i 's/one/ONE/' a.txt && rm gone.txt && echo TOOL-OUTPUT-1 && echo 'token {TOKEN}'"),
                "description": "edit",
            }),
        ),
        Turn::tool_use(
            "Write",
            json!({ "file_path": path_str(&dir_a.join("new/c.txt")), "content": "written by Write\n" }),
        ),
        Turn::text("SESSION-ONE-ANSWER"),
    ]);
    let first = a.claude(&[
        "-p",
        "SESSION-ONE-PROMPT",
        "--output-format",
        "json",
        "--allowedTools",
        "Bash,Write",
    ]);
    assert_eq!(first.code(), Some(0), "{first}");
    let session_id = first.json_result().session_id;
    let tree_a = tree(&dir_a);
    assert_eq!(tree_a["a.txt"], b"ONE\n", "{first}");
    assert!(!tree_a.contains_key("gone.txt"));
    assert!(tree_a.contains_key("new/c.txt"));

    // Without `--session` (and no setting), no transcript reaches the remote.
    a.checkpoint_ok(&["push"]);
    let objects = remote_objects(&remote);
    assert!(
        !objects.contains("SESSION-ONE-PROMPT"),
        "a transcript was sent"
    );
    assert!(!objects.contains("TOOL-OUTPUT-1"));

    // `push --session`: the workflow's last session (the one its hooks saw).
    let sent = a.checkpoint_ok(&["push", "--session"]);
    assert!(
        sent.contains(&format!("sent session {session_id}")),
        "{sent}"
    );
    let objects = remote_objects(&remote);
    assert!(
        objects.contains("SESSION-ONE-PROMPT"),
        "the transcript was not sent"
    );
    assert!(!objects.contains(TOKEN), "the token reached the remote");

    // Machine B: another HOME, a clone at another path, on the remote's `main`.
    let b = ClaudeEnv::new(&a.mock);
    let dir_b = b.project_dir().to_path_buf();
    assert_ne!(dir_a, dir_b);
    git(&dir_b, &["remote", "add", "origin", &remote_url]);
    git(&dir_b, &["fetch", "-q", "origin", "main"]);
    git(&dir_b, &["reset", "-q", "--hard", "FETCH_HEAD"]);
    let pull = checkpoint_command(&a.plugin, &dir_b, b.home())
        .args(["pull", "--workflow", WORKFLOW, "--session"])
        .output()
        .unwrap();
    let pulled = String::from_utf8_lossy(&pull.stdout);
    assert!(
        pull.status.success(),
        "{pulled}\n{}",
        String::from_utf8_lossy(&pull.stderr)
    );
    assert!(
        pulled.contains(&format!("claude --resume {session_id}")),
        "{pulled}"
    );
    assert_eq!(tree(&dir_b), tree_a, "B's tree differs from A's");

    // `claude --resume` on B carries the whole earlier conversation.
    let before = a.mock.main_requests().len();
    a.mock.push_turns([Turn::text("GO-ON-ANSWER")]);
    let resumed = b.run(&["-p", "--resume", &session_id, "go on"], &[]);
    assert_eq!(resumed.code(), Some(0), "{resumed}");
    assert!(resumed.stdout.contains("GO-ON-ANSWER"), "{resumed}");
    let text = a.mock.request_text(before);
    for expected in [
        "SESSION-ONE-PROMPT",
        "SESSION-ONE-ANSWER",
        "TOOL-OUTPUT-1",
        "go on",
    ] {
        assert!(
            text.contains(expected),
            "{expected} missing from B's request"
        );
    }
    assert!(
        !text.contains(TOKEN),
        "the token came back from the transcript"
    );
    let results = a.mock.main_requests()[before].tool_results().len();
    assert!(results >= 2, "the tool results of session 1 were not sent");
}
