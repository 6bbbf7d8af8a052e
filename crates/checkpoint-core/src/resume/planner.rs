//! The resume planner: which recoveries to apply after an interruption, and the single next
//! action, from a validated state.

use chrono::{DateTime, Duration, Utc};

use crate::{
    config::Config,
    effects::RecordedEffect,
    id::{PhaseId, TaskId},
    model::{
        Activity, ContextSummary, DoneSet, Holder, PhaseStatus, TaskStatus, Workflow,
        WorkflowStatus,
    },
    resume::{
        codes::{Action, FindingCode, RecoveryCode},
        holders::{self, SubAgents},
        next::NextAction,
        restart::rerun,
        validate::{Finding, Probe, Severity, written_since},
    },
    timestamp::Timestamp,
    transition::{Transition, apply_in_place},
};

/// What the planner needs besides the state.
#[derive(Debug, Clone)]
pub struct PlanOptions {
    /// The settings.
    pub config: Config,
    /// The current time.
    pub now: DateTime<Utc>,
}

/// A phase as the plan shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseRef {
    /// The phase id.
    pub id: PhaseId,
    /// Its name.
    pub name: String,
    /// Its status after the recoveries.
    pub status: PhaseStatus,
    /// How many times it was started.
    pub attempts: u32,
    /// When it completed.
    pub completed_at: Option<DateTime<Utc>>,
    /// Its commit.
    pub commit_sha: Option<String>,
    /// What it does, where the plan or the imported file says.
    pub description: Option<String>,
    /// Its progress note.
    pub progress: Option<String>,
    /// Its last error.
    pub error: Option<String>,
    /// Unfinished dependencies.
    pub waiting_for: Vec<PhaseId>,
    /// Tasks done and in all.
    pub tasks: Option<(usize, usize)>,
    /// The sub-agent that holds (or held) it.
    pub holder: Option<Holder>,
}

impl PhaseRef {
    /// What it does, as the texts show it after its id: ` (<description>)`, or nothing when
    /// there is no description or only blanks.
    pub fn purpose_suffix(&self) -> String {
        described(self.description.as_deref())
    }
}

/// A repair the planner proposes after an interruption (applied unless it is a dry run).
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveryAction {
    /// A stable code: `orphaned_phase`, `orphaned_task`, `phase_output_present`,
    /// `task_output_present` or `pause_expired`.
    pub code: RecoveryCode,
    /// The phase concerned.
    pub phase: Option<PhaseId>,
    /// The task concerned.
    pub task: Option<TaskId>,
    /// What happens, in a sentence.
    pub description: String,
    /// The transition that does it.
    pub transition: Transition,
}

/// Everything `checkpoint resume` tells the user and Claude.
#[derive(Debug, Clone)]
pub struct ResumePlan {
    /// The workflow id.
    pub workflow: crate::id::WorkflowId,
    /// Its title.
    pub title: Option<String>,
    /// What it is for, where the plan or the imported file says (a checkpoint's
    /// `workflow_description`, for example).
    pub description: Option<String>,
    /// Its status after the recoveries.
    pub status: WorkflowStatus,
    /// When anything last happened: the last transition or heartbeat.
    pub last_active: DateTime<Utc>,
    /// The last heartbeat.
    pub last_activity: Option<Activity>,
    /// Whether no session has shown a sign of life recently.
    pub interrupted: bool,
    /// Phases done (complete or skipped), in plan order.
    pub completed: Vec<PhaseRef>,
    /// Phases in progress.
    pub in_progress: Vec<PhaseRef>,
    /// Phases waiting for approval.
    pub awaiting_approval: Vec<PhaseRef>,
    /// Failed phases.
    pub failed: Vec<PhaseRef>,
    /// Pending phases whose dependencies are done: they may run now, in parallel.
    pub ready: Vec<PhaseRef>,
    /// Pending phases waiting for others.
    pub blocked: Vec<PhaseRef>,
    /// What validation found.
    pub findings: Vec<Finding>,
    /// Repairs for the interruption.
    pub recoveries: Vec<RecoveryAction>,
    /// Whether a person must decide before work continues.
    pub decision_required: bool,
    /// The single recommended next action.
    pub next: NextAction,
    /// The phases held by sub-agents, when the workflow uses them.
    pub sub_agents: Option<SubAgents>,
    /// The pause, if any.
    pub paused_until: Option<DateTime<Utc>>,
    /// The context summary to re-inject.
    pub context: ContextSummary,
    /// The effects already done in phases not done (and on no phase), oldest first: a resume
    /// must not repeat them. Filled by [`crate::resume::Briefing::with_effects`].
    pub effects: Vec<RecordedEffect>,
    /// The last session handed over from another machine or person.
    pub handoff: Option<crate::model::Handoff>,
}

