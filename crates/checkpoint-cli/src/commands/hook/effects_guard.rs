//! The hooks of effects: `PreToolUse`'s guard against a repeat of a recorded effect, and the
//! record of a Bash or MCP call that changed something (`PostToolUse`, `PostToolUseFailure`);
//! the rules are core's (`checkpoint_core::effects`).
//!
//! A call that no built-in rule and no configured pattern names is looked up only in the
//! workflows that have an effect index (guard) or declare patterns of their own (record), so
//! the hooks of an ordinary command touch no workflow's state.

use checkpoint_core::{
    EffectSource, WorkflowId,
    effects::{self, Call, Effect, Matcher, Observed, Refusal},
};
use miette::{IntoDiagnostic, Result, miette};

use crate::{
    clients::{
        self, Client,
        event::{Event, StartSource, Tool, ToolFailure, ToolInput, ToolResponse, ToolUse},
    },
    commands::hook::Hook,
    locate, output,
};

/// The prefix of an MCP tool's name.
const MCP_PREFIX: &str = "mcp__";

impl Hook {
    /// Refuses (headless) or asks about (interactive) a call that repeats a successful effect
    /// of an unfinished workflow, unless a repeat of it was allowed; says nothing otherwise.
    /// Each effect of the call is looked up on its own (`cd x && git push` repeats `git push`
    /// made in `x`), and so is the whole line as it was keyed before effects were told apart.
    pub(super) fn guard_effect(&self, client: Client, payload: &ToolUse) -> Result<()> {
        let Some((call, input)) = call_of(payload.tool, &payload.tool_name, &payload.tool_input)
        else {
            return Ok(());
        };
        let store = &self.ctx.store;
        let config = &self.ctx.config.effects;
        let found = Matcher::new(config).effects(call);
        if let Some(doubt) = found.doubt.filter(|_| !found.effects.is_empty()) {
            output::warn(&format!(
                "checkpoint hook PreToolUse: the command line has {doubt}, so it was read as raw text too; every effect found in it is guarded"
            ));
        }
        let ids = store.list().into_diagnostic()?;
        let legacy = effects::legacy_key(call, &input);
        // The client asked again about a call it let through already: not a repeat.
        let mut same_call = false;
        for id in &ids {
            if found.effects.is_empty() && !store.has_effects_index(id) {
                continue;
            }
            let own = store
                .declares_effect_patterns(id)
                .then(|| self.ctx.store.load(id).ok())
                .flatten()
                .map(|loaded| Matcher::for_workflow(config, &loaded.workflow).effects(call));
            let mut keys: Vec<String> = self
                .keyed(call, &input, &own.as_ref().unwrap_or(&found).effects)
                .into_iter()
                .map(|(_, _, key)| key)
                .collect();
            keys.push(legacy.clone());
            for key in &keys {
                let effect = match store.effect_guard(id, key) {
                    Ok(Some(effect)) => effect,
                    Ok(None) => continue,
                    Err(err) => {
                        output::warn(&format!(
                            "checkpoint hook PreToolUse: the effects of workflow `{id}` cannot be read, so a repeat is not checked there: {err}"
                        ));
                        break;
                    }
                };
                let effect = effect.aged(self.ctx.now, config.unknown_after());
                if effect.in_flight
                    && effect.call_id.is_some()
                    && effect.call_id == payload.tool_use_id
                {
                    same_call = true;
                    continue;
                }
                if !self.is_unfinished(id) {
                    break;
                }
                let refusal = clients::home(client).refusal();
                let reason = effects::reason(&effect, id, ids.len() > 1);
                return emit_refusal(client, refusal, &reason);
            }
        }
        if !same_call
            && (!found.effects.is_empty()
                || ids.iter().any(|id| store.declares_effect_patterns(id)))
        {
            self.journal_intents(call, &input, payload)?;
        }
        Ok(())
    }

    /// Journals the intent of each effect of a call let through, before it runs: until its
    /// outcome is recorded it guards like a done effect, and if none ever is (the client
    /// killed, the machine down) it stays an effect whose outcome is unknown.
    fn journal_intents(&self, call: Call<'_>, input: &str, payload: &ToolUse) -> Result<()> {
        let config = &self.ctx.config.effects;
        let session_id = self.envelope.session_id.clone();
        self.update_unfinished(|workflow| {
            let found = Matcher::for_workflow(config, workflow).effects(call);
            self.keyed(call, input, &found.effects)
                .into_iter()
                .map(|(effect, text, _)| {
                    let dir = locate::effect_dir(&self.ctx.cwd, effect.dir.as_deref());
                    let place = locate::effect_place(&self.ctx.project_root, &dir, effect.place);
                    effects::record_intent(
                        workflow,
                        Observed {
                            call,
                            input: &text,
                            dir: effect.dir.as_deref(),
                            place: &place,
                            output: None,
                            ok: false,
                            session_id: Some(&session_id),
                            agent_id: payload.agent_id.as_deref(),
                            call_id: payload.tool_use_id.as_deref(),
                            source: EffectSource::Hook,
                        },
                    )
                })
                .collect()
        })?;
        Ok(())
    }

