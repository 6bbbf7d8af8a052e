//! Tests of the report: the timeline built from a journal, and its HTML.

use checkpoint_core::{PhaseId, PhasePlan, Plan, Transition, WorkflowId, apply, journal::Entry};
use chrono::{DateTime, Duration, TimeZone, Utc};

use super::{build, html, render_human};
use crate::output::Paint;

fn at(second: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 22, 0, 0).unwrap() + Duration::seconds(second)
}

fn phase(id: &str) -> PhaseId {
    PhaseId::new(id).unwrap()
}

/// A night: a run, a session that completes `a`, a rate-limited one, a wait, a resumed one
/// that completes `b`, then the stop.
fn night() -> (checkpoint_core::Workflow, Vec<Entry>) {
    let mut workflow = Plan {
        phases: vec![
            PhasePlan::from_spec("a").unwrap(),
            PhasePlan::from_spec("b:a").unwrap(),
        ],
        ..Plan::default()
    }
    .into_workflow(WorkflowId::new("night").unwrap(), None, at(0))
    .unwrap();
    let steps = [
        (
            1,
            Transition::RunStart {
                pid: 42,
                client: "claude".into(),
                budget: None,
            },
        ),
        (
            2,
            Transition::RunSessionStart {
                number: 1,
                phase: Some(phase("a")),
                resumed: None,
            },
        ),
        (
            3,
            Transition::PhaseStart {
                phase: phase("a"),
                force: false,
            },
        ),
        (
            63,
            Transition::PhaseComplete {
                phase: phase("a"),
                artifacts: Vec::new(),
                commit_sha: None,
                force: false,
            },
        ),
        (
            64,
            Transition::RunSessionEnd {
                number: 1,
                session_id: Some("s1".into()),
                exit: Some(0),
                outcome: checkpoint_core::run::SessionOutcome::Progress,
                transitions: 2,
                cost_usd: Some(0.5),
                tokens: Some(1000),
            },
        ),
        (
            65,
            Transition::RunSessionStart {
                number: 2,
                phase: Some(phase("b")),
                resumed: None,
            },
        ),
        (
            70,
            Transition::RunSessionEnd {
                number: 2,
                session_id: Some("s2".into()),
                exit: Some(1),
                outcome: checkpoint_core::run::SessionOutcome::RateLimit,
                transitions: 0,
                cost_usd: None,
                tokens: None,
            },
        ),
        (
            70,
            Transition::RunWait {
                until: at(370),
                reason: "rate limit; it resets at 22:06".into(),
                kind: None,
            },
        ),
        (
            371,
            Transition::RunSessionStart {
                number: 3,
                phase: Some(phase("b")),
                resumed: Some("s2".into()),
            },
        ),
        (
            372,
            Transition::PhaseStart {
                phase: phase("b"),
                force: false,
            },
        ),
        (
            400,
            Transition::PhaseComplete {
                phase: phase("b"),
                artifacts: Vec::new(),
                commit_sha: None,
                force: false,
            },
        ),
        (
            401,
            Transition::RunSessionEnd {
                number: 3,
                session_id: Some("s2".into()),
                exit: Some(0),
                outcome: checkpoint_core::run::SessionOutcome::Progress,
                transitions: 2,
                cost_usd: Some(0.25),
                tokens: None,
            },
        ),
        (
            402,
            Transition::RunStop {
                reason: "every phase is complete".into(),
                exit: 0,
            },
        ),
    ];
    let mut entries = Vec::new();
    for (second, transition) in steps {
        let seq = workflow.seq + 1;
        apply(&mut workflow, &transition, seq, at(second)).unwrap();
        entries.push(Entry {
            seq,
            at: at(second),
            transition,
        });
    }
    (workflow, entries)
}

