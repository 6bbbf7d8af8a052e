//! Properties of the state machine over random sequences of transitions.

use chrono::{DateTime, Duration, Utc};
use proptest::prelude::*;

use crate::{
    PhasePlan, Plan, Transition, WorkflowId, apply,
    id::{PhaseId, TaskId},
    journal::{self, Entry},
    model::check_invariants,
    model::{PhaseStatus, Workflow, WorkflowStatus},
};

/// The workflow every sequence starts from: `a`, then `b` and `c` after `a` (`c` needs approval).
pub(crate) fn initial() -> Workflow {
    let mut plan = Plan {
        phases: ["a", "b:a", "c:a"]
            .into_iter()
            .map(|spec| PhasePlan::from_spec(spec).unwrap())
            .collect(),
        ..Plan::default()
    };
    plan.phases[2].requires_approval = true;
    plan.phases[1].max_attempts = Some(2);
    plan.into_workflow(WorkflowId::new("w").unwrap(), None, DateTime::UNIX_EPOCH)
        .unwrap()
}

/// Any transition but `init` and `snapshot`, on known and unknown phases and tasks.
pub(crate) fn arb_transition() -> impl Strategy<Value = Transition> {
    let phase = prop_oneof![
        4 => prop::sample::select(vec!["a", "b", "c"]),
        1 => Just("zz"),
    ]
    .prop_map(|id| PhaseId::new(id).unwrap());
    let task = prop::sample::select(vec!["t1", "t2", "t3"]).prop_map(|id| TaskId::new(id).unwrap());
    let text = "[a-z ]{0,8}";
    prop_oneof![
        (phase.clone(), any::<bool>())
            .prop_map(|(phase, force)| Transition::PhaseStart { phase, force }),
        (phase.clone(), text).prop_map(|(phase, note)| Transition::PhaseProgress { phase, note }),
        (phase.clone(), any::<bool>()).prop_map(|(phase, force)| Transition::PhaseComplete {
            phase,
            artifacts: vec!["out.md".into()],
            commit_sha: None,
            force,
        }),
        (phase.clone(), text).prop_map(|(phase, reason)| Transition::PhaseFail { phase, reason }),
        phase.clone().prop_map(|phase| Transition::PhaseSkip {
            phase,
            reason: None
        }),
        (phase.clone(), text).prop_map(|(phase, reason)| Transition::PhaseReset { phase, reason }),
        phase.clone().prop_map(|phase| Transition::PhaseApprove {
            phase,
            by: None,
            note: None
        }),
        (phase.clone(), text).prop_map(|(phase, reason)| Transition::PhaseReject { phase, reason }),
        (phase.clone(), text).prop_map(|(phase, reason)| Transition::Replan { phase, reason }),
        (phase.clone(), task.clone()).prop_map(|(phase, task)| Transition::TaskAdd {
            phase,
            task,
            title: None,
            output: None
        }),
        (phase.clone(), task.clone()).prop_map(|(phase, task)| Transition::TaskStart {
            phase,
            task,
            agent_id: None
        }),
        (phase.clone(), task.clone()).prop_map(|(phase, task)| Transition::TaskDone {
            phase,
            task,
            output: None,
            note: None,
        }),
        (phase.clone(), task.clone(), text).prop_map(|(phase, task, reason)| {
            Transition::TaskFail {
                phase,
                task,
                reason,
            }
        }),
        text.prop_map(|text| Transition::Note { text }),
        text.prop_map(|text| Transition::Decide { text }),
        text.prop_map(|reason| Transition::Pause {
            reason,
            until: None
        }),
        Just(Transition::Unpause),
        prop_oneof![9 => Just(None), 1 => Just(Some("done".to_owned()))]
            .prop_map(|reason| Transition::Abandon { reason }),
        Just(Transition::Heartbeat {
            source: "Stop".into(),
            session_id: None
        }),
    ]
}