    /// Each effect with the text its key is taken from (the effect command, or an MCP tool's
    /// input), and its key, in the place it runs (the directory the line moved it to, seen
    /// from the call's).
    fn keyed<'e>(
        &self,
        call: Call<'_>,
        input: &str,
        found: &'e [Effect],
    ) -> Vec<(&'e Effect, String, String)> {
        found
            .iter()
            .map(|effect| {
                let text = match call {
                    Call::Bash(_) => effect.text.clone(),
                    Call::Mcp(_) => input.to_owned(),
                };
                let dir = locate::effect_dir(&self.ctx.cwd, effect.dir.as_deref());
                let place = locate::effect_place(&self.ctx.project_root, &dir, effect.place);
                let key = effects::key(call, &place, &text);
                (effect, text, key)
            })
            .collect()
    }

    /// Records a successful call that is an effect on every unfinished workflow, on its phase
    /// in progress.
    pub(super) fn record_effect(&self, payload: &ToolUse) -> Result<()> {
        // An interrupted command may have done part of its work: it is recorded, as failed.
        // So may one that exited non-zero (a client that reports the exit code in a done call).
        let response = &payload.tool_response;
        let ok = response.succeeded();
        let output = output_of(response);
        self.record(
            payload.tool,
            &payload.tool_name,
            &payload.tool_input,
            (payload.agent_id.as_deref(), payload.tool_use_id.as_deref()),
            output.as_deref(),
            ok,
        )
    }

    /// Records a failed call that is an effect, as failed: it guards nothing.
    pub(super) fn record_failed_effect(&self, payload: &ToolFailure) -> Result<()> {
        self.record(
            payload.tool,
            &payload.tool_name,
            &payload.tool_input,
            (payload.agent_id.as_deref(), payload.tool_use_id.as_deref()),
            Some(&payload.error),
            false,
        )
    }

    fn record(
        &self,
        tool: Tool,
        tool_name: &str,
        tool_input: &ToolInput,
        (agent_id, call_id): (Option<&str>, Option<&str>),
        output: Option<&str>,
        ok: bool,
    ) -> Result<()> {
        let Some((call, input)) = call_of(tool, tool_name, tool_input) else {
            return Ok(());
        };
        let config = &self.ctx.config.effects;
        let store = &self.ctx.store;
        if !Matcher::new(config).is_effect(call) {
            let ids = store.list().into_diagnostic()?;
            if !ids.iter().any(|id| store.declares_effect_patterns(id)) {
                return Ok(());
            }
        }
        let session_id = self.envelope.session_id.clone();
        self.update_unfinished(|workflow| {
            let found = Matcher::for_workflow(config, workflow).effects(call);
            // Under the lock: the intents this call's outcomes settle.
            // (Read through the index: only the unsettled intents, not the whole ledger.)
            let unsettled = self
                .ctx
                .store
                .unsettled_effects(&workflow.id)
                .unwrap_or_default();
            let mut settled: Vec<u64> = Vec::new();
            self.keyed(call, &input, &found.effects)
                .into_iter()
                .map(|(effect, text, key)| {
                    // The intent of this very call, else the last of this session with its key.
                    let open = |recorded: &&effects::RecordedEffect| {
                        recorded.unknown
                            && recorded.key == key
                            && recorded.session_id.as_deref() == Some(session_id.as_str())
                            && !settled.contains(&recorded.number)
                    };
                    let intent = unsettled
                        .iter()
                        .rev()
                        .filter(open)
                        .find(|recorded| {
                            call_id.is_some() && recorded.call_id.as_deref() == call_id
                        })
                        .or_else(|| unsettled.iter().rev().find(open))
                        .map(|recorded| recorded.number);
                    settled.extend(intent);
                    let dir = locate::effect_dir(&self.ctx.cwd, effect.dir.as_deref());
                    let place = locate::effect_place(&self.ctx.project_root, &dir, effect.place);
                    let outcome = effects::record(
                        workflow,
                        None,
                        Observed {
                            call,
                            input: &text,
                            dir: effect.dir.as_deref(),
                            place: &place,
                            output,
                            ok,
                            session_id: Some(&session_id),
                            agent_id,
                            call_id,
                            source: EffectSource::Hook,
                        },
                    );
                    match intent {
                        Some(number) => effects::settling(outcome, number),
                        None => outcome,
                    }
                })
                .collect()
        })?;
        Ok(())
    }

    /// Journals, for each unfinished workflow, that the calls let through whose outcome has not
    /// come and that `ended` concerns can no longer report: their outcome is unknown from now
    /// on (they guard and are briefed as "may have happened"). A late outcome still settles
    /// one.
    pub(super) fn close_intents(&self, ended: Ended<'_>) -> Result<()> {
        let store = &self.ctx.store;
        let session = self.envelope.session_id.as_str();
        let concerned = |effect: &effects::RecordedEffect| ended.concerns(effect, session);
        for id in store.list().into_diagnostic()? {
            if !store.has_effects_index(&id)
                || !store
                    .in_flight_effects(&id)
                    .is_ok_and(|found| found.iter().any(concerned))
            {
                continue;
            }
            store
                .update(&id, self.ctx.now, |workflow| {
                    if workflow.status.is_finished() {
                        return Ok(Vec::new());
                    }
                    // Under the lock, read again: an outcome may have come meanwhile.
                    Ok(store
                        .in_flight_effects(&workflow.id)?
                        .iter()
                        .filter(|effect| concerned(effect))
                        .map(|effect| effects::closing(effect, ended.why()))
                        .collect())
                })
                .map_err(|err| {
                    miette!(
                        "failed to update workflow `{id}`: {}",
                        output::with_causes(&err)
                    )
                })?;
        }
        Ok(())
    }

    /// Whether the workflow is unfinished (one that cannot be loaded is not guarded, with a
    /// warning).
    fn is_unfinished(&self, id: &WorkflowId) -> bool {
        match self.ctx.store.load(id) {
            Ok(loaded) => !loaded.workflow.status.is_finished(),
            Err(err) => {
                output::warn(&format!(
                    "checkpoint hook PreToolUse: workflow `{id}` cannot be read, so a repeat is not checked there: {err}"
                ));
                false
            }
        }
    }
}

