//! Where the store is in a project, and the files of a workflow's directory in it.

use std::path::{Path, PathBuf};

/// The store's directory under the project root when no other is given (`--dir`,
/// `CHECKPOINT_DIR`), as path components: `.claude/checkpoints`.
pub const DEFAULT_STORE: [&str; 2] = [".claude", "checkpoints"];

/// The project around `cwd`: the nearest ancestor holding `.git` (a directory, or a file in a
/// worktree), else `cwd` itself.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(cwd)
        .to_owned()
}

/// The project whose store holds the workflows for a call made in `cwd`: the nearest project
/// around `cwd` that has a store, looking past a nested repository to the project that holds
/// it, and from a git worktree to its main worktree (Claude Code's `.claude/worktrees/<name>/`
/// and a worktree anywhere else); [`project_root`] when none has one.
pub fn project_with_store(cwd: &Path) -> PathBuf {
    let candidates = cwd
        .ancestors()
        .filter(|dir| dir.join(".git").exists())
        .flat_map(|dir| {
            let main = main_worktree(dir);
            std::iter::once(dir.to_owned()).chain(main)
        });
    for dir in candidates {
        if default_store(&dir).is_dir() {
            return dir;
        }
    }
    project_root(cwd)
}

/// The main worktree of the git worktree at `top` (whose `.git` is a file naming its git
/// directory, with a `commondir`), if it is one.
fn main_worktree(top: &Path) -> Option<PathBuf> {
    let common = common_dir(&top.join(".git"))?;
    let main = common.parent()?;
    (common.file_name()? == ".git" && main != top).then(|| main.to_owned())
}

/// The common git directory of a `.git` (a directory, or a file `gitdir: <dir>` of a worktree or
/// a submodule), canonical.
pub fn common_dir(dot_git: &Path) -> Option<PathBuf> {
    if dot_git.is_dir() {
        return dot_git.canonicalize().ok();
    }
    let read = |path: &Path| {
        crate::fsx::read_foreign(path, 4096)
            .ok()
            .flatten()
            .and_then(|bytes| String::from_utf8(bytes).ok())
    };
    let text = read(dot_git)?;
    let gitdir = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let gitdir = dot_git.parent()?.join(gitdir);
    let common = match read(&gitdir.join("commondir")) {
        Some(common) => gitdir.join(common.trim()),
        None => gitdir,
    };
    common.canonicalize().ok()
}

/// The place of an effect run in `dir` that makes it another effect (see
/// `crate::effects::key`): empty in the repository of `project_root` (any of its worktrees) for
/// a repository's effect, and at the top of its worktree for a directory's; else the common git
/// directory relative to the project (`repo:vendor/lib/.git`), and for a directory's effect the
/// directory within its worktree (`dir:<repo>:packages/a`).
pub fn effect_place(project_root: &Path, dir: &Path, place: crate::effects::Place) -> String {
    use crate::effects::Place;
    if place == Place::Anywhere {
        return String::new();
    }
    let top = dir.ancestors().find(|dir| dir.join(".git").exists());
    let repo = match top.and_then(|top| common_dir(&top.join(".git"))) {
        Some(common) if Some(&common) == common_dir(&project_root.join(".git")).as_ref() => {
            String::new()
        }
        Some(common) => {
            let root = project_root
                .canonicalize()
                .unwrap_or_else(|_| project_root.to_owned());
            common
                .strip_prefix(&root)
                .map_or(common.clone(), Path::to_owned)
                .to_string_lossy()
                .replace('\\', "/")
        }
        None => String::new(),
    };
    let inside = dir
        .strip_prefix(top.unwrap_or(project_root))
        .map(|inside| inside.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default();
    match place {
        Place::Repository if repo.is_empty() => String::new(),
        Place::Repository => format!("repo:{repo}"),
        _ if repo.is_empty() && inside.is_empty() => String::new(),
        _ => format!("dir:{repo}:{inside}"),
    }
}

/// The directory an effect runs in: `moved` (from the line's `cd`s) seen from the call's
/// `cwd`, `..` and `.` taken off; `cwd` when that is where it already is (a client that reports
/// the directory the line moved to).
pub fn effect_dir(cwd: &Path, moved: Option<&str>) -> PathBuf {
    let Some(moved) = moved else {
        return cwd.to_owned();
    };
    let mut dir = PathBuf::new();
    for part in cwd.join(moved).components() {
        match part {
            std::path::Component::ParentDir => {
                dir.pop();
            }
            std::path::Component::CurDir => {}
            other => dir.push(other),
        }
    }
    if !dir.exists() && Path::new(moved).is_relative() && cwd.ends_with(moved.trim_end_matches('/'))
    {
        return cwd.to_owned();
    }
    dir
}

/// The default store of the project at `project_root`.
pub fn default_store(project_root: &Path) -> PathBuf {
    DEFAULT_STORE
        .iter()
        .fold(project_root.to_owned(), |path, part| path.join(part))
}

/// The current state, as JSON (indented unless it is large, see [`DEFER_STATE_BYTES`]).
pub const STATE_FILE: &str = "state.json";
/// The state before the last write.
pub(crate) const BACKUP_FILE: &str = "state.json.bak";
/// The append-only journal of transitions.
pub const JOURNAL_FILE: &str = "journal.jsonl";
/// The index of the journal's effects, a cache the guard reads (see `store/effects.rs`).
pub(crate) const EFFECTS_INDEX: &str = "effects.idx";
/// The advisory lock file.
pub(crate) const LOCK_FILE: &str = "lock";
/// The prefix of temporary state files; leftovers are removed by the next writer.
pub(crate) const TEMP_PREFIX: &str = ".state.json.tmp-";
