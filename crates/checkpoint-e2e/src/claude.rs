//! A runner for the real `claude` client in a throwaway HOME and a throwaway git project.
//!
//! Every run starts from an empty environment plus exactly the variables the facts were measured
//! with (`shared/claude-code-facts.md`, "Common setup"), so the developer's own Claude Code
//! configuration and session variables never leak into a test.

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use serde::Deserialize;
use serde_json::Value;
use tempfile::TempDir;

use crate::mock::MockApi;

/// The variable that names the `claude` executable to test.
pub const CLAUDE_BIN_ENV: &str = "CHECKPOINT_CLAUDE_BIN";

/// How long one `claude` run may take before it is killed and the test fails.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// How long to wait for the output pipes to close after the process has exited.
///
/// A grandchild that inherited a pipe could keep it open forever, so this wait is bounded.
pub(crate) const PIPE_DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// A temp HOME, a temp git project and the `claude` binary, wired to one [`MockApi`].
#[derive(Debug)]
pub struct ClaudeEnv {
    home: TempDir,
    project: TempDir,
    claude_bin: PathBuf,
    base_url: String,
    timeout: Duration,
}

/// The result of one `claude` run.
#[derive(Debug, Clone)]
pub struct ClaudeOutput {
    /// The exit status.
    pub status: ExitStatus,
    /// Everything written to stdout, lossily decoded as UTF-8.
    pub stdout: String,
    /// Everything written to stderr, lossily decoded as UTF-8.
    pub stderr: String,
}

/// The fields we use of the result object that `claude -p --output-format json` prints.
///
/// Unknown fields are ignored on purpose: this is the client's format, not ours.
#[derive(Debug, Clone, Deserialize)]
pub struct JsonResult {
    /// Always `result`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `success` or an error subtype.
    pub subtype: Option<String>,
    /// Whether the run ended in an error (an API error still has `subtype: "success"`).
    pub is_error: bool,
    /// The HTTP status of the API error that ended the run, if any.
    pub api_error_status: Option<u16>,
    /// The final assistant text.
    pub result: Option<String>,
    /// The session id, usable with `--resume`.
    pub session_id: String,
    /// The number of agent-loop turns.
    pub num_turns: Option<u64>,
    /// The stop reason of the last model answer, e.g. `end_turn`.
    pub stop_reason: Option<String>,
    /// The refused tool calls (`tool_name`, `tool_use_id`, `tool_input`).
    #[serde(default)]
    pub permission_denials: Vec<Value>,
}

impl ClaudeEnv {
    /// Creates a fresh HOME and git project whose `claude` runs talk to `mock`.
    ///
    /// Panics with a hint to run `cargo xtask test` when no `claude` binary can be found.
    #[track_caller]
    pub fn new(mock: &MockApi) -> ClaudeEnv {
        let claude_bin = find_claude_bin();
        let home = tempfile::Builder::new()
            .prefix("checkpoint-e2e-home-")
            .tempdir()
            .expect("creating a temp dir succeeds");
        let project = tempfile::Builder::new()
            .prefix("checkpoint-e2e-project-")
            .tempdir()
            .expect("creating a temp dir succeeds");
        let env = ClaudeEnv {
            home,
            project,
            claude_bin,
            base_url: mock.base_url(),
            timeout: DEFAULT_TIMEOUT,
        };
        env.init_git_repo();
        env
    }