impl ResumePlan {
    /// How many phases the plan counts: the sum of its six buckets (completed, in progress,
    /// awaiting approval, failed, ready, blocked), each phase in exactly one.
    pub fn phase_count(&self) -> usize {
        let Self {
            completed,
            in_progress,
            awaiting_approval,
            failed,
            ready,
            blocked,
            ..
        } = self;
        completed.len()
            + in_progress.len()
            + awaiting_approval.len()
            + failed.len()
            + ready.len()
            + blocked.len()
    }
}

/// Plans the resume of `workflow`, given validation `findings` and the world as `probe` sees it.
pub fn plan(
    workflow: &Workflow,
    findings: Vec<Finding>,
    probe: &dyn Probe,
    options: &PlanOptions,
) -> ResumePlan {
    let now = options.now;
    let last_active = workflow
        .last_activity
        .as_ref()
        .map_or(workflow.updated_at, |activity| {
            activity.at.max(workflow.updated_at)
        });
    let live_window = Duration::minutes(i64::from(options.config.interrupted_after_minutes));
    // Recent activity (a transition or a heartbeat) means the work is live, not interrupted.
    let heartbeat_recent = now - last_active < live_window;
    let interrupted = !workflow.status.is_finished() && !heartbeat_recent;

    let mut recoveries: Vec<RecoveryAction> = pause_recovery(workflow, now).into_iter().collect();
    if !workflow.status.is_finished() {
        recoveries.extend(recoveries_after_interruption(workflow, probe, interrupted));
    }
    // The state after the recoveries, copied once at most (not at all without recoveries).
    // A recovery that does not apply is left out of the view; the writer recomputes under the
    // lock. Its refusal may have changed the copy partly, so the copy is then made again from
    // the recoveries that did apply.
    let mut after = std::borrow::Cow::Borrowed(workflow);
    let mut applied: Vec<&Transition> = Vec::new();
    for recovery in &recoveries {
        let seq = after.seq + 1;
        if apply_in_place(after.to_mut(), &recovery.transition, seq, now).is_ok() {
            applied.push(&recovery.transition);
            continue;
        }
        let mut again = workflow.clone();
        for transition in &applied {
            let seq = again.seq + 1;
            let _ = apply_in_place(&mut again, transition, seq, now);
        }
        after = std::borrow::Cow::Owned(again);
    }
    let after = &*after;

    let done = after.done_set();
    let refs = |filter: &dyn Fn(&crate::model::Phase) -> bool| -> Vec<PhaseRef> {
        after
            .phases
            .iter()
            .filter(|phase| filter(phase))
            .map(|phase| phase_ref(&done, phase))
            .collect()
    };
    let completed = refs(&|phase| phase.status.is_done());
    let in_progress = refs(&|phase| phase.status == PhaseStatus::InProgress);
    let awaiting_approval = refs(&|phase| phase.status == PhaseStatus::AwaitingApproval);
    let failed = refs(&|phase| phase.status == PhaseStatus::Failed);
    let ready =
        refs(&|phase| phase.status == PhaseStatus::Pending && done.dependencies_done(phase));
    let blocked =
        refs(&|phase| phase.status == PhaseStatus::Pending && !done.dependencies_done(phase));

    let Next {
        action: mut next,
        decision_required,
    } = next_action(after, &findings, now, &ready, heartbeat_recent);
    // `max_in_progress` bounds what may run at once: the next phase, then the parallel ones.
    let max = options.config.max_in_progress as usize;
    if max > 0 {
        let running = after
            .phases
            .iter()
            .filter(|phase| phase.status == PhaseStatus::InProgress)
            .count();
        next.parallel
            .truncate(max.saturating_sub(running).saturating_sub(1));
    }
    let sub_agents = holders::sub_agents(after, !interrupted, options.config.max_in_progress, now);
    // Parallel phases held by sub-agents go back to sub-agents, the unfinished ones only.
    if !decision_required
        && matches!(next.action, Action::Start | Action::Continue)
        && let Some(dispatch) = sub_agents.as_ref().and_then(holders::dispatch_next)
    {
        next = dispatch;
    }
    ResumePlan {
        workflow: after.id.clone(),
        title: after.title.clone(),
        description: after
            .description
            .clone()
            .filter(|text| !text.trim().is_empty()),
        status: after.status,
        last_active,
        last_activity: workflow.last_activity.clone(),
        interrupted,
        completed,
        in_progress,
        awaiting_approval,
        failed,
        ready,
        blocked,
        findings,
        recoveries,
        decision_required,
        next,
        sub_agents,
        paused_until: after
            .pause
            .as_ref()
            .and_then(|pause| pause.until)
            .map(Timestamp::utc),
        context: after.context.clone(),
        handoff: after.handoff.clone(),
        effects: Vec::new(),
    }
}

