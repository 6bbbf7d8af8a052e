//! The files of the working tree at every turn: `snapshot`, `snapshots`, `undo` and `redo`;
//! `diff --files` and `rewind --files` (in `history.rs`) come here through `services::snapshots`
//! and the functions below that they share.

use std::{io::IsTerminal, path::PathBuf};

use checkpoint_core::{
    RestoreKind, SnapshotReason, WorkflowId,
    journal::Entry,
    snapshots::{self, SnapshotRecord},
};
use clap::Args;
use miette::{IntoDiagnostic, Result, miette};

use crate::{
    ctx::Ctx,
    failure::Failure,
    json::{
        FileChangeRow, FilesDiffReport, LeftOutRow, SnapshotRow, SnapshotTaken, SnapshotsReport,
        UndoFileRow, UndoReport,
    },
    output::{self, Format, JSON_VERSION},
    services::snapshots::{self as service, Request, Restore, Restored},
    snapshot::display,
};

/// Arguments of `checkpoint snapshot`.
#[derive(Debug, Args)]
pub(crate) struct SnapshotArgs {
    /// A label for the snapshot
    #[arg(long, short = 'm', value_name = "LABEL")]
    pub message: Option<String>,
    /// Who takes it: `manual` (a person) or `mcp` (the model, through the MCP server)
    #[arg(long, default_value = "manual", hide = true)]
    pub by: String,
}

/// Arguments of `checkpoint snapshots`.
#[derive(Debug, Args)]
pub(crate) struct SnapshotsArgs {
    /// Only the snapshots of this phase
    #[arg(long, value_name = "ID")]
    pub phase: Option<String>,
    /// Only the snapshots of this session
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
}

