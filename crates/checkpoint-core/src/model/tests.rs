//! The on-disk contract of a phase's holder.

use crate::model::{Holder, Phase, PhaseStatus};

/// A phase written before holders existed reads without one, and one with a holder keeps it
/// through a write and a read.
#[test]
fn phase_holder_is_optional_and_round_trips() {
    let old: Phase =
        serde_json::from_str(r#"{"id":"build","name":"build","status":"in_progress"}"#).unwrap();
    assert_eq!(old.holder, None);
    assert_eq!(old.status, PhaseStatus::InProgress);
    let written = serde_json::to_string(&old).unwrap();
    assert!(!written.contains("holder"), "{written}");

    let mut held = old;
    held.holder = Some(Holder {
        tool_use_id: "toolu_1".into(),
        agent_id: Some("a1b2".into()),
        description: Some("Build the parser".into()),
        session_id: None,
        started_at: "2026-01-02T03:04:05Z".parse().unwrap(),
        last_activity_at: "2026-01-02T03:14:05Z".parse().unwrap(),
        ended_at: None,
        error: None,
    });
    let written = serde_json::to_string(&held).unwrap();
    insta::assert_snapshot!(written, @r#"{"id":"build","name":"build","dependencies":[],"status":"in_progress","holder":{"tool_use_id":"toolu_1","agent_id":"a1b2","description":"Build the parser","started_at":"2026-01-02T03:04:05Z","last_activity_at":"2026-01-02T03:14:05Z"}}"#);
    let read: Phase = serde_json::from_str(&written).unwrap();
    assert_eq!(read, held);
}
