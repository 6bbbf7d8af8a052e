//! The documented exit codes of `checkpoint`: one table, from which the `--help` text and the
//! tables of `docs/commands.md` and the skill are generated (`cargo xtask codegen` writes and checks the
//! Markdown), and the one map from diagnostic codes to exit codes.

use crate::diagnostic;

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
        meaning: "workflow, phase, task, journal entry, snapshot or archive not found, or several unfinished workflows match (`checkpoint use` or `--workflow` picks one)",
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

/// The exit code of every diagnostic code `checkpoint` reports, decided here once: an error
/// exits with the code of its diagnostic code, wherever it was raised (a code not listed is 1).
/// The README's "Exit codes" section lists them by exit code (generated from this table).
pub const BY_DIAGNOSTIC: &[(&str, u8)] = &[
    (diagnostic::INVALID_ID, USAGE),
    (diagnostic::RESERVED_ID, USAGE),
    (diagnostic::INVALID_PLAN, USAGE),
    (diagnostic::PLAN_PARSE, USAGE),
    (diagnostic::PLAN_UNREADABLE, USAGE),
    (diagnostic::CONFIG_PARSE, USAGE),
    (diagnostic::ARCHIVE_NOT_AN_ARCHIVE, USAGE),
    (diagnostic::SEED_UNKNOWN, USAGE),
    (diagnostic::INVALID_ENV, USAGE),
    (diagnostic::INVALID_TIME, USAGE),
    (diagnostic::FILES_BAD_TARGET, USAGE),
    (diagnostic::PATH_OUTSIDE_PROJECT, USAGE),
    (diagnostic::TEXT_FILE, USAGE),
    (diagnostic::EFFECT_EMPTY, USAGE),
    (diagnostic::RUN_CONFIG, USAGE),
    (diagnostic::SYNC_REMOTE, USAGE),
    (diagnostic::SESSION_BAD_ID, USAGE),
    (diagnostic::USAGE, USAGE),
    (diagnostic::INVALID_TRANSITION, REFUSED),
    (diagnostic::STORE_EXISTS, REFUSED),
    (diagnostic::OUTPUT_EXISTS, REFUSED),
    (diagnostic::SEED_EXPORT, REFUSED),
    (diagnostic::STORE_STATE_TOO_LARGE, REFUSED),
    (diagnostic::STORE_ENTRY_TOO_LARGE, REFUSED),
    (diagnostic::STORE_JOURNAL_FULL, REFUSED),
    (diagnostic::TEXT_TOO_LARGE, REFUSED),
    (diagnostic::ARCHIVE_UNFINISHED, REFUSED),
    (diagnostic::EFFECT_ALLOW_IN_SESSION, REFUSED),
    (diagnostic::SYNC_DIVERGED, REFUSED),
    (diagnostic::SYNC_REJECTED, REFUSED),
    (diagnostic::SESSION_TOO_LARGE, REFUSED),
    (diagnostic::SESSION_DECLINED, REFUSED),
    (diagnostic::SESSION_OTHER_HEAD, REFUSED),
    (diagnostic::SESSION_LOCAL_CHANGES, REFUSED),
    (diagnostic::SESSION_THROUGH_LINK, REFUSED),
    (diagnostic::SESSION_TRANSCRIPT_EXISTS, REFUSED),
    (diagnostic::UNKNOWN_PHASE, NOT_FOUND),
    (diagnostic::UNKNOWN_TASK, NOT_FOUND),
    (diagnostic::STORE_NOT_FOUND, NOT_FOUND),
    (diagnostic::HISTORY_NO_ENTRY, NOT_FOUND),
    (diagnostic::ARCHIVE_NOT_FOUND, NOT_FOUND),
    (diagnostic::FILES_NOTHING_TO_REDO, NOT_FOUND),
    (diagnostic::FILES_NO_SNAPSHOT, NOT_FOUND),
    (diagnostic::SEED_LOCATE, NOT_FOUND),
    (diagnostic::NO_WORKFLOW, NOT_FOUND),
    (diagnostic::AMBIGUOUS_WORKFLOW, NOT_FOUND),
    (diagnostic::SESSION_NONE, NOT_FOUND),
    (diagnostic::SESSION_NOT_FOUND, NOT_FOUND),
    (diagnostic::SESSION_NOT_ON_REMOTE, NOT_FOUND),
    (diagnostic::STORE_LOCKED, LOCKED),
    (diagnostic::RUN_BUSY, LOCKED),
    (diagnostic::STORE_CORRUPT, UNTRUSTED),
    (diagnostic::STORE_UNKNOWN_VERSION, UNTRUSTED),
    (diagnostic::STORE_NEWER_VERSION, UNTRUSTED),
    (diagnostic::STORE_SYMLINK, UNTRUSTED),
    (diagnostic::STORE_TOO_LARGE, UNTRUSTED),
    (diagnostic::FILE_UNREADABLE, UNTRUSTED),
    (diagnostic::SEED_INVALID, UNTRUSTED),
    (diagnostic::SYNC_JOURNAL_TOO_LARGE, UNTRUSTED),
    (diagnostic::SYNC_REMOTE_DAMAGED, UNTRUSTED),
    (diagnostic::SESSION_DAMAGED, UNTRUSTED),
    (diagnostic::STORE_UNCERTAIN, MAYBE_SAVED),
    (diagnostic::INVALID, INVALID),
    (diagnostic::IO, FAILURE),
    (diagnostic::GIT_COMMIT_FAILED, FAILURE),
    (diagnostic::SYNC_GIT, FAILURE),
    (diagnostic::SESSION_WRITE_FAILED, FAILURE),
    (diagnostic::SESSION_UNREADABLE, FAILURE),
    (diagnostic::SESSION_NO_HOME, FAILURE),
    (diagnostic::MCP_MISSING_SERVER, FAILURE),
];

