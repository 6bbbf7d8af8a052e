//! A runner for the real Gemini CLI in a throwaway home and a throwaway git project, pointed at
//! a [`GeminiMock`]: `GOOGLE_GEMINI_BASE_URL`, an API key, and the user settings that make it
//! use them (`security.auth.selectedType = "gemini-api-key"`, facts G1), with
//! `general.maxAttempts` low so that a 429 is given up on in seconds, not minutes.

use std::ffi::OsString;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::claude::{ClaudeOutput, DEFAULT_TIMEOUT, collect, workspace_root};
use crate::mock::gemini::GeminiMock;

/// The variable that names the `gemini` executable to test.
pub const GEMINI_BIN_ENV: &str = "CHECKPOINT_GEMINI_BIN";

/// The pinned Gemini CLI, installed by `cargo xtask test` under `target/gemini-cli-<version>`.
pub const GEMINI_PINNED: &str = "0.61.0";

/// What a run printed and how it ended (the same shape as a `claude` run's).
pub type GeminiOutput = ClaudeOutput;

/// A throwaway home and git project whose `gemini` runs talk to a mock.
#[derive(Debug)]
pub struct GeminiEnv {
    home: TempDir,
    project: TempDir,
    gemini_bin: PathBuf,
    base_url: String,
    timeout: Duration,
}

impl GeminiEnv {
    /// A fresh home (with the user settings that reach `mock`) and git project.
    ///
    /// Panics with a hint to run `cargo xtask test` when no `gemini` can be found.
    #[track_caller]
    pub fn new(mock: &GeminiMock) -> GeminiEnv {
        let gemini_bin = find_gemini_bin();
        let tempdir = |prefix: &str| {
            tempfile::Builder::new()
                .prefix(prefix)
                .tempdir()
                .expect("creating a temp dir succeeds")
        };
        let env = GeminiEnv {
            home: tempdir("checkpoint-e2e-gemini-home-"),
            project: tempdir("checkpoint-e2e-gemini-project-"),
            gemini_bin,
            base_url: mock.base_url(),
            timeout: DEFAULT_TIMEOUT,
        };
        env.write_user_settings(&json!({
            "security": { "auth": { "selectedType": "gemini-api-key" } },
            "general": { "maxAttempts": 1 },
        }));
        env.init_git_repo();
        env
    }

    /// The temp home (`HOME` and `GEMINI_CLI_HOME`).
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// The temp project, the cwd of every run.
    pub fn project_dir(&self) -> &Path {
        self.project.path()
    }

    /// The `gemini` executable in use.
    pub fn gemini_bin(&self) -> &Path {
        &self.gemini_bin
    }

    /// The user settings file, `$GEMINI_CLI_HOME/.gemini/settings.json`.
    pub fn user_settings(&self) -> PathBuf {
        self.home().join(".gemini").join("settings.json")
    }

    /// Replaces the user settings.
    pub fn write_user_settings(&self, settings: &Value) {
        let path = self.user_settings();
        fs::create_dir_all(path.parent().expect("a settings file has a parent"))
            .expect("creating the settings directory succeeds");
        fs::write(&path, format!("{settings:#}\n")).expect("writing the settings succeeds");
    }

    /// The environment of every run: only what reaches the mock, and a trusted project.
    pub fn envs(&self) -> Vec<(&'static str, OsString)> {
        vec![
            (
                "PATH",
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
            ),
            ("HOME", self.home().into()),
            ("GEMINI_CLI_HOME", self.home().into()),
            ("GOOGLE_GEMINI_BASE_URL", self.base_url.clone().into()),
            ("GEMINI_API_KEY", "mock-key".into()),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true".into()),
        ]
    }

    /// The command that runs `gemini` with `args` in the project, output piped, in a process
    /// group of its own.
    pub fn command(&self, args: &[&str], extra_env: &[(&str, &str)]) -> Command {
        let mut command = Command::new(&self.gemini_bin);
        command
            .args(args)
            .env_clear()
            .envs(self.envs())
            .envs(extra_env.iter().copied())
            .current_dir(self.project_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        command
    }

    /// Runs `gemini` with `args`; a run that outlives the timeout is killed and the test panics
    /// with what it printed.
    #[track_caller]
    pub fn run(&self, args: &[&str], extra_env: &[(&str, &str)]) -> GeminiOutput {
        let mut child = match self.command(args, extra_env).spawn() {
            Ok(child) => child,
            Err(err) => panic!("failed to spawn `{}`: {err}", self.gemini_bin.display()),
        };
        let (status, stdout, stderr, timed_out) = collect(&mut child, self.timeout, "gemini");
        let output = GeminiOutput {
            status,
            stdout,
            stderr,
        };
        assert!(
            !timed_out,
            "`gemini {}` did not finish within {:?} and was killed\n{output}",
            args.join(" "),
            self.timeout
        );
        output
    }

    /// Runs git in the project.
    #[track_caller]
    pub fn git(&self, args: &[&str]) -> String {
        let output = Command::new("git")
            .args(args)
            .env_clear()
            .envs(self.envs())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .current_dir(self.project_dir())
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|err| panic!("failed to run `git {}`: {err}", args.join(" ")));
        assert!(
            output.status.success(),
            "`git {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn init_git_repo(&self) {
        self.git(&["init", "--quiet", "--initial-branch=main"]);
        self.git(&["config", "user.name", "Checkpoint E2E"]);
        self.git(&["config", "user.email", "e2e@checkpoint.invalid"]);
        self.git(&["config", "commit.gpgsign", "false"]);
        fs::write(self.project_dir().join("README.md"), "# e2e project\n")
            .expect("writing README.md succeeds");
        self.git(&["add", "README.md"]);
        self.git(&["commit", "--quiet", "--message", "initial commit"]);
    }
}

/// Finds `gemini`: `$CHECKPOINT_GEMINI_BIN`, else the pinned copy under `target/`; panics with
/// a hint when there is none (a set but wrong variable is an error, not a reason to fall back).
#[track_caller]
fn find_gemini_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os(GEMINI_BIN_ENV).filter(|bin| !bin.is_empty()) {
        let bin = PathBuf::from(bin);
        assert!(
            bin.is_file(),
            "{GEMINI_BIN_ENV} is set to `{}`, which is not a file",
            bin.display()
        );
        return bin;
    }
    let fallback = workspace_root()
        .join("target")
        .join(format!("gemini-cli-{GEMINI_PINNED}"))
        .join("node_modules")
        .join(".bin")
        .join("gemini");
    assert!(
        fallback.is_file(),
        "the Gemini CLI tests need the real `gemini`, but {GEMINI_BIN_ENV} is unset and `{}` \
         does not exist\nhint: run `cargo xtask test`, which installs it, or set \
         {GEMINI_BIN_ENV} to a `gemini` executable",
        fallback.display()
    );
    fallback
}
