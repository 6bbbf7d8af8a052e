//! `checkpoint validate`: check a workflow's state, journal, files and git context.

use checkpoint_core::resume::{self, Finding, FindingCode, Severity};
use clap::Args;
use miette::{IntoDiagnostic, Result};

use crate::{
    ctx::Ctx,
    json::ValidateReport,
    output::{self, Format, JSON_VERSION, Paint},
    probe::FsProbe,
};

/// Arguments of `checkpoint validate`.
#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// Skip the replay of the whole journal (fast, for very long journals)
    #[arg(long)]
    pub quick: bool,
    /// Move unreadable journal lines to `journal.jsonl.unreadable-<time>` (every readable entry
    /// kept), rebuild `state.json` from the journal when they disagree (the journal is the
    /// record), keeping the state that disagreed as `state.json.mismatch-<time>`, then validate
    #[arg(long, conflicts_with = "quick")]
    pub repair: bool,
}

/// A validation that found errors; rendered already, so only the exit code matters.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("validation found {errors} error(s)")]
#[diagnostic(
    code(checkpoint::invalid),
    help("see the findings above; `checkpoint resume` proposes what to do")
)]
pub(crate) struct Invalid {
    pub errors: usize,
}

pub(crate) fn validate(ctx: &Ctx, args: &ValidateArgs) -> Result<()> {
    let id = ctx.workflow_id()?;
    if args.repair {
        if let Some(repair) = ctx.store.repair_journal(&id, ctx.now)? {
            output::note(&repaired(ctx, &repair));
        }
        match ctx.store.rebuild_from_journal(&id, ctx.now)? {
            Some(kept) => output::note(&format!(
                "rebuilt `state.json` from the journal; the state that disagreed is kept as `{}`",
                ctx.display_path(&kept).display()
            )),
            None => output::note("the state already is the journal's replay: nothing to repair"),
        }
    }
    let mut loaded = ctx.store.load(&id)?;
    let damage = ctx.journal_damage(&id, &loaded.recoveries);
    let damaged = damage.is_some();
    loaded.recoveries.extend(damage);
    let probe = FsProbe::new(&ctx.project_root);
    let mut findings = resume::validate(
        &loaded.workflow,
        &loaded.recoveries,
        &probe,
        &ctx.config,
        ctx.now,
    );
    // Lines at the journal's end that are not its entries are only a warning for the commands
    // that go on from the state, but `validate` holds the journal to its rule, `--quick` too.
    for finding in &mut findings {
        if matches!(
            finding.code,
            FindingCode::JournalForeign | FindingCode::JournalUnreadable
        ) {
            finding.severity = Severity::Error;
        }
    }
    // A bad line is reported once, with its line number and repair, and stops the replay.
    if !args.quick && !damaged {
        findings.extend(replay_finding(ctx, &loaded));
    }
    findings.sort_by_key(|finding| finding.severity);
    let errors = findings
        .iter()
        .filter(|finding| finding.severity == Severity::Error)
        .count();
    match ctx.format {
        Format::Json => output::emit_json(&ValidateReport {
            version: JSON_VERSION,
            workflow: id.as_str(),
            valid: errors == 0,
            findings: &findings,
        })
        .into_diagnostic()?,
        _ => output::emit_human(
            ctx.color,
            &output::render_findings(id.as_str(), &findings, Paint::new(ctx.color)),
        )
        .into_diagnostic()?,
    }
    if errors > 0 {
        Err(Invalid { errors }.into())
    } else {
        Ok(())
    }
}

/// Replays the whole journal and compares it with the state (`Store::verify`).
fn replay_finding(ctx: &Ctx, loaded: &checkpoint_core::store::Loaded) -> Option<Finding> {
    match ctx.store.verify(&loaded.workflow.id) {
        Ok(verification) => verification.mismatch.map(|mismatch| {
            let (severity, code) = if mismatch.contains("no entries") {
                (Severity::Warning, FindingCode::JournalMissing)
            } else {
                (Severity::Error, FindingCode::JournalMismatch)
            };
            finding(
                severity,
                code,
                format!("the journal does not replay to the state: {mismatch}"),
                if code == FindingCode::JournalMismatch {
                    resume::JOURNAL_MISMATCH_HINT
                } else {
                    "the state is what commands use; `checkpoint log` shows the journal"
                },
            )
        }),
        Err(err) => Some(finding(
            Severity::Error,
            FindingCode::JournalUnreadable,
            format!("the journal cannot be read: {err}"),
            checkpoint_core::store::JOURNAL_REPAIR_HINT,
        )),
    }
}

fn finding(severity: Severity, code: FindingCode, message: String, hint: &str) -> Finding {
    Finding {
        severity,
        code,
        phase: None,
        message,
        hint: Some(hint.into()),
    }
}

/// What `validate --repair` did to a journal with unreadable lines, in a sentence.
fn repaired(ctx: &Ctx, repair: &checkpoint_core::store::JournalRepair) -> String {
    let lines: Vec<String> = repair.lines.iter().map(ToString::to_string).collect();
    let mut text = format!(
        "moved {} unreadable line{} of the journal (line {}) to `{}`, keeping every readable entry",
        lines.len(),
        if lines.len() == 1 { "" } else { "s" },
        lines.join(", "),
        ctx.display_path(&repair.kept_as).display()
    );
    if repair.placeholders > 0 {
        text.push_str(&format!(
            "; {} placeholder entr{} keep the numbers they held",
            repair.placeholders,
            if repair.placeholders == 1 { "y" } else { "ies" }
        ));
    }
    if repair.state_kept {
        text.push_str("; `state.json`, which saw what they did, is journaled as the last entry");
    }
    text
}
