//! `checkpoint schema`: the JSON Schemas of the file formats.

use clap::{Args, ValueEnum};
use miette::{IntoDiagnostic, Result};

use crate::output;

/// Arguments of `checkpoint schema`.
#[derive(Debug, Args)]
pub(crate) struct SchemaArgs {
    /// Which format
    #[arg(value_enum, default_value_t = SchemaKind::State)]
    pub kind: SchemaKind,
}

/// The published formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SchemaKind {
    /// `state.json`
    State,
    /// One line of `journal.jsonl`
    Journal,
    /// A plan file for `checkpoint init --plan`
    Plan,
}

pub(crate) fn schema(args: &SchemaArgs) -> Result<()> {
    let text = match args.kind {
        SchemaKind::State => checkpoint_core::schema::state_schema(),
        SchemaKind::Journal => checkpoint_core::schema::journal_schema(),
        SchemaKind::Plan => checkpoint_core::schema::plan_schema(),
    };
    output::emit(&text).into_diagnostic()
}
