//! The resume plan as a compact Markdown block written for Claude, under a size budget.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use crate::{
    model::{ContextSummary, Holder},
    resume::{
        codes::Action,
        holders::{SubAgents, by},
        planner::{PhaseRef, ResumePlan},
        validate::Severity,
    },
};

/// How many items of a list are shown before "… and N more".
const LIST_LIMIT: usize = 12;

/// Renders the plan for Claude in at most `budget` bytes (the essentials always fit first).
pub fn render_prompt(plan: &ResumePlan, now: DateTime<Utc>, budget: usize) -> String {
    let mut sections = vec![head_section(plan, now)];
    sections.extend(effects_section(plan));
    sections.extend(findings_section(plan));
    let phases = phases_section(plan);
    if phases.len() > 1 {
        sections.push(phases);
    }
    let context = context_section(&plan.context);
    if !context.is_empty() {
        sections.push(context);
    }
    sections.push(
        "\nRecord state with the `checkpoint` MCP tools when they are present (`start`, `progress`, `complete`, `decide`), else with the `checkpoint` CLI, never by editing its JSON: `checkpoint start <phase>`, `checkpoint progress <phase> \"<note>\"`, `checkpoint complete <phase> --artifact <path>`, `checkpoint decide \"<decision>\"`.\n"
            .into(),
    );
    fit(sections, budget)
}

/// The essentials: the workflow, its status, the next action and the recoveries.
fn head_section(plan: &ResumePlan, now: DateTime<Utc>) -> String {
    let title = plan
        .title
        .as_deref()
        .map(|title| format!(" — {title}"))
        .unwrap_or_default();
    let mut head = format!("## checkpoint: workflow `{}`{title}\n", plan.workflow);
    let n_phases = plan.phase_count();
    let _ = writeln!(
        head,
        "Status: {} · {} of {n_phases} {} done · last active {} ({})",
        plan.status.as_str().replace('_', " "),
        plan.completed.len(),
        if n_phases == 1 { "phase" } else { "phases" },
        ago(plan.last_active, now),
        plan.last_active.format("%Y-%m-%d %H:%M UTC"),
    );
    if let Some(description) = &plan.description {
        let _ = writeln!(head, "Goal: {description}");
    }
    if let Some(handoff) = &plan.handoff {
        let _ = writeln!(
            head,
            "Handed over: session `{}` ({}) came from {} on {} at {}, with its uncommitted work on commit {}.",
            handoff.session_id,
            handoff.client,
            handoff.user,
            handoff.machine,
            handoff.at.format("%Y-%m-%d %H:%M UTC"),
            handoff.base.get(..12).unwrap_or("(none)"),
        );
    }
    let _ = write!(head, "\n**Next:** {}", plan.next.reason);
    if let Some(command) = &plan.next.command {
        let _ = write!(head, " → `{command}`");
    }
    // A dispatch lists its phases below, each with its line and note.
    if !plan.next.parallel.is_empty() && plan.next.action != Action::Dispatch {
        let shown = ids(plan
            .next
            .parallel
            .iter()
            .take(LIST_LIMIT)
            .map(|id| id.as_str()));
        let more = plan.next.parallel.len().saturating_sub(LIST_LIMIT);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        let _ = write!(
            head,
            " (also ready, can run in parallel: {shown}{more}; to run them at once, dispatch one sub-agent per phase in the same turn, each prompt carrying the line `{} <id>`)",
            Holder::PHASE_LINE
        );
    }
    head.push('\n');
    if let Some(view) = &plan.sub_agents {
        sub_agents_lines(&mut head, view);
    }
    if plan.decision_required {
        head.push_str("**Ask the user before continuing:** this needs a person's decision.\n");
    }
    if !plan.recoveries.is_empty() {
        head.push_str("\nRecovery after the interruption (run `checkpoint resume` to apply, if not yet applied):\n");
        for recovery in plan.recoveries.iter().take(LIST_LIMIT) {
            let _ = writeln!(head, "- {}", recovery.description);
        }
        if plan.recoveries.len() > LIST_LIMIT {
            let _ = writeln!(head, "- … and {} more", plan.recoveries.len() - LIST_LIMIT);
        }
    }
    head
}

