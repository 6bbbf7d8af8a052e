//! Tests of the transitions: what each does, and what each refuses without changing the state.

use chrono::{DateTime, TimeZone, Utc};

use crate::{
    PhasePlan, Plan, TaskId, Transition, Workflow, WorkflowId, apply,
    testing::{complete, phase, start},
};

fn at(minute: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, minute, 0).unwrap()
}

fn workflow(specs: &[&str]) -> Workflow {
    let phases = specs
        .iter()
        .map(|spec| PhasePlan::from_spec(spec).unwrap())
        .collect();
    Plan {
        phases,
        ..Plan::default()
    }
    .into_workflow(WorkflowId::new("w").unwrap(), None, at(0))
    .unwrap()
}

/// Applies transitions in order, each at the next minute; panics on a refusal.
#[track_caller]
fn run(workflow: &mut Workflow, transitions: &[Transition]) {
    for transition in transitions {
        let seq = workflow.seq + 1;
        apply(workflow, transition, seq, at(seq as u32)).unwrap();
    }
}

/// Checks that `transition` is refused with `expect` and changes nothing.
#[track_caller]
fn check_refused(workflow: &Workflow, transition: Transition, expect: &str) {
    let mut copy = workflow.clone();
    let err = apply(&mut copy, &transition, workflow.seq + 1, at(59)).unwrap_err();
    assert_eq!(err.to_string(), expect);
    assert_eq!(&copy, workflow, "a refused transition changes nothing");
}

#[test]
fn a_phase_runs_through_its_life() {
    let mut w = workflow(&["design", "build:design"]);
    run(
        &mut w,
        &[
            start("design"),
            Transition::PhaseProgress {
                phase: phase("design"),
                note: "half".into(),
            },
        ],
    );
    assert_eq!(w.status.as_str(), "in_progress");
    let design = w.phase(&phase("design")).unwrap();
    assert_eq!(
        (
            design.attempts,
            design.progress.as_deref(),
            design.started_at
        ),
        (1, Some("half"), Some(at(1).into()))
    );
    run(
        &mut w,
        &[Transition::PhaseComplete {
            phase: phase("design"),
            artifacts: vec!["d.md".into()],
            commit_sha: Some("abc".into()),
            force: false,
        }],
    );
    let design = w.phase(&phase("design")).unwrap();
    assert_eq!(design.status.as_str(), "complete");
    assert_eq!(design.commit_sha.as_deref(), Some("abc"));
    assert_eq!(w.context.file_paths, ["d.md"]);
    run(&mut w, &[start("build"), complete("build")]);
    assert_eq!(w.status.as_str(), "complete");
    assert_eq!((w.seq, w.updated_at), (5, at(5)));
}

#[test]
fn refusals_name_the_problem() {
    let mut w = workflow(&["design", "build:design"]);
    check_refused(&w, start("build"), "phase `build` waits for `design`");
    check_refused(
        &w,
        complete("build"),
        "cannot complete phase `build`: it depends on `design`, which is not done",
    );
    check_refused(
        &w,
        Transition::PhaseProgress {
            phase: phase("design"),
            note: "x".into(),
        },
        "phase `design` is pending, not in progress",
    );
    check_refused(&w, start("nope"), "no phase `nope` in workflow `w`");
    run(&mut w, &[start("design")]);
    check_refused(&w, start("design"), "phase `design` is already in progress");
    run(&mut w, &[complete("design")]);
    check_refused(&w, start("design"), "phase `design` is complete");
    check_refused(
        &w,
        Transition::PhaseApprove {
            phase: phase("design"),
            by: None,
            note: None,
        },
        "phase `design` is complete, not awaiting approval",
    );
    run(&mut w, &[Transition::Abandon { reason: None }]);
    check_refused(&w, start("build"), "workflow `w` was abandoned");
}

#[test]
fn force_overrides_order_and_completion() {
    let mut w = workflow(&["design", "build:design"]);
    run(
        &mut w,
        &[Transition::PhaseStart {
            phase: phase("build"),
            force: true,
        }],
    );
    assert_eq!(
        w.phase(&phase("build")).unwrap().status.as_str(),
        "in_progress"
    );
    run(
        &mut w,
        &[
            start("design"),
            complete("design"),
            Transition::PhaseStart {
                phase: phase("design"),
                force: true,
            },
        ],
    );
    assert_eq!(w.phase(&phase("design")).unwrap().attempts, 2);
}

