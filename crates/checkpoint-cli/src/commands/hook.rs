//! `checkpoint hook <event>`: Claude Code hooks that keep workflow state current, reading the
//! hook's JSON payload on stdin.
//!
//! The contract: a hook never breaks a session. Any internal error becomes a warning on stderr
//! and exit code 0; only a `Stop` hook blocks, and only through Claude Code's documented
//! `{"decision": "block"}` output when `strict_stop` is set.

use std::{
    io::Read,
    path::{Path, PathBuf},
    time::Duration,
};

use checkpoint_core::{
    Config, PhaseStatus, Transition, Workflow, WorkflowId,
    resume::{self, PlanOptions},
    seeds,
    store::{Store, StoreOptions},
};
use chrono::{DateTime, Utc};
use clap::Args;
use serde_json::{Value, json};

use crate::{ctx, output, probe::FsProbe};

/// The longest a hook waits for another process's lock.
const HOOK_LOCK_TIMEOUT: Duration = Duration::from_secs(2);
/// The largest payload a hook reads from stdin.
const MAX_PAYLOAD_BYTES: u64 = 16 * 1024 * 1024;

/// Arguments of `checkpoint hook`.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The hook event: `SessionStart`, `PreCompact`, `PostToolUse`, `PostToolUseFailure`, `Stop`,
    /// `SubagentStop` or `StopFailure`
    pub event: String,
}

/// Runs a hook; never fails.
pub(crate) fn run(args: &HookArgs, dir_override: Option<&Path>, now: DateTime<Utc>) {
    if let Err(message) = handle(args, dir_override, now) {
        output::warn(&format!("checkpoint hook {}: {message}", args.event));
    }
}

/// The events this command handles; `SessionEnd` is accepted and does nothing.
const EVENTS: &[&str] = &[
    "SessionStart",
    "PreCompact",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SubagentStop",
    "StopFailure",
    "SessionEnd",
];

fn handle(args: &HookArgs, dir_override: Option<&Path>, now: DateTime<Utc>) -> Result<(), String> {
    if !EVENTS.contains(&args.event.as_str()) {
        return Err(format!(
            "unknown hook event `{}`; nothing recorded",
            args.event
        ));
    }
    if args.event == "SessionEnd" {
        // Claude Code cuts SessionEnd short and skips it after any hook timeout, so nothing
        // depends on it; the plugin declares it because a StopFailure hook in `-p` mode runs
        // only when some SessionEnd hook exists (measured with 2.1.197). The payload is read so
        // that the client never writes into a closed pipe.
        let _ = std::io::copy(
            &mut std::io::stdin().take(MAX_PAYLOAD_BYTES),
            &mut std::io::sink(),
        );
        return Ok(());
    }
    let mut input = String::new();
    std::io::stdin()
        .take(MAX_PAYLOAD_BYTES)
        .read_to_string(&mut input)
        .map_err(|err| format!("failed to read the payload on stdin: {err}"))?;
    if input.trim().is_empty() {
        return Err("no payload on stdin; nothing recorded".into());
    }
    let payload: Value = serde_json::from_str(&input)
        .map_err(|err| format!("the payload on stdin is not JSON ({err}); nothing recorded"))?;
    if !payload.is_object() {
        return Err("the payload on stdin is not a JSON object; nothing recorded".into());
    }
    check_payload(&args.event, &payload)?;
    let cwd = match payload.get("cwd").and_then(Value::as_str) {
        Some(cwd) if !cwd.is_empty() => PathBuf::from(cwd),
        _ => std::env::current_dir()
            .map_err(|err| format!("failed to read the current directory: {err}"))?,
    };
    let project_root = ctx::project_root(&cwd);
    let root = match dir_override {
        Some(dir) if dir.is_absolute() => dir.to_owned(),
        Some(dir) => cwd.join(dir),
        None => project_root.join(".claude").join("checkpoints"),
    };
    if !root.is_dir() {
        // No workflow of ours; a new session may still find another system's unfinished state.
        if args.event == "SessionStart" {
            return seed_context(&project_root, &Config::default(), now);
        }
        return Ok(());
    }
    let config = ctx::load_config(&root).map_err(|err| format!("{err}"))?;
    let store = Store::new(
        &root,
        StoreOptions {
            lock_timeout: HOOK_LOCK_TIMEOUT,
            on_lock_wait: None,
            failpoint: ctx::test_failpoint().map_err(|err| err.to_string())?,
        },
    );
    let hook = Hook {
        store,
        config,
        project_root,
        payload,
        now,
    };
    match args.event.as_str() {
        "SessionStart" => hook.session_start(),
        "PreCompact" => hook.pre_compact(),
        "PostToolUse" => hook.post_tool_use(),
        "PostToolUseFailure" => hook.post_tool_use_failure(),
        "Stop" | "SubagentStop" => hook.stop(&args.event),
        "StopFailure" => hook.stop_failure(),
        _ => Ok(()),
    }
}

