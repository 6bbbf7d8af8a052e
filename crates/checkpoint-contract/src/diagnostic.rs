//! The stable diagnostic codes (`code` in an error's JSON report), each a constant named once:
//! the exit code of each is decided in [`crate::exit_code::BY_DIAGNOSTIC`].

/// Declares the codes as constants, and [`ALL`] with each of them in order.
macro_rules! codes {
    ($($(#[doc = $doc:literal])* $name:ident = $code:literal;)*) => {
        $($(#[doc = $doc])* pub const $name: &str = $code;)*
        /// Every code of this module, in order.
        pub const ALL: &[&str] = &[$($name),*];
    };
}

codes! {
    INVALID_ID = "checkpoint::invalid_id";
    RESERVED_ID = "checkpoint::reserved_id";
    INVALID_PLAN = "checkpoint::invalid_plan";
    PLAN_PARSE = "checkpoint::plan_parse";
    PLAN_UNREADABLE = "checkpoint::plan_unreadable";
    CONFIG_PARSE = "checkpoint::config_parse";
    ARCHIVE_NOT_AN_ARCHIVE = "checkpoint::archive::not_an_archive";
    SEED_UNKNOWN = "checkpoint::seed::unknown";
    INVALID_ENV = "checkpoint::invalid_env";
    INVALID_TIME = "checkpoint::invalid_time";
    FILES_BAD_TARGET = "checkpoint::files::bad_target";
    PATH_OUTSIDE_PROJECT = "checkpoint::path_outside_project";
    TEXT_FILE = "checkpoint::text_file";
    EFFECT_EMPTY = "checkpoint::effect::empty";
    RUN_CONFIG = "checkpoint::run::config";
    SYNC_REMOTE = "checkpoint::sync::remote";
    /// A command line clap refused (its own report has no code; the MCP server names it so).
    USAGE = "checkpoint::usage";
    INVALID_TRANSITION = "checkpoint::invalid_transition";
    STORE_EXISTS = "checkpoint::store::exists";
    OUTPUT_EXISTS = "checkpoint::output_exists";
    SEED_EXPORT = "checkpoint::seed::export";
    STORE_STATE_TOO_LARGE = "checkpoint::store::state_too_large";
    STORE_ENTRY_TOO_LARGE = "checkpoint::store::entry_too_large";
    STORE_JOURNAL_FULL = "checkpoint::store::journal_full";
    TEXT_TOO_LARGE = "checkpoint::text_too_large";
    ARCHIVE_UNFINISHED = "checkpoint::archive::unfinished";
    EFFECT_ALLOW_IN_SESSION = "checkpoint::effect::allow_in_session";
    SYNC_DIVERGED = "checkpoint::sync::diverged";
    SYNC_REJECTED = "checkpoint::sync::rejected";
    UNKNOWN_PHASE = "checkpoint::unknown_phase";
    UNKNOWN_TASK = "checkpoint::unknown_task";
    STORE_NOT_FOUND = "checkpoint::store::not_found";
    HISTORY_NO_ENTRY = "checkpoint::history::no_entry";
    ARCHIVE_NOT_FOUND = "checkpoint::archive::not_found";
    FILES_NOTHING_TO_REDO = "checkpoint::files::nothing_to_redo";
    FILES_NO_SNAPSHOT = "checkpoint::files::no_snapshot";
    SEED_LOCATE = "checkpoint::seed::locate";
    NO_WORKFLOW = "checkpoint::no_workflow";
    AMBIGUOUS_WORKFLOW = "checkpoint::ambiguous_workflow";
    STORE_LOCKED = "checkpoint::store::locked";
    RUN_BUSY = "checkpoint::run::busy";
    STORE_CORRUPT = "checkpoint::store::corrupt";
    STORE_UNKNOWN_VERSION = "checkpoint::store::unknown_version";
    STORE_NEWER_VERSION = "checkpoint::store::newer_version";
    STORE_SYMLINK = "checkpoint::store::symlink";
    STORE_TOO_LARGE = "checkpoint::store::too_large";
    FILE_UNREADABLE = "checkpoint::file::unreadable";
    SEED_INVALID = "checkpoint::seed::invalid";
    SYNC_JOURNAL_TOO_LARGE = "checkpoint::sync::journal_too_large";
    SYNC_REMOTE_DAMAGED = "checkpoint::sync::remote_damaged";
    STORE_UNCERTAIN = "checkpoint::store::uncertain";
    INVALID = "checkpoint::invalid";
    IO = "checkpoint::io";
    GIT_COMMIT_FAILED = "checkpoint::git::commit_failed";
    SYNC_GIT = "checkpoint::sync::git";
    MCP_MISSING_SERVER = "checkpoint::mcp::missing_server";
    SESSION_BAD_ID = "checkpoint::session::bad_id";
    SESSION_TOO_LARGE = "checkpoint::session::too_large";
    SESSION_DECLINED = "checkpoint::session::declined";
    SESSION_OTHER_HEAD = "checkpoint::session::other_head";
    SESSION_LOCAL_CHANGES = "checkpoint::session::local_changes";
    SESSION_THROUGH_LINK = "checkpoint::session::through_link";
    SESSION_TRANSCRIPT_EXISTS = "checkpoint::session::transcript_exists";
    SESSION_NONE = "checkpoint::session::none";
    SESSION_NOT_FOUND = "checkpoint::session::not_found";
    SESSION_NOT_ON_REMOTE = "checkpoint::session::not_on_remote";
    SESSION_DAMAGED = "checkpoint::session::damaged";
    SESSION_WRITE_FAILED = "checkpoint::session::write_failed";
    SESSION_UNREADABLE = "checkpoint::session::unreadable";
    SESSION_NO_HOME = "checkpoint::session::no_home";
}

/// The codes of the MCP server's own errors, raised before or around a command (never an exit
/// code of `checkpoint`).
pub mod mcp {
    codes! {
        /// The `checkpoint` binary beside the server is missing or not executable.
        CLI_MISSING = "checkpoint::mcp::cli_missing";
        /// The system refused to start the command.
        SPAWN = "checkpoint::mcp::spawn";
        /// The command printed a document that is not the JSON it should be.
        BAD_DOCUMENT = "checkpoint::mcp::bad_document";
        /// An argument over the kernel's limit for one argument.
        ARGUMENT_TOO_LONG = "checkpoint::mcp::argument_too_long";
        /// A tool's arguments do not match its input schema.
        INVALID_ARGUMENTS = "checkpoint::mcp::invalid_arguments";
        /// The plan object could not be written to a temporary file.
        PLAN_FILE = "checkpoint::mcp::plan_file";
        /// The command failed without writing its error to `CHECKPOINT_ERROR_FILE` (it crashed,
        /// was killed, or is not this release's `checkpoint`), or wrote one that does not parse.
        NO_REPORT = "checkpoint::mcp::no_report";
    }
}
