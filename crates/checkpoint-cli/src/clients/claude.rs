//! Claude Code's boundaries: the payloads of its hooks and the stream-json lines of a headless
//! `claude -p` session.

pub(crate) mod hooks;
pub(crate) mod run_catchup;
pub(crate) mod stream;
pub(crate) mod workflow_run;
pub(crate) mod workflow_script;
