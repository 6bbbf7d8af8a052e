//! The `checkpoint` command line: parses arguments, runs one subcommand, renders its result and
//! maps errors to the documented exit codes.

// Printing happens in `output` only (`output/sink.rs`, which allows it where it prints).
#![deny(clippy::print_stdout, clippy::print_stderr)]
// `pub` only where another crate uses it; inside the crate, `pub(crate)`.
#![deny(unreachable_pub)]

mod args;
mod cli;
mod clients;
mod commands;
mod ctx;
mod env;
mod error_file;
pub use checkpoint_contract::exit_code;
mod failure;
mod git;
mod inside;
mod json;
mod jsonc;
mod locate;
mod output;
mod probe;
mod process_tree;
mod remote;
mod run_activity;
mod runner;
mod services;
mod snapshot;
mod stdin;
mod unfinished;

use std::{
    ffi::{OsStr, OsString},
    path::{Path, PathBuf},
    process::ExitCode,
};

use clap::{CommandFactory, Parser};
use miette::{GraphicalReportHandler, GraphicalTheme, JSONReportHandler, Report};

pub(crate) use crate::cli::Cli;
use crate::{
    cli::{Command, GlobalArgs},
    output::Format,
};

/// The clap command, for completions, the man page and tests.
pub fn command() -> clap::Command {
    Cli::command()
}

/// The completion script of `shell`, which also completes the current store's ids.
pub fn completion_script(shell: clap_complete::Shell) -> String {
    commands::completions::script(shell, command())
}

/// Runs `checkpoint` with these arguments (the first is the program name).
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().collect();
    if let Some(reason) = env::hostile_tz(std::env::var_os(env::TZ).as_deref()) {
        return run_in_utc(&args, &reason);
    }
    let dir = std::env::var_os(env::CHECKPOINT_DIR);
    let workflow = std::env::var_os(env::CHECKPOINT_WORKFLOW);
    if let Some((client, event)) = plain_hook_event(&args, dir.as_deref(), workflow.as_deref()) {
        hook(client, event, dir.as_deref().map(Path::new));
        return ExitCode::from(exit_code::SUCCESS);
    }
    let parsed = match plain_status(&args, dir.as_deref(), workflow.as_deref()) {
        Some(cli) => Ok(cli),
        None => Cli::try_parse_from(&args),
    };
    let cli = match parsed {
        Ok(cli) => cli,
        Err(err) if err.use_stderr() && args.iter().any(|arg| arg == "--no-fail") => {
            // `--no-fail` promises exit 0 with the message on stdout, even for a bad command line.
            let _ = output::emit(&format!("`checkpoint` could not run: {}\n", err.render()));
            return ExitCode::from(exit_code::SUCCESS);
        }
        Err(err) => {
            output::clap_error(&err);
            if !err.use_stderr() {
                return ExitCode::from(exit_code::SUCCESS);
            }
            error_file::write(&error_file::of_clap(&err));
            return ExitCode::from(exit_code::USAGE);
        }
    };
    let color = ctx::use_color(cli.global.color);
    if let Command::Run(args) = &cli.command {
        // The runner chooses its own exit codes (a person must decide, a limit, Ctrl-C).
        let ran = context(&cli.global).and_then(|ctx| commands::run::run(ctx, args));
        return ExitCode::from(match ran {
            Ok(code) => code,
            Err(report) => fail(&report, cli.global.format, color),
        });
    }
    match dispatch(&cli) {
        Ok(()) => ExitCode::from(exit_code::SUCCESS),
        Err(report) => ExitCode::from(fail(&report, cli.global.format, color)),
    }
}

/// The context of a command that acts on a store, from the global options and the environment.
fn context(global: &GlobalArgs) -> miette::Result<ctx::Ctx> {
    ctx::Ctx::new(
        ctx::Location::find(ctx::current_dir()?, global.dir.as_deref()),
        ctx::Settings::from_env(global.workflow.as_deref(), global.format, global.color)?,
    )
}

