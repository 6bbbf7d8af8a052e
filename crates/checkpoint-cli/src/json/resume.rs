//! The documents of `checkpoint resume` and `checkpoint run --dry-run`: the resume plan, and the
//! counterparts of the planner's types (`Plan`, `PhaseRef`, `RecoveryAction`, `NextAction`,
//! `SubAgents`, `Finding`).

use std::fmt;

use checkpoint_core::{
    Activity, ContextSummary, EffectSource, Holder, PhaseId, PhaseStatus, TaskId, WorkflowId,
    WorkflowStatus,
    effects::RecordedEffect,
    resume::{self, Action, FindingCode, RecoveryCode, ResumePlan, Severity},
};
use chrono::{DateTime, Utc};
use serde::{Serialize, Serializer};

/// The JSON document of `checkpoint resume`.
#[derive(Debug, Serialize)]
pub(crate) struct ResumeReport<'a> {
    pub(crate) version: u32,
    /// Whether the recoveries (and any chosen action) were written.
    pub(crate) applied: bool,
    /// Where an archived workflow went (`--fresh`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) archived_to: Option<String>,
    /// The phases `--restart` sent back to pending because they depend on the restarted one.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) reset: &'a [PhaseId],
    #[serde(serialize_with = "optional_plan")]
    pub(crate) plan: Option<&'a ResumePlan>,
    /// When the plan is of another system's state file: its format and path (read only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) source: Option<SeedOrigin>,
    /// The files changed since the last snapshot of the files, and by each phase in progress;
    /// absent outside git or before the first snapshot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) files: Option<ResumeFiles>,
}

/// The files `resume` names: changed since the last snapshot (by a session that died before its
/// turn ended, or outside any session), and changed by each interrupted phase since it started.
#[derive(Debug, Serialize)]
pub(crate) struct ResumeFiles {
    pub(crate) since_last_snapshot: Vec<String>,
    pub(crate) phases: Vec<PhaseFiles>,
}

/// The files a phase in progress changed, from the last snapshot at or before its start to now.
#[derive(Debug, Serialize)]
pub(crate) struct PhaseFiles {
    pub(crate) phase: PhaseId,
    /// How many files, and lines added and removed.
    pub(crate) changed: u64,
    pub(crate) added: u64,
    pub(crate) removed: u64,
    /// The first 50 paths.
    pub(crate) paths: Vec<String>,
}

/// Another checkpoint system's state file that a read-only plan was made from.
#[derive(Debug, Serialize)]
pub(crate) struct SeedOrigin {
    pub(crate) format: &'static str,
    pub(crate) path: String,
}

/// The JSON document of `checkpoint run --dry-run`: the plan, and the step the runner would
/// take.
#[derive(Debug, Serialize)]
pub(crate) struct RunDryRun<'a> {
    pub(crate) version: u32,
    #[serde(serialize_with = "plan")]
    pub(crate) plan: &'a ResumePlan,
    pub(crate) step: DryRunStep,
    pub(crate) reason: String,
    /// The `claude` command line of a session.
    pub(crate) command: Option<String>,
}

/// What `checkpoint run` would do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DryRunStep {
    /// Start an agent session.
    Session,
    /// Wait (a rate limit, a backoff, a pause).
    Wait,
    /// Stop for a person.
    Stop,
}

impl fmt::Display for DryRunStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Self::Session => "session",
            Self::Wait => "wait",
            Self::Stop => "stop",
        })
    }
}

/// Everything `checkpoint resume` tells the user and Claude, as the documents show it.
#[derive(Debug, Serialize)]
struct Plan<'a> {
    workflow: &'a WorkflowId,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    status: WorkflowStatus,
    last_active: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_activity: Option<&'a Activity>,
    interrupted: bool,
    completed: Vec<PhaseRef<'a>>,
    in_progress: Vec<PhaseRef<'a>>,
    awaiting_approval: Vec<PhaseRef<'a>>,
    failed: Vec<PhaseRef<'a>>,
    ready: Vec<PhaseRef<'a>>,
    blocked: Vec<PhaseRef<'a>>,
    findings: Vec<Finding<'a>>,
    recoveries: Vec<RecoveryAction<'a>>,
    decision_required: bool,
    next: NextAction<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sub_agents: Option<SubAgents<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    paused_until: Option<DateTime<Utc>>,
    context: &'a ContextSummary,
    /// The effects already done in phases not done, which a resume must not repeat.
    effects: Vec<DoneEffect<'a>>,
}

