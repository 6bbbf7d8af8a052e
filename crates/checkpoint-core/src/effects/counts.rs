//! The effects each phase has done and the files it changed, counted once for
//! `checkpoint status`, `checkpoint watch` and their JSON documents.

use std::collections::HashMap;

use crate::{effects::ledger::Ledger, id::PhaseId, snapshots::FileTally};

/// How many effects each phase has done (those that succeeded, in every attempt), and the files
/// each phase, session and agent changed (from the snapshot entries), as `status` and `watch`
/// show them.
#[derive(Debug, Default)]
pub struct EffectCounts(HashMap<PhaseId, usize>, FileTally);

impl EffectCounts {
    pub fn of(ledger: &Ledger) -> Self {
        let mut counts = HashMap::new();
        for effect in ledger.effects.iter().filter(|effect| effect.ok) {
            if let Some(phase) = &effect.phase {
                *counts.entry(phase.clone()).or_insert(0) += 1;
            }
        }
        Self(counts, FileTally::default())
    }

    /// The same, with the files changed that `tally` counted.
    pub fn with_tally(self, tally: FileTally) -> Self {
        Self(self.0, tally)
    }

    /// The effects phase `phase` has done.
    pub fn of_phase(&self, phase: &PhaseId) -> usize {
        self.0.get(phase).copied().unwrap_or(0)
    }

    /// The files changed, per phase and per session and agent.
    pub fn files(&self) -> &FileTally {
        &self.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EffectSource, effects::RecordedEffect};

    /// Only effects that succeeded and belong to a phase count, each attempt's.
    #[test]
    fn counts_the_succeeded_effects_of_each_phase() {
        let effect = |phase: Option<&str>, ok: bool| RecordedEffect {
            number: 1,
            seq: 1,
            at: chrono::DateTime::UNIX_EPOCH,
            phase: phase.map(|id| PhaseId::new(id).unwrap()),
            attempt: None,
            tool: None,
            command: "git push".to_owned(),
            output: None,
            ok,
            session_id: None,
            source: EffectSource::Hook,
            key: "k".to_owned(),
            allowed: false,
            unknown: false,
            in_flight: false,
            call_id: None,
            agent_id: None,
        };
        let ledger = Ledger {
            effects: vec![
                effect(Some("a"), true),
                effect(Some("a"), true),
                effect(Some("a"), false),
                effect(Some("b"), true),
                effect(None, true),
            ],
        };
        let counts = EffectCounts::of(&ledger);
        let phase = |id: &str| PhaseId::new(id).unwrap();
        assert_eq!(counts.of_phase(&phase("a")), 2);
        assert_eq!(counts.of_phase(&phase("b")), 1);
        assert_eq!(counts.of_phase(&phase("c")), 0);
    }
}
