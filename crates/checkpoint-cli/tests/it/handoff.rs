//! `checkpoint push --session` and `pull --session`: a session's uncommitted work and redacted
//! transcript moved between two clones with their own HOMEs through a bare repository; consent,
//! size limits, a base commit the remote lacks, a local change in the way, forged hand-offs and
//! kills at every step.

use std::{
    collections::BTreeMap,
    fs,
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use crate::support::{Remote, TestEnv, git, render};

pub(crate) const SID: &str = "0b9c7a54-3f1e-4c39-9d59-8f0e2a1d6c11";
const TOKEN: &str = "ghp_1234567890abcdefghijABCDEFGHIJ123456";

/// The client's project directory of `env`'s checkout in its own HOME.
fn transcript_dir(env: &TestEnv) -> PathBuf {
    let root = fs::canonicalize(env.project()).unwrap();
    let munged: String = root
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    env.dir.path().join("home/.claude/projects").join(munged)
}

fn transcript_text() -> String {
    format!(
        "{{\"type\":\"user\",\"sessionId\":\"{SID}\",\"message\":{{\"role\":\"user\",\"content\":\"edit the files\"}}}}\n{{\"type\":\"user\",\"message\":{{\"content\":[{{\"type\":\"tool_result\",\"content\":\"token: {TOKEN}\"}}]}}}}\n"
    )
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Every file of the checkout but `.git` and the store, with its content.
fn files(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(root).unwrap().display().to_string();
            if relative == ".git" || relative == ".claude" {
                continue;
            }
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                out.insert(relative, fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    out
}

/// Machine A: a clone with three committed files on the remote's `main`, the workflow `demo`,
/// then uncommitted work (a change, a deletion, two new files) and the session's transcript.
pub(crate) fn machine_a(remote: &Remote) -> TestEnv {
    let a = remote.clone();
    let root = a.project();
    for name in ["a.txt", "b.txt", "c.txt"] {
        write(&root, name, &format!("{name} one\n"));
    }
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "base"]);
    git(&root, &["push", "-q", "origin", "HEAD:refs/heads/main"]);
    a.ok(&["init", "demo", "--phase", "a", "--phase", "b:a"]);
    a.ok(&["start", "a"]);
    // Sizes differ from the committed ones: a same-size edit in the second of the commit is
    // racily clean to the snapshot's copy of the index (left to the snapshot engine).
    write(&root, "a.txt", "a.txt second\n");
    fs::remove_file(root.join("b.txt")).unwrap();
    write(&root, "d.txt", "new\n");
    write(&root, "e/f.txt", "deep\n");
    write(
        &transcript_dir(&a),
        &format!("{SID}.jsonl"),
        &transcript_text(),
    );
    a
}

/// Machine B: another clone, at another path with another HOME, on the remote's `main`.
pub(crate) fn machine_b(remote: &Remote) -> TestEnv {
    let b = remote.clone();
    let root = b.project();
    git(&root, &["fetch", "-q", "origin", "main"]);
    git(&root, &["checkout", "-q", "-b", "main", "FETCH_HEAD"]);
    b
}

/// Runs `checkpoint`, asserts it succeeded; returns stdout and stderr rendered.
#[track_caller]
fn succeeds(env: &TestEnv, args: &[&str]) -> String {
    let output = env.run(args);
    let rendered = render(env, &output);
    assert_eq!(output.status.code(), Some(0), "{args:?}\n{rendered}");
    rendered
}

/// Runs `checkpoint`, asserts its exit code; returns stdout and stderr rendered.
#[track_caller]
fn exits(env: &TestEnv, args: &[&str], code: i32) -> String {
    let output = env.run(args);
    let rendered = render(env, &output);
    assert_eq!(output.status.code(), Some(code), "{args:?}\n{rendered}");
    rendered
}

#[track_caller]
fn fails(env: &TestEnv, args: &[&str]) -> String {
    let output = env.run(args);
    let rendered = render(env, &output);
    assert_ne!(output.status.code(), Some(0), "{args:?}\n{rendered}");
    rendered
}

/// Whether any object of the remote's database holds `needle`.
fn remote_holds(remote: &Remote, needle: &str) -> bool {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(remote.git_dir())
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).contains(needle)
}

