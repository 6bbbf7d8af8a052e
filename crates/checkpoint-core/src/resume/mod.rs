//! Resume: validate a state, recover from interruptions, and plan the next step.

mod briefing;
mod codes;
mod planner;
mod prompt;
mod restart;
mod validate;

pub use crate::resume::{
    briefing::Briefing,
    codes::{Action, FindingCode, RecoveryCode},
    planner::{NextAction, PhaseRef, PlanOptions, RecoveryAction, ResumePlan, plan},
    prompt::render_prompt,
    restart::{Restart, restart},
    validate::{Finding, OUTPUT_MTIME_TOLERANCE_SECS, Probe, Severity, validate, written_since},
};

#[cfg(test)]
mod tests;
