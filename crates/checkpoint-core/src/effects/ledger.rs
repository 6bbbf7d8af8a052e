//! The ledger: the effects of a workflow, numbered from 1 in journal order, and its rules: what
//! a record holds, which effect guards a call, which effects a resume must mention, and what
//! `effects allow <n>` may let through.
//!
//! An allow is consumed when the repeat it lets through is recorded (its `PostToolUse`): the
//! new effect guards the call again. A repeat that fails keeps the allow.

use chrono::{DateTime, Utc};

use crate::{
    effects::{Call, MAX_OUTPUT_CHARS, key},
    error::{Error, Result},
    id::PhaseId,
    journal::Entry,
    model::Workflow,
    redact,
    transition::{EffectSource, Transition},
};

/// The most characters of a command or an input kept in an effect's record.
const MAX_COMMAND_CHARS: usize = 4000;

/// One effect as the journal recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedEffect {
    /// Its number in the workflow, from 1, in journal order.
    pub number: u64,
    /// Its journal entry's sequence number.
    pub seq: u64,
    /// When it was recorded.
    pub at: DateTime<Utc>,
    /// The phase in progress then, if any.
    pub phase: Option<PhaseId>,
    /// That phase's attempt.
    pub attempt: Option<u32>,
    /// `Bash`, or the MCP tool's name; none for one recorded by hand.
    pub tool: Option<String>,
    /// The command or the tool's input (redacted).
    pub command: String,
    /// An excerpt of its output (redacted).
    pub output: Option<String>,
    /// Whether it succeeded (a failed one guards nothing).
    pub ok: bool,
    /// The session that ran it.
    pub session_id: Option<String>,
    /// Who recorded it.
    pub source: EffectSource,
    /// Its key (see [`key`]).
    pub key: String,
    /// Whether a repeat of it may run once (`effects allow`), not yet used.
    pub allowed: bool,
    /// Whether its outcome is unknown: an intent journaled before the call ran, that no
    /// outcome settled (a call cut off, or still running). It guards like a done effect.
    pub unknown: bool,
    /// Whether the call of an unknown effect may still report: its turn, its sub-agent and its
    /// session have not ended, no later session started, and it is younger than the
    /// configured age (see [`RecordedEffect::aged`]). Such a call is running, not lost.
    pub in_flight: bool,
    /// The client's id of the call (`tool_use_id`), when it gave one.
    pub call_id: Option<String>,
    /// The sub-agent that made the call, if one did.
    pub agent_id: Option<String>,
}

impl RecordedEffect {
    /// The effect of a journal entry, numbered `number`; none for another transition.
    pub(crate) fn from_entry(entry: &Entry, number: u64) -> Option<Self> {
        let Transition::Effect {
            phase,
            attempt,
            tool,
            command,
            output,
            ok,
            session_id,
            source,
            key,
            intent,
            settles,
            call_id,
            agent_id,
        } = &entry.transition
        else {
            return None;
        };
        Some(Self {
            number,
            seq: entry.seq,
            at: entry.at,
            phase: phase.clone(),
            attempt: *attempt,
            tool: tool.clone(),
            command: command.clone(),
            output: output.clone(),
            ok: *ok,
            session_id: session_id.clone(),
            source: *source,
            key: key.clone(),
            allowed: false,
            unknown: *intent,
            in_flight: *intent && settles.is_none(),
            call_id: call_id.clone(),
            agent_id: agent_id.clone(),
        })
    }

    /// An effect in flight for longer than `after` is taken as unknown: its call, if it were
    /// still running, would have reported by now.
    pub fn aged(mut self, now: DateTime<Utc>, after: chrono::Duration) -> Self {
        if self.in_flight && now.signed_duration_since(self.at) > after {
            self.in_flight = false;
        }
        self
    }

    /// The intent number an outcome entry settles, if it is one.
    pub fn settles(entry: &Entry) -> Option<u64> {
        match &entry.transition {
            Transition::Effect { settles, .. } => *settles,
            _ => None,
        }
    }
}

