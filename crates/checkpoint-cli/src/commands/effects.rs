//! The effect ledger: `effect` (one recorded by hand, or by the MCP server's `effect` tool),
//! `effects` (the list) and `effects allow <n>` (one repeat let through the guard).

use checkpoint_core::{
    EffectSource, PhaseId, Transition, Workflow,
    effects::{self, Call, Ledger, Matcher, Observed, RecordedEffect},
    store::Loaded,
};
use std::fmt::Write as _;

use clap::{Args, Subcommand, ValueEnum};
use miette::{IntoDiagnostic, Result};

use crate::{
    ctx::Ctx,
    env,
    failure::Failure,
    json::{EffectRow, EffectsReport, Shown, WorkflowReport},
    locate,
    output::{self, Format, JSON_VERSION, Paint},
    services::store_write,
};

/// Arguments of `checkpoint effect`.
#[derive(Debug, Args)]
pub(crate) struct EffectArgs {
    /// The phase it belongs to
    pub phase: String,
    /// What was done: the command that did it, or in words ("emailed the customer"); a Bash
    /// command recorded here guards its repeats as one the hooks recorded
    pub what: String,
    /// Its result, for a later session: a URL, a version, a confirmation (redacted, cut to
    /// 1,000 characters)
    #[arg(long, value_name = "TEXT")]
    pub output: Option<String>,
    /// Who records it: `manual` (a person) or `mcp` (the MCP server's `effect` tool)
    #[arg(long, value_enum, default_value_t = SourceArg::Manual, hide = true)]
    pub source: SourceArg,
}

/// `--source` of `checkpoint effect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SourceArg {
    Manual,
    Mcp,
}

/// Arguments of `checkpoint effects`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct EffectsArgs {
    #[command(subcommand)]
    pub command: Option<EffectsCommand>,
    /// Only the effects of this phase, whatever its status
    #[arg(long, value_name = "PHASE", conflicts_with = "all")]
    pub phase: Option<String>,
    /// Every effect of the workflow (by default: those of the phases not done, and those
    /// recorded on no phase)
    #[arg(long)]
    pub all: bool,
}

/// The subcommands of `checkpoint effects`.
#[derive(Debug, Subcommand)]
pub(crate) enum EffectsCommand {
    /// Let exactly one repeat of effect <N> through the guard (a person's decision: refused
    /// from inside an agent's session)
    Allow(AllowArgs),
    /// Say what became of effect <N>, whose outcome is unknown (let through, and no outcome
    /// recorded): `--done` (it guards like a done effect) or `--not-done` (a repeat may run); a
    /// person's decision, refused from inside an agent's session
    Resolve(ResolveArgs),
}

/// Arguments of `checkpoint effects resolve`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("outcome").required(true).args(["done", "not_done"])))]
pub(crate) struct ResolveArgs {
    /// The effect's number (`checkpoint effects` lists them)
    #[arg(value_name = "N")]
    pub number: u64,
    /// It happened
    #[arg(long)]
    pub done: bool,
    /// It did not happen
    #[arg(long)]
    pub not_done: bool,
    /// Who says so [default: `$USER`]
    #[arg(long, conflicts_with = "propose")]
    pub by: Option<String>,
    /// Only propose the answer, with what shows it (the check's output): journaled as a note
    /// for the person, the outcome left unknown; allowed from an agent's session (the MCP
    /// server's `resolve` tool)
    #[arg(long, value_name = "EVIDENCE")]
    pub propose: Option<String>,
}

/// Arguments of `checkpoint effects allow`.
#[derive(Debug, Args)]
pub(crate) struct AllowArgs {
    /// The effect's number (`checkpoint effects` lists them)
    #[arg(value_name = "N")]
    pub number: u64,
    /// Who allows it [default: `$USER`]
    #[arg(long)]
    pub by: Option<String>,
}

