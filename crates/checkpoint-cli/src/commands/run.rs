//! `checkpoint run`: carry a workflow to the end unattended, one headless agent session after
//! another, through rate limits, crashes and stalls.
//!
//! The decisions are `checkpoint_core::run` (pure); this module runs the processes, reads the
//! clock, journals every event and shows it.

use std::{
    cell::Cell,
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
    budget::{Budget, Spending},
    resume::ResumePlan,
    run::{
        Reset, RunLimits, RunState, SessionOutcome, SessionReport, SessionVerdict, Step, StopKind,
    },
    window,
};
use chrono::{DateTime, Duration, Local, Utc};
use miette::{IntoDiagnostic, Result};

pub(crate) use crate::runner::args::RunArgs;
pub(crate) use crate::runner::lock::RunnerBusy;
use crate::{
    clients::session::{AgentClient, SessionEvent},
    ctx::{self, Ctx},
    env, failure,
    output::{self, Format},
    runner::{
        all::{self, Carried, Ran},
        display::{Display, RunEvent},
        lock::{self, Acquired, LockOwner},
        observed::Observed,
        process::{self, Poll, Session, signal_name},
        prompt::{check_config_budget, dry_run, session_prompt, with_env},
        select::agent_client,
    },
    services::{
        remote_sync::{self as sync, SyncAction, SyncOutcome},
        resume_plan::{self, plan_after_recoveries},
    },
};
use checkpoint_contract::exit_code;

/// How long a session gets to stop after SIGINT, and again after SIGTERM.
const STOP_GRACE: StdDuration = StdDuration::from_secs(5);

/// Runs `checkpoint run`; returns the exit code.
pub(crate) fn run(mut ctx: Ctx, args: &RunArgs) -> Result<u8> {
    if args.all {
        return run_all(ctx, args);
    }
    if let Some(id) = &args.workflow {
        ctx.workflow = Some(id.clone());
    }
    let id = ctx.workflow_id()?;
    let since = args.since.map(|since| since.at(ctx.now));
    run_one(&mut ctx, &id, args, Carried::from_journal(since)).map(|ran| ran.exit)
}

/// `checkpoint run --all`: every unfinished workflow of the store, one after another, in the
/// order core decides; exits with the most serious stop.
fn run_all(mut ctx: Ctx, args: &RunArgs) -> Result<u8> {
    let holder = LockOwner {
        pid: std::process::id(),
        started_at: Some(ctx::now()?),
        child_pid: None,
        child_start: None,
    };
    let _all_lock = match lock::acquire(ctx.store.root(), holder)? {
        Acquired::Held(lock, _) => lock,
        Acquired::Busy(holder) => {
            return Err(RunnerBusy::new(
                "this project's `checkpoint run --all`".to_owned(),
                &holder,
            )
            .into());
        }
    };
    let mut listed = Vec::new();
    let mut skipped = Vec::new();
    for id in ctx.store.list()? {
        match ctx.store.load(&id) {
            Ok(loaded) => listed.push((
                checkpoint_core::choice::active_at(&loaded.workflow),
                id,
                loaded.workflow.priority,
                loaded.workflow.status.is_finished(),
            )),
            Err(err) => {
                let reason = output::with_causes(&err);
                output::warn(&format!("run --all: skipping `{id}`: {reason}"));
                skipped.push((id, reason));
            }
        }
    }
    // `list`'s order: the most recently active first.
    listed.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let order = checkpoint_core::run::all_order(
        listed
            .into_iter()
            .map(|(_, id, priority, finished)| (id, priority, finished))
            .collect(),
    );
    let since = args.since.map(|since| since.at(ctx.now));
    let mut carried = Carried {
        spent: match since {
            Some(since) => all::spent_in_journals(&ctx, &order, since)?,
            None => Spending::default(),
        },
        since: None,
    };
    let mut stops = Vec::new();
    for id in &order {
        ctx.workflow = Some(id.to_string());
        let ran = match run_one(&mut ctx, id, args, carried) {
            Err(err) if err.downcast_ref::<RunnerBusy>().is_some() => {
                output::warn(&format!("run --all: skipping `{id}`: {err}"));
                stops.push((id.clone(), StopKind::Limit));
                continue;
            }
            other => other?,
        };
        carried.spent = ran.spent;
        stops.push((id.clone(), ran.kind));
        if !checkpoint_core::run::all_goes_on(ran.kind) {
            break;
        }
    }
    let kinds: Vec<StopKind> = stops.iter().map(|(_, kind)| *kind).collect();
    let worst = checkpoint_core::run::most_serious(&kinds);
    output::note(&all::summary(&order, &stops, &skipped, args.dry_run));
    // A workflow it could not read is not done: the run says so in its exit code too.
    Ok(failure::exit_code_of_all(worst, !skipped.is_empty()))
}

