//! Snapshots of the working tree and files put back (`snapshot`, `snapshots`, `diff --files`,
//! `undo`, `redo`, `rewind --files`, the hooks' snapshots): every kind of change, a linked
//! worktree, a repository with no commit, concurrent and killed snapshots, a killed undo, a
//! full disk.

use std::{
    collections::BTreeMap,
    ffi::OsStr,
    fs,
    os::unix::{
        ffi::OsStrExt,
        fs::{PermissionsExt, symlink},
    },
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use serde_json::json;

use crate::support::{TestEnv, git, hook_payload, render, repo};

/// One entry of a tree as the test sees it: a file (its bytes and whether it is executable), a
/// link (its target) or a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    File(Vec<u8>, bool),
    Link(Vec<u8>),
    Dir,
}

/// Every entry under `root` but `.git` and the store, by path bytes.
fn tree(root: &Path) -> BTreeMap<Vec<u8>, Node> {
    let mut nodes = BTreeMap::new();
    walk(root, root, &mut nodes);
    nodes
}

fn walk(root: &Path, dir: &Path, nodes: &mut BTreeMap<Vec<u8>, Node>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let relative = path.strip_prefix(root).unwrap();
        if relative == Path::new(".git") || relative == Path::new(".claude") {
            continue;
        }
        let key = relative.as_os_str().as_bytes().to_vec();
        let metadata = fs::symlink_metadata(&path).unwrap();
        let node = if metadata.file_type().is_symlink() {
            Node::Link(
                fs::read_link(&path)
                    .unwrap()
                    .as_os_str()
                    .as_bytes()
                    .to_vec(),
            )
        } else if metadata.is_dir() {
            if !path.join(".git").exists() {
                walk(root, &path, nodes);
            }
            Node::Dir
        } else {
            Node::File(
                fs::read(&path).unwrap(),
                metadata.permissions().mode() & 0o111 != 0,
            )
        };
        nodes.insert(key, node);
    }
}

fn write(root: &Path, path: &str, content: &str) {
    let full = root.join(path);
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    fs::write(full, content).unwrap();
}

fn chmod(root: &Path, path: &str, mode: u32) {
    fs::set_permissions(root.join(path), fs::Permissions::from_mode(mode)).unwrap();
}

/// A non-UTF-8 file name.
fn latin1() -> PathBuf {
    PathBuf::from(OsStr::from_bytes(b"caf\xe9.txt"))
}

/// A workflow `w` with phase `build` started, in a real repository.
fn started() -> TestEnv {
    let env = repo();
    env.ok(&["init", "w", "--phase", "build", "--phase", "test"]);
    env.ok(&["start", "build"]);
    env
}

/// The files that stay as they are whatever is undone: ignored, secret-looking, over the bound.
fn untouchable(nodes: &BTreeMap<Vec<u8>, Node>) -> BTreeMap<Vec<u8>, Node> {
    nodes
        .iter()
        .filter(|(path, _)| {
            let path = String::from_utf8_lossy(path);
            path.starts_with("build.log") || path.starts_with(".env") || path.starts_with("big.bin")
        })
        .map(|(path, node)| (path.clone(), node.clone()))
        .collect()
}

fn without(
    nodes: &BTreeMap<Vec<u8>, Node>,
    left: &BTreeMap<Vec<u8>, Node>,
) -> BTreeMap<Vec<u8>, Node> {
    nodes
        .iter()
        .filter(|(path, _)| !left.contains_key(*path))
        .map(|(path, node)| (path.clone(), node.clone()))
        .collect()
}

/// HEAD, the index's bytes, the branches, the stash and the tags.
fn git_state(root: &Path) -> (String, Vec<u8>, String) {
    let head = git(root, &["rev-parse", "HEAD"]);
    let index = fs::read(root.join(".git/index")).unwrap_or_default();
    let refs = git(
        root,
        &["for-each-ref", "refs/heads", "refs/tags", "refs/stash"],
    );
    (head, index, refs)
}

