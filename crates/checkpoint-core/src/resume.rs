//! Resume: validate a state, recover from interruptions, and plan the next step.

mod briefing;
mod codes;
mod holders;
mod next;
mod planner;
mod prompt;
mod restart;
mod validate;

#[cfg(test)]
pub(crate) use crate::resume::validate::OUTPUT_MTIME_TOLERANCE_SECS;
pub use crate::resume::{
    briefing::Briefing,
    codes::{Action, FindingCode, RecoveryCode},
    holders::{Dispatch, Held, SubAgents},
    next::NextAction,
    planner::{PhaseRef, PlanOptions, RecoveryAction, ResumePlan, plan},
    prompt::{ago, render_prompt},
    restart::{Restart, rerun, restart},
    validate::{
        Finding, JOURNAL_MISMATCH_HINT, Probe, Severity, recovery_finding, unfinished_outputs,
        validate,
    },
};

#[cfg(test)]
mod tests;
