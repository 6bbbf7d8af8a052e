//! The parts of the `push`, `pull` and `sync` documents that come from core: the journal
//! entries on each side of a divergence. (The documents' rows, `services::remote_sync::SyncOutcome`, are
//! the CLI's own; they point here for these fields.)

use checkpoint_core::{PhaseId, sync};
use serde::{Serialize, Serializer};

/// One entry after a divergence.
#[derive(Debug, Serialize)]
struct Change<'a> {
    seq: u64,
    /// Its operation, as in the journal.
    op: &'a str,
    phase: Option<&'a PhaseId>,
}

impl<'a> From<&'a sync::Change> for Change<'a> {
    fn from(change: &'a sync::Change) -> Self {
        Self {
            seq: change.seq,
            op: change.op,
            phase: change.phase.as_ref(),
        }
    }
}

/// Writes the entries of one side of a divergence (`ours`, `theirs`).
pub(crate) fn divergent_entries<S: Serializer>(
    changes: &[sync::Change],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(changes.iter().map(Change::from))
}
