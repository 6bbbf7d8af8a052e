//! [`CodexEnv`]: the real Codex CLI in a throwaway HOME, `CODEX_HOME` and git project, its model
//! provider pointed at a [`ResponsesMock`](crate::ResponsesMock) on 127.0.0.1, the project
//! trusted, full access (so that `git commit` runs), no approvals.

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
    process::{Command, Output},
};

use crate::{ResponsesMock, claude::workspace_root};

/// The variable that names the `codex` executable to test (set by `cargo xtask test`).
pub const CODEX_BIN_ENV: &str = "CHECKPOINT_CODEX_BIN";

/// The Codex version the tests run against when the variable is unset.
pub const PINNED_CODEX: &str = "0.169.0";

/// A scratch HOME, `CODEX_HOME` and git project for one test.
pub struct CodexEnv {
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl CodexEnv {
    /// A project (a git repository with one commit) and a Codex home whose provider is `mock`,
    /// with `retries` request and stream retries.
    #[track_caller]
    pub fn new(mock: &ResponsesMock, retries: u32) -> CodexEnv {
        let bin = find_codex_bin();
        let dir = tempfile::TempDir::new().expect("a temporary directory");
        let env = CodexEnv { dir, bin };
        for sub in [env.home(), env.codex_home(), env.project()] {
            std::fs::create_dir_all(sub).expect("creating the scratch directories");
        }
        let project = env.project();
        for args in [
            &["init", "-q", "-b", "main"][..],
            &["config", "user.name", "Test"],
            &["config", "user.email", "test@example.com"],
            &["commit", "-q", "--allow-empty", "-m", "start"],
        ] {
            let status = Command::new("git")
                .arg("-C")
                .arg(&project)
                .args(args)
                .env("HOME", env.home())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .status()
                .expect("running git");
            assert!(status.success(), "git {args:?}");
        }
        let config = format!(
            "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\napproval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n\n\
             [model_providers.mock]\nname = \"mock\"\nbase_url = \"{}\"\nwire_api = \"responses\"\nenv_key = \"MOCK_OPENAI_KEY\"\n\
             request_max_retries = {retries}\nstream_max_retries = {retries}\n\n[projects.{}]\ntrust_level = \"trusted\"\n",
            mock.base_url(),
            serde_json::Value::String(project.display().to_string()),
        );
        std::fs::write(env.codex_home().join("config.toml"), config).expect("writing config.toml");
        env
    }

    /// The scratch HOME.
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// `$CODEX_HOME`.
    pub fn codex_home(&self) -> PathBuf {
        self.home().join(".codex")
    }

    /// The project.
    pub fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    /// The `codex` executable under test.
    pub fn codex_bin(&self) -> &Path {
        &self.bin
    }

    /// A command run in the project with the scratch HOME, `CODEX_HOME` and the mock's key.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(self.project())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("CODEX_HOME", self.codex_home())
            .env("MOCK_OPENAI_KEY", "sk-mock")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("NO_COLOR", "1");
        command
    }

    /// `codex exec --json --dangerously-bypass-hook-trust <prompt>`, to its end.
    pub fn exec(&self, prompt: &str) -> Output {
        self.command(&self.bin)
            .args(["exec", "--json", "--dangerously-bypass-hook-trust", prompt])
            .stdin(std::process::Stdio::null())
            .output()
            .expect("running codex")
    }
}

/// Finds `codex`: `$CHECKPOINT_CODEX_BIN`, else the pinned copy `cargo xtask test` installs;
/// panics with a hint when there is none, so that the tests fail rather than pass unrun.
#[track_caller]
fn find_codex_bin() -> PathBuf {
    let from_env: Option<OsString> = std::env::var_os(CODEX_BIN_ENV).filter(|bin| !bin.is_empty());
    let bin = from_env.map(PathBuf::from).unwrap_or_else(|| {
        workspace_root()
            .join("target")
            .join(format!("codex-{PINNED_CODEX}"))
            .join("node_modules")
            .join(".bin")
            .join("codex")
    });
    assert!(
        bin.is_file(),
        "the end-to-end tests need the real `codex` client, and `{}` is not a file\nhint: run `cargo xtask test`, which installs it, or set {CODEX_BIN_ENV} to a `codex` executable",
        bin.display()
    );
    bin
}