    /// Changes how long one run may take before it is killed.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> ClaudeEnv {
        self.timeout = timeout;
        self
    }

    /// Returns the temp HOME.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// Returns the temp project directory, the cwd of every run.
    pub fn project_dir(&self) -> &Path {
        self.project.path()
    }

    /// Returns the `claude` executable in use.
    pub fn claude_bin(&self) -> &Path {
        &self.claude_bin
    }

    /// The version of the `claude` executable in use, from `claude --version` (`2.1.197 (Claude
    /// Code)`), as `(major, minor, patch)`; panics when it cannot be read.
    #[track_caller]
    pub fn client_version(&self) -> (u32, u32, u32) {
        let output = Command::new(&self.claude_bin)
            .arg("--version")
            .env("HOME", self.home())
            .env("DISABLE_AUTOUPDATER", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|err| {
                panic!(
                    "failed to run `{} --version`: {err}",
                    self.claude_bin.display()
                )
            });
        let text = String::from_utf8_lossy(&output.stdout);
        parse_version(&text)
            .unwrap_or_else(|| panic!("`claude --version` printed no version: {text:?}"))
    }

    /// Runs `claude` with `args` and `extra_env` in the project dir and waits for it.
    ///
    /// The environment is cleared, then set to exactly PATH (inherited), HOME, the mock's
    /// `ANTHROPIC_BASE_URL`, a dummy `ANTHROPIC_API_KEY`, the three variables that keep the client
    /// offline, and `extra_env`. Stdin is null. A run that outlives the timeout is killed and the
    /// test panics with what it printed.
    #[track_caller]
    pub fn run(&self, args: &[&str], extra_env: &[(&str, &str)]) -> ClaudeOutput {
        let mut command = self.command(args, extra_env);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(err) => panic!("failed to spawn `{}`: {err}", self.claude_bin.display()),
        };
        self.wait(&mut child, args)
    }

    /// The command [`ClaudeEnv::run`] runs, with its output piped, in a process group of its
    /// own, for a test that handles the process itself.
    pub fn command(&self, args: &[&str], extra_env: &[(&str, &str)]) -> Command {
        let mut command = Command::new(&self.claude_bin);
        command
            .args(args)
            .env_clear()
            .env(
                "PATH",
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
            )
            .env("HOME", self.home())
            .env("ANTHROPIC_BASE_URL", &self.base_url)
            .env("ANTHROPIC_API_KEY", "sk-dummy")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .envs(extra_env.iter().copied())
            .current_dir(self.project_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // A group of its own lets a timeout kill the client together with its tool processes.
            .process_group(0);
        command
    }

    /// Waits for a `claude` started from [`ClaudeEnv::command`] and collects its output.
    #[track_caller]
    pub fn wait(&self, child: &mut std::process::Child, args: &[&str]) -> ClaudeOutput {
        let (status, stdout, stderr, timed_out) = collect(child, self.timeout, "claude");
        let output = ClaudeOutput {
            status,
            stdout,
            stderr,
        };
        if timed_out {
            panic!(
                "`claude {}` did not finish within {:?} and was killed\n{output}",
                args.join(" "),
                self.timeout
            );
        }
        output
    }

    /// Returns `$HOME/.claude/projects`, where the client keeps its session transcripts.
    pub fn projects_dir(&self) -> PathBuf {
        self.home().join(".claude").join("projects")
    }

    /// Returns the session transcripts (`<projects>/<project>/<session-id>.jsonl`), oldest first.
    ///
    /// Subagent transcripts (`<session-id>/subagents/*.jsonl`) are not included; see
    /// [`ClaudeEnv::all_transcripts_text`].
    pub fn transcript_paths(&self) -> Vec<PathBuf> {
        let mut paths: Vec<(SystemTime, PathBuf)> = Vec::new();
        for project in read_dir_paths(&self.projects_dir()) {
            for path in read_dir_paths(&project) {
                if path.is_file() && path.extension().is_some_and(|ext| ext == "jsonl") {
                    let modified = fs::metadata(&path)
                        .and_then(|metadata| metadata.modified())
                        .unwrap_or(SystemTime::UNIX_EPOCH);
                    paths.push((modified, path));
                }
            }
        }
        paths.sort();
        paths.into_iter().map(|(_, path)| path).collect()
    }

    /// Returns the ids of the sessions that have a transcript, oldest first.
    pub fn session_ids(&self) -> Vec<String> {
        self.transcript_paths()
            .iter()
            .filter_map(|path| path.file_stem())
            .map(|stem| stem.to_string_lossy().into_owned())
            .collect()
    }

    /// Returns the raw text of the transcript of `session_id`; panics when there is none.
    #[track_caller]
    pub fn transcript_text(&self, session_id: &str) -> String {
        let file_name = format!("{session_id}.jsonl");
        let paths = self.transcript_paths();
        let Some(path) = paths
            .iter()
            .find(|path| path.file_name().and_then(|f| f.to_str()) == Some(&file_name))
        else {
            panic!(
                "no transcript for session `{session_id}` under `{}`",
                self.projects_dir().display()
            );
        };
        match fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) => panic!("failed to read `{}`: {err}", path.display()),
        }
    }

    /// Returns the transcript of `session_id` as one JSON value per line.
    ///
    /// Panics when there is no transcript or a line is not JSON.
    #[track_caller]
    pub fn transcript(&self, session_id: &str) -> Vec<Value> {
        self.transcript_text(session_id)
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| match serde_json::from_str(line) {
                Ok(value) => value,
                Err(err) => panic!("transcript line is not JSON ({err}): {line}"),
            })
            .collect()
    }

    /// Returns the raw text of every `.jsonl` file under the projects dir, subagents included.
    ///
    /// Some failures (a failing `!` line in a command body, facts §b) leave a trace only here.
    pub fn all_transcripts_text(&self) -> String {
        let mut paths = Vec::new();
        collect_jsonl(&self.projects_dir(), &mut paths);
        paths.sort();
        paths
            .iter()
            .filter_map(|path| fs::read_to_string(path).ok())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn init_git_repo(&self) {
        self.git(&["init", "--quiet", "--initial-branch=main"]);
        self.git(&["config", "user.name", "Checkpoint E2E"]);
        self.git(&["config", "user.email", "e2e@checkpoint.invalid"]);
        self.git(&["config", "commit.gpgsign", "false"]);
        let readme = self.project_dir().join("README.md");
        if let Err(err) = fs::write(&readme, "# e2e project\n") {
            panic!("failed to write `{}`: {err}", readme.display());
        }
        self.git(&["add", "README.md"]);
        self.git(&["commit", "--quiet", "--message", "initial commit"]);
    }

    /// Runs git in the project with the same hermetic environment as the client.
    #[track_caller]
    fn git(&self, args: &[&str]) {
        let output = Command::new("git")
            .args(args)
            .env_clear()
            .env(
                "PATH",
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
            )
            .env("HOME", self.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .current_dir(self.project_dir())
            .stdin(Stdio::null())
            .output();
        match output {
            Ok(output) if output.status.success() => {}
            Ok(output) => panic!(
                "`git {}` failed with {}: {}",
                args.join(" "),
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ),
            Err(err) => panic!("failed to run `git {}`: {err}", args.join(" ")),
        }
    }
}

impl ClaudeOutput {
    /// Returns the exit code, or `None` when a signal ended the process.
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Parses stdout as the result object of `--output-format json`; panics when it is not one.
    #[track_caller]
    pub fn json_result(&self) -> JsonResult {
        match serde_json::from_str(self.stdout.trim()) {
            Ok(result) => result,
            Err(err) => panic!("stdout is not a `--output-format json` result ({err})\n{self}"),
        }
    }
}

impl fmt::Display for ClaudeOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "exit status: {}", self.status)?;
        writeln!(f, "----- stdout -----")?;
        writeln!(f, "{}", self.stdout)?;
        writeln!(f, "----- stderr -----")?;
        write!(f, "{}", self.stderr)
    }
}

