//! `checkpoint setup gemini`: our entries in Gemini CLI's `settings.json` (the project's
//! `.gemini/settings.json`, or the user's `$GEMINI_CLI_HOME/.gemini/settings.json`, default
//! `~/.gemini/settings.json`): a hook group per event we act on, each hook named `checkpoint`
//! (so a second setup finds it, `--remove` takes only it, and `hooksConfig.disabled:
//! ["checkpoint"]` turns them all off), and `mcpServers.checkpoint` with `"trust": true` (an
//! untrusted server's tools are offered only under `--yolo`; a trusted one's in every approval
//! mode, measured with 0.61.0).
//!
//! The file is JSON with comments (Gemini CLI strips them before it reads it, and keeps them
//! when it writes): every edit splices the text, so the user's settings, comments and layout
//! stay as they were.

use serde_json::{Value, json};

use miette::Result;

use super::{FileEdit, Malformed, Plan, Scope, Target};
use crate::{
    clients::{Client, gemini::hooks::HookEvent},
    env,
    jsonc::{self, Node},
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

/// Our hook group for `event`, `command` running its hook.
pub(crate) fn hook_group(command: String, event: HookEvent) -> Value {
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
            "command": command,
            "timeout": HOOK_TIMEOUT_MS,
        }],
    })
}

/// Our MCP server entry; `program_path` is the binary, unquoted.
pub(crate) fn mcp_server(program_path: &str) -> Value {
    json!({ "command": program_path, "args": ["mcp"], "trust": true })
}

/// Our entries: the hook command of each event, and the binary's path for the MCP server
/// (unquoted: it is no shell command).
pub(crate) struct Ours<'a> {
    pub(crate) hook_command: &'a dyn Fn(HookEvent) -> String,
    pub(crate) path: String,
}

impl Ours<'_> {
    /// Our hook group for `event`.
    fn group(&self, event: HookEvent) -> Value {
        hook_group((self.hook_command)(event), event)
    }
}

/// `text` (the file's, `None` when there is none) with `change` made; `None` when there is
/// nothing to change.
pub(crate) fn edit(
    text: Option<&str>,
    ours: &Ours<'_>,
    change: Change,
) -> Result<Option<String>, Malformed> {
    let original = text.unwrap_or_default();
    let mut text = match text {
        Some(text) if !text.trim().is_empty() => text.to_owned(),
        _ if change == Change::Remove => return Ok(None),
        _ => "{}\n".to_owned(),
    };
    // One edit at a time, each on a fresh parse, until none is needed; each takes out or puts
    // in one entry, so this ends.
    for _ in 0..1_000 {
        let root = jsonc::parse(&text).map_err(|error| {
            Malformed::at(
                Some(error.line),
                format!("column {}: {}", error.column, error.message),
            )
        })?;
        match next_edit(&text, &root, ours, change)? {
            Some(edited) => text = edited,
            None => break,
        }
    }
    Ok((text != original).then_some(text))
}

/// The text after the next edit `change` needs, `None` when it needs none.
fn next_edit(
    text: &str,
    root: &Node,
    ours: &Ours<'_>,
    change: Change,
) -> Result<Option<String>, Malformed> {
    if root.members().is_none() {
        return Err(not_a(text, "the settings", root, "an object"));
    }
    if let Some(edited) = hooks_edit(text, root, ours, change)? {
        return Ok(Some(edited));
    }
    mcp_edit(text, root, ours, change)
}

