//! `checkpoint report`: the morning-after story of a workflow: its runs, their sessions and
//! waits, and the phase transitions, with times and durations, and where it stopped and why.

mod html;
#[cfg(test)]
mod tests;

use std::{
    fmt::{self, Write as _},
    path::PathBuf,
};

use checkpoint_core::{
    PhaseStatus, Timestamp, Transition, Workflow,
    budget::Spending,
    journal::Entry,
    run::SessionOutcome,
    snapshots::{FileChanges, FileTally},
};
use chrono::{DateTime, Duration, Local, Utc};
use clap::Args;
use miette::{IntoDiagnostic, Result, WrapErr};
use serde::Serialize;

use crate::{
    ctx::Ctx,
    output::{self, Format, JSON_VERSION, Paint},
    services::writers::Writers,
};

/// Arguments of `checkpoint report`.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// Write the report as one self-contained HTML file instead (the phase graph and the
    /// timeline drawn in SVG, no network), and say where on stderr (`--format json` still
    /// prints the JSON document)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// The JSON document of `checkpoint report`.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    pub version: u32,
    pub workflow: String,
    pub title: Option<String>,
    pub status: String,
    pub phases: Vec<PhaseRow>,
    /// Sessions, waits and phase transitions, in time order.
    pub timeline: Vec<Span>,
    /// How the last run ended, if one ran.
    pub stopped: Option<Stopped>,
    /// What the sessions spent in total; absent when no session said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spent: Option<Spent>,
    /// The files each phase changed, from the snapshots of the files; absent when none did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files_by_phase: Vec<FilesRow>,
    /// The files each session and sub-agent changed; absent when none did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files_by_session: Vec<FilesRow>,
    /// `writers` (each session and sub-agent that wrote since the workflow began, with the
    /// files it wrote) and `overwrites` (Bash commands' overwrites of another writer's unseen
    /// change, with the command that brings each back), from the project's record of writes;
    /// each absent when empty.
    #[serde(flatten)]
    pub written: Writers,
}

/// The files one phase, or one session and agent, changed, summed over its snapshots.
#[derive(Debug, Serialize)]
pub(crate) struct FilesRow {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Distinct files, and lines added and removed.
    pub changed: u64,
    pub added: u64,
    pub removed: u64,
    /// Who, in words, for the text and HTML reports.
    #[serde(skip)]
    pub who: String,
}

impl FilesRow {
    fn new(changes: &FileChanges, who: String) -> Self {
        Self {
            phase: None,
            session: None,
            agent: None,
            changed: changes.files(),
            added: changes.added,
            removed: changes.removed,
            who,
        }
    }

    /// "3 files +10 -2".
    pub(crate) fn text(&self) -> String {
        format!(
            "{} +{} -{}",
            output::count(self.changed as usize, "file"),
            self.added,
            self.removed
        )
    }
}

/// The rows of the files changed, per phase and per session and agent.
fn files_rows(entries: &[Entry]) -> (Vec<FilesRow>, Vec<FilesRow>) {
    let tally = FileTally::of(entries);
    let by_phase = tally
        .phases
        .iter()
        .map(|(phase, changes)| FilesRow {
            phase: Some(phase.to_string()),
            ..FilesRow::new(changes, format!("phase `{phase}`"))
        })
        .collect();
    let by_session = tally
        .authors
        .iter()
        .map(|(author, changes)| FilesRow {
            session: author.session_id.clone(),
            agent: author.agent_id.clone(),
            ..FilesRow::new(changes, output::snapshots::author_text(author))
        })
        .collect();
    (by_phase, by_session)
}

/// A phase and its times.
#[derive(Debug, Serialize)]
pub(crate) struct PhaseRow {
    pub id: String,
    pub status: String,
    pub dependencies: Vec<String>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
}

/// One thing on the timeline.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Span {
    pub kind: SpanKind,
    pub start: DateTime<Utc>,
    /// When it ended; none for an instant or one still open.
    pub end: Option<DateTime<Utc>>,
    pub seconds: Option<i64>,
    /// The phase concerned.
    pub phase: Option<String>,
    /// A short label: the session's outcome, the transition, the wait's reason.
    pub label: String,
    /// How a session ended, once it has.
    #[serde(skip)]
    pub ended: Option<SessionEnd>,
    /// A session's cost in dollars, when its result said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// A session's tokens, when its result said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
}

/// What a span of the timeline is (the JSON's `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SpanKind {
    Run,
    Session,
    Wait,
    Phase,
    Pause,
    /// A recorded effect (a push, a pull request, a publish), or one repeat let through.
    Effect,
    /// An agent of a Claude Code `Workflow` run started, finished or failed.
    Agent,
}

