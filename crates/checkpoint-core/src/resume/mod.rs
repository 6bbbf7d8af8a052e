//! Resume: validate a state, recover from interruptions, and plan the next step.

mod briefing;
mod codes;
mod holders;
mod planner;
mod prompt;
mod restart;
mod validate;

pub use crate::resume::{
    briefing::Briefing,
    codes::{Action, FindingCode, RecoveryCode},
    holders::{Dispatch, Held, SubAgents},
    planner::{NextAction, PhaseRef, PlanOptions, RecoveryAction, ResumePlan, plan},
    prompt::{ago, render_prompt},
    restart::{Restart, restart},
    validate::{Finding, OUTPUT_MTIME_TOLERANCE_SECS, Probe, Severity, validate, written_since},
};

#[cfg(test)]
mod tests;