/// What a caller knows of a call that changed something, for [`record`].
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    /// The call (for a record by hand, `Call::Bash` with the text).
    pub call: Call<'a>,
    /// The effect command (as [`super::Effect`] holds it), the MCP tool's input (as
    /// [`super::mcp_input`] writes it), or what was done.
    pub input: &'a str,
    /// The directory a `cd` moved the effect to, shown before its command.
    pub dir: Option<&'a str>,
    /// The place that makes it another effect (see [`super::key`]).
    pub place: &'a str,
    /// What it printed or returned.
    pub output: Option<&'a str>,
    /// Whether it succeeded.
    pub ok: bool,
    /// The session.
    pub session_id: Option<&'a str>,
    /// The sub-agent that made the call, if one did (its phase is the one it holds).
    pub agent_id: Option<&'a str>,
    /// The client's id of the call (`tool_use_id`), when it gave one.
    pub call_id: Option<&'a str>,
    /// Who records it.
    pub source: EffectSource,
}

/// The `effect` transition for `observed` on `workflow`: on `phase` when given, else on the
/// phase in progress (the one the sub-agent that made the call holds, else the first), else on
/// the workflow; its command and output redacted and cut, its key taken from the redacted call.
pub fn record(workflow: &Workflow, phase: Option<&PhaseId>, observed: Observed<'_>) -> Transition {
    let in_progress = || {
        workflow
            .phases
            .iter()
            .filter(|phase| phase.status == crate::model::PhaseStatus::InProgress)
    };
    let phase = match phase {
        Some(phase) => workflow.phase(phase),
        None => observed
            .agent_id
            .and_then(|agent| {
                in_progress().find(|phase| {
                    phase
                        .holder
                        .as_ref()
                        .is_some_and(|holder| holder.agent_id.as_deref() == Some(agent))
                })
            })
            .or_else(|| in_progress().next()),
    };
    let tool = match (observed.source, observed.call) {
        (EffectSource::Manual | EffectSource::Mcp, _) => None,
        (EffectSource::Hook, Call::Bash(_)) => Some("Bash".to_owned()),
        (EffectSource::Hook, Call::Mcp(tool)) => Some(tool.to_owned()),
    };
    Transition::Effect {
        phase: phase.map(|phase| phase.id.clone()),
        attempt: phase.map(|phase| phase.attempts),
        tool,
        command: redact::shortened(
            &match observed.dir {
                Some(dir) => format!("cd {} && {}", super::place::quoted(dir), observed.input),
                None => observed.input.to_owned(),
            },
            MAX_COMMAND_CHARS - 1,
        ),
        output: observed.output.map(excerpt),
        ok: observed.ok,
        session_id: observed.session_id.map(str::to_owned),
        source: observed.source,
        key: key(observed.call, observed.place, observed.input),
        intent: false,
        settles: None,
        call_id: observed.call_id.map(str::to_owned),
        agent_id: observed.agent_id.map(str::to_owned),
    }
}

/// The intent of `observed` (journaled before the call runs): its record with no outcome yet.
pub fn record_intent(workflow: &Workflow, observed: Observed<'_>) -> Transition {
    let mut transition = record(workflow, None, observed);
    if let Transition::Effect {
        intent, ok, output, ..
    } = &mut transition
    {
        *intent = true;
        *ok = false;
        *output = None;
    }
    transition
}

/// The outcome `transition` (an `effect` record) made the outcome of intent `number`.
pub fn settling(mut transition: Transition, number: u64) -> Transition {
    if let Transition::Effect { settles, .. } = &mut transition {
        *settles = Some(number);
    }
    transition
}

/// The entry that says the call of intent `effect` can no longer report (`why`: its turn
/// ended, its session ended, a later session started): its outcome is unknown from now on.
pub fn closing(effect: &RecordedEffect, why: &str) -> Transition {
    Transition::Effect {
        phase: effect.phase.clone(),
        attempt: effect.attempt,
        tool: effect.tool.clone(),
        command: effect.command.clone(),
        output: Some(format!("no outcome came before {why}")),
        ok: false,
        session_id: effect.session_id.clone(),
        source: EffectSource::Hook,
        key: effect.key.clone(),
        intent: true,
        settles: Some(effect.number),
        call_id: effect.call_id.clone(),
        agent_id: effect.agent_id.clone(),
    }
}

/// An output's excerpt: redacted, then cut to [`MAX_OUTPUT_CHARS`] characters at most (on a
/// character boundary, `…` included), its surrounding whitespace trimmed.
pub fn excerpt(output: &str) -> String {
    redact::shortened(output.trim(), MAX_OUTPUT_CHARS - 1)
}

/// The effects of a workflow, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ledger {
    /// Every effect, numbered from 1.
    pub effects: Vec<RecordedEffect>,
}