#[test]
fn failures_count_and_the_limit_closes_the_automatic_path() {
    let mut w = workflow(&["a"]);
    for _ in 0..3 {
        run(
            &mut w,
            &[
                start("a"),
                Transition::PhaseFail {
                    phase: phase("a"),
                    reason: "red".into(),
                },
            ],
        );
    }
    assert_eq!(w.status.as_str(), "failed");
    assert_eq!(w.phase(&phase("a")).unwrap().failures, 3);
    check_refused(&w, start("a"), "phase `a` failed 3 times, the limit is 3");
    run(
        &mut w,
        &[Transition::PhaseStart {
            phase: phase("a"),
            force: true,
        }],
    );
}

#[test]
fn approval_gate_and_rejection() {
    let mut w = workflow(&["a", "b:a"]);
    w.phases[0].requires_approval = true;
    run(&mut w, &[start("a"), complete("a")]);
    assert_eq!(w.status.as_str(), "awaiting_approval");
    check_refused(&w, start("b"), "phase `b` waits for `a`");
    run(
        &mut w,
        &[Transition::PhaseReject {
            phase: phase("a"),
            reason: "too vague".into(),
        }],
    );
    let a = w.phase(&phase("a")).unwrap();
    assert_eq!(
        (a.status.as_str(), a.error.as_deref(), a.failures),
        ("failed", Some("rejected: too vague"), 1)
    );
    run(
        &mut w,
        &[
            start("a"),
            complete("a"),
            Transition::PhaseApprove {
                phase: phase("a"),
                by: Some("ana".into()),
                note: None,
            },
        ],
    );
    assert_eq!(
        w.phase(&phase("a"))
            .unwrap()
            .approval
            .as_ref()
            .unwrap()
            .by
            .as_deref(),
        Some("ana")
    );
    run(&mut w, &[start("b")]);
}

#[test]
fn tasks_start_their_phase_and_gate_its_completion() {
    let mut w = workflow(&["impl"]);
    let task = |id: &str| TaskId::new(id).unwrap();
    run(
        &mut w,
        &[
            Transition::TaskAdd {
                phase: phase("impl"),
                task: task("t1"),
                title: None,
                output: Some("o1".into()),
            },
            Transition::TaskAdd {
                phase: phase("impl"),
                task: task("t2"),
                title: None,
                output: None,
            },
            Transition::TaskStart {
                phase: phase("impl"),
                task: task("t1"),
                agent_id: None,
            },
        ],
    );
    assert_eq!(
        w.phase(&phase("impl")).unwrap().status.as_str(),
        "in_progress"
    );
    check_refused(
        &w,
        complete("impl"),
        "cannot complete phase `impl`: tasks `t1`, `t2` are not done",
    );
    check_refused(
        &w,
        Transition::TaskAdd {
            phase: phase("impl"),
            task: task("t1"),
            title: None,
            output: None,
        },
        "task `t1` already exists in phase `impl`",
    );
    run(
        &mut w,
        &[
            Transition::TaskDone {
                phase: phase("impl"),
                task: task("t1"),
                output: None,
                note: None,
            },
            Transition::TaskDone {
                phase: phase("impl"),
                task: task("t2"),
                output: None,
                note: None,
            },
            complete("impl"),
        ],
    );
    assert_eq!(w.status.as_str(), "complete");
}

#[test]
fn pause_is_lifted_by_starting_work() {
    let mut w = workflow(&["a"]);
    run(
        &mut w,
        &[Transition::Pause {
            reason: "rate_limit".into(),
            until: Some(at(30)),
        }],
    );
    assert_eq!(w.status.as_str(), "paused");
    run(&mut w, &[start("a")]);
    assert_eq!(w.status.as_str(), "in_progress");
    assert!(w.pause.is_none());
}

