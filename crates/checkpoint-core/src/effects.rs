//! Effects: calls that change something outside the project (a push, a pull request, a
//! publish, a POST), recorded once so that a resumed workflow never repeats them unasked.
//!
//! What is an effect: the built-in list (`builtin.rs`) over the commands a Bash command line
//! runs (`shell.rs`), then the patterns of `config.toml` and of the plan's phases
//! (`pattern.rs`). The record is the journal's `effect` entry; the guard is the question "did
//! this exact call succeed in this workflow and was it not allowed once since?" (`ledger.rs`),
//! answered on the hot path through the store's index (`store/effects.rs`).

mod builtin;
mod counts;
mod guard;
mod ledger;
mod pattern;
mod place;
mod shell;

#[cfg(test)]
mod tests;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::effects::counts::EffectCounts;
pub(crate) use crate::effects::guard::check_command;
pub(crate) use crate::effects::guard::time;
pub use crate::effects::guard::{Attendance, Refusal, reason};
pub(crate) use crate::effects::ledger::outstanding;
pub(crate) use crate::effects::ledger::{IndexEvent, IndexGuard, guard_of};
pub use crate::effects::ledger::{
    Ledger, Observed, RecordedEffect, allow, closing, excerpt, record, record_intent, resolve,
    settling,
};
use crate::{effects::pattern::Pattern, model::Workflow};

/// The most characters of an effect's output kept (after redaction), `…` included.
pub(crate) const MAX_OUTPUT_CHARS: usize = 1000;

/// The `[effects]` table of `config.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct EffectsConfig {
    /// Whether the built-in list (`git push`, `gh pr create`, `npm publish`, …) applies.
    pub builtin: bool,
    /// Patterns added to (or, with a leading `!`, removed from) what counts as an effect: globs
    /// over a Bash command, or over an MCP tool's name (`mcp__<server>__<tool>`).
    pub commands: Vec<String>,
    /// After how many minutes a call let through whose outcome has not come, and whose turn
    /// and session have not been seen to end, is taken as cut off: its outcome is unknown.
    pub unknown_after_minutes: u32,
}

impl Default for EffectsConfig {
    fn default() -> Self {
        Self {
            builtin: true,
            commands: Vec::new(),
            unknown_after_minutes: 60,
        }
    }
}

impl EffectsConfig {
    /// How long a call may run before its outcome is taken as unknown.
    pub fn unknown_after(&self) -> chrono::Duration {
        chrono::Duration::minutes(i64::from(self.unknown_after_minutes))
    }
}

/// A tool call, as the effect rules see it.
#[derive(Debug, Clone, Copy)]
pub enum Call<'a> {
    /// A Bash command line.
    Bash(&'a str),
    /// An MCP tool, by its name `mcp__<server>__<tool>`.
    Mcp(&'a str),
}

/// What counts as an effect: the built-in list when it is on, then the patterns in order (the
/// config's, then the plan's phases'); the last pattern that matches decides.
#[derive(Debug, Clone)]
pub struct Matcher {
    builtin: bool,
    patterns: Vec<Pattern>,
}

impl Matcher {
    /// The rules of `config` alone (no workflow's patterns).
    pub fn new(config: &EffectsConfig) -> Self {
        Self {
            builtin: config.builtin,
            patterns: config
                .commands
                .iter()
                .map(|text| Pattern::new(text))
                .collect(),
        }
    }

    /// The rules of `config` and of every phase of `workflow` (a phase's patterns hold for the
    /// whole workflow: a call is recorded on whichever phase is in progress).
    pub fn for_workflow(config: &EffectsConfig, workflow: &Workflow) -> Self {
        let mut matcher = Self::new(config);
        matcher.patterns.extend(
            workflow
                .phases
                .iter()
                .flat_map(|phase| &phase.effects)
                .map(|text| Pattern::new(text)),
        );
        matcher
    }

    /// Whether `call` is an effect (makes at least one, see [`Matcher::effects`]).
    pub fn is_effect(&self, call: Call<'_>) -> bool {
        !self.effects(call).effects.is_empty()
    }

    /// The effects `call` makes.
    ///
    /// An MCP tool makes one when the last pattern naming it adds. A Bash command line makes one
    /// per command it runs that is an effect (the last pattern that matches that command's
    /// words decides, else the built-in list), each as the reader extracted it, in the
    /// directory the line's `cd`s (and git's `-C`) moved it to; when it makes none, the whole
    /// line is one if the last pattern that matches it adds (a removal applies to single
    /// commands only, so that `!git push origin scratch*` leaves the `npm publish` of `git push
    /// origin scratch && npm publish` an effect). A line the reader doubts is also searched as
    /// raw text, so that what it could not parse is never "no effect".
    pub fn effects(&self, call: Call<'_>) -> Found {
        match call {
            Call::Mcp(tool) => Found {
                effects: self
                    .last_match(|pattern| pattern.mcp && pattern.matches(tool))
                    .unwrap_or(false)
                    .then(|| Effect {
                        text: String::new(),
                        dir: None,
                        place: Place::Anywhere,
                    })
                    .into_iter()
                    .collect(),
                doubt: None,
            },
            Call::Bash(command) => self.bash_effects(command),
        }
    }

    fn bash_effects(&self, command: &str) -> Found {
        let reading = shell::simple_commands(command, 0);
        let mut effects = Vec::new();
        let mut dir: Option<String> = None;
        for words in builtin::unwrap_all(&reading.commands, 0) {
            if let Some(moved) = place::cd(&words, dir.as_deref()) {
                dir = moved;
                continue;
            }
            if self.is_effect_command(&words) {
                effects.push(place::effect(words, dir.as_deref()));
            }
        }
        if reading.doubt.is_some() {
            for words in place::loose_commands(command) {
                if self.is_effect_command(&words) {
                    let effect = place::effect(words, None);
                    if !effects
                        .iter()
                        .any(|found: &Effect| found.text == effect.text)
                    {
                        effects.push(effect);
                    }
                }
            }
        }
        if effects.is_empty() {
            let whole = normalized(command);
            if self.last_match(|pattern| !pattern.mcp && pattern.matches(&whole)) == Some(true) {
                effects.push(Effect {
                    text: whole,
                    dir: None,
                    place: Place::Directory,
                });
            }
        }
        Found {
            effects,
            doubt: reading.doubt,
        }
    }

    fn is_effect_command(&self, words: &[String]) -> bool {
        let text = words.join(" ");
        self.last_match(|pattern| !pattern.mcp && pattern.matches(&text))
            .unwrap_or_else(|| self.builtin && builtin::is_builtin_effect(words))
    }

    fn last_match(&self, matches: impl Fn(&Pattern) -> bool) -> Option<bool> {
        self.patterns
            .iter()
            .rev()
            .find(|pattern| matches(pattern))
            .map(|pattern| !pattern.removes)
    }
}

/// The effects of a call, and the reader's doubt about a command line it could not read to its
/// end as a shell would (an unclosed quote, substitution or here-document).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// Each effect, in the order the line runs them.
    pub effects: Vec<Effect>,
    /// Why the reader doubts its reading, if it does.
    pub doubt: Option<&'static str>,
}

