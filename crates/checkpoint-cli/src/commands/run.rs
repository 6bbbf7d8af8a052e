//! `checkpoint run`: carry a workflow to the end unattended, one headless agent session after
//! another, through rate limits, crashes and stalls.
//!
//! The decisions are `checkpoint_core::run` (pure); this module runs the processes, reads the
//! clock, journals every event and shows it.

use std::{
    ffi::OsString,
    process::{Command, Stdio},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    thread,
    time::{Duration as StdDuration, Instant},
};

use checkpoint_core::{
    PhaseId, Transition, WorkflowId,
    resume::{self, ResumePlan},
    run::{Outcome, Reset, RunLimits, RunState, SessionReport, Step, StopKind},
};
use chrono::{DateTime, Duration, Local, Offset, Utc};
use clap::Args;
use miette::{Diagnostic, IntoDiagnostic, Result};
use serde::Serialize;

use crate::{
    commands::sync,
    ctx::{self, Ctx},
    env, exit_code,
    output::{self, Format, JSON_VERSION, Paint},
    probe::FsProbe,
    runner::{
        claude::Claude,
        client::{AgentClient, AgentEvent, command_line},
        display::{Display, RunEvent},
        lock::{self, Acquired, Holder},
        process::{self, Poll, Session},
    },
};

/// How long a session gets to stop after SIGINT, and again after SIGTERM.
const STOP_GRACE: StdDuration = StdDuration::from_secs(5);

/// Arguments of `checkpoint run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The workflow to run (like `--workflow`)
    // An id of its own: sharing the global `--workflow`'s would make clap refuse that option
    // after the subcommand.
    #[arg(id = "run_workflow", value_name = "WORKFLOW")]
    pub workflow: Option<String>,
    /// Start at most N agent sessions [default: no bound]
    #[arg(long, value_name = "N")]
    pub max_sessions: Option<u32>,
    /// The longest single wait for a rate limit or a backoff, like `90s`, `30m` or `5h`; a
    /// limit that resets later stops the run [default: 6h]
    #[arg(long, value_name = "DURATION", default_value = "6h", value_parser = parse_duration)]
    pub max_wait: Duration,
    /// Stop once this phase is done
    #[arg(long, value_name = "PHASE")]
    pub until: Option<String>,
    /// Print the plan and the exact `claude` command line, and run nothing
    #[arg(long)]
    pub dry_run: bool,
    /// The `claude` program [default: `[run] claude` in `config.toml`, else `claude` on `PATH`]
    #[arg(long, value_name = "PROGRAM")]
    pub claude: Option<OsString>,
    /// No live line on a terminal (also `CHECKPOINT_NO_PROGRESS`)
    #[arg(long)]
    pub no_progress: bool,
    /// Pull the workflow from its git remote before each session and push it after each (like
    /// `checkpoint pull` and `push`); a divergence stops the run for a person
    #[arg(long)]
    pub sync: bool,
    /// The git remote of `--sync` [default: the current branch's upstream remote, else `origin`]
    #[arg(long, value_name = "REMOTE", requires = "sync")]
    pub remote: Option<String>,
    /// Arguments passed to every `claude` session, after `--`: the permission mode, allowed
    /// tools, model, plugin directory (for example `-- --allowedTools "Bash Write Edit"`)
    #[arg(last = true, value_name = "CLAUDE ARGS")]
    pub extra: Vec<String>,
}

/// Another runner holds the workflow.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("workflow `{workflow}` already has a runner: pid {pid}{since}")]
#[diagnostic(
    code(checkpoint::run::busy),
    help("wait for it, or stop it (Ctrl-C, or `kill -INT {pid}`); one runner per workflow")
)]
pub(crate) struct RunnerBusy {
    workflow: String,
    pid: u32,
    since: String,
}

