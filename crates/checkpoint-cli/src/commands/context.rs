//! The context summary: `note`, `decide` and `files`.

use std::{
    fs,
    io::{self, Read},
    path::{Path, PathBuf},
};

use checkpoint_core::{Transition, journal::MAX_LINE_BYTES};
use clap::Args;
use miette::{IntoDiagnostic, Result};

use crate::{
    ctx::Ctx,
    failure::Failure,
    json::WorkflowReport,
    output::{self, Format},
};

/// Arguments of `checkpoint note`.
#[derive(Debug, Args)]
pub struct NoteArgs {
    /// The note
    #[arg(required_unless_present = "file")]
    pub text: Option<String>,
    /// Read the note from this file instead, `-` for stdin (for a text too long for one
    /// command-line argument)
    #[arg(long, value_name = "FILE", conflicts_with = "text")]
    pub file: Option<PathBuf>,
}

/// Arguments of `checkpoint decide`.
#[derive(Debug, Args)]
pub struct DecideArgs {
    /// The decision, and why
    #[arg(required_unless_present = "file")]
    pub text: Option<String>,
    /// Read the decision from this file instead, `-` for stdin (for a text too long for one
    /// command-line argument)
    #[arg(long, value_name = "FILE", conflicts_with = "text")]
    pub file: Option<PathBuf>,
}

/// Arguments of `checkpoint files`.
#[derive(Debug, Args)]
pub struct FilesArgs {
    /// Paths that matter for resuming (can be repeated)
    #[arg(required = true)]
    pub paths: Vec<String>,
}

pub(crate) fn note(ctx: &Ctx, args: &NoteArgs) -> Result<()> {
    ctx.apply(
        Transition::Note {
            text: text_argument(args.text.as_deref(), args.file.as_deref())?,
        },
        |_| "noted".into(),
    )?;
    Ok(())
}

pub(crate) fn decide(ctx: &Ctx, args: &DecideArgs) -> Result<()> {
    ctx.apply(
        Transition::Decide {
            text: text_argument(args.text.as_deref(), args.file.as_deref())?,
        },
        |workflow| format!("recorded decision {}", workflow.context.key_decisions.len()),
    )?;
    Ok(())
}

pub(crate) fn files(ctx: &Ctx, args: &FilesArgs) -> Result<()> {
    let id = ctx.workflow_id()?;
    // Files to read first are the project's: a path outside it is refused, not stored.
    let paths: Vec<String> = args
        .paths
        .iter()
        .map(|path| ctx.inside_path(path, "file"))
        .collect::<Result<_, _>>()?;
    let loaded = ctx.store.update(&id, ctx.now, |workflow| {
        Ok(paths
            .iter()
            .filter(|path| !workflow.context.file_paths.contains(path))
            .map(|path| Transition::FilePath { path: path.clone() })
            .collect())
    })?;
    output::warn_recoveries(&loaded.recoveries);
    output::warn_redacted(loaded.redacted);
    match ctx.format {
        Format::Json => WorkflowReport::new(&loaded).emit(),
        _ => output::emit_human(
            ctx.color,
            &format!(
                "the context summary lists {} files\n",
                loaded.workflow.context.file_paths.len()
            ),
        )
        .into_diagnostic(),
    }
}

/// A free text given as an argument, or read from the file named by `--file` (`-`: stdin): the
/// way to pass a text longer than the kernel takes as one argument (128 KiB on Linux).
///
/// The file must be a regular file (a FIFO or a device is refused, never waited on); either
/// source is read up to the longest journal line, and a longer text is refused, as is one that
/// is not UTF-8.
pub(crate) fn text_argument(text: Option<&str>, file: Option<&Path>) -> Result<String> {
    let Some(file) = file else {
        return Ok(text.unwrap_or_default().to_owned());
    };
    let name = file.display().to_string();
    let read_error = |err: io::Error| {
        Failure::usage(
            "checkpoint::text_file",
            format!("failed to read the text from `{name}`: {err}"),
        )
        .with_help("give a readable file, or `-` to read stdin")
    };
    let mut bytes = Vec::new();
    if file == Path::new("-") {
        io::stdin()
            .lock()
            .take(MAX_LINE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(read_error)?;
    } else {
        let meta = fs::metadata(file).map_err(read_error)?;
        if !meta.is_file() {
            return Err(Failure::usage(
                "checkpoint::text_file",
                format!("refusing to read the text from `{name}`: it is not a regular file"),
            )
            .with_help("give a regular file, or `-` to read stdin")
            .into());
        }
        fs::File::open(file)
            .and_then(|opened| opened.take(MAX_LINE_BYTES + 1).read_to_end(&mut bytes))
            .map_err(read_error)?;
    }
    if bytes.len() as u64 > MAX_LINE_BYTES {
        return Err(Failure::refused(
            "checkpoint::text_too_large",
            format!(
                "refusing the text from `{name}`: it is over {MAX_LINE_BYTES} bytes, the longest journal entry"
            ),
        )
        .with_help("nothing was written; keep the long part in a file of the project and name it with `checkpoint files`")
        .into());
    }
    String::from_utf8(bytes).map_err(|_| {
        Failure::usage(
            "checkpoint::text_file",
            format!("refusing the text from `{name}`: it is not UTF-8"),
        )
        .into()
    })
}
