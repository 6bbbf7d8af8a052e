//! Redaction: well-known secret patterns are replaced by a marker in every free-text field of a
//! transition before it is journaled, so that a token pasted into a note never reaches the disk.
//!
//! The patterns are matched by hand (no regex engine, nothing compiled on the hook path): the
//! token rules of `rules.rs`, ported from gitleaks (API keys `sk-…`, AWS, GitHub, GitLab, Slack,
//! Stripe, Google, npm, Hugging Face and some fifty more), JSON Web Tokens, `Bearer <token>`,
//! `-----BEGIN … PRIVATE KEY-----` blocks, passwords in URLs (`postgres://user:pass@host`), and
//! the values of assignments and flags whose key names a secret (`password=…`, `GITHUB_TOKEN: …`,
//! `"client_secret": "…"`, `DB_PASS=…`, `AccountKey=…;`, `--password …`).
//! Redacting twice changes nothing more.

mod find;
mod rules;

use crate::{
    model::{Holder, Phase, Task, Workflow},
    redact::find::find,
    transition::Transition,
};

/// Replaces the secrets in `text` with `[REDACTED:<kind>]` markers; returns how many it replaced.
///
/// A pass is repeated while it finds something (at most [`MAX_PASSES`] times): a secret that one
/// pass stepped over, because an earlier match consumed the text around it, is caught by the next,
/// so what is stored is always a fixed point that a second redaction leaves alone.
pub fn text(text: &mut String) -> usize {
    let mut n = 0;
    for _ in 0..MAX_PASSES {
        match pass(text) {
            0 => break,
            found => n += found,
        }
    }
    n
}

/// `text` redacted, then cut to at most `max_chars` characters (on a character boundary, with
/// `…` after a cut): redacting first means a secret straddling the cut never leaves its first
/// characters behind.
pub fn shortened(text: &str, max_chars: usize) -> String {
    let mut redacted = text.to_owned();
    self::text(&mut redacted);
    match redacted.char_indices().nth(max_chars) {
        Some((end, _)) => {
            redacted.truncate(end);
            redacted.push('…');
            redacted
        }
        None => redacted,
    }
}

/// The most of a failure's text kept (a failed tool call's error, a failed agent's), in
/// characters, after redaction.
pub(crate) const MAX_FAILURE_CHARS: usize = 500;

/// A failure's text as it is kept: redacted, then cut to 500 characters (`MAX_FAILURE_CHARS`).
pub fn failure_text(text: &str) -> String {
    shortened(text, MAX_FAILURE_CHARS)
}

/// How many times [`text`] scans a text at most; every fuzz-found case settles in two.
const MAX_PASSES: usize = 4;

fn pass(text: &mut String) -> usize {
    let spans = find(text);
    if spans.is_empty() {
        return 0;
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for span in &spans {
        debug_assert!(
            span.start >= last,
            "`find` returns spans that do not overlap"
        );
        out.push_str(&text[last..span.start]);
        out.push_str("[REDACTED:");
        out.push_str(span.kind);
        out.push(']');
        last = span.end;
    }
    out.push_str(&text[last..]);
    *text = out;
    spans.len()
}

/// The kinds of the secrets in `text` (`aws-key`, `url-password`, …), in order, each once.
pub fn kinds(text: &str) -> Vec<&'static str> {
    let mut kinds: Vec<&'static str> = Vec::new();
    for span in find(text) {
        if !kinds.contains(&span.kind) {
            kinds.push(span.kind);
        }
    }
    kinds
}

/// Redacts the free-text fields of an `effect` entry; returns how many secrets it replaced.
fn effect(transition: &mut Transition) -> usize {
    let mut n = 0;
    let mut field = |value: &mut String| n += text(value);
    // Fields are named exhaustively (no `..`), so a new field must be considered here.
    if let Transition::Effect {
        phase: _,
        attempt: _,
        tool,
        command,
        output,
        ok: _,
        session_id,
        source: _,
        key: _,
        intent: _,
        settles: _,
        call_id,
        agent_id,
    } = transition
    {
        tool.iter_mut().for_each(&mut field);
        field(command);
        output.iter_mut().for_each(&mut field);
        session_id.iter_mut().for_each(&mut field);
        call_id.iter_mut().for_each(&mut field);
        agent_id.iter_mut().for_each(field);
    }
    n
}

