//! Tests of the resume planner and the prompt renderer, through the fake `Files` probe: a
//! workflow goes through `validate`, `plan` and `render_prompt` as `checkpoint resume` runs them.

use chrono::{DateTime, Duration, TimeZone, Utc};

use crate::{
    Activity, Config, PhasePlan, PhaseStatus, Plan, TaskId, Transition, Workflow, WorkflowId,
    apply,
    resume::{
        Action, PlanOptions, Probe, RecoveryCode, ResumePlan, ago, plan, render_prompt, validate,
    },
    store::Recovery,
    testing::{Files, Recording, complete, start},
};

fn at(minute: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap() + Duration::minutes(minute)
}

/// A workflow of phases given as `--phase` specs, created at minute 0.
fn workflow(specs: &[&str]) -> Workflow {
    Plan {
        phases: specs
            .iter()
            .map(|spec| PhasePlan::from_spec(spec).unwrap())
            .collect(),
        ..Plan::default()
    }
    .into_workflow(WorkflowId::new("w").unwrap(), None, at(0))
    .unwrap()
}

/// Applies transitions at minute 1, 2, … in turn.
fn run(workflow: &mut Workflow, transitions: Vec<Transition>) {
    for (minute, transition) in (1..).zip(transitions) {
        let seq = workflow.seq + 1;
        apply(workflow, &transition, seq, at(minute)).unwrap();
    }
}

/// A Claude Code session ends a turn (its `Stop` hook): the sign that a session worked on the
/// phase in progress.
fn session_stop() -> Transition {
    Transition::Heartbeat {
        source: "Stop".into(),
        session_id: None,
    }
}

/// Validates and plans `workflow` at `now` as `checkpoint resume` does.
fn resume(
    workflow: &Workflow,
    recoveries: &[Recovery],
    files: &dyn Probe,
    now: DateTime<Utc>,
) -> ResumePlan {
    let config = Config::default();
    let findings = validate(workflow, recoveries, files, &config, now);
    plan(workflow, findings, files, &PlanOptions { config, now })
}

fn recovery_codes(plan: &ResumePlan) -> Vec<RecoveryCode> {
    plan.recoveries
        .iter()
        .map(|recovery| recovery.code)
        .collect()
}

#[test]
fn an_interrupted_phase_whose_outputs_exist_is_completed_and_the_next_one_starts() {
    let mut workflow = workflow(&["a", "b:a"]);
    workflow.phases[0].outputs = vec!["out/a.md".into()];
    run(&mut workflow, vec![start("a")]);
    let files = Recording::new(Files(vec![("out/a.md", 12)]));

    let plan = resume(&workflow, &[], &files, at(60));

    assert!(plan.interrupted);
    assert_eq!(recovery_codes(&plan), [RecoveryCode::PhaseOutputPresent]);
    assert!(files.asked.borrow().contains(&"out/a.md".to_owned()));
    assert_eq!(plan.next.action, Action::Start);
    assert_eq!(plan.next.phase.as_ref().unwrap().as_str(), "b");
    assert_eq!(plan.next.command.as_deref(), Some("checkpoint start b"));
    assert!(!plan.decision_required);
    assert_eq!(plan.completed.len(), 1, "the view is after the recovery");
}

#[test]
fn an_interrupted_phase_without_its_outputs_goes_back_to_pending() {
    let mut workflow = workflow(&["a", "b:a"]);
    workflow.phases[0].outputs = vec!["out/a.md".into()];
    run(&mut workflow, vec![start("a"), session_stop()]);
    let files = Files(vec![("out/a.md", 0)]);

    let plan = resume(&workflow, &[], &files, at(60));

    assert_eq!(recovery_codes(&plan), [RecoveryCode::OrphanedPhase]);
    assert!(plan.recoveries[0].description.contains("attempt 2"));
    assert_eq!(plan.next.action, Action::Start);
    assert_eq!(plan.next.phase.as_ref().unwrap().as_str(), "a");
    assert_eq!(plan.ready.len(), 1);
    assert_eq!(plan.blocked.len(), 1);
}

