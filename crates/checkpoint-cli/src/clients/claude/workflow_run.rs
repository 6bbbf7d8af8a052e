//! Claude Code's files of a `Workflow` run, read as an undocumented format: the run's journal
//! (`journal.jsonl`, its `started` and `result` lines), each agent's `agent-<id>.meta.json`
//! (`workflowPhase`, and its label as `description`) and transcript, and the run file
//! `<session>/workflows/<run>.json` written once the run settles. Fields are optional and
//! unknown ones ignored; a missing, partial or changed file is a warning, never an error.

use std::{
    collections::{HashMap, HashSet},
    path::{Path, PathBuf},
};

use checkpoint_core::workflow_run::{AgentSeen, AgentState};
use serde::Deserialize;

use crate::clients::claude::{run_catchup::Catchup, workflow_script::Script};

/// The largest journal or run file read, in bytes (1,000 agents' results fit many times).
const MAX_RUN_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// A `Workflow` run's own journal, in its directory (the client's file, not our store's).
const RUN_JOURNAL: &str = "journal.jsonl";
/// The largest agent meta file read, in bytes (the client writes a few hundred).
const MAX_META_BYTES: u64 = 1024 * 1024;
/// The largest script read, in bytes (the tool's schema allows 512 KiB).
const MAX_SCRIPT_BYTES: u64 = 4 * 1024 * 1024;

/// The kind of a journal line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum LineKind {
    Launched,
    Started,
    Result,
    #[serde(other)]
    Other,
}

/// A line of the run's journal.
#[derive(Debug, Deserialize)]
struct JournalLine {
    #[serde(rename = "type")]
    kind: LineKind,
    #[serde(default, rename = "agentId")]
    agent_id: Option<String>,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    phase: Option<String>,
    #[serde(default)]
    result: Option<serde_json::Value>,
}

/// An agent's `.meta.json`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct AgentMeta {
    description: Option<String>,
    #[serde(rename = "workflowPhase")]
    workflow_phase: Option<String>,
}

/// The run file, written when the run settles.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RunFile {
    #[serde(rename = "workflowProgress")]
    progress: Vec<serde_json::Value>,
}

/// The kind of an entry of the run file's `workflowProgress`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ProgressKind {
    WorkflowPhase,
    WorkflowAgent,
    #[serde(other)]
    Other,
}

/// An agent's state in the run file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum AgentRunState {
    Done,
    Error,
    #[serde(other)]
    Other,
}

/// An agent entry of `workflowProgress`.
#[derive(Debug, Deserialize)]
struct ProgressAgent {
    #[serde(rename = "type")]
    kind: ProgressKind,
    #[serde(default, rename = "agentId")]
    agent_id: Option<String>,
    #[serde(default)]
    label: Option<String>,
    #[serde(default, rename = "phaseTitle")]
    phase_title: Option<String>,
    #[serde(default)]
    state: Option<AgentRunState>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default, rename = "resultPreview")]
    result_preview: Option<String>,
}

/// What the run's files show: its agents (in the order first seen), their full results, whether
/// the run settled, and what could not be read.
#[derive(Debug, Default)]
pub(crate) struct Observation {
    pub(crate) agents: Vec<AgentSeen>,
    /// Full results of finished agents, by agent id.
    pub(crate) results: HashMap<String, String>,
    pub(crate) settled: bool,
    pub(crate) warnings: Vec<String>,
    /// Where each agent is in `agents`.
    index: HashMap<String, usize>,
}

impl Observation {
    /// The agent `agent_id`, added (started, nothing known) when not seen yet.
    pub(crate) fn agent(&mut self, agent_id: &str) -> &mut AgentSeen {
        let index = match self.index.get(agent_id) {
            Some(index) => *index,
            None => {
                self.index.insert(agent_id.to_owned(), self.agents.len());
                self.agents.push(AgentSeen {
                    agent_id: agent_id.to_owned(),
                    label: None,
                    phase: None,
                    state: AgentState::Started,
                });
                self.agents.len() - 1
            }
        };
        &mut self.agents[index]
    }

