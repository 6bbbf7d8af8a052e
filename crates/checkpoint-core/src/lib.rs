//! The workflow model, crash-safe store and resume planner behind the `checkpoint` CLI.
//!
//! The crate does no terminal I/O and reads no environment: callers pass in paths, settings and
//! the current time. All filesystem access lives in [`store`], in the part of [`seeds`] that finds,
//! reads and writes other systems' state files, and in the small path-naming helpers in `fsx`.

#![deny(clippy::print_stdout, clippy::print_stderr)]
// `pub` only where another crate uses it; inside the crate, `pub(crate)`.
#![deny(unreachable_pub)]

mod config;
mod error;
mod fsx;
mod id;
mod model;
mod plan;
#[cfg(test)]
mod testing;
mod timestamp;
mod transition;

pub mod budget;
pub mod choice;
pub mod commit;
pub mod effects;
pub mod failpoint;
pub mod graph;
pub mod history;
pub mod journal;
pub mod observe;
pub mod redact;
pub mod resume;
pub mod retention;
pub mod run;
pub mod schema;
pub mod seeds;
pub mod snapshots;
pub mod store;
pub mod subagent;
pub mod suggest;
pub mod sync;
pub mod window;
pub mod workflow_run;
pub mod writes;

pub use crate::{
    config::{CONFIG_FILE, Client, Config, FilesConfig, RunConfig},
    error::{Error, Result},
    fsx::{
        ForeignTail, MAX_FILE_BYTES, read_foreign, read_foreign_from, remove_stale, write_atomic,
    },
    id::{PhaseId, TaskId, WorkflowId},
    model::{
        Activity, Approval, Artifact, ContextSummary, Decision, DoneSet, GitContext, Holder, Note,
        Pause, Phase, PhaseStatus, Replan, Task, TaskStatus, Workflow, WorkflowStatus,
    },
    plan::{PhasePlan, Plan},
    timestamp::Timestamp,
    transition::{
        EffectSource, RestoreKind, SnapshotReason, Transition, apply, over_max_in_progress,
        unknown_phase, unpause_before_work,
    },
};