fn session_refs(remote: &Remote) -> String {
    git(
        &remote.git_dir(),
        &[
            "for-each-ref",
            "--format=%(refname)",
            "refs/checkpoint-sessions/",
        ],
    )
}

#[test]
fn a_session_moves_with_its_uncommitted_work_and_a_redacted_transcript() {
    let remote = Remote::bare();
    let a = machine_a(&remote);
    // Without `--session` or the setting, no transcript leaves.
    a.ok(&["push"]);
    assert_eq!(session_refs(&remote), "");
    assert!(!remote_holds(&remote, "edit the files"));

    let sent = succeeds(&a, &["push", "--session", SID]);
    assert!(
        sent.contains("The first session sent to `origin`"),
        "{sent}"
    );
    assert!(sent.contains("4 changed files"), "{sent}");
    assert!(sent.contains("1 secret redacted"), "{sent}");
    assert_eq!(
        session_refs(&remote),
        format!("refs/checkpoint-sessions/demo/{SID}\n")
    );
    assert!(remote_holds(&remote, "edit the files"));
    assert!(
        !remote_holds(&remote, TOKEN),
        "the token reached the remote"
    );
    // The second time for the same remote, nothing is asked or said again.
    let again = succeeds(&a, &["push", "--session", SID]);
    assert!(!again.contains("The first session"), "{again}");

    let b = machine_b(&remote);
    let before = files(&b.project());
    assert_eq!(before.len(), 3);
    // `pull --all` fetches the sessions sent and names the command that takes each.
    let all = succeeds(&b, &["pull", "--all"]);
    assert!(
        all.contains(&format!(
            "`checkpoint pull --workflow demo --session {SID}`"
        )),
        "{all}"
    );
    assert_eq!(
        files(&b.project()),
        before,
        "`pull --all` puts no session in place"
    );
    let pulled = b.ok(&["pull", "--workflow", "demo", "--session"]);
    assert!(
        pulled.contains(&format!("go on with: claude --resume {SID}")),
        "{pulled}"
    );
    assert!(pulled.contains("4 files put in place"), "{pulled}");
    assert_eq!(files(&b.project()), files(&a.project()));
    let placed = fs::read_to_string(transcript_dir(&b).join(format!("{SID}.jsonl"))).unwrap();
    assert!(placed.contains("edit the files"));
    assert!(!placed.contains(TOKEN));
    assert!(placed.contains("[REDACTED"), "{placed}");
    // Never under the sender's path.
    assert_ne!(
        transcript_dir(&a).file_name(),
        transcript_dir(&b).file_name()
    );
    assert!(
        !b.dir
            .path()
            .join("home/.claude/projects")
            .join(transcript_dir(&a).file_name().unwrap())
            .exists()
    );
    // The hand-off is in the journal, the log and the resume prompt.
    let log = b.ok(&["log"]);
    assert!(log.contains("session_handoff"), "{log}");
    assert!(
        log.contains(&format!("claude session {SID} sent by")),
        "{log}"
    );
    let prompt = b.ok(&["resume", "--format", "prompt"]);
    assert!(
        prompt.contains(&format!("Handed over: session `{SID}` (claude) came from")),
        "{prompt}"
    );
    // Pulling again changes nothing and is not refused.
    let again = b.ok(&["pull", "--workflow", "demo", "--session", SID]);
    assert!(again.contains("claude --resume"), "{again}");
    // The files put in place can be undone.
    b.ok(&["redo"]);
    assert_eq!(files(&b.project()), before);
}

