//! The briefing: a workflow validated, planned and rendered as a prompt in one place, for
//! `checkpoint resume` and for the session-start hook.

use chrono::{DateTime, Utc};

use crate::{
    config::Config,
    effects::{Ledger, outstanding},
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

    /// The briefing with the effects of `ledger` that `workflow` (the state it was planned
    /// from) must not repeat: those of its phases not done, and those on no phase.
    pub fn with_effects(mut self, workflow: &Workflow, ledger: &Ledger) -> Self {
        self.plan.effects = outstanding(workflow, ledger).into_iter().cloned().collect();
        self
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PhasePlan, PhaseStatus, Plan, WorkflowId, resume::FindingCode, testing::Files};

    #[test]
    fn a_briefing_validates_through_the_probe_and_renders_within_the_configured_budget() {
        let plan = Plan {
            phases: vec![
                PhasePlan::from_spec("design").unwrap(),
                PhasePlan::from_spec("build:design").unwrap(),
            ],
            ..Plan::default()
        };
        let now = DateTime::UNIX_EPOCH;
        let mut workflow = plan
            .into_workflow(WorkflowId::new("w").unwrap(), None, now)
            .unwrap();
        workflow.phases[0].status = PhaseStatus::Complete;
        workflow.phases[0].outputs = vec!["design.md".into()];
        let config = Config {
            prompt_budget: 300,
            ..Config::default()
        };
        let briefing = Briefing::new(&workflow, &[], &Files(Vec::new()), &config, now);
        assert!(
            briefing
                .plan
                .findings
                .iter()
                .any(|finding| finding.code == FindingCode::OutputMissing),
            "{:?}",
            briefing.plan.findings
        );
        assert_eq!(briefing.prompt(), render_prompt(&briefing.plan, now, 300));
        assert_eq!(
            briefing.prompt_within(5000),
            render_prompt(&briefing.plan, now, 5000)
        );
        assert_ne!(briefing.prompt(), briefing.prompt_within(5000));
    }
}
