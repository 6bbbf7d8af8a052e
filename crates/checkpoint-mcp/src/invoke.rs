//! Runs the `checkpoint` command line for the server: every read and write goes through the same
//! store, lock and redaction as a command typed in a shell, and its JSON document or error comes
//! back unchanged. The document is read from stdout; a failed command's error from the typed
//! report it writes to `CHECKPOINT_ERROR_FILE` (a file of a private directory made for the
//! call); stderr is warnings only.

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
    process::{ExitStatus, Stdio},
};

use checkpoint_contract::{diagnostic::mcp, document::ErrorReport, env, exit_code};
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
        self.run_with_stdin(format, workflow, args, None).await
    }

    /// [`Cli::run`], with `stdin` (when given) written to the command's standard input.
    ///
    /// An argument longer than the kernel takes is refused before anything runs, saying so
    /// (texts of any length go on stdin instead).
    pub(crate) async fn run_with_stdin(
        &self,
        format: &str,
        workflow: Option<&str>,
        args: &[OsString],
        stdin: Option<String>,
    ) -> Result<Printed, CliError> {
        if let Some(arg) = args.iter().find(|arg| arg.len() >= MAX_ARG_BYTES) {
            return Err(argument_too_long(arg.len()));
        }
        let error_file = ErrorFile::new()?;
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
            .env(env::CHECKPOINT_NO_PROGRESS, "1")
            .env(env::CHECKPOINT_ERROR_FILE, error_file.path())
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|err| self.spawn_error(&err))?;
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            // Written beside the wait, so that a command that answers before reading all of
            // it never blocks; one that exits without reading reports through its status.
            tokio::spawn(async move {
                let _ = tokio::io::AsyncWriteExt::write_all(&mut pipe, text.as_bytes()).await;
            });
        }
        let output = child
            .wait_with_output()
            .await
            .map_err(|err| self.spawn_error(&err))?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        if output.status.success() {
            return Ok(Printed {
                stdout,
                warnings: stderr.trim().to_owned(),
            });
        }
        Err(error_file.read(output.status, &stderr))
    }

    /// Why the command could not run: the binary is missing, or the arguments are over the
    /// kernel's limits (`E2BIG`), or something else, as the system says.
    fn spawn_error(&self, err: &std::io::Error) -> CliError {
        match err.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => CliError {
                message: format!("failed to run `{}`: {err}", self.program.display()),
                code: Some(mcp::CLI_MISSING.into()),
                hint: Some(
                    "install the complete bundle: `checkpoint-mcp` runs the `checkpoint` binary beside it"
                        .into(),
                ),
                exit_code: None,
            },
            std::io::ErrorKind::ArgumentListTooLong => CliError {
                message: format!(
                    "failed to run `checkpoint`: its arguments are over the system's limit ({err})"
                ),
                ..argument_too_long(0)
            },
            _ => CliError {
                message: format!("failed to run `{}`: {err}", self.program.display()),
                code: Some(mcp::SPAWN.into()),
                hint: Some("run the tool again; the system refused to start the command".into()),
                exit_code: None,
            },
        }
    }

    /// Runs a command with `--format json` and parses its document; `stdin`, when given, is
    /// written to its standard input.
    pub(crate) async fn run_json(
        &self,
        workflow: Option<&str>,
        args: &[OsString],
        stdin: Option<String>,
    ) -> Result<(Value, String), CliError> {
        let printed = self.run_with_stdin("json", workflow, args, stdin).await?;
        let document = serde_json::from_str(&printed.stdout).map_err(|err| CliError {
            message: format!("`checkpoint` printed a document that is not JSON: {err}"),
            code: Some(mcp::BAD_DOCUMENT.into()),
            hint: None,
            exit_code: Some(exit_code::SUCCESS.into()),
        })?;
        Ok((document, printed.warnings))
    }
}

impl CliError {
    /// A document of `command` that does not have the contract's shape.
    pub(crate) fn unreadable(command: &str, err: &serde_json::Error) -> Self {
        Self {
            message: format!(
                "`checkpoint {command}` printed a document this server cannot read: {err}"
            ),
            code: Some(mcp::BAD_DOCUMENT.into()),
            hint: Some("use the `checkpoint-mcp` of the same release as `checkpoint`".into()),
            exit_code: Some(exit_code::SUCCESS.into()),
        }
    }

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

/// The longest command-line argument the kernel takes, terminating NUL included
/// (`MAX_ARG_STRLEN` on Linux: 32 pages of 4 KiB).
const MAX_ARG_BYTES: usize = 128 * 1024;

/// The refusal of an argument of `len` bytes, over [`MAX_ARG_BYTES`].
fn argument_too_long(len: usize) -> CliError {
    CliError {
        message: format!(
            "a value of {len} bytes is over the {MAX_ARG_BYTES} bytes the system allows one command-line argument; nothing was run"
        ),
        code: Some(mcp::ARGUMENT_TOO_LONG.into()),
        hint: Some(
            "shorten it: a long text belongs in `note` or `progress`, which take texts of any length, and files are named by their paths"
                .into(),
        ),
        exit_code: None,
    }
}

/// The file a command writes its error to: empty, in a directory of its own that only this
/// user can read, removed with it.
struct ErrorFile {
    dir: tempfile::TempDir,
}

impl ErrorFile {
    const NAME: &str = "error.json";

    fn new() -> Result<Self, CliError> {
        let mut builder = tempfile::Builder::new();
        builder.prefix("checkpoint-mcp-");
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
        let dir = builder
            .tempdir()
            .and_then(|dir| std::fs::File::create(dir.path().join(Self::NAME)).map(|_| dir))
            .map_err(|err| CliError {
                message: format!("could not make the file a command reports its error to: {err}"),
                code: Some(mcp::SPAWN.into()),
                hint: Some("check that the temporary directory (`TMPDIR`) is writable".into()),
                exit_code: None,
            })?;
        Ok(Self { dir })
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join(Self::NAME)
    }

    /// The error of a command that exited with `status`: the report it wrote, else an error
    /// saying it wrote none (it crashed or was killed), with the end of its stderr.
    fn read(&self, status: ExitStatus, stderr: &str) -> CliError {
        read_error(&self.path(), status, stderr)
    }
}

/// The error of a command that exited with `status`, from the report at `path`.
fn read_error(path: &Path, status: ExitStatus, stderr: &str) -> CliError {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let report = serde_json::from_str::<ErrorReport>(&text);
    match report {
        Ok(report) => CliError {
            message: report.message,
            code: report.code,
            hint: report.help,
            exit_code: status.code(),
        },
        Err(err) => {
            let what = if text.trim().is_empty() {
                "without writing its error".to_owned()
            } else {
                format!("and wrote an error this server cannot read ({err})")
            };
            let mut message = format!("`checkpoint` failed ({status}) {what}");
            let stderr = stderr.trim();
            if !stderr.is_empty() {
                let mut start = stderr.len().saturating_sub(STDERR_SHOWN);
                while !stderr.is_char_boundary(start) {
                    start += 1;
                }
                message.push_str("; its stderr ended with:\n");
                message.push_str(&stderr[start..]);
            }
            CliError {
                message,
                code: Some(mcp::NO_REPORT.into()),
                hint: Some(
                    "run the tool again; if it fails the same way, run the command in a shell, and use the `checkpoint-mcp` of the same release as `checkpoint`"
                        .into(),
                ),
                exit_code: status.code(),
            }
        }
    }
}

/// How much of a failed command's stderr an error without a report shows.
const STDERR_SHOWN: usize = 2000;

#[cfg(test)]
mod tests;
