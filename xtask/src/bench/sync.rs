//! The sync cases: `checkpoint push` and `pull` of a 1,000-entry workflow over `git daemon` on
//! 127.0.0.1, next to plain `git push` and `git fetch` of the same ref (their floor).

use std::{
    net::{TcpListener, TcpStream},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use crate::{
    Result,
    bench::{
        fixtures::{self, Fixtures, WORKFLOW_ID},
        harness::{Case, Expect, Setup},
    },
};

/// The keys of the sync cases.
pub(crate) const KEYS: [&str; 4] = [
    "sync/push/1000",
    "sync/git-push/1000",
    "sync/pull/1000",
    "sync/git-fetch/1000",
];

/// A `git daemon` serving the remote; stopped when dropped.
pub(crate) struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Builds the remote, the laptop that pushes and the clone that pulls, starts the daemon, and
/// returns the four cases.
pub(crate) fn cases(fixtures: &Fixtures, dir: &Path, binary: &Path) -> Result<(Vec<Case>, Daemon)> {
    let root = dir.join("sync");
    fixtures::fresh_dir(&root)?;
    let remote = root.join("remote.git");
    fixtures::git(&root, &["init", "--quiet", "--bare", "remote.git"])?;
    let (daemon, port) = start_daemon(&root)?;
    let url = format!("git://127.0.0.1:{port}/remote.git");

    let laptop = fixtures.journal_project(&root.join("laptop"), 1_000)?.dir;
    fixtures::git(&laptop, &["remote", "add", "origin", &url])?;
    // One real push checks the path and gives the floor its commit.
    fixtures::run_quiet(Command::new(binary).arg("push").current_dir(&laptop))?;
    let tracking = format!("refs/checkpoint-sync/origin/{WORKFLOW_ID}");
    let sha = capture(
        Command::new("git")
            .current_dir(&laptop)
            .args(["rev-parse", &tracking]),
    )?;
    let second = root.join("second");
    fixtures::fresh_dir(&second)?;
    fixtures::git(&second, &["init", "--quiet"])?;
    fixtures::git(&second, &["remote", "add", "origin", &url])?;

    let remote_ref = format!("refs/checkpoints/{WORKFLOW_ID}");
    let sh = |script: String| Setup::Run {
        program: PathBuf::from("sh"),
        args: vec!["-c".into(), script.into()],
        cwd: root.clone(),
    };
    // Before each push: the remote ref is gone, so every push sends the whole workflow.
    let forget_remote = format!(
        "git --git-dir '{}' update-ref -d {remote_ref}",
        remote.display()
    );
    let forget_tracking = format!("git -C '{}' update-ref -d {tracking}", laptop.display());
    // Before each pull: nothing of the workflow on the clone, not even its objects.
    let forget_pulled = format!(
        "rm -rf '{0}/.claude/checkpoints/{WORKFLOW_ID}' && git -C '{0}' update-ref -d {tracking}; git -C '{0}' prune --expire=now",
        second.display()
    );
    let case =
        |key: &str, label: &str, program: &Path, args: &[&str], cwd: &Path, setup, expect| Case {
            setup: Some(setup),
            expect,
            ..super::simple(key, label, program, args, cwd)
        };
    let git = Path::new("git");
    let cases = vec![
        case(
            KEYS[0],
            "`push`, 1,000 journal entries, over `git daemon` on 127.0.0.1",
            binary,
            &["push"],
            &laptop,
            sh(format!("{forget_remote} && {forget_tracking}")),
            Expect::Contains("pushed entry"),
        ),
        case(
            KEYS[1],
            "`git push` of the same ref (floor)",
            git,
            &["push", "--quiet", "origin", &format!("{sha}:{remote_ref}")],
            &laptop,
            sh(forget_remote),
            Expect::Nothing,
        ),
        case(
            KEYS[2],
            "`pull` into a clone without the workflow, 1,000 journal entries, over `git daemon`",
            binary,
            &["pull", "--workflow", WORKFLOW_ID],
            &second,
            sh(forget_pulled.clone()),
            Expect::Contains("created from"),
        ),
        case(
            KEYS[3],
            "`git fetch` of the same ref (floor)",
            git,
            &[
                "fetch",
                "--quiet",
                "--no-tags",
                "origin",
                &format!("+{remote_ref}:{tracking}"),
            ],
            &second,
            sh(forget_pulled),
            Expect::Nothing,
        ),
    ];
    Ok((cases, daemon))
}

fn start_daemon(base: &Path) -> Result<(Daemon, u16)> {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map_err(|err| format!("failed to find a free port: {err}"))?
        .port();
    let child = Command::new("git")
        .arg("daemon")
        .args(["--reuseaddr", "--export-all", "--enable=receive-pack"])
        .arg("--listen=127.0.0.1")
        .arg(format!("--port={port}"))
        .arg(format!("--base-path={}", base.display()))
        .arg(base)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|err| format!("failed to start `git daemon`: {err}"))?;
    let daemon = Daemon(child);
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if started.elapsed() > Duration::from_secs(20) {
            return Err("`git daemon` did not start listening within 20 s".into());
        }
        thread::sleep(Duration::from_millis(20));
    }
    Ok((daemon, port))
}

fn capture(command: &mut Command) -> Result<String> {
    let output = command
        .output()
        .map_err(|err| format!("failed to run `{}`: {err}", crate::describe(command)))?;
    if !output.status.success() {
        return Err(format!(
            "`{}` failed: {}",
            crate::describe(command),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}
