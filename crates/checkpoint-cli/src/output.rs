//! Rendering: human text (coloured only when asked) and JSON documents on stdout; warnings on
//! stderr. The only module that prints.

use std::{
    borrow::Cow,
    fmt::Write as _,
    io::{self, Write},
};

use anstyle::{AnsiColor, Style};
use checkpoint_core::{
    DoneSet, Phase, PhaseStatus, Workflow, WorkflowStatus,
    resume::{ResumePlan, Severity},
    store::Recovery,
};
use chrono::{DateTime, Utc};
use clap::ValueEnum;
use serde::Serialize;

/// How results are printed on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Concise text for people
    Human,
    /// One JSON document (with a `version` field)
    Json,
    /// A compact Markdown block written for Claude (`resume`, `status`; others print human text)
    Prompt,
    /// A Mermaid flowchart (`graph`; others print human text)
    Mermaid,
    /// A Graphviz digraph (`graph`; others print human text)
    Dot,
}

/// When to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset
    Auto,
    /// Always colour
    Always,
    /// Never colour
    Never,
}

/// The version of every JSON document `checkpoint` prints.
pub(crate) const JSON_VERSION: u32 = 1;

/// Writes `text` to stdout; a closed pipe is not an error.
pub(crate) fn emit(text: &str) -> io::Result<()> {
    emit_bytes(text.as_bytes())
}

fn emit_bytes(bytes: &[u8]) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Writes human text to stdout with its control characters escaped (see [`escape`]): the text
/// holds notes, titles and reasons as users and agents wrote them. With `color`, the colour
/// sequences (SGR: `ESC [ … m`) are kept, the only ones `checkpoint` writes.
pub(crate) fn emit_human(color: bool, text: &str) -> io::Result<()> {
    emit(&sanitize(color, text))
}

/// Human text with its control characters escaped, but for the colour sequences with `color`
/// (see [`emit_human`]).
fn sanitize(color: bool, text: &str) -> Cow<'_, str> {
    if !color {
        return escape(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\u{1b}') {
        out.push_str(&escape(&rest[..at]));
        let after = &rest[at + 1..];
        let sgr_len = after.strip_prefix('[').and_then(|params| {
            let n = params
                .bytes()
                .take_while(|b| b.is_ascii_digit() || *b == b';')
                .count();
            params[n..].starts_with('m').then_some(n + 2)
        });
        match sgr_len {
            Some(len) => {
                out.push_str(&rest[at..at + 1 + len]);
                rest = &after[len..];
            }
            None => {
                out.push_str(&escape("\u{1b}"));
                rest = after;
            }
        }
    }
    out.push_str(&escape(rest));
    Cow::Owned(out)
}

/// The full-screen view of `checkpoint watch`: the terminal's alternate screen with the cursor
/// hidden, redrawn in place; dropping it restores the screen and the cursor.
pub(crate) struct Screen {
    color: bool,
    /// The last frame written and the terminal's size then: not written again while neither
    /// changed.
    last: (String, usize, usize),
}

impl Screen {
    /// Switches to the alternate screen.
    pub(crate) fn enter(color: bool) -> io::Result<Self> {
        emit("\u{1b}[?1049h\u{1b}[?25l")?;
        Ok(Self {
            color,
            last: (String::new(), 0, 0),
        })
    }

    /// Draws `text` (human text, escaped like [`emit_human`]) from the top left, each line cut
    /// to `width` columns and the whole to `height` lines, clearing what the last frame left;
    /// writes nothing when the frame is the one on screen.
    pub(crate) fn draw(&mut self, text: &str, width: usize, height: usize) -> io::Result<()> {
        let text = sanitize(self.color, text);
        let lines: Vec<&str> = text.lines().collect();
        let room = height.saturating_sub(1).max(1);
        let mut frame = String::from("\u{1b}[H");
        for (idx, line) in lines.iter().enumerate() {
            if idx + 1 == room && lines.len() > room {
                let more = format!(
                    "… {} more lines (a taller terminal shows them)",
                    lines.len() - idx
                );
                frame.push_str(&cut(&more, width, self.color));
                frame.push_str("\u{1b}[K\n");
                break;
            }
            frame.push_str(&cut(line, width, self.color));
            frame.push_str("\u{1b}[K\n");
        }
        frame.push_str("\u{1b}[J");
        if self.last.0 == frame && (self.last.1, self.last.2) == (width, height) {
            return Ok(());
        }
        emit(&frame)?;
        self.last = (frame, width, height);
        Ok(())
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = emit("\u{1b}[?25h\u{1b}[?1049l");
    }
}

