//! A hermetic test environment: a temporary project (a git repository), a fixed clock, and
//! helpers that run the real `checkpoint` binary and render its output for snapshots.

mod remote;

use std::{
    io::{Read, Write},
    path::{Path, PathBuf},
    process::{Child, Command, Output, Stdio},
};

use assert_fs::TempDir;

pub use crate::support::remote::{Remote, silent_remote};

/// The fixed time every command sees unless a test moves it.
pub const NOW: &str = "2026-03-01T12:00:00Z";

/// A temporary project directory with its own HOME.
pub struct TestEnv {
    pub dir: TempDir,
    now: std::cell::RefCell<String>,
}

impl TestEnv {
    /// A project that is a git repository (so the store lands in `.claude/checkpoints`).
    pub fn new() -> Self {
        let env = Self::bare();
        std::fs::create_dir_all(env.project().join(".git")).unwrap();
        env
    }

    /// A project directory without `.git`.
    pub fn bare() -> Self {
        let dir = TempDir::new().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        Self {
            dir,
            now: std::cell::RefCell::new(NOW.to_owned()),
        }
    }

    pub fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    /// The store root: `.claude/checkpoints` in the project.
    pub fn store(&self) -> PathBuf {
        self.project().join(".claude").join("checkpoints")
    }

    /// The directory of one workflow.
    pub fn workflow_dir(&self, id: &str) -> PathBuf {
        self.store().join(id)
    }

    /// Sets the clock every later command sees.
    pub fn set_now(&self, now: &str) {
        *self.now.borrow_mut() = now.to_owned();
    }

    /// A `checkpoint` command with a clean environment, run in the project.
    pub fn cmd(&self) -> Command {
        let mut cmd = Command::new(bin());
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path().join("home"))
            .env("COLUMNS", "100")
            .env("NO_COLOR", "1")
            .env("CHECKPOINT_TEST_NOW", self.now.borrow().as_str())
            .env("CHECKPOINT_NO_PROGRESS", "1")
            .current_dir(self.project());
        cmd
    }

    /// Starts `checkpoint hook <event>` with `payload` on its stdin, as Claude Code runs a hook;
    /// [`HookRun::wait`] collects what it did.
    pub fn hook(&self, event: &str, payload: &str) -> HookRun {
        let mut child = self.spawn_hook(event);
        // A hook may finish without reading everything; that is not the test's concern.
        let _ = child.stdin.take().unwrap().write_all(payload.as_bytes());
        HookRun(child)
    }

    /// Starts `checkpoint hook <event>` like [`TestEnv::hook`], with these environment
    /// variables set as the client sets them.
    pub fn hook_with_env(&self, event: &str, payload: &str, vars: &[(&str, &str)]) -> HookRun {
        let mut child = self
            .cmd()
            .args(["hook", event])
            .envs(vars.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child.stdin.take().unwrap().write_all(payload.as_bytes());
        HookRun(child)
    }

    /// Starts `checkpoint hook <event>` with stdin, stdout and stderr piped, and writes nothing.
    pub fn spawn_hook(&self, event: &str) -> Child {
        self.cmd()
            .args(["hook", event])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Runs `checkpoint` with `args` and returns its output.
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    /// Runs `checkpoint` and asserts it succeeded; returns stdout.
    #[track_caller]
    pub fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(
            output.status.success(),
            "checkpoint {args:?} failed:\n{}",
            render(self, &output)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// Runs `checkpoint --format json` and parses stdout.
    #[track_caller]
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["--format", "json"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(&all)).unwrap()
    }

    /// Runs `checkpoint` and renders exit status, stdout and stderr for a snapshot.
    pub fn snapshot(&self, args: &[&str]) -> String {
        render(self, &self.run(args))
    }

    /// Reads a file of a workflow's directory.
    pub fn read(&self, id: &str, file: &str) -> String {
        std::fs::read_to_string(self.workflow_dir(id).join(file)).unwrap()
    }

    /// The parsed `state.json` of a workflow.
    pub fn state(&self, id: &str) -> serde_json::Value {
        serde_json::from_str(&self.read(id, "state.json")).unwrap()
    }
}

/// The path of the `checkpoint` binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_checkpoint"))
}

/// Renders an output as `exit status / stdout / stderr`, with the temp dir replaced by `[TEMP]`.
pub fn render(env: &TestEnv, output: &Output) -> String {
    let filter = |text: &[u8]| {
        let text = String::from_utf8_lossy(text).into_owned();
        text.replace(&env.dir.path().display().to_string(), "[TEMP]")
    };
    format!(
        "exit status: {}\n----- stdout -----\n{}----- stderr -----\n{}",
        output
            .status
            .code()
            .map_or("signal".to_owned(), |code| code.to_string()),
        filter(&output.stdout),
        filter(&output.stderr)
    )
}

