//! Paths a workflow names, kept inside the project: no absolute path outside it, no `..`, no
//! symbolic link that leads out of it.
//!
//! The one check for every path that reaches the store (declared outputs at `init`, artifacts
//! at `complete`, task outputs, context file paths, the paths of an imported file) and for every
//! path the program looks at for the workflow ([`crate::probe::FsProbe`] sees no file outside
//! the project, so neither the planner nor the hooks complete anything through one).

use std::{
    fs,
    path::{Component, Path},
};

use checkpoint_core::Workflow;

use crate::{failure::Failure, output};

/// Refuses `path` (relative to `base`, or absolute) unless it stays inside `project_root`;
/// `what` names it in the error ("declared output of phase `a`", "artifact").
pub(crate) fn check(
    project_root: &Path,
    base: &Path,
    path: &str,
    what: &str,
) -> Result<(), Failure> {
    let Some(why) = outside(project_root, base, path) else {
        return Ok(());
    };
    Err(Failure::usage(
        "checkpoint::path_outside_project",
        format!("{what} `{}` is outside the project: {why}", output::escape(path)),
    )
    .with_help(format!(
        "name a file inside `{}`, relative to it, without `..`; copy anything from elsewhere into the project first",
        project_root.display()
    )))
}

/// Why `path` (relative to `base`, or absolute) is not inside `project_root`, or `None` when
/// it is: it goes up with `..`, it is elsewhere, or the deepest part of it that exists leads out
/// through a link (or nowhere).
pub(crate) fn outside(project_root: &Path, base: &Path, path: &str) -> Option<String> {
    if Path::new(path)
        .components()
        .any(|component| component == Component::ParentDir)
    {
        return Some("it goes up with `..`".into());
    }
    let joined = base.join(path);
    if !joined.starts_with(project_root) {
        return Some(format!("it is not under `{}`", project_root.display()));
    }
    // The deepest part of the path that exists, resolved through any link, must stay inside.
    let root = fs::canonicalize(project_root).unwrap_or_else(|_| project_root.to_owned());
    let mut existing: &Path = &joined;
    while fs::symlink_metadata(existing).is_err() {
        existing = existing.parent()?;
    }
    let Ok(resolved) = fs::canonicalize(existing) else {
        return Some(format!(
            "`{}` is a link that leads nowhere",
            existing.display()
        ));
    };
    (!resolved.starts_with(&root)).then(|| {
        format!(
            "`{}` leads to `{}`",
            existing
                .strip_prefix(project_root)
                .unwrap_or(existing)
                .display(),
            resolved.display()
        )
    })
}

/// Refuses a workflow read from `source` (an imported file) whose phases declare an output, or
/// whose tasks name one, outside the project: such a file would complete its phase, or mark its
/// task done, through a file that is not the project's.
pub(crate) fn check_outputs(
    project_root: &Path,
    workflow: &Workflow,
    source: &Path,
) -> Result<(), Failure> {
    for phase in &workflow.phases {
        for output in &phase.outputs {
            check(
                project_root,
                project_root,
                output,
                &format!(
                    "declared output of phase `{}` in `{}`",
                    phase.id,
                    source.display()
                ),
            )?;
        }
        for task in &phase.tasks {
            if let Some(output) = &task.output {
                check(
                    project_root,
                    project_root,
                    output,
                    &format!(
                        "output of task `{}` of phase `{}` in `{}`",
                        task.id,
                        phase.id,
                        source.display()
                    ),
                )?;
            }
        }
    }
    Ok(())
}
