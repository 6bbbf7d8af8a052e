//! `checkpoint mcp`: an MCP server over stdio serving the workflows of the project it starts in,
//! as tools (one per state change), resources (each workflow's state and journal) and a prompt
//! (the resume plan).
//!
//! It is a second binary, `checkpoint-mcp`, so that the hooks' binary does not grow an async
//! runtime. Every tool call runs the `checkpoint` binary beside it with `--format json`: the
//! store, lock and redaction are the command line's own, the structured result is the command's
//! JSON document, and an error carries the command's message, code and hint. Stdout carries only
//! protocol messages; the commands' output is captured.

mod gate;
mod invoke;
mod locate;
mod server;
mod summary;
mod tools;

use std::{ffi::OsString, io::Write as _, path::PathBuf, process::ExitCode};

use checkpoint_contract::{env, exit_code};
use rmcp::ServiceExt;

const HELP: &str = "\
Serve the workflows of this project over the Model Context Protocol (stdio)

Usage: checkpoint mcp [--dir <DIR>]

Start it from an MCP client, not a terminal: it reads JSON-RPC messages on stdin and answers on
stdout; logs go to stderr.

Options:
      --dir <DIR>  The checkpoint directory [env: CHECKPOINT_DIR] [default: `.claude/checkpoints`
                   under the git top level]
  -h, --help       Print help
  -V, --version    Print version
";

/// The size of the pipe between the gate and the service, and of the stdin buffer.
const PIPE_BYTES: usize = 64 * 1024;

/// Runs the server with these arguments (the first is the program name) until stdin closes.
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let mut dir = std::env::var_os(env::CHECKPOINT_DIR)
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from);
    let mut args = args.into_iter().skip(1);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("-h" | "--help") => {
                // A closed pipe (`checkpoint-mcp --help | head -1`) is not a panic.
                let _ = std::io::stdout().write_all(HELP.as_bytes());
                return ExitCode::SUCCESS;
            }
            Some("-V" | "--version") => {
                let _ = writeln!(
                    std::io::stdout(),
                    "checkpoint-mcp {}",
                    env!("CARGO_PKG_VERSION")
                );
                return ExitCode::SUCCESS;
            }
            Some("--dir") => match args.next() {
                Some(value) if !value.is_empty() => dir = Some(PathBuf::from(value)),
                _ => return usage("`--dir` needs a directory"),
            },
            Some(flag) if flag.starts_with("--dir=") && flag.len() > "--dir=".len() => {
                dir = Some(PathBuf::from(&flag["--dir=".len()..]));
            }
            _ => return usage(&format!("unexpected argument `{}`", arg.to_string_lossy())),
        }
    }
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(err) => return fail(&format!("failed to read the current directory: {err}")),
    };
    let dir = dir.map(|dir| cwd.join(dir));
    let store_root = dir
        .clone()
        .unwrap_or_else(|| locate::default_store(&locate::project_root(&cwd)));
    let program = locate::checkpoint_binary(std::env::current_exe().ok().as_deref());
    let server = server::Server::new(invoke::Cli::new(program, dir), store_root);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => return fail(&format!("failed to start the async runtime: {err}")),
    };
    let served = runtime.block_on(async {
        // The service talks to the gate through a pipe: the gate reads stdin, answers what is
        // not a valid request itself and passes the rest on (see `gate`).
        let (service_end, gate_end) = tokio::io::duplex(PIPE_BYTES);
        let (from_service, to_service) = tokio::io::split(gate_end);
        let pending = gate::Pending::default();
        let (replies, gate_replies) = tokio::sync::mpsc::unbounded_channel();
        let stdin = tokio::io::BufReader::with_capacity(PIPE_BYTES, tokio::io::stdin());
        tokio::spawn(gate::forward(stdin, to_service, replies, pending.clone()));
        let answers = tokio::spawn(gate::answer(
            tokio::io::BufReader::new(from_service),
            gate_replies,
            tokio::io::stdout(),
            pending,
        ));
        let running = server
            .serve(service_end)
            .await
            .map_err(|err| format!("failed to initialize the MCP session: {err}"))?;
        let quit = running
            .waiting()
            .await
            .map_err(|err| format!("the MCP session failed: {err}"))?;
        // Every answer is written before the process exits.
        match answers.await {
            Ok(Ok(())) => Ok(quit),
            Ok(Err(err)) => Err(format!("failed to write to stdout: {err}")),
            Err(err) => Err(format!("the writer of answers stopped: {err}")),
        }
    });
    match served {
        Ok(_) => ExitCode::SUCCESS,
        Err(message) => fail(&message),
    }
}

fn usage(message: &str) -> ExitCode {
    let _ = writeln!(
        std::io::stderr(),
        "error: {message}\n\nUsage: checkpoint mcp [--dir <DIR>]"
    );
    ExitCode::from(exit_code::USAGE)
}

fn fail(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "error: {message}");
    ExitCode::FAILURE
}