/// Redacts every free-text field of a transition (for `init` and `snapshot`, of the whole
/// workflow); returns how many secrets it replaced.
pub fn transition(transition: &mut Transition) -> usize {
    let mut n = 0;
    let mut field = |value: &mut String| n += text(value);
    // Fields are named exhaustively (no `..`), so a new field must be considered here.
    match transition {
        Transition::Init { workflow } => return self::workflow(workflow),
        Transition::SyncResolve {
            keep: _,
            diverged_at: _,
            fork: _,
            base,
        } => return base.as_deref_mut().map_or(0, workflow),
        Transition::Snapshot { workflow, reason } => {
            field(reason);
            return n + self::workflow(workflow);
        }
        Transition::PhaseStart { phase: _, force: _ }
        | Transition::TaskStart {
            phase: _,
            task: _,
            agent_id: _,
        }
        | Transition::Unpause => {}
        Transition::PhaseProgress { phase: _, note } => field(note),
        Transition::PhaseComplete {
            phase: _,
            artifacts,
            commit_sha,
            force: _,
        } => {
            artifacts.iter_mut().for_each(&mut field);
            commit_sha.iter_mut().for_each(field);
        }
        Transition::PhaseFail { phase: _, reason }
        | Transition::PhaseReset { phase: _, reason }
        | Transition::PhaseReject { phase: _, reason }
        | Transition::Replan { phase: _, reason }
        | Transition::TaskFail {
            phase: _,
            task: _,
            reason,
        }
        | Transition::TaskReset {
            phase: _,
            task: _,
            reason,
        }
        | Transition::Pause { reason, until: _ } => field(reason),
        Transition::PhaseSkip { phase: _, reason } | Transition::Abandon { reason } => {
            reason.iter_mut().for_each(field);
        }
        Transition::PhaseApprove { phase: _, by, note } => {
            by.iter_mut().chain(note.iter_mut()).for_each(field);
        }
        Transition::PhaseCommit { phase: _, sha } => field(sha),
        Transition::TaskAdd {
            phase: _,
            task: _,
            title,
            output,
        } => title.iter_mut().chain(output.iter_mut()).for_each(field),
        Transition::TaskDone {
            phase: _,
            task: _,
            output,
            note,
        } => output.iter_mut().chain(note.iter_mut()).for_each(field),
        Transition::Note { text: note } | Transition::Decide { text: note } => field(note),
        Transition::FilePath { path } => field(path),
        Transition::HolderDispatch { .. }
        | Transition::HolderSeen { .. }
        | Transition::HolderEnd { .. } => holder_fields(transition, field),
        Transition::ToolFailure {
            phase: _,
            tool,
            error,
        } => {
            field(tool);
            field(error);
        }
        Transition::Heartbeat { source, session_id }
        | Transition::Compaction {
            trigger: source,
            session_id,
        } => {
            field(source);
            session_id.iter_mut().for_each(field);
        }
        Transition::RunStart {
            pid: _,
            client,
            budget: _,
        } => field(client),
        Transition::SessionHandoff {
            session_id: _,
            client,
            machine,
            user,
            base: _,
            files: _,
            transcript_bytes: _,
        } => {
            field(client);
            field(machine);
            field(user);
        }
        Transition::RunSessionStart {
            number: _,
            phase: _,
            resumed,
        } => resumed.iter_mut().for_each(field),
        Transition::RunSessionEnd {
            number: _,
            session_id,
            exit: _,
            outcome: _,
            transitions: _,
            cost_usd: _,
            tokens: _,
        } => {
            session_id.iter_mut().for_each(field);
        }
        Transition::RunWait {
            until: _,
            reason,
            kind: _,
        }
        | Transition::RunStop { reason, exit: _ } => {
            field(reason);
        }
        Transition::Effect { .. } => return effect(transition),
        Transition::EffectAllow { effect: _, by } => by.iter_mut().for_each(field),
        Transition::FilesSnapshot { .. } | Transition::FilesRestore { .. } => {
            files_fields(transition, field);
        }
    }
    n
}

/// The free-text fields of a sub-agent's dispatch, sign of life or end, each given to `field`.
fn holder_fields(transition: &mut Transition, field: impl FnMut(&mut String)) {
    // Fields are named exhaustively (no `..`), so a new field must be considered here.
    match transition {
        Transition::HolderDispatch {
            phase: _,
            tool_use_id: _,
            description,
            session_id: _,
        } => description.iter_mut().for_each(field),
        Transition::HolderSeen {
            phase: _,
            agent_id: _,
        } => {}
        Transition::HolderEnd {
            phase: _,
            note,
            error,
        } => note.iter_mut().chain(error.iter_mut()).for_each(field),
        _ => {}
    }
}

