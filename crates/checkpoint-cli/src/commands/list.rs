//! `checkpoint list`: the workflows of the repository and of all its git worktrees.

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
};

use checkpoint_core::{
    PhaseStatus, WorkflowId, WorkflowStatus,
    store::{Store, StoreOptions},
};
use chrono::{DateTime, Utc};
use clap::Args;
use miette::{IntoDiagnostic, Result};
use serde::Serialize;

use crate::{
    cli::Format,
    ctx::Ctx,
    output::{self, JSON_VERSION, Paint},
    probe,
};

/// Directories `--all` never descends into.
const SKIPPED_DIRS: &[&str] = &[".git", "target", "node_modules"];

/// Arguments of `checkpoint list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Also walk the directory tree under the current directory for checkpoint directories
    #[arg(long)]
    pub all: bool,
}

/// The JSON document of `checkpoint list`.
#[derive(Debug, Serialize)]
struct ListReport {
    version: u32,
    workflows: Vec<ListEntry>,
}

/// One workflow in the list.
#[derive(Debug, Serialize)]
struct ListEntry {
    id: WorkflowId,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    status: Option<WorkflowStatus>,
    phases_done: usize,
    phases_total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    current_phase: Option<String>,
    updated_at: Option<DateTime<Utc>>,
    /// The workflow's directory.
    dir: String,
    /// The worktree (or directory) whose checkpoint directory holds it.
    root: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

pub(crate) fn run(ctx: &Ctx, args: &ListArgs) -> Result<()> {
    let mut stores: Vec<(PathBuf, PathBuf)> =
        vec![(ctx.project_root.clone(), ctx.store.root().to_owned())];
    for root in probe::worktree_roots(&ctx.project_root) {
        stores.push((root.clone(), root.join(".claude").join("checkpoints")));
    }
    if args.all {
        for dir in walk_for_stores(&ctx.cwd) {
            let root = dir
                .parent()
                .and_then(Path::parent)
                .map_or_else(|| dir.clone(), Path::to_owned);
            stores.push((root, dir));
        }
    }
    let mut seen = Vec::new();
    stores.retain(|(_, dir)| {
        let key = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
        let fresh = !seen.contains(&key);
        seen.push(key);
        fresh
    });
    let mut entries = Vec::new();
    for (root, dir) in &stores {
        let store = Store::new(
            dir,
            StoreOptions {
                lock_timeout: std::time::Duration::ZERO,
                on_lock_wait: None,
                failpoint: None,
            },
        );
        for id in store.list()? {
            entries.push(entry(&store, root, id));
        }
    }
    entries.sort_by(|a, b| {
        b.updated_at
            .cmp(&a.updated_at)
            .then_with(|| a.id.cmp(&b.id))
    });
    match ctx.format {
        Format::Json => output::emit_json(&ListReport {
            version: JSON_VERSION,
            workflows: entries,
        })
        .into_diagnostic(),
        _ => {
            if entries.is_empty() {
                output::note(&format!(
                    "no workflows in `{}` or its worktrees",
                    ctx.store.root().display()
                ));
                return Ok(());
            }
            output::emit(&render(ctx, &entries)).into_diagnostic()
        }
    }
}

fn entry(store: &Store, root: &Path, id: WorkflowId) -> ListEntry {
    let dir = store.workflow_dir(&id).to_string_lossy().into_owned();
    let root = root.to_string_lossy().into_owned();
    match store.load(&id) {
        Ok(loaded) => {
            let workflow = loaded.workflow;
            let current = workflow
                .phases
                .iter()
                .find(|phase| {
                    matches!(
                        phase.status,
                        PhaseStatus::InProgress
                            | PhaseStatus::AwaitingApproval
                            | PhaseStatus::Failed
                    )
                })
                .map(|phase| phase.id.to_string());
            ListEntry {
                phases_done: workflow.n_done(),
                phases_total: workflow.phases.len(),
                title: workflow.title,
                status: Some(workflow.status),
                current_phase: current,
                updated_at: Some(
                    workflow
                        .last_activity
                        .map_or(workflow.updated_at, |activity| {
                            activity.at.max(workflow.updated_at)
                        }),
                ),
                id,
                dir,
                root,
                error: None,
            }
        }
        Err(err) => ListEntry {
            id,
            title: None,
            status: None,
            phases_done: 0,
            phases_total: 0,
            current_phase: None,
            updated_at: None,
            dir,
            root,
            error: Some(err.to_string()),
        },
    }
}

fn render(ctx: &Ctx, entries: &[ListEntry]) -> String {
    let paint = Paint::new(ctx.color);
    let width = entries
        .iter()
        .map(|entry| entry.id.as_str().len())
        .max()
        .unwrap_or(0);
    let project_root = ctx.project_root.to_string_lossy();
    let mut text = String::new();
    for entry in entries {
        let id = format!("{:width$}", entry.id.as_str());
        let place = if entry.root == project_root {
            String::new()
        } else {
            paint.dim(&format!("  [{}]", entry.root))
        };
        match entry.status {
            None => {
                let error = entry.error.as_deref().unwrap_or("unknown error");
                let _ = writeln!(
                    text,
                    "{}  {}{place}",
                    paint.bold(&id),
                    paint.red(&format!("unreadable: {error}"))
                );
            }
            Some(status) => {
                let current = entry
                    .current_phase
                    .as_deref()
                    .map(|phase| format!(", at `{phase}`"))
                    .unwrap_or_default();
                let when = entry
                    .updated_at
                    .map(|at| output::ago(at, ctx.now))
                    .unwrap_or_default();
                let _ = writeln!(
                    text,
                    "{}  {}  {} of {} phases done{current}, {when}{place}",
                    paint.bold(&id),
                    output::workflow_status(status, paint),
                    entry.phases_done,
                    entry.phases_total
                );
            }
        }
    }
    text
}

/// Every `.claude/checkpoints` directory under `start`, skipping `.git`, `target` and `node_modules`.
fn walk_for_stores(start: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(start)
        .into_iter()
        .filter_entry(|entry| {
            !(entry.file_type().is_dir()
                && entry
                    .file_name()
                    .to_str()
                    .is_some_and(|name| SKIPPED_DIRS.contains(&name)))
        })
        .filter_map(Result::ok)
        .filter(|entry| {
            entry.file_type().is_dir()
                && entry.file_name() == "checkpoints"
                && entry
                    .path()
                    .parent()
                    .is_some_and(|parent| parent.ends_with(".claude"))
        })
        .map(|entry| entry.into_path())
        .collect()
}
