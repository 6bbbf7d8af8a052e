//! Where output goes: stdout for results (human text escaped, JSON documents), stderr for
//! warnings and notes; and the output settings (`Format`, `ColorChoice`).

use std::{
    borrow::Cow,
    io::{self, Write},
};

use checkpoint_core::store::Recovery;
use clap::ValueEnum;
use serde::Serialize;

use crate::output::text::escape;

/// How results are printed on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Concise text for people
    Human,
    /// One JSON document (with a `version` field)
    Json,
    /// A compact Markdown block written for Claude (`resume`, `status`; others print human text)
    Prompt,
    /// A Mermaid flowchart (`graph`; others print human text)
    Mermaid,
    /// A Graphviz digraph (`graph`; others print human text)
    Dot,
}

/// When to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset
    Auto,
    /// Always colour
    Always,
    /// Never colour
    Never,
}

/// The version of every JSON document `checkpoint` prints.
pub(crate) const JSON_VERSION: u32 = 1;

/// Writes `text` to stdout; a closed pipe is not an error.
pub(crate) fn emit(text: &str) -> io::Result<()> {
    emit_bytes(text.as_bytes())
}

fn emit_bytes(bytes: &[u8]) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Writes human text to stdout with its control characters escaped (see [`escape`]): the text
/// holds notes, titles and reasons as users and agents wrote them. With `color`, the colour
/// sequences (SGR: `ESC [ … m`) are kept, the only ones `checkpoint` writes.
pub(crate) fn emit_human(color: bool, text: &str) -> io::Result<()> {
    emit(&sanitize(color, text))
}

/// Human text with its control characters escaped, but for the colour sequences with `color`
/// (see [`emit_human`]).
pub(super) fn sanitize(color: bool, text: &str) -> Cow<'_, str> {
    if !color {
        return escape(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\u{1b}') {
        out.push_str(&escape(&rest[..at]));
        let after = &rest[at + 1..];
        let sgr_len = after.strip_prefix('[').and_then(|params| {
            let n = params
                .bytes()
                .take_while(|b| b.is_ascii_digit() || *b == b';')
                .count();
            params[n..].starts_with('m').then_some(n + 2)
        });
        match sgr_len {
            Some(len) => {
                out.push_str(&rest[at..at + 1 + len]);
                rest = &after[len..];
            }
            None => {
                out.push_str(&escape("\u{1b}"));
                rest = after;
            }
        }
    }
    out.push_str(&escape(rest));
    Cow::Owned(out)
}

/// Writes a JSON document to stdout.
pub(crate) fn emit_json(value: &impl Serialize) -> io::Result<()> {
    // Room for a status of a hundred phases up front: no copy as the document grows.
    let mut bytes = Vec::with_capacity(64 * 1024);
    serde_json::to_writer_pretty(&mut bytes, value).map_err(io::Error::other)?;
    bytes.push(b'\n');
    emit_bytes(&bytes)
}

/// Prints a warning on stderr.
pub(crate) fn warn(message: &str) {
    to_stderr(&format!("warning: {message}\n"));
}

/// Writes `text` to stderr; an error (a closed pipe: `checkpoint … 2>&1 | head`) is dropped,
/// never a panic, so that the command ends with its own exit code.
fn to_stderr(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

/// Prints clap's error or its help (on stdout, for `--help` and `--version`), as clap words and
/// colours it.
pub(crate) fn clap_error(err: &clap::Error) {
    let _ = err.print();
}

/// Prints a note on stderr.
pub(crate) fn note(message: &str) {
    to_stderr(&format!("{message}\n"));
}

/// Reports what the store recovered, on stderr.
pub(crate) fn warn_recoveries(recoveries: &[Recovery]) {
    for recovery in recoveries {
        warn(&recovery.to_string());
    }
}

/// Says on stderr that secrets were redacted before the state was written.
pub(crate) fn warn_redacted(redacted: usize) {
    if redacted > 0 {
        warn(&format!(
            "{redacted} secret{} redacted before saving (API keys, tokens, passwords or private keys)",
            if redacted == 1 { " was" } else { "s were" }
        ));
    }
}