fn phase_ref(done: &DoneSet<'_>, phase: &crate::model::Phase) -> PhaseRef {
    PhaseRef {
        id: phase.id.clone(),
        name: phase.name.clone(),
        status: phase.status,
        attempts: phase.attempts,
        completed_at: phase.completed_at.map(Timestamp::utc),
        commit_sha: phase.commit_sha.clone(),
        description: phase.description.clone(),
        progress: phase.progress.clone(),
        error: phase.error.clone(),
        waiting_for: done.waiting_for(phase).cloned().collect(),
        tasks: (!phase.tasks.is_empty()).then(|| {
            (
                phase
                    .tasks
                    .iter()
                    .filter(|task| task.status == TaskStatus::Done)
                    .count(),
                phase.tasks.len(),
            )
        }),
        holder: phase.holder.clone(),
    }
}

/// The recovery that lifts a pause whose time has come, or that names no time (a rate limit of
/// unknown length): resuming is the user's decision to continue. (Not the store's
/// [`crate::unpause_before_work`], which journals an `Unpause` before work done on a paused workflow.)
fn pause_recovery(workflow: &Workflow, now: DateTime<Utc>) -> Option<RecoveryAction> {
    let pause = workflow.pause.as_ref()?;
    if pause.until.is_some_and(|until| until > now) {
        return None;
    }
    let description = match pause.until {
        Some(_) => format!("the pause ({}) has expired; lifting it", pause.reason),
        None => format!(
            "the workflow was paused ({}); resuming lifts the pause",
            pause.reason
        ),
    };
    Some(RecoveryAction {
        code: RecoveryCode::PauseExpired,
        phase: None,
        task: None,
        description,
        transition: Transition::Unpause,
    })
}

