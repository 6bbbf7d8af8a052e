//! Tests of the runner's decisions: each feature through `check`, from a workflow and the
//! sessions so far to the next step.

use chrono::{DateTime, Duration, TimeZone, Utc};

use super::{
    MAX_RESET_AHEAD, Reset, RunLimits, RunState, SessionReport, SessionVerdict, Step, StopKind,
    diverged,
};
use crate::{
    Config, PhaseId, PhasePlan, Plan, Transition, Workflow, WorkflowId, apply,
    budget::{Budget, Spending, Usage},
    resume::{self, PlanOptions},
    testing::{Files, complete, phase, start},
};

fn at(second: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap() + Duration::seconds(second)
}

/// A workflow from phase specs (a `!` suffix asks for approval), after `transitions`.
fn workflow(specs: &[&str], transitions: &[Transition]) -> Workflow {
    let phases = specs
        .iter()
        .map(|spec| {
            let mut plan = PhasePlan::from_spec(spec.trim_end_matches('!')).unwrap();
            plan.requires_approval = spec.ends_with('!');
            plan
        })
        .collect();
    let mut workflow = Plan {
        phases,
        ..Plan::default()
    }
    .into_workflow(WorkflowId::new("w").unwrap(), None, at(0))
    .unwrap();
    for transition in transitions {
        let seq = workflow.seq + 1;
        apply(&mut workflow, transition, seq, at(1)).unwrap();
    }
    workflow
}

fn limits() -> RunLimits {
    RunLimits {
        max_sessions: None,
        max_wait: Duration::hours(6),
        until: None,
        budget: Budget::default(),
        windows: Vec::new(),
    }
}

fn step(state: &RunState, workflow: &Workflow, limits: &RunLimits, now: DateTime<Utc>) -> Step {
    let findings = resume::validate(workflow, &[], &Files(Vec::new()), &Config::default(), now);
    let plan = resume::plan(
        workflow,
        findings,
        &Files(Vec::new()),
        &PlanOptions {
            config: Config::default(),
            now,
        },
    );
    state.next(&plan, limits, now, &Utc)
}

/// A short rendering of a step, for inline snapshots.
fn show(step: &Step) -> String {
    match step {
        Step::Session { phase, resume } => format!(
            "session phase={} resume={}",
            phase.as_ref().map_or("-", PhaseId::as_str),
            resume.as_deref().unwrap_or("-")
        ),
        Step::Wait { until, reason, .. } => {
            format!("wait {}s: {reason}", (*until - at(0)).num_seconds())
        }
        Step::Stop {
            kind,
            reason,
            phase,
            commands,
        } => format!(
            "stop {kind:?} phase={}: {reason}\n{}",
            phase.as_ref().map_or("-", PhaseId::as_str),
            commands.join("\n")
        ),
    }
}

fn ended(exit: Option<i32>, transitions: u32) -> SessionReport {
    SessionReport {
        session_id: Some("s-1".into()),
        exit,
        transitions,
        rate_limited: false,
        reset: None,
        ignored: None,
        ended_at: at(0),
        cost_usd: None,
        tokens: None,
        usage: Vec::new(),
    }
}

fn rate_limited(reset_at: Option<DateTime<Utc>>) -> SessionReport {
    limited_until(reset_at.map(Reset::precise))
}

fn limited_until(reset: Option<Reset>) -> SessionReport {
    SessionReport {
        rate_limited: true,
        reset,
        exit: Some(1),
        ..ended(Some(1), 0)
    }
}

#[test]
fn a_ready_phase_starts_a_fresh_session() {
    let workflow = workflow(&["a", "b:a"], &[]);
    insta::assert_snapshot!(show(&step(&RunState::default(), &workflow, &limits(), at(0))), @"session phase=a resume=-");
}

#[test]
fn finished_work_is_never_handed_out_again() {
    let workflow = workflow(&["a", "b:a", "c:b"], &[start("a"), complete("a")]);
    insta::assert_snapshot!(show(&step(&RunState::default(), &workflow, &limits(), at(0))), @"session phase=b resume=-");
    let workflow = workflow_done();
    insta::assert_snapshot!(show(&step(&RunState::default(), &workflow, &limits(), at(0))), @"stop Finished phase=-: every phase is complete");
}