/// Checks what must hold after every accepted transition.
fn check_state(workflow: &Workflow, abandoned_before: bool) -> Result<(), TestCaseError> {
    check_invariants(workflow).map_err(TestCaseError::fail)?;
    if abandoned_before {
        prop_assert_eq!(
            workflow.status,
            WorkflowStatus::Abandoned,
            "abandon is final"
        );
    }
    let expected = match workflow.status {
        WorkflowStatus::Abandoned => WorkflowStatus::Abandoned,
        _ if workflow.pause.is_some() => WorkflowStatus::Paused,
        _ => workflow.derived_status(),
    };
    prop_assert_eq!(workflow.status, expected);
    for phase in &workflow.phases {
        if matches!(
            phase.status,
            PhaseStatus::Complete | PhaseStatus::Skipped | PhaseStatus::AwaitingApproval
        ) {
            prop_assert!(phase.completed_at.is_some(), "{:?} has no end", phase.id);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_sequence_keeps_the_invariants_and_replays(
        transitions in prop::collection::vec(arb_transition(), 0..40),
    ) {
        let start: DateTime<Utc> = DateTime::UNIX_EPOCH;
        let init = Transition::Init { workflow: Box::new(initial()) };
        let mut workflow = initial();
        apply(&mut workflow, &init, 1, start).unwrap();
        let mut entries = vec![Entry { seq: 1, at: start, transition: init }];
        for (n, transition) in transitions.into_iter().enumerate() {
            let seq = entries.len() as u64 + 1;
            let at = start + Duration::seconds(n as i64 + 1);
            let before = workflow.clone();
            match apply(&mut workflow, &transition, seq, at) {
                Err(_) => prop_assert_eq!(&workflow, &before, "a refused transition changes nothing"),
                Ok(()) => {
                    prop_assert_eq!(workflow.seq, seq);
                    prop_assert_eq!(workflow.updated_at, at);
                    check_state(&workflow, before.status == WorkflowStatus::Abandoned)?;
                    entries.push(Entry { seq, at, transition });
                }
            }
        }
        // The journal of accepted transitions, written and read back, replays to the state.
        let text: String = entries.iter().map(Entry::to_line).collect();
        let path = std::path::Path::new("journal.jsonl");
        let parsed = journal::parse(path, text.as_bytes()).unwrap();
        prop_assert!(parsed.torn.is_none());
        let replayed = journal::replay(path, None, &parsed.entries).unwrap();
        prop_assert_eq!(replayed.as_ref(), Some(&workflow));
        // And the state, written and read back, is the same state.
        let state = serde_json::to_vec_pretty(&workflow).unwrap();
        let reread = crate::store::parse_state(std::path::Path::new("state.json"), &state).unwrap();
        prop_assert_eq!(reread, workflow);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// On a paused workflow, the `Unpause` that `unpause_before_work` journals before work gives the
    /// state the work alone gives (old journals have none), and only work lifts a pause.
    #[test]
    fn lifting_a_pause_first_gives_the_same_state(
        transitions in prop::collection::vec(arb_transition(), 0..20),
        last in arb_transition(),
    ) {
        let start: DateTime<Utc> = DateTime::UNIX_EPOCH;
        let mut workflow = initial();
        for (n, transition) in transitions.iter().enumerate() {
            let _ = apply(&mut workflow, transition, n as u64 + 2, start + Duration::seconds(n as i64));
        }
        let pause = Transition::Pause { reason: "rate_limit".into(), until: None };
        let _ = apply(&mut workflow, &pause, 100, start + Duration::seconds(100));
        let mut journaled = vec![last.clone()];
        let lifted = crate::unpause_before_work(&workflow, &mut journaled);
        prop_assert_eq!(lifted.is_some(), workflow.pause.is_some() && last.lifts_pause());
        prop_assert_eq!(lifted.as_ref(), workflow.pause.as_ref().filter(|_| last.lifts_pause()));
        prop_assert!(!last.lifts_pause() || last.is_work(), "lifting a pause is work");
        let at = start + Duration::seconds(200);
        let mut alone = workflow.clone();
        let alone_result = apply(&mut alone, &last, 101, at);
        let mut through = workflow.clone();
        let through_result = journaled
            .iter()
            .try_for_each(|transition| apply(&mut through, transition, 101, at));
        prop_assert_eq!(alone_result.is_ok(), through_result.is_ok());
        if alone_result.is_ok() {
            prop_assert_eq!(&through, &alone);
            if last.lifts_pause() {
                prop_assert!(alone.pause.is_none());
            }
        }
    }
}
