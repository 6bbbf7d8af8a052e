//! The hooks of sub-agents that hold phases: the `Agent` dispatch (PreToolUse), the sub-agent's
//! start, activity, end and failures; the rules are core's (`checkpoint_core::subagent`).

use std::{cell::RefCell, path::PathBuf};

use checkpoint_core::{
    Transition, Workflow,
    subagent::{self, Agent, Dispatch},
};
use miette::{Result, miette};
use serde::Deserialize;
use serde_json::json;

use crate::{
    clients::event::{Stop, SubagentStart, Tool, ToolFailure, ToolUse},
    commands::hook::{Hook, tool_error},
    output,
    probe::FsProbe,
};

/// How the client words an API error it returns as a sub-agent's result.
const API_ERROR: &str = "API Error: ";

/// The largest sub-agent meta file read, in bytes (the client writes a few hundred).
const MAX_META_BYTES: u64 = 1024 * 1024;

impl Hook {
    /// A dispatch whose prompt names a phase (`checkpoint phase: <id>`) starts the phase if it
    /// is not, and records the sub-agent as its holder; when it cannot, says why, on stderr and
    /// to the model, and the dispatch goes on.
    pub(super) fn pre_tool_use(&self, payload: &ToolUse) -> Result<()> {
        if payload.tool() != Tool::Agent {
            return Ok(());
        }
        let input = &payload.tool_input;
        let Some(phase) = input.prompt.as_deref().and_then(subagent::phase_named) else {
            return Ok(());
        };
        let Some(tool_use_id) = payload.tool_use_id.as_deref() else {
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
            description: input.description.as_deref(),
            session_id: Some(&self.envelope.session_id),
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
                        // The phase's start lifts a pause: the store journals its `Unpause`.
                        Ok(transitions) => transitions,
                        Err(reason) => {
                            *refusal.borrow_mut() = Some(reason);
                            Vec::new()
                        }
                    },
                )
            })
            .map_err(|err| {
                miette!(
                    "failed to update workflow `{}`: {}",
                    target.id,
                    output::with_causes(&err)
                )
            })?;
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
        super::answer(&out)
    }

    /// A sub-agent started: its holder learns its id (through the client's meta file, else by
    /// the order of dispatch).
    pub(super) fn subagent_start(&self, payload: &SubagentStart) -> Result<()> {
        let tool_use_id = self.meta_tool_use_id(&payload.agent_id);
        let agent = Agent {
            agent_id: Some(&payload.agent_id),
            tool_use_id: tool_use_id.as_deref(),
        };
        self.update_unfinished(|workflow| subagent::seen(workflow, agent, self.ctx.now))?;
        Ok(())
    }

    /// A sub-agent stopped: its phase completes, or keeps its last message as the note.
    pub(super) fn subagent_stop(&self, payload: &Stop) -> Result<()> {
        let Some(agent_id) = payload.agent_id.as_deref() else {
            return Ok(());
        };
        let tool_use_id = self.meta_tool_use_id(agent_id);
        let agent = Agent {
            agent_id: Some(agent_id),
            tool_use_id: tool_use_id.as_deref(),
        };
        self.end(agent, payload.last_assistant_message.as_deref())
    }

    /// A sub-agent's tool ran (its activity), or an `Agent` call returned (the sub-agent ended,
    /// unless it runs on in the background).
    pub(super) fn sub_agent_post_tool_use(&self, payload: &ToolUse) -> Result<()> {
        if payload.tool() == Tool::Agent {
            let response = &payload.tool_response;
            let agent = Agent {
                agent_id: response.agent_id.as_deref(),
                tool_use_id: payload.tool_use_id.as_deref(),
            };
            if response.status.as_deref() != Some("completed") {
                return self.seen(agent);
            }
            let last_message = response
                .content
                .iter()
                .rev()
                .find_map(|block| block.text.as_deref());
            // 2.1.197 returns a sub-agent's API error (its rate limit) as the call's result.
            if let Some(error) = last_message.filter(|text| text.starts_with(API_ERROR)) {
                self.update_unfinished(|workflow| subagent::failed(workflow, agent, error))?;
                return Ok(());
            }
            return self.end(agent, last_message);
        }
        match payload.agent_id.as_deref() {
            Some(agent_id) => self.seen(Agent {
                agent_id: Some(agent_id),
                tool_use_id: self.meta_tool_use_id(agent_id).as_deref(),
            }),
            None => Ok(()),
        }
    }

    /// A tool failed inside a sub-agent, or its `Agent` call failed: recorded on its phase.
    /// Returns whether the failure was a sub-agent's.
    pub(super) fn sub_agent_tool_failure(&self, payload: &ToolFailure) -> Result<bool> {
        let tool = payload.tool_name.as_str();
        let error = tool_error(payload);
        if payload.tool() == Tool::Agent {
            let agent = Agent {
                agent_id: None,
                tool_use_id: payload.tool_use_id.as_deref(),
            };
            self.update_unfinished(|workflow| subagent::failed(workflow, agent, &error))?;
            return Ok(true);
        }
        let Some(agent_id) = payload.agent_id.as_deref() else {
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
    pub(super) fn sub_agent_failure(&self, agent_id: &str, error: &str) -> Result<()> {
        let tool_use_id = self.meta_tool_use_id(agent_id);
        let agent = Agent {
            agent_id: Some(agent_id),
            tool_use_id: tool_use_id.as_deref(),
        };
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
        let transcript = PathBuf::from(self.envelope.transcript_path.as_deref()?);
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
        let meta: AgentMeta = serde_json::from_slice(&bytes).ok()?;
        meta.tool_use_id
    }
}

/// The fields of the client's sub-agent meta file that the hooks read.
#[derive(Deserialize)]
struct AgentMeta {
    #[serde(rename = "toolUseId")]
    tool_use_id: Option<String>,
}
