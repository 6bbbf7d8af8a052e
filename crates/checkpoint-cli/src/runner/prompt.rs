//! What a session of `checkpoint run` is given (its prompt, its environment), `--dry-run`, and
//! the check of the `[run]` budget keys.

use std::process::Command;

use checkpoint_core::{
    PhaseId, WorkflowId,
    budget::Budget,
    resume::{self, ResumePlan},
    run::{RunLimits, RunState, Step},
};
use chrono::Local;
use miette::{IntoDiagnostic, Result};

use crate::{
    clients::session::{AgentClient, command_line},
    ctx::Ctx,
    env, json,
    output::{self, Format, JSON_VERSION, Paint},
    runner::args,
};
use checkpoint_contract::exit_code;

/// `--dry-run`: the plan and the exact command line of the first session, from `plan` (the plan
/// after the recoveries, applied in memory only, as the real run plans); `shown` is the plan
/// shown, with the recoveries the run would apply first.
pub(crate) fn dry_run(
    ctx: &Ctx,
    id: &WorkflowId,
    client: &dyn AgentClient,
    limits: &RunLimits,
    plan: &ResumePlan,
    shown: &ResumePlan,
) -> Result<u8> {
    let step = RunState::default().next(plan, limits, ctx.now, &Local);
    let command = match &step {
        Step::Session { .. } => {
            let prompt = session_prompt(ctx, plan, None, limits.until.as_ref());
            Some(command_line(&with_env(ctx, id, client.start(&prompt))))
        }
        _ => None,
    };
    let (action, reason) = match &step {
        Step::Session { .. } => (json::DryRunStep::Session, plan.next.reason.clone()),
        Step::Wait { reason, .. } => (json::DryRunStep::Wait, reason.clone()),
        Step::Stop { reason, .. } => (json::DryRunStep::Stop, reason.clone()),
    };
    if ctx.format == Format::Json {
        output::emit_json(&json::RunDryRun {
            version: JSON_VERSION,
            plan: shown,
            step: action,
            reason,
            command,
        })
        .into_diagnostic()?;
    } else {
        let mut text = output::render_plan(shown, false, ctx.now, Paint::new(ctx.color));
        match command {
            Some(command) => text.push_str(&format!(
                "\n`checkpoint run` would start this session (in `{}`):\n\n{command}\n",
                ctx.project_root.display()
            )),
            None => text.push_str(&format!("\n`checkpoint run` would {action}: {reason}\n")),
        }
        output::emit(&text).into_diagnostic()?;
    }
    Ok(exit_code::SUCCESS)
}

/// A budget from `config.toml` that `--max-usage` or `--max-cost` would refuse, refused the
/// same way, naming the file.
pub(crate) fn check_config_budget(ctx: &Ctx, budget: &Budget) -> Result<()> {
    let bad = [
        (
            "max_usage",
            budget
                .max_usage
                .map(|v| args::parse_percent(&v.to_string())),
        ),
        (
            "max_cost",
            budget.max_cost.map(|v| args::parse_dollars(&v.to_string())),
        ),
    ];
    for (key, checked) in bad {
        if let Some(Err(why)) = checked {
            return Err(crate::failure::Failure::new(
                "checkpoint::run::config",
                format!(
                    "{}: [run] {key}: {why}",
                    ctx.store
                        .root()
                        .join(checkpoint_core::CONFIG_FILE)
                        .display()
                ),
            )
            .with_help(format!(
                "fix `[run] {key}` in config.toml, or override it on the command line"
            ))
            .into());
        }
    }
    Ok(())
}

/// The environment of every session: the workflow and the store, so that the session's
/// `checkpoint` commands record into this workflow; and not the runner's error file, which is
/// the runner's own (a session's failed command must not overwrite it).
pub(crate) fn with_env(ctx: &Ctx, id: &WorkflowId, mut command: Command) -> Command {
    command
        .current_dir(&ctx.project_root)
        .env(env::CHECKPOINT_WORKFLOW, id.as_str())
        .env(env::CHECKPOINT_DIR, ctx.store.root())
        .env_remove(env::CHECKPOINT_ERROR_FILE);
    command
}

/// The prompt of a session: what to do, how to record it, and the resume prompt.
pub(crate) fn session_prompt(
    ctx: &Ctx,
    plan: &ResumePlan,
    resumed: Option<&str>,
    until: Option<&PhaseId>,
) -> String {
    let state = resume::render_prompt(plan, ctx.now, ctx.config.prompt_budget);
    let handed_over = |id: &str| {
        plan.handoff
            .as_ref()
            .is_some_and(|handoff| handoff.session_id == id)
    };
    let opening = match resumed {
        Some(id) if handed_over(id) => {
            "This session was handed over from another machine (see \"Handed over\" below), with its files: continue where it stopped.\n"
        }
        Some(_) => "The rate limit has reset: continue where you stopped.\n",
        None => "",
    };
    let effects = if plan.effects.is_empty() {
        ""
    } else {
        "Never repeat a call listed under \"Already done\": it changed something outside the project, and `checkpoint` refuses an exact repeat.\n"
    };
    let scope = match until {
        Some(phase) => format!("until phase `{phase}` is done"),
        None => "until every phase is done".to_owned(),
    };
    format!(
        "{opening}You are running unattended under `checkpoint run`: nobody watches this session, so do not ask questions.\n\
         Work on workflow `{}` {scope}, from where it stands (below); never redo a phase that is done.\n\
         Record every step with the `checkpoint` command as you go: `checkpoint start <phase>` before you work on a phase, \
         `checkpoint progress <phase> \"<what is done>\"` after each significant step, \
         `checkpoint complete <phase>` (with `--artifact <path>` for each output) when it is done, \
         and `checkpoint fail <phase> --reason \"<why>\"` when it cannot be done.\n\
         Stop when a phase waits for approval or a decision needs a person.\n{effects}\n{state}",
        plan.workflow
    )
}