pub(crate) fn record(ctx: &Ctx, args: &EffectArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    if args.what.trim().is_empty() {
        return Err(Failure::new(
            "checkpoint::effect::empty",
            "an effect needs a description of what was done".into(),
        )
        .with_help("for example `checkpoint effect deploy \"emailed the customer\"`")
        .into());
    }
    let source = match args.source {
        SourceArg::Manual => EffectSource::Manual,
        SourceArg::Mcp => EffectSource::Mcp,
    };
    let id = ctx.workflow_id()?;
    let loaded = store_write::update(ctx, &id, |workflow| {
        known_phase(workflow, &phase)?;
        // A command recorded here is keyed as the hooks key its effects; words are one effect.
        let call = Call::Bash(&args.what);
        let found = Matcher::for_workflow(&ctx.config.effects, workflow).effects(call);
        let mut each: Vec<(String, Option<String>, String)> = found
            .effects
            .iter()
            .map(|effect| {
                let dir = locate::effect_dir(&ctx.cwd, effect.dir.as_deref());
                let place = locate::effect_place(&ctx.project_root, &dir, effect.place);
                (effect.text.clone(), effect.dir.clone(), place)
            })
            .collect();
        if each.is_empty() {
            each.push((args.what.clone(), None, String::new()));
        }
        Ok(each
            .iter()
            .map(|(text, dir, place)| {
                effects::record(
                    workflow,
                    Some(&phase),
                    Observed {
                        call,
                        input: text,
                        dir: dir.as_deref(),
                        place,
                        output: args.output.as_deref(),
                        ok: true,
                        session_id: None,
                        agent_id: None,
                        call_id: None,
                        source,
                    },
                )
            })
            .collect())
    })?;
    let ledger = ctx.store.ledger(&id)?;
    let effect = ledger
        .effects
        .iter()
        .rev()
        .find(|effect| effect.phase.as_ref() == Some(&phase))
        .expect("the effect just recorded is in the ledger");
    changed(ctx, &loaded, &ledger, effect, |effect| {
        format!(
            "recorded effect {} on phase `{phase}`: a repeat of it is refused until `checkpoint effects allow {}`",
            effect.number, effect.number
        )
    })
}

pub(crate) fn effects(ctx: &Ctx, args: &EffectsArgs) -> Result<()> {
    match &args.command {
        Some(EffectsCommand::Allow(allow)) => self::allow(ctx, allow),
        Some(EffectsCommand::Resolve(resolve)) => self::resolve(ctx, resolve),
        None => list(ctx, args),
    }
}

fn list(ctx: &Ctx, args: &EffectsArgs) -> Result<()> {
    let loaded = ctx.load()?;
    let workflow = &loaded.workflow;
    let mut ledger = ctx.store.ledger(&workflow.id)?;
    let after = ctx.config.effects.unknown_after();
    ledger.effects = (ledger.effects.into_iter())
        .map(|effect| effect.aged(ctx.now, after))
        .collect();
    let (shown, listed): (Shown, Vec<&RecordedEffect>) = match (&args.phase, args.all) {
        (Some(phase), _) => {
            let phase = PhaseId::new(phase)?;
            known_phase(workflow, &phase)?;
            (
                Shown::Phase,
                ledger
                    .effects
                    .iter()
                    .filter(|effect| effect.phase.as_ref() == Some(&phase))
                    .collect(),
            )
        }
        (None, true) => (Shown::All, ledger.effects.iter().collect()),
        (None, false) => (
            Shown::Unfinished,
            ledger
                .effects
                .iter()
                .filter(|effect| match &effect.phase {
                    Some(phase) => workflow
                        .phase(phase)
                        .is_none_or(|phase| !phase.status.is_done()),
                    None => true,
                })
                .collect(),
        ),
    };
    let rows: Vec<EffectRow<'_>> = listed
        .iter()
        .map(|effect| EffectRow::new(effect, guards(&ledger, effect)))
        .collect();
    match ctx.format {
        Format::Json => output::emit_json(&EffectsReport {
            version: JSON_VERSION,
            workflow: &workflow.id,
            shown,
            total: ledger.effects.len(),
            effects: rows,
        })
        .into_diagnostic(),
        _ => {
            let paint = Paint::new(ctx.color);
            let text = effects_text(&rows, shown, ledger.effects.len(), paint);
            output::emit_human(ctx.color, &text).into_diagnostic()
        }
    }
}

fn allow(ctx: &Ctx, args: &AllowArgs) -> Result<()> {
    let by = person(args.by.as_deref())?;
    let id = ctx.workflow_id()?;
    let loaded = store_write::update(ctx, &id, |_| {
        // Under the lock: two allows racing cannot both pass.
        let ledger = ctx.store.ledger(&id)?;
        Ok(vec![effects::allow(&ledger, args.number, by.clone())?])
    })?;
    let ledger = ctx.store.ledger(&id)?;
    let effect = ledger
        .get(args.number)
        .expect("the allowed effect is in the ledger");
    allow_elsewhere(ctx, &id, &effect.key, by.as_deref())?;
    changed(ctx, &loaded, &ledger, effect, |effect| {
        format!(
            "one repeat of effect {} (`{}`) may run now; it is recorded as a new effect, which guards again",
            effect.number,
            output::escape(&effect.command)
        )
    })
}