/// A copy of a prepared command: its program, environment and directory, not its arguments (a
/// `Command` is not `Clone`).
pub fn copy(cmd: &Command) -> Command {
    let mut copy = Command::new(cmd.get_program());
    copy.env_clear()
        .envs(
            cmd.get_envs()
                .filter_map(|(key, value)| Some((key, value?))),
        )
        .current_dir(cmd.get_current_dir().unwrap());
    copy
}

/// A hook started by [`TestEnv::hook`], running in the background until waited for.
pub struct HookRun(Child);

impl HookRun {
    /// Waits for the hook; returns (exit code, stdout, stderr).
    pub fn wait(self) -> (i32, String, String) {
        let output = self.0.wait_with_output().unwrap();
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    }
}

/// Runs `git` in `dir` away from the machine's configuration (`HOME` is `dir`, and no system
/// configuration) with a fixed identity; asserts that it succeeded and returns its stdout.
#[track_caller]
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Made-up secrets of each kind the redaction rules know; none may ever reach the disk.
pub const SECRET_SAMPLES: [&str; 8] = [
    "sk-ant-api03-Zx9aB8cD7eF6gH5iJ4kL3mN2oP1qR0sT",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_1234567890abcdefghijABCDEFGHIJ123456",
    "abc123def",
    "eyJhbGciOi",
    // The rest of `password=Tr0ub4dor&3xyz`, after the `&` that does not end it.
    "&3xyz",
    // The password of a connection string, `…;uid=etl;pwd=Pa55w0rdX;Encrypt=yes`.
    "Pa55w0rdX",
    // A token glued after letters, `xxxxghp_…`.
    "ghp_9876543210zyxwvutsABCDEFGHIJ654321",
];

/// Starts workflow `w` at phase `design` with the secret samples in its title, a note and the
/// phase's progress; returns the `note` command's output (it succeeded).
pub fn record_secret_samples(env: &TestEnv) -> Output {
    let [anthropic, aws, github, ..] = SECRET_SAMPLES;
    env.ok(&[
        "init",
        "w",
        "--phase",
        "design",
        "--title",
        &format!("deploy {github}"),
    ]);
    env.ok(&["start", "design"]);
    let note = env.run(&["note", &format!("use {anthropic} with {aws}")]);
    assert!(note.status.success(), "{}", render(env, &note));
    env.ok(&[
        "progress",
        "design",
        "export GITHUB_TOKEN=abc123def; curl -H 'Authorization: Bearer eyJhbGciOi.payload.sig'; mysql password=Tr0ub4dor&3xyz; Server=x;uid=etl;pwd=Pa55w0rdX;Encrypt=yes; xxxxghp_9876543210zyxwvutsABCDEFGHIJ654321",
    ]);
    note
}

/// Waits for a child to exit by itself; `None` if it is still running after `patience` (then it
/// is killed). The patience is a guard against a hang, far above what the hook takes.
pub fn exits_by_itself(
    child: &mut Child,
    patience: std::time::Duration,
) -> Option<std::process::ExitStatus> {
    let started = std::time::Instant::now();
    while started.elapsed() < patience {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    None
}

/// Waits for a child whose stderr is piped, with the patience of [`exits_by_itself`] (a minute):
/// (exit code, stderr), or `None` when it hung and was killed.
pub fn finish_guarded(mut child: Child) -> Option<(i32, String)> {
    let status = exits_by_itself(&mut child, std::time::Duration::from_secs(60))?;
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    Some((status.code().unwrap_or(-1), stderr))
}

/// Spawns a hook, writes `payload` to its stdin and keeps stdin open; returns the child and
/// the open stdin.
pub fn hook_with_open_stdin(
    env: &TestEnv,
    event: &str,
    payload: &[u8],
) -> (Child, std::process::ChildStdin) {
    use std::io::Write as _;
    let mut child = env.spawn_hook(event);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(payload).unwrap();
    stdin.flush().unwrap();
    (child, stdin)
}

/// A project that is a real git repository with an identity and one commit.
pub fn repo() -> TestEnv {
    let env = TestEnv::bare();
    let dir = env.project();
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["config", "user.name", "Test"]);
    git(&dir, &["config", "user.email", "test@example.com"]);
    git(&dir, &["commit", "-q", "--allow-empty", "-m", "start"]);
    env
}

/// A hook payload for `event` in `env`'s project, with the envelope every event carries (a
/// fixed session id) and the fields of `extra`.
pub fn hook_payload(env: &TestEnv, event: &str, extra: serde_json::Value) -> String {
    let mut value = serde_json::json!({
        "session_id": "11111111-2222-3333-4444-555555555555",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": env.project(),
        "hook_event_name": event,
    });
    value
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    value.to_string()
}

/// The context a `SessionStart` hook (a new session) injects.
pub fn session_start_context(env: &TestEnv) -> String {
    let payload = hook_payload(
        env,
        "SessionStart",
        serde_json::json!({"source": "startup"}),
    );
    let (code, stdout, stderr) = env.hook("SessionStart", &payload).wait();
    assert_eq!(code, 0, "{stderr}");
    let out: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned()
}