/// The parallel phases held by sub-agents: done (by which), interrupted mid-flight (with the
/// last note and how long ago), still at work, not yet dispatched; and what to dispatch now.
fn sub_agents_lines(head: &mut String, view: &SubAgents) {
    head.push_str("\nSub-agents (one per parallel phase):\n");
    for held in view.done.iter().take(LIST_LIMIT) {
        let _ = writeln!(head, "- done: `{}` by {}", held.phase, by(&held.holder));
    }
    for held in view.interrupted.iter().take(LIST_LIMIT) {
        let failed = held
            .holder
            .error
            .as_deref()
            .map(|error| format!(", failed: {error}"))
            .unwrap_or_default();
        let note = held
            .note
            .as_deref()
            .map(|note| format!(" — last note: {note}"))
            .unwrap_or_default();
        let _ = writeln!(
            head,
            "- interrupted mid-flight: `{}` held by {}, last active {} min ago{failed}{note}",
            held.phase,
            by(&held.holder),
            held.idle_minutes
        );
    }
    for held in view.running.iter().take(LIST_LIMIT) {
        let _ = writeln!(
            head,
            "- at work: `{}` by {}, last active {} min ago",
            held.phase,
            by(&held.holder),
            held.idle_minutes
        );
    }
    if !view.not_dispatched.is_empty() {
        let _ = writeln!(
            head,
            "- not yet dispatched: {}",
            ids(view
                .not_dispatched
                .iter()
                .take(LIST_LIMIT)
                .map(|id| id.as_str()))
        );
    }
    if !view.dispatch.is_empty() {
        head.push_str("Dispatch now, in parallel, one `Agent` call each in the same turn, its prompt carrying the line shown:\n");
        for item in view.dispatch.iter().take(LIST_LIMIT) {
            let note = item
                .note
                .as_deref()
                .map(|note| format!(" — continue from: {note}"))
                .unwrap_or_default();
            let _ = writeln!(head, "- `{}`{note}", item.line);
        }
    }
}

/// The findings worth a look (not the informational ones), if any.
fn findings_section(plan: &ResumePlan) -> Option<String> {
    let findings: Vec<String> = plan
        .findings
        .iter()
        .filter(|finding| finding.severity != Severity::Info)
        .map(|finding| {
            let hint = finding
                .hint
                .as_deref()
                .map(|hint| format!(" ({hint})"))
                .unwrap_or_default();
            format!(
                "- {} `{}`: {}{hint}",
                finding.severity, finding.code, finding.message
            )
        })
        .collect();
    (!findings.is_empty()).then(|| format!("\nFindings:\n{}\n", findings.join("\n")))
}

/// Where each phase stands, by status.
fn phases_section(plan: &ResumePlan) -> String {
    let mut where_ = String::from("\n");
    list(&mut where_, "In progress", &plan.in_progress, |phase| {
        let attempt = if phase.attempts > 1 {
            format!(" (attempt {})", phase.attempts)
        } else {
            String::new()
        };
        let tasks = phase
            .tasks
            .map(|(done, total)| format!(", tasks {done}/{total} done"))
            .unwrap_or_default();
        let progress = phase
            .progress
            .as_deref()
            .map(|note| format!(" — progress: {note}"))
            .unwrap_or_default();
        let what = phase.purpose_suffix();
        format!("`{}`{what}{attempt}{tasks}{progress}", phase.id)
    });
    list(
        &mut where_,
        "Awaiting approval",
        &plan.awaiting_approval,
        |phase| {
            format!(
                "`{}` (approve: `checkpoint approve {}`)",
                phase.id, phase.id
            )
        },
    );
    list(&mut where_, "Failed", &plan.failed, |phase| {
        format!(
            "`{}`: {}",
            phase.id,
            phase.error.as_deref().unwrap_or("unknown error")
        )
    });
    list(&mut where_, "Ready", &plan.ready, |phase| {
        let progress = phase
            .progress
            .as_deref()
            .map(|note| format!(" — earlier progress: {note}"))
            .unwrap_or_default();
        format!("`{}`{progress}", phase.id)
    });
    list(&mut where_, "Blocked", &plan.blocked, |phase| {
        format!(
            "`{}` (waits for {})",
            phase.id,
            ids(phase.waiting_for.iter().map(|id| id.as_str()))
        )
    });
    list(&mut where_, "Done", &plan.completed, |phase| {
        let sha = phase
            .commit_sha
            .as_deref()
            .map(|sha| format!(", commit {}", sha.get(..7).unwrap_or(sha)))
            .unwrap_or_default();
        let when = phase
            .completed_at
            .map(|at| format!(" ({}{sha})", at.format("%Y-%m-%d %H:%M")))
            .unwrap_or_default();
        format!("`{}`{when}", phase.id)
    });
    where_
}

