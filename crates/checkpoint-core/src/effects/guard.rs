//! The guard's answer to a repeat of a recorded effect: refused without a person in a headless
//! session, asked in an interactive one, with a reason that says what already ran and how to
//! let it through.

use chrono::{DateTime, Utc};

use crate::{effects::RecordedEffect, id::WorkflowId};

/// Whether a person sits at the session to answer a question, as the client tells it (each
/// client's own signal is read by the CLI's client code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attendance {
    /// A person is at the terminal and can be asked.
    Attended,
    /// Nobody can be asked: a headless session, or a client that cannot ask.
    Unattended,
}

/// How a repeat is stopped (each client has its own word for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Refused: no person is there to ask.
    Deny,
    /// A person decides.
    Ask,
}

impl Refusal {
    /// The refusal for a session: ask only where a person can answer; refuse everywhere else.
    pub fn for_session(attendance: Attendance) -> Self {
        match attendance {
            Attendance::Attended => Self::Ask,
            Attendance::Unattended => Self::Deny,
        }
    }
}

/// The reason the model and the person read: when the effect ran, in which phase and session,
/// its output, and the command that lets one repeat through (naming the workflow when the
/// store has several).
pub fn reason(effect: &RecordedEffect, workflow: &WorkflowId, several: bool) -> String {
    if effect.unknown {
        return unknown_reason(effect, workflow, several);
    }
    let mut text = format!(
        "checkpoint: this call already succeeded in workflow `{workflow}` (effect {}): `{}` at {}",
        effect.number,
        effect.command,
        time(effect.at),
    );
    if let Some(phase) = &effect.phase {
        text.push_str(&format!(", phase `{phase}`"));
        if let Some(attempt) = effect.attempt.filter(|attempt| *attempt > 0) {
            text.push_str(&format!(" (attempt {attempt})"));
        }
    }
    if let Some(session) = &effect.session_id {
        text.push_str(&format!(", session {session}"));
    }
    text.push('.');
    match effect.output.as_deref().filter(|output| !output.is_empty()) {
        Some(output) => text.push_str(&format!("\nIts output: {output}\n")),
        None => text.push('\n'),
    }
    let workflow_flag = if several {
        format!(" --workflow {workflow}")
    } else {
        String::new()
    };
    text.push_str(&format!(
        "Running it again would repeat what it changed, so it was not run. Do not repeat it: carry on from its result. If a repeat is really wanted, a person runs `checkpoint effects allow {}{workflow_flag}`, which lets exactly one repeat through.",
        effect.number
    ));
    text
}

/// The reason for a repeat of an effect whose outcome nobody saw: it is running now (in
/// flight), or it may have happened before its session was cut off.
fn unknown_reason(effect: &RecordedEffect, workflow: &WorkflowId, several: bool) -> String {
    let workflow_flag = if several {
        format!(" --workflow {workflow}")
    } else {
        String::new()
    };
    let mut text = format!(
        "checkpoint: this call may already have run in workflow `{workflow}` (effect {}, outcome unknown): `{}` was let through at {}",
        effect.number,
        effect.command,
        time(effect.at),
    );
    if let Some(session) = &effect.session_id {
        text.push_str(&format!(" in session {session}"));
    }
    if effect.in_flight {
        text.push_str(
            ", and its outcome has not come yet: it is running now (its turn has not ended). Running it again at the same time would do it twice, so it was not run. Wait for its outcome, then carry on from it.\n",
        );
        text.push_str(&format!(
            "If its session is gone, a person says which it was: `checkpoint effects resolve {}{workflow_flag} --done` or `--not-done`.",
            effect.number
        ));
        return text;
    }
    text.push_str(
        ", and no outcome was recorded before its turn or session ended: it was cut off after it started.\n",
    );
    if let Some(check) = check_command(&effect.command) {
        text.push_str(&format!("Check before repeating: `{check}`.\n"));
    }
    text.push_str(&format!(
        "So it was not run. Once you know which it was, a person runs `checkpoint effects resolve {}{workflow_flag} --done` (it happened: it guards like a done effect) or `--not-done` (a repeat may run).",
        effect.number
    ));
    text
}

/// How to check whether an effect of a built-in kind happened: `git push` against the remote's
/// ref, `gh pr create` against the open pull requests of the branch, `npm publish` and `cargo
/// publish` against the registry, `docker push` against the registry's manifest.
pub(crate) fn check_command(command: &str) -> Option<String> {
    let line = command.rsplit(" && ").next().unwrap_or(command);
    let words: Vec<&str> = line.split_whitespace().collect();
    let positional: Vec<&str> = words
        .iter()
        .skip(2)
        .copied()
        .filter(|word| !word.starts_with('-'))
        .collect();
    match words.as_slice() {
        ["git", "push", ..] => {
            let remote = positional.first().copied().unwrap_or("origin");
            let reference = positional
                .get(1)
                .map(|spec| spec.rsplit(':').next().unwrap_or(spec).trim_start_matches('+'))
                .unwrap_or("HEAD");
            Some(format!("git ls-remote {remote} {reference}"))
        }
        ["gh", "pr", "create", ..] => {
            let head = words
                .iter()
                .position(|word| *word == "--head" || *word == "-H")
                .and_then(|at| words.get(at + 1).copied())
                .map_or_else(|| "\"$(git branch --show-current)\"".to_owned(), str::to_owned);
            Some(format!("gh pr list --head {head} --state all"))
        }
        ["npm" | "pnpm" | "yarn", ..] if words.contains(&"publish") => Some(
            "npm view \"$(node -p \"require('./package.json').name\")@$(node -p \"require('./package.json').version\")\" version"
                .to_owned(),
        ),
        ["cargo", "publish", ..] => Some(
            "cargo info \"$(cargo metadata --no-deps --format-version 1 | jq -r '.packages[0].name')\"".to_owned(),
        ),
        ["docker" | "podman", "push", ..] => positional
            .first()
            .map(|image| format!("docker manifest inspect {image}")),
        _ => None,
    }
}

/// A time as the reason shows it, to the minute, in UTC.
pub(crate) fn time(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M UTC").to_string()
}
