//! Parallel phases held by sub-agents, with the real client: the main agent dispatches one
//! sub-agent a phase (two `Agent` calls in one turn, each prompt carrying the line
//! `checkpoint phase: <id>`), and the plugin's hooks attribute, complete, mark and resume them.

use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use checkpoint_e2e::Turn;
use serde_json::{Value, json};

use crate::support::{HOOK_WAIT, Project, phase};

/// The workflow of these tests.
const WORKFLOW: &str = "parallel-e2e";
/// Its two independent phases, and the one after both.
const ALPHA: &str = "parser-alpha";
const BETA: &str = "emitter-beta";

/// Creates [`WORKFLOW`]: [`ALPHA`] (declares `alpha.md`), [`BETA`], and `link` after both.
fn parallel_workflow(project: &Project) {
    let plan = json!({ "phases": [
        { "id": ALPHA, "outputs": ["alpha.md"] },
        { "id": BETA },
        { "id": "link", "dependencies": [ALPHA, BETA] },
    ] });
    std::fs::write(project.dir().join("plan.json"), plan.to_string()).unwrap();
    project.checkpoint_ok(&["init", WORKFLOW, "--plan", "plan.json"]);
}

/// The `Agent` call that dispatches `phase`, its prompt carrying `marker` (the mock's route)
/// and the convention line; in the foreground on every client.
fn dispatch(phase: &str, marker: &str) -> (String, Value) {
    (
        "Agent".to_owned(),
        json!({
            "description": format!("Work on {phase}"),
            "prompt": format!("{marker}: do the work of the phase.\ncheckpoint phase: {phase}\n"),
            "subagent_type": "general-purpose",
            "run_in_background": false,
        }),
    )
}

fn bash(command: &str) -> Turn {
    Turn::tool_use("Bash", json!({ "command": command }))
}

const ARGS: [&str; 4] = ["-p", "run the parallel phases", "--allowedTools", "Bash"];

/// (a) Two sub-agents for two independent phases both finish: `ALPHA`'s writes its declared
/// output (with a shell redirect, which no Write hook sees: the sub-agent's end completes the
/// phase), `BETA`'s completes its phase through the CLI. Both phases are complete and
/// attributed to their sub-agents.
#[test]
fn two_sub_agents_complete_two_parallel_phases_and_are_attributed() {
    let project = Project::new(vec![
        Turn::Tools(vec![
            dispatch(ALPHA, "ROUTE-ALPHA"),
            dispatch(BETA, "ROUTE-BETA"),
        ]),
        Turn::text("MAIN-DONE"),
    ]);
    project.mock.route(
        "ROUTE-ALPHA",
        [
            bash("printf 'grammar\\n' > alpha.md"),
            Turn::text("Alpha written."),
        ],
    );
    project.mock.route(
        "ROUTE-BETA",
        [
            bash(&format!("checkpoint complete {BETA}")),
            Turn::text("Beta complete."),
        ],
    );
    parallel_workflow(&project);

    let output = project.claude(&ARGS);
    assert_eq!(output.code(), Some(0), "{output}");
    let state = project.wait_for_state(WORKFLOW, HOOK_WAIT, |state| {
        [ALPHA, BETA].iter().all(|id| {
            phase(state, id)["status"] == "complete"
                && phase(state, id)["holder"]["ended_at"].is_string()
        })
    });
    let calls: Vec<String> = project
        .mock
        .main_requests()
        .iter()
        .flat_map(|request| request.messages().to_vec())
        .filter(|message| message["role"] == "assistant")
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["name"] == "Agent")
        .map(|block| block["id"].as_str().unwrap().to_owned())
        .collect();
    for (id, call) in [ALPHA, BETA].iter().zip(&calls) {
        let holder = &phase(&state, id)["holder"];
        assert_eq!(holder["tool_use_id"], call.as_str(), "{state:#}");
        assert_eq!(holder["description"], format!("Work on {id}"), "{state:#}");
        assert!(holder["agent_id"].is_string(), "{state:#}");
        assert!(holder.get("error").is_none(), "{state:#}");
    }
    assert_ne!(
        phase(&state, ALPHA)["holder"]["agent_id"],
        phase(&state, BETA)["holder"]["agent_id"]
    );
    assert_eq!(phase(&state, ALPHA)["artifacts"][0]["path"], "alpha.md");
    assert!(state.get("pause").is_none());
    // The sub-agents' transcripts name the same agents.
    let transcripts = project.env.all_transcripts_text();
    for id in [ALPHA, BETA] {
        let agent = phase(&state, id)["holder"]["agent_id"].as_str().unwrap();
        assert!(
            transcripts.contains(agent),
            "agent `{agent}` is in no transcript"
        );
    }
}

