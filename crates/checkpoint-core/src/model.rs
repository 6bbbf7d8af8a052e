//! The workflow model: a workflow of phases (a DAG) with tasks, attempts, approvals, artifacts and
//! a context summary.
//!
//! These types are the on-disk contract of `state.json` (schema version [`SCHEMA_VERSION`]); the
//! JSON Schema in `docs/state.schema.json` is generated from them. Change them only in
//! append-only ways (new optional fields), or bump the version.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    error::{Error, Result},
    id::{PhaseId, TaskId, WorkflowId},
    timestamp::Timestamp,
};

/// The schema version this build reads and writes.
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// A workflow: the unit that is checkpointed and resumed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Workflow {
    /// The format version; a reader refuses to rewrite a newer one.
    pub schema_version: u32,
    /// The workflow id, also its directory name.
    pub id: WorkflowId,
    /// A one-line title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A longer description of the goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The kind of workflow, for example `orchestrate` or `implement`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The overall status, derived from the phases unless paused or abandoned.
    pub status: WorkflowStatus,
    /// When the workflow was created.
    #[serde(with = "crate::timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub created_at: DateTime<Utc>,
    /// When the last transition was applied.
    #[serde(with = "crate::timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub updated_at: DateTime<Utc>,
    /// The sequence number of the last journal entry applied to this state.
    pub seq: u64,
    /// The git context the workflow was started in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitContext>,
    /// What a new session needs to know: decisions, files and notes.
    #[serde(default)]
    pub context: ContextSummary,
    /// The phases, in plan order.
    pub phases: Vec<Phase>,
    /// Set while the workflow is paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<Pause>,
    /// The last sign of life from an agent session (a heartbeat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_activity: Option<Activity>,
    /// The replan log, as in the checkpoint-recovery pattern.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replans: Vec<Replan>,
    /// Where `checkpoint run --all` takes it among the project's workflows: higher first, none
    /// as 0 (from the plan's `priority`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// The last session handed over from another machine or person (`checkpoint push
    /// --session`), which `resume --format prompt` and a new session name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff: Option<Handoff>,
    /// Data from an imported format that has no place in this model, kept verbatim.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extensions: serde_json::Map<String, serde_json::Value>,
}

/// The status of a whole workflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WorkflowStatus {
    /// No phase has started yet.
    Pending,
    /// Work has started and is not finished.
    InProgress,
    /// Paused on purpose (for example after a rate limit).
    Paused,
    /// A phase waits for a person's approval.
    AwaitingApproval,
    /// A phase failed and nothing is running.
    Failed,
    /// Every phase is complete or skipped.
    Complete,
    /// Given up on purpose.
    Abandoned,
}

impl WorkflowStatus {
    /// Whether nothing more will happen to the workflow.
    pub fn is_finished(self) -> bool {
        matches!(self, Self::Complete | Self::Abandoned)
    }

    /// The status as written in the state file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Paused => "paused",
            Self::AwaitingApproval => "awaiting_approval",
            Self::Failed => "failed",
            Self::Complete => "complete",
            Self::Abandoned => "abandoned",
        }
    }
}

/// Where in git the workflow runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GitContext {
    /// The branch checked out when the workflow started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The worktree's top-level directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    /// `HEAD` when the workflow started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
}

/// The context summary re-injected into a new session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ContextSummary {
    /// Key decisions, oldest first.
    #[serde(default)]
    pub key_decisions: Vec<Decision>,
    /// Files the work created or changed that matter, without duplicates.
    #[serde(default)]
    pub file_paths: Vec<String>,
    /// Free-text notes, oldest first.
    #[serde(default)]
    pub notes: Vec<Note>,
}

/// A key decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Decision {
    /// What was decided, and why.
    pub text: String,
    /// When it was recorded.
    #[serde(with = "crate::timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub at: DateTime<Utc>,
}

/// A free-text note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Note {
    /// The note.
    pub text: String,
    /// When it was recorded.
    #[serde(with = "crate::timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub at: DateTime<Utc>,
}

