//! `checkpoint resume`: validate, recover from an interruption, and say what to do next.

use std::io::IsTerminal;

use checkpoint_core::{
    PhaseId, Transition, Workflow, WorkflowId,
    resume::{self, Briefing, Finding, FindingCode, ResumePlan, Severity},
    seeds::{self, Discovered, ImportOptions},
    store::Loaded,
};
use clap::Args;
use miette::{IntoDiagnostic, Result};

use crate::{
    ctx::{Ctx, WorkflowChoiceError},
    failure::Failure,
    json::{ResumeReport, SeedOrigin},
    output::{self, Format, JSON_VERSION, Paint},
    probe::{self, FsProbe},
    services::resume_plan,
    unfinished,
};

/// Arguments of `checkpoint resume`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ResumeArgs {
    /// The workflow to resume (like `--workflow`), or the path or id of another checkpoint
    /// system's state file (planned read only); a name that matches nothing exits 4, and words
    /// after a match are ignored, so that a slash command's free text cannot break it
    #[arg(value_name = "WORKFLOW")]
    pub words: Vec<String>,
    /// Print any error on stdout and exit 0 (for `!` lines of slash commands, which drop the
    /// whole command when a line fails)
    #[arg(long)]
    pub no_fail: bool,
    /// Show the plan and the recoveries without writing anything
    #[arg(long)]
    pub dry_run: bool,
    /// Confirm a state that was rebuilt after corruption, and continue
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Restart this phase (even if done), after the recoveries; the phases that depend on it
    /// go back to pending, and a finished workflow is chosen like an unfinished one
    #[arg(long, value_name = "PHASE", conflicts_with_all = ["fresh", "abandon"])]
    pub restart: Option<String>,
    /// Archive the workflow and start it over with the same phases (nothing is deleted)
    #[arg(long, conflicts_with = "abandon")]
    pub fresh: bool,
    /// Give the workflow up (nothing is deleted)
    #[arg(long)]
    pub abandon: bool,
    /// The size budget of `--format prompt`, in bytes [default: `prompt_budget` in `config.toml`, else 6000]
    #[arg(long, value_name = "BYTES")]
    pub budget: Option<usize>,
}

pub(crate) fn resume(ctx: &Ctx, args: &ResumeArgs) -> Result<()> {
    let result = resume_or_plan(ctx, args);
    match result {
        Err(err) if args.no_fail => {
            let mut text = String::new();
            let _ = miette::GraphicalReportHandler::new_themed(
                miette::GraphicalTheme::unicode_nocolor(),
            )
            .with_wrap_lines(false)
            .render_report(&mut text, err.as_ref());
            output::emit_human(
                ctx.color,
                &format!(
                    "`checkpoint resume` could not build a plan:\n\n{}\n",
                    text.trim_end()
                ),
            )
            .into_diagnostic()
        }
        other => other,
    }
}

fn resume_or_plan(ctx: &Ctx, args: &ResumeArgs) -> Result<()> {
    let chose = args.yes || args.fresh || args.abandon || args.restart.is_some() || args.dry_run;
    if ctx.format == Format::Human && !chose && interactive() {
        return resume_interactively(ctx, args);
    }
    resume_with(ctx, args)
}

