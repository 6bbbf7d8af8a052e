//! Undo what the agent did to the files (issue 41): one session, three turns that edit through
//! Bash (`sed -i`, `echo >`, `rm`, `mkdir` and a new file, `chmod +x`) and through Write; each
//! turn's end is a snapshot, `checkpoint undo --to` each earlier turn's snapshot gives exactly
//! that turn's tree (bytes and modes, created files gone, deleted ones back), ignored and
//! secret-looking files untouched, HEAD and the index unchanged, and `redo` the later tree; and
//! a sub-agent's writes attributed to it (its stop's snapshot), the main agent's to its session.

use std::{collections::BTreeMap, fs, os::unix::fs::PermissionsExt, path::Path, process::Command};

use checkpoint_e2e::Turn;
use serde_json::json;

use crate::support::{Project, path_str};

const WORKFLOW: &str = "files-e2e";

/// Every file under `root` but `.git` and `.claude`: its bytes and whether it is executable.
fn tree(root: &Path) -> BTreeMap<String, (Vec<u8>, bool)> {
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
            let metadata = fs::symlink_metadata(&path).unwrap();
            if metadata.is_dir() {
                stack.push(path);
            } else {
                let executable = metadata.permissions().mode() & 0o111 != 0;
                files.insert(relative, (fs::read(&path).unwrap(), executable));
            }
        }
    }
    files
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Commits every file of `dir` as the base commit.
fn commit_all(dir: &Path) {
    git(dir, &["add", "-A"]);
    git(
        dir,
        &[
            "-c",
            "user.name=E2E",
            "-c",
            "user.email=e2e@checkpoint.invalid",
            "commit",
            "-qm",
            "base",
        ],
    );
}

fn bash(command: &str) -> Turn {
    Turn::tool_use("Bash", json!({ "command": command, "description": "edit" }))
}

/// The files ignored or secret-looking: whatever is undone, they stay as they are.
fn untouched(files: &BTreeMap<String, (Vec<u8>, bool)>) -> BTreeMap<String, (Vec<u8>, bool)> {
    files
        .iter()
        .filter(|(path, _)| *path == "build.log" || *path == ".env")
        .map(|(path, file)| (path.clone(), file.clone()))
        .collect()
}

fn without_untouched(
    files: &BTreeMap<String, (Vec<u8>, bool)>,
) -> BTreeMap<String, (Vec<u8>, bool)> {
    files
        .iter()
        .filter(|(path, _)| *path != "build.log" && *path != ".env")
        .map(|(path, file)| (path.clone(), file.clone()))
        .collect()
}

#[test]
fn undo_gives_each_turns_tree_back_bash_edits_included_and_redo_the_later_one() {
    let project = Project::new(Vec::new());
    let dir = project.dir().to_path_buf();
    fs::write(dir.join("a.txt"), "one\n").unwrap();
    fs::write(dir.join("run.sh"), "echo run\n").unwrap();
    fs::write(dir.join("gone.txt"), "to be removed\n").unwrap();
    fs::write(dir.join(".gitignore"), "build.log\n").unwrap();
    commit_all(&dir);
    let head = git(&dir, &["rev-parse", "HEAD"]);
    project.checkpoint_ok(&["init", WORKFLOW, "--phase", "edit"]);
    project.checkpoint_ok(&["start", "edit"]);
    let tree0 = tree(&dir);

    let write = |path: &str, content: &str| {
        Turn::tool_use(
            "Write",
            json!({ "file_path": path_str(&dir.join(path)), "content": content }),
        )
    };
    project.mock.push_turns([
        bash("sed -i 's/one/ONE/' a.txt && echo created > b.txt && chmod +x run.sh"),
        write("c.txt", "written by Write\n"),
        Turn::text("TURN-1"),
    ]);
    let tools = ["--allowedTools", "Bash,Write"];
    let first = project.claude(&[
        "-p",
        "turn one",
        "--output-format",
        "json",
        tools[0],
        tools[1],
    ]);
    assert_eq!(first.code(), Some(0), "{first}");
    let session_id = first.json_result().session_id;
    let tree1 = tree(&dir);
    assert_eq!(tree1["a.txt"].0, b"ONE\n", "turn 1's sed did not run");

    project.mock.push_turns([
        bash("rm gone.txt && mkdir -p sub && echo deep > sub/new.txt"),
        Turn::text("TURN-2"),
    ]);
    let second = project.claude(&[
        "-p",
        "--resume",
        &session_id,
        "turn two",
        tools[0],
        tools[1],
    ]);
    assert_eq!(second.code(), Some(0), "{second}");
    let tree2 = tree(&dir);

    project.mock.push_turns([
        bash("echo more >> a.txt && echo log > build.log && echo API_KEY=x > .env"),
        write("d.txt", "a new file by Write\n"),
        Turn::text("TURN-3"),
    ]);
    let third = project.claude(&[
        "-p",
        "--resume",
        &session_id,
        "turn three",
        tools[0],
        tools[1],
    ]);
    assert_eq!(third.code(), Some(0), "{third}");
    let tree3 = tree(&dir);
    let left_alone = untouched(&tree3);
    assert_eq!(left_alone.len(), 2, "{tree3:?}");

    let listed = project.checkpoint_ok(&["--format", "json", "snapshots"]);
    let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let rows = listed["snapshots"].as_array().unwrap();
    let turn_ends: Vec<u64> = rows
        .iter()
        .filter(|row| row["reason"] == "turn_end")
        .map(|row| row["n"].as_u64().unwrap())
        .collect();
    assert_eq!(turn_ends.len(), 3, "{listed:#}");
    assert!(
        rows.iter().all(|row| row["session"] == session_id.as_str()),
        "{listed:#}"
    );
    let before_first = rows
        .iter()
        .find(|row| row["reason"] == "session_start")
        .expect("the session's start took a snapshot")["n"]
        .as_u64()
        .unwrap();

    for (target, expected) in [
        (turn_ends[1], &tree2),
        (turn_ends[0], &tree1),
        (before_first, &tree0),
    ] {
        let index = fs::read(dir.join(".git/index")).unwrap();
        project.checkpoint_ok(&["undo", "--to", &format!("@{target}"), "--yes"]);
        let now = tree(&dir);
        assert_eq!(
            without_untouched(&now),
            without_untouched(expected),
            "@{target}"
        );
        assert_eq!(
            untouched(&now),
            left_alone,
            "ignored or secret files changed"
        );
        assert_eq!(git(&dir, &["rev-parse", "HEAD"]), head);
        assert_eq!(fs::read(dir.join(".git/index")).unwrap(), index);
    }
    project.checkpoint_ok(&["redo", "--yes"]);
    assert_eq!(without_untouched(&tree(&dir)), without_untouched(&tree1));
}

