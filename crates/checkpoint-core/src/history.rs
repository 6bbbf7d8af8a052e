//! Time travel over the journal: the state at any sequence number, and what changed between two.

use std::path::Path;

use crate::{
    error::{Error, Result},
    id::PhaseId,
    journal::{self, Entry},
    model::Workflow,
    transition::Transition,
};

/// The state right after the journal entry `seq`.
pub fn state_at(path: &Path, entries: &[Entry], seq: u64) -> Result<Workflow> {
    let last = entries.last().map_or(0, |entry| entry.seq);
    if seq == 0 || seq > last {
        return Err(Error::NoJournalEntry { seq, last });
    }
    let upto: Vec<Entry> = entries
        .iter()
        .take_while(|entry| entry.seq <= seq)
        .cloned()
        .collect();
    journal::replay(path, None, &upto)?.ok_or_else(|| {
        Error::transition(
            format!("the journal has no `init` before entry {seq}"),
            "pick a later sequence number",
        )
    })
}

/// The sequence number just before the last start of `phase`: the point to redo it from.
pub fn before_last_start(entries: &[Entry], phase: &PhaseId) -> Result<u64> {
    let start = entries
        .iter()
        .rev()
        .find(|entry| matches!(&entry.transition, Transition::PhaseStart { phase: started, .. } if started == phase))
        .ok_or_else(|| Error::transition(format!("phase `{phase}` was never started"), "rewind to a sequence number from `checkpoint log` instead"))?;
    Ok(start.seq - 1)
}

/// One difference between two states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What changed: `workflow`, `phase`, `task`, `artifact`, `decision`, `note` or `file`.
    pub what: &'static str,
    /// Which one (a phase id, `phase/task`, a path, …).
    pub subject: String,
    /// The value before, if any.
    pub before: Option<String>,
    /// The value after, if any.
    pub after: Option<String>,
}

/// What changed from `a` to `b`: statuses, progress, tasks, artifacts and the context summary.
pub fn diff(a: &Workflow, b: &Workflow) -> Vec<Change> {
    let mut changes = Vec::new();
    let mut push =
        |what: &'static str, subject: String, before: Option<String>, after: Option<String>| {
            if before != after {
                changes.push(Change {
                    what,
                    subject,
                    before,
                    after,
                });
            }
        };
    push(
        "workflow",
        "status".into(),
        Some(a.status.as_str().into()),
        Some(b.status.as_str().into()),
    );
    for phase_b in &b.phases {
        let phase_a = a.phase(&phase_b.id);
        let id = phase_b.id.to_string();
        push(
            "phase",
            format!("{id} status"),
            phase_a.map(|phase| phase.status.as_str().into()),
            Some(phase_b.status.as_str().into()),
        );
        push(
            "phase",
            format!("{id} progress"),
            phase_a.and_then(|phase| phase.progress.clone()),
            phase_b.progress.clone(),
        );
        push(
            "phase",
            format!("{id} commit"),
            phase_a.and_then(|phase| phase.commit_sha.clone()),
            phase_b.commit_sha.clone(),
        );
        push(
            "phase",
            format!("{id} attempts"),
            phase_a.map(|phase| phase.attempts.to_string()),
            Some(phase_b.attempts.to_string()),
        );
        for artifact in &phase_b.artifacts {
            let had = phase_a
                .is_some_and(|phase| phase.artifacts.iter().any(|old| old.path == artifact.path));
            if !had {
                push(
                    "artifact",
                    format!("{id}: {}", artifact.path),
                    None,
                    Some("recorded".into()),
                );
            }
        }
        for task in &phase_b.tasks {
            let before = phase_a
                .and_then(|phase| phase.task(&task.id))
                .map(|task| task.status.as_str().to_owned());
            push(
                "task",
                format!("{id}/{}", task.id),
                before,
                Some(task.status.as_str().into()),
            );
        }
    }
    for phase_a in a.phases.iter().filter(|phase| b.phase(&phase.id).is_none()) {
        push(
            "phase",
            format!("{} status", phase_a.id),
            Some(phase_a.status.as_str().into()),
            None,
        );
    }
    for decision in b
        .context
        .key_decisions
        .iter()
        .skip(a.context.key_decisions.len())
    {
        push(
            "decision",
            decision.text.clone(),
            None,
            Some("added".into()),
        );
    }
    for note in b.context.notes.iter().skip(a.context.notes.len()) {
        push("note", note.text.clone(), None, Some("added".into()));
    }
    for path in b
        .context
        .file_paths
        .iter()
        .filter(|path| !a.context.file_paths.contains(path))
    {
        push("file", path.clone(), None, Some("added".into()));
    }
    changes
}
