//! The catch-up of a `Workflow` run kept between hooks (`claude-run.catchup` in the workflow's
//! directory): how far the run's journal was read and applied to the workflow, and the agents
//! seen there that have no task yet (with the full results they await), so that a hook reads
//! only the lines the client appended since and applies only what they say, whatever the run's
//! size: the file holds no more than the agents still unplaced, and is rewritten only when a
//! hook moved its point.
//!
//! It is trusted while the run's journal is the same file (its inode), at least as long, and
//! still holds the bytes just before the point read, and while the workflow is the one it was
//! made for (its creation time) and not older than when it was saved (its entry number);
//! anything else (no file, a torn or unreadable one, another version, a journal rewritten, a
//! state put back) is a full read, which gives the same observation. It is saved by a rename
//! after the hook applied what it saw, so a hook killed before the save reads the same lines
//! again, and applying an agent's state twice changes nothing: nothing is lost or counted
//! twice. Saves racing from concurrent hooks each hold a consistent point; the next hook goes
//! on from whichever won.

use std::{
    collections::BTreeMap,
    io::Write as _,
    path::{Path, PathBuf},
};

use checkpoint_core::{
    Workflow,
    workflow_run::{AgentSeen, AgentState},
};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The file, in the workflow's directory.
pub(crate) const CATCHUP_FILE: &str = "claude-run.catchup";
/// The format's version; another is a full read (version 1 kept every agent seen).
const VERSION: u32 = 2;
/// How many bytes before the point read are compared.
const CHECK_BYTES: u64 = 64;

/// One agent as the run's files showed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct SavedAgent {
    id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    phase: Option<String>,
    /// `started`, `done` or `failed`.
    state: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    text: String,
}

/// The point a run's journal was read to, and what it showed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Catchup {
    version: u32,
    /// The journal's bytes read: the end of its last complete line.
    pub(crate) offset: u64,
    /// The journal's inode.
    pub(crate) inode: u64,
    /// The journal's bytes just before `offset`, hex.
    pub(crate) before: String,
    /// The workflow it was saved for: its creation time, and the inode of its journal in the
    /// store (a workflow made again in the same second has another journal file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    created: Option<DateTime<Utc>>,
    #[serde(default)]
    store_journal: u64,
    /// The workflow's last entry when it was saved: a state older than that was put back, and
    /// what the catch-up says was applied may not be.
    #[serde(default)]
    seq: u64,
    /// The agents seen and not placed in a task yet (every other one is in the workflow).
    agents: Vec<SavedAgent>,
    /// Full results read of agents not yet placed in a phase, kept once they are.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) pending: BTreeMap<String, String>,
}

impl Catchup {
    /// The saved catch-up of the workflow in `dir`; none when there is none or it is not one
    /// this version reads.
    pub(crate) fn load(dir: &Path) -> Option<Self> {
        let bytes =
            checkpoint_core::read_foreign(&dir.join(CATCHUP_FILE), 64 * 1024 * 1024).ok()??;
        let saved: Self = serde_json::from_slice(&bytes).ok()?;
        (saved.version == VERSION).then_some(saved)
    }

    /// Whether it was saved for `workflow` as it is now or was before (not for another
    /// workflow of the same name, nor for a state since put back to an older one).
    /// `store_journal` is the inode of the workflow's journal in the store.
    pub(crate) fn fits(&self, workflow: &Workflow, store_journal: u64) -> bool {
        self.created == Some(workflow.created_at)
            && self.store_journal == store_journal
            && self.seq <= workflow.seq
    }

    /// Keeps, of the agents seen, those `workflow` (as updated) has no task of, and `pending`
    /// (the full results waiting for their agent's task); records the workflow it is for.
    pub(crate) fn unplaced_in(
        &mut self,
        workflow: &Workflow,
        store_journal: u64,
        pending: BTreeMap<String, String>,
    ) {
        let placed = placed_agents(workflow);
        self.agents
            .retain(|agent| !placed.contains(agent.id.as_str()));
        self.pending = pending;
        self.created = Some(workflow.created_at);
        self.store_journal = store_journal;
        self.seq = workflow.seq;
    }

