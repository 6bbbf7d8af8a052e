//! Gemini CLI's home: the payloads of its hooks, the stream-json lines of a headless `gemini -p`
//! session and the session command, and `checkpoint setup gemini`.

pub(crate) mod hooks;
pub(crate) mod session;
pub(crate) mod setup;
pub(crate) mod stream;

use std::ffi::OsString;

use checkpoint_core::effects::Refusal;
use miette::Result;
use serde_json::json;

use crate::clients::{
    ClientHome, ReadPayload,
    event::Hooked,
    session::AgentClient,
    setup::{Plan, Target},
};

/// Gemini CLI, as `clients::home` finds it. It has no `ask`, so a refusal is denied.
pub(crate) struct GeminiCli;

impl ClientHome for GeminiCli {
    fn session(&self, program: OsString, extra: Vec<String>) -> Box<dyn AgentClient> {
        Box::new(session::Gemini { program, extra })
    }

    fn setup<'a>(&self, target: &'a Target) -> Result<Plan<'a>> {
        setup::plan(target)
    }

    fn hooked(&self, event: &str, read: ReadPayload<'_>) -> Result<Option<Hooked>, String> {
        let event: hooks::HookEvent = event.parse()?;
        hooks::hooked(event, &read()?)
    }

    fn refuse(&self, refusal: Refusal, reason: &str) -> serde_json::Value {
        json!({ "decision": super::decision_word(refusal), "reason": reason })
    }

    /// Gemini CLI shows a hook's stdout that is not JSON, or its stderr when stdout is empty,
    /// as a message to the user.
    fn always_answers(&self) -> bool {
        true
    }
}