fn dispatch(cli: &Cli) -> miette::Result<()> {
    match &cli.command {
        Command::Schema(args) => return commands::schema::schema(args),
        Command::Completions(args) => return commands::completions::completions(args, command()),
        Command::CompleteIds(args) => {
            let ctx = context(&cli.global).ok();
            let _ = commands::completions::ids(ctx, args);
            return Ok(());
        }
        Command::Hook(args) => {
            hook(&args.client, &args.event, cli.global.dir.as_deref());
            return Ok(());
        }
        Command::Setup(args) => return commands::setup::setup(args, cli.global.dir.as_deref()),
        Command::Mcp(_) => {
            let code = commands::mcp::serve(cli.global.dir.as_deref())?;
            std::process::exit(code.into());
        }
        _ => {}
    }
    let ctx = context(&cli.global)?;
    services::remote_sync::report_failed_pushes(&ctx);
    match &cli.command {
        Command::Init(args) => commands::init::init(&ctx, args),
        Command::Start(args) => commands::phase::start(&ctx, args),
        Command::Progress(args) => commands::phase::progress(&ctx, args),
        Command::Complete(args) => commands::phase::complete(&ctx, args),
        Command::Fail(args) => commands::phase::fail(&ctx, args),
        Command::Skip(args) => commands::phase::skip(&ctx, args),
        Command::Approve(args) => commands::phase::approve(&ctx, args),
        Command::Reject(args) => commands::phase::reject(&ctx, args),
        Command::Task(command) => commands::task::task(&ctx, command),
        Command::Note(args) => commands::context::note(&ctx, args),
        Command::Decide(args) => commands::context::decide(&ctx, args),
        Command::Files(args) => commands::context::files(&ctx, args),
        Command::Effect(args) => commands::effects::record(&ctx, args),
        Command::Effects(args) => commands::effects::effects(&ctx, args),
        Command::Pause(args) => commands::lifecycle::pause(&ctx, args),
        Command::Unpause => commands::lifecycle::unpause(&ctx),
        Command::Abandon(args) => commands::lifecycle::abandon(&ctx, args),
        Command::Status => commands::status::status(&ctx),
        Command::Use(args) => commands::using::use_workflow(&ctx, args),
        Command::List(args) => commands::list::list(&ctx, args),
        Command::Commit => commands::phase::commit_now(&ctx),
        Command::Replan(args) => commands::phase::replan(&ctx, args),
        Command::Archive(args) => commands::archive::archive(&ctx, args),
        Command::Gc(args) => commands::archive::gc(&ctx, args),
        Command::Restore(args) => commands::archive::restore(&ctx, args),
        Command::Diff(args) if args.files => {
            commands::files::diff(&ctx, &args.from, args.to.as_deref(), args.stat)
        }
        Command::Diff(args) => commands::history::diff(&ctx, args),
        Command::Rewind(args) => {
            // The files first: the state's rewind is journaled only once they are back.
            if args.files {
                commands::files::rewind(&ctx, &args.point, args.yes)?;
            }
            commands::history::rewind(&ctx, args)
        }
        Command::Snapshot(args) => commands::files::snapshot(&ctx, args),
        Command::Snapshots(args) => commands::files::list(&ctx, args),
        Command::Who(args) => commands::who::who(&ctx, args),
        Command::Claim(args) => commands::who::claim(&ctx, args),
        Command::Undo(args) => commands::files::undo(&ctx, args),
        Command::Redo(args) => commands::files::redo(&ctx, args),
        Command::Fork(args) => commands::history::fork(&ctx, args),
        Command::Graph => commands::history::graph(&ctx),
        Command::Resume(args) => commands::resume::resume(&ctx, args),
        Command::Validate(args) => commands::validate::validate(&ctx, args),
        Command::Show => commands::status::show(&ctx),
        Command::Log(args) => commands::log::log(&ctx, args),
        Command::Import(args) => commands::import::import(&ctx, args),
        Command::Export(args) => commands::export::export(&ctx, args),
        Command::Push(args) => commands::push_pull::push(&ctx, args),
        Command::Pull(args) => commands::push_pull::pull(&ctx, args),
        Command::Sync(args) => commands::push_pull::sync(&ctx, args),
        Command::Report(args) => commands::report::report(&ctx, args),
        Command::Watch(args) => commands::watch::watch(&ctx, args),
        Command::Schema(_)
        | Command::Completions(_)
        | Command::CompleteIds(_)
        | Command::Hook(_)
        | Command::Setup(_)
        | Command::Mcp(_)
        | Command::Run(_) => {
            unreachable!("handled above")
        }
    }
}

