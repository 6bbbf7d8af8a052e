//! The hooks of Claude Code's own `Workflow` runs: the launch (`PostToolUse` of `Workflow`)
//! records the run as a workflow of ours; its agents' starts, ends and failures, and every
//! `Stop`, bring it up to date from the client's files; the rules are core's
//! (`checkpoint_core::workflow_run`), the files are read by `clients::claude::workflow_run`.

use std::{
    cell::Cell,
    collections::{HashMap, HashSet},
    path::{Path, PathBuf},
};

use checkpoint_core::{
    Transition, Workflow, WorkflowId,
    workflow_run::{self, AgentState, Launch, RunRecord},
};
use miette::{Result, miette};

use crate::{
    clients::{
        claude::{
            run_catchup::{Catchup, placed_agents, store_journal},
            workflow_run::{Observation, RunDir, read_script},
        },
        event::{Event, Stop, SubagentStart, ToolUse, TurnFailure},
    },
    commands::hook::Hook,
    output,
};

/// What one pass of a hook over the unfinished workflows does to the runs among them: each is
/// brought up to date from its files, and the event of an agent (its start, end or failure)
/// goes to the first run it belongs to.
pub(super) struct WorkflowRunCatchUp<'a> {
    event: Option<WorkflowRunAgentSeen<'a>>,
    /// Whether a run took the event.
    taken: Cell<bool>,
}

impl<'a> WorkflowRunCatchUp<'a> {
    /// Every run brought up to date.
    pub(super) fn all() -> Self {
        Self {
            event: None,
            taken: Cell::new(false),
        }
    }

    fn agent(event: WorkflowRunAgentSeen<'a>) -> Self {
        Self {
            event: Some(event),
            taken: Cell::new(false),
        }
    }
}

/// What a run's update saw, for once it is written.
pub(super) struct CaughtUp {
    /// The full results read, by agent.
    results: HashMap<String, String>,
    /// The catch-up to save, and the one loaded.
    catchup: Catchup,
    saved: Option<Catchup>,
    store_dir: PathBuf,
    /// The identity of the workflow's journal in the store.
    journal: u64,
    warnings: Vec<String>,
}

/// What a hook saw of one agent of a run.
struct WorkflowRunAgentSeen<'a> {
    agent_id: &'a str,
    /// `SubagentStop`'s transcript path, which names the run's directory.
    transcript: Option<&'a str>,
    /// `None` at the start; its end or failure.
    state: Option<AgentState>,
    /// The full result, at its end.
    result: Option<&'a str>,
}

impl Hook {
    /// A run was launched or resumed: it becomes a workflow of ours (or continues its own).
    pub(super) fn workflow_launched(&self, payload: &ToolUse) -> Result<()> {
        let response = &payload.tool_response;
        let input = &payload.tool_input;
        let Some(run_id) = response
            .run_id
            .as_deref()
            .or(input.resume_from_run_id.as_deref())
        else {
            miette::bail!("the `Workflow` call's response has no `runId`; the run is not recorded");
        };
        let id = workflow_run::workflow_id(run_id).map_err(|message| miette!("{message}"))?;
        let store = &self.ctx.store;
        if !store
            .workflow_dir(&id)
            .join(checkpoint_core::store::STATE_FILE)
            .exists()
        {
            let transcript_dir = response.transcript_dir.clone().or_else(|| {
                let transcript = self.envelope.transcript_path.as_deref()?;
                Some(
                    RunDir::of_session(Path::new(transcript), run_id)
                        .dir
                        .display()
                        .to_string(),
                )
            });
            let record = RunRecord {
                run_id: run_id.to_owned(),
                script_path: response.script_path.clone().or(input.script_path.clone()),
                transcript_dir,
                session_id: Some(self.envelope.session_id.clone()),
            };
            let mut warnings = Vec::new();
            let script = read_script(record.script_path.as_deref(), &self.cwd(), &mut warnings);
            let script = script.unwrap_or_default();
            let launch = Launch {
                record,
                name: script.name.or(response.workflow_name.clone()),
                description: script.description,
                phases: script.phases,
                agents: script
                    .agents
                    .into_iter()
                    .filter_map(|call| Some((call.label?, call.phase)))
                    .collect(),
            };
            self.warn_all(&warnings);
            let workflow = workflow_run::launched(&launch, self.ctx.now)
                .map_err(|message| miette!("{message}"))?;
            let loaded = store.create(workflow, self.ctx.now)?;
            output::warn_redacted(loaded.redacted);
        }
        self.catch_up_workflow_run(&id).map(drop)
    }

