//! Where the server finds its project, its store and the `checkpoint` binary it runs.

use std::path::{Path, PathBuf};

pub(crate) use checkpoint_core::store::{default_store, project_root};

/// The `checkpoint` binary: beside this one (the bundle's `bin/`), else on `PATH`.
pub(crate) fn checkpoint_binary(current_exe: Option<&Path>) -> PathBuf {
    let name = format!("checkpoint{}", std::env::consts::EXE_SUFFIX);
    current_exe
        .and_then(Path::parent)
        .map(|dir| dir.join(&name))
        .filter(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}
