//! `checkpoint export`: write the workflow as another checkpoint system's state file.

use std::path::PathBuf;

use checkpoint_core::seeds::{self, SeedFormat};
use clap::Args;
use miette::{IntoDiagnostic, Result};

use crate::{
    args::FormatArg,
    ctx::Ctx,
    json::ExportReport,
    output::{self, Format, JSON_VERSION},
};

/// Arguments of `checkpoint export`.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The format to write
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub to: FormatArg,
    /// Write the file here (and its companions beside it) instead of to stdout; the write is
    /// atomic
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Replace the output files if they exist
    #[arg(long, requires = "output")]
    pub force: bool,
}

pub(crate) fn export(ctx: &Ctx, args: &ExportArgs) -> Result<()> {
    let loaded = ctx.load()?;
    output::warn_recoveries(&loaded.recoveries);
    let format = SeedFormat::from(args.to);
    let exported = seeds::export(format, &loaded.workflow)?;
    let Some(path) = &args.output else {
        for (name, _) in &exported.companions {
            output::warn(&format!(
                "`{name}` belongs beside the state file and was not written; pass `--output <path>` to write both"
            ));
        }
        return output::emit(std::str::from_utf8(&exported.bytes).into_diagnostic()?)
            .into_diagnostic();
    };
    let written = seeds::write_export(&ctx.cwd.join(path), &exported, args.force)?;
    let written: Vec<PathBuf> = written.iter().map(|path| ctx.display_path(path)).collect();
    match ctx.format {
        Format::Json => output::emit_json(&ExportReport {
            version: JSON_VERSION,
            format: format.name(),
            written,
        })
        .into_diagnostic(),
        _ => {
            let text: String = written
                .iter()
                .map(|path| format!("wrote `{}`\n", path.display()))
                .collect();
            output::emit_human(ctx.color, &text).into_diagnostic()
        }
    }
}