#[test]
fn every_kind_of_change_is_put_back_exactly_and_redo_gives_the_later_tree() {
    let env = started();
    let root = env.project();
    fs::write(
        env.store().join("config.toml"),
        "[files]\nmax_file_bytes = 1000\n",
    )
    .unwrap();
    write(&root, ".gitignore", "build.log\n");
    write(&root, "edit.txt", "one\n");
    write(&root, "mode.sh", "echo hi\n");
    write(&root, "gone.txt", "deleted later\n");
    write(&root, "becomes_dir", "a file first\n");
    write(&root, "was_dir/inner.txt", "a directory first\n");
    write(&root, "name with spaces\nand a newline.txt", "odd name\n");
    fs::write(root.join(latin1()), "latin-1 name\n").unwrap();
    symlink("edit.txt", root.join("link")).unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "base"]);
    let before_git = git_state(&root);
    env.ok(&["snapshot", "-m", "base"]);
    let first = tree(&root);

    // Every kind of change, through the file system as a shell would make it.
    write(&root, "edit.txt", "one\ntwo\n");
    chmod(&root, "mode.sh", 0o755);
    fs::remove_file(root.join("gone.txt")).unwrap();
    fs::remove_file(root.join("becomes_dir")).unwrap();
    write(&root, "becomes_dir/child.txt", "now a directory\n");
    fs::remove_dir_all(root.join("was_dir")).unwrap();
    write(&root, "was_dir", "now a file\n");
    write(&root, "new/deep/file.txt", "created\n");
    fs::create_dir_all(root.join("empty_dir")).unwrap();
    fs::remove_file(root.join("link")).unwrap();
    symlink("mode.sh", root.join("link")).unwrap();
    write(
        &root,
        "name with spaces\nand a newline.txt",
        "odd name, edited\n",
    );
    fs::write(root.join(latin1()), "latin-1 name, edited\n").unwrap();
    write(&root, "build.log", "ignored\n");
    write(&root, ".env", "API_KEY=not-a-real-one\n");
    fs::write(root.join("big.bin"), vec![b'x'; 5000]).unwrap();
    let taken = env.run(&["snapshot"]);
    assert!(taken.status.success(), "{}", render(&env, &taken));
    let stderr = String::from_utf8_lossy(&taken.stderr);
    assert!(stderr.contains("`.env` was left out"), "{stderr}");
    assert!(
        stderr.contains("`big.bin` was left out") && stderr.contains("1000 bytes"),
        "{stderr}"
    );
    let second = tree(&root);
    assert_eq!(
        git_state(&root),
        before_git,
        "a snapshot changed git's state"
    );

    let undone = env.run(&["undo", "--to", "@1", "--yes"]);
    assert!(undone.status.success(), "{}", render(&env, &undone));
    let left = untouchable(&second);
    let mut expected = without(&first, &left);
    // An empty directory is no file: git keeps none, and an undo leaves it.
    expected.insert(b"empty_dir".to_vec(), Node::Dir);
    assert_eq!(without(&tree(&root), &left), expected);
    assert_eq!(
        untouchable(&tree(&root)),
        left,
        "ignored/secret/big files changed"
    );
    assert_eq!(
        git_state(&root),
        before_git,
        "an undo changed HEAD, the index or a ref"
    );

    let redone = env.run(&["redo", "--yes"]);
    assert!(redone.status.success(), "{}", render(&env, &redone));
    assert_eq!(tree(&root), second);
    assert_eq!(git_state(&root), before_git);
}

#[test]
fn a_dry_run_changes_nothing_and_names_the_edits_no_snapshot_holds() {
    let env = started();
    let root = env.project();
    write(&root, "a.txt", "first\n");
    env.ok(&["snapshot"]);
    write(&root, "a.txt", "second\n");
    env.ok(&["snapshot"]);
    write(&root, "mine.txt", "a person's edit\n");
    let before = tree(&root);
    let refs = git(&root, &["for-each-ref"]);
    let journal = env.read("w", "journal.jsonl");
    let report = env.json(&["undo", "--to", "@1", "--dry-run"]);
    assert_eq!(tree(&root), before);
    assert_eq!(git(&root, &["for-each-ref"]), refs);
    assert_eq!(env.read("w", "journal.jsonl"), journal);
    assert_eq!(report["dry_run"], true);
    let files = report["files"].as_array().unwrap();
    let row = |path: &str| files.iter().find(|file| file["path"] == path).unwrap();
    assert_eq!(row("a.txt")["action"], "modify");
    assert_eq!(row("a.txt")["unsnapshotted"], false);
    assert_eq!(row("mine.txt")["action"], "delete");
    assert_eq!(row("mine.txt")["unsnapshotted"], true);
    // The undo itself keeps the person's edit in its own snapshot: redo gives it back.
    env.ok(&["undo", "--to", "@1", "--yes"]);
    assert!(!root.join("mine.txt").exists());
    env.ok(&["redo", "--yes"]);
    assert_eq!(
        fs::read_to_string(root.join("mine.txt")).unwrap(),
        "a person's edit\n"
    );
}

