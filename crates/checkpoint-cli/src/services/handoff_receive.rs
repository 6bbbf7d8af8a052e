//! `checkpoint pull --session`: a session sent from another machine put in place here. The
//! remote is input from outside: the hand-off is checked whole before anything is written (a
//! session id that names no other file, sizes read before contents, every path inside the
//! checkout, never into `.git`, never through a symbolic link, links that stay inside), then
//! HEAD is verified, a local change in the way is refused unless `--force`, the files are
//! written after an undo snapshot, and the transcript goes only into this checkout's project
//! directory of the client, never over another session's.

use std::{
    collections::BTreeMap,
    fs,
    path::{Component, Path, PathBuf},
};

use checkpoint_core::{RestoreKind, WorkflowId};
use miette::Result;

use crate::{
    ctx::Ctx,
    failure::Failure,
    output,
    remote::{
        Repo,
        session::{
            Difference, EMPTY_TREE, HANDOFF_BLOB, SUBAGENTS_TREE, TRANSCRIPT_BLOB, WORK_TREE,
            handoff_damaged, session_ref, tracking_session_prefix,
        },
    },
    services::{
        handoff::{HandoffDoc, human_bytes, subagent_name},
        snapshots, transcript,
    },
};

/// The largest `handoff.json` read.
const MAX_DOC_BYTES: u64 = 64 << 10;
/// The longest symbolic link target taken.
const MAX_LINK_BYTES: u64 = 4096;

/// What `pull --session` was asked.
pub(crate) struct Receive<'a> {
    /// The session; the one the workflow's last hand-off names when `None`.
    pub session: Option<&'a str>,
    /// Write over local uncommitted changes to the same files (kept in the undo snapshot).
    pub force: bool,
}

/// A hand-off read and checked, nothing written yet.
struct Checked {
    doc: HandoffDoc,
    base_tree: String,
    work: String,
    files: Vec<Difference>,
    transcript: Vec<u8>,
    subagents: Vec<(String, Vec<u8>)>,
}

/// Puts the session of workflow `id` sent to `remote` in place here; returns what to say.
pub(crate) fn receive(
    ctx: &Ctx,
    remote: &str,
    id: &WorkflowId,
    receive: &Receive<'_>,
) -> Result<String> {
    let session = match receive.session {
        Some(session) => session.to_owned(),
        None => ctx
            .store
            .load(id)?
            .workflow
            .handoff
            .map(|handoff| handoff.session_id)
            .ok_or_else(|| {
                Failure::new(
                    "checkpoint::session::none",
                    format!("no session of `{id}` was sent to `{remote}`"),
                )
                .with_help("send one from the other machine: `checkpoint push --session`")
            })?,
    };
    transcript::check_id(&session, "the session to pull")?;
    let repo = Repo::new(&ctx.project_root);
    let refname = session_ref(id, &session);
    if !repo.fetch_handoff(remote, &format!("{id}/{session}"))? {
        return Err(Failure::new(
            "checkpoint::session::not_on_remote",
            format!("`{remote}` has no session {session} of `{id}` (`{refname}`)"),
        )
        .with_help("send it from the machine that ran it: `checkpoint push --session`")
        .into());
    }
    let tracked = format!("{}{id}/{session}", tracking_session_prefix(remote));
    let checked = check(ctx, &repo, remote, &refname, &tracked, id, &session)?;

    // HEAD: the work sits on the commit it was taken on.
    let head = repo.head()?;
    if head.as_deref().unwrap_or_default() != checked.doc.base {
        let base = &checked.doc.base;
        return Err(Failure::new(
            "checkpoint::session::other_head",
            format!(
                "the session's work sits on the commit {}, and HEAD here is {}: nothing was written",
                output::short_sha(base),
                head.as_deref().map_or("no commit", output::short_sha)
            ),
        )
        .with_help(format!(
            "the commit came with the session: check it out (`git switch --detach {base}`, or `git merge --ff-only {base}` on your branch), then `checkpoint pull --workflow {id} --session {session}` again"
        ))
        .into());
    }

    let changed = place_files(ctx, &repo, id, &session, &checked, receive.force)?;
    let dest = place_transcript(ctx, &session, &checked)?;
    let doc = &checked.doc;
    Ok(format!(
        "`{id}`: session {session} from {} on {} ({}): {}; transcript at `{}` ({})\ngo on with: claude --resume {session}",
        output::escape(&doc.user),
        output::escape(&doc.machine),
        output::escape(&doc.at),
        changed,
        dest.display(),
        human_bytes(checked.transcript.len() as u64)
    ))
}

