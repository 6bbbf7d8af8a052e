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

use crate::clients::setup::{
    FileEdit, Malformed, Plan, Scope, Target,
    hooks_json::{self, OwnedHooks},
};
use crate::{clients::Client, env};
use checkpoint_contract::hooks::{GEMINI, Registration};

/// The name of each of our hooks, and of our MCP server.
pub(crate) const NAME: &str = "checkpoint";

/// What to do to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// Add our entries, or bring them up to date.
    Install,
    /// Take out our entries, and only them.
    Remove,
}

/// Our hook group for `hook`, `command` running it.
pub(crate) fn hook_group(command: String, hook: &Registration) -> Value {
    json!({
        "matcher": hook.matcher,
        "hooks": [{
            "name": NAME,
            "type": "command",
            "command": command,
            "timeout": hook.timeout,
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
    pub(crate) hook_command: &'a dyn Fn(&str) -> String,
    pub(crate) path: String,
}

impl Ours<'_> {
    /// Our hook group for `hook`.
    fn group(&self, hook: &Registration) -> Value {
        hook_group((self.hook_command)(hook.event), hook)
    }
}

/// `text` (the file's, `None` when there is none) with `change` made; `None` when there is
/// nothing to change. Only our hooks (named `checkpoint`, or running `checkpoint hook --client
/// gemini`) are ours: a hook of the user's in the same group stays.
pub(crate) fn edit(
    text: Option<&str>,
    ours: &Ours<'_>,
    change: Change,
) -> Result<Option<String>, Malformed> {
    let owned = OwnedHooks {
        wanted: match change {
            Change::Install => GEMINI
                .iter()
                .map(|hook| (hook.event.to_owned(), ours.group(hook)))
                .collect(),
            Change::Remove => Vec::new(),
        },
        is_ours: &is_our_hook,
    };
    let server = mcp_server(&ours.path);
    let wanted = (change == Change::Install).then_some(&server);
    hooks_json::splice(text, change == Change::Remove, |text, root| {
        if let Some(edited) = hooks_json::hooks_edit(text, root, &owned)? {
            return Ok(Some(edited));
        }
        // A server of our name is replaced, whatever it ran.
        hooks_json::server_edit(text, root, "mcpServers", wanted, &|_| true)
    })
}

/// Whether a hook is ours: named `checkpoint`, or running `checkpoint hook --client gemini`.
fn is_our_hook(hook: &Value) -> bool {
    hook.get("name").and_then(Value::as_str) == Some(NAME)
        || hook
            .get("command")
            .and_then(Value::as_str)
            .is_some_and(|command| Target::is_our_hook(command, Client::Gemini))
}

/// The user's settings file: `$GEMINI_CLI_HOME/.gemini/settings.json`, else the home's.
fn user_settings(target: &Target) -> Result<std::path::PathBuf> {
    let home = match target.env(env::GEMINI_CLI_HOME) {
        Some(home) => home,
        None => target.home()?,
    };
    Ok(home.join(".gemini").join("settings.json"))
}

pub(crate) fn plan(target: &Target) -> Result<Plan<'_>> {
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
                let command = |event: &str| target.hook_command(Client::Gemini, event);
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
        let expected: serde_json::Map<String, Value> = GEMINI
            .iter()
            .map(|hook| {
                let event = hook.event;
                let command =
                    format!("\"${{extensionPath}}/bin/checkpoint\" hook --client gemini {event}");
                (event.to_owned(), json!([hook_group(command, hook)]))
            })
            .collect();
        assert_eq!(hooks["hooks"], Value::Object(expected));
    }
}
