//! The heads read from documents of every shape: a whole workflow, a workflow named by its id,
//! a plan, none of them.

use serde_json::json;

use super::*;

#[test]
fn a_workflow_object_is_read_and_an_id_is_none() {
    let whole = json!({
        "version": 1,
        "workflow": {"id": "w", "status": "active", "title": "t",
                     "phases": [{"id": "a", "status": "complete", "tasks": []}]},
        "phases": [],
    });
    let summary: Summary = serde_json::from_value(whole).unwrap();
    assert_eq!(
        summary.workflow,
        Some(WorkflowHead {
            id: "w".into(),
            status: "active".into(),
            phases: vec![PhaseHead {
                id: "a".into(),
                status: "complete".into()
            }],
        })
    );
    assert_eq!(summary.plan, None);
    for other in [json!("w"), json!(null), json!(3), json!(["w"]), json!(true)] {
        let summary: Summary =
            serde_json::from_value(json!({ "workflow": other, "plan": null })).unwrap();
        assert_eq!(summary, Summary::default(), "{other}");
    }
    let none: Summary = serde_json::from_value(json!({"version": 1})).unwrap();
    assert_eq!(none, Summary::default());
}

/// A renamed field of a workflow the document does carry is an error, not a silent `None`.
#[test]
fn a_workflow_missing_a_field_is_an_error() {
    let renamed = json!({"workflow": {"id": "w", "state": "active", "phases": []}});
    assert!(serde_json::from_value::<Summary>(renamed).is_err());
}

#[test]
fn a_plan_round_trips() {
    let plan = json!({"plan": {
        "next": {"action": "start_phase", "reason": "r", "command": "checkpoint start a"},
        "recoveries": [{"code": "c", "description": "d"}],
        "decision_required": true,
    }});
    let summary: Summary = serde_json::from_value(plan).unwrap();
    let head = summary.plan.clone().unwrap();
    assert_eq!(head.next.command.as_deref(), Some("checkpoint start a"));
    assert_eq!(head.recoveries[0].description, "d");
    assert!(head.decision_required);
    let again: Summary = serde_json::from_value(serde_json::to_value(&summary).unwrap()).unwrap();
    assert_eq!(again, summary);
}

#[test]
fn an_error_report_keeps_its_code_and_help() {
    let line = r#"{"message": "timed out","code": "checkpoint::store::locked","severity": "error","causes": [],"help": "raise it","labels": [],"related": []}"#;
    let report: ErrorReport = serde_json::from_str(line).unwrap();
    assert_eq!(
        report.code.as_deref(),
        Some(crate::diagnostic::STORE_LOCKED)
    );
    assert_eq!(report.help.as_deref(), Some("raise it"));
    let bare: ErrorReport = serde_json::from_str(r#"{"message": "m"}"#).unwrap();
    assert_eq!((bare.code, bare.help), (None, None));
}
