//! Claude Code's hook payloads, typed: the events `checkpoint hook` handles, the fields each
//! event's payload must carry (a payload without them changes nothing), the fields read when
//! present, and the tool names the hooks act on.
//!
//! Unknown fields are ignored. A field read only when present never makes a payload unusable:
//! one of another type reads as absent, as before the payloads were typed.

use serde::{Deserialize, Deserializer};

pub(crate) use crate::clients::event::Tool;
use crate::clients::{
    event::{self, Event, Hooked, StartSource},
    lenient::{self, lenient_bool, lenient_seq, lenient_str},
};

event::hook_events! {
    /// A Claude Code hook event that `checkpoint hook` handles, in the order they are
    /// documented.
    "" enum HookEvent {
        SessionStart,
        PreCompact,
        PreToolUse,
        PostToolUse,
        PostToolUseFailure,
        Stop,
        SubagentStart,
        SubagentStop,
        StopFailure,
        /// Accepted, and does nothing.
        SessionEnd,
    }
}

/// The canonical tool of a tool Claude Code names `name` in `tool_name`: `Agent` (named so by
/// 2.1.197 and later) dispatches a sub-agent, `Bash` runs a shell command, `Write`, `Edit`,
/// `MultiEdit` and `NotebookEdit` write the file at `file_path` or `notebook_path`, `Read`
/// reads the one at `file_path`, `Workflow` launches a Claude Code `Workflow` run.
pub(crate) fn tool_named(name: &str) -> Tool {
    match name {
        "Agent" => Tool::Agent,
        "Bash" => Tool::Bash,
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => Tool::FileEdit,
        "Read" => Tool::FileRead,
        "Workflow" => Tool::Workflow,
        _ => Tool::Other,
    }
}

/// The fields every payload carries.
#[derive(Debug, Deserialize)]
pub(crate) struct Envelope {
    pub(crate) hook_event_name: String,
    pub(crate) session_id: String,
    pub(crate) cwd: String,
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) transcript_path: Option<String>,
}

/// `SessionStart`.
#[derive(Debug, Deserialize)]
pub(crate) struct SessionStart {
    /// `startup`, `resume`, `clear` or `compact`.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) source: Option<String>,
}

/// `PreCompact`.
#[derive(Debug, Deserialize)]
pub(crate) struct PreCompact {
    /// `manual` or `auto`.
    pub(crate) trigger: String,
}

/// `PreToolUse` and `PostToolUse`.
#[derive(Debug, Deserialize)]
pub(crate) struct ToolUse {
    pub(crate) tool_name: String,
    #[serde(default, deserialize_with = "input_and_raw")]
    pub(crate) tool_input: ToolInput,
    /// Only in `PostToolUse`.
    #[serde(default, deserialize_with = "response_or_text")]
    pub(crate) tool_response: ToolResponse,
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) tool_use_id: Option<String>,
    /// Set when the tool ran inside a sub-agent.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) agent_id: Option<String>,
}

impl ToolUse {
    pub(crate) fn tool(&self) -> Tool {
        tool_named(&self.tool_name)
    }
}

/// The fields of a tool call's input that the hooks read.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ToolInput {
    /// `Write`, `Edit`, `MultiEdit`.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) file_path: Option<String>,
    /// `NotebookEdit`.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) notebook_path: Option<String>,
    /// `Bash`.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) command: Option<String>,
    /// `Agent`: the dispatch prompt.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) prompt: Option<String>,
    /// `Agent`.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) description: Option<String>,
    /// `Workflow`: the script on disk.
    #[serde(default, rename = "scriptPath", deserialize_with = "lenient_str")]
    pub(crate) script_path: Option<String>,
    /// `Workflow`: the run it resumes.
    #[serde(default, rename = "resumeFromRunId", deserialize_with = "lenient_str")]
    pub(crate) resume_from_run_id: Option<String>,
    /// The whole input as the client sent it (an MCP tool's arguments).
    #[serde(skip)]
    pub(crate) raw: serde_json::Value,
}

