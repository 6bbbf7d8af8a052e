//! What the agent clients send us and print, one module per client: their payloads and
//! streams as typed documents (their own formats, read leniently), converted to the canonical
//! events of `event`.

pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod event;
pub(crate) mod gemini;
pub(crate) mod lenient;

pub(crate) use checkpoint_core::Client;
use checkpoint_core::effects::{Attendance, Refusal};

use crate::env;

/// Reads a client's name on the command line (`claude`, `codex` or `gemini`).
pub(crate) fn client_parser() -> impl clap::builder::TypedValueParser<Value = Client> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(Client::ALL.map(Client::name))
        .map(|name| Client::named(&name).expect("a possible value names a client"))
}

/// Whether a person sits at the session of `client` (as its hook sees it) to answer a question.
///
/// Claude Code says so in `CLAUDE_CODE_ENTRYPOINT`; Codex runs a call its hook asks about and
/// Gemini CLI has no `ask`, so neither can ask anyone.
pub(crate) fn attendance(client: Client) -> Attendance {
    match client {
        Client::Claude => {
            claude_attendance(std::env::var(env::CLAUDE_CODE_ENTRYPOINT).ok().as_deref())
        }
        Client::Codex | Client::Gemini => Attendance::Unattended,
    }
}

/// Claude Code's `entrypoint`: `cli` for an interactive session, `sdk-cli` under `claude -p`,
/// other `sdk-*` for the SDKs; only `cli` has a person at the terminal, and an unknown or
/// missing entrypoint has none.
fn claude_attendance(entrypoint: Option<&str>) -> Attendance {
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
    use checkpoint_core::effects::{Attendance, Refusal};

    use super::{claude_attendance, decision_word};

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