/// An effect a resume must not repeat, as the plan lists it.
#[derive(Debug, Serialize)]
struct DoneEffect<'a> {
    number: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    phase: Option<&'a PhaseId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempt: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<&'a str>,
    command: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<&'a str>,
    at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a str>,
    source: EffectSource,
}

impl<'a> From<&'a RecordedEffect> for DoneEffect<'a> {
    fn from(effect: &'a RecordedEffect) -> Self {
        Self {
            number: effect.number,
            phase: effect.phase.as_ref(),
            attempt: effect.attempt,
            tool: effect.tool.as_deref(),
            command: &effect.command,
            output: effect.output.as_deref(),
            at: effect.at,
            session_id: effect.session_id.as_deref(),
            source: effect.source,
        }
    }
}

impl<'a> From<&'a ResumePlan> for Plan<'a> {
    fn from(plan: &'a ResumePlan) -> Self {
        let phases = |refs: &'a [resume::PhaseRef]| refs.iter().map(PhaseRef::from).collect();
        Self {
            workflow: &plan.workflow,
            title: plan.title.as_deref(),
            description: plan.description.as_deref(),
            status: plan.status,
            last_active: plan.last_active,
            last_activity: plan.last_activity.as_ref(),
            interrupted: plan.interrupted,
            completed: phases(&plan.completed),
            in_progress: phases(&plan.in_progress),
            awaiting_approval: phases(&plan.awaiting_approval),
            failed: phases(&plan.failed),
            ready: phases(&plan.ready),
            blocked: phases(&plan.blocked),
            findings: plan.findings.iter().map(Finding::from).collect(),
            recoveries: plan.recoveries.iter().map(RecoveryAction::from).collect(),
            decision_required: plan.decision_required,
            next: NextAction::from(&plan.next),
            sub_agents: plan.sub_agents.as_ref().map(SubAgents::from),
            paused_until: plan.paused_until,
            context: &plan.context,
            effects: plan.effects.iter().map(DoneEffect::from).collect(),
        }
    }
}

/// A phase as the plan shows it.
#[derive(Debug, Serialize)]
struct PhaseRef<'a> {
    id: &'a PhaseId,
    name: &'a str,
    status: PhaseStatus,
    attempts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    completed_at: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    commit_sha: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    progress: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    waiting_for: &'a [PhaseId],
    /// Tasks done and in all.
    #[serde(skip_serializing_if = "Option::is_none")]
    tasks: Option<(usize, usize)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    holder: Option<&'a Holder>,
}

impl<'a> From<&'a resume::PhaseRef> for PhaseRef<'a> {
    fn from(phase: &'a resume::PhaseRef) -> Self {
        Self {
            id: &phase.id,
            name: &phase.name,
            status: phase.status,
            attempts: phase.attempts,
            completed_at: phase.completed_at,
            commit_sha: phase.commit_sha.as_deref(),
            description: phase.description.as_deref(),
            progress: phase.progress.as_deref(),
            error: phase.error.as_deref(),
            waiting_for: &phase.waiting_for,
            tasks: phase.tasks,
            holder: phase.holder.as_ref(),
        }
    }
}

/// One thing validation found (in `resume` and `validate`).
#[derive(Debug, Serialize)]
pub(super) struct Finding<'a> {
    #[serde(serialize_with = "code")]
    severity: Severity,
    #[serde(serialize_with = "code")]
    code: FindingCode,
    #[serde(skip_serializing_if = "Option::is_none")]
    phase: Option<&'a PhaseId>,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<&'a str>,
}

