//! The stable vocabularies of a resume: finding codes, recovery codes and next actions.
//!
//! Each is an enum whose `Display` is the code string that scripts, skills and the plugin match
//! on; the CLI's JSON documents write it as it is, so the strings are part of the JSON output
//! contract and never change.

use std::fmt;

/// Declares a code enum: each variant with its string, `as_str` and `Display`.
macro_rules! codes {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $text:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$variant_meta])* $variant,)*
        }

        impl $name {
            /// The code as JSON and messages spell it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)*
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.pad(self.as_str())
            }
        }
    };
}

codes! {
    /// What a [`Finding`](crate::resume::Finding) is about: `<area>.<what>`.
    pub enum FindingCode {
        /// `state.json` lagged behind the journal and was brought up to date.
        StateReplayed = "state.replayed",
        /// `state.json` was missing or corrupt and was rebuilt: a person confirms it.
        StateRebuilt = "state.rebuilt",
        /// The journal ended in a torn line.
        JournalTorn = "journal.torn",
        /// The journal ends in lines that are not its next entries; the state is used.
        JournalForeign = "journal.foreign",
        /// Temporary files of an interrupted write were found.
        WriteTempFiles = "write.temp_files",
        /// The journal ends before the state.
        JournalBehind = "journal.behind",
        /// The journal has no entries (found by `checkpoint validate`).
        JournalMissing = "journal.missing",
        /// The journal does not replay to the state (found by `checkpoint validate`).
        JournalMismatch = "journal.mismatch",
        /// The journal cannot be read (found by `checkpoint validate`).
        JournalUnreadable = "journal.unreadable",
        /// A time lies in the future.
        TimeFuture = "time.future",
        /// Times are out of order.
        TimeOrder = "time.order",
        /// Nothing happened for longer than the configured stale time.
        StateStale = "state.stale",
        /// A phase ran before its dependencies were done.
        DependencyIncomplete = "progression.dependency_incomplete",
        /// More phases are in progress than the configuration allows.
        TooManyInProgress = "progression.too_many_in_progress",
        /// An artifact of a done phase is missing.
        ArtifactMissing = "artifact.missing",
        /// A declared output of a done phase is missing.
        OutputMissing = "output.missing",
        /// A declared output of a done phase is empty.
        OutputEmpty = "output.empty",
        /// The git branch changed since the workflow began.
        GitBranchChanged = "git.branch_changed",
        /// The git worktree moved since the workflow began.
        GitWorktreeMoved = "git.worktree_moved",
        /// A phase's commit is not in the repository.
        GitCommitMissing = "git.commit_missing",
        /// A phase failed too many times.
        PhaseRepeatedFailure = "phase.repeated_failure",
        /// A phase was replanned too many times.
        PhaseReplanLimit = "phase.replan_limit",
    }
}

codes! {
    /// What a [`RecoveryAction`](crate::resume::RecoveryAction) repairs.
    pub enum RecoveryCode {
        /// A phase was in progress when the session stopped: back to pending.
        OrphanedPhase = "orphaned_phase",
        /// A task was running with no output: back to pending.
        OrphanedTask = "orphaned_task",
        /// A phase in progress has all its declared outputs: complete it.
        PhaseOutputPresent = "phase_output_present",
        /// A running task has its output: mark it done.
        TaskOutputPresent = "task_output_present",
        /// A pause has expired or names no time: lift it.
        PauseExpired = "pause_expired",
    }
}

codes! {
    /// The kind of the single recommended [`NextAction`](crate::resume::NextAction).
    pub enum Action {
        /// Start a ready phase.
        Start = "start",
        /// Continue the phase in progress.
        Continue = "continue",
        /// Dispatch the unfinished parallel phases to sub-agents, one each.
        Dispatch = "dispatch",
        /// Retry a failed phase.
        Retry = "retry",
        /// Return to a failed phase's `on_failure` phase.
        Rollback = "rollback",
        /// Ask the user to approve a phase at its gate.
        Approve = "approve",
        /// A person must decide how to go on.
        Decide = "decide",
        /// Confirm a rebuilt state.
        Confirm = "confirm",
        /// Wait for a pause to end.
        Wait = "wait",
        /// Every phase is complete.
        Done = "done",
        /// The workflow was abandoned.
        Abandoned = "abandoned",
    }
}