fn resolve(ctx: &Ctx, args: &ResolveArgs) -> Result<()> {
    if let Some(evidence) = &args.propose {
        return propose(ctx, args, evidence);
    }
    let by = person(args.by.as_deref())?;
    let id = ctx.workflow_id()?;
    let loaded = store_write::update(ctx, &id, |_| {
        let ledger = ctx.store.ledger(&id)?;
        Ok(vec![effects::resolve(
            &ledger,
            args.number,
            args.done,
            by.as_deref(),
        )?])
    })?;
    let ledger = ctx.store.ledger(&id)?;
    let effect = ledger
        .get(args.number)
        .expect("the resolved effect is in the ledger");
    changed(ctx, &loaded, &ledger, effect, |effect| {
        let what = if effect.ok {
            "done: a repeat of it is refused"
        } else {
            "not done: a repeat may run"
        };
        format!(
            "effect {} (`{}`) is {what}",
            effect.number,
            output::escape(&effect.command)
        )
    })
}

/// An agent's proposed answer for an unknown effect: a note naming the command a person runs to
/// settle it; the effect stays unknown (and guarded).
fn propose(ctx: &Ctx, args: &ResolveArgs, evidence: &str) -> Result<()> {
    let id = ctx.workflow_id()?;
    let said = if args.done { "--done" } else { "--not-done" };
    let loaded = store_write::update(ctx, &id, |_| {
        let ledger = ctx.store.ledger(&id)?;
        // The same checks as a person's answer: an unknown effect, by its number.
        effects::resolve(&ledger, args.number, args.done, None)?;
        let effect = ledger.get(args.number).expect("checked above");
        Ok(vec![Transition::Note {
            text: format!(
                "proposed by an agent: effect {} (`{}`) {}; evidence: {}. Only a person settles it: `checkpoint effects resolve {} {said}`",
                effect.number,
                effect.command,
                if args.done {
                    "happened"
                } else {
                    "did not happen"
                },
                evidence.trim(),
                effect.number,
            ),
        }])
    })?;
    let ledger = ctx.store.ledger(&id)?;
    let effect = ledger
        .get(args.number)
        .expect("the effect is in the ledger");
    changed(ctx, &loaded, &ledger, effect, |effect| {
        format!(
            "effect {} stays unknown (and guarded): the proposal is journaled; a person settles it with `checkpoint effects resolve {} {said}`",
            effect.number, effect.number
        )
    })
}

/// Who makes a person's decision (`effects allow`, `effects resolve`): `--by`, else `$USER`;
/// refused from an agent's shell.
fn person(by: Option<&str>) -> Result<Option<String>> {
    if let Some(refusal) = agent_session() {
        return Err(refusal.into());
    }
    Ok(by.map(str::to_owned).or_else(|| {
        std::env::var(env::USER)
            .ok()
            .filter(|user| !user.is_empty())
    }))
}

/// One allow lets one repeat through whichever workflows hold the effect: the other unfinished
/// workflows whose ledger guards the same call get their own allow of it.
fn allow_elsewhere(
    ctx: &Ctx,
    allowed: &checkpoint_core::WorkflowId,
    key: &str,
    by: Option<&str>,
) -> Result<()> {
    for other in ctx.store.list()? {
        if &other == allowed || !ctx.store.has_effects_index(&other) {
            continue;
        }
        let Some(guard) = ctx.store.effect_guard(&other, key)? else {
            continue;
        };
        store_write::update(ctx, &other, |workflow| {
            if workflow.status.is_finished() {
                return Ok(Vec::new());
            }
            let ledger = ctx.store.ledger(&other)?;
            Ok(effects::allow(&ledger, guard.number, by.map(str::to_owned))
                .into_iter()
                .collect())
        })?;
    }
    Ok(())
}