    /// Whether it says what `other` says, but for the entry it was saved at (which only bounds
    /// the states it fits): when so, it need not be saved again.
    pub(crate) fn same_as(&self, other: &Self) -> bool {
        self.version == other.version
            && self.offset == other.offset
            && self.inode == other.inode
            && self.before == other.before
            && self.created == other.created
            && self.store_journal == other.store_journal
            && self.agents == other.agents
            && self.pending == other.pending
    }

    /// Where a read of the journal starts: the saved point when the journal still holds it
    /// (`head` are the bytes read from [`Catchup::check_from`]), else 0.
    pub(crate) fn check_from(&self) -> u64 {
        self.offset.saturating_sub(CHECK_BYTES)
    }

    /// Whether the journal (`inode`, `len`, and its bytes from [`Catchup::check_from`]) still
    /// holds what was read.
    pub(crate) fn holds(&self, inode: u64, len: u64, head: &[u8]) -> bool {
        let check = (self.offset - self.check_from()) as usize;
        inode == self.inode
            && len >= self.offset
            && head.len() >= check
            && hex(&head[..check]) == self.before
    }

    /// The agents saved, as the files showed them.
    pub(crate) fn agents(&self) -> Vec<AgentSeen> {
        self.agents
            .iter()
            .map(|agent| AgentSeen {
                agent_id: agent.id.clone(),
                label: agent.label.clone(),
                phase: agent.phase.clone(),
                state: match agent.state.as_str() {
                    "done" => AgentState::Done(agent.text.clone()),
                    "failed" => AgentState::Failed(agent.text.clone()),
                    _ => AgentState::Started,
                },
            })
            .collect()
    }

    /// The catch-up at `offset` of a journal (`inode`) whose bytes before it end in `before`,
    /// with `agents` as the files showed them (those placed are left out by
    /// [`Catchup::unplaced_in`]).
    pub(crate) fn at(offset: u64, inode: u64, before: &[u8], agents: &[AgentSeen]) -> Self {
        let keep = before.len().min(CHECK_BYTES as usize);
        Self {
            version: VERSION,
            offset,
            inode,
            before: hex(&before[before.len() - keep..]),
            created: None,
            store_journal: 0,
            seq: 0,
            agents: agents
                .iter()
                .map(|agent| {
                    let (state, text) = match &agent.state {
                        AgentState::Started => ("started", String::new()),
                        AgentState::Done(text) => ("done", text.clone()),
                        AgentState::Failed(text) => ("failed", text.clone()),
                    };
                    SavedAgent {
                        id: agent.agent_id.clone(),
                        label: agent.label.clone(),
                        phase: agent.phase.clone(),
                        state: state.to_owned(),
                        text,
                    }
                })
                .collect(),
            pending: BTreeMap::new(),
        }
    }

    /// Saves the catch-up in `dir` by a rename (a cache: no fsync; a torn file is a full read).
    pub(crate) fn save(&self, dir: &Path) -> std::io::Result<()> {
        let prefix = format!(".{CATCHUP_FILE}.tmp-");
        // What a hook killed before its rename left, once an hour old.
        checkpoint_core::remove_stale(dir, &prefix);
        let temp: PathBuf = dir.join(format!("{prefix}{}", std::process::id()));
        let text = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&temp)?;
        file.write_all(&text)?;
        drop(file);
        std::fs::rename(&temp, dir.join(CATCHUP_FILE))
    }
}

/// The identity (inode) of the journal of the workflow in `store_dir`; 0 when it has none.
pub(crate) fn store_journal(store_dir: &Path) -> u64 {
    std::fs::metadata(store_dir.join(checkpoint_core::store::JOURNAL_FILE))
        .map_or(0, |meta| std::os::unix::fs::MetadataExt::ino(&meta))
}

/// The agents `workflow` has a task of.
pub(crate) fn placed_agents(workflow: &Workflow) -> std::collections::HashSet<&str> {
    workflow
        .phases
        .iter()
        .flat_map(|phase| &phase.tasks)
        .filter_map(|task| task.agent_id.as_deref())
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
