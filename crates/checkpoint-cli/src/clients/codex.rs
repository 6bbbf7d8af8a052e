//! Codex CLI's home: the payloads of its hooks, the JSONL lines of a headless `codex exec
//! --json` session and the session command, and `checkpoint setup codex`.

pub(crate) mod hooks;
pub(crate) mod session;
pub(crate) mod setup;
pub(crate) mod stream;

use std::ffi::OsString;

use miette::Result;

use crate::clients::{
    ClientHome, ReadPayload,
    event::Hooked,
    session::AgentClient,
    setup::{Plan, Target},
};

/// Codex CLI, as `clients::home` finds it. It runs a call its hook asks about, so a refusal is
/// denied.
pub(crate) struct CodexCli;

impl ClientHome for CodexCli {
    fn session(&self, program: OsString, extra: Vec<String>) -> Box<dyn AgentClient> {
        Box::new(session::Codex { program, extra })
    }

    fn setup<'a>(&self, target: &'a Target) -> Result<Plan<'a>> {
        setup::plan(target)
    }

    fn hooked(&self, event: &str, read: ReadPayload<'_>) -> Result<Option<Hooked>, String> {
        let event: hooks::HookEvent = event.parse()?;
        hooks::hooked(event, &read()?)
    }
}
