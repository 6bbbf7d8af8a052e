//! The integration tests of the `checkpoint` binary: one test binary, one module per area.

mod cli;
mod config;
mod contract;
mod durability;
mod effects;
mod effects_cli;
mod escaping;
mod hooks;
mod journal;
mod journal_size;
mod launcher;
mod lifecycle;
mod mcp;
mod paths;
mod readme;
mod resume;
mod run;
mod secrets;
mod seeds;
mod store;
mod subagents;
mod support;
mod sync;
mod transitions;
mod watch;
