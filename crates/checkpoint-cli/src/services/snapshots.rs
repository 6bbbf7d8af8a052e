//! Snapshots of the working tree as the commands and hooks use them: one taken and journaled
//! (`FilesSnapshot`, attributed to its phase, session and agent), a target resolved to its
//! snapshot, and files put back from one after a snapshot of the tree as it is
//! (`FilesRestore`).

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    time::Instant,
};

use checkpoint_core::{
    PhaseId, PhaseStatus, RestoreKind, SnapshotReason, Transition, Workflow, WorkflowId,
    journal::Entry,
    snapshots::{self, FileTally, MAX_PATHS, SnapshotRecord, Target},
    store::{JOURNAL_FILE, Loaded},
};
use miette::{Result, miette};

use checkpoint_contract::diagnostic;

use crate::{
    ctx::Ctx,
    failure::Failure,
    output,
    services::store_write,
    snapshot::{Changed, LeftOut, SnapshotOptions, Snapshots, Step, Taken, display},
};

/// Who asks for a snapshot, and why.
pub(crate) struct Request {
    pub(crate) reason: SnapshotReason,
    pub(crate) label: Option<String>,
    pub(crate) session_id: Option<String>,
    pub(crate) agent_id: Option<String>,
    /// The phase it belongs to; else the phase the agent holds, or the one in progress.
    pub(crate) phase: Option<PhaseId>,
    /// When a hook must stop adding files.
    pub(crate) deadline: Option<Instant>,
}

/// A snapshot taken.
pub(crate) struct Recorded {
    pub(crate) taken: Taken,
    /// The workflow after the snapshot's entry, when one was journaled (a new snapshot).
    pub(crate) after: Option<Loaded>,
}

/// The snapshots of workflow `id` in the project, which must be a git working tree.
pub(crate) fn open(ctx: &Ctx, id: &WorkflowId) -> Result<Snapshots> {
    Snapshots::open(&ctx.project_root, id)
        .map_err(|err| miette!("{err}"))?
        .ok_or_else(|| {
            miette!(
                help = "run `git init` in the project: snapshots are git objects",
                "`{}` is in no git working tree, so its files have no snapshots",
                ctx.project_root.display()
            )
        })
}

/// Takes a snapshot of the working tree for workflow `id` and journals it when it is new.
pub(crate) fn take(ctx: &Ctx, id: &WorkflowId, request: Request) -> Result<Recorded> {
    let snapshots = open(ctx, id)?;
    take_with(ctx, id, &snapshots, request)
}

/// Like [`take`], outside git: nothing (a hook's case).
pub(crate) fn take_if_git(
    ctx: &Ctx,
    id: &WorkflowId,
    request: Request,
) -> Result<Option<Recorded>> {
    match Snapshots::open(&ctx.project_root, id).map_err(|err| miette!("{err}"))? {
        Some(snapshots) => take_with(ctx, id, &snapshots, request).map(Some),
        None => Ok(None),
    }
}

