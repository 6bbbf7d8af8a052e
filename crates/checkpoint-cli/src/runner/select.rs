//! Which agent client a run drives: `--client`, else `[run] client`, else Claude Code; and its
//! program (`--claude`/`--codex`/`--gemini`, else `[run] claude`/`[run] codex`/`[run] gemini`,
//! else the client's name on `PATH`). The session itself is the client's
//! (`clients::ClientHome::session`).

use std::ffi::OsString;

use miette::Result;

use crate::{
    clients::{self, Client, session::AgentClient},
    ctx::Ctx,
    runner::args::RunArgs,
};

/// The client of this run.
pub(crate) fn agent_client(ctx: &Ctx, args: &RunArgs) -> Result<Box<dyn AgentClient>> {
    let run = &ctx.config.run;
    let client = args.client.or(run.client).unwrap_or(Client::Claude);
    // The user's options, one per client (the command line's and `config.toml`'s names).
    let (given, configured) = match client {
        Client::Claude => (&args.claude, &run.claude),
        Client::Codex => (&args.codex, &run.codex),
        Client::Gemini => (&args.gemini, &run.gemini),
    };
    let program = given
        .clone()
        .or_else(|| configured.clone().map(OsString::from))
        .unwrap_or_else(|| client.name().into());
    Ok(clients::home(client).session(program, args.extra.clone()))
}
