//! Tests of journal comparison and divergence resolution.

use std::path::Path;

use chrono::{DateTime, TimeZone, Utc};

use crate::{
    PhaseId, PhasePlan, PhaseStatus, Plan, Transition, Workflow, WorkflowId,
    journal::{Entry, replay},
    sync::{Comparison, Divergence, Keep, compare, merge_conflict, resolve},
    testing::{complete, phase, start},
};

fn at(minute: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, minute, 0).unwrap()
}

/// A journal: `init` of phases `a`, `b`, `c` (independent), then `transitions`.
fn journal(transitions: &[Transition]) -> Vec<Entry> {
    let phases = ["a", "b", "c"]
        .iter()
        .map(|spec| PhasePlan::from_spec(spec).unwrap())
        .collect();
    let workflow = Plan {
        phases,
        ..Plan::default()
    }
    .into_workflow(WorkflowId::new("w").unwrap(), None, at(0))
    .unwrap();
    let mut entries = vec![Entry {
        seq: 1,
        at: at(0),
        transition: Transition::Init {
            workflow: Box::new(workflow),
        },
    }];
    extend(&mut entries, transitions);
    entries
}

fn extend(entries: &mut Vec<Entry>, transitions: &[Transition]) {
    for transition in transitions {
        let seq = entries.len() as u64 + 1;
        entries.push(Entry {
            seq,
            at: at(seq as u32),
            transition: transition.clone(),
        });
    }
}

fn state(entries: &[Entry]) -> Workflow {
    replay(Path::new("journal.jsonl"), None, entries)
        .unwrap()
        .unwrap()
}

fn statuses(workflow: &Workflow) -> Vec<(String, PhaseStatus)> {
    workflow
        .phases
        .iter()
        .map(|phase| (phase.id.to_string(), phase.status))
        .collect()
}

/// Two journals that share `init` and `start a`, then each side completes its own phases.
fn diverged(ours: &[Transition], theirs: &[Transition]) -> (Vec<Entry>, Vec<Entry>, Divergence) {
    let shared = journal(&[start("a")]);
    let mut local = shared.clone();
    extend(&mut local, ours);
    let mut remote = shared;
    // The remote side's entries are made at other times, as on another machine.
    for transition in theirs {
        let seq = remote.len() as u64 + 1;
        remote.push(Entry {
            seq,
            at: at(30 + seq as u32),
            transition: transition.clone(),
        });
    }
    let Comparison::Diverged(divergence) = compare(&local, &remote) else {
        panic!("the journals diverge");
    };
    (local, remote, divergence)
}

fn fork_id() -> WorkflowId {
    WorkflowId::new("w@local-20260301T120000Z").unwrap()
}

#[test]
fn compare_finds_which_side_is_ahead() {
    let short = journal(&[start("a")]);
    let long = journal(&[start("a"), complete("a")]);
    assert_eq!(compare(&short, &short), Comparison::Same);
    assert_eq!(compare(&long, &short), Comparison::LocalAhead(1));
    assert_eq!(compare(&short, &long), Comparison::RemoteAhead(1));
    assert_eq!(compare(&[], &long), Comparison::RemoteAhead(3));
}