/// The `x.y.z` at the start of `claude --version`'s output.
fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let word = text.split_whitespace().next()?;
    let mut parts = word.split('.').map(|part| part.parse::<u32>().ok());
    let version = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(version)
}

/// Finds the `claude` executable: `$CHECKPOINT_CLAUDE_BIN`, else the copy `cargo xtask test`
/// installs under `target/claude-code`; panics with a hint when there is none.
#[track_caller]
fn find_claude_bin() -> PathBuf {
    let fallback = workspace_root()
        .join("target")
        .join("claude-code")
        .join("node_modules")
        .join(".bin")
        .join("claude");
    match resolve_claude_bin(std::env::var_os(CLAUDE_BIN_ENV), fallback) {
        Ok(bin) => bin,
        Err(message) => panic!("{message}"),
    }
}

/// Chooses the `claude` executable from the value of [`CLAUDE_BIN_ENV`] and the fallback path.
///
/// A set but wrong variable is an error rather than a reason to use the fallback, so that a typo
/// cannot silently test another client.
fn resolve_claude_bin(from_env: Option<OsString>, fallback: PathBuf) -> Result<PathBuf, String> {
    if let Some(bin) = from_env.filter(|bin| !bin.is_empty()) {
        let bin = PathBuf::from(bin);
        if !bin.is_file() {
            return Err(format!(
                "{CLAUDE_BIN_ENV} is set to `{}`, which is not a file",
                bin.display()
            ));
        }
        return Ok(bin);
    }
    if !fallback.is_file() {
        return Err(format!(
            "the end-to-end tests need the real `claude` client, but {CLAUDE_BIN_ENV} is unset and \
             `{}` does not exist\nhint: run `cargo xtask test`, which installs it, or set \
             {CLAUDE_BIN_ENV} to a `claude` executable",
            fallback.display()
        ));
    }
    Ok(fallback)
}

