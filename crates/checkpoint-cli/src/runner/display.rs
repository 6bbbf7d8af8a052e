//! What a runner shows: a live line on a terminal (stderr), one plain line per event
//! otherwise, or one JSON event per line with `--format json`.

use std::{io::IsTerminal, time::Duration};

use chrono::{DateTime, Local, Utc};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use serde_json::{Map, Value, json};

use checkpoint_core::run::StopKind;

use crate::output::{self, JSON_VERSION};

/// One event of a run, as `--format json` prints it (`"event"` names the variant).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub(crate) enum RunEvent {
    /// The runner started.
    RunStarted {
        pid: u32,
        client: String,
        phases_done: usize,
        phases_total: usize,
    },
    /// A killed runner's session was still running and was ended.
    LeftoverEnded { pid: u32 },
    /// A session started.
    SessionStarted {
        number: u32,
        phase: Option<String>,
        resume: Option<String>,
        pid: u32,
    },
    /// The session announced its id.
    SessionId { number: u32, session_id: String },
    /// The session called a tool.
    ToolUse { number: u32, tool: String },
    /// The client retries a failed request itself.
    ClientRetry {
        number: u32,
        status: Option<u16>,
        delay_ms: u64,
    },
    /// A session ended.
    SessionEnded {
        number: u32,
        session_id: Option<String>,
        exit: Option<i32>,
        outcome: String,
        transitions: u32,
        seconds: u64,
        /// What it cost in dollars, when its result said.
        #[serde(skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        /// The tokens it used, when its result said.
        #[serde(skip_serializing_if = "Option::is_none")]
        tokens: Option<u64>,
    },
    /// The client reported the usage of a rate-limit window.
    Usage {
        number: u32,
        window: Option<String>,
        percent: f64,
        resets_at: Option<DateTime<Utc>>,
    },
    /// `--window-strict`: the session was interrupted at its window's close.
    WindowClosed { number: u32 },
    /// The runner waits.
    Waiting {
        until: DateTime<Utc>,
        reason: String,
    },
    /// `--sync` pulled or pushed the workflow.
    Synced {
        /// `pull` or `push`.
        direction: String,
        remote: String,
        /// What `checkpoint pull` or `push` reports as the workflow's `action`.
        action: String,
        entries: usize,
        seq: u64,
        message: String,
    },
    /// The `[run] notify` command ran.
    Notified { command: String, exit: Option<i32> },
    /// The runner stopped.
    Stopped {
        kind: StopKind,
        reason: String,
        phase: Option<String>,
        commands: Vec<String>,
        exit_code: u8,
    },
}

/// How events are shown.
pub(crate) struct Display {
    json: bool,
    workflow: String,
    bar: Option<ProgressBar>,
}

impl Display {
    /// `json` for `--format json`; `live` for a live line (a terminal, progress not disabled).
    pub(crate) fn new(workflow: &str, json: bool, live: bool) -> Display {
        let bar = (live && !json).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Display {
            json,
            workflow: workflow.to_owned(),
            bar,
        }
    }

    /// Whether a live line suits this process: stderr is a terminal, not CI, not disabled.
    pub(crate) fn live_possible() -> bool {
        std::io::stderr().is_terminal()
            && std::env::var_os(crate::env::CI).is_none()
            && std::env::var_os(crate::env::CHECKPOINT_NO_PROGRESS).is_none_or(|v| v.is_empty())
    }

    /// Shows an event: a JSON line, or a plain line (above the live line, if any).
    pub(crate) fn event(&self, at: DateTime<Utc>, event: &RunEvent) {
        if self.json {
            let mut object = Map::new();
            object.insert("version".into(), json!(JSON_VERSION));
            object.insert("at".into(), json!(at));
            object.insert("workflow".into(), json!(self.workflow));
            if let Ok(Value::Object(fields)) = serde_json::to_value(event) {
                object.extend(fields);
            }
            let _ = output::emit(&format!("{}\n", Value::Object(object)));
            return;
        }
        let Some(line) = human(event) else { return };
        let line = format!("{} {line}\n", at.with_timezone(&Local).format("%H:%M:%S"));
        match &self.bar {
            Some(bar) => bar.suspend(|| {
                let _ = output::emit(&line);
            }),
            None => {
                let _ = output::emit(&line);
            }
        }
    }

