//! Tests of the rules of Claude Code `Workflow` runs: the workflow a launch becomes, agents'
//! starts, ends and failures, and the phases' verdicts.

use super::*;

fn now() -> DateTime<Utc> {
    DateTime::UNIX_EPOCH
}

fn launch() -> Launch {
    Launch {
        record: RunRecord {
            run_id: "wf_abc123-x1".into(),
            script_path: Some("flow.js".into()),
            transcript_dir: None,
            session_id: Some("s1".into()),
        },
        name: Some("probe-wf".into()),
        description: None,
        phases: vec![
            ("Design it".into(), None),
            ("Build".into(), Some("two".into())),
        ],
        agents: vec![
            ("design".into(), Some("Design it".into())),
            ("build:1".into(), Some("Build".into())),
            ("build:2".into(), Some("Build".into())),
        ],
    }
}

fn agent(id: &str, label: Option<&str>, phase: Option<&str>, state: AgentState) -> AgentSeen {
    AgentSeen {
        agent_id: id.into(),
        label: label.map(str::to_owned),
        phase: phase.map(str::to_owned),
        state,
    }
}

/// Agent `a1`, `design` of phase "Design it", done with `note`.
fn design(note: &str) -> AgentSeen {
    agent(
        "a1",
        Some("design"),
        Some("Design it"),
        AgentState::Done(note.into()),
    )
}

/// Applies what `seen` decides and returns the workflow after it.
fn see(workflow: &Workflow, seen: &[AgentSeen], settled: bool) -> Workflow {
    let (transitions, _) = observed(workflow, seen, settled, now());
    let mut next = workflow.clone();
    for transition in &transitions {
        let seq = next.seq + 1;
        apply(&mut next, transition, seq, now()).unwrap();
    }
    next
}

fn statuses(workflow: &Workflow) -> Vec<(&str, &str)> {
    workflow
        .phases
        .iter()
        .map(|phase| (phase.id.as_str(), phase.status.as_str()))
        .collect()
}

#[test]
fn a_launch_becomes_a_workflow_with_safe_ids_and_the_titles_kept() {
    let workflow = launched(&launch(), now()).unwrap();
    assert_eq!(workflow.id.as_str(), "wf_abc123-x1");
    assert_eq!(workflow.title.as_deref(), Some("probe-wf"));
    assert_eq!(
        statuses(&workflow),
        [("design-it", "pending"), ("build", "pending")]
    );
    assert_eq!(workflow.phases[0].name, "Design it");
    let tasks: Vec<&str> = workflow.phases[1]
        .tasks
        .iter()
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(tasks, ["build-1", "build-2"]);
    assert_eq!(
        record(&workflow).unwrap().script_path.as_deref(),
        Some("flow.js")
    );
}

#[test]
fn ids_are_made_safe_from_any_title_and_run_id() {
    for (title, id) in [
        ("", "x"),
        ("../../etc", "etc"),
        ("Ünïcode ✓ phase", "n-code-phase"),
        ("a\nb\tc", "a-b-c"),
        ("...", "x"),
    ] {
        assert_eq!(safe(title, 60), id, "{title:?}");
        PhaseId::new(&safe(title, 60)).unwrap();
    }
    let long = "a".repeat(500);
    assert!(safe(&long, 60).len() <= 60);
    assert!(
        workflow_id("wf_../../x")
            .unwrap()
            .as_str()
            .starts_with("wf_-x-")
    );
    // A run id that is already an id is its workflow's; any other gets a hash of itself, so
    // that distinct runs never share a workflow.
    assert_eq!(
        workflow_id("wf_a1b2c3d4-e5f").unwrap().as_str(),
        "wf_a1b2c3d4-e5f"
    );
    let ids: Vec<String> = ["", ".", "..", "...", "a b", "a.b", "a-b", "x", "wf_../../x"]
        .iter()
        .map(|run| workflow_id(run).unwrap().as_str().to_owned())
        .collect();
    let mut distinct = ids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), ids.len(), "{ids:?}");
    assert!(workflow_id(&"r".repeat(300)).unwrap().as_str().len() <= 100);
    let mut twice = launch();
    twice.phases = vec![
        ("Build".into(), None),
        ("build".into(), None),
        (String::new(), None),
    ];
    let workflow = launched(&twice, now()).unwrap();
    assert_eq!(
        statuses(&workflow),
        [
            ("build", "pending"),
            ("build-2", "pending"),
            ("x", "pending")
        ]
    );
}

