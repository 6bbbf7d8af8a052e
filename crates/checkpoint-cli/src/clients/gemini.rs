//! Gemini CLI's boundaries: the payloads of its hooks, the stream-json lines of a headless
//! `gemini -p` session.

pub(crate) mod hooks;
pub(crate) mod stream;
