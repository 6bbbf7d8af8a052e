//! The documents of the effect ledger: `effects` (a list) and what `effect` and `effects allow`
//! print (the workflow, and the effect they recorded or let through once more).

use checkpoint_core::{EffectSource, PhaseId, WorkflowId, effects::RecordedEffect};
use chrono::{DateTime, Utc};
use serde::Serialize;

/// The JSON document of `checkpoint effects`.
#[derive(Debug, Serialize)]
pub(crate) struct EffectsReport<'a> {
    pub(crate) version: u32,
    pub(crate) workflow: &'a WorkflowId,
    /// Which effects are listed: `unfinished` (the default: those of phases not done, and those
    /// recorded on no phase), `phase` (`--phase`) or `all` (`--all`).
    pub(crate) shown: Shown,
    /// How many effects the workflow has in all.
    pub(crate) total: usize,
    pub(crate) effects: Vec<EffectRow<'a>>,
}

/// Which effects a listing holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Shown {
    Unfinished,
    Phase,
    All,
}

/// One effect as the documents show it.
#[derive(Debug, Serialize)]
pub(crate) struct EffectRow<'a> {
    /// Its number in the workflow, from 1 (`checkpoint effects allow <number>`).
    pub(crate) number: u64,
    /// Its journal entry.
    pub(crate) seq: u64,
    pub(crate) at: DateTime<Utc>,
    pub(crate) phase: Option<&'a PhaseId>,
    pub(crate) attempt: Option<u32>,
    /// `Bash`, or the MCP tool's name; none for one recorded by hand or through the MCP
    /// `effect` tool.
    pub(crate) tool: Option<&'a str>,
    /// The command, the tool's input or what was done (redacted).
    pub(crate) command: &'a str,
    /// The excerpt of its output (redacted, at most 1,000 characters).
    pub(crate) output: Option<&'a str>,
    pub(crate) ok: bool,
    pub(crate) session_id: Option<&'a str>,
    /// `hook`, `manual` or `mcp`.
    pub(crate) source: EffectSource,
    /// Whether it guards a repeat now: it succeeded, it is the latest of its kind, and no
    /// repeat is allowed.
    pub(crate) guards: bool,
    /// Whether one repeat of it is allowed (`effects allow`) and not yet used.
    pub(crate) allowed: bool,
    /// Whether its outcome is unknown: let through, and no outcome recorded (it may have
    /// happened); written only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) unknown: bool,
    /// Whether its call may still report (an unknown effect whose turn and session have not
    /// been seen to end): it is running; written only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) in_flight: bool,
}

impl<'a> EffectRow<'a> {
    pub(crate) fn new(effect: &'a RecordedEffect, guards: bool) -> Self {
        Self {
            number: effect.number,
            seq: effect.seq,
            at: effect.at,
            phase: effect.phase.as_ref(),
            attempt: effect.attempt,
            tool: effect.tool.as_deref(),
            command: &effect.command,
            output: effect.output.as_deref(),
            ok: effect.ok,
            session_id: effect.session_id.as_deref(),
            source: effect.source,
            guards,
            allowed: effect.allowed,
            unknown: effect.unknown,
            in_flight: effect.in_flight,
        }
    }
}
