//! A phase's transitions: `start`, `progress`, `complete`, `fail`, `skip`, `approve`, `reject`,
//! `replan`, and `commit` (the commits of completed phases).

use std::path::PathBuf;

use checkpoint_core::{PhaseId, PhaseStatus, Transition, Workflow};
use clap::Args;
use miette::Result;

use crate::{
    args,
    ctx::Ctx,
    git, json, output,
    services::store_write::{self, FollowUp, Write},
};

/// Arguments of `checkpoint start`.
#[derive(Debug, Args)]
pub(crate) struct StartArgs {
    /// The phase id
    pub phase: String,
    /// Start even if the phase is done, its dependencies are not, or it failed too often; the
    /// phases that depend on it and are done or in progress go back to pending (and are named)
    #[arg(long)]
    pub force: bool,
}

/// Arguments of `checkpoint progress`.
#[derive(Debug, Args)]
pub(crate) struct ProgressArgs {
    /// The phase id
    pub phase: String,
    /// What is done so far and what comes next
    #[arg(required_unless_present = "file")]
    pub note: Option<String>,
    /// Read the note from this file instead, `-` for stdin (for a text too long for one
    /// command-line argument)
    #[arg(long, value_name = "FILE", conflicts_with = "note")]
    pub file: Option<PathBuf>,
}

/// Arguments of `checkpoint complete`.
#[derive(Debug, Args)]
pub(crate) struct CompleteArgs {
    /// The phase id
    pub phase: String,
    /// A file the phase produced (can be repeated)
    #[arg(long = "artifact", short = 'a', value_name = "PATH")]
    pub artifacts: Vec<String>,
    /// The commit that holds the phase's work
    #[arg(long, value_name = "SHA")]
    pub commit_sha: Option<String>,
    /// Complete even if dependencies, tasks or declared outputs are not done
    #[arg(long)]
    pub force: bool,
    /// Commit the work now (`git add -A`, then `checkpoint: phases N-M complete`), whatever
    /// `commit_every` says
    #[arg(long)]
    pub commit: bool,
}

/// Arguments of `checkpoint replan`.
#[derive(Debug, Args)]
pub(crate) struct ReplanArgs {
    /// The phase id
    pub phase: String,
    /// Why the phase is replanned
    #[arg(long, short = 'r')]
    pub reason: String,
}

/// Arguments of `checkpoint fail`.
#[derive(Debug, Args)]
pub(crate) struct FailArgs {
    /// The phase id
    pub phase: String,
    /// What went wrong
    #[arg(long, short = 'r')]
    pub reason: String,
}

/// Arguments of `checkpoint skip`.
#[derive(Debug, Args)]
pub(crate) struct SkipArgs {
    /// The phase id
    pub phase: String,
    /// Why it is skipped
    #[arg(long, short = 'r')]
    pub reason: Option<String>,
}

/// Arguments of `checkpoint approve`.
#[derive(Debug, Args)]
pub(crate) struct ApproveArgs {
    /// The phase id
    pub phase: String,
    /// Who approves
    #[arg(long)]
    pub by: Option<String>,
    /// A remark to keep with the approval
    #[arg(long)]
    pub note: Option<String>,
}

/// Arguments of `checkpoint reject`.
#[derive(Debug, Args)]
pub(crate) struct RejectArgs {
    /// The phase id
    pub phase: String,
    /// Why it is rejected
    #[arg(long, short = 'r')]
    pub reason: String,
}

pub(crate) fn start(ctx: &Ctx, args: &StartArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    let max = ctx.config.max_in_progress;
    let mut reset = Vec::new();
    let loaded = Write::decided(
        |workflow| {
            if args.force {
                // A phase run again sends the phases that depend on it back to pending: none
                // stays done on top of work that is being redone.
                let restart = checkpoint_core::resume::rerun(
                    workflow,
                    &phase,
                    &format!("checkpoint start {phase} --force"),
                )?;
                reset = restart.reset;
                return Ok(restart.transitions);
            }
            let start = Transition::PhaseStart {
                phase: phase.clone(),
                force: false,
            };
            let Some(running) = checkpoint_core::over_max_in_progress(workflow, &phase, max)
            else {
                return Ok(vec![start]);
            };
            let running: Vec<String> = running.iter().map(|other| format!("`{other}`")).collect();
            Err(checkpoint_core::Error::InvalidTransition {
                message: format!(
                    "cannot start phase `{phase}`: `max_in_progress` is {max}, and {} in progress",
                    if running.len() == 1 {
                        format!("phase {} is", running[0])
                    } else {
                        format!("phases {} are", running.join(", "))
                    }
                ),
                help: "finish or fail one of them first, raise `max_in_progress` in `config.toml`, or pass `--force`".into(),
            })
        },
        |workflow| {
            let attempts = workflow.phase(&phase).map_or(0, |phase| phase.attempts);
            format!("started phase `{phase}` (attempt {attempts})")
        },
    )
    .apply(ctx)?;
    output::note_reopened(&phase, &reset);
    hold_plan_claims(ctx, &loaded.workflow, &phase);
    Ok(())
}

