//! The status view of a workflow, shared by `checkpoint status` and `checkpoint watch`.

use std::fmt::Write as _;

use checkpoint_core::{
    DoneSet, Phase, PhaseStatus, TaskStatus, Workflow, WorkflowStatus, effects::EffectCounts,
};
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::output::{
    paint::Paint,
    text::{WHOLE_IN_STATE, ago, count, short_sha, shorten},
};

/// Where a phase stands, as shown in the status view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PhaseView {
    Done,
    InProgress,
    AwaitingApproval,
    Failed,
    Ready,
    Blocked,
}

pub(crate) fn phase_view(done: &DoneSet<'_>, phase: &Phase) -> PhaseView {
    match phase.status {
        PhaseStatus::Complete | PhaseStatus::Skipped => PhaseView::Done,
        PhaseStatus::InProgress => PhaseView::InProgress,
        PhaseStatus::AwaitingApproval => PhaseView::AwaitingApproval,
        PhaseStatus::Failed => PhaseView::Failed,
        PhaseStatus::Pending if done.dependencies_done(phase) => PhaseView::Ready,
        PhaseStatus::Pending => PhaseView::Blocked,
    }
}

/// The human status view of a workflow.
pub(crate) fn render_status(
    workflow: &Workflow,
    effects: &EffectCounts,
    now: DateTime<Utc>,
    paint: Paint,
) -> String {
    render_workflow(workflow, effects, now, paint, false)
}

/// The status view of a workflow (its header, then [`render_phases`]), shared by
/// `checkpoint status` and `checkpoint watch` (which shows the phases' `elapsed` times).
pub(crate) fn render_workflow(
    workflow: &Workflow,
    effects: &EffectCounts,
    now: DateTime<Utc>,
    paint: Paint,
    elapsed: bool,
) -> String {
    let mut out = String::new();
    let title = workflow
        .title
        .as_deref()
        .map(|title| format!(" — {}", shorten(title, WHOLE_IN_STATE)))
        .unwrap_or_default();
    let status = workflow_status(workflow.status, paint);
    let _ = writeln!(out, "{}{title}  {status}", paint.bold(workflow.id.as_str()));
    let _ = writeln!(
        out,
        "{}",
        paint.dim(&format!(
            "{} of {} done · updated {}",
            workflow.n_done(),
            count(workflow.phases.len(), "phase"),
            ago(workflow.updated_at, now)
        ))
    );
    if let Some(pause) = &workflow.pause {
        let until = pause
            .until
            .map(|until| format!(" until {} ({})", until.to_rfc3339(), ago(until.utc(), now)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{}",
            paint.yellow(&format!(
                "paused: {}{until}",
                shorten(&pause.reason, WHOLE_IN_STATE)
            ))
        );
    }
    let _ = writeln!(out);
    render_phases(&mut out, workflow, effects, now, paint, elapsed);
    out.push_str(&crate::output::snapshots::authors_lines(effects.files()));
    out
}

/// The lines of every phase, as `checkpoint status` and `checkpoint watch` show them: its status,
/// and for a phase in progress its progress note and tasks; with `elapsed`, how long a phase in
/// progress has run and how long a finished one took; how many effects it has done and the
/// files it changed.
pub(crate) fn render_phases(
    out: &mut String,
    workflow: &Workflow,
    effects: &EffectCounts,
    now: DateTime<Utc>,
    paint: Paint,
    elapsed: bool,
) {
    let done = workflow.done_set();
    let width = workflow
        .phases
        .iter()
        .map(|phase| phase.id.as_str().len())
        .max()
        .unwrap_or(0);
    for phase in &workflow.phases {
        let id = format!("{:width$}", phase.id.as_str());
        let mut line = status_line(&done, phase, &id, now, paint);
        if elapsed && let Some(text) = elapsed_text(phase, now) {
            line.push_str(&paint.dim(&format!("  · {text}")));
        }
        let n_effects = effects.of_phase(&phase.id);
        if n_effects > 0 {
            line.push_str(&paint.dim(&format!("  · {} done", count(n_effects, "effect"))));
        }
        if let Some(files) = effects.files().of_phase(&phase.id) {
            line.push_str(&paint.dim(&format!(
                "  · {} changed",
                crate::output::snapshots::changes_text(files)
            )));
        }
        let _ = writeln!(out, "{line}");
        if workflow.kind.as_deref() == Some(checkpoint_core::workflow_run::KIND) {
            agent_lines(out, phase, width);
            continue;
        }
        if phase.status == PhaseStatus::InProgress {
            if let Some(progress) = &phase.progress {
                let _ = writeln!(
                    out,
                    "  {:width$}  progress: {}",
                    "",
                    shorten(progress, WHOLE_IN_STATE)
                );
            }
            if let Some(holder) = &phase.holder {
                let _ = writeln!(out, "  {:width$}  {}", "", holder_line(holder, now));
            }
            let total = phase.tasks.len();
            if total > 0 {
                let done = phase
                    .tasks
                    .iter()
                    .filter(|task| task.status == TaskStatus::Done)
                    .count();
                let _ = writeln!(out, "  {:width$}  tasks: {done} of {total} done", "");
            }
        }
    }
}

/// Every agent of a phase of a Claude Code `Workflow` run: its label, status, and the start of
/// its result or its error.
fn agent_lines(out: &mut String, phase: &Phase, width: usize) {
    for task in &phase.tasks {
        let label = task.title.as_deref().unwrap_or(task.id.as_str());
        let said = match task.status {
            TaskStatus::Done => task.note.as_deref(),
            TaskStatus::Failed => task.error.as_deref(),
            TaskStatus::Pending | TaskStatus::Running => None,
        };
        let said = said.map_or(String::new(), |text| {
            let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
            format!(": {}", shorten(&line, WHOLE_IN_STATE))
        });
        let _ = writeln!(
            out,
            "  {:width$}  agent {}: {}{said}",
            "",
            shorten(label, WHOLE_IN_STATE),
            task.status.as_str()
        );
    }
}

/// How long a phase in progress has run ("for 4m10s"), or how long a finished one took.
fn elapsed_text(phase: &Phase, now: DateTime<Utc>) -> Option<String> {
    let started = phase.started_at?.utc();
    let human = |end: DateTime<Utc>| checkpoint_core::run::human_duration(end - started);
    match phase.status {
        PhaseStatus::InProgress | PhaseStatus::AwaitingApproval => {
            Some(format!("for {}", human(now)))
        }
        PhaseStatus::Complete => phase
            .completed_at
            .map(|end| format!("took {}", human(end.utc()))),
        _ => None,
    }
}

/// The sub-agent holding a phase in progress, for `checkpoint status`: who, since when, its
/// last activity, and whether it ended or failed.
pub(crate) fn holder_line(holder: &checkpoint_core::Holder, now: DateTime<Utc>) -> String {
    let who = holder.who();
    let what = holder
        .description
        .as_deref()
        .map(|description| format!(" ({})", shorten(description, WHOLE_IN_STATE)))
        .unwrap_or_default();
    let end = match (&holder.error, holder.ended_at) {
        (Some(error), _) => format!(", failed: {}", shorten(error, WHOLE_IN_STATE)),
        (None, Some(at)) => format!(", ended {}", ago(at.utc(), now)),
        (None, None) => String::new(),
    };
    format!(
        "held by {who}{what}, dispatched {}, last active {}{end}",
        ago(holder.started_at, now),
        ago(holder.last_activity_at, now)
    )
}

/// The line of one phase in `checkpoint status`, its id padded to `id`, with its approval gate
/// when it has one not yet reached.
pub(crate) fn status_line(
    done: &DoneSet,
    phase: &Phase,
    id: &str,
    now: DateTime<Utc>,
    paint: Paint,
) -> String {
    let mut line = status_line_alone(done, phase, id, now, paint);
    if let Some(gate) = gate_ahead(phase) {
        line.push_str("  ");
        line.push_str(&paint.yellow(gate));
    }
    line
}

/// The mark of an approval gate the phase has not reached yet: a person approves it once its
/// work is done (`checkpoint approve`).
fn gate_ahead(phase: &Phase) -> Option<&'static str> {
    (phase.requires_approval
        && matches!(
            phase.status,
            PhaseStatus::Pending | PhaseStatus::InProgress | PhaseStatus::Failed
        ))
    .then_some("◆ approval gate ahead")
}

