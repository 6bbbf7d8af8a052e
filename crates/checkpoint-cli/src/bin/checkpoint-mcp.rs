//! The `checkpoint-mcp` binary, which `checkpoint mcp` runs: the MCP server, kept out of the
//! `checkpoint` binary so that its hooks do not load an async runtime.

use std::process::ExitCode;

fn main() -> ExitCode {
    checkpoint_mcp::run(std::env::args_os())
}
