//! Gemini CLI's boundaries: the payloads of its hooks, the stream-json lines of a headless
//! `gemini -p` session, and our entries in its `settings.json`.

// pub(crate) mod hooks;
// pub(crate) mod settings;
pub(crate) mod stream;