/// Why `effects allow` is refused here: it is a person's decision, and it is run from an agent's
/// shell (any client's marker variable is set, whatever its value), where the model would let
/// itself repeat what the guard stopped.
fn agent_session() -> Option<Failure> {
    let marker = env::AGENT_SHELL_MARKERS
        .into_iter()
        .find(|name| std::env::var_os(name).is_some())?;
    Some(
        Failure::new(
            "checkpoint::effect::allow_in_session",
            format!(
                "`checkpoint effects allow` is a person's decision and is not run from inside an agent's session (`{marker}` is set, as an agent's shell sets it)"
            ),
        )
        .with_help(
            "ask the user to run it in a terminal; in an interactive session the user is asked about the repeat instead",
        ),
    )
}

/// Refuses a phase `workflow` does not have, as a transition naming it would be refused.
fn known_phase(workflow: &Workflow, phase: &PhaseId) -> checkpoint_core::Result<()> {
    match workflow.phase(phase) {
        Some(_) => Ok(()),
        None => Err(checkpoint_core::unknown_phase(workflow, phase)),
    }
}

/// Whether `effect` guards a repeat now.
fn guards(ledger: &Ledger, effect: &RecordedEffect) -> bool {
    ledger
        .guard(&effect.key)
        .is_some_and(|guard| guard.number == effect.number)
}

/// Prints the result of `effect` or `effects allow`: the workflow and the effect with
/// `--format json`, else `summary`'s line.
fn changed(
    ctx: &Ctx,
    loaded: &Loaded,
    ledger: &Ledger,
    effect: &RecordedEffect,
    summary: impl FnOnce(&RecordedEffect) -> String,
) -> Result<()> {
    match ctx.format {
        Format::Json => WorkflowReport::new(loaded)
            .with_effect(EffectRow::new(effect, guards(ledger, effect)))
            .emit(),
        _ => {
            let mut line = summary(effect);
            line.push('\n');
            output::emit_human(ctx.color, &line).into_diagnostic()
        }
    }
}

/// Where a listing's texts are whole.
const WHOLE: &str = "checkpoint effects --format json";

/// The listing: a heading saying what is shown, then two lines per effect (what ran, and its
/// output), and how a repeat is let through.
fn effects_text(rows: &[EffectRow<'_>], shown: Shown, total: usize, paint: Paint) -> String {
    let which = match shown {
        Shown::Unfinished => "of the phases not done and of no phase",
        Shown::Phase => "of the phase",
        Shown::All => "in all",
    };
    let mut text = String::new();
    if rows.is_empty() {
        let _ = write!(text, "no effects {which}");
        if shown != Shown::All && total > 0 {
            let _ = write!(
                text,
                " ({} in all: `checkpoint effects --all`)",
                output::count(total, "effect")
            );
        }
        text.push('\n');
        return text;
    }
    let _ = writeln!(text, "{} {which}", output::count(rows.len(), "effect"));
    for row in rows {
        let mut head = format!("#{}", row.number);
        match (row.phase, row.attempt) {
            (Some(phase), Some(attempt)) => {
                let _ = write!(head, " {phase} (attempt {attempt})");
            }
            (Some(phase), None) => {
                let _ = write!(head, " {phase}");
            }
            (None, _) => head.push_str(" (no phase)"),
        }
        let _ = write!(head, "  {}", row.at.format("%Y-%m-%d %H:%M:%S UTC"));
        if let Some(session) = row.session_id {
            let _ = write!(head, "  session {}", session.get(..8).unwrap_or(session));
        }
        let state = if row.in_flight {
            paint.yellow("running: its outcome has not come yet")
        } else if row.unknown {
            paint.yellow("unknown: may have happened")
        } else if !row.ok {
            paint.red("failed")
        } else if row.allowed {
            paint.yellow("one repeat allowed")
        } else if row.guards {
            paint.green("done")
        } else {
            paint.dim("done, repeated since")
        };
        let _ = writeln!(text, "{}  {state}", paint.bold(&head));
        let what = match row.tool.filter(|tool| *tool != "Bash") {
            Some(tool) => format!("{tool} {}", row.command),
            None => row.command.to_owned(),
        };
        let _ = writeln!(
            text,
            "    {}",
            output::shorten(&effects::normalized(&what), WHOLE)
        );
        if let Some(output) = row.output.filter(|output| !output.is_empty()) {
            let _ = writeln!(
                text,
                "    → {}",
                output::shorten(&effects::normalized(output), WHOLE)
            );
        }
    }
    if rows.iter().any(|row| row.guards) {
        let _ = writeln!(
            text,
            "{}",
            paint.dim("a repeat of a done effect is refused before it runs; `checkpoint effects allow <n>` lets one through")
        );
    }
    text
}
