//! The `Transition` enum, part of the journal's format and schema, and the vocabularies its
//! variants carry (`Keep`, `SessionOutcome`).

use std::fmt;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    id::{PhaseId, TaskId, WorkflowId},
    model::Workflow,
};

/// How many failed attempts a phase may have before a person must decide, unless it says otherwise.
pub(crate) const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// Which side a divergence was resolved to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Keep {
    /// The remote entries; ours are kept in a fork `<id>@local-<time>`.
    Theirs,
    /// Our entries, replayed after the remote ones from the shared state; theirs are kept in a
    /// fork `<id>@remote-<time>`.
    Ours,
    /// Both: the remote entries, then ours (allowed when each side touched different phases).
    Merge,
}

impl fmt::Display for Keep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Theirs => "theirs",
            Self::Ours => "ours",
            Self::Merge => "merge",
        })
    }
}

/// What a session of `checkpoint run` amounted to, as `run_session_end` journals it.
///
/// The runner decides on `run::SessionVerdict`, the same but `Interrupted`: a signal stops the run
/// before the session is weighed, so a decision would have no arm for it.
/// A word this version does not know (a newer runner's) is kept as written, so that its
/// journal still reads and is written back unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum SessionOutcome {
    /// It recorded work.
    Progress,
    /// It ended normally without recording any work.
    Stall,
    /// It hit a rate or usage limit.
    RateLimit,
    /// It failed for another reason.
    Crash,
    /// A signal to the runner stopped it.
    Interrupted,
    /// A word this version does not know, as written.
    Other(String),
}

impl SessionOutcome {
    /// Its word in the journal.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Progress => "progress",
            Self::Stall => "stall",
            Self::RateLimit => "rate_limit",
            Self::Crash => "crash",
            Self::Interrupted => "interrupted",
            Self::Other(word) => word,
        }
    }
}

impl From<String> for SessionOutcome {
    fn from(word: String) -> Self {
        match word.as_str() {
            "progress" => Self::Progress,
            "stall" => Self::Stall,
            "rate_limit" => Self::RateLimit,
            "crash" => Self::Crash,
            "interrupted" => Self::Interrupted,
            _ => Self::Other(word),
        }
    }
}

impl From<SessionOutcome> for String {
    fn from(outcome: SessionOutcome) -> Self {
        match outcome {
            SessionOutcome::Other(word) => word,
            known => known.as_str().to_owned(),
        }
    }
}

impl fmt::Display for SessionOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl JsonSchema for SessionOutcome {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SessionOutcome".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "What the session amounted to: `progress`, `stall`, `rate_limit`, `crash` or `interrupted` (a word a newer version writes is kept as written).",
            "type": "string"
        })
    }
}

/// What the runner waits for (spelled in `snake_case` in the journal's `run_wait`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WaitKind {
    /// A rate limit's reset.
    RateLimit,
    /// A backoff after a crash or a limit without a reset time.
    Backoff,
    /// The end of a pause the workflow asked for.
    Paused,
    /// A rate-limit window's reset, its usage being at or above `--max-usage`.
    Usage,
    /// The next opening of a `--window`.
    Window,
}

/// Who recorded an effect (spelled in `snake_case` in the journal's `effect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EffectSource {
    /// A `PostToolUse` or `PostToolUseFailure` hook.
    Hook,
    /// A person, with `checkpoint effect`.
    Manual,
    /// The model, through the MCP server's `effect` tool.
    Mcp,
}

impl EffectSource {
    /// Its word in the journal.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hook => "hook",
            Self::Manual => "manual",
            Self::Mcp => "mcp",
        }
    }
}

/// Why the working tree was snapshotted (spelled in `snake_case` in the journal's
/// `files_snapshot`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotReason {
    /// The main agent's turn ended (Claude Code and Codex `Stop`, Gemini `AfterAgent`).
    TurnEnd,
    /// A sub-agent stopped.
    SubagentStop,
    /// The conversation was about to be compacted.
    PreCompact,
    /// A session started: what changed while no session watched.
    SessionStart,
    /// A phase completed.
    PhaseComplete,
    /// Before files were put back (`undo`, `redo`, `rewind --files`): the tree as it was.
    BeforeRestore,
    /// By hand, `checkpoint snapshot`.
    Manual,
    /// The model, through the MCP server.
    Mcp,
    /// Another writer's change about to be overwritten (the write guard): its version kept.
    OtherWriter,
}

