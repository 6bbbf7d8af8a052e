//! The integration tests of the `checkpoint` binary: one test binary, one module per area.

mod cli;
mod contract;
mod durability;
mod hooks;
mod journal_size;
mod launcher;
mod lifecycle;
mod mcp;
mod readme;
mod resume;
mod run;
mod seeds;
mod store;
mod subagents;
mod support;
mod sync;
mod trust;
mod trust_edges;
mod watch;
