//! `checkpoint completions`: shell completion scripts.

use clap::Args;
use clap_complete::Shell;
use miette::{IntoDiagnostic, Result};

use crate::output;

/// Arguments of `checkpoint completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell
    pub shell: Shell,
}

pub(crate) fn run(args: &CompletionsArgs) -> Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut crate::command(), "checkpoint", &mut script);
    output::emit(&String::from_utf8_lossy(&script)).into_diagnostic()
}
