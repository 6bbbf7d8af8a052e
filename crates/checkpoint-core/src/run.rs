//! The decisions of the unattended runner, `checkpoint run`: whether to start an agent session,
//! wait, or stop, from the resume plan and what the sessions so far did.
//!
//! Pure: the CLI runs the processes, reads the clock and journals the events.

#[cfg(test)]
mod tests;

use chrono::{DateTime, Duration, TimeZone, Utc};
use serde::{Deserialize, Serialize};

pub use crate::transition::{SessionOutcome, WaitKind};

use crate::{
    budget::{self, Allowance, Budget, Spending, Usage},
    id::PhaseId,
    resume::{Action, ResumePlan},
    window::{self, Window},
};

/// How long the runner waits after a rate limit's reset before it continues.
pub(crate) const RESET_MARGIN: Duration = Duration::seconds(2);

/// The first wait after a rate limit without a reset time; it doubles after each one in a row.
pub(crate) const RATE_LIMIT_BACKOFF: Duration = Duration::seconds(60);

/// The first wait after a crashed session; it doubles after each one in a row.
pub(crate) const CRASH_BACKOFF: Duration = Duration::seconds(10);

/// Sessions in a row that record no work before the runner stops for a person.
pub(crate) const MAX_STALLS: u32 = 2;

/// The shortest wait after a crash or a limit, whatever `--max-wait` says: a runner never
/// starts sessions in a tight loop.
pub(crate) const MIN_BACKOFF: Duration = Duration::seconds(5);

/// The furthest a reset time or a retry delay from a stream is believed: the clients' limits
/// reset within hours, or a week; anything further is a broken or forged value, treated as
/// missing.
pub(crate) const MAX_RESET_AHEAD: Duration = Duration::days(31);

/// A limit's reset time, as the client said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reset {
    /// The time said.
    pub at: DateTime<Utc>,
    /// How precisely it was said: zero for an exact time (a Unix time, a delay), a minute for
    /// "3:46pm", an hour for "2pm".
    pub resolution: Duration,
}

impl Reset {
    /// An exact reset time.
    pub fn precise(at: DateTime<Utc>) -> Reset {
        Reset {
            at,
            resolution: Duration::zero(),
        }
    }

    /// A reset said as a Unix time in seconds (`resetsAt`, `limit reached|<seconds>`), at `now`;
    /// an error says why a value cannot be believed.
    pub fn from_unix_seconds(secs: i64, now: DateTime<Utc>) -> Result<Reset, String> {
        let at = DateTime::from_timestamp(secs, 0)
            .ok_or_else(|| format!("the reset time {secs} is not a time"))?;
        Reset::checked(Reset::precise(at), now).ok_or_else(|| {
            format!(
                "the reset time {secs} is more than {} ahead",
                human_duration(MAX_RESET_AHEAD)
            )
        })
    }

    /// A reset `delay_ms` milliseconds after `now` (a retry delay); an error says why the delay
    /// cannot be believed.
    pub fn after_delay(delay_ms: u64, now: DateTime<Utc>) -> Result<Reset, String> {
        let too_long = || {
            format!(
                "the retry delay of {delay_ms} ms is more than {}",
                human_duration(MAX_RESET_AHEAD)
            )
        };
        let delay = i64::try_from(delay_ms)
            .ok()
            .and_then(Duration::try_milliseconds)
            .filter(|delay| *delay <= MAX_RESET_AHEAD)
            .ok_or_else(too_long)?;
        let at = now.checked_add_signed(delay).ok_or_else(too_long)?;
        Ok(Reset::precise(at))
    }

    /// When a session's limit resets: the reset its client said; else, for a rate limit with no
    /// reset time of its own, the delay the client last waited for (a 429's `retry-after`),
    /// counted from `ended_at`, when it gave up; an error says why that delay cannot be believed.
    pub fn of_session(
        said: Option<Reset>,
        rate_limited: bool,
        last_retry_delay_ms: Option<u64>,
        ended_at: DateTime<Utc>,
    ) -> Result<Option<Reset>, String> {
        match (said, rate_limited, last_retry_delay_ms) {
            (None, true, Some(delay_ms)) => Self::after_delay(delay_ms, ended_at).map(Some),
            _ => Ok(said),
        }
    }