/// Parses `90s`, `30m`, `5h`, `1h30m`, `2d` or a number of seconds; `0` is no wait.
fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let error =
        || format!("`{text}` is not a duration: write it like `90s`, `30m`, `5h` or `1h30m`");
    let too_long = || format!("`{text}` is too long a duration: write at most `10000d`");
    let mut total = Duration::zero();
    let mut number = String::new();
    let add = |total: &mut Duration, number: &mut String, unit: char| {
        let value: i64 = number.parse().map_err(|_| {
            if number.is_empty() {
                error()
            } else {
                too_long()
            }
        })?;
        number.clear();
        let part = match unit {
            's' => Duration::try_seconds(value),
            'm' => Duration::try_minutes(value),
            'h' => Duration::try_hours(value),
            'd' => Duration::try_days(value),
            _ => return Err(error()),
        }
        .ok_or_else(too_long)?;
        *total = total
            .checked_add(&part)
            .filter(|total| *total <= Duration::days(10_000))
            .ok_or_else(too_long)?;
        Ok(())
    };
    for c in text.trim().chars() {
        if c.is_ascii_digit() {
            number.push(c);
        } else {
            add(&mut total, &mut number, c)?;
        }
    }
    if !number.is_empty() {
        add(&mut total, &mut number, 's')?;
    }
    if total <= Duration::zero() && text.trim() != "0" {
        return Err(error());
    }
    Ok(total)
}

/// The signal that interrupted the run, as people name it; `None` while none did.
fn signal_name(interrupted: &AtomicUsize) -> Option<&'static str> {
    let signal = i32::try_from(interrupted.load(Ordering::SeqCst)).ok()?;
    Some(match signal {
        0 => return None,
        signal_hook::consts::SIGINT => "Ctrl-C",
        signal_hook::consts::SIGTERM => "SIGTERM",
        signal_hook::consts::SIGHUP => "SIGHUP",
        _ => "a signal",
    })
}

/// Runs `checkpoint run`; returns the exit code.
pub(crate) fn run(mut ctx: Ctx, args: &RunArgs) -> Result<u8> {
    if let Some(id) = &args.workflow {
        ctx.workflow = Some(id.clone());
    }
    let id = ctx.workflow_id()?;
    // Refuses a corrupt or newer state before anything runs (and never rewrites it).
    ctx.store.load(&id)?;
    let until = args.until.as_deref().map(PhaseId::new).transpose()?;
    let limits = RunLimits {
        max_sessions: args.max_sessions,
        max_wait: args.max_wait,
        until: until.clone(),
    };
    let client = Claude {
        program: args
            .claude
            .clone()
            .or_else(|| ctx.config.run.claude.clone().map(OsString::from))
            .unwrap_or_else(|| "claude".into()),
        extra: args.extra.clone(),
        local_offset: Local::now().offset().fix(),
    };
    if args.dry_run {
        return dry_run(&ctx, &id, &client, &limits);
    }
    let remote = if args.sync {
        Some(sync::remote_name(&ctx, args.remote.as_deref())?)
    } else {
        None
    };
    let live = !args.no_progress && ctx.format != Format::Json && Display::live_possible();
    let display = Display::new(id.as_str(), ctx.format == Format::Json, live);
    let result = Runner {
        ctx: &mut ctx,
        id: &id,
        client: &client,
        limits: &limits,
        display: &display,
        remote,
        push_at_stop: true,
    }
    .run();
    display.finish();
    result
}

fn dry_run(ctx: &Ctx, id: &WorkflowId, client: &dyn AgentClient, limits: &RunLimits) -> Result<u8> {
    let loaded = ctx.store.load(id)?;
    let plan = ctx
        .brief(
            &loaded.workflow,
            &loaded.recoveries,
            &FsProbe::new(&ctx.project_root),
        )
        .plan;
    let step = RunState::default().next(&plan, limits, ctx.now);
    let command = match &step {
        Step::Session { .. } => {
            let prompt = session_prompt(ctx, &plan, false, limits.until.as_ref());
            Some(command_line(&with_env(ctx, id, client.start(&prompt))))
        }
        _ => None,
    };
    let (action, reason) = match &step {
        Step::Session { .. } => ("session", plan.next.reason.clone()),
        Step::Wait { reason, .. } => ("wait", reason.clone()),
        Step::Stop { reason, .. } => ("stop", reason.clone()),
    };
    if ctx.format == Format::Json {
        #[derive(Serialize)]
        struct DryRun<'a> {
            version: u32,
            plan: &'a ResumePlan,
            step: &'a str,
            reason: String,
            command: Option<String>,
        }
        output::emit_json(&DryRun {
            version: JSON_VERSION,
            plan: &plan,
            step: action,
            reason,
            command,
        })
        .into_diagnostic()?;
    } else {
        let mut text = output::render_plan(&plan, false, ctx.now, Paint::new(ctx.color));
        match command {
            Some(command) => text.push_str(&format!(
                "\n`checkpoint run` would start this session (in `{}`):\n\n{command}\n",
                ctx.project_root.display()
            )),
            None => text.push_str(&format!("\n`checkpoint run` would {action}: {reason}\n")),
        }
        output::emit(&text).into_diagnostic()?;
    }
    Ok(exit_code::SUCCESS)
}

