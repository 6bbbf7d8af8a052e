//! The documents that show a workflow: what a command that reads or changes one prints,
//! `status`, `import`, and the counterpart of the store's `Recovery`.

use std::path::{Path, PathBuf};

use checkpoint_core::{
    PhaseId, Workflow,
    store::{self, Loaded},
};
use miette::{IntoDiagnostic, Result};
use serde::{Serialize, Serializer};

use crate::{
    git::LeftOut,
    json::EffectRow,
    output::{self, EffectCounts, JSON_VERSION, PhaseView},
};

/// The result of a command that reads or changes one workflow.
#[derive(Debug, Serialize)]
pub(crate) struct WorkflowReport<'a> {
    version: u32,
    workflow: &'a Workflow,
    #[serde(serialize_with = "recoveries")]
    recoveries: &'a [store::Recovery],
    /// What the command warned about (as on stderr).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
    /// The checkpoint commit the command made or tried, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    checkpoint_commit: Option<CommitReport>,
    /// The effect the command recorded or let through once more (`effect`, `effects allow`).
    #[serde(skip_serializing_if = "Option::is_none")]
    effect: Option<EffectRow<'a>>,
}

/// A checkpoint commit: its SHA (none when there was nothing to commit), and the changed files
/// left out of it.
#[derive(Debug, Serialize)]
pub(crate) struct CommitReport {
    pub(crate) sha: Option<String>,
    pub(crate) left_out: Vec<LeftOut>,
}

impl<'a> WorkflowReport<'a> {
    pub(crate) fn new(loaded: &'a Loaded) -> Self {
        Self {
            version: JSON_VERSION,
            workflow: &loaded.workflow,
            recoveries: &loaded.recoveries,
            warnings: Vec::new(),
            checkpoint_commit: None,
            effect: None,
        }
    }

    pub(crate) fn with_warnings(self, warnings: Vec<String>) -> Self {
        Self { warnings, ..self }
    }

    pub(crate) fn with_commit(self, commit: CommitReport) -> Self {
        Self {
            checkpoint_commit: Some(commit),
            ..self
        }
    }

    pub(crate) fn with_effect(self, effect: EffectRow<'a>) -> Self {
        Self {
            effect: Some(effect),
            ..self
        }
    }

    pub(crate) fn emit(&self) -> Result<()> {
        output::emit_json(self).into_diagnostic()
    }
}

/// The JSON document of `checkpoint status`.
#[derive(Debug, Serialize)]
pub(crate) struct StatusReport<'a> {
    pub(crate) version: u32,
    pub(crate) workflow: &'a Workflow,
    pub(crate) phases: Vec<PhaseSummary<'a>>,
    #[serde(serialize_with = "recoveries")]
    pub(crate) recoveries: &'a [store::Recovery],
    /// The unattended runner (`checkpoint run`) working on the workflow now, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) runner: Option<RunnerReport>,
}

/// The runner holding a workflow, as its lock file says (`runner/lock.rs`'s `LockOwner`).
#[derive(Debug, Serialize)]
pub(crate) struct RunnerReport {
    /// The runner's process id.
    pub(crate) pid: u32,
    /// When it started.
    pub(crate) started_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The agent session it runs now: its process id.
    pub(crate) child_pid: Option<u32>,
    /// That process's start time in clock ticks after boot.
    pub(crate) child_start: Option<u64>,
}

/// Where one phase stands.
#[derive(Debug, Serialize)]
pub(crate) struct PhaseSummary<'a> {
    pub(crate) id: &'a PhaseId,
    pub(crate) view: PhaseView,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) waiting_for: Vec<&'a PhaseId>,
    /// The sub-agent that holds the phase, while it is in progress: who, since when, and its
    /// last activity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) holder: Option<&'a checkpoint_core::Holder>,
    /// How many effects (pushes, pull requests, publishes, …) the phase has done, in every
    /// attempt: `checkpoint effects --phase <id>` lists them.
    pub(crate) effects: usize,
    /// The files the phase changed, from its snapshots (none when they changed none):
    /// `checkpoint snapshots --phase <id>` lists them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) files: Option<FilesSummary>,
}

/// The files a phase changed, summed over its snapshots.
#[derive(Debug, Serialize)]
pub(crate) struct FilesSummary {
    /// How many distinct files.
    pub(crate) changed: u64,
    /// Lines added and removed.
    pub(crate) added: u64,
    pub(crate) removed: u64,
    /// The paths its snapshots name (each names at most 50).
    pub(crate) paths: Vec<String>,
}

