//! The hooks of sub-agents that hold phases: the `Agent` dispatch (PreToolUse), the sub-agent's
//! start, activity, end and failures; the rules are core's (`checkpoint_core::subagent`).

use std::{cell::RefCell, path::PathBuf};

use checkpoint_core::{
    Transition, Workflow,
    subagent::{self, Agent, Dispatch},
};
use miette::{IntoDiagnostic, Result, miette};
use serde_json::{Value, json};

use crate::{commands::hook::Hook, output, probe::FsProbe};

/// The tool that dispatches a sub-agent (named `Agent` by 2.1.197 and later).
const AGENT_TOOL: &str = "Agent";

/// How the client words an API error it returns as a sub-agent's result.
const API_ERROR: &str = "API Error: ";

/// The largest sub-agent meta file read, in bytes (the client writes a few hundred).
const MAX_META_BYTES: u64 = 1024 * 1024;

impl Hook {
    /// A dispatch whose prompt names a phase (`checkpoint phase: <id>`) starts the phase if it
    /// is not, and records the sub-agent as its holder; when it cannot, says why, on stderr and
    /// to the model, and the dispatch goes on.
    pub(super) fn pre_tool_use(&self) -> Result<()> {
        if self.str("tool_name") != Some(AGENT_TOOL) {
            return Ok(());
        }
        let input = self.payload.get("tool_input").unwrap_or(&Value::Null);
        let Some(phase) = input
            .get("prompt")
            .and_then(Value::as_str)
            .and_then(subagent::phase_named)
        else {
            return Ok(());
        };
        let Some(tool_use_id) = self.str("tool_use_id") else {
            miette::bail!("the `Agent` call has no `tool_use_id`; phase `{phase}` not attributed");
        };
        let (active, _) = self.scan()?;
        let Some(target) = active
            .iter()
            .find(|workflow| workflow.phase(&phase).is_some())
        else {
            return self.refuse(&format!(
                "no unfinished workflow has a phase `{phase}`; the sub-agent's work is not recorded"
            ));
        };
        let dispatch = Dispatch {
            phase: &phase,
            tool_use_id,
            description: input.get("description").and_then(Value::as_str),
            session_id: self.str("session_id"),
        };
        let refusal = RefCell::new(None);
        let ctx = &self.ctx;
        ctx.store
            .update(&target.id, ctx.now, |workflow| {
                Ok(
                    match subagent::dispatched(
                        workflow,
                        dispatch,
                        ctx.config.max_in_progress,
                        ctx.now,
                    ) {
                        Ok(mut transitions) => {
                            checkpoint_core::lift_pause(workflow, &mut transitions);
                            transitions
                        }
                        Err(reason) => {
                            *refusal.borrow_mut() = Some(reason);
                            Vec::new()
                        }
                    },
                )
            })
            .map_err(|err| miette!("failed to update workflow `{}`: {err}", target.id))?;
        match refusal.into_inner() {
            Some(reason) => self.refuse(&reason),
            None => Ok(()),
        }
    }