impl SpanKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::Session => "session",
            Self::Wait => "wait",
            Self::Phase => "phase",
            Self::Pause => "pause",
            Self::Effect => "effect",
            Self::Agent => "agent",
        }
    }
}

impl fmt::Display for SpanKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// How a session ended: the outcome the runner journaled (`RunSessionEnd.outcome`), or killed
/// with its runner (a new run began while it was open).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionEnd {
    Progress,
    Stall,
    RateLimit,
    Crash,
    Interrupted,
    Killed,
    /// An outcome this version does not know (a newer runner's).
    Other,
}

impl SessionEnd {
    fn of(outcome: &SessionOutcome) -> Self {
        match outcome {
            SessionOutcome::Progress => Self::Progress,
            SessionOutcome::Stall => Self::Stall,
            SessionOutcome::RateLimit => Self::RateLimit,
            SessionOutcome::Crash => Self::Crash,
            SessionOutcome::Interrupted => Self::Interrupted,
            SessionOutcome::Other(_) => Self::Other,
        }
    }
}

/// What the journaled sessions spent in total (those whose results said).
#[derive(Debug, Serialize)]
pub(crate) struct Spent {
    pub sessions: u32,
    pub cost_usd: f64,
    pub tokens: u64,
}

/// Where the last run stopped and why.
#[derive(Debug, Serialize)]
pub(crate) struct Stopped {
    pub at: DateTime<Utc>,
    pub reason: String,
    pub exit: u8,
}

pub(crate) fn report(ctx: &Ctx, args: &ReportArgs) -> Result<()> {
    let id = ctx.workflow_id()?;
    let loaded = ctx.store.load(&id)?;
    let journal = ctx.store.journal(&id)?;
    let mut report = build(&loaded.workflow, &journal.entries, ctx.now);
    report.written = Writers::read(&ctx.store, &ctx.project_root, loaded.workflow.created_at);
    if let Some(path) = &args.html {
        let path = ctx.cwd.join(path);
        std::fs::write(&path, html::render(&report, ctx.now))
            .into_diagnostic()
            .wrap_err_with(|| format!("failed to write `{}`", path.display()))?;
        output::note(&format!("wrote `{}`", path.display()));
        if ctx.format != Format::Json {
            // The page is the result: the text report is not printed besides.
            return Ok(());
        }
    }
    match ctx.format {
        Format::Json => output::emit_json(&report).into_diagnostic(),
        _ => output::emit_human(ctx.color, &render_human(&report, Paint::new(ctx.color)))
            .into_diagnostic(),
    }
}