    /// Whether the files know agent `agent_id`.
    pub(crate) fn knows(&self, agent_id: &str) -> bool {
        self.index.contains_key(agent_id)
    }

    /// Takes `agents` as the agents seen so far (the first of an id counts).
    fn seen_before(&mut self, agents: Vec<AgentSeen>) {
        self.agents.clear();
        self.index.clear();
        for agent in agents {
            if !self.index.contains_key(&agent.agent_id) {
                self.index.insert(agent.agent_id.clone(), self.agents.len());
                self.agents.push(agent);
            }
        }
    }
}

/// A run's directory: `<session>/subagents/workflows/<run>`.
#[derive(Debug, Clone)]
pub(crate) struct RunDir {
    pub(crate) dir: PathBuf,
}

impl RunDir {
    /// The run `run_id`'s directory under the session whose transcript is `transcript_path`
    /// (`<session>.jsonl`).
    pub(crate) fn of_session(transcript_path: &Path, run_id: &str) -> Self {
        Self {
            dir: transcript_path
                .with_extension("")
                .join("subagents")
                .join("workflows")
                .join(run_id),
        }
    }

    /// The session's directory.
    fn session_dir(&self) -> Option<&Path> {
        self.dir.parent()?.parent()?.parent()
    }

    fn run_id(&self) -> Option<String> {
        Some(self.dir.file_name()?.to_string_lossy().into_owned())
    }

    /// Whether the client keeps files of agent `agent_id` in this run.
    pub(crate) fn has_agent(&self, agent_id: &str) -> bool {
        safe_agent_id(agent_id)
            && ["jsonl", "meta.json"]
                .iter()
                .any(|ext| self.dir.join(format!("agent-{agent_id}.{ext}")).exists())
    }

    /// What the files say, read from where `saved` left off when the run's journal still holds
    /// what it read (only the lines appended since, and the agents it had not placed), else from
    /// the start; and the catch-up to save once what was seen is applied. Applied to a workflow
    /// that applied `saved`, both reads give the same result. The agents in `placed` (those
    /// with a task) are not named again from their files.
    pub(crate) fn observe_from(
        &self,
        script: Option<&Script>,
        saved: Option<Catchup>,
        placed: &HashSet<&str>,
    ) -> (Observation, Catchup) {
        let mut seen = Observation::default();
        let path = self.dir.join(RUN_JOURNAL);
        let from = saved.as_ref().map_or(0, Catchup::check_from);
        let read = match checkpoint_core::read_foreign_from(&path, from, MAX_RUN_FILE_BYTES) {
            Ok(read) => read,
            Err(err) => {
                seen.warnings
                    .push(format!("{err}; the run is recorded without it"));
                None
            }
        };
        let (mut offset, mut inode, mut before) = (0, 0, Vec::new());
        if let Some(read) = read {
            inode = read.inode;
            // `checked`: the bytes read before `start`, the ones the saved point was checked by.
            let (start, checked, tail) = match saved {
                Some(saved) if saved.holds(read.inode, read.len, &read.bytes) => {
                    seen.seen_before(saved.agents());
                    seen.results.extend(saved.pending.clone());
                    let skip = (saved.offset - from) as usize;
                    let (checked, tail) = read.bytes.split_at(skip);
                    (saved.offset, checked.to_vec(), tail.to_vec())
                }
                // Not the journal it read: all of it, from the start.
                Some(_) => match checkpoint_core::read_foreign(&path, MAX_RUN_FILE_BYTES) {
                    Ok(bytes) => (0, Vec::new(), bytes.unwrap_or_default()),
                    Err(err) => {
                        seen.warnings
                            .push(format!("{err}; the run is recorded without it"));
                        (0, Vec::new(), Vec::new())
                    }
                },
                None => (0, Vec::new(), read.bytes.clone()),
            };
            let used = self.read_journal(&tail, &mut seen);
            offset = start + used as u64;
            // The journal's bytes just before the new point, however few the new lines hold
            // (one short line must not leave the next hook fewer bytes to check than it
            // compares, which made every other hook read the whole journal).
            before = checked;
            before.extend_from_slice(&tail[..used]);
        }
        self.read_run_file(&mut seen);
        self.place_unnamed(script, placed, &mut seen);
        let catchup = Catchup::at(offset, inode, &before, &seen.agents);
        (seen, catchup)
    }