#[test]
fn a_phase_completes_only_once_its_agents_succeeded_and_the_run_went_past_it() {
    let workflow = launched(&launch(), now()).unwrap();
    let w = see(
        &workflow,
        &[agent(
            "a1",
            Some("design"),
            Some("Design it"),
            AgentState::Started,
        )],
        false,
    );
    assert_eq!(
        statuses(&w),
        [("design-it", "in_progress"), ("build", "pending")]
    );
    assert_eq!(w.phases[0].tasks[0].agent_id.as_deref(), Some("a1"));
    let done = AgentState::Done("result-design".into());
    let w = see(&w, &[agent("a1", None, None, done)], false);
    // Done, but the run has not gone past it yet.
    assert_eq!(
        statuses(&w),
        [("design-it", "in_progress"), ("build", "pending")]
    );
    assert_eq!(w.phases[0].tasks[0].note.as_deref(), Some("result-design"));
    let w = see(
        &w,
        &[agent(
            "a2",
            Some("build:1"),
            Some("Build"),
            AgentState::Started,
        )],
        false,
    );
    assert_eq!(
        statuses(&w),
        [("design-it", "complete"), ("build", "in_progress")]
    );
    let w = see(
        &w,
        &[
            agent("a2", None, None, AgentState::Done("one".into())),
            agent(
                "a3",
                Some("build:2"),
                Some("Build"),
                AgentState::Done("two".into()),
            ),
        ],
        false,
    );
    assert_eq!(
        statuses(&w),
        [("design-it", "complete"), ("build", "in_progress")]
    );
    let w = see(&w, &[], true);
    assert_eq!(
        statuses(&w),
        [("design-it", "complete"), ("build", "complete")]
    );
    assert_eq!(w.status.as_str(), "complete");
    // Seen again, nothing changes.
    assert!(
        observed(
            &w,
            &[agent("a3", None, None, AgentState::Done("two".into()))],
            true,
            now()
        )
        .0
        .is_empty()
    );
}

#[test]
fn one_failed_agent_fails_its_phase_whatever_the_run_says() {
    let workflow = launched(&launch(), now()).unwrap();
    let w = see(
        &workflow,
        &[
            design("d"),
            agent("a2", Some("build:1"), Some("Build"), AgentState::Started),
            agent("a3", Some("build:2"), Some("Build"), AgentState::Started),
            agent(
                "a2",
                None,
                None,
                AgentState::Failed("API Error: 429".into()),
            ),
        ],
        false,
    );
    // Its sibling still runs: not decided yet, and the sibling can still finish.
    assert_eq!(
        statuses(&w),
        [("design-it", "complete"), ("build", "in_progress")]
    );
    let w = see(
        &w,
        &[agent("a3", None, None, AgentState::Done("two".into()))],
        false,
    );
    assert_eq!(
        statuses(&w),
        [("design-it", "complete"), ("build", "failed")]
    );
    assert!(w.phases[1].error.as_deref().unwrap().contains("build:1"));
    // The client's summary says completed: the phase stays failed.
    let w = see(&w, &[], true);
    assert_eq!(w.phases[1].status.as_str(), "failed");
    assert_eq!(w.status.as_str(), "failed");
    assert!(!w.status.is_finished());
}

#[test]
fn a_resumed_run_reruns_the_failed_agent_under_a_new_id() {
    let workflow = launched(&launch(), now()).unwrap();
    let w = see(
        &workflow,
        &[
            design("d"),
            agent(
                "a2",
                Some("build:1"),
                Some("Build"),
                AgentState::Failed("429".into()),
            ),
            agent(
                "a3",
                Some("build:2"),
                Some("Build"),
                AgentState::Done("two".into()),
            ),
        ],
        true,
    );
    assert_eq!(w.phases[1].status.as_str(), "failed");
    let w = see(
        &w,
        &[agent(
            "b2",
            Some("build:1"),
            Some("Build"),
            AgentState::Done("one".into()),
        )],
        true,
    );
    assert_eq!(
        statuses(&w),
        [("design-it", "complete"), ("build", "complete")]
    );
    let task = &w.phases[1].tasks[0];
    assert_eq!((task.agent_id.as_deref(), task.attempts), (Some("b2"), 2));
}

#[test]
fn an_agent_the_files_do_not_place_is_a_warning_not_a_change() {
    let workflow = launched(&launch(), now()).unwrap();
    let (transitions, warnings) = observed(
        &workflow,
        &[
            agent("zz", None, None, AgentState::Started),
            agent("zy", None, None, AgentState::Done("r".into())),
            agent(
                "yy",
                Some("x"),
                Some("Nowhere"),
                AgentState::Failed("e".into()),
            ),
        ],
        false,
        now(),
    );
    assert!(transitions.is_empty());
    // An agent only started is placed later, without a warning.
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[1].contains("`Nowhere`"));
    // An agent of a known phase but a label the script did not show gets a task of its own.
    let w = see(
        &workflow,
        &[agent(
            "a9",
            Some("extra one"),
            Some("Build"),
            AgentState::Started,
        )],
        false,
    );
    assert_eq!(w.phases[1].tasks[2].id.as_str(), "extra-one");
}