/// `line` cut to `width` columns (a wide character takes two), not counting colour sequences
/// (the only escapes left), and never inside a character as people see it (see
/// [`cut_point`]).
fn cut(line: &str, width: usize, color: bool) -> String {
    let mut out = String::with_capacity(line.len().min(width * 4));
    let mut columns = 0;
    let mut prev = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            out.push(c);
            for c in chars.by_ref() {
                out.push(c);
                if c == 'm' {
                    break;
                }
            }
            continue;
        }
        let c_width = char_width(c);
        if columns + c_width > width && may_cut_between(prev, c, 0) {
            if color {
                out.push_str("\u{1b}[0m");
            }
            break;
        }
        out.push(c);
        columns += c_width;
        prev = Some(c);
    }
    out
}

/// How many columns of one free-text field (a note, a reason, a title) a view shows at most;
/// the rest is cut, and the view says where the text is whole ([`shorten`]).
pub(crate) const TEXT_COLUMNS: usize = 200;

/// The commands that print free text whole: the journal's entries, the state's fields, the
/// report's labels.
pub(crate) const WHOLE_IN_LOG: &str = "checkpoint log --full";
pub(crate) const WHOLE_IN_STATE: &str = "checkpoint show";
pub(crate) const WHOLE_IN_REPORT: &str = "checkpoint report --format json";

/// A free-text field for a view: whole when it fits in [`TEXT_COLUMNS`] columns, else cut
/// there with an ellipsis, how much was left out and `whole`, the command that prints it whole.
/// JSON documents never go through this: they keep every text whole.
pub(crate) fn shorten<'a>(text: &'a str, whole: &str) -> Cow<'a, str> {
    // A character takes at most as many columns as it has bytes.
    if text.len() <= TEXT_COLUMNS {
        return Cow::Borrowed(text);
    }
    let Some(end) = cut_point(text, TEXT_COLUMNS) else {
        return Cow::Borrowed(text);
    };
    let left = text[end..].chars().count();
    Cow::Owned(format!(
        "{}… ({left} more characters: `{whole}`)",
        &text[..end]
    ))
}

/// Where to cut `text` so that it and an ellipsis fit in `columns` columns, or `None` when it
/// fits whole. The cut falls between two characters as people see them: never before a
/// combining mark, a joiner, a variation selector or a skin tone, never after a joiner, never
/// inside a flag (a pair of regional indicators).
pub(crate) fn cut_point(text: &str, columns: usize) -> Option<usize> {
    let mut used = 0;
    let mut cut = 0;
    let mut prev = None;
    // Regional indicators in a row so far: a flag is a pair of them.
    let mut indicators = 0;
    for (idx, c) in text.char_indices() {
        if used < columns && may_cut_between(prev, c, indicators) {
            cut = idx;
        }
        used += char_width(c);
        if used > columns {
            return Some(cut);
        }
        indicators = if is_regional_indicator(c) {
            indicators + 1
        } else {
            0
        };
        prev = Some(c);
    }
    None
}

/// The columns `text` takes in a terminal (see [`char_width`]).
pub(crate) fn columns(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

/// The columns `c` takes in a terminal: 2 for a wide one (CJK, most emoji), 0 for a combining
/// one.
fn char_width(c: char) -> usize {
    if matches!(c, '\u{1f3fb}'..='\u{1f3ff}') {
        // A skin tone modifies the emoji before it.
        return 0;
    }
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
}

/// Whether a text may be cut between `prev` and `c` without splitting a character as people see
/// it; `indicators`: how many regional indicators come just before `c`.
fn may_cut_between(prev: Option<char>, c: char, indicators: usize) -> bool {
    let joins = |c: char| char_width(c) == 0 || matches!(c, '\u{200d}' | '\u{fe00}'..='\u{fe0f}');
    !(joins(c) || prev == Some('\u{200d}') || (is_regional_indicator(c) && indicators % 2 == 1))
}

fn is_regional_indicator(c: char) -> bool {
    matches!(c, '\u{1f1e6}'..='\u{1f1ff}')
}

/// Writes a JSON document to stdout.
pub(crate) fn emit_json(value: &impl Serialize) -> io::Result<()> {
    // Room for a status of a hundred phases up front: no copy as the document grows.
    let mut bytes = Vec::with_capacity(64 * 1024);
    serde_json::to_writer_pretty(&mut bytes, value).map_err(io::Error::other)?;
    bytes.push(b'\n');
    emit_bytes(&bytes)
}

/// User-supplied text made safe for a terminal: control characters other than newline and tab
/// (ESC, BEL, CR, DEL, C1 controls) are written as escapes (`\u{1b}`, `\r`), so that a note
/// cannot move the cursor, retitle the terminal or hide what came before it on its line; so are
/// the invisible bidirectional controls (see [`is_bidi_control`]), so that a note cannot show
/// its text in another order than it is (`\u{202e}`).
pub(crate) fn escape(text: &str) -> Cow<'_, str> {
    if !has_unsafe_bytes(text.as_bytes()) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether [`escape`] writes `c` as an escape.
fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c)
}