    /// `reset` when it is believable at `now` (no further than [`MAX_RESET_AHEAD`]).
    pub fn checked(reset: Reset, now: DateTime<Utc>) -> Option<Reset> {
        // Near the end of time, every later time is believable.
        let believable = now
            .checked_add_signed(MAX_RESET_AHEAD)
            .is_none_or(|limit| reset.at <= limit);
        believable.then_some(reset)
    }

    /// The better of two readings of the same limit, `newer` said after `self`: an exact time
    /// beats a coarse one whatever their order, a finer one beats a coarser one, and of two
    /// equally precise ones the newer wins.
    pub fn better(self, newer: Reset) -> Reset {
        if newer.resolution <= self.resolution {
            newer
        } else {
            self
        }
    }

    /// Whether it is an exact time.
    pub fn is_precise(&self) -> bool {
        self.resolution.is_zero()
    }

    /// The reset as the runner acts on it at `now`.
    fn judge(&self, now: DateTime<Utc>) -> Judged {
        if self.at > now {
            match Reset::checked(*self, now) {
                Some(_) => Judged::Ahead(self.at),
                None => Judged::Unbelievable,
            }
        } else if now - self.at < self.resolution {
            // "Resets 3:46pm" read at 15:46:20: said to the minute, it is now, not tomorrow.
            Judged::Now
        } else {
            Judged::Passed
        }
    }

    fn describe(&self) -> String {
        let at = self.at.to_rfc3339();
        if self.is_precise() {
            at
        } else if self.resolution >= Duration::hours(1) {
            format!("{at} (said to the hour)")
        } else {
            format!("{at} (said to the minute)")
        }
    }
}

/// A reset time as the runner acts on it.
enum Judged {
    /// In the future: wait for it.
    Ahead(DateTime<Utc>),
    /// A coarse time passed by less than its resolution: it resets now.
    Now,
    /// Not in the future: no reset time.
    Passed,
    /// Further than anyone believes: no reset time.
    Unbelievable,
}

/// The runner's bounds, from its command line.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLimits {
    /// The most sessions to start; `None` is no bound.
    pub max_sessions: Option<u32>,
    /// The longest single wait.
    pub max_wait: Duration,
    /// Stop once this phase is done.
    pub until: Option<PhaseId>,
    /// The caps on what the sessions spend.
    pub budget: Budget,
    /// The local times at which sessions may start; none is any time.
    pub windows: Vec<Window>,
}

/// How an agent session ended, as the runner saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionReport {
    /// The client's session id, once the session announced it.
    pub session_id: Option<String>,
    /// The exit code; `None` when a signal ended it.
    pub exit: Option<i32>,
    /// How many transitions of work were journaled while it ran.
    pub transitions: u32,
    /// Whether it ended on a rate or usage limit.
    pub rate_limited: bool,
    /// When the limit resets, when the client said so.
    pub reset: Option<Reset>,
    /// A reset time or delay the stream gave that could not be believed, and why.
    pub ignored: Option<String>,
    /// When it ended.
    pub ended_at: DateTime<Utc>,
    /// What it cost, in dollars, as its final result said.
    pub cost_usd: Option<f64>,
    /// The tokens it used, as its final result said.
    pub tokens: Option<u64>,
    /// The usage of the client's rate-limit windows it reported, in order.
    pub usage: Vec<Usage>,
}

/// What a finished session amounted to, as the runner decides on it (the journal's
/// [`SessionOutcome`] adds `Interrupted`, which it never weighs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionVerdict {
    /// It recorded work.
    Progress,
    /// It ended normally without recording any work.
    Stall,
    /// It hit a rate or usage limit.
    RateLimit,
    /// It failed for another reason.
    Crash,
}

