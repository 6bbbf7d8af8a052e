//! Phase transitions: `start`, `progress`, `complete`, `fail`, `skip`, `approve`, `reject`.

use checkpoint_core::{PhaseId, PhaseStatus, Transition, Workflow};
use clap::Args;
use miette::Result;

use crate::{ctx::Ctx, report};

/// Arguments of `checkpoint start`.
#[derive(Debug, Args)]
pub struct StartArgs {
    /// The phase id
    pub phase: String,
    /// Start even if the phase is done, its dependencies are not, or it failed too often
    #[arg(long)]
    pub force: bool,
}

/// Arguments of `checkpoint progress`.
#[derive(Debug, Args)]
pub struct ProgressArgs {
    /// The phase id
    pub phase: String,
    /// What is done so far and what comes next
    pub note: String,
}

/// Arguments of `checkpoint complete`.
#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// The phase id
    pub phase: String,
    /// A file the phase produced (can be repeated)
    #[arg(long = "artifact", short = 'a', value_name = "PATH")]
    pub artifacts: Vec<String>,
    /// The commit that holds the phase's work
    #[arg(long, value_name = "SHA")]
    pub commit_sha: Option<String>,
    /// Complete even if dependencies or tasks are not done
    #[arg(long)]
    pub force: bool,
}

/// Arguments of `checkpoint fail`.
#[derive(Debug, Args)]
pub struct FailArgs {
    /// The phase id
    pub phase: String,
    /// What went wrong
    #[arg(long, short = 'r')]
    pub reason: String,
}

/// Arguments of `checkpoint skip`.
#[derive(Debug, Args)]
pub struct SkipArgs {
    /// The phase id
    pub phase: String,
    /// Why it is skipped
    #[arg(long, short = 'r')]
    pub reason: Option<String>,
}

/// Arguments of `checkpoint approve`.
#[derive(Debug, Args)]
pub struct ApproveArgs {
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
pub struct RejectArgs {
    /// The phase id
    pub phase: String,
    /// Why it is rejected
    #[arg(long, short = 'r')]
    pub reason: String,
}

pub(crate) fn start(ctx: &Ctx, args: &StartArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    report::apply(
        ctx,
        Transition::PhaseStart {
            phase: phase.clone(),
            force: args.force,
        },
        |workflow| {
            let attempts = workflow.phase(&phase).map_or(0, |phase| phase.attempts);
            format!("started phase `{phase}` (attempt {attempts})")
        },
    )?;
    Ok(())
}

pub(crate) fn progress(ctx: &Ctx, args: &ProgressArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    report::apply(
        ctx,
        Transition::PhaseProgress {
            phase: phase.clone(),
            note: args.note.clone(),
        },
        |_| format!("recorded progress on phase `{phase}`"),
    )?;
    Ok(())
}

pub(crate) fn complete(ctx: &Ctx, args: &CompleteArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    let artifacts = args
        .artifacts
        .iter()
        .map(|path| ctx.project_path(path))
        .collect();
    let transition = Transition::PhaseComplete {
        phase: phase.clone(),
        artifacts,
        commit_sha: args.commit_sha.clone(),
        force: args.force,
    };
    report::apply(ctx, transition, |workflow| {
        match workflow.phase(&phase).map(|phase| phase.status) {
            Some(PhaseStatus::AwaitingApproval) => {
                format!(
                    "phase `{phase}` is done and waits for approval: `checkpoint approve {phase}`"
                )
            }
            _ => format!("completed phase `{phase}`{}", next_hint(workflow)),
        }
    })?;
    Ok(())
}

pub(crate) fn fail(ctx: &Ctx, args: &FailArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    report::apply(
        ctx,
        Transition::PhaseFail {
            phase: phase.clone(),
            reason: args.reason.clone(),
        },
        |workflow| {
            let failures = workflow.phase(&phase).map_or(0, |phase| phase.failures);
            format!("phase `{phase}` failed ({failures}×): {}", args.reason)
        },
    )?;
    Ok(())
}

pub(crate) fn skip(ctx: &Ctx, args: &SkipArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    report::apply(
        ctx,
        Transition::PhaseSkip {
            phase: phase.clone(),
            reason: args.reason.clone(),
        },
        |workflow| format!("skipped phase `{phase}`{}", next_hint(workflow)),
    )?;
    Ok(())
}

pub(crate) fn approve(ctx: &Ctx, args: &ApproveArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    let transition = Transition::PhaseApprove {
        phase: phase.clone(),
        by: args.by.clone(),
        note: args.note.clone(),
    };
    report::apply(ctx, transition, |workflow| {
        format!("approved phase `{phase}`{}", next_hint(workflow))
    })?;
    Ok(())
}

pub(crate) fn reject(ctx: &Ctx, args: &RejectArgs) -> Result<()> {
    let phase = PhaseId::new(&args.phase)?;
    report::apply(
        ctx,
        Transition::PhaseReject {
            phase: phase.clone(),
            reason: args.reason.clone(),
        },
        |_| format!("rejected phase `{phase}`: {}", args.reason),
    )?;
    Ok(())
}

/// "; next: `a`, `b`" listing the phases now ready, or "; workflow complete".
fn next_hint(workflow: &Workflow) -> String {
    if workflow.status == checkpoint_core::WorkflowStatus::Complete {
        return "; the workflow is complete".into();
    }
    let ready: Vec<String> = workflow
        .phases
        .iter()
        .filter(|phase| phase.status == PhaseStatus::Pending && workflow.dependencies_done(phase))
        .map(|phase| format!("`{}`", phase.id))
        .collect();
    if ready.is_empty() {
        String::new()
    } else {
        format!("; ready: {}", ready.join(", "))
    }
}
