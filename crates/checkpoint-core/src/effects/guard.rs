//! The guard's answer to a repeat of a recorded effect: refused without a person in a headless
//! session, asked in an interactive one, with a reason that says what already ran and how to
//! let it through.

use chrono::{DateTime, Utc};

use crate::{effects::RecordedEffect, id::WorkflowId};

/// How a repeat is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Refused (`permissionDecision: "deny"`): no person is there to ask.
    Deny,
    /// A person decides (`permissionDecision: "ask"`).
    Ask,
}

impl Refusal {
    /// The refusal for a session the client started as `entrypoint` (Claude Code's
    /// `CLAUDE_CODE_ENTRYPOINT`: `cli` for an interactive session, `sdk-cli` under `claude -p`,
    /// other `sdk-*` for the SDKs): ask only where a person sits at the terminal; deny
    /// everywhere else, an unknown or missing entrypoint included.
    pub fn for_entrypoint(entrypoint: Option<&str>) -> Self {
        match entrypoint {
            Some("cli") => Self::Ask,
            _ => Self::Deny,
        }
    }

    /// Its word in the hook's `permissionDecision`.
    pub fn decision(self) -> &'static str {
        match self {
            Self::Deny => "deny",
            Self::Ask => "ask",
        }
    }
}

/// The reason the model and the person read: when the effect ran, in which phase and session,
/// its output, and the command that lets one repeat through (naming the workflow when the
/// store has several).
pub fn reason(effect: &RecordedEffect, workflow: &WorkflowId, several: bool) -> String {
    let mut text = format!(
        "checkpoint: this call already succeeded in workflow `{workflow}` (effect {}): `{}` at {}",
        effect.number,
        effect.command,
        time(effect.at),
    );
    if let Some(phase) = &effect.phase {
        text.push_str(&format!(", phase `{phase}`"));
        if let Some(attempt) = effect.attempt.filter(|attempt| *attempt > 0) {
            text.push_str(&format!(" (attempt {attempt})"));
        }
    }
    if let Some(session) = &effect.session_id {
        text.push_str(&format!(", session {session}"));
    }
    text.push('.');
    match effect.output.as_deref().filter(|output| !output.is_empty()) {
        Some(output) => text.push_str(&format!("\nIts output: {output}\n")),
        None => text.push('\n'),
    }
    let workflow_flag = if several {
        format!(" --workflow {workflow}")
    } else {
        String::new()
    };
    text.push_str(&format!(
        "Running it again would repeat what it changed, so it was not run. Do not repeat it: carry on from its result. If a repeat is really wanted, a person runs `checkpoint effects allow {}{workflow_flag}`, which lets exactly one repeat through.",
        effect.number
    ));
    text
}

/// A time as the reason shows it, to the minute, in UTC.
pub(crate) fn time(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M UTC").to_string()
}