fn status_line_alone(
    done: &DoneSet,
    phase: &Phase,
    id: &str,
    now: DateTime<Utc>,
    paint: Paint,
) -> String {
    match phase_view(done, phase) {
        PhaseView::Done => {
            let when = phase
                .completed_at
                .map(|at| format!("  {}", ago(at.utc(), now)))
                .unwrap_or_default();
            let sha = phase
                .commit_sha
                .as_deref()
                .map(|sha| format!("  ({})", short_sha(sha)))
                .unwrap_or_default();
            let word = if phase.status == PhaseStatus::Skipped {
                "skipped"
            } else {
                "done"
            };
            format!(
                "{} {id}  {}{}",
                paint.green("✓"),
                paint.green(word),
                paint.dim(&format!("{when}{sha}"))
            )
        }
        PhaseView::InProgress => {
            let attempt = if phase.attempts > 1 {
                format!(" (attempt {})", phase.attempts)
            } else {
                String::new()
            };
            format!(
                "{} {id}  {}{attempt}",
                paint.cyan("→"),
                paint.cyan("in progress")
            )
        }
        PhaseView::AwaitingApproval => {
            format!(
                "{} {id}  {}  {}",
                paint.yellow("?"),
                paint.yellow("awaiting approval"),
                paint.dim(&format!("checkpoint approve {}", phase.id))
            )
        }
        PhaseView::Failed => {
            let error = phase
                .error
                .as_deref()
                .map(|error| format!(": {}", shorten(error, WHOLE_IN_STATE)))
                .unwrap_or_default();
            format!(
                "{} {id}  {}{error}",
                paint.red("✗"),
                paint.red(&format!("failed ({}×)", phase.failures))
            )
        }
        PhaseView::Ready => format!("· {id}  ready"),
        PhaseView::Blocked => {
            let waiting: Vec<&str> = done.waiting_for(phase).map(|dep| dep.as_str()).collect();
            paint.dim(&format!("· {id}  blocked by {}", waiting.join(", ")))
        }
    }
}

pub(crate) fn workflow_status(status: WorkflowStatus, paint: Paint) -> String {
    let text = status.as_str().replace('_', " ");
    match status {
        WorkflowStatus::Complete => paint.green(&text),
        WorkflowStatus::InProgress | WorkflowStatus::Pending => paint.cyan(&text),
        WorkflowStatus::Paused | WorkflowStatus::AwaitingApproval => paint.yellow(&text),
        WorkflowStatus::Failed => paint.red(&text),
        WorkflowStatus::Abandoned => paint.dim(&text),
    }
}
