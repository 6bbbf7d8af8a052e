//! `checkpoint hook [--client <client>] <event>`: the hooks that keep workflow state current,
//! reading the hook's JSON payload on stdin; each client's payload becomes a canonical event
//! (`clients::event`), and the handlers here act on those alone.
//!
//! The contract: a hook never breaks a session. Any internal error becomes a warning on stderr
//! and exit code 0; only a `Stop` hook blocks, and only through the documented
//! `{"decision": "block"}` output when `strict_stop` is set.

mod effects_guard;
mod files;
mod subagent;
mod workflow_run;
mod writes;

use std::{
    path::Path,
    sync::atomic::{AtomicBool, Ordering},
    time::Duration,
};

use checkpoint_core::{
    Config, PhaseId, PhaseStatus, SnapshotReason, Transition, Workflow, WorkflowId, observe,
    resume::Briefing,
};
use chrono::{DateTime, Utc};
use clap::Args;
use miette::{IntoDiagnostic, Result, miette};
use serde_json::json;

use crate::{
    clients::{
        self, Client, ClientHome,
        event::{
            Compaction, Envelope, Event, Hooked, SessionStart, StartSource, Stop, Tool,
            ToolFailure, ToolUse, TurnFailure,
        },
    },
    ctx::{Ctx, Location, Settings},
    output::{self, Format},
    probe::FsProbe,
    stdin, unfinished,
};

/// The longest a hook waits for another process's lock.
const HOOK_LOCK_TIMEOUT: Duration = Duration::from_secs(2);
/// The largest payload a hook reads from stdin.
const MAX_PAYLOAD_BYTES: u64 = 16 * 1024 * 1024;

/// Arguments of `checkpoint hook`.
#[derive(Debug, Args)]
pub(crate) struct HookArgs {
    /// The client that runs the hook, whose payloads and event names it reads: `claude`,
    /// `codex` or `gemini` (another is a warning: a hook never fails)
    #[arg(long, default_value = "claude")]
    pub client: String,
    /// The hook event, by the client's name for it; Claude Code's: `SessionStart`,
    /// `PreCompact`, `PreToolUse`, `PostToolUse`, `PostToolUseFailure`, `Stop`,
    /// `SubagentStart`, `SubagentStop` or `StopFailure`
    pub event: String,
}

/// Runs `client`'s hook for `event` (as given on the command line); never fails: an error
/// becomes a warning on stderr, here and nowhere else.
pub(crate) fn hook(client: &str, event: &str, dir_override: Option<&Path>, now: DateTime<Utc>) {
    let parsed = Client::named(client).ok_or_else(|| {
        miette!("unknown client `{client}` (`claude`, `codex` or `gemini`); nothing recorded")
    });
    let always_answers = parsed
        .as_ref()
        .is_ok_and(|client| clients::home(*client).always_answers());
    if let Err(err) = parsed.and_then(|client| handle(client, event, dir_override, now)) {
        // The whole chain, so that the cause ("No space left on device") is named.
        let mut text = err.to_string();
        for cause in err.chain().skip(1) {
            let cause = cause.to_string();
            if !text.contains(&cause) {
                text.push_str(": ");
                text.push_str(&cause);
            }
        }
        output::warn(&format!("checkpoint hook {event}: {text}"));
    }
    // A client that shows any other output to the user always gets one JSON object.
    if always_answers && !ANSWERED.load(Ordering::Relaxed) {
        let _ = output::emit("{}\n");
    }
}

/// Whether this hook has printed its answer.
static ANSWERED: AtomicBool = AtomicBool::new(false);

/// Prints the hook's answer, a JSON object.
pub(super) fn answer(out: &serde_json::Value) -> Result<()> {
    ANSWERED.store(true, Ordering::Relaxed);
    output::emit(&format!("{out}\n")).into_diagnostic()
}

