//! `checkpoint list`: the workflows in the checkpoint directory, then the state files of other
//! checkpoint systems found in the project (read-only, marked with their format).

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
    process::Command,
};

use checkpoint_core::{
    PhaseStatus, Workflow, WorkflowStatus,
    seeds::{self, Discovered, ImportOptions},
};
use chrono::{DateTime, Utc};
use miette::{IntoDiagnostic, Result};
use serde::Serialize;

use crate::{
    cli::Format,
    ctx::Ctx,
    output::{self, JSON_VERSION, Paint},
};

/// The JSON document of `checkpoint list`.
#[derive(Debug, Serialize)]
struct ListReport {
    version: u32,
    workflows: Vec<ListEntry>,
}

/// One workflow in the list.
#[derive(Debug, Serialize)]
struct ListEntry {
    id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    status: Option<WorkflowStatus>,
    phases_done: usize,
    phases_total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    current_phase: Option<String>,
    updated_at: Option<DateTime<Utc>>,
    dir: String,
    /// For another system's state file: its format.
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'static str>,
    /// For another system's state file: its path.
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl ListEntry {
    /// The entry of a workflow that loaded.
    fn of(workflow: Workflow, dir: String) -> Self {
        let current = workflow
            .phases
            .iter()
            .find(|phase| {
                matches!(
                    phase.status,
                    PhaseStatus::InProgress | PhaseStatus::AwaitingApproval | PhaseStatus::Failed
                )
            })
            .map(|phase| phase.id.to_string());
        Self {
            phases_done: workflow.n_done(),
            phases_total: workflow.phases.len(),
            title: workflow.title,
            status: Some(workflow.status),
            current_phase: current,
            updated_at: Some(workflow.updated_at),
            id: workflow.id.to_string(),
            dir,
            source: None,
            path: None,
            error: None,
        }
    }

    /// The entry of a workflow that did not load.
    fn unreadable(id: String, dir: String, error: String) -> Self {
        Self {
            id,
            title: None,
            status: None,
            phases_done: 0,
            phases_total: 0,
            current_phase: None,
            updated_at: None,
            dir,
            source: None,
            path: None,
            error: Some(error),
        }
    }

    /// The entry of another system's state file, as it would be imported.
    fn seed(ctx: &Ctx, found: &Discovered) -> Self {
        let options = ImportOptions {
            id: None,
            now: ctx.now,
        };
        let dir = found
            .path
            .parent()
            .unwrap_or(Path::new(""))
            .to_string_lossy()
            .into_owned();
        let imported = seeds::read_source(found.format, &found.path)
            .and_then(|source| seeds::import(found.format, &source, &options));
        let mut entry = match imported {
            Ok(workflow) => Self::of(workflow, dir),
            Err(err) => {
                let stem = found.path.file_stem().unwrap_or_default();
                Self::unreadable(stem.to_string_lossy().into_owned(), dir, err.to_string())
            }
        };
        entry.source = Some(found.format.name());
        let path = found
            .path
            .strip_prefix(&ctx.project_root)
            .unwrap_or(&found.path);
        entry.path = Some(path.to_string_lossy().into_owned());
        entry
    }
}

pub(crate) fn run(ctx: &Ctx) -> Result<()> {
    let mut entries: Vec<ListEntry> = ctx
        .store
        .list()?
        .into_iter()
        .map(|id| {
            let dir = ctx.store.workflow_dir(&id).to_string_lossy().into_owned();
            match ctx.store.load(&id) {
                Ok(loaded) => ListEntry::of(loaded.workflow, dir),
                Err(err) => ListEntry::unreadable(id.to_string(), dir, err.to_string()),
            }
        })
        .collect();
    entries.sort_by(|a, b| {
        b.updated_at
            .cmp(&a.updated_at)
            .then_with(|| a.id.cmp(&b.id))
    });
    let found = seeds::discover(&ctx.project_root, &worktrees(&ctx.project_root));
    entries.extend(found.iter().map(|found| ListEntry::seed(ctx, found)));
    match ctx.format {
        Format::Json => output::emit_json(&ListReport {
            version: JSON_VERSION,
            workflows: entries,
        })
        .into_diagnostic(),
        Format::Human => {
            let paint = Paint::new(ctx.color);
            if entries.is_empty() {
                output::note(&format!("no workflows in `{}`", ctx.store.root().display()));
                return Ok(());
            }
            let width = entries
                .iter()
                .map(|entry| entry.id.len())
                .max()
                .unwrap_or(0);
            let mut text = String::new();
            for entry in &entries {
                let id = format!("{:width$}", entry.id);
                match entry.status {
                    None => {
                        let error = entry.error.as_deref().unwrap_or("unknown error");
                        let _ = write!(
                            text,
                            "{}  {}",
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
                        let _ = write!(
                            text,
                            "{}  {}  {} of {} phases done{current}, {when}",
                            paint.bold(&id),
                            output::workflow_status(status, paint),
                            entry.phases_done,
                            entry.phases_total
                        );
                    }
                }
                if let (Some(source), Some(path)) = (entry.source, &entry.path) {
                    let _ = write!(text, "  {}", paint.dim(&format!("[{source}: `{path}`]")));
                }
                text.push('\n');
            }
            output::emit(&text).into_diagnostic()?;
            if entries.iter().any(|entry| entry.source.is_some()) {
                output::note(
                    "entries in [brackets] are other checkpoint systems' files, read-only here; switch with `checkpoint import <path>`",
                );
            }
            Ok(())
        }
    }
}

/// The roots of the project's git worktrees, where the nine-step workflow keeps its state.
fn worktrees(project_root: &Path) -> Vec<PathBuf> {
    if !project_root.join(".git").exists() {
        return Vec::new();
    }
    let Ok(output) = Command::new("git")
        .args(["worktree", "list", "--porcelain"])
        .current_dir(project_root)
        .output()
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.strip_prefix("worktree "))
        .map(PathBuf::from)
        .collect()
}
