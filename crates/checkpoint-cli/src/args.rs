//! What several commands take from their arguments: clap's side of core's vocabularies, and
//! free text given inline or from a file.

use std::{
    fs,
    io::{self, Read},
    path::Path,
};

use checkpoint_core::{journal::MAX_LINE_BYTES, seeds::SeedFormat};
use clap::ValueEnum;
use miette::Result;

use crate::failure::Failure;

/// The state file formats of other checkpoint systems.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// dotagent's `memory/state/phase.json`, with `execution.json` beside it
    Dotagent,
    /// OrchestKit's `.claude/pipeline-state.json`
    Orchestkit,
    /// The checkpoint-recovery pattern's `.claude/data/checkpoints/<workflow>.json`
    CheckpointRecovery,
    /// The checkpoints directory's `.claude/checkpoints/<type>_<project>_<time>.json`
    CheckpointsDir,
    /// The nine-step workflow's state file in a worktree (`.workflow-state.json`)
    NineStep,
}

impl From<FormatArg> for SeedFormat {
    fn from(format: FormatArg) -> Self {
        match format {
            FormatArg::Dotagent => Self::Dotagent,
            FormatArg::Orchestkit => Self::Orchestkit,
            FormatArg::CheckpointRecovery => Self::CheckpointRecovery,
            FormatArg::CheckpointsDir => Self::CheckpointsDir,
            FormatArg::NineStep => Self::NineStep,
        }
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
        Failure::new(
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
            return Err(Failure::new(
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
        return Err(Failure::new(
            "checkpoint::text_too_large",
            format!(
                "refusing the text from `{name}`: it is over {MAX_LINE_BYTES} bytes, the longest journal entry"
            ),
        )
        .with_help("nothing was written; keep the long part in a file of the project and name it with `checkpoint files`")
        .into());
    }
    String::from_utf8(bytes).map_err(|_| {
        Failure::new(
            "checkpoint::text_file",
            format!("refusing the text from `{name}`: it is not UTF-8"),
        )
        .into()
    })
}
