//! Test doubles shared by the unit tests.

use std::cell::RefCell;

use crate::{PhaseId, Transition, resume::Probe};

/// A phase id from a literal.
pub(crate) fn phase(id: &str) -> PhaseId {
    PhaseId::new(id).unwrap()
}

/// Starts a phase.
pub(crate) fn start(id: &str) -> Transition {
    Transition::PhaseStart {
        phase: phase(id),
        force: false,
    }
}

/// Completes a phase with no artifacts and no commit.
pub(crate) fn complete(id: &str) -> Transition {
    Transition::PhaseComplete {
        phase: phase(id),
        artifacts: Vec::new(),
        commit_sha: None,
        force: false,
    }
}

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

/// A probe that records every path it is asked about, answering through another.
pub(crate) struct Recording<P> {
    probe: P,
    pub(crate) asked: RefCell<Vec<String>>,
}

impl<P> Recording<P> {
    pub(crate) fn new(probe: P) -> Self {
        Self {
            probe,
            asked: RefCell::default(),
        }
    }
}

impl<P: Probe> Probe for Recording<P> {
    fn file_size(&self, path: &str) -> Option<u64> {
        self.asked.borrow_mut().push(path.to_owned());
        self.probe.file_size(path)
    }
    fn git_branch(&self) -> Option<String> {
        self.probe.git_branch()
    }
    fn commit_exists(&self, sha: &str) -> Option<bool> {
        self.probe.commit_exists(sha)
    }
    fn worktree(&self) -> Option<String> {
        self.probe.worktree()
    }
}
