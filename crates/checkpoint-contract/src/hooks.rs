//! Which hook events each client registers, the tools each hook matches and its timeout: the
//! one table that `cargo xtask codegen` writes the plugin's `hooks.json` from and that
//! `checkpoint setup <client>` writes the client's files from, so the two never disagree.
//!
//! What each hook does with the event is the command line's (`clients/<client>/hooks.rs`); a
//! test there checks that every event here is one the client's hook reads.

/// One hook a client runs: its event (by the client's name for it), the tools it matches
/// (`None`: every call, or an event that has no tool), and its timeout in the client's unit
/// (seconds for Claude Code and Codex CLI, milliseconds for Gemini CLI).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registration {
    pub event: &'static str,
    pub matcher: Option<&'static str>,
    pub timeout: u64,
}

const fn hook(event: &'static str, matcher: Option<&'static str>, timeout: u64) -> Registration {
    Registration {
        event,
        matcher,
        timeout,
    }
}

/// Claude Code's hooks, as the plugin and `checkpoint setup claude` register them.
///
/// `SessionStart` has time for the plugin launcher's first download; every other hook runs the
/// installed binary in milliseconds. Bash and MCP tools for the guard of effects and their
/// record, `Agent` for sub-agents' dispatches, `Workflow` for Claude Code's own runs (their
/// launch only: a failed launch records nothing), the file tools (and `Read`, what a session
/// saw) for the write guard. `SessionEnd` is registered because a `StopFailure` hook in `-p`
/// mode runs only when some `SessionEnd` hook exists (measured with 2.1.197).
pub const CLAUDE_CODE: [Registration; 10] = [
    hook("SessionStart", None, 30),
    hook("PreCompact", None, 5),
    hook(
        "PreToolUse",
        Some("Agent|Bash|Write|Edit|MultiEdit|NotebookEdit|mcp__.*"),
        5,
    ),
    hook(
        "PostToolUse",
        Some("Read|Write|Edit|MultiEdit|NotebookEdit|Bash|Agent|Workflow|mcp__.*"),
        5,
    ),
    hook(
        "PostToolUseFailure",
        Some("Write|Edit|MultiEdit|NotebookEdit|Bash|Agent|mcp__.*"),
        5,
    ),
    hook("Stop", None, 5),
    hook("SubagentStart", None, 5),
    hook("SubagentStop", None, 5),
    hook("StopFailure", None, 5),
    hook("SessionEnd", None, 5),
];

/// Codex CLI's hooks, as `checkpoint setup codex` registers them (Codex tests a matcher as a
/// regular expression): the calls that may be effects (a shell command, an MCP tool) and the
/// file writes the write guard checks (`apply_patch`) before they run; after, the shell and
/// the file writes.
pub const CODEX: [Registration; 5] = [
    hook("SessionStart", None, 30),
    hook("PreCompact", None, 5),
    hook("PreToolUse", Some("^(Bash|apply_patch|mcp__.*)$"), 5),
    hook("PostToolUse", Some("^(Bash|apply_patch)$"), 5),
    hook("Stop", None, 5),
];

/// The tools Gemini CLI's tool hooks act on (it tests the matcher as a regular expression).
const GEMINI_TOOLS: Option<&str> = Some("^(run_shell_command|write_file|replace|read_file)$");

/// Gemini CLI's hooks, as `checkpoint setup gemini` and the extension register them; Gemini
/// CLI's timeouts are in milliseconds.
pub const GEMINI: [Registration; 4] = [
    hook("SessionStart", Some("*"), 30_000),
    hook("BeforeTool", GEMINI_TOOLS, 30_000),
    hook("AfterTool", GEMINI_TOOLS, 30_000),
    hook("AfterAgent", Some("*"), 30_000),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// A client registers each event once (a second entry would run its hook twice).
    #[test]
    fn each_client_registers_an_event_once() {
        for table in [&CLAUDE_CODE[..], &CODEX[..], &GEMINI[..]] {
            let mut events: Vec<&str> = table.iter().map(|hook| hook.event).collect();
            events.sort_unstable();
            let count = events.len();
            events.dedup();
            assert_eq!(events.len(), count, "{table:?}");
        }
    }
}