/// Runs one workflow.
fn run_one(ctx: &mut Ctx, id: &WorkflowId, args: &RunArgs, carried: Carried) -> Result<Ran> {
    // Refuses a corrupt or newer state before anything runs (and never rewrites it).
    ctx.store.load(id)?;
    let until = args.until.as_deref().map(PhaseId::new).transpose()?;
    let run_config = &ctx.config.run;
    let budget = Budget {
        max_usage: args.max_usage.or(run_config.max_usage),
        max_cost: args.max_cost.or(run_config.max_cost),
        max_tokens: args.max_tokens.or(run_config.max_tokens),
    };
    check_config_budget(ctx, &budget)?;
    let limits = RunLimits {
        max_sessions: args.max_sessions,
        max_wait: args.max_wait,
        until: until.clone(),
        budget,
        windows: if args.windows.is_empty() {
            run_config.window.clone()
        } else {
            args.windows.clone()
        },
    };
    let window_strict = args.window_strict || run_config.window_strict;
    let client = agent_client(ctx, args)?;
    let client = client.as_ref();
    if args.dry_run {
        let recovered = plan_after_recoveries(ctx, id, resume_plan::Write::DryRun)?;
        let shown = recovered.shown();
        let exit = dry_run(ctx, id, client, &limits, &recovered.plan, &shown)?;
        return Ok(Ran {
            exit,
            kind: StopKind::Finished,
            spent: carried.spent,
        });
    }
    let remote = if args.sync {
        Some(sync::remote_name(ctx, args.remote.as_deref())?)
    } else {
        None
    };
    let live = !args.no_progress && ctx.format != Format::Json && Display::live_possible();
    let display = Display::new(id.as_str(), ctx.format == Format::Json, live);
    let mut runner = Runner {
        ctx,
        id,
        client,
        limits: &limits,
        display: &display,
        remote,
        push_at_stop: true,
        window_strict,
        carried,
        clock_floor: None,
        stopped: Cell::new(StopKind::Finished),
    };
    let result = runner.run();
    display.finish();
    Ok(Ran {
        exit: result?,
        kind: runner.stopped.get(),
        spent: runner.carried.spent,
    })
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
    /// `--window-strict`: interrupt a session at its window's close.
    window_strict: bool,
    /// What earlier workflows of `run --all` spent, or `--since`; after the run, what it spent
    /// in all.
    carried: Carried,
    /// The end of the last wait: the runner's clock never reads earlier once it waited until
    /// then (a fixed test clock included).
    clock_floor: Option<DateTime<Utc>>,
    /// How the run stopped.
    stopped: Cell<StopKind>,
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
        let holder = LockOwner {
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
                return Err(RunnerBusy::new(format!("workflow `{}`", self.id), &holder).into());
            }
        };
        // Before the run journals anything: a teammate's entries are then simply pulled.
        self.ctx.now = ctx::now()?;
        // A pull that fails (an unreachable remote) is shown by the loop, which goes on.
        let pulled = self
            .remote
            .as_ref()
            .map(|remote| sync::pull_workflow(self.ctx, remote, self.id, None));
        // Recoveries first: `run_start` would look like a sign of life and hide the interruption.
        plan_after_recoveries(self.ctx, self.id, resume_plan::Write::Journal)?;
        let loaded = self.journal(Transition::RunStart {
            pid,
            client: self.client.name().to_owned(),
            budget: self
                .limits
                .budget
                .is_set()
                .then(|| self.limits.budget.clone()),
        })?;
        let workflow = &loaded.workflow;
        self.show(RunEvent::RunStarted {
            pid,
            client: self.client.name().to_owned(),
            phases_done: workflow.n_done(),
            phases_total: workflow.phases.len(),
        })?;
        let mut state = RunState {
            spent: self.spent_before()?,
            // A session handed over from another machine goes on as the same conversation.
            resume: crate::services::handoff_receive::to_resume(
                self.ctx,
                self.id,
                self.client.name(),
            ),
            ..RunState::default()
        };
        let result = self.drive(&mut state, &mut run_lock, &interrupted, pulled);
        self.carried.spent = state.spent;
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
        state: &mut RunState,
        run_lock: &mut lock::RunLock,
        interrupted: &AtomicUsize,
        mut pulled: Option<Result<SyncOutcome>>,
    ) -> Result<u8> {
        loop {
            if let Some(signal) = signal_name(interrupted) {
                return self.stop(
                    StopKind::Interrupted,
                    format!("interrupted ({signal})"),
                    None,
                    Vec::new(),
                );
            }
            self.ctx.now = self.now()?;
            if let Some(Step::Stop {
                reason,
                phase,
                commands,
                ..
            }) = self.pull(pulled.take())?
            {
                self.push_at_stop = false;
                self.notify(phase.as_ref(), &reason, StopKind::NeedsPerson)?;
                return self.stop(StopKind::NeedsPerson, reason, phase, commands);
            }
            let plan = plan_after_recoveries(self.ctx, self.id, resume_plan::Write::Journal)?.plan;
            let step = state.next(&plan, self.limits, self.ctx.now, &Local);
            let step = match step {
                Step::Session { phase, resume } => {
                    let (report, was_interrupted, cut) =
                        self.session(&plan, state, phase, resume, run_lock, interrupted)?;
                    self.push();
                    if cut && was_interrupted.is_none() {
                        // `--window-strict`: the window closed; the next plan waits for the next.
                        state.record_cut(&report);
                        continue;
                    }
                    if let Some(signal) = was_interrupted {
                        return self.stop(
                            StopKind::Interrupted,
                            format!("interrupted ({signal}); the session was stopped"),
                            None,
                            Vec::new(),
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
                Step::Wait {
                    kind,
                    until,
                    reason,
                } => {
                    self.journal(Transition::RunWait {
                        until,
                        reason: reason.clone(),
                        kind: Some(kind),
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
                            StopKind::Interrupted,
                            format!("interrupted ({signal}) while waiting"),
                            None,
                            Vec::new(),
                        );
                    }
                    self.clock_floor = Some(until);
                }
                Step::Stop {
                    kind,
                    reason,
                    phase,
                    commands,
                } => {
                    match kind {
                        StopKind::NeedsPerson => self.notify(phase.as_ref(), &reason, kind)?,
                        StopKind::Finished => {
                            self.notify(phase.as_ref(), &format!("finished: {reason}"), kind)?;
                        }
                        StopKind::Limit | StopKind::Interrupted => {}
                    }
                    return self.stop(kind, reason, phase, commands);
                }
            }
        }
    }

    /// `--sync`: pulls the workflow (or shows the pull already done); a divergence is the stop
    /// that asks a person to choose a side.
    /// A pull that fails (the network) is a warning: the run goes on with the local state.
    fn pull(&self, done: Option<Result<SyncOutcome>>) -> Result<Option<Step>> {
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
        Ok((outcome.action == SyncAction::Diverged).then(|| {
            checkpoint_core::run::diverged(
                self.id.as_str(),
                remote,
                outcome.message.clone(),
                outcome.mergeable == Some(true),
            )
        }))
    }

    /// `--sync`: pushes the workflow.
    /// A push that fails or is rejected is shown and the run goes on: nothing local is lost, and
    /// the next pull brings the remote's entries (or finds the divergence).
    fn push(&self) {
        let Some(remote) = &self.remote else {
            return;
        };
        if self.ctx.config.sync.session {
            let send = crate::services::handoff::Send {
                session: None,
                with_subagents: false,
                yes: true,
            };
            if let Err(err) = crate::services::handoff::send(self.ctx, remote, self.id, &send) {
                output::warn(&format!("--sync: the session was not sent: {err}"));
            }
        }
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

    fn show_sync(&self, direction: &str, remote: &str, outcome: &SyncOutcome) -> Result<()> {
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
    fn end_leftover(&self, previous: Option<&LockOwner>) {
        let Some(LockOwner {
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

    /// The runner's clock: never before the end of its last wait.
    fn now(&self) -> Result<DateTime<Utc>> {
        let now = ctx::now()?;
        Ok(self.clock_floor.map_or(now, |floor| now.max(floor)))
    }

    /// What counts against the budget before this run's first session: what earlier
    /// workflows of `run --all` spent, and with `--since`, the journal's sessions since then.
    fn spent_before(&self) -> Result<Spending> {
        let mut spent = self.carried.spent;
        if let Some(since) = self.carried.since {
            spent.merge(all::journal_spending(self.ctx, self.id, since)?);
        }
        Ok(spent)
    }

    fn journal(&self, transition: Transition) -> Result<checkpoint_core::store::Loaded> {
        crate::services::store_write::journal(self.ctx, self.id, ctx::now()?, transition)
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
    ) -> Result<(SessionReport, Option<&'static str>, bool)> {
        let number = state.sessions + 1;
        let seq_before = self.ctx.store.load(self.id)?.workflow.seq;
        let prompt = session_prompt(
            self.ctx,
            plan,
            resume.as_deref(),
            self.limits.until.as_ref(),
        );
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
        let mut watch = Observed::default();
        let done = plan.completed.len();
        let total = plan.phase_count();
        let mut was_interrupted = None;
        let closes = self
            .window_strict
            .then(|| window::closing(&self.limits.windows, self.ctx.now, &Local))
            .flatten();
        let mut cut = false;
        let status = loop {
            if let Some(signal) = signal_name(interrupted) {
                was_interrupted = Some(signal);
                break session.stop(STOP_GRACE)?;
            }
            if let Some(closes) = closes
                && ctx::now()? >= closes
            {
                cut = true;
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
        let reset = Reset::of_session(
            watch.reset,
            watch.rate_limited,
            watch.retry_delay_ms,
            ended_at,
        )
        .unwrap_or_else(|why| {
            output::warn(&format!("session {number}: {why}: taken as no reset time"));
            watch.ignored = Some(why);
            None
        });
        let report = SessionReport {
            session_id: watch.session_id.clone(),
            exit: status.code(),
            transitions,
            rate_limited: watch.rate_limited,
            reset,
            ignored: watch.ignored.clone(),
            ended_at,
            cost_usd: watch.cost_usd,
            tokens: watch.tokens,
            usage: watch.usage.clone(),
        };
        let outcome = if was_interrupted.is_some() || cut {
            SessionOutcome::Interrupted
        } else {
            SessionVerdict::of(&report).into()
        };
        self.journal(Transition::RunSessionEnd {
            number,
            session_id: watch.session_id.clone(),
            exit: status.code(),
            outcome: outcome.clone(),
            transitions,
            cost_usd: watch.cost_usd,
            tokens: watch.tokens,
        })?;
        self.show(RunEvent::SessionEnded {
            number,
            session_id: watch.session_id.clone(),
            exit: status.code(),
            outcome: outcome.to_string(),
            transitions,
            seconds: started.elapsed().as_secs(),
            cost_usd: watch.cost_usd,
            tokens: watch.tokens,
        })?;
        if cut {
            self.show(RunEvent::WindowClosed { number })?;
        }
        if outcome == SessionOutcome::Crash {
            warn_crash(number, &watch, &session);
        }
        Ok((report, was_interrupted, cut))
    }

    fn on_event(&self, number: u32, watch: &mut Observed, event: SessionEvent) -> Result<()> {
        match watch.take(number, event) {
            Some(event) => self.show(event),
            None => Ok(()),
        }
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
                    plan.phase_count(),
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
    fn notify(&self, phase: Option<&PhaseId>, reason: &str, kind: StopKind) -> Result<()> {
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
            .env(env::CHECKPOINT_STOP, kind.as_str())
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
        kind: StopKind,
        reason: String,
        phase: Option<PhaseId>,
        commands: Vec<String>,
    ) -> Result<u8> {
        let code = failure::exit_code_of_stop(kind);
        self.stopped.set(kind);
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
            kind,
            reason,
            phase: phase.map(|phase| phase.to_string()),
            commands,
            exit_code: code,
        })?;
        Ok(code)
    }
}

/// Says on stderr why a session failed: its error result and the tail of its stderr.
fn warn_crash(number: u32, watch: &Observed, session: &Session) {
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
