//! Claude Code's own `Workflow` runs with the real client: the main agent launches a script of
//! two phases and three agents (the mock routes each agent by a marker in its prompt), and the
//! plugin's hooks record the run phase by phase, a 429 fails its phase, and a new session after
//! a killed process is told the run, its done phase and its unfinished agent.

use std::thread;
use std::time::{Duration, Instant};

use checkpoint_e2e::Turn;
use serde_json::{Value, json};

use crate::support::{HOOK_WAIT, Project};

/// The script: phase `Design` (one agent), then `Build` (two agents in parallel).
const SCRIPT: &str = r#"export const meta = {
  name: 'probe-wf',
  description: 'Two phases, three agents',
  phases: [{ title: 'Design' }, { title: 'Build' }],
};
phase('Design');
const a = await agent('Write the design. MARK-DESIGN', { label: 'design' });
phase('Build');
const rs = await parallel([
  () => agent('Build part one. MARK-BUILD1', { label: 'build:1', phase: 'Build' }),
  () => agent('Build part two. MARK-BUILD2', { label: 'build:2', phase: 'Build' }),
]);
return { a, rs };
"#;

/// `-p` refuses an unallowed `Workflow` call ("Review dynamic workflow before running").
const ARGS: [&str; 4] = [
    "-p",
    "use a workflow to build it",
    "--allowedTools",
    "Bash,Workflow",
];

/// The main agent launches the script, then answers each later turn.
fn launch() -> Vec<Turn> {
    vec![
        Turn::tool_use("Workflow", json!({ "script": SCRIPT })),
        Turn::text("LAUNCHED"),
        Turn::text("ALL-DONE"),
    ]
}

