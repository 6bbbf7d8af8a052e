//! Shared set-up of the plugin tests: a mock, a `claude` environment with the plugin bundle, and
//! the bundle's own `checkpoint` binary to prepare and inspect workflow state.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use checkpoint_e2e::{ClaudeEnv, ClaudeOutput, MockApi, MockConfig, Plugin, Turn};
use serde_json::Value;

/// The workflow most tests set up.
pub const WORKFLOW: &str = "payments-e2e";

/// The progress note of its interrupted phase.
pub const NOTE: &str = "API sketched, data model next";

/// The text the client puts before a SessionStart hook's `additionalContext` (facts §e).
pub const SESSION_START_CONTEXT: &str = "SessionStart hook additional context";

/// How long a test waits for a hook that claude does not wait for (facts §i).
pub const HOOK_WAIT: Duration = Duration::from_secs(10);

/// A mock API, a temp HOME and git project, and the plugin bundle under test.
pub struct Project {
    pub mock: MockApi,
    pub env: ClaudeEnv,
    pub plugin: Plugin,
}

impl Project {
    /// A fresh project whose model answers are `script`.
    #[track_caller]
    pub fn new(script: Vec<Turn>) -> Project {
        // The bundle is looked up first: without it the test fails with the `cargo xtask test` hint.
        let plugin = Plugin::find();
        let mock = MockApi::start(script);
        let env = ClaudeEnv::new(&mock);
        Project { mock, env, plugin }
    }

    /// A fresh project whose model answers are `script`, with the mock's other options.
    #[track_caller]
    pub fn with_config(script: Vec<Turn>, config: MockConfig) -> Project {
        let plugin = Plugin::find();
        let mock = MockApi::start_with(script, config);
        let env = ClaudeEnv::new(&mock);
        Project { mock, env, plugin }
    }

    /// A project with the interrupted [`WORKFLOW`]: phase `design` in progress with [`NOTE`],
    /// phase `build` waiting for it.
    #[track_caller]
    pub fn interrupted(script: Vec<Turn>) -> Project {
        let project = Project::new(script);
        project.start_interrupted(WORKFLOW, NOTE);
        project
    }

    /// Creates workflow `id` (`design`, then `build`), starts `design` and notes `note` on it,
    /// an hour ago, in a session that ended a turn on it (its `Stop` hook) and is gone since:
    /// an interrupted phase, not a live one.
    #[track_caller]
    pub fn start_interrupted(&self, id: &str, note: &str) {
        let earlier = (chrono::Utc::now() - chrono::Duration::hours(1))
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let run = |args: &[&str], stdin: Option<String>| {
            let mut command = checkpoint_command(&self.plugin, self.dir(), self.env.home());
            command
                .env("CHECKPOINT_TEST_NOW", &earlier)
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = command.spawn().expect("the bundled `checkpoint` runs");
            let mut input = child.stdin.take().expect("stdin is piped");
            std::io::Write::write_all(&mut input, stdin.unwrap_or_default().as_bytes())
                .expect("stdin takes the payload");
            drop(input);
            let output = child.wait_with_output().expect("`checkpoint` finishes");
            // A hook exits 0 even when it fails, with a warning: nothing on stderr is the proof.
            assert!(
                output.status.success() && output.stderr.is_empty(),
                "`checkpoint {}`: {output:?}",
                args.join(" ")
            );
        };
        run(
            &["init", id, "--phase", "design", "--phase", "build:design"],
            None,
        );
        run(&["--workflow", id, "start", "design"], None);
        run(&["--workflow", id, "progress", "design", note], None);
        let stop = serde_json::json!({
            "session_id": "00000000-0000-0000-0000-000000000001",
            "cwd": self.dir(),
            "hook_event_name": "Stop",
            "stop_hook_active": false,
        });
        run(&["hook", "Stop"], Some(stop.to_string()));
    }

    /// Runs `claude` with the plugin loaded by `--plugin-dir`.
    #[track_caller]
    pub fn claude(&self, args: &[&str]) -> ClaudeOutput {
        self.claude_with_env(args, &[])
    }

    /// Runs `claude` with the plugin loaded by `--plugin-dir` and `extra_env` set.
    #[track_caller]
    pub fn claude_with_env(&self, args: &[&str], extra_env: &[(&str, &str)]) -> ClaudeOutput {
        let plugin_dir = path_str(self.plugin.dir());
        let mut all_args = args.to_vec();
        all_args.extend(["--plugin-dir", plugin_dir]);
        self.env.run(&all_args, extra_env)
    }

    /// Asserts that the last run sent at least `n` model requests in all; a slash command whose
    /// `!` line failed sends none (facts §b GOTCHA 2), and the reason is only in the transcript.
    #[track_caller]
    pub fn assert_requests(&self, n: usize, output: &ClaudeOutput) {
        let n_main = self.mock.main_requests().len();
        assert!(
            n_main >= n,
            "expected {n} model requests, got {n_main}: the command was dropped\n{output}\n\
             transcript errors: {:?}",
            local_command_errors(&self.env.all_transcripts_text())
        );
    }

    /// The bundle's MCP server binary, `bin/checkpoint-mcp`.
    pub fn bundle_mcp_server() -> PathBuf {
        Plugin::find()
            .checkpoint_bin()
            .with_file_name("checkpoint-mcp")
    }

    /// Returns the project directory.
    pub fn dir(&self) -> &Path {
        self.env.project_dir()
    }