pub(crate) fn progress(ctx: &Ctx, args: &ProgressArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    Write::one(
        Transition::PhaseProgress {
            phase: phase.clone(),
            note: args::text_argument(args.note.as_deref(), args.file.as_deref())?,
        },
        |_| format!("recorded progress on phase `{phase}`"),
    )
    .apply(ctx)?;
    Ok(())
}

pub(crate) fn complete(ctx: &Ctx, args: &CompleteArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    let artifacts: Vec<String> = args
        .artifacts
        .iter()
        .map(|path| ctx.inside_path(path, "artifact"))
        .collect::<Result<_, _>>()?;
    // A missing artifact is recorded all the same, but said now: the next `resume` would stop
    // for a decision about it.
    let warnings = args
        .artifacts
        .iter()
        .filter(|path| !ctx.cwd.join(path).exists())
        .map(|path| {
            format!(
                "artifact `{}` does not exist; `checkpoint resume` will ask about it",
                output::escape(path)
            )
        })
        .collect();
    let transition = Transition::PhaseComplete {
        phase: phase.clone(),
        artifacts,
        commit_sha: args.commit_sha.clone(),
        force: args.force,
    };
    let probe = crate::probe::FsProbe::new(&ctx.project_root);
    let loaded = Write::decided(
        |workflow| {
            if !args.force {
                refuse_unfinished_outputs(workflow, &phase, &probe)?;
            }
            Ok(vec![transition])
        },
        |workflow| match workflow.phase(&phase).map(|phase| phase.status) {
            Some(PhaseStatus::AwaitingApproval) => {
                format!(
                    "phase `{phase}` is done and waits for approval: `checkpoint approve {phase}`"
                )
            }
            _ => format!("completed phase `{phase}`{}", next_hint(workflow)),
        },
    )
    .warnings(warnings)
    .then(|loaded| {
        let mut follow_up = checkpoint_commit(ctx, &loaded.workflow, args.commit)?;
        // The snapshot of the files is a write of its own, after the commit's: the document
        // describes the state after it.
        if let Some(after) =
            crate::services::snapshots::at_completion(ctx, &loaded.workflow.id, &phase)
        {
            follow_up.after = Some(after);
        }
        Ok(follow_up)
    })
    .apply(ctx)?;
    if ctx.config.sync.on_complete {
        crate::services::remote_sync::push_in_background(ctx, &loaded.workflow.id);
    }
    Ok(())
}

/// Refuses to complete a phase whose declared outputs do not show its work (missing, empty, or
/// older than its start): the rule the hooks complete a phase by, and what `validate` checks.
fn refuse_unfinished_outputs(
    workflow: &Workflow,
    phase: &PhaseId,
    probe: &crate::probe::FsProbe,
) -> checkpoint_core::Result<()> {
    let Some(declared) = workflow.phase(phase) else {
        // The transition names the unknown phase.
        return Ok(());
    };
    let unfinished = checkpoint_core::resume::unfinished_outputs(declared, probe);
    if unfinished.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = unfinished
        .iter()
        .map(|(path, why)| format!("`{}` ({why})", output::escape(path)))
        .collect();
    Err(checkpoint_core::Error::InvalidTransition {
        message: format!(
            "cannot complete phase `{phase}`: its declared {} not done: {}",
            if listed.len() == 1 {
                "output is"
            } else {
                "outputs are"
            },
            listed.join(", ")
        ),
        help: format!(
            "write them first, or complete anyway with `checkpoint complete {phase} --force` (then `checkpoint validate` reports them)"
        ),
    })
}

/// `checkpoint commit`: commits the completed phases that no commit holds yet.
pub(crate) fn commit_now(ctx: &Ctx) -> Result<()> {
    let loaded = ctx.load()?;
    if checkpoint_core::commit::uncommitted_phases(&loaded.workflow).is_empty() {
        output::note("every completed phase is already in a commit");
        return Ok(());
    }
    let follow_up = checkpoint_commit(ctx, &loaded.workflow, true)?;
    if let (output::Format::Json, Some(report)) = (ctx.format, follow_up.commit) {
        // The state after the commit's own write, which records its sha.
        json::WorkflowReport::new(follow_up.after.as_ref().unwrap_or(&loaded))
            .with_commit(report)
            .emit()?;
    }
    Ok(())
}

