//! The canonical hook events: one client-neutral set that `checkpoint hook` acts on, whatever
//! client sent them; each client's module converts its own typed payloads into these.
//!
//! The events: a session start (answered with where the work stands), a compaction about to
//! happen, a tool call starting, done or failed (a shell command with its exit code, files
//! written, a sub-agent's dispatch), a turn's end, a turn failed on an API error such as a rate
//! limit, and a sub-agent's start and stop where the client has them.

use std::fmt;

/// A hook event as the handler sees it, with what every client's payload carries.
#[derive(Debug)]
pub(crate) struct Hooked {
    pub(crate) envelope: Envelope,
    pub(crate) event: Event,
}

/// The fields every client's payload carries.
#[derive(Debug)]
pub(crate) struct Envelope {
    pub(crate) session_id: String,
    /// The session's working directory, empty when the client gave none.
    pub(crate) cwd: String,
    /// Where the client keeps the session's transcript (Claude Code's sub-agents' meta files
    /// are beside it).
    pub(crate) transcript_path: Option<String>,
}

/// A canonical event.
#[derive(Debug)]
pub(crate) enum Event {
    /// A session started, resumed, was cleared or compacted: answered with context.
    SessionStart(SessionStart),
    /// The conversation is about to be compacted.
    BeforeCompaction(Compaction),
    /// A tool call is about to run.
    ToolStart(ToolUse),
    /// A tool call ran: a shell command done, files written, a sub-agent's call returned.
    ToolDone(ToolUse),
    /// A tool call failed.
    ToolFailed(ToolFailure),
    /// The main agent's turn ended.
    TurnEnd(Stop),
    /// A sub-agent started.
    SubagentStart(SubagentStart),
    /// A sub-agent stopped.
    SubagentStop(Stop),
    /// The turn failed on an API error (a rate limit, an overload).
    TurnFailed(TurnFailure),
}

impl Event {
    /// The event's name where it is recorded (a heartbeat's source): Claude Code's names, which
    /// the journal has always held.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::SessionStart(_) => "SessionStart",
            Self::BeforeCompaction(_) => "PreCompact",
            Self::ToolStart(_) => "PreToolUse",
            Self::ToolDone(_) => "PostToolUse",
            Self::ToolFailed(_) => "PostToolUseFailure",
            Self::TurnEnd(_) => "Stop",
            Self::SubagentStart(_) => "SubagentStart",
            Self::SubagentStop(_) => "SubagentStop",
            Self::TurnFailed(_) => "StopFailure",
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a session started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StartSource {
    /// A new session, a resumed one or a cleared one: it runs none of an earlier one's
    /// sub-agents.
    Fresh,
    /// The same session after a compaction: its sub-agents still run.
    Compacted,
}

/// A session's start.
#[derive(Debug)]
pub(crate) struct SessionStart {
    pub(crate) source: StartSource,
}

/// A compaction about to happen.
#[derive(Debug)]
pub(crate) struct Compaction {
    /// `manual` or `auto`, as the client says.
    pub(crate) trigger: String,
}

/// What a tool does, as far as the rules care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    /// Dispatches a sub-agent.
    Agent,
    /// Runs a shell command (a `git commit` records commits).
    Bash,
    /// Writes the files in `ToolInput::written`.
    FileEdit,
    /// Reads the file in `ToolInput::read`; `ToolResponse::whole_read` says whether the model
    /// saw all of it.
    FileRead,
    /// Launches a Claude Code `Workflow` run (a script of `agent()` calls in phases).
    Workflow,
    /// Any other tool.
    Other,
}

/// A tool call, starting or done.
#[derive(Debug)]
pub(crate) struct ToolUse {
    pub(crate) tool: Tool,
    /// The tool's name as the client gave it (an MCP tool's `mcp__<server>__<tool>`).
    pub(crate) tool_name: String,
    pub(crate) tool_input: ToolInput,
    /// Empty before the call ran.
    pub(crate) tool_response: ToolResponse,
    pub(crate) tool_use_id: Option<String>,
    /// Set when the tool ran inside a sub-agent.
    pub(crate) agent_id: Option<String>,
}

impl ToolUse {
    pub(crate) fn tool(&self) -> Tool {
        self.tool
    }
}

/// What a tool call was asked to do.
#[derive(Debug, Default)]
pub(crate) struct ToolInput {
    /// `FileEdit`: the files written, absolute (a relative one is taken from the project
    /// root), in the order the client gave them.
    pub(crate) written: Vec<String>,
    /// `FileRead`: the file read, as the client named it.
    pub(crate) read: Option<String>,
    /// `FileEdit`: the whole content the tool was asked to write, where the client writes it
    /// as given (Claude Code's `Write`; not Gemini CLI's `write_file`, which may correct it).
    pub(crate) content: Option<String>,
    /// `Bash`: the command as the model gave it.
    pub(crate) command: Option<String>,
    /// `Agent`: the dispatch prompt.
    pub(crate) prompt: Option<String>,
    /// `Agent`: its short description.
    pub(crate) description: Option<String>,
    /// `Workflow`: the script on disk.
    pub(crate) script_path: Option<String>,
    /// `Workflow`: the run it resumes.
    pub(crate) resume_from_run_id: Option<String>,
    /// The whole input as the client sent it (an MCP tool's arguments).
    pub(crate) raw: serde_json::Value,
}

