//! The parts of `checkpoint run` besides its loop (in `commands/run.rs`): the agent client
//! trait and its Claude Code and Codex CLI implementations, the session process, the runner lock, and what the
//! user sees.

pub(crate) mod all;
pub(crate) mod args;
pub(crate) mod claude;
pub(crate) mod client;
pub(crate) mod codex;
pub(crate) mod display;
pub(crate) mod gemini;
pub(crate) mod lock;
pub(crate) mod observed;
pub(crate) mod process;
pub(crate) mod prompt;
pub(crate) mod select;