/// Whether UTF-8 `bytes` hold a character [`is_unsafe`] finds, byte by byte: every human output
/// goes through [`escape`], and a check per character cost `status` more than its rendering.
fn has_unsafe_bytes(bytes: &[u8]) -> bool {
    bytes.iter().enumerate().any(|(idx, &byte)| match byte {
        b'\n' | b'\t' => false,
        0..0x20 | 0x7f => true,
        // C1 controls (U+0080–U+009F), the Arabic letter mark (U+061C), and the marks,
        // embeddings, overrides (U+200E, U+200F, U+202A–U+202E) and isolates (U+2066–U+2069).
        0xc2 => matches!(bytes.get(idx + 1), Some(0x80..=0x9f)),
        0xd8 => bytes.get(idx + 1) == Some(&0x9c),
        0xe2 => matches!(
            (bytes.get(idx + 1), bytes.get(idx + 2)),
            (Some(0x80), Some(0x8e | 0x8f | 0xaa..=0xae)) | (Some(0x81), Some(0xa6..=0xa9))
        ),
        _ => false,
    })
}

/// The bidirectional formatting characters of Unicode (UAX #9): the embeddings and overrides
/// (U+202A–U+202E), the isolates (U+2066–U+2069) and the marks (U+200E, U+200F, U+061C). They
/// are invisible, and reorder the text that follows them ("Trojan Source").
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
    )
}

/// Prints a warning on stderr.
pub(crate) fn warn(message: &str) {
    #[expect(clippy::print_stderr, reason = "this is the output module")]
    {
        eprintln!("warning: {message}");
    }
}

/// Prints a note on stderr.
pub(crate) fn note(message: &str) {
    #[expect(clippy::print_stderr, reason = "this is the output module")]
    {
        eprintln!("{message}");
    }
}

/// Reports what the store recovered, on stderr.
pub(crate) fn warn_recoveries(recoveries: &[Recovery]) {
    for recovery in recoveries {
        warn(&recovery.to_string());
    }
}

/// Says on stderr that secrets were redacted before the state was written.
pub(crate) fn warn_redacted(redacted: usize) {
    if redacted > 0 {
        warn(&format!(
            "{redacted} secret{} redacted before saving (API keys, tokens, passwords or private keys)",
            if redacted == 1 { " was" } else { "s were" }
        ));
    }
}

/// Styles for human output; plain text when colour is off.
#[derive(Clone, Copy)]
pub(crate) struct Paint {
    color: bool,
}

impl Paint {
    pub(crate) fn new(color: bool) -> Self {
        Self { color }
    }

    fn paint(self, style: Style, text: &str) -> String {
        if self.color {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_owned()
        }
    }

    pub(crate) fn green(self, text: &str) -> String {
        self.paint(AnsiColor::Green.on_default(), text)
    }

    pub(crate) fn yellow(self, text: &str) -> String {
        self.paint(AnsiColor::Yellow.on_default(), text)
    }

    pub(crate) fn red(self, text: &str) -> String {
        self.paint(AnsiColor::Red.on_default(), text)
    }

    pub(crate) fn cyan(self, text: &str) -> String {
        self.paint(AnsiColor::Cyan.on_default(), text)
    }

    pub(crate) fn dim(self, text: &str) -> String {
        self.paint(Style::new().dimmed(), text)
    }

    pub(crate) fn bold(self, text: &str) -> String {
        self.paint(Style::new().bold(), text)
    }
}

