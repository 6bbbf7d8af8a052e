//! Sub-agents holding phases: the dispatch line, and the hooks' events as transitions applied to
//! a workflow.

use chrono::{DateTime, Duration, Utc};

use crate::{
    PhaseId, PhasePlan, Plan, WorkflowId,
    model::{Holder, PhaseStatus, Workflow},
    resume::Probe,
    subagent::{self, ACTIVITY_INTERVAL, Agent, Dispatch, MAX_NOTE_CHARS},
    transition::{Transition, apply},
};

/// Files that exist, with their size and when they were written.
struct Dated(Vec<(&'static str, u64, DateTime<Utc>)>);

impl Probe for Dated {
    fn file_size(&self, path: &str) -> Option<u64> {
        self.0
            .iter()
            .find(|(name, ..)| *name == path)
            .map(|(_, size, _)| *size)
    }
    fn modified(&self, path: &str) -> Option<DateTime<Utc>> {
        self.0
            .iter()
            .find(|(name, ..)| *name == path)
            .map(|(.., at)| *at)
    }
    fn git_branch(&self) -> Option<String> {
        None
    }
    fn commit_exists(&self, _sha: &str) -> Option<bool> {
        None
    }
    fn worktree(&self) -> Option<String> {
        None
    }
}

fn id(text: &str) -> PhaseId {
    PhaseId::new(text).unwrap()
}

fn at(minutes: i64) -> DateTime<Utc> {
    DateTime::UNIX_EPOCH + Duration::days(20_000) + Duration::minutes(minutes)
}

/// Phases `a` and `b` (independent; `a` declares the output `a.md`) and `c` after both.
fn workflow() -> Workflow {
    let plan = Plan {
        phases: ["a", "b", "c:a,b"]
            .iter()
            .map(|spec| PhasePlan::from_spec(spec).unwrap())
            .collect(),
        ..Plan::default()
    };
    let mut workflow = plan
        .into_workflow(WorkflowId::new("w").unwrap(), None, at(0))
        .unwrap();
    workflow.phases[0].outputs = vec!["a.md".into()];
    workflow
}

fn change(workflow: &mut Workflow, transitions: &[Transition], now: DateTime<Utc>) {
    for transition in transitions {
        let seq = workflow.seq + 1;
        apply(workflow, transition, seq, now).unwrap();
    }
}

fn dispatch<'a>(phase: &'a PhaseId, call: &'a str) -> Dispatch<'a> {
    Dispatch {
        phase,
        tool_use_id: call,
        description: Some("Do the work"),
        session_id: Some("s1"),
    }
}

/// `a` held by call `t1` and `b` by call `t2`, dispatched at minutes 1 and 2.
fn held() -> Workflow {
    let mut workflow = workflow();
    for (minute, (phase, call)) in [("a", "t1"), ("b", "t2")].into_iter().enumerate() {
        let now = at(minute as i64 + 1);
        let transitions = subagent::dispatched(&workflow, dispatch(&id(phase), call), 0, now);
        change(&mut workflow, &transitions.unwrap(), now);
    }
    workflow
}

#[test]
fn a_dispatch_names_its_phase_on_a_line_of_its_own() {
    let named = |prompt: &str| subagent::phase_named(prompt).map(|id| id.to_string());
    assert_eq!(
        named("Build the parser.\ncheckpoint phase: parser\nThen stop."),
        Some("parser".into())
    );
    assert_eq!(
        named("  Checkpoint Phase: `api-v2`  "),
        Some("api-v2".into())
    );
    assert_eq!(named("`checkpoint phase: db`"), Some("db".into()));
    assert_eq!(named("- checkpoint phase: db."), Some("db".into()));
    assert_eq!(named("see the checkpoint phase: db line"), None);
    assert_eq!(named("checkpoint phase:"), None);
    assert_eq!(named("checkpoint phase: ../etc"), None);
    assert_eq!(named("no phase here"), None);
    assert_eq!(Holder::phase_line(&id("db")), "checkpoint phase: db");
}

#[test]
fn a_dispatch_starts_its_phase_and_records_the_holder() {
    let workflow = held();
    for (phase, call, minute) in [("a", "t1", 1), ("b", "t2", 2)] {
        let phase = workflow.phase(&id(phase)).unwrap();
        assert_eq!(phase.status, PhaseStatus::InProgress);
        assert_eq!(phase.attempts, 1);
        let holder = phase.holder.as_ref().unwrap();
        assert_eq!(holder.tool_use_id, call);
        assert_eq!(holder.agent_id, None);
        assert_eq!(holder.description.as_deref(), Some("Do the work"));
        assert_eq!(holder.session_id.as_deref(), Some("s1"));
        assert_eq!(holder.started_at, at(minute));
        assert_eq!(holder.last_activity_at, at(minute));
        assert_eq!(holder.ended_at, None);
    }
    // The same call again records nothing; another call for a phase in progress takes it over.
    assert_eq!(
        subagent::dispatched(&workflow, dispatch(&id("a"), "t1"), 0, at(3)),
        Ok(Vec::new())
    );
    let again = subagent::dispatched(&workflow, dispatch(&id("a"), "t3"), 0, at(3)).unwrap();
    assert!(
        matches!(again.as_slice(), [Transition::HolderDispatch { tool_use_id, .. }] if tool_use_id == "t3"),
        "{again:?}"
    );
}

#[test]
fn a_dispatch_respects_dependencies_and_max_in_progress_with_a_warning() {
    let workflow = workflow();
    let err = subagent::dispatched(&workflow, dispatch(&id("c"), "t1"), 0, at(1)).unwrap_err();
    insta::assert_snapshot!(err, @"phase `c` was not started for the sub-agent: phase `c` waits for `a`, `b` (finish those phases first, or start anyway with `--force`)");
    let err = subagent::dispatched(&workflow, dispatch(&id("x"), "t1"), 0, at(1)).unwrap_err();
    insta::assert_snapshot!(err, @"workflow `w` has no phase `x`");

    let mut one = workflow.clone();
    let first = subagent::dispatched(&one, dispatch(&id("a"), "t1"), 1, at(1)).unwrap();
    change(&mut one, &first, at(1));
    let err = subagent::dispatched(&one, dispatch(&id("b"), "t2"), 1, at(2)).unwrap_err();
    insta::assert_snapshot!(err, @"phase `b` was not started for the sub-agent: `max_in_progress` is 1, and `a` in progress; dispatch it when one of them is done");
    // Without a limit, both run.
    assert!(subagent::dispatched(&one, dispatch(&id("b"), "t2"), 0, at(2)).is_ok());

    let mut done = one.clone();
    change(
        &mut done,
        &[Transition::PhaseComplete {
            phase: id("a"),
            artifacts: Vec::new(),
            commit_sha: None,
            force: false,
        }],
        at(3),
    );
    let err = subagent::dispatched(&done, dispatch(&id("a"), "t9"), 0, at(4)).unwrap_err();
    assert!(err.contains("phase `a` is complete"), "{err}");
}

#[test]
fn a_sub_agent_is_known_by_its_call_its_id_or_as_the_only_one_running() {
    let mut workflow = held();
    // Two dispatches run without an agent id: an agent with no call to go by is not guessed.
    let first = Agent {
        agent_id: Some("agent-1"),
        tool_use_id: None,
    };
    assert_eq!(subagent::seen(&workflow, first, at(3)), Vec::new());
    // The meta file names the call: the agent id is learnt.
    let second = Agent {
        agent_id: Some("agent-2"),
        tool_use_id: Some("t2"),
    };
    let transitions = subagent::seen(&workflow, second, at(3));
    assert_eq!(
        transitions,
        [Transition::HolderSeen {
            phase: id("b"),
            agent_id: Some("agent-2".into())
        }]
    );
    change(&mut workflow, &transitions, at(3));
    // Now `a` is the only one running without an agent id: an unknown agent is its.
    let transitions = subagent::seen(&workflow, first, at(3));
    change(&mut workflow, &transitions, at(3));
    let holder = |workflow: &Workflow, phase: &str| {
        workflow.phase(&id(phase)).unwrap().holder.clone().unwrap()
    };
    assert_eq!(holder(&workflow, "a").agent_id.as_deref(), Some("agent-1"));
    // A known agent's activity is journaled at most every interval.
    let agent_only = Agent {
        agent_id: Some("agent-1"),
        tool_use_id: None,
    };
    assert_eq!(subagent::seen(&workflow, agent_only, at(3)), Vec::new());
    let later = at(3) + ACTIVITY_INTERVAL;
    let transitions = subagent::seen(&workflow, agent_only, later);
    change(&mut workflow, &transitions, later);
    assert_eq!(holder(&workflow, "a").last_activity_at, later);
    // The call wins over a wrong agent id, and corrects it.
    let corrected = Agent {
        agent_id: Some("agent-9"),
        tool_use_id: Some("t1"),
    };
    let transitions = subagent::seen(&workflow, corrected, later);
    change(&mut workflow, &transitions, later);
    assert_eq!(holder(&workflow, "a").agent_id.as_deref(), Some("agent-9"));
    // An agent of no phase changes nothing.
    let stranger = Agent {
        agent_id: Some("agent-7"),
        tool_use_id: None,
    };
    assert_eq!(subagent::seen(&workflow, stranger, later), Vec::new());
}

#[test]
fn an_ended_sub_agent_completes_its_phase_when_its_outputs_were_written_after_the_start() {
    let workflow = held();
    let agent = Agent {
        agent_id: Some("agent-1"),
        tool_use_id: Some("t1"),
    };
    let fresh = Dated(vec![("a.md", 10, at(5))]);
    let mut done = workflow.clone();
    change(
        &mut done,
        &subagent::ended(&workflow, agent, Some("All done."), &fresh),
        at(6),
    );
    let phase = done.phase(&id("a")).unwrap();
    assert_eq!(phase.status, PhaseStatus::Complete);
    assert_eq!(phase.progress, None);
    let holder = phase.holder.as_ref().unwrap();
    assert_eq!(holder.agent_id.as_deref(), Some("agent-1"));
    assert_eq!(holder.ended_at, Some(at(6).into()));
    // Its end is recorded once.
    assert_eq!(
        subagent::ended(&done, agent, Some("again"), &fresh),
        Vec::new()
    );

    // An output left from before the phase started does not count.
    let stale = Dated(vec![("a.md", 10, at(0))]);
    let mut stays = workflow.clone();
    change(
        &mut stays,
        &subagent::ended(
            &workflow,
            agent,
            Some("  Parsed half the grammar.  "),
            &stale,
        ),
        at(6),
    );
    let phase = stays.phase(&id("a")).unwrap();
    assert_eq!(phase.status, PhaseStatus::InProgress);
    assert_eq!(phase.progress.as_deref(), Some("Parsed half the grammar."));
    assert_eq!(phase.progress_at, Some(at(6).into()));
    assert_eq!(phase.holder.as_ref().unwrap().ended_at, Some(at(6).into()));
}

#[test]
fn an_ended_sub_agent_without_outputs_leaves_its_last_message_as_the_note() {
    let workflow = held();
    let agent = Agent {
        agent_id: None,
        tool_use_id: Some("t2"),
    };
    let long = "x".repeat(MAX_NOTE_CHARS + 50);
    let mut after = workflow.clone();
    change(
        &mut after,
        &subagent::ended(&workflow, agent, Some(&long), &Dated(Vec::new())),
        at(6),
    );
    let phase = after.phase(&id("b")).unwrap();
    assert_eq!(phase.status, PhaseStatus::InProgress);
    let note = phase.progress.as_deref().unwrap();
    assert_eq!(note.chars().count(), MAX_NOTE_CHARS + 1);
    assert!(note.ends_with('…'));

    // A phase the sub-agent completed itself (through the CLI) keeps its state; only the end
    // of its holder is recorded.
    let mut completed = workflow.clone();
    change(
        &mut completed,
        &[Transition::PhaseComplete {
            phase: id("b"),
            artifacts: Vec::new(),
            commit_sha: None,
            force: false,
        }],
        at(5),
    );
    let transitions = subagent::ended(&completed, agent, Some("Done."), &Dated(Vec::new()));
    assert_eq!(
        transitions,
        [Transition::HolderEnd {
            phase: id("b"),
            note: None,
            error: None
        }]
    );
}

#[test]
fn a_failed_sub_agent_marks_its_phase_and_not_the_workflow() {
    let mut workflow = held();
    let agent = Agent {
        agent_id: Some("agent-2"),
        tool_use_id: Some("t2"),
    };
    let transitions = subagent::failed(&workflow, agent, "rate_limit");
    change(&mut workflow, &transitions, at(4));
    let phase = workflow.phase(&id("b")).unwrap();
    assert_eq!(phase.status, PhaseStatus::InProgress);
    assert_eq!(phase.failures, 1);
    assert_eq!(phase.error.as_deref(), Some("sub-agent `t2`: rate_limit"));
    let holder = phase.holder.as_ref().unwrap();
    assert_eq!(holder.error.as_deref(), Some("rate_limit"));
    assert_eq!(holder.ended_at, Some(at(4).into()));
    assert_eq!(workflow.pause, None);
    // The other hooks that report the same failure add nothing.
    assert_eq!(subagent::failed(&workflow, agent, "rate_limit"), Vec::new());
    // The other phase is untouched.
    let other = workflow.phase(&id("a")).unwrap();
    assert_eq!(other.failures, 0);
    assert_eq!(other.holder.as_ref().unwrap().ended_at, None);
}

/// A phase started again (a new attempt from the CLI) drops its old holder; a re-dispatch then
/// records the new one.
#[test]
fn a_new_attempt_drops_the_old_holder_until_a_dispatch_records_one() {
    let mut workflow = held();
    let agent = Agent {
        agent_id: Some("agent-1"),
        tool_use_id: Some("t1"),
    };
    let ended = subagent::ended(&workflow, agent, Some("Half done."), &Dated(Vec::new()));
    change(&mut workflow, &ended, at(5));
    change(
        &mut workflow,
        &[Transition::PhaseStart {
            phase: id("a"),
            force: true,
        }],
        at(6),
    );
    let phase = workflow.phase(&id("a")).unwrap();
    assert_eq!(phase.attempts, 2);
    assert_eq!(phase.holder, None);
    assert_eq!(phase.progress.as_deref(), Some("Half done."));
    // Re-dispatched while in progress: only the holder is recorded.
    let again = subagent::dispatched(&workflow, dispatch(&id("a"), "t5"), 0, at(7)).unwrap();
    change(&mut workflow, &again, at(7));
    let holder = workflow.phase(&id("a")).unwrap().holder.clone().unwrap();
    assert_eq!(holder.tool_use_id, "t5");
    assert_eq!(holder.started_at, at(7));
}

/// A secret straddling the cut of a last message or a failure's text leaves nothing of itself:
/// the text is redacted before it is cut.
#[test]
fn a_secret_across_the_cut_is_redacted_whole() {
    let token = "ghp_1234567890abcdefghijABCDEFGHIJ123456";
    let agent = Agent {
        agent_id: None,
        tool_use_id: Some("t2"),
    };
    for before in [MAX_NOTE_CHARS - 30, MAX_NOTE_CHARS - 21, MAX_NOTE_CHARS - 1] {
        let text = format!("{} {token} tail", "x".repeat(before));
        let workflow = held();
        let ended = subagent::ended(&workflow, agent, Some(&text), &Dated(Vec::new()));
        let failed = subagent::failed(&workflow, agent, &text);
        for transition in ended.iter().chain(&failed) {
            let Transition::HolderEnd { note, error, .. } = transition else {
                continue;
            };
            for kept in note.iter().chain(error) {
                assert!(!kept.contains("ghp_"), "{kept}");
                assert!(!kept.contains("1234567890"), "{kept}");
                assert!(kept.chars().count() <= MAX_NOTE_CHARS + 1);
            }
        }
    }
}