/// One effect of a call: the effect command as the reader extracted it (its program and
/// arguments, wrappers and neighbours off), and where it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effect {
    /// Its words, each quoted as a shell would need (empty for an MCP tool: its input is the
    /// effect).
    pub text: String,
    /// The directory it runs in relative to the call's (or absolute), when a `cd` or git's
    /// `-C` moved it.
    pub dir: Option<String>,
    /// What of that place makes it another effect.
    pub place: Place,
}

/// What of the place an effect runs in is part of its identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Nothing: the command names what it changes (a URL, an image).
    Anywhere,
    /// The repository (any of its worktrees): `git push`, `gh pr create`.
    Repository,
    /// The directory within the repository's worktree: `npm publish`, `terraform apply`, a
    /// configured script.
    Directory,
}

impl Effect {
    /// The command as the ledger shows it: `cd <dir> && <text>` when the line moved it.
    pub fn shown(&self) -> String {
        match &self.dir {
            Some(dir) => format!("cd {} && {}", place::quoted(dir), self.text),
            None => self.text.clone(),
        }
    }
}

/// The commands a Bash command line runs, each as its words, wrappers taken off (`sudo`,
/// `env`, `timeout`, `xargs`, `bash -c '…'`, …): what the tests read the shell reader by, and
/// what the write guard recognises whole-checkout git commands by.
pub(crate) fn commands_run(command: &str) -> Vec<Vec<String>> {
    builtin::unwrap_all(&shell::simple_commands(command, 0).commands, 0)
}

/// A command with its whitespace collapsed: runs of spaces, tabs and newlines are one space,
/// none at either end. Two calls are the same when their normalized forms are equal.
pub fn normalized(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The key of an effect in the ledger: a 128-bit FNV-1a hash, in hex, of the tool, the place
/// that makes it another effect (see [`Place`]; empty for the project's own repository and
/// where the place does not count) and the effect command normalized (a Bash effect, or one
/// recorded by hand) or the tool's input (an MCP tool's, as [`mcp_input`] writes it), both
/// **redacted**: the key holds nothing a secret's guess could be checked against, and two
/// calls that differ only in a secret are the same effect.
pub fn key(call: Call<'_>, place: &str, input: &str) -> String {
    let mut input = input.to_owned();
    crate::redact::text(&mut input);
    let text = match call {
        Call::Bash(_) => format!("Bash\n{}", normalized(&input)),
        Call::Mcp(tool) => format!("{tool}\n{input}"),
    };
    let text = if place.is_empty() {
        text
    } else {
        format!("{place}\n{text}")
    };
    format!("{:032x}", fnv1a_128(text.as_bytes()))
}

/// The key a call had before effects were told apart within a line (the whole command line,
/// not redacted): looked up too, so that an effect journaled then still guards. Never stored.
pub fn legacy_key(call: Call<'_>, input: &str) -> String {
    let text = match call {
        Call::Bash(_) => format!("Bash\n{}", normalized(input)),
        Call::Mcp(tool) => format!("{tool}\n{input}"),
    };
    format!("{:032x}", fnv1a_128(text.as_bytes()))
}

/// An MCP tool's input as one line of JSON with its object keys sorted, so that the same call
/// has the same text whatever order the model wrote its fields in.
pub fn mcp_input(input: &serde_json::Value) -> String {
    fn sorted(value: &serde_json::Value) -> serde_json::Value {
        match value {
            serde_json::Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                keys.into_iter()
                    .map(|key| (key.clone(), sorted(&map[key])))
                    .collect::<serde_json::Map<_, _>>()
                    .into()
            }
            serde_json::Value::Array(items) => items.iter().map(sorted).collect(),
            other => other.clone(),
        }
    }
    sorted(input).to_string()
}

/// Whether the whole of `text` matches `glob` (an effect pattern's syntax: `*` any run of
/// characters, `/` too), for claims on paths.
pub(crate) fn glob_matches(glob: &str, text: &str) -> bool {
    Pattern::new(glob).matches(text)
}

pub(crate) fn fnv1a_128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    bytes.iter().fold(OFFSET, |hash, &byte| {
        (hash ^ u128::from(byte)).wrapping_mul(PRIME)
    })
}
