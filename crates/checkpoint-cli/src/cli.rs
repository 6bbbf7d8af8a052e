//! The command-line interface: clap derive structs only.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::{
    commands,
    output::{ColorChoice, Format},
};

/// Durable checkpoints for long, multi-phase AI-agent workflows
///
/// State lives in `.claude/checkpoints/<workflow>/` under the git top level: `state.json` (the
/// current state), `journal.jsonl` (every transition), `state.json.bak` and a lock file.
#[derive(Debug, Parser)]
// No bare `about`: it would take Cargo's description, and `-h` would open with another sentence
// than `--help`; both now open with the doc comment's first line.
#[command(name = "checkpoint", version, long_about, max_term_width = 100)]
#[command(after_long_help = checkpoint_contract::exit_code::help_text())]
pub(crate) struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes, listed under their own heading in every `--help`.
///
/// Their values are spelled out in the one-line help, so that each subcommand's `--help` does not
/// repeat a paragraph per value.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub(crate) struct GlobalArgs {
    /// Output format: `human`, `json`, `prompt` (`resume`, `status`), `mermaid` or `dot` (`graph`)
    #[arg(
        long,
        global = true,
        value_enum,
        default_value_t = Format::Human,
        hide_possible_values = true
    )]
    pub format: Format,
    /// When to use colour: `auto` (a terminal, unless `NO_COLOR` is set), `always` or `never`
    #[arg(
        long,
        global = true,
        value_enum,
        default_value_t = ColorChoice::Auto,
        hide_possible_values = true
    )]
    pub color: ColorChoice,
    /// The checkpoint directory [default: `.claude/checkpoints` under the git top level]
    #[arg(long, global = true, env = crate::env::CHECKPOINT_DIR, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The workflow to act on [default: the one `checkpoint use` chose, else the only unfinished one]
    #[arg(long, short = 'w', global = true, env = crate::env::CHECKPOINT_WORKFLOW, value_name = "ID")]
    pub workflow: Option<String>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Create a workflow from phases or a plan file
    #[command(after_help = "Examples:
  checkpoint init payments --phase design --phase build:design --phase docs:design
  checkpoint init payments --plan plan.toml --title \"Payments refactor\"
  checkpoint init payments --fresh --phase design   # archive the old one first")]
    Init(commands::init::InitArgs),
    /// Start (or retry) a phase
    #[command(after_help = "Examples:
  checkpoint start design
  checkpoint start build --force   # retry a failed phase past its attempts")]
    Start(commands::phase::StartArgs),
    /// Record partial progress on the phase in progress
    #[command(after_help = "Examples:
  checkpoint progress build \"auth module done, starting billing\"
  git log --oneline -5 | checkpoint progress build --file -")]
    Progress(commands::phase::ProgressArgs),
    /// Complete a phase, with its artifacts and commit
    #[command(after_help = "Examples:
  checkpoint complete design --artifact docs/design.md
  checkpoint complete build --commit   # also a checkpoint commit of the work")]
    Complete(commands::phase::CompleteArgs),
    /// Mark a phase failed
    Fail(commands::phase::FailArgs),
    /// Skip a phase (it counts as done for its dependants)
    Skip(commands::phase::SkipArgs),
    /// Approve a phase waiting at its approval gate
    Approve(commands::phase::ApproveArgs),
    /// Reject a phase waiting at its approval gate (it fails with the reason)
    Reject(commands::phase::RejectArgs),
    /// Add, start, finish or fail a task inside a phase
    #[command(subcommand)]
    Task(commands::task::TaskCommand),
    /// Add a note to the context summary
    Note(commands::context::NoteArgs),
    /// Record a key decision in the context summary
    Decide(commands::context::DecideArgs),
    /// Add file paths to the context summary
    Files(commands::context::FilesArgs),
    /// Record by hand an effect no hook saw (a change outside the project: "emailed the
    /// customer"), so that a resumed session does not repeat it
    Effect(commands::effects::EffectArgs),
    /// List the effects (pushes, pull requests, publishes, POSTs) recorded on the workflow, or
    /// let one repeat through with `allow <n>`
    ///
    /// An effect is a call that changed something outside the project. The hooks record each
    /// one a session runs (the built-in list: `git push`, `gh pr create`, `npm publish`,
    /// `kubectl apply`, `curl -X POST`, …, and the patterns of the plan and `config.toml`), and
    /// refuse a repeat of one that succeeded before it runs (in an interactive session, the
    /// person is asked). By default the list holds the effects of the phases not done and those
    /// recorded on no phase.
    Effects(commands::effects::EffectsArgs),
    /// Pause the workflow (for example after a rate limit)
    Pause(commands::lifecycle::PauseArgs),
    /// Lift a pause
    Unpause,
    /// Give the workflow up (nothing is deleted)
    Abandon(commands::lifecycle::AbandonArgs),
    /// Show where a workflow stands
    #[command(after_help = "Examples:
  checkpoint status
  checkpoint status --format json | jq .phases
  checkpoint status --format prompt   # what a new session is told")]
    Status,
    /// Choose the workflow every command in this worktree means, until `use --none`
    Use(commands::using::UseArgs),
    /// Validate, recover from an interruption, and say what to do next
    #[command(after_help = "Examples:
  checkpoint resume
  checkpoint resume --dry-run --format json
  checkpoint resume payments --restart build")]
    Resume(commands::resume::ResumeArgs),
    /// Check a workflow's state, journal, files and git context
    Validate(commands::validate::ValidateArgs),
    /// List the workflows of the repository and all its worktrees
    #[command(after_help = "Examples:
  checkpoint list
  checkpoint list --all --format json")]
    List(commands::list::ListArgs),
    /// Print the raw state (`state.json`)
    Show,
    /// Handle a client's hook event (reads its JSON on stdin; never fails the session)
    Hook(commands::hook::HookArgs),
    /// Write a client's hooks and MCP server entry (Claude Code, Codex CLI, Gemini CLI)
    Setup(commands::setup::SetupArgs),
    /// Print the journal of transitions
    #[command(after_help = "Examples:
  checkpoint log -n 20
  checkpoint log --full --format json")]
    Log(commands::log::LogArgs),
    /// Commit the completed phases that no commit holds yet (a git checkpoint)
    Commit,
    /// Record that a phase was replanned (a limit stops the automatic plan)
    Replan(commands::phase::ReplanArgs),
    /// Move a finished workflow to `.archive/` (a failed one to `failed/`)
    Archive(commands::archive::ArchiveArgs),
    /// Delete old archives by the retention in `config.toml` (never an unfinished workflow)
    Gc(commands::archive::GcArgs),
    /// Bring an archived workflow back
    Restore(commands::archive::RestoreArgs),
    /// Show what changed between two points of the journal
    Diff(commands::history::DiffArgs),
    /// Make a past point of the journal the current state (history is kept)
    Rewind(commands::history::RewindArgs),
    /// Take a snapshot of the working tree now (stored as git objects on a private ref; HEAD,
    /// the index and branches are untouched)
    Snapshot(commands::files::SnapshotArgs),
    /// List the snapshots of the working tree (one per turn, phase completion, compaction, …)
    Snapshots(commands::files::SnapshotsArgs),
    /// Show who wrote a file, most recent first (sessions, sub-agents, phases, tools)
    Who(commands::who::WhoArgs),
    /// Hold paths for a phase: other sessions' and sub-agents' writes there are refused
    Claim(commands::who::ClaimArgs),
    /// Put the files back as a snapshot kept them (a snapshot of the tree is taken first)
    ///
    /// With no `--to`, as they were before the last turn. Changed files get their content and
    /// mode back, files created since are removed, deleted ones come back, symbolic links are
    /// links again; ignored files, the store, secret-looking files and files left out of
    /// snapshots are untouched, and HEAD, the index and branches stay. `checkpoint redo`
    /// reverses it.
    Undo(commands::files::UndoArgs),
    /// Reverse the last `undo`: put back the files it replaced
    Redo(commands::files::RedoArgs),
    /// Start a new workflow from a past point of the journal
    Fork(commands::history::ForkArgs),
    /// Draw the phase graph with statuses (`--format mermaid` or `--format dot`)
    #[command(after_help = "Examples:
  checkpoint graph
  checkpoint graph --format mermaid >> README.md
  checkpoint graph --format dot | dot -Tsvg > phases.svg")]
    Graph,
    /// Create a workflow from another checkpoint system's state file (left untouched)
    Import(commands::import::ImportArgs),
    /// Write the workflow as another checkpoint system's state file
    Export(commands::export::ExportArgs),
    /// Carry a workflow to the end unattended: headless `claude` sessions through rate limits,
    /// crashes and stalls, stopping where a person must decide
    #[command(after_help = "Examples:
  checkpoint run --max-sessions 10
  checkpoint run --window 22:00-07:00 --max-cost 20
  checkpoint run --all --dry-run")]
    Run(commands::run::RunArgs),
    /// The story of a workflow's runs: sessions, waits and phase transitions, with times
    #[command(after_help = "Examples:
  checkpoint report
  checkpoint report --html night.html")]
    Report(commands::report::ReportArgs),
    /// Watch a workflow live: its phases, notes and runner, redrawn as its journal grows
    ///
    /// On a terminal it shows the phases (status, the sub-agent holding each, last note, elapsed
    /// time), what a `checkpoint run` is doing (its session, or the wait before the next one) and
    /// the last update, redrawn as soon as the journal changes and once a second. Off a
    /// terminal, or with `--plain`, it prints one line per journal entry as it is written
    /// (`--format json`: one JSON object per line), starting with the entries already there. It
    /// only reads: it never takes the workflow's lock. It ends on Ctrl-C, and when the workflow
    /// is archived or removed.
    #[command(after_help = "Examples:
  checkpoint watch
  checkpoint watch payments --plain | tee watch.log")]
    Watch(commands::watch::WatchArgs),
    /// Print the JSON Schema of a file format
    Schema(commands::schema::SchemaArgs),
    /// Print a shell completion script
    Completions(commands::completions::CompletionsArgs),
    /// The ids the shell completion offers after the given words (called by the scripts)
    #[command(name = "__complete", hide = true)]
    CompleteIds(commands::completions::CompleteArgs),
    /// Serve the project's workflows to MCP clients over stdio (tools, resources, a resume prompt)
    ///
    /// Start it from an MCP client, not a terminal: it reads JSON-RPC messages on stdin and
    /// answers on stdout. It runs `checkpoint-mcp`, installed beside `checkpoint`.
    Mcp(commands::mcp::McpArgs),
    /// Send the workflow's state to a git remote as `refs/checkpoints/<id>`
    #[command(after_help = "Examples:
  checkpoint push
  checkpoint push origin --all")]
    Push(commands::push_pull::PushArgs),
    /// Bring the workflow's state from a git remote (`refs/checkpoints/<id>`)
    #[command(after_help = "Examples:
  checkpoint pull --workflow payments
  checkpoint pull --merge")]
    Pull(commands::push_pull::PullArgs),
    /// Pull, then push what is ahead
    Sync(commands::push_pull::PullArgs),
}
