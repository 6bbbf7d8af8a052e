//! The human rendering of a resume plan and of `validate`'s findings.

use std::fmt::Write as _;

use checkpoint_core::{
    PhaseId,
    resume::{ResumePlan, Severity},
};
use chrono::{DateTime, Utc};

use crate::output::{
    paint::Paint,
    status::workflow_status,
    text::{ago, count, short_sha},
};

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
    let total = plan.phase_count();
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

/// A phase that needs attention: its mark, its id and its status.
fn marked(out: &mut String, mark: &str, id: &PhaseId, status: &str) {
    let _ = writeln!(out, "{mark} {id}  {status}");
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
        let status = format!("{}{what}{progress}", paint.cyan("in progress"));
        marked(out, &paint.cyan("→"), &phase.id, &status);
    }
    for phase in &plan.awaiting_approval {
        let status = paint.yellow("awaiting approval");
        marked(out, &paint.yellow("?"), &phase.id, &status);
    }
    for phase in &plan.failed {
        let error = phase.error.as_deref().unwrap_or("unknown error");
        let status = paint.red(&format!("failed: {error}"));
        marked(out, &paint.red("✗"), &phase.id, &status);
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