/// A workflow that cannot be loaded, and why.
type Unreadable = (WorkflowId, String);

struct Hook {
    store: Store,
    config: Config,
    project_root: PathBuf,
    payload: Value,
    now: DateTime<Utc>,
}

impl Hook {
    fn str(&self, key: &str) -> Option<&str> {
        self.payload.get(key).and_then(Value::as_str)
    }

    fn session_id(&self) -> Option<String> {
        self.str("session_id").map(str::to_owned)
    }

    /// The unfinished workflows, most recently active first, and the unreadable ones with why.
    fn scan(&self) -> Result<(Vec<Workflow>, Vec<Unreadable>), String> {
        let mut active = Vec::new();
        let mut unreadable = Vec::new();
        for id in self.store.list().map_err(|err| err.to_string())? {
            match self.store.load(&id) {
                Ok(loaded) if !loaded.workflow.status.is_finished() => active.push(loaded.workflow),
                Ok(_) => {}
                Err(err) => {
                    output::warn(&format!("skipping workflow `{id}`: {err}"));
                    unreadable.push((id, err.to_string()));
                }
            }
        }
        active.sort_by_key(|workflow| {
            std::cmp::Reverse(
                workflow
                    .last_activity
                    .as_ref()
                    .map_or(workflow.updated_at, |activity| {
                        activity.at.max(workflow.updated_at)
                    }),
            )
        });
        Ok((active, unreadable))
    }

    /// Applies the transitions `decide` returns to every unfinished workflow, deciding under
    /// each one's lock (one load each); returns the workflows as they are afterwards.
    fn update_unfinished(
        &self,
        decide: impl Fn(&Workflow) -> Vec<Transition>,
    ) -> Result<Vec<Workflow>, String> {
        let mut updated = Vec::new();
        for id in self.store.list().map_err(|err| err.to_string())? {
            let loaded = self
                .store
                .update(&id, self.now, |workflow| {
                    Ok(if workflow.status.is_finished() {
                        Vec::new()
                    } else {
                        decide(workflow)
                    })
                })
                .map_err(|err| format!("failed to update workflow `{id}`: {err}"))?;
            if !loaded.workflow.status.is_finished() {
                updated.push(loaded.workflow);
            }
        }
        Ok(updated)
    }

