//! The JSON contract: every `--format json` document, as types of its own converted from
//! core's, so that a rename inside core cannot change what scripts, skills and MCP clients read.
//!
//! Core's internal types (`ResumePlan`, `Recovery`, `Finding`, `Change`, `Doomed`, …) never
//! reach the output: each has a counterpart here, built with `From`, whose fields and spellings
//! are the documents' (snapshots in the `contract` integration tests, byte for byte).
//! A document keeps a reference to the core value it shows and converts it as it is written
//! (`serialize_with`), so the commands build documents from what they already hold.
//! Two kinds of core type are embedded as they are, because their format is already a
//! versioned contract of its own: the workflow state (`Workflow` and what it holds: `Phase`,
//! `Holder`, `Activity`, `ContextSummary`, the statuses and ids), whose schema is
//! `docs/state.schema.json` (`SCHEMA_VERSION`), and journal entries (`Entry`), whose schema is
//! `docs/journal.schema.json`.

mod effects;
mod history;
mod resume;
mod snapshots;
mod sync;
mod workflow;

pub(crate) use crate::json::{
    effects::{EffectRow, EffectsReport, Shown},
    history::{
        ArchiveReport, DiffReport, ExportReport, GcReport, GraphNode, GraphReport, ListEntry,
        ListReport, LogReport, RestoreReport, ValidateReport,
    },
    resume::{DryRunStep, PhaseFiles, ResumeFiles, ResumeReport, RunDryRun, SeedOrigin},
    snapshots::{
        FileChangeRow, FilesDiffReport, LeftOutRow, SnapshotRow, SnapshotTaken, SnapshotsReport,
        UndoFileRow, UndoReport,
    },
    sync::divergent_entries,
    workflow::{
        CommitReport, ImportReport, ImportedFrom, PhaseSummary, RunnerReport, StatusReport,
        WorkflowReport,
    },
};
