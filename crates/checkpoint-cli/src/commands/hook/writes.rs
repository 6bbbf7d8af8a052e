//! The hooks of several writers in one checkout, through core's `writes`: every hook notes its
//! writer (a session, or a sub-agent of one); a whole `Read` and a write record what the writer
//! saw; before a write through a file tool, the guard refuses one over another writer's unseen
//! change or claim (in each client's form); after a Bash command, the files it changed over
//! another writer's unseen change are told to the model, with the snapshot that holds them; a
//! whole-checkout git command is refused while other sessions work in the checkout.
//!
//! The guard's cost for a file nobody else wrote is one record file looked up.

use std::{
    cell::OnceCell,
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

use checkpoint_core::{
    SnapshotReason, Workflow,
    store::Notice,
    writes::{self, ABSENT, Conflict, Mode, PathRecord, Write, Writer, WriterState, check},
};
use miette::{IntoDiagnostic, Result, miette};
use serde_json::json;

use crate::{
    clients::{
        Client,
        event::{Event, Tool, ToolUse},
    },
    commands::hook::Hook,
    output,
    services::{
        snapshots::{self, Request},
        writes::{absolute, checkout_of, disk_stat, disk_state, real_now_ns, shown},
    },
};

mod claims;

/// The most of a command a record keeps, in characters.
const MAX_COMMAND: usize = 200;
/// How long after its modification a file's size and time prove it unchanged (nanoseconds).
const SETTLED_NS: i128 = 5_000_000_000;
/// How far a file's time may be from a command's start or end and still be its (file times
/// come from a coarse clock), in nanoseconds.
const SLACK_NS: i128 = 20_000_000;
/// A Bash command's run older than this is left out.
const RUNNING_STALE: std::time::Duration = std::time::Duration::from_secs(3600);
/// The most overwritten files one Bash command's message names.
const MAX_NAMED: usize = 10;
/// The largest file a command's output shows whole (the clients cut longer outputs), in bytes.
const SHELL_READ_MAX: u64 = 16 * 1024;

impl Hook {
    /// The writes' part of every hook, after its other work; an error is a warning.
    pub(super) fn writes(&self, client: Client, event: &Event) {
        if matches!(self.ctx.config.writes.sessions, Mode::Off)
            && matches!(self.ctx.config.writes.claims, Mode::Off)
            && matches!(self.ctx.config.writes.bash, Mode::Off)
            && matches!(self.ctx.config.writes.checkout, Mode::Off)
        {
            return;
        }
        if let Err(err) = self.writes_of(client, event) {
            output::warn(&format!(
                "checkpoint hook {event}: the record of writes: {err}"
            ));
        }
    }

    fn writes_of(&self, client: Client, event: &Event) -> Result<()> {
        match event {
            Event::ToolStart(payload) => {
                self.heard(client, payload.agent_id.as_deref())?;
                match payload.tool() {
                    Tool::FileEdit => self.guard_write(client, payload),
                    Tool::Bash => {
                        self.guard_checkout(client, payload)?;
                        self.before_bash(payload)
                    }
                    Tool::Agent | Tool::FileRead | Tool::Workflow | Tool::Other => Ok(()),
                }
            }
            Event::ToolDone(payload) => {
                self.heard(client, payload.agent_id.as_deref())?;
                // A sub-agent's call may be where its phase's holder learned its id: its claims.
                if payload.agent_id.is_some() && payload.tool() != Tool::Agent {
                    self.refresh_claims()?;
                }
                match payload.tool() {
                    Tool::FileEdit => self.wrote(payload),
                    Tool::Bash => {
                        self.after_bash(payload)?;
                        self.shell_read(payload)?;
                        let command = payload.tool_input.command.as_deref().unwrap_or_default();
                        if command.contains("checkpoint") {
                            self.refresh_claims()?;
                        }
                        Ok(())
                    }
                    Tool::Agent => self.refresh_claims(),
                    Tool::FileRead => self.read(payload),
                    Tool::Workflow | Tool::Other => Ok(()),
                }
            }
            Event::ToolFailed(payload) => {
                if payload.tool() == Tool::Bash {
                    self.ctx
                        .store
                        .bash_ended(&self.writer(payload.agent_id.as_deref()), real_now_ns());
                }
                self.heard(client, payload.agent_id.as_deref())
            }
            Event::SubagentStart(payload) => {
                self.heard(client, Some(&payload.agent_id))?;
                self.refresh_claims()
            }
            Event::SubagentStop(payload) => match payload.agent_id.as_deref() {
                Some(agent) => {
                    self.ended(&Writer::new(&self.envelope.session_id, Some(agent)))?;
                    self.refresh_claims()
                }
                None => Ok(()),
            },
            Event::TurnFailed(payload) => self.heard(client, payload.agent_id.as_deref()),
            Event::SessionStart(_) | Event::BeforeCompaction(_) | Event::TurnEnd(_) => {
                self.heard(client, None)
            }
        }
    }

    fn writer(&self, agent: Option<&str>) -> Writer {
        Writer::new(&self.envelope.session_id, agent)
    }

    /// Notes that `agent` (or the session) is at work, in this checkout.
    fn heard(&self, client: Client, agent: Option<&str>) -> Result<()> {
        let state = WriterState {
            writer: self.writer(agent),
            agent_type: None,
            last: self.ctx.now,
            ended: false,
            checkout: checkout_of(&self.ctx.cwd).display().to_string(),
            client: client.name().to_owned(),
        };
        self.ctx.store.heard(&state).into_diagnostic()
    }

    /// A writer ended: it is no longer live, and its claims end.
    fn ended(&self, writer: &Writer) -> Result<()> {
        let store = &self.ctx.store;
        store
            .update_writers(|writers| {
                for state in writers.iter_mut().filter(|state| state.writer == *writer) {
                    state.ended = true;
                }
            })
            .into_diagnostic()?;
        store
            .update_claims(|claims| claims.retain(|claim| claim.holder != *writer))
            .into_diagnostic()
    }

    /// Whether a writer is still at work, by the writers' table and the client's own list of
    /// live sessions (Claude Code's `~/.claude/sessions/`).
    fn liveness(&self) -> impl Fn(&Writer) -> bool + '_ {
        let states = OnceCell::new();
        let listed = OnceCell::new();
        move |writer: &Writer| {
            let states: &Vec<WriterState> =
                states.get_or_init(|| self.ctx.store.writers().unwrap_or_default());
            let Some(state) = states.iter().find(|state| state.writer == *writer) else {
                return false;
            };
            let lists = listed.get_or_init(|| {
                Client::ALL.map(|client| (client, crate::clients::home(client).live_sessions()))
            });
            let gone = lists.iter().any(|(client, live)| {
                client.name() == state.client
                    && live
                        .as_ref()
                        .is_some_and(|live| !live.contains(&writer.session))
            });
            writes::is_live(state, self.ctx.now, self.ctx.config.writes.idle(), gone)
        }
    }

    /// Refuses (or warns about) a write through a file tool over another writer's unseen
    /// change, or to a path another live writer holds.
    fn guard_write(&self, client: Client, payload: &ToolUse) -> Result<()> {
        if super::ANSWERED.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(());
        }
        let config = &self.ctx.config.writes;
        let writer = self.writer(payload.agent_id.as_deref());
        let live = self.liveness();
        for path in &payload.tool_input.written {
            let path = self.absolute(path);
            let key = path.display().to_string();
            let relative = self.in_checkout(&path);
            let claims = (config.claims != Mode::Off)
                .then(|| self.ctx.store.claims())
                .transpose()
                .into_diagnostic()?
                .unwrap_or_default();
            let conflict = match self.held_by_other(claims, &relative, &writer, &live) {
                Some(claim) => Some((config.claims, Conflict::Claimed { claim })),
                None if config.sessions == Mode::Off => None,
                None => {
                    let record = self.ctx.store.path_record(&key).into_diagnostic()?;
                    let Some(record) = record else { continue };
                    let disk = disk_state(&path).0;
                    check(
                        Some(&record),
                        &writer,
                        &disk,
                        self.ctx.now,
                        config.recent(),
                        &live,
                    )
                    .map(|conflict| (config.sessions, conflict))
                }
            };
            let Some((mode, mut conflict)) = conflict else {
                continue;
            };
            if let Conflict::Changed { by: by @ None } = &mut conflict {
                *by = self.running_author(&path, &writer, &live);
            }
            let shown = self.shown(&path);
            let snapshot = match conflict {
                Conflict::Claimed { .. } => None,
                _ => self.keep_version(payload.agent_id.as_deref()),
            };
            let reason = writes::reason(&shown, &conflict, snapshot);
            return answer_by_mode(client, mode, &reason);
        }
        Ok(())
    }

    /// The change no write accounts for yet, when other live writers' Bash commands ran as the
    /// file changed (their `PostToolUse` has not recorded it yet): theirs, the first one's
    /// with the others as `also`.
    fn running_author(
        &self,
        path: &Path,
        writer: &Writer,
        live: &dyn Fn(&Writer) -> bool,
    ) -> Option<Write> {
        let (hash, size, mtime_ns) = disk_state(path);
        let at = if hash == ABSENT {
            real_now_ns()
        } else {
            mtime_ns
        };
        let mut runs: Vec<Writer> = self
            .ctx
            .store
            .bash_runs(RUNNING_STALE)
            .into_iter()
            .filter(|run| run.writer != *writer && run.ran_at(at, SLACK_NS) && live(&run.writer))
            .map(|run| run.writer)
            .collect();
        runs.dedup();
        let first = (!runs.is_empty()).then(|| runs.remove(0))?;
        Some(Write {
            at: chrono::DateTime::from_timestamp_nanos(i64::try_from(at).unwrap_or(i64::MAX)),
            path: path.display().to_string(),
            session: first.session.clone(),
            agent: first.agent.clone(),
            agent_type: None,
            phase: None,
            tool: "Bash".to_owned(),
            hash,
            size,
            mtime_ns,
            added: None,
            removed: None,
            also: runs,
        })
    }

    /// Refuses a whole-checkout git command while other live sessions work in this checkout.
    fn guard_checkout(&self, client: Client, payload: &ToolUse) -> Result<()> {
        let mode = self.ctx.config.writes.checkout;
        let Some(command) = payload.tool_input.command.as_deref() else {
            return Ok(());
        };
        if mode == Mode::Off || super::ANSWERED.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(());
        }
        let Some(git) = writes::whole_checkout(command) else {
            return Ok(());
        };
        let checkout = checkout_of(&self.ctx.cwd).display().to_string();
        let live = self.liveness();
        let mut others: Vec<String> = self
            .ctx
            .store
            .writers()
            .into_diagnostic()?
            .into_iter()
            .filter(|state| {
                state.writer.session != self.envelope.session_id
                    && state.writer.agent.is_none()
                    && state.checkout == checkout
                    && live(&state.writer)
            })
            .map(|state| state.writer.describe(None))
            .collect();
        others.dedup();
        if others.is_empty() {
            return Ok(());
        }
        let reason = writes::checkout_reason(&git, &others);
        answer_by_mode(client, mode, &reason)
    }

    /// Before a Bash command: when a recently written file holds another live writer's change
    /// this writer has not seen, the tree is snapshotted, so that whatever the command
    /// overwrites can be brought back.
    fn before_bash(&self, payload: &ToolUse) -> Result<()> {
        if self.ctx.config.writes.bash == Mode::Off
            || super::ANSWERED.load(std::sync::atomic::Ordering::Relaxed)
        {
            return Ok(());
        }
        let writer = self.writer(payload.agent_id.as_deref());
        self.ctx
            .store
            .bash_started(&writer, real_now_ns())
            .into_diagnostic()?;
        let recent = self.ctx.config.writes.recent();
        let mut latest: BTreeMap<String, Write> = BTreeMap::new();
        for write in self.ctx.store.recent_writes().into_diagnostic()? {
            latest.insert(write.path.clone(), write);
        }
        let live = self.liveness();
        let at_risk = latest.values().any(|write| {
            write.writer() != writer
                && self.ctx.now.signed_duration_since(write.at) < recent
                && live(&write.writer())
                && self
                    .ctx
                    .store
                    .path_record(&write.path)
                    .ok()
                    .flatten()
                    .is_some_and(|record| unseen_change(&record, &writer).is_some())
        });
        if at_risk {
            self.keep_version(payload.agent_id.as_deref());
        }
        Ok(())
    }

    /// Records the files a file tool wrote: its writer saw them as they are now.
    fn wrote(&self, payload: &ToolUse) -> Result<()> {
        let paths: Vec<PathBuf> = payload
            .tool_input
            .written
            .iter()
            .map(|path| self.absolute(path))
            .collect();
        if paths.is_empty() {
            return Ok(());
        }
        let (added, removed) = (
            payload.tool_response.lines_added,
            payload.tool_response.lines_removed,
        );
        let phase = self.phase(payload.agent_id.as_deref());
        let writer = self.writer(payload.agent_id.as_deref());
        let keys: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        // What the tool wrote, where the client says: another writer's change made since is
        // not taken for this one's.
        let written = payload
            .tool_input
            .content
            .as_deref()
            .filter(|_| paths.len() == 1)
            .map(|content| writes::content_hash(content.as_bytes()));
        let states: BTreeMap<String, (String, u64, i128)> = paths
            .iter()
            .map(|path| {
                let disk = disk_state(path);
                let state = match &written {
                    // Size and time zero: the next check after a Bash command reads the file.
                    Some(hash) if *hash != disk.0 => (hash.clone(), 0, 0),
                    _ => disk,
                };
                (path.display().to_string(), state)
            })
            .collect();
        self.ctx
            .store
            .update_paths(&keys, |record| {
                let (hash, size, mtime_ns) = states[&record.path].clone();
                let write = Write {
                    at: self.ctx.now,
                    path: record.path.clone(),
                    session: writer.session.clone(),
                    agent: writer.agent.clone(),
                    agent_type: None,
                    phase: phase.clone(),
                    tool: payload.tool_name.clone(),
                    hash,
                    size,
                    mtime_ns,
                    added,
                    removed,
                    also: Vec::new(),
                };
                record.wrote(write.clone());
                vec![write]
            })
            .into_diagnostic()
    }

    /// Records what a whole read saw of a file someone wrote (a file no writer wrote needs
    /// no record: nothing can be lost there).
    fn read(&self, payload: &ToolUse) -> Result<()> {
        match &payload.tool_input.read {
            Some(path) if payload.tool_response.whole_read => self.saw(payload, path),
            _ => Ok(()),
        }
    }

    /// Records what a command that printed whole files saw of them (`cat <path>`: Codex
    /// CLI's way of reading), for a file short enough that no client cuts its output.
    fn shell_read(&self, payload: &ToolUse) -> Result<()> {
        let command = payload.tool_input.command.as_deref().unwrap_or_default();
        if !payload.tool_response.succeeded() {
            return Ok(());
        }
        for path in writes::shell_reads(command) {
            if disk_stat(&self.absolute(&path)).1 <= SHELL_READ_MAX {
                self.saw(payload, &path)?;
            }
        }
        Ok(())
    }

    /// `payload`'s writer saw `path` as it is on disk, if someone wrote it.
    fn saw(&self, payload: &ToolUse, path: &str) -> Result<()> {
        let path = self.absolute(path);
        let key = path.display().to_string();
        let record = self.ctx.store.path_record(&key);
        if record.into_diagnostic()?.is_none() {
            return Ok(());
        }
        let hash = disk_state(&path).0;
        let writer = self.writer(payload.agent_id.as_deref());
        let now = self.ctx.now;
        self.ctx
            .store
            .update_paths(&[key], |record| {
                record.saw(&writer, &hash, now);
                Vec::new()
            })
            .into_diagnostic()
    }

    /// After a Bash command: the recently written files it changed are recorded as its writes,
    /// and those where it replaced another writer's change its writer had not seen are told to
    /// the model at once, and journaled for `watch`.
    fn after_bash(&self, payload: &ToolUse) -> Result<()> {
        if self.ctx.config.writes.bash == Mode::Off {
            return Ok(());
        }
        let command = payload.tool_input.command.clone().unwrap_or_default();
        let store = &self.ctx.store;
        // Its mark ends once its changes are found (below), whatever happens.
        struct Ended<'s>(&'s checkpoint_core::store::Store, Writer);
        impl Drop for Ended<'_> {
            fn drop(&mut self) {
                self.0.bash_ended(&self.1, real_now_ns());
            }
        }
        let _ended = Ended(store, self.writer(payload.agent_id.as_deref()));
        let (changed, listed) = self.changed_files(payload)?;
        if changed.is_empty() {
            return Ok(());
        }
        let writer = self.writer(payload.agent_id.as_deref());
        // Which commands may have made each change: this one if the file changed after it
        // started, and every other writer's command that ran when it changed.
        let runs = store.bash_runs(RUNNING_STALE);
        let started = runs
            .iter()
            .find(|run| run.writer == writer)
            .map(|run| run.start_ns);
        let authors: BTreeMap<String, (Writer, Vec<Writer>)> = changed
            .iter()
            .filter_map(|(path, (hash, _, mtime))| {
                // A file the client listed keeps an older time when moved (`mv`): it changed
                // while the command ran all the same.
                let moved = listed.contains(path) && started.is_some_and(|start| *mtime < start);
                let at = if hash == ABSENT || moved {
                    real_now_ns()
                } else {
                    *mtime
                };
                let mut others: Vec<Writer> = runs
                    .iter()
                    .filter(|run| run.writer != writer && run.ran_at(at, SLACK_NS))
                    .map(|run| run.writer.clone())
                    .collect();
                if started.is_none_or(|start| at >= start - SLACK_NS) {
                    return Some((path.clone(), (writer.clone(), others)));
                }
                // Changed before this command started: another command's, or nobody knows.
                (!others.is_empty()).then(|| {
                    let first = others.remove(0);
                    (path.clone(), (first, others))
                })
            })
            .collect();
        let phase = self.phase(payload.agent_id.as_deref());
        let tool = format!("Bash: {}", shortened(&command));
        let mut overwritten: Vec<(String, Write)> = Vec::new();
        let keys: Vec<String> = authors.keys().cloned().collect();
        store
            .update_paths(&keys, |record| {
                let (hash, size, mtime_ns) = changed[&record.path].clone();
                if record.last().is_some_and(|last| last.hash == hash) {
                    return Vec::new();
                }
                let (author, also) = authors[&record.path].clone();
                let own = author == writer;
                if own && let Some(previous) = unseen_change(record, &writer) {
                    overwritten.push((record.path.clone(), previous.clone()));
                }
                let write = Write {
                    at: self.ctx.now,
                    path: record.path.clone(),
                    session: author.session.clone(),
                    agent: author.agent.clone(),
                    agent_type: None,
                    phase: phase.clone(),
                    tool: if own { tool.clone() } else { "Bash".to_owned() },
                    hash,
                    size,
                    mtime_ns,
                    added: None,
                    removed: None,
                    also,
                };
                record.wrote(write.clone());
                vec![write]
            })
            .into_diagnostic()?;
        if overwritten.is_empty() {
            return Ok(());
        }
        let snapshot = self.last_other_writer_snapshot();
        let notices: Vec<Notice> = overwritten
            .iter()
            .map(|(path, previous)| Notice {
                at: self.ctx.now,
                path: path.clone(),
                by: writer.clone(),
                overwritten: previous.clone(),
                command: shortened(&command),
                snapshot,
            })
            .collect();
        store.add_notices(&notices).into_diagnostic()?;
        let text: Vec<String> = overwritten
            .iter()
            .take(MAX_NAMED)
            .map(|(path, previous)| {
                writes::overwritten(
                    &self.shown(Path::new(path)),
                    previous,
                    &shortened(&command),
                    snapshot,
                )
            })
            .collect();
        super::answer(&json!({ "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": text.join("\n"),
        } }))
    }

    /// The files a Bash command may have changed: those recently written whose content is no
    /// longer what their last write left, with their state on disk now; and, among them, those
    /// the client listed that no writer recorded.
    #[expect(
        clippy::type_complexity,
        reason = "a path's hash, size and time, as disk_state"
    )]
    fn changed_files(
        &self,
        payload: &ToolUse,
    ) -> Result<(BTreeMap<String, (String, u64, i128)>, BTreeSet<String>)> {
        // The latest write of each recently written file, and its state on disk now.
        let mut latest: BTreeMap<String, Write> = BTreeMap::new();
        for write in self.ctx.store.recent_writes().into_diagnostic()? {
            latest.insert(write.path.clone(), write);
        }
        let recorded: BTreeSet<String> = latest.keys().cloned().collect();
        let mut changed: BTreeMap<String, (String, u64, i128)> = latest
            .into_values()
            .filter_map(|write| {
                let now = disk_stat(Path::new(&write.path));
                // Racy-git's rule: a time a later write in the same clock tick could share is
                // no proof, so a file modified in the last seconds is read.
                let settled = real_now_ns().saturating_sub(now.2) > SETTLED_NS;
                if now.0 != ABSENT && now.1 == write.size && now.2 == write.mtime_ns && settled {
                    return None;
                }
                let state = disk_state(Path::new(&write.path));
                (state.0 != write.hash).then(|| (write.path.clone(), state))
            })
            .collect();
        // The files the client says changed while the command ran that no writer recorded:
        // one the command created, or moved there, is its writer's from now on.
        let mut listed = BTreeSet::new();
        for path in &payload.tool_response.changed_files {
            let path = self.absolute(path);
            let key = path.display().to_string();
            let state = disk_state(&path);
            if state.0 != ABSENT && !recorded.contains(&key) {
                changed.entry(key.clone()).or_insert(state);
                listed.insert(key);
            }
        }
        Ok((changed, listed))
    }

    /// Takes a snapshot of the tree as it is (another writer's version of a file about to be
    /// refused is on disk), for the first unfinished workflow; its number, `@n`.
    fn keep_version(&self, agent: Option<&str>) -> Option<u64> {
        let workflow = self.first_unfinished()?;
        let recorded = snapshots::take_if_git(
            &self.ctx,
            &workflow.id,
            Request {
                reason: SnapshotReason::OtherWriter,
                label: None,
                session_id: Some(self.envelope.session_id.clone()),
                agent_id: agent.map(str::to_owned),
                phase: None,
                deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs(2)),
            },
        );
        let commit = match recorded {
            Ok(Some(recorded)) if !recorded.taken.unfinished => recorded.taken.commit,
            Ok(_) => return None,
            Err(err) => {
                output::warn(&format!("no snapshot of the other writer's version: {err}"));
                return None;
            }
        };
        let entries = self.ctx.store.journal(&workflow.id).ok()?.entries;
        checkpoint_core::snapshots::list(&entries)
            .into_iter()
            .rev()
            .find(|record| record.commit == commit)
            .map(|record| record.n)
    }

    /// The last snapshot that kept another writer's version, where a Bash command's overwrite
    /// can be undone from (the refusals take one; so do turn ends).
    fn last_other_writer_snapshot(&self) -> Option<u64> {
        let workflow = self.first_unfinished()?;
        let entries = self.ctx.store.journal(&workflow.id).ok()?.entries;
        checkpoint_core::snapshots::list(&entries)
            .last()
            .map(|record| record.n)
    }

    fn first_unfinished(&self) -> Option<Workflow> {
        self.scan().ok()?.0.into_iter().next()
    }

    /// The phase a write belongs to: the one the agent holds, else the first in progress.
    fn phase(&self, agent: Option<&str>) -> Option<String> {
        let workflow = self.first_unfinished()?;
        snapshots::phase_of(&workflow, agent).map(|phase| phase.to_string())
    }

    /// `path` absolute, one record per file (see `services::writes::absolute`).
    fn absolute(&self, path: &str) -> PathBuf {
        absolute(&self.ctx.cwd, path)
    }

    /// The path from the top of its checkout (what claims name).
    fn in_checkout(&self, path: &Path) -> String {
        let top = checkout_of(path.parent().unwrap_or(path));
        path.strip_prefix(&top)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// The path as messages show it: from the project root where it is inside it.
    fn shown(&self, path: &Path) -> String {
        shown(&self.ctx.project_root, path)
    }
}

