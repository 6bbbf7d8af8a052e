//! Gemini CLI's hook payloads, typed, and their canonical events.
//!
//! Measured with Gemini CLI 0.61.0 (see `docs/clients.md`): every payload carries
//! `session_id`, `cwd` and `hook_event_name` (Gemini's names: `AfterTool`, not `PostToolUse`);
//! the shell tool is `run_shell_command` (its output in `tool_response.returnDisplay` and
//! `llmContent`), the writes are `write_file` and `replace` (`tool_input.file_path` as the model
//! gave it, often relative; the absolute path in `tool_response.returnDisplay.filePath`); a
//! failed tool call is an `AfterTool` whose `tool_response.error` is set. `PreCompress` fires
//! before every model call even when nothing is compressed, so it is not taken as a compaction.
//! No hook fires on a 429.
//!
//! Unknown fields are ignored; a field read only when present reads as absent when it has
//! another type.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::clients::event::{
    self, Envelope, Event, Hooked, StartSource, Stop, Tool, ToolInput, ToolResponse,
};

event::hook_events! {
    /// A Gemini CLI hook event that `checkpoint hook --client gemini` accepts.
    "Gemini CLI" enum HookEvent {
        /// A session started (`startup`, `resume`, `clear`): answered with where the work stands.
        SessionStart,
        /// A tool call is about to run.
        BeforeTool,
        /// A tool call ran (or failed, with `tool_response.error`).
        AfterTool,
        /// The agent's turn ended: a heartbeat, and the `strict_stop` check.
        AfterAgent,
        /// Fires before every model call, compressed or not: accepted, and does nothing.
        PreCompress,
        /// Accepted, and does nothing (it does not run after a 429).
        SessionEnd,
    }
}

/// The canonical tool of a tool Gemini CLI names `name`.
pub(crate) fn tool_named(name: &str) -> Tool {
    match name {
        "run_shell_command" => Tool::Bash,
        "write_file" | "replace" => Tool::FileEdit,
        "read_file" => Tool::FileRead,
        _ => Tool::Other,
    }
}

/// The fields every payload carries.
#[derive(Debug, Deserialize)]
struct Common {
    hook_event_name: String,
    session_id: String,
    cwd: String,
    #[serde(default)]
    transcript_path: Value,
}

/// `BeforeTool` and `AfterTool`.
#[derive(Debug, Deserialize)]
struct ToolCall {
    tool_name: String,
    #[serde(default)]
    tool_input: Value,
    /// Only in `AfterTool`: `llmContent`, `returnDisplay`, `error`.
    #[serde(default)]
    tool_response: Value,
}

/// `AfterAgent`.
#[derive(Debug, Deserialize)]
struct AfterAgent {
    #[serde(default)]
    stop_hook_active: Value,
    #[serde(default)]
    prompt_response: Value,
}

/// Parses Gemini CLI's payload of `event` from `bytes` as a canonical event; the error says
/// why it is not one this event's hook can act on; `None` for an event that does nothing.
pub(crate) fn hooked(event: HookEvent, bytes: &[u8]) -> Result<Option<Hooked>, String> {
    if bytes.trim_ascii().is_empty() {
        return Err("no payload on stdin; nothing recorded".into());
    }
    if bytes.trim_ascii_start().first() != Some(&b'{') {
        return Err(match serde_json::from_slice::<Value>(bytes) {
            Ok(_) => "the payload on stdin is not a JSON object; nothing recorded".into(),
            Err(err) => format!("the payload on stdin is not JSON ({err}); nothing recorded"),
        });
    }
    let common: Common = parse(event, bytes)?;
    if common.hook_event_name != event.name() {
        return Err(format!(
            "the payload is for `{}`, not `{event}`; nothing recorded",
            common.hook_event_name
        ));
    }
    let event = match event {
        // Gemini CLI says `startup`, `resume` or `clear`; none follows a compaction.
        HookEvent::SessionStart => Event::SessionStart(event::SessionStart {
            source: StartSource::Fresh,
        }),
        HookEvent::BeforeTool => {
            let call: ToolCall = parse(event, bytes)?;
            Event::ToolStart(tool_use(&call, &common.cwd))
        }
        HookEvent::AfterTool => {
            let call: ToolCall = parse(event, bytes)?;
            match failure(&call.tool_response) {
                Some(error) => Event::ToolFailed(event::ToolFailure {
                    tool: tool_named(&call.tool_name),
                    tool_input: tool_use(&call, &common.cwd).tool_input,
                    tool_name: call.tool_name,
                    error,
                    tool_use_id: None,
                    agent_id: None,
                }),
                None => Event::ToolDone(tool_use(&call, &common.cwd)),
            }
        }
        HookEvent::AfterAgent => {
            let stop: AfterAgent = parse(event, bytes)?;
            Event::TurnEnd(Stop {
                stop_hook_active: stop.stop_hook_active.as_bool(),
                agent_id: None,
                last_assistant_message: stop.prompt_response.as_str().map(str::to_owned),
                agent_type: None,
                agent_transcript_path: None,
            })
        }
        HookEvent::PreCompress | HookEvent::SessionEnd => return Ok(None),
    };
    Ok(Some(Hooked {
        envelope: Envelope {
            session_id: common.session_id,
            cwd: common.cwd,
            transcript_path: common.transcript_path.as_str().map(str::to_owned),
        },
        event,
    }))
}