/// The fields of a tool call's response that the hooks read.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ToolResponse {
    /// `Bash`: the command was interrupted.
    #[serde(default, deserialize_with = "lenient_bool")]
    pub(crate) interrupted: Option<bool>,
    /// `Agent`: the sub-agent's id.
    #[serde(default, rename = "agentId", deserialize_with = "lenient_str")]
    pub(crate) agent_id: Option<String>,
    /// `Agent`: `completed` once the sub-agent has ended.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) status: Option<String>,
    /// `Agent`: the sub-agent's result, as content blocks.
    #[serde(default, deserialize_with = "lenient_seq")]
    pub(crate) content: Vec<ContentBlock>,
    /// `Workflow`: the run's id.
    #[serde(default, rename = "runId", deserialize_with = "lenient_str")]
    pub(crate) run_id: Option<String>,
    /// `Workflow`: the run's directory (journal, agents' files).
    #[serde(default, rename = "transcriptDir", deserialize_with = "lenient_str")]
    pub(crate) transcript_dir: Option<String>,
    /// `Workflow`: the script on disk.
    #[serde(default, rename = "scriptPath", deserialize_with = "lenient_str")]
    pub(crate) script_path: Option<String>,
    /// `Workflow`: the script's `meta.name`.
    #[serde(default, rename = "workflowName", deserialize_with = "lenient_str")]
    pub(crate) workflow_name: Option<String>,
    /// `Bash`: what the command printed.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) stdout: Option<String>,
    /// `Bash`: what the command printed on stderr.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) stderr: Option<String>,
    /// An MCP tool's result, which the client sends as a string.
    #[serde(skip)]
    pub(crate) text: Option<String>,
    /// The whole response as the client sent it.
    #[serde(skip)]
    pub(crate) raw: serde_json::Value,
}

/// A content block of an `Agent` call's result.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ContentBlock {
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) text: Option<String>,
}

/// `PostToolUseFailure`.
#[derive(Debug, Deserialize)]
pub(crate) struct ToolFailure {
    pub(crate) tool_name: String,
    pub(crate) error: String,
    #[serde(default, deserialize_with = "input_and_raw")]
    pub(crate) tool_input: ToolInput,
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) tool_use_id: Option<String>,
    /// Set when the tool ran inside a sub-agent.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) agent_id: Option<String>,
}

impl ToolFailure {
    pub(crate) fn tool(&self) -> Tool {
        tool_named(&self.tool_name)
    }
}

/// `Stop` and `SubagentStop`.
#[derive(Debug, Deserialize)]
pub(crate) struct Stop {
    /// The session goes on because a `Stop` hook blocked it already.
    #[serde(default, deserialize_with = "lenient_bool")]
    pub(crate) stop_hook_active: Option<bool>,
    /// `SubagentStop`: the sub-agent that stopped.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) agent_id: Option<String>,
    /// `SubagentStop`: its last message.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) last_assistant_message: Option<String>,
    /// `SubagentStop`: the kind of sub-agent.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) agent_type: Option<String>,
    /// `SubagentStop`: the sub-agent's transcript.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) agent_transcript_path: Option<String>,
}

/// `SubagentStart`.
#[derive(Debug, Deserialize)]
pub(crate) struct SubagentStart {
    pub(crate) agent_id: String,
    /// The kind of sub-agent.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) agent_type: Option<String>,
}

/// `StopFailure`: an API failure ended the turn.
#[derive(Debug, Deserialize)]
pub(crate) struct StopFailure {
    pub(crate) error: String,
    /// Set when the failure was a sub-agent's.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) agent_id: Option<String>,
    /// The kind of sub-agent, when it was one.
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) agent_type: Option<String>,
    /// The failure as the client words it (`API Error: …`).
    #[serde(default, deserialize_with = "lenient_str")]
    pub(crate) last_assistant_message: Option<String>,
}

/// The `agent_type` of an agent of a Claude Code `Workflow` run.
pub(crate) const WORKFLOW_AGENT: &str = "workflow-subagent";

/// Whether `agent_type` names an agent of a `Workflow` run.
pub(crate) fn is_workflow_agent(agent_type: Option<&str>) -> bool {
    agent_type == Some(WORKFLOW_AGENT)
}

/// A payload, by event.
#[derive(Debug)]
pub(crate) enum Payload {
    SessionStart(SessionStart),
    PreCompact(PreCompact),
    PreToolUse(ToolUse),
    PostToolUse(ToolUse),
    PostToolUseFailure(ToolFailure),
    Stop(Stop),
    SubagentStart(SubagentStart),
    SubagentStop(Stop),
    StopFailure(StopFailure),
    SessionEnd,
}