/// On a terminal, when a decision is needed: show the plan, then offer the seeds' choices.
fn resume_interactively(ctx: &Ctx, args: &ResumeArgs) -> Result<()> {
    let Some((id, loaded)) = choose_workflow(ctx, &args.words, args.restart.is_some())? else {
        // Another system's state file, or nothing: no decision to offer here.
        return resume_with(ctx, args);
    };
    let loaded = match loaded {
        Some(loaded) => loaded,
        None => ctx.store.load(&id)?,
    };
    let plan = ctx
        .brief(
            &loaded.workflow,
            &loaded.recoveries,
            &FsProbe::new(&ctx.project_root),
        )
        .plan;
    let mut chosen = ResumeArgs {
        words: vec![id.to_string()],
        ..args.clone()
    };
    if !plan.decision_required {
        return resume_with(ctx, &chosen);
    }
    output::emit_human(
        ctx.color,
        &output::render_plan(&plan, false, ctx.now, Paint::new(ctx.color)),
    )
    .into_diagnostic()?;
    loop {
        let answer = output::ask("(r)esume, (s)tart fresh, (v)iew the state, (a)bandon, (q)uit? ")?;
        match answer.trim() {
            "r" | "resume" => {
                chosen.yes = true;
                return resume_with(ctx, &chosen);
            }
            "s" | "start fresh" => {
                chosen.fresh = true;
                return resume_with(ctx, &chosen);
            }
            "v" | "view" => output::emit_json(&loaded.workflow).into_diagnostic()?,
            "a" | "abandon" => {
                if confirm(&format!("Abandon `{id}`? Its files are kept."))? {
                    chosen.abandon = true;
                    return resume_with(ctx, &chosen);
                }
            }
            "q" | "quit" | "" => return Ok(()),
            _ => output::note("answer r, s, v, a or q"),
        }
    }
}

fn resume_with(ctx: &Ctx, args: &ResumeArgs) -> Result<()> {
    let Some((id, loaded)) = choose_workflow(ctx, &args.words, args.restart.is_some())? else {
        return match seed_to_resume(ctx, &args.words)? {
            Some((found, workflow)) => resume_seed(ctx, args, &found, &workflow),
            None => nothing_to_resume(ctx),
        };
    };
    // The workflow was usually loaded to choose it: not twice.
    let loaded = match loaded {
        Some(loaded) => loaded,
        None => ctx.store.load(&id)?,
    };
    let probe = FsProbe::new(&ctx.project_root);
    let journal_finding = journal_finding(ctx, &loaded)?.or_else(|| mismatch_finding(ctx, &loaded));
    let briefing = ctx.brief(&loaded.workflow, &loaded.recoveries, &probe);
    let rebuilt = resume_plan::rebuilt(&briefing.plan);
    let mut resumed = if !args.dry_run
        && (!rebuilt
            || args.yes
            || (ctx.format == Format::Human
                && interactive()
                && confirm(
                    "The state was rebuilt after corruption (see above). Continue from it?",
                )?)) {
        if args.fresh {
            start_fresh(ctx, &id, &loaded, &probe)?
        } else {
            recover(ctx, args, &id, &loaded, briefing, &probe)?
        }
    } else {
        Resumed {
            briefing,
            applied: false,
            archived_to: None,
            reset: Vec::new(),
        }
    };
    resumed.briefing.plan.findings.extend(journal_finding);
    emit_resumed(ctx, args, &resumed)
}

/// A bad line anywhere in the journal (which loading does not see before the entries it
/// reads), as a warning with the command that repairs it: commands use the state, and
/// `checkpoint validate` reports it as an error.
fn journal_finding(ctx: &Ctx, loaded: &Loaded) -> Result<Option<Finding>> {
    Ok(ctx
        .journal_damage(&loaded.workflow.id, &loaded.recoveries)
        .map(|damage| {
            let mut finding = resume::recovery_finding(&damage);
            finding.severity = Severity::Warning;
            finding
        }))
}

/// Journals up to this size are replayed whole by `resume` to find a state that disagrees with
/// them (a hand edit); a longer one is left to `checkpoint validate`, so that `resume` keeps its
/// bounded cost.
const REPLAY_CHECK_BYTES: u64 = 1024 * 1024;

