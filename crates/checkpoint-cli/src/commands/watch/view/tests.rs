//! Tests of the watch view: the runner's activity folded from the journal, and the frame.

use checkpoint_core::{
    PhaseId, PhasePlan, Plan, Transition, Workflow, WorkflowId, apply, journal::Entry,
};
use chrono::{DateTime, Duration, TimeZone, Utc};

use super::{Frame, RunTracker, render};
use crate::output::{EffectCounts, Paint};

fn at(second: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 22, 0, 0).unwrap() + Duration::seconds(second)
}

fn phase(id: &str) -> PhaseId {
    PhaseId::new(id).unwrap()
}

/// A workflow of three phases after `steps` (second, transition), with the entries.
fn journal(steps: Vec<(i64, Transition)>) -> (Workflow, Vec<Entry>) {
    let mut workflow = Plan {
        phases: vec![
            PhasePlan::from_spec("design").unwrap(),
            PhasePlan::from_spec("build:design").unwrap(),
            PhasePlan::from_spec("docs:design").unwrap(),
        ],
        ..Plan::default()
    }
    .into_workflow(WorkflowId::new("payments").unwrap(), None, at(0))
    .unwrap();
    let mut entries = Vec::new();
    for (seq, (second, transition)) in (2..).zip(steps) {
        apply(&mut workflow, &transition, seq, at(second)).unwrap();
        entries.push(Entry {
            seq,
            at: at(second),
            transition,
        });
    }
    (workflow, entries)
}

/// The frame after `steps`, at second `now`, with the runner `alive` or not.
fn frame(steps: Vec<(i64, Transition)>, now: i64, alive: Option<bool>) -> String {
    let (workflow, entries) = journal(steps);
    let mut run = RunTracker::default();
    for entry in &entries {
        run.observe(entry);
    }
    render(
        &Frame {
            workflow: &workflow,
            effects: &EffectCounts::default(),
            last_effect: None,
            run: run.last.as_ref(),
            runner_alive: alive,
            last_entry: entries.last(),
            problem: None,
            written: &Default::default(),
            how: "live",
            now: at(now),
        },
        Paint::new(false),
    )
}

fn start(id: &str) -> Transition {
    Transition::PhaseStart {
        phase: phase(id),
        force: false,
    }
}

fn run_start() -> Transition {
    Transition::RunStart {
        pid: 42,
        client: "claude".into(),
        budget: None,
    }
}

fn session(number: u32, id: &str) -> Transition {
    Transition::RunSessionStart {
        number,
        phase: Some(phase(id)),
        resumed: None,
    }
}