/// What a tool call returned.
#[derive(Debug, Default)]
pub(crate) struct ToolResponse {
    /// `Bash`: the command was interrupted.
    pub(crate) interrupted: Option<bool>,
    /// `FileRead`: the model saw the whole file (no range asked, nothing cut by the client).
    pub(crate) whole_read: bool,
    /// `Bash`: the files the client says the command changed while it ran, absolute (Claude
    /// Code's `bashEditDiff`); empty where the client does not say.
    pub(crate) changed_files: Vec<String>,
    /// `FileEdit`: the lines added and removed, where the client says (Claude Code's
    /// `structuredPatch`, or a new file's lines).
    pub(crate) lines_added: Option<u64>,
    pub(crate) lines_removed: Option<u64>,
    /// `Bash` and `FileEdit`: the exit code, where the client gives it (a failed call may
    /// come as a done one with a code other than 0).
    pub(crate) exit_code: Option<i64>,
    /// `Agent`: the sub-agent's id.
    pub(crate) agent_id: Option<String>,
    /// `Agent`: `completed` once the sub-agent has ended.
    pub(crate) status: Option<String>,
    /// `Agent`: the sub-agent's result, as content blocks.
    pub(crate) content: Vec<ContentBlock>,
    /// `Bash`: what the command printed.
    pub(crate) stdout: Option<String>,
    /// `Bash`: what the command printed on stderr.
    pub(crate) stderr: Option<String>,
    /// An MCP tool's result, which the client sends as a string.
    pub(crate) text: Option<String>,
    /// `Workflow`: the run's id.
    pub(crate) run_id: Option<String>,
    /// `Workflow`: the run's directory (journal, agents' files).
    pub(crate) transcript_dir: Option<String>,
    /// `Workflow`: the script on disk.
    pub(crate) script_path: Option<String>,
    /// `Workflow`: the script's `meta.name`.
    pub(crate) workflow_name: Option<String>,
}

impl ToolResponse {
    /// Whether the call succeeded: not interrupted, and no exit code other than 0 (a client
    /// may report a failed call as a done one with its code). An interrupted command may
    /// have done part of its work.
    pub(crate) fn succeeded(&self) -> bool {
        self.interrupted != Some(true) && self.exit_code.is_none_or(|code| code == 0)
    }
}

/// A content block of a sub-agent's result.
#[derive(Debug, Default)]
pub(crate) struct ContentBlock {
    pub(crate) text: Option<String>,
}

/// A failed tool call.
#[derive(Debug)]
pub(crate) struct ToolFailure {
    pub(crate) tool_name: String,
    pub(crate) tool: Tool,
    pub(crate) error: String,
    /// What the call was asked to do.
    pub(crate) tool_input: ToolInput,
    pub(crate) tool_use_id: Option<String>,
    /// Set when the tool ran inside a sub-agent.
    pub(crate) agent_id: Option<String>,
}

impl ToolFailure {
    pub(crate) fn tool(&self) -> Tool {
        self.tool
    }
}

/// A turn's end, the main agent's or a sub-agent's.
#[derive(Debug, Default)]
pub(crate) struct Stop {
    /// The session goes on because a stop hook blocked it already.
    pub(crate) stop_hook_active: Option<bool>,
    /// A sub-agent's stop: the sub-agent.
    pub(crate) agent_id: Option<String>,
    /// A sub-agent's stop: its last message.
    pub(crate) last_assistant_message: Option<String>,
    /// A sub-agent's stop: the kind of sub-agent.
    pub(crate) agent_type: Option<String>,
    /// A sub-agent's stop: its transcript.
    pub(crate) agent_transcript_path: Option<String>,
}

/// A sub-agent's start.
#[derive(Debug)]
pub(crate) struct SubagentStart {
    pub(crate) agent_id: String,
    /// The kind of sub-agent.
    pub(crate) agent_type: Option<String>,
}

/// A turn failed on an API error.
#[derive(Debug)]
pub(crate) struct TurnFailure {
    pub(crate) error: String,
    /// Set when the failure was a sub-agent's.
    pub(crate) agent_id: Option<String>,
    /// The kind of sub-agent, when it was one.
    pub(crate) agent_type: Option<String>,
    /// The failure as the client words it (`API Error: …`).
    pub(crate) last_assistant_message: Option<String>,
}

/// A client's hook events, each variant named as the client names the event: the enum, `ALL` (every event, in
/// the order given), `name`, `Display`, and `FromStr` (an unknown name is an error that says
/// nothing was recorded, naming the client by `$client`, `""` for none).
macro_rules! hook_events {
    (
        $(#[$meta:meta])*
        $client:literal enum $Enum:ident {
            $($(#[$variant_meta:meta])* $Variant:ident,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum $Enum {
            $($(#[$variant_meta])* $Variant,)+
        }

        impl $Enum {
            /// Every event.
            pub(crate) const ALL: [$Enum; [$(stringify!($Variant)),+].len()] = [$(Self::$Variant),+];

            /// The event's name in the client's hook configuration and payloads.
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Self::$Variant => stringify!($Variant),)+
                }
            }
        }

        impl std::fmt::Display for $Enum {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $Enum {
            type Err = String;

            fn from_str(value: &str) -> Result<Self, String> {
                Self::ALL.into_iter().find(|event| event.name() == value).ok_or_else(|| {
                    let client = if $client.is_empty() { String::new() } else { format!("{} ", $client) };
                    format!("unknown {client}hook event `{value}`; nothing recorded")
                })
            }
        }
    };
}
pub(crate) use hook_events;
