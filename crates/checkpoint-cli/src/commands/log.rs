//! `checkpoint log`: the journal of a workflow.

use std::fmt::Write as _;

use clap::Args;
use miette::{IntoDiagnostic, Result};

use crate::{
    ctx::Ctx,
    json::LogReport,
    output::{self, Format, JSON_VERSION, Paint},
};

/// Arguments of `checkpoint log`.
#[derive(Debug, Args)]
pub(crate) struct LogArgs {
    /// Show only the last N entries
    #[arg(long, short = 'n', value_name = "N")]
    pub limit: Option<usize>,
    /// Print notes, reasons and other free text whole, however long (by default each is cut
    /// at 200 columns, with an ellipsis and how much was left out)
    #[arg(long)]
    pub full: bool,
}

pub(crate) fn log(ctx: &Ctx, args: &LogArgs) -> Result<()> {
    let id = ctx.workflow_id()?;
    let journal = match args.limit {
        Some(limit) => ctx.store.last_entries(&id, limit)?,
        None => ctx.store.journal(&id)?,
    };
    if let Some((_, bytes)) = &journal.torn {
        output::warn(&format!(
            "the journal ends in a torn line of {} bytes (an interrupted append); it is not shown",
            bytes.len()
        ));
    }
    let skip = args
        .limit
        .map_or(0, |limit| journal.entries.len().saturating_sub(limit));
    let entries = &journal.entries[skip..];
    match ctx.format {
        Format::Json => output::emit_json(&LogReport {
            version: JSON_VERSION,
            entries,
        })
        .into_diagnostic(),
        _ => {
            let paint = Paint::new(ctx.color);
            let mut text = String::new();
            for entry in entries {
                let _ = writeln!(text, "{}", output::entry_line(entry, paint, args.full));
            }
            output::emit_human(ctx.color, &text).into_diagnostic()
        }
    }
}
