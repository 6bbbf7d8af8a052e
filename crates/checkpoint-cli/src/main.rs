//! The `checkpoint` binary: everything lives in the library so tests and `xtask` can reach it.

use std::process::ExitCode;

/// Loading a large workflow allocates tens of thousands of small strings in a fresh process;
/// mimalloc does that about a third faster than the system allocator (see the benchmarks).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    checkpoint_cli::run(std::env::args_os())
}