fn handle(
    client: Client,
    event: &str,
    dir_override: Option<&Path>,
    now: DateTime<Utc>,
) -> Result<()> {
    let home = clients::home(client);
    if home.ends_session(event) {
        return writes::session_end(dir_override, now);
    }
    let Some(Hooked { envelope, event }) = read_event(home, event)? else {
        return Ok(());
    };
    let cwd = match envelope.cwd.as_str() {
        "" => std::env::current_dir()
            .map_err(|err| miette!("failed to read the current directory: {err}"))?,
        cwd => cwd.into(),
    };
    let location = Location::find(cwd, dir_override);
    let launches_run = matches!(&event, Event::ToolDone(use_) if use_.tool() == Tool::Workflow);
    if !location.root.is_dir() && !launches_run {
        // No workflow of ours; a new session may still find another system's unfinished state.
        if matches!(event, Event::SessionStart(_)) {
            return seed_context(&location.project_root, &Config::default(), now);
        }
        return Ok(());
    }
    let hook = Hook {
        ctx: Ctx::new(location, settings(now))?,
        envelope,
    };
    // A call that can no longer report leaves an outcome unknown, before anything is briefed.
    if let Some(ended) = effects_guard::ended_by(&event)
        && let Err(err) = hook.close_intents(ended)
    {
        output::warn(&format!(
            "checkpoint hook {event}: the calls it ended are not marked unknown yet: {err}"
        ));
    }
    let handled = match &event {
        Event::SessionStart(payload) => hook.session_start(payload),
        Event::BeforeCompaction(payload) => hook.pre_compact(payload),
        Event::ToolStart(payload) => {
            // The guard answers in each client's own form.
            hook.guard_effect(client, payload)?;
            hook.workflow_agent_at_work(payload);
            hook.pre_tool_use(payload)
        }
        Event::ToolDone(payload) => hook.post_tool_use(payload),
        Event::ToolFailed(payload) => hook.post_tool_use_failure(payload),
        Event::TurnEnd(payload) => hook.stop(&event, payload),
        Event::SubagentStart(payload) if home.is_workflow_agent(payload.agent_type.as_deref()) => {
            hook.workflow_agent_start(payload)
        }
        Event::SubagentStart(payload) => hook.subagent_start(payload),
        Event::SubagentStop(payload) if home.is_workflow_agent(payload.agent_type.as_deref()) => {
            hook.workflow_agent_stop(&event, payload)
        }
        Event::SubagentStop(payload) => {
            hook.subagent_stop(payload)?;
            hook.stop(&event, payload)
        }
        Event::TurnFailed(payload) if home.is_workflow_agent(payload.agent_type.as_deref()) => {
            hook.workflow_agent_failure(payload)
        }
        Event::TurnFailed(payload) => hook.stop_failure(payload),
    };
    hook.writes(client, &event);
    handled
}

/// Whether `phase` is held by the sub-agent whose call `payload` is, still at work.
fn held_by_writer(workflow: &Workflow, phase: &PhaseId, payload: &ToolUse) -> bool {
    workflow
        .phases
        .iter()
        .find(|candidate| candidate.id == *phase)
        .and_then(|phase| phase.holder.as_ref())
        .is_some_and(|holder| {
            holder.ended_at.is_none()
                && holder.agent_id.is_some()
                && holder.agent_id == payload.agent_id
        })
}

/// A hook's settings: no workflow named, plain text, the short lock wait.
fn settings(now: DateTime<Utc>) -> Settings {
    Settings {
        workflow: None,
        format: Format::Human,
        color: false,
        now,
        lock_timeout: HOOK_LOCK_TIMEOUT,
        on_lock_wait: None,
    }
}

/// Reads the client's payload of `event` on stdin as a canonical event, checking the fields
/// every payload of the event carries, so that a malformed one changes nothing; `None` for an
/// event that is accepted and does nothing.
fn read_event(home: &dyn ClientHome, event: &str) -> Result<Option<Hooked>> {
    home.hooked(event, &read_stdin)
        .map_err(|message| miette!("{message}"))
}