#[test]
fn the_briefing_names_the_run_the_done_results_and_the_unfinished_agents() {
    let workflow = launched(&launch(), now()).unwrap();
    let w = see(
        &workflow,
        &[
            design("result-design"),
            agent("a2", Some("build:1"), Some("Build"), AgentState::Started),
        ],
        false,
    );
    let text = briefing(&w, ".claude/checkpoints/wf_abc123-x1/results").unwrap();
    for part in [
        "wf_abc123-x1",
        "probe-wf",
        "result-design",
        "\"build:1\" (phase \"Build\")",
        "\"build:2\" (phase \"Build\")",
        "never finished",
        "never started",
        "cannot",
        "continuation script",
        ".claude/checkpoints/wf_abc123-x1/results",
        "flow.js",
    ] {
        assert!(text.contains(part), "{part} missing from:\n{text}");
    }
    let mut plain = w.clone();
    plain.extensions.clear();
    assert!(briefing(&plain, "r").is_none());
}

#[test]
fn an_excerpt_is_redacted_and_at_most_a_thousand_characters() {
    let long = "x".repeat(5000);
    assert_eq!(excerpt(&long).chars().count(), MAX_NOTE_CHARS);
    assert_eq!(excerpt("short"), "short");
    let secret = "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB done";
    assert!(!excerpt(secret).contains("ghp_0123456789"));
}

/// At 10, 100 and 1,000 agents the briefing stays within its budget, the instructions first
/// (the unfinished agents named up to a count, how to go on without starting over), the agents
/// it leaves out counted with the command that prints them all; whole, it lists every agent.
#[test]
fn a_large_run_briefs_within_its_budget_instructions_first() {
    for count in [10, 100, 1_000] {
        let mut many = launch();
        many.agents = (0..count)
            .map(|n| (format!("build:{n}"), Some("Build".to_owned())))
            .collect();
        let workflow = launched(&many, now()).unwrap();
        let budget = 4_000;
        let text = briefing_within(&workflow, "results", budget).unwrap();
        assert!(text.len() <= budget + 200, "{count}: {} bytes", text.len());
        let instructions = text.find("Do not start the run over").unwrap();
        let first_agent = text.find("  - agent").unwrap();
        assert!(instructions < first_agent, "{count}: instructions first");
        let whole = briefing(&workflow, "results").unwrap();
        assert_eq!(whole.matches("  - agent").count(), count, "{count}");
        if whole.len() > budget {
            assert!(
                text.contains(&format!(
                    "checkpoint resume --dry-run --workflow {}",
                    workflow.id
                )),
                "{count}: {text}"
            );
        }
        if count > 20 {
            assert!(
                text.contains(&format!("and {} more", count - 20)),
                "{count}"
            );
        }
    }
}

#[test]
fn an_agent_whose_task_passed_to_another_in_the_same_read_is_not_taken_for_it() {
    let workflow = launched(&launch(), now()).unwrap();
    let failed = agent(
        "a2",
        Some("build:1"),
        Some("Build"),
        AgentState::Failed("429".into()),
    );
    let w = see(&workflow, &[design("d"), failed.clone()], false);
    assert_eq!(w.phases[1].tasks[0].agent_id.as_deref(), Some("a2"));
    // The rerun takes the failed task; the failed agent, seen after it in the same read, is
    // found where its task was when the workflow was read, and is no longer its agent.
    let rerun = agent("b2", Some("build:1"), Some("Build"), AgentState::Started);
    for seen in [vec![rerun.clone(), failed.clone()], vec![rerun, failed]] {
        let after = see(&w, &seen, false);
        let task = &after.phases[1].tasks[0];
        assert_eq!(
            (task.agent_id.as_deref(), task.status.as_str()),
            (Some("b2"), "running"),
            "{:?}",
            after.phases[1].tasks
        );
    }
    // An agent placed in an earlier read is found by its id, wherever its task is.
    let mut many = launched(&launch(), now()).unwrap();
    let mut seen = Vec::new();
    for k in 0..50 {
        seen.push(agent(
            &format!("x{k}"),
            Some(&format!("build:x{k}")),
            Some("Build"),
            AgentState::Started,
        ));
    }
    many = see(&many, &seen, false);
    let done: Vec<AgentSeen> = seen
        .iter()
        .rev()
        .map(|a| AgentSeen {
            state: AgentState::Done(format!("{} done", a.agent_id)),
            ..a.clone()
        })
        .collect();
    many = see(&many, &done, false);
    for task in many.phases[1].tasks.iter().filter(|t| t.agent_id.is_some()) {
        let id = task.agent_id.as_deref().unwrap();
        assert_eq!(task.status.as_str(), "done", "{id}");
        assert_eq!(task.note.as_deref(), Some(format!("{id} done").as_str()));
    }
    assert_eq!(many.phases[1].tasks.len(), 52);
}
