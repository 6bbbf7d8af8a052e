//! The briefing: a workflow validated, planned and rendered as a prompt in one place, for
//! `checkpoint resume` and for the session-start hook.

use chrono::{DateTime, Utc};

use crate::{
    config::Config,
    model::Workflow,
    resume::{
        planner::{PlanOptions, ResumePlan, plan},
        prompt::render_prompt,
        validate::{Probe, validate},
    },
    store::Recovery,
};

/// What to tell whoever resumes a workflow: the plan, and the prompt on demand.
#[derive(Debug, Clone)]
pub struct Briefing {
    /// The validated plan (findings, recoveries, the next action).
    pub plan: ResumePlan,
    now: DateTime<Utc>,
    budget: usize,
}

impl Briefing {
    /// Validates `workflow` (with the `recoveries` the store made while loading it) through
    /// `probe`, and plans its resume at `now` with `config`.
    pub fn new(
        workflow: &Workflow,
        recoveries: &[Recovery],
        probe: &dyn Probe,
        config: &Config,
        now: DateTime<Utc>,
    ) -> Self {
        let findings = validate(workflow, recoveries, probe, config, now);
        let options = PlanOptions {
            config: config.clone(),
            now,
        };
        Self {
            plan: plan(workflow, findings, probe, &options),
            now,
            budget: config.prompt_budget,
        }
    }

    /// The plan as a Markdown prompt within the configured `prompt_budget`.
    pub fn prompt(&self) -> String {
        self.prompt_within(self.budget)
    }

    /// The plan as a Markdown prompt of at most about `budget` bytes.
    pub fn prompt_within(&self, budget: usize) -> String {
        render_prompt(&self.plan, self.now, budget)
    }
}