#[test]
fn a_running_task_is_done_when_its_output_exists_and_reset_when_not() {
    let mut workflow = workflow(&["a"]);
    let task = |id: &str, output: &str| Transition::TaskAdd {
        phase: "a".parse().unwrap(),
        task: TaskId::new(id).unwrap(),
        title: None,
        output: Some(output.into()),
    };
    let task_start = |id: &str| Transition::TaskStart {
        phase: "a".parse().unwrap(),
        task: TaskId::new(id).unwrap(),
        agent_id: None,
    };
    run(
        &mut workflow,
        vec![
            task("t1", "t1.txt"),
            task("t2", "t2.txt"),
            task_start("t1"),
            task_start("t2"),
            session_stop(),
        ],
    );
    let files = Files(vec![("t1.txt", 3)]);

    let plan = resume(&workflow, &[], &files, at(60));

    assert_eq!(
        recovery_codes(&plan),
        [RecoveryCode::TaskOutputPresent, RecoveryCode::OrphanedTask],
        "the phase goes on with its tasks"
    );
    assert_eq!(plan.next.action, Action::Continue);
    assert_eq!(plan.next.task.as_ref().unwrap().as_str(), "t2");
    assert!(
        plan.next.reason.contains("next: task `t2` (attempt 2)"),
        "{}",
        plan.next.reason
    );
    assert_eq!(plan.in_progress[0].tasks, Some((1, 2)));
}

#[test]
fn a_phase_no_session_worked_on_is_not_reset() {
    let mut workflow = workflow(&["a", "b:a"]);
    run(&mut workflow, vec![session_stop(), start("a")]);
    let files = Files(Vec::new());

    // Live: started a moment ago.
    let live = resume(&workflow, &[], &files, at(3));
    assert!(!live.interrupted);
    assert!(live.recoveries.is_empty());
    assert_eq!(live.next.action, Action::Continue);

    // An hour on, with no session since it started: not an interruption either.
    let later = resume(&workflow, &[], &files, at(60));
    assert!(later.interrupted);
    assert!(later.recoveries.is_empty(), "{:?}", later.recoveries);
    assert_eq!(later.next.action, Action::Continue);
    assert_eq!(later.in_progress[0].attempts, 1);
}

#[test]
fn a_recent_heartbeat_means_no_interruption_and_a_warning_to_check() {
    let mut workflow = workflow(&["a"]);
    run(&mut workflow, vec![start("a")]);
    workflow.last_activity = Some(Activity {
        at: at(55),
        source: "Stop".into(),
        session_id: None,
    });
    let files = Files(Vec::new());

    let plan = resume(&workflow, &[], &files, at(60));

    assert!(!plan.interrupted);
    assert!(plan.recoveries.is_empty());
    assert_eq!(plan.next.action, Action::Continue);
    assert!(
        plan.next.reason.contains("active recently"),
        "{}",
        plan.next.reason
    );
}

#[test]
fn a_failed_phase_rolls_back_to_its_on_failure_phase_once() {
    let mut workflow = workflow(&["build", "test:build"]);
    workflow.phases[1].on_failure = Some("build".parse().unwrap());
    let fail = Transition::PhaseFail {
        phase: "test".parse().unwrap(),
        reason: "red".into(),
    };
    run(
        &mut workflow,
        vec![
            start("build"),
            complete("build"),
            start("test"),
            fail.clone(),
        ],
    );
    let files = Files(Vec::new());

    let plan = resume(&workflow, &[], &files, at(60));
    assert_eq!(plan.next.action, Action::Rollback);
    assert_eq!(plan.next.phase.as_ref().unwrap().as_str(), "build");
    assert_eq!(
        plan.next.command.as_deref(),
        Some("checkpoint start build --force")
    );

    // Once `build` is redone after the failed attempt, the failed phase is retried.
    let force = Transition::PhaseStart {
        phase: "build".parse().unwrap(),
        force: true,
    };
    for (minute, transition) in (10..).zip([force, complete("build")]) {
        let seq = workflow.seq + 1;
        apply(&mut workflow, &transition, seq, at(minute)).unwrap();
    }
    let plan = resume(&workflow, &[], &files, at(60));
    assert_eq!(plan.next.action, Action::Retry);
    assert_eq!(plan.next.phase.as_ref().unwrap().as_str(), "test");
    assert!(
        plan.next.reason.contains("attempt 2"),
        "{}",
        plan.next.reason
    );
}

