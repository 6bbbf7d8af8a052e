//! Where the server finds its project, its store and the `checkpoint` binary it runs.

use std::path::{Path, PathBuf};

/// The nearest ancestor of `cwd` holding `.git`, else `cwd`: where the command line looks too.
pub(crate) fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(cwd)
        .to_owned()
}

/// The store of a project without `--dir`: `.claude/checkpoints` under its root.
pub(crate) fn default_store(project_root: &Path) -> PathBuf {
    project_root.join(".claude").join("checkpoints")
}

/// The `checkpoint` binary: beside this one (the bundle's `bin/`), else on `PATH`.
pub(crate) fn checkpoint_binary(current_exe: Option<&Path>) -> PathBuf {
    let name = format!("checkpoint{}", std::env::consts::EXE_SUFFIX);
    current_exe
        .and_then(Path::parent)
        .map(|dir| dir.join(&name))
        .filter(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}