/// Arguments of `checkpoint undo`.
#[derive(Debug, Args)]
pub(crate) struct UndoArgs {
    /// Where to: a snapshot (`@3`), a phase id (its completion), `<phase>^` (its start) or a
    /// journal sequence number [default: before the last turn]
    #[arg(long, value_name = "TARGET")]
    pub to: Option<String>,
    /// Print what would change, and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask on a terminal
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Only these paths (after `--`)
    #[arg(last = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// Arguments of `checkpoint redo`.
#[derive(Debug, Args)]
pub(crate) struct RedoArgs {
    /// Print what would change, and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask on a terminal
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// `checkpoint snapshot`.
pub(crate) fn snapshot(ctx: &Ctx, args: &SnapshotArgs) -> Result<()> {
    let id = ctx.workflow_id()?;
    let reason = match args.by.as_str() {
        "manual" => SnapshotReason::Manual,
        "mcp" => SnapshotReason::Mcp,
        other => return Err(miette!("`--by {other}`: give `manual` or `mcp`")),
    };
    let recorded = service::take(
        ctx,
        &id,
        Request {
            reason,
            label: args.message.clone(),
            session_id: None,
            agent_id: None,
            phase: None,
            deadline: None,
        },
    )?;
    let row = service::record_of(ctx, &id, &recorded.taken.commit);
    let row = row.as_ref();
    let left_out: Vec<LeftOutRow> = recorded
        .taken
        .left_out
        .iter()
        .map(|left| LeftOutRow {
            path: display(&left.path),
            why: left.why.clone(),
        })
        .collect();
    if ctx.format == Format::Json {
        return output::emit_json(&SnapshotTaken {
            version: JSON_VERSION,
            created: recorded.taken.created,
            snapshot: row.map(SnapshotRow::from),
            left_out,
        })
        .into_diagnostic();
    }
    let text = match (recorded.taken.created, row) {
        (true, Some(row)) => format!(
            "snapshot @{} taken: {} ({})\n",
            row.n,
            output::count(row.files_changed as usize, "file"),
            short(&row.commit)
        ),
        (false, Some(row)) => format!(
            "nothing changed since snapshot @{}: nothing new stored\n",
            row.n
        ),
        _ => "nothing changed: nothing new stored\n".to_owned(),
    };
    if !recorded.taken.created {
        for left in &left_out {
            output::warn(&format!(
                "`{}` is left out of snapshots: {}",
                output::escape(&left.path),
                left.why
            ));
        }
    }
    output::emit_human(ctx.color, &text).into_diagnostic()
}

/// `checkpoint snapshots`.
pub(crate) fn list(ctx: &Ctx, args: &SnapshotsArgs) -> Result<()> {
    let id = ctx.workflow_id()?;
    let entries = ctx.store.journal(&id)?.entries;
    let all = snapshots::list(&entries);
    let shown: Vec<&SnapshotRecord> = all
        .iter()
        .filter(|record| {
            args.phase
                .as_deref()
                .is_none_or(|phase| record.phase.as_ref().is_some_and(|p| p.as_str() == phase))
                && args
                    .session
                    .as_deref()
                    .is_none_or(|session| record.session_id.as_deref() == Some(session))
        })
        .collect();
    if ctx.format == Format::Json {
        return output::emit_json(&SnapshotsReport {
            version: JSON_VERSION,
            snapshots: shown.into_iter().map(SnapshotRow::from).collect(),
        })
        .into_diagnostic();
    }
    let mut text = String::new();
    if shown.is_empty() {
        text.push_str("no snapshots of the files yet (`checkpoint snapshot` takes one)\n");
    }
    for record in shown {
        text.push_str(&output::snapshots::row(record));
        text.push('\n');
    }
    output::emit_human(ctx.color, &text).into_diagnostic()
}

/// `checkpoint diff --files <from> [<to>]`.
pub(crate) fn diff(ctx: &Ctx, from: &str, to: Option<&str>, stat_only: bool) -> Result<()> {
    let id = ctx.workflow_id()?;
    let entries = ctx.store.journal(&id)?.entries;
    let list = snapshots::list(&entries);
    let from = service::resolve(&entries, &list, from)?.commit.clone();
    let to_commit = to
        .map(|to| service::resolve(&entries, &list, to).map(|record| record.commit.clone()))
        .transpose()?;
    let snapshots = service::open(ctx, &id)?;
    // The working tree now: its tree written with the private index, no commit, no ref.
    let to_tree = match &to_commit {
        Some(commit) => commit.clone(),
        None => {
            service::tree_now(ctx, &snapshots)
                .map_err(|err| miette!("failed to read the working tree: {err}"))?
                .commit
        }
    };
    if ctx.format == Format::Json {
        let kinds = snapshots
            .kinds(&from, &to_tree)
            .map_err(|err| miette!("{err}"))?;
        let changes = snapshots
            .changes(&from, &to_tree)
            .map_err(|err| miette!("{err}"))?;
        let files = changes
            .iter()
            .map(|change| FileChangeRow {
                path: display(&change.path),
                change: kinds.get(&change.path).copied().unwrap_or("modified"),
                added: change.lines.map(|lines| lines.0),
                removed: change.lines.map(|lines| lines.1),
            })
            .collect();
        return output::emit_json(&FilesDiffReport {
            version: JSON_VERSION,
            from,
            to: to_commit,
            files,
        })
        .into_diagnostic();
    }
    let patch = snapshots
        .patch(&from, &to_tree, stat_only)
        .map_err(|err| miette!("{err}"))?;
    if patch.is_empty() {
        return output::emit("no file changed\n").into_diagnostic();
    }
    output::emit(&String::from_utf8_lossy(&patch)).into_diagnostic()
}

/// `checkpoint undo`.
pub(crate) fn undo(ctx: &Ctx, args: &UndoArgs) -> Result<()> {
    let id = ctx.workflow_id()?;
    let entries = ctx.store.journal(&id)?.entries;
    let list = snapshots::list(&entries);
    let target = match &args.to {
        Some(to) => service::resolve(&entries, &list, to)?.commit.clone(),
        None => default_target(ctx, &id, &entries, &list)?,
    };
    let snapshots = service::open(ctx, &id)?;
    let paths = service::top_relative(ctx, &snapshots, &args.paths);
    run_restore(
        ctx,
        &id,
        &entries,
        &list,
        RestoreKind::Undo,
        &target,
        &paths,
        args.dry_run,
        args.yes,
    )
}

/// The files of `rewind <point> --files`: put back as the snapshot at or before the journal
/// point the state goes back to, before the state's rewind is journaled.
pub(crate) fn rewind(ctx: &Ctx, point: &str, yes: bool) -> Result<()> {
    let id = ctx.workflow_id()?;
    let entries = ctx.store.journal(&id)?.entries;
    let list = snapshots::list(&entries);
    let seq = match point.parse::<u64>() {
        Ok(seq) => seq,
        Err(_) => checkpoint_core::history::before_last_start(
            &entries,
            &checkpoint_core::PhaseId::new(point)?,
        )?,
    };
    let target = service::resolve(&entries, &list, &seq.to_string())?
        .commit
        .clone();
    run_restore(
        ctx,
        &id,
        &entries,
        &list,
        RestoreKind::Undo,
        &target,
        &[],
        false,
        yes,
    )
}

/// `checkpoint redo`: puts back the tree the last undo replaced.
pub(crate) fn redo(ctx: &Ctx, args: &RedoArgs) -> Result<()> {
    let id = ctx.workflow_id()?;
    let entries = ctx.store.journal(&id)?.entries;
    let list = snapshots::list(&entries);
    let last = snapshots::last_restore(&entries).filter(|last| last.kind == RestoreKind::Undo);
    let Some(last) = last else {
        return Err(Failure::new(
            "checkpoint::files::nothing_to_redo",
            "nothing to redo: the last restore of the files was not an undo".to_owned(),
        )
        .with_help(
            "`checkpoint snapshots` lists the snapshots; `checkpoint undo --to <snapshot>` puts one back",
        )
        .into());
    };
    let paths: Vec<PathBuf> = last.paths.iter().map(PathBuf::from).collect();
    run_restore(
        ctx,
        &id,
        &entries,
        &list,
        RestoreKind::Redo,
        &last.before,
        &paths,
        args.dry_run,
        args.yes,
    )
}

/// What `undo` with no target goes back to: the latest snapshot, taken for a turn or by hand
/// rather than before a restore, whose tree differs from the tree now; after an undo that
/// nothing followed, an earlier one than that undo's.
fn default_target(
    ctx: &Ctx,
    id: &WorkflowId,
    entries: &[Entry],
    list: &[SnapshotRecord],
) -> Result<String> {
    let snapshots = service::open(ctx, id)?;
    let now = service::tree_now(ctx, &snapshots)
        .map_err(|err| miette!("failed to read the working tree: {err}"))?
        .commit;
    let tree = |commit: &str| {
        snapshots
            .repo
            .git()
            .args(["rev-parse", &format!("{commit}^{{tree}}")])
            .text()
            .unwrap_or_default()
    };
    let mut before = u64::MAX;
    if let Some(last) = snapshots::last_restore(entries)
        && tree(&last.target) == now
        && let Some(record) = list.iter().find(|record| record.commit == last.target)
    {
        before = record.n;
    }
    list.iter()
        .rev()
        .filter(|record| record.reason != SnapshotReason::BeforeRestore && record.n < before)
        .find(|record| tree(&record.commit) != now)
        .map(|record| record.commit.clone())
        .ok_or_else(|| {
            miette!(
                help = "`checkpoint snapshots` lists the snapshots",
                "no earlier snapshot differs from the files now: nothing to undo"
            )
        })
}

/// Shows the restore, asks on a terminal unless `yes`, then makes it.
#[expect(
    clippy::too_many_arguments,
    reason = "one call site each for undo and redo"
)]
fn run_restore(
    ctx: &Ctx,
    id: &WorkflowId,
    entries: &[Entry],
    list: &[SnapshotRecord],
    kind: RestoreKind,
    target: &str,
    paths: &[PathBuf],
    dry_run: bool,
    yes: bool,
) -> Result<()> {
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let ask = !dry_run && !yes && interactive && ctx.format != Format::Json;
    let mut restore = Restore {
        kind,
        target,
        paths,
        dry_run: dry_run || ask,
        known: known(entries, list),
        session_id: None,
    };
    let mut restored = service::restore(ctx, id, &restore)?;
    if ask {
        output::emit_human(ctx.color, &plan_text(list, target, &restored, true, kind))
            .into_diagnostic()?;
        if restored.steps.is_empty() {
            return Ok(());
        }
        let answer = output::ask("Put these files back? [y/N] ")?;
        if !answer.trim().eq_ignore_ascii_case("y") {
            return output::emit("nothing changed\n").into_diagnostic();
        }
        restore.dry_run = false;
        restored = service::restore(ctx, id, &restore)?;
    }
    for (path, why) in &restored.failed {
        output::warn(&format!(
            "`{}` was not put back: {why}",
            output::escape(path)
        ));
    }
    if ctx.format == Format::Json {
        return output::emit_json(&report(list, target, &restored, restore.dry_run))
            .into_diagnostic();
    }
    output::emit_human(
        ctx.color,
        &plan_text(list, target, &restored, restore.dry_run, kind),
    )
    .into_diagnostic()
}

