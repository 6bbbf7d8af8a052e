//! What the agent clients send us and print, one module per client: their payloads and
//! streams as typed documents (their own formats, read leniently), converted to the canonical
//! events of `event`.

pub(crate) mod claude;
pub(crate) mod codex;
pub(crate) mod event;
pub(crate) mod gemini;
pub(crate) mod lenient;

pub(crate) use checkpoint_core::Client;

/// Reads a client's name on the command line (`claude`, `codex` or `gemini`).
pub(crate) fn client_parser() -> impl clap::builder::TypedValueParser<Value = Client> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(Client::ALL.map(Client::name))
        .map(|name| Client::named(&name).expect("a possible value names a client"))
}

#[cfg(test)]
mod tests {
    use checkpoint_contract::hooks::{CLAUDE_CODE, CODEX, GEMINI};

    use super::{claude, codex, gemini};

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
}