#[test]
fn an_approval_gate_and_a_rebuilt_state_need_a_person() {
    let mut workflow = workflow(&["a"]);
    workflow.phases[0].requires_approval = true;
    run(&mut workflow, vec![start("a"), complete("a")]);
    assert_eq!(workflow.phases[0].status, PhaseStatus::AwaitingApproval);
    let files = Files(Vec::new());

    let plan = resume(&workflow, &[], &files, at(60));
    assert_eq!(plan.next.action, Action::Approve);
    assert!(plan.decision_required);

    let rebuilt = Recovery::StateRebuilt {
        reason: "bad".into(),
        source: "journal".into(),
        kept_as: None,
    };
    let plan = resume(&workflow, &[rebuilt], &files, at(60));
    assert_eq!(plan.next.action, Action::Confirm);
    assert_eq!(
        plan.next.command.as_deref(),
        Some("checkpoint resume --yes")
    );
    assert!(plan.decision_required);
}

#[test]
fn a_finished_workflow_has_nothing_left() {
    let mut workflow = workflow(&["a"]);
    run(&mut workflow, vec![start("a"), complete("a")]);
    let plan = resume(&workflow, &[], &Files(Vec::new()), at(60));
    assert_eq!(plan.next.action, Action::Done);
    assert!(!plan.decision_required);
}