/// The call a tool makes, as the effect rules see it, and its input's text: a Bash command, or
/// an MCP tool's arguments; none for any other tool.
fn call_of<'a>(tool: Tool, tool_name: &'a str, input: &'a ToolInput) -> Option<(Call<'a>, String)> {
    if tool == Tool::Bash {
        let command = input.command.as_deref()?;
        return Some((Call::Bash(command), command.to_owned()));
    }
    tool_name
        .starts_with(MCP_PREFIX)
        .then(|| (Call::Mcp(tool_name), effects::mcp_input(&input.raw)))
}

/// What a call printed: a Bash command's stdout then its stderr (where `git push` writes), or
/// an MCP tool's result.
fn output_of(response: &ToolResponse) -> Option<String> {
    if let Some(text) = &response.text {
        return Some(text.clone());
    }
    let parts: Vec<&str> = [response.stdout.as_deref(), response.stderr.as_deref()]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// The decision of the hook before a tool call, in `client`'s form, with the reason the model
/// (and the person) reads.
pub(super) fn emit_refusal(client: Client, refusal: Refusal, reason: &str) -> Result<()> {
    let out = clients::home(client).refuse(refusal, reason);
    super::answer(&out).map_err(|err| miette!("failed to answer the client: {err}"))
}

/// What `event` ended, if it ends some calls' chance to report.
pub(super) fn ended_by(event: &Event) -> Option<Ended<'_>> {
    Some(match event {
        Event::SessionStart(payload) => Ended::Start {
            compacted: payload.source == StartSource::Compacted,
        },
        Event::TurnEnd(payload) => Ended::Turn {
            agent: payload.agent_id.as_deref(),
            why: "its turn ended (Stop)",
        },
        Event::SubagentStop(payload) => Ended::Turn {
            agent: payload.agent_id.as_deref(),
            why: "its sub-agent stopped (SubagentStop)",
        },
        Event::TurnFailed(payload) => Ended::Turn {
            agent: payload.agent_id.as_deref(),
            why: "its turn failed (StopFailure)",
        },
        Event::BeforeCompaction(_)
        | Event::ToolStart(_)
        | Event::ToolDone(_)
        | Event::ToolFailed(_)
        | Event::SubagentStart(_) => return None,
    })
}

/// What ended, so that the calls it concerns can no longer report.
#[derive(Debug, Clone, Copy)]
pub(super) enum Ended<'a> {
    /// The turn of the main agent (`agent` none) or of a sub-agent ended or failed: the calls
    /// that agent made in this session.
    Turn {
        agent: Option<&'a str>,
        why: &'static str,
    },
    /// A session started: every call of any earlier session, except, after a compaction,
    /// those of this session's sub-agents (which run on in the background).
    Start { compacted: bool },
}

impl Ended<'_> {
    fn concerns(&self, effect: &effects::RecordedEffect, session: &str) -> bool {
        let own = effect.session_id.as_deref() == Some(session);
        match self {
            Self::Turn { agent, .. } => own && effect.agent_id.as_deref() == *agent,
            Self::Start { compacted } => !(*compacted && own && effect.agent_id.is_some()),
        }
    }

    fn why(&self) -> &'static str {
        match self {
            Self::Turn { why, .. } => why,
            Self::Start { compacted: true } => "the session was compacted (SessionStart)",
            Self::Start { compacted: false } => "a later session started (SessionStart)",
        }
    }
}