/// The client and event of `checkpoint hook [--client <client>] <event>` when that is the whole
/// command line and clap would
/// accept the environment as it is, so that the hook can skip building the clap command tree:
/// Claude Code runs the hook on every session start, tool use and stop, and the tree costs
/// most of what a hook with no workflow spends above a bare process start.
///
/// `dir` and `workflow` are `CHECKPOINT_DIR` and `CHECKPOINT_WORKFLOW`, which clap reads too: an
/// empty directory or a workflow id that is not UTF-8 is a usage error there, left to clap.
fn plain_hook_event<'a>(
    args: &'a [OsString],
    dir: Option<&OsStr>,
    workflow: Option<&OsStr>,
) -> Option<(&'a str, &'a str)> {
    let (client, command, event) = match args {
        [_, command, event] => ("claude", command, event),
        [_, command, flag, client, event] if flag == "--client" => (
            client
                .to_str()
                .filter(|client| !client.is_empty() && !client.starts_with('-'))?,
            command,
            event,
        ),
        _ => return None,
    };
    let event = event
        .to_str()
        .filter(|event| !event.is_empty() && !event.starts_with('-'))?;
    let env_ok =
        dir.is_none_or(|dir| !dir.is_empty()) && workflow.is_none_or(|id| id.to_str().is_some());
    (command == "hook" && env_ok).then_some((client, event))
}

/// The command line of `checkpoint status` when it holds only global options clap would take as
/// they are (`--format`, `--color`, `--workflow`/`-w`, `--dir`, each once, with a value) and the
/// environment is one clap accepts, so that `status` skips building the clap command tree, which
/// costs about as much as the rest of `status` at 100 phases does. Anything else is clap's.
fn plain_status(args: &[OsString], dir: Option<&OsStr>, workflow: Option<&OsStr>) -> Option<Cli> {
    let env_ok =
        dir.is_none_or(|dir| !dir.is_empty()) && workflow.is_none_or(|id| id.to_str().is_some());
    if !env_ok {
        return None;
    }
    let mut global = GlobalArgs {
        format: Format::Human,
        color: output::ColorChoice::Auto,
        dir: dir.map(PathBuf::from),
        workflow: workflow.and_then(OsStr::to_str).map(str::to_owned),
    };
    let (mut format, mut color, mut dir, mut workflow) = (None, None, None, None);
    let mut status = false;
    let mut rest = args.get(1..)?.iter();
    while let Some(arg) = rest.next() {
        let arg = arg.to_str()?;
        if arg == "status" && !status {
            status = true;
            continue;
        }
        let (name, value) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, value),
            _ => (arg, rest.next()?.to_str()?),
        };
        if value.is_empty() || value.starts_with('-') {
            return None;
        }
        let slot = match name {
            "--format" => &mut format,
            "--color" => &mut color,
            "--dir" => &mut dir,
            "--workflow" | "-w" => &mut workflow,
            _ => return None,
        };
        if slot.replace(value).is_some() {
            return None;
        }
    }
    if !status {
        return None;
    }
    if let Some(format) = format {
        global.format = clap::ValueEnum::from_str(format, false).ok()?;
    }
    if let Some(color) = color {
        global.color = clap::ValueEnum::from_str(color, false).ok()?;
    }
    if let Some(dir) = dir {
        global.dir = Some(PathBuf::from(dir));
    }
    if let Some(workflow) = workflow {
        global.workflow = Some(workflow.to_owned());
    }
    Some(Cli {
        global,
        command: Command::Status,
    })
}

/// Runs a hook. Hooks never fail a session: everything is reported inside, and the exit code is 0.
fn hook(client: &str, event: &str, dir: Option<&Path>) {
    let now = ctx::now().unwrap_or_else(|_| chrono::Utc::now());
    commands::hook::hook(client, event, dir, now);
}