impl Ledger {
    /// The ledger of a journal's entries, in order: effects numbered, allows applied.
    pub fn from_entries<'e>(entries: impl IntoIterator<Item = &'e Entry>) -> Self {
        let mut ledger = Self::default();
        for entry in entries {
            ledger.push(entry);
        }
        ledger
    }

    /// Adds one journal entry (an `effect` or an `effect_allow`; others change nothing).
    pub fn push(&mut self, entry: &Entry) {
        if let Some(number) = RecordedEffect::settles(entry)
            && let Some(index) = number
                .checked_sub(1)
                .filter(|index| (*index as usize) < self.effects.len())
            && let Some(mut outcome) = RecordedEffect::from_entry(entry, number)
        {
            if outcome.unknown {
                // Its call can no longer report: the intent stays, no longer in flight.
                self.effects[index as usize].in_flight = false;
                return;
            }
            // The outcome of an intent takes its place, under its number.
            outcome.unknown = false;
            if outcome.ok {
                for earlier in &mut self.effects {
                    if earlier.key == outcome.key {
                        earlier.allowed = false;
                    }
                }
            }
            self.effects[index as usize] = outcome;
            return;
        }
        if let Some(effect) = RecordedEffect::from_entry(entry, self.effects.len() as u64 + 1) {
            if effect.ok {
                // A recorded repeat uses the allow up.
                for earlier in &mut self.effects {
                    if earlier.key == effect.key {
                        earlier.allowed = false;
                    }
                }
            }
            self.effects.push(effect);
        } else if let Transition::EffectAllow { effect, .. } = &entry.transition {
            let Some(key) = self.get(*effect).map(|allowed| allowed.key.clone()) else {
                return;
            };
            if let Some(guard) = self.guard(&key).map(|guard| guard.number) {
                self.effects[guard as usize - 1].allowed = true;
            }
        }
    }

    /// Effect number `number`.
    pub fn get(&self, number: u64) -> Option<&RecordedEffect> {
        number
            .checked_sub(1)
            .and_then(|index| self.effects.get(index as usize))
    }

    /// The successful effect with this key that guards a repeat (the last one), unless a
    /// repeat was allowed since.
    pub fn guard(&self, key: &str) -> Option<&RecordedEffect> {
        if let Some(unknown) = self
            .effects
            .iter()
            .rev()
            .find(|effect| effect.unknown && effect.key == key)
        {
            return Some(unknown);
        }
        let last = self
            .effects
            .iter()
            .rev()
            .find(|effect| effect.ok && effect.key == key)?;
        (!last.allowed).then_some(last)
    }

    /// The effects whose calls may still report, of `session` (and, with `agent`, of that
    /// sub-agent only; without, of the main agent only unless `all_agents`).
    pub fn in_flight<'l>(
        &'l self,
        session: &'l str,
        agent: Option<&'l str>,
        all_agents: bool,
    ) -> impl Iterator<Item = &'l RecordedEffect> {
        self.effects.iter().filter(move |effect| {
            effect.in_flight
                && effect.session_id.as_deref() == Some(session)
                && (all_agents || effect.agent_id.as_deref() == agent)
        })
    }

    /// The effects of one phase.
    pub fn of_phase<'l>(&'l self, phase: &'l PhaseId) -> impl Iterator<Item = &'l RecordedEffect> {
        self.effects
            .iter()
            .filter(move |effect| effect.phase.as_ref() == Some(phase))
    }
}

/// The successful effects a resume must mention: those of phases not done (and those recorded
/// on no phase), in order.
pub(crate) fn outstanding<'l>(workflow: &Workflow, ledger: &'l Ledger) -> Vec<&'l RecordedEffect> {
    ledger
        .effects
        .iter()
        .filter(|effect| effect.ok || effect.unknown)
        .filter(|effect| match &effect.phase {
            Some(phase) => workflow
                .phase(phase)
                .is_none_or(|phase| !phase.status.is_done()),
            None => true,
        })
        .collect()
}