/// Reads and checks the hand-off at `tracked`; nothing is written.
fn check(
    ctx: &Ctx,
    repo: &Repo,
    remote: &str,
    refname: &str,
    tracked: &str,
    id: &WorkflowId,
    session: &str,
) -> Result<Checked> {
    let damaged = |what: &str| handoff_damaged(remote, refname, what);
    let blob_size = |path: &str| -> Result<Option<u64>> {
        match repo.object_info(&format!("{tracked}:{path}"))? {
            None => Ok(None),
            Some((kind, size)) if kind == "blob" => Ok(Some(size)),
            Some((kind, _)) => Err(damaged(&format!("its `{path}` is a {kind}"))),
        }
    };
    match repo.object_info(tracked)? {
        Some((kind, _)) if kind == "commit" => {}
        other => {
            return Err(damaged(&format!(
                "it is a {}, not a commit",
                other.map_or("missing object".into(), |(kind, _)| kind)
            )));
        }
    }
    let doc_size = blob_size(HANDOFF_BLOB)?.ok_or_else(|| damaged("it has no `handoff.json`"))?;
    if doc_size > MAX_DOC_BYTES {
        return Err(damaged(&format!("its `handoff.json` is {doc_size} bytes")));
    }
    let doc: HandoffDoc = serde_json::from_slice(&repo.blob(&format!("{tracked}:{HANDOFF_BLOB}"))?)
        .map_err(|err| damaged(&format!("its `handoff.json` does not parse: {err}")))?;
    if doc.session_id != session || doc.workflow != id.as_str() {
        return Err(damaged(
            "its `handoff.json` names another session or workflow",
        ));
    }
    let base_ok = doc.base.is_empty()
        || (doc.base.len() == 40 && doc.base.chars().all(|c| c.is_ascii_hexdigit()));
    if !base_ok {
        return Err(damaged("its base commit is not a commit id"));
    }
    let parent = repo.object_info(&format!("{tracked}^1"))?;
    let parent_id = match parent {
        Some(_) => repo.resolve(&format!("{tracked}^1"))?,
        None => String::new(),
    };
    if parent_id != doc.base {
        return Err(damaged("its base commit is not the commit it sits on"));
    }

    // Sizes first, then contents.
    let limit = ctx.config.sync.session_max_bytes;
    let size = blob_size(TRANSCRIPT_BLOB)?.ok_or_else(|| damaged("it has no transcript"))?;
    transcript::refuse_oversized(size, limit, &format!("{remote}:{refname}"))?;
    let mut total = size;
    let mut subagent_entries = Vec::new();
    if repo
        .object_info(&format!("{tracked}:{SUBAGENTS_TREE}"))?
        .is_some()
    {
        for entry in repo.tree_entries(&format!("{tracked}:{SUBAGENTS_TREE}"))? {
            let name = String::from_utf8_lossy(&entry.path).into_owned();
            if entry.mode != "100644" || !subagent_name(&name) {
                return Err(damaged(&format!(
                    "`subagents/{}` is not a sub-agent's transcript",
                    output::escape(&name)
                )));
            }
            let (_, size) = repo
                .object_info(&entry.object)?
                .ok_or_else(|| damaged("a sub-agent's file is missing"))?;
            total += size;
            subagent_entries.push((name, entry.object));
        }
    }
    transcript::refuse_oversized(total, limit, &format!("{remote}:{refname}"))?;

    let base_tree = if doc.base.is_empty() {
        EMPTY_TREE.to_owned()
    } else {
        repo.resolve(&format!("{}^{{tree}}", doc.base))?
    };
    let work = match repo.object_info(&format!("{tracked}:{WORK_TREE}"))? {
        Some((kind, _)) if kind == "tree" => repo.resolve(&format!("{tracked}:{WORK_TREE}"))?,
        Some((kind, _)) => return Err(damaged(&format!("its `work` is a {kind}"))),
        None => EMPTY_TREE.to_owned(),
    };
    let files = repo.differences(&base_tree, &work)?;
    for file in &files {
        check_path(&file.path).map_err(|why| damaged(&why))?;
        match (file.status, file.new_mode.as_str()) {
            ('D', _) | (_, "100644" | "100755") => {}
            (_, "120000") => check_link(repo, file).map_err(|why| damaged(&why))?,
            (_, mode) => {
                return Err(damaged(&format!(
                    "`{}` has the mode {mode}, which no snapshot writes",
                    output::escape(&String::from_utf8_lossy(&file.path))
                )));
            }
        }
    }
    let transcript = repo.blob(&format!("{tracked}:{TRANSCRIPT_BLOB}"))?;
    let subagents = subagent_entries
        .into_iter()
        .map(|(name, object)| repo.blob(&object).map(|bytes| (name, bytes)))
        .collect::<Result<_>>()?;
    Ok(Checked {
        doc,
        base_tree,
        work,
        files,
        transcript,
        subagents,
    })
}

