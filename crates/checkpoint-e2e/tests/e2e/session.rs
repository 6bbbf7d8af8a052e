//! The hooks over a session's life: SessionStart re-injects the position, Stop records a
//! heartbeat, PreCompact and the `compact` SessionStart carry the position across a compaction,
//! StopFailure pauses the workflow after an API error.

use std::fs;
use std::thread;
use std::time::{Duration, Instant};

use checkpoint_e2e::{RequestKind, Turn};

use crate::support::{
    HOOK_WAIT, NOTE, Project, SESSION_START_CONTEXT, WORKFLOW, assert_contains_all, ops, phase,
};

#[test]
fn fresh_session_gets_the_resume_context_in_its_first_request() {
    let project = Project::interrupted(vec![Turn::text("OK")]);

    let output = project.claude(&["-p", "hi"]);

    assert_eq!(output.code(), Some(0), "{output}");
    let main = project.mock.main_requests();
    assert_eq!(main.len(), 1, "{output}");
    // The context arrives in a role `system` message of the very first request (facts §e).
    let system = main[0].role_text("system");
    assert_contains_all(
        "the first request's system messages",
        &system,
        &[
            SESSION_START_CONTEXT,
            &format!("workflow `{WORKFLOW}`"),
            NOTE,
            "**Next:**",
            "`checkpoint start design`",
        ],
    );
    // SessionStart only reads: the phase is still in progress until `/checkpoint-resume` runs.
    assert_eq!(
        phase(&project.state(WORKFLOW), "design")["status"],
        "in_progress"
    );
}

#[test]
fn repo_without_a_workflow_gets_nothing_injected_and_no_state_dir() {
    let project = Project::new(vec![Turn::text("OK")]);

    let output = project.claude(&["-p", "hi"]);

    assert_eq!(output.code(), Some(0), "{output}");
    let text = project.mock.request_text(0);
    // The plugin is loaded (its skills are listed), so the silence below is the hooks' doing.
    assert!(text.contains("checkpoint:checkpoint-resume"), "{text}");
    for absent in [
        "SessionStart hook",
        "SessionStart:startup hook",
        "workflow is unfinished",
        "**Next:**",
        "nothing to resume",
    ] {
        assert!(!text.contains(absent), "{absent:?} was injected:\n{text}");
    }
    assert!(
        !project.dir().join(".claude").join("checkpoints").exists(),
        "a hook created the checkpoint directory"
    );
}

#[test]
fn stop_records_a_heartbeat_with_the_session_id() {
    let project = Project::interrupted(vec![Turn::text("OK")]);

    let output = project.claude(&["-p", "hi", "--output-format", "json"]);

    assert_eq!(output.code(), Some(0), "{output}");
    let session_id = output.json_result().session_id;
    assert_eq!(project.env.session_ids(), std::slice::from_ref(&session_id));
    // claude waits for Stop hooks (facts §d), so the heartbeat is there when it exits.
    let state = project.state(WORKFLOW);
    let activity = &state["last_activity"];
    assert_eq!(activity["source"], "Stop", "{state:#}");
    assert_eq!(activity["session_id"], session_id.as_str(), "{state:#}");
    let journal = project.journal(WORKFLOW);
    let heartbeat = journal.last().unwrap();
    assert_eq!(heartbeat["transition"]["op"], "heartbeat", "{heartbeat:#}");
    assert_eq!(heartbeat["transition"]["session_id"], session_id.as_str());
}

