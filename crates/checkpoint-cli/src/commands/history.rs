//! Time travel over the journal: `diff`, `rewind`, `fork` and `graph`.

use std::{fmt::Write as _, path::PathBuf};

use checkpoint_core::{
    PhaseId, Transition, Workflow, WorkflowId,
    history::{self},
    journal::Journal,
};
use clap::Args;
use miette::{IntoDiagnostic, Result};

use crate::{
    ctx::Ctx,
    failure::Failure,
    json::{DiffReport, GraphNode, GraphReport, WorkflowReport},
    output::{self, Format, JSON_VERSION, Paint},
    services::store_write::{self, Write},
};

/// Arguments of `checkpoint diff`.
#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
    /// The earlier journal sequence number (with `--files`: a snapshot `@n`, a phase id,
    /// `<phase>^` or a journal sequence number)
    pub from: String,
    /// The later journal sequence number [default: the last] (with `--files`: as `<FROM>`
    /// [default: the working tree now])
    pub to: Option<String>,
    /// Compare the files of two snapshots (stat, then the patch), not the workflow's state
    #[arg(long)]
    pub files: bool,
    /// With `--files`: the stat only
    #[arg(long, requires = "files")]
    pub stat: bool,
}

/// Arguments of `checkpoint rewind`.
#[derive(Debug, Args)]
pub(crate) struct RewindArgs {
    /// A journal sequence number, or a phase id to redo that phase from where it last started
    pub point: String,
    /// Put the files back to the same point too (a snapshot of the tree is taken first, so
    /// `checkpoint redo` gives them back)
    #[arg(long)]
    pub files: bool,
    /// With `--files`: do not ask on a terminal
    #[arg(long, short = 'y', requires = "files")]
    pub yes: bool,
}

/// Arguments of `checkpoint fork`.
#[derive(Debug, Args)]
pub(crate) struct ForkArgs {
    /// The journal sequence number to start from
    pub seq: u64,
    /// The id of the new workflow
    #[arg(long = "as", value_name = "ID")]
    pub new_id: String,
}

/// The workflow the command means, its journal, and the journal's path.
fn journal(ctx: &Ctx) -> Result<(WorkflowId, Journal, PathBuf)> {
    let id = ctx.workflow_id()?;
    let journal = ctx.store.journal(&id)?;
    let path = ctx
        .store
        .workflow_dir(&id)
        .join(checkpoint_core::store::JOURNAL_FILE);
    Ok((id, journal, path))
}

pub(crate) fn diff(ctx: &Ctx, args: &DiffArgs) -> Result<()> {
    let (_, journal, path) = journal(ctx)?;
    let seq = |text: &str| {
        text.parse::<u64>().map_err(|_| {
            Failure::new(
                "checkpoint::usage",
                format!("`{text}` is not a journal sequence number"),
            )
            .with_help(
                "`checkpoint diff --files` compares snapshots of the files (`@n`, a phase id)",
            )
        })
    };
    let from = seq(&args.from)?;
    let to = match &args.to {
        Some(to) => seq(to)?,
        None => journal.entries.last().map_or(0, |entry| entry.seq),
    };
    let before = history::state_at(&path, &journal.entries, from)?;
    let after = history::state_at(&path, &journal.entries, to)?;
    let changes = history::diff(&before, &after);
    match ctx.format {
        Format::Json => output::emit_json(&DiffReport {
            version: JSON_VERSION,
            from,
            to,
            changes: &changes,
        })
        .into_diagnostic(),
        _ => {
            let mut text = format!("changes from entry {from} to entry {to}:\n");
            if changes.is_empty() {
                text.push_str("  (none)\n");
            }
            for change in &changes {
                let before = change.before.as_deref().unwrap_or("—");
                let after = change.after.as_deref().unwrap_or("—");
                let _ = writeln!(
                    text,
                    "  {:<9} {}: {before} → {after}",
                    change.what, change.subject
                );
            }
            output::emit_human(ctx.color, &text).into_diagnostic()
        }
    }
}

