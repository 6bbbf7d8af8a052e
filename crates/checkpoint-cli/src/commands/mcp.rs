//! `checkpoint mcp`: runs the MCP server, the `checkpoint-mcp` binary beside this one.
//!
//! The server is a second binary so that this one, which every hook starts, links no async
//! runtime (see the benchmarks in `docs/performance.md`).

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use clap::Args;
use miette::{Diagnostic, Result};

/// Arguments of `checkpoint mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {}

/// The server binary could not be started.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("failed to run the MCP server `{}`: {source}", path.display())]
#[diagnostic(
    code(checkpoint::mcp::missing_server),
    help("`checkpoint-mcp` ships beside `checkpoint` in the plugin's `bin/`; install both")
)]
pub(crate) struct ServerMissing {
    path: PathBuf,
    source: std::io::Error,
}

/// Runs `checkpoint-mcp` with the checkpoint directory, replacing this process where the
/// platform allows, and returns its exit code otherwise.
pub(crate) fn serve(dir: Option<&Path>) -> Result<u8> {
    let path = crate::locate::sibling_binary("checkpoint-mcp");
    let mut command = Command::new(&path);
    if let Some(dir) = dir {
        command.arg("--dir").arg(dir);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let source = command.exec();
        Err(ServerMissing { path, source }.into())
    }
    #[cfg(not(unix))]
    {
        let status = command
            .status()
            .map_err(|source| ServerMissing { path, source })?;
        Ok(status.code().map_or(1, |code| code.clamp(0, 255) as u8))
    }
}
