//! The context summary: `note`, `decide` and `files`.

use std::path::PathBuf;

use checkpoint_core::Transition;
use clap::Args;
use miette::Result;

use crate::{ctx::Ctx, services::store_write::Write};

/// Arguments of `checkpoint note`.
#[derive(Debug, Args)]
pub(crate) struct NoteArgs {
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
pub(crate) struct DecideArgs {
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
pub(crate) struct FilesArgs {
    /// Paths that matter for resuming (can be repeated)
    #[arg(required = true)]
    pub paths: Vec<String>,
}

pub(crate) fn note(ctx: &Ctx, args: &NoteArgs) -> Result<()> {
    Write::one(
        Transition::Note {
            text: crate::args::text_argument(args.text.as_deref(), args.file.as_deref())?,
        },
        |_| "noted".into(),
    )
    .apply(ctx)?;
    Ok(())
}

pub(crate) fn decide(ctx: &Ctx, args: &DecideArgs) -> Result<()> {
    Write::one(
        Transition::Decide {
            text: crate::args::text_argument(args.text.as_deref(), args.file.as_deref())?,
        },
        |workflow| format!("recorded decision {}", workflow.context.key_decisions.len()),
    )
    .apply(ctx)?;
    Ok(())
}

pub(crate) fn files(ctx: &Ctx, args: &FilesArgs) -> Result<()> {
    // Files to read first are the project's: a path outside it is refused, not stored.
    let paths: Vec<String> = args
        .paths
        .iter()
        .map(|path| ctx.inside_path(path, "file"))
        .collect::<Result<_, _>>()?;
    Write::decided(
        |workflow| {
            Ok(paths
                .iter()
                .filter(|path| !workflow.context.file_paths.contains(path))
                .map(|path| Transition::FilePath { path: path.clone() })
                .collect())
        },
        |workflow| {
            format!(
                "the context summary lists {} files",
                workflow.context.file_paths.len()
            )
        },
    )
    .apply(ctx)?;
    Ok(())
}
