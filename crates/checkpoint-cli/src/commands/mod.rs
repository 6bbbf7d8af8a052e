//! One module per subcommand, or per group of verbs on one subject.

pub(crate) mod archive;
pub(crate) mod completions;
pub(crate) mod context;
pub(crate) mod effects;
pub(crate) mod export;
pub(crate) mod files;
pub(crate) mod history;
pub(crate) mod hook;
pub(crate) mod import;
pub(crate) mod init;
pub(crate) mod lifecycle;
pub(crate) mod list;
pub(crate) mod log;
pub(crate) mod mcp;
pub(crate) mod phase;
pub(crate) mod push_pull;
pub(crate) mod report;
pub(crate) mod resume;
pub(crate) mod run;
pub(crate) mod schema;
pub(crate) mod setup;
pub(crate) mod status;
pub(crate) mod task;
pub(crate) mod using;
pub(crate) mod validate;
pub(crate) mod watch;