/// Reports a failed command: on stderr as `format` says, and typed in the error file
/// (`CHECKPOINT_ERROR_FILE`); returns its exit code.
fn fail(report: &Report, format: Format, color: bool) -> u8 {
    render_error(report, format, color);
    error_file::write(&error_file::of_report(report));
    exit_code_of(report)
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

/// Maps an error to its documented exit code: the one its diagnostic code has in
/// [`exit_code::BY_DIAGNOSTIC`], wherever the error was raised.
fn exit_code_of(report: &Report) -> u8 {
    error_file::diagnostic_code(report)
        .map_or(exit_code::FAILURE, |code| exit_code::of_diagnostic(&code))
}

/// Runs the command again with `TZ` empty (UTC, without reading a file), after a warning: a
/// `TZ` naming a FIFO would hang the first read of the local time, `/dev/zero` fill the memory.
fn run_in_utc(args: &[OsString], reason: &str) -> ExitCode {
    output::warn(&format!("{reason}; times are in UTC instead"));
    let hook = args.get(1).is_some_and(|arg| arg == "hook");
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        if let Ok(program) = std::env::current_exe() {
            let err = std::process::Command::new(program)
                .args(args.iter().skip(1))
                .env(env::TZ, "")
                .exec();
            output::warn(&format!(
                "could not run again in UTC: {err}; unset `TZ` or set it to a zone name"
            ));
        }
    }
    if !hook {
        error_file::write(&checkpoint_contract::document::ErrorReport {
            message: format!("{reason}, and `checkpoint` could not run again in UTC"),
            code: Some(checkpoint_contract::diagnostic::USAGE.to_owned()),
            help: Some("unset `TZ` or set it to a zone name".to_owned()),
        });
    }
    ExitCode::from(if hook {
        exit_code::SUCCESS
    } else {
        exit_code::USAGE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_cli() {
        command().debug_assert();
    }

    /// The fast path of `status` takes only command lines that clap parses as the same
    /// `status`, with the same options; every other one is left to clap.
    #[test]
    fn plain_status_agrees_with_clap() {
        let taken: &[&[&str]] = &[
            &["status"],
            &["status", "--format", "json"],
            &["--format", "json", "status"],
            &["status", "--format=json"],
            &["status", "--format", "prompt"],
            &["status", "--format", "human", "--color", "always"],
            &["--color=never", "status", "-w", "payments"],
            &["status", "--workflow", "status"],
            &["--workflow", "status", "status"],
            &["--dir", "x", "status", "--workflow=a", "--format", "json"],
        ];
        let left: &[&[&str]] = &[
            &[],
            &["--format", "json"],
            &["status", "status"],
            &["status", "--format", "JSON"],
            &["status", "--format", "yaml"],
            &["status", "--format"],
            &["status", "--format="],
            &["status", "--format", "json", "--format", "human"],
            &["status", "--color", "sometimes"],
            &["status", "--workflow", "-x"],
            &["status", "-w=a"],
            &["status", "-wa"],
            &["status", "--help"],
            &["status", "-h"],
            &["status", "--version"],
            &["status", "extra"],
            &["status", "--no-fail"],
            &["show"],
            &["log", "status"],
            &["--dir", "", "status"],
        ];
        let argv = |args: &[&str]| -> Vec<OsString> {
            std::iter::once("checkpoint")
                .chain(args.iter().copied())
                .map(OsString::from)
                .collect()
        };
        let env_unset = std::env::var_os(env::CHECKPOINT_DIR).is_none()
            && std::env::var_os(env::CHECKPOINT_WORKFLOW).is_none();
        for args in taken {
            let fast = plain_status(&argv(args), None, None)
                .unwrap_or_else(|| panic!("{args:?} is left to clap"));
            if env_unset {
                let clap = Cli::try_parse_from(argv(args)).unwrap();
                assert_eq!(format!("{fast:?}"), format!("{clap:?}"), "{args:?}");
            }
        }
        for args in left {
            assert!(plain_status(&argv(args), None, None).is_none(), "{args:?}");
        }
        // The environment, as clap reads it: an option given wins over it.
        let from_env = plain_status(
            &argv(&["status"]),
            Some(OsStr::new("/tmp/store")),
            Some(OsStr::new("payments")),
        )
        .unwrap();
        assert_eq!(from_env.global.dir, Some(PathBuf::from("/tmp/store")));
        assert_eq!(from_env.global.workflow.as_deref(), Some("payments"));
        let given = plain_status(
            &argv(&["status", "--dir", "d", "-w", "w"]),
            Some(OsStr::new("/tmp/store")),
            Some(OsStr::new("payments")),
        )
        .unwrap();
        assert_eq!(given.global.dir, Some(PathBuf::from("d")));
        assert_eq!(given.global.workflow.as_deref(), Some("w"));
        assert!(plain_status(&argv(&["status"]), Some(OsStr::new("")), None).is_none());
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let not_utf8 = Some(OsStr::from_bytes(b"\xff"));
            assert!(plain_status(&argv(&["status"]), None, not_utf8).is_none());
        }
    }

    /// The hook's fast path takes only command lines that clap parses as the same hook, with
    /// no directory given.
    #[test]
    fn plain_hook_event_agrees_with_clap() {
        let claude = "claude";
        let codex = "codex";
        type Case<'a> = (&'a [&'a str], Option<(&'a str, &'a str)>);
        let cases: &[Case<'_>] = &[
            (&["hook", "SessionStart"], Some((claude, "SessionStart"))),
            (&["hook", "Stop"], Some((claude, "Stop"))),
            (&["hook", "help"], Some((claude, "help"))),
            (
                &["hook", "--client", "codex", "Stop"],
                Some((codex, "Stop")),
            ),
            (
                &["hook", "--client", "gemini", "AfterTool"],
                Some(("gemini", "AfterTool")),
            ),
            (
                &["hook", "--client", "claude", "Stop"],
                Some((claude, "Stop")),
            ),
            (&["hook", "--client", "vim", "Stop"], Some(("vim", "Stop"))),
            (&["hook", "--client", "", "Stop"], None),
            (&["hook", "--client", "-x", "Stop"], None),
            (&["hook", "--client", "codex", "--help"], None),
            (&["hook", "--client=codex", "Stop"], None),
            (&["hook", "--format", "json", "Stop"], None),
            (&["hook", "Stop", "--client", "codex"], None),
            (&["hook", ""], None),
            (&["hook", "--help"], None),
            (&["hook", "-h"], None),
            (&["hook"], None),
            (&["hook", "Stop", "--format", "json"], None),
            (&["--dir", "x", "hook", "Stop"], None),
            (&["status", "Stop"], None),
            (&["hooks", "Stop"], None),
        ];
        for (args, expect) in cases {
            let argv: Vec<OsString> = std::iter::once("checkpoint")
                .chain(args.iter().copied())
                .map(OsString::from)
                .collect();
            assert_eq!(plain_hook_event(&argv, None, None), *expect, "{args:?}");
            if let Some((client, event)) = expect {
                let cli = Cli::try_parse_from(&argv).unwrap();
                let Command::Hook(hook) = &cli.command else {
                    panic!("{args:?} is not a hook");
                };
                assert_eq!(
                    (hook.client.as_str(), hook.event.as_str()),
                    (*client, *event)
                );
                if std::env::var_os(env::CHECKPOINT_DIR).is_none() {
                    assert_eq!(cli.global.dir, None);
                }
            }
        }
        let argv: Vec<OsString> = ["checkpoint", "hook", "Stop"].map(OsString::from).to_vec();
        let dir = Some(OsStr::new("/tmp/store"));
        assert_eq!(plain_hook_event(&argv, dir, None), Some((claude, "Stop")));
        assert_eq!(plain_hook_event(&argv, Some(OsStr::new("")), None), None);
        assert_eq!(
            plain_hook_event(&argv, None, Some(OsStr::new(""))),
            Some((claude, "Stop"))
        );
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let not_utf8 = Some(OsStr::from_bytes(b"\xff"));
            assert_eq!(plain_hook_event(&argv, None, not_utf8), None);
        }
    }

    /// Every kind of refused command line is a usage error with clap's message, its usage as
    /// the fix; a request for help or the version is no error at all.
    #[test]
    fn a_refused_command_line_is_a_usage_error() {
        for (args, needle) in [
            (
                &["checkpoint", "nope"][..],
                "unrecognized subcommand 'nope'",
            ),
            (
                &["checkpoint", "status", "--bogus"],
                "unexpected argument '--bogus'",
            ),
            (
                &["checkpoint", "start"],
                "required arguments were not provided",
            ),
            (
                &["checkpoint", "--format", "xml", "status"],
                "invalid value 'xml'",
            ),
        ] {
            let err = Cli::try_parse_from(args).unwrap_err();
            assert!(err.use_stderr(), "{args:?}");
            let report = error_file::of_clap(&err);
            assert_eq!(
                report.code.as_deref(),
                Some(checkpoint_contract::diagnostic::USAGE),
                "{args:?}"
            );
            assert!(report.message.contains(needle), "{args:?}: {report:?}");
            assert!(!report.message.starts_with("error:"), "{report:?}");
            assert!(
                report
                    .help
                    .as_deref()
                    .is_some_and(|help| help.contains("--help")),
                "{args:?}: {report:?}"
            );
        }
        for args in [["checkpoint", "--help"], ["checkpoint", "--version"]] {
            assert!(
                !Cli::try_parse_from(args).unwrap_err().use_stderr(),
                "{args:?}"
            );
        }
    }
}