#[test]
fn the_setting_sends_the_last_session_and_a_size_limit_refuses() {
    let remote = Remote::bare();
    let a = machine_a(&remote);
    fs::write(
        a.store().join("config.toml"),
        "[sync]\nsession = true\nsession_max_bytes = 100\n",
    )
    .unwrap();
    // The workflow's last session is the one its hooks saw.
    let payload = crate::support::hook_payload(&a, "Stop", serde_json::json!({"session_id": SID}));
    let (code, _, stderr) = a.hook("Stop", &payload).wait();
    assert_eq!(code, 0, "{stderr}");
    let refused = exits(&a, &["push"], 3);
    let size = transcript_text().len();
    assert!(
        refused.contains(&format!("is {size} bytes, over the limit of 100 bytes")),
        "{refused}"
    );
    assert_eq!(session_refs(&remote), "");
    assert!(!remote_holds(&remote, "edit the files"));
    fs::write(a.store().join("config.toml"), "[sync]\nsession = true\n").unwrap();
    let sent = a.ok(&["push"]);
    assert!(sent.contains(&format!("sent session {SID}")), "{sent}");
}

#[test]
fn a_base_commit_the_remote_lacks_travels_with_the_session_and_another_head_is_said() {
    let remote = Remote::bare();
    let a = machine_a(&remote);
    // An unpushed local commit under the work.
    write(&a.project(), "c.txt", "c.txt local\n");
    git(&a.project(), &["commit", "-q", "-am", "local only"]);
    let base = git(&a.project(), &["rev-parse", "HEAD"]).trim().to_owned();
    write(&a.project(), "c.txt", "c.txt after the commit\n");
    a.ok(&["push", "--session", SID]);
    let b = machine_b(&remote);
    let before = files(&b.project());
    let refused = exits(&b, &["pull", "--workflow", "demo", "--session"], 3);
    assert!(
        refused.contains(&format!("git switch --detach {base}")),
        "{refused}"
    );
    assert_eq!(files(&b.project()), before, "nothing was written");
    git(&b.project(), &["merge", "-q", "--ff-only", &base]);
    b.ok(&["pull", "--workflow", "demo", "--session"]);
    assert_eq!(files(&b.project()), files(&a.project()));
}

#[test]
fn a_local_change_in_the_way_is_refused_unless_forced_and_kept() {
    let remote = Remote::bare();
    let a = machine_a(&remote);
    a.ok(&["push", "--session", SID]);
    let b = machine_b(&remote);
    write(&b.project(), "a.txt", "mine\n");
    let refused = fails(&b, &["pull", "--workflow", "demo", "--session"]);
    assert!(refused.contains("`a.txt`"), "{refused}");
    assert!(refused.contains("--force"), "{refused}");
    assert_eq!(
        fs::read_to_string(b.project().join("a.txt")).unwrap(),
        "mine\n"
    );
    assert!(!b.project().join("d.txt").exists());
    assert!(!transcript_dir(&b).join(format!("{SID}.jsonl")).exists());
    b.ok(&["pull", "--workflow", "demo", "--session", "--force"]);
    assert_eq!(files(&b.project()), files(&a.project()));
    b.ok(&["redo"]);
    assert_eq!(
        fs::read_to_string(b.project().join("a.txt")).unwrap(),
        "mine\n"
    );
}

/// Runs `git` in `dir` with `input` on its stdin; returns its stdout, trimmed.
fn git_with(dir: &Path, args: &[&str], input: &[u8]) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn blob(dir: &Path, bytes: &[u8]) -> String {
    git_with(dir, &["hash-object", "-w", "--stdin"], bytes)
}

/// A tree of `entries` (`(mode, kind, object, name)`), names as given, even ones git refuses
/// to check out.
fn tree(dir: &Path, entries: &[(&str, &str, &str, &str)]) -> String {
    let input: String = entries
        .iter()
        .map(|(mode, kind, object, name)| format!("{mode} {kind} {object}\t{name}\n"))
        .collect();
    git_with(dir, &["mktree"], input.as_bytes())
}