impl SessionVerdict {
    /// Classifies a finished session.
    pub fn of(report: &SessionReport) -> SessionVerdict {
        // A limit the client got over by itself (its own retries) did not end the session.
        let recovered = report.exit == Some(0) && report.transitions > 0;
        if report.rate_limited && !recovered {
            SessionVerdict::RateLimit
        } else if report.exit != Some(0) {
            SessionVerdict::Crash
        } else if report.transitions == 0 {
            SessionVerdict::Stall
        } else {
            SessionVerdict::Progress
        }
    }
}

impl From<SessionVerdict> for SessionOutcome {
    fn from(outcome: SessionVerdict) -> Self {
        match outcome {
            SessionVerdict::Progress => Self::Progress,
            SessionVerdict::Stall => Self::Stall,
            SessionVerdict::RateLimit => Self::RateLimit,
            SessionVerdict::Crash => Self::Crash,
        }
    }
}

/// Why the runner stops (spelled in `snake_case` in the runner's JSON events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopKind {
    /// Every phase is done, or the `--until` phase is.
    Finished,
    /// A person must decide before the work can go on.
    NeedsPerson,
    /// A bound of the runner was reached (`--max-sessions`, `--max-wait`, a budget): run it
    /// again to go on.
    Limit,
    /// A signal (Ctrl-C, SIGTERM, SIGHUP) stopped it.
    Interrupted,
}

impl StopKind {
    /// Its name, as the runner's JSON events and `CHECKPOINT_STOP` spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            StopKind::Finished => "finished",
            StopKind::NeedsPerson => "needs_person",
            StopKind::Limit => "limit",
            StopKind::Interrupted => "interrupted",
        }
    }

    /// How serious a stop is, for `run --all`, which exits with its most serious stop: an
    /// interruption, then a person needed, then a bound reached, then finished.
    pub fn severity(self) -> u8 {
        match self {
            StopKind::Finished => 0,
            StopKind::Limit => 1,
            StopKind::NeedsPerson => 2,
            StopKind::Interrupted => 3,
        }
    }
}

/// The workflows `checkpoint run --all` carries, in its order: the unfinished ones of `listed`
/// (in `list`'s order), higher `priority` first, those without one as 0, ties in `list`'s order.
pub fn all_order<T>(listed: Vec<(T, Option<i32>, bool)>) -> Vec<T> {
    let mut unfinished: Vec<(T, i32)> = listed
        .into_iter()
        .filter(|(_, _, finished)| !finished)
        .map(|(item, priority, _)| (item, priority.unwrap_or(0)))
        .collect();
    // A stable sort keeps `list`'s order among equals.
    unfinished.sort_by_key(|(_, priority)| std::cmp::Reverse(*priority));
    unfinished.into_iter().map(|(item, _)| item).collect()
}

/// Whether `run --all` goes on with the next workflow after one stopped so: a finished one or
/// one that waits for a person (reported and skipped) lets the others go on; a bound of the run
/// (a budget, `--max-sessions`) or a signal ends the whole run.
pub fn all_goes_on(kind: StopKind) -> bool {
    match kind {
        StopKind::Finished | StopKind::NeedsPerson => true,
        StopKind::Limit | StopKind::Interrupted => false,
    }
}

/// The stop `run --all` exits with: the most serious of its workflows' (finished, when none
/// ran).
pub fn most_serious(kinds: &[StopKind]) -> StopKind {
    kinds
        .iter()
        .copied()
        .max_by_key(|kind| kind.severity())
        .unwrap_or(StopKind::Finished)
}

/// The runner's next step.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Start an agent session.
    Session {
        /// The phase the plan names.
        phase: Option<PhaseId>,
        /// The session to continue, so that its context is kept.
        resume: Option<String>,
    },
    /// Wait, then plan again.
    Wait {
        /// What for.
        kind: WaitKind,
        /// Until when.
        until: DateTime<Utc>,
        /// Why, in a sentence.
        reason: String,
    },
    /// Stop.
    Stop {
        /// How.
        kind: StopKind,
        /// Why, in a sentence.
        reason: String,
        /// The phase concerned.
        phase: Option<PhaseId>,
        /// The commands a person may run next.
        commands: Vec<String>,
    },
}

