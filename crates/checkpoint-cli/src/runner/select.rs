//! Which agent client a run drives: `--client`, else `[run] client`, else Claude Code; and its
//! program (`--claude`/`--codex`/`--gemini`, else `[run] claude`/`[run] codex`/`[run] gemini`,
//! else on `PATH`).

use std::ffi::OsString;

use chrono::{Local, Offset};
use miette::Result;

use crate::{
    clients::Client,
    ctx::Ctx,
    runner::{args::RunArgs, claude::Claude, client::AgentClient, codex::Codex, gemini::Gemini},
};

/// The client of this run.
pub(crate) fn agent_client(ctx: &Ctx, args: &RunArgs) -> Result<Box<dyn AgentClient>> {
    let run = &ctx.config.run;
    let program = |given: &Option<OsString>, configured: &Option<String>, default: &str| {
        given
            .clone()
            .or_else(|| configured.clone().map(OsString::from))
            .unwrap_or_else(|| default.into())
    };
    Ok(match args.client.or(run.client).unwrap_or(Client::Claude) {
        Client::Claude => Box::new(Claude {
            program: program(&args.claude, &run.claude, "claude"),
            extra: args.extra.clone(),
            local_offset: Local::now().offset().fix(),
        }),
        Client::Codex => Box::new(Codex {
            program: program(&args.codex, &run.codex, "codex"),
            extra: args.extra.clone(),
        }),
        Client::Gemini => Box::new(Gemini {
            program: program(&args.gemini, &run.gemini, "gemini"),
            extra: args.extra.clone(),
        }),
    })
}
