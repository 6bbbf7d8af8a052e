//! Codex CLI's hook payloads, typed (measured on 0.169.0): the events `checkpoint hook --client
//! codex` handles, and their conversion to canonical events.
//!
//! Codex's payloads have Claude Code's shape with two differences that matter: the shell tool
//! (`Bash`) reports its output as a plain string, and a file write is an `apply_patch` call
//! whose paths are only inside the patch text, relative to `cwd`. Unknown fields are ignored; a
//! field read only when present never makes a payload unusable.

use std::path::Path;

use serde::Deserialize;

use crate::clients::{
    event::{self, Event, Hooked, StartSource, Tool},
    lenient::{self, lenient_bool, lenient_map, lenient_str},
};

event::hook_events! {
    /// A Codex hook event that `checkpoint hook --client codex` handles, in the order they fire.
    "Codex" enum HookEvent {
        SessionStart,
        PreCompact,
        PreToolUse,
        PostToolUse,
        Stop,
    }
}

/// The canonical tool of a tool Codex names `name` in `tool_name`.
pub(crate) fn tool_named(name: &str) -> Tool {
    match name {
        "Bash" => Tool::Bash,
        "apply_patch" => Tool::FileEdit,
        _ => Tool::Other,
    }
}

/// The fields every payload carries.
#[derive(Debug, Deserialize)]
struct Envelope {
    hook_event_name: String,
    session_id: String,
    cwd: String,
    #[serde(default, deserialize_with = "lenient_str")]
    transcript_path: Option<String>,
}

/// `SessionStart`.
#[derive(Debug, Deserialize)]
struct SessionStart {
    /// `startup`, `resume` (and, by the source, `clear` or `compact`).
    #[serde(default, deserialize_with = "lenient_str")]
    source: Option<String>,
}

/// `PreCompact` (payload not measured: the trigger is read when present).
#[derive(Debug, Deserialize)]
struct PreCompact {
    #[serde(default, deserialize_with = "lenient_str")]
    trigger: Option<String>,
}

/// `PreToolUse` and `PostToolUse`.
#[derive(Debug, Deserialize)]
struct ToolUse {
    tool_name: String,
    #[serde(default, deserialize_with = "lenient_map")]
    tool_input: ToolInput,
    /// `PostToolUse`: the tool's output, a plain string for `Bash` and `apply_patch` (whose
    /// first line is `Exit code: <n>`).
    #[serde(default, deserialize_with = "lenient_str")]
    tool_response: Option<String>,
    #[serde(default, deserialize_with = "lenient_str")]
    tool_use_id: Option<String>,
}

/// The fields of a tool call's input that the hooks read.
#[derive(Debug, Default, Deserialize)]
struct ToolInput {
    /// `Bash`: the command as the model gave it; `apply_patch`: the patch text.
    #[serde(default, deserialize_with = "lenient_str")]
    command: Option<String>,
}

/// `Stop`.
#[derive(Debug, Deserialize)]
struct Stop {
    #[serde(default, deserialize_with = "lenient_bool")]
    stop_hook_active: Option<bool>,
}

/// Parses a Codex payload of `event` into its canonical event.
pub(crate) fn hooked(event: HookEvent, bytes: &[u8]) -> Result<Option<Hooked>, String> {
    lenient::check_object(bytes)?;
    let name = event.name();
    let envelope: Envelope = lenient::parse(name, bytes)?;
    if envelope.hook_event_name != name {
        return Err(format!(
            "the payload is for `{}`, not `{name}`; nothing recorded",
            envelope.hook_event_name
        ));
    }
    let cwd = Path::new(&envelope.cwd);
    let event = match event {
        HookEvent::SessionStart => {
            let payload: SessionStart = lenient::parse(name, bytes)?;
            Event::SessionStart(event::SessionStart {
                source: match payload.source.as_deref() {
                    Some("compact") => StartSource::Compacted,
                    _ => StartSource::Fresh,
                },
            })
        }
        HookEvent::PreCompact => {
            let payload: PreCompact = lenient::parse(name, bytes)?;
            Event::BeforeCompaction(event::Compaction {
                trigger: payload.trigger.unwrap_or_else(|| "auto".to_owned()),
            })
        }
        HookEvent::PreToolUse => Event::ToolStart(tool_use(lenient::parse(name, bytes)?, cwd)),
        HookEvent::PostToolUse => Event::ToolDone(tool_use(lenient::parse(name, bytes)?, cwd)),
        HookEvent::Stop => {
            let payload: Stop = lenient::parse(name, bytes)?;
            Event::TurnEnd(event::Stop {
                stop_hook_active: payload.stop_hook_active,
                ..event::Stop::default()
            })
        }
    };
    Ok(Some(Hooked {
        envelope: event::Envelope {
            session_id: envelope.session_id,
            cwd: envelope.cwd,
            transcript_path: envelope.transcript_path,
        },
        event,
    }))
}