/// Why and until when a workflow is paused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Pause {
    /// Why it was paused, for example `rate_limit`.
    pub reason: String,
    /// When it was paused.
    #[serde(with = "crate::timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub at: DateTime<Utc>,
    /// When work may continue, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Timestamp>,
}

/// A sign of life from an agent session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Activity {
    /// When it was seen.
    #[serde(with = "crate::timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub at: DateTime<Utc>,
    /// What reported it, for example `Stop` or `cli`.
    pub source: String,
    /// The Claude Code session id, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// A session sent to the remote with its uncommitted work, to go on elsewhere.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Handoff {
    /// The client's session id.
    pub session_id: String,
    /// The client, for example `claude`.
    pub client: String,
    /// The sender's machine (its host name).
    pub machine: String,
    /// The sender (the git user name, else the login).
    pub user: String,
    /// When it was sent.
    #[serde(with = "crate::timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub at: DateTime<Utc>,
    /// The commit the uncommitted work sits on.
    pub base: String,
}

/// One entry of the replan log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Replan {
    /// The phase that was replanned.
    pub phase: PhaseId,
    /// Why.
    pub reason: String,
    /// When.
    #[serde(with = "crate::timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub at: DateTime<Utc>,
}

/// A phase of a workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Phase {
    /// The phase id, unique in the workflow.
    pub id: PhaseId,
    /// A human name.
    pub name: String,
    /// What the phase is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Phases that must be complete (or skipped) before this one starts.
    #[serde(default)]
    pub dependencies: Vec<PhaseId>,
    /// The phase status.
    pub status: PhaseStatus,
    /// When the current attempt started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// When the phase completed (or was skipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<Timestamp>,
    /// How many times the phase was started.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempts: u32,
    /// How many of those attempts failed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failures: u32,
    /// A note on partial work, for resuming mid-phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<String>,
    /// When the progress note was last written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_at: Option<Timestamp>,
    /// Artifact paths the phase must produce.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<String>,
    /// Artifacts the phase recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// The commit that captured the phase's work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_sha: Option<String>,
    /// The last error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How many times the phase was replanned.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replan_count: u32,
    /// Whether completing the phase waits for a person's approval.
    #[serde(default, skip_serializing_if = "is_false")]
    pub requires_approval: bool,
    /// The approval, once given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    /// The phase to go back to when this one fails (else it is retried).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_failure: Option<PhaseId>,
    /// How many attempts may fail before a person must decide (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// Tasks inside the phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<Task>,
    /// The sub-agent the phase was last dispatched to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<Holder>,
    /// Patterns the plan adds to (or, with a leading `!`, removes from) what counts as an
    /// effect: globs over a Bash command or an MCP tool's name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<String>,
    /// Globs over paths from the checkout's top that the writer holding the phase holds while
    /// it is in progress (`claims` in the plan): other writers' writes there are refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<String>,
}

/// The sub-agent that holds (or last held) a phase: the main agent dispatched it with the line
/// `checkpoint phase: <id>` in its prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Holder {
    /// The id of the tool call that dispatched the sub-agent (the hook payload's `tool_use_id`).
    pub tool_use_id: String,
    /// The sub-agent's id, once the client reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The dispatch's short description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The Claude Code session that dispatched it, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// When it was dispatched.
    #[serde(with = "crate::timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub started_at: DateTime<Utc>,
    /// When it was last seen working.
    #[serde(with = "crate::timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub last_activity_at: DateTime<Utc>,
    /// When it ended, finished or not; none while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<Timestamp>,
    /// What made it fail, for example `rate_limit`, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Counters are left out while zero: in a large state, every phase would repeat them.
fn is_zero(value: &u32) -> bool {
    *value == 0
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// The status of a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PhaseStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// The work is done and waits for a person's approval.
    AwaitingApproval,
    /// Done.
    Complete,
    /// The last attempt failed.
    Failed,
    /// Skipped on purpose; counts as done for dependencies.
    Skipped,
}

