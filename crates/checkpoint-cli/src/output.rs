//! Rendering: human text (coloured only when asked) and JSON documents on stdout; warnings on
//! stderr. The only module that prints (`sink.rs` and `screen.rs` write; the others build text).

mod ask;
mod effects;
mod journal;
mod paint;
mod plan;
mod screen;
mod sink;
pub(crate) mod snapshots;
mod status;
mod text;

pub(crate) use crate::output::{
    ask::ask,
    effects::EffectCounts,
    journal::{describe, entry_line},
    paint::Paint,
    plan::{render_findings, render_plan},
    screen::Screen,
    sink::{
        ColorChoice, Format, JSON_VERSION, clap_error, emit, emit_human, emit_json, note, warn,
        warn_recoveries, warn_redacted,
    },
    status::{PhaseView, phase_view, render_status, render_workflow, workflow_status},
    text::{
        WHOLE_IN_LOG, WHOLE_IN_REPORT, ago, columns, count, cut_point, escape, short_sha, shorten,
        spent_text,
    },
};
