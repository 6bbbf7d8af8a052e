//! Claude Code's home: the payloads of its hooks, the stream-json lines of a headless `claude
//! -p` session and the session command, `checkpoint setup claude`, and the files of its own
//! `Workflow` runs.

pub(crate) mod hooks;
pub(crate) mod run_catchup;
pub(crate) mod session;
pub(crate) mod setup;
pub(crate) mod stream;
pub(crate) mod workflow_run;
pub(crate) mod workflow_script;

use std::{collections::BTreeSet, ffi::OsString, path::Path};

use checkpoint_core::effects::Attendance;
use chrono::{Local, Offset};
use miette::Result;

use crate::{
    clients::{
        ClientHome, ReadPayload,
        event::Hooked,
        session::AgentClient,
        setup::{Plan, Target},
    },
    env,
};

/// Claude Code, as `clients::home` finds it.
pub(crate) struct ClaudeCode;

impl ClientHome for ClaudeCode {
    fn session(&self, program: OsString, extra: Vec<String>) -> Box<dyn AgentClient> {
        Box::new(session::Claude {
            program,
            extra,
            local_offset: Local::now().offset().fix(),
        })
    }

    fn setup<'a>(&self, target: &'a Target) -> Result<Plan<'a>> {
        setup::plan(target)
    }

    fn hooked(&self, event: &str, read: ReadPayload<'_>) -> Result<Option<Hooked>, String> {
        let event: hooks::HookEvent = event.parse()?;
        if event == hooks::HookEvent::SessionEnd {
            // Claude Code cuts SessionEnd short and skips it after any hook timeout, so
            // nothing depends on it; the plugin declares it because a StopFailure hook in
            // `-p` mode runs only when some SessionEnd hook exists (measured with 2.1.197).
            // The payload is read so that the client never writes into a closed pipe.
            let _ = read();
            return Ok(None);
        }
        hooks::hooked(event, &read()?)
    }

    fn ends_session(&self, event: &str) -> bool {
        event == hooks::HookEvent::SessionEnd.name()
    }

    fn is_workflow_agent(&self, agent_type: Option<&str>) -> bool {
        hooks::is_workflow_agent(agent_type)
    }

    fn live_sessions(&self) -> Option<BTreeSet<String>> {
        live_sessions()
    }

    fn attendance(&self) -> Attendance {
        // Asked in an interactive session, denied headless.
        let entrypoint = std::env::var(env::CLAUDE_CODE_ENTRYPOINT).ok();
        super::claude_attendance(entrypoint.as_deref())
    }
}

/// The sessions Claude Code lists as live (`<config>/sessions/<pid>.json`, the configuration
/// directory `$CLAUDE_CONFIG_DIR` or `~/.claude`) whose process still runs: a session killed
/// with no chance to remove its file (`kill -9`, a crash) is not live. `None` when the client
/// keeps no list (an older version, no home).
fn live_sessions() -> Option<BTreeSet<String>> {
    let config = match std::env::var_os(env::CLAUDE_CONFIG_DIR).filter(|dir| !dir.is_empty()) {
        Some(dir) => std::path::PathBuf::from(dir),
        None => Path::new(&std::env::var_os(env::HOME)?).join(".claude"),
    };
    let mut listed = false;
    let mut live = BTreeSet::new();
    for entry in std::fs::read_dir(config.join("sessions")).ok()? {
        let Ok(entry) = entry else { continue };
        let Ok(Some(bytes)) = checkpoint_core::read_foreign(&entry.path(), 64 * 1024) else {
            continue;
        };
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            continue;
        };
        let Some(session) = value.get("sessionId").and_then(serde_json::Value::as_str) else {
            continue;
        };
        listed = true;
        let pid = value
            .get("pid")
            .and_then(serde_json::Value::as_u64)
            .and_then(|pid| u32::try_from(pid).ok());
        // A process that cannot be asked about is taken as live.
        if pid.is_none_or(|pid| crate::process_tree::alive(pid) != Some(false)) {
            live.insert(session.to_owned());
        }
    }
    listed.then_some(live)
}

#[cfg(test)]
mod tests {
    use super::hooks::HookEvent;

    #[test]
    fn hook_events_parse_from_their_names() {
        for event in HookEvent::ALL {
            assert_eq!(event.name().parse::<HookEvent>().unwrap(), event);
            assert_eq!(event.to_string(), event.name());
        }
        let err = "Notification".parse::<HookEvent>().unwrap_err();
        assert_eq!(err, "unknown hook event `Notification`; nothing recorded");
    }

    /// The plugin registers exactly the events the hook handles.
    #[test]
    fn the_plugin_registers_every_event() {
        let hooks: serde_json::Value = serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../plugin/hooks/hooks.json"
        )))
        .unwrap();
        let mut registered: Vec<&str> = hooks["hooks"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut known: Vec<&str> = HookEvent::ALL.iter().map(|event| event.name()).collect();
        registered.sort_unstable();
        known.sort_unstable();
        assert_eq!(registered, known);
    }
}
