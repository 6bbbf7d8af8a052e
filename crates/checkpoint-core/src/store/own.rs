//! The store's own files beside its workflows: the ignore file that keeps the store out of git,
//! the workflow `checkpoint use` chose for this worktree, and the failures of background pushes
//! left for the next command to report.

use std::{fs, io};

use crate::{
    error::{Error, Result},
    fsx,
    id::WorkflowId,
    store::{handle::Store, write::create_private_dir},
};

/// The store's ignore file: git ignores the whole store (its `push`/`pull` share workflows).
pub(crate) const IGNORE_FILE: &str = ".gitignore";
/// The workflow `checkpoint use` chose, one id on one line.
pub(crate) const USE_FILE: &str = ".use";

/// The directory of failed background pushes: one file per workflow, its message.
pub(crate) const SYNC_FAILED_DIR: &str = ".sync-failed";

/// The ignore file's text: everything in the store, this file included.
const IGNORE_TEXT: &str = "# Written by checkpoint: this store is the worktree's working state, shared with\n# `checkpoint push` and `checkpoint pull` (refs/checkpoints/*), never committed.\n*\n";

impl Store {
    /// Writes the store's ignore file when it is missing (best effort: a store that cannot
    /// hold it still works, and a user's own ignore file is never replaced).
    pub(super) fn write_ignore_file(&self) {
        let path = self.root.join(IGNORE_FILE);
        if fs::symlink_metadata(&path).is_err() && self.root.is_dir() {
            let _ = fsx::write_atomic(&path, IGNORE_TEXT.as_bytes(), false);
        }
    }

    /// The workflow `checkpoint use` chose, if any; a file that does not hold an id is an error
    /// naming it.
    pub fn used(&self) -> Result<Option<WorkflowId>> {
        let path = self.root.join(USE_FILE);
        let Some(bytes) = fsx::read_limited(&path)? else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(&bytes);
        let id = text.trim();
        if id.is_empty() {
            return Ok(None);
        }
        WorkflowId::new(id).map(Some).map_err(|err| Error::Corrupt {
            path: path.clone(),
            message: err.to_string(),
            help: "choose a workflow again with `checkpoint use <id>`, or none with `checkpoint use --none`".into(),
            source_code: None,
            span: None,
        })
    }

    /// Chooses the workflow this worktree means (`None`: no choice, the rule decides).
    pub fn set_used(&self, id: Option<&WorkflowId>) -> Result<()> {
        let path = self.root.join(USE_FILE);
        match id {
            Some(id) => {
                create_private_dir(&self.root)?;
                self.write_ignore_file();
                fsx::write_atomic(&path, format!("{id}\n").as_bytes(), true)
            }
            None => match fs::remove_file(&path) {
                Err(err) if err.kind() != io::ErrorKind::NotFound => {
                    Err(Error::io("remove", &path, err))
                }
                _ => Ok(()),
            },
        }
    }

    /// Leaves the failure of a background push of `id` for the next command to report (best
    /// effort: a push that cannot say so is retried by the next `checkpoint push` anyway).
    pub fn remember_failed_push(&self, id: &str, message: &str) {
        let dir = self.root.join(SYNC_FAILED_DIR);
        if create_private_dir(&dir).is_ok() {
            let _ = fsx::write_atomic(&dir.join(id), message.as_bytes(), true);
        }
    }

    /// The failures of background pushes left since the last call, each once: read and removed.
    pub fn take_failed_pushes(&self) -> Vec<String> {
        let Ok(entries) = fs::read_dir(self.root.join(SYNC_FAILED_DIR)) else {
            return Vec::new();
        };
        let mut messages = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if let Ok(Some(bytes)) = fsx::read_limited(&path) {
                messages.push(String::from_utf8_lossy(&bytes).into_owned());
            }
            let _ = fs::remove_file(&path);
        }
        messages
    }
}
