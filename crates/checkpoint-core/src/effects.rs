//! Effects: calls that change something outside the project (a push, a pull request, a
//! publish, a POST), recorded once so that a resumed workflow never repeats them unasked.
//!
//! What is an effect: the built-in list (`builtin.rs`) over the commands a Bash command line
//! runs (`shell.rs`), then the patterns of `config.toml` and of the plan's phases
//! (`pattern.rs`). The record is the journal's `effect` entry; the guard is the question "did
//! this exact call succeed in this workflow and was it not allowed once since?" (`ledger.rs`),
//! answered on the hot path through the store's index (`store/effects.rs`).

mod builtin;
mod guard;
mod ledger;
mod pattern;
mod shell;

#[cfg(test)]
mod tests;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub(crate) use crate::effects::guard::time;
pub use crate::effects::guard::{Refusal, reason};
pub use crate::effects::ledger::{
    Guard, Ledger, Observed, RecordedEffect, allow, excerpt, outstanding, record,
};
pub(crate) use crate::effects::ledger::{IndexEvent, guard_of};
use crate::{effects::pattern::Pattern, model::Workflow};

/// The most characters of an effect's output kept (after redaction), `…` included.
pub const MAX_OUTPUT_CHARS: usize = 1000;

/// The `[effects]` table of `config.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct EffectsConfig {
    /// Whether the built-in list (`git push`, `gh pr create`, `npm publish`, …) applies.
    pub builtin: bool,
    /// Patterns added to (or, with a leading `!`, removed from) what counts as an effect: globs
    /// over a Bash command, or over an MCP tool's name (`mcp__<server>__<tool>`).
    pub commands: Vec<String>,
}

impl Default for EffectsConfig {
    fn default() -> Self {
        Self {
            builtin: true,
            commands: Vec::new(),
        }
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

    /// Whether the matcher has any pattern at all (else only the built-in list can match).
    pub fn has_patterns(&self) -> bool {
        !self.patterns.is_empty()
    }

    /// Whether `call` is an effect.
    ///
    /// A Bash command line is one when one of the commands it runs is (the last pattern that
    /// matches that command's words decides, else the built-in list), or when the last pattern
    /// that matches the whole line adds (a removal applies to single commands only, so that
    /// `!git push origin scratch*` leaves the `npm publish` of `git push origin scratch && npm
    /// publish` an effect).
    pub fn is_effect(&self, call: Call<'_>) -> bool {
        match call {
            Call::Mcp(tool) => self
                .last_match(|pattern| pattern.mcp && pattern.matches(tool))
                .unwrap_or(false),
            Call::Bash(command) => {
                let whole = normalized(command);
                if self.last_match(|pattern| !pattern.mcp && pattern.matches(&whole)) == Some(true)
                {
                    return true;
                }
                commands_run(command).iter().any(|words| {
                    let text = words.join(" ");
                    self.last_match(|pattern| !pattern.mcp && pattern.matches(&text))
                        .unwrap_or_else(|| self.builtin && builtin::is_builtin_effect(words))
                })
            }
        }
    }

    fn last_match(&self, matches: impl Fn(&Pattern) -> bool) -> Option<bool> {
        self.patterns
            .iter()
            .rev()
            .find(|pattern| matches(pattern))
            .map(|pattern| !pattern.removes)
    }
}

/// The commands a Bash command line runs, each as its words, wrappers taken off (`sudo`,
/// `env`, `timeout`, `xargs`, `bash -c '…'`, …).
pub fn commands_run(command: &str) -> Vec<Vec<String>> {
    shell::simple_commands(command, 0)
        .iter()
        .flat_map(|words| builtin::unwrapped(words, 0))
        .collect()
}

/// A command with its whitespace collapsed: runs of spaces, tabs and newlines are one space,
/// none at either end. Two calls are the same when their normalized forms are equal.
pub fn normalized(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The key of a call in the ledger: a 128-bit FNV-1a hash, in hex, of the tool and the
/// normalized command (a Bash call, or one recorded by hand) or the tool's input (an MCP
/// tool's, as [`mcp_input`] writes it). The key, not the command, is compared, so a command
/// holding a secret is guarded though its journaled form is redacted.
pub fn key(call: Call<'_>, input: &str) -> String {
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

pub(crate) fn fnv1a_128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    bytes.iter().fold(OFFSET, |hash, &byte| {
        (hash ^ u128::from(byte)).wrapping_mul(PRIME)
    })
}