/// The report of `workflow` from its journal `entries`.
pub(crate) fn build(workflow: &Workflow, entries: &[Entry], now: DateTime<Utc>) -> Report {
    let mut timeline: Vec<Span> = Vec::new();
    let mut open_run: Option<usize> = None;
    let mut open_session: Option<usize> = None;
    let mut stopped = None;
    let mut spent_total: Option<Spending> = None;
    let close = |timeline: &mut Vec<Span>, idx: usize, at: DateTime<Utc>| {
        let span = &mut timeline[idx];
        span.end = Some(at);
        span.seconds = Some((at - span.start).num_seconds());
    };
    for entry in entries {
        let at = entry.at;
        match &entry.transition {
            Transition::RunStart { pid, client, .. } => {
                if let Some(idx) = open_session.take() {
                    timeline[idx].label.push_str(" (the runner was killed)");
                    timeline[idx].ended = Some(SessionEnd::Killed);
                    close(&mut timeline, idx, at);
                }
                if let Some(idx) = open_run.take() {
                    timeline[idx].label.push_str(": killed");
                    close(&mut timeline, idx, at);
                }
                open_run = Some(timeline.len());
                timeline.push(span(
                    SpanKind::Run,
                    at,
                    None,
                    format!("runner pid {pid} ({client})"),
                ));
                stopped = None;
            }
            Transition::RunSessionStart {
                number,
                phase,
                resumed,
            } => {
                open_session = Some(timeline.len());
                let label = match resumed {
                    Some(id) => format!("session {number}, continuing {id}"),
                    None => format!("session {number}"),
                };
                timeline.push(span(
                    SpanKind::Session,
                    at,
                    phase.as_ref().map(ToString::to_string),
                    label,
                ));
            }
            Transition::RunSessionEnd {
                number,
                exit,
                outcome,
                transitions,
                cost_usd,
                tokens,
                ..
            } => {
                let exit = exit.map_or_else(|| "signal".to_owned(), |code| format!("exit {code}"));
                let spent = output::spent_text(*cost_usd, *tokens);
                if cost_usd.is_some() || tokens.is_some() {
                    spent_total
                        .get_or_insert_with(Spending::default)
                        .add(*cost_usd, *tokens);
                }
                let idx = match open_session.take() {
                    Some(idx) => {
                        timeline[idx].label = format!(
                            "session {number}: {outcome}, {exit}, {transitions} transitions{spent}"
                        );
                        timeline[idx].ended = Some(SessionEnd::of(outcome));
                        close(&mut timeline, idx, at);
                        idx
                    }
                    None => {
                        timeline.push(Span {
                            ended: Some(SessionEnd::of(outcome)),
                            ..span(
                                SpanKind::Session,
                                at,
                                None,
                                format!("session {number}: {outcome}, {exit}{spent}"),
                            )
                        });
                        timeline.len() - 1
                    }
                };
                timeline[idx].cost_usd = *cost_usd;
                timeline[idx].tokens = *tokens;
            }
            Transition::RunWait { until, reason, .. } => {
                let mut wait = span(SpanKind::Wait, at, None, reason.clone());
                wait.end = Some(*until);
                wait.seconds = Some((*until - at).num_seconds());
                timeline.push(wait);
            }
            Transition::RunStop { reason, exit } => {
                if let Some(idx) = open_run.take() {
                    timeline[idx].label.push_str(&format!(": {reason}"));
                    close(&mut timeline, idx, at);
                }
                stopped = Some(Stopped {
                    at,
                    reason: reason.clone(),
                    exit: *exit,
                });
            }
            transition => timeline.extend(event_span(workflow, transition, at)),
        }
    }
    // A session still open ran until now (or its runner was killed).
    if let Some(idx) = open_session {
        timeline[idx].seconds = Some((now - timeline[idx].start).num_seconds());
    }
    let (files_by_phase, files_by_session) = files_rows(entries);
    Report {
        files_by_phase,
        files_by_session,
        written: Writers::default(),
        version: JSON_VERSION,
        workflow: workflow.id.to_string(),
        title: workflow.title.clone(),
        status: workflow.status.as_str().to_owned(),
        phases: phase_rows(workflow),
        timeline,
        stopped,
        spent: spent_total.map(|spent| Spent {
            sessions: spent.sessions,
            cost_usd: spent.cost_usd,
            tokens: spent.tokens,
        }),
    }
}

/// The rows of the phase table: each phase's status, dependencies and times.
fn phase_rows(workflow: &Workflow) -> Vec<PhaseRow> {
    workflow
        .phases
        .iter()
        .map(|phase| PhaseRow {
            id: phase.id.to_string(),
            status: phase.status.as_str().to_owned(),
            dependencies: phase.dependencies.iter().map(ToString::to_string).collect(),
            started_at: phase.started_at.map(Timestamp::utc),
            completed_at: phase.completed_at.map(Timestamp::utc),
        })
        .collect()
}

/// A phase's transition, a pause, an effect or a run's agent on the timeline; none for the
/// other transitions.
fn event_span(workflow: &Workflow, transition: &Transition, at: DateTime<Utc>) -> Option<Span> {
    match transition {
        Transition::PhaseStart { phase, .. }
        | Transition::PhaseComplete { phase, .. }
        | Transition::PhaseFail { phase, .. }
        | Transition::PhaseSkip { phase, .. }
        | Transition::PhaseReset { phase, .. }
        | Transition::PhaseApprove { phase, .. }
        | Transition::PhaseReject { phase, .. } => Some(span(
            SpanKind::Phase,
            at,
            Some(phase.to_string()),
            transition.op().trim_start_matches("phase_").to_owned(),
        )),
        Transition::Pause { reason, .. } => Some(span(SpanKind::Pause, at, None, reason.clone())),
        Transition::Effect { .. } | Transition::EffectAllow { .. } => {
            Some(effect_span(transition, at))
        }
        Transition::TaskStart { .. }
        | Transition::TaskDone { .. }
        | Transition::TaskFail { .. }
            if workflow.kind.as_deref() == Some(checkpoint_core::workflow_run::KIND) =>
        {
            agent_span(workflow, transition, at)
        }
        _ => None,
    }
}

/// An effect or an allow on the timeline: the words of `log`, but for the phase, which the span
/// carries.
fn effect_span(transition: &Transition, at: DateTime<Utc>) -> Span {
    let phase = transition.phase().map(ToString::to_string);
    let described = output::describe(transition);
    let label = phase
        .as_ref()
        .and_then(|phase| described.strip_prefix(&format!("{phase}: ")))
        .map_or_else(|| described.clone(), str::to_owned);
    span(SpanKind::Effect, at, phase, label)
}