/// The commit the files were last known to match: the target of a whole-tree restore made after
/// the last snapshot, else the last snapshot.
fn known(entries: &[Entry], list: &[SnapshotRecord]) -> Option<String> {
    let last = list.last();
    match snapshots::last_restore(entries) {
        Some(restore)
            if restore.paths.is_empty() && last.is_none_or(|last| last.seq < restore.seq) =>
        {
            Some(restore.target)
        }
        _ => last.map(|last| last.commit.clone()),
    }
}

/// The JSON document of an undo or redo.
fn report(list: &[SnapshotRecord], target: &str, restored: &Restored, dry_run: bool) -> UndoReport {
    let rows = |pairs: &mut dyn Iterator<Item = (String, String)>| {
        pairs
            .map(|(path, why)| LeftOutRow { path, why })
            .collect::<Vec<_>>()
    };
    UndoReport {
        version: JSON_VERSION,
        dry_run,
        before: restored.before.clone(),
        target: target.to_owned(),
        target_n: number_of(list, target),
        files: restored
            .steps
            .iter()
            .map(|step| UndoFileRow {
                path: display(&step.path),
                action: step.action.as_str(),
                unsnapshotted: restored.unsnapshotted.contains(&step.path),
            })
            .collect(),
        failed: rows(&mut restored.failed.iter().cloned()),
        left_alone: rows(
            &mut restored
                .left_out
                .iter()
                .map(|left| (display(&left.path), left.why.clone())),
        ),
    }
}

