//! Claude Code's documents: the stream-json lines of a headless `claude -p` session.

pub(crate) mod stream;
