//! Kept results: the full result of a finished agent of a Claude Code `Workflow` run, redacted,
//! in `<workflow>/results/<phase>/<task>.md`, so that it outlives the client's session directory
//! and a continuation script can read it; archived, restored and deleted with its workflow.

use std::path::PathBuf;

use crate::{
    error::Result,
    fsx,
    id::{PhaseId, TaskId, WorkflowId},
    redact,
    store::{
        handle::Store,
        write::{create_private_dir, refuse_symlink},
    },
};

/// The directory of kept results in a workflow's directory.
pub(crate) const RESULTS_DIR: &str = "results";

impl Store {
    /// The directory of workflow `id`'s kept results.
    pub fn results_dir(&self, id: &WorkflowId) -> PathBuf {
        self.workflow_dir(id).join(RESULTS_DIR)
    }

    /// Keeps `text`, redacted, as the result of task `task` of phase `phase` (replacing an
    /// earlier one atomically); returns the file.
    pub fn keep_result(
        &self,
        id: &WorkflowId,
        phase: &PhaseId,
        task: &TaskId,
        text: &str,
    ) -> Result<PathBuf> {
        let dir = self.results_dir(id).join(phase.as_str());
        for checked in [self.workflow_dir(id), self.results_dir(id), dir.clone()] {
            refuse_symlink(&checked)?;
        }
        create_private_dir(&dir)?;
        let path = dir.join(format!("{task}.md"));
        refuse_symlink(&path)?;
        let mut text = text.to_owned();
        redact::text(&mut text);
        fsx::write_atomic(&path, text.as_bytes(), true)?;
        Ok(path)
    }
}
