//! The hooks of effects: `PreToolUse`'s guard against a repeat of a recorded effect, and the
//! record of a Bash or MCP call that changed something (`PostToolUse`, `PostToolUseFailure`);
//! the rules are core's (`checkpoint_core::effects`).
//!
//! A call that no built-in rule and no configured pattern names is looked up only in the
//! workflows that have an effect index (guard) or declare patterns of their own (record), so
//! the hooks of an ordinary command touch no workflow's state.

use checkpoint_core::{
    EffectSource, WorkflowId,
    effects::{self, Call, Matcher, Observed, Refusal},
};
use miette::{IntoDiagnostic, Result, miette};
use serde_json::json;

use crate::{
    clients::claude::hooks::{ToolFailure, ToolInput, ToolResponse, ToolUse},
    commands::hook::Hook,
    env, output,
};

/// The prefix of an MCP tool's name.
const MCP_PREFIX: &str = "mcp__";

impl Hook {
    /// Refuses (headless) or asks about (interactive) a call that repeats a successful effect
    /// of an unfinished workflow, unless a repeat of it was allowed; says nothing otherwise.
    pub(super) fn guard_effect(&self, payload: &ToolUse) -> Result<()> {
        let Some((call, input)) = call_of(&payload.tool_name, &payload.tool_input) else {
            return Ok(());
        };
        let store = &self.ctx.store;
        let named = Matcher::new(&self.ctx.config.effects).is_effect(call);
        let ids = store.list().into_diagnostic()?;
        let key = effects::key(call, &input);
        for id in &ids {
            if !named && !store.has_effects_index(id) {
                continue;
            }
            let effect = match store.effect_guard(id, &key) {
                Ok(Some(effect)) => effect,
                Ok(None) => continue,
                Err(err) => {
                    output::warn(&format!(
                        "checkpoint hook PreToolUse: the effects of workflow `{id}` cannot be read, so a repeat is not checked there: {err}"
                    ));
                    continue;
                }
            };
            if !self.is_unfinished(id) {
                continue;
            }
            let entrypoint = std::env::var(env::CLAUDE_CODE_ENTRYPOINT).ok();
            let refusal = Refusal::for_entrypoint(entrypoint.as_deref());
            let reason = effects::reason(&effect, id, ids.len() > 1);
            return emit_refusal(refusal, &reason);
        }
        Ok(())
    }

    /// Records a successful call that is an effect on every unfinished workflow, on its phase
    /// in progress.
    pub(super) fn record_effect(&self, payload: &ToolUse) -> Result<()> {
        // An interrupted command may have done part of its work: it is recorded, as failed.
        let ok = payload.tool_response.interrupted != Some(true);
        let output = output_of(&payload.tool_response);
        self.record(
            &payload.tool_name,
            &payload.tool_input,
            payload.agent_id.as_deref(),
            output.as_deref(),
            ok,
        )
    }

    /// Records a failed call that is an effect, as failed: it guards nothing.
    pub(super) fn record_failed_effect(&self, payload: &ToolFailure) -> Result<()> {
        self.record(
            &payload.tool_name,
            &payload.tool_input,
            payload.agent_id.as_deref(),
            Some(&payload.error),
            false,
        )
    }

    fn record(
        &self,
        tool_name: &str,
        tool_input: &ToolInput,
        agent_id: Option<&str>,
        output: Option<&str>,
        ok: bool,
    ) -> Result<()> {
        let Some((call, input)) = call_of(tool_name, tool_input) else {
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
            if !Matcher::for_workflow(config, workflow).is_effect(call) {
                return Vec::new();
            }
            vec![effects::record(
                workflow,
                None,
                Observed {
                    call,
                    input: &input,
                    output,
                    ok,
                    session_id: Some(&session_id),
                    agent_id,
                    source: EffectSource::Hook,
                },
            )]
        })?;
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
fn call_of<'a>(tool_name: &'a str, input: &'a ToolInput) -> Option<(Call<'a>, String)> {
    if tool_name == "Bash" {
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

/// PreToolUse's decision, with the reason the model (and the person) reads.
fn emit_refusal(refusal: Refusal, reason: &str) -> Result<()> {
    let out = json!({ "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": refusal.decision(),
        "permissionDecisionReason": reason,
    } });
    output::emit(&format!("{out}\n")).map_err(|err| miette!("failed to answer the client: {err}"))
}