/// The payload's bytes on stdin.
fn read_stdin() -> Result<Vec<u8>, String> {
    // The client may keep stdin open after the payload: act on a complete one at once, and
    // give up at a deadline well inside the hook's timeout.
    match stdin::read_payload(std::io::stdin(), MAX_PAYLOAD_BYTES, stdin::PAYLOAD_DEADLINE)? {
        stdin::Payload::Complete(bytes) | stdin::Payload::Ended(bytes) => Ok(bytes),
        stdin::Payload::Cut(bytes) => {
            output::warn(&format!(
                "checkpoint hook: the payload was over {} MiB; its texts over {} KiB (a tool's output) were cut, the rest is recorded",
                MAX_PAYLOAD_BYTES / (1024 * 1024),
                stdin::STRING_KEPT / 1024
            ));
            Ok(bytes)
        }
    }
}

/// A workflow that cannot be loaded, and why.
type Unreadable = (WorkflowId, String);

struct Hook {
    ctx: Ctx,
    envelope: Envelope,
}

impl Hook {
    fn session_id(&self) -> Option<String> {
        Some(self.envelope.session_id.clone())
    }

    /// The unfinished workflows, the one `checkpoint use` chose first, then most recently
    /// active first, and the unreadable ones with why.
    fn scan(&self) -> Result<(Vec<Workflow>, Vec<Unreadable>)> {
        let found = unfinished::in_store(&self.ctx.store)?;
        let mut active: Vec<Workflow> = found
            .unfinished
            .into_iter()
            .map(|(_, loaded)| loaded.workflow)
            .collect();
        let used = self.ctx.store.used().ok().flatten();
        active.sort_by_key(|workflow| {
            (
                used.as_ref() != Some(&workflow.id),
                std::cmp::Reverse(checkpoint_core::choice::active_at(workflow)),
            )
        });
        let unreadable = found
            .unreadable
            .into_iter()
            .map(|(id, err)| {
                // The help names the repair (a bad journal line: `checkpoint validate --repair`).
                let help = miette::Diagnostic::help(&err).map(|help| format!(" ({help})"));
                (id, format!("{err}{}", help.unwrap_or_default()))
            })
            .collect();
        Ok((active, unreadable))
    }

    /// Applies the transitions `decide` returns to every unfinished workflow, deciding under
    /// each one's lock (one load each); returns the workflows as they are afterwards.
    fn update_unfinished(
        &self,
        decide: impl Fn(&Workflow) -> Vec<Transition>,
    ) -> Result<Vec<Workflow>> {
        self.update_unfinished_catching_up(None, decide)
    }

    /// [`Hook::update_unfinished`], bringing the runs among them up to date as `runs` says in
    /// the same update (one load and at most one write of each).
    fn update_unfinished_catching_up(
        &self,
        runs: Option<&workflow_run::WorkflowRunCatchUp<'_>>,
        decide: impl Fn(&Workflow) -> Vec<Transition>,
    ) -> Result<Vec<Workflow>> {
        let store = &self.ctx.store;
        let mut updated = Vec::new();
        for id in store.list()? {
            let mut caught_up = None;
            let loaded = store
                .update(&id, self.ctx.now, |workflow| {
                    if workflow.status.is_finished() {
                        return Ok(Vec::new());
                    }
                    let mut transitions = match runs {
                        Some(runs) => self.workflow_run_transitions(workflow, runs, &mut caught_up),
                        None => Vec::new(),
                    };
                    transitions.extend(decide(workflow));
                    // Work lifts a pause: the store journals its `Unpause`.
                    Ok(transitions)
                })
                .map_err(|err| {
                    miette!(
                        "failed to update workflow `{id}`: {}",
                        output::with_causes(&err)
                    )
                })?;
            if let Some(caught_up) = caught_up {
                self.workflow_run_caught_up(&loaded.workflow, caught_up);
            }
            if !loaded.workflow.status.is_finished() {
                updated.push(loaded.workflow);
            }
        }
        Ok(updated)
    }

