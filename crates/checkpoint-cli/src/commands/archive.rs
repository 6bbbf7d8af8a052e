//! Archives and retention: `archive`, `gc` and `restore`. Only `gc` deletes, and only archives.

use std::{fmt::Write as _, path::PathBuf};

use checkpoint_core::{
    WorkflowStatus, retention,
    store::{ARCHIVE_DIR, FAILED_DIR, JOURNAL_FILE, STATE_FILE},
};
use clap::Args;
use miette::{IntoDiagnostic, Result};

use crate::{
    ctx::Ctx,
    failure::Failure,
    json::{ArchiveReport, GcReport, RestoreReport},
    output::{self, Format, JSON_VERSION},
};

/// Arguments of `checkpoint archive`.
#[derive(Debug, Args)]
pub(crate) struct ArchiveArgs {
    /// Archive even if the workflow is not finished
    #[arg(long)]
    pub force: bool,
}

/// Arguments of `checkpoint gc`.
#[derive(Debug, Args)]
pub(crate) struct GcArgs {
    /// List what would be deleted, and delete nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// Arguments of `checkpoint restore`.
#[derive(Debug, Args)]
pub(crate) struct RestoreArgs {
    /// The archive: its directory, or its name in `.archive/` or `failed/`
    pub archive: String,
}

pub(crate) fn archive(ctx: &Ctx, args: &ArchiveArgs) -> Result<()> {
    let loaded = ctx.load()?;
    let status = loaded.workflow.status;
    let finished = status.is_finished() || status == WorkflowStatus::Failed;
    if !finished && !args.force {
        return Err(Failure::new(
            "checkpoint::archive::unfinished",
            format!(
                "workflow `{}` is {}, not finished",
                loaded.workflow.id,
                status.as_str()
            ),
        )
        .with_help("finish or abandon it first (`checkpoint abandon`), or pass `--force`")
        .into());
    }
    let target = ctx.store.archive(
        &loaded.workflow.id,
        ctx.now,
        status == WorkflowStatus::Failed,
    )?;
    match ctx.format {
        Format::Json => output::emit_json(&ArchiveReport {
            version: JSON_VERSION,
            workflow: &loaded.workflow.id,
            archived_to: &target,
        })
        .into_diagnostic(),
        _ => output::emit_human(
            ctx.color,
            &format!(
                "archived `{}` to `{}`\n",
                loaded.workflow.id,
                target.display()
            ),
        )
        .into_diagnostic(),
    }
}

pub(crate) fn gc(ctx: &Ctx, args: &GcArgs) -> Result<()> {
    let archives = ctx.store.list_archives()?;
    let listed: Vec<retention::Archive> = archives
        .iter()
        .map(|(_, archive)| archive.clone())
        .collect();
    let doomed = retention::plan_gc(&listed, &ctx.config.gc, ctx.now);
    if !args.dry_run {
        for victim in &doomed {
            let path = archives
                .iter()
                .find(|(_, archive)| archive == &victim.archive)
                .map(|(path, _)| path.clone());
            if let Some(path) = path {
                ctx.store.delete_archive(&path)?;
            }
        }
        crate::services::snapshots::forget_deleted(ctx, &doomed);
    }
    let kept = archives.len() - doomed.len();
    match ctx.format {
        Format::Json => output::emit_json(&GcReport {
            version: JSON_VERSION,
            dry_run: args.dry_run,
            deleted: &doomed,
            kept,
        })
        .into_diagnostic(),
        _ => {
            let verb = if args.dry_run {
                "would delete"
            } else {
                "deleted"
            };
            let mut text = String::new();
            for victim in &doomed {
                let place = if victim.archive.failed {
                    FAILED_DIR
                } else {
                    ARCHIVE_DIR
                };
                let _ = writeln!(
                    text,
                    "{verb} {place}/{} ({})",
                    victim.archive.name, victim.reason
                );
            }
            let _ = writeln!(
                text,
                "{} archive{} kept",
                kept,
                if kept == 1 { "" } else { "s" }
            );
            output::emit_human(ctx.color, &text).into_diagnostic()
        }
    }
}

pub(crate) fn restore(ctx: &Ctx, args: &RestoreArgs) -> Result<()> {
    let given = ctx.cwd.join(&args.archive);
    let path = if given.is_dir() {
        given
    } else {
        [ARCHIVE_DIR, FAILED_DIR]
            .iter()
            .map(|sub| ctx.store.root().join(sub).join(&args.archive))
            .find(|path| path.is_dir())
            .unwrap_or_else(|| PathBuf::from(&args.archive))
    };
    if !path.exists() {
        return Err(Failure::new(
            "checkpoint::archive::not_found",
            format!(
                "no archive `{}`: neither a directory nor a name in the store's archives",
                output::escape(&args.archive)
            ),
        )
        .with_help(format!(
            "`checkpoint gc --dry-run` lists the archives; give the name or path of a directory in `{}` or `{}`",
            ctx.store.root().join(ARCHIVE_DIR).display(),
            ctx.store.root().join(FAILED_DIR).display()
        ))
        .into());
    }
    if !path.join(STATE_FILE).is_file() || !path.join(JOURNAL_FILE).is_file() {
        return Err(Failure::new(
            "checkpoint::archive::not_an_archive",
            format!(
                "`{}` is not an archive: it holds no `{STATE_FILE}` and `{JOURNAL_FILE}`",
                output::escape(&path.display().to_string())
            ),
        )
        .with_help(format!(
            "give the name or path of a directory in `{}` or `{}`",
            ctx.store.root().join(ARCHIVE_DIR).display(),
            ctx.store.root().join(FAILED_DIR).display()
        ))
        .into());
    }
    let id = ctx.store.restore(&path)?;
    match ctx.format {
        Format::Json => output::emit_json(&RestoreReport {
            version: JSON_VERSION,
            workflow: &id,
            dir: &ctx.store.workflow_dir(&id),
        })
        .into_diagnostic(),
        _ => output::emit_human(
            ctx.color,
            &format!("restored `{id}` from `{}`\n", path.display()),
        )
        .into_diagnostic(),
    }
}
