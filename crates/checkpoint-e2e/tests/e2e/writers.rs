//! Two sessions at once in one checkout (issue 42), the facts' scenario of silent loss: session
//! 2 writes `shared.txt`, session 1 appends to it through Bash, and session 2's next `Write`
//! (which the client itself lets through) is refused by the write guard naming session 1 and
//! telling it to read again; after its `Read`, its write goes through and the file holds both
//! sessions' changes. And two sub-agents of one lead writing one phase's declared output: the
//! second is refused naming the first, which holds that phase.

use checkpoint_e2e::Turn;
use serde_json::{Value, json};

use crate::support::{HOOK_WAIT, Project, assert_contains_all, path_str, phase};

const ONE: &str = "SESSION-ONE works on the shared file";
const TWO: &str = "SESSION-TWO works on the shared file";

fn bash(command: &str) -> Turn {
    Turn::tool_use("Bash", json!({ "command": command, "description": "work" }))
}

/// The text of a tool result, whether its `content` is a string or a list of blocks.
fn result_text(result: &Value) -> String {
    match &result["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[test]
fn a_write_over_another_sessions_change_is_refused_until_read_and_nothing_is_lost() {
    let project = Project::new(Vec::new());
    project.checkpoint_ok(&["init", "shared-e2e", "--phase", "work"]);
    project.checkpoint_ok(&["start", "work"]);
    let shared = project.dir().join("shared.txt");
    let file = path_str(&shared).to_owned();
    let write =
        |content: &str| Turn::tool_use("Write", json!({"file_path": file, "content": content}));
    project.mock.route(
        ONE,
        [
            bash("until [ -f shared.txt ]; do sleep 0.1; done; echo 'from one' >> shared.txt"),
            bash("until [ -f done.flag ]; do sleep 0.1; done"),
            Turn::text("ONE-DONE"),
        ],
    );
    project.mock.route(
        TWO,
        [
            write("from two\n"),
            bash("until grep -q 'from one' shared.txt; do sleep 0.1; done"),
            write("two alone\n"),
            Turn::tool_use("Read", json!({"file_path": file})),
            write("from two\nfrom one\nand two again\n"),
            bash("touch done.flag"),
            Turn::text("TWO-DONE"),
        ],
    );
    let plugin = path_str(project.plugin.dir()).to_owned();
    let args = |prompt: &'static str| {
        vec![
            "-p",
            prompt,
            "--allowedTools",
            "Bash Write Read Edit",
            "--plugin-dir",
            plugin.as_str(),
        ]
    };
    let (one_args, two_args) = (args(ONE), args(TWO));
    let mut one = project
        .env
        .command(&one_args, &[])
        .spawn()
        .expect("claude runs");
    let mut two = project
        .env
        .command(&two_args, &[])
        .spawn()
        .expect("claude runs");
    let second = project.env.wait(&mut two, &two_args);
    let first = project.env.wait(&mut one, &one_args);
    assert_eq!(second.code(), Some(0), "{second}");
    assert_eq!(first.code(), Some(0), "{first}");

    // Session 2's requests: after its refused write, the tool result names session 1.
    let requests = project.mock.routed_requests(TWO);
    let results: Vec<Value> = requests
        .last()
        .expect("session 2 asked the model")
        .tool_results()
        .into_iter()
        .cloned()
        .collect();
    let one_id = project
        .env
        .session_ids()
        .into_iter()
        .find(|id| project.env.transcript_text(id).contains("SESSION-ONE"))
        .expect("session 1's transcript");
    // Exactly one refusal: the write after session 1's append; the writes after the read
    // went through.
    let refused: Vec<&Value> = results
        .iter()
        .filter(|result| result["is_error"] == true)
        .collect();
    assert_eq!(refused.len(), 1, "{results:#?}");
    assert_contains_all(
        "the refused write",
        &result_text(refused[0]),
        &[
            "`shared.txt` changed since you last read it",
            &format!("session {one_id}"),
            "read it again, then make your change",
        ],
    );
    // The refused write, then the read and the write that went through (and the last Bash).
    let after = results
        .iter()
        .skip_while(|result| result["is_error"] != true)
        .count();
    assert!(after >= 3, "{results:#?}");
    // Nothing of session 1 is lost.
    assert_eq!(
        std::fs::read_to_string(&shared).unwrap(),
        "from two\nfrom one\nand two again\n"
    );
    let who = project.checkpoint_ok(&["who", "shared.txt", "--format", "json"]);
    let who: Value = serde_json::from_str(&who).unwrap();
    // Session 2's two writes and the append its hooks or session 1's found.
    assert_eq!(
        who["files"][0]["writes"].as_array().unwrap().len(),
        3,
        "{who:#}"
    );
}

/// The `Agent` call that dispatches `phase`, its prompt carrying `marker` (the mock's route)
/// and the convention line, in the foreground.
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

/// The tool results of the last request of `route`'s sub-agent, and how many were errors.
fn route_results(project: &Project, route: &str) -> (Vec<Value>, usize) {
    let results: Vec<Value> = project
        .mock
        .routed_requests(route)
        .last()
        .unwrap_or_else(|| panic!("no request on {route}"))
        .tool_results()
        .into_iter()
        .cloned()
        .collect();
    let errors = results
        .iter()
        .filter(|result| result["is_error"] == true)
        .count();
    (results, errors)
}

/// Two sub-agents of one lead, each holding a phase: `alpha`'s declares `shared.md`. Alpha's
/// sub-agent writes it twice (its own file: never refused); beta's writes `beta.md` (nobody
/// else's: never refused), reads `shared.md`, and its write of it is refused naming alpha's
/// sub-agent and phase; the file keeps alpha's content.
#[test]
fn a_sub_agent_writing_another_sub_agents_declared_output_is_refused_naming_the_holder() {
    let project = Project::new(vec![
        Turn::Tools(vec![
            dispatch("alpha", "ROUTE-ALPHA"),
            dispatch("beta", "ROUTE-BETA"),
        ]),
        Turn::text("LEAD-DONE"),
    ]);
    let plan = json!({ "phases": [
        { "id": "alpha", "outputs": ["shared.md"] },
        { "id": "beta" },
    ] });
    std::fs::write(project.dir().join("plan.json"), plan.to_string()).unwrap();
    project.checkpoint_ok(&["init", "claims-e2e", "--plan", "plan.json"]);
    let path = |name: &str| path_str(&project.dir().join(name)).to_owned();
    let (shared, beta) = (path("shared.md"), path("beta.md"));
    let write = |file: &str, content: &str| {
        Turn::tool_use("Write", json!({"file_path": file, "content": content}))
    };
    project.mock.route(
        "ROUTE-ALPHA",
        [
            write(&shared, "alpha v1\n"),
            write(&shared, "alpha v2\n"),
            bash("until [ -f beta.done ]; do sleep 0.1; done"),
            Turn::text("Alpha done."),
        ],
    );
    project.mock.route(
        "ROUTE-BETA",
        [
            bash("until grep -q 'alpha v2' shared.md 2>/dev/null; do sleep 0.1; done"),
            write(&beta, "beta\n"),
            Turn::tool_use("Read", json!({"file_path": shared})),
            write(&shared, "beta's\n"),
            bash("touch beta.done"),
            Turn::text("Beta done."),
        ],
    );
    let output = project.claude(&[
        "-p",
        "run the two phases",
        "--allowedTools",
        "Bash Write Read",
    ]);
    assert_eq!(output.code(), Some(0), "{output}");

    let state = project.state("claims-e2e");
    let alpha = phase(&state, "alpha")["holder"]["agent_id"]
        .as_str()
        .unwrap_or_else(|| panic!("alpha's holder: {state:#}"))
        .to_owned();
    let (results, errors) = route_results(&project, "ROUTE-ALPHA");
    assert_eq!(errors, 0, "alpha's own writes: {results:#?}");
    let (results, errors) = route_results(&project, "ROUTE-BETA");
    let claims = std::fs::read_to_string(project.store().join(".writes").join("claims.json"));
    assert_eq!(
        errors, 1,
        "only beta's write of shared.md: {results:#?}\n{state:#}\nclaims: {claims:?}"
    );
    let refused = results
        .iter()
        .find(|result| result["is_error"] == true)
        .unwrap();
    assert_contains_all(
        "beta's refused write",
        &result_text(refused),
        &[
            &format!("`shared.md` is held by sub-agent {alpha} of session "),
            "for phase `alpha` (claim `shared.md` since ",
            "so it was not written",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(project.dir().join("shared.md")).unwrap(),
        "alpha v2\n"
    );
    assert_eq!(
        std::fs::read_to_string(project.dir().join("beta.md")).unwrap(),
        "beta\n"
    );
    // Alpha's phase completes at its sub-agent's end, not at its first write of `shared.md`
    // (which would have ended its claim while it still worked).
    let state = project.wait_for_state("claims-e2e", HOOK_WAIT, |state| {
        phase(state, "alpha")["status"] == "complete"
    });
    let alpha = phase(&state, "alpha");
    assert_eq!(
        alpha["completed_at"], alpha["holder"]["ended_at"],
        "{state:#}"
    );
}