/// Replaces the remote's hand-off of `SID` with a forged one made in A's repository: the work
/// tree `work`, the transcript `transcript` and `handoff.json` with `session` as its id, on A's
/// HEAD.
fn forge(a: &TestEnv, work: &str, transcript: &[u8], session: &str) {
    let root = a.project();
    let head = git(&root, &["rev-parse", "HEAD"]).trim().to_owned();
    let doc = format!(
        "{{\"version\":1,\"workflow\":\"demo\",\"session_id\":\"{session}\",\"client\":\"claude\",\"machine\":\"m\",\"user\":\"u\",\"at\":\"2026-01-01T00:00:00Z\",\"base\":\"{head}\",\"files\":1,\"transcript_bytes\":1}}"
    );
    let top = tree(
        &root,
        &[
            (
                "100644",
                "blob",
                &blob(&root, doc.as_bytes()),
                "handoff.json",
            ),
            (
                "100644",
                "blob",
                &blob(&root, transcript),
                "transcript.jsonl",
            ),
            ("040000", "tree", work, "work"),
        ],
    );
    let commit = git_with(
        &root,
        &["commit-tree", &top, "-p", &head, "-m", "forged"],
        b"",
    );
    git(
        &root,
        &[
            "push",
            "-q",
            "-f",
            "origin",
            &format!("{commit}:refs/checkpoint-sessions/demo/{SID}"),
        ],
    );
}

#[test]
fn a_forged_hand_off_writes_nothing_outside_the_checkout_into_git_or_through_a_link() {
    let remote = Remote::bare();
    let a = machine_a(&remote);
    a.ok(&["push", "--session", SID]);
    let root = a.project();
    let b = machine_b(&remote);
    let before = files(&b.project());
    let transcript = transcript_text();
    let evil = blob(&root, b"#!/bin/sh\necho owned\n");
    let hooks = tree(&root, &[("100755", "blob", &evil, "post-checkout")]);
    let git_dir = tree(&root, &[("040000", "tree", &hooks, "hooks")]);
    let outside = tree(&root, &[("100644", "blob", &evil, "escaped.txt")]);
    let link = blob(&root, b"../../home/.bashrc");
    let absolute = blob(&root, b"/etc/passwd");
    let inner = tree(&root, &[("120000", "blob", &link, "l")]);
    let cases = [
        (
            "into `.git`",
            tree(&root, &[("040000", "tree", &git_dir, ".git")]),
        ),
        (
            "into `.git`",
            tree(&root, &[("040000", "tree", &git_dir, ".GIT")]),
        ),
        (
            "leaves the checkout",
            tree(&root, &[("040000", "tree", &outside, "..")]),
        ),
        (
            "points outside",
            tree(&root, &[("120000", "blob", &link, "link")]),
        ),
        (
            "points outside",
            tree(&root, &[("040000", "tree", &inner, "sub")]),
        ),
        (
            "points outside",
            tree(&root, &[("120000", "blob", &absolute, "link")]),
        ),
    ];
    for (why, work) in &cases {
        forge(&a, work, transcript.as_bytes(), SID);
        let refused = exits(&b, &["pull", "--workflow", "demo", "--session", SID], 6);
        assert!(refused.contains(why), "{why}: {refused}");
        assert!(
            refused.contains("is not what `checkpoint push --session` writes"),
            "{refused}"
        );
        assert_eq!(files(&b.project()), before);
        assert!(!b.project().join(".git/hooks/post-checkout").exists());
        assert!(!b.dir.path().join("escaped.txt").exists());
        assert!(!transcript_dir(&b).join(format!("{SID}.jsonl")).exists());
    }
    // A `handoff.json` naming another session (a path), or an id that is a path.
    let work = tree(&root, &[("100644", "blob", &evil, "x.txt")]);
    forge(&a, &work, transcript.as_bytes(), "../../../evil");
    let refused = fails(&b, &["pull", "--workflow", "demo", "--session", SID]);
    assert!(refused.contains("names another session"), "{refused}");
    for id in ["../../x", "a/b", "-x"] {
        let refused = exits(
            &b,
            &["pull", "--workflow", "demo", &format!("--session={id}")],
            2,
        );
        assert!(refused.contains("is not a session id"), "{refused}");
    }
    assert_eq!(files(&b.project()), before);
    let projects = b.dir.path().join("home/.claude");
    assert!(
        !projects.exists(),
        "nothing of the client's home was written"
    );

    // A link here on the way to a file of the hand-off.
    a.ok(&["push", "--session", SID]);
    let elsewhere = b.dir.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, b.project().join("e")).unwrap();
    let refused = fails(&b, &["pull", "--workflow", "demo", "--session"]);
    assert!(
        refused.contains("through the symbolic link `e`"),
        "{refused}"
    );
    assert!(fs::read_dir(&elsewhere).unwrap().next().is_none());
}

