//! A journal past the size readers once refused (64 MiB), built through the real commands: every
//! command that reads it works, `archive` then `restore` round-trips, sync carries it, and a
//! remote journal larger than any writer makes is refused before it is read.

use std::{
    fs,
    io::Write,
    path::{Path, PathBuf},
    process::{Output, Stdio},
};

use assert_fs::TempDir;

use crate::support::{TestEnv, git, render};

/// The size readers refused before they read a journal line by line.
const OLD_READ_LIMIT: u64 = 64 * 1024 * 1024;

/// A bare repository for a remote.
fn bare_remote() -> (TempDir, String) {
    let dir = TempDir::new().unwrap();
    git(dir.path(), &["init", "--quiet", "--bare", "remote.git"]);
    let url = dir.path().join("remote.git").display().to_string();
    (dir, url)
}

/// A project that is a git repository whose `origin` is `url`.
fn clone_of(url: &str) -> TestEnv {
    let env = TestEnv::new();
    git(&env.project(), &["init", "--quiet"]);
    git(&env.project(), &["remote", "add", "origin", url]);
    env
}

/// Runs `checkpoint` with `stdin` as its standard input.
fn run_with_stdin(env: &TestEnv, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = env
        .cmd()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn journal_path(env: &TestEnv, id: &str) -> PathBuf {
    env.workflow_dir(id).join("journal.jsonl")
}

fn size(path: &Path) -> u64 {
    fs::metadata(path).unwrap().len()
}

/// A workflow `w` whose journal is past the old read limit, while its state stays small: a
/// phase's progress note replaces the one before it in the state, but each is journaled. A few
/// large notes, passed on stdin (longer than one command-line argument may be), keep it fast.
fn long_journal(env: &TestEnv) -> usize {
    env.ok(&["init", "w", "--phase", "a", "--phase", "b"]);
    env.ok(&["start", "a"]);
    let note = "progress ".repeat(11_500_000 / 9);
    let mut n_notes = 0;
    while size(&journal_path(env, "w")) <= OLD_READ_LIMIT {
        n_notes += 1;
        let text = format!("{n_notes}: {note}");
        let output = run_with_stdin(env, &["progress", "a", "--file", "-"], text.as_bytes());
        assert!(output.status.success(), "{}", render(env, &output));
    }
    // A note too, which the state keeps, and a small last progress note.
    let output = run_with_stdin(env, &["note", "--file", "-"], b"a note from stdin");
    assert!(output.status.success(), "{}", render(env, &output));
    env.ok(&["progress", "a", "the last step"]);
    // `init`, `start`, the notes.
    n_notes + 4
}

/// Every command that reads the journal reads one past the old limit, and the journal goes to
/// a remote and back, and to an archive and back, whole.
#[test]
fn a_journal_past_the_old_read_limit_stays_readable_by_every_command() {
    let (_remote_dir, url) = bare_remote();
    let env = clone_of(&url);
    let n_entries = long_journal(&env);
    let journal = journal_path(&env, "w");
    assert!(size(&journal) > OLD_READ_LIMIT);

    // Each of these reads the whole journal (`diff`, `report` and the JSON log read it as
    // `log` does); a few, as each costs a parse of the whole journal.
    let log = env.ok(&["log"]);
    assert_eq!(log.lines().count(), n_entries);
    assert!(log.lines().last().unwrap().contains("the last step"));
    env.ok(&["validate"]);
    env.ok(&["resume", "--dry-run"]);

    // Sync: pushed whole, and a fresh clone pulls it and reads it.
    env.ok(&["push"]);
    let other = clone_of(&url);
    other.ok(&["--workflow", "w", "pull"]);
    assert!(size(&journal_path(&other, "w")) > OLD_READ_LIMIT);
    assert_eq!(other.ok(&["log"]).lines().count(), n_entries);

    // An archive `archive` made is restorable.
    env.ok(&["archive", "--force"]);
    let archives: Vec<_> = fs::read_dir(env.store().join(".archive"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(archives.len(), 1);
    env.ok(&["restore", archives[0].to_str().unwrap()]);
    assert!(size(&journal) > OLD_READ_LIMIT);
    env.ok(&["validate"]);
    env.ok(&["progress", "a", "after the restore"]);
}

/// A remote ref whose journal is larger than any writer makes is refused by its size, before
/// it is read, and nothing is written locally.
#[test]
fn a_pulled_journal_over_the_limit_is_refused_before_it_is_read() {
    let (remote_dir, url) = bare_remote();
    let remote = remote_dir.path().join("remote.git");
    // A forged ref: a commit whose tree holds a 257 MiB journal.
    let big = remote_dir.path().join("journal.jsonl");
    fs::File::create(&big)
        .unwrap()
        .set_len(257 * 1024 * 1024)
        .unwrap();
    let blob = git(
        &remote,
        &["hash-object", "-w", "--no-filters", big.to_str().unwrap()],
    );
    fs::remove_file(&big).unwrap();
    let tree_spec = format!("100644 blob {}\tjournal.jsonl\n", blob.trim());
    let tree_file = remote_dir.path().join("tree");
    fs::write(&tree_file, tree_spec).unwrap();
    let tree = std::process::Command::new("git")
        .arg("-C")
        .arg(&remote)
        .arg("mktree")
        .stdin(fs::File::open(&tree_file).unwrap())
        .output()
        .unwrap();
    let tree = String::from_utf8(tree.stdout).unwrap();
    let commit = std::process::Command::new("git")
        .arg("-C")
        .arg(&remote)
        .args(["commit-tree", tree.trim(), "-m", "forged"])
        .env("GIT_AUTHOR_NAME", "x")
        .env("GIT_AUTHOR_EMAIL", "x@example.com")
        .env("GIT_COMMITTER_NAME", "x")
        .env("GIT_COMMITTER_EMAIL", "x@example.com")
        .output()
        .unwrap();
    let commit = String::from_utf8(commit.stdout).unwrap();
    git(
        &remote,
        &["update-ref", "refs/checkpoints/w", commit.trim()],
    );

    let env = clone_of(&url);
    for args in [&["--workflow", "w", "pull"][..], &["pull", "--all"][..]] {
        let output = env.run(args);
        let rendered = render(&env, &output);
        assert_eq!(output.status.code(), Some(6), "{args:?}\n{rendered}");
        assert!(
            rendered.contains("refusing to read `refs/checkpoints/w` from `origin`")
                && rendered.contains("over the limit of 268435456 bytes")
                && rendered.contains("git push origin --delete refs/checkpoints/w"),
            "{rendered}"
        );
        assert!(!env.workflow_dir("w").exists(), "{rendered}");
    }
}

/// `--file` reads a text from a regular file or stdin; anything else is refused with exit code
/// 2 (a FIFO without waiting on it), a text over the longest journal line with exit code 3, and
/// nothing is written.
#[test]
fn a_text_file_is_read_and_anything_else_is_refused() {
    let env = TestEnv::new();
    env.ok(&["init", "w", "--phase", "a"]);
    env.ok(&["start", "a"]);
    let file = env.project().join("note.txt");
    fs::write(&file, "from a file\nwith two lines").unwrap();
    env.ok(&["note", "--file", file.to_str().unwrap()]);
    env.ok(&["decide", "--file", file.to_str().unwrap()]);
    env.ok(&["progress", "a", "--file", file.to_str().unwrap()]);
    let state = env.state("w");
    assert_eq!(
        state["context"]["notes"][0]["text"],
        "from a file\nwith two lines"
    );
    assert_eq!(
        state["context"]["key_decisions"][0]["text"],
        "from a file\nwith two lines"
    );
    assert_eq!(
        state["phases"][0]["progress"],
        "from a file\nwith two lines"
    );
    let journal = fs::read(journal_path(&env, "w")).unwrap();

    let fifo = env.project().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let missing = env.project().join("missing.txt");
    let dir = env.project();
    for (path, says) in [
        (&fifo, "not a regular file"),
        (&dir, "not a regular file"),
        (&missing, "failed to read the text from"),
    ] {
        for args in [
            vec!["note", "--file", path.to_str().unwrap()],
            vec!["progress", "a", "--file", path.to_str().unwrap()],
        ] {
            let output = env.run(&args);
            let rendered = render(&env, &output);
            assert_eq!(output.status.code(), Some(2), "{args:?}\n{rendered}");
            assert!(rendered.contains(says), "{args:?}\n{rendered}");
        }
    }
    // Both a text and a file, or neither: a usage error.
    for args in [
        vec!["note", "text", "--file", file.to_str().unwrap()],
        vec!["note"],
        vec!["progress", "a"],
    ] {
        assert_eq!(env.run(&args).status.code(), Some(2), "{args:?}");
    }
    // Not UTF-8, and over the longest journal line.
    let output = run_with_stdin(&env, &["note", "--file", "-"], b"\xff\xfe bytes");
    assert_eq!(output.status.code(), Some(2), "{}", render(&env, &output));
    let huge = vec![b'x'; 65 * 1024 * 1024 + 1];
    let output = run_with_stdin(&env, &["note", "--file", "-"], &huge);
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(3), "{rendered}");
    assert!(
        rendered.contains("checkpoint::text_too_large"),
        "{rendered}"
    );
    assert_eq!(fs::read(journal_path(&env, "w")).unwrap(), journal);
}