fn take_with(
    ctx: &Ctx,
    id: &WorkflowId,
    snapshots: &Snapshots,
    request: Request,
) -> Result<Recorded> {
    let message = format!(
        "checkpoint snapshot: {}\n\nWorkflow: {id}\n",
        request.reason
    );
    let mut after = None;
    let taken = snapshots
        .take(&SnapshotOptions {
            store: ctx.store.root(),
            project_root: &ctx.project_root,
            max_file_bytes: ctx.config.files.max_file_bytes,
            message: &message,
            deadline: request.deadline,
            commit: true,
            date: Some(ctx.now.timestamp()),
        })
        .map_err(|err| miette!("failed to snapshot the files: {err}"))?;
    if taken.unfinished {
        output::warn(
            "the snapshot of the files was cut short at the hook's time bound; the next snapshot finishes it",
        );
    }
    if taken.created {
        for left in taken.left_out.iter().take(MAX_PATHS) {
            output::warn(&format!(
                "`{}` was left out of the snapshot: {}",
                output::escape(&display(&left.path)),
                left.why
            ));
        }
        let transition = |workflow: &Workflow| Transition::FilesSnapshot {
            commit: taken.commit.clone(),
            reason: request.reason,
            label: request.label.clone(),
            phase: request
                .phase
                .clone()
                .or_else(|| phase_of(workflow, request.agent_id.as_deref())),
            session_id: request.session_id.clone(),
            agent_id: request.agent_id.clone(),
            files_changed: taken.changed.len() as u64,
            paths: paths(&taken.changed),
            added: taken
                .changed
                .iter()
                .filter_map(|c| c.lines)
                .map(|l| l.0)
                .sum(),
            removed: taken
                .changed
                .iter()
                .filter_map(|c| c.lines)
                .map(|l| l.1)
                .sum(),
            left_out: taken
                .left_out
                .iter()
                .take(MAX_PATHS)
                .map(|left| display(&left.path))
                .collect(),
        };
        after = Some(
            ctx.store
                .update(id, ctx.now, |workflow| Ok(vec![transition(workflow)]))?,
        );
    }
    Ok(Recorded { taken, after })
}

/// The snapshot of a phase's completion (`checkpoint complete`); an error is a warning, the
/// phase stays complete. Returns the workflow after the snapshot's entry, when it journaled one:
/// the document a command prints describes the state after all of its writes.
pub(crate) fn at_completion(ctx: &Ctx, id: &WorkflowId, phase: &PhaseId) -> Option<Loaded> {
    if !ctx.config.files.snapshots {
        return None;
    }
    let request = Request {
        reason: SnapshotReason::PhaseComplete,
        label: None,
        session_id: None,
        agent_id: None,
        phase: Some(phase.clone()),
        deadline: None,
    };
    match take_if_git(ctx, id, request) {
        Ok(recorded) => recorded.and_then(|recorded| recorded.after),
        Err(err) => {
            output::warn(&format!(
                "no snapshot of the files at `{phase}`'s completion: {err}"
            ));
            None
        }
    }
}

/// Removes the snapshot refs (and private indexes) of the workflows whose last archive `gc`
/// deleted, so that git can prune the objects only they held; a workflow of the same id still
/// in the store, or archived, keeps them. An error is a warning.
pub(crate) fn forget_deleted(ctx: &Ctx, doomed: &[checkpoint_core::retention::Doomed]) {
    let Ok(archives) = ctx.store.list_archives() else {
        return;
    };
    let live = ctx.store.list().unwrap_or_default();
    let id_of = |name: &str| name.get(..name.len().saturating_sub(16)).map(str::to_owned);
    let mut ids: Vec<String> = doomed
        .iter()
        .filter_map(|victim| id_of(&victim.archive.name))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let kept = live.iter().any(|live| live.as_str() == id)
            || archives
                .iter()
                .any(|(_, archive)| id_of(&archive.name).as_deref() == Some(id.as_str()));
        let Ok(id) = WorkflowId::new(&id) else {
            continue;
        };
        if kept {
            continue;
        }
        if let Ok(Some(snapshots)) = Snapshots::open(&ctx.project_root, &id)
            && let Err(err) = snapshots.forget()
        {
            output::warn(&format!("the snapshots of `{id}` are kept: {err}"));
        }
    }
}

/// The files changed per phase, session and agent, from workflow `id`'s snapshot entries. Only
/// their lines are parsed (see [`for_each_snapshot_line`]). Empty when the journal cannot be
/// read.
pub(crate) fn file_tally(ctx: &Ctx, id: &WorkflowId) -> FileTally {
    let mut tally = FileTally::default();
    for_each_snapshot_line(ctx, id, |line| {
        if let Ok(entry) = serde_json::from_slice::<Entry>(line) {
            tally.observe(&entry);
        }
    });
    tally
}