#[test]
fn undo_with_no_target_goes_back_one_turn_at_a_time_and_paths_limit_it() {
    let env = started();
    let root = env.project();
    for (turn, text) in ["one", "two", "three"].iter().enumerate() {
        write(&root, "a.txt", text);
        write(&root, "b.txt", text);
        let payload = hook_payload(&env, "Stop", json!({"stop_hook_active": false}));
        let (code, _, stderr) = env.hook("Stop", &payload).wait();
        assert_eq!((code, stderr.as_str()), (0, ""), "turn {turn}");
    }
    env.ok(&["undo", "--yes"]);
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "two");
    env.ok(&["undo", "--yes"]);
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "one");
    env.ok(&["redo", "--yes"]);
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "two");
    // Only the named path comes back.
    env.ok(&["undo", "--to", "@1", "--yes", "--", "b.txt"]);
    assert_eq!(fs::read_to_string(root.join("b.txt")).unwrap(), "one");
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "two");
}

#[test]
fn nothing_changed_stores_nothing_and_the_list_says_who_changed_what() {
    let env = started();
    let root = env.project();
    write(&root, "a.txt", "1\n2\n");
    env.ok(&["snapshot", "-m", "mine"]);
    let objects = git(&root, &["count-objects", "-v"]);
    let journal = env.read("w", "journal.jsonl");
    let out = env.ok(&["snapshot"]);
    assert!(out.contains("nothing changed since snapshot @1"), "{out}");
    assert_eq!(git(&root, &["count-objects", "-v"]), objects);
    assert_eq!(env.read("w", "journal.jsonl"), journal);
    write(&root, "a.txt", "1\n3\n4\n");
    let payload = hook_payload(
        &env,
        "SubagentStop",
        json!({"agent_id": "agent-7", "agent_type": "general-purpose", "stop_hook_active": false}),
    );
    let (code, _, stderr) = env.hook("SubagentStop", &payload).wait();
    assert_eq!((code, stderr.as_str()), (0, ""));
    let list = env.json(&["snapshots"]);
    let rows = list["snapshots"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["reason"], "manual");
    assert_eq!(rows[0]["label"], "mine");
    assert_eq!(rows[1]["reason"], "subagent_stop");
    assert_eq!(rows[1]["agent"], "agent-7");
    assert_eq!(rows[1]["session"], "11111111-2222-3333-4444-555555555555");
    assert_eq!(rows[1]["phase"], "build");
    assert_eq!(rows[1]["files_changed"], 1);
    assert_eq!(rows[1]["paths"], json!(["a.txt"]));
    assert_eq!(
        (rows[1]["added"].clone(), rows[1]["removed"].clone()),
        (json!(2), json!(1))
    );
    let by_session = env.json(&[
        "snapshots",
        "--session",
        "11111111-2222-3333-4444-555555555555",
    ]);
    assert_eq!(by_session["snapshots"].as_array().unwrap().len(), 1);
    let by_phase = env.json(&["snapshots", "--phase", "test"]);
    assert_eq!(by_phase["snapshots"], json!([]));
    let diff = env.json(&["diff", "--files", "@1", "@2"]);
    assert_eq!(
        diff["files"],
        json!([{"path": "a.txt", "change": "modified", "added": 2, "removed": 1}])
    );
    let text = env.ok(&["diff", "--files", "@1"]);
    assert!(text.contains("a.txt") && text.contains("+3"), "{text}");
    let log = env.ok(&["log"]);
    assert!(
        log.contains("files snapshot") && log.contains("by agent agent-7"),
        "{log}"
    );
    // The snapshot taken is the list's row and number, whatever lies between in the journal.
    env.ok(&["note", "between the snapshots"]);
    write(&root, "b.txt", "b\n");
    let taken = env.json(&["snapshot"]);
    let list = env.json(&["snapshots"]);
    assert_eq!(taken["snapshot"]["n"], 3);
    assert_eq!(
        taken["snapshot"],
        list["snapshots"]
            .as_array()
            .unwrap()
            .last()
            .cloned()
            .unwrap()
    );
    let again = env.ok(&["snapshot"]);
    assert!(
        again.contains("nothing changed since snapshot @3"),
        "{again}"
    );
}

