//! The questions asked of a transition (its op, its phase, whether it is work, whether it
//! lifts a pause, whether it applies to an abandoned workflow, whether it is a runner's event),
//! each an exhaustive match so that a new variant must be decided in each.

use crate::{id::PhaseId, transition::Transition};

impl Transition {
    /// Whether the transition carries a whole workflow (`init`, `snapshot`) rather than a change.
    pub(crate) fn replaces_state(&self) -> bool {
        matches!(
            self,
            Self::Init { .. } | Self::Snapshot { .. } | Self::SyncResolve { base: Some(_), .. }
        )
    }

    /// A short name of the operation, as in the journal's `op` field.
    pub fn op(&self) -> &'static str {
        match self {
            Self::Init { .. } => "init",
            Self::Snapshot { .. } => "snapshot",
            Self::PhaseStart { .. } => "phase_start",
            Self::PhaseProgress { .. } => "phase_progress",
            Self::PhaseComplete { .. } => "phase_complete",
            Self::PhaseFail { .. } => "phase_fail",
            Self::PhaseSkip { .. } => "phase_skip",
            Self::PhaseReset { .. } => "phase_reset",
            Self::PhaseApprove { .. } => "phase_approve",
            Self::PhaseReject { .. } => "phase_reject",
            Self::PhaseCommit { .. } => "phase_commit",
            Self::Replan { .. } => "replan",
            Self::TaskAdd { .. } => "task_add",
            Self::TaskStart { .. } => "task_start",
            Self::TaskDone { .. } => "task_done",
            Self::TaskFail { .. } => "task_fail",
            Self::TaskReset { .. } => "task_reset",
            Self::Note { .. } => "note",
            Self::Decide { .. } => "decide",
            Self::FilePath { .. } => "file_path",
            Self::Heartbeat { .. } => "heartbeat",
            Self::Pause { .. } => "pause",
            Self::Unpause => "unpause",
            Self::Abandon { .. } => "abandon",
            Self::ToolFailure { .. } => "tool_failure",
            Self::HolderDispatch { .. } => "holder_dispatch",
            Self::HolderSeen { .. } => "holder_seen",
            Self::HolderEnd { .. } => "holder_end",
            Self::Compaction { .. } => "compaction",
            Self::SessionHandoff { .. } => "session_handoff",
            Self::SyncResolve { .. } => "sync_resolve",
            Self::RunStart { .. } => "run_start",
            Self::RunSessionStart { .. } => "run_session_start",
            Self::RunSessionEnd { .. } => "run_session_end",
            Self::RunWait { .. } => "run_wait",
            Self::RunStop { .. } => "run_stop",
            Self::Effect { .. } => "effect",
            Self::EffectAllow { .. } => "effect_allow",
            Self::FilesSnapshot { .. } => "files_snapshot",
            Self::FilesRestore { .. } => "files_restore",
        }
    }

    /// The phase this transition concerns, if any.
    pub fn phase(&self) -> Option<&PhaseId> {
        match self {
            Self::PhaseStart { phase, .. }
            | Self::PhaseProgress { phase, .. }
            | Self::PhaseComplete { phase, .. }
            | Self::PhaseFail { phase, .. }
            | Self::PhaseSkip { phase, .. }
            | Self::PhaseReset { phase, .. }
            | Self::PhaseApprove { phase, .. }
            | Self::PhaseReject { phase, .. }
            | Self::PhaseCommit { phase, .. }
            | Self::Replan { phase, .. }
            | Self::TaskAdd { phase, .. }
            | Self::TaskStart { phase, .. }
            | Self::TaskDone { phase, .. }
            | Self::TaskFail { phase, .. }
            | Self::TaskReset { phase, .. }
            | Self::ToolFailure { phase, .. }
            | Self::HolderDispatch { phase, .. }
            | Self::HolderSeen { phase, .. }
            | Self::HolderEnd { phase, .. } => Some(phase),
            Self::Effect { phase, .. } | Self::FilesSnapshot { phase, .. } => phase.as_ref(),
            Self::Init { .. }
            | Self::Snapshot { .. }
            | Self::Note { .. }
            | Self::Decide { .. }
            | Self::FilePath { .. }
            | Self::Heartbeat { .. }
            | Self::Pause { .. }
            | Self::Unpause
            | Self::Abandon { .. }
            | Self::Compaction { .. }
            | Self::SessionHandoff { .. }
            | Self::SyncResolve { .. }
            | Self::RunStart { .. }
            | Self::RunSessionStart { .. }
            | Self::RunSessionEnd { .. }
            | Self::RunWait { .. }
            | Self::RunStop { .. }
            | Self::EffectAllow { .. }
            | Self::FilesRestore { .. } => None,
        }
    }

    /// Whether the transition records work on the workflow (its phases, tasks or context), as
    /// opposed to a sign of life, a pause, a tool failure or a runner's own event: a session
    /// that recorded none made no progress.
    pub fn is_work(&self) -> bool {
        match self {
            Self::Init { .. }
            | Self::Snapshot { .. }
            | Self::PhaseStart { .. }
            | Self::PhaseProgress { .. }
            | Self::PhaseComplete { .. }
            | Self::PhaseFail { .. }
            | Self::PhaseSkip { .. }
            | Self::PhaseReset { .. }
            | Self::PhaseApprove { .. }
            | Self::PhaseReject { .. }
            | Self::PhaseCommit { .. }
            | Self::Replan { .. }
            | Self::TaskAdd { .. }
            | Self::TaskStart { .. }
            | Self::TaskDone { .. }
            | Self::TaskFail { .. }
            | Self::TaskReset { .. }
            | Self::Note { .. }
            | Self::Decide { .. }
            | Self::FilePath { .. }
            | Self::Abandon { .. }
            | Self::HolderDispatch { .. }
            | Self::HolderEnd { .. }
            | Self::SyncResolve { .. }
            | Self::Effect { .. }
            | Self::FilesRestore { .. } => true,
            Self::EffectAllow { .. }
            | Self::FilesSnapshot { .. }
            | Self::Heartbeat { .. }
            | Self::Compaction { .. }
            | Self::SessionHandoff { .. }
            | Self::ToolFailure { .. }
            | Self::HolderSeen { .. }
            | Self::Pause { .. }
            | Self::Unpause
            | Self::RunStart { .. }
            | Self::RunSessionStart { .. }
            | Self::RunSessionEnd { .. }
            | Self::RunWait { .. }
            | Self::RunStop { .. } => false,
        }
    }

    /// Whether the transition is work being done, which lifts a pause: the agent is evidently
    /// running again. [`unpause_before_work`] journals the `Unpause` before it.
    pub(crate) fn lifts_pause(&self) -> bool {
        match self {
            Self::PhaseStart { .. }
            | Self::PhaseProgress { .. }
            | Self::PhaseComplete { .. }
            | Self::TaskStart { .. }
            | Self::TaskDone { .. } => true,
            Self::Init { .. }
            | Self::Snapshot { .. }
            | Self::PhaseFail { .. }
            | Self::PhaseSkip { .. }
            | Self::PhaseReset { .. }
            | Self::PhaseApprove { .. }
            | Self::PhaseReject { .. }
            | Self::PhaseCommit { .. }
            | Self::Replan { .. }
            | Self::TaskAdd { .. }
            | Self::TaskFail { .. }
            | Self::TaskReset { .. }
            | Self::Note { .. }
            | Self::Decide { .. }
            | Self::FilePath { .. }
            | Self::Heartbeat { .. }
            | Self::Pause { .. }
            | Self::Unpause
            | Self::Abandon { .. }
            | Self::ToolFailure { .. }
            | Self::HolderDispatch { .. }
            | Self::HolderSeen { .. }
            | Self::HolderEnd { .. }
            | Self::Compaction { .. }
            | Self::SessionHandoff { .. }
            | Self::SyncResolve { .. }
            | Self::RunStart { .. }
            | Self::RunSessionStart { .. }
            | Self::RunSessionEnd { .. }
            | Self::RunWait { .. }
            | Self::RunStop { .. }
            | Self::Effect { .. }
            | Self::EffectAllow { .. }
            | Self::FilesSnapshot { .. }
            | Self::FilesRestore { .. } => false,
        }
    }

    /// Whether the transition may still apply to an abandoned workflow: a note, or a sign of
    /// life; everything else is refused.
    pub(crate) fn applies_when_abandoned(&self) -> bool {
        match self {
            // An effect happened whatever the workflow's state: it is recorded.
            Self::Note { .. } | Self::Heartbeat { .. } | Self::Effect { .. } => true,
            // The files are the person's whatever the workflow's state: they can be kept and put
            // back.
            Self::FilesSnapshot { .. } | Self::FilesRestore { .. } => true,
            Self::Init { .. }
            | Self::Snapshot { .. }
            | Self::PhaseStart { .. }
            | Self::PhaseProgress { .. }
            | Self::PhaseComplete { .. }
            | Self::PhaseFail { .. }
            | Self::PhaseSkip { .. }
            | Self::PhaseReset { .. }
            | Self::PhaseApprove { .. }
            | Self::PhaseReject { .. }
            | Self::PhaseCommit { .. }
            | Self::Replan { .. }
            | Self::TaskAdd { .. }
            | Self::TaskStart { .. }
            | Self::TaskDone { .. }
            | Self::TaskFail { .. }
            | Self::TaskReset { .. }
            | Self::Decide { .. }
            | Self::FilePath { .. }
            | Self::Pause { .. }
            | Self::Unpause
            | Self::Abandon { .. }
            | Self::ToolFailure { .. }
            | Self::HolderDispatch { .. }
            | Self::HolderSeen { .. }
            | Self::HolderEnd { .. }
            | Self::Compaction { .. }
            | Self::SessionHandoff { .. }
            | Self::SyncResolve { .. }
            | Self::RunStart { .. }
            | Self::RunSessionStart { .. }
            | Self::RunSessionEnd { .. }
            | Self::RunWait { .. }
            | Self::RunStop { .. }
            | Self::EffectAllow { .. } => false,
        }
    }

    /// Whether the transition is an event of an unattended runner (`checkpoint run`).
    #[cfg(test)]
    pub(crate) fn is_run_event(&self) -> bool {
        match self {
            Self::RunStart { .. }
            | Self::RunSessionStart { .. }
            | Self::RunSessionEnd { .. }
            | Self::RunWait { .. }
            | Self::RunStop { .. } => true,
            Self::Init { .. }
            | Self::Snapshot { .. }
            | Self::PhaseStart { .. }
            | Self::PhaseProgress { .. }
            | Self::PhaseComplete { .. }
            | Self::PhaseFail { .. }
            | Self::PhaseSkip { .. }
            | Self::PhaseReset { .. }
            | Self::PhaseApprove { .. }
            | Self::PhaseReject { .. }
            | Self::PhaseCommit { .. }
            | Self::Replan { .. }
            | Self::TaskAdd { .. }
            | Self::TaskStart { .. }
            | Self::TaskDone { .. }
            | Self::TaskFail { .. }
            | Self::TaskReset { .. }
            | Self::Note { .. }
            | Self::Decide { .. }
            | Self::FilePath { .. }
            | Self::Heartbeat { .. }
            | Self::Pause { .. }
            | Self::Unpause
            | Self::Abandon { .. }
            | Self::ToolFailure { .. }
            | Self::HolderDispatch { .. }
            | Self::HolderSeen { .. }
            | Self::HolderEnd { .. }
            | Self::Compaction { .. }
            | Self::SessionHandoff { .. }
            | Self::SyncResolve { .. }
            | Self::Effect { .. }
            | Self::EffectAllow { .. }
            | Self::FilesSnapshot { .. }
            | Self::FilesRestore { .. } => false,
        }
    }
}
