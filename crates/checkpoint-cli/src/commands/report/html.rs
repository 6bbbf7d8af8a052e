//! The report as one self-contained HTML file: inline CSS and SVG, no script, no network.

use std::{collections::HashMap, fmt::Write as _};

use chrono::{DateTime, Utc};

use super::{Report, SessionEnd, Span, SpanKind, status_done};
use crate::output;

/// The narrowest box of the phase graph.
const NODE_W: i64 = 150;
const NODE_H: i64 = 36;
/// The padding left and right of a box's label.
const NODE_PAD: i64 = 14;
/// The most columns of a box's label (about 320 pixels); a longer one is cut with an ellipsis,
/// whole in the box's tooltip.
const LABEL_COLUMNS: usize = 40;

const COL_GAP: i64 = 60;
const ROW_GAP: i64 = 22;
const LANE_H: i64 = 26;
const LABEL_W: i64 = 140;
const TIMELINE_W: i64 = 900;

/// Escapes text for HTML and SVG; control characters and bidirectional controls are shown as
/// escapes, as in the terminal (`output::escape`).
fn esc(text: &str) -> String {
    let text = output::escape(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// The colour of success.
const GREEN: &str = "#2e9d57";
/// The colour of failure.
const RED: &str = "#d64545";
/// The colour of work under way.
const BLUE: &str = "#2f6fd6";
/// The colour of what waits for a person or a reset.
const AMBER: &str = "#d99a00";

fn status_color(status: &str) -> &'static str {
    match status {
        _ if status_done(status) => GREEN,
        "in_progress" => BLUE,
        "awaiting_approval" => AMBER,
        "failed" => RED,
        _ => "#9aa3ad",
    }
}

/// How an event turned out, for its row's colour: a failure, a success, or neither.
fn outcome(span: &Span) -> Option<&'static str> {
    match span.kind {
        SpanKind::Phase => match span.label.as_str() {
            "fail" | "reject" => Some("fail"),
            "complete" | "approve" | "skip" => Some("ok"),
            _ => None,
        },
        SpanKind::Session => match span.ended {
            Some(SessionEnd::Crash | SessionEnd::Killed) => Some("fail"),
            Some(SessionEnd::Progress) => Some("ok"),
            _ => None,
        },
        _ => None,
    }
}

/// The colour of a phase's bar on the timeline, from the transition that ended it.
fn bar_color(end_label: &str) -> &'static str {
    match end_label {
        "fail" | "reject" => RED,
        "complete" | "approve" | "skip" => GREEN,
        _ => BLUE,
    }
}

/// What the colours mean, under the timeline.
fn legend() -> String {
    let items = [
        (GREEN, "success (a phase done, a session that progressed)"),
        (RED, "failure (a failed phase, a crashed or killed session)"),
        (BLUE, "under way"),
        (AMBER, "waits for a person or a rate limit's reset"),
        ("#c9ced6", "the runner waiting"),
        ("#c2410c", "an effect"),
        ("#5b4bb7", "a run"),
    ];
    let mut html = String::from("<p class=\"legend\">");
    for (colour, meaning) in items {
        let _ = write!(
            html,
            "<span><i style=\"background:{colour}\"></i>{}</span>",
            esc(meaning)
        );
    }
    html.push_str("</p>\n");
    html
}

/// The closing banner's class and words: how the run ended (or, with no run, the workflow).
fn banner(report: &Report) -> Option<(&'static str, String)> {
    match &report.stopped {
        Some(stopped) => {
            let class = match stopped.exit {
                0 => "ok",
                9 | 10 => "warn",
                _ => "fail",
            };
            Some((
                class,
                format!(
                    "Stopped {}: {} (exit {})",
                    stopped.at.format("%Y-%m-%d %H:%M:%S UTC"),
                    esc(&stopped.reason),
                    stopped.exit
                ),
            ))
        }
        None => match report.status.as_str() {
            "complete" => Some(("ok", "Complete".to_owned())),
            "failed" => Some(("fail", "Failed".to_owned())),
            _ => None,
        },
    }
}

pub(super) fn span_color(span: &Span) -> &'static str {
    match (span.kind, span.ended) {
        (SpanKind::Session, Some(SessionEnd::RateLimit)) => AMBER,
        (SpanKind::Session, Some(SessionEnd::Crash | SessionEnd::Killed)) => RED,
        (SpanKind::Session, Some(SessionEnd::Stall)) => "#9aa3ad",
        (SpanKind::Session, None | Some(SessionEnd::Interrupted | SessionEnd::Other)) => BLUE,
        (SpanKind::Session, Some(SessionEnd::Progress)) => GREEN,
        (SpanKind::Wait, _) => "#c9ced6",
        (SpanKind::Run, _) => "#5b4bb7",
        (SpanKind::Phase, _) if bar_color(&span.label) == RED => RED,
        (SpanKind::Phase, _) if span.label == "start" => BLUE,
        (SpanKind::Phase | SpanKind::Pause, _) => GREEN,
        (SpanKind::Effect, _) => "#c2410c",
        (SpanKind::Agent, _) => "#2f6fb0",
    }
}