/// (b) The session is killed while `ALPHA`'s sub-agent has finished and `BETA`'s is mid-way
/// (it noted its progress and runs a long command): the next session's first request says that
/// `ALPHA` is done, by which sub-agent, and re-dispatches only `BETA`, with its note.
#[test]
fn a_killed_session_resumes_by_redispatching_only_the_unfinished_phase() {
    let project = Project::new(vec![
        Turn::Tools(vec![
            dispatch(ALPHA, "ROUTE-ALPHA"),
            dispatch(BETA, "ROUTE-BETA"),
        ]),
        Turn::text("NEVER-REACHED"),
    ]);
    project.mock.route(
        "ROUTE-ALPHA",
        [
            bash("printf 'grammar\\n' > alpha.md"),
            Turn::text("Alpha written."),
        ],
    );
    project.mock.route(
        "ROUTE-BETA",
        [
            bash(&format!(
                "checkpoint progress {BETA} 'tokens emitted, spans next'"
            )),
            bash("exec sleep 120"),
            Turn::text("NEVER-REACHED"),
        ],
    );
    parallel_workflow(&project);

    let mut args = ARGS.to_vec();
    let plugin_dir = crate::support::path_str(project.plugin.dir()).to_owned();
    args.extend(["--plugin-dir", &plugin_dir]);
    let mut child = project.env.command(&args, &[]).spawn().unwrap();
    // Alpha done, beta's note written, and beta's long command under way.
    project.wait_for_state(WORKFLOW, Duration::from_secs(60), |state| {
        phase(state, ALPHA)["status"] == "complete"
            && phase(state, BETA)["progress"] == "tokens emitted, spans next"
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while project.mock.routed_requests("ROUTE-BETA").len() < 2 {
        assert!(
            Instant::now() < deadline,
            "beta's sub-agent never ran its command"
        );
        thread::sleep(Duration::from_millis(50));
    }
    thread::sleep(Duration::from_millis(500));
    let killed = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status()
        .unwrap();
    assert!(killed.success());
    let _ = child.wait();
    let state = project.state(WORKFLOW);
    let beta = phase(&state, BETA);
    assert_eq!(beta["status"], "in_progress", "{state:#}");
    assert!(beta["holder"]["agent_id"].is_string(), "{state:#}");
    assert!(beta["holder"].get("ended_at").is_none(), "{state:#}");
    let alpha_agent = phase(&state, ALPHA)["holder"]["agent_id"]
        .as_str()
        .unwrap()
        .to_owned();

    // The next session: the main agent dispatches what the context says.
    let first_of_second = project.mock.main_requests().len();
    project.mock.push_turns([Turn::text("RESUMED")]);
    // Seconds after the kill: the workflow still looks live, but a new session runs none of the
    // killed one's sub-agents.
    let output = project.claude_with_env(&["-p", "continue the workflow"], &[]);
    assert_eq!(output.code(), Some(0), "{output}");
    let text = project.mock.request_text(first_of_second);
    crate::support::assert_contains_all(
        "the resumed session's first request",
        &text,
        &[
            &format!("- done: `{ALPHA}` by sub-agent `{alpha_agent}`: Work on {ALPHA}"),
            &format!("`{BETA}`"),
            "tokens emitted, spans next",
        ],
    );
    assert!(
        text.contains(&format!("- `checkpoint phase: {BETA}`")),
        "beta is not re-dispatched:\n{text}"
    );
    assert!(
        !text.contains(&format!("- `checkpoint phase: {ALPHA}`")),
        "alpha is dispatched again:\n{text}"
    );
}

/// (c) `ALPHA`'s sub-agent hits a rate limit: its phase records the failure, the workflow is
/// not paused, and `BETA`'s sub-agent goes on and completes its phase.
#[test]
fn a_sub_agents_rate_limit_marks_its_phase_while_the_other_goes_on() {
    let project = Project::new(vec![
        Turn::Tools(vec![
            dispatch(ALPHA, "ROUTE-ALPHA"),
            dispatch(BETA, "ROUTE-BETA"),
        ]),
        Turn::text("MAIN-DONE"),
    ]);
    project.mock.route(
        "ROUTE-ALPHA",
        [Turn::Error {
            status: 429,
            error_type: "rate_limit_error".to_owned(),
            message: "mock rate_limit_error".to_owned(),
            retry_after: Some(0),
        }],
    );
    project.mock.route(
        "ROUTE-BETA",
        [
            bash(&format!("checkpoint complete {BETA}")),
            Turn::text("Beta complete."),
        ],
    );
    parallel_workflow(&project);

    let output = project.claude_with_env(&ARGS, &[("CLAUDE_CODE_MAX_RETRIES", "0")]);
    // The main agent carries on: the session ends normally.
    assert_eq!(output.code(), Some(0), "{output}");
    // claude does not wait for a StopFailure hook (facts §i).
    let state = project.wait_for_state(WORKFLOW, HOOK_WAIT, |state| {
        phase(state, ALPHA)["holder"]["error"].is_string()
            && phase(state, BETA)["status"] == "complete"
    });
    let alpha = phase(&state, ALPHA);
    assert_eq!(alpha["status"], "in_progress", "{state:#}");
    assert_eq!(alpha["failures"], 1, "{state:#}");
    assert!(
        alpha["error"].as_str().unwrap().starts_with("sub-agent `"),
        "{state:#}"
    );
    assert!(
        state.get("pause").is_none(),
        "the workflow was paused: {state:#}"
    );
    assert!(
        phase(&state, BETA)["holder"].get("error").is_none(),
        "{state:#}"
    );
    // Only alpha's sub-agent met the limit: one refused request on its route.
    assert_eq!(project.mock.routed_requests("ROUTE-ALPHA").len(), 1);
    assert_eq!(project.mock.main_requests().len(), 2, "{output}");
}
