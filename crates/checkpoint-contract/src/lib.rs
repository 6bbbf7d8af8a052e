//! The contract between `checkpoint`'s own programs (as `nextest-metadata` is cargo-nextest's):
//! the JSON documents the MCP server reads, the exit codes with the one map from diagnostic
//! codes, the diagnostic codes, the environment variables, and the hooks each client registers. The command line produces them,
//! the MCP server reads them typed, and `cargo xtask codegen` writes the docs' tables from them,
//! so a renamed field, code or variable breaks the build or a test, not a user.
//!
//! Deliberately absent: anything of the domain (`checkpoint-core`'s types). A document here is a
//! serializable counterpart, with plain strings where core has enums, so this crate depends on
//! serde alone and every program can afford it.

pub mod diagnostic;
pub mod document;
pub mod env;
pub mod exit_code;
pub mod hooks;