/// A `state.json` that disagrees with its journal's replay, with the command that repairs it.
fn mismatch_finding(ctx: &Ctx, loaded: &Loaded) -> Option<Finding> {
    let journal = loaded.dir.join(checkpoint_core::store::JOURNAL_FILE);
    if std::fs::metadata(&journal).map_or(true, |meta| meta.len() > REPLAY_CHECK_BYTES) {
        return None;
    }
    let mismatch = ctx.store.verify(&loaded.workflow.id).ok()?.mismatch?;
    if mismatch.contains("no entries") {
        return None;
    }
    Some(Finding {
        severity: Severity::Error,
        code: FindingCode::JournalMismatch,
        phase: None,
        message: format!("the state does not agree with its journal: {mismatch}"),
        hint: Some(resume::JOURNAL_MISMATCH_HINT.into()),
    })
}

/// What `checkpoint resume` did to a workflow, and the plan from where it stands now.
struct Resumed {
    briefing: Briefing,
    /// Whether the recoveries (and any chosen action) were written.
    applied: bool,
    /// Where the workflow was archived to (`--fresh`).
    archived_to: Option<String>,
    /// The phases `--restart` sent back to pending.
    reset: Vec<PhaseId>,
}

impl Resumed {
    fn applied(briefing: Briefing) -> Self {
        Self {
            briefing,
            applied: true,
            archived_to: None,
            reset: Vec::new(),
        }
    }
}

/// `--fresh`: archives the workflow and creates it again with every phase pending.
fn start_fresh(ctx: &Ctx, id: &WorkflowId, loaded: &Loaded, probe: &FsProbe) -> Result<Resumed> {
    let target = ctx.store.archive(id, ctx.now, false)?;
    let fresh = loaded.workflow.fresh();
    let created = ctx.store.create(fresh, ctx.now)?;
    output::note(&format!(
        "archived `{id}` to `{}` and started it over",
        target.display()
    ));
    Ok(Resumed {
        briefing: ctx.brief(&created.workflow, &created.recoveries, probe),
        applied: true,
        archived_to: Some(target.to_string_lossy().into_owned()),
        reset: Vec::new(),
    })
}

/// Applies the plan's recoveries, then `--restart` or `--abandon`, when there is anything to
/// write; the plan reported keeps the recoveries this run applied, so the user sees them once.
fn recover(
    ctx: &Ctx,
    args: &ResumeArgs,
    id: &WorkflowId,
    loaded: &Loaded,
    briefing: Briefing,
    probe: &FsProbe,
) -> Result<Resumed> {
    let restart = args.restart.as_deref().map(PhaseId::new).transpose()?;
    if let Some(phase) = &restart {
        // An unknown phase is refused before anything is written.
        resume::restart(&loaded.workflow, phase, "")?;
    }
    let mut reset = Vec::new();
    if !resume_plan::wants_write(&briefing.plan, loaded) && !args.abandon && restart.is_none() {
        return Ok(Resumed {
            briefing,
            applied: false,
            archived_to: None,
            reset: Vec::new(),
        });
    }
    let abandon = args.abandon.then(|| Transition::Abandon {
        reason: Some("abandoned with `checkpoint resume --abandon`".into()),
    });
    let updated = resume_plan::apply_recoveries(
        ctx,
        id,
        probe,
        |workflow| {
            let Some(phase) = &restart else {
                return Ok(Vec::new());
            };
            // Computed from the state under the lock; journaled after the recoveries.
            let restart = resume::restart(
                workflow,
                phase,
                &format!("checkpoint resume --restart {phase}"),
            )?;
            reset = restart.reset;
            Ok(restart.transitions)
        },
        abandon,
    )?;
    if let Some(phase) = &restart {
        output::note_reopened(phase, &reset);
    }
    let mut after = ctx.brief(&updated.workflow, &[], probe);
    resume_plan::show_recoveries(&mut after.plan, &briefing.plan);
    Ok(Resumed {
        reset,
        ..Resumed::applied(after)
    })
}