pub(crate) fn rewind(ctx: &Ctx, args: &RewindArgs) -> Result<()> {
    let (_, journal, path) = journal(ctx)?;
    let seq = match args.point.parse::<u64>() {
        Ok(seq) => seq,
        Err(_) => history::before_last_start(&journal.entries, &PhaseId::new(&args.point)?)?,
    };
    let past = history::state_at(&path, &journal.entries, seq)?;
    let transition = Transition::Snapshot {
        workflow: Box::new(past),
        reason: format!("rewound to entry {seq}"),
    };
    Write::one(transition, |workflow| {
        format!(
            "rewound `{}` to its state after entry {seq} (as entry {}); the history is kept",
            workflow.id, workflow.seq
        )
    })
    .apply(ctx)?;
    Ok(())
}

pub(crate) fn fork(ctx: &Ctx, args: &ForkArgs) -> Result<()> {
    let new_id = WorkflowId::new(&args.new_id)?;
    let (id, journal, path) = journal(ctx)?;
    let mut past = history::state_at(&path, &journal.entries, args.seq)?;
    past.id = new_id.clone();
    past.created_at = ctx.now;
    past.seq = 0;
    past.extensions.insert(
        "forked_from".into(),
        serde_json::json!({ "workflow": id.as_str(), "seq": args.seq }),
    );
    let loaded = ctx.store.create(past, ctx.now).map_err(|err| match err {
        checkpoint_core::Error::AlreadyExists { id, .. } => Failure::new(
            "checkpoint::store::exists",
            format!("workflow `{id}` already exists"),
        )
        .with_help("pick another id for `--as`")
        .into(),
        other => miette::Report::new(other),
    })?;
    // The fork keeps the effects (and allows) of the entries it copies, so that a repeat of
    // what the original did is refused in the fork too, and its resume names them.
    let effects: Vec<Transition> = journal
        .entries
        .iter()
        .filter(|entry| entry.seq <= args.seq)
        .filter(|entry| {
            matches!(
                entry.transition,
                Transition::Effect { .. } | Transition::EffectAllow { .. }
            )
        })
        .map(|entry| entry.transition.clone())
        .collect();
    let loaded = if effects.is_empty() {
        loaded
    } else {
        store_write::update(ctx, &new_id, |_| Ok(effects))?
    };
    match ctx.format {
        Format::Json => WorkflowReport::new(&loaded).emit(),
        _ => output::emit_human(
            ctx.color,
            &format!("forked `{new_id}` from `{id}` at entry {}\n", args.seq),
        )
        .into_diagnostic(),
    }
}

pub(crate) fn graph(ctx: &Ctx) -> Result<()> {
    let loaded = ctx.load()?;
    let text = match ctx.format {
        Format::Dot => checkpoint_core::graph::dot(&loaded.workflow),
        Format::Json => {
            let edges: Vec<(&str, &str)> = loaded
                .workflow
                .phases
                .iter()
                .flat_map(|phase| {
                    phase
                        .dependencies
                        .iter()
                        .map(move |dep| (dep.as_str(), phase.id.as_str()))
                })
                .collect();
            let nodes = loaded
                .workflow
                .phases
                .iter()
                .map(|phase| GraphNode {
                    id: &phase.id,
                    status: phase.status,
                })
                .collect();
            return output::emit_json(&GraphReport {
                version: JSON_VERSION,
                nodes,
                edges,
            })
            .into_diagnostic();
        }
        Format::Mermaid => checkpoint_core::graph::mermaid(&loaded.workflow),
        _ => drawn(ctx, &loaded.workflow),
    };
    output::emit_human(ctx.color, &text).into_diagnostic()
}

/// The phase DAG drawn for the terminal: an indented tree of the phases with their statuses and
/// approval gates, each phase under the last of its dependencies, the others named.
fn drawn(ctx: &Ctx, workflow: &Workflow) -> String {
    let paint = Paint::new(ctx.color);
    let done = workflow.done_set();
    let mut text = format!(
        "{}  {}\n\n",
        paint.bold(workflow.id.as_str()),
        output::workflow_status(workflow.status, paint)
    );
    for line in checkpoint_core::graph::tree(workflow) {
        let phase = &workflow.phases[line.phase];
        let after = if line.also_after.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = line.also_after.iter().map(|id| format!("`{id}`")).collect();
            paint.dim(&format!("  (also after {})", names.join(", ")))
        };
        let status = output::status_line(&done, phase, phase.id.as_str(), ctx.now, paint);
        text.push_str(&format!("{}{status}{after}\n", paint.dim(&line.prefix)));
    }
    text.push_str(&paint.dim(
        "\n(`checkpoint graph --format mermaid` or `--format dot` for a README or a pull request)\n",
    ));
    text
}
