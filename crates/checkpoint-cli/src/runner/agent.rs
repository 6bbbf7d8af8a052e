//! Which agent client a run drives: `--client`, else `[run] client` in `config.toml`, else
//! Claude Code, each with its program and the user's arguments.

use std::ffi::OsString;

use chrono::{Local, Offset};
use miette::Result;

use crate::{
    clients::Client,
    ctx::Ctx,
    runner::{args::RunArgs, claude::Claude, client::AgentClient, gemini::Gemini},
};

/// The agent client the run drives: `--client`, else `[run] client`, else Claude Code.
pub(crate) fn chosen(ctx: &Ctx, args: &RunArgs) -> Result<Box<dyn AgentClient>> {
    let run = &ctx.config.run;
    let client = args.client.or(run.client.map(Client::from));
    let program = |given: &Option<OsString>, configured: &Option<String>, default: &str| {
        given
            .clone()
            .or_else(|| configured.clone().map(OsString::from))
            .unwrap_or_else(|| default.into())
    };
    Ok(match client.unwrap_or(Client::Claude) {
        Client::Claude => Box::new(Claude {
            program: program(&args.claude, &run.claude, "claude"),
            extra: args.extra.clone(),
            local_offset: Local::now().offset().fix(),
        }),
        Client::Gemini => Box::new(Gemini {
            program: program(&args.gemini, &run.gemini, "gemini"),
            extra: args.extra.clone(),
        }),
        Client::Codex => {
            return Err(crate::failure::Failure::usage(
                "checkpoint::run::client",
                "`checkpoint run --client codex` is not available yet".to_owned(),
            )
            .with_help("use `--client claude` or `--client gemini`".to_owned())
            .into());
        }
    })
}
