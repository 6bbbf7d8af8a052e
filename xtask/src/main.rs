//! Project automation in the [cargo-xtask](https://github.com/matklad/cargo-xtask) style:
//! `cargo xtask <task>`, with no dependencies beyond the workspace's own.

mod bench;
mod codegen;
mod demo;
mod dist;
mod fuzz;
mod install;
mod plugin;
mod release;
mod test;
mod tidy;
mod workspace;

use std::{env, path::PathBuf, process::ExitCode};

use clap::{Parser, Subcommand};

pub(crate) use crate::workspace::{
    Result, cargo, describe, project_root, run_checked, shell_quote, target_dir,
};

/// Tasks for building, bundling, installing and testing `checkpoint`.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Build the release binary and bundle the Claude Code plugin in `target/dist/`
    Dist,
    /// Build the release asset of this machine (`checkpoint-<version>-<target>.tar.gz`), add it
    /// to `<out>/SHA256SUMS`, and pin those checksums in `plugin/release/SHA256SUMS`
    ReleaseAssets {
        /// The directory to write the asset and `SHA256SUMS` into
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Do not pin the checksums in the plugin directory (a release build of one platform
        /// among several)
        #[arg(long)]
        no_pin: bool,
    },
    /// Pin the checksums of this version's assets listed in a `SHA256SUMS` file (the release's)
    /// in `plugin/release/SHA256SUMS`
    PinChecksums {
        /// The `SHA256SUMS` file of the release
        file: PathBuf,
    },
    /// Regenerate the committed JSON Schemas in `docs/` (`--check` fails when they are stale)
    Codegen {
        /// Fail instead of writing when a file is stale
        #[arg(long)]
        check: bool,
    },
    /// Build everything and run an example three-phase workflow in `target/demo/`
    Demo,
    /// Install the release binary, its man page and shell completions (under `~/.local` by
    /// default)
    Install {
        /// Install under this directory: `bin/`, `share/man/man1/` and the shells' completion
        /// directories in `share/`
        #[arg(long, value_name = "DIR")]
        prefix: Option<PathBuf>,
    },
    /// Run every fuzz target for a bounded time (installs cargo-fuzz if needed)
    Fuzz {
        /// Seconds per target
        #[arg(long, default_value_t = 10)]
        seconds: u32,
        /// Only build every target (CI builds them early, where a narrowed API of core fails)
        #[arg(long)]
        build_only: bool,
    },
    /// Benchmark the release binary against `/bin/true` and the shell scripts (bash + jq) of the
    /// checkpoint systems it replaces (report in `target/bench/report.md`)
    Bench {
        /// A smoke run: fewer runs and smaller sizes (about two minutes)
        #[arg(long)]
        quick: bool,
        /// Rounds of the round-robin; fast commands run in every round, slow ones less often
        /// [default: 200, or 40 with `--quick`]
        #[arg(long, value_name = "N")]
        runs: Option<usize>,
        /// Measure this `checkpoint` binary (relative to the workspace root) instead of building the bundle's
        #[arg(long, value_name = "PATH")]
        binary: Option<PathBuf>,
        /// Also measure this `checkpoint` binary in the same rounds, and compare
        #[arg(long, value_name = "PATH")]
        baseline: Option<PathBuf>,
        /// Only the cases whose key (as in `target/bench/raw.csv`) contains this text, and the
        /// baselines (`/bin/true` and an empty program)
        #[arg(long, value_name = "TEXT")]
        filter: Option<String>,
    },
    /// Check the sources against the rules of ARCHITECTURE.md and CONTRIBUTING.md: `//!` lines,
    /// the code map, import circles, file and function lengths, test harnesses (no build)
    Tidy,
    /// Run the whole test suite, with the real Claude Code CLI for the end-to-end tests
    ///
    /// The client is the oldest supported Claude Code by default; `CHECKPOINT_CLAUDE_CODE=latest`
    /// (or a version) chooses another, installed with npm under `target/`.
    Test {
        /// Only the end-to-end tests (with the real Claude Code CLI)
        #[arg(long)]
        e2e: bool,
        /// Extra arguments for `cargo test`
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        cargo_args: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = project_root();
    if let Err(err) = env::set_current_dir(&root) {
        eprintln!("error: failed to enter `{}`: {err}", root.display());
        return ExitCode::FAILURE;
    }
    let result = match cli.task {
        Task::Dist => dist::run(&root, dist::Build::Shipped).map(|_| ()),
        Task::Codegen { check } => codegen::run(&root, check),
        Task::Demo => demo::run(&root),
        Task::Tidy => tidy::run(&root),
        Task::ReleaseAssets { out, no_pin } => {
            let plugin_dir = root.join("plugin");
            release::assets(
                &root,
                &root.join(out),
                (!no_pin).then_some(plugin_dir.as_path()),
                dist::Build::Shipped,
            )
            .map(|_| ())
        }
        Task::PinChecksums { file } => {
            release::pin_checksums(&root.join("plugin"), &root.join(file))
        }
        Task::Install { prefix } => install::run(&root, prefix.as_deref()),
        Task::Fuzz {
            seconds,
            build_only,
        } => fuzz::run(&root, seconds, build_only),
        Task::Test { e2e, cargo_args } => test::run(&root, e2e, &cargo_args),
        Task::Bench {
            quick,
            runs,
            binary,
            baseline,
            filter,
        } => bench::run(
            &root,
            &bench::Options {
                quick,
                runs,
                binary,
                baseline,
                filter,
            },
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
