//! The files of several writers as the hooks and `who` see them: one absolute path per file
//! (one record each), its content hash on disk, the checkout around it, the claims held.

use std::{
    fs,
    path::{Component, Path, PathBuf},
};

use checkpoint_core::{
    Workflow,
    store::Store,
    writes::{ABSENT, Claim, Writer, content_hash},
};

use crate::env;

/// Files larger than this are compared by size and modification time, not read.
const MAX_HASHED_BYTES: u64 = 64 << 20;

/// `path` absolute (a relative one from `cwd`), `.` and `..` resolved, its directory's links
/// resolved, so one file has one record.
pub(crate) fn absolute(cwd: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    let joined = if path.is_absolute() {
        path.to_owned()
    } else {
        cwd.join(path)
    };
    let mut clean = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    match (clean.parent(), clean.file_name()) {
        (Some(parent), Some(name)) => fs::canonicalize(parent)
            .map(|parent| parent.join(name))
            .unwrap_or(clean),
        _ => clean,
    }
}

/// The path as messages show it: from the project root where it is inside it.
pub(crate) fn shown(project_root: &Path, path: &Path) -> String {
    let root = fs::canonicalize(project_root).unwrap_or_else(|_| project_root.to_owned());
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// A file's content hash ([`ABSENT`] when missing), size and modification time.
pub(crate) fn disk_state(path: &Path) -> (String, u64, i128) {
    let (kind, size, mtime) = disk_stat(path);
    if kind == ABSENT {
        return (ABSENT.to_owned(), 0, 0);
    }
    if size > MAX_HASHED_BYTES {
        return (format!("large-{size}-{mtime}"), size, mtime);
    }
    match fs::read(path) {
        Ok(bytes) => (content_hash(&bytes), size, mtime),
        Err(_) => (ABSENT.to_owned(), 0, 0),
    }
}

/// The real time now, in nanoseconds since the epoch (file times are the real clock's).
pub(crate) fn real_now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as i128)
}

/// A file's size and modification time (nanoseconds), or [`ABSENT`].
pub(crate) fn disk_stat(path: &Path) -> (&'static str, u64, i128) {
    match fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            let mtime = meta
                .modified()
                .ok()
                .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |since| since.as_nanos() as i128);
            ("file", meta.len(), mtime)
        }
        _ => (ABSENT, 0, 0),
    }
}

/// The top of the checkout (worktree) around `dir`: the nearest directory holding `.git`.
pub(crate) fn checkout_of(dir: &Path) -> PathBuf {
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
    dir.ancestors()
        .find(|candidate| candidate.join(".git").exists())
        .map_or_else(|| dir.clone(), Path::to_owned)
}

/// `holder` holds `globs` for `phase` of `workflow` (its earlier claims of that phase replaced),
/// as `checkpoint claim` and a phase's plan `claims` do; none hands them back.
pub(crate) fn hold(
    store: &Store,
    workflow: &Workflow,
    phase: &str,
    holder: &Writer,
    globs: &[String],
    now: chrono::DateTime<chrono::Utc>,
) -> checkpoint_core::Result<()> {
    store.update_claims(|claims| {
        claims.retain(|claim| !(claim.holder == *holder && claim.phase == phase));
        claims.extend(globs.iter().map(|glob| Claim {
            glob: glob.clone(),
            phase: phase.to_owned(),
            workflow: Some(workflow.id.to_string()),
            holder: holder.clone(),
            agent_type: None,
            since: now,
        }));
    })
}

/// The session whose shell runs this command (`CLAUDE_CODE_SESSION_ID`), if any.
pub(crate) fn running_session() -> Option<String> {
    std::env::var(env::CLAUDE_CODE_SESSION_ID)
        .ok()
        .filter(|session| !session.is_empty())
}
