//! Rendering: human text (coloured only when asked) and JSON documents on stdout; warnings on
//! stderr. The only module that prints (`sink.rs` and `screen.rs` write; the others build text).

mod ask;
mod journal;
mod paint;
mod plan;
mod screen;
mod sink;
pub(crate) mod snapshots;
mod status;
mod text;

// The effects per phase are core's; named here too, where the status is drawn.
pub(crate) use checkpoint_core::effects::EffectCounts;

pub(crate) use crate::output::{
    ask::ask,
    journal::{describe, entry_line},
    paint::Paint,
    plan::{render_findings, render_plan},
    screen::Screen,
    sink::{
        ColorChoice, Format, JSON_VERSION, clap_error, emit, emit_human, emit_json, note, warn,
        warn_recoveries, warn_redacted,
    },
    status::{PhaseView, phase_view, render_status, render_workflow, status_line, workflow_status},
    text::{
        WHOLE_IN_LOG, WHOLE_IN_REPORT, ago, columns, count, cut_point, escape, one_line, short_sha,
        shorten, spent_text,
    },
};

/// Notes the phases a restart of `phase` sent back to pending (nothing when there are none):
/// `start --force` and `resume --restart` say the same.
pub(crate) fn note_reopened(phase: &checkpoint_core::PhaseId, reset: &[checkpoint_core::PhaseId]) {
    if reset.is_empty() {
        return;
    }
    let ids: Vec<String> = reset.iter().map(|id| format!("`{id}`")).collect();
    note(&format!(
        "restarting `{phase}` sent {} that depend on it back to pending: {}",
        count(reset.len(), "phase"),
        ids.join(", ")
    ));
}

/// `err` and its causes, so that a warning names the cause ("No space left on device").
pub(crate) fn with_causes(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}