    /// Names the agents whose lines name no label or phase, from their meta files, else by
    /// their first prompt in `script`; not those in `placed`, which have their task.
    fn place_unnamed(
        &self,
        script: Option<&Script>,
        placed: &HashSet<&str>,
        seen: &mut Observation,
    ) {
        for index in 0..seen.agents.len() {
            let agent = &seen.agents[index];
            if (agent.label.is_some() && agent.phase.is_some())
                || placed.contains(agent.agent_id.as_str())
            {
                continue;
            }
            let agent_id = seen.agents[index].agent_id.clone();
            let meta = self.meta(&agent_id, &mut seen.warnings);
            let agent = &mut seen.agents[index];
            if let Some(meta) = meta {
                agent.label = agent.label.take().or(meta.description);
                agent.phase = agent.phase.take().or(meta.workflow_phase);
            }
            if agent.label.is_some() && agent.phase.is_some() {
                continue;
            }
            let call = script.and_then(|script| {
                let prompt = self.first_prompt(&agent_id)?;
                script.call_for(&prompt).cloned()
            });
            if let Some(call) = call {
                let agent = &mut seen.agents[index];
                agent.label = agent.label.take().or(call.label);
                agent.phase = agent.phase.take().or(call.phase);
            }
        }
    }

    fn read(&self, path: &Path, limit: u64, warnings: &mut Vec<String>) -> Option<Vec<u8>> {
        match checkpoint_core::read_foreign(path, limit) {
            Ok(bytes) => bytes,
            Err(err) => {
                warnings.push(format!("{err}; the run is recorded without it"));
                None
            }
        }
    }