    /// `SubagentStart` of a run's agent: its task starts.
    pub(super) fn workflow_agent_start(&self, payload: &SubagentStart) -> Result<()> {
        self.workflow_agent(WorkflowRunAgentSeen {
            agent_id: &payload.agent_id,
            transcript: None,
            state: None,
            result: None,
        })
    }

    /// A tool call of a sub-agent: when it is an agent of a run that its `SubagentStart` could
    /// not place yet (its files were not written then, as on a loaded machine), its files now
    /// say where it belongs, and the run catches up (its earlier phases complete once an agent
    /// of a later one is at work). Never fails the call's hook: a problem is a warning.
    pub(super) fn workflow_agent_at_work(&self, payload: &ToolUse) {
        let Some(agent_id) = payload.agent_id.as_deref() else {
            return;
        };
        let result = self.runs().and_then(|runs| {
            let placed = runs.iter().any(|workflow| {
                workflow
                    .phases
                    .iter()
                    .flat_map(|phase| &phase.tasks)
                    .any(|task| task.agent_id.as_deref() == Some(agent_id))
            });
            if placed || runs.is_empty() {
                return Ok(());
            }
            self.workflow_agent(WorkflowRunAgentSeen {
                agent_id,
                transcript: None,
                state: None,
                result: None,
            })
        });
        if let Err(err) = result {
            output::warn(&format!("checkpoint hook (Workflow run): {err}"));
        }
    }

    /// `SubagentStop` of a run's agent: its task is done, an excerpt of its result the note, in
    /// the same update of its run as the heartbeat of the agent's stop.
    pub(super) fn workflow_agent_stop(&self, event: &Event, payload: &Stop) -> Result<()> {
        let Some(agent_id) = payload.agent_id.as_deref() else {
            return self.stop(event, payload);
        };
        let result = payload.last_assistant_message.as_deref();
        let catch_up = WorkflowRunCatchUp::agent(WorkflowRunAgentSeen {
            agent_id,
            transcript: payload.agent_transcript_path.as_deref(),
            state: Some(AgentState::Done(workflow_run::excerpt(
                result.unwrap_or_default(),
            ))),
            result,
        });
        self.stop_catching_up(event, payload, Some(&catch_up))
    }

    /// `StopFailure` of a run's agent (its 429): its task fails with the error.
    pub(super) fn workflow_agent_failure(&self, payload: &TurnFailure) -> Result<()> {
        let Some(agent_id) = payload.agent_id.as_deref() else {
            return Ok(());
        };
        let error = match payload.last_assistant_message.as_deref() {
            Some(message) if !message.trim().is_empty() => {
                format!("{}: {message}", payload.error)
            }
            _ => payload.error.clone(),
        };
        self.workflow_agent(WorkflowRunAgentSeen {
            agent_id,
            transcript: None,
            state: Some(AgentState::Failed(checkpoint_core::redact::failure_text(
                &error,
            ))),
            result: None,
        })
    }

    /// An agent of a run started, ended or failed: its run's workflow is brought up to date
    /// (each unfinished workflow loaded once, under its lock).
    fn workflow_agent(&self, event: WorkflowRunAgentSeen<'_>) -> Result<()> {
        self.update_unfinished_catching_up(Some(&WorkflowRunCatchUp::agent(event)), |_| Vec::new())
            .map(drop)
    }