    /// Warns on stderr, and tells the model, why a dispatch is not attributed.
    fn refuse(&self, reason: &str) -> Result<()> {
        output::warn(&format!("checkpoint hook PreToolUse: {reason}"));
        let out = json!({ "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "additionalContext": format!("checkpoint: {reason}."),
        } });
        output::emit(&format!("{out}\n")).into_diagnostic()
    }

    /// A sub-agent started: its holder learns its id (through the client's meta file, else by
    /// the order of dispatch).
    pub(super) fn subagent_start(&self) -> Result<()> {
        let agent_id = self.str("agent_id");
        let tool_use_id = agent_id.and_then(|id| self.meta_tool_use_id(id));
        let agent = Agent {
            agent_id,
            tool_use_id: tool_use_id.as_deref(),
        };
        self.update_unfinished(|workflow| subagent::seen(workflow, agent, self.ctx.now))?;
        Ok(())
    }

    /// A sub-agent stopped: its phase completes, or keeps its last message as the note.
    pub(super) fn subagent_stop(&self) -> Result<()> {
        let Some(agent_id) = self.str("agent_id") else {
            return Ok(());
        };
        let tool_use_id = self.meta_tool_use_id(agent_id);
        let agent = Agent {
            agent_id: Some(agent_id),
            tool_use_id: tool_use_id.as_deref(),
        };
        let last_message = self.str("last_assistant_message");
        self.end(agent, last_message)
    }

    /// A sub-agent's tool ran (its activity), or an `Agent` call returned (the sub-agent ended,
    /// unless it runs on in the background).
    pub(super) fn sub_agent_post_tool_use(&self) -> Result<()> {
        if self.str("tool_name") == Some(AGENT_TOOL) {
            let response = self.payload.get("tool_response").unwrap_or(&Value::Null);
            let agent = Agent {
                agent_id: response.get("agentId").and_then(Value::as_str),
                tool_use_id: self.str("tool_use_id"),
            };
            if response.get("status").and_then(Value::as_str) != Some("completed") {
                return self.seen(agent);
            }
            let last_message =
                response
                    .get("content")
                    .and_then(Value::as_array)
                    .and_then(|blocks| {
                        blocks
                            .iter()
                            .rev()
                            .find_map(|block| block.get("text").and_then(Value::as_str))
                    });
            // 2.1.197 returns a sub-agent's API error (its rate limit) as the call's result.
            if let Some(error) = last_message.filter(|text| text.starts_with(API_ERROR)) {
                self.update_unfinished(|workflow| subagent::failed(workflow, agent, error))?;
                return Ok(());
            }
            return self.end(agent, last_message);
        }
        match self.str("agent_id") {
            Some(agent_id) => self.seen(Agent {
                agent_id: Some(agent_id),
                tool_use_id: self.meta_tool_use_id(agent_id).as_deref(),
            }),
            None => Ok(()),
        }
    }

    /// A tool failed inside a sub-agent, or its `Agent` call failed: recorded on its phase.
    /// Returns whether the failure was a sub-agent's.
    pub(super) fn sub_agent_tool_failure(&self) -> Result<bool> {
        let tool = self.str("tool_name").unwrap_or("tool");
        let error = self.tool_error();
        if tool == AGENT_TOOL {
            let agent = Agent {
                agent_id: None,
                tool_use_id: self.str("tool_use_id"),
            };
            self.update_unfinished(|workflow| subagent::failed(workflow, agent, &error))?;
            return Ok(true);
        }
        let Some(agent_id) = self.str("agent_id") else {
            return Ok(false);
        };
        let tool_use_id = self.meta_tool_use_id(agent_id);
        let agent = Agent {
            agent_id: Some(agent_id),
            tool_use_id: tool_use_id.as_deref(),
        };
        self.update_unfinished(|workflow| {
            subagent::held_by(workflow, agent)
                .map(|phase| Transition::ToolFailure {
                    phase: phase.id.clone(),
                    tool: tool.to_owned(),
                    error: error.clone(),
                })
                .into_iter()
                .collect()
        })?;
        Ok(true)
    }

    /// A sub-agent's API failure (its own rate limit): its phase is marked, the workflow goes on.
    pub(super) fn sub_agent_failure(&self) -> Result<()> {
        let agent_id = self.str("agent_id");
        let tool_use_id = agent_id.and_then(|id| self.meta_tool_use_id(id));
        let agent = Agent {
            agent_id,
            tool_use_id: tool_use_id.as_deref(),
        };
        let error = self.str("error").unwrap_or("unknown");
        self.update_unfinished(|workflow| subagent::failed(workflow, agent, error))?;
        Ok(())
    }

    fn seen(&self, agent: Agent<'_>) -> Result<()> {
        self.update_unfinished(|workflow| subagent::seen(workflow, agent, self.ctx.now))?;
        Ok(())
    }

    fn end(&self, agent: Agent<'_>, last_message: Option<&str>) -> Result<()> {
        let probe = FsProbe::new(&self.ctx.project_root);
        self.update_unfinished(|workflow: &Workflow| {
            subagent::ended(workflow, agent, last_message, &probe)
        })?;
        Ok(())
    }

    /// The dispatching call of sub-agent `agent_id`, from the meta file the client keeps beside
    /// the session's transcript (`<session>/subagents/agent-<id>.meta.json`), where it exists.
    fn meta_tool_use_id(&self, agent_id: &str) -> Option<String> {
        if !agent_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return None;
        }
        let transcript = PathBuf::from(self.str("transcript_path")?);
        let session_dir = transcript.with_extension("");
        let meta = session_dir
            .join("subagents")
            .join(format!("agent-{agent_id}.meta.json"));
        // The client's file: a FIFO or a link to a device there must not hang the hook.
        let bytes = match checkpoint_core::read_foreign(&meta, MAX_META_BYTES) {
            Ok(bytes) => bytes?,
            Err(err) => {
                output::warn(&format!("{err}; the sub-agent is recognised without it"));
                return None;
            }
        };
        let meta: Value = serde_json::from_slice(&bytes).ok()?;
        meta.get("toolUseId")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }
}
