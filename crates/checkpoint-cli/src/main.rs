//! The `checkpoint` binary: everything lives in the library so tests and `xtask` can reach it.

use std::process::ExitCode;

fn main() -> ExitCode {
    checkpoint_cli::run(std::env::args_os())
}
