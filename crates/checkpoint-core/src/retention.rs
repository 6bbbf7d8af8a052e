//! Retention of archived workflows: which archives `checkpoint gc` deletes.

use chrono::{DateTime, Duration, Utc};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::model::WorkflowStatus;

/// The retention settings (`[gc]` in `config.toml`).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Retention {
    /// Archives kept per workflow kind, newest first (default 5).
    pub keep: usize,
    /// Days after which a finished archive is deleted (default 7).
    pub retention_days: u32,
    /// Days after which an archive in `failed/` is deleted (default 30).
    pub failed_retention_days: u32,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            keep: 5,
            retention_days: 7,
            failed_retention_days: 30,
        }
    }
}

/// An archived workflow, as `gc` sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Archive {
    /// Its directory name, `<id>_<YYYYMMDD_HHMMSS>`.
    pub name: String,
    /// The workflow's kind (archives without one are grouped under their id).
    pub kind: String,
    /// Its status when archived; `None` when its state cannot be read.
    pub status: Option<WorkflowStatus>,
    /// When it was archived.
    pub archived_at: DateTime<Utc>,
    /// Whether it lives in `failed/`.
    pub failed: bool,
}

/// Why an archive is deleted.
#[derive(Debug, Clone, PartialEq)]
pub struct Doomed {
    /// The archive.
    pub archive: Archive,
    /// Why, in a few words.
    pub reason: String,
}

/// The archives to delete: beyond the newest `keep` of a kind, or older than the retention.
/// An archive whose workflow is not finished (or whose state cannot be read) is never deleted.
pub fn plan_gc(archives: &[Archive], retention: &Retention, now: DateTime<Utc>) -> Vec<Doomed> {
    let mut sorted: Vec<&Archive> = archives.iter().collect();
    sorted.sort_by(|a, b| {
        b.archived_at
            .cmp(&a.archived_at)
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut seen_per_kind: std::collections::HashMap<(&str, bool), usize> =
        std::collections::HashMap::new();
    let mut doomed = Vec::new();
    for archive in sorted {
        let finished = archive.failed
            || archive
                .status
                .is_some_and(|status| status.is_finished() || status == WorkflowStatus::Failed);
        let rank = seen_per_kind
            .entry((archive.kind.as_str(), archive.failed))
            .or_insert(0);
        *rank += 1;
        if !finished {
            continue;
        }
        let days = if archive.failed {
            retention.failed_retention_days
        } else {
            retention.retention_days
        };
        let reason = if now - archive.archived_at > Duration::days(i64::from(days)) {
            Some(format!("older than {days} days"))
        } else if *rank > retention.keep {
            Some(format!(
                "beyond the newest {} of kind `{}`",
                retention.keep, archive.kind
            ))
        } else {
            None
        };
        if let Some(reason) = reason {
            doomed.push(Doomed {
                archive: archive.clone(),
                reason,
            });
        }
    }
    doomed
}
