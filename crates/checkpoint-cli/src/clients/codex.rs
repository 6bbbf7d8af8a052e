//! Codex CLI's boundaries: the payloads of its hooks.

pub(crate) mod hooks;