fn workflow_done() -> Workflow {
    workflow(
        &["a", "b:a"],
        &[start("a"), complete("a"), start("b"), complete("b")],
    )
}

#[test]
fn until_stops_once_that_phase_is_done() {
    let workflow = workflow(&["a", "b:a"], &[start("a"), complete("a")]);
    let limits = RunLimits {
        until: Some(phase("a")),
        ..limits()
    };
    insta::assert_snapshot!(show(&step(&RunState::default(), &workflow, &limits, at(0))), @"stop Finished phase=a: phase `a` is done (`--until`)");
}

#[test]
fn an_approval_gate_needs_a_person_with_the_commands() {
    let workflow = workflow(&["a!", "b:a"], &[start("a"), complete("a")]);
    insta::assert_snapshot!(show(&step(&RunState::default(), &workflow, &limits(), at(0))), @r#"
    stop NeedsPerson phase=a: phase `a` is done and waits at its approval gate; ask the user, do not redo the work
    checkpoint approve a
    checkpoint reject a --reason "<why>"
    checkpoint run w
    "#);
}

#[test]
fn repeated_failures_need_a_person() {
    let fail = || Transition::PhaseFail {
        phase: phase("a"),
        reason: "tests fail".into(),
    };
    let workflow = workflow(
        &["a"],
        &[start("a"), fail(), start("a"), fail(), start("a"), fail()],
    );
    let shown = show(&step(&RunState::default(), &workflow, &limits(), at(0)));
    assert!(shown.starts_with("stop NeedsPerson phase=a"), "{shown}");
    assert!(shown.contains("checkpoint start a --force"), "{shown}");
}

#[test]
fn max_sessions_bounds_everything() {
    let workflow = workflow(&["a"], &[]);
    let limits = RunLimits {
        max_sessions: Some(2),
        ..limits()
    };
    let mut state = RunState::default();
    assert!(state.record(&ended(Some(0), 1), &limits).is_none());
    insta::assert_snapshot!(show(&step(&state, &workflow, &limits, at(0))), @"session phase=a resume=-");
    assert!(state.record(&ended(Some(0), 1), &limits).is_none());
    insta::assert_snapshot!(show(&step(&state, &workflow, &limits, at(0))), @r"
    stop Limit phase=a: 2 sessions ran (`--max-sessions`)
    checkpoint run w
    ");
}

#[test]
fn two_stalls_in_a_row_stop_for_a_person() {
    let limits = limits();
    let mut state = RunState::default();
    assert_eq!(
        SessionVerdict::of(&ended(Some(0), 0)),
        SessionVerdict::Stall
    );
    assert!(state.record(&ended(Some(0), 0), &limits).is_none());
    insta::assert_snapshot!(show(&state.record(&ended(Some(0), 0), &limits).unwrap()), @r"
    stop NeedsPerson phase=-: 2 sessions in a row ended without recording any work
    checkpoint resume
    checkpoint log
    ");
    // Progress in between starts the count again.
    let mut state = RunState::default();
    assert!(state.record(&ended(Some(0), 0), &limits).is_none());
    assert!(state.record(&ended(Some(0), 3), &limits).is_none());
    assert!(state.record(&ended(Some(0), 0), &limits).is_none());
}

#[test]
fn a_rate_limit_waits_for_its_reset_and_resumes_the_session() {
    let workflow = workflow(&["a"], &[start("a")]);
    let mut state = RunState::default();
    let wait = state
        .record(&rate_limited(Some(at(30))), &limits())
        .unwrap();
    insta::assert_snapshot!(show(&wait), @"wait 32s: rate limit; it resets at 2026-03-01T12:00:30+00:00");
    insta::assert_snapshot!(show(&step(&state, &workflow, &limits(), at(32))), @"session phase=a resume=s-1");
    // A session that then makes progress is not continued: the next one starts fresh.
    assert!(state.record(&ended(Some(0), 2), &limits()).is_none());
    insta::assert_snapshot!(show(&step(&state, &workflow, &limits(), at(40))), @"session phase=a resume=-");
}

#[test]
fn a_reset_beyond_max_wait_stops_at_the_limit() {
    let limits = RunLimits {
        max_wait: Duration::minutes(10),
        ..limits()
    };
    let mut state = RunState::default();
    let stop = state
        .record(&rate_limited(Some(at(3600))), &limits)
        .unwrap();
    insta::assert_snapshot!(show(&stop), @r"
    stop Limit phase=-: rate limit; it resets at 2026-03-01T13:00:00+00:00: longer than `--max-wait` (10m00s)
    checkpoint run
    ");
}

#[test]
fn without_a_reset_time_the_wait_backs_off_up_to_max_wait() {
    let limits = RunLimits {
        max_wait: Duration::minutes(5),
        ..limits()
    };
    let mut state = RunState::default();
    let waits: Vec<String> = (0..4)
        .map(|_| show(&state.record(&rate_limited(None), &limits).unwrap()))
        .collect();
    insta::assert_snapshot!(waits.join("\n"), @r"
    wait 60s: rate limit without a reset time; backing off 1m00s
    wait 120s: rate limit without a reset time; backing off 2m00s
    wait 240s: rate limit without a reset time; backing off 4m00s
    wait 300s: rate limit without a reset time; backing off 5m00s
    ");
}

#[test]
fn crashes_are_retried_with_backoff_in_a_fresh_session() {
    let workflow = workflow(&["a"], &[start("a")]);
    let mut state = RunState::default();
    let first = show(&state.record(&ended(Some(1), 0), &limits()).unwrap());
    let second = show(&state.record(&ended(None, 0), &limits()).unwrap());
    insta::assert_snapshot!(format!("{first}\n{second}"), @r"
    wait 10s: the session failed (exit 1); retrying in 10s
    wait 20s: the session failed (a signal); retrying in 20s
    ");
    insta::assert_snapshot!(show(&step(&state, &workflow, &limits(), at(30))), @"session phase=a resume=-");
    // A crash is not a stall: two crashes do not stop for a person.
    assert_eq!(state.stalls, 0);
}

#[test]
fn a_pause_with_a_time_is_waited_out() {
    let pause = Transition::Pause {
        reason: "rate limit".into(),
        until: Some(at(600)),
    };
    let workflow = workflow(&["a"], &[start("a"), pause]);
    insta::assert_snapshot!(show(&step(&RunState::default(), &workflow, &limits(), at(0))), @"wait 600s: paused (rate limit) until 2026-03-01T12:10:00+00:00");
}

#[test]
fn run_events_are_not_work() {
    let event = Transition::RunWait {
        until: at(5),
        reason: "rate limit".into(),
        kind: None,
    };
    assert!(!event.is_work());
    assert!(event.is_run_event());
    assert!(start("a").is_work());
    assert!(!start("a").is_run_event());
    let heartbeat = Transition::Heartbeat {
        source: "Stop".into(),
        session_id: None,
    };
    assert!(!heartbeat.is_work());
}

#[test]
fn a_limit_the_client_got_over_by_itself_is_progress() {
    let report = SessionReport {
        exit: Some(0),
        transitions: 3,
        ..rate_limited(Some(at(30)))
    };
    assert_eq!(SessionVerdict::of(&report), SessionVerdict::Progress);
    let mut state = RunState::default();
    assert!(state.record(&report, &limits()).is_none());
    assert_eq!(state.resume, None);
    // Ending on the limit is a limit, whatever the exit code says.
    let report = SessionReport {
        exit: Some(0),
        transitions: 0,
        ..rate_limited(None)
    };
    assert_eq!(SessionVerdict::of(&report), SessionVerdict::RateLimit);
}

#[test]
fn a_divergence_stops_for_a_person_with_the_commands_that_resolve_it() {
    let Step::Stop {
        kind,
        reason,
        commands,
        ..
    } = diverged("w", "origin", "`w` diverged".into(), false)
    else {
        panic!("a divergence stops the run");
    };
    assert_eq!(kind, StopKind::NeedsPerson);
    assert_eq!(reason, "`w` diverged");
    assert!(commands[0].starts_with("checkpoint --workflow w pull origin --theirs"));
    assert!(commands[1].starts_with("checkpoint --workflow w pull origin --ours"));
    assert_eq!(commands[2], "checkpoint run w --sync --remote origin");
    let Step::Stop { commands, .. } = diverged("w", "up", String::new(), true) else {
        panic!("a divergence stops the run");
    };
    assert!(commands[2].starts_with("checkpoint --workflow w pull up --merge"));
    assert_eq!(commands.len(), 4);
}

fn coarse(at: DateTime<Utc>, resolution: Duration) -> Reset {
    Reset { at, resolution }
}

#[test]
fn a_precise_reset_beats_a_coarse_one_whatever_order_they_arrive_in() {
    let precise = Reset::precise(at(5));
    let minute = coarse(at(-20), Duration::minutes(1));
    let hour = coarse(at(-20), Duration::hours(1));
    assert_eq!(precise.better(minute), precise);
    assert_eq!(minute.better(precise), precise);
    assert_eq!(hour.better(minute), minute);
    assert_eq!(minute.better(hour), minute);
    // Of two equally precise readings, the newer.
    assert_eq!(precise.better(Reset::precise(at(9))), Reset::precise(at(9)));
    assert_eq!(
        minute.better(coarse(at(40), Duration::minutes(1))).at,
        at(40)
    );
}

#[test]
fn a_coarse_reset_passed_by_less_than_its_resolution_is_now_not_tomorrow() {
    let show_for = |reset: Reset| {
        let mut state = RunState::default();
        show(
            &state
                .record(&limited_until(Some(reset)), &limits())
                .unwrap(),
        )
    };
    // "resets 3:46pm" read 20 s after 15:46, "resets 2pm" read at 14:00:20 and at 14:59:59.
    for (passed, resolution) in [
        (20, Duration::minutes(1)),
        (59, Duration::minutes(1)),
        (20, Duration::hours(1)),
        (3599, Duration::hours(1)),
        (0, Duration::minutes(1)),
    ] {
        let shown = show_for(coarse(at(-passed), resolution));
        assert!(
            shown.starts_with("wait 2s: rate limit; it resets now"),
            "{passed} {shown}"
        );
    }
    // Passed by its resolution or more: no reset time, a backoff (never a 2 s loop).
    for (passed, resolution) in [(60, Duration::minutes(1)), (3600, Duration::hours(1))] {
        let shown = show_for(coarse(at(-passed), resolution));
        assert!(
            shown.starts_with("wait 60s: rate limit; its reset time"),
            "{shown}"
        );
        assert!(
            shown.ends_with("is not in the future; backing off 1m00s"),
            "{shown}"
        );
    }
    // Ahead, a coarse time is waited for like a precise one.
    insta::assert_snapshot!(show_for(coarse(at(600), Duration::minutes(1))), @"wait 602s: rate limit; it resets at 2026-03-01T12:10:00+00:00 (said to the minute)");
    // "Now" again right after a wait for "now" backs off instead.
    let mut state = RunState::default();
    let reset = Some(coarse(at(-5), Duration::hours(1)));
    let first = show(&state.record(&limited_until(reset), &limits()).unwrap());
    let second = show(&state.record(&limited_until(reset), &limits()).unwrap());
    assert!(first.starts_with("wait 2s:"), "{first}");
    assert!(second.starts_with("wait 120s:"), "{second}");
}

#[test]
fn a_reset_not_in_the_future_is_no_reset_time_and_backs_off() {
    for reset in [at(0), at(-1), at(-86_400), DateTime::<Utc>::MIN_UTC] {
        let mut state = RunState::default();
        let waits: Vec<String> = (0..3)
            .map(|_| show(&state.record(&rate_limited(Some(reset)), &limits()).unwrap()))
            .collect();
        for (wait, seconds) in waits.iter().zip(["60s", "120s", "240s"]) {
            assert!(
                wait.starts_with(&format!("wait {seconds}: rate limit; its reset time")),
                "{wait}"
            );
            assert!(wait.contains("is not in the future; backing off"), "{wait}");
        }
    }
    // Zero and negative Unix times read as such, and are then passed.
    for secs in [0, -1, -5_000_000_000] {
        let reset = Reset::from_unix_seconds(secs, at(0)).unwrap();
        let mut state = RunState::default();
        let shown = show(
            &state
                .record(&limited_until(Some(reset)), &limits())
                .unwrap(),
        );
        assert!(shown.starts_with("wait 60s:"), "{secs}: {shown}");
    }
}

#[test]
fn absurd_times_and_delays_are_missing_and_said_never_a_panic() {
    let now = at(0);
    // `resetsAt` of 8210266876799 is chrono's last second: believable by no one.
    for secs in [8_210_266_876_799, 8_210_266_876_800, i64::MAX, i64::MIN] {
        let err = Reset::from_unix_seconds(secs, now).unwrap_err();
        assert!(err.contains(&secs.to_string()), "{err}");
    }
    let err = Reset::from_unix_seconds(now.timestamp() + 40 * 86_400, now).unwrap_err();
    assert!(err.ends_with("is more than 744h00m ahead"), "{err}");
    assert!(Reset::from_unix_seconds(now.timestamp() + 7 * 86_400, now).is_ok());
    // `retry_delay_ms` of 2^63-1, and the like.
    for delay in [u64::MAX, i64::MAX as u64, 1 << 62, 40 * 86_400_000] {
        let err = Reset::after_delay(delay, now).unwrap_err();
        assert!(err.contains(&delay.to_string()), "{err}");
    }
    assert_eq!(Reset::after_delay(4000, now).unwrap().at, at(4));
    assert_eq!(Reset::after_delay(0, now).unwrap().at, now);
    // Near the end of time, nothing overflows.
    assert!(Reset::from_unix_seconds(1, DateTime::<Utc>::MAX_UTC).is_ok());
    assert!(Reset::after_delay(1000, DateTime::<Utc>::MAX_UTC).is_err());
    // A report carrying one anyway (or one the stream gave and the client dropped) backs off.
    for reset in [
        DateTime::<Utc>::MAX_UTC,
        now + MAX_RESET_AHEAD + Duration::seconds(1),
    ] {
        let mut state = RunState::default();
        let shown = show(&state.record(&rate_limited(Some(reset)), &limits()).unwrap());
        assert!(
            shown.starts_with("wait 60s: rate limit; its reset time"),
            "{shown}"
        );
        assert!(
            shown.contains("ahead, not believed; backing off 1m00s"),
            "{shown}"
        );
    }
    let mut state = RunState::default();
    let report = SessionReport {
        ignored: Some("the reset time 8210266876799 is more than 744h00m ahead".into()),
        ..rate_limited(None)
    };
    insta::assert_snapshot!(show(&state.record(&report, &limits()).unwrap()), @"wait 60s: rate limit without a usable reset time (the reset time 8210266876799 is more than 744h00m ahead); backing off 1m00s");
    // A session ending at the end of time still gets a wait, not a panic.
    let mut state = RunState::default();
    let report = SessionReport {
        ended_at: DateTime::<Utc>::MAX_UTC,
        ..ended(Some(1), 0)
    };
    let Some(Step::Wait { until, .. }) = state.record(&report, &limits()) else {
        panic!("a crash waits");
    };
    assert_eq!(until, DateTime::<Utc>::MAX_UTC);
}

#[test]
fn max_wait_zero_keeps_a_minimum_backoff() {
    let limits = RunLimits {
        max_wait: Duration::zero(),
        ..limits()
    };
    let mut state = RunState::default();
    let crashes: Vec<String> = (0..3)
        .map(|_| show(&state.record(&ended(Some(1), 0), &limits).unwrap()))
        .collect();
    insta::assert_snapshot!(crashes.join("\n"), @r"
    wait 5s: the session failed (exit 1); retrying in 5s
    wait 5s: the session failed (exit 1); retrying in 5s
    wait 5s: the session failed (exit 1); retrying in 5s
    ");
    let mut state = RunState::default();
    insta::assert_snapshot!(show(&state.record(&rate_limited(None), &limits).unwrap()), @"wait 5s: rate limit without a reset time; backing off 5s");
    // A known reset is still a wait longer than `--max-wait`: the run stops.
    let mut state = RunState::default();
    let shown = show(&state.record(&rate_limited(Some(at(3))), &limits).unwrap());
    assert!(shown.starts_with("stop Limit"), "{shown}");
}

fn usage(window: &str, utilization: f64, resets_at: Option<DateTime<Utc>>) -> Usage {
    Usage {
        window: Some(window.into()),
        utilization,
        resets_at,
    }
}

fn with_budget(budget: Budget) -> RunLimits {
    RunLimits { budget, ..limits() }
}

/// A session that did its work and said what it spent.
fn spent(cost_usd: Option<f64>, tokens: Option<u64>, usage: Vec<Usage>) -> SessionReport {
    SessionReport {
        cost_usd,
        tokens,
        usage,
        ..ended(Some(0), 2)
    }
}

#[test]
fn a_cost_or_token_cap_stops_once_the_total_reaches_it() {
    let workflow = workflow(&["a", "b:a", "c:b"], &[]);
    let limits = with_budget(Budget {
        max_cost: Some(1.0),
        max_tokens: Some(10_000),
        ..Budget::default()
    });
    let mut state = RunState::default();
    assert_eq!(
        state.record(&spent(Some(0.5), Some(4000), Vec::new()), &limits),
        None
    );
    insta::assert_snapshot!(show(&step(&state, &workflow, &limits, at(0))), @"session phase=a resume=-");
    // Just under; then exactly at the cap.
    state.record(&spent(Some(0.49), Some(100), Vec::new()), &limits);
    insta::assert_snapshot!(show(&step(&state, &workflow, &limits, at(0))), @"session phase=a resume=-");
    state.record(&spent(Some(0.01), None, Vec::new()), &limits);
    insta::assert_snapshot!(show(&step(&state, &workflow, &limits, at(0))), @r"
    stop Limit phase=a: the cost cap is reached: spent $1.00 and 4100 tokens in 3 sessions (`--max-cost` $1.00)
    checkpoint run w
    ");
    // Tokens alone; a huge count saturates.
    let mut state = RunState::default();
    state.record(&spent(None, Some(u64::MAX), Vec::new()), &limits);
    state.record(&spent(None, Some(u64::MAX), Vec::new()), &limits);
    insta::assert_snapshot!(show(&step(&state, &workflow, &limits, at(0))), @r"
    stop Limit phase=a: the token cap is reached: spent $0.00 and 18446744073709551615 tokens in 2 sessions (`--max-tokens` 10000)
    checkpoint run w
    ");
    // A cost that is negative, not a number or infinite counts as none.
    let mut state = RunState::default();
    for cost in [-5.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        state.record(&spent(Some(cost), None, Vec::new()), &limits);
    }
    assert_eq!(state.spent.cost_usd, 0.0);
    // A cap of zero starts nothing.
    let zero = with_budget(Budget {
        max_cost: Some(0.0),
        ..Budget::default()
    });
    assert!(matches!(
        step(&RunState::default(), &workflow, &zero, at(0)),
        Step::Stop {
            kind: StopKind::Limit,
            ..
        }
    ));
}

#[test]
fn spending_since_counts_only_the_sessions_from_then() {
    let sessions = [
        (at(-3600), Some(5.0), Some(100)),
        (at(-1), Some(1.0), None),
        (at(0), Some(2.0), Some(10)),
        (at(60), None, Some(5)),
    ];
    let spending = Spending::since(sessions, at(0));
    assert_eq!(
        (spending.sessions, spending.cost_usd, spending.tokens),
        (2, 2.0, 15)
    );
    assert_eq!(Spending::since(sessions, at(3600)).sessions, 0);
    assert_eq!(
        Spending::since(sessions, DateTime::<Utc>::MIN_UTC).sessions,
        4
    );
}

#[test]
fn usage_at_or_above_the_cap_waits_for_its_window_to_reset() {
    let workflow = workflow(&["a"], &[]);
    let limits = with_budget(Budget {
        max_usage: Some(80.0),
        ..Budget::default()
    });
    let run = |readings: Vec<Usage>, now: DateTime<Utc>| {
        let mut state = RunState::default();
        state.record(&spent(None, None, readings), &limits);
        show(&step(&state, &workflow, &limits, now))
    };
    // Below the cap, at it, above it; the wait ends two seconds after the reset.
    insta::assert_snapshot!(run(vec![usage("five_hour", 0.79, Some(at(600)))], at(0)), @"session phase=a resume=-");
    insta::assert_snapshot!(run(vec![usage("five_hour", 0.8, Some(at(600)))], at(0)), @"wait 602s: the five_hour window is at 80% of its limit (`--max-usage` 80%); it resets at 2026-03-01T12:10:00+00:00");
    // Over 100% (the client reports it past a window's cap).
    insta::assert_snapshot!(run(vec![usage("five_hour", 1.3, Some(at(60)))], at(0)), @"wait 62s: the five_hour window is at 130% of its limit (`--max-usage` 80%); it resets at 2026-03-01T12:01:00+00:00");
    // A reading whose window has reset (now, or just past) is stale.
    insta::assert_snapshot!(run(vec![usage("five_hour", 0.95, Some(at(600)))], at(600)), @"session phase=a resume=-");
    insta::assert_snapshot!(run(vec![usage("five_hour", 0.95, Some(at(600)))], at(601)), @"session phase=a resume=-");
    // Two windows over the cap: until the later one resets; the newest reading of a window wins.
    insta::assert_snapshot!(run(vec![usage("five_hour", 0.9, Some(at(60))), usage("seven_day", 0.85, Some(at(3600)))], at(0)), @"wait 3602s: the seven_day window is at 85% of its limit (`--max-usage` 80%); it resets at 2026-03-01T13:00:00+00:00");
    insta::assert_snapshot!(run(vec![usage("five_hour", 0.9, Some(at(60))), usage("five_hour", 0.1, Some(at(60)))], at(0)), @"session phase=a resume=-");
    // A reset beyond `--max-wait` stops (exit 10), as a far rate limit does.
    insta::assert_snapshot!(run(vec![usage("seven_day", 0.9, Some(at(7 * 86400)))], at(0)), @r"
    stop Limit phase=-: the seven_day window is at 90% of its limit (`--max-usage` 80%); it resets at 2026-03-08T12:00:00+00:00: longer than `--max-wait` (6h00m)
    checkpoint run
    ");
    // Above the cap with no reset time: nobody knows when it goes down, so it stops.
    insta::assert_snapshot!(run(vec![usage("five_hour", 0.9, None)], at(0)), @r"
    stop Limit phase=a: the five_hour window is at 90% of its limit (`--max-usage` 80%), and the client said no reset time
    checkpoint run w
    ");
    // Readings that are not numbers, or negative, are dropped.
    insta::assert_snapshot!(run(vec![usage("five_hour", f64::NAN, Some(at(60))), usage("seven_day", -1.0, Some(at(60))), usage("x", f64::INFINITY, Some(at(60)))], at(0)), @"session phase=a resume=-");
    // No `--max-usage`: usage never holds a session back.
    let mut state = RunState::default();
    state.record(
        &spent(None, None, vec![usage("five_hour", 1.0, Some(at(60)))]),
        &super::tests::limits(),
    );
    insta::assert_snapshot!(show(&step(&state, &workflow, &super::tests::limits(), at(0))), @"session phase=a resume=-");
}

#[test]
fn outside_every_window_the_runner_waits_for_the_next_opening() {
    let workflow = workflow(&["a"], &[]);
    let limits = RunLimits {
        windows: vec![
            "12:01-13:00".parse().unwrap(),
            "22:00-07:00".parse().unwrap(),
        ],
        ..limits()
    };
    // 12:00:00 UTC: the window opens in a minute; at 12:01 a session starts.
    insta::assert_snapshot!(show(&step(&RunState::default(), &workflow, &limits, at(0))), @"wait 60s: outside the run's windows (12:01-13:00, 22:00-07:00); the next opens at 2026-03-01T12:01:00+00:00");
    insta::assert_snapshot!(show(&step(&RunState::default(), &workflow, &limits, at(60))), @"session phase=a resume=-");
    // At 13:00 it closed: the night window is next, ten hours on, past `--max-wait` and still a
    // wait (the user chose the hours).
    insta::assert_snapshot!(show(&step(&RunState::default(), &workflow, &limits, at(3600))), @"wait 36000s: outside the run's windows (12:01-13:00, 22:00-07:00); the next opens at 2026-03-01T22:00:00+00:00");
    // A finished workflow stops whatever the hour.
    insta::assert_snapshot!(show(&step(&RunState::default(), &workflow_done(), &limits, at(3600))), @"stop Finished phase=-: every phase is complete");
}

#[test]
fn run_all_takes_unfinished_workflows_by_priority_then_in_list_order() {
    // (id, priority, finished), in `list`'s order.
    let listed = vec![
        ("newest", None, false),
        ("done", Some(100), true),
        ("low", Some(-1), false),
        ("urgent", Some(5), false),
        ("older", None, false),
        ("also-urgent", Some(5), false),
        ("zero", Some(0), false),
        ("max", Some(i32::MAX), false),
        ("min", Some(i32::MIN), false),
    ];
    assert_eq!(
        super::all_order(listed),
        [
            "max",
            "urgent",
            "also-urgent",
            "newest",
            "older",
            "zero",
            "low",
            "min"
        ]
    );
    assert!(super::all_order::<&str>(Vec::new()).is_empty());
}

#[test]
fn run_all_exits_with_its_most_serious_stop_and_skips_only_a_person() {
    use super::{all_goes_on, most_serious};
    assert_eq!(most_serious(&[]), StopKind::Finished);
    assert_eq!(
        most_serious(&[StopKind::Finished, StopKind::Finished]),
        StopKind::Finished
    );
    assert_eq!(
        most_serious(&[
            StopKind::Finished,
            StopKind::NeedsPerson,
            StopKind::Finished
        ]),
        StopKind::NeedsPerson
    );
    assert_eq!(
        most_serious(&[StopKind::Limit, StopKind::NeedsPerson]),
        StopKind::NeedsPerson
    );
    assert_eq!(
        most_serious(&[StopKind::NeedsPerson, StopKind::Interrupted]),
        StopKind::Interrupted
    );
    assert_eq!(
        most_serious(&[StopKind::Finished, StopKind::Limit]),
        StopKind::Limit
    );
    assert!(all_goes_on(StopKind::Finished) && all_goes_on(StopKind::NeedsPerson));
    assert!(!all_goes_on(StopKind::Limit) && !all_goes_on(StopKind::Interrupted));
}

#[test]
fn the_all_order_of_stops_puts_the_most_serious_last() {
    let mut kinds = [
        StopKind::Interrupted,
        StopKind::Finished,
        StopKind::NeedsPerson,
        StopKind::Limit,
    ];
    kinds.sort_by_key(|kind| kind.severity());
    assert_eq!(
        kinds,
        [
            StopKind::Finished,
            StopKind::Limit,
            StopKind::NeedsPerson,
            StopKind::Interrupted
        ]
    );
}

/// A rate limit with no reset of its own resets after the client's last retry delay, counted
/// from the session's end; a reset the client said wins; no limit, or no delay, is no reset; a
/// delay past belief is an error.
#[test]
fn a_limit_with_no_reset_counts_the_last_retry_delay() {
    let ended = DateTime::parse_from_rfc3339("2026-03-01T10:00:00Z")
        .unwrap()
        .with_timezone(&Utc);
    let after = |ms| Reset::after_delay(ms, ended).unwrap();
    assert_eq!(
        Reset::of_session(None, true, Some(30_000), ended),
        Ok(Some(after(30_000)))
    );
    let said = Reset::precise(ended + Duration::hours(1));
    assert_eq!(
        Reset::of_session(Some(said), true, Some(30_000), ended),
        Ok(Some(said))
    );
    assert_eq!(
        Reset::of_session(None, false, Some(30_000), ended),
        Ok(None)
    );
    assert_eq!(Reset::of_session(None, true, None, ended), Ok(None));
    assert!(Reset::of_session(None, true, Some(u64::MAX), ended).is_err());
}

/// A stop's name is its spelling in the runner's JSON events, for every stop.
#[test]
fn a_stop_is_named_as_its_json_spells_it() {
    for kind in [
        StopKind::Finished,
        StopKind::NeedsPerson,
        StopKind::Limit,
        StopKind::Interrupted,
    ] {
        assert_eq!(
            serde_json::to_value(kind).unwrap(),
            serde_json::Value::from(kind.as_str())
        );
    }
}
