//! `checkpoint setup claude`: Claude Code's hooks in its settings file and the MCP server
//! entry, for people who do not want the plugin (both at once would run every hook twice).
//!
//! Project: `.claude/settings.json` and `.mcp.json`; user: `settings.json` and `.claude.json`
//! in `$CLAUDE_CONFIG_DIR`, else `~/.claude/settings.json` and `~/.claude.json`.

use miette::Result;
use serde_json::json;

use super::{
    Plan, Scope, Target,
    hooks_json::{self, HookSpec},
};
use crate::{
    clients::{Client, claude::hooks::HookEvent},
    env,
};

/// The events' matchers, as the plugin registers them.
fn matcher(event: HookEvent) -> Option<&'static str> {
    // Bash and MCP tools for the guard and the record of effects, `Agent` for sub-agents,
    // `Workflow` for Claude Code's own runs (their launch only: a failed launch records nothing);
    // the file tools (and `Read`, what a session saw) for the write guard.
    match event {
        HookEvent::PreToolUse => Some("Agent|Bash|Write|Edit|MultiEdit|NotebookEdit|mcp__.*"),
        HookEvent::PostToolUse => {
            Some("Read|Write|Edit|MultiEdit|NotebookEdit|Bash|Agent|Workflow|mcp__.*")
        }
        HookEvent::PostToolUseFailure => {
            Some("Write|Edit|MultiEdit|NotebookEdit|Bash|Agent|mcp__.*")
        }
        HookEvent::SessionStart
        | HookEvent::PreCompact
        | HookEvent::Stop
        | HookEvent::SubagentStart
        | HookEvent::SubagentStop
        | HookEvent::StopFailure
        | HookEvent::SessionEnd => None,
    }
}

/// The hook's timeout in seconds, as the plugin's.
fn timeout(event: HookEvent) -> u64 {
    match event {
        HookEvent::SessionStart => 30,
        HookEvent::PreCompact
        | HookEvent::PreToolUse
        | HookEvent::PostToolUse
        | HookEvent::PostToolUseFailure
        | HookEvent::Stop
        | HookEvent::SubagentStart
        | HookEvent::SubagentStop
        | HookEvent::StopFailure
        | HookEvent::SessionEnd => 5,
    }
}

pub(super) fn plan(target: &Target) -> Result<Plan<'_>> {
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
    let specs: Vec<HookSpec> = HookEvent::ALL
        .into_iter()
        .map(|event| HookSpec {
            event: event.name(),
            matcher: matcher(event),
            command: target.hook_command(Client::Claude, event.name()),
            timeout: timeout(event),
        })
        .collect();
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
