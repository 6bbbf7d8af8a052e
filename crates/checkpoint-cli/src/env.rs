//! Every environment variable `checkpoint` reads, by name.

/// Overrides the checkpoint directory (default: `.claude/checkpoints` under the git top level).
pub const CHECKPOINT_DIR: &str = "CHECKPOINT_DIR";
/// Selects a workflow when several exist, like `--workflow`.
pub const CHECKPOINT_WORKFLOW: &str = "CHECKPOINT_WORKFLOW";
/// Seconds to wait for another process's lock (default 10).
pub const CHECKPOINT_LOCK_TIMEOUT: &str = "CHECKPOINT_LOCK_TIMEOUT";
/// Seconds a git command that talks to a sync remote may take (default 60).
pub const CHECKPOINT_SYNC_TIMEOUT: &str = "CHECKPOINT_SYNC_TIMEOUT";
/// Hidden: the current time as RFC 3339, for reproducible tests.
pub const CHECKPOINT_TEST_NOW: &str = "CHECKPOINT_TEST_NOW";
/// Hidden, for tests: inject an I/O error in the store's write path, as `<step>` or
/// `<step>:enospc` (see `checkpoint_core::failpoint`); refused by builds without failpoints.
pub const CHECKPOINT_TEST_FAILPOINT: &str = "CHECKPOINT_TEST_FAILPOINT";
/// Hidden, for tests: `checkpoint watch` polls as where the file system sends no notifications.
pub const CHECKPOINT_TEST_WATCH_POLL: &str = "CHECKPOINT_TEST_WATCH_POLL";
/// Seconds a hook's snapshot of the files may spend adding files before it stops and leaves
/// the rest to the next one (default 2.5, inside the hooks' 5-second timeout).
pub const CHECKPOINT_SNAPSHOT_BUDGET: &str = "CHECKPOINT_SNAPSHOT_BUDGET";
/// Git's own: where the repository is; when set, snapshots ask git instead of finding it.
pub const GIT_DIR: &str = "GIT_DIR";
/// Git's own: where the working tree is; as `GIT_DIR`.
pub const GIT_WORK_TREE: &str = "GIT_WORK_TREE";
/// Who a person is, for `effects allow` (its `--by` wins).
pub const USER: &str = "USER";
/// Set by Claude Code in its Bash tool's processes: `effects allow`, a person's decision, is
/// refused there.
pub const CLAUDECODE: &str = "CLAUDECODE";
/// Disables colour when set to a non-empty value.
pub const NO_COLOR: &str = "NO_COLOR";
/// Forces colour when set to a non-empty value.
pub const CLICOLOR_FORCE: &str = "CLICOLOR_FORCE";
/// Forces colour when set to a non-empty value.
pub const FORCE_COLOR: &str = "FORCE_COLOR";
/// Set by continuous-integration services: `checkpoint run` draws no live line there.
pub const CI: &str = "CI";
/// Disables the live line of `checkpoint run` when set to a non-empty value.
pub const CHECKPOINT_NO_PROGRESS: &str = "CHECKPOINT_NO_PROGRESS";
/// Set for the `[run] notify` command: the phase a person must decide on (may be empty).
pub const CHECKPOINT_PHASE: &str = "CHECKPOINT_PHASE";
/// Set for the `[run] notify` command: why the runner stopped.
pub const CHECKPOINT_REASON: &str = "CHECKPOINT_REASON";
/// Set for the `[run] notify` command: how the runner stopped (`finished`, `needs_person`).
pub const CHECKPOINT_STOP: &str = "CHECKPOINT_STOP";
/// Set by Claude Code for its hooks: `cli` in an interactive session, `sdk-cli` under
/// `claude -p`; the guard of effects asks a person in the first and refuses in the others.
pub const CLAUDE_CODE_ENTRYPOINT: &str = "CLAUDE_CODE_ENTRYPOINT";
/// The user's home directory: `checkpoint setup --scope user` writes the clients' files there.
pub const HOME: &str = "HOME";
/// Codex CLI's home (default `~/.codex`): `checkpoint setup codex --scope user` writes there.
pub const CODEX_HOME: &str = "CODEX_HOME";
/// Gemini CLI's home (default the user's home): `checkpoint setup gemini --scope user` writes
/// `$GEMINI_CLI_HOME/.gemini/settings.json`.
pub const GEMINI_CLI_HOME: &str = "GEMINI_CLI_HOME";
/// Makes Gemini CLI trust the project folder before it reads its settings: set for the
/// sessions of `checkpoint run --client gemini`.
pub const GEMINI_CLI_TRUST_WORKSPACE: &str = "GEMINI_CLI_TRUST_WORKSPACE";
/// Claude Code's configuration directory (default `~/.claude`, with `~/.claude.json`).
pub const CLAUDE_CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";
