//! The error type of the core library, with stable diagnostic codes and hints.

use std::{io, path::PathBuf, sync::Arc};

use miette::{Diagnostic, NamedSource, SourceSpan};

/// The longest line a diagnostic shows with a label under it.
///
/// miette cannot draw a label past column 65535 (it panics), and a snippet of such a line would be
/// unreadable anyway: a file with longer lines is named in the error but not shown.
const MAX_SHOWN_LINE: usize = 1000;

/// Whether a diagnostic may show `text` with a label: no line is longer than [`MAX_SHOWN_LINE`].
pub(crate) fn showable(text: &str) -> bool {
    text.split('\n').all(|line| line.len() <= MAX_SHOWN_LINE)
}

/// A shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the core, each with a stable code.
///
/// Source code is shared behind an `Arc` so that the error, and every `Result` carrying it, stays
/// small (clippy's `result_large_err`).
#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    /// An identifier has characters or a shape we refuse.
    #[error("invalid {what} `{value}`: {reason}")]
    #[diagnostic(
        code(checkpoint::invalid_id),
        help(
            "use letters, digits, `.`, `_`, `-` and `@` only (at most 128 characters, not `.` or `..`)"
        )
    )]
    InvalidId {
        what: &'static str,
        value: String,
        reason: &'static str,
    },

    /// A new workflow's id is a name the store uses, or keeps for later.
    #[error("invalid workflow id `{id}`: the store uses the name `{name}` for itself")]
    #[diagnostic(
        code(checkpoint::reserved_id),
        help("choose another id; names the store keeps are {names}")
    )]
    ReservedId {
        id: String,
        name: &'static str,
        names: String,
    },

    /// A plan (from `--phase` or `--plan`) does not describe a valid phase graph.
    #[error("invalid plan: {message}")]
    #[diagnostic(code(checkpoint::invalid_plan), help("{help}"))]
    InvalidPlan { message: String, help: String },

    /// A plan file does not parse.
    #[error("failed to parse plan file `{path}`: {message}")]
    #[diagnostic(
        code(checkpoint::plan_parse),
        help(
            "a plan is JSON or TOML: `{{\"phases\": [{{\"id\": \"design\"}}, {{\"id\": \"build\", \"dependencies\": [\"design\"]}}]}}`"
        )
    )]
    PlanParse {
        path: PathBuf,
        message: String,
        #[source_code]
        source_code: Arc<NamedSource<String>>,
        #[label("here")]
        span: Option<SourceSpan>,
    },

    /// The config file does not parse.
    #[error("failed to parse config file `{path}`: {message}")]
    #[diagnostic(
        code(checkpoint::config_parse),
        help("see the settings in docs/resume.md; every key is optional")
    )]
    ConfigParse {
        path: PathBuf,
        message: String,
        #[source_code]
        source_code: NamedSource<String>,
        #[label("here")]
        span: Option<SourceSpan>,
    },

    /// A transition is not allowed from the current state.
    #[error("{message}")]
    #[diagnostic(code(checkpoint::invalid_transition), help("{help}"))]
    InvalidTransition { message: String, help: String },

    /// A phase id is not part of the workflow.
    #[error("no phase `{phase}` in workflow `{workflow}`{suggestion}")]
    #[diagnostic(code(checkpoint::unknown_phase), help("phases are: {known}"))]
    UnknownPhase {
        workflow: String,
        phase: String,
        known: String,
        /// ` (did you mean `x`?)`, or empty.
        suggestion: String,
    },

    /// A task id is not part of the phase.
    #[error("no task `{task}` in phase `{phase}`{suggestion}")]
    #[diagnostic(
        code(checkpoint::unknown_task),
        help("add it first with `checkpoint task add {phase} {task}`")
    )]
    UnknownTask {
        phase: String,
        task: String,
        /// ` (did you mean `x`?)`, or empty.
        suggestion: String,
    },

    /// An I/O operation failed; the path says where.
    #[error("failed to {action} `{path}`")]
    #[diagnostic(code(checkpoint::io))]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// The state was written to disk but a later step failed, so the outcome is uncertain.
    #[error("failed to confirm the write of `{path}`: it may have been saved")]
    #[diagnostic(
        code(checkpoint::store::uncertain),
        help("re-read the state with `checkpoint status` before retrying the command")
    )]
    MaybeSaved {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// No workflow exists with that id.
    #[error("no workflow `{id}` in `{root}`{suggestion}")]
    #[diagnostic(
        code(checkpoint::store::not_found),
        help(
            "create it with `checkpoint init {id} --phase <id>`, or list workflows with `checkpoint list`"
        )
    )]
    NotFound {
        id: String,
        root: PathBuf,
        /// ` (did you mean `x`?)`, or empty.
        suggestion: String,
    },

    /// A journal entry asked for by its sequence number does not exist.
    #[error("no journal entry {seq}: the journal holds entries 1 to {last}")]
    #[diagnostic(
        code(checkpoint::history::no_entry),
        help("pick a sequence number from `checkpoint log`")
    )]
    NoJournalEntry { seq: u64, last: u64 },

    /// A workflow with that id already exists.
    #[error("workflow `{id}` already exists in `{dir}`")]
    #[diagnostic(
        code(checkpoint::store::exists),
        help("pick another id, or pass `--fresh` to archive the existing workflow and start over")
    )]
    AlreadyExists { id: String, dir: PathBuf },

    /// The lock is held by another process for longer than the timeout.
    #[error("timed out after {waited_ms} ms waiting for the lock on `{path}`{holder}")]
    #[diagnostic(code(checkpoint::store::locked), help("{help}"))]
    Locked {
        path: PathBuf,
        waited_ms: u128,
        /// ` (held by <holder>)`, or empty when the holder is unknown.
        holder: String,
        help: String,
    },

    /// A state file does not parse or violates the model's invariants.
    #[error("failed to load `{path}`: {message}")]
    #[diagnostic(code(checkpoint::store::corrupt), help("{help}"))]
    Corrupt {
        path: PathBuf,
        message: String,
        help: String,
        #[source_code]
        source_code: Option<Arc<NamedSource<String>>>,
        #[label("here")]
        span: Option<SourceSpan>,
    },

    /// The state has a schema version no `checkpoint` ever wrote (0).
    #[error(
        "`{path}` has schema version {found}, which no `checkpoint` writes (this binary knows {supported})"
    )]
    #[diagnostic(
        code(checkpoint::store::unknown_version),
        help(
            "the file is not one `checkpoint` wrote, and was left untouched; move it aside to rebuild the state from the journal"
        )
    )]
    UnknownVersion {
        path: PathBuf,
        found: u32,
        supported: u32,
    },

    /// The state was written by a newer `checkpoint`.
    #[error("`{path}` has schema version {found}, newer than this binary's {supported}")]
    #[diagnostic(
        code(checkpoint::store::newer_version),
        help("upgrade `checkpoint`; the file was left untouched")
    )]
    NewerVersion {
        path: PathBuf,
        found: u32,
        supported: u32,
    },

    /// We refuse to write through a symbolic link.
    #[error("refusing to use `{path}`: it is a symbolic link")]
    #[diagnostic(
        code(checkpoint::store::symlink),
        help(
            "state files must be regular files inside the checkpoint directory; move the link away"
        )
    )]
    Symlink { path: PathBuf },

    /// A state would be larger than any reader accepts: it is not written.
    #[error(
        "refusing to write `{path}`: the state would be {size} bytes, over the limit of {limit} bytes"
    )]
    #[diagnostic(
        code(checkpoint::store::state_too_large),
        help("nothing was written; shorten the texts or split the work into several workflows")
    )]
    StateTooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },

    /// A journal entry would be longer than any reader accepts as one line: it is not written.
    #[error(
        "refusing to append to `{path}`: the entry would be a line of {size} bytes, over the limit of {limit} bytes"
    )]
    #[diagnostic(
        code(checkpoint::store::entry_too_large),
        help(
            "nothing was written; shorten the text, or keep the long part in a file of the project and name it with `checkpoint files`"
        )
    )]
    EntryTooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },

    /// A journal would grow past the size writers keep it under: the entry is not written.
    #[error(
        "refusing to append to `{path}`: the journal would be {size} bytes, over the limit of {limit} bytes"
    )]
    #[diagnostic(
        code(checkpoint::store::journal_full),
        help(
            "nothing was written, and every command still reads the workflow; go on in a workflow with a fresh journal (`checkpoint fork <id> --as <new-id>`), then `checkpoint archive` this one"
        )
    )]
    JournalFull {
        path: PathBuf,
        size: u64,
        limit: u64,
    },

    /// A directory given to `restore` holds a state and a journal, but is not an archive.
    #[error("refusing to restore `{path}`: {reason}")]
    #[diagnostic(
        code(checkpoint::archive::not_an_archive),
        help(
            "an archive is a workflow directory `checkpoint archive` moved aside, whose `state.json` equals its `journal.jsonl`'s replay; nothing was moved"
        )
    )]
    NotAnArchive { path: PathBuf, reason: String },

    /// A file the program did not write is not one it can read: not a regular file (a FIFO,
    /// a device, a directory), or too large.
    #[error("refusing to read `{path}`: {reason}")]
    #[diagnostic(
        code(checkpoint::file::unreadable),
        help("give the path of a regular file of a sane size; nothing was read or changed")
    )]
    Unreadable { path: PathBuf, reason: String },

    /// A file is larger than we are willing to read.
    #[error("refusing to read `{path}`: {size} bytes is over the limit of {limit} bytes")]
    #[diagnostic(
        code(checkpoint::store::too_large),
        help("this is not a state file `checkpoint` wrote; move it away")
    )]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    /// A file of another checkpoint system does not parse, or does not describe a workflow.
    #[error("failed to import `{path}` as {format}: {message}")]
    #[diagnostic(code(checkpoint::seed::invalid), help("{help}"))]
    SeedParse {
        path: PathBuf,
        format: &'static str,
        message: String,
        help: &'static str,
        #[source_code]
        source_code: Arc<NamedSource<String>>,
        #[label("here")]
        span: Option<SourceSpan>,
    },

    /// A file is not in any format `checkpoint import` reads.
    #[error("failed to recognise `{path}` as the state of another checkpoint system")]
    #[diagnostic(
        code(checkpoint::seed::unknown),
        help("name its format with `--from <format>`: {formats}")
    )]
    UnknownSeed { path: PathBuf, formats: String },

    /// A directory holds no state file of another checkpoint system, or several.
    #[error("{message}")]
    #[diagnostic(code(checkpoint::seed::locate), help("{help}"))]
    SeedLocate {
        path: PathBuf,
        message: String,
        help: String,
    },

    /// A workflow cannot be written in another system's format.
    #[error("failed to export workflow `{id}` as {format}: {message}")]
    #[diagnostic(code(checkpoint::seed::export), help("{help}"))]
    SeedExport {
        id: String,
        format: &'static str,
        message: String,
        help: String,
    },

    /// An output file exists and replacing it was not asked for.
    #[error("refusing to overwrite `{path}`")]
    #[diagnostic(
        code(checkpoint::output_exists),
        help("pass `--force` to replace it, or choose another `--output`")
    )]
    OutputExists { path: PathBuf },
}

impl Error {
    pub(crate) fn transition(message: impl Into<String>, help: impl Into<String>) -> Self {
        Self::InvalidTransition {
            message: message.into(),
            help: help.into(),
        }
    }

    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