/// The workspace root, where the repository's `plugin/` and `.claude-plugin/` are.
pub fn workspace_root() -> PathBuf {
    // This crate lives at `<root>/crates/checkpoint-e2e`.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("the crate is two levels below the workspace root")
        .to_path_buf()
}

/// Reads `source` to its end on a thread, keeping what was read visible even before the end.
/// Waits up to `timeout` for `child` (killed with its process group past it), with its piped
/// stdout and stderr drained as it runs: its status, stdout, stderr and whether it timed out.
pub(crate) fn collect(
    child: &mut std::process::Child,
    timeout: Duration,
    program: &str,
) -> (ExitStatus, String, String, bool) {
    let (done_tx, done_rx) = mpsc::channel();
    let stdout = drain(
        child.stdout.take().expect("stdout is piped"),
        done_tx.clone(),
    );
    let stderr = drain(child.stderr.take().expect("stderr is piped"), done_tx);
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => thread::sleep(Duration::from_millis(10)),
            Err(err) => panic!("failed to wait for `{program}`: {err}"),
        }
    };
    let timed_out = status.is_none();
    let status = status.unwrap_or_else(|| {
        kill_group(child.id());
        let _ = child.kill();
        child.wait().expect("waiting for a killed child succeeds")
    });
    let drain_deadline = Instant::now() + PIPE_DRAIN_TIMEOUT;
    for _ in 0..2 {
        let left = drain_deadline.saturating_duration_since(Instant::now());
        if done_rx.recv_timeout(left).is_err() {
            break;
        }
    }
    (status, snapshot(&stdout), snapshot(&stderr), timed_out)
}

pub(crate) fn drain(
    mut source: impl Read + Send + 'static,
    done: mpsc::Sender<()>,
) -> Arc<Mutex<Vec<u8>>> {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&buffer);
    thread::spawn(move || {
        let mut chunk = [0; 8192];
        loop {
            match source.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => sink
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .extend(&chunk[..n]),
            }
        }
        let _ = done.send(());
    });
    buffer
}

pub(crate) fn snapshot(buffer: &Mutex<Vec<u8>>) -> String {
    String::from_utf8_lossy(&buffer.lock().unwrap_or_else(PoisonError::into_inner)).into_owned()
}

/// Sends SIGKILL to the process group `pgid`, which the runner created for the client.
pub(crate) fn kill_group(pgid: u32) {
    // Without libc there is no `killpg`; the `kill` utility does the same and failure is harmless,
    // because the caller kills the client itself as well.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn read_dir_paths(dir: &Path) -> Vec<PathBuf> {
    match fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn collect_jsonl(dir: &Path, paths: &mut Vec<PathBuf>) {
    for path in read_dir_paths(dir) {
        if path.is_dir() {
            collect_jsonl(&path, paths);
        } else if path.extension().is_some_and(|ext| ext == "jsonl") {
            paths.push(path);
        }
    }
}
