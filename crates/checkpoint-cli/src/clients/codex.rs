//! Codex CLI's boundaries: the payloads of its hooks and the JSONL lines of a headless
//! `codex exec --json` session.

pub(crate) mod hooks;
pub(crate) mod stream;