    /// Re-injects where the work stands, so a new, resumed or compacted session picks it up.
    fn session_start(&self, payload: &SessionStart) -> Result<()> {
        let ctx = &self.ctx;
        // One scan of the store: the runs among its workflows are brought up to date in place.
        let (mut active, unreadable) = self.scan()?;
        self.refresh_runs_in(&mut active);
        // What changed while no session watched, kept before anything else runs.
        let changed = self.snapshot_files(
            &active.iter().take(1).collect::<Vec<_>>(),
            SnapshotReason::SessionStart,
            None,
        );
        let mut context = String::new();
        if let Some((first, others)) = active.split_first() {
            let probe = FsProbe::new(&ctx.project_root);
            // A new session runs none of the sub-agents of an earlier one; a compacted session
            // still runs its own.
            let first = if payload.source == StartSource::Compacted {
                std::borrow::Cow::Borrowed(first)
            } else {
                checkpoint_core::subagent::as_seen_by_new_session(first)
            };
            // A bad line anywhere in its journal is said, with the command that repairs it.
            let damage: Vec<_> = ctx.journal_damage(&first.id, &[]).into_iter().collect();
            let briefing = ctx.brief(&first, &damage, &probe);
            context.push_str("A `checkpoint` workflow is unfinished in this project. Resume it from here; do not start over.\n\n");
            context.push_str(&briefing.prompt_within(ctx.config.prompt_budget.min(MAIN_BRIEFING)));
            context.push_str(&files::changed_context(&changed));
            if !others.is_empty() {
                let ids: Vec<String> = others
                    .iter()
                    .map(|workflow| format!("`{}`", workflow.id))
                    .collect();
                context.push_str(&format!(
                    "\nOther unfinished workflows: {} (see `checkpoint resume --workflow <id>`).\n",
                    ids.join(", ")
                ));
            }
        }
        if payload.source != StartSource::Compacted {
            let left = CONTEXT_LIMIT.saturating_sub(context.len() + 500);
            context.push_str(&self.runs_briefing(&active, left));
        }
        if !unreadable.is_empty() {
            context.push_str("\nThese `checkpoint` workflows cannot be read, so their saved work is not shown; tell the user and do not start them over:\n");
            for (id, error) in &unreadable {
                context.push_str(&format!("- `{id}`: {error}\n"));
            }
        }
        if context.is_empty() {
            return seed_context(&ctx.project_root, &ctx.config, ctx.now);
        }
        emit_context(&context)
    }

    /// Records the compaction, so the `compact` SessionStart finds the position saved.
    fn pre_compact(&self, payload: &Compaction) -> Result<()> {
        let trigger = payload.trigger.clone();
        let updated = self.update_unfinished(|_| {
            vec![Transition::Compaction {
                trigger: trigger.clone(),
                session_id: self.session_id(),
            }]
        })?;
        self.snapshot_files(
            &updated.iter().collect::<Vec<_>>(),
            SnapshotReason::PreCompact,
            None,
        );
        Ok(())
    }

    /// Completes a phase whose declared outputs now all exist; records commit SHAs after
    /// `git commit`; adds written files to the context summary.
    fn post_tool_use(&self, payload: &ToolUse) -> Result<()> {
        if payload.tool() == Tool::Workflow {
            return self.workflow_launched(payload);
        }
        self.record_effect(payload)?;
        self.sub_agent_post_tool_use(payload)?;
        let input = &payload.tool_input;
        let written: Vec<String> = match payload.tool() {
            // One rule for every client's paths, as for `checkpoint files`: a path outside the
            // project (`/etc/passwd`, `../../x`, a link out) is never recorded.
            Tool::FileEdit => input
                .written
                .iter()
                .filter(|path| {
                    crate::inside::outside(&self.ctx.project_root, &self.ctx.project_root, path)
                        .is_none()
                })
                .map(|path| self.relative(path))
                .collect(),
            Tool::Agent | Tool::Bash | Tool::FileRead | Tool::Workflow | Tool::Other => Vec::new(),
        };
        let committed = payload.tool() == Tool::Bash
            && input.command.as_deref().is_some_and(observe::is_git_commit)
            && payload.tool_response.succeeded();
        if written.is_empty() && !committed {
            return Ok(());
        }
        let project_root = &self.ctx.project_root;
        let sha = if committed {
            crate::git::read(project_root, &["rev-parse", "--verify", "--quiet", "HEAD"])
        } else {
            None
        };
        let probe = FsProbe::new(project_root);
        let completed = std::cell::RefCell::new(Vec::new());
        self.update_unfinished(|workflow| {
            let mut transitions = Vec::new();
            transitions.extend(observe::files_written(
                workflow,
                written.iter().map(String::as_str),
                &probe,
            ));
            if let Some(sha) = &sha {
                transitions.extend(observe::commit_made(workflow, sha));
            }
            // A sub-agent's write of the outputs of the phase it holds completes that phase at
            // its end (it may write them again; its claim holds them until then).
            transitions.retain(|transition| match transition {
                Transition::PhaseComplete { phase, .. } => {
                    !held_by_writer(workflow, phase, payload)
                }
                _ => true,
            });
            for transition in &transitions {
                if let Transition::PhaseComplete { phase, .. } = transition {
                    completed
                        .borrow_mut()
                        .push((workflow.id.clone(), phase.clone()));
                }
            }
            transitions
        })?;
        let completed = completed.into_inner();
        for (id, phase) in &completed {
            self.snapshot_completed(id, phase);
        }
        // The push runs detached, after the hook has answered: only its start is in the budget.
        if self.ctx.config.sync.on_complete {
            let mut ids: Vec<&WorkflowId> = completed.iter().map(|(id, _)| id).collect();
            ids.dedup();
            for id in ids {
                crate::services::remote_sync::push_in_background(&self.ctx, id);
            }
        }
        Ok(())
    }