/// A path of the snapshot, refused unless it is a plain relative path outside `.git`.
fn check_path(path: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(path);
    let bad = |why: &str| Err(format!("the path `{}` {why}", output::escape(&text)));
    if path.is_empty() || path.contains(&0) || path.contains(&b'\\') {
        return bad("is not a file's path");
    }
    for component in Path::new(&*text).components() {
        match component {
            Component::Normal(name) => {
                if name.to_string_lossy().eq_ignore_ascii_case(".git") {
                    return bad("goes into `.git`");
                }
            }
            _ => return bad("leaves the checkout"),
        }
    }
    if text
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return bad("leaves the checkout");
    }
    Ok(())
}

/// A symbolic link of the snapshot, refused unless its target stays inside the checkout.
fn check_link(repo: &Repo, file: &Difference) -> Result<(), String> {
    let path = String::from_utf8_lossy(&file.path).into_owned();
    let size = repo
        .object_info(&file.new_object)
        .ok()
        .flatten()
        .map_or(u64::MAX, |(_, size)| size);
    if size > MAX_LINK_BYTES {
        return Err(format!("the link `{}` is too long", output::escape(&path)));
    }
    let target = repo.blob(&file.new_object).map_err(|err| err.to_string())?;
    let target = String::from_utf8_lossy(&target).into_owned();
    let mut depth: i64 = path.matches('/').count() as i64;
    let escapes = target.starts_with('/')
        || Path::new(&target).components().any(|component| {
            match component {
                Component::ParentDir => depth -= 1,
                Component::Normal(name) => {
                    if name.to_string_lossy().eq_ignore_ascii_case(".git") {
                        return true;
                    }
                    depth += 1;
                }
                Component::CurDir => {}
                _ => return true,
            }
            depth < 0
        });
    if escapes {
        return Err(format!(
            "the link `{}` points outside the checkout (`{}`)",
            output::escape(&path),
            output::escape(&target)
        ));
    }
    Ok(())
}

