//! The hooks of Claude Code's own `Workflow` runs: the launch (`PostToolUse` of `Workflow`)
//! records the run as a workflow of ours; its agents' starts, ends and failures, and every
//! `Stop`, bring it up to date from the client's files; the rules are core's
//! (`checkpoint_core::workflow_run`), the files are read by `clients::claude::workflow_run`.

use std::path::{Path, PathBuf};

use checkpoint_core::{
    Workflow,
    workflow_run::{self, AgentState, Launch, RunRecord},
};
use miette::{Result, miette};

use crate::{
    clients::{
        claude::{
            run_catchup::Catchup,
            workflow_run::{Observation, RunDir, read_script},
        },
        event::{Stop, SubagentStart, ToolUse, TurnFailure},
    },
    commands::hook::Hook,
    output,
};

/// What a hook saw of one agent of a run.
struct AgentEvent<'a> {
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
        self.sync_run(&store.load(&id)?.workflow, None).map(drop)
    }

    /// `SubagentStart` of a run's agent: its task starts.
    pub(super) fn workflow_agent_start(&self, payload: &SubagentStart) -> Result<()> {
        self.workflow_agent(&AgentEvent {
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
            if placed {
                return Ok(());
            }
            self.workflow_agent_among(
                &runs,
                &AgentEvent {
                    agent_id,
                    transcript: None,
                    state: None,
                    result: None,
                },
            )
        });
        if let Err(err) = result {
            output::warn(&format!("checkpoint hook (Workflow run): {err}"));
        }
    }

    /// `SubagentStop` of a run's agent: its task is done, an excerpt of its result the note.
    pub(super) fn workflow_agent_stop(&self, payload: &Stop) -> Result<()> {
        let Some(agent_id) = payload.agent_id.as_deref() else {
            return Ok(());
        };
        let result = payload.last_assistant_message.as_deref();
        self.workflow_agent(&AgentEvent {
            agent_id,
            transcript: payload.agent_transcript_path.as_deref(),
            state: Some(AgentState::Done(workflow_run::excerpt(
                result.unwrap_or_default(),
            ))),
            result,
        })
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
        self.workflow_agent(&AgentEvent {
            agent_id,
            transcript: None,
            state: Some(AgentState::Failed(checkpoint_core::redact::shortened(
                &error,
                super::MAX_TOOL_ERROR,
            ))),
            result: None,
        })
    }

    /// An agent of a run started, ended or failed: its run's workflow is brought up to date.
    fn workflow_agent(&self, event: &AgentEvent<'_>) -> Result<()> {
        self.workflow_agent_among(&self.runs()?, event)
    }

    /// [`Hook::workflow_agent`] among `runs`, the unfinished runs already loaded.
    fn workflow_agent_among(&self, runs: &[Workflow], event: &AgentEvent<'_>) -> Result<()> {
        let named_dir = event
            .transcript
            .and_then(|path| Path::new(path).parent().map(Path::to_owned));
        for workflow in runs {
            let Some(dir) = run_dir(workflow) else {
                continue;
            };
            let ours = match &named_dir {
                Some(named) => *named == dir.dir,
                None => {
                    dir.has_agent(event.agent_id)
                        || dir
                            .observe_from(
                                None,
                                Catchup::load(&self.ctx.store.workflow_dir(&workflow.id)),
                            )
                            .0
                            .knows(event.agent_id)
                }
            };
            if ours {
                return self.sync_run(workflow, Some(event)).map(drop);
            }
        }
        // 2.1.197 starts the first agent before the launch's hook: the launch catches up.
        Ok(())
    }

    /// Brings every unfinished run up to date (its run file appears when it settles).
    pub(super) fn refresh_runs(&self) -> Result<()> {
        for workflow in self.runs()? {
            if let Err(err) = self.sync_run(&workflow, None) {
                output::warn(&format!("checkpoint hook: run `{}`: {err}", workflow.id));
            }
        }
        Ok(())
    }

    /// Brings the unfinished runs among `workflows` (the store's unfinished workflows, as
    /// loaded) up to date, replacing each with its state after; those that finished meanwhile
    /// are left out. A run that cannot be brought up to date is a warning and stays as loaded.
    pub(super) fn refresh_runs_in(&self, workflows: &mut Vec<Workflow>) {
        for workflow in workflows.iter_mut() {
            if !workflow_run::unfinished(workflow) {
                continue;
            }
            match self.sync_run(workflow, None) {
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

    /// Reads the run's files (and what `event` adds), applies what core decides, and keeps the
    /// finished agents' full results; returns the workflow as it is afterwards. `workflow` is
    /// the run's workflow as already loaded (its record, which never changes, says where the
    /// run's files are; the update reads the state again under the lock).
    fn sync_run(&self, workflow: &Workflow, event: Option<&AgentEvent<'_>>) -> Result<Workflow> {
        let store = &self.ctx.store;
        let id = &workflow.id;
        let Some(record) = workflow_run::record(workflow) else {
            return Ok(workflow.clone());
        };
        let mut warnings = Vec::new();
        let script = read_script(record.script_path.as_deref(), &self.cwd(), &mut Vec::new());
        // Only what the client appended since the last hook is read (the catch-up saved in
        // the workflow's directory), and the catch-up is saved once what it saw is applied.
        let store_dir = store.workflow_dir(id);
        let (mut seen, catchup) = match run_dir(workflow) {
            Some(dir) => {
                let (seen, catchup) = dir.observe_from(script.as_ref(), Catchup::load(&store_dir));
                (seen, Some(catchup))
            }
            None => (Observation::default(), None),
        };
        warnings.append(&mut seen.warnings);
        if let Some(event) = event {
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
        let now = self.ctx.now;
        let loaded = store.update(id, now, |workflow| {
            let (transitions, mut placed) =
                workflow_run::observed(workflow, &seen.agents, seen.settled, now);
            warnings.append(&mut placed);
            Ok(transitions)
        })?;
        for phase in &loaded.workflow.phases {
            for task in &phase.tasks {
                let result = task
                    .agent_id
                    .as_deref()
                    .and_then(|agent_id| seen.results.remove_entry(agent_id));
                let Some((_, result)) = result else {
                    continue;
                };
                let kept = store
                    .results_dir(id)
                    .join(phase.id.as_str())
                    .join(format!("{}.md", task.id));
                if !kept.exists() {
                    store.keep_result(id, &phase.id, &task.id, &result)?;
                }
            }
        }
        // The results of agents not placed yet wait in the catch-up for their task.
        if let Some(mut catchup) = catchup
            && let Err(err) = {
                catchup.pending = seen.results.into_iter().collect();
                catchup.save(&store_dir)
            }
        {
            // The next hook reads the run's files from the start: the same result, slower.
            warnings.push(format!(
                "the run's catch-up could not be saved in `{}`: {err}",
                store_dir.display()
            ));
        }
        self.warn_all(&warnings);
        Ok(loaded.workflow)
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

/// The run's directory, as its launch recorded it.
fn run_dir(workflow: &Workflow) -> Option<RunDir> {
    let record = workflow_run::record(workflow)?;
    Some(RunDir {
        dir: PathBuf::from(record.transcript_dir?),
    })
}
