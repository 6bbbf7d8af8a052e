//! Test doubles shared by the unit tests.

use crate::resume::Probe;

/// The files that exist, by size, relative to the project root; git cannot tell anything.
pub(crate) struct Files(pub Vec<(&'static str, u64)>);

impl Probe for Files {
    fn file_size(&self, path: &str) -> Option<u64> {
        self.0
            .iter()
            .find(|(name, _)| *name == path)
            .map(|(_, size)| *size)
    }
    fn git_branch(&self) -> Option<String> {
        None
    }
    fn commit_exists(&self, _sha: &str) -> Option<bool> {
        None
    }
    fn worktree(&self) -> Option<String> {
        None
    }
}