    /// Updates the live line.
    pub(crate) fn status(&self, text: impl FnOnce() -> String) {
        if let Some(bar) = &self.bar {
            bar.set_message(text());
        }
    }

    /// Removes the live line.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

fn human(event: &RunEvent) -> Option<String> {
    Some(match event {
        RunEvent::RunStarted {
            pid,
            client,
            phases_done,
            phases_total,
        } => format!(
            "run: started (pid {pid}, `{client}`), {phases_done} of {phases_total} phases done"
        ),
        RunEvent::LeftoverEnded { pid } => {
            format!("run: ended session process {pid} that a killed runner left running")
        }
        RunEvent::SessionStarted {
            number,
            phase,
            resume,
            pid,
        } => {
            let phase = phase
                .as_deref()
                .map(|phase| format!(" on phase `{phase}`"))
                .unwrap_or_default();
            match resume {
                Some(id) => format!("session {number}: continues session {id}{phase} (pid {pid})"),
                None => format!("session {number}: started{phase} (pid {pid})"),
            }
        }
        RunEvent::SessionId { number, session_id } => {
            format!("session {number}: id {session_id}")
        }
        RunEvent::ToolUse { number, tool } => format!("session {number}: {tool}"),
        RunEvent::ClientRetry {
            number,
            status,
            delay_ms,
        } => format!(
            "session {number}: the client retries{} in {:.1}s",
            status.map(|s| format!(" after {s}")).unwrap_or_default(),
            *delay_ms as f64 / 1000.0
        ),
        RunEvent::SessionEnded {
            number,
            exit,
            outcome,
            transitions,
            seconds,
            cost_usd,
            tokens,
            ..
        } => format!(
            "session {number}: ended ({}, {outcome}, {transitions} transitions, {}{})",
            exit.map_or_else(
                || "killed by a signal".to_owned(),
                |code| format!("exit {code}")
            ),
            checkpoint_core::run::human_duration(chrono::Duration::seconds(
                i64::try_from(*seconds).unwrap_or(i64::MAX)
            )),
            output::spent_text(*cost_usd, *tokens)
        ),
        RunEvent::Usage {
            number,
            window,
            percent,
            resets_at,
        } => format!(
            "session {number}: the {} window is at {percent:.0}%{}",
            window.as_deref().unwrap_or("rate-limit"),
            resets_at
                .map(|at| format!(
                    ", resets at {}",
                    at.with_timezone(&Local).format("%H:%M:%S")
                ))
                .unwrap_or_default()
        ),
        RunEvent::WindowClosed { number } => {
            format!("session {number}: stopped at the close of its window (`--window-strict`)")
        }
        RunEvent::Waiting { until, reason } => format!(
            "waiting until {} ({reason})",
            until.with_timezone(&Local).format("%H:%M:%S")
        ),
        RunEvent::Synced {
            direction, message, ..
        } => format!("{direction}: {message}"),
        RunEvent::Notified { command, exit } => format!(
            "notified: `{command}` ({})",
            exit.map_or_else(
                || "killed by a signal".to_owned(),
                |code| format!("exit {code}")
            )
        ),
        RunEvent::Stopped {
            kind,
            reason,
            commands,
            exit_code,
            ..
        } => {
            let title = match kind {
                StopKind::Finished => "finished",
                StopKind::NeedsPerson => "stopped: a person must decide",
                StopKind::Limit => "stopped at a limit",
                StopKind::Interrupted => "stopped",
            };
            let mut text = format!("run: {title}: {reason} (exit {exit_code})");
            for command in commands {
                text.push_str(&format!("\n    {command}"));
            }
            text
        }
    })
}