/// "1 phase", "3 phases": a count with its noun, singular for one.
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// "5 minutes ago", "in 2 hours", "just now".
pub(crate) fn ago(then: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let secs = (now - then).num_seconds();
    let (amount, future) = if secs < 0 {
        (-secs, true)
    } else {
        (secs, false)
    };
    let text = match amount {
        0..45 => {
            return if future {
                "in a moment".into()
            } else {
                "just now".into()
            };
        }
        45..5400 => plural((amount + 30) / 60, "minute"),
        5400..129_600 => plural((amount + 1800) / 3600, "hour"),
        _ => plural((amount + 43_200) / 86_400, "day"),
    };
    if future {
        format!("in {text}")
    } else {
        format!("{text} ago")
    }
}

fn plural(n: i64, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

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
pub(crate) fn render_status(workflow: &Workflow, now: DateTime<Utc>, paint: Paint) -> String {
    render_workflow(workflow, now, paint, false)
}

/// The status view of a workflow (its header, then [`render_phases`]), shared by
/// `checkpoint status` and `checkpoint watch` (which shows the phases' `elapsed` times).
pub(crate) fn render_workflow(
    workflow: &Workflow,
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
    render_phases(&mut out, workflow, now, paint, elapsed);
    out
}

/// The lines of every phase, as `checkpoint status` and `checkpoint watch` show them: its status,
/// and for a phase in progress its progress note and tasks; with `elapsed`, how long a phase in
/// progress has run and how long a finished one took.
pub(crate) fn render_phases(
    out: &mut String,
    workflow: &Workflow,
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
        let _ = writeln!(out, "{line}");
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
                    .filter(|task| task.status == checkpoint_core::TaskStatus::Done)
                    .count();
                let _ = writeln!(out, "  {:width$}  tasks: {done} of {total} done", "");
            }
        }
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

/// The line of one phase in `checkpoint status`, its id padded to `id`.
fn status_line(
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

pub(crate) fn short_sha(sha: &str) -> &str {
    sha.get(..7).unwrap_or(sha)
}

/// The human rendering of a resume plan.
pub(crate) fn render_plan(
    plan: &ResumePlan,
    applied: bool,
    now: DateTime<Utc>,
    paint: Paint,
) -> String {
    let mut out = String::new();
    plan_header(&mut out, plan, now, paint);
    plan_repairs(&mut out, plan, applied, paint);
    let _ = writeln!(out);
    plan_phases(&mut out, plan, now, paint);
    plan_next(&mut out, plan, paint);
    out
}

/// The workflow, its status, and how far it got.
fn plan_header(out: &mut String, plan: &ResumePlan, now: DateTime<Utc>, paint: Paint) {
    let title = plan
        .title
        .as_deref()
        .map(|title| format!(" — {title}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{}{title}  {}",
        paint.bold(plan.workflow.as_str()),
        workflow_status(plan.status, paint)
    );
    let total = plan.completed.len()
        + plan.in_progress.len()
        + plan.awaiting_approval.len()
        + plan.failed.len()
        + plan.ready.len()
        + plan.blocked.len();
    let _ = writeln!(
        out,
        "{}",
        paint.dim(&format!(
            "{} of {} done · last active {} ({})",
            plan.completed.len(),
            count(total, "phase"),
            ago(plan.last_active, now),
            plan.last_active.format("%Y-%m-%d %H:%M UTC")
        ))
    );
    if let Some(description) = &plan.description {
        let _ = writeln!(out, "Goal: {description}");
    }
}

/// The recoveries (applied or proposed) and the findings (without the informational ones once
/// applied).
fn plan_repairs(out: &mut String, plan: &ResumePlan, applied: bool, paint: Paint) {
    if !plan.recoveries.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            paint.bold(if applied {
                "Recovered after the interruption:"
            } else {
                "To recover after the interruption (not applied):"
            })
        );
        for recovery in &plan.recoveries {
            let _ = writeln!(out, "  • {}", recovery.description);
        }
    }
    let findings: Vec<_> = plan
        .findings
        .iter()
        .filter(|finding| finding.severity != Severity::Info || !applied)
        .collect();
    if !findings.is_empty() {
        let _ = writeln!(out, "\n{}", paint.bold("Findings:"));
        for finding in findings {
            let _ = writeln!(out, "  {}", finding_line(finding, paint));
        }
    }
}

