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
/// The variables an agent's shell carries (Claude Code's, Gemini CLI's and Codex CLI's, as
/// measured in their tool calls' environments): `effects allow` is refused where any is set,
/// whatever its value, an empty one included.
pub const AGENT_SHELL_MARKERS: [&str; 9] = [
    CLAUDECODE,
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SESSION_ID",
    "GEMINI_CLI",
    "GEMINI_CLI_NO_RELAUNCH",
    "CODEX_CI",
    "CODEX_THREAD_ID",
    "CODEX_SESSION_ID",
    "CODEX_TOOL_CALL_ID",
];
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
/// Set by Claude Code in its Bash tool's processes: the session, which `claim` holds for.
pub const CLAUDE_CODE_SESSION_ID: &str = "CLAUDE_CODE_SESSION_ID";
/// The user's home directory: `checkpoint setup --scope user` writes the clients' files there.
pub const HOME: &str = "HOME";
/// The directories programs are found in: `setup` writes `checkpoint` into a project's files when
/// it finds one there.
pub const PATH: &str = "PATH";
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
/// The time zone (read by `chrono::Local` for the times shown and the run's windows).
pub const TZ: &str = "TZ";

/// The directories `chrono` looks up a relative `TZ` in, in its order.
const ZONE_INFO_DIRECTORIES: [&str; 4] = [
    "/usr/share/zoneinfo",
    "/share/zoneinfo",
    "/etc/zoneinfo",
    "/usr/share/lib/zoneinfo",
];

/// The largest zone file read (real ones are a few kilobytes).
const MAX_ZONE_FILE_BYTES: u64 = 1024 * 1024;

/// Why `TZ` names a file that must not be read (a FIFO, a device, a directory, a file over
/// 1 MiB), found without opening it; `None` when it names none or a zone file.
pub(crate) fn hostile_tz(value: Option<&std::ffi::OsStr>) -> Option<String> {
    let value = value?.to_str()?;
    let name = value.strip_prefix(':').unwrap_or(value);
    if name.is_empty() || name == "localtime" {
        return None;
    }
    let path = std::path::Path::new(name);
    let candidates: Vec<std::path::PathBuf> = if path.is_absolute() {
        vec![path.to_owned()]
    } else {
        ZONE_INFO_DIRECTORIES
            .iter()
            .map(|dir| std::path::Path::new(dir).join(path))
            .collect()
    };
    // The first that exists is the one that would be read.
    let (file, meta) = candidates
        .iter()
        .find_map(|file| std::fs::metadata(file).ok().map(|meta| (file, meta)))?;
    let what = if meta.is_dir() {
        "a directory"
    } else if !meta.is_file() {
        "not a regular file"
    } else if meta.len() > MAX_ZONE_FILE_BYTES {
        "larger than any zone file"
    } else {
        return None;
    };
    Some(format!(
        "`TZ={}` names `{}`, which is {what}",
        crate::output::escape(value),
        file.display()
    ))
}
