//! `checkpoint list`: the workflows of the repository and of all its git worktrees, then the
//! state files of other checkpoint systems found there (read-only, marked with their format).

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
};

use checkpoint_core::{
    PhaseStatus, Workflow,
    seeds::{self, Discovered, ImportOptions},
    store::{Store, StoreOptions},
};
use clap::Args;
use miette::{IntoDiagnostic, Result};

use crate::{
    ctx::Ctx,
    json::{ListEntry, ListReport},
    locate,
    output::{self, Format, JSON_VERSION, Paint},
    probe,
};

/// Directories `--all` never descends into.
const SKIPPED_DIRS: &[&str] = &[".git", "target", "node_modules"];

/// Arguments of `checkpoint list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Also walk the directory tree under the current directory for checkpoint directories
    #[arg(long)]
    pub all: bool,
}

impl ListEntry {
    /// The entry of a workflow that loaded.
    fn of(workflow: Workflow, dir: String, root: String) -> Self {
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
        let active = checkpoint_core::choice::active_at(&workflow);
        Self {
            phases_done: workflow.n_done(),
            phases_total: workflow.phases.len(),
            title: workflow.title,
            status: Some(workflow.status),
            current_phase: current,
            updated_at: Some(active),
            id: workflow.id.to_string(),
            dir,
            root,
            source: None,
            path: None,
            error: None,
            used: false,
        }
    }

    /// The entry of a workflow that did not load.
    fn unreadable(id: String, dir: String, root: String, error: String) -> Self {
        Self {
            id,
            title: None,
            status: None,
            phases_done: 0,
            phases_total: 0,
            current_phase: None,
            updated_at: None,
            dir,
            root,
            source: None,
            path: None,
            error: Some(error),
            used: false,
        }
    }

    /// The entry of another system's state file, as it would be imported.
    fn seed(ctx: &Ctx, found: &Discovered, root: &Path) -> Self {
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
        let root = root.to_string_lossy().into_owned();
        let imported = seeds::read_source(found.format, &found.path)
            .and_then(|source| seeds::import(found.format, &source, &options));
        let mut entry = match imported {
            Ok(workflow) => Self::of(workflow, dir, root),
            Err(err) => {
                let stem = found.path.file_stem().unwrap_or_default();
                Self::unreadable(
                    stem.to_string_lossy().into_owned(),
                    dir,
                    root,
                    err.to_string(),
                )
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

pub(crate) fn list(ctx: &Ctx, args: &ListArgs) -> Result<()> {
    let worktrees = probe::worktree_roots(&ctx.project_root);
    let mut stores: Vec<(PathBuf, PathBuf)> =
        vec![(ctx.project_root.clone(), ctx.store.root().to_owned())];
    for root in &worktrees {
        stores.push((root.clone(), locate::default_store(root)));
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
            let workflow_dir = store.workflow_dir(&id).to_string_lossy().into_owned();
            let root = root.to_string_lossy().into_owned();
            entries.push(match store.load(&id) {
                Ok(loaded) => ListEntry::of(loaded.workflow, workflow_dir, root),
                Err(err) => {
                    ListEntry::unreadable(id.to_string(), workflow_dir, root, err.to_string())
                }
            });
        }
    }
    entries.sort_by(|a, b| {
        b.updated_at
            .cmp(&a.updated_at)
            .then_with(|| a.id.cmp(&b.id))
    });
    if let Ok(Some(used)) = ctx.store.used() {
        let dir = ctx.store.workflow_dir(&used).to_string_lossy().into_owned();
        for entry in &mut entries {
            entry.used = entry.dir == dir;
        }
    }
    for found in seeds::discover(&ctx.project_root, &worktrees) {
        let root = worktrees
            .iter()
            .find(|root| found.path.starts_with(root))
            .unwrap_or(&ctx.project_root)
            .clone();
        entries.push(ListEntry::seed(ctx, &found, &root));
    }
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
            output::emit_human(ctx.color, &render(ctx, &entries)).into_diagnostic()?;
            if entries.iter().any(|entry| entry.source.is_some()) {
                output::note(
                    "entries in [brackets] are other checkpoint systems' files, read-only here; switch with `checkpoint import <path>`",
                );
            }
            Ok(())
        }
    }
}

fn render(ctx: &Ctx, entries: &[ListEntry]) -> String {
    let paint = Paint::new(ctx.color);
    let width = entries
        .iter()
        .map(|entry| entry.id.len())
        .max()
        .unwrap_or(0);
    let project_root = ctx.project_root.to_string_lossy();
    let mut text = String::new();
    for entry in entries {
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
                    "{}  {}  {} of {} done{current}, {when}",
                    paint.bold(&id),
                    output::workflow_status(status, paint),
                    entry.phases_done,
                    output::count(entry.phases_total, "phase")
                );
            }
        }
        if entry.used {
            let _ = write!(
                text,
                "  {}",
                paint.bold("(used here: `checkpoint use --none` to forget)")
            );
        }
        if let (Some(source), Some(path)) = (entry.source, &entry.path) {
            let _ = write!(text, "  {}", paint.dim(&format!("[{source}: `{path}`]")));
        } else if entry.root != project_root {
            let _ = write!(text, "{}", paint.dim(&format!("  [{}]", entry.root)));
        }
        text.push('\n');
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
        .filter(|entry| entry.file_type().is_dir() && locate::is_default_store(entry.path()))
        .map(|entry| entry.into_path())
        .collect()
}