    /// Re-injects where the work stands, so a new, resumed or compacted session picks it up.
    fn session_start(&self) -> Result<(), String> {
        let (active, unreadable) = self.scan()?;
        let mut context = String::new();
        if let Some((first, others)) = active.split_first() {
            let probe = FsProbe::new(&self.project_root);
            let findings = resume::validate(first, &[], &probe, &self.config, self.now);
            let plan = resume::plan(
                first,
                findings,
                &probe,
                &PlanOptions {
                    config: self.config.clone(),
                    now: self.now,
                },
            );
            context.push_str("A `checkpoint` workflow is unfinished in this project. Resume it from here; do not start over.\n\n");
            context.push_str(&resume::render_prompt(
                &plan,
                self.now,
                self.config.prompt_budget,
            ));
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
        if !unreadable.is_empty() {
            context.push_str("\nThese `checkpoint` workflows cannot be read, so their saved work is not shown; tell the user and do not start them over:\n");
            for (id, error) in &unreadable {
                context.push_str(&format!("- `{id}`: {error}\n"));
            }
        }
        if context.is_empty() {
            return seed_context(&self.project_root, &self.config, self.now);
        }
        emit_context(&context)
    }

    /// Records the compaction, so the `compact` SessionStart finds the position saved.
    fn pre_compact(&self) -> Result<(), String> {
        let trigger = self.str("trigger").unwrap_or("unknown").to_owned();
        self.update_unfinished(|_| {
            vec![Transition::Compaction {
                trigger: trigger.clone(),
                session_id: self.session_id(),
            }]
        })?;
        Ok(())
    }

    /// Completes a phase whose declared outputs now all exist; records commit SHAs after
    /// `git commit`; adds written files to the context summary.
    fn post_tool_use(&self) -> Result<(), String> {
        let tool = self.str("tool_name").unwrap_or_default();
        let input = self
            .payload
            .get("tool_input")
            .cloned()
            .unwrap_or(Value::Null);
        let written = match tool {
            "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => input
                .get("file_path")
                .or_else(|| input.get("notebook_path"))
                .and_then(Value::as_str)
                .map(|path| self.relative(path)),
            _ => None,
        };
        let committed = tool == "Bash"
            && input
                .get("command")
                .and_then(Value::as_str)
                .is_some_and(is_git_commit)
            && !self.tool_failed();
        if written.is_none() && !committed {
            return Ok(());
        }
        let sha = if committed {
            crate::git::read(
                &self.project_root,
                &["rev-parse", "--verify", "--quiet", "HEAD"],
            )
        } else {
            None
        };
        let root = &self.project_root;
        self.update_unfinished(|workflow| {
            let in_progress = workflow
                .phases
                .iter()
                .any(|phase| phase.status == PhaseStatus::InProgress);
            if !in_progress && sha.is_none() {
                return Vec::new();
            }
            let mut transitions = Vec::new();
            if let Some(path) = &written {
                if !workflow.context.file_paths.contains(path) {
                    transitions.push(Transition::FilePath { path: path.clone() });
                }
                for phase in workflow.phases.iter().filter(|phase| {
                    phase.status == PhaseStatus::InProgress && phase.outputs.contains(path)
                }) {
                    let done = phase.outputs.iter().all(|output| {
                        std::fs::metadata(root.join(output))
                            .is_ok_and(|meta| meta.len() > 0 || meta.is_dir())
                    });
                    let tasks_done = phase
                        .tasks
                        .iter()
                        .all(|task| task.status == checkpoint_core::TaskStatus::Done);
                    if done && tasks_done && workflow.dependencies_done(phase) {
                        transitions.push(Transition::PhaseComplete {
                            phase: phase.id.clone(),
                            artifacts: phase.outputs.clone(),
                            commit_sha: None,
                            force: false,
                        });
                    }
                }
            }
            if let Some(sha) = &sha {
                let target = workflow
                    .phases
                    .iter()
                    .find(|phase| phase.status == PhaseStatus::InProgress)
                    .or_else(|| {
                        workflow
                            .phases
                            .iter()
                            .filter(|phase| phase.status.is_done() && phase.commit_sha.is_none())
                            .max_by_key(|phase| phase.completed_at)
                    });
                if let Some(phase) = target.filter(|phase| phase.commit_sha.as_deref() != Some(sha))
                {
                    transitions.push(Transition::PhaseCommit {
                        phase: phase.id.clone(),
                        sha: sha.clone(),
                    });
                }
            }
            transitions
        })?;
        Ok(())
    }

    /// Records a failed tool call on the phase in progress.
    fn post_tool_use_failure(&self) -> Result<(), String> {
        let tool = self.str("tool_name").unwrap_or("tool").to_owned();
        let error: String = self
            .str("error")
            .unwrap_or("failed")
            .chars()
            .take(500)
            .collect();
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
    fn stop(&self, event: &str) -> Result<(), String> {
        let mut block = None;
        let updated = self.update_unfinished(|_| {
            vec![Transition::Heartbeat {
                source: event.to_owned(),
                session_id: self.session_id(),
            }]
        })?;
        for workflow in updated {
            let already_blocked = self
                .payload
                .get("stop_hook_active")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if event == "Stop" && self.config.strict_stop && !already_blocked && block.is_none() {
                let fresh =
                    chrono::Duration::minutes(i64::from(self.config.progress_fresh_minutes));
                if let Some(phase) = workflow.phases.iter().find(|phase| {
                    phase.status == PhaseStatus::InProgress
                        && phase.progress_at.is_none_or(|at| self.now - at > fresh)
                }) {
                    block = Some(format!(
                        "Phase `{}` of workflow `{}` is in progress without a recent progress note. Before stopping, record where you are: `checkpoint progress {} \"<what is done, what comes next>\"` (or `checkpoint complete {}` if it is done).",
                        phase.id, workflow.id, phase.id, phase.id
                    ));
                }
            }
        }
        if let Some(reason) = block {
            let out = json!({ "decision": "block", "reason": reason });
            output::emit(&format!("{out}\n")).map_err(|err| err.to_string())?;
        }
        Ok(())
    }

    /// Pauses the unfinished workflows after an API failure such as a rate limit.
    fn stop_failure(&self) -> Result<(), String> {
        let error = self.str("error").unwrap_or("unknown").to_owned();
        let reason = format!("API error: {error}");
        self.update_unfinished(|_| {
            vec![Transition::Pause {
                reason: reason.clone(),
                until: None,
            }]
        })?;
        Ok(())
    }

    fn tool_failed(&self) -> bool {
        let response = self.payload.get("tool_response");
        response
            .and_then(|response| response.get("interrupted"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// A path relative to the project root where it is inside it.
    fn relative(&self, path: &str) -> String {
        let path = Path::new(path);
        let absolute = if path.is_absolute() {
            path.to_owned()
        } else {
            self.project_root.join(path)
        };
        match absolute.strip_prefix(&self.project_root) {
            Ok(relative) => relative.to_string_lossy().into_owned(),
            Err(_) => absolute.to_string_lossy().into_owned(),
        }
    }
}

/// Prints SessionStart's `additionalContext`.
fn emit_context(context: &str) -> Result<(), String> {
    let out = json!({ "hookSpecificOutput": { "hookEventName": "SessionStart", "additionalContext": context } });
    output::emit(&format!("{out}\n")).map_err(|err| err.to_string())
}

/// Re-injects an unfinished workflow of one of the five systems `checkpoint` replaces, read
/// only, so their users keep their place when they switch; prints nothing when there is none.
fn seed_context(project_root: &Path, config: &Config, now: DateTime<Utc>) -> Result<(), String> {
    let options = seeds::ImportOptions { id: None, now };
    let found = seeds::discover(project_root, &[])
        .into_iter()
        .find_map(|found| {
            let workflow = seeds::read_source(found.format, &found.path)
                .and_then(|source| seeds::import(found.format, &source, &options))
                .ok()?;
            (!workflow.status.is_finished()).then_some((found, workflow))
        });
    let Some((found, workflow)) = found else {
        return Ok(());
    };
    let path = found
        .path
        .strip_prefix(project_root)
        .unwrap_or(&found.path)
        .display()
        .to_string();
    let probe = FsProbe::new(project_root);
    let findings = resume::validate(&workflow, &[], &probe, config, now);
    let plan = resume::plan(
        &workflow,
        findings,
        &probe,
        &PlanOptions {
            config: config.clone(),
            now,
        },
    );
    let mut context = format!(
        "This project has an unfinished workflow in {}'s state file `{path}`. `checkpoint` reads it without changing it; to record further progress with `checkpoint`, import it first: `checkpoint import {path}`.\n\n",
        found.format.name()
    );
    context.push_str(&resume::render_prompt(&plan, now, config.prompt_budget));
    emit_context(&context)
}

/// Checks the fields every payload of `event` carries, so that a malformed one changes nothing.
fn check_payload(event: &str, payload: &Value) -> Result<(), String> {
    let string = |key: &str| payload.get(key).and_then(Value::as_str);
    match string("hook_event_name") {
        Some(name) if name == event => {}
        Some(name) => {
            return Err(format!(
                "the payload is for `{name}`, not `{event}`; nothing recorded"
            ));
        }
        None => return Err("the payload has no `hook_event_name`; nothing recorded".into()),
    }
    let mut required = vec!["session_id", "cwd"];
    required.extend(match event {
        "PreCompact" => &["trigger"][..],
        "PostToolUse" => &["tool_name"][..],
        "PostToolUseFailure" => &["tool_name", "error"][..],
        "StopFailure" => &["error"][..],
        _ => &[][..],
    });
    let missing: Vec<&str> = required
        .into_iter()
        .filter(|key| string(key).is_none())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the payload lacks the string field(s) {}; nothing recorded",
            missing
                .iter()
                .map(|key| format!("`{key}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// Whether a shell command runs `git commit` (not `git commit-tree` or a message mentioning it).
fn is_git_commit(command: &str) -> bool {
    command.split(['&', ';', '|', '\n']).any(|part| {
        let mut words = part
            .split_whitespace()
            .skip_while(|word| word.contains('='));
        words.next() == Some("git") && words.find(|word| !word.starts_with('-')) == Some("commit")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_git_commit() {
        assert!(is_git_commit("git commit -m 'x'"));
        assert!(is_git_commit("git add -A && git commit -qm done"));
        assert!(is_git_commit("GIT_AUTHOR_NAME=a git commit -m x"));
        assert!(!is_git_commit("git commit-tree abc"));
        assert!(!is_git_commit("echo git commit"));
        assert!(!is_git_commit("git status"));
    }
}