#[test]
fn phases_show_their_note_and_elapsed_time() {
    let text = frame(
        vec![
            (10, start("design")),
            (
                130,
                Transition::PhaseComplete {
                    phase: phase("design"),
                    artifacts: Vec::new(),
                    commit_sha: None,
                    force: false,
                },
            ),
            (140, start("build")),
            (
                200,
                Transition::PhaseProgress {
                    phase: phase("build"),
                    note: "auth module done".into(),
                },
            ),
        ],
        400,
        None,
    );
    insta::assert_snapshot!(text, @r"
    payments  in progress
    1 of 3 phases done · updated 3 minutes ago

    ✓ design  done  5 minutes ago  · took 2m00s
    → build   in progress  · for 4m20s
              progress: auth module done
    · docs    ready

    last update: entry 5 `phase_progress` build at 22:03:20 UTC (3 minutes ago) · live
    ");
}

#[test]
fn a_runner_in_a_session_is_shown_with_its_phase() {
    let text = frame(
        vec![
            (5, run_start()),
            (6, session(1, "design")),
            (7, start("design")),
        ],
        67,
        Some(true),
    );
    insta::assert_snapshot!(text, @r"
    payments  in progress
    0 of 3 phases done · updated 1 minute ago

    → design  in progress  · for 1m00s
    · build   blocked by design
    · docs    blocked by design

    runner: `checkpoint run` pid 42, started 1 minute ago
      session 1 on design, running for 1m01s

    last update: entry 4 `phase_start` design at 22:00:07 UTC (1 minute ago) · live
    ");
}

#[test]
fn a_waiting_runner_shows_its_countdown_then_that_the_wait_is_over() {
    let steps = || {
        vec![
            (5, run_start()),
            (6, session(1, "design")),
            (
                60,
                Transition::RunSessionEnd {
                    number: 1,
                    session_id: None,
                    exit: Some(1),
                    outcome: checkpoint_core::run::SessionOutcome::RateLimit,
                    transitions: 0,
                    cost_usd: None,
                    tokens: None,
                },
            ),
            (
                61,
                Transition::RunWait {
                    until: at(361),
                    reason: "rate limit, resets at 22:06".into(),
                    kind: None,
                },
            ),
        ]
    };
    insta::assert_snapshot!(frame(steps(), 121, Some(true)), @r"
    payments  pending
    0 of 3 phases done · updated 1 minute ago

    · design  ready
    · build   blocked by design
    · docs    blocked by design

    runner: `checkpoint run` pid 42, started 2 minutes ago
      waiting until 22:06:01 UTC (in 4m00s): rate limit, resets at 22:06

    last update: entry 5 `run_wait` at 22:01:01 UTC (1 minute ago) · live
    ");
    insta::assert_snapshot!(frame(steps(), 400, Some(true)), @r"
    payments  pending
    0 of 3 phases done · updated 6 minutes ago

    · design  ready
    · build   blocked by design
    · docs    blocked by design

    runner: `checkpoint run` pid 42, started 7 minutes ago
      waited until 22:06:01 UTC: rate limit, resets at 22:06; the next session starts

    last update: entry 5 `run_wait` at 22:01:01 UTC (6 minutes ago) · live
    ");
}

#[test]
fn a_stopped_run_and_a_vanished_runner_are_told_apart() {
    let stopped = frame(
        vec![
            (5, run_start()),
            (
                9,
                Transition::RunStop {
                    reason: "every phase is done".into(),
                    exit: 0,
                },
            ),
        ],
        600,
        None,
    );
    insta::assert_snapshot!(stopped, @r"
    payments  pending
    0 of 3 phases done · updated 10 minutes ago

    · design  ready
    · build   blocked by design
    · docs    blocked by design

    last run: `checkpoint run` pid 42, started 10 minutes ago, stopped 10 minutes ago (exit 0): every phase is done

    last update: entry 3 `run_stop` at 22:00:09 UTC (10 minutes ago) · live
    ");
    let killed = frame(
        vec![(5, run_start()), (6, session(1, "design"))],
        600,
        Some(false),
    );
    insta::assert_snapshot!(killed, @r"
    payments  pending
    0 of 3 phases done · updated 10 minutes ago

    · design  ready
    · build   blocked by design
    · docs    blocked by design

    runner: `checkpoint run` pid 42, started 10 minutes ago — its process is gone; `checkpoint run` again continues

    last update: entry 3 `run_session_start` at 22:00:06 UTC (10 minutes ago) · live
    ");
}

#[test]
fn a_new_run_replaces_the_last_one() {
    let mut run = RunTracker::default();
    let (_, entries) = journal(vec![
        (5, run_start()),
        (
            9,
            Transition::RunStop {
                reason: "limit".into(),
                exit: 10,
            },
        ),
        (
            20,
            Transition::RunStart {
                pid: 43,
                client: "claude".into(),
                budget: None,
            },
        ),
    ]);
    for entry in &entries {
        run.observe(entry);
    }
    let last = run.last.unwrap();
    assert_eq!(last.pid, 43);
    assert_eq!(last.stopped, None);
    assert_eq!(last.started_at, Some(at(20)));
}

#[test]
fn a_held_phase_shows_its_sub_agent_and_last_activity() {
    let text = frame(
        vec![
            (10, start("design")),
            (
                10,
                Transition::HolderDispatch {
                    phase: phase("design"),
                    tool_use_id: "toolu_01".into(),
                    description: Some("Design the API".into()),
                    session_id: None,
                },
            ),
            (
                70,
                Transition::HolderSeen {
                    phase: phase("design"),
                    agent_id: Some("agent-7".into()),
                },
            ),
        ],
        250,
        None,
    );
    insta::assert_snapshot!(text, @r"
    payments  in progress
    0 of 3 phases done · updated 3 minutes ago

    → design  in progress  · for 4m00s
              held by sub-agent `agent-7` (Design the API), dispatched 4 minutes ago, last active 3 minutes ago
    · build   blocked by design
    · docs    blocked by design

    last update: entry 4 `holder_seen` design at 22:01:10 UTC (3 minutes ago) · live
    ");
}

#[test]
fn the_runner_line_shows_what_the_run_spent_and_its_caps() {
    let session_end = |number, cost_usd, tokens| Transition::RunSessionEnd {
        number,
        session_id: None,
        exit: Some(0),
        outcome: checkpoint_core::run::SessionOutcome::Progress,
        transitions: 1,
        cost_usd,
        tokens,
    };
    let steps = || {
        vec![
            (
                1,
                Transition::RunStart {
                    pid: 42,
                    client: "claude".into(),
                    budget: Some(checkpoint_core::budget::Budget {
                        max_cost: Some(20.0),
                        max_usage: Some(80.0),
                        max_tokens: None,
                    }),
                },
            ),
            (5, session_end(1, Some(0.5), Some(100))),
            (9, session_end(2, None, None)),
            (12, session_end(3, Some(0.25), None)),
        ]
    };
    let shown = frame(steps(), 20, Some(true));
    assert!(
        shown.contains("spent $0.75 and 100 tokens (caps: $20.00, usage 80%)"),
        "{shown}"
    );
    // No caps and nothing said: no line.
    let shown = frame(
        vec![(
            1,
            Transition::RunStart {
                pid: 42,
                client: "claude".into(),
                budget: None,
            },
        )],
        20,
        Some(true),
    );
    assert!(!shown.contains("spent"), "{shown}");
}

/// `watch` and `status` total what a run spent with the rule its budgets use: a cost that is
/// negative, infinite or not a number counts as none, whatever comes before or after it.
#[test]
fn the_spending_shown_is_the_total_the_budgets_count() {
    let costs = [
        Some(1.5),
        Some(-4.0),
        Some(f64::NAN),
        Some(f64::INFINITY),
        Some(f64::NEG_INFINITY),
        Some(0.25),
        None,
    ];
    let mut steps = vec![(
        1,
        Transition::RunStart {
            pid: 42,
            client: "claude".into(),
            budget: None,
        },
    )];
    let mut budgets = checkpoint_core::budget::Spending::default();
    for (number, cost) in (1..).zip(costs) {
        steps.push((
            i64::from(number) + 1,
            Transition::RunSessionEnd {
                number,
                session_id: None,
                exit: Some(0),
                outcome: checkpoint_core::run::SessionOutcome::Progress,
                transitions: 1,
                cost_usd: cost,
                tokens: Some(10),
            },
        ));
        budgets.add(cost, Some(10));
    }
    let (_, entries) = journal(steps);
    let mut run = RunTracker::default();
    for entry in &entries {
        run.observe(entry);
    }
    let spent = run.last.unwrap().spent.unwrap();
    assert_eq!(spent.cost_usd, budgets.cost_usd);
    assert_eq!(spent.tokens, budgets.tokens);
    assert_eq!(spent.cost_usd, 1.75);
}