#[test]
fn a_transcript_over_the_limit_is_refused_by_its_size_and_another_is_never_overwritten() {
    let remote = Remote::bare();
    let a = machine_a(&remote);
    a.ok(&["push", "--session", SID]);
    let b = machine_b(&remote);
    // Made big on the remote (1 MiB here, against a 64 KiB limit: a 1 GB blob takes git half a
    // minute to write, and the check is the same: the size, read before the content).
    let root = a.project();
    let work = git(
        &root,
        &[
            "rev-parse",
            &format!("refs/checkpoint-sessions/demo/{SID}:work"),
        ],
    );
    forge(&a, work.trim(), &vec![b'x'; 1 << 20], SID);
    fs::write(
        b.store().join("config.toml"),
        "[sync]\nsession_max_bytes = 65536\n",
    )
    .ok();
    b.ok(&["pull", "--workflow", "demo"]);
    fs::write(
        b.store().join("config.toml"),
        "[sync]\nsession_max_bytes = 65536\n",
    )
    .unwrap();
    let before = files(&b.project());
    let refused = fails(&b, &["pull", "--workflow", "demo", "--session"]);
    assert!(
        refused.contains("is 1048576 bytes, over the limit of 65536 bytes"),
        "{refused}"
    );
    assert_eq!(files(&b.project()), before);

    // A transcript of the same id holding another conversation is kept.
    a.ok(&["push", "--session", SID]);
    let dest = transcript_dir(&b).join(format!("{SID}.jsonl"));
    write(
        &transcript_dir(&b),
        &format!("{SID}.jsonl"),
        "{\"other\":1}\n",
    );
    let refused = fails(&b, &["pull", "--workflow", "demo", "--session"]);
    assert!(refused.contains("holds another conversation"), "{refused}");
    assert_eq!(fs::read_to_string(&dest).unwrap(), "{\"other\":1}\n");
    // A shorter copy of the same conversation is replaced by the longer one.
    fs::remove_file(&dest).unwrap();
    let first_line = transcript_text().lines().next().unwrap().to_owned() + "\n";
    write(&transcript_dir(&b), &format!("{SID}.jsonl"), &first_line);
    b.ok(&["pull", "--workflow", "demo", "--session", "--force"]);
    assert!(fs::read_to_string(&dest).unwrap().len() > first_line.len());
}

/// Kills `args` on `env` after each delay.
fn kill_during(env: &TestEnv, args: &[&str]) {
    for delay in [0u64, 5, 15, 40, 80, 150] {
        let mut child = env
            .cmd()
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        let _ = child.wait();
    }
}

#[test]
fn a_push_or_a_pull_killed_at_any_step_is_finished_by_the_next() {
    let remote = Remote::bare();
    let a = machine_a(&remote);
    kill_during(&a, &["push", "--session", SID]);
    // Whatever step a push was killed at (even after the remote took the workflow's ref but
    // before this clone recorded it), the next push finishes it.
    succeeds(&a, &["push", "--session", SID]);
    assert!(!remote_holds(&remote, TOKEN));
    let b = machine_b(&remote);
    b.ok(&["pull", "--workflow", "demo"]);
    kill_during(&b, &["pull", "--workflow", "demo", "--session", SID]);
    let pulled = succeeds(&b, &["pull", "--workflow", "demo", "--session", SID]);
    assert!(pulled.contains("claude --resume"), "{pulled}");
    assert_eq!(files(&b.project()), files(&a.project()));
    let stray: Vec<_> = fs::read_dir(transcript_dir(&b))
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".checkpoint-"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}