    /// Reads the complete lines of `bytes`, lines of the run's journal; returns how many bytes
    /// they hold (a last line without its newline is still being written: read next time).
    fn read_journal(&self, bytes: &[u8], seen: &mut Observation) -> usize {
        let path = self.dir.join(RUN_JOURNAL);
        let used = bytes
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |end| end + 1);
        let mut skipped = 0;
        for line in bytes[..used].split(|b| *b == b'\n') {
            if line.trim_ascii().is_empty() {
                continue;
            }
            let Ok(line) = serde_json::from_slice::<JournalLine>(line) else {
                // A torn last line while the client writes, or a line of a changed format.
                skipped += 1;
                continue;
            };
            let Some(agent_id) = line.agent_id.as_deref().filter(|id| safe_agent_id(id)) else {
                continue;
            };
            match line.kind {
                LineKind::Started => {
                    let agent = seen.agent(agent_id);
                    agent.label = agent.label.take().or(line.label);
                    agent.phase = agent.phase.take().or(line.phase);
                }
                LineKind::Result => {
                    let text = match line.result {
                        Some(serde_json::Value::String(text)) => text,
                        Some(serde_json::Value::Null) | None => String::new(),
                        Some(value) => serde_json::to_string_pretty(&value).unwrap_or_default(),
                    };
                    seen.agent(agent_id).state =
                        AgentState::Done(checkpoint_core::workflow_run::excerpt(&text));
                    seen.results.insert(agent_id.to_owned(), text);
                }
                LineKind::Launched | LineKind::Other => {}
            }
        }
        if skipped > 0 {
            seen.warnings.push(format!(
                "{skipped} line(s) of `{}` are not journal lines we know; the run is recorded without them",
                path.display()
            ));
        }
        used
    }

    fn read_run_file(&self, seen: &mut Observation) {
        let (Some(session), Some(run_id)) = (self.session_dir(), self.run_id()) else {
            return;
        };
        let path = session.join("workflows").join(format!("{run_id}.json"));
        let Some(bytes) = self.read(&path, MAX_RUN_FILE_BYTES, &mut seen.warnings) else {
            return;
        };
        let file: RunFile = match serde_json::from_slice(&bytes) {
            Ok(file) => file,
            Err(err) => {
                seen.warnings.push(format!(
                    "`{}` is not a run file we can read ({err}); the run is recorded without it",
                    path.display()
                ));
                return;
            }
        };
        seen.settled = true;
        for entry in file.progress {
            let Ok(entry) = serde_json::from_value::<ProgressAgent>(entry) else {
                continue;
            };
            let Some(agent_id) = entry.agent_id.as_deref().filter(|id| safe_agent_id(id)) else {
                continue;
            };
            match entry.kind {
                ProgressKind::WorkflowAgent => {}
                ProgressKind::WorkflowPhase | ProgressKind::Other => continue,
            }
            let agent = seen.agent(agent_id);
            agent.label = agent.label.take().or(entry.label);
            agent.phase = agent.phase.take().or(entry.phase_title);
            match (entry.state, &agent.state) {
                (Some(AgentRunState::Error), _) => {
                    let error = entry.error.as_deref().unwrap_or("the agent failed");
                    agent.state = AgentState::Failed(checkpoint_core::redact::failure_text(error));
                }
                (Some(AgentRunState::Done), AgentState::Started) => {
                    let preview = entry.result_preview.as_deref().unwrap_or_default();
                    agent.state = AgentState::Done(checkpoint_core::workflow_run::excerpt(preview));
                }
                (Some(AgentRunState::Done | AgentRunState::Other) | None, _) => {}
            }
        }
    }

    fn meta(&self, agent_id: &str, warnings: &mut Vec<String>) -> Option<AgentMeta> {
        if !safe_agent_id(agent_id) {
            return None;
        }
        let path = self.dir.join(format!("agent-{agent_id}.meta.json"));
        let bytes = self.read(&path, MAX_META_BYTES, warnings)?;
        match serde_json::from_slice(&bytes) {
            Ok(meta) => Some(meta),
            Err(err) => {
                warnings.push(format!(
                    "`{}` is not an agent meta file we can read ({err}); the agent is placed without it",
                    path.display()
                ));
                None
            }
        }
    }

    /// The text of the first user message of agent `agent_id`'s transcript.
    fn first_prompt(&self, agent_id: &str) -> Option<String> {
        let path = self.dir.join(format!("agent-{agent_id}.jsonl"));
        let bytes = checkpoint_core::read_foreign(&path, MAX_RUN_FILE_BYTES).ok()??;
        bytes.split(|b| *b == b'\n').find_map(|line| {
            let line: serde_json::Value = serde_json::from_slice(line).ok()?;
            if line.get("type")?.as_str()? != "user" {
                return None;
            }
            match line.get("message")?.get("content")? {
                serde_json::Value::String(text) => Some(text.clone()),
                serde_json::Value::Array(blocks) => Some(
                    blocks
                        .iter()
                        .filter_map(|block| block.get("text")?.as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
                _ => None,
            }
        })
    }
}

/// Reads the run's script: `script_path` (relative to `cwd` when relative), else the copy the
/// client saves of an inline script under the session. A warning when it cannot.
pub(crate) fn read_script(
    script_path: Option<&str>,
    cwd: &Path,
    warnings: &mut Vec<String>,
) -> Option<Script> {
    let path = cwd.join(script_path?);
    let bytes = match checkpoint_core::read_foreign(&path, MAX_SCRIPT_BYTES) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
            warnings.push(format!(
                "the run's script `{}` does not exist; phases and agents are learned from the run's files",
                path.display()
            ));
            return None;
        }
        Err(err) => {
            warnings.push(format!(
                "{err}; phases and agents are learned from the run's files"
            ));
            return None;
        }
    };
    let script = Script::parse(&String::from_utf8_lossy(&bytes));
    if script.is_none() {
        warnings.push(format!(
            "the run's script `{}` has no `export const meta = {{…}}` literal; phases and agents are learned from the run's files",
            path.display()
        ));
    }
    script
}

/// An agent id safe in a file name.
fn safe_agent_id(agent_id: &str) -> bool {
    !agent_id.is_empty()
        && agent_id.len() <= 128
        && agent_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}
