//! The snapshot's in-process fast path against git: for every kind of change its tree is the
//! one `git add -A` and `git write-tree` give for the same working tree, its commits chain, git
//! reads every object it wrote (`git fsck --full`), and the process path takes over whenever the
//! fast path does not apply (settings that change what git stores, a SHA-256 repository, an
//! index ahead of the ref after a kill).

use std::{
    fs,
    os::unix::fs::{PermissionsExt, symlink},
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use crate::support::{TestEnv, git, repo};

fn write(root: &Path, path: &str, content: &str) {
    let full = root.join(path);
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    fs::write(full, content).unwrap();
}

/// A workflow `w` in a real repository.
fn workflow() -> TestEnv {
    let env = repo();
    env.ok(&["init", "w", "--phase", "build"]);
    env
}

/// Which path the last snapshot of `w` took (`in-process`, or `git: <why>`), from the note
/// beside its private index in `git_dir`.
fn path_taken(git_dir: &Path) -> String {
    fs::read_to_string(git_dir.join("checkpoint/snapshots/w.path"))
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// The tree git writes for the working tree of `root` as it is: HEAD's entries (a gitlink
/// kept), `git add -A`, the store left out, in a scratch index.
fn git_tree(root: &Path) -> String {
    let mut name = root.file_name().unwrap().to_owned();
    name.push(".scratch-index");
    let scratch = root.with_file_name(name);
    let _ = fs::remove_file(&scratch);
    let run = |args: &[&str]| {
        let output = std::process::Command::new("git")
            .current_dir(root)
            .args(args)
            .env("GIT_INDEX_FILE", &scratch)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    };
    if git(root, &["rev-parse", "-q", "--verify", "HEAD"])
        .trim()
        .is_empty()
    {
        run(&["read-tree", "--empty"]);
    } else {
        run(&["read-tree", "HEAD"]);
    }
    run(&["add", "-A"]);
    run(&[
        "rm",
        "-r",
        "-q",
        "--cached",
        "--ignore-unmatch",
        "--",
        ".claude/checkpoints",
    ]);
    let tree = run(&["write-tree"]);
    fs::remove_file(&scratch).unwrap();
    tree
}

/// Takes a snapshot in `dir` and checks it: taken in-process (or by git for `expected_path`),
/// its tree git's, its parent the previous snapshot.
fn snapshot_and_compare(env: &TestEnv, dir: &Path, git_dir: &Path, refname: &str, fast: bool) {
    let before = git(dir, &["rev-parse", "-q", "--verify", refname])
        .trim()
        .to_owned();
    let output = env.cmd().current_dir(dir).arg("snapshot").output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let taken = path_taken(git_dir);
    if fast {
        assert_eq!(taken, "in-process");
    } else {
        assert!(taken.starts_with("git: "), "{taken}");
    }
    let tree = git(dir, &["rev-parse", &format!("{refname}^{{tree}}")]);
    assert_eq!(
        tree.trim(),
        git_tree(dir),
        "the snapshot's tree is not git's"
    );
    let parent = git(dir, &["rev-parse", &format!("{refname}^")]);
    assert_eq!(
        parent.trim(),
        before,
        "the snapshot's parent is not the last one"
    );
}

fn fsck(root: &Path) {
    let output = std::process::Command::new("git")
        .current_dir(root)
        .args(["fsck", "--full", "--strict", "--no-dangling"])
        .output()
        .unwrap();
    assert!(
        output.status.success() && output.stdout.is_empty(),
        "git fsck: {output:?}"
    );
}

/// One round of edits to a working tree.
type Round = Box<dyn Fn(&Path)>;

#[test]
fn the_fast_path_gives_gits_tree_for_every_kind_of_change_and_chains_its_commits() {
    let env = workflow();
    let root = env.project();
    let git_dir = root.join(".git");
    let refname = "refs/checkpoint/snapshots/w";
    // A submodule's commit in HEAD (its directory empty, as before `submodule update`).
    fs::create_dir_all(root.join("sub")).unwrap();
    let gitlink = format!("160000,{},sub", "1".repeat(40));
    git(&root, &["update-index", "--add", "--cacheinfo", &gitlink]);
    for path in [
        "keep.txt",
        "old/a.txt",
        "old/b.txt",
        "swap",
        "dir/inner.txt",
        "x/y/z.txt",
    ] {
        write(&root, path, path);
    }
    git(&root, &["add", "-A", "--", ".", ":!.claude"]);
    git(&root, &["commit", "-qm", "base"]);
    env.ok(&["snapshot"]);
    assert!(path_taken(&git_dir).starts_with("git: the first snapshot"));
    let mut rounds: Vec<Round> = vec![
        // Content, the executable bit, a link, a deletion, a new nested directory.
        Box::new(|root| {
            write(root, "keep.txt", "changed\n");
            write(root, "run.sh", "#!/bin/sh\n");
            fs::set_permissions(root.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
            symlink("keep.txt", root.join("link")).unwrap();
            fs::remove_file(root.join("old/a.txt")).unwrap();
            write(root, "n/e/w/deep.txt", "deep\n");
        }),
        // Names that sort around `/`, spaces, unicode, a newline.
        Box::new(|root| {
            for path in [
                "a-b",
                "a.b",
                "a/x",
                "a/b/c",
                "a0",
                "with space",
                "ünï/cödé",
                "new\nline",
            ] {
                write(root, path, path);
            }
        }),
        // A file replaced by a directory and the reverse; a directory emptied by deletions.
        Box::new(|root| {
            fs::remove_file(root.join("swap")).unwrap();
            write(root, "swap/now.txt", "dir\n");
            fs::remove_dir_all(root.join("dir")).unwrap();
            write(root, "dir", "a file now\n");
            fs::remove_file(root.join("old/b.txt")).unwrap();
        }),
        // A link becomes a file, the executable bit goes, a link's target changes.
        Box::new(|root| {
            fs::remove_file(root.join("link")).unwrap();
            write(root, "link", "a file\n");
            fs::set_permissions(root.join("run.sh"), fs::Permissions::from_mode(0o644)).unwrap();
            symlink("nowhere/at all", root.join("a/dangling")).unwrap();
            fs::remove_dir_all(root.join("x")).unwrap();
            // A directory replaced by a link to another one holding the same names: its files
            // are gone to git, which never follows a link.
            fs::remove_dir_all(root.join("n")).unwrap();
            write(root, "elsewhere/e/w/deep.txt", "not through the link\n");
            symlink("elsewhere", root.join("n")).unwrap();
        }),
    ];
    // Then several in a row, one file each.
    for i in 0..4 {
        rounds.push(Box::new(move |root| {
            write(root, "keep.txt", &format!("{i}\n"))
        }));
    }
    for round in &rounds {
        round(&root);
        snapshot_and_compare(&env, &root, &git_dir, refname, true);
    }
    let tree = git(&root, &["ls-tree", "-r", refname]);
    assert!(
        tree.contains(&format!("160000 commit {}\tsub", "1".repeat(40))),
        "{tree}"
    );
    assert!(
        !tree.contains("old/"),
        "an emptied directory stayed: {tree}"
    );
    let count = git(&root, &["rev-list", "--count", refname]);
    assert_eq!(count.trim(), (rounds.len() + 1).to_string());
    fsck(&root);
    // Nothing changed: no new commit, and the next change is still in-process.
    let tip = git(&root, &["rev-parse", refname]);
    env.ok(&["snapshot"]);
    assert_eq!(git(&root, &["rev-parse", refname]), tip);
    write(&root, "keep.txt", "last\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    // Undo to the first snapshot puts the base back.
    env.ok(&["undo", "--to", "@1", "--yes"]);
    assert_eq!(
        fs::read_to_string(root.join("keep.txt")).unwrap(),
        "keep.txt"
    );
    assert!(root.join("old/a.txt").is_file() && !root.join("a0").exists());
}

#[test]
fn an_index_of_version_4_a_linked_worktree_and_a_pruned_repository_take_the_fast_path() {
    let env = workflow();
    let root = env.project();
    git(&root, &["update-index", "--index-version", "4"]);
    for i in 0..30 {
        write(&root, &format!("deep/dir{}/file{i}.txt", i % 3), "one\n");
    }
    env.ok(&["snapshot"]);
    let index = root.join(".git/checkpoint/snapshots/w.index");
    assert_eq!(&fs::read(&index).unwrap()[4..8], &[0, 0, 0, 4]);
    let refname = "refs/checkpoint/snapshots/w";
    let git_dir = root.join(".git");
    write(&root, "deep/dir1/file1.txt", "two\n");
    write(&root, "deep/dir2/new.txt", "new\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    assert_eq!(&fs::read(&index).unwrap()[4..8], &[0, 0, 0, 4]);
    // Everything packed and pruned, the ref packed: the next snapshots still whole.
    git(&root, &["gc", "-q", "--prune=now"]);
    write(&root, "deep/dir0/file0.txt", "three\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    write(&root, "deep/dir0/file3.txt", "four\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    fsck(&root);

    // A linked worktree, its workflow made there.
    let env = repo();
    let root = env.project();
    let linked = env.dir.path().join("linked");
    git(&root, &["worktree", "add", "-q", linked.to_str().unwrap()]);
    let linked_git = root.join(".git/worktrees/linked");
    let linked_ref = "refs/checkpoint/worktrees/linked/snapshots/w";
    write(&linked, "l.txt", "one\n");
    for args in [&["init", "w", "--phase", "p"][..], &["snapshot"]] {
        let output = env.cmd().current_dir(&linked).args(args).output().unwrap();
        assert!(output.status.success(), "{output:?}");
    }
    for content in ["two\n", "three\n"] {
        write(&linked, "l.txt", content);
        write(&linked, "sub/l.txt", content);
        snapshot_and_compare(&env, &linked, &linked_git, linked_ref, true);
    }
    fsck(&root);
}

#[test]
fn settings_that_change_what_git_stores_and_a_sha256_repository_take_the_process_path() {
    let env = workflow();
    let root = env.project();
    let git_dir = root.join(".git");
    let refname = "refs/checkpoint/snapshots/w";
    write(&root, "a.txt", "one\n");
    env.ok(&["snapshot"]);
    // Line endings converted: git's content, not the file's bytes.
    git(&root, &["config", "core.autocrlf", "true"]);
    write(&root, "a.txt", "crlf\r\nline\r\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, false);
    assert!(path_taken(&git_dir).contains("core.autocrlf"));
    git(&root, &["config", "--unset", "core.autocrlf"]);
    write(&root, "a.txt", "back\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    // The settings kept from the last `git config` are not trusted once a file git reads them
    // from changes, even in the same second at the same size, nor once the environment does:
    // the repository's, the person's (`~/.gitconfig`, the XDG one), one added by `GIT_CONFIG_*`.
    let settings = git_dir.join("checkpoint/snapshots/w.settings");
    git(&root, &["config", "core.symlinks", "yes"]);
    write(&root, "a.txt", "kept\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    assert!(settings.is_file());
    let config = fs::read_to_string(git_dir.join("config")).unwrap();
    fs::write(
        git_dir.join("config"),
        config.replace("symlinks = yes", "symlinks = off"),
    )
    .unwrap();
    write(&root, "a.txt", "same size, same second\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, false);
    assert!(path_taken(&git_dir).contains("core.symlinks"));
    fs::write(git_dir.join("config"), config).unwrap();
    write(&root, "a.txt", "yes again\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    let home = env.dir.path().join("home");
    for file in [".gitconfig", ".config/git/config"] {
        write(&home, file, "[core]\n\tautocrlf = input\n");
        write(&root, "a.txt", file);
        snapshot_and_compare(&env, &root, &git_dir, refname, false);
        assert!(path_taken(&git_dir).contains("core.autocrlf"), "{file}");
        fs::remove_file(home.join(file)).unwrap();
        write(&root, "a.txt", "back\n");
        snapshot_and_compare(&env, &root, &git_dir, refname, true);
    }
    // An include is followed by git every time.
    write(&home, ".gitconfig", "[include]\n\tpath = more\n");
    write(&home, "more", "[core]\n\tautocrlf = true\n");
    write(&root, "a.txt", "included\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, false);
    write(&home, "more", "[core]\n\tautocrlf = false\n");
    write(&root, "a.txt", "included, off\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    write(&home, "more", "[core]\n\tautocrlf = true\n");
    write(&root, "a.txt", "included, on\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, false);
    fs::remove_file(home.join(".gitconfig")).unwrap();
    write(&root, "a.txt", "no include\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    let output = env
        .cmd()
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "core.autocrlf")
        .env("GIT_CONFIG_VALUE_0", "true")
        .arg("snapshot")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    write(&root, "a.txt", "by the environment\n");
    let output = env
        .cmd()
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "core.autocrlf")
        .env("GIT_CONFIG_VALUE_0", "true")
        .arg("snapshot")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(path_taken(&git_dir).contains("core.autocrlf"));
    write(&root, "a.txt", "one\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    // Attributes in the tree: git's too.
    write(&root, ".gitattributes", "*.txt text eol=lf\n");
    write(&root, "b.txt", "crlf\r\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, false);
    assert!(path_taken(&git_dir).contains(".gitattributes"));
    write(&root, "b.txt", "again\r\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, false);

    let sha256 = TestEnv::bare();
    let root = sha256.project();
    git(&root, &["init", "-q", "--object-format=sha256"]);
    git(&root, &["commit", "-q", "--allow-empty", "-m", "start"]);
    sha256.ok(&["init", "w", "--phase", "p"]);
    write(&root, "a.txt", "one\n");
    sha256.ok(&["snapshot"]);
    write(&root, "a.txt", "two\n");
    snapshot_and_compare(&sha256, &root, &root.join(".git"), refname, false);
    assert!(path_taken(&root.join(".git")).contains("objectformat"));
    fsck(&root);
}

#[test]
fn a_killed_fast_snapshot_leaves_the_next_one_whole_and_git_clean() {
    let env = workflow();
    let root = env.project();
    let git_dir = root.join(".git");
    let refname = "refs/checkpoint/snapshots/w";
    for i in 0..60 {
        write(&root, &format!("d{}/f{i}.txt", i % 6), "zero\n");
    }
    env.ok(&["snapshot"]);
    for (round, delay) in [0u64, 2, 4, 8, 12, 20, 30].into_iter().enumerate() {
        for i in (round..60).step_by(7) {
            write(
                &root,
                &format!("d{}/f{i}.txt", i % 6),
                &format!("{round}\n"),
            );
        }
        fs::remove_file(root.join(format!("d{}/f{round}.txt", round % 6))).unwrap();
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
        // Whatever the kill left, the next snapshot is git's tree, chained (by either path).
        let output = env.cmd().arg("snapshot").output().unwrap();
        assert!(output.status.success(), "{output:?}");
        let tree = git(&root, &["rev-parse", &format!("{refname}^{{tree}}")]);
        assert_eq!(tree.trim(), git_tree(&root), "round {round}");
        fsck(&root);
    }
    // And the one after is in-process again.
    write(&root, "d0/f0.txt", "after\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    // A kill may leave a temporary object (git's `gc` removes those); a whole snapshot none.
    let before: Vec<PathBuf> = walk_objects(&git_dir.join("objects"));
    write(&root, "d0/f0.txt", "after again\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    assert_eq!(walk_objects(&git_dir.join("objects")), before);
}

#[test]
fn a_fast_snapshot_killed_after_its_ref_moved_leaves_the_next_one_whole() {
    let env = workflow();
    let root = env.project();
    let git_dir = root.join(".git");
    let refname = "refs/checkpoint/snapshots/w";
    let index = git_dir.join("checkpoint/snapshots/w.index");
    for i in 0..12 {
        write(&root, &format!("d{}/f{i}.txt", i % 3), "zero\n");
    }
    env.ok(&["snapshot"]);
    write(&root, "d0/f0.txt", "one\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    let before = fs::read(&index).unwrap();
    write(&root, "d1/f1.txt", "two\n");
    write(&root, "d2/f2.txt", "two\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    let moved = git(&root, &["rev-parse", refname]);
    // As if killed after the ref moved, before the index was written: the index is behind.
    fs::write(&index, &before).unwrap();
    let output = env.cmd().arg("snapshot").output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        git(&root, &["rev-parse", refname]),
        moved,
        "nothing new to store"
    );
    assert!(path_taken(&git_dir).starts_with("git: "));
    // The files changed then, and after, are in the next snapshots, in-process again.
    write(&root, "d1/f1.txt", "three\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    write(&root, "d2/f5.txt", "four\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    // Killed while it held the ref's lock, or the index's: both locks are stale under the
    // snapshot's own lock, and the next snapshot goes on.
    fs::write(git_dir.join(format!("{refname}.lock")), "").unwrap();
    fs::write(git_dir.join("checkpoint/snapshots/w.index.lock"), "").unwrap();
    write(&root, "d0/f3.txt", "five\n");
    snapshot_and_compare(&env, &root, &git_dir, refname, true);
    assert!(!git_dir.join(format!("{refname}.lock")).exists());
    fsck(&root);
}

/// Temporary object files left in `objects` (a kill between a write and its link leaves one,
/// which git's `gc` cleans up; a finished snapshot leaves none).
fn walk_objects(objects: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in fs::read_dir(objects).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for file in fs::read_dir(&dir).unwrap() {
            let file = file.unwrap().path();
            if file
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("tmp_obj_checkpoint")
            {
                found.push(file);
            }
        }
    }
    found
}

#[test]
fn random_edit_sequences_give_gits_trees() {
    let env = workflow();
    let root = env.project();
    let git_dir = root.join(".git");
    let refname = "refs/checkpoint/snapshots/w";
    let names = [
        "a", "a-b", "a.b", "a0", "b", "b/c", "a/x", "a/y/z", "c d", "é",
    ];
    let mut rng = fastrand::Rng::with_seed(41);
    write(&root, "seed.txt", "seed\n");
    env.ok(&["snapshot"]);
    for _ in 0..12 {
        for _ in 0..rng.usize(1..4) {
            let name = names[rng.usize(..names.len())];
            let full = root.join(name);
            // Clear the way: whatever is at the name or its parents goes first.
            for ancestor in Path::new(name)
                .ancestors()
                .filter(|p| !p.as_os_str().is_empty())
            {
                let at = root.join(ancestor);
                if let Ok(metadata) = fs::symlink_metadata(&at)
                    && (ancestor == Path::new(name) || !metadata.is_dir())
                {
                    if metadata.is_dir() {
                        fs::remove_dir_all(&at).unwrap();
                    } else {
                        fs::remove_file(&at).unwrap();
                    }
                }
            }
            match rng.u8(..4) {
                0 => {}
                1 => symlink(format!("target-{}", rng.u8(..)), &full)
                    .or_else(|_| {
                        fs::create_dir_all(full.parent().unwrap())?;
                        symlink("t", &full)
                    })
                    .unwrap(),
                2 => {
                    write(&root, name, &format!("{}\n", rng.u32(..)));
                    fs::set_permissions(&full, fs::Permissions::from_mode(0o755)).unwrap();
                }
                _ => write(&root, name, &format!("{}\n", rng.u32(..))),
            }
        }
        let output = env.cmd().arg("snapshot").output().unwrap();
        assert!(output.status.success(), "{output:?}");
        let tree = git(&root, &["rev-parse", &format!("{refname}^{{tree}}")]);
        assert_eq!(tree.trim(), git_tree(&root));
        // The private index holds that tree, its cache tree (which `write-tree` trusts where
        // valid, and the next snapshot too) included.
        // A copy: `write-tree` would make the invalid trees valid in the index it reads.
        let copy = git_dir.join("index-copy");
        fs::copy(git_dir.join("checkpoint/snapshots/w.index"), &copy).unwrap();
        let written = std::process::Command::new("git")
            .current_dir(&root)
            .args(["write-tree"])
            .env("GIT_INDEX_FILE", &copy)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&written.stdout).trim(), tree.trim());
        let taken = path_taken(&git_dir);
        assert!(
            taken == "in-process" || taken.starts_with("git: the first"),
            "{taken}"
        );
    }
    fsck(&root);
}