impl<'a> From<&'a resume::Finding> for Finding<'a> {
    fn from(finding: &'a resume::Finding) -> Self {
        Self {
            severity: finding.severity,
            code: finding.code,
            phase: finding.phase.as_ref(),
            message: &finding.message,
            hint: finding.hint.as_deref(),
        }
    }
}

/// A repair the planner proposes.
#[derive(Debug, Serialize)]
struct RecoveryAction<'a> {
    #[serde(serialize_with = "code")]
    code: RecoveryCode,
    #[serde(skip_serializing_if = "Option::is_none")]
    phase: Option<&'a PhaseId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<&'a TaskId>,
    description: &'a str,
}

impl<'a> From<&'a resume::RecoveryAction> for RecoveryAction<'a> {
    fn from(recovery: &'a resume::RecoveryAction) -> Self {
        Self {
            code: recovery.code,
            phase: recovery.phase.as_ref(),
            task: recovery.task.as_ref(),
            description: &recovery.description,
        }
    }
}

/// The single recommended next action: `plan.next`, which the skills and the MCP instructions
/// point the model at (`plan.next.action`, `plan.next.command`).
#[derive(Debug, Serialize)]
struct NextAction<'a> {
    #[serde(serialize_with = "code")]
    action: Action,
    #[serde(skip_serializing_if = "Option::is_none")]
    phase: Option<&'a PhaseId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<&'a TaskId>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    parallel: &'a [PhaseId],
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<&'a str>,
    reason: &'a str,
}

impl<'a> From<&'a resume::NextAction> for NextAction<'a> {
    fn from(next: &'a resume::NextAction) -> Self {
        Self {
            action: next.action,
            phase: next.phase.as_ref(),
            task: next.task.as_ref(),
            parallel: &next.parallel,
            command: next.command.as_deref(),
            reason: &next.reason,
        }
    }
}

/// The phases held by sub-agents.
#[derive(Debug, Serialize)]
struct SubAgents<'a> {
    done: Vec<Held<'a>>,
    interrupted: Vec<Held<'a>>,
    running: Vec<Held<'a>>,
    not_dispatched: &'a [PhaseId],
    dispatch: Vec<Dispatch<'a>>,
}

impl<'a> From<&'a resume::SubAgents> for SubAgents<'a> {
    fn from(view: &'a resume::SubAgents) -> Self {
        let held = |list: &'a [resume::Held]| list.iter().map(Held::from).collect();
        Self {
            done: held(&view.done),
            interrupted: held(&view.interrupted),
            running: held(&view.running),
            not_dispatched: &view.not_dispatched,
            dispatch: view.dispatch.iter().map(Dispatch::from).collect(),
        }
    }
}

/// A phase and the sub-agent that held it.
#[derive(Debug, Serialize)]
struct Held<'a> {
    phase: &'a PhaseId,
    holder: &'a Holder,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
    idle_minutes: i64,
}

impl<'a> From<&'a resume::Held> for Held<'a> {
    fn from(held: &'a resume::Held) -> Self {
        Self {
            phase: &held.phase,
            holder: &held.holder,
            note: held.note.as_deref(),
            idle_minutes: held.idle_minutes,
        }
    }
}

/// One sub-agent to dispatch.
#[derive(Debug, Serialize)]
struct Dispatch<'a> {
    phase: &'a PhaseId,
    line: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
}

impl<'a> From<&'a resume::Dispatch> for Dispatch<'a> {
    fn from(dispatch: &'a resume::Dispatch) -> Self {
        Self {
            phase: &dispatch.phase,
            line: &dispatch.line,
            note: dispatch.note.as_deref(),
        }
    }
}

/// Writes a code of a stable vocabulary (`FindingCode`, `RecoveryCode`, `Action`, `Severity`)
/// as its string, which is what each one's `Display` writes.
fn code<S: Serializer>(code: &impl fmt::Display, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(code)
}

fn plan<S: Serializer>(plan: &&ResumePlan, serializer: S) -> Result<S::Ok, S::Error> {
    Plan::from(*plan).serialize(serializer)
}

fn optional_plan<S: Serializer>(
    plan: &Option<&ResumePlan>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    plan.map(Plan::from).serialize(serializer)
}