    /// Brings the unfinished runs among `workflows` (the store's unfinished workflows, as
    /// loaded) up to date, replacing each with its state after; those that finished meanwhile
    /// are left out. A run that cannot be brought up to date is a warning and stays as loaded.
    pub(super) fn refresh_runs_in(&self, workflows: &mut Vec<Workflow>) {
        for workflow in workflows.iter_mut() {
            if !workflow_run::unfinished(workflow) {
                continue;
            }
            match self.catch_up_workflow_run(&workflow.id) {
                Ok(now) => *workflow = now,
                Err(err) => output::warn(&format!("checkpoint hook: run `{}`: {err}", workflow.id)),
            }
        }
        workflows.retain(|workflow| !workflow.status.is_finished());
    }

    /// What a session that did not launch them is told of the unfinished runs among
    /// `workflows`.
    pub(super) fn runs_briefing(&self, workflows: &[Workflow], budget: usize) -> String {
        let mut out = String::new();
        let runs: Vec<&Workflow> = workflows
            .iter()
            .filter(|workflow| workflow_run::unfinished(workflow))
            .collect();
        // Each run its share of the budget, enough for its instructions at least.
        let share = (budget / runs.len().max(1)).max(1_500);
        for workflow in runs {
            let results = self.ctx.store.results_dir(&workflow.id);
            let results = results
                .strip_prefix(&self.ctx.project_root)
                .unwrap_or(&results)
                .display()
                .to_string();
            if let Some(text) = workflow_run::briefing_within(workflow, &results, share) {
                out.push('\n');
                out.push_str(&text);
            }
        }
        out
    }

    /// The unfinished workflows that mirror a run.
    fn runs(&self) -> Result<Vec<Workflow>> {
        Ok(self
            .scan()?
            .0
            .into_iter()
            .filter(workflow_run::unfinished)
            .collect())
    }

    /// Brings the run `id` up to date from its files; returns the workflow as it is afterwards.
    fn catch_up_workflow_run(&self, id: &WorkflowId) -> Result<Workflow> {
        let catch_up = WorkflowRunCatchUp::all();
        let mut caught_up = None;
        let loaded = self.ctx.store.update(id, self.ctx.now, |workflow| {
            Ok(self.workflow_run_transitions(workflow, &catch_up, &mut caught_up))
        })?;
        if let Some(caught_up) = caught_up {
            self.workflow_run_caught_up(&loaded.workflow, caught_up);
        }
        Ok(loaded.workflow)
    }

    /// Under the lock of `workflow`'s update: what the run's files (read from where the saved
    /// catch-up left off) and the event of `catch_up` (when the run is the first it belongs to)
    /// change, as core decides; what was seen goes in `caught_up`, for [`Hook::workflow_run_caught_up`] once
    /// the update is written. Nothing for a workflow that is no unfinished run.
    pub(super) fn workflow_run_transitions(
        &self,
        workflow: &Workflow,
        catch_up: &WorkflowRunCatchUp<'_>,
        caught_up: &mut Option<CaughtUp>,
    ) -> Vec<Transition> {
        let Some(record) = workflow_run::record(workflow) else {
            return Vec::new();
        };
        let Some(dir) = run_dir(workflow) else {
            return Vec::new();
        };
        if workflow.status.is_finished() {
            return Vec::new();
        }
        let script = read_script(record.script_path.as_deref(), &self.cwd(), &mut Vec::new());
        let store_dir = self.ctx.store.workflow_dir(&workflow.id);
        // Only what the client appended since the last hook is read, and only the agents it
        // names or that have no task yet are decided again: the rest is in the workflow.
        let journal = store_journal(&store_dir);
        let saved = Catchup::load(&store_dir).filter(|saved| saved.fits(workflow, journal));
        let placed = placed_agents(workflow);
        let (mut seen, catchup) = dir.observe_from(script.as_ref(), saved.clone(), &placed);
        let mut warnings = std::mem::take(&mut seen.warnings);
        if let Some(event) = &catch_up.event
            && !catch_up.taken.get()
            && owns(&dir, &seen, &placed, event)
        {
            catch_up.taken.set(true);
            let agent = seen.agent(event.agent_id);
            match &event.state {
                Some(state @ AgentState::Failed(_)) => agent.state = state.clone(),
                Some(state @ AgentState::Done(_)) if agent.state == AgentState::Started => {
                    agent.state = state.clone();
                }
                Some(AgentState::Done(_) | AgentState::Started) | None => {}
            }
            if let Some(result) = event.result {
                seen.results
                    .entry(event.agent_id.to_owned())
                    .or_insert_with(|| result.to_owned());
            }
        }
        let (transitions, mut unplaced) =
            workflow_run::observed(workflow, &seen.agents, seen.settled, self.ctx.now);
        warnings.append(&mut unplaced);
        *caught_up = Some(CaughtUp {
            results: seen.results,
            catchup,
            saved,
            store_dir,
            journal,
            warnings,
        });
        transitions
    }