impl PhaseStatus {
    /// Whether dependants may start.
    pub fn is_done(self) -> bool {
        matches!(self, Self::Complete | Self::Skipped)
    }

    /// The status as written in the state file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::AwaitingApproval => "awaiting_approval",
            Self::Complete => "complete",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
        }
    }
}

/// An artifact a phase recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Artifact {
    /// The path, relative to the project root where possible.
    pub path: String,
    /// When it was recorded.
    #[serde(with = "crate::timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub recorded_at: DateTime<Utc>,
}

/// A person's approval of a phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Approval {
    /// Who approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// When.
    #[serde(with = "crate::timestamp")]
    #[schemars(with = "DateTime<Utc>")]
    pub at: DateTime<Utc>,
    /// Any remark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A task inside a phase (the executor level of the dotagent workflow).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Task {
    /// The task id, unique in its phase.
    pub id: TaskId,
    /// What the task does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The task status.
    pub status: TaskStatus,
    /// How many times the task was started.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempts: u32,
    /// When the current attempt started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// When it finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<Timestamp>,
    /// The file the task writes; its existence proves the task ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The last error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The client's sub-agent that runs the task (a Claude Code `Workflow` agent's id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// What the task's last attempt ended with (an excerpt of a sub-agent's result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The status of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    Running,
    /// Finished.
    Done,
    /// The last attempt failed.
    Failed,
}

impl TaskStatus {
    /// The status as written in the state file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
        }
    }
}

impl Workflow {
    /// The workflow as it was before any work: its plan, every phase pending (`resume --fresh`
    /// starts from it, and a journal repair whose `init` is lost goes on from it).
    pub fn fresh(&self) -> Workflow {
        let mut fresh = self.clone();
        fresh.phases = self
            .phases
            .iter()
            .map(|phase| Phase {
                name: phase.name.clone(),
                description: phase.description.clone(),
                outputs: phase.outputs.clone(),
                requires_approval: phase.requires_approval,
                on_failure: phase.on_failure.clone(),
                max_attempts: phase.max_attempts,
                claims: phase.claims.clone(),
                ..Phase::new(phase.id.clone(), phase.dependencies.clone())
            })
            .collect();
        fresh.status = WorkflowStatus::Pending;
        fresh.pause = None;
        fresh.last_activity = None;
        fresh.replans.clear();
        fresh.seq = 0;
        fresh
    }

    /// The phase with this id.
    pub fn phase(&self, id: &PhaseId) -> Option<&Phase> {
        self.phases.iter().find(|phase| &phase.id == id)
    }

    /// The index of the phase with this id.
    pub fn phase_index(&self, id: &PhaseId) -> Option<usize> {
        self.phases.iter().position(|phase| &phase.id == id)
    }

    /// The set of done phases, for answering dependency questions about many phases in constant
    /// time each.
    pub fn done_set(&self) -> DoneSet<'_> {
        DoneSet(
            self.phases
                .iter()
                .filter(|phase| phase.status.is_done())
                .map(|phase| &phase.id)
                .collect(),
        )
    }

    /// Whether every dependency of `phase` is done.
    pub fn dependencies_done(&self, phase: &Phase) -> bool {
        phase
            .dependencies
            .iter()
            .all(|dep| self.phase(dep).is_some_and(|dep| dep.status.is_done()))
    }

    /// The number of phases that are complete or skipped.
    pub fn n_done(&self) -> usize {
        self.phases
            .iter()
            .filter(|phase| phase.status.is_done())
            .count()
    }

    /// The status implied by the phases, ignoring pauses and abandonment.
    pub fn derived_status(&self) -> WorkflowStatus {
        // One pass: this runs after every transition, replays included.
        let (mut done, mut in_progress, mut failed, mut started) = (0, false, false, false);
        for phase in &self.phases {
            match phase.status {
                PhaseStatus::AwaitingApproval => return WorkflowStatus::AwaitingApproval,
                PhaseStatus::Pending => continue,
                PhaseStatus::InProgress => in_progress = true,
                PhaseStatus::Failed => failed = true,
                PhaseStatus::Complete | PhaseStatus::Skipped => done += 1,
            }
            started = true;
        }
        if !self.phases.is_empty() && done == self.phases.len() {
            WorkflowStatus::Complete
        } else if in_progress {
            WorkflowStatus::InProgress
        } else if failed {
            WorkflowStatus::Failed
        } else if started {
            WorkflowStatus::InProgress
        } else {
            WorkflowStatus::Pending
        }
    }

    /// Recomputes [`Workflow::status`] after a change.
    pub(crate) fn refresh_status(&mut self) {
        self.status = match self.status {
            WorkflowStatus::Abandoned => WorkflowStatus::Abandoned,
            _ if self.pause.is_some() => WorkflowStatus::Paused,
            _ => self.derived_status(),
        };
    }
}