/// A tool call as a canonical one; the files a write names made absolute against `cwd`.
fn tool_use(call: &ToolCall, cwd: &str) -> event::ToolUse {
    let tool = tool_named(&call.tool_name);
    let input = &call.tool_input;
    let response = &call.tool_response;
    let text = |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut tool_input = ToolInput::default();
    let mut tool_response = ToolResponse::default();
    match tool {
        Tool::FileEdit => {
            // The path the client wrote (absolute) beats the one the model gave.
            let written = response
                .get("returnDisplay")
                .and_then(|display| text(display, "filePath"))
                .filter(|path| Path::new(path).is_absolute())
                .or_else(|| text(input, "file_path").map(|path| absolute(&path, cwd)));
            tool_input.written.extend(written);
        }
        Tool::Bash => {
            tool_input.command = text(input, "command");
            if let Some(content) = &text(response, "llmContent") {
                let interrupted = content.contains("was cancelled")
                    || content.contains("was automatically cancelled");
                tool_response.interrupted = Some(interrupted);
                if !interrupted {
                    tool_response.exit_code = exit_code(content);
                }
            }
        }
        Tool::FileRead => {
            tool_input.read = text(input, "file_path").or_else(|| text(input, "absolute_path"));
            // Gemini CLI cuts a long file and says so at the top of what the model reads.
            let cut = text(response, "llmContent")
                .is_some_and(|content| content.contains("The file content has been truncated"));
            let ranged = ["offset", "limit", "start_line", "end_line"]
                .into_iter()
                .any(|key| input.get(key).is_some_and(|value| !value.is_null()));
            tool_response.whole_read = !cut && !ranged;
        }
        Tool::Agent | Tool::Workflow | Tool::Other => {}
    }
    event::ToolUse {
        tool,
        tool_name: call.tool_name.clone(),
        tool_input,
        tool_response,
        tool_use_id: None,
        agent_id: None,
    }
}

/// The error of a failed tool call (`tool_response.error`, an object with a `message`, or a
/// text).
fn failure(response: &Value) -> Option<String> {
    match response.get("error")? {
        Value::Null => None,
        Value::String(message) => Some(message.clone()),
        error => Some(
            error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned),
        ),
    }
}

/// A shell command's exit code from its `llmContent`: the `Exit Code: <n>` line Gemini CLI adds
/// when it is not zero, else zero for a command that ran to its end.
fn exit_code(content: &str) -> Option<i64> {
    match content
        .lines()
        .find_map(|line| line.strip_prefix("Exit Code: "))
    {
        Some(code) => code.trim().parse().ok(),
        None => content.contains("Output: ").then_some(0),
    }
}

/// `path` made absolute against `cwd`.
fn absolute(path: &str, cwd: &str) -> String {
    let path = Path::new(path);
    if path.is_absolute() || cwd.is_empty() {
        path.to_string_lossy().into_owned()
    } else {
        Path::new(cwd).join(path).to_string_lossy().into_owned()
    }
}

fn parse<'de, T: Deserialize<'de>>(event: HookEvent, bytes: &'de [u8]) -> Result<T, String> {
    serde_json::from_slice(bytes).map_err(|err| {
        if err.is_data() {
            format!("the payload is not a `{event}` payload we can use ({err}); nothing recorded")
        } else {
            format!("the payload on stdin is not JSON ({err}); nothing recorded")
        }
    })
}

#[cfg(test)]
mod tests;