    /// Runs the bundled `checkpoint` in the project with a hermetic environment.
    pub fn checkpoint(&self, args: &[&str]) -> Output {
        checkpoint_command(&self.plugin, self.dir(), self.env.home())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("the bundled `checkpoint` runs")
    }

    /// Runs the bundled `checkpoint` and asserts it succeeded; returns stdout.
    #[track_caller]
    pub fn checkpoint_ok(&self, args: &[&str]) -> String {
        let output = self.checkpoint(args);
        assert!(
            output.status.success(),
            "`checkpoint {}` failed: {}\n{}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Returns the checkpoint directory, `.claude/checkpoints` in the project.
    pub fn store(&self) -> PathBuf {
        store_dir(self.dir())
    }

    /// Returns the parsed `state.json` of workflow `id`.
    #[track_caller]
    pub fn state(&self, id: &str) -> Value {
        read_json(&self.store().join(id).join("state.json"))
    }

    /// Returns the journal of workflow `id`, one value per entry.
    #[track_caller]
    pub fn journal(&self, id: &str) -> Vec<Value> {
        read_journal(&self.store().join(id).join("journal.jsonl"))
    }

    /// Waits up to `timeout` for the state of workflow `id` to satisfy `done`; returns it.
    ///
    /// Panics with the last state seen when it never does.
    #[track_caller]
    pub fn wait_for_state(
        &self,
        id: &str,
        timeout: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let state = self.state(id);
            if done(&state) {
                return state;
            }
            if Instant::now() >= deadline {
                panic!(
                    "the state of `{id}` did not change as expected within {timeout:?}:\n{state:#}"
                );
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Returns `HEAD` of the project's git repository.
    #[track_caller]
    pub fn head_sha(&self) -> String {
        let output = Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(self.dir())
            .output()
            .expect("git runs");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }
}

/// A `checkpoint` command of `plugin` run in `project` with only PATH and HOME set.
///
/// No `CHECKPOINT_TEST_NOW`: the hooks that claude runs use the real clock, and state written
/// by a test must not look older or newer than theirs.
pub fn checkpoint_command(plugin: &Plugin, project: &Path, home: &Path) -> Command {
    let mut command = Command::new(plugin.checkpoint_bin());
    command
        .env_clear()
        .env(
            "PATH",
            std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
        )
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .env("CHECKPOINT_NO_PROGRESS", "1")
        .current_dir(project);
    command
}

/// `.claude/checkpoints` in `project`.
pub fn store_dir(project: &Path) -> PathBuf {
    project.join(".claude").join("checkpoints")
}

/// The phase `id` of a parsed `state.json`; panics when there is none.
#[track_caller]
pub fn phase<'a>(state: &'a Value, id: &str) -> &'a Value {
    state["phases"]
        .as_array()
        .and_then(|phases| phases.iter().find(|phase| phase["id"] == id))
        .unwrap_or_else(|| panic!("no phase `{id}` in {state:#}"))
}

/// The `op` of every journal entry, in order.
pub fn ops(journal: &[Value]) -> Vec<String> {
    journal
        .iter()
        .map(|entry| entry["transition"]["op"].as_str().unwrap_or("?").to_owned())
        .collect()
}

#[track_caller]
pub fn read_json(path: &Path) -> Value {
    let text = read(path);
    serde_json::from_str(&text)
        .unwrap_or_else(|err| panic!("`{}` is not JSON ({err}):\n{text}", path.display()))
}

#[track_caller]
pub fn read_journal(path: &Path) -> Vec<Value> {
    read(path)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|err| panic!("journal line is not JSON ({err}): {line}"))
        })
        .collect()
}

#[track_caller]
pub fn read(path: &Path) -> String {
    fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("failed to read `{}`: {err}", path.display()))
}

#[track_caller]
pub fn path_str(path: &Path) -> &str {
    path.to_str()
        .unwrap_or_else(|| panic!("`{}` is not UTF-8", path.display()))
}

/// Asserts that `haystack` contains every one of `needles`, naming `what` on failure.
#[track_caller]
pub fn assert_contains_all(what: &str, haystack: &str, needles: &[&str]) {
    for needle in needles {
        assert!(
            haystack.contains(needle),
            "{what} lacks {needle:?}:\n{haystack}"
        );
    }
}

/// A temp git repository with one commit, for tests that run `checkpoint` without `claude`.
#[track_caller]
pub fn scratch_repo() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("checkpoint-e2e-repo-")
        .tempdir()
        .expect("creating a temp dir succeeds");
    for args in [
        &["init", "--quiet", "--initial-branch=main"][..],
        &[
            "-c",
            "user.name=E2E",
            "-c",
            "user.email=e2e@checkpoint.invalid",
            "commit",
            "--quiet",
            "--allow-empty",
            "-m",
            "initial",
        ],
    ] {
        let output = Command::new("git")
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir.path())
            .current_dir(dir.path())
            .output()
            .expect("git runs");
        assert!(output.status.success(), "git {args:?}: {output:?}");
    }
    dir
}

/// The `<local-command-stderr>` texts of transcripts: why a slash command was dropped.
pub fn local_command_errors(transcripts: &str) -> Vec<String> {
    transcripts
        .split("<local-command-stderr>")
        .skip(1)
        .filter_map(|rest| rest.split("</local-command-stderr>").next())
        .map(|error| error.replace("\\\"", "\""))
        .collect()
}