#[test]
fn phase_targets_and_rewind_with_files_go_back_together() {
    let env = repo();
    let root = env.project();
    env.ok(&["init", "w", "--phase", "build", "--phase", "test"]);
    write(&root, "a.txt", "before build\n");
    env.ok(&["snapshot"]);
    env.ok(&["start", "build"]);
    write(&root, "a.txt", "built\n");
    env.ok(&["complete", "build"]);
    env.ok(&["start", "test"]);
    write(&root, "a.txt", "tested\n");
    env.ok(&["snapshot"]);
    let list = env.json(&["snapshots"]);
    assert_eq!(list["snapshots"][1]["reason"], "phase_complete");
    assert_eq!(list["snapshots"][1]["phase"], "build");
    env.ok(&["undo", "--to", "build", "--yes"]);
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "built\n");
    env.ok(&["undo", "--to", "build^", "--yes"]);
    assert_eq!(
        fs::read_to_string(root.join("a.txt")).unwrap(),
        "before build\n"
    );
    env.ok(&["redo", "--yes"]);
    env.ok(&["rewind", "build", "--files", "--yes"]);
    assert_eq!(
        fs::read_to_string(root.join("a.txt")).unwrap(),
        "before build\n"
    );
    assert_eq!(env.state("w")["phases"][0]["status"], "pending");
    let bad = env.run(&["undo", "--to", "@9"]);
    assert_eq!(bad.status.code(), Some(4), "{}", render(&env, &bad));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("there is no snapshot @9"));
    // Every target that names no snapshot is not found (4); one that names nothing is a usage
    // error (2); each says so in the typed error, for every command that takes a target.
    for (args, code, diagnostic) in [
        (
            &["undo", "--to", "@9", "--dry-run"][..],
            4,
            "checkpoint::files::no_snapshot",
        ),
        (
            &["undo", "--to", "test", "--dry-run"],
            4,
            "checkpoint::files::no_snapshot",
        ),
        (
            &["undo", "--to", "1", "--dry-run"],
            4,
            "checkpoint::files::no_snapshot",
        ),
        (
            &["diff", "--files", "@1", "@99"],
            4,
            "checkpoint::files::no_snapshot",
        ),
        (
            &["undo", "--to", "@", "--dry-run"],
            2,
            "checkpoint::files::bad_target",
        ),
        (
            &["undo", "--to", "@0", "--dry-run"],
            2,
            "checkpoint::files::bad_target",
        ),
        (
            &["undo", "--to", "a b", "--dry-run"],
            2,
            "checkpoint::files::bad_target",
        ),
        (
            &["diff", "--files", "@x"],
            2,
            "checkpoint::files::bad_target",
        ),
    ] {
        let file = env.dir.path().join("error.json");
        fs::write(&file, "").unwrap();
        let output = env
            .cmd()
            .env(checkpoint_contract::env::CHECKPOINT_ERROR_FILE, &file)
            .args(args)
            .output()
            .unwrap();
        let report: checkpoint_contract::document::ErrorReport =
            serde_json::from_str(&fs::read_to_string(&file).unwrap())
                .unwrap_or_else(|err| panic!("{args:?}: {err}: {}", render(&env, &output)));
        assert_eq!(
            (output.status.code(), report.code.as_deref()),
            (Some(code), Some(diagnostic)),
            "{args:?}"
        );
    }
}

