//! What every client's `setup` writer (`clients/<client>/setup.rs`) shares: whose files, the
//! hook command it writes and how it knows one of its own, and the plan of edits it returns to
//! `checkpoint setup` (`commands/setup.rs`), which reads, checks and writes the files. The JSON
//! and TOML files the clients share a shape for are edited in `setup/hooks_json.rs` and
//! `setup/toml_file.rs`.

pub(crate) mod hooks_json;
pub(crate) mod toml_file;

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
};

use clap::ValueEnum;
use miette::{Result, miette};

use crate::{clients::Client, env};

/// The largest client configuration file read, in bytes.
pub(crate) const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;

/// Whose configuration `setup` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Scope {
    /// The project's files (read by the client only in a trusted project)
    Project,
    /// The user's files
    User,
}

/// What a client's writer needs to know.
pub(crate) struct Target {
    pub(crate) scope: Scope,
    /// The project's root (the git top level).
    pub(crate) project_root: PathBuf,
    /// This binary, as the hooks and the MCP server entry call it.
    pub(crate) binary: String,
    /// Take out our entries instead of writing them.
    pub(crate) remove: bool,
    /// The environment variable `name`, read once here (`HOME`, `CODEX_HOME`, …).
    pub(crate) env: fn(&str) -> Option<OsString>,
}

impl Target {
    /// The environment variable `name`, when set and not empty.
    pub(crate) fn env(&self, name: &str) -> Option<PathBuf> {
        (self.env)(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    }

    /// The user's home directory.
    pub(crate) fn home(&self) -> Result<PathBuf> {
        self.env(env::HOME)
            .ok_or_else(|| miette!("`HOME` is not set, so the user's files cannot be found; set it, or use `--scope project`"))
    }

    /// The shell command that runs this binary's hook for `client`'s `event`.
    pub(crate) fn hook_command(&self, client: Client, event: &str) -> String {
        format!(
            "{} hook --client {} {event}",
            shell_quote(&self.binary),
            client.name()
        )
    }

    /// Whether `command` is a hook command `setup` wrote for `client`, whichever binary it
    /// names (an older install's too).
    pub(crate) fn is_our_hook(command: &str, client: Client) -> bool {
        let marker = format!(" hook --client {} ", client.name());
        let Some((program, event)) = command.split_once(&marker) else {
            return false;
        };
        is_checkpoint_binary(program.trim_matches('\'')) && !event.contains(char::is_whitespace)
    }
}

/// Whether `program` names a `checkpoint` binary (by its file name).
pub(crate) fn is_checkpoint_binary(program: &str) -> bool {
    Path::new(program)
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name == "checkpoint" || name.starts_with("checkpoint-"))
}

/// `text` quoted for a POSIX shell where it needs it.
fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c))
    {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A file a writer changes: its path and the edit from its text (`None` when it does not
/// exist) to the new text (`None` when nothing changes).
pub(crate) struct FileEdit<'a> {
    pub(crate) path: PathBuf,
    #[expect(clippy::type_complexity, reason = "one edit, used once")]
    pub(crate) edit: Box<dyn Fn(Option<&str>) -> Result<Option<String>, Malformed> + 'a>,
}

/// Why an existing file cannot be edited: where, and what is wrong.
#[derive(Debug)]
pub(crate) struct Malformed {
    /// The line (from 1), where known.
    pub(crate) line: Option<usize>,
    pub(crate) message: String,
}

impl Malformed {
    pub(crate) fn at(line: Option<usize>, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
        }
    }
}

/// A client's plan: the files it edits, and what the client needs before the hooks run.
pub(crate) struct Plan<'a> {
    pub(crate) edits: Vec<FileEdit<'a>>,
    pub(crate) needs: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_hooks_are_known_by_their_shape_whichever_binary() {
        let codex = Client::Codex;
        for command in [
            "/usr/bin/checkpoint hook --client codex Stop",
            "'/home/a b/checkpoint' hook --client codex SessionStart",
            "checkpoint hook --client codex PostToolUse",
            "/opt/checkpoint-0.2.0/checkpoint hook --client codex Stop",
        ] {
            assert!(Target::is_our_hook(command, codex), "{command}");
        }
        for command in [
            "/usr/bin/checkpoint hook --client claude Stop",
            "/usr/bin/mytool hook --client codex Stop",
            "/usr/bin/checkpoint hook --client codex Stop; rm -rf x",
            "echo hi",
            "",
        ] {
            assert!(!Target::is_our_hook(command, codex), "{command}");
        }
    }

    #[test]
    fn shell_quoting_keeps_plain_paths_and_quotes_the_rest() {
        assert_eq!(shell_quote("/usr/bin/checkpoint"), "/usr/bin/checkpoint");
        assert_eq!(shell_quote("/a b/checkpoint"), "'/a b/checkpoint'");
        assert_eq!(shell_quote("/a'b/c"), r"'/a'\''b/c'");
        assert_eq!(shell_quote(""), "''");
    }
}