/// Commits the completed phases no commit holds yet, when asked or when `commit_every` is due;
/// returns what it did and the state after it, for the JSON report.
fn checkpoint_commit(ctx: &Ctx, workflow: &Workflow, forced: bool) -> Result<FollowUp> {
    let pending = checkpoint_core::commit::uncommitted_phases(workflow);
    let due = checkpoint_core::commit::is_due(&ctx.config, pending.len());
    if pending.is_empty() || !(forced || due) {
        return Ok(FollowUp::default());
    }
    if !ctx.project_root.join(".git").exists() {
        output::warn("not a git repository: no checkpoint commit was made");
        return Ok(FollowUp::default());
    }
    let (outcome, left_out) = git::commit(&ctx.project_root, ctx.store.root(), workflow, &pending)
        .map_err(|message| {
            miette::miette!(
                code = "checkpoint::git::commit_failed",
                help = "the phase is recorded as complete; fix git (for example `git config user.email`), then run `checkpoint commit`",
                "failed to make the checkpoint commit: {message}"
            )
        })?;
    for file in &left_out {
        output::warn(&format!(
            "left `{}` out of the checkpoint commit: {}",
            output::escape(&file.path),
            file.reason
        ));
    }
    let (sha, loaded) = match outcome {
        git::CommitOutcome::NothingToCommit => {
            output::note("nothing to commit: the checkpoint commit was skipped");
            (None, None)
        }
        git::CommitOutcome::Committed {
            sha,
            phases,
            message,
        } => {
            let id = workflow.id.clone();
            let loaded = store_write::update(ctx, &id, |_| {
                Ok(phases
                    .iter()
                    .map(|phase| Transition::PhaseCommit {
                        phase: phase.clone(),
                        sha: sha.clone(),
                    })
                    .collect())
            })?;
            output::note(&format!(
                "committed {} ({})",
                output::short_sha(&sha),
                message.lines().next().unwrap_or_default()
            ));
            (Some(sha), Some(loaded))
        }
    };
    Ok(FollowUp {
        commit: Some(json::CommitReport { sha, left_out }),
        after: loaded,
    })
}

pub(crate) fn replan(ctx: &Ctx, args: &ReplanArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    Write::one(
        Transition::Replan {
            phase: phase.clone(),
            reason: args.reason.clone(),
        },
        |workflow| {
            let count = workflow.phase(&phase).map_or(0, |phase| phase.replan_count);
            let limit = ctx.config.max_replans;
            let warning = if count > limit {
                format!("; over the limit of {limit}: a person should redesign this phase")
            } else {
                String::new()
            };
            format!("recorded replan {count} of phase `{phase}`{warning}")
        },
    )
    .apply(ctx)?;
    Ok(())
}

pub(crate) fn fail(ctx: &Ctx, args: &FailArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    Write::one(
        Transition::PhaseFail {
            phase: phase.clone(),
            reason: args.reason.clone(),
        },
        |workflow| {
            let failures = workflow.phase(&phase).map_or(0, |phase| phase.failures);
            format!("phase `{phase}` failed ({failures}×): {}", args.reason)
        },
    )
    .apply(ctx)?;
    Ok(())
}

pub(crate) fn skip(ctx: &Ctx, args: &SkipArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    Write::one(
        Transition::PhaseSkip {
            phase: phase.clone(),
            reason: args.reason.clone(),
        },
        |workflow| format!("skipped phase `{phase}`{}", next_hint(workflow)),
    )
    .apply(ctx)?;
    Ok(())
}

pub(crate) fn approve(ctx: &Ctx, args: &ApproveArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    let transition = Transition::PhaseApprove {
        phase: phase.clone(),
        by: args.by.clone(),
        note: args.note.clone(),
    };
    Write::one(transition, |workflow| {
        format!("approved phase `{phase}`{}", next_hint(workflow))
    })
    .apply(ctx)?;
    Ok(())
}

pub(crate) fn reject(ctx: &Ctx, args: &RejectArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    Write::one(
        Transition::PhaseReject {
            phase: phase.clone(),
            reason: args.reason.clone(),
        },
        |_| format!("rejected phase `{phase}`: {}", args.reason),
    )
    .apply(ctx)?;
    Ok(())
}

/// "; next: `a`, `b`" listing the phases now ready, or "; workflow complete".
fn next_hint(workflow: &Workflow) -> String {
    if workflow.status == checkpoint_core::WorkflowStatus::Complete {
        return "; the workflow is complete".into();
    }
    let done = workflow.done_set();
    let ready: Vec<String> = workflow
        .phases
        .iter()
        .filter(|phase| phase.status == PhaseStatus::Pending && done.dependencies_done(phase))
        .map(|phase| format!("`{}`", phase.id))
        .collect();
    if ready.is_empty() {
        String::new()
    } else {
        format!("; ready: {}", ready.join(", "))
    }
}

/// A phase started from a session's shell: that session holds the phase's plan `claims` while
/// it is in progress (a sub-agent the phase is dispatched to holds them through the hooks). A
/// failure to note them is a warning: the phase is started.
fn hold_plan_claims(ctx: &Ctx, workflow: &Workflow, phase: &PhaseId) {
    let Some(session) = crate::services::writes::running_session() else {
        return;
    };
    let Some(declared) = workflow
        .phase(phase)
        .filter(|phase| !phase.claims.is_empty())
    else {
        return;
    };
    let holder = checkpoint_core::writes::Writer::new(&session, None);
    if let Err(err) = crate::services::writes::hold(
        &ctx.store,
        workflow,
        phase.as_str(),
        &holder,
        &declared.claims,
        ctx.now,
    ) {
        output::warn(&format!(
            "the claims of phase `{phase}` are not held by session {session}: {err}"
        ));
    }
}