/// The last snapshot of workflow `id` whose commit is `commit`, numbered as `checkpoint
/// snapshots` lists it; only its line is parsed, so that a snapshot costs a read of the
/// journal, not the parse of every entry. None when the journal cannot be read or has none.
pub(crate) fn record_of(ctx: &Ctx, id: &WorkflowId, commit: &str) -> Option<SnapshotRecord> {
    let needle = format!(r#""commit":"{commit}""#);
    let mut n = 0;
    let mut last: Option<(u64, Vec<u8>)> = None;
    for_each_snapshot_line(ctx, id, |line| {
        n += 1;
        if !commit.is_empty()
            && line
                .windows(needle.len())
                .any(|window| window == needle.as_bytes())
        {
            last = Some((n, line.to_vec()));
        }
    });
    let (n, line) = last?;
    let entry = serde_json::from_slice::<Entry>(&line).ok()?;
    let mut record = snapshots::list(std::slice::from_ref(&entry)).pop()?;
    record.n = n;
    Some(record)
}

/// Calls `each` with every line of workflow `id`'s journal that is a snapshot of the files,
/// in order, unparsed: a line's start names its transition (`{"seq":…,"at":"…","transition":
/// {"op":"files_snapshot",…`, the mark in its first hundred bytes; a JSON string cannot hold
/// it, its quotes being escaped there).
fn for_each_snapshot_line(ctx: &Ctx, id: &WorkflowId, mut each: impl FnMut(&[u8])) {
    use std::io::BufRead;
    const MARK: &[u8] = br#""op":"files_snapshot""#;
    let path = ctx.store.workflow_dir(id).join(JOURNAL_FILE);
    let Ok(file) = std::fs::File::open(&path) else {
        return;
    };
    let mut reader = std::io::BufReader::new(file);
    let mut line = Vec::new();
    while reader
        .read_until(b'\n', &mut line)
        .is_ok_and(|read| read > 0)
    {
        let head = &line[..line.len().min(128)];
        if head.windows(MARK.len()).any(|window| window == MARK) {
            each(&line);
        }
        line.clear();
    }
}

/// The most changed paths a session's context or a resume prompt names.
const MAX_NAMED: usize = 20;

/// The files changed since the last snapshot of workflow `id` (outside any session, or by a
/// session that died before its turn ended): the tree is written with the private index, no
/// commit, no ref. Empty outside git, with no snapshot yet, or on an error.
pub(crate) fn unsnapshotted(ctx: &Ctx, id: &WorkflowId) -> Vec<String> {
    changed_since(ctx, id, &[])
        .map(|changed| changed.unsnapshotted)
        .unwrap_or_default()
}

/// What `resume` says about the files: those changed since the last snapshot, and those each
/// phase in progress changed since it started.
pub(crate) struct ChangedSince {
    /// Changed since the last snapshot, by no turn's end (a session that died, or a person).
    pub(crate) unsnapshotted: Vec<String>,
    /// For each phase asked about, the files changed from the last snapshot taken before its
    /// start (HEAD's files when none was) to the files now.
    pub(crate) phases: Vec<(PhaseId, Vec<Changed>)>,
}

/// The files changed since the last snapshot of workflow `id`, and since each of `phases`
/// started (`(phase, when it started)`); none outside git, with no snapshot yet, or on an
/// error. The journal is not read: a phase's start is found on the snapshots' ref by time.
pub(crate) fn changed_since(
    ctx: &Ctx,
    id: &WorkflowId,
    phases: &[(PhaseId, chrono::DateTime<chrono::Utc>)],
) -> Option<ChangedSince> {
    let snapshots = Snapshots::open(&ctx.project_root, id).ok()??;
    let (last, _) = snapshots.last().ok()??;
    let now = tree_now(ctx, &snapshots).ok()?;
    let unsnapshotted = snapshots
        .changes(&last, &now.commit)
        .ok()?
        .iter()
        .map(|change| display(&change.path))
        .collect();
    let mut changed = Vec::new();
    for (phase, started) in phases {
        let since = snapshots
            .before(*started)
            .unwrap_or_else(|| snapshots.head_tree());
        if let Ok(files) = snapshots.changes(&since, &now.commit) {
            changed.push((phase.clone(), files));
        }
    }
    Some(ChangedSince {
        unsnapshotted,
        phases: changed,
    })
}

/// The working tree as a snapshot would hold it, written with the private index but neither
/// committed nor journaled (`commit` is its tree): what `diff --files`, a dry run and the files
/// changed since the last snapshot compare against.
pub(crate) fn tree_now(ctx: &Ctx, snapshots: &Snapshots) -> Result<Taken, String> {
    snapshots.take(&SnapshotOptions {
        store: ctx.store.root(),
        project_root: &ctx.project_root,
        max_file_bytes: ctx.config.files.max_file_bytes,
        message: "",
        deadline: None,
        commit: false,
        date: None,
    })
}

/// The lines of a prompt that name the files changed since the last snapshot.
pub(crate) fn changed_text(paths: &[String]) -> String {
    if paths.is_empty() {
        return String::new();
    }
    let mut text = format!(
        "\nFiles changed since the last snapshot of the files (outside any session, or by a session that ended before its turn did): {}. `checkpoint diff --files @<n>` shows them; `checkpoint undo --dry-run` what an undo would put back.\n",
        output::count(paths.len(), "file")
    );
    for path in paths.iter().take(MAX_NAMED) {
        text.push_str(&format!("- `{}`\n", output::escape(path)));
    }
    if paths.len() > MAX_NAMED {
        text.push_str(&format!("- … and {} more\n", paths.len() - MAX_NAMED));
    }
    text
}

/// The first changed paths, for a journal entry.
fn paths(changed: &[Changed]) -> Vec<String> {
    changed
        .iter()
        .take(MAX_PATHS)
        .map(|change| display(&change.path))
        .collect()
}

/// The phase a snapshot belongs to: the one `agent` holds, else the only one in progress, else
/// the first in progress.
pub(crate) fn phase_of(workflow: &Workflow, agent: Option<&str>) -> Option<PhaseId> {
    let in_progress = || {
        workflow
            .phases
            .iter()
            .filter(|phase| phase.status == PhaseStatus::InProgress)
    };
    agent
        .and_then(|agent| {
            in_progress().find(|phase| {
                phase
                    .holder
                    .as_ref()
                    .and_then(|holder| holder.agent_id.as_deref())
                    == Some(agent)
            })
        })
        .or_else(|| in_progress().next())
        .map(|phase| phase.id.clone())
}

/// The snapshot `text` names among the workflow's.
pub(crate) fn resolve<'a>(
    entries: &[Entry],
    list: &'a [SnapshotRecord],
    text: &str,
) -> Result<&'a SnapshotRecord> {
    let target: Target = text.parse().map_err(|err: String| {
        Failure::new(diagnostic::FILES_BAD_TARGET, err).with_help(
            "name a snapshot (`@3`), a phase (its completion; `<phase>^` its start) or a journal sequence number",
        )
    })?;
    snapshots::resolve(entries, list, &target).map_err(|err| {
        Failure::new(diagnostic::FILES_NO_SNAPSHOT, err)
            .with_help("`checkpoint snapshots` lists them; `checkpoint snapshot` takes one")
            .into()
    })
}