#[test]
fn the_prompt_names_the_next_step_the_recoveries_and_the_context() {
    let mut workflow = workflow(&["a", "b:a", "c:a"]);
    workflow.title = Some("Ship it".into());
    run(
        &mut workflow,
        vec![
            start("a"),
            Transition::PhaseProgress {
                phase: "a".parse().unwrap(),
                note: "half way".into(),
            },
            Transition::Decide {
                text: "use sqlite".into(),
            },
            session_stop(),
        ],
    );
    let plan = resume(&workflow, &[], &Files(Vec::new()), at(60));

    let prompt = render_prompt(&plan, at(60), 4000);

    insta::assert_snapshot!(prompt, @r#"
    ## checkpoint: workflow `w` — Ship it
    Status: pending · 0 of 3 phases done · last active 56 minutes ago (2026-03-01 12:04 UTC)

    **Next:** phase `a` is ready; an earlier attempt noted: half way → `checkpoint start a`

    Recovery after the interruption (run `checkpoint resume` to apply, if not yet applied):
    - phase `a` was in progress when the session stopped: back to pending for attempt 2, keeping its progress note

    Ready:
    - `a` — earlier progress: half way
    Blocked:
    - `b` (waits for `a`)
    - `c` (waits for `a`)

    Key decisions:
    - use sqlite

    Record state with the `checkpoint` MCP tools when they are present (`start`, `progress`, `complete`, `decide`), else with the `checkpoint` CLI, never by editing its JSON: `checkpoint start <phase>`, `checkpoint progress <phase> "<note>"`, `checkpoint complete <phase> --artifact <path>`, `checkpoint decide "<decision>"`.
    "#);
}

#[test]
fn the_prompt_keeps_the_essentials_within_a_small_budget() {
    let specs: Vec<String> = (0..40).map(|n| format!("phase-{n}")).collect();
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    let mut workflow = workflow(&specs);
    for n in 0..30 {
        workflow.phases[n].status = PhaseStatus::Complete;
    }
    workflow.phases[30].status = PhaseStatus::InProgress;
    let plan = resume(&workflow, &[], &Files(Vec::new()), at(60));

    let budget = 600;
    let prompt = render_prompt(&plan, at(60), budget);

    assert!(prompt.len() <= budget, "{} bytes", prompt.len());
    assert!(
        prompt.starts_with("## checkpoint: workflow `w`"),
        "{prompt}"
    );
    assert!(prompt.contains("**Next:**"), "{prompt}");
    assert!(prompt.contains("cut to fit"), "{prompt}");
    let whole = render_prompt(&plan, at(60), usize::MAX);
    assert!(whole.contains("… and"), "long lists are shortened: {whole}");
    assert!(!whole.contains("cut to fit"), "{whole}");
}

/// Parallel phases `a`, `b`, `c` and `d` after all three: `a` done by its sub-agent, `b`'s
/// sub-agent lost mid-flight with a progress note, `c` never dispatched.
fn held_by_sub_agents() -> Workflow {
    let mut workflow = workflow(&["a", "b", "c", "d:a,b,c"]);
    let dispatch = |phase: &str, call: &str| Transition::HolderDispatch {
        phase: phase.parse().unwrap(),
        tool_use_id: call.into(),
        description: Some(format!("Build {phase}")),
        session_id: None,
    };
    let seen = |phase: &str, agent: &str| Transition::HolderSeen {
        phase: phase.parse().unwrap(),
        agent_id: Some(agent.into()),
    };
    run(
        &mut workflow,
        vec![
            start("a"),
            dispatch("a", "toolu_1"),
            start("b"),
            dispatch("b", "toolu_2"),
            seen("a", "agent-a"),
            seen("b", "agent-b"),
            Transition::PhaseProgress {
                phase: "b".parse().unwrap(),
                note: "lexer done, parser next".into(),
            },
            complete("a"),
            Transition::HolderEnd {
                phase: "a".parse().unwrap(),
                note: None,
                error: None,
            },
            session_stop(),
        ],
    );
    workflow
}

#[test]
fn a_resume_redispatches_only_the_unfinished_parallel_phases() {
    let workflow = held_by_sub_agents();
    let plan = resume(&workflow, &[], &Files(Vec::new()), at(70));
    let view = plan.sub_agents.as_ref().unwrap();
    let ids = |items: Vec<&str>| items.join(",");
    assert_eq!(
        ids(view.done.iter().map(|held| held.phase.as_str()).collect()),
        "a"
    );
    assert_eq!(view.done[0].holder.agent_id.as_deref(), Some("agent-a"));
    assert_eq!(
        ids(view
            .interrupted
            .iter()
            .map(|held| held.phase.as_str())
            .collect()),
        "b"
    );
    assert_eq!(
        view.interrupted[0].note.as_deref(),
        Some("lexer done, parser next")
    );
    assert_eq!(view.interrupted[0].idle_minutes, 63);
    assert!(view.running.is_empty());
    assert_eq!(
        ids(view.not_dispatched.iter().map(|id| id.as_str()).collect()),
        "c"
    );
    assert_eq!(
        ids(view
            .dispatch
            .iter()
            .map(|item| item.line.as_str())
            .collect()),
        "checkpoint phase: b,checkpoint phase: c"
    );
    assert_eq!(plan.next.action, Action::Dispatch);
    assert_eq!(plan.next.phase.as_ref().unwrap().as_str(), "b");
    assert_eq!(
        ids(plan.next.parallel.iter().map(|id| id.as_str()).collect()),
        "c"
    );
    insta::assert_snapshot!(render_prompt(&plan, at(70), 6000), @r#"
    ## checkpoint: workflow `w`
    Status: in progress · 1 of 4 phases done · last active 60 minutes ago (2026-03-01 12:10 UTC)

    **Next:** dispatch `b` (interrupted mid-flight), `c` (not yet dispatched) to sub-agents, one each, in parallel, each prompt carrying its line `checkpoint phase: <id>` and its note; done, do not redo: `a` (sub-agent `agent-a`: Build a)

    Sub-agents (one per parallel phase):
    - done: `a` by sub-agent `agent-a`: Build a
    - interrupted mid-flight: `b` held by sub-agent `agent-b`: Build b, last active 63 min ago — last note: lexer done, parser next
    - not yet dispatched: `c`
    Dispatch now, in parallel, one `Agent` call each in the same turn, its prompt carrying the line shown:
    - `checkpoint phase: b` — continue from: lexer done, parser next
    - `checkpoint phase: c`

    Recovery after the interruption (run `checkpoint resume` to apply, if not yet applied):
    - phase `b` was in progress when the session stopped: back to pending for attempt 2, keeping its progress note

    Ready:
    - `b` — earlier progress: lexer done, parser next
    - `c`
    Blocked:
    - `d` (waits for `b`, `c`)
    Done:
    - `a` (2026-03-01 12:08)

    Record state with the `checkpoint` MCP tools when they are present (`start`, `progress`, `complete`, `decide`), else with the `checkpoint` CLI, never by editing its JSON: `checkpoint start <phase>`, `checkpoint progress <phase> "<note>"`, `checkpoint complete <phase> --artifact <path>`, `checkpoint decide "<decision>"`.
    "#);
}

#[test]
fn a_resume_dispatches_within_max_in_progress_and_leaves_live_sub_agents_alone() {
    let held = held_by_sub_agents();
    let config = Config {
        max_in_progress: 1,
        ..Config::default()
    };
    let findings = validate(&held, &[], &Files(Vec::new()), &config, at(70));
    let limited = plan(
        &held,
        findings,
        &Files(Vec::new()),
        &PlanOptions {
            config,
            now: at(70),
        },
    );
    let view = limited.sub_agents.as_ref().unwrap();
    assert_eq!(view.dispatch.len(), 1);
    assert_eq!(view.dispatch[0].phase.as_str(), "b");
    assert!(limited.next.parallel.is_empty());

    // While the session is live, `b`'s sub-agent is at work: only `c` is to dispatch.
    let live = resume(&held, &[], &Files(Vec::new()), at(11));
    let view = live.sub_agents.as_ref().unwrap();
    assert_eq!(view.running.len(), 1);
    assert_eq!(view.running[0].phase.as_str(), "b");
    assert_eq!(view.dispatch.len(), 1);
    assert_eq!(view.dispatch[0].phase.as_str(), "c");
    assert!(
        live.next.reason.contains("still at work: `b`"),
        "{}",
        live.next.reason
    );

    // A workflow without sub-agents plans as before.
    let mut plain = workflow(&["a", "b"]);
    run(&mut plain, vec![start("a"), session_stop()]);
    let plan = resume(&plain, &[], &Files(Vec::new()), at(70));
    assert!(plan.sub_agents.is_none());
    assert_ne!(plan.next.action, Action::Dispatch);
}

/// Ready phases that may run at once come with the convention that hands each to a sub-agent.
#[test]
fn parallel_ready_phases_are_taught_the_dispatch_line() {
    let parallel = workflow(&["a", "b", "c"]);
    let plan = resume(&parallel, &[], &Files(Vec::new()), at(1));
    assert_eq!(plan.next.action, Action::Start);
    let prompt = render_prompt(&plan, at(1), 6000);
    assert!(
        prompt.contains("(also ready, can run in parallel: `b`, `c`; to run them at once, dispatch one sub-agent per phase in the same turn, each prompt carrying the line `checkpoint phase: <id>`)"),
        "{prompt}"
    );
    // A single ready phase needs no sub-agents.
    let single = workflow(&["a", "b:a"]);
    let prompt = render_prompt(
        &resume(&single, &[], &Files(Vec::new()), at(1)),
        at(1),
        6000,
    );
    assert!(!prompt.contains("checkpoint phase:"), "{prompt}");
}

/// One wording of relative times for every view, the prompt's and the CLI's: now, just past,
/// each unit's bounds, the future, and times far off either way.
#[test]
fn ago_words_every_distance_one_way() {
    let now: DateTime<Utc> = "2026-03-01T12:00:00Z".parse().unwrap();
    let cases = [
        (0, "just now"),
        (44, "just now"),
        (45, "1 minute ago"),
        (89, "1 minute ago"),
        (90, "2 minutes ago"),
        (56 * 60, "56 minutes ago"),
        (5399, "90 minutes ago"),
        (5400, "2 hours ago"),
        (129_599, "36 hours ago"),
        (129_600, "2 days ago"),
        (149 * 86_400, "149 days ago"),
        (-1, "in a moment"),
        (-44, "in a moment"),
        (-45, "in 1 minute"),
        (-2 * 3600, "in 2 hours"),
        (-10 * 86_400, "in 10 days"),
    ];
    for (secs_before, expected) in cases {
        let then = now - Duration::seconds(secs_before);
        assert_eq!(ago(then, now), expected, "{secs_before} s");
    }
    let far_past: DateTime<Utc> = "0001-01-01T00:00:00Z".parse().unwrap();
    let far_future: DateTime<Utc> = "9999-12-31T23:59:59Z".parse().unwrap();
    assert!(ago(far_past, now).ends_with("days ago"));
    assert!(ago(far_future, now).starts_with("in ") && ago(far_future, now).ends_with(" days"));
}