    /// Once a run's update is written (`workflow` as it is after): keeps the finished agents'
    /// full results, and saves the catch-up when it moved (the results of agents not placed
    /// yet wait in it for their task). Problems are warnings: the next hook reads again.
    pub(super) fn workflow_run_caught_up(&self, workflow: &Workflow, caught_up: CaughtUp) {
        let store = &self.ctx.store;
        let CaughtUp {
            mut results,
            catchup,
            saved,
            store_dir,
            journal,
            mut warnings,
        } = caught_up;
        if !results.is_empty() {
            for phase in &workflow.phases {
                for task in &phase.tasks {
                    let result = task
                        .agent_id
                        .as_deref()
                        .and_then(|agent_id| results.remove_entry(agent_id));
                    let Some((_, result)) = result else {
                        continue;
                    };
                    let kept = store
                        .results_dir(&workflow.id)
                        .join(phase.id.as_str())
                        .join(format!("{}.md", task.id));
                    if !kept.exists()
                        && let Err(err) =
                            store.keep_result(&workflow.id, &phase.id, &task.id, &result)
                    {
                        warnings.push(format!(
                            "the result of task `{}` is not kept: {err}",
                            task.id
                        ));
                    }
                }
            }
        }
        let mut catchup = catchup;
        catchup.unplaced_in(workflow, journal, results.into_iter().collect());
        let moved = saved.is_none_or(|saved| !catchup.same_as(&saved));
        if moved && let Err(err) = catchup.save(&store_dir) {
            // The next hook reads the run's files from the start: the same result, slower.
            warnings.push(format!(
                "the run's catch-up could not be saved in `{}`: {err}",
                store_dir.display()
            ));
        }
        self.warn_all(&warnings);
    }

    fn warn_all(&self, warnings: &[String]) {
        for warning in warnings {
            output::warn(&format!("checkpoint hook (Workflow run): {warning}"));
        }
    }

    /// The session's working directory, against which the client's relative paths resolve.
    fn cwd(&self) -> PathBuf {
        match self.envelope.cwd.as_str() {
            "" => self.ctx.project_root.clone(),
            cwd => PathBuf::from(cwd),
        }
    }
}

/// Whether the agent of `event` is one of the run in `dir`, which `seen` (what the hook read of
/// it) and `placed` (the agents with a task) show: the run its transcript is in, else a run
/// whose files or workflow know it.
fn owns(
    dir: &RunDir,
    seen: &Observation,
    placed: &HashSet<&str>,
    event: &WorkflowRunAgentSeen<'_>,
) -> bool {
    match event.transcript.and_then(|path| Path::new(path).parent()) {
        Some(named) => named == dir.dir,
        None => {
            placed.contains(event.agent_id)
                || seen.knows(event.agent_id)
                || dir.has_agent(event.agent_id)
        }
    }
}

/// The run's directory, as its launch recorded it.
fn run_dir(workflow: &Workflow) -> Option<RunDir> {
    let record = workflow_run::record(workflow)?;
    Some(RunDir {
        dir: PathBuf::from(record.transcript_dir?),
    })
}