/// The free-text fields of a snapshot or restore of the files, each given to `field`.
fn files_fields(transition: &mut Transition, mut field: impl FnMut(&mut String)) {
    // Fields are named exhaustively (no `..`), so a new field must be considered here.
    match transition {
        Transition::FilesSnapshot {
            commit: _,
            reason: _,
            label,
            phase: _,
            session_id,
            agent_id: _,
            files_changed: _,
            paths,
            added: _,
            removed: _,
            left_out,
        } => {
            label.iter_mut().for_each(&mut field);
            session_id.iter_mut().for_each(&mut field);
            paths.iter_mut().for_each(&mut field);
            left_out.iter_mut().for_each(field);
        }
        Transition::FilesRestore {
            kind: _,
            before: _,
            target: _,
            paths,
            files: _,
        } => paths.iter_mut().for_each(field),
        _ => {}
    }
}

/// Redacts every free-text field of a workflow; returns how many secrets it replaced.
pub fn workflow(workflow: &mut Workflow) -> usize {
    let mut n = 0;
    let Workflow {
        schema_version: _,
        id: _,
        title,
        description,
        kind,
        status: _,
        created_at: _,
        updated_at: _,
        seq: _,
        git,
        context,
        phases,
        pause,
        last_activity,
        replans,
        priority: _,
        handoff,
        extensions,
    } = workflow;
    let mut field = |value: &mut String| n += text(value);
    title
        .iter_mut()
        .chain(description.iter_mut())
        .chain(kind.iter_mut())
        .for_each(&mut field);
    if let Some(git) = git {
        git.branch
            .iter_mut()
            .chain(git.worktree.iter_mut())
            .chain(git.head.iter_mut())
            .for_each(&mut field);
    }
    context.file_paths.iter_mut().for_each(&mut field);
    for note in &mut context.notes {
        field(&mut note.text);
    }
    for decision in &mut context.key_decisions {
        field(&mut decision.text);
    }
    for phase in phases {
        self::phase(phase, &mut field);
    }
    if let Some(pause) = pause {
        field(&mut pause.reason);
    }
    if let Some(activity) = last_activity {
        field(&mut activity.source);
        activity.session_id.iter_mut().for_each(&mut field);
    }
    for replan in replans {
        field(&mut replan.reason);
    }
    if let Some(handoff) = handoff {
        field(&mut handoff.machine);
        field(&mut handoff.user);
    }
    for value in extensions.values_mut() {
        json(value, &mut field);
    }
    n
}

fn phase(phase: &mut Phase, field: &mut impl FnMut(&mut String)) {
    let Phase {
        id: _,
        name,
        description,
        dependencies: _,
        status: _,
        started_at: _,
        completed_at: _,
        attempts: _,
        failures: _,
        progress,
        progress_at: _,
        outputs,
        artifacts,
        commit_sha,
        error,
        replan_count: _,
        requires_approval: _,
        approval,
        on_failure: _,
        max_attempts: _,
        tasks,
        holder,
        // Patterns, not free text: redacting one would change what it matches.
        effects: _,
        // Globs over paths, like the outputs' paths a person chose.
        claims: _,
    } = phase;
    field(name);
    description
        .iter_mut()
        .chain(progress.iter_mut())
        .chain(commit_sha.iter_mut())
        .chain(error.iter_mut())
        .chain(outputs.iter_mut())
        .for_each(&mut *field);
    for artifact in artifacts {
        field(&mut artifact.path);
    }
    if let Some(approval) = approval {
        approval
            .by
            .iter_mut()
            .chain(approval.note.iter_mut())
            .for_each(&mut *field);
    }
    // The ids are the client's, not free text: redacting one would break the attribution.
    if let Some(Holder {
        tool_use_id: _,
        agent_id: _,
        description,
        session_id: _,
        started_at: _,
        last_activity_at: _,
        ended_at: _,
        error,
    }) = holder
    {
        description
            .iter_mut()
            .chain(error.iter_mut())
            .for_each(&mut *field);
    }
    for Task {
        id: _,
        title,
        status: _,
        attempts: _,
        started_at: _,
        completed_at: _,
        output,
        error,
        agent_id: _,
        note,
    } in tasks
    {
        title
            .iter_mut()
            .chain(output.iter_mut())
            .chain(error.iter_mut())
            .chain(note.iter_mut())
            .for_each(&mut *field);
    }
}

fn json(value: &mut serde_json::Value, field: &mut impl FnMut(&mut String)) {
    match value {
        serde_json::Value::String(string) => field(string),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|item| json(item, field)),
        serde_json::Value::Object(map) => map.values_mut().for_each(|item| json(item, field)),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