/// `/compact` after two exchanges: PreCompact journals the compaction and the `compact`
/// SessionStart's context survives in the history that later requests carry.
#[test]
fn compaction_keeps_the_position_in_the_history() {
    let project = Project::interrupted(vec![Turn::text("A1"), Turn::text("A2"), Turn::text("A3")]);
    let first = project.claude(&["-p", "first", "--output-format", "json"]);
    assert_eq!(first.code(), Some(0), "{first}");
    let session_id = first.json_result().session_id;
    project.checkpoint_ok(&["progress", "design", "NOTE-BEFORE-SECOND"]);
    let second = project.claude(&["-p", "--resume", &session_id, "second"]);
    assert_eq!(second.stdout.trim(), "A2", "{second}");
    project.checkpoint_ok(&["progress", "design", "NOTE-AT-COMPACTION"]);

    let compact = project.claude(&["-p", "--resume", &session_id, "/compact"]);

    assert_eq!(compact.code(), Some(0), "{compact}");
    assert_eq!(
        project.mock.requests_of_kind(RequestKind::Summary).len(),
        1,
        "no compaction happened\n{compact}"
    );
    let journal = project.journal(WORKFLOW);
    let compaction = journal
        .iter()
        .find(|entry| entry["transition"]["op"] == "compaction")
        .unwrap_or_else(|| panic!("no compaction entry in {:?}", ops(&journal)));
    assert_eq!(
        compaction["transition"]["trigger"], "manual",
        "{compaction:#}"
    );
    assert_eq!(compaction["transition"]["session_id"], session_id.as_str());

    // The next turn: its request carries the summary, then the context of the `compact`
    // SessionStart (which saw NOTE-AT-COMPACTION), then that of this run's `resume` one.
    project.checkpoint_ok(&["progress", "design", "NOTE-AFTER-COMPACTION"]);
    let third = project.claude(&["-p", "--resume", &session_id, "third"]);
    assert_eq!(third.stdout.trim(), "A3", "{third}");
    let text = project.mock.request_text(2);
    let summary_at = text
        .find("SUMMARY-OF-CONVERSATION")
        .unwrap_or_else(|| panic!("no summary in the request after /compact:\n{text}"));
    let after_summary = &text[summary_at..];
    assert_contains_all(
        "the request after /compact, after the summary",
        after_summary,
        &[
            SESSION_START_CONTEXT,
            "NOTE-AT-COMPACTION",
            "NOTE-AFTER-COMPACTION",
        ],
    );
    // The history before the compaction was replaced by the summary.
    for replaced in [NOTE, "NOTE-BEFORE-SECOND"] {
        assert!(
            !text.contains(replaced),
            "{replaced:?} survived the compaction:\n{text}"
        );
    }
}

/// 2.1.330 races its StopFailure hooks against its exit in `-p` and sometimes exits first
/// (`client::stop_failure_hooks_need_a_session_end_hook_only_on_2_1_197`): on it, a rate limit
/// gets up to three runs to be recorded; 2.1.197 must record the first.
#[test]
fn rate_limit_pauses_the_workflow_and_loses_nothing() {
    let rate_limit = || Turn::Error {
        status: 429,
        error_type: "rate_limit_error".to_owned(),
        message: "mock rate_limit_error".to_owned(),
        retry_after: Some(0),
    };
    let project = Project::interrupted(vec![rate_limit()]);
    let journal_path = project.store().join(WORKFLOW).join("journal.jsonl");
    let before = fs::read_to_string(&journal_path).unwrap();
    let tries = if project.env.client_version() > (2, 1, 197) {
        3
    } else {
        1
    };

    let mut paused = None;
    for attempt in 0..tries {
        if attempt > 0 {
            project.mock.push_turns([rate_limit()]);
        }
        let output = project.claude_with_env(&["-p", "hi"], &[("CLAUDE_CODE_MAX_RETRIES", "0")]);
        assert_eq!(output.code(), Some(1), "{output}");
        assert!(output.stdout.contains("429"), "{output}");
        // claude does not wait for StopFailure hooks (facts §i): poll.
        let deadline = Instant::now() + HOOK_WAIT;
        while paused.is_none() && Instant::now() < deadline {
            let state = project.state(WORKFLOW);
            if state["status"] == "paused" {
                paused = Some(state);
            } else {
                thread::sleep(Duration::from_millis(50));
            }
        }
        if paused.is_some() {
            break;
        }
    }
    let state = paused
        .unwrap_or_else(|| panic!("no StopFailure hook paused the workflow in {tries} run(s)"));
    assert_eq!(
        state["pause"]["reason"], "API error: rate_limit",
        "{state:#}"
    );
    // The pause is appended; nothing written before is lost or rewritten.
    let after = fs::read_to_string(&journal_path).unwrap();
    assert!(
        after.starts_with(&before),
        "the journal was rewritten:\n{before}\n---\n{after}"
    );
    let design = phase(&state, "design");
    assert_eq!(design["progress"], NOTE, "{state:#}");
    let validate = project.checkpoint(&["validate", "--format", "json"]);
    let report: serde_json::Value =
        serde_json::from_slice(&validate.stdout).unwrap_or_else(|err| {
            panic!("`checkpoint validate --format json` printed no JSON ({err}): {validate:?}")
        });
    assert_eq!(validate.status.code(), Some(0), "{report:#}");
    assert_eq!(report["valid"], true, "{report:#}");
}
