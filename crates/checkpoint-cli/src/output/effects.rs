//! The effects each phase has done and the files it changed, as `checkpoint status` and
//! `checkpoint watch` show them.

use std::collections::HashMap;

use checkpoint_core::{PhaseId, effects::Ledger, snapshots::FileTally};

/// How many effects each phase has done (those that succeeded, in every attempt), and the files
/// each phase, session and agent changed (from the snapshot entries), as `status` and `watch`
/// show them.
#[derive(Debug, Default)]
pub(crate) struct EffectCounts(HashMap<PhaseId, usize>, FileTally);

impl EffectCounts {
    pub(crate) fn of(ledger: &Ledger) -> Self {
        let mut counts = HashMap::new();
        for effect in ledger.effects.iter().filter(|effect| effect.ok) {
            if let Some(phase) = &effect.phase {
                *counts.entry(phase.clone()).or_insert(0) += 1;
            }
        }
        Self(counts, FileTally::default())
    }

    /// The same, with the files changed that `tally` counted.
    pub(crate) fn with_tally(self, tally: FileTally) -> Self {
        Self(self.0, tally)
    }

    /// The effects phase `phase` has done.
    pub(crate) fn of_phase(&self, phase: &PhaseId) -> usize {
        self.0.get(phase).copied().unwrap_or(0)
    }

    /// The files changed, per phase and per session and agent.
    pub(crate) fn files(&self) -> &FileTally {
        &self.1
    }
}
