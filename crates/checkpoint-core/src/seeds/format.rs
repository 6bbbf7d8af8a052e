//! The five seed formats (`SeedFormat`), and how a file's format is recognised (`detect`).

use std::{fmt, path::Path, str::FromStr};

use serde_json::{Map, Value};

/// The nine-step workflow's state file in each worktree.
///
/// The plugin leaves the name as the placeholder `{{WORKFLOW_STATE_FILE}}`; this is the name we
/// look for. Any other name can be imported by path with `--from nine-step`.
pub(crate) const NINE_STEP_STATE_FILE: &str = ".workflow-state.json";

/// A checkpoint system whose state files `checkpoint` reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SeedFormat {
    /// dotagent's `memory/state/phase.json` and `execution.json`.
    Dotagent,
    /// OrchestKit's `.claude/pipeline-state.json`.
    Orchestkit,
    /// The checkpoint-recovery pattern's `.claude/data/checkpoints/<workflow>.json`.
    CheckpointRecovery,
    /// The checkpoints directory's `.claude/checkpoints/{type}_{project}_{YYYYMMDD_HHMMSS}.json`.
    CheckpointsDir,
    /// The nine-step workflow's state file in each git worktree (`.workflow-state.json`).
    NineStep,
}

impl SeedFormat {
    /// Every format, in the order they are documented.
    pub const ALL: [SeedFormat; 5] = [
        Self::Dotagent,
        Self::Orchestkit,
        Self::CheckpointRecovery,
        Self::CheckpointsDir,
        Self::NineStep,
    ];

    /// The name used on the command line, in JSON output and as the key in `extensions`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Dotagent => "dotagent",
            Self::Orchestkit => "orchestkit",
            Self::CheckpointRecovery => "checkpoint-recovery",
            Self::CheckpointsDir => "checkpoints-dir",
            Self::NineStep => "nine-step",
        }
    }

    /// What a file of this format is, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Dotagent => "dotagent state",
            Self::Orchestkit => "an OrchestKit pipeline state",
            Self::CheckpointRecovery => "a checkpoint-recovery checkpoint",
            Self::CheckpointsDir => "a checkpoints-directory checkpoint",
            Self::NineStep => "a nine-step workflow state",
        }
    }

    /// The names of all formats, for hints: "`dotagent`, `orchestkit`, …".
    pub fn names() -> String {
        Self::ALL
            .iter()
            .map(|format| format!("`{}`", format.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for SeedFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SeedFormat {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|format| format.name() == value)
            .ok_or_else(|| format!("unknown format `{value}`; known: {}", Self::names()))
    }
}

/// Recognises a file's format from its contents, else from where it lies.
///
/// Returns `None` for our own `state.json` and for anything else we do not read.
pub fn detect(path: &Path, bytes: &[u8]) -> Option<SeedFormat> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(object)) => detect_keys(&object).or_else(|| {
            (!object.contains_key("schema_version"))
                .then(|| detect_path(path))
                .flatten()
        }),
        Ok(_) => None,
        Err(_) => detect_path(path),
    }
}

fn detect_keys(object: &Map<String, Value>) -> Option<SeedFormat> {
    let has = |keys: &[&str]| keys.iter().any(|key| object.contains_key(*key));
    if has(&["schema_version"]) {
        None
    } else if has(&[
        "last_execution",
        "current_step",
        "completed_steps",
        "feature_name",
    ]) {
        Some(SeedFormat::NineStep)
    } else if has(&["phase_status", "user_checkpoints", "interruption_safe"]) {
        Some(SeedFormat::Dotagent)
    } else if has(&[
        "checkpoint_id",
        "workflow_type",
        "workflow_state",
        "total_phases",
    ]) {
        Some(SeedFormat::CheckpointsDir)
    } else if has(&[
        "phase_metadata",
        "replan_history",
        "replan_count",
        "artifact_paths",
    ]) {
        Some(SeedFormat::CheckpointRecovery)
    } else if has(&["remaining_phases", "context_summary"])
        || object.get("current_phase").is_some_and(Value::is_object)
    {
        Some(SeedFormat::Orchestkit)
    } else {
        None
    }
}

fn detect_path(path: &Path) -> Option<SeedFormat> {
    let name = path.file_name()?.to_str()?;
    let parents: Vec<&str> = path
        .ancestors()
        .skip(1)
        .take(3)
        .map(|dir| dir.file_name().and_then(|name| name.to_str()).unwrap_or(""))
        .collect();
    let parent = |i: usize| parents.get(i).copied().unwrap_or("");
    if matches!(name, "phase.json" | "execution.json")
        && parent(0) == "state"
        && parent(1) == "memory"
    {
        Some(SeedFormat::Dotagent)
    } else if name == "pipeline-state.json" {
        Some(SeedFormat::Orchestkit)
    } else if name == NINE_STEP_STATE_FILE {
        Some(SeedFormat::NineStep)
    } else if !name.ends_with(".json") {
        None
    } else if parent(0) == "checkpoints" && parent(1) == "data" {
        Some(SeedFormat::CheckpointRecovery)
    } else if parent(0) == "checkpoints" || (parent(0) == "failed" && parent(1) == "checkpoints") {
        Some(SeedFormat::CheckpointsDir)
    } else {
        None
    }
}