/// A restore to make: where to, which paths, and whether only to show it.
pub(crate) struct Restore<'a> {
    pub(crate) kind: RestoreKind,
    /// The commit whose files come back.
    pub(crate) target: &'a str,
    /// Paths relative to the top directory; all when empty.
    pub(crate) paths: &'a [PathBuf],
    pub(crate) dry_run: bool,
    /// The commit the files were last known to match (the last snapshot, or the last restore's
    /// target): what differs from it now is an edit no snapshot held.
    pub(crate) known: Option<String>,
    /// The session asking, for the journal.
    pub(crate) session_id: Option<String>,
}

/// What a restore did, or would do.
pub(crate) struct Restored {
    /// The snapshot of the tree taken first (a tree only, in a dry run).
    pub(crate) before: String,
    pub(crate) steps: Vec<Step>,
    /// Paths changed since the last snapshot: edits no snapshot held before this one.
    pub(crate) unsnapshotted: BTreeSet<Vec<u8>>,
    /// Paths it could not change, with why.
    pub(crate) failed: Vec<(String, String)>,
    /// Changed files the snapshot left out, which the restore leaves alone.
    pub(crate) left_out: Vec<LeftOut>,
}

/// Puts back the files of `restore.target`: first a snapshot of the tree as it is (so that
/// `redo` can reverse it), then each file, then the journal entry.
pub(crate) fn restore(ctx: &Ctx, id: &WorkflowId, restore: &Restore<'_>) -> Result<Restored> {
    let snapshots = open(ctx, id)?;
    let (before, left_out) = if restore.dry_run {
        let taken = tree_now(ctx, &snapshots)
            .map_err(|err| miette!("failed to snapshot the files: {err}"))?;
        (taken.commit, taken.left_out)
    } else {
        let recorded = take(
            ctx,
            id,
            Request {
                reason: SnapshotReason::BeforeRestore,
                label: None,
                session_id: restore.session_id.clone(),
                agent_id: None,
                phase: None,
                deadline: None,
            },
        )?;
        (recorded.taken.commit, recorded.taken.left_out)
    };
    let unsnapshotted = match &restore.known {
        Some(commit) => snapshots
            .changes(commit, &before)
            .map_err(|err| miette!("{err}"))?
            .into_iter()
            .map(|change| change.path)
            .collect(),
        None => BTreeSet::new(),
    };
    let skip: BTreeSet<Vec<u8>> = left_out.iter().map(|left| left.path.clone()).collect();
    let steps = snapshots
        .restore_plan(
            &before,
            restore.target,
            restore.paths,
            ctx.store.root(),
            &skip,
        )
        .map_err(|err| miette!("{err}"))?;
    let mut restored = Restored {
        before,
        steps,
        unsnapshotted,
        failed: Vec::new(),
        left_out,
    };
    if restore.dry_run || restored.steps.is_empty() {
        return Ok(restored);
    }
    restored.failed = snapshots
        .restore(&restored.steps)
        .map_err(|err| miette!("failed to put the files back: {err}"))?;
    store_write::update(ctx, id, |_| {
        Ok(vec![Transition::FilesRestore {
            kind: restore.kind,
            before: restored.before.clone(),
            target: restore.target.to_owned(),
            paths: restore
                .paths
                .iter()
                .map(|path| path.display().to_string())
                .collect(),
            files: restored.steps.len() as u64,
        }])
    })?;
    Ok(restored)
}

/// `paths` given on the command line (relative to the current directory) relative to the top
/// directory of the working tree.
pub(crate) fn top_relative(ctx: &Ctx, snapshots: &Snapshots, paths: &[PathBuf]) -> Vec<PathBuf> {
    let top = std::fs::canonicalize(&snapshots.repo.top).unwrap_or(snapshots.repo.top.clone());
    paths
        .iter()
        .map(|path| {
            let full = ctx.cwd.join(path);
            let full = lexical(&full);
            let full = std::fs::canonicalize(full.parent().unwrap_or(&full))
                .map(|parent| parent.join(full.file_name().unwrap_or_default()))
                .unwrap_or(full);
            full.strip_prefix(&top)
                .map(Path::to_path_buf)
                .unwrap_or_else(|_| path.clone())
        })
        .collect()
}

/// `path` with `.` and `..` resolved without the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