/// The repairs an interruption calls for (the seeds' scenarios 1 and 2).
///
/// Work found on disk is recorded whenever it is there. Work is reset (a phase back to pending,
/// a running task back to pending), spending an attempt, only when the workflow was
/// `interrupted` and a session worked on the phase.
fn recoveries_after_interruption(
    workflow: &Workflow,
    probe: &dyn Probe,
    interrupted: bool,
) -> Vec<RecoveryAction> {
    let mut actions = Vec::new();
    let exists = |path: &str| probe.file_size(path).is_some_and(|size| size > 0);
    for phase in workflow
        .phases
        .iter()
        .filter(|phase| phase.status == PhaseStatus::InProgress)
    {
        let orphaned = interrupted && worked_on(workflow, phase);
        let mut open_tasks = 0;
        for task in &phase.tasks {
            match task.status {
                TaskStatus::Running => match &task.output {
                    Some(output) if exists(output) => actions.push(RecoveryAction {
                        code: RecoveryCode::TaskOutputPresent,
                        phase: Some(phase.id.clone()),
                        task: Some(task.id.clone()),
                        description: format!("task `{}` of phase `{}` was running and its output `{output}` exists: marking it done", task.id, phase.id),
                        transition: Transition::TaskDone { phase: phase.id.clone(), task: task.id.clone(), output: None, note: None },
                    }),
                    _ if !orphaned => open_tasks += 1,
                    _ => {
                        open_tasks += 1;
                        actions.push(RecoveryAction {
                            code: RecoveryCode::OrphanedTask,
                            phase: Some(phase.id.clone()),
                            task: Some(task.id.clone()),
                            description: format!("task `{}` of phase `{}` was running with no output: back to pending for attempt {}", task.id, phase.id, task.attempts + 1),
                            transition: Transition::TaskReset { phase: phase.id.clone(), task: task.id.clone(), reason: "interrupted while running".into() },
                        });
                    }
                },
                TaskStatus::Done => {}
                TaskStatus::Pending | TaskStatus::Failed => open_tasks += 1,
            }
        }
        let outputs_present = !phase.outputs.is_empty()
            && phase.outputs.iter().all(|output| {
                // A file that was there before the phase started is not its work.
                exists(output) && written_since(probe, output, phase.started_at.map(Timestamp::utc))
            });
        if outputs_present && open_tasks == 0 {
            actions.push(RecoveryAction {
                code: RecoveryCode::PhaseOutputPresent,
                phase: Some(phase.id.clone()),
                task: None,
                description: format!(
                    "phase `{}` was in progress and all its declared outputs exist: completing it",
                    phase.id
                ),
                transition: Transition::PhaseComplete {
                    phase: phase.id.clone(),
                    artifacts: phase.outputs.clone(),
                    commit_sha: None,
                    force: false,
                },
            });
        } else if phase.tasks.is_empty() && orphaned {
            actions.push(RecoveryAction {
                code: RecoveryCode::OrphanedPhase,
                phase: Some(phase.id.clone()),
                task: None,
                description: format!(
                    "phase `{}` was in progress when the session stopped: back to pending for attempt {}{}{}",
                    phase.id,
                    phase.attempts + 1,
                    if phase.progress.is_some() { ", keeping its progress note" } else { "" },
                    phase
                        .description
                        .as_deref()
                        .filter(|text| !text.trim().is_empty())
                        .map(|text| format!("; its work: {text}"))
                        .unwrap_or_default()
                ),
                transition: Transition::PhaseReset { phase: phase.id.clone(), reason: "interrupted while in progress".into() },
            });
        }
    }
    actions
}

/// Whether a session worked on a phase in progress: a sign of life (a hook's heartbeat, a
/// compaction, a resume, or the import of another system's file) since the phase started.
///
/// A phase started from the terminal that no session took up was not interrupted: opening and
/// closing sessions must not use up its attempts.
fn worked_on(workflow: &Workflow, phase: &crate::model::Phase) -> bool {
    workflow.last_activity.as_ref().is_some_and(|activity| {
        phase
            .started_at
            .is_none_or(|started| activity.at >= started)
    })
}

/// A phase's description for a sentence about it: ` (<description>)`, or nothing.
fn described(description: Option<&str>) -> String {
    description
        .filter(|text| !text.trim().is_empty())
        .map(|text| format!(" ({text})"))
        .unwrap_or_default()
}

/// The task of a phase to work on next: the one running, else the first not done; with the
/// attempt it is at.
fn next_task(phase: &crate::model::Phase) -> Option<(&TaskId, u32)> {
    phase
        .tasks
        .iter()
        .find(|task| task.status == TaskStatus::Running)
        .map(|task| (&task.id, task.attempts.max(1)))
        .or_else(|| {
            phase
                .tasks
                .iter()
                .find(|task| task.status != TaskStatus::Done)
                .map(|task| (&task.id, task.attempts + 1))
        })
}

