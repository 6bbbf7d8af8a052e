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

/// Writes the script completing `command` (the whole command line's, given by the caller so that
/// no command module imports `cli.rs` back).
pub(crate) fn run(args: &CompletionsArgs, mut command: clap::Command) -> Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "checkpoint", &mut script);
    output::emit(&String::from_utf8_lossy(&script)).into_diagnostic()
}