    /// Records a failed tool call on the phase in progress.
    fn post_tool_use_failure(&self, payload: &ToolFailure) -> Result<()> {
        self.record_failed_effect(payload)?;
        if self.sub_agent_tool_failure(payload)? {
            return Ok(());
        }
        let tool = payload.tool_name.clone();
        let error = tool_error(payload);
        self.update_unfinished(|workflow| {
            workflow
                .phases
                .iter()
                .find(|phase| phase.status == PhaseStatus::InProgress)
                .map(|phase| Transition::ToolFailure {
                    phase: phase.id.clone(),
                    tool: tool.clone(),
                    error: error.clone(),
                })
                .into_iter()
                .collect()
        })?;
        Ok(())
    }

    /// Records a heartbeat; with `strict_stop`, blocks a stop while a phase in progress has no
    /// recent progress note.
    fn stop(&self, event: &Event, payload: &Stop) -> Result<()> {
        // A turn's end brings every run up to date, in the update of its heartbeat.
        let runs = matches!(event, Event::TurnEnd(_)).then(workflow_run::WorkflowRunCatchUp::all);
        self.stop_catching_up(event, payload, runs.as_ref())
    }

    /// [`Hook::stop`], bringing the runs up to date as `runs` says in the same updates.
    fn stop_catching_up(
        &self,
        event: &Event,
        payload: &Stop,
        runs: Option<&workflow_run::WorkflowRunCatchUp<'_>>,
    ) -> Result<()> {
        let mut block = None;
        let updated = self.update_unfinished_catching_up(runs, |_| {
            vec![Transition::Heartbeat {
                source: event.name().to_owned(),
                session_id: self.session_id(),
            }]
        })?;
        let reason = match event {
            Event::SubagentStop(_) => SnapshotReason::SubagentStop,
            _ => SnapshotReason::TurnEnd,
        };
        self.snapshot_files(
            &updated.iter().collect::<Vec<_>>(),
            reason,
            payload.agent_id.as_deref(),
        );
        for workflow in updated {
            let already_blocked = payload.stop_hook_active.unwrap_or(false);
            if matches!(event, Event::TurnEnd(_)) && !already_blocked && block.is_none() {
                block = observe::stop_blocked(&workflow, &self.ctx.config, self.ctx.now);
            }
        }
        if let Some(reason) = block {
            let out = json!({ "decision": "block", "reason": reason });
            answer(&out)?;
        }
        Ok(())
    }

    /// Pauses the unfinished workflows after an API failure such as a rate limit; a sub-agent's
    /// failure only marks its phase.
    fn stop_failure(&self, payload: &TurnFailure) -> Result<()> {
        if let Some(agent_id) = &payload.agent_id {
            return self.sub_agent_failure(agent_id, &payload.error);
        }
        let error = payload.error.clone();
        self.update_unfinished(|_| vec![observe::api_failed(&error)])?;
        Ok(())
    }