/// The exit code of a diagnostic code (see [`BY_DIAGNOSTIC`]).
pub fn of_diagnostic(code: &str) -> u8 {
    BY_DIAGNOSTIC
        .iter()
        .find(|(known, _)| *known == code)
        .map_or(FAILURE, |(_, exit)| *exit)
}

/// The diagnostic codes that exit with `exit`, as the README lists them.
fn diagnostics_of(exit: u8) -> Vec<&'static str> {
    BY_DIAGNOSTIC
        .iter()
        .filter(|(_, code)| *code == exit)
        .map(|(diagnostic, _)| *diagnostic)
        .collect()
}

/// The exit codes as `checkpoint --help` ends.
pub fn help_text() -> String {
    let mut text = String::from("Exit codes:");
    for exit in ALL {
        text.push_str(&format!("\n  {}  {}", exit.code, exit.meaning));
    }
    text
}

/// The table of exit codes of `docs/commands.md`, each with the diagnostic codes (`code` in
/// `--format json`) that exit with it.
pub fn markdown_table() -> String {
    let mut table = String::from("| code | meaning | diagnostic codes |\n| --- | --- | --- |\n");
    for exit in ALL {
        let codes: Vec<String> = diagnostics_of(exit.code)
            .iter()
            .map(|code| format!("`{}`", code.trim_start_matches("checkpoint::")))
            .collect();
        table.push_str(&format!(
            "| {} | {} | {} |\n",
            exit.code,
            exit.meaning,
            codes.join(", ")
        ));
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

    /// One diagnostic code, one exit code: listed once, with a documented exit.
    #[test]
    fn each_diagnostic_code_has_one_documented_exit() {
        for (index, (code, exit)) in BY_DIAGNOSTIC.iter().enumerate() {
            assert!(
                !BY_DIAGNOSTIC[..index]
                    .iter()
                    .any(|(other, _)| other == code),
                "{code} is listed twice"
            );
            assert!(ALL.iter().any(|known| known.code == *exit), "{code}");
        }
    }

    /// The table and the codes are one list: every code named in `diagnostic` has its exit code
    /// here, and the table names no code `diagnostic` lacks; the MCP server's own codes are no
    /// exit of `checkpoint`.
    #[test]
    fn every_diagnostic_code_is_in_the_table_and_only_those() {
        for code in diagnostic::ALL {
            assert!(
                BY_DIAGNOSTIC.iter().any(|(known, _)| known == code),
                "{code} has no exit code in `BY_DIAGNOSTIC`"
            );
        }
        for (code, _) in BY_DIAGNOSTIC {
            assert!(diagnostic::ALL.contains(code), "{code} is no constant");
        }
        for code in diagnostic::mcp::ALL {
            assert_eq!(of_diagnostic(code), FAILURE, "{code}");
            assert!(!diagnostic::ALL.contains(code), "{code}");
        }
        assert_eq!(of_diagnostic(diagnostic::STORE_LOCKED), LOCKED);
        assert_eq!(of_diagnostic("checkpoint::never_raised"), FAILURE);
    }

    /// Every diagnostic code the sources raise (`code(checkpoint::…)` on an error type, or a
    /// `"checkpoint::…"` literal given to a `Failure` or `miette!`) is in the table: none falls
    /// back to 1 by being forgotten, and none is mapped at its construction site.
    #[test]
    fn every_diagnostic_code_raised_is_in_the_table() {
        let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut missing = Vec::new();
        for dir in [
            "checkpoint-core/src",
            "checkpoint-cli/src",
            "checkpoint-mcp/src",
        ] {
            visit(&crates.join(dir), &mut |text| {
                for code in raised_codes(text) {
                    let known = BY_DIAGNOSTIC.iter().any(|(known, _)| *known == code)
                        || diagnostic::mcp::ALL.contains(&code.as_str());
                    if !known {
                        missing.push(code);
                    }
                }
            });
        }
        assert!(missing.is_empty(), "not in `BY_DIAGNOSTIC`: {missing:?}");
    }

    fn visit(dir: &std::path::Path, each: &mut dyn FnMut(&str)) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                visit(&path, each);
            } else if path.extension().is_some_and(|ext| ext == "rs")
                && !path.ends_with("exit_code.rs")
                && !path.ends_with("tests.rs")
            {
                each(&std::fs::read_to_string(&path).unwrap());
            }
        }
    }

    fn raised_codes(text: &str) -> Vec<String> {
        let mut codes = Vec::new();
        for (start, _) in text.match_indices("checkpoint::") {
            let before = &text[..start];
            if !(before.ends_with("code(") || before.ends_with('"')) {
                continue;
            }
            let code: String = text[start..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_' || *c == ':')
                .collect();
            let after = &text[start + code.len()..];
            if after.starts_with(')') || after.starts_with('"') {
                codes.push(code);
            }
        }
        codes
    }
}