/// The next edit of `hooks`.
fn hooks_edit(
    text: &str,
    root: &Node,
    ours: &Ours<'_>,
    change: Change,
) -> Result<Option<String>, Malformed> {
    let Some(hooks) = root.get("hooks") else {
        return Ok((change == Change::Install).then(|| {
            let all: serde_json::Map<String, Value> = HookEvent::REGISTERED
                .iter()
                .map(|event| (event.name().to_owned(), json!([ours.group(*event)])))
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
                .map(|known| ours.group(known)),
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
                // The event held only ours: the event goes too, and `hooks` when it held only
                // that.
                if sole(text, &hooks.value, event.start, event.value.end) {
                    return Ok(Some(remove_member(text, root, "hooks")));
                }
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
                let groups = json!([ours.group(event)]);
                return Ok(Some(jsonc::insert_member(
                    text,
                    &hooks.value,
                    event.name(),
                    &groups,
                )));
            }
        }
    }
    Ok(None)
}

/// The next edit of `mcpServers`.
fn mcp_edit(
    text: &str,
    root: &Node,
    ours: &Ours<'_>,
    change: Change,
) -> Result<Option<String>, Malformed> {
    let wanted = mcp_server(&ours.path);
    let Some(servers) = root.get("mcpServers") else {
        return Ok((change == Change::Install)
            .then(|| jsonc::insert_member(text, root, "mcpServers", &json!({ NAME: wanted }))));
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
        (Change::Remove, Some(server)) => {
            // `mcpServers` goes too when it held only ours.
            if sole(text, &servers.value, server.start, server.value.end) {
                Ok(Some(remove_member(text, root, "mcpServers")))
            } else {
                Ok(Some(remove_member(text, &servers.value, NAME)))
            }
        }
        (Change::Remove, None) => Ok(None),
    }
}

/// Whether a hook group is ours: one of its hooks is named `checkpoint`, or runs
/// `checkpoint hook --client gemini`.
fn is_ours(group: &Value) -> bool {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .is_some_and(|hooks| {
            hooks.iter().any(|hook| {
                hook.get("name").and_then(Value::as_str) == Some(NAME)
                    || hook
                        .get("command")
                        .and_then(Value::as_str)
                        .is_some_and(|command| Target::is_our_hook(command, Client::Gemini))
            })
        })
}

/// Whether the entry at `start..end` is all that `container` holds (no other entry, no
/// comment).
fn sole(text: &str, container: &Node, start: usize, end: usize) -> bool {
    text[container.start + 1..start].trim().is_empty()
        && text[end..container.end - 1].trim().is_empty()
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

fn not_a(text: &str, key: &str, node: &Node, expected: &'static str) -> Malformed {
    let line = text[..node.start].matches('\n').count() + 1;
    Malformed::at(Some(line), format!("`{key}` is not {expected}"))
}

/// The user's settings file: `$GEMINI_CLI_HOME/.gemini/settings.json`, else the home's.
fn user_settings(target: &Target) -> Result<std::path::PathBuf> {
    let home = match target.env(env::GEMINI_CLI_HOME) {
        Some(home) => home,
        None => target.home()?,
    };
    Ok(home.join(".gemini").join("settings.json"))
}

pub(super) fn plan(target: &Target) -> Result<Plan<'_>> {
    let path = match target.scope {
        Scope::Project => target.project_root.join(".gemini").join("settings.json"),
        Scope::User => user_settings(target)?,
    };
    let change = if target.remove {
        Change::Remove
    } else {
        Change::Install
    };
    let mut needs = Vec::new();
    if target.scope == Scope::Project {
        needs.push(format!(
            "Gemini CLI reads a project's `.gemini/settings.json` only in a trusted folder: trust `{}` (answer the trust prompt once, or add it to `~/.gemini/trustedFolders.json` as `TRUST_FOLDER`), or set `GEMINI_CLI_TRUST_WORKSPACE=true` before it starts (`--skip-trust` alone is too late: the project's settings are ignored, measured with 0.61.0).",
            target.project_root.display()
        ));
    }
    needs.push("Headless runs (`gemini -p`) offer the shell and file tools only with `--yolo` or `--approval-mode auto_edit`; the `checkpoint` MCP server is trusted, so its tools run in every mode.".to_owned());
    Ok(Plan {
        edits: vec![FileEdit {
            path,
            edit: Box::new(move |text| {
                let command = |event: HookEvent| target.hook_command(Client::Gemini, event.name());
                let ours = Ours {
                    hook_command: &command,
                    path: target.binary.clone(),
                };
                edit(text, &ours, change)
            }),
        }],
        needs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The extension's hooks (`gemini-extension/hooks/hooks.json`) are the groups `setup`
    /// writes, run from the extension's own `bin/`.
    #[test]
    fn the_extension_registers_what_setup_writes() {
        let hooks: Value = serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../gemini-extension/hooks/hooks.json"
        )))
        .unwrap();
        let expected: serde_json::Map<String, Value> = HookEvent::REGISTERED
            .into_iter()
            .map(|event| {
                let command =
                    format!("\"${{extensionPath}}/bin/checkpoint\" hook --client gemini {event}");
                (event.name().to_owned(), json!([hook_group(command, event)]))
            })
            .collect();
        assert_eq!(hooks["hooks"], Value::Object(expected));
    }
}