/// The stop of `checkpoint run --sync` when the workflow's journal and the remote's went on from
/// the same entry: a person chooses a side with `checkpoint pull`, then runs again.
pub fn diverged(workflow: &str, remote: &str, reason: String, mergeable: bool) -> Step {
    let pull = format!("checkpoint --workflow {workflow} pull {remote}");
    let mut commands = vec![
        format!("{pull} --theirs    # keep the remote side; ours is kept as a fork"),
        format!("{pull} --ours      # keep our side; theirs is kept as a fork"),
    ];
    if mergeable {
        commands.push(format!(
            "{pull} --merge     # apply both (each side touched different phases)"
        ));
    }
    commands.push(format!(
        "checkpoint run {workflow} --sync --remote {remote}"
    ));
    Step::Stop {
        kind: StopKind::NeedsPerson,
        reason,
        phase: None,
        commands,
    }
}

/// What the runner remembers between sessions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunState {
    /// Sessions started.
    pub sessions: u32,
    /// Sessions in a row that recorded no work.
    pub stalls: u32,
    /// Rate limits in a row without a reset time.
    pub blind_rate_limits: u32,
    /// Crashes in a row.
    pub crashes: u32,
    /// The session to continue next.
    pub resume: Option<String>,
    /// What the sessions counted against the budget spent (with `--since`, from earlier runs
    /// too).
    pub spent: Spending,
    /// The client's last reading of each of its rate-limit windows.
    pub usage: Vec<Usage>,
}

impl RunState {
    /// The step to take now, given the current resume plan; `zone` is the local time zone of
    /// the windows.
    pub fn next<Tz: TimeZone>(
        &self,
        plan: &ResumePlan,
        limits: &RunLimits,
        now: DateTime<Utc>,
        zone: &Tz,
    ) -> Step {
        let stop =
            |kind, reason: String, phase: Option<&PhaseId>, commands: Vec<String>| Step::Stop {
                kind,
                reason,
                phase: phase.cloned(),
                commands,
            };
        if let Some(until) = &limits.until
            && plan.completed.iter().any(|phase| &phase.id == until)
        {
            return stop(
                StopKind::Finished,
                format!("phase `{until}` is done (`--until`)"),
                Some(until),
                Vec::new(),
            );
        }
        let next = &plan.next;
        match next.action {
            Action::Done => {
                return stop(StopKind::Finished, next.reason.clone(), None, Vec::new());
            }
            Action::Abandoned => {
                return stop(
                    StopKind::NeedsPerson,
                    next.reason.clone(),
                    None,
                    vec![format!("checkpoint resume {}", plan.workflow)],
                );
            }
            _ => {}
        }
        if plan.decision_required {
            return stop(
                StopKind::NeedsPerson,
                next.reason.clone(),
                next.phase.as_ref(),
                decision_commands(plan),
            );
        }
        if next.action == Action::Wait
            && let Some(until) = plan.paused_until
        {
            return self.wait_or_stop(WaitKind::Paused, until, next.reason.clone(), limits, now);
        }
        if limits.max_sessions.is_some_and(|max| self.sessions >= max) {
            return stop(
                StopKind::Limit,
                format!("{} sessions ran (`--max-sessions`)", self.sessions),
                next.phase.as_ref(),
                vec![format!("checkpoint run {}", plan.workflow)],
            );
        }
        match limits.budget.allows(&self.spent, &self.usage, now) {
            Allowance::Go => {}
            Allowance::WaitForReset { until, reason } => {
                let until = later(until, RESET_MARGIN);
                return self.wait_or_stop(WaitKind::Usage, until, reason, limits, now);
            }
            Allowance::Spent { reason } => {
                return stop(
                    StopKind::Limit,
                    reason,
                    next.phase.as_ref(),
                    vec![format!("checkpoint run {}", plan.workflow)],
                );
            }
        }
        if !window::is_open(&limits.windows, now, zone)
            && let Some(until) = window::next_opening(&limits.windows, now, zone)
        {
            // The user chose the hours: the wait for them is not bounded by `--max-wait`.
            return Step::Wait {
                kind: WaitKind::Window,
                until,
                reason: format!(
                    "outside the run's windows ({}); the next opens at {}",
                    describe_windows(&limits.windows),
                    until.to_rfc3339()
                ),
            };
        }
        Step::Session {
            phase: next.phase.clone(),
            resume: self.resume.clone(),
        }
    }

