//! `Store`, a directory of workflows, and what needs nothing else: its options, its paths, the
//! list of its workflows.

use std::{
    fs, io,
    path::{Path, PathBuf},
    time::Duration,
};

use crate::{
    error::{Error, Result},
    failpoint::Failpoint,
    id::WorkflowId,
    store::layout::{JOURNAL_FILE, STATE_FILE},
};

/// Settings of a [`Store`], chosen by the caller.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// How long to wait for another process's lock before failing.
    pub lock_timeout: Duration,
    /// Called once when a lock is contended, before waiting, with the lock file and what its
    /// holder wrote in it (the CLI prints a message).
    pub on_lock_wait: Option<fn(&Path, Option<&str>)>,
    /// An I/O error to inject in the write path; honoured only when the crate is built with the
    /// `failpoints` feature (see [`failpoint::ENABLED`]), ignored otherwise.
    pub failpoint: Option<Failpoint>,
}

/// A directory of workflows, usually `.claude/checkpoints/`.
#[derive(Debug, Clone)]
pub struct Store {
    pub(super) root: PathBuf,
    pub(super) options: StoreOptions,
    /// Who takes the locks, as a waiting process reads it (see [`Store::held_by`]).
    pub(super) holder: Option<String>,
}

impl Store {
    /// A store rooted at `root` (which need not exist yet).
    pub fn new(root: &Path, options: StoreOptions) -> Self {
        Self {
            root: root.to_owned(),
            options,
            holder: None,
        }
    }

    /// The store, writing `holder` (the process, its command and since when, as the caller
    /// words it) into each lock it takes, so that a process waiting for it can say who holds it.
    #[must_use]
    pub fn held_by(mut self, holder: String) -> Self {
        self.holder = Some(holder);
        self
    }

    /// The store's root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory of a workflow.
    pub fn workflow_dir(&self, id: &WorkflowId) -> PathBuf {
        self.root.join(id.as_str())
    }

    /// The journal of a workflow.
    pub fn journal_path(&self, id: &WorkflowId) -> PathBuf {
        self.workflow_dir(id).join(JOURNAL_FILE)
    }

    /// The ids of all workflows in the store, sorted.
    pub fn list(&self) -> Result<Vec<WorkflowId>> {
        let entries = match fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(Error::io("list", &self.root, err)),
        };
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|err| Error::io("list", &self.root, err))?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let Ok(id) = WorkflowId::new(&name) else {
                continue;
            };
            let path = entry.path();
            if path.join(STATE_FILE).exists() || path.join(JOURNAL_FILE).exists() {
                ids.push(id);
            }
        }
        ids.sort();
        Ok(ids)
    }

    pub(super) fn checked_dir(&self, id: &WorkflowId) -> Result<PathBuf> {
        let dir = self.workflow_dir(id);
        match fs::symlink_metadata(&dir) {
            Ok(meta) if meta.file_type().is_symlink() => Err(Error::Symlink { path: dir }),
            Ok(_) => Ok(dir),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Err(Error::NotFound {
                id: id.to_string(),
                root: self.root.clone(),
                suggestion: crate::suggest::did_you_mean(
                    id.as_str(),
                    self.list()
                        .unwrap_or_default()
                        .iter()
                        .map(WorkflowId::as_str),
                ),
            }),
            Err(err) => Err(Error::io("open", dir, err)),
        }
    }
}
