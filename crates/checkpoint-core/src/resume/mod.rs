//! Resume: validate a state, recover from interruptions, and plan the next step.

mod briefing;
mod codes;
mod holders;
mod next;
mod planner;
mod prompt;
mod restart;
mod validate;

pub use crate::resume::{
    briefing::Briefing,
    codes::{Action, FindingCode, RecoveryCode},
    holders::{Dispatch, Held, SubAgents},
    next::NextAction,
    planner::{PhaseRef, PlanOptions, RecoveryAction, ResumePlan, plan},
    prompt::render_prompt,
    restart::{Restart, restart},
    validate::{Finding, OUTPUT_MTIME_TOLERANCE_SECS, Probe, Severity, validate, written_since},
};

#[cfg(test)]
mod tests;
