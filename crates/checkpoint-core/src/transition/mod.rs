//! Transitions: every change to a workflow is one of these, applied by [`apply`] and recorded in
//! the journal with a timestamp and a sequence number.

mod apply;
mod checks;
mod classify;
mod phase;
mod task;
mod variants;

pub(crate) use crate::transition::checks::unknown_phase;
pub use crate::transition::{
    apply::{apply, apply_in_place, lift_pause, over_max_in_progress},
    variants::{DEFAULT_MAX_ATTEMPTS, Keep, SessionOutcome, Transition},
};

#[cfg(test)]
pub(crate) mod tests;