/// Writes the snapshot's files: refused when a path goes through a symbolic link here, or when
/// a local uncommitted change to the same file is in the way (unless `force`); an undo snapshot
/// is taken first. Returns what it did, in words.
fn place_files(
    ctx: &Ctx,
    repo: &Repo,
    id: &WorkflowId,
    session: &str,
    checked: &Checked,
    force: bool,
) -> Result<String> {
    if checked.files.is_empty() {
        return Ok("no uncommitted work".into());
    }
    let top = ctx.project_root.clone();
    for file in &checked.files {
        let relative = PathBuf::from(String::from_utf8_lossy(&file.path).into_owned());
        let mut at = top.clone();
        let parents: Vec<_> = relative
            .parent()
            .map(|p| p.components().collect())
            .unwrap_or_default();
        for component in parents {
            at.push(component);
            if fs::symlink_metadata(&at).is_ok_and(|meta| meta.file_type().is_symlink()) {
                return Err(Failure::new(
                    "checkpoint::session::through_link",
                    format!(
                        "`{}` would be written through the symbolic link `{}`: nothing was written",
                        relative.display(),
                        at.strip_prefix(&top).unwrap_or(&at).display()
                    ),
                )
                .with_help("move the link away, then pull again")
                .into());
            }
        }
    }
    // Local uncommitted changes to the same files.
    let snaps = snapshots::open(ctx, id)?;
    let now = snapshots::tree_now(ctx, &snaps).map_err(|err| miette::miette!("{err}"))?;
    let local: BTreeMap<Vec<u8>, String> = repo
        .differences(&checked.base_tree, &now.commit)?
        .into_iter()
        .map(|local| (local.path, local.new_object))
        .collect();
    let in_the_way: Vec<String> = checked
        .files
        .iter()
        .filter(|file| {
            local
                .get(&file.path)
                .is_some_and(|object| *object != file.new_object)
        })
        .map(|file| String::from_utf8_lossy(&file.path).into_owned())
        .collect();
    if !in_the_way.is_empty() && !force {
        return Err(Failure::new(
            "checkpoint::session::local_changes",
            format!(
                "uncommitted changes here to {} the session changed too: {}; nothing was written",
                output::count(in_the_way.len(), "file"),
                in_the_way
                    .iter()
                    .take(10)
                    .map(|path| format!("`{}`", output::escape(path)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .with_help("commit or stash them, or pull again with `--force` (they are kept in a snapshot: `checkpoint redo` puts them back)")
        .into());
    }
    let paths: Vec<PathBuf> = checked
        .files
        .iter()
        .map(|file| PathBuf::from(String::from_utf8_lossy(&file.path).into_owned()))
        .collect();
    for path in &paths {
        remove_stale_temps(&top.join(path));
    }
    let restored = snapshots::restore(
        ctx,
        id,
        &snapshots::Restore {
            kind: RestoreKind::Undo,
            target: &checked.work,
            paths: &paths,
            dry_run: false,
            known: None,
            session_id: Some(session.to_owned()),
        },
    )?;
    if let Some((path, why)) = restored.failed.first() {
        return Err(Failure::new(
            "checkpoint::session::write_failed",
            format!(
                "failed to write `{}`: {why} ({} not written)",
                output::escape(path),
                output::count(restored.failed.len(), "file")
            ),
        )
        .with_help("fix it, then pull again: what was there first is kept (`checkpoint redo`)")
        .into());
    }
    Ok(format!(
        "{} put in place{}",
        output::count(restored.steps.len(), "file"),
        if in_the_way.is_empty() {
            String::new()
        } else {
            format!(
                " over {} with local changes (`checkpoint redo` puts them back)",
                output::count(in_the_way.len(), "file")
            )
        }
    ))
}

/// Writes the transcript (and its sub-agents') into this checkout's project directory of the
/// client; an existing transcript of the same id is replaced only by a longer copy of itself.
fn place_transcript(ctx: &Ctx, session: &str, checked: &Checked) -> Result<PathBuf> {
    let dir = transcript::project_dir(&ctx.project_root)?;
    let dest = dir.join(format!("{session}.jsonl"));
    let new = &checked.transcript;
    remove_stale_temps(&dest);
    let write = match fs::symlink_metadata(&dest) {
        Err(_) => true,
        Ok(meta) if !meta.is_file() => {
            return Err(refuse_existing(&dest, "is not a file"));
        }
        Ok(_) => {
            let old = fs::read(&dest).unwrap_or_default();
            if old.starts_with(new) {
                false
            } else if new.starts_with(&old) {
                true
            } else {
                return Err(refuse_existing(&dest, "holds another conversation"));
            }
        }
    };
    let failed = |path: &Path, err: std::io::Error| {
        Failure::new(
            "checkpoint::session::write_failed",
            format!("failed to write `{}`: {err}", path.display()),
        )
    };
    for (name, bytes) in &checked.subagents {
        let path = dir.join(session).join("subagents").join(name);
        transcript::write_atomic(&path, bytes).map_err(|err| failed(&path, err))?;
    }
    if write {
        transcript::write_atomic(&dest, new).map_err(|err| failed(&dest, err))?;
    }
    Ok(dest)
}

/// The session `checkpoint run` continues first: the one handed over here, when its transcript
/// is in this checkout's project directory and no run session started since the hand-off.
pub(crate) fn to_resume(ctx: &Ctx, id: &WorkflowId, client: &str) -> Option<String> {
    let handoff = ctx.store.load(id).ok()?.workflow.handoff?;
    if handoff.client != client || transcript::check_id(&handoff.session_id, "").is_err() {
        return None;
    }
    let entries = ctx.store.journal(id).ok()?.entries;
    let last = |op: &str| {
        entries
            .iter()
            .rev()
            .find(|entry| entry.transition.op() == op)
            .map(|entry| entry.seq)
    };
    if last("run_session_start") > last("session_handoff") {
        return None;
    }
    let dir = transcript::project_dir(&ctx.project_root).ok()?;
    dir.join(format!("{}.jsonl", handoff.session_id))
        .is_file()
        .then_some(handoff.session_id)
}

/// Removes what a killed write of `path` left beside it (`.<name>.checkpoint-<pid>`).
fn remove_stale_temps(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let prefix = format!(".{}.checkpoint-", name.to_string_lossy());
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let stale = entry.file_name().to_string_lossy().starts_with(&prefix)
            && entry.file_type().is_ok_and(|kind| kind.is_file());
        if stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}

fn refuse_existing(dest: &Path, why: &str) -> miette::Report {
    Failure::new(
        "checkpoint::session::transcript_exists",
        format!(
            "`{}` {why}: the session's transcript was not written (the files were)",
            dest.display()
        ),
    )
    .with_help("move that file away, then pull again")
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_out_of_the_checkout_or_into_git_are_refused() {
        for bad in [
            "",
            "../x",
            "a/../../x",
            "/etc/passwd",
            ".git/hooks/pre-commit",
            "a/.GIT/config",
            "a//b",
            "./a",
        ] {
            assert!(check_path(bad.as_bytes()).is_err(), "{bad:?}");
        }
        for good in ["a", "src/main.rs", ".gitignore", "a/.github/x", "..a"] {
            assert!(check_path(good.as_bytes()).is_ok(), "{good:?}");
        }
    }
}
