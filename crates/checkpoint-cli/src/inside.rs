//! Paths a workflow names, kept inside the project: no absolute path outside it, no `..`, no
//! symbolic link that leads out of it.
//!
//! The one check for every path that reaches the store (declared outputs at `init`, artifacts
//! at `complete`, task outputs, context file paths, the paths of an imported file) and for every
//! path the program looks at for the workflow ([`crate::probe::FsProbe`] sees no file outside
//! the project, so neither the planner nor the hooks complete anything through one).

use std::{
    collections::HashMap,
    fs,
    path::{Component, Path, PathBuf},
    sync::{Mutex, PoisonError},
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
    Err(Failure::new(
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

/// The files of the project as a reader sees them (the probe behind the planner and the hooks):
/// [`outside`]'s rule, answered with one `lstat` per file and one resolution per directory, since
/// a hook looks at every declared output of a workflow.
pub(crate) struct Files {
    root: PathBuf,
    /// The project root with its links resolved, once.
    canonical_root: Option<PathBuf>,
    /// Whether each directory seen resolves inside the project.
    dirs: Mutex<HashMap<PathBuf, bool>>,
}

impl Files {
    pub(crate) fn new(project_root: &Path) -> Files {
        Files {
            root: project_root.to_owned(),
            canonical_root: fs::canonicalize(project_root).ok(),
            dirs: Mutex::new(HashMap::new()),
        }
    }

    /// The metadata of `path` (relative to the project root, or absolute; links followed), when
    /// it exists inside the project: a file outside it (through `..`, an absolute path or a
    /// link leading out, in its name or in a directory above it) does not exist for the workflow.
    pub(crate) fn metadata(&self, path: &str) -> Option<fs::Metadata> {
        if Path::new(path)
            .components()
            .any(|component| component == Component::ParentDir)
        {
            return None;
        }
        let joined = self.root.join(path);
        if !joined.starts_with(&self.root) {
            return None;
        }
        let own = fs::symlink_metadata(&joined).ok()?;
        if own.file_type().is_symlink() {
            let resolved = fs::canonicalize(&joined).ok()?;
            return self
                .is_inside(&resolved)
                .then(|| fs::metadata(&resolved).ok())
                .flatten();
        }
        // Not a link itself: inside when the directory holding it is.
        let dir = joined.parent()?;
        self.dir_inside(dir).then_some(own)
    }

    fn is_inside(&self, resolved: &Path) -> bool {
        self.canonical_root
            .as_deref()
            .is_some_and(|root| resolved.starts_with(root))
    }

    fn dir_inside(&self, dir: &Path) -> bool {
        let mut dirs = self.dirs.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&inside) = dirs.get(dir) {
            return inside;
        }
        let inside = fs::canonicalize(dir).is_ok_and(|resolved| self.is_inside(&resolved));
        dirs.insert(dir.to_owned(), inside);
        inside
    }
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