    /// Takes a finished session into account; returns the wait or the stop it calls for, if any.
    pub fn record(&mut self, report: &SessionReport, limits: &RunLimits) -> Option<Step> {
        self.sessions += 1;
        self.spent.add(report.cost_usd, report.tokens);
        for usage in &report.usage {
            budget::note_usage(&mut self.usage, usage.clone());
        }
        let outcome = SessionVerdict::of(report);
        if outcome != SessionVerdict::Stall {
            self.stalls = 0;
        }
        if outcome != SessionVerdict::Crash {
            self.crashes = 0;
        }
        if outcome != SessionVerdict::RateLimit {
            self.blind_rate_limits = 0;
        }
        let now = report.ended_at;
        match outcome {
            SessionVerdict::Progress => {
                self.resume = None;
                None
            }
            SessionVerdict::Stall => {
                self.resume = None;
                self.stalls += 1;
                (self.stalls >= MAX_STALLS).then(|| Step::Stop {
                    kind: StopKind::NeedsPerson,
                    reason: format!(
                        "{} sessions in a row ended without recording any work",
                        self.stalls
                    ),
                    phase: None,
                    commands: vec!["checkpoint resume".into(), "checkpoint log".into()],
                })
            }
            SessionVerdict::RateLimit => {
                // Continue the same session after the wait, so that its context is kept.
                self.resume = report.session_id.clone().or(self.resume.take());
                let judged = report.reset.map(|reset| (reset, reset.judge(now)));
                match judged {
                    Some((reset, Judged::Ahead(at))) => {
                        self.blind_rate_limits = 0;
                        let reason = format!("rate limit; it resets at {}", reset.describe());
                        match at.checked_add_signed(RESET_MARGIN) {
                            Some(until) => Some(self.wait_or_stop(
                                WaitKind::RateLimit,
                                until,
                                reason,
                                limits,
                                now,
                            )),
                            None => Some(self.blind_wait(now, limits, reason)),
                        }
                    }
                    Some((reset, Judged::Now)) if self.blind_rate_limits == 0 => {
                        self.blind_rate_limits += 1;
                        Some(Step::Wait {
                            kind: WaitKind::RateLimit,
                            until: later(now, RESET_MARGIN),
                            reason: format!(
                                "rate limit; it resets now ({} has just passed)",
                                reset.describe()
                            ),
                        })
                    }
                    Some((reset, Judged::Now | Judged::Passed)) => Some(self.blind_wait(
                        now,
                        limits,
                        format!(
                            "rate limit; its reset time {} is not in the future",
                            reset.describe()
                        ),
                    )),
                    Some((reset, Judged::Unbelievable)) => Some(self.blind_wait(
                        now,
                        limits,
                        format!(
                            "rate limit; its reset time {} is more than {} ahead, not believed",
                            reset.describe(),
                            human_duration(MAX_RESET_AHEAD)
                        ),
                    )),
                    None => Some(self.blind_wait(
                        now,
                        limits,
                        match &report.ignored {
                            Some(why) => format!("rate limit without a usable reset time ({why})"),
                            None => "rate limit without a reset time".to_owned(),
                        },
                    )),
                }
            }
            SessionVerdict::Crash => {
                self.resume = None;
                self.crashes += 1;
                let wait = backoff(CRASH_BACKOFF, self.crashes, limits);
                let exit = report
                    .exit
                    .map_or_else(|| "a signal".to_owned(), |code| format!("exit {code}"));
                Some(Step::Wait {
                    kind: WaitKind::Backoff,
                    until: later(now, wait),
                    reason: format!(
                        "the session failed ({exit}); retrying in {}",
                        human_duration(wait)
                    ),
                })
            }
        }
    }