/// The whole page.
pub(crate) fn render(report: &Report, now: DateTime<Utc>) -> String {
    let title = match &report.title {
        Some(title) => format!("{} — {title}", report.workflow),
        None => report.workflow.clone(),
    };
    let done = report
        .phases
        .iter()
        .filter(|phase| status_done(&phase.status))
        .count();
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>\
         body{{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2430;background:#fff}}\
         h1{{font-size:20px;margin:0 0 4px}}h2{{font-size:16px;margin:24px 0 8px}}\
         .muted{{color:#5d6673}}table{{border-collapse:collapse}}\
         td,th{{padding:3px 10px;border-bottom:1px solid #e3e6ea;text-align:left;vertical-align:top}}\
         svg text{{font:12px system-ui,sans-serif}}\
         .stop{{padding:8px 12px;display:inline-block;font-weight:600}}\
         .stop.ok{{background:#e3f4ea;border-left:6px solid {GREEN};color:#1d5e36}}\
         .stop.warn{{background:#fff4d6;border-left:6px solid {AMBER};color:#6b4b00}}\
         .stop.fail{{background:#fde8e8;border-left:6px solid {RED};color:#8f1d1d}}\
         tr.ok td{{background:#e3f4ea}}tr.fail td{{background:#fde8e8;color:#8f1d1d}}\
         .legend span{{margin-right:14px;white-space:nowrap}}\
         .legend i{{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;vertical-align:-1px}}\
         </style></head><body>\n",
        esc(&title)
    );
    let _ = writeln!(
        page,
        "<h1>{}</h1><p class=\"muted\">{} · {done} of {} phases done · report of {}</p>",
        esc(&title),
        esc(&report.status),
        report.phases.len(),
        now.format("%Y-%m-%d %H:%M:%S UTC")
    );
    if let Some((class, words)) = banner(report) {
        let _ = writeln!(page, "<p class=\"stop {class}\">{words}</p>");
    }
    page.push_str("<h2>Phases</h2>\n");
    page.push_str(&phase_graph(report));
    page.push_str("<h2>Timeline</h2>\n");
    page.push_str(&timeline(report, now));
    page.push_str(&legend());
    page.push_str("<h2>Events</h2>\n<table><tr><th>start</th><th>duration</th><th>kind</th><th>phase</th><th>what</th></tr>\n");
    for span in &report.timeline {
        let _ = writeln!(
            page,
            "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            outcome(span).map_or_else(String::new, |class| format!(" class=\"{class}\"")),
            span.start.format("%Y-%m-%d %H:%M:%S"),
            span.seconds
                .map(|secs| checkpoint_core::run::human_duration(chrono::Duration::seconds(secs)))
                .unwrap_or_default(),
            span.kind,
            esc(span.phase.as_deref().unwrap_or("")),
            esc(&span.label)
        );
    }
    page.push_str("</table>\n");
    if !report.files_by_phase.is_empty() || !report.files_by_session.is_empty() {
        page.push_str(
            "<h2>Files changed</h2>\n<table><tr><th>by</th><th>files</th><th>lines</th></tr>\n",
        );
        for row in report.files_by_phase.iter().chain(&report.files_by_session) {
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td>{}</td><td>+{} −{}</td></tr>",
                esc(&row.who),
                row.changed,
                row.added,
                row.removed
            );
        }
        page.push_str("</table>\n");
    }
    page.push_str("</body></html>\n");
    page
}

/// The phase DAG, one column per depth.
fn phase_graph(report: &Report) -> String {
    let index: HashMap<&str, usize> = report
        .phases
        .iter()
        .enumerate()
        .map(|(idx, phase)| (phase.id.as_str(), idx))
        .collect();
    // Depth = the longest chain of dependencies; phases are in plan order, dependencies first
    // in a valid plan, but a few passes make any order settle.
    let mut depth = vec![0_i64; report.phases.len()];
    for _ in 0..report.phases.len() {
        let mut changed = false;
        for (idx, phase) in report.phases.iter().enumerate() {
            for dependency in &phase.dependencies {
                if let Some(&dep) = index.get(dependency.as_str())
                    && depth[idx] < depth[dep] + 1
                {
                    depth[idx] = depth[dep] + 1;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    // Each box as wide as its label, each column as wide as its widest box.
    let labels: Vec<BoxLabel> = report
        .phases
        .iter()
        .map(|phase| BoxLabel::new(&phase.id, &phase.status))
        .collect();
    let columns = depth.iter().max().map_or(0, |&max| max + 1);
    let mut column_w = vec![NODE_W; usize::try_from(columns).unwrap_or(0)];
    for (&column, label) in depth.iter().zip(&labels) {
        let slot = &mut column_w[usize::try_from(column).unwrap_or(0)];
        *slot = (*slot).max(label.width);
    }
    let column_x: Vec<i64> = column_w
        .iter()
        .scan(10, |x, width| {
            let at = *x;
            *x += width + COL_GAP;
            Some(at)
        })
        .collect();
    let mut rows_in_column: HashMap<i64, i64> = HashMap::new();
    let positions: Vec<(i64, i64)> = depth
        .iter()
        .map(|&column| {
            let row = rows_in_column.entry(column).or_insert(0);
            let position = (
                column_x[usize::try_from(column).unwrap_or(0)],
                10 + *row * (NODE_H + ROW_GAP),
            );
            *row += 1;
            position
        })
        .collect();
    let width = positions
        .iter()
        .zip(&labels)
        .map(|((x, _), label)| x + label.width + 10)
        .max()
        .unwrap_or(20);
    let height = positions
        .iter()
        .map(|(_, y)| y + NODE_H + 10)
        .max()
        .unwrap_or(20);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"phase graph\">\
         <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#7a838f\"/></marker></defs>\n"
    );
    for (idx, phase) in report.phases.iter().enumerate() {
        for dependency in &phase.dependencies {
            let Some(&dep) = index.get(dependency.as_str()) else {
                continue;
            };
            let (x1, y1) = (
                positions[dep].0 + labels[dep].width,
                positions[dep].1 + NODE_H / 2,
            );
            let (x2, y2) = (positions[idx].0, positions[idx].1 + NODE_H / 2);
            let mid = (x1 + x2) / 2;
            let _ = writeln!(
                svg,
                "<path d=\"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}\" fill=\"none\" stroke=\"#7a838f\" stroke-width=\"1.5\" marker-end=\"url(#arrow)\"/>"
            );
        }
    }
    for ((phase, (x, y)), label) in report.phases.iter().zip(&positions).zip(&labels) {
        let color = status_color(&phase.status);
        let _ = writeln!(
            svg,
            "<g><title>{id}: {status}</title><rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{NODE_H}\" rx=\"7\" fill=\"{color}\" fill-opacity=\"0.18\" stroke=\"{color}\" stroke-width=\"2\"/>\
             <text x=\"{tx}\" y=\"{ty}\" text-anchor=\"middle\" fill=\"#1d2430\">{text}</text></g>",
            id = esc(&phase.id),
            status = esc(&phase.status.replace('_', " ")),
            w = label.width,
            text = esc(&label.text),
            tx = x + label.width / 2,
            ty = y + NODE_H / 2 + 4,
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// The label of a phase's box (`<id> · <status>`, cut to [`LABEL_COLUMNS`] with an ellipsis)
/// and the box's width, fitted to it.
struct BoxLabel {
    text: String,
    width: i64,
}

impl BoxLabel {
    fn new(id: &str, status: &str) -> Self {
        let whole = format!("{id} · {}", status.replace('_', " "));
        // Escapes show as text: measure what is drawn.
        let shown = output::escape(&whole);
        let text = match output::cut_point(&shown, LABEL_COLUMNS) {
            Some(end) => format!("{}…", &shown[..end]),
            None => shown.into_owned(),
        };
        Self {
            width: (text_px(&text) + 2 * NODE_PAD).max(NODE_W),
            text,
        }
    }
}

/// About how many pixels `text` takes in the graph's font (12px system-ui), rounded up: each
/// character by its kind, from the widest fonts' metrics.
fn text_px(text: &str) -> i64 {
    let tenths: i64 = text
        .chars()
        .map(|c| match c {
            _ if output::columns(c.encode_utf8(&mut [0; 4])) == 2 => 130,
            'M' | 'W' | 'm' | 'w' | '@' => 110,
            'A'..='Z' => 90,
            'i' | 'j' | 'l' | 't' | 'f' | 'r' | '.' | ',' | ':' | ';' | '!' | '|' | '\'' => 45,
            _ => 75,
        })
        .sum();
    (tenths + 9) / 10
}

/// The timeline: a lane for runs, one for sessions and waits, and one per phase.
fn timeline(report: &Report, now: DateTime<Utc>) -> String {
    let spans = &report.timeline;
    let Some(first) = spans.iter().map(|span| span.start).min() else {
        return "<p class=\"muted\">Nothing happened yet.</p>\n".into();
    };
    let last = spans
        .iter()
        .map(|span| span.end.unwrap_or(span.start))
        .max()
        .unwrap_or(first)
        .max(first + chrono::Duration::seconds(1));
    let total = (last - first).num_milliseconds().max(1) as f64;
    let x_of = |at: DateTime<Utc>| -> f64 {
        LABEL_W as f64 + (at - first).num_milliseconds() as f64 / total * TIMELINE_W as f64
    };
    let mut lanes: Vec<String> = vec!["runs".into(), "sessions".into()];
    lanes.extend(
        report
            .phases
            .iter()
            .map(|phase| format!("phase {}", phase.id)),
    );
    let height = 30 + lanes.len() as i64 * LANE_H + 10;
    let width = LABEL_W + TIMELINE_W + 50;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"timeline\">\n"
    );
    for (idx, lane) in lanes.iter().enumerate() {
        let y = 30 + idx as i64 * LANE_H;
        let _ = writeln!(
            svg,
            "<rect x=\"0\" y=\"{y}\" width=\"{width}\" height=\"{LANE_H}\" fill=\"{}\"/><text x=\"6\" y=\"{}\" fill=\"#5d6673\">{}</text>",
            if idx % 2 == 0 { "#f5f7f9" } else { "#ffffff" },
            y + 17,
            esc(lane)
        );
    }
    for tick in 0..=4 {
        let x = LABEL_W as f64 + TIMELINE_W as f64 * f64::from(tick) / 4.0;
        let at = first + chrono::Duration::milliseconds((total * f64::from(tick) / 4.0) as i64);
        let _ = writeln!(
            svg,
            "<line x1=\"{x:.1}\" y1=\"24\" x2=\"{x:.1}\" y2=\"{height}\" stroke=\"#d5d9de\"/><text x=\"{x:.1}\" y=\"16\" text-anchor=\"middle\" fill=\"#5d6673\">{}</text>",
            at.format("%H:%M:%S")
        );
    }
    let lane_y = |span: &Span| -> i64 {
        let lane = match span.kind {
            SpanKind::Run => 0,
            SpanKind::Session | SpanKind::Wait | SpanKind::Pause => 1,
            SpanKind::Phase | SpanKind::Effect | SpanKind::Agent => span
                .phase
                .as_deref()
                .and_then(|phase| report.phases.iter().position(|row| row.id == phase))
                .map_or(1, |idx| idx + 2),
        };
        30 + lane as i64 * LANE_H
    };
    // Phases: a bar from each start to the next transition of the same phase.
    for (idx, span) in spans.iter().enumerate() {
        if span.kind == SpanKind::Phase
            && span.label == "start"
            && let Some(end) = spans[idx + 1..]
                .iter()
                .find(|later| later.kind == SpanKind::Phase && later.phase == span.phase)
        {
            let (x1, x2) = (x_of(span.start), x_of(end.start));
            let _ = writeln!(
                svg,
                "<rect x=\"{x1:.1}\" y=\"{}\" width=\"{:.1}\" height=\"{}\" rx=\"3\" fill=\"{}\" fill-opacity=\"0.55\"><title>{}: {} to {}</title></rect>",
                lane_y(span) + 6,
                (x2 - x1).max(2.0),
                LANE_H - 12,
                bar_color(&end.label),
                esc(span.phase.as_deref().unwrap_or("")),
                span.start.format("%H:%M:%S"),
                esc(&end.label)
            );
        }
    }
    for span in spans {
        let y = lane_y(span);
        let x1 = x_of(span.start);
        match span.end.or((span.kind == SpanKind::Session)
            .then_some(now)
            .filter(|_| span.seconds.is_some()))
        {
            Some(end) if span.kind != SpanKind::Phase => {
                let x2 = x_of(end.min(last));
                let _ = writeln!(
                    svg,
                    "<rect x=\"{x1:.1}\" y=\"{}\" width=\"{:.1}\" height=\"{}\" rx=\"3\" fill=\"{}\"{}><title>{}</title></rect>",
                    y + 4,
                    (x2 - x1).max(3.0),
                    LANE_H - 8,
                    span_color(span),
                    if span.kind == SpanKind::Wait {
                        " stroke=\"#8a929c\" stroke-dasharray=\"4 3\""
                    } else {
                        ""
                    },
                    esc(&span.label)
                );
            }
            _ => {
                let _ = writeln!(
                    svg,
                    "<circle cx=\"{x1:.1}\" cy=\"{}\" r=\"5\" fill=\"{}\"><title>{} {}</title></circle>",
                    y + LANE_H / 2,
                    span_color(span),
                    esc(span.phase.as_deref().unwrap_or("")),
                    esc(&span.label)
                );
            }
        }
    }
    svg.push_str("</svg>\n");
    svg
}