#[test]
fn run_on_the_receiving_machine_goes_on_with_the_handed_over_session() {
    let remote = Remote::bare();
    let a = machine_a(&remote);
    a.ok(&["push", "--session", SID]);
    let b = machine_b(&remote);
    b.ok(&["pull", "--workflow", "demo", "--session"]);
    let claude = b.dir.path().join("fake-claude");
    fs::write(
        &claude,
        "#!/bin/sh\n\
         printf '%s|' \"$@\" >> \"$(dirname \"$0\")/claude-args.log\"; echo >> \"$(dirname \"$0\")/claude-args.log\"\n\
         echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"sess-'$$'\"}'\n\
         \"$CK\" complete a >/dev/null 2>&1 || { \"$CK\" start b >/dev/null 2>&1; \"$CK\" complete b >/dev/null; }\n\
         echo '{\"type\":\"result\",\"is_error\":false,\"result\":\"done\"}'\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&claude, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let output = b
        .cmd()
        .env("CK", crate::support::bin())
        .arg("run")
        .arg("--claude")
        .arg(&claude)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", render(&b, &output));
    let args = fs::read_to_string(b.dir.path().join("claude-args.log")).unwrap();
    // One line per session; a prompt's own lines are joined to its session's.
    let sessions: Vec<&str> = args.split("-p|").filter(|s| !s.is_empty()).collect();
    assert!(sessions.len() >= 2, "{args}");
    assert!(sessions[0].contains(&format!("|--resume|{SID}|")), "{args}");
    assert!(
        sessions[0].starts_with("This session was handed over from another machine"),
        "{args}"
    );
    // Only the first session goes on with it: the next one is the runner's own choice.
    assert!(!sessions[1].contains(&format!("--resume|{SID}")), "{args}");
}

#[test]
fn sub_agents_move_only_with_their_flag_and_redacted() {
    let remote = Remote::bare();
    let a = machine_a(&remote);
    let agent =
        format!("{{\"type\":\"user\",\"message\":{{\"content\":\"agent saw {TOKEN}\"}}}}\n");
    let sub = format!("{SID}/subagents");
    write(
        &transcript_dir(&a),
        &format!("{sub}/agent-a1b2.jsonl"),
        &agent,
    );
    write(
        &transcript_dir(&a),
        &format!("{sub}/agent-a1b2.meta.json"),
        "{\"agentType\":\"x\"}",
    );
    write(
        &transcript_dir(&a),
        &format!("{sub}/notes.txt"),
        "not an agent's file\n",
    );
    write(
        &transcript_dir(&a),
        &format!("{SID}/tool-results/big.txt"),
        "a large tool output\n",
    );
    a.ok(&["push", "--session", SID]);
    assert!(
        !remote_holds(&remote, "agent saw"),
        "sent without --with-subagents"
    );
    a.ok(&["push", "--session", SID, "--with-subagents"]);
    assert!(remote_holds(&remote, "agent saw"));
    assert!(!remote_holds(&remote, TOKEN));
    assert!(!remote_holds(&remote, "not an agent's file"));
    assert!(!remote_holds(&remote, "a large tool output"));
    let b = machine_b(&remote);
    b.ok(&["pull", "--workflow", "demo", "--session"]);
    let placed = transcript_dir(&b).join(&sub);
    let mut names: Vec<String> = fs::read_dir(&placed)
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["agent-a1b2.jsonl", "agent-a1b2.meta.json"]);
    let text = fs::read_to_string(placed.join("agent-a1b2.jsonl")).unwrap();
    assert!(text.contains("agent saw [REDACTED"), "{text}");
}