    /// Takes into account a session the runner interrupted at its window's close
    /// (`--window-strict`): what it spent counts, and the next session continues it.
    pub fn record_cut(&mut self, report: &SessionReport) {
        self.sessions += 1;
        self.spent.add(report.cost_usd, report.tokens);
        for usage in &report.usage {
            budget::note_usage(&mut self.usage, usage.clone());
        }
        self.resume = report.session_id.clone().or(self.resume.take());
    }

    /// The wait after a limit with no usable reset time: a backoff that doubles each time in a
    /// row.
    fn blind_wait(&mut self, now: DateTime<Utc>, limits: &RunLimits, why: String) -> Step {
        self.blind_rate_limits += 1;
        let wait = backoff(RATE_LIMIT_BACKOFF, self.blind_rate_limits, limits);
        Step::Wait {
            kind: WaitKind::Backoff,
            until: later(now, wait),
            reason: format!("{why}; backing off {}", human_duration(wait)),
        }
    }

    fn wait_or_stop(
        &self,
        kind: WaitKind,
        until: DateTime<Utc>,
        reason: String,
        limits: &RunLimits,
        now: DateTime<Utc>,
    ) -> Step {
        if until - now > limits.max_wait {
            return Step::Stop {
                kind: StopKind::Limit,
                reason: format!(
                    "{reason}: longer than `--max-wait` ({})",
                    human_duration(limits.max_wait)
                ),
                phase: None,
                commands: vec!["checkpoint run".into()],
            };
        }
        Step::Wait {
            kind,
            until,
            reason,
        }
    }
}

/// `base` doubled for every failure in a row after the first, at most `--max-wait`, at least
/// [`MIN_BACKOFF`].
fn backoff(base: Duration, in_a_row: u32, limits: &RunLimits) -> Duration {
    let factor = 1_i32 << in_a_row.saturating_sub(1).min(20);
    (base * factor).min(limits.max_wait).max(MIN_BACKOFF)
}

/// `now + wait`, or the latest time there is.
fn later(now: DateTime<Utc>, wait: Duration) -> DateTime<Utc> {
    now.checked_add_signed(wait)
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// The commands that settle what the plan asks a person to decide.
fn decision_commands(plan: &ResumePlan) -> Vec<String> {
    let next = &plan.next;
    let mut commands: Vec<String> = Vec::new();
    match (next.action, next.phase.as_ref()) {
        (Action::Approve, Some(phase)) => {
            commands.push(format!("checkpoint approve {phase}"));
            commands.push(format!("checkpoint reject {phase} --reason \"<why>\""));
        }
        (Action::Confirm, _) => commands.push(format!("checkpoint resume {} --yes", plan.workflow)),
        (_, Some(phase)) => {
            commands.push(format!("checkpoint start {phase} --force"));
            commands.push(format!("checkpoint skip {phase}"));
            commands.push(format!("checkpoint resume {}", plan.workflow));
        }
        (_, None) => commands.push(format!("checkpoint resume {}", plan.workflow)),
    }
    if let Some(command) = &next.command
        && !commands.contains(command)
    {
        commands.insert(0, command.clone());
    }
    commands.push(format!("checkpoint run {}", plan.workflow));
    commands
}

/// A duration as people read it: `45s`, `3m20s`, `2h05m`.
pub fn human_duration(duration: Duration) -> String {
    let secs = duration.num_seconds().max(0);
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
    }
}

/// `22:00-07:00, 12:00-13:00`.
pub(crate) fn describe_windows(windows: &[Window]) -> String {
    windows
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