/// The environment of every session: the workflow and the store, so that the session's
/// `checkpoint` commands record into this workflow.
fn with_env(ctx: &Ctx, id: &WorkflowId, mut command: Command) -> Command {
    command
        .current_dir(&ctx.project_root)
        .env(env::CHECKPOINT_WORKFLOW, id.as_str())
        .env(env::CHECKPOINT_DIR, ctx.store.root());
    command
}

/// The prompt of a session: what to do, how to record it, and the resume prompt.
fn session_prompt(ctx: &Ctx, plan: &ResumePlan, resumed: bool, until: Option<&PhaseId>) -> String {
    let state = resume::render_prompt(plan, ctx.now, ctx.config.prompt_budget);
    let opening = if resumed {
        "The rate limit has reset: continue where you stopped.\n"
    } else {
        ""
    };
    let scope = match until {
        Some(phase) => format!("until phase `{phase}` is done"),
        None => "until every phase is done".to_owned(),
    };
    format!(
        "{opening}You are running unattended under `checkpoint run`: nobody watches this session, so do not ask questions.\n\
         Work on workflow `{}` {scope}, from where it stands (below); never redo a phase that is done.\n\
         Record every step with the `checkpoint` command as you go: `checkpoint start <phase>` before you work on a phase, \
         `checkpoint progress <phase> \"<what is done>\"` after each significant step, \
         `checkpoint complete <phase>` (with `--artifact <path>` for each output) when it is done, \
         and `checkpoint fail <phase> --reason \"<why>\"` when it cannot be done.\n\
         Stop when a phase waits for approval or a decision needs a person.\n\n{state}",
        plan.workflow
    )
}

struct Runner<'a> {
    ctx: &'a mut Ctx,
    id: &'a WorkflowId,
    client: &'a dyn AgentClient,
    limits: &'a RunLimits,
    display: &'a Display,
    /// `--sync`: the remote pulled from before each session and pushed to after it.
    remote: Option<String>,
    /// Whether the stop pushes too (not after a divergence: the remote would refuse it).
    push_at_stop: bool,
}

/// What the runner saw of a session while it ran.
#[derive(Default)]
struct Watch {
    session_id: Option<String>,
    last_tool: Option<String>,
    rate_limited: bool,
    reset: Option<Reset>,
    /// The last value of the stream that could not be believed, and why.
    ignored: Option<String>,
    retry_delay_ms: Option<u64>,
    result: Option<String>,
}