/// The ids of a workflow's done (complete or skipped) phases.
#[derive(Debug, Clone)]
pub struct DoneSet<'a>(foldhash::HashSet<&'a PhaseId>);

impl<'a> DoneSet<'a> {
    /// Whether the phase with this id is done.
    pub fn is_done(&self, id: &PhaseId) -> bool {
        self.0.contains(id)
    }

    /// Whether every dependency of `phase` is done.
    pub fn dependencies_done(&self, phase: &Phase) -> bool {
        phase.dependencies.iter().all(|dep| self.is_done(dep))
    }

    /// The dependencies of `phase` that are not done.
    pub fn waiting_for<'p>(&self, phase: &'p Phase) -> impl Iterator<Item = &'p PhaseId> {
        phase.dependencies.iter().filter(|dep| !self.is_done(dep))
    }
}

impl Holder {
    /// The convention line in a sub-agent's prompt that names the phase it holds:
    /// `checkpoint phase: <id>`.
    pub(crate) const PHASE_LINE: &'static str = "checkpoint phase:";

    /// The line that names `phase` in a dispatch prompt.
    pub(crate) fn phase_line(phase: &PhaseId) -> String {
        format!("{} {phase}", Self::PHASE_LINE)
    }

    /// Who it is, as far as known: "sub-agent `<agent id>`", else by its dispatching call.
    pub fn who(&self) -> String {
        match &self.agent_id {
            Some(agent_id) => format!("sub-agent `{agent_id}`"),
            None => format!("sub-agent of call `{}`", self.tool_use_id),
        }
    }
}

impl Phase {
    /// A new pending phase.
    pub fn new(id: PhaseId, dependencies: Vec<PhaseId>) -> Self {
        Self {
            name: id.as_str().to_owned(),
            id,
            description: None,
            dependencies,
            status: PhaseStatus::Pending,
            started_at: None,
            completed_at: None,
            attempts: 0,
            failures: 0,
            progress: None,
            progress_at: None,
            outputs: Vec::new(),
            artifacts: Vec::new(),
            commit_sha: None,
            error: None,
            replan_count: 0,
            requires_approval: false,
            approval: None,
            on_failure: None,
            max_attempts: None,
            tasks: Vec::new(),
            holder: None,
            effects: Vec::new(),
            claims: Vec::new(),
        }
    }

    /// The task with this id.
    pub fn task(&self, id: &TaskId) -> Option<&Task> {
        self.tasks.iter().find(|task| &task.id == id)
    }
}

/// Checks what serde cannot: the phase graph and references.
pub(crate) fn check_invariants(workflow: &Workflow) -> std::result::Result<(), String> {
    validate_graph(workflow.phases.iter().map(|phase| {
        (
            &phase.id,
            phase.dependencies.as_slice(),
            phase.on_failure.as_ref(),
        )
    }))
    .map_err(|err| err.to_string())?;
    for phase in &workflow.phases {
        let mut seen = foldhash::HashSet::default();
        for task in &phase.tasks {
            if !seen.insert(&task.id) {
                return Err(format!(
                    "task `{}` appears twice in phase `{}`",
                    task.id, phase.id
                ));
            }
        }
    }
    Ok(())
}

