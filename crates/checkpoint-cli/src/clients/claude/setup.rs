//! `checkpoint setup claude`: Claude Code's hooks in its settings file and the MCP server
//! entry, for people who do not want the plugin (both at once would run every hook twice).
//!
//! Project: `.claude/settings.json` and `.mcp.json`; user: `settings.json` and `.claude.json`
//! in `$CLAUDE_CONFIG_DIR`, else `~/.claude/settings.json` and `~/.claude.json`.

use miette::Result;
use serde_json::json;

use crate::clients::setup::{
    Plan, Scope, Target,
    hooks_json::{self, HookSpec},
};
use crate::{clients::Client, env};

pub(crate) fn plan(target: &Target) -> Result<Plan<'_>> {
    let (settings, mcp) = match target.scope {
        Scope::Project => (
            target.project_root.join(".claude").join("settings.json"),
            target.project_root.join(".mcp.json"),
        ),
        Scope::User => match target.env(env::CLAUDE_CONFIG_DIR) {
            Some(dir) => (dir.join("settings.json"), dir.join(".claude.json")),
            None => {
                let home = target.home()?;
                (
                    home.join(".claude").join("settings.json"),
                    home.join(".claude.json"),
                )
            }
        },
    };
    let specs = HookSpec::of(
        target,
        Client::Claude,
        &checkpoint_contract::hooks::CLAUDE_CODE,
    );
    let server = json!({ "command": target.binary, "args": ["mcp"] });
    let remove = target.remove;
    let mut needs = vec![
        "Do not also enable the `checkpoint` plugin: its hooks and these would both run."
            .to_owned(),
    ];
    if target.scope == Scope::Project {
        needs.push("Claude Code asks once to approve the project's MCP server `checkpoint` from `.mcp.json`; approve it (or set `enableAllProjectMcpServers`).".to_owned());
    }
    Ok(Plan {
        edits: vec![
            hooks_json::hooks_file(settings, Client::Claude, specs, remove),
            hooks_json::servers_file(mcp, "mcpServers", server, remove),
        ],
        needs,
    })
}