impl Payload {
    /// Parses the payload of `event` from `bytes`, a JSON object; the error says why it is not
    /// one this event's hook can act on.
    pub(crate) fn parse(event: HookEvent, bytes: &[u8]) -> Result<(Envelope, Payload), String> {
        lenient::check_object(bytes)?;
        let envelope: Envelope = parse(event, bytes)?;
        if envelope.hook_event_name != event.name() {
            return Err(format!(
                "the payload is for `{}`, not `{event}`; nothing recorded",
                envelope.hook_event_name
            ));
        }
        let payload = match event {
            HookEvent::SessionStart => Payload::SessionStart(parse(event, bytes)?),
            HookEvent::PreCompact => Payload::PreCompact(parse(event, bytes)?),
            HookEvent::PreToolUse => Payload::PreToolUse(parse(event, bytes)?),
            HookEvent::PostToolUse => Payload::PostToolUse(parse(event, bytes)?),
            HookEvent::PostToolUseFailure => Payload::PostToolUseFailure(parse(event, bytes)?),
            HookEvent::Stop => Payload::Stop(parse(event, bytes)?),
            HookEvent::SubagentStart => Payload::SubagentStart(parse(event, bytes)?),
            HookEvent::SubagentStop => Payload::SubagentStop(parse(event, bytes)?),
            HookEvent::StopFailure => Payload::StopFailure(parse(event, bytes)?),
            HookEvent::SessionEnd => Payload::SessionEnd,
        };
        Ok((envelope, payload))
    }
}

impl Payload {
    /// The canonical event of this payload; `None` for an event that is accepted and does
    /// nothing (`SessionEnd`).
    pub(crate) fn into_event(self) -> Option<Event> {
        Some(match self {
            Self::SessionStart(payload) => Event::SessionStart(event::SessionStart {
                source: match payload.source.as_deref() {
                    Some("compact") => StartSource::Compacted,
                    _ => StartSource::Fresh,
                },
            }),
            Self::PreCompact(payload) => Event::BeforeCompaction(event::Compaction {
                trigger: payload.trigger,
            }),
            Self::PreToolUse(payload) => Event::ToolStart(payload.into()),
            Self::PostToolUse(payload) => Event::ToolDone(payload.into()),
            Self::PostToolUseFailure(payload) => Event::ToolFailed(event::ToolFailure {
                tool: payload.tool(),
                tool_input: payload.tool_input.into_event(Tool::Other),
                tool_name: payload.tool_name,
                error: payload.error,
                tool_use_id: payload.tool_use_id,
                agent_id: payload.agent_id,
            }),
            Self::Stop(payload) => Event::TurnEnd(payload.into()),
            Self::SubagentStart(payload) => Event::SubagentStart(event::SubagentStart {
                agent_id: payload.agent_id,
                agent_type: payload.agent_type,
            }),
            Self::SubagentStop(payload) => Event::SubagentStop(payload.into()),
            Self::StopFailure(payload) => Event::TurnFailed(event::TurnFailure {
                error: payload.error,
                agent_id: payload.agent_id,
                agent_type: payload.agent_type,
                last_assistant_message: payload.last_assistant_message,
            }),
            Self::SessionEnd => return None,
        })
    }
}

/// Parses a Claude Code payload of `event` into its canonical event; `Ok(None)` for an event
/// that does nothing.
pub(crate) fn hooked(event: HookEvent, bytes: &[u8]) -> Result<Option<Hooked>, String> {
    let (envelope, payload) = Payload::parse(event, bytes)?;
    Ok(payload.into_event().map(|event| Hooked {
        envelope: event::Envelope {
            session_id: envelope.session_id,
            cwd: envelope.cwd,
            transcript_path: envelope.transcript_path,
        },
        event,
    }))
}

impl ToolInput {
    /// The canonical input of a call of `tool`: a file edit's path is the file it wrote.
    fn into_event(self, tool: Tool) -> event::ToolInput {
        let ToolInput {
            file_path,
            notebook_path,
            command,
            prompt,
            description,
            script_path,
            resume_from_run_id,
            raw,
        } = self;
        let (written, read) = match tool {
            Tool::FileEdit => (file_path.or(notebook_path).into_iter().collect(), None),
            Tool::FileRead => (Vec::new(), file_path),
            Tool::Agent | Tool::Bash | Tool::Workflow | Tool::Other => (Vec::new(), None),
        };
        let content = (tool == Tool::FileEdit)
            .then(|| raw.get("content").and_then(serde_json::Value::as_str))
            .flatten()
            .map(str::to_owned);
        event::ToolInput {
            written,
            read,
            content,
            command,
            prompt,
            description,
            script_path,
            resume_from_run_id,
            raw,
        }
    }
}

/// Whether a `Read` took the whole file: where Claude Code says which lines it returned
/// (`file.numLines`, `startLine`, `totalLines`), all of them; else no `offset` or `limit` asked.
fn whole_read(input: &serde_json::Value, response: &serde_json::Value) -> bool {
    if let Some(file) = response.get("file") {
        let number = |key: &str| file.get(key).and_then(serde_json::Value::as_u64);
        if let (Some(lines), Some(total)) = (number("numLines"), number("totalLines")) {
            return number("startLine").unwrap_or(1) <= 1 && lines >= total;
        }
    }
    !["offset", "limit"]
        .into_iter()
        .any(|key| input.get(key).is_some_and(|value| !value.is_null()))
}

