//! The `checkpoint` command line: parses arguments, runs one subcommand, renders its result and
//! maps errors to the documented exit codes.

// Printing happens in `output.rs` only.
#![warn(clippy::print_stdout, clippy::print_stderr)]

mod cli;
mod commands;
mod ctx;
mod env;
mod exit_code;
mod git;
mod output;
mod probe;
mod report;

use std::{ffi::OsString, process::ExitCode};

use clap::{CommandFactory, Parser};
use miette::{GraphicalReportHandler, GraphicalTheme, JSONReportHandler, Report};

pub use crate::cli::Cli;
use crate::cli::{Command, Format};

/// The clap command, for completions, the man page and tests.
pub fn command() -> clap::Command {
    Cli::command()
}

/// Runs `checkpoint` with these arguments (the first is the program name).
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(err) if err.use_stderr() && args.iter().any(|arg| arg == "--no-fail") => {
            // `--no-fail` promises exit 0 with the message on stdout, even for a bad command line.
            let _ = output::emit(&format!("`checkpoint` could not run: {}\n", err.render()));
            return ExitCode::from(exit_code::SUCCESS);
        }
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() {
                exit_code::USAGE
            } else {
                exit_code::SUCCESS
            });
        }
    };
    let color = ctx::use_color(cli.global.color);
    match dispatch(&cli) {
        Ok(()) => ExitCode::from(exit_code::SUCCESS),
        Err(report) => {
            render_error(&report, cli.global.format, color);
            ExitCode::from(exit_code_of(&report))
        }
    }
}

fn dispatch(cli: &Cli) -> miette::Result<()> {
    match &cli.command {
        Command::Schema(args) => return commands::schema::run(args),
        Command::Completions(args) => return commands::completions::run(args),
        Command::Hook(args) => {
            // Hooks never fail a session: everything is reported inside, and the exit code is 0.
            let now = ctx::now().unwrap_or_else(|_| chrono::Utc::now());
            commands::hook::run(args, cli.global.dir.as_deref(), now);
            return Ok(());
        }
        _ => {}
    }
    let ctx = ctx::Ctx::new(&cli.global)?;
    match &cli.command {
        Command::Init(args) => commands::init::run(&ctx, args),
        Command::Start(args) => commands::phase::start(&ctx, args),
        Command::Progress(args) => commands::phase::progress(&ctx, args),
        Command::Complete(args) => commands::phase::complete(&ctx, args),
        Command::Fail(args) => commands::phase::fail(&ctx, args),
        Command::Skip(args) => commands::phase::skip(&ctx, args),
        Command::Approve(args) => commands::phase::approve(&ctx, args),
        Command::Reject(args) => commands::phase::reject(&ctx, args),
        Command::Task(command) => commands::task::run(&ctx, command),
        Command::Note(args) => commands::context::note(&ctx, args),
        Command::Decide(args) => commands::context::decide(&ctx, args),
        Command::Files(args) => commands::context::files(&ctx, args),
        Command::Pause(args) => commands::lifecycle::pause(&ctx, args),
        Command::Unpause => commands::lifecycle::unpause(&ctx),
        Command::Abandon(args) => commands::lifecycle::abandon(&ctx, args),
        Command::Status => commands::status::status(&ctx),
        Command::List(args) => commands::list::run(&ctx, args),
        Command::Commit => commands::phase::commit_now(&ctx),
        Command::Replan(args) => commands::phase::replan(&ctx, args),
        Command::Archive(args) => commands::archive::archive(&ctx, args),
        Command::Gc(args) => commands::archive::gc(&ctx, args),
        Command::Restore(args) => commands::archive::restore(&ctx, args),
        Command::Diff(args) => commands::history::diff(&ctx, args),
        Command::Rewind(args) => commands::history::rewind(&ctx, args),
        Command::Fork(args) => commands::history::fork(&ctx, args),
        Command::Graph => commands::history::graph(&ctx),
        Command::Resume(args) => commands::resume::run(&ctx, args),
        Command::Validate(args) => commands::validate::run(&ctx, args),
        Command::Show => commands::status::show(&ctx),
        Command::Log(args) => commands::log::run(&ctx, args),
        Command::Import(args) => commands::import::run(&ctx, args),
        Command::Export(args) => commands::export::run(&ctx, args),
        Command::Schema(_) | Command::Completions(_) | Command::Hook(_) => {
            unreachable!("handled above")
        }
    }
}

fn render_error(report: &Report, format: Format, color: bool) {
    let mut text = String::new();
    let rendered = match format {
        Format::Json => JSONReportHandler::new().render_report(&mut text, report.as_ref()),
        _ => {
            let theme = if color {
                GraphicalTheme::unicode()
            } else {
                GraphicalTheme::unicode_nocolor()
            };
            GraphicalReportHandler::new_themed(theme)
                .with_wrap_lines(false)
                .render_report(&mut text, report.as_ref())
        }
    };
    if rendered.is_err() {
        text = format!("error: {report}");
    }
    output::note(text.trim_end());
}

/// Maps an error to its documented exit code.
fn exit_code_of(report: &Report) -> u8 {
    use checkpoint_core::Error;
    if report
        .downcast_ref::<commands::validate::Invalid>()
        .is_some()
    {
        return exit_code::INVALID;
    }
    if report.downcast_ref::<ctx::WorkflowChoiceError>().is_some() {
        return exit_code::NOT_FOUND;
    }
    match report.downcast_ref::<Error>() {
        Some(Error::InvalidTransition { .. }) => exit_code::REFUSED,
        Some(Error::UnknownPhase { .. } | Error::UnknownTask { .. } | Error::NotFound { .. }) => {
            exit_code::NOT_FOUND
        }
        Some(
            Error::AlreadyExists { .. } | Error::OutputExists { .. } | Error::SeedExport { .. },
        ) => exit_code::REFUSED,
        Some(Error::SeedLocate { .. }) => exit_code::NOT_FOUND,
        Some(Error::SeedParse { .. }) => exit_code::UNTRUSTED,
        Some(Error::UnknownSeed { .. }) => exit_code::USAGE,
        Some(Error::Locked { .. }) => exit_code::LOCKED,
        Some(
            Error::Corrupt { .. }
            | Error::NewerVersion { .. }
            | Error::Symlink { .. }
            | Error::TooLarge { .. },
        ) => exit_code::UNTRUSTED,
        Some(Error::MaybeSaved { .. }) => exit_code::MAYBE_SAVED,
        Some(
            Error::InvalidId { .. }
            | Error::InvalidPlan { .. }
            | Error::PlanParse { .. }
            | Error::ConfigParse { .. },
        ) => exit_code::USAGE,
        Some(Error::Io { .. }) | None => exit_code::FAILURE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_cli() {
        command().debug_assert();
    }
}
