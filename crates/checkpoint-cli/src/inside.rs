//! Paths a workflow names, declared outputs and artifacts, kept inside the project: no absolute
//! path outside it, no `..`, no symbolic link that leads out of it.

use std::{
    fs,
    path::{Component, Path, PathBuf},
};

use crate::{failure::Failure, output};

/// Refuses `path` (relative to `base`, or absolute) unless it stays inside `project_root`;
/// `what` names it in the error ("declared output of phase `a`", "artifact").
pub(crate) fn check(
    project_root: &Path,
    base: &Path,
    path: &str,
    what: &str,
) -> Result<(), Failure> {
    let refuse = |why: String| {
        Failure::usage(
            "checkpoint::path_outside_project",
            format!("{what} `{}` is outside the project: {why}", output::escape(path)),
        )
        .with_help(format!(
            "name a file inside `{}`, relative to it, without `..`; copy anything from elsewhere into the project first",
            project_root.display()
        ))
    };
    if Path::new(path)
        .components()
        .any(|component| component == Component::ParentDir)
    {
        return Err(refuse("it goes up with `..`".into()));
    }
    let joined = base.join(path);
    if !joined.starts_with(project_root) {
        return Err(refuse(format!(
            "it is not under `{}`",
            project_root.display()
        )));
    }
    // The deepest part of the path that exists, resolved through any link, must stay inside.
    let root = fs::canonicalize(project_root).unwrap_or_else(|_| project_root.to_owned());
    let mut existing: &Path = &joined;
    while fs::symlink_metadata(existing).is_err() {
        match existing.parent() {
            Some(parent) => existing = parent,
            None => return Ok(()),
        }
    }
    let resolved: PathBuf = fs::canonicalize(existing).map_err(|_| {
        refuse(format!(
            "`{}` is a link that leads nowhere",
            existing.display()
        ))
    })?;
    if !resolved.starts_with(&root) {
        return Err(refuse(format!(
            "`{}` leads to `{}`",
            existing
                .strip_prefix(project_root)
                .unwrap_or(existing)
                .display(),
            resolved.display()
        )));
    }
    Ok(())
}