/// One line a phase, by status.
fn plan_phases(out: &mut String, plan: &ResumePlan, now: DateTime<Utc>, paint: Paint) {
    // Done, ready and blocked phases are cut with a count, as the "also ready" line is: a plan
    // of 100,000 phases would be megabytes. The phases that need attention are all shown.
    const SHOWN: usize = 50;
    let more = |out: &mut String, n: usize, what: &str| {
        if n > SHOWN {
            let _ = writeln!(
                out,
                "{}",
                paint.dim(&format!(
                    "  … and {} more {what} (`checkpoint status` lists every phase)",
                    n - SHOWN
                ))
            );
        }
    };
    for phase in plan.completed.iter().take(SHOWN) {
        let sha = phase
            .commit_sha
            .as_deref()
            .map(|sha| format!(" ({})", short_sha(sha)))
            .unwrap_or_default();
        let when = phase
            .completed_at
            .map(|at| format!("  {}", ago(at, now)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{} {}{}",
            paint.green("✓"),
            phase.id,
            paint.dim(&format!("{when}{sha}"))
        );
    }
    more(out, plan.completed.len(), "done");
    for phase in &plan.in_progress {
        let what = phase.purpose_suffix();
        let progress = phase
            .progress
            .as_deref()
            .map(|note| format!(" — {note}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{} {}  {}{what}{progress}",
            paint.cyan("→"),
            phase.id,
            paint.cyan("in progress")
        );
    }
    for phase in &plan.awaiting_approval {
        let _ = writeln!(
            out,
            "{} {}  {}",
            paint.yellow("?"),
            phase.id,
            paint.yellow("awaiting approval")
        );
    }
    for phase in &plan.failed {
        let _ = writeln!(
            out,
            "{} {}  {}",
            paint.red("✗"),
            phase.id,
            paint.red(&format!(
                "failed: {}",
                phase.error.as_deref().unwrap_or("unknown error")
            ))
        );
    }
    for phase in plan.ready.iter().take(SHOWN) {
        let progress = phase
            .progress
            .as_deref()
            .map(|note| format!(" — earlier progress: {note}"))
            .unwrap_or_default();
        let _ = writeln!(out, "· {}  ready{progress}", phase.id);
    }
    more(out, plan.ready.len(), "ready");
    for phase in plan.blocked.iter().take(SHOWN) {
        let waiting: Vec<&str> = phase.waiting_for.iter().map(|id| id.as_str()).collect();
        let _ = writeln!(
            out,
            "{}",
            paint.dim(&format!(
                "· {}  blocked by {}",
                phase.id,
                waiting.join(", ")
            ))
        );
    }
    more(out, plan.blocked.len(), "blocked");
}

/// The next action, and the choices when a decision is needed.
fn plan_next(out: &mut String, plan: &ResumePlan, paint: Paint) {
    let command = plan
        .next
        .command
        .as_deref()
        .map(|command| format!("\n  run: {command}"))
        .unwrap_or_default();
    let parallel = if plan.next.parallel.is_empty() {
        String::new()
    } else {
        // A long list is cut with a count, as the prompt does: 100,000 ready phases would
        // make a line of megabytes.
        const SHOWN: usize = 12;
        let more = plan.next.parallel.len().saturating_sub(SHOWN);
        format!(
            "\n  also ready (can run in parallel): {}{}",
            plan.next
                .parallel
                .iter()
                .take(SHOWN)
                .map(|id| id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    };
    let _ = writeln!(
        out,
        "\n{} {}{command}{parallel}",
        paint.bold("Next:"),
        plan.next.reason
    );
    if plan.decision_required {
        let _ = writeln!(
            out,
            "{}",
            paint.yellow("A decision is needed. Choices: resume (`checkpoint resume`), restart a phase (`checkpoint resume --restart <phase>`), start fresh (`checkpoint resume --fresh`), view the state (`checkpoint show`), abandon (`checkpoint resume --abandon`).")
        );
    }
}

fn finding_line(finding: &checkpoint_core::resume::Finding, paint: Paint) -> String {
    use checkpoint_core::resume::Severity;
    let label = match finding.severity {
        Severity::Error => paint.red("error"),
        Severity::Warning => paint.yellow("warning"),
        Severity::Info => paint.dim("info"),
    };
    let hint = finding
        .hint
        .as_deref()
        .map(|hint| format!("\n      hint: {hint}"))
        .unwrap_or_default();
    format!("{label} [{}] {}{hint}", finding.code, finding.message)
}

/// The human rendering of validation findings.
pub(crate) fn render_findings(
    workflow: &str,
    findings: &[checkpoint_core::resume::Finding],
    paint: Paint,
) -> String {
    if findings.is_empty() {
        return format!("{} workflow `{workflow}` is valid\n", paint.green("✓"));
    }
    let mut out = String::new();
    for finding in findings {
        let _ = writeln!(out, "{}", finding_line(finding, paint));
    }
    out
}

#[cfg(test)]
mod tests;
