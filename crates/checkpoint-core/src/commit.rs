//! When a checkpoint commit is due, pure: the completed phases no commit holds yet, and the
//! config's `commit_every` (a commit every that many of them; 0, only when asked).

use crate::{
    config::Config,
    id::PhaseId,
    model::{PhaseStatus, Workflow},
};

/// The completed phases that no checkpoint commit holds yet, in plan order.
pub fn uncommitted_phases(workflow: &Workflow) -> Vec<PhaseId> {
    workflow
        .phases
        .iter()
        .filter(|phase| phase.status == PhaseStatus::Complete && phase.commit_sha.is_none())
        .map(|phase| phase.id.clone())
        .collect()
}

/// Whether `pending` uncommitted phases make a commit due by themselves (`commit_every`).
pub fn is_due(config: &Config, pending: usize) -> bool {
    config.commit_every > 0
        && usize::try_from(config.commit_every).is_ok_and(|every| pending >= every)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_is_due_every_commit_every_phases_and_never_at_zero() {
        let every = |commit_every| Config {
            commit_every,
            ..Config::default()
        };
        assert!(!is_due(&every(0), 0));
        assert!(!is_due(&every(0), 99));
        assert!(!is_due(&every(2), 1));
        assert!(is_due(&every(2), 2));
        assert!(is_due(&every(2), 3));
        assert!(is_due(&every(1), 1));
        assert!(!is_due(&every(u32::MAX), 0));
    }
}