/// A sub-agent writes a file through Bash; after it returns, the main agent writes another: the
/// sub-agent's stop takes a snapshot of its file attributed to its `agent_id` (and the parent's
/// session), the turn's end one of the main agent's file, and `snapshots` and `status` say so.
#[test]
fn a_sub_agents_writes_are_attributed_to_it_and_the_main_agents_to_its_session() {
    let project = Project::new(vec![
        Turn::Tools(vec![(
            "Agent".to_owned(),
            json!({
                "description": "Write the helper file",
                "prompt": "ROUTE-HELPER: write helper.txt.",
                "subagent_type": "general-purpose",
                "run_in_background": false,
            }),
        )]),
        bash("printf 'by the main agent\\n' > main.txt"),
        Turn::text("MAIN-DONE"),
    ]);
    project.mock.route(
        "ROUTE-HELPER",
        [
            bash("printf 'by the helper\\n' > helper.txt"),
            Turn::text("Helper written."),
        ],
    );
    let dir = project.dir().to_path_buf();
    fs::write(dir.join("base.txt"), "base\n").unwrap();
    commit_all(&dir);
    project.checkpoint_ok(&["init", WORKFLOW, "--phase", "edit"]);
    project.checkpoint_ok(&["start", "edit"]);
    let output = project.claude(&[
        "-p",
        "write the files",
        "--output-format",
        "json",
        "--allowedTools",
        "Bash",
    ]);
    assert_eq!(output.code(), Some(0), "{output}");
    let session_id = output.json_result().session_id;
    assert_eq!(
        fs::read(dir.join("helper.txt")).unwrap(),
        b"by the helper\n"
    );
    assert_eq!(
        fs::read(dir.join("main.txt")).unwrap(),
        b"by the main agent\n"
    );

    let listed = project.checkpoint_ok(&["--format", "json", "snapshots"]);
    let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let rows = listed["snapshots"].as_array().unwrap();
    let by_agent = rows
        .iter()
        .find(|row| row["reason"] == "subagent_stop")
        .unwrap_or_else(|| panic!("no snapshot at the sub-agent's stop: {listed:#}"));
    let agent = by_agent["agent"].as_str().expect("the sub-agent's id");
    assert_eq!(by_agent["paths"], json!(["helper.txt"]), "{listed:#}");
    assert_eq!(by_agent["session"], session_id.as_str(), "{listed:#}");
    assert_eq!(by_agent["phase"], "edit", "{listed:#}");
    let by_main = rows
        .iter()
        .find(|row| row["reason"] == "turn_end" && row["paths"] == json!(["main.txt"]))
        .unwrap_or_else(|| panic!("no turn-end snapshot of main.txt: {listed:#}"));
    assert_eq!(by_main["agent"], serde_json::Value::Null, "{listed:#}");
    assert_eq!(by_main["session"], session_id.as_str(), "{listed:#}");
    // The id is the client's own: its sub-agent transcript is named after it.
    assert!(
        project.env.all_transcripts_text().contains(agent),
        "agent `{agent}` is in no transcript"
    );

    let short = |id: &str| id.chars().take(8).collect::<String>();
    let status = project.checkpoint_ok(&["status"]);
    for line in [
        format!(
            "agent {} (session {}): 1 file +1 -0 (helper.txt)",
            short(agent),
            short(&session_id)
        ),
        format!("session {}: 1 file +1 -0 (main.txt)", short(&session_id)),
    ] {
        assert!(status.contains(&line), "{line}\n{status}");
    }
    assert!(status.contains("2 files +2 -0 changed"), "{status}");
}
