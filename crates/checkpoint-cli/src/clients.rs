//! Every agent client in one home each: `clients/<client>/` holds its hook payloads
//! (`hooks.rs`), the lines of its headless session (`stream.rs`), the session command the runner
//! starts (`session.rs`), the files `checkpoint setup` writes (`setup.rs`) and anything else of
//! its own; the hooks it registers are the contract's table (`checkpoint_contract::hooks`).
//! Each client is one `ClientHome`, found by `home`: the runner, the hook and `setup` ask it and
//! name no client.
//!
//! What the clients share: the canonical events their payloads become (`event.rs`), the lenient
//! reading of a payload (`lenient.rs`), the session trait and its events (`session.rs`), the
//! pieces every setup writer uses (`setup.rs`). Deliberately absent: any client's name outside
//! its own directory and `home`; a client never names another.

pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod event;
pub(crate) mod gemini;
pub(crate) mod lenient;
pub(crate) mod session;
pub(crate) mod setup;

use std::{collections::BTreeSet, ffi::OsString};

pub(crate) use checkpoint_core::Client;
use checkpoint_core::effects::{Attendance, Refusal};
use miette::Result;

use crate::clients::{
    event::Hooked,
    session::AgentClient,
    setup::{Plan, Target},
};

/// Reads a client's name on the command line (`claude`, `codex` or `gemini`).
pub(crate) fn client_parser() -> impl clap::builder::TypedValueParser<Value = Client> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(Client::ALL.map(Client::name))
        .map(|name| Client::named(&name).expect("a possible value names a client"))
}

/// The reader of a hook's payload on stdin, called only for an event that has one to act on.
pub(crate) type ReadPayload<'a> = &'a dyn Fn() -> Result<Vec<u8>, String>;

/// One agent client, everything about it that the runner, the hook and `setup` ask.
pub(crate) trait ClientHome: Sync {
    /// The headless session the runner drives: `program` with the user's `extra` arguments.
    fn session(&self, program: OsString, extra: Vec<String>) -> Box<dyn AgentClient>;

    /// The files `checkpoint setup` edits for `target`, and what the client needs before its
    /// hooks run.
    fn setup<'a>(&self, target: &'a Target) -> Result<Plan<'a>>;

    /// Hook `event` (the client's name for it) as a canonical event, its payload read by
    /// `read`; `None` for an event that is accepted and does nothing. The error names what is
    /// wrong, and nothing is recorded.
    fn hooked(&self, event: &str, read: ReadPayload<'_>) -> Result<Option<Hooked>, String>;

    /// Whether hook `event` says the session ended (its write claims are released then).
    fn ends_session(&self, _event: &str) -> bool {
        false
    }

    /// Whether a sub-agent of `agent_type` is an agent of the client's own workflow runs
    /// (Claude Code's `Workflow` tool), whose progress the hook records in the run's workflow.
    fn is_workflow_agent(&self, _agent_type: Option<&str>) -> bool {
        false
    }

    /// The sessions the client lists as live; `None` when it keeps no list (then a writer is
    /// live until it is idle).
    fn live_sessions(&self) -> Option<BTreeSet<String>> {
        None
    }

    /// Whether a person sits at the session (as its hook sees it) to answer a question; a
    /// client that cannot ask has nobody.
    fn attendance(&self) -> Attendance {
        Attendance::Unattended
    }

    /// How a refused call is refused: asked of a person where the client can ask one, else
    /// denied.
    fn refusal(&self) -> Refusal {
        Refusal::for_session(self.attendance())
    }

    /// The hook's answer that refuses a tool call before it runs, with the reason the model
    /// (and the person) reads, in the client's form.
    fn refuse(&self, refusal: Refusal, reason: &str) -> serde_json::Value {
        serde_json::json!({ "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision_word(refusal),
            "permissionDecisionReason": reason,
        } })
    }

    /// Whether every hook answers with a JSON object, an empty one when it has nothing to say
    /// (a client that shows any other output to the user).
    fn always_answers(&self) -> bool {
        false
    }
}

