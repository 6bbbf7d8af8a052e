//! Our entries in Gemini CLI's `settings.json`: a hook group per event we act on, each hook
//! named `checkpoint` (so a second setup finds it, `--remove` takes only it, and
//! `hooksConfig.disabled: ["checkpoint"]` turns them all off), and `mcpServers.checkpoint` with
//! `"trust": true` (an untrusted server's tools are offered only under `--yolo`; a trusted one's
//! in every approval mode, measured with 0.61.0).
//!
//! The file is JSON with comments (Gemini CLI strips them before it reads it, and keeps them
//! when it writes): every edit splices the text, so the user's settings, comments and layout
//! stay as they were.

use serde_json::{Value, json};

use crate::{
    clients::gemini::hooks::HookEvent,
    jsonc::{self, Node, SyntaxError},
};

/// The name of each of our hooks, and of our MCP server.
pub(crate) const NAME: &str = "checkpoint";

/// How long Gemini CLI gives one of our hooks, in milliseconds (its unit).
const HOOK_TIMEOUT_MS: u64 = 30_000;

/// The tools our tool hooks act on (Gemini CLI tests the matcher as a regular expression).
const TOOL_MATCHER: &str = "^(run_shell_command|write_file|replace)$";

/// What to do to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// Add our entries, or bring them up to date.
    Install,
    /// Take out our entries, and only them.
    Remove,
}

/// Why the file cannot be changed: it is not JSON with comments, or a setting we would change
/// is not of the type Gemini CLI reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    Syntax(SyntaxError),
    /// `key` at `line` is not an object (or, for a hook event, an array).
    NotA {
        key: String,
        line: usize,
        expected: &'static str,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Syntax(error) => write!(f, "{error}"),
            Self::NotA {
                key,
                line,
                expected,
            } => write!(f, "line {line}: `{key}` is not {expected}"),
        }
    }
}

/// The hook command for `event`, `program` being the `checkpoint` binary, quoted for a shell.
pub(crate) fn hook_command(program: &str, event: HookEvent) -> String {
    format!("{program} hook --client gemini {event}")
}

/// Our hook group for `event`.
pub(crate) fn hook_group(program: &str, event: HookEvent) -> Value {
    let matcher = match event {
        HookEvent::BeforeTool | HookEvent::AfterTool => TOOL_MATCHER,
        HookEvent::SessionStart
        | HookEvent::AfterAgent
        | HookEvent::PreCompress
        | HookEvent::SessionEnd => "*",
    };
    json!({
        "matcher": matcher,
        "hooks": [{
            "name": NAME,
            "type": "command",
            "command": hook_command(program, event),
            "timeout": HOOK_TIMEOUT_MS,
        }],
    })
}

/// Our MCP server entry; `program_path` is the binary, unquoted.
pub(crate) fn mcp_server(program_path: &str) -> Value {
    json!({ "command": program_path, "args": ["mcp"], "trust": true })
}

/// Our entries, with the binary as the client should run it.
pub(crate) struct Ours {
    /// The binary's path, for the MCP server (unquoted: it is no shell command).
    pub(crate) path: String,
    /// The binary's path quoted for a shell, for the hook commands.
    pub(crate) quoted: String,
}

/// `text` (the file's, `None` when there is none) with `change` made; the same text when there
/// is nothing to change.
pub(crate) fn edit(text: Option<&str>, ours: &Ours, change: Change) -> Result<String, Refusal> {
    let mut text = match text {
        Some(text) if !text.trim().is_empty() => text.to_owned(),
        _ if change == Change::Remove => return Ok(text.unwrap_or_default().to_owned()),
        _ => "{}\n".to_owned(),
    };
    // One edit at a time, each on a fresh parse, until none is needed; each takes out or puts
    // in one entry, so this ends.
    for _ in 0..1_000 {
        let root = jsonc::parse(&text).map_err(Refusal::Syntax)?;
        match next_edit(&text, &root, ours, change)? {
            Some(edited) => text = edited,
            None => return Ok(text),
        }
    }
    Ok(text)
}

/// The text after the next edit `change` needs, `None` when it needs none.
fn next_edit(text: &str, root: &Node, ours: &Ours, change: Change) -> Result<Option<String>, Refusal> {
    if root.members().is_none() {
        return Err(not_a(text, "the settings", root, "an object"));
    }
    if let Some(edited) = hooks_edit(text, root, ours, change)? {
        return Ok(Some(edited));
    }
    mcp_edit(text, root, ours, change)
}