/// The files a Bash command's `PostToolUse` says changed while it ran: Claude Code's
/// `tool_response.bashEditDiff.changedFiles` (2.1.332, in its `auto` and `bypassPermissions`
/// modes; absolute paths), none where the client does not say.
fn bash_changed_files(response: &serde_json::Value) -> Vec<String> {
    response
        .pointer("/bashEditDiff/changedFiles")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(serde_json::Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// Lines added and removed, from a write's `structuredPatch` (a new file's lines
/// from its content).
fn lines_changed(response: &serde_json::Value) -> (Option<u64>, Option<u64>) {
    if response.get("type").and_then(serde_json::Value::as_str) == Some("create") {
        let lines = response
            .get("content")
            .and_then(serde_json::Value::as_str)
            .map(|content| content.lines().count() as u64);
        return (lines, lines.map(|_| 0));
    }
    let Some(hunks) = response
        .get("structuredPatch")
        .and_then(serde_json::Value::as_array)
    else {
        return (None, None);
    };
    let (mut added, mut removed) = (0, 0);
    for line in hunks
        .iter()
        .filter_map(|hunk| hunk.get("lines")?.as_array())
        .flatten()
        .filter_map(serde_json::Value::as_str)
    {
        if line.starts_with('+') {
            added += 1;
        } else if line.starts_with('-') {
            removed += 1;
        }
    }
    (Some(added), Some(removed))
}

impl From<ToolUse> for event::ToolUse {
    fn from(payload: ToolUse) -> Self {
        let tool = payload.tool();
        let whole_read = tool == Tool::FileRead
            && whole_read(&payload.tool_input.raw, &payload.tool_response.raw);
        let changed_files = if tool == Tool::Bash {
            bash_changed_files(&payload.tool_response.raw)
        } else {
            Vec::new()
        };
        let (lines_added, lines_removed) = if tool == Tool::FileEdit {
            lines_changed(&payload.tool_response.raw)
        } else {
            (None, None)
        };
        let response = payload.tool_response;
        Self {
            tool,
            tool_input: payload.tool_input.into_event(tool),
            tool_name: payload.tool_name,
            tool_response: event::ToolResponse {
                interrupted: response.interrupted,
                whole_read,
                changed_files,
                lines_added,
                lines_removed,
                exit_code: None,
                agent_id: response.agent_id,
                status: response.status,
                content: response
                    .content
                    .into_iter()
                    .map(|block| event::ContentBlock { text: block.text })
                    .collect(),
                stdout: response.stdout,
                stderr: response.stderr,
                text: response.text,
                run_id: response.run_id,
                transcript_dir: response.transcript_dir,
                script_path: response.script_path,
                workflow_name: response.workflow_name,
            },
            tool_use_id: payload.tool_use_id,
            agent_id: payload.agent_id,
        }
    }
}

impl From<Stop> for event::Stop {
    fn from(payload: Stop) -> Self {
        Self {
            stop_hook_active: payload.stop_hook_active,
            agent_id: payload.agent_id,
            last_assistant_message: payload.last_assistant_message,
            agent_type: payload.agent_type,
            agent_transcript_path: payload.agent_transcript_path,
        }
    }
}

fn parse<'de, T: Deserialize<'de>>(event: HookEvent, bytes: &'de [u8]) -> Result<T, String> {
    lenient::parse(event.name(), bytes)
}

/// A tool's input: its fields read as [`ToolInput`]'s (leniently), and the whole value kept.
fn input_and_raw<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ToolInput, D::Error> {
    let raw = serde_json::Value::deserialize(deserializer)?;
    let mut input = match &raw {
        serde_json::Value::Object(_) => ToolInput::deserialize(&raw).unwrap_or_default(),
        _ => ToolInput::default(),
    };
    input.raw = raw;
    Ok(input)
}

/// A tool's response: an object's fields read as [`ToolResponse`]'s (leniently), or a string
/// (an MCP tool's result) as its text.
fn response_or_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ToolResponse, D::Error> {
    Ok(match serde_json::Value::deserialize(deserializer)? {
        raw @ serde_json::Value::Object(_) => {
            let mut response = ToolResponse::deserialize(&raw).unwrap_or_default();
            response.raw = raw;
            response
        }
        serde_json::Value::String(text) => ToolResponse {
            text: Some(text),
            ..ToolResponse::default()
        },
        _ => ToolResponse::default(),
    })
}

#[cfg(test)]
mod tests;