fn tool_use(payload: ToolUse, cwd: &Path) -> event::ToolUse {
    let tool = tool_named(&payload.tool_name);
    let command = payload.tool_input.command;
    let exit_code = match tool {
        Tool::FileEdit => payload.tool_response.as_deref().and_then(patch_exit_code),
        Tool::Bash | Tool::Agent | Tool::FileRead | Tool::Workflow | Tool::Other => None,
    };
    let (written, command) = match tool {
        // A patch that failed wrote nothing we count.
        Tool::FileEdit if exit_code.is_none_or(|code| code == 0) => (
            command
                .as_deref()
                .map(|patch| patch_paths(patch, cwd))
                .unwrap_or_default(),
            None,
        ),
        Tool::FileEdit | Tool::FileRead | Tool::Agent | Tool::Workflow | Tool::Other => {
            (Vec::new(), None)
        }
        Tool::Bash => (Vec::new(), command),
    };
    event::ToolUse {
        tool,
        tool_name: payload.tool_name,
        tool_input: event::ToolInput {
            written,
            command,
            ..event::ToolInput::default()
        },
        tool_response: event::ToolResponse {
            exit_code,
            ..event::ToolResponse::default()
        },
        tool_use_id: payload.tool_use_id,
        agent_id: None,
    }
}

/// The files a patch adds, updates or moves to, absolute (relative ones from `cwd`), in the
/// patch's order, each once; deleted files and the sources of moves are not written.
pub(crate) fn patch_paths(patch: &str, cwd: &Path) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    // The file of the `*** Update File:` being read, until another header.
    let mut updating: Option<String> = None;
    for line in patch.lines() {
        let header = |marker: &str| {
            line.strip_prefix(marker)
                .map(str::trim)
                .filter(|path| !path.is_empty())
                .map(|path| cwd.join(path).to_string_lossy().into_owned())
        };
        let written = if let Some(path) = header("*** Add File:") {
            updating = None;
            path
        } else if let Some(path) = header("*** Update File:") {
            updating = Some(path.clone());
            path
        } else if let Some(path) = header("*** Move to:") {
            // The file moved is not written (unless written elsewhere in the patch).
            if let Some(index) = updating
                .take()
                .and_then(|source| paths.iter().rposition(|known| *known == source))
            {
                paths.remove(index);
            }
            path
        } else {
            if line.starts_with("*** ") {
                updating = None;
            }
            continue;
        };
        if !paths.contains(&written) {
            paths.push(written);
        }
    }
    paths
}

/// The exit code an `apply_patch` result starts with (`Exit code: <n>`), where it has one.
fn patch_exit_code(response: &str) -> Option<i64> {
    response
        .lines()
        .next()?
        .strip_prefix("Exit code:")?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_paths_are_absolute_and_each_written_once() {
        let patch = "*** Begin Patch\n*** Add File: docs/spec.md\n+# spec\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@\n-x\n+y\n*** Delete File: old.md\n*** Add File: /abs/c.md\n+c\n*** Update File: docs/spec.md\n*** Add File:   \n*** End Patch";
        assert_eq!(
            patch_paths(patch, Path::new("/repo")),
            ["/repo/docs/spec.md", "/repo/src/b.rs", "/abs/c.md"]
        );
        assert!(patch_paths("", Path::new("/repo")).is_empty());
        assert!(patch_paths("+*** Add File: x", Path::new("/repo")).is_empty());
    }

    #[test]
    fn patch_exit_codes_are_read_from_the_first_line() {
        assert_eq!(
            patch_exit_code("Exit code: 0\nWall time: 0 seconds"),
            Some(0)
        );
        assert_eq!(patch_exit_code("Exit code: 1\n"), Some(1));
        assert_eq!(patch_exit_code("Success.\nExit code: 1"), None);
        assert_eq!(patch_exit_code(""), None);
    }

    #[test]
    fn hook_events_parse_from_their_names() {
        for event in HookEvent::ALL {
            assert_eq!(event.name().parse::<HookEvent>().unwrap(), event);
        }
        assert!("AfterTool".parse::<HookEvent>().is_err());
    }
}