/// Claude Code's `SessionEnd`: the session and its sub-agents ended, their claims end. (Nothing
/// else depends on it: the client cuts it short and skips it after a hook timeout.)
pub(super) fn session_end(
    dir_override: Option<&Path>,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<()> {
    let bytes = super::read_stdin().map_err(|err| miette!("{err}"))?;
    let payload: serde_json::Value = serde_json::from_slice(&bytes).into_diagnostic()?;
    let text = |key: &str| payload.get(key).and_then(serde_json::Value::as_str);
    let Some(session_id) = text("session_id") else {
        return Ok(());
    };
    let cwd = match text("cwd") {
        Some(cwd) if !cwd.is_empty() => PathBuf::from(cwd),
        _ => std::env::current_dir().into_diagnostic()?,
    };
    let location = crate::ctx::Location::find(cwd, dir_override);
    if !location.root.is_dir() {
        return Ok(());
    }
    let hook = Hook {
        ctx: crate::ctx::Ctx::new(location, super::settings(now))?,
        envelope: crate::clients::event::Envelope {
            session_id: session_id.to_owned(),
            cwd: String::new(),
            transcript_path: None,
        },
    };
    session_ended(&hook)
}

/// Marks the hook's session ended (it and its sub-agents), ending its claims.
fn session_ended(hook: &Hook) -> Result<()> {
    let session = hook.envelope.session_id.clone();
    let store = &hook.ctx.store;
    store
        .update_writers(|writers| {
            for state in writers
                .iter_mut()
                .filter(|state| state.writer.session == session)
            {
                state.ended = true;
            }
        })
        .into_diagnostic()?;
    store
        .update_claims(|claims| claims.retain(|claim| claim.holder.session != session))
        .into_diagnostic()
        .map_err(|err| miette!("{err}"))
}

/// The change a writer replaces without having seen it: the file's last write, by another
/// writer, when what this writer last saw of the file is not that write's content.
fn unseen_change<'r>(record: &'r PathRecord, writer: &Writer) -> Option<&'r Write> {
    let last = record.last()?;
    let seen = record
        .seen
        .get(&writer.key())
        .map(|seen| seen.hash.as_str());
    (last.writer() != *writer && seen != Some(last.hash.as_str())).then_some(last)
}

/// A command as a record keeps it: one line, redacted, cut.
fn shortened(command: &str) -> String {
    let line = command.split_whitespace().collect::<Vec<_>>().join(" ");
    checkpoint_core::redact::shortened(&line, MAX_COMMAND)
}

/// The answer to a `PreToolUse` the guard found at fault, by the setting's mode: nothing, the
/// reason told to the model, or a refusal (asked in an interactive Claude Code session, denied
/// headless and in the other clients).
fn answer_by_mode(client: Client, mode: Mode, reason: &str) -> Result<()> {
    match mode {
        Mode::Off => Ok(()),
        Mode::Warn => super::answer(&json!({ "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "additionalContext": reason,
        } })),
        Mode::Refuse => {
            let refusal = crate::clients::home(client).refusal();
            super::effects_guard::emit_refusal(client, refusal, reason)
        }
    }
}
