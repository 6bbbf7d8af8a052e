//! Every environment variable `checkpoint` and its MCP server read or set, by name, each with
//! what it does (`cargo xtask codegen` writes the table of `docs/commands.md` from [`ALL`]).

/// One variable: its name, and what it does (its doc comment).
#[derive(Debug, Clone, Copy)]
pub struct EnvVar {
    pub name: &'static str,
    pub meaning: &'static str,
}

impl EnvVar {
    /// A variable for the test suites only, left out of the docs.
    pub fn is_hidden(&self) -> bool {
        self.meaning.trim_start().starts_with("Hidden")
    }
}

/// The table of `docs/commands.md`: every variable but the test suites', with what it does.
pub fn markdown_table() -> String {
    let mut table = String::from("| variable | what it does |\n| --- | --- |\n");
    for var in ALL.iter().filter(|var| !var.is_hidden()) {
        let meaning: Vec<&str> = var.meaning.split_whitespace().collect();
        table.push_str(&format!("| `{}` | {} |\n", var.name, meaning.join(" ")));
    }
    table
}

/// Declares each variable as a constant holding its name, and [`ALL`] with each of them.
macro_rules! vars {
    ($($(#[doc = $doc:literal])* $name:ident;)*) => {
        $($(#[doc = $doc])* pub const $name: &str = stringify!($name);)*
        /// Every variable, in order, with what it does.
        pub const ALL: &[EnvVar] = &[$(EnvVar {
            name: $name,
            meaning: concat!($($doc, "\n"),*),
        }),*];
    };
}

vars! {
    /// Overrides the checkpoint directory (default: `.claude/checkpoints` under the git top level).
    CHECKPOINT_DIR;
    /// Selects a workflow when several exist, like `--workflow`.
    CHECKPOINT_WORKFLOW;
    /// Seconds to wait for another process's lock (default 10).
    CHECKPOINT_LOCK_TIMEOUT;
    /// Seconds a git command that talks to a sync remote may take (default 60).
    CHECKPOINT_SYNC_TIMEOUT;
    /// Hidden: the current time as RFC 3339, for reproducible tests.
    CHECKPOINT_TEST_NOW;
    /// Hidden, for tests: inject an I/O error in the store's write path, as `<step>` or
    /// `<step>:enospc` (see `checkpoint_core::failpoint`); refused by builds without failpoints.
    CHECKPOINT_TEST_FAILPOINT;
    /// Hidden, for tests: `checkpoint watch` polls as where the file system sends no notifications.
    CHECKPOINT_TEST_WATCH_POLL;
    /// Seconds a hook's snapshot of the files may spend adding files before it stops and leaves
    /// the rest to the next one (default 2.5, inside the hooks' 5-second timeout).
    CHECKPOINT_SNAPSHOT_BUDGET;
    /// Git's own: where the repository is; when set, snapshots ask git instead of finding it.
    GIT_DIR;
    /// Git's own: where the working tree is; as `GIT_DIR`.
    GIT_WORK_TREE;
    /// Who a person is, for `effects allow` (its `--by` wins).
    USER;
    /// Set by Claude Code in its Bash tool's processes: `effects allow`, a person's decision, is
    /// refused there.
    CLAUDECODE;
    /// Disables colour when set to a non-empty value.
    NO_COLOR;
    /// Forces colour when set to a non-empty value.
    CLICOLOR_FORCE;
    /// Forces colour when set to a non-empty value.
    FORCE_COLOR;
    /// Set by continuous-integration services: `checkpoint run` draws no live line there.
    CI;
    /// Disables the live line of `checkpoint run` when set to a non-empty value.
    CHECKPOINT_NO_PROGRESS;
    /// A file a failed command writes its error to, as one JSON document (`message`, `code`,
    /// `help`; a bad command line's code is `checkpoint::usage`), replaced atomically, whatever
    /// `--format`; stderr keeps the text. The MCP server reads its commands' errors there.
    CHECKPOINT_ERROR_FILE;
    /// Set for the `[run] notify` command: the phase a person must decide on (may be empty).
    CHECKPOINT_PHASE;
    /// Set for the `[run] notify` command: why the runner stopped.
    CHECKPOINT_REASON;
    /// Set for the `[run] notify` command: how the runner stopped (`finished`, `needs_person`).
    CHECKPOINT_STOP;
    /// Set by Claude Code for its hooks: `cli` in an interactive session, `sdk-cli` under
    /// `claude -p`; the guard of effects asks a person in the first and refuses in the others.
    CLAUDE_CODE_ENTRYPOINT;
    /// Set by Claude Code in its Bash tool's processes: the session, which `claim` holds for.
    CLAUDE_CODE_SESSION_ID;
    /// The user's home directory: `checkpoint setup --scope user` writes the clients' files there.
    HOME;
    /// The directories programs are found in: `setup` writes `checkpoint` into a project's files when
    /// it finds one there.
    PATH;
    /// Codex CLI's home (default `~/.codex`): `checkpoint setup codex --scope user` writes there.
    CODEX_HOME;
    /// Gemini CLI's home (default the user's home): `checkpoint setup gemini --scope user` writes
    /// `$GEMINI_CLI_HOME/.gemini/settings.json`.
    GEMINI_CLI_HOME;
    /// Makes Gemini CLI trust the project folder before it reads its settings: set for the
    /// sessions of `checkpoint run --client gemini`.
    GEMINI_CLI_TRUST_WORKSPACE;
    /// Claude Code's configuration directory (default `~/.claude`, with `~/.claude.json`).
    CLAUDE_CONFIG_DIR;
    /// The time zone (read by `chrono::Local` for the times shown and the run's windows).
    TZ;
}

/// The variables an agent's shell carries (Claude Code's, Gemini CLI's and Codex CLI's, as
/// measured in their tool calls' environments): `effects allow` is refused where any is set,
/// whatever its value, an empty one included.
pub const AGENT_SHELL_MARKERS: [&str; 9] = [
    CLAUDECODE,
    CLAUDE_CODE_ENTRYPOINT,
    CLAUDE_CODE_SESSION_ID,
    "GEMINI_CLI",
    "GEMINI_CLI_NO_RELAUNCH",
    "CODEX_CI",
    "CODEX_THREAD_ID",
    "CODEX_SESSION_ID",
    "CODEX_TOOL_CALL_ID",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Each name is listed once, with what it does; the test suites' own are left out of the
    /// docs, and every other is in them.
    #[test]
    fn every_variable_is_listed_once_and_documented() {
        for (index, var) in ALL.iter().enumerate() {
            assert!(
                !ALL[..index].iter().any(|other| other.name == var.name),
                "{}",
                var.name
            );
            assert!(!var.meaning.trim().is_empty(), "{}", var.name);
        }
        let table = markdown_table();
        assert!(
            table.contains("| `CHECKPOINT_LOCK_TIMEOUT` | Seconds to wait"),
            "{table}"
        );
        assert!(!table.contains(CHECKPOINT_TEST_NOW), "{table}");
        assert_eq!(
            table.lines().count(),
            2 + ALL.iter().filter(|var| !var.is_hidden()).count()
        );
    }
}