/// The `effect_allow` transition that lets one repeat of effect `number` through, or why not.
pub fn allow(ledger: &Ledger, number: u64, by: Option<String>) -> Result<Transition> {
    let Some(effect) = ledger.get(number) else {
        let numbers: Vec<String> = ledger
            .effects
            .iter()
            .map(|effect| effect.number.to_string())
            .collect();
        return Err(Error::transition(
            format!(
                "there is no effect {number}: the workflow has {} effects{}",
                ledger.effects.len(),
                crate::suggest::did_you_mean(
                    &number.to_string(),
                    numbers.iter().map(String::as_str)
                )
            ),
            "list them with `checkpoint effects --all`",
        ));
    };
    if effect.unknown {
        return Err(Error::transition(
            format!("the outcome of effect {number} is unknown: it may have happened"),
            format!(
                "check, then say which it was: `checkpoint effects resolve {number} --done` or `--not-done`"
            ),
        ));
    }
    if !effect.ok {
        return Err(Error::transition(
            format!("effect {number} failed, so it guards nothing: a repeat runs as it is"),
            "nothing to allow",
        ));
    }
    if ledger.guard(&effect.key).is_none() {
        return Err(Error::transition(
            format!("a repeat of effect {number} is already allowed once and not yet used"),
            "run the repeat; it is recorded as a new effect, which guards again",
        ));
    }
    Ok(Transition::EffectAllow { effect: number, by })
}

/// The outcome a person gives effect `number`, whose outcome is unknown: an `effect` entry that
/// settles it, done (it guards) or not (it guards nothing); or why not.
pub fn resolve(ledger: &Ledger, number: u64, done: bool, by: Option<&str>) -> Result<Transition> {
    let Some(effect) = ledger.get(number) else {
        return Err(Error::transition(
            format!(
                "there is no effect {number}: the workflow has {} effects",
                ledger.effects.len()
            ),
            "list them with `checkpoint effects --all`",
        ));
    };
    if !effect.unknown {
        return Err(Error::transition(
            format!("the outcome of effect {number} is known already"),
            "only an effect whose outcome is unknown is resolved",
        ));
    }
    let said = if done { "done" } else { "not done" };
    Ok(Transition::Effect {
        phase: effect.phase.clone(),
        attempt: effect.attempt,
        tool: effect.tool.clone(),
        command: effect.command.clone(),
        output: Some(match by {
            Some(by) => format!("resolved by {by}: {said}"),
            None => format!("resolved: {said}"),
        }),
        ok: done,
        session_id: effect.session_id.clone(),
        source: EffectSource::Manual,
        key: effect.key.clone(),
        intent: false,
        settles: Some(number),
        call_id: None,
        agent_id: None,
    })
}

/// One line of the store's effect index: an effect's number, key and outcome, or an allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IndexEvent {
    Effect {
        number: u64,
        seq: u64,
        offset: u64,
        ok: bool,
        key: String,
        /// An intent with no outcome yet.
        intent: bool,
        /// The intent this outcome settles (it takes that number).
        settles: bool,
    },
    Allow {
        number: u64,
        offset: u64,
    },
}

/// The effect that guards a key, as [`guard_of`] finds it in the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IndexGuard {
    pub(crate) number: u64,
    /// The journal offset of its entry (an intent's, for an unknown one).
    pub(crate) offset: u64,
    /// An unknown one whose call can no longer report.
    pub(crate) closed: bool,
}

/// The rule of [`Ledger::guard`] over index events: the effect that guards `key`, if any.
pub(crate) fn guard_of(events: &[IndexEvent], key: &str) -> Option<IndexGuard> {
    // The events may start past effect 1 (a lookup that skipped the index's own).
    let mut keys: std::collections::HashMap<u64, &str> = std::collections::HashMap::new();
    let mut guard: Option<IndexGuard> = None;
    let mut allowed = false;
    // Intents of this key not yet settled, by number.
    let mut unknown: Vec<IndexGuard> = Vec::new();
    for event in events {
        match event {
            IndexEvent::Effect {
                number,
                offset,
                ok,
                key: effect_key,
                intent,
                settles,
                ..
            } => {
                keys.insert(*number, effect_key);
                if effect_key != key {
                    continue;
                }
                let found = IndexGuard {
                    number: *number,
                    offset: *offset,
                    closed: false,
                };
                match (intent, settles) {
                    // Its call can no longer report: it stays unknown.
                    (true, true) => unknown
                        .iter_mut()
                        .filter(|pending| pending.number == *number)
                        .for_each(|pending| pending.closed = true),
                    (true, false) => unknown.push(found),
                    (false, settles) => {
                        if *settles {
                            unknown.retain(|pending| pending.number != *number);
                        }
                        if *ok {
                            guard = Some(found);
                            allowed = false;
                        }
                    }
                }
            }
            IndexEvent::Allow { number, .. } => {
                if keys.get(number) == Some(&key) && guard.is_some() {
                    allowed = true;
                }
            }
        }
    }
    unknown.last().copied().or(guard.filter(|_| !allowed))
}