/// The next action, and whether a person must decide before work continues.
#[derive(Debug)]
struct Next {
    action: NextAction,
    decision_required: bool,
}

impl Next {
    fn new(
        action: Action,
        phase: Option<&PhaseId>,
        command: Option<String>,
        reason: String,
        decision_required: bool,
    ) -> Self {
        Self {
            action: NextAction {
                action,
                phase: phase.cloned(),
                task: None,
                parallel: Vec::new(),
                command,
                reason,
            },
            decision_required,
        }
    }
}

/// The single next action, from the first rule that applies: a finished workflow, findings a
/// person must look at, a pause, an approval gate, a failed phase, the phase in progress, the
/// ready phases.
fn next_action(
    workflow: &Workflow,
    findings: &[Finding],
    now: DateTime<Utc>,
    ready: &[PhaseRef],
    heartbeat_recent: bool,
) -> Next {
    // A stale state asks for a look before the work goes on.
    let stale = findings
        .iter()
        .any(|finding| finding.code == FindingCode::StateStale);
    finished(workflow)
        .or_else(|| from_findings(findings))
        .or_else(|| paused(workflow, now))
        .or_else(|| awaiting_approval(workflow))
        .or_else(|| after_failure(workflow, stale))
        .or_else(|| in_progress(workflow, heartbeat_recent, stale))
        .unwrap_or_else(|| start_ready(ready, stale))
}

fn finished(workflow: &Workflow) -> Option<Next> {
    match workflow.status {
        WorkflowStatus::Complete => Some(Next::new(
            Action::Done,
            None,
            None,
            "every phase is complete".into(),
            false,
        )),
        WorkflowStatus::Abandoned => Some(Next::new(
            Action::Abandoned,
            None,
            None,
            "the workflow was abandoned".into(),
            false,
        )),
        _ => None,
    }
}

/// A rebuilt state, a phase past its limits, or any error: a person decides.
fn from_findings(findings: &[Finding]) -> Option<Next> {
    if findings
        .iter()
        .any(|finding| finding.code == FindingCode::StateRebuilt)
    {
        return Some(Next::new(
            Action::Confirm,
            None,
            Some("checkpoint resume --yes".into()),
            "the state was rebuilt after corruption: check it, then confirm".into(),
            true,
        ));
    }
    if let Some(finding) = findings.iter().find(|finding| {
        matches!(
            finding.code,
            FindingCode::PhaseRepeatedFailure | FindingCode::PhaseReplanLimit
        )
    }) {
        return Some(Next::new(
            Action::Decide,
            finding.phase.as_ref(),
            None,
            finding.message.clone(),
            true,
        ));
    }
    let finding = findings
        .iter()
        .find(|finding| finding.severity == Severity::Error)?;
    Some(Next::new(
        Action::Decide,
        finding.phase.as_ref(),
        None,
        format!(
            "the state cannot be trusted as is: {}{}",
            finding.message,
            finding
                .hint
                .as_deref()
                .map(|hint| format!(" ({hint})"))
                .unwrap_or_default()
        ),
        true,
    ))
}

fn paused(workflow: &Workflow, now: DateTime<Utc>) -> Option<Next> {
    let pause = workflow.pause.as_ref()?;
    let until = pause.until.filter(|until| *until > now)?;
    Some(Next::new(
        Action::Wait,
        None,
        None,
        format!("paused ({}) until {}", pause.reason, until.to_rfc3339()),
        false,
    ))
}

fn awaiting_approval(workflow: &Workflow) -> Option<Next> {
    let phase = workflow
        .phases
        .iter()
        .find(|phase| phase.status == PhaseStatus::AwaitingApproval)?;
    Some(Next::new(
        Action::Approve,
        Some(&phase.id),
        Some(format!("checkpoint approve {}", phase.id)),
        format!(
            "phase `{}` is done and waits at its approval gate; ask the user, do not redo the work",
            phase.id
        ),
        true,
    ))
}