impl SnapshotReason {
    /// Its word in the journal.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TurnEnd => "turn_end",
            Self::SubagentStop => "subagent_stop",
            Self::PreCompact => "pre_compact",
            Self::SessionStart => "session_start",
            Self::PhaseComplete => "phase_complete",
            Self::BeforeRestore => "before_restore",
            Self::Manual => "manual",
            Self::Mcp => "mcp",
            Self::OtherWriter => "other_writer",
        }
    }
}

impl fmt::Display for SnapshotReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which way files were put back (spelled in `snake_case` in the journal's `files_restore`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RestoreKind {
    /// `checkpoint undo` (or `rewind --files`): back to an earlier snapshot.
    Undo,
    /// `checkpoint redo`: the tree an undo replaced.
    Redo,
}

/// One change to a workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Transition {
    /// Creates the workflow with this initial state.
    Init {
        /// The initial state.
        workflow: Box<Workflow>,
    },
    /// Replaces the whole state (a rewind, a recovery or an import).
    Snapshot {
        /// The new state; its `seq` and `updated_at` are set on apply.
        workflow: Box<Workflow>,
        /// Why the state was replaced.
        reason: String,
    },
    /// Starts (or retries) a phase.
    PhaseStart {
        /// The phase.
        phase: PhaseId,
        /// Start even if it is done, its dependencies are not, or it failed too often.
        #[serde(default)]
        force: bool,
    },
    /// Records partial progress on a phase.
    PhaseProgress {
        /// The phase.
        phase: PhaseId,
        /// What is done so far and what comes next.
        note: String,
    },
    /// Completes a phase (or sends it to its approval gate).
    PhaseComplete {
        /// The phase.
        phase: PhaseId,
        /// Artifacts produced.
        #[serde(default)]
        artifacts: Vec<String>,
        /// The commit holding the work.
        #[serde(default)]
        commit_sha: Option<String>,
        /// Complete even if dependencies or tasks are not done.
        #[serde(default)]
        force: bool,
    },
    /// Marks a phase failed.
    PhaseFail {
        /// The phase.
        phase: PhaseId,
        /// What went wrong.
        reason: String,
    },
    /// Skips a phase; it counts as done for its dependants.
    PhaseSkip {
        /// The phase.
        phase: PhaseId,
        /// Why.
        #[serde(default)]
        reason: Option<String>,
    },
    /// Puts an interrupted phase back to pending (resume recovery).
    PhaseReset {
        /// The phase.
        phase: PhaseId,
        /// Why.
        reason: String,
    },
    /// Approves a phase waiting at its gate.
    PhaseApprove {
        /// The phase.
        phase: PhaseId,
        /// Who approved.
        #[serde(default)]
        by: Option<String>,
        /// Any remark.
        #[serde(default)]
        note: Option<String>,
    },
    /// Rejects a phase waiting at its gate; it fails with the reason.
    PhaseReject {
        /// The phase.
        phase: PhaseId,
        /// Why.
        reason: String,
    },
    /// Records the commit holding a phase's work.
    PhaseCommit {
        /// The phase.
        phase: PhaseId,
        /// The commit.
        sha: String,
    },
    /// Records that a phase was replanned.
    Replan {
        /// The phase.
        phase: PhaseId,
        /// Why.
        reason: String,
    },
    /// Adds a task to a phase.
    TaskAdd {
        /// The phase.
        phase: PhaseId,
        /// The new task.
        task: TaskId,
        /// What it does.
        #[serde(default)]
        title: Option<String>,
        /// The file it writes.
        #[serde(default)]
        output: Option<String>,
    },
    /// Starts a task (and its phase, if pending).
    TaskStart {
        /// The phase.
        phase: PhaseId,
        /// The task.
        task: TaskId,
        /// The client's sub-agent that runs it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent_id: Option<String>,
    },
    /// Finishes a task.
    TaskDone {
        /// The phase.
        phase: PhaseId,
        /// The task.
        task: TaskId,
        /// The file it wrote.
        #[serde(default)]
        output: Option<String>,
        /// What it ended with (an excerpt of a sub-agent's result).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// Marks a task failed.
    TaskFail {
        /// The phase.
        phase: PhaseId,
        /// The task.
        task: TaskId,
        /// What went wrong.
        reason: String,
    },
    /// Puts an interrupted task back to pending (resume recovery).
    TaskReset {
        /// The phase.
        phase: PhaseId,
        /// The task.
        task: TaskId,
        /// Why.
        reason: String,
    },
    /// Adds a free-text note to the context summary.
    Note {
        /// The note.
        text: String,
    },
    /// Adds a key decision to the context summary.
    Decide {
        /// The decision.
        text: String,
    },
    /// Adds a file path to the context summary.
    FilePath {
        /// The path.
        path: String,
    },
    /// Records a sign of life from an agent session.
    Heartbeat {
        /// What reported it.
        source: String,
        /// The session id.
        #[serde(default)]
        session_id: Option<String>,
    },
    /// Pauses the workflow.
    Pause {
        /// Why.
        reason: String,
        /// When it may continue.
        #[serde(default)]
        until: Option<DateTime<Utc>>,
    },
    /// Lifts a pause.
    Unpause,
    /// Gives the workflow up.
    Abandon {
        /// Why.
        #[serde(default)]
        reason: Option<String>,
    },
    /// Records a failed tool call on a phase in progress (the phase itself goes on).
    ToolFailure {
        /// The phase.
        phase: PhaseId,
        /// The tool, for example `Bash`.
        tool: String,
        /// What the tool reported.
        error: String,
    },
    /// Records that a sub-agent was dispatched to hold a phase in progress.
    HolderDispatch {
        /// The phase.
        phase: PhaseId,
        /// The id of the dispatching tool call.
        tool_use_id: String,
        /// The dispatch's short description.
        #[serde(default)]
        description: Option<String>,
        /// The session that dispatched it.
        #[serde(default)]
        session_id: Option<String>,
    },
    /// Records a sign of life of a phase's holder, and its agent id once known.
    HolderSeen {
        /// The phase.
        phase: PhaseId,
        /// The sub-agent's id.
        #[serde(default)]
        agent_id: Option<String>,
    },
    /// Records that a phase's holder ended: with its last message as the phase's progress note
    /// when the phase is still in progress, or with the error that stopped it.
    HolderEnd {
        /// The phase.
        phase: PhaseId,
        /// The sub-agent's last message, for the phase's progress note.
        #[serde(default)]
        note: Option<String>,
        /// What stopped it, for example `rate_limit`.
        #[serde(default)]
        error: Option<String>,
    },
    /// Records a context compaction in the agent session.
    Compaction {
        /// `manual` or `auto`.
        trigger: String,
        /// The session id.
        #[serde(default)]
        session_id: Option<String>,
    },
    /// Records how `checkpoint pull` resolved a journal that diverged from the remote one.
    SyncResolve {
        /// The side kept: `theirs`, `ours` or `merge`.
        keep: Keep,
        /// The last entry both sides shared (0 when none).
        diverged_at: u64,
        /// The workflow that keeps the other side, if any.
        #[serde(default)]
        fork: Option<WorkflowId>,
        /// For `ours`: the shared state, which our entries after this one are replayed onto.
        #[serde(default)]
        base: Option<Box<Workflow>>,
    },
    /// Records a session sent to the remote with the uncommitted work (`checkpoint push
    /// --session`), to go on on another machine or by a teammate.
    SessionHandoff {
        /// The client's session id.
        session_id: String,
        /// The client, for example `claude`.
        client: String,
        /// The sender's machine (its host name).
        machine: String,
        /// The sender (the git user name, else the login).
        user: String,
        /// The commit the uncommitted work sits on.
        base: String,
        /// The files changed against it (changed, new and deleted).
        files: u64,
        /// The transcript's size as sent, in bytes.
        transcript_bytes: u64,
    },
    /// An unattended runner (`checkpoint run`) started on the workflow.
    RunStart {
        /// The runner's process id.
        pid: u32,
        /// The agent client it drives, for example `claude`.
        client: String,
        /// Its caps, when it has any (`--max-cost`, `--max-tokens`, `--max-usage`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget: Option<crate::budget::Budget>,
    },
    /// The runner started an agent session.
    RunSessionStart {
        /// The session's number in this run, from 1.
        number: u32,
        /// The phase the plan named.
        #[serde(default)]
        phase: Option<PhaseId>,
        /// The session it continues, when it resumes one.
        #[serde(default)]
        resumed: Option<String>,
    },
    /// An agent session of the runner ended.
    RunSessionEnd {
        /// The session's number in this run.
        number: u32,
        /// The client's session id.
        #[serde(default)]
        session_id: Option<String>,
        /// Its exit code; none when a signal ended it.
        #[serde(default)]
        exit: Option<i32>,
        /// What it amounted to.
        outcome: SessionOutcome,
        /// How many transitions of work it recorded.
        #[serde(default)]
        transitions: u32,
        /// What it cost in dollars, as its final result said (`total_cost_usd`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        /// The tokens it used (input, output, cache reads and writes), as its final result said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens: Option<u64>,
    },
    /// The runner waits (for a rate limit to reset, a backoff, a budget or a window) before the
    /// next session.
    RunWait {
        /// When it continues.
        until: DateTime<Utc>,
        /// Why it waits.
        reason: String,
        /// What it waits for (absent in journals written before it was recorded).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<WaitKind>,
    },
    /// Records a call that changed something outside the project (a push, a pull request, a
    /// publish, a POST), or an attempt at one that failed; effects are numbered from 1 in
    /// journal order.
    Effect {
        /// The phase in progress, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<PhaseId>,
        /// That phase's attempt.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attempt: Option<u32>,
        /// `Bash`, or the MCP tool's name (`mcp__<server>__<tool>`); absent for a record by
        /// hand.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool: Option<String>,
        /// The command, the tool's input, or what was done (redacted).
        command: String,
        /// An excerpt of the output (redacted, at most 1,000 characters).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        /// Whether it succeeded; a failed one guards nothing.
        ok: bool,
        /// The session that ran it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        /// Who recorded it: `hook`, `manual` or `mcp`.
        source: EffectSource,
        /// A hash of the effect (its tool, the place it runs in, and its command or input,
        /// whitespace collapsed, redacted): a repeat of the same effect has the same key.
        key: String,
        /// An intent: the call was let through before it ran (`PreToolUse`), its outcome not yet
        /// known; it guards like a done effect until an outcome settles it. With `settles`, the
        /// call that made intent `settles` can no longer report (its turn or session ended): its
        /// outcome is unknown.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        intent: bool,
        /// The number of the intent this outcome settles (the call's `PostToolUse`, or a
        /// person's `checkpoint effects resolve`): the effect keeps that number.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        settles: Option<u64>,
        /// The client's id of the tool call (`tool_use_id`): a hook asked twice about one call
        /// is not a repeat of it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// The sub-agent that made the call, if one did: its intent can still report after the
        /// main agent's turn ends, until the sub-agent stops.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent_id: Option<String>,
    },
    /// Lets one repeat of an effect run (`checkpoint effects allow <n>`).
    EffectAllow {
        /// The effect's number.
        effect: u64,
        /// Who allowed it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// The runner stopped.
    RunStop {
        /// Why, in a sentence.
        reason: String,
        /// The runner's exit code.
        #[serde(default)]
        exit: u8,
    },
    /// Records a snapshot of the working tree (the files as `git add -A` sees them, minus the
    /// store, secret-looking files and files over the size bound), kept as a git commit
    /// reachable from `refs/checkpoint/snapshots/<workflow>`; snapshots are numbered from 1 in
    /// journal order.
    FilesSnapshot {
        /// The snapshot's git commit.
        commit: String,
        /// Why it was taken.
        reason: SnapshotReason,
        /// A label given by hand (`checkpoint snapshot -m`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
        /// The phase in progress (or the phase that completed), if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<PhaseId>,
        /// The session that was running.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        /// The sub-agent whose stop took it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent_id: Option<String>,
        /// How many files changed since the previous snapshot.
        files_changed: u64,
        /// The changed paths, at most the first 50.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        paths: Vec<String>,
        /// Lines added since the previous snapshot (text files).
        #[serde(default)]
        added: u64,
        /// Lines removed since the previous snapshot (text files).
        #[serde(default)]
        removed: u64,
        /// Changed files left out (secret-looking, or over the size bound), at most 50.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        left_out: Vec<String>,
    },
    /// Records that files were put back as they were in a snapshot.
    FilesRestore {
        /// `undo` or `redo`.
        kind: RestoreKind,
        /// The snapshot of the tree taken just before (what `redo` puts back).
        before: String,
        /// The snapshot's commit whose files were put back.
        target: String,
        /// The paths the restore was limited to; empty for the whole tree.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        paths: Vec<String>,
        /// How many files were changed, created or removed.
        files: u64,
    },
}
