//! The working tree's snapshots in words: a line of `checkpoint snapshots`, and a snapshot's
//! or a restore's journal entry as `log` describes it.

use checkpoint_core::{
    Transition,
    snapshots::{Author, FileChanges, FileTally, SnapshotRecord},
};

use crate::output::text::{count, escape, short_sha};

/// One line of `checkpoint snapshots`: number, time, why, phase, session/agent, files, lines.
pub(crate) fn row(record: &SnapshotRecord) -> String {
    let mut line = format!(
        "@{:<4} {}  {:<14}",
        record.n,
        record.at.format("%Y-%m-%d %H:%M:%S"),
        record.reason.as_str()
    );
    if let Some(phase) = &record.phase {
        line.push_str(&format!(" phase {phase}"));
    }
    if let Some(session) = &record.session_id {
        line.push_str(&format!(" session {}", escape(&short(session))));
    }
    if let Some(agent) = &record.agent_id {
        line.push_str(&format!(" agent {}", escape(&short(agent))));
    }
    line.push_str(&format!(
        "  {} +{} -{}",
        count(record.files_changed as usize, "file"),
        record.added,
        record.removed
    ));
    if let Some(label) = &record.label {
        line.push_str(&format!("  \"{}\"", escape(label)));
    }
    line
}

/// A snapshot's or a restore's journal entry in words.
pub(crate) fn describe(transition: &Transition) -> String {
    match transition {
        Transition::FilesSnapshot {
            commit,
            reason,
            files_changed,
            paths,
            agent_id,
            ..
        } => {
            let mut text = format!(
                "files snapshot {} ({}): {} changed",
                short_sha(commit),
                reason.as_str().replace('_', " "),
                count(*files_changed as usize, "file")
            );
            if !paths.is_empty() {
                let shown: Vec<String> = paths
                    .iter()
                    .take(3)
                    .map(|path| escape(path).into_owned())
                    .collect();
                text.push_str(&format!(" ({}", shown.join(", ")));
                if *files_changed > 3 {
                    text.push_str(", …");
                }
                text.push(')');
            }
            if let Some(agent) = agent_id {
                text.push_str(&format!(", by agent {}", escape(&short(agent))));
            }
            text
        }
        Transition::FilesRestore {
            kind,
            target,
            files,
            paths,
            ..
        } => {
            let verb = match kind {
                checkpoint_core::RestoreKind::Undo => "undo",
                checkpoint_core::RestoreKind::Redo => "redo",
            };
            let mut text = format!(
                "{verb}: {} put back as snapshot {} kept them",
                count(*files as usize, "file"),
                short_sha(target)
            );
            if !paths.is_empty() {
                text.push_str(&format!(" (only {})", paths.join(", ")));
            }
            text
        }
        other => other.op().to_owned(),
    }
}

/// The files one phase, session or agent changed: "3 files +10 -2".
pub(crate) fn changes_text(changes: &FileChanges) -> String {
    format!(
        "{} +{} -{}",
        count(changes.files() as usize, "file"),
        changes.added,
        changes.removed
    )
}

/// Who changed files: "session 0b3c6e0e", "agent a1b2c3d4 (session 0b3c6e0e)", or "no session"
/// (a snapshot by hand, a phase's completion).
pub(crate) fn author_text(author: &Author) -> String {
    let session = author
        .session_id
        .as_deref()
        .map(|session| format!("session {}", escape(&short(session))));
    match (&author.agent_id, session) {
        (Some(agent), Some(session)) => format!("agent {} ({session})", escape(&short(agent))),
        (Some(agent), None) => format!("agent {}", escape(&short(agent))),
        (None, Some(session)) => session,
        (None, None) => "no session".to_owned(),
    }
}

/// The lines that say who changed which files, per session and agent (the first paths of each),
/// for `status` and `watch`; empty when no session's snapshot changed any (the phases' lines
/// already say what snapshots taken by hand or at a completion hold).
pub(crate) fn authors_lines(tally: &FileTally) -> String {
    let attributed = tally
        .authors
        .iter()
        .any(|(author, _)| author.session_id.is_some() || author.agent_id.is_some());
    if !attributed {
        return String::new();
    }
    let mut out =
        "\nfiles changed, by session and agent (`checkpoint snapshots` lists them):\n".to_owned();
    for (author, changes) in &tally.authors {
        let mut shown: Vec<String> = changes
            .paths
            .iter()
            .take(3)
            .map(|path| escape(path).into_owned())
            .collect();
        if changes.files() > 3 {
            shown.push("…".to_owned());
        }
        out.push_str(&format!(
            "  {}: {}",
            author_text(author),
            changes_text(changes)
        ));
        if !shown.is_empty() {
            out.push_str(&format!(" ({})", shown.join(", ")));
        }
        out.push('\n');
    }
    out
}

/// An id's first 8 characters.
fn short(id: &str) -> String {
    id.chars().take(8).collect()
}