/// What restarting `target` sends back to pending, as the end of a sentence (empty when
/// nothing).
fn reopens(workflow: &Workflow, target: &PhaseId) -> String {
    let reset = rerun(workflow, target, "")
        .map(|restart| restart.reset)
        .unwrap_or_default();
    if reset.is_empty() {
        return String::new();
    }
    let names: Vec<String> = reset.iter().map(|id| format!("`{id}`")).collect();
    format!(
        ", and restarting it sends {} back to pending",
        names.join(", ")
    )
}

/// A failed phase: roll back to its `on_failure` phase, or retry it.
fn after_failure(workflow: &Workflow, stale: bool) -> Option<Next> {
    for phase in workflow
        .phases
        .iter()
        .filter(|phase| phase.status == PhaseStatus::Failed)
    {
        let error = phase.error.as_deref().unwrap_or("unknown error");
        // Roll back to the `on_failure` phase unless that was already redone after this attempt.
        let rollback = phase
            .on_failure
            .as_ref()
            .filter(|target| *target != &phase.id)
            .and_then(|target| workflow.phase(target));
        let redone = rollback.is_some_and(|target| {
            target
                .completed_at
                .zip(phase.started_at)
                .is_some_and(|(done, started)| done > started)
        });
        if rollback.is_some_and(|target| !target.status.is_done()) {
            // The rollback is under way: the target phase is the work now.
            continue;
        }
        return Some(
            match rollback.filter(|_| !redone).map(|target| &target.id) {
                Some(target) => Next::new(
                    Action::Rollback,
                    Some(target),
                    Some(format!("checkpoint start {target} --force")),
                    format!(
                        "phase `{}` failed ({error}); its plan returns to `{target}`{}",
                        phase.id,
                        reopens(workflow, target)
                    ),
                    stale,
                ),
                None => Next::new(
                    Action::Retry,
                    Some(&phase.id),
                    Some(format!("checkpoint start {}", phase.id)),
                    format!(
                        "phase `{}` failed ({error}); retry it (attempt {})",
                        phase.id,
                        phase.attempts + 1
                    ),
                    stale,
                ),
            },
        );
    }
    None
}

fn in_progress(workflow: &Workflow, heartbeat_recent: bool, stale: bool) -> Option<Next> {
    let phase = workflow
        .phases
        .iter()
        .find(|phase| phase.status == PhaseStatus::InProgress)?;
    let note = phase
        .progress
        .as_deref()
        .map(|note| format!("; progress so far: {note}"))
        .unwrap_or_default();
    let task = next_task(phase);
    let doing = task
        .map(|(task, attempt)| format!("; next: task `{task}` (attempt {attempt})"))
        .unwrap_or_default();
    let what = described(phase.description.as_deref());
    let reason = if heartbeat_recent {
        format!(
            "phase `{}`{what} is in progress and was active recently; make sure no other session is still running it{doing}{note}",
            phase.id
        )
    } else {
        format!("phase `{}`{what} is in progress{doing}{note}", phase.id)
    };
    let mut next = Next::new(
        Action::Continue,
        Some(&phase.id),
        Some(format!(
            "checkpoint progress {} \"<what is done>\"",
            phase.id
        )),
        reason,
        stale,
    );
    next.action.task = task.map(|(task, _)| task.clone());
    Some(next)
}

/// The first ready phase (with the others that may run beside it), or a person decides when
/// none can run.
fn start_ready(ready: &[PhaseRef], stale: bool) -> Next {
    let Some((first, rest)) = ready.split_first() else {
        return Next::new(
            Action::Decide,
            None,
            None,
            "no phase can run: the remaining phases wait for phases that cannot finish".into(),
            true,
        );
    };
    let note = first
        .progress
        .as_deref()
        .map(|note| format!("; an earlier attempt noted: {note}"))
        .unwrap_or_default();
    let mut next = Next::new(
        Action::Start,
        Some(&first.id),
        Some(format!("checkpoint start {}", first.id)),
        format!(
            "phase `{}`{} is ready{note}",
            first.id,
            described(first.description.as_deref())
        ),
        stale,
    );
    next.action.parallel = rest.iter().map(|phase| phase.id.clone()).collect();
    next
}