/// The one workflow of the store that mirrors a run, once it exists.
fn run_state(project: &Project, wait: Duration, accept: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + wait;
    loop {
        let list = project.checkpoint(&["list", "--format", "json"]);
        let list: Value = serde_json::from_slice(&list.stdout).unwrap_or(Value::Null);
        let state = list["workflows"]
            .as_array()
            .and_then(|all| all.first())
            .and_then(|workflow| workflow["id"].as_str())
            // Being written while the hooks run: read again until it parses.
            .and_then(|id| {
                let path = project.store().join(id).join("state.json");
                serde_json::from_str::<Value>(&std::fs::read_to_string(path).ok()?).ok()
            });
        match state {
            Some(state) if accept(&state) => return state,
            _ if Instant::now() >= deadline => {
                panic!("no run reached the expected state: {state:#?}")
            }
            _ => thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// (label, status, note) of every task of phase `index`.
fn agents(state: &Value, index: usize) -> Vec<(String, String, String)> {
    state["phases"][index]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| {
            (
                task["title"].as_str().unwrap_or_default().to_owned(),
                task["status"].as_str().unwrap_or_default().to_owned(),
                task["note"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn done(label: &str, note: &str) -> (String, String, String) {
    (label.into(), "done".into(), note.into())
}

/// The agents' routes: `design` and `build:2` answer at once, `build:1` with `build1`.
fn routes(project: &Project, build1: impl IntoIterator<Item = Turn>) {
    project
        .mock
        .route("MARK-DESIGN", [Turn::text("result-design")]);
    project.mock.route("MARK-BUILD1", build1);
    project
        .mock
        .route("MARK-BUILD2", [Turn::text("result-buildtwo")]);
}

#[test]
fn a_two_phase_run_with_three_agents_completes_phase_by_phase_with_results() {
    let project = Project::new(launch());
    routes(&project, [Turn::text("result-buildone")]);
    let output = project.claude(&ARGS);
    assert_eq!(output.code(), Some(0), "{output}");
    let state = run_state(&project, HOOK_WAIT, |state| state["status"] == "complete");
    let id = state["id"].as_str().unwrap();
    assert!(id.starts_with("wf_"), "{state:#}");
    assert_eq!(state["title"], "probe-wf");
    let status: Value = serde_json::from_str(&project.checkpoint_ok(&[
        "status",
        "--workflow",
        id,
        "--format",
        "json",
    ]))
    .unwrap();
    let workflow = &status["workflow"];
    assert_eq!(workflow["phases"][0]["name"], "Design", "{status:#}");
    assert_eq!(workflow["phases"][0]["status"], "complete", "{status:#}");
    assert_eq!(workflow["phases"][1]["status"], "complete", "{status:#}");
    assert_eq!(agents(workflow, 0), [done("design", "result-design")]);
    assert_eq!(
        agents(workflow, 1),
        [
            done("build:1", "result-buildone"),
            done("build:2", "result-buildtwo")
        ]
    );
    let kept = project.store().join(id).join("results/build/build-2.md");
    assert_eq!(std::fs::read_to_string(kept).unwrap(), "result-buildtwo");
}

#[test]
fn one_agents_429_fails_its_phase_though_the_run_says_completed() {
    let project = Project::new(launch());
    routes(
        &project,
        [Turn::error(
            429,
            "rate_limit_error",
            "Request rejected (429)",
        )],
    );
    let output = project.claude_with_env(&ARGS, &[("CLAUDE_CODE_MAX_RETRIES", "0")]);
    assert_eq!(output.code(), Some(0), "{output}");
    let state = run_state(&project, HOOK_WAIT, |state| {
        state["phases"][1]["status"] == "failed"
    });
    assert_eq!(state["phases"][0]["status"], "complete", "{state:#}");
    let build = agents(&state, 1);
    assert_eq!(build[0].1, "failed", "{state:#}");
    assert_eq!(build[1], done("build:2", "result-buildtwo"));
    assert!(
        state["phases"][1]["tasks"][0]["error"]
            .as_str()
            .unwrap()
            .contains("429"),
        "{state:#}"
    );
    // The client's own notification said the run completed.
    let notified = project.mock.request_text(2);
    assert!(notified.contains("completed"), "{notified}");
}

#[test]
fn a_new_session_after_a_killed_run_is_told_the_run_the_done_phase_and_the_unfinished_agent() {
    let project = Project::new(launch());
    // build:1 is still at work (a long shell command) when the process is killed.
    routes(
        &project,
        [
            // 2.1.332 refuses a standalone `sleep`.
            Turn::tool_use(
                "Bash",
                json!({ "command": "timeout 30 tail -f /dev/null; echo waited" }),
            ),
            Turn::text("result-buildone"),
        ],
    );
    let mut command = project.env.command(
        &[
            &ARGS[..],
            &["--plugin-dir", project.plugin.dir().to_str().unwrap()],
        ]
        .concat(),
        &[],
    );
    let mut child = command.spawn().expect("claude starts");
    // Until `design` is done and `build:1` is at work: its shell command was handed out. (The
    // live view may place `build:1` a moment later: 2.1.197 names an agent's phase only in its
    // transcript, which it may not have written yet.)
    let state = run_state(&project, Duration::from_secs(40), |state| {
        state["phases"][0]["tasks"][0]["status"] == "done"
            && !project.mock.routed_requests("MARK-BUILD1").is_empty()
    });
    thread::sleep(Duration::from_secs(2));
    // SIGKILL to the client, as a crash would (its `sleep` ends by itself).
    let _ = child.kill();
    let _ = child.wait();
    let id = state["id"].as_str().unwrap().to_owned();

    let before = project.mock.main_requests().len();
    project.mock.push_turns([Turn::text("NEW-SESSION")]);
    let output = project.claude(&["-p", "where are we?"]);
    assert_eq!(output.code(), Some(0), "{output}");
    let first = project.mock.request_text(before);
    for part in [
        id.as_str(),
        "Phase \"Design\" (`design`): complete",
        "result-design",
        "\"build:1\" (phase \"Build\")",
        "continuation script",
    ] {
        assert!(
            first.contains(part),
            "{part} missing from the new session's first request:\n{first}"
        );
    }
}