fn emit_resumed(ctx: &Ctx, args: &ResumeArgs, resumed: &Resumed) -> Result<()> {
    let plan = &resumed.briefing.plan;
    match ctx.format {
        Format::Json => output::emit_json(&ResumeReport {
            version: JSON_VERSION,
            applied: resumed.applied,
            archived_to: resumed.archived_to.clone(),
            reset: &resumed.reset,
            plan: Some(plan),
            source: None,
            files: files_report(ctx, plan),
        })
        .into_diagnostic(),
        Format::Prompt => {
            let budget = args.budget.unwrap_or(ctx.config.prompt_budget);
            let text = resumed.briefing.prompt_within(budget)
                + &run_briefing(ctx, plan)
                + &changed_files(ctx, plan);
            output::emit_human(ctx.color, &text).into_diagnostic()
        }
        _ => {
            let text = output::render_plan(plan, resumed.applied, ctx.now, Paint::new(ctx.color))
                + &run_briefing(ctx, plan)
                + &changed_files(ctx, plan);
            output::emit_human(ctx.color, &text).into_diagnostic()
        }
    }
}

/// The files changed since the workflow's last snapshot of the files, named.
fn changed_files(ctx: &Ctx, plan: &ResumePlan) -> String {
    let paths = crate::services::snapshots::unsnapshotted(ctx, &plan.workflow);
    crate::services::snapshots::changed_text(&paths)
}

/// The files changed since the last snapshot and by each phase in progress, for the JSON plan.
fn files_report(ctx: &Ctx, plan: &ResumePlan) -> Option<crate::json::ResumeFiles> {
    use checkpoint_core::snapshots::MAX_PATHS;
    let phases: Vec<_> = if plan.in_progress.is_empty() {
        Vec::new()
    } else {
        let loaded = ctx.store.load(&plan.workflow).ok()?;
        plan.in_progress
            .iter()
            .filter_map(|phase| {
                let started = loaded.workflow.phase(&phase.id)?.started_at?;
                Some((phase.id.clone(), started.utc()))
            })
            .collect()
    };
    let changed = crate::services::snapshots::changed_since(ctx, &plan.workflow, &phases)?;
    Some(crate::json::ResumeFiles {
        since_last_snapshot: changed.unsnapshotted,
        phases: changed
            .phases
            .into_iter()
            .map(|(phase, files)| crate::json::PhaseFiles {
                phase,
                changed: files.len() as u64,
                added: files
                    .iter()
                    .filter_map(|file| file.lines)
                    .map(|l| l.0)
                    .sum(),
                removed: files
                    .iter()
                    .filter_map(|file| file.lines)
                    .map(|l| l.1)
                    .sum(),
                paths: files
                    .iter()
                    .take(MAX_PATHS)
                    .map(|file| crate::snapshot::display(&file.path))
                    .collect(),
            })
            .collect(),
    })
}

/// For a workflow that mirrors a Claude Code `Workflow` run: what to do about the run.
fn run_briefing(ctx: &Ctx, plan: &ResumePlan) -> String {
    let Ok(loaded) = ctx.store.load(&plan.workflow) else {
        return String::new();
    };
    let results = ctx.store.results_dir(&plan.workflow);
    let results = results
        .strip_prefix(&ctx.project_root)
        .unwrap_or(&results)
        .display()
        .to_string();
    checkpoint_core::workflow_run::briefing(&loaded.workflow, &results)
        .map_or(String::new(), |text| format!("\n{text}"))
}