impl From<&checkpoint_core::snapshots::FileChanges> for FilesSummary {
    fn from(changes: &checkpoint_core::snapshots::FileChanges) -> Self {
        Self {
            changed: changes.files(),
            added: changes.added,
            removed: changes.removed,
            paths: changes.paths.iter().cloned().collect(),
        }
    }
}

impl<'a> PhaseSummary<'a> {
    /// Where each phase of `workflow` stands, in order, with its count of `effects`.
    pub(crate) fn all(workflow: &'a Workflow, effects: &EffectCounts) -> Vec<Self> {
        let done = workflow.done_set();
        workflow
            .phases
            .iter()
            .map(|phase| PhaseSummary {
                id: &phase.id,
                view: output::phase_view(&done, phase),
                waiting_for: done.waiting_for(phase).collect(),
                holder: phase
                    .holder
                    .as_ref()
                    .filter(|_| phase.status == checkpoint_core::PhaseStatus::InProgress),
                effects: effects.of_phase(&phase.id),
                files: effects.files().of_phase(&phase.id).map(Into::into),
            })
            .collect()
    }
}

/// The JSON document of `checkpoint import`.
#[derive(Debug, Serialize)]
pub(crate) struct ImportReport<'a> {
    pub(crate) version: u32,
    pub(crate) source: ImportedFrom<'a>,
    pub(crate) workflow: &'a Workflow,
    #[serde(serialize_with = "recoveries")]
    pub(crate) recoveries: &'a [store::Recovery],
}

/// The file a workflow was imported from.
#[derive(Debug, Serialize)]
pub(crate) struct ImportedFrom<'a> {
    pub(crate) format: &'static str,
    pub(crate) path: &'a Path,
}

/// Something the store found and repaired (or would repair) while loading.
#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Recovery<'a> {
    JournalReplayed {
        from_seq: u64,
        to_seq: u64,
    },
    StateRebuilt {
        reason: &'a str,
        /// `journal` or `backup`.
        source: &'a str,
        kept_as: Option<&'a Path>,
    },
    TornJournalLine {
        bytes: usize,
        held: bool,
        kept_as: Option<&'a Path>,
    },
    ForeignJournalLines {
        line: usize,
        bytes: usize,
        reason: &'a str,
        kept_as: Option<&'a Path>,
    },
    UnreadableJournalLine {
        path: &'a Path,
        line: usize,
        reason: &'a str,
    },
    TempFiles {
        paths: &'a [PathBuf],
        removed: bool,
    },
    JournalBehind {
        journal_seq: u64,
        state_seq: u64,
    },
}

impl<'a> From<&'a store::Recovery> for Recovery<'a> {
    fn from(recovery: &'a store::Recovery) -> Self {
        match recovery {
            store::Recovery::JournalReplayed { from_seq, to_seq } => Self::JournalReplayed {
                from_seq: *from_seq,
                to_seq: *to_seq,
            },
            store::Recovery::StateRebuilt {
                reason,
                source,
                kept_as,
            } => Self::StateRebuilt {
                reason,
                source,
                kept_as: kept_as.as_deref(),
            },
            store::Recovery::TornJournalLine {
                bytes,
                held,
                kept_as,
            } => Self::TornJournalLine {
                bytes: *bytes,
                held: *held,
                kept_as: kept_as.as_deref(),
            },
            store::Recovery::ForeignJournalLines {
                line,
                bytes,
                reason,
                kept_as,
            } => Self::ForeignJournalLines {
                line: *line,
                bytes: *bytes,
                reason,
                kept_as: kept_as.as_deref(),
            },
            store::Recovery::UnreadableJournalLine { path, line, reason } => {
                Self::UnreadableJournalLine {
                    path,
                    line: *line,
                    reason,
                }
            }
            store::Recovery::TempFiles { paths, removed } => Self::TempFiles {
                paths,
                removed: *removed,
            },
            store::Recovery::JournalBehind {
                journal_seq,
                state_seq,
            } => Self::JournalBehind {
                journal_seq: *journal_seq,
                state_seq: *state_seq,
            },
        }
    }
}

fn recoveries<S: Serializer>(
    recoveries: &&[store::Recovery],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(recoveries.iter().map(Recovery::from))
}
