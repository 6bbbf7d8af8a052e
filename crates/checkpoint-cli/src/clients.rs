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