/// The workflow to resume: `--workflow`, else the only unfinished one; asks on a terminal
/// when several are unfinished, and fails with the list otherwise.
///
/// With `restart`, a finished workflow is a candidate too: when none is unfinished, the one
/// the store holds is chosen, and several or none are an error rather than nothing to resume.
fn choose_workflow(
    ctx: &Ctx,
    words: &[String],
    restart: bool,
) -> Result<Option<(WorkflowId, Option<Loaded>)>> {
    if !words.is_empty() {
        let known = ctx.store.list()?;
        let found = words
            .iter()
            .find_map(|word| known.iter().find(|id| id.as_str() == word.as_str()));
        return match found {
            Some(id) => {
                let ignored: Vec<&str> = words
                    .iter()
                    .map(String::as_str)
                    .filter(|word| *word != id.as_str())
                    .collect();
                if !ignored.is_empty() {
                    output::note(&format!(
                        "ignoring the extra words {}",
                        ignored
                            .iter()
                            .map(|word| format!("`{word}`"))
                            .collect::<Vec<_>>()
                            .join(" ")
                    ));
                }
                let loaded = ctx.store.load(id)?;
                Ok(Some((id.clone(), Some(loaded))))
            }
            // Another system's state file, by path or id, is looked for next.
            None => Ok(None),
        };
    }
    if ctx.workflow.is_some() || ctx.used()?.is_some() {
        return ctx.workflow_id().map(|id| Some((id, None)));
    }
    let found = unfinished::in_store(&ctx.store)?;
    let mut candidates = found.unfinished;
    if candidates.is_empty() {
        // A workflow that cannot be read is not "nothing to resume": say why it cannot be.
        if let Some((_, err)) = found.unreadable.into_iter().next() {
            return Err(err.into());
        }
    }
    candidates.sort_by_key(|candidate| {
        std::cmp::Reverse(checkpoint_core::choice::active_at(&candidate.1.workflow))
    });
    match candidates.len() {
        0 if restart => ctx.workflow_id().map(|id| Some((id, None))),
        0 => Ok(None),
        1 => Ok(candidates.pop().map(|(id, loaded)| (id, Some(loaded)))),
        _ => {
            let lines: Vec<String> = candidates
                .iter()
                .enumerate()
                .map(|(i, (id, loaded))| {
                    format!(
                        "{}. {id} ({} of {} done, {})",
                        i + 1,
                        loaded.workflow.n_done(),
                        output::count(loaded.workflow.phases.len(), "phase"),
                        output::ago(loaded.workflow.updated_at, ctx.now)
                    )
                })
                .collect();
            if ctx.format == Format::Human && interactive() {
                output::note(&format!(
                    "Several workflows were interrupted:\n{}",
                    lines.join("\n")
                ));
                let choice =
                    output::ask(&format!("Which one to resume? [1-{}] ", candidates.len()))?;
                if let Some(index) = choice
                    .trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=candidates.len()).contains(n))
                {
                    let (id, loaded) = candidates.swap_remove(index - 1);
                    return Ok(Some((id, Some(loaded))));
                }
            }
            Err(WorkflowChoiceError::Several {
                message: format!(
                    "{} workflows were interrupted:\n{}",
                    candidates.len(),
                    lines.join("\n")
                ),
                help: "choose one with `checkpoint resume --workflow <id>`".into(),
            }
            .into())
        }
    }
}

/// The state file of another checkpoint system to plan from, when our store has none: the one
/// a word names (by path, even outside the places `discover` looks, or by id), else the most
/// recent unfinished one.
///
/// A file that cannot be read is an error (file, line, column and field) rather than "nothing
/// to resume": it may hold the only record of finished work. A word that names nothing is an
/// error too (exit code 4).
fn seed_to_resume(ctx: &Ctx, words: &[String]) -> Result<Option<(Discovered, Workflow)>> {
    let options = ImportOptions {
        id: None,
        now: ctx.now,
    };
    let import = |found: &Discovered| {
        seeds::read_source(found.format, &found.path)
            .and_then(|source| seeds::import(found.format, &source, &options))
    };
    if let Some(path) = words
        .iter()
        .map(|word| ctx.cwd.join(word))
        .find(|path| path.is_file())
    {
        let found = seeds::locate(&path, None)?;
        let workflow = import(&found)?;
        return Ok(Some((found, workflow)));
    }
    let mut found: Vec<(Discovered, Workflow)> = Vec::new();
    let mut broken = Vec::new();
    for seed in seeds::discover(&ctx.project_root, &probe::worktree_roots(&ctx.project_root)) {
        match import(&seed) {
            Ok(workflow) => found.push((seed, workflow)),
            Err(err) => broken.push(err),
        }
    }
    if let Some(word) = words.first() {
        let named = found.iter().position(|(seed, workflow)| {
            words
                .iter()
                .any(|word| word == workflow.id.as_str() || seed.path.ends_with(word.as_str()))
        });
        return match named {
            Some(index) => Ok(Some(found.swap_remove(index))),
            None => Err(no_such_workflow(ctx, word)?.into()),
        };
    }
    found.retain(|(_, workflow)| !workflow.status.is_finished());
    if found.is_empty() && !broken.is_empty() {
        return Err(broken.swap_remove(0).into());
    }
    for err in &broken {
        output::warn(&format!("skipping another system's state file: {err}"));
    }
    found.sort_by_key(|(_, workflow)| std::cmp::Reverse(workflow.updated_at));
    Ok(found.into_iter().next())
}

