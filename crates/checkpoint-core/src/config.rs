//! Settings from `.claude/checkpoints/config.toml`, all optional, with documented defaults.

use std::path::Path;

use miette::NamedSource;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::{
    error::{Error, Result},
    retention::Retention,
};

/// The name of the config file in the store root.
pub const CONFIG_FILE: &str = "config.toml";

/// Every setting, with its default filled in.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// A state not updated for this many days is stale (default 7).
    pub stale_after_days: u32,
    /// Failed attempts of a phase before a person must decide (default 3; a phase's own
    /// `max_attempts` wins).
    pub max_attempts: u32,
    /// Replans of a phase before a person must decide (default 2).
    pub max_replans: u32,
    /// Phases allowed in progress at once; 0 means no limit (default 0).
    pub max_in_progress: u32,
    /// Minutes without activity (a transition or a heartbeat) after which an in-progress
    /// workflow counts as interrupted (default 10).
    pub interrupted_after_minutes: u32,
    /// The size budget of `resume --format prompt`, in bytes (default 6000).
    pub prompt_budget: usize,
    /// Block a Stop while a phase is in progress without a recent progress note (default false).
    pub strict_stop: bool,
    /// Minutes after which a progress note no longer counts as recent for `strict_stop`
    /// (default 20).
    pub progress_fresh_minutes: u32,
    /// Commit the work after every N completed phases (`git add -A`, then
    /// `checkpoint: phases N-M complete`); 0 turns it off (default 0).
    pub commit_every: u32,
    /// Retention of archives for `checkpoint gc`.
    pub gc: Retention,
    /// Sync with a git remote (`checkpoint push`).
    pub sync: Sync,
    /// Settings of the unattended runner, `checkpoint run`.
    pub run: RunConfig,
}

/// The `[sync]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Sync {
    /// Push the workflow in the background whenever a phase completes (`checkpoint complete`,
    /// or the hook when its last output is written); a failed push is reported by the next
    /// command (default false).
    pub on_complete: bool,
}

/// The `[run]` table: settings of `checkpoint run`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RunConfig {
    /// A shell command run when the runner stops for a person; it gets `CHECKPOINT_WORKFLOW`,
    /// `CHECKPOINT_PHASE` and `CHECKPOINT_REASON` in its environment (default: none).
    pub notify: Option<String>,
    /// The agent client to run (default: `claude` on `PATH`).
    pub claude: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            stale_after_days: 7,
            max_attempts: 3,
            max_replans: 2,
            max_in_progress: 0,
            interrupted_after_minutes: 10,
            prompt_budget: 6000,
            strict_stop: false,
            progress_fresh_minutes: 20,
            commit_every: 0,
            gc: Retention::default(),
            sync: Sync::default(),
            run: RunConfig::default(),
        }
    }
}

impl Config {
    /// Parses a config file's text.
    pub fn parse(path: &Path, text: &str) -> Result<Self> {
        toml::from_str(text).map_err(|err| Error::ConfigParse {
            path: path.to_owned(),
            message: err.message().to_owned(),
            source_code: NamedSource::new(path.display().to_string(), text.to_owned()),
            span: err.span().map(Into::into),
        })
    }
}
