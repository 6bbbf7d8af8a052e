//! The documented exit codes of `checkpoint`: one table, from which the `--help` text and the
//! tables of `docs/commands.md` and the skill are generated (`cargo xtask codegen` writes and checks the
//! Markdown).

/// The command did what was asked.
pub const SUCCESS: u8 = 0;
/// An unexpected failure (I/O and everything not listed below).
pub const FAILURE: u8 = 1;
/// Invalid input: the command line (clap's code), an id, a plan, a time or a variable.
pub const USAGE: u8 = 2;
/// The transition is not allowed from the current state, a pull diverged, or a push was rejected
/// (nothing was written).
pub const REFUSED: u8 = 3;
/// The workflow, phase or task does not exist, or several workflows match.
pub const NOT_FOUND: u8 = 4;
/// Another process held the lock for longer than `CHECKPOINT_LOCK_TIMEOUT`.
pub const LOCKED: u8 = 5;
/// The state cannot be trusted: corrupt beyond repair, or written by a newer version (kept as is).
pub const UNTRUSTED: u8 = 6;
/// A write failed after it may have reached the disk: re-read the state before retrying.
pub const MAYBE_SAVED: u8 = 7;
/// `validate` found errors: the state cannot be trusted as is.
pub const INVALID: u8 = 8;
/// `checkpoint run` stopped for a person: an approval gate, a retry or replan limit, a rebuilt
/// or stale state, or sessions that make no progress.
pub const NEEDS_PERSON: u8 = 9;
/// `checkpoint run` stopped at one of its own bounds (`--max-sessions`, `--max-wait`, a budget:
/// `--max-cost`, `--max-tokens`, `--max-usage`); running it again continues.
pub const RUN_LIMIT: u8 = 10;
/// `checkpoint run` was interrupted (Ctrl-C, SIGTERM or SIGHUP); its session was stopped.
pub const INTERRUPTED: u8 = 130;

/// One documented exit code.
#[derive(Debug, Clone, Copy)]
pub struct ExitCode {
    pub code: u8,
    /// What it means, for `--help` and the README.
    pub meaning: &'static str,
    /// A few words, for the skill.
    pub brief: &'static str,
}

/// Every exit code `checkpoint` documents, in order.
pub const ALL: [ExitCode; 12] = [
    ExitCode {
        code: SUCCESS,
        meaning: "success",
        brief: "ok",
    },
    ExitCode {
        code: FAILURE,
        meaning: "unexpected failure (I/O and others)",
        brief: "unexpected failure",
    },
    ExitCode {
        code: USAGE,
        meaning: "invalid input: command line, id (including a name the store uses), plan file, a path outside the project, a directory that is not an archive, time or `CHECKPOINT_*` variable",
        brief: "invalid command line",
    },
    ExitCode {
        code: REFUSED,
        meaning: "the request is refused by the current state (a transition, archiving an unfinished workflow, an id that is taken), a pull found a divergence, or a push was rejected because the remote moved; nothing was written",
        brief: "refused by the current state, a divergence or a rejected push (nothing written)",
    },
    ExitCode {
        code: NOT_FOUND,
        meaning: "workflow, phase, task, journal entry or archive not found, or several unfinished workflows match (`checkpoint use` or `--workflow` picks one)",
        brief: "not found",
    },
    ExitCode {
        code: LOCKED,
        meaning: "timed out waiting for the lock (`CHECKPOINT_LOCK_TIMEOUT`, seconds, default 10), or another `checkpoint run` holds the workflow (or another `run --all` the project)",
        brief: "locked",
    },
    ExitCode {
        code: UNTRUSTED,
        meaning: "the state cannot be trusted: corrupt beyond repair, a newer schema version, a symlink, or too large; the file is left untouched",
        brief: "state cannot be trusted",
    },
    ExitCode {
        code: MAYBE_SAVED,
        meaning: "a write failed after it may have reached the disk: re-read the state before retrying",
        brief: "write may have been saved (re-read before retrying)",
    },
    ExitCode {
        code: INVALID,
        meaning: "`validate` found errors",
        brief: "`validate` found errors",
    },
    ExitCode {
        code: NEEDS_PERSON,
        meaning: "`run` stopped for a person: an approval gate, a retry or replan limit, a rebuilt or stale state, or two sessions in a row that recorded nothing",
        brief: "`run` needs a person",
    },
    ExitCode {
        code: RUN_LIMIT,
        meaning: "`run` stopped at `--max-sessions`, `--max-wait` or a budget (`--max-cost`, `--max-tokens`, a `--max-usage` reset past `--max-wait`); running it again continues",
        brief: "`run` reached a limit",
    },
    ExitCode {
        code: INTERRUPTED,
        meaning: "`run` was interrupted (Ctrl-C, SIGTERM or SIGHUP); its session was stopped first",
        brief: "`run` interrupted",
    },
];

/// The exit codes as `checkpoint --help` ends.
pub fn help_text() -> String {
    let mut text = String::from("Exit codes:");
    for exit in ALL {
        text.push_str(&format!("\n  {}  {}", exit.code, exit.meaning));
    }
    text
}

/// The table of exit codes of `docs/commands.md`.
pub fn markdown_table() -> String {
    let mut table = String::from("| code | meaning |\n| --- | --- |\n");
    for exit in ALL {
        table.push_str(&format!("| {} | {} |\n", exit.code, exit.meaning));
    }
    table
}

/// The skill's line of exit codes.
pub fn skill_line() -> String {
    let codes: Vec<String> = ALL
        .iter()
        .map(|exit| format!("{} {}", exit.code, exit.brief))
        .collect();
    format!("Exit codes: {}.\n", codes.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table lists each code once, in order: every code from 0 to `run`'s limit, then the
    /// shell's code for an interrupt.
    #[test]
    fn the_table_lists_every_code_once_in_order() {
        let codes: Vec<u8> = ALL.iter().map(|exit| exit.code).collect();
        let mut expected: Vec<u8> = (0..=RUN_LIMIT).collect();
        expected.push(INTERRUPTED);
        assert_eq!(codes, expected);
    }
}