impl Runner<'_> {
    fn run(&mut self) -> Result<u8> {
        // The signal that interrupted the run (0 while none did), to say which it was.
        let interrupted = Arc::new(AtomicUsize::new(0));
        for signal in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            let number = usize::try_from(signal).expect("signal numbers are small");
            signal_hook::flag::register_usize(signal, Arc::clone(&interrupted), number)
                .into_diagnostic()?;
        }
        let pid = std::process::id();
        let started_at = ctx::now()?;
        let holder = Holder {
            pid,
            started_at: Some(started_at),
            child_pid: None,
            child_start: None,
        };
        let mut run_lock = match lock::acquire(&self.ctx.store.workflow_dir(self.id), holder)? {
            Acquired::Held(lock, previous) => {
                self.end_leftover(previous.as_ref());
                lock
            }
            Acquired::Busy(holder) => {
                return Err(RunnerBusy {
                    workflow: self.id.to_string(),
                    pid: holder.pid,
                    since: holder
                        .started_at
                        .map(|at| format!(", since {}", at.to_rfc3339()))
                        .unwrap_or_default(),
                }
                .into());
            }
        };
        // Before the run journals anything: a teammate's entries are then simply pulled.
        self.ctx.now = ctx::now()?;
        // A pull that fails (an unreachable remote) is shown by the loop, which goes on.
        let pulled = self
            .remote
            .as_ref()
            .map(|remote| sync::pull_workflow(self.ctx, remote, self.id, None));
        let loaded = self.journal(Transition::RunStart {
            pid,
            client: self.client.name().to_owned(),
        })?;
        let workflow = &loaded.workflow;
        self.show(RunEvent::RunStarted {
            pid,
            client: self.client.name().to_owned(),
            phases_done: workflow.n_done(),
            phases_total: workflow.phases.len(),
        })?;
        let result = self.drive(&mut run_lock, &interrupted, pulled);
        if let Err(err) = &result {
            // The night's story ends with why, even when it is an error.
            let _ = self.journal(Transition::RunStop {
                reason: format!("failed: {err}"),
                exit: exit_code::FAILURE,
            });
        }
        result
    }

    /// The loop: plan, then a session, a wait or a stop.
    fn drive(
        &mut self,
        run_lock: &mut lock::RunLock,
        interrupted: &AtomicUsize,
        mut pulled: Option<Result<sync::Outcome>>,
    ) -> Result<u8> {
        let mut state = RunState::default();
        loop {
            if let Some(signal) = signal_name(interrupted) {
                return self.stop(
                    "interrupted",
                    format!("interrupted ({signal})"),
                    None,
                    Vec::new(),
                    exit_code::INTERRUPTED,
                );
            }
            self.ctx.now = ctx::now()?;
            if let Some(Step::Stop {
                reason,
                phase,
                commands,
                ..
            }) = self.pull(pulled.take())?
            {
                self.push_at_stop = false;
                self.notify(phase.as_ref(), &reason)?;
                return self.stop(
                    "needs_person",
                    reason,
                    phase,
                    commands,
                    exit_code::NEEDS_PERSON,
                );
            }
            let plan = crate::commands::resume::plan_after_recoveries(self.ctx, self.id)?;
            let step = state.next(&plan, self.limits, self.ctx.now);
            let step = match step {
                Step::Session { phase, resume } => {
                    let (report, was_interrupted) =
                        self.session(&plan, &mut state, phase, resume, run_lock, interrupted)?;
                    self.push();
                    if let Some(signal) = was_interrupted {
                        return self.stop(
                            "interrupted",
                            format!("interrupted ({signal}); the session was stopped"),
                            None,
                            Vec::new(),
                            exit_code::INTERRUPTED,
                        );
                    }
                    match state.record(&report, self.limits) {
                        Some(step) => step,
                        None => continue,
                    }
                }
                other => other,
            };
            match step {
                Step::Session { .. } => {}
                Step::Wait { until, reason } => {
                    self.journal(Transition::RunWait {
                        until,
                        reason: reason.clone(),
                    })?;
                    // Shared before the wait, so that a teammate's push meanwhile is no divergence.
                    self.push();
                    self.show(RunEvent::Waiting {
                        until,
                        reason: reason.clone(),
                    })?;
                    if !self.wait(until, &reason, &plan, interrupted) {
                        let signal = signal_name(interrupted).unwrap_or("a signal");
                        return self.stop(
                            "interrupted",
                            format!("interrupted ({signal}) while waiting"),
                            None,
                            Vec::new(),
                            exit_code::INTERRUPTED,
                        );
                    }
                }
                Step::Stop {
                    kind,
                    reason,
                    phase,
                    commands,
                } => {
                    let (name, code) = match kind {
                        StopKind::Finished => ("finished", exit_code::SUCCESS),
                        StopKind::NeedsPerson => ("needs_person", exit_code::NEEDS_PERSON),
                        StopKind::Limit => ("limit", exit_code::RUN_LIMIT),
                    };
                    if kind == StopKind::NeedsPerson {
                        self.notify(phase.as_ref(), &reason)?;
                    }
                    return self.stop(name, reason, phase, commands, code);
                }
            }
        }
    }

    /// `--sync`: pulls the workflow (or shows the pull already done); a divergence is the stop
    /// that asks a person to choose a side.
    /// A pull that fails (the network) is a warning: the run goes on with the local state.
    fn pull(&self, done: Option<Result<sync::Outcome>>) -> Result<Option<Step>> {
        let Some(remote) = &self.remote else {
            return Ok(None);
        };
        let pulled = done.unwrap_or_else(|| sync::pull_workflow(self.ctx, remote, self.id, None));
        let outcome = match pulled {
            Ok(outcome) => outcome,
            Err(err) => {
                output::warn(&format!(
                    "--sync: could not pull `{}` from `{remote}`, going on with this copy: {err}{}",
                    self.id,
                    err.help()
                        .map(|help| format!(" ({help})"))
                        .unwrap_or_default()
                ));
                return Ok(None);
            }
        };
        self.show_sync("pull", remote, &outcome)?;
        Ok(
            (outcome.action == crate::services::remote_sync::SyncAction::Diverged).then(|| {
                checkpoint_core::run::diverged(
                    self.id.as_str(),
                    remote,
                    outcome.message.clone(),
                    outcome.mergeable == Some(true),
                )
            }),
        )
    }

    /// `--sync`: pushes the workflow.
    /// A push that fails or is rejected is shown and the run goes on: nothing local is lost, and
    /// the next pull brings the remote's entries (or finds the divergence).
    fn push(&self) {
        let Some(remote) = &self.remote else {
            return;
        };
        match sync::push_workflows(self.ctx, remote, std::slice::from_ref(self.id)) {
            Ok(outcomes) => {
                for outcome in &outcomes {
                    let _ = self.show_sync("push", remote, outcome);
                }
            }
            Err(err) => output::warn(&format!(
                "--sync: could not push `{}` to `{remote}`: {err}",
                self.id
            )),
        }
    }

    fn show_sync(&self, direction: &str, remote: &str, outcome: &sync::Outcome) -> Result<()> {
        self.show(RunEvent::Synced {
            direction: direction.to_owned(),
            remote: remote.to_owned(),
            action: outcome.action.as_str().to_owned(),
            entries: outcome.entries,
            seq: outcome.seq,
            message: outcome.message.clone(),
        })
    }

    /// Ends the session a killed runner left running, when it is still the same process.
    fn end_leftover(&self, previous: Option<&Holder>) {
        let Some(Holder {
            child_pid: Some(child),
            child_start,
            ..
        }) = previous
        else {
            return;
        };
        let same = match (child_start, lock::process_start(*child)) {
            (Some(recorded), Some(now)) => *recorded == now,
            _ => false,
        };
        if same && process::group_alive(*child) {
            process::end_group(*child, STOP_GRACE);
            let _ = self.show(RunEvent::LeftoverEnded { pid: *child });
        }
    }

    fn journal(&self, transition: Transition) -> Result<checkpoint_core::store::Loaded> {
        Ok(self.ctx.store.apply(self.id, ctx::now()?, transition)?)
    }

    fn show(&self, event: RunEvent) -> Result<()> {
        self.display.event(ctx::now()?, &event);
        Ok(())
    }

    /// Runs one session to its end; returns its report and the signal that stopped it, if one
    /// did.
    fn session(
        &mut self,
        plan: &ResumePlan,
        state: &mut RunState,
        phase: Option<PhaseId>,
        resume: Option<String>,
        run_lock: &mut lock::RunLock,
        interrupted: &AtomicUsize,
    ) -> Result<(SessionReport, Option<&'static str>)> {
        let number = state.sessions + 1;
        let seq_before = self.ctx.store.load(self.id)?.workflow.seq;
        let prompt = session_prompt(self.ctx, plan, resume.is_some(), self.limits.until.as_ref());
        let command = match &resume {
            Some(session) => self.client.resume(session, &prompt),
            None => self.client.start(&prompt),
        };
        self.journal(Transition::RunSessionStart {
            number,
            phase: phase.clone(),
            resumed: resume.clone(),
        })?;
        let mut session = Session::spawn(with_env(self.ctx, self.id, command))?;
        let child = session.pid();
        run_lock.set_child(Some((child, lock::process_start(child))))?;
        self.show(RunEvent::SessionStarted {
            number,
            phase: phase.as_ref().map(ToString::to_string),
            resume: resume.clone(),
            pid: child,
        })?;
        let started = Instant::now();
        let mut watch = Watch::default();
        let done = plan.completed.len();
        let total = done
            + plan.in_progress.len()
            + plan.awaiting_approval.len()
            + plan.failed.len()
            + plan.ready.len()
            + plan.blocked.len();
        let mut was_interrupted = None;
        let status = loop {
            if let Some(signal) = signal_name(interrupted) {
                was_interrupted = Some(signal);
                break session.stop(STOP_GRACE)?;
            }
            match session.poll(StdDuration::from_millis(100))? {
                Poll::Line(line) => {
                    for event in self.client.events(&line, ctx::now()?) {
                        self.on_event(number, &mut watch, event)?;
                    }
                }
                Poll::Idle => {}
                Poll::Exited(status) => break status,
            }
            self.display.status(|| {
                format!(
                    "{done}/{total} phases done · {} · session {number} · {} · {}",
                    phase
                        .as_ref()
                        .map_or_else(|| "-".to_owned(), |phase| format!("phase {phase}")),
                    checkpoint_core::run::human_duration(Duration::seconds(
                        i64::try_from(started.elapsed().as_secs()).unwrap_or(i64::MAX)
                    )),
                    watch.last_tool.as_deref().unwrap_or("starting")
                )
            });
        };
        run_lock.set_child(None)?;
        let ended_at = ctx::now()?;
        let transitions = self.work_since(seq_before)?;
        // A limit with no reset time of its own: the delay the client last waited for (a
        // 429's `retry-after`) counts from when it gave up.
        let mut reset = watch.reset;
        if reset.is_none()
            && watch.rate_limited
            && let Some(delay_ms) = watch.retry_delay_ms
        {
            match Reset::after_delay(delay_ms, ended_at) {
                Ok(after) => reset = Some(after),
                Err(why) => {
                    output::warn(&format!("session {number}: {why}: taken as no reset time"));
                    watch.ignored = Some(why);
                }
            }
        }
        let report = SessionReport {
            session_id: watch.session_id.clone(),
            exit: status.code(),
            transitions,
            rate_limited: watch.rate_limited,
            reset,
            ignored: watch.ignored.clone(),
            ended_at,
        };
        let outcome = if was_interrupted.is_some() {
            "interrupted"
        } else {
            Outcome::of(&report).as_str()
        };
        self.journal(Transition::RunSessionEnd {
            number,
            session_id: watch.session_id.clone(),
            exit: status.code(),
            outcome: outcome.to_owned(),
            transitions,
        })?;
        self.show(RunEvent::SessionEnded {
            number,
            session_id: watch.session_id.clone(),
            exit: status.code(),
            outcome: outcome.to_owned(),
            transitions,
            seconds: started.elapsed().as_secs(),
        })?;
        if outcome == "crash" {
            let tail = session.stderr_tail().join("\n");
            let text = watch.result.as_deref().unwrap_or_default();
            output::warn(&format!(
                "session {number} failed{}{}",
                if text.is_empty() {
                    String::new()
                } else {
                    format!(": {text}")
                },
                if tail.is_empty() {
                    String::new()
                } else {
                    format!("\n{tail}")
                }
            ));
        }
        Ok((report, was_interrupted))
    }

    fn on_event(&self, number: u32, watch: &mut Watch, event: AgentEvent) -> Result<()> {
        match event {
            AgentEvent::SessionId(session_id) => {
                if watch.session_id.as_ref() != Some(&session_id) {
                    watch.session_id = Some(session_id.clone());
                    self.show(RunEvent::SessionId { number, session_id })?;
                }
            }
            AgentEvent::ToolUse(tool) => {
                watch.last_tool = Some(tool.clone());
                self.show(RunEvent::ToolUse { number, tool })?;
            }
            AgentEvent::Retry { status, delay_ms } => {
                watch.retry_delay_ms = Some(delay_ms);
                self.show(RunEvent::ClientRetry {
                    number,
                    status,
                    delay_ms,
                })?;
            }
            AgentEvent::RateLimited { reset } => {
                watch.rate_limited = true;
                if let Some(reset) = reset {
                    // An exact time beats a coarse one, whichever came first.
                    watch.reset = Some(watch.reset.map_or(reset, |seen| seen.better(reset)));
                }
            }
            AgentEvent::Ignored(why) => {
                output::warn(&format!("session {number}: {why}: taken as no reset time"));
                watch.ignored = Some(why);
            }
            AgentEvent::Result { is_error, text } => {
                if is_error {
                    watch.result = Some(text);
                }
            }
        }
        Ok(())
    }

    /// How many transitions of work the journal holds after `seq`.
    fn work_since(&self, seq: u64) -> Result<u32> {
        let journal = self.ctx.store.journal(self.id)?;
        let n = journal
            .entries
            .iter()
            .filter(|entry| entry.seq > seq && entry.transition.is_work())
            .count();
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// Waits until `until` (by the real clock); false when Ctrl-C came first.
    fn wait(
        &self,
        until: DateTime<Utc>,
        reason: &str,
        plan: &ResumePlan,
        interrupted: &AtomicUsize,
    ) -> bool {
        loop {
            if interrupted.load(Ordering::SeqCst) != 0 {
                return false;
            }
            let left = until - Utc::now();
            if left <= Duration::zero() {
                return true;
            }
            self.display.status(|| {
                format!(
                    "{}/{} phases done · waiting {} · {reason}",
                    plan.completed.len(),
                    plan.completed.len()
                        + plan.in_progress.len()
                        + plan.ready.len()
                        + plan.blocked.len()
                        + plan.failed.len()
                        + plan.awaiting_approval.len(),
                    checkpoint_core::run::human_duration(left + Duration::seconds(1))
                )
            });
            let step = left
                .to_std()
                .unwrap_or_default()
                .min(StdDuration::from_millis(100));
            thread::sleep(step);
        }
    }

    /// Runs the `[run] notify` command, with the workflow, phase and reason in its environment.
    fn notify(&self, phase: Option<&PhaseId>, reason: &str) -> Result<()> {
        let Some(command) = self.ctx.config.run.notify.clone() else {
            return Ok(());
        };
        let status = Command::new("sh")
            .arg("-c")
            .arg(&command)
            .current_dir(&self.ctx.project_root)
            .env(env::CHECKPOINT_WORKFLOW, self.id.as_str())
            .env(
                env::CHECKPOINT_PHASE,
                phase.map(PhaseId::as_str).unwrap_or_default(),
            )
            .env(env::CHECKPOINT_REASON, reason)
            .stdin(Stdio::null())
            .stdout(Stdio::from(std::io::stderr()))
            .status();
        match status {
            Ok(status) => self.show(RunEvent::Notified {
                command,
                exit: status.code(),
            }),
            Err(err) => {
                output::warn(&format!(
                    "failed to run the `[run] notify` command `{command}`: {err}"
                ));
                Ok(())
            }
        }
    }

    fn stop(
        &self,
        kind: &str,
        reason: String,
        phase: Option<PhaseId>,
        commands: Vec<String>,
        code: u8,
    ) -> Result<u8> {
        if let Err(err) = self.journal(Transition::RunStop {
            reason: reason.clone(),
            exit: code,
        }) {
            output::warn(&format!("failed to journal the runner's stop: {err}"));
        }
        if self.push_at_stop {
            self.push();
        }
        self.show(RunEvent::Stopped {
            kind: kind.to_owned(),
            reason,
            phase: phase.map(|phase| phase.to_string()),
            commands,
            exit_code: code,
        })?;
        Ok(code)
    }
}