    /// A path relative to the project root where it is inside it.
    fn relative(&self, path: &str) -> String {
        let path = Path::new(path);
        let absolute = if path.is_absolute() {
            path.to_owned()
        } else {
            self.ctx.project_root.join(path)
        };
        match absolute.strip_prefix(&self.ctx.project_root) {
            Ok(relative) => relative.to_string_lossy().into_owned(),
            Err(_) => absolute.to_string_lossy().into_owned(),
        }
    }
}

/// The most a hook's context holds, in bytes (so at most as many characters): Claude Code moves
/// hook output over 10,000 characters to a file and shows the model a 2,000-character preview.
pub(super) const CONTEXT_LIMIT: usize = 9_000;

/// The most the unfinished workflow's own briefing takes of the SessionStart context.
const MAIN_BRIEFING: usize = 6_000;

/// `text` cut at a line's end to at most `limit` bytes, the cut said with the command that
/// prints it whole; the instructions, which come first, are kept.
pub(super) fn within_limit(text: &str, limit: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= limit {
        return text.into();
    }
    let note = "\n[… cut to stay within the client's limit for hook output: `checkpoint resume --dry-run` prints the whole briefing, `checkpoint resume --dry-run --workflow <id>` another workflow's.]\n";
    let mut end = limit.saturating_sub(note.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let end = text[..end].rfind('\n').map_or(end, |at| at + 1);
    format!("{}{note}", &text[..end]).into()
}

/// A failed tool call's error, redacted, then cut to core's bound.
pub(super) fn tool_error(payload: &ToolFailure) -> String {
    checkpoint_core::redact::failure_text(&payload.error)
}

/// Prints SessionStart's `additionalContext`.
fn emit_context(context: &str) -> Result<()> {
    let context = within_limit(context, CONTEXT_LIMIT);
    let out = json!({ "hookSpecificOutput": { "hookEventName": "SessionStart", "additionalContext": context } });
    answer(&out)
}

/// Re-injects an unfinished workflow of one of the five systems `checkpoint` replaces, read
/// only, so their users keep their place when they switch; prints nothing when there is none.
fn seed_context(project_root: &Path, config: &Config, now: DateTime<Utc>) -> Result<()> {
    let found = unfinished::in_seeds(project_root, &[], now).next();
    let Some((found, workflow)) = found else {
        return Ok(());
    };
    let path = found
        .path
        .strip_prefix(project_root)
        .unwrap_or(&found.path)
        .display()
        .to_string();
    let briefing = Briefing::new(&workflow, &[], &FsProbe::new(project_root), config, now);
    let mut context = format!(
        "This project has an unfinished workflow in {}'s state file `{path}`. `checkpoint` reads it without changing it; to record further progress with `checkpoint`, import it first: `checkpoint import {path}`.\n\n",
        found.format.name()
    );
    context.push_str(&briefing.prompt());
    emit_context(&context)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A context over the limit is cut at a line's end, within the limit, its start (the
    /// instructions) kept and the command that prints it whole said; one within it is as is.
    #[test]
    fn a_context_over_the_limit_is_cut_with_the_command_that_prints_it_whole() {
        for lines in [10, 1_000, 100_000] {
            let text: String =
                std::iter::once("Resume it from here; do not start over.\n".to_owned())
                    .chain(
                        (0..lines).map(|n| {
                            format!("- agent {n}: done; result: é✓ {}\n", "x".repeat(n % 90))
                        }),
                    )
                    .collect();
            let cut = within_limit(&text, CONTEXT_LIMIT);
            assert!(cut.len() <= CONTEXT_LIMIT, "{lines}: {}", cut.len());
            assert!(cut.starts_with("Resume it from here"));
            if text.len() > CONTEXT_LIMIT {
                assert!(cut.contains("`checkpoint resume --dry-run` prints the whole briefing"));
                let kept = cut.split("\n[…").next().unwrap();
                assert!(text.starts_with(kept) && kept.ends_with('\n'), "{lines}");
            } else {
                assert_eq!(cut, text);
            }
        }
    }
}