/// A name that matches no workflow and no other system's state file: not found, with the
/// workflows there are.
fn no_such_workflow(ctx: &Ctx, word: &str) -> Result<Failure> {
    Ok(Failure::new(
        "checkpoint::store::not_found",
        format!(
            "no workflow `{}` in `{}`, and no other system's state file by that name",
            output::escape(word),
            ctx.store.root().display()
        ),
    )
    .with_help(ctx.known_workflows_help("resume")?))
}

/// A read-only plan of another system's state file: nothing is written until it is imported.
fn resume_seed(
    ctx: &Ctx,
    args: &ResumeArgs,
    found: &Discovered,
    workflow: &Workflow,
) -> Result<()> {
    let briefing = ctx.brief(workflow, &[], &FsProbe::new(&ctx.project_root));
    let plan = &briefing.plan;
    let path = found
        .path
        .strip_prefix(&ctx.project_root)
        .unwrap_or(&found.path)
        .to_string_lossy()
        .into_owned();
    let note = format!(
        "This plan is of {}'s state file `{path}`, read only: `checkpoint` writes nothing to it. To continue with `checkpoint`, import it first: `checkpoint import {path}`.\n",
        found.format.name()
    );
    match ctx.format {
        Format::Json => output::emit_json(&ResumeReport {
            version: JSON_VERSION,
            applied: false,
            archived_to: None,
            reset: &[],
            plan: Some(plan),
            source: Some(SeedOrigin {
                format: found.format.name(),
                path,
            }),
            files: None,
        })
        .into_diagnostic(),
        Format::Prompt => {
            let budget = args.budget.unwrap_or(ctx.config.prompt_budget);
            output::emit_human(
                ctx.color,
                &format!(
                    "{note}\n{}",
                    briefing.prompt_within(budget.saturating_sub(note.len() + 1))
                ),
            )
            .into_diagnostic()
        }
        _ => output::emit_human(
            ctx.color,
            &format!(
                "{note}\n{}",
                output::render_plan(plan, false, ctx.now, Paint::new(ctx.color))
            ),
        )
        .into_diagnostic(),
    }
}

fn nothing_to_resume(ctx: &Ctx) -> Result<()> {
    match ctx.format {
        Format::Json => output::emit_json(&ResumeReport { version: JSON_VERSION, applied: false, archived_to: None, reset: &[], plan: None, source: None, files: None }).into_diagnostic(),
        _ => output::emit_human(ctx.color, &format!(
            "No interrupted workflow in `{}`: nothing to resume.\nStart one with `checkpoint init <id> --phase <id>` (can be repeated).\n",
            ctx.store.root().display()
        ))
        .into_diagnostic(),
    }
}

/// The same workflow with every phase back to pending, for `--fresh`.
fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

fn confirm(question: &str) -> Result<bool> {
    Ok(matches!(
        output::ask(&format!("{question} [y/N] "))?.trim(),
        "y" | "Y" | "yes"
    ))
}