/// The snapshot number of a commit.
fn number_of(list: &[SnapshotRecord], commit: &str) -> Option<u64> {
    list.iter()
        .rev()
        .find(|record| record.commit == commit)
        .map(|record| record.n)
}

/// What a restore did or would do, in words.
fn plan_text(
    list: &[SnapshotRecord],
    target: &str,
    restored: &Restored,
    dry_run: bool,
    kind: RestoreKind,
) -> String {
    let after = match kind {
        RestoreKind::Undo => "`checkpoint redo` reverses it",
        RestoreKind::Redo => "the undo is reversed",
    };
    let name = number_of(list, target).map_or_else(|| short(target), |n| format!("@{n}"));
    let mut text = match (dry_run, restored.steps.len()) {
        (_, 0) => format!("the files are already as snapshot {name} kept them\n"),
        (true, n) => format!(
            "would put back {} as snapshot {name} kept them:\n",
            output::count(n, "file")
        ),
        (false, n) => format!(
            "put back {} as snapshot {name} kept them ({after}):\n",
            output::count(n, "file")
        ),
    };
    for step in &restored.steps {
        let mut line = format!(
            "  {:<6} {}",
            step.action.as_str(),
            output::escape(&display(&step.path))
        );
        if restored.unsnapshotted.contains(&step.path) {
            line.push_str("  (changed since the last snapshot: kept by the undo's own snapshot)");
        }
        text.push_str(&line);
        text.push('\n');
    }
    for left in &restored.left_out {
        text.push_str(&format!(
            "  left alone: {} ({})\n",
            output::escape(&display(&left.path)),
            left.why
        ));
    }
    text
}

/// A commit's short form.
fn short(commit: &str) -> String {
    commit.chars().take(12).collect()
}