/// `client`'s home: the one place a client's name becomes its code.
pub(crate) fn home(client: Client) -> &'static dyn ClientHome {
    match client {
        Client::Claude => &claude::ClaudeCode,
        Client::Codex => &codex::CodexCli,
        Client::Gemini => &gemini::GeminiCli,
    }
}

/// Claude Code's `entrypoint`: `cli` for an interactive session, `sdk-cli` under `claude -p`,
/// other `sdk-*` for the SDKs; only `cli` has a person at the terminal, and an unknown or
/// missing entrypoint has none.
pub(crate) fn claude_attendance(entrypoint: Option<&str>) -> Attendance {
    match entrypoint {
        Some("cli") => Attendance::Attended,
        _ => Attendance::Unattended,
    }
}

/// The word for `refusal` in a hook's decision: Claude Code's and Codex's
/// `permissionDecision`, Gemini CLI's `decision`.
pub(crate) fn decision_word(refusal: Refusal) -> &'static str {
    match refusal {
        Refusal::Deny => "deny",
        Refusal::Ask => "ask",
    }
}

#[cfg(test)]
mod tests {
    use checkpoint_contract::hooks::{CLAUDE_CODE, CODEX, GEMINI};
    use checkpoint_core::effects::{Attendance, Refusal};

    use super::{Client, claude, claude_attendance, codex, decision_word, gemini, home};

    /// Every hook the contract's table registers (in the plugin and by `setup`) is an event
    /// the client's hook reads; a name the hook does not know would only warn in every session.
    #[test]
    fn every_registered_hook_is_one_the_client_reads() {
        for hook in CLAUDE_CODE {
            let event: Result<claude::hooks::HookEvent, _> = hook.event.parse();
            assert!(event.is_ok(), "{hook:?}");
        }
        for hook in CODEX {
            let event: Result<codex::hooks::HookEvent, _> = hook.event.parse();
            assert!(event.is_ok(), "{hook:?}");
        }
        for hook in GEMINI {
            let event: Result<gemini::hooks::HookEvent, _> = hook.event.parse();
            assert!(event.is_ok(), "{hook:?}");
        }
    }

    /// Each client's name finds its own home: the session it starts says the client's name
    /// (journaled in `run_start`), and a hook event is read by the client that has it, by its
    /// own event names (Gemini CLI's `AfterAgent` is no event of the others).
    #[test]
    fn each_client_finds_its_own_home() {
        for client in Client::ALL {
            let session = home(client).session("program".into(), Vec::new());
            assert_eq!(session.name(), client.name());
        }
        let no_payload = || Err("no payload".to_owned());
        for (client, unknown) in [
            (Client::Claude, "unknown hook event `AfterAgent`"),
            (Client::Codex, "unknown Codex hook event `AfterAgent`"),
            (Client::Gemini, "no payload"),
        ] {
            let err = home(client).hooked("AfterAgent", &no_payload).unwrap_err();
            assert!(err.contains(unknown), "{client:?}: {err}");
        }
        let err = home(Client::Gemini)
            .hooked("Stop", &no_payload)
            .unwrap_err();
        assert!(
            err.contains("unknown Gemini CLI hook event `Stop`; nothing recorded"),
            "{err}"
        );
    }

    #[test]
    fn only_claude_codes_interactive_entrypoint_has_a_person_to_ask() {
        assert_eq!(claude_attendance(Some("cli")), Attendance::Attended);
        for entrypoint in [
            Some("sdk-cli"),
            Some("sdk-ts"),
            Some("sdk-py"),
            Some(""),
            Some("CLI"),
            None,
        ] {
            assert_eq!(
                claude_attendance(entrypoint),
                Attendance::Unattended,
                "{entrypoint:?}"
            );
        }
        assert_eq!(decision_word(Refusal::Deny), "deny");
        assert_eq!(decision_word(Refusal::Ask), "ask");
    }
}
