//! Transitions: every change to a workflow is one of these, applied by [`apply`] and recorded in
//! the journal with a timestamp and a sequence number.

mod apply;
mod checks;
mod classify;
mod phase;
mod task;
mod variants;

pub(crate) use crate::transition::{apply::apply_in_place, variants::DEFAULT_MAX_ATTEMPTS};
pub use crate::transition::{
    apply::{apply, over_max_in_progress, unpause_before_work},
    checks::unknown_phase,
    variants::{
        EffectSource, Keep, RestoreKind, SessionOutcome, SnapshotReason, Transition, WaitKind,
    },
};

#[cfg(test)]
pub(crate) mod tests;
