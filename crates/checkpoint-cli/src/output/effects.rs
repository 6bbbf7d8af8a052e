//! The effects each phase has done, as `checkpoint status` and `checkpoint watch` show them.

use std::collections::HashMap;

use checkpoint_core::{PhaseId, effects::Ledger};

/// How many effects each phase has done (those that succeeded, in every attempt), as `status`
/// and `watch` show them.
#[derive(Debug, Default)]
pub(crate) struct EffectCounts(HashMap<PhaseId, usize>);

impl EffectCounts {
    pub(crate) fn of(ledger: &Ledger) -> Self {
        let mut counts = HashMap::new();
        for effect in ledger.effects.iter().filter(|effect| effect.ok) {
            if let Some(phase) = &effect.phase {
                *counts.entry(phase.clone()).or_insert(0) += 1;
            }
        }
        Self(counts)
    }

    /// The effects phase `phase` has done.
    pub(crate) fn of_phase(&self, phase: &PhaseId) -> usize {
        self.0.get(phase).copied().unwrap_or(0)
    }
}