#[test]
fn a_linked_worktree_and_a_repository_with_no_commit_have_snapshots() {
    let env = repo();
    let main = env.project();
    let linked = env.dir.path().join("linked");
    git(&main, &["worktree", "add", "-q", linked.to_str().unwrap()]);
    let main_head = git(&main, &["rev-parse", "HEAD"]);
    let run = |dir: &Path, args: &[&str]| {
        let output = env.cmd().current_dir(dir).args(args).output().unwrap();
        assert!(output.status.success(), "{}", render(&env, &output));
    };
    run(&linked, &["init", "w", "--phase", "p"]);
    write(&linked, "x.txt", "one\n");
    run(&linked, &["snapshot"]);
    write(&linked, "x.txt", "two\n");
    run(&linked, &["snapshot"]);
    run(&linked, &["undo", "--to", "@1", "--yes"]);
    assert_eq!(fs::read_to_string(linked.join("x.txt")).unwrap(), "one\n");
    assert_eq!(git(&main, &["rev-parse", "HEAD"]), main_head);
    let refs = git(
        &main,
        &["for-each-ref", "--format=%(refname)", "refs/checkpoint"],
    );
    assert_eq!(refs.trim(), "refs/checkpoint/worktrees/linked/snapshots/w");
    assert!(!main.join("x.txt").exists());

    let fresh = TestEnv::bare();
    let root = fresh.project();
    git(&root, &["init", "-q"]);
    fresh.ok(&["init", "w", "--phase", "p"]);
    write(&root, "a.txt", "one\n");
    fresh.ok(&["snapshot"]);
    write(&root, "a.txt", "two\n");
    write(&root, "b.txt", "new\n");
    fresh.ok(&["snapshot"]);
    fresh.ok(&["undo", "--to", "@1", "--yes"]);
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "one\n");
    assert!(!root.join("b.txt").exists());
    let head = std::process::Command::new("git")
        .args(["rev-parse", "-q", "--verify", "HEAD"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(!head.status.success(), "a commit appeared on HEAD");
}

#[test]
fn a_submodule_is_left_alone() {
    let env = started();
    let root = env.project();
    let origin = env.dir.path().join("origin");
    fs::create_dir_all(&origin).unwrap();
    git(&origin, &["init", "-q"]);
    git(&origin, &["commit", "-q", "--allow-empty", "-m", "one"]);
    git(
        &root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            origin.to_str().unwrap(),
            "sub",
        ],
    );
    git(&root, &["commit", "-qm", "sub"]);
    env.ok(&["snapshot"]);
    git(
        &root.join("sub"),
        &["commit", "-q", "--allow-empty", "-m", "two"],
    );
    let moved = git(&root.join("sub"), &["rev-parse", "HEAD"]);
    write(&root, "a.txt", "x\n");
    env.ok(&["snapshot"]);
    env.ok(&["undo", "--to", "@1", "--yes"]);
    assert!(!root.join("a.txt").exists());
    assert_eq!(git(&root.join("sub"), &["rev-parse", "HEAD"]), moved);
}