#[test]
fn lift_pause_journals_an_unpause_before_the_first_work() {
    let mut w = workflow(&["a", "b"]);
    run(&mut w, &[start("a")]);
    let file = Transition::FilePath { path: "x".into() };
    let mut transitions = vec![file.clone(), complete("a"), start("b")];
    assert_eq!(
        crate::unpause_before_work(&w, &mut transitions),
        None,
        "not paused"
    );
    assert_eq!(transitions, [file.clone(), complete("a"), start("b")]);
    let pause = Transition::Pause {
        reason: "rate_limit".into(),
        until: Some(at(30)),
    };
    run(&mut w, &[pause]);
    let lifted = crate::unpause_before_work(&w, &mut transitions);
    assert_eq!(lifted.as_ref(), w.pause.as_ref());
    assert_eq!(
        transitions,
        [file.clone(), Transition::Unpause, complete("a"), start("b")]
    );
    let mut no_work = vec![file.clone(), Transition::Unpause];
    assert_eq!(
        crate::unpause_before_work(&w, &mut no_work),
        None,
        "no work, no lift"
    );
    assert_eq!(no_work, [file, Transition::Unpause]);
    let mut none = Vec::new();
    assert_eq!(crate::unpause_before_work(&w, &mut none), None);
    assert!(none.is_empty());
}

#[test]
fn max_in_progress_counts_the_other_phases_in_progress() {
    let mut w = workflow(&["a", "b", "c"]);
    let over = |w: &Workflow, id: &str, max: u32| {
        crate::over_max_in_progress(w, &phase(id), max)
            .map(|running| running.iter().map(ToString::to_string).collect::<Vec<_>>())
    };
    assert_eq!(over(&w, "a", 1), None, "nothing in progress");
    run(&mut w, &[start("a")]);
    assert_eq!(over(&w, "a", 1), None, "a phase does not count itself");
    assert_eq!(over(&w, "b", 0), None, "0 is no limit");
    assert_eq!(over(&w, "b", 1), Some(vec!["a".to_owned()]));
    assert_eq!(over(&w, "b", 2), None);
    assert_eq!(over(&w, "b", u32::MAX), None);
    run(&mut w, &[start("b")]);
    assert_eq!(over(&w, "c", 2), Some(vec!["a".to_owned(), "b".to_owned()]));
    assert_eq!(over(&w, "c", 1), Some(vec!["a".to_owned(), "b".to_owned()]));
    assert_eq!(over(&w, "b", 2), None, "b is one of the two");
}

#[test]
fn transitions_round_trip_through_json() {
    let transition = Transition::PhaseComplete {
        phase: phase("a"),
        artifacts: vec!["x".into()],
        commit_sha: Some("abc".into()),
        force: true,
    };
    let text = serde_json::to_string(&transition).unwrap();
    assert_eq!(
        text,
        r#"{"op":"phase_complete","phase":"a","artifacts":["x"],"commit_sha":"abc","force":true}"#
    );
    assert_eq!(
        serde_json::from_str::<Transition>(&text).unwrap(),
        transition
    );
}

mod props;

pub(crate) use props::{arb_transition, initial};

/// A `run_session_end` line of an old journal, with each of the five words its runner wrote,
/// reads as its outcome and is written back byte for byte; so does a word this version does not
/// know (a newer runner's), which must not make the journal unreadable.
#[test]
fn session_outcomes_read_and_write_the_journal_words() {
    use crate::{journal, run::SessionOutcome};
    let path = std::path::Path::new("journal.jsonl");
    for (word, outcome) in [
        ("progress", SessionOutcome::Progress),
        ("stall", SessionOutcome::Stall),
        ("rate_limit", SessionOutcome::RateLimit),
        ("crash", SessionOutcome::Crash),
        ("interrupted", SessionOutcome::Interrupted),
        (
            "out_of_budget",
            SessionOutcome::Other("out_of_budget".to_owned()),
        ),
        ("", SessionOutcome::Other(String::new())),
    ] {
        let line = format!(
            r#"{{"seq":7,"at":"2026-03-01T12:00:00Z","transition":{{"op":"run_session_end","number":2,"session_id":"s","exit":null,"outcome":"{word}","transitions":0}}}}"#
        ) + "\n";
        let parsed = journal::parse(path, line.as_bytes()).unwrap();
        let Transition::RunSessionEnd { outcome: read, .. } = &parsed.entries[0].transition else {
            panic!("not a session end: {parsed:?}");
        };
        assert_eq!(*read, outcome);
        assert_eq!(outcome.to_string(), word);
        assert_eq!(parsed.entries[0].to_line(), line, "byte for byte");
    }
    let not_a_word = r#"{"seq":7,"at":"2026-03-01T12:00:00Z","transition":{"op":"run_session_end","number":2,"outcome":7}}
"#;
    assert!(journal::parse(path, not_a_word.as_bytes()).is_err());
}
