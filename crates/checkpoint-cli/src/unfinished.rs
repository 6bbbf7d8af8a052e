//! The unfinished workflows a session or `checkpoint resume` may continue: the store's own, and
//! those in other checkpoint systems' state files (read only).

use std::path::{Path, PathBuf};

use checkpoint_core::{
    Error, Workflow, WorkflowId,
    seeds::{self, Discovered, ImportOptions},
    store::{Loaded, Store},
};
use chrono::{DateTime, Utc};

use crate::output;

/// The store's workflows that are not finished, and those that cannot be read with why (each
/// also said on stderr), in the store's order.
pub(crate) struct InStore {
    pub unfinished: Vec<(WorkflowId, Loaded)>,
    pub unreadable: Vec<(WorkflowId, Error)>,
}

/// Loads every workflow of `store` and keeps the unfinished ones.
pub(crate) fn in_store(store: &Store) -> checkpoint_core::Result<InStore> {
    let mut found = InStore {
        unfinished: Vec::new(),
        unreadable: Vec::new(),
    };
    for id in store.list()? {
        match store.load(&id) {
            Ok(loaded) if loaded.workflow.status.is_finished() => {}
            Ok(loaded) => found.unfinished.push((id, loaded)),
            Err(err) => {
                output::warn(&format!("skipping workflow `{id}`: {err}"));
                found.unreadable.push((id, err));
            }
        }
    }
    Ok(found)
}

/// The unfinished workflows in other systems' state files under `project_root` and
/// `worktrees`, in the order they are discovered: each file is read and imported (without
/// writing anything) only when the iterator gets to it, and one that fails is passed over.
pub(crate) fn in_seeds(
    project_root: &Path,
    worktrees: &[PathBuf],
    now: DateTime<Utc>,
) -> impl Iterator<Item = (Discovered, Workflow)> {
    let options = ImportOptions { id: None, now };
    seeds::discover(project_root, worktrees)
        .into_iter()
        .filter_map(move |found| {
            let workflow = seeds::read_source(found.format, &found.path)
                .and_then(|source| seeds::import(found.format, &source, &options))
                .ok()?;
            (!workflow.status.is_finished()).then_some((found, workflow))
        })
}