#[test]
fn two_hooks_at_once_chain_their_snapshots() {
    let env = started();
    let root = env.project();
    for round in 0..5 {
        write(&root, &format!("f{round}.txt"), "x\n");
        let payload = hook_payload(&env, "Stop", json!({"stop_hook_active": false}));
        let first = env.hook("Stop", &payload);
        write(&root, &format!("g{round}.txt"), "y\n");
        let second = env.hook("Stop", &payload);
        for run in [first, second] {
            let (code, _, stderr) = run.wait();
            assert_eq!((code, stderr.as_str()), (0, ""));
        }
    }
    let list = env.json(&["snapshots"]);
    let commits: Vec<String> = list["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["commit"].as_str().unwrap().to_owned())
        .collect();
    // Each snapshot is the child of the one before it: none was lost to a race.
    let chain = git(
        &root,
        &["rev-list", "--reverse", "refs/checkpoint/snapshots/w"],
    );
    assert_eq!(chain.lines().collect::<Vec<_>>(), commits);
    let head_tree = git(&root, &["rev-parse", "refs/checkpoint/snapshots/w^{tree}"]);
    git(&root, &["add", "-A", "--", ".", ":!.claude"]);
    assert_eq!(git(&root, &["write-tree"]), head_tree);
}

#[test]
fn the_other_clients_turn_ends_take_snapshots() {
    let env = started();
    let root = env.project();
    let payload = |event: &str| {
        json!({"session_id": "s-1", "turn_id": "t", "cwd": root, "hook_event_name": event,
               "transcript_path": null, "stop_hook_active": false, "prompt": "p",
               "prompt_response": "done", "last_assistant_message": "done"})
        .to_string()
    };
    write(&root, "codex.txt", "x\n");
    let (code, _, stderr) = env.client_hook("codex", "Stop", &payload("Stop")).wait();
    assert_eq!((code, stderr.as_str()), (0, ""));
    write(&root, "gemini.txt", "x\n");
    let (code, _, stderr) = env
        .client_hook("gemini", "AfterAgent", &payload("AfterAgent"))
        .wait();
    assert_eq!((code, stderr.as_str()), (0, ""));
    let list = env.json(&["snapshots"]);
    let rows = list["snapshots"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{list}");
    assert_eq!(rows[0]["paths"], json!(["codex.txt"]));
    assert_eq!(rows[1]["paths"], json!(["gemini.txt"]));
    assert!(rows.iter().all(|row| row["reason"] == "turn_end"));
}

#[test]
fn a_session_start_names_the_files_changed_while_nobody_watched() {
    let env = started();
    let root = env.project();
    env.ok(&["snapshot"]);
    write(&root, "outside.txt", "edited between sessions\n");
    let context = crate::support::session_start_context(&env);
    assert!(
        context.contains("Files changed since the last snapshot"),
        "{context}"
    );
    assert!(context.contains("`outside.txt`"), "{context}");
    assert_eq!(
        env.json(&["snapshots"])["snapshots"][1]["reason"],
        "session_start"
    );
}

#[test]
fn a_hook_past_its_time_bound_stops_and_the_next_one_finishes() {
    let env = started();
    let root = env.project();
    env.ok(&["snapshot"]);
    write(&root, "late.txt", "x\n");
    let payload = hook_payload(&env, "Stop", json!({"stop_hook_active": false}));
    let cut = env.hook_with_env("Stop", &payload, &[("CHECKPOINT_SNAPSHOT_BUDGET", "0")]);
    let (code, _, stderr) = cut.wait();
    assert_eq!(code, 0);
    assert!(stderr.contains("cut short"), "{stderr}");
    assert_eq!(
        env.json(&["snapshots"])["snapshots"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let (code, _, stderr) = env.hook("Stop", &payload).wait();
    assert_eq!((code, stderr.as_str()), (0, ""));
    let list = env.json(&["snapshots"]);
    assert_eq!(list["snapshots"][1]["paths"], json!(["late.txt"]));
}

#[test]
fn a_full_disk_fails_the_snapshot_and_the_undo_before_any_file_changes() {
    let env = started();
    let root = env.project();
    write(&root, "a.txt", "one\n");
    env.ok(&["snapshot"]);
    write(&root, "a.txt", "two\n");
    let failed = env
        .cmd()
        .args(["undo", "--to", "@1", "--yes"])
        .env("CHECKPOINT_TEST_FAILPOINT", "journal_append:enospc")
        .output()
        .unwrap();
    assert!(!failed.status.success(), "{}", render(&env, &failed));
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "two\n");
    let entries = env.read("w", "journal.jsonl");
    assert!(!entries.contains("files_restore"), "{entries}");
    env.ok(&["undo", "--to", "@1", "--yes"]);
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "one\n");
}

#[test]
fn a_killed_snapshot_or_undo_leaves_each_file_old_or_new() {
    let env = started();
    let root = env.project();
    let n = 400;
    for i in 0..n {
        write(&root, &format!("d{}/f{i}.txt", i % 10), "old\n");
    }
    env.ok(&["snapshot"]);
    for i in 0..n {
        write(&root, &format!("d{}/f{i}.txt", i % 10), "new\n");
    }
    for delay in [0u64, 5, 15, 40] {
        let mut child = env
            .cmd()
            .arg("snapshot")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        let _ = child.wait();
    }
    env.ok(&["snapshot"]);
    let list = env.json(&["snapshots"]);
    let last = list["snapshots"].as_array().unwrap().len();
    assert!(last >= 2);
    for delay in [0u64, 10, 30, 60, 120] {
        // The last snapshot is the tree as it is (the previous round's restore may have left the
        // ref's tip on the tree it replaced): the tree before the undo, as git would write it.
        env.ok(&["snapshot"]);
        let before_tree = git(&root, &["rev-parse", "refs/checkpoint/snapshots/w^{tree}"]);
        let mut child = env
            .cmd()
            .args(["undo", "--to", "@1", "--yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        let _ = child.wait();
        let mut changed = 0;
        for i in 0..n {
            let text = fs::read_to_string(root.join(format!("d{}/f{i}.txt", i % 10))).unwrap();
            assert!(text == "old\n" || text == "new\n", "torn file: {text:?}");
            changed += usize::from(text == "old\n");
        }
        if changed > 0 {
            // The last journaled snapshot holds the tree the undo replaced.
            let list = env.json(&["snapshots"]);
            let last_commit = list["snapshots"].as_array().unwrap().last().unwrap()["commit"]
                .as_str()
                .unwrap()
                .to_owned();
            let last_tree = git(&root, &["rev-parse", &format!("{last_commit}^{{tree}}")]);
            assert_eq!(
                last_tree, before_tree,
                "a file changed before the undo's snapshot"
            );
        }
        // Put the later tree back for the next round.
        env.ok(&["undo", "--to", &format!("@{last}"), "--yes"]);
    }
    let stray: Vec<_> = tree(&root)
        .into_keys()
        .filter(|path| String::from_utf8_lossy(path).contains(".checkpoint-"))
        .collect();
    // A killed undo's half-written file is a created file to the next restore: gone.
    assert!(stray.is_empty(), "{stray:?}");
}

#[test]
fn gc_of_a_workflows_last_archive_removes_its_snapshot_ref() {
    let env = repo();
    let root = env.project();
    for id in ["old", "kept"] {
        env.ok(&["init", id, "--phase", "a"]);
        write(&root, &format!("{id}.txt"), "x\n");
        env.ok(&["snapshot", "--workflow", id]);
    }
    env.ok(&["skip", "a", "--reason", "done", "--workflow", "old"]);
    env.ok(&["archive", "--workflow", "old"]);
    let refs = || {
        git(
            &root,
            &["for-each-ref", "--format=%(refname)", "refs/checkpoint"],
        )
    };
    assert_eq!(
        refs(),
        "refs/checkpoint/snapshots/kept\nrefs/checkpoint/snapshots/old\n",
        "an archived workflow keeps its snapshots"
    );
    env.set_now("2026-03-10T12:00:00Z");
    env.ok(&["gc"]);
    assert!(!env.store().join(".archive/old_20260301_120000").exists());
    assert_eq!(refs(), "refs/checkpoint/snapshots/kept\n");
}

#[test]
fn the_resume_prompt_names_the_files_changed_since_the_last_snapshot() {
    let env = started();
    let root = env.project();
    env.ok(&["snapshot"]);
    let quiet = env.ok(&["resume", "--dry-run", "--format", "prompt"]);
    assert!(
        !quiet.contains("Files changed since the last snapshot"),
        "{quiet}"
    );
    write(&root, "died mid-turn.txt", "half done\n");
    let refs = git(&root, &["for-each-ref"]);
    let prompt = env.ok(&["resume", "--dry-run", "--format", "prompt"]);
    assert!(
        prompt.contains("Files changed since the last snapshot"),
        "{prompt}"
    );
    assert!(prompt.contains("`died mid-turn.txt`"), "{prompt}");
    // Naming them stores no snapshot.
    assert_eq!(git(&root, &["for-each-ref"]), refs);
}

#[test]
fn status_watch_report_and_resume_name_the_files_each_phase_session_and_agent_changed() {
    let env = repo();
    let root = env.project();
    env.ok(&["init", "w", "--phase", "build", "--phase", "test"]);
    write(&root, "before.txt", "old\n");
    env.ok(&["snapshot", "-m", "before"]);
    env.set_now("2026-03-01T12:05:00Z");
    env.ok(&["start", "build"]);
    env.set_now("2026-03-01T12:06:00Z");
    write(&root, "a.txt", "1\n2\n");
    let stop = hook_payload(&env, "Stop", json!({"stop_hook_active": false}));
    assert_eq!(env.hook("Stop", &stop).wait().0, 0);
    env.set_now("2026-03-01T12:07:00Z");
    write(&root, "helper.txt", "h\n");
    let payload = hook_payload(
        &env,
        "SubagentStop",
        json!({"agent_id": "agent-7", "agent_type": "general-purpose", "stop_hook_active": false}),
    );
    assert_eq!(env.hook("SubagentStop", &payload).wait().0, 0);
    // A session that died before its turn ended.
    write(&root, "b.txt", "unsaved\n");

    let status = env.ok(&["status"]);
    let build = status.lines().find(|line| line.contains("build")).unwrap();
    assert!(build.contains("2 files +3 -0 changed"), "{status}");
    let test = status.lines().find(|line| line.contains("test")).unwrap();
    assert!(!test.contains("changed"), "{status}");
    for line in [
        "no session: 1 file +1 -0 (before.txt)",
        "session 11111111: 1 file +2 -0 (a.txt)",
        "agent agent-7 (session 11111111): 1 file +1 -0 (helper.txt)",
    ] {
        assert!(status.contains(line), "{line}\n{status}");
    }
    let json = env.json(&["status"]);
    assert_eq!(
        json["phases"][0]["files"],
        json!({"changed": 2, "added": 3, "removed": 0, "paths": ["a.txt", "helper.txt"]})
    );
    assert_eq!(json["phases"][1].get("files"), None);
    let watch = env.ok(&["watch", "--once"]);
    assert!(watch.contains("2 files +3 -0 changed"), "{watch}");
    assert!(
        watch.contains("agent agent-7 (session 11111111)"),
        "{watch}"
    );
    let watched = env.json(&["watch", "--once"]);
    assert_eq!(watched["phases"][0]["files"]["changed"], 2);

    let report = env.ok(&["report"]);
    for line in [
        "phase `build`: 2 files +3 -0",
        "no session: 1 file +1 -0",
        "agent agent-7 (session 11111111): 1 file +1 -0",
    ] {
        assert!(report.contains(line), "{line}\n{report}");
    }
    let page = env.dir.path().join("report.html");
    env.ok(&["report", "--html", page.to_str().unwrap()]);
    let html = fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<h2>Files changed</h2>")
            && html.contains("agent agent-7 (session 11111111)"),
        "{html}"
    );

    // Since the last snapshot: the dead session's file; since the phase started (after the
    // snapshot `before`): its turn's, its sub-agent's and the dead session's, not `before.txt`.
    let resume = env.json(&["resume", "--dry-run"]);
    assert_eq!(resume["files"]["since_last_snapshot"], json!(["b.txt"]));
    assert_eq!(
        resume["files"]["phases"],
        json!([{
            "phase": "build",
            "changed": 3,
            "added": 4,
            "removed": 0,
            "paths": ["a.txt", "b.txt", "helper.txt"]
        }])
    );
    // Outside git, or before any snapshot: no `files`.
    let bare = TestEnv::new();
    bare.ok(&["init", "w", "--phase", "build"]);
    bare.ok(&["start", "build"]);
    assert_eq!(bare.json(&["resume", "--dry-run"]).get("files"), None);
}

#[test]
fn a_same_size_edit_in_the_second_of_the_last_commit_is_in_the_first_snapshot() {
    // Git trusts an index entry's stat data when the file is older than the index; an edit of
    // the same size in the second of the commit is "racily clean" and must be read again. The
    // first snapshot seeds its private index from the real one: the copy must keep its time.
    let env = repo();
    let root = env.project();
    while std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_millis()
        > 300
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    write(&root, "a.txt", "one\n");
    git(&root, &["add", "a.txt"]);
    git(&root, &["commit", "-q", "-m", "a"]);
    write(&root, "a.txt", "two\n");
    // The snapshot comes in a later second than the commit and the edit.
    std::thread::sleep(Duration::from_millis(1100));
    env.ok(&["init", "w", "--phase", "build"]);
    env.ok(&["snapshot"]);
    assert_eq!(
        git(&root, &["show", "refs/checkpoint/snapshots/w:a.txt"]),
        "two\n"
    );
}

#[test]
fn a_private_index_git_cannot_read_is_seeded_again_and_the_snapshot_is_whole() {
    // A git that outlived a killed snapshot can race the next one and leave the private index
    // torn; it is a cache of the last snapshot's tree, so the next snapshot starts it again.
    let env = started();
    let root = env.project();
    write(&root, "a.txt", "one\n");
    env.ok(&["snapshot"]);
    let index = root.join(".git/checkpoint/snapshots/w.index");
    assert!(
        index.exists(),
        "the private index is where the test expects it"
    );
    fs::write(&index, b"DIRC torn").unwrap();
    write(&root, "a.txt", "two\n");
    write(&root, "b.txt", "new\n");
    env.ok(&["snapshot"]);
    let tip = "refs/checkpoint/snapshots/w";
    assert_eq!(git(&root, &["show", &format!("{tip}:a.txt")]), "two\n");
    assert_eq!(git(&root, &["show", &format!("{tip}:b.txt")]), "new\n");
}
