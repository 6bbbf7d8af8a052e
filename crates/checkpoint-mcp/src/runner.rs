//! Runs the `checkpoint` command line for the server: every read and write goes through the same
//! store, lock and redaction as a command typed in a shell, and its JSON document or error comes
//! back unchanged.

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
    process::Stdio,
};

use serde_json::{Value, json};

/// The `checkpoint` binary and the options every command gets.
#[derive(Debug, Clone)]
pub(crate) struct Cli {
    program: PathBuf,
    dir: Option<PathBuf>,
}

/// A command's failure, as the command line reports it with `--format json`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CliError {
    pub message: String,
    /// The stable code, for example `checkpoint::unknown_phase`.
    pub code: Option<String>,
    /// The fix, when there is one.
    pub hint: Option<String>,
    /// The documented exit code (`checkpoint --help` lists them).
    pub exit_code: Option<i32>,
}

/// What a successful command printed.
#[derive(Debug)]
pub(crate) struct Printed {
    pub stdout: String,
    /// Warnings on stderr (for example a redacted secret), for the model to read.
    pub warnings: String,
}

impl Cli {
    pub(crate) fn new(program: PathBuf, dir: Option<PathBuf>) -> Self {
        Self { program, dir }
    }

    /// Runs `checkpoint --format <format> [--dir] [--workflow] <args>` and returns its stdout.
    pub(crate) async fn run(
        &self,
        format: &str,
        workflow: Option<&str>,
        args: &[OsString],
    ) -> Result<Printed, CliError> {
        let mut command = tokio::process::Command::new(&self.program);
        command
            .arg("--format")
            .arg(format)
            .arg("--color")
            .arg("never");
        if let Some(dir) = &self.dir {
            command.arg("--dir").arg(dir);
        }
        if let Some(workflow) = workflow {
            command.arg(format!("--workflow={workflow}"));
        }
        command
            .args(args)
            .env("CHECKPOINT_NO_PROGRESS", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let output = command.output().await.map_err(|err| CliError {
            message: format!("failed to run `{}`: {err}", self.program.display()),
            code: Some("checkpoint::mcp::cli_missing".into()),
            hint: Some(
                "install the complete bundle: `checkpoint-mcp` runs the `checkpoint` binary beside it"
                    .into(),
            ),
            exit_code: None,
        })?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        if output.status.success() {
            return Ok(Printed {
                stdout,
                warnings: stderr.trim().to_owned(),
            });
        }
        Err(parse_error(&stderr, output.status.code()))
    }

    /// Runs a command with `--format json` and parses its document.
    pub(crate) async fn run_json(
        &self,
        workflow: Option<&str>,
        args: &[OsString],
    ) -> Result<(Value, String), CliError> {
        let printed = self.run("json", workflow, args).await?;
        let document = serde_json::from_str(&printed.stdout).map_err(|err| CliError {
            message: format!("`checkpoint` printed a document that is not JSON: {err}"),
            code: Some("checkpoint::mcp::bad_document".into()),
            hint: None,
            exit_code: Some(0),
        })?;
        Ok((document, printed.warnings))
    }
}

impl CliError {
    /// The error as the tool result's structured content.
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "error": {
                "message": self.message,
                "code": self.code,
                "hint": self.hint,
                "exit_code": self.exit_code,
            }
        })
    }

    /// The error as text for the model: the message, its code and the hint, as the CLI shows them.
    pub(crate) fn to_text(&self) -> String {
        let mut text = match &self.code {
            Some(code) => format!("error [{code}]: {}", self.message),
            None => format!("error: {}", self.message),
        };
        if let Some(hint) = &self.hint {
            text.push_str("\nhint: ");
            text.push_str(hint);
        }
        text
    }
}

/// Reads the error of a failed command from its stderr: the miette JSON report on its last line
/// (after any warnings), else the text itself (a usage error from clap).
fn parse_error(stderr: &str, exit_code: Option<i32>) -> CliError {
    let report = stderr
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .and_then(|line| serde_json::from_str::<Value>(line.trim()).ok())
        .filter(|report| report["message"].is_string());
    match report {
        Some(report) => CliError {
            message: report["message"].as_str().unwrap_or_default().to_owned(),
            code: report["code"].as_str().map(str::to_owned),
            hint: report["help"].as_str().map(str::to_owned),
            exit_code,
        },
        None => {
            let text = stderr.trim();
            let message = text.strip_prefix("error: ").unwrap_or(text);
            CliError {
                message: if message.is_empty() {
                    format!("`checkpoint` exited with {exit_code:?} and no message")
                } else {
                    message.to_owned()
                },
                code: (exit_code == Some(2)).then(|| "checkpoint::usage".to_owned()),
                hint: None,
                exit_code,
            }
        }
    }
}

/// The `checkpoint` binary: beside this one (the bundle's `bin/`), else on `PATH`.
pub(crate) fn default_program(current_exe: Option<&Path>) -> PathBuf {
    let name = format!("checkpoint{}", std::env::consts::EXE_SUFFIX);
    current_exe
        .and_then(Path::parent)
        .map(|dir| dir.join(&name))
        .filter(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

#[cfg(test)]
mod tests;