#[test]
fn the_timeline_pairs_sessions_and_shows_waits_and_where_it_stopped() {
    let (workflow, entries) = night();
    let report = build(&workflow, &entries, at(500));
    let lines: Vec<String> = report
        .timeline
        .iter()
        .map(|span| {
            format!(
                "{} {} {}s {} {}",
                (span.start - at(0)).num_seconds(),
                span.kind,
                span.seconds.map_or("-".into(), |secs| secs.to_string()),
                span.phase.as_deref().unwrap_or("-"),
                span.label
            )
        })
        .collect();
    insta::assert_snapshot!(lines.join("\n"), @r"
    1 run 401s - runner pid 42 (claude): every phase is complete
    2 session 62s a session 1: progress, exit 0, 2 transitions, $0.50, 1000 tokens
    3 phase -s a start
    63 phase -s a complete
    65 session 5s b session 2: rate_limit, exit 1, 0 transitions
    70 wait 300s - rate limit; it resets at 22:06
    371 session 30s b session 3: progress, exit 0, 2 transitions, $0.25
    372 phase -s b start
    400 phase -s b complete
    ");
    let stopped = report.stopped.as_ref().unwrap();
    assert_eq!(
        (stopped.reason.as_str(), stopped.exit),
        ("every phase is complete", 0)
    );
    // Spending per session and in total (the session that said nothing counts for nothing).
    let spent = report.spent.as_ref().unwrap();
    assert_eq!(
        (spent.sessions, spent.cost_usd, spent.tokens),
        (2, 0.75, 1000)
    );
    assert_eq!(report.timeline[1].cost_usd, Some(0.5));
    let text = render_human(&report, Paint::new(false));
    assert!(
        text.contains("spent $0.75 and 1000 tokens in 2 sessions"),
        "{text}"
    );
}

#[test]
fn a_killed_runner_leaves_its_session_open_until_the_next_run() {
    let (workflow, mut entries) = night();
    // Cut after session 2 started, then a new run begins.
    entries.truncate(6);
    entries.push(Entry {
        seq: 99,
        at: at(200),
        transition: Transition::RunStart {
            pid: 43,
            client: "claude".into(),
            budget: None,
        },
    });
    let report = build(&workflow, &entries, at(500));
    let session = &report.timeline[4];
    assert_eq!(session.label, "session 2 (the runner was killed)");
    assert_eq!(session.seconds, Some(135));
    assert!(
        report.timeline[0].label.ends_with(": killed"),
        "{:?}",
        report.timeline[0]
    );
    assert!(report.stopped.is_none());
}

#[test]
fn the_html_is_self_contained_with_both_drawings() {
    let (workflow, entries) = night();
    let page = html::render(&build(&workflow, &entries, at(500)), at(500));
    assert_eq!(page.matches("<svg").count(), 2, "{page}");
    assert!(page.contains("aria-label=\"phase graph\""));
    assert!(page.contains("aria-label=\"timeline\""));
    // The edge a -> b, and every phase drawn.
    assert!(page.contains("marker-end=\"url(#arrow)\""));
    assert!(page.contains(">a · complete</text>") && page.contains(">b · complete</text>"));
    // Nothing is fetched: no script, no external reference besides the SVG namespace.
    assert!(!page.contains("<script"));
    let without_namespace = page.replace("http://www.w3.org/2000/svg", "");
    assert!(!without_namespace.contains("http://") && !without_namespace.contains("https://"));
    assert!(!without_namespace.contains("src="));
    assert!(page.contains("Stopped 2026-03-01 22:06:42 UTC: every phase is complete (exit 0)"));
}

/// The boxes of the phase graph, as (x, width, label, tooltip), in plan order.
fn boxes(page: &str) -> Vec<(i64, i64, String, String)> {
    let attr = |tag: &str, name: &str| -> i64 {
        let start = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        tag[start..].split('"').next().unwrap().parse().unwrap()
    };
    let between = |text: &str, open: &str, close: &str| -> String {
        let start = text.find(open).unwrap() + open.len();
        text[start..].split(close).next().unwrap().to_owned()
    };
    let graph = between(page, "aria-label=\"phase graph\"", "</svg>");
    graph
        .split("<g>")
        .skip(1)
        .map(|group| {
            let rect = between(group, "<rect", "/>");
            (
                attr(&rect, "x"),
                attr(&rect, "width"),
                between(group, "fill=\"#1d2430\">", "</text>"),
                between(group, "<title>", "</title>"),
            )
        })
        .collect()
}

/// Issue 25: a box is as wide as its label (`schema-migration · complete` was clipped in the
/// fixed 150 pixels), its column as wide as its widest box, so that no box overlaps the next
/// column; a label over 40 columns is cut with an ellipsis and whole in the tooltip.
#[test]
fn the_graph_sizes_its_boxes_to_their_labels() {
    let long = "x".repeat(128);
    let wide = "M".repeat(36);
    let ids = ["a", "schema-migration", &long, "b", &wide, "c"];
    let mut workflow = Plan {
        phases: vec![
            PhasePlan::from_spec("a").unwrap(),
            PhasePlan::from_spec("schema-migration:a").unwrap(),
            PhasePlan::from_spec(&format!("{long}:a")).unwrap(),
            PhasePlan::from_spec("b:schema-migration").unwrap(),
            PhasePlan::from_spec(&format!("{wide}:schema-migration")).unwrap(),
            PhasePlan::from_spec(&format!("c:{long},{wide}")).unwrap(),
        ],
        ..Plan::default()
    }
    .into_workflow(WorkflowId::new("graph").unwrap(), None, at(0))
    .unwrap();
    for id in ["a", "schema-migration"] {
        let start = Transition::PhaseStart {
            phase: phase(id),
            force: false,
        };
        let complete = Transition::PhaseComplete {
            phase: phase(id),
            artifacts: Vec::new(),
            commit_sha: None,
            force: false,
        };
        for transition in [start, complete] {
            let seq = workflow.seq + 1;
            apply(&mut workflow, &transition, seq, at(1)).unwrap();
        }
    }
    let page = html::render(&build(&workflow, &[], at(500)), at(500));
    let boxes = boxes(&page);
    assert_eq!(boxes.len(), ids.len(), "{page}");
    for ((x, width, label, tooltip), id) in boxes.iter().zip(ids) {
        assert!(tooltip.starts_with(&format!("{id}: ")), "{tooltip}");
        let shown = label.trim_end_matches('…');
        assert!(
            id.starts_with(shown.split(" · ").next().unwrap()),
            "{label}"
        );
        if label.ends_with('…') {
            assert!(id.len() > 30, "{label}");
        } else {
            assert!(label.starts_with(&format!("{id} · ")), "{label}");
        }
        // At least 7 pixels a character (10 for an `M`) and a margin each side.
        let px: usize = label.chars().map(|c| if c == 'M' { 10 } else { 7 }).sum();
        assert!(*width as usize >= px + 20, "{label}: {width}");
        assert!(*width <= 40 * 11 + 40, "{label}: {width}");
        // No box reaches a box of the next column.
        for (other_x, ..) in &boxes {
            assert!(!(x < other_x && *other_x < x + width), "{label} overlaps");
        }
    }
    assert_eq!(boxes[1].2, "schema-migration · complete");
    assert!(boxes[2].2.ends_with('…') && boxes[4].2.ends_with('…'));
}

/// Sessions ended with each outcome the runner journals, one ended by a new run (the runner was
/// killed), and one still open whose resumed session id holds every outcome's word: each is
/// coloured by how it ended, never by words in its label.
#[test]
fn a_session_is_coloured_by_how_it_ended_not_by_its_label() {
    let (workflow, _) = night();
    let mut entries = Vec::new();
    let mut push = |second: i64, transition: Transition| {
        entries.push(Entry {
            seq: entries.len() as u64 + 2,
            at: at(second),
            transition,
        });
    };
    let start = |number: u32, resumed: Option<&str>| Transition::RunSessionStart {
        number,
        phase: None,
        resumed: resumed.map(str::to_owned),
    };
    let run = || Transition::RunStart {
        pid: 42,
        client: "claude".into(),
        budget: None,
    };
    push(0, run());
    let outcomes = [
        "progress",
        "stall",
        "rate_limit",
        "crash",
        "interrupted",
        "unknown",
    ];
    for (number, outcome) in (1..).zip(outcomes) {
        push(i64::from(number) * 10, start(number, None));
        push(
            i64::from(number) * 10 + 5,
            Transition::RunSessionEnd {
                number,
                session_id: None,
                exit: Some(1),
                outcome: outcome.to_owned().into(),
                transitions: 0,
                cost_usd: None,
                tokens: None,
            },
        );
    }
    let every_word = Some("crash-stall-rate_limit-killed");
    push(100, start(7, every_word));
    push(110, run());
    push(120, start(8, every_word));
    let report = build(&workflow, &entries, at(500));
    let colours: Vec<&str> = report
        .timeline
        .iter()
        .filter(|span| span.label.starts_with("session"))
        .map(html::span_color)
        .collect();
    assert_eq!(
        colours,
        [
            "#2e9d57", "#9aa3ad", "#d99a00", "#d64545", "#2f6fd6", "#2f6fd6", "#d64545", "#2f6fd6"
        ]
    );
}