/// An agent of a `Workflow` run on the timeline, in its phase's lane: started, done with its
/// result's excerpt (the task's note), or failed with its error; whole, as every label.
fn agent_span(workflow: &Workflow, transition: &Transition, at: DateTime<Utc>) -> Option<Span> {
    let (phase, task, said) = match transition {
        Transition::TaskStart { phase, task, .. } => (phase, task, "started".to_owned()),
        Transition::TaskDone {
            phase, task, note, ..
        } => (
            phase,
            task,
            match note {
                Some(note) => format!("done: {note}"),
                None => "done".to_owned(),
            },
        ),
        Transition::TaskFail {
            phase,
            task,
            reason,
        } => (phase, task, format!("failed: {reason}")),
        _ => return None,
    };
    let title = workflow
        .phases
        .iter()
        .find(|row| row.id == *phase)
        .and_then(|row| row.tasks.iter().find(|row| row.id == *task))
        .and_then(|row| row.title.clone())
        .unwrap_or_else(|| task.to_string());
    let said = said.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(span(
        SpanKind::Agent,
        at,
        Some(phase.to_string()),
        format!("agent {title}: {said}"),
    ))
}

fn span(kind: SpanKind, start: DateTime<Utc>, phase: Option<String>, label: String) -> Span {
    Span {
        kind,
        start,
        end: None,
        seconds: None,
        phase,
        label,
        ended: None,
        cost_usd: None,
        tokens: None,
    }
}

/// Whether a phase status counts as done, for colours.
pub(crate) fn status_done(status: &str) -> bool {
    status == PhaseStatus::Complete.as_str() || status == PhaseStatus::Skipped.as_str()
}

fn render_human(report: &Report, paint: Paint) -> String {
    let mut text = String::new();
    let title = report
        .title
        .as_deref()
        .map(|title| {
            format!(
                " — {}",
                output::shorten(&output::one_line(title), output::WHOLE_IN_REPORT)
            )
        })
        .unwrap_or_default();
    let _ = writeln!(
        text,
        "{}{title}  {}",
        paint.bold(&report.workflow),
        report.status
    );
    let done = report
        .phases
        .iter()
        .filter(|phase| status_done(&phase.status))
        .count();
    let _ = writeln!(text, "{done} of {} phases done\n", report.phases.len());
    if report.timeline.is_empty() {
        text.push_str("nothing happened yet\n");
    }
    for span in &report.timeline {
        let time = span.start.with_timezone(&Local).format("%m-%d %H:%M:%S");
        let duration = span
            .seconds
            .map(|secs| {
                format!(
                    " ({})",
                    checkpoint_core::run::human_duration(Duration::seconds(secs))
                )
            })
            .unwrap_or_default();
        let phase = span
            .phase
            .as_deref()
            .map(|phase| format!(" `{phase}`"))
            .unwrap_or_default();
        let _ = writeln!(
            text,
            "{}  {:<8}{phase} {}{duration}",
            paint.dim(&time.to_string()),
            span.kind,
            output::shorten(&output::one_line(&span.label), output::WHOLE_IN_REPORT)
        );
    }
    if let Some(spent) = &report.spent {
        let _ = writeln!(
            text,
            "\nspent ${:.2} and {} tokens in {} session{}",
            spent.cost_usd,
            spent.tokens,
            spent.sessions,
            if spent.sessions == 1 { "" } else { "s" }
        );
    }
    if !report.files_by_phase.is_empty() || !report.files_by_session.is_empty() {
        text.push_str("\nfiles changed (`checkpoint snapshots` lists them):\n");
        for row in report.files_by_phase.iter().chain(&report.files_by_session) {
            let _ = writeln!(text, "  {}: {}", row.who, row.text());
        }
    }
    if !report.written.is_empty() {
        text.push_str("\nfiles written (`checkpoint who <path>` lists a file's writers):\n");
        for line in report.written.lines() {
            let _ = writeln!(text, "  {line}");
        }
    }
    match &report.stopped {
        Some(stopped) => {
            let _ = writeln!(
                text,
                "\nstopped {}: {} (exit {})",
                stopped.at.with_timezone(&Local).format("%m-%d %H:%M:%S"),
                output::shorten(&output::one_line(&stopped.reason), output::WHOLE_IN_REPORT),
                stopped.exit
            );
        }
        None if report
            .timeline
            .iter()
            .any(|span| span.kind == SpanKind::Run) =>
        {
            text.push_str(
                "\nthe last run has not stopped: it is still running, or it was killed\n",
            );
        }
        None => {}
    }
    text
}