#[test]
fn compare_reports_where_and_what_since_a_divergence() {
    let (_, _, divergence) = diverged(&[complete("a"), start("b")], &[start("c")]);
    assert_eq!(divergence.common_seq, 2);
    let ops = |changes: &[crate::sync::Change]| {
        changes
            .iter()
            .map(|change| {
                format!(
                    "{} {} {:?}",
                    change.seq,
                    change.op,
                    change.phase.as_ref().map(PhaseId::as_str)
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ops(&divergence.ours),
        ["3 phase_complete Some(\"a\")", "4 phase_start Some(\"b\")"]
    );
    assert_eq!(ops(&divergence.theirs), ["3 phase_start Some(\"c\")"]);
}

#[test]
fn merge_needs_different_phases() {
    let (_, _, disjoint) = diverged(&[complete("a")], &[start("c")]);
    assert_eq!(merge_conflict(&disjoint), None);
    let (_, _, same) = diverged(
        &[complete("a")],
        &[Transition::PhaseFail {
            phase: phase("a"),
            reason: "tests fail".into(),
        }],
    );
    assert_eq!(
        merge_conflict(&same).as_deref(),
        Some("both sides changed `a`")
    );
    let pause = Transition::Pause {
        reason: "limit".into(),
        until: None,
    };
    let (_, _, status) = diverged(std::slice::from_ref(&pause), std::slice::from_ref(&pause));
    assert_eq!(
        merge_conflict(&status).as_deref(),
        Some("both sides paused, resumed or abandoned the workflow")
    );
}

#[test]
fn keeping_theirs_forks_ours_whole() {
    let (local, remote, divergence) = diverged(&[complete("a"), start("b")], &[start("c")]);
    let resolved = resolve(
        Path::new("journal.jsonl"),
        &local,
        &remote,
        &divergence,
        Keep::Theirs,
        fork_id(),
        at(59),
    )
    .unwrap();
    assert_eq!(resolved.journal.len(), remote.len() + 1);
    assert!(
        resolved.journal.starts_with(&remote),
        "the shared history only grows"
    );
    assert_eq!(
        statuses(&state(&resolved.journal)),
        statuses(&state(&remote))
    );
    let (id, fork) = resolved.fork.unwrap();
    assert_eq!(id, fork_id());
    assert_eq!(fork.len(), local.len() + 1);
    assert!(fork.starts_with(&local), "our entries are kept whole");
    let forked = state(&fork);
    assert_eq!(forked.id, fork_id());
    assert_eq!(statuses(&forked), statuses(&state(&local)));
}

#[test]
fn keeping_ours_replays_ours_after_theirs() {
    let (local, remote, divergence) = diverged(&[complete("a"), start("b")], &[start("c")]);
    let resolved = resolve(
        Path::new("journal.jsonl"),
        &local,
        &remote,
        &divergence,
        Keep::Ours,
        fork_id(),
        at(59),
    )
    .unwrap();
    assert_eq!(resolved.journal.len(), remote.len() + 1 + 2);
    assert!(resolved.journal.starts_with(&remote));
    assert_eq!(
        statuses(&state(&resolved.journal)),
        statuses(&state(&local))
    );
    let (_, fork) = resolved.fork.unwrap();
    assert!(fork.starts_with(&remote), "their entries are kept whole");
    assert_eq!(statuses(&state(&fork)), statuses(&state(&remote)));
}

#[test]
fn merging_applies_both_sides() {
    let (local, remote, divergence) = diverged(&[complete("a")], &[start("c")]);
    let resolved = resolve(
        Path::new("journal.jsonl"),
        &local,
        &remote,
        &divergence,
        Keep::Merge,
        fork_id(),
        at(59),
    )
    .unwrap();
    assert!(resolved.fork.is_none());
    assert_eq!(resolved.journal.len(), remote.len() + 1 + 1);
    let merged = state(&resolved.journal);
    assert_eq!(
        statuses(&merged),
        [
            ("a".into(), PhaseStatus::Complete),
            ("b".into(), PhaseStatus::Pending),
            ("c".into(), PhaseStatus::InProgress)
        ]
    );
    let seqs: Vec<u64> = resolved.journal.iter().map(|entry| entry.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5]);
}

#[test]
fn merging_the_same_phase_is_refused() {
    let (local, remote, divergence) = diverged(&[complete("a")], &[complete("a")]);
    let err = resolve(
        Path::new("journal.jsonl"),
        &local,
        &remote,
        &divergence,
        Keep::Merge,
        fork_id(),
        at(59),
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "cannot merge: both sides changed `a`");
}
