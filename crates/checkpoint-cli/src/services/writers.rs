//! What each session and sub-agent wrote, and whose changes Bash commands overwrote, from the
//! project's record of writes (the store's `.writes/`), for `report` and `watch`: per writer
//! the files it wrote, and per overwrite whose change was lost, by whom, and the `checkpoint
//! undo` that brings it back.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
};

use checkpoint_core::{
    store::{Notice, Store},
    writes::Writer,
};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use crate::services::writes::shown;

/// How many of a writer's files a view names before "and n more".
const NAMED_FILES: usize = 5;

/// The writers and the overwrites since a time.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Writers {
    /// Each session and sub-agent that wrote, with the files it wrote.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub writers: Vec<WriterFiles>,
    /// The files Bash commands changed over another writer's change their session had not
    /// seen, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overwrites: Vec<Overwrite>,
}

/// One writer and the files it wrote.
#[derive(Debug, Serialize)]
pub(crate) struct WriterFiles {
    pub session: String,
    pub agent: Option<String>,
    /// The files, from the project root, in order.
    pub files: Vec<String>,
    /// How many writes (a file written twice counts twice).
    pub writes: usize,
    /// Its last write.
    pub last_at: String,
}

/// A Bash command's overwrite of another writer's change.
#[derive(Debug, Serialize)]
pub(crate) struct Overwrite {
    pub at: String,
    pub path: String,
    /// The writer whose command overwrote.
    pub session: String,
    pub agent: Option<String>,
    pub command: String,
    /// The writer whose change was overwritten, and how it had made it.
    pub overwritten_session: String,
    pub overwritten_agent: Option<String>,
    pub overwritten_tool: String,
    /// The command that brings the overwritten version back, where a snapshot holds it.
    pub undo: Option<String>,
}

impl Writers {
    /// The writes and overwrites recorded at or after `since` (the recent end of the record;
    /// one that cannot be read gives none: the views go on without it).
    pub(crate) fn read(store: &Store, project_root: &Path, since: DateTime<Utc>) -> Self {
        let root = std::fs::canonicalize(project_root).unwrap_or_else(|_| project_root.into());
        let mut by_writer: BTreeMap<Writer, (BTreeSet<String>, usize, DateTime<Utc>)> =
            BTreeMap::new();
        for write in store.recent_writes().unwrap_or_default() {
            if write.at < since {
                continue;
            }
            let entry = by_writer
                .entry(write.writer())
                .or_insert_with(|| (BTreeSet::new(), 0, write.at));
            entry.0.insert(shown(&root, Path::new(&write.path)));
            entry.1 += 1;
            entry.2 = entry.2.max(write.at);
        }
        let writers = by_writer
            .into_iter()
            .map(|(writer, (files, writes, last))| WriterFiles {
                session: writer.session,
                agent: writer.agent,
                files: files.into_iter().collect(),
                writes,
                last_at: time(last),
            })
            .collect();
        let overwrites = store
            .notices()
            .unwrap_or_default()
            .into_iter()
            .filter(|notice| notice.at >= since)
            .map(|notice| Overwrite::of(&root, notice))
            .collect();
        Self {
            writers,
            overwrites,
        }
    }

    /// Whether there is nothing to show.
    pub(crate) fn is_empty(&self) -> bool {
        self.writers.is_empty() && self.overwrites.is_empty()
    }

    /// The lines a view shows: one per writer (its files, the first few named), then one per
    /// overwrite.
    pub(crate) fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for writer in &self.writers {
            let who = Writer::new(&writer.session, writer.agent.as_deref()).describe(None);
            let mut named: Vec<String> = writer
                .files
                .iter()
                .take(NAMED_FILES)
                .map(|file| crate::output::escape(file).into_owned())
                .collect();
            if writer.files.len() > NAMED_FILES {
                named.push(format!("and {} more", writer.files.len() - NAMED_FILES));
            }
            lines.push(format!(
                "{who} wrote {}: {}",
                crate::output::count(writer.files.len(), "file"),
                named.join(", ")
            ));
        }
        for overwrite in &self.overwrites {
            lines.push(overwrite.text());
        }
        lines
    }
}

impl Overwrite {
    fn of(root: &Path, notice: Notice) -> Self {
        let path = shown(root, Path::new(&notice.path));
        Self {
            at: time(notice.at),
            undo: notice
                .snapshot
                .map(|n| format!("checkpoint undo --to @{n} -- {path}")),
            path,
            session: notice.by.session,
            agent: notice.by.agent,
            command: notice.command,
            overwritten_session: notice.overwritten.session.clone(),
            overwritten_agent: notice.overwritten.agent.clone(),
            overwritten_tool: notice.overwritten.tool,
        }
    }

    /// The overwrite in words: who overwrote whose change, with what, and how to bring it back.
    pub(crate) fn text(&self) -> String {
        let by = Writer::new(&self.session, self.agent.as_deref()).describe(None);
        let whose = Writer::new(&self.overwritten_session, self.overwritten_agent.as_deref())
            .describe(None);
        let back = match &self.undo {
            Some(undo) => format!("`{undo}` brings it back"),
            None => "`checkpoint snapshots` lists the snapshots that may hold it".to_owned(),
        };
        crate::output::escape(&format!(
            "{} overwritten: {by}'s command `{}` replaced {whose}'s change ({}) at {}; {back}",
            self.path, self.command, self.overwritten_tool, self.at
        ))
        .into_owned()
    }
}

fn time(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}
