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

/// The exit code of every diagnostic code `checkpoint` reports, decided here once: an error
/// exits with the code of its diagnostic code, wherever it was raised (a code not listed is 1).
/// The README's "Exit codes" section lists them by exit code (generated from this table).
pub const BY_DIAGNOSTIC: &[(&str, u8)] = &[
    ("checkpoint::invalid_id", USAGE),
    ("checkpoint::reserved_id", USAGE),
    ("checkpoint::invalid_plan", USAGE),
    ("checkpoint::plan_parse", USAGE),
    ("checkpoint::plan_unreadable", USAGE),
    ("checkpoint::config_parse", USAGE),
    ("checkpoint::archive::not_an_archive", USAGE),
    ("checkpoint::seed::unknown", USAGE),
    ("checkpoint::invalid_env", USAGE),
    ("checkpoint::invalid_time", USAGE),
    ("checkpoint::path_outside_project", USAGE),
    ("checkpoint::text_file", USAGE),
    ("checkpoint::effect::empty", USAGE),
    ("checkpoint::run::config", USAGE),
    ("checkpoint::sync::remote", USAGE),
    ("checkpoint::session::bad_id", USAGE),
    ("checkpoint::usage", USAGE),
    ("checkpoint::invalid_transition", REFUSED),
    ("checkpoint::store::exists", REFUSED),
    ("checkpoint::output_exists", REFUSED),
    ("checkpoint::seed::export", REFUSED),
    ("checkpoint::store::state_too_large", REFUSED),
    ("checkpoint::store::entry_too_large", REFUSED),
    ("checkpoint::store::journal_full", REFUSED),
    ("checkpoint::text_too_large", REFUSED),
    ("checkpoint::archive::unfinished", REFUSED),
    ("checkpoint::effect::allow_in_session", REFUSED),
    ("checkpoint::sync::diverged", REFUSED),
    ("checkpoint::sync::rejected", REFUSED),
    ("checkpoint::session::too_large", REFUSED),
    ("checkpoint::session::declined", REFUSED),
    ("checkpoint::session::other_head", REFUSED),
    ("checkpoint::session::local_changes", REFUSED),
    ("checkpoint::session::through_link", REFUSED),
    ("checkpoint::session::transcript_exists", REFUSED),
    ("checkpoint::unknown_phase", NOT_FOUND),
    ("checkpoint::unknown_task", NOT_FOUND),
    ("checkpoint::store::not_found", NOT_FOUND),
    ("checkpoint::history::no_entry", NOT_FOUND),
    ("checkpoint::archive::not_found", NOT_FOUND),
    ("checkpoint::files::nothing_to_redo", NOT_FOUND),
    ("checkpoint::seed::locate", NOT_FOUND),
    ("checkpoint::no_workflow", NOT_FOUND),
    ("checkpoint::ambiguous_workflow", NOT_FOUND),
    ("checkpoint::session::none", NOT_FOUND),
    ("checkpoint::session::not_found", NOT_FOUND),
    ("checkpoint::session::not_on_remote", NOT_FOUND),
    ("checkpoint::store::locked", LOCKED),
    ("checkpoint::run::busy", LOCKED),
    ("checkpoint::store::corrupt", UNTRUSTED),
    ("checkpoint::store::unknown_version", UNTRUSTED),
    ("checkpoint::store::newer_version", UNTRUSTED),
    ("checkpoint::store::symlink", UNTRUSTED),
    ("checkpoint::store::too_large", UNTRUSTED),
    ("checkpoint::file::unreadable", UNTRUSTED),
    ("checkpoint::seed::invalid", UNTRUSTED),
    ("checkpoint::sync::journal_too_large", UNTRUSTED),
    ("checkpoint::sync::remote_damaged", UNTRUSTED),
    ("checkpoint::session::damaged", UNTRUSTED),
    ("checkpoint::store::uncertain", MAYBE_SAVED),
    ("checkpoint::invalid", INVALID),
    ("checkpoint::io", FAILURE),
    ("checkpoint::git::commit_failed", FAILURE),
    ("checkpoint::sync::git", FAILURE),
    ("checkpoint::session::write_failed", FAILURE),
    ("checkpoint::session::unreadable", FAILURE),
    ("checkpoint::session::no_home", FAILURE),
    ("checkpoint::mcp::missing_server", FAILURE),
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

    /// Every diagnostic code the sources raise (`code(checkpoint::…)` on an error type, or a
    /// `"checkpoint::…"` literal given to a `Failure` or `miette!`) is in the table: none falls
    /// back to 1 by being forgotten, and none is mapped at its construction site.
    #[test]
    fn every_diagnostic_code_raised_is_in_the_table() {
        let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut missing = Vec::new();
        for dir in ["checkpoint-core/src", "checkpoint-cli/src"] {
            visit(&crates.join(dir), &mut |text| {
                for code in raised_codes(text) {
                    if !BY_DIAGNOSTIC.iter().any(|(known, _)| *known == code) {
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