/// The effects already done, which a resume must not repeat: the latest ones, each with its
/// time, phase and output's first line.
fn effects_section(plan: &ResumePlan) -> Option<String> {
    /// The most characters of an output shown here (`checkpoint effects` shows it whole).
    const OUTPUT_CHARS: usize = 160;
    if plan.effects.is_empty() {
        return None;
    }
    let mut section = String::from(
        "\n**Already done — do not repeat:** these calls changed something outside the project and succeeded; carry on from their results.\n",
    );
    let shown = latest(&plan.effects);
    if shown.len() < plan.effects.len() {
        let _ = writeln!(
            section,
            "- … {} earlier (see `checkpoint effects`)",
            plan.effects.len() - shown.len()
        );
    }
    for effect in shown {
        let what = match effect.tool.as_deref() {
            Some("Bash") | None => format!("`{}`", effect.command),
            Some(tool) => format!("{tool} `{}`", effect.command),
        };
        let _ = write!(
            section,
            "- {}. {what} at {}",
            effect.number,
            crate::effects::time(effect.at)
        );
        if let Some(phase) = &effect.phase {
            let _ = write!(section, " (phase {phase})");
        }
        if effect.unknown {
            // Let through, and no outcome was recorded: the session was cut off mid-call.
            let _ = write!(
                section,
                ": **may have happened** (its outcome was never recorded): check before repeating"
            );
            if let Some(check) = crate::effects::check_command(&effect.command) {
                let _ = write!(section, " (`{check}`)");
            }
            let _ = writeln!(
                section,
                "; a person says which it was with `checkpoint effects resolve {} --done|--not-done`, and until then a repeat is refused",
                effect.number
            );
            continue;
        }
        let output = effect
            .output
            .as_deref()
            .and_then(|output| output.lines().find(|line| !line.trim().is_empty()));
        if let Some(output) = output {
            let cut = floor_char_boundary(output, OUTPUT_CHARS);
            let more = if cut < output.len() { "…" } else { "" };
            let _ = write!(section, " → {}{more}", output[..cut].trim());
        }
        section.push('\n');
    }
    section.push_str("If a repeat is really wanted, a person runs `checkpoint effects allow <n>` (it lets exactly one repeat through).\n");
    Some(section)
}

/// The context summary: the latest decisions, files and notes.
fn context_section(context: &ContextSummary) -> String {
    let mut summary = String::new();
    if !context.key_decisions.is_empty() {
        summary.push_str("\nKey decisions:\n");
        for decision in latest(&context.key_decisions) {
            let _ = writeln!(summary, "- {}", decision.text);
        }
    }
    if !context.file_paths.is_empty() {
        summary.push_str("\nFiles:\n");
        for path in latest(&context.file_paths) {
            let _ = writeln!(summary, "- {path}");
        }
    }
    if !context.notes.is_empty() {
        summary.push_str("\nNotes:\n");
        for note in latest(&context.notes) {
            let _ = writeln!(summary, "- {}", note.text);
        }
    }
    summary
}

/// Joins the sections in order, cutting the first that does not fit in `budget` bytes and
/// dropping the rest.
fn fit(sections: Vec<String>, budget: usize) -> String {
    const CUT: &str = "\n… (cut to fit; run `checkpoint resume` for all)\n";
    let mut out = String::new();
    for section in sections {
        if out.len() + section.len() <= budget {
            out.push_str(&section);
            continue;
        }
        let room = budget.saturating_sub(out.len() + CUT.len());
        let cut = floor_char_boundary(&section, room);
        let cut = section[..cut].rfind('\n').unwrap_or(cut);
        out.push_str(&section[..cut]);
        if out.len() + CUT.len() <= budget {
            out.push_str(CUT);
        }
        break;
    }
    out
}

fn list(out: &mut String, label: &str, phases: &[PhaseRef], line: impl Fn(&PhaseRef) -> String) {
    if phases.is_empty() {
        return;
    }
    let _ = writeln!(out, "{label}:");
    for phase in phases.iter().take(LIST_LIMIT) {
        let _ = writeln!(out, "- {}", line(phase));
    }
    if phases.len() > LIST_LIMIT {
        let _ = writeln!(out, "- … and {} more", phases.len() - LIST_LIMIT);
    }
}

fn latest<T>(items: &[T]) -> &[T] {
    &items[items.len().saturating_sub(LIST_LIMIT)..]
}

fn ids<'a>(ids: impl Iterator<Item = &'a str>) -> String {
    ids.map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// How long ago `then` was, as every view words it: "just now", "5 minutes ago", "2 hours ago",
/// "3 days ago", or for a time ahead "in a moment", "in 2 hours" (rounded to the nearest unit).
pub fn ago(then: DateTime<Utc>, now: DateTime<Utc>) -> String {
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