/// The next edit of `hooks`.
fn hooks_edit(text: &str, root: &Node, ours: &Ours, change: Change) -> Result<Option<String>, Refusal> {
    let Some(hooks) = root.get("hooks") else {
        return Ok((change == Change::Install).then(|| {
            let all: serde_json::Map<String, Value> = HookEvent::REGISTERED
                .iter()
                .map(|event| {
                    (
                        event.name().to_owned(),
                        json!([hook_group(&ours.quoted, *event)]),
                    )
                })
                .collect();
            jsonc::insert_member(text, root, "hooks", &Value::Object(all))
        }));
    };
    let Some(events) = hooks.value.members() else {
        return Err(not_a(text, "hooks", &hooks.value, "an object"));
    };
    for (index, event) in events.iter().enumerate() {
        let Some(groups) = event.value.elements() else {
            return Err(not_a(
                text,
                &format!("hooks.{}", event.key),
                &event.value,
                "an array",
            ));
        };
        let wanted = match change {
            Change::Install => event
                .key
                .parse::<HookEvent>()
                .ok()
                .filter(|known| HookEvent::REGISTERED.contains(known))
                .map(|known| hook_group(&ours.quoted, known)),
            Change::Remove => None,
        };
        let mine: Vec<usize> = (0..groups.len())
            .filter(|at| is_ours(&groups[*at].to_value(text)))
            .collect();
        let keep = wanted.as_ref().and_then(|wanted| {
            mine.iter()
                .copied()
                .find(|at| groups[*at].to_value(text) == *wanted)
        });
        if let Some(&stale) = mine.iter().find(|at| Some(**at) != keep) {
            if groups.len() == 1 && wanted.is_none() {
                // The event held only ours: the event goes too.
                let previous = index.checked_sub(1).map(|at| events[at].value.end);
                return Ok(Some(jsonc::remove_entry(
                    text,
                    event.start,
                    event.value.end,
                    previous,
                )));
            }
            let previous = stale.checked_sub(1).map(|at| groups[at].end);
            let group = &groups[stale];
            return Ok(Some(jsonc::remove_entry(
                text,
                group.start,
                group.end,
                previous,
            )));
        }
        if let (Some(wanted), None) = (&wanted, keep) {
            return Ok(Some(jsonc::push_element(text, &event.value, wanted)));
        }
    }
    if change == Change::Install {
        for event in HookEvent::REGISTERED {
            if hooks.value.get(event.name()).is_none() {
                let groups = json!([hook_group(&ours.quoted, event)]);
                return Ok(Some(jsonc::insert_member(
                    text,
                    &hooks.value,
                    event.name(),
                    &groups,
                )));
            }
        }
    } else if events.is_empty() && hooks.value.end - hooks.value.start == 2 {
        // `--remove` emptied it (a bare `{}`): it goes too.
        return Ok(Some(remove_member(text, root, "hooks")));
    }
    Ok(None)
}

/// The next edit of `mcpServers`.
fn mcp_edit(text: &str, root: &Node, ours: &Ours, change: Change) -> Result<Option<String>, Refusal> {
    let wanted = mcp_server(&ours.path);
    let Some(servers) = root.get("mcpServers") else {
        return Ok((change == Change::Install).then(|| {
            jsonc::insert_member(text, root, "mcpServers", &json!({ NAME: wanted }))
        }));
    };
    if servers.value.members().is_none() {
        return Err(not_a(text, "mcpServers", &servers.value, "an object"));
    }
    match (change, servers.value.get(NAME)) {
        (Change::Install, None) => Ok(Some(jsonc::insert_member(
            text,
            &servers.value,
            NAME,
            &wanted,
        ))),
        (Change::Install, Some(server)) => Ok((server.value.to_value(text) != wanted)
            .then(|| jsonc::replace(text, &server.value, &wanted))),
        (Change::Remove, Some(_)) => {
            if servers.value.members().is_some_and(|members| members.len() == 1) {
                Ok(Some(remove_member(text, root, "mcpServers")))
            } else {
                Ok(Some(remove_member(text, &servers.value, NAME)))
            }
        }
        (Change::Remove, None) => Ok(None),
    }
}

/// Whether a hook group is ours: one of its hooks is named `checkpoint`.
fn is_ours(group: &Value) -> bool {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .is_some_and(|hooks| {
            hooks
                .iter()
                .any(|hook| hook.get("name").and_then(Value::as_str) == Some(NAME))
        })
}

/// `text` without member `key` of `object`.
fn remove_member(text: &str, object: &Node, key: &str) -> String {
    let members = object.members().unwrap_or_default();
    let Some(index) = members.iter().position(|member| member.key == key) else {
        return text.to_owned();
    };
    let previous = index.checked_sub(1).map(|at| members[at].value.end);
    let member = &members[index];
    jsonc::remove_entry(text, member.start, member.value.end, previous)
}

fn not_a(text: &str, key: &str, node: &Node, expected: &'static str) -> Refusal {
    Refusal::NotA {
        key: key.to_owned(),
        line: text[..node.start].matches('\n').count() + 1,
        expected,
    }
}
