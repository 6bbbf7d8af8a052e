//! `checkpoint task`: tasks inside a phase.

use checkpoint_core::{PhaseId, TaskId, Transition};
use clap::{Args, Subcommand};
use miette::Result;

use crate::{ctx::Ctx, services::store_write::Write};

/// The `task` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum TaskCommand {
    /// Add a task to a phase
    Add(TaskAddArgs),
    /// Start a task (and its phase, if pending)
    Start(TaskRef),
    /// Mark a task done
    Done(TaskDoneArgs),
    /// Mark a task failed
    Fail(TaskFailArgs),
}

/// A phase and one of its tasks.
#[derive(Debug, Args)]
pub(crate) struct TaskRef {
    /// The phase id
    pub phase: String,
    /// The task id
    pub task: String,
}

/// Arguments of `checkpoint task add`.
#[derive(Debug, Args)]
pub(crate) struct TaskAddArgs {
    #[command(flatten)]
    pub target: TaskRef,
    /// What the task does
    #[arg(long)]
    pub title: Option<String>,
    /// The file the task writes; its existence proves the task ran
    #[arg(long, value_name = "PATH")]
    pub output: Option<String>,
}

/// Arguments of `checkpoint task done`.
#[derive(Debug, Args)]
pub(crate) struct TaskDoneArgs {
    #[command(flatten)]
    pub target: TaskRef,
    /// The file the task wrote
    #[arg(long, value_name = "PATH")]
    pub output: Option<String>,
}

/// Arguments of `checkpoint task fail`.
#[derive(Debug, Args)]
pub(crate) struct TaskFailArgs {
    #[command(flatten)]
    pub target: TaskRef,
    /// What went wrong
    #[arg(long, short = 'r')]
    pub reason: String,
}

pub(crate) fn task(ctx: &Ctx, command: &TaskCommand) -> Result<()> {
    let target = match command {
        TaskCommand::Add(args) => &args.target,
        TaskCommand::Start(target) => target,
        TaskCommand::Done(args) => &args.target,
        TaskCommand::Fail(args) => &args.target,
    };
    let phase = PhaseId::new(&target.phase)?;
    let task = TaskId::new(&target.task)?;
    // A task's output marks it done when it exists: only a file of the project may.
    let output = match command {
        TaskCommand::Add(TaskAddArgs { output, .. })
        | TaskCommand::Done(TaskDoneArgs { output, .. }) => output
            .as_deref()
            .map(|path| ctx.inside_path(path, &format!("output of task `{task}`")))
            .transpose()?,
        TaskCommand::Start(_) | TaskCommand::Fail(_) => None,
    };
    let (transition, verb) = match command {
        TaskCommand::Add(args) => (
            Transition::TaskAdd {
                phase: phase.clone(),
                task: task.clone(),
                title: args.title.clone(),
                output: output.clone(),
            },
            "added",
        ),
        TaskCommand::Start(_) => (
            Transition::TaskStart {
                phase: phase.clone(),
                task: task.clone(),
                agent_id: None,
            },
            "started",
        ),
        TaskCommand::Done(_) => (
            Transition::TaskDone {
                phase: phase.clone(),
                task: task.clone(),
                output: output.clone(),
                note: None,
            },
            "finished",
        ),
        TaskCommand::Fail(args) => (
            Transition::TaskFail {
                phase: phase.clone(),
                task: task.clone(),
                reason: args.reason.clone(),
            },
            "failed",
        ),
    };
    Write::one(transition, |_| {
        format!("{verb} task `{task}` of phase `{phase}`")
    })
    .apply(ctx)?;
    Ok(())
}