/// Checks that phase ids are unique, every reference is known, and dependencies form a DAG.
pub(crate) fn validate_graph<'a>(
    phases: impl Iterator<Item = (&'a PhaseId, &'a [PhaseId], Option<&'a PhaseId>)> + Clone,
) -> Result<()> {
    // Loading a large state runs this on every command: the map is sized once and hashed with
    // foldhash (ids come from our own files, so a keyed hash buys nothing here), and the
    // dependencies are kept in one flat list.
    let mut index = foldhash::HashMap::with_capacity_and_hasher(
        phases.clone().count(),
        foldhash::fast::RandomState::default(),
    );
    for (i, (id, _, _)) in phases.clone().enumerate() {
        if index.insert(id, i).is_some() {
            return Err(Error::InvalidPlan {
                message: format!("phase `{id}` is declared twice"),
                help: "give every phase a unique id".into(),
            });
        }
    }
    if index.is_empty() {
        return Err(Error::InvalidPlan {
            message: "the plan has no phases".into(),
            help: "declare phases with `--phase <id>[:<dep>,<dep>]` (can be repeated) or `--plan <file>`".into(),
        });
    }
    // The dependencies of phase `i` are `deps[starts[i]..starts[i + 1]]`.
    let mut starts = Vec::with_capacity(index.len() + 1);
    let mut deps = Vec::with_capacity(index.len());
    let mut previous: Option<&PhaseId> = None;
    for (id, phase_deps, on_failure) in phases.clone() {
        if let Some(target) = on_failure.filter(|target| !index.contains_key(target)) {
            return Err(Error::InvalidPlan {
                message: format!("phase `{id}` names an unknown `on_failure` phase `{target}`"),
                help: format!("known phases: {}", join_ids(index.keys().copied())),
            });
        }
        starts.push(deps.len());
        for dep in phase_deps {
            // Most phases depend on the one before them: no lookup for those.
            if previous == Some(dep) {
                deps.push(starts.len() - 2);
                continue;
            }
            let Some(&at) = index.get(dep) else {
                return Err(Error::InvalidPlan {
                    message: format!("phase `{id}` depends on unknown phase `{dep}`"),
                    help: format!(
                        "declare `{dep}` as a phase, or remove the dependency; known phases: {}",
                        join_ids(index.keys().copied())
                    ),
                });
            };
            deps.push(at);
        }
        previous = Some(id);
    }
    starts.push(deps.len());
    // Depth-first search with colours: 0 unvisited, 1 on the stack, 2 finished.
    let ids: Vec<&PhaseId> = phases.map(|(id, _, _)| id).collect();
    let mut colour = vec![0u8; ids.len()];
    for start in 0..ids.len() {
        if colour[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        colour[start] = 1;
        while let Some((node, next)) = stack.last_mut() {
            let node = *node;
            if let Some(&dep) = deps[starts[node]..starts[node + 1]].get(*next) {
                *next += 1;
                match colour[dep] {
                    0 => {
                        colour[dep] = 1;
                        stack.push((dep, 0));
                    }
                    1 => {
                        let from = stack.iter().position(|(n, _)| *n == dep).unwrap_or(0);
                        let mut cycle: Vec<&str> = stack[from..]
                            .iter()
                            .map(|(n, _)| ids[*n].as_str())
                            .collect();
                        cycle.push(ids[dep].as_str());
                        return Err(Error::InvalidPlan {
                            message: format!("the dependencies form a cycle: {}", cycle.join(" -> ")),
                            help: "remove one of these dependencies so that phases can run in some order".into(),
                        });
                    }
                    _ => {}
                }
            } else {
                colour[node] = 2;
                stack.pop();
            }
        }
    }
    Ok(())
}

fn join_ids<'a>(ids: impl Iterator<Item = &'a PhaseId>) -> String {
    let mut ids: Vec<&str> = ids.map(PhaseId::as_str).collect();
    ids.sort_unstable();
    ids.iter()
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests;
