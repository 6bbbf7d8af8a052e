//! Gemini CLI against the Gemini API mock, after `checkpoint setup gemini`: the workflow in the
//! first request, a `write_file` that completes its phase, a `git commit` recorded, the MCP
//! tools offered and used, the extension installed offline from its directory, and
//! `checkpoint run --client gemini` through a 429.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use checkpoint_e2e::{GeminiEnv, GeminiMock, GeminiTurn, Plugin};
use serde_json::{Value, json};

use crate::support::{checkpoint_command, path_str, store_dir};

/// A Gemini API mock, a throwaway home and git project, and the bundle's `checkpoint`.
struct Project {
    mock: GeminiMock,
    env: GeminiEnv,
    plugin: Plugin,
}

impl Project {
    #[track_caller]
    fn new(script: Vec<GeminiTurn>) -> Project {
        let plugin = Plugin::find();
        let mock = GeminiMock::start(script);
        let env = GeminiEnv::new(&mock);
        Project { mock, env, plugin }
    }

    fn dir(&self) -> &Path {
        self.env.project_dir()
    }

    /// The bundle's `checkpoint` in the project, with Gemini CLI's home.
    fn checkpoint(&self) -> Command {
        let mut command = checkpoint_command(&self.plugin, self.dir(), self.env.home());
        command.env("GEMINI_CLI_HOME", self.env.home());
        command
    }

    #[track_caller]
    fn checkpoint_ok(&self, args: &[&str]) -> String {
        let output = self.checkpoint().args(args).output().unwrap();
        assert!(
            output.status.success(),
            "checkpoint {args:?}: {}",
            show(&output)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn state(&self, id: &str) -> Value {
        let text = fs::read_to_string(store_dir(self.dir()).join(id).join("state.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    fn journal(&self, id: &str) -> Vec<Value> {
        fs::read_to_string(store_dir(self.dir()).join(id).join("journal.jsonl"))
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// Workflow `w`: `spec` (output `docs/spec.md`) in progress, then `build`.
    fn spec_in_progress(&self) {
        fs::write(
            self.dir().join("plan.json"),
            r#"{"phases": [{"id": "spec", "outputs": ["docs/spec.md"]}, {"id": "build", "dependencies": ["spec"]}]}"#,
        )
        .unwrap();
        self.checkpoint_ok(&["init", "w", "--plan", "plan.json"]);
        self.checkpoint_ok(&["start", "spec"]);
    }
}

fn show(output: &Output) -> String {
    format!(
        "exit: {:?}\n--- stdout ---\n{}--- stderr ---\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn phase<'a>(state: &'a Value, id: &str) -> &'a Value {
    state["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|phase| phase["id"] == id)
        .unwrap()
}

/// The turns of a session that notes progress through the MCP server, commits, writes the
/// phase's output, and ends.
fn spec_session() -> Vec<GeminiTurn> {
    vec![
        GeminiTurn::call(
            "mcp_checkpoint_progress",
            json!({"phase": "spec", "note": "MCP-NOTE-GEMINI"}),
        ),
        GeminiTurn::call(
            "run_shell_command",
            json!({"command": "git commit --allow-empty -qm 'spec: outline'"}),
        ),
        GeminiTurn::call(
            "write_file",
            json!({"file_path": "docs/spec.md", "content": "# spec\n"}),
        ),
        // A change only the turn's end sees: its snapshot holds it.
        GeminiTurn::call(
            "run_shell_command",
            json!({"command": "echo done > turn.txt"}),
        ),
        GeminiTurn::Text("SPEC-DONE".into()),
    ]
}

/// Asserts what [`spec_session`] must have done to workflow `w`, and that the first request
/// carried the workflow and offered the MCP tools.
#[track_caller]
fn spec_session_recorded(project: &Project) {
    let main = project.mock.main_requests();
    let first = &main[0];
    let text = first.text();
    assert!(text.contains("workflow `w`"), "{text}");
    assert!(text.contains("`spec`"), "{text}");
    let tools = first.tool_names();
    for tool in ["mcp_checkpoint_progress", "write_file", "run_shell_command"] {
        assert!(tools.iter().any(|name| name == tool), "{tool}: {tools:?}");
    }
    let state = project.state("w");
    let spec = phase(&state, "spec");
    assert_eq!(spec["status"], "complete", "{state:#}");
    assert!(state.to_string().contains("MCP-NOTE-GEMINI"), "{state:#}");
    let head = project.env.git(&["rev-parse", "HEAD"]);
    assert!(spec.to_string().contains(head.trim()), "{spec:#}");
}

#[test]
fn setup_gemini_carries_a_workflow_through_a_session() {
    let project = Project::new(spec_session());
    project.spec_in_progress();
    let out = project.checkpoint_ok(&["setup", "gemini"]);
    assert!(out.contains(".gemini/settings.json"), "{out}");
    let output = project.env.run(
        &["--prompt=go on", "--output-format", "stream-json", "--yolo"],
        &[],
    );
    assert_eq!(output.code(), Some(0), "{output}");
    assert!(output.stdout.contains("SPEC-DONE"), "{output}");
    spec_session_recorded(&project);
    assert_eq!(project.mock.remaining_turns(), 0);
    // The turn's end (`AfterAgent`) took a snapshot of the files.
    let journal = project.journal("w");
    let turn_end = journal
        .iter()
        .find(|entry| {
            entry["transition"]["op"] == "files_snapshot"
                && entry["transition"]["reason"] == "turn_end"
        })
        .unwrap_or_else(|| panic!("no turn-end snapshot in {journal:#?}"));
    assert_eq!(
        turn_end["transition"]["paths"],
        json!(["turn.txt"]),
        "{turn_end:#}"
    );
}

#[test]
fn the_extension_installs_offline_from_its_directory_and_does_the_same() {
    let extension = Plugin::find()
        .marketplace_dir()
        .join("checkpoint-gemini-extension");
    assert!(
        extension.join("gemini-extension.json").is_file(),
        "no extension at `{}`: run `cargo xtask dist`",
        extension.display()
    );
    let project = Project::new(spec_session());
    project.spec_in_progress();
    let installed = project.env.run(
        &["extensions", "install", path_str(&extension), "--consent"],
        &[],
    );
    assert_eq!(installed.code(), Some(0), "{installed}");
    assert!(
        format!("{}{}", installed.stdout, installed.stderr).contains("installed successfully"),
        "{installed}"
    );
    let output = project.env.run(
        &["--prompt=go on", "--output-format", "stream-json", "--yolo"],
        &[],
    );
    assert_eq!(output.code(), Some(0), "{output}");
    spec_session_recorded(&project);
}

#[test]
fn run_client_gemini_waits_out_a_429_and_finishes_without_redoing_a_phase() {
    let project = Project::new(Vec::new());
    let ck = project.plugin.checkpoint_bin();
    let ck = path_str(&ck);
    let work = |id: &str| {
        GeminiTurn::call(
            "run_shell_command",
            json!({"command": format!("{ck} start {id} && echo {id} >> work.log && {ck} complete {id}")}),
        )
    };
    project.mock.push_turns([
        work("a"),
        GeminiTurn::Text("A-DONE".into()),
        GeminiTurn::quota("Quota exceeded for metric generate_content. Please retry in 2s."),
        work("b"),
        GeminiTurn::Text("B-DONE".into()),
    ]);
    project.checkpoint_ok(&["init", "w", "--phase", "a", "--phase", "b:a"]);
    let output = project
        .checkpoint()
        .env("GOOGLE_GEMINI_BASE_URL", project.mock.base_url())
        .env("GEMINI_API_KEY", "mock-key")
        .args(["run", "--client", "gemini", "--gemini"])
        .arg(project.env.gemini_bin())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let log = fs::read_to_string(project.dir().join("work.log")).unwrap_or_default();
    assert_eq!(log, "a\nb\n", "{}", show(&output));
    let journal = project.journal("w");
    let ops = |op: &str| -> Vec<&Value> {
        journal
            .iter()
            .filter(|entry| entry["transition"]["op"] == op)
            .collect()
    };
    for id in ["a", "b"] {
        let starts = ops("phase_start")
            .iter()
            .filter(|entry| entry["transition"]["phase"] == id)
            .count();
        assert_eq!(starts, 1, "phase {id} started {starts} times");
    }
    let ends = ops("run_session_end");
    let outcomes: Vec<&Value> = ends
        .iter()
        .map(|end| &end["transition"]["outcome"])
        .collect();
    assert_eq!(
        outcomes,
        [&json!("progress"), &json!("rate_limit"), &json!("progress")],
        "{}",
        show(&output)
    );
    assert_eq!(ends[1]["transition"]["exit"], 173);
    // The wait was the message's 2 s (and the runner's margin), not Gemini CLI's backoff.
    let wait = ops("run_wait")[0];
    let at = |entry: &Value, key: &str| -> chrono::DateTime<chrono::Utc> {
        entry[key].as_str().unwrap().parse().unwrap()
    };
    let planned = wait["transition"]["until"]
        .as_str()
        .unwrap()
        .parse::<chrono::DateTime<chrono::Utc>>()
        .unwrap()
        - at(wait, "at");
    assert!(
        (2..=6).contains(&planned.num_seconds()),
        "planned {planned:?}"
    );
    assert_eq!(project.mock.remaining_turns(), 0);
}

/// Never twice on Gemini CLI: its `BeforeTool` hook refuses the repeat of a recorded push in
/// Gemini's own form (`{"decision": "deny", "reason": …}`); the push reaches the remote once, and
/// the model reads the reason, which names `checkpoint effects allow`.
#[test]
fn gemini_refuses_a_repeat_of_a_recorded_push_and_the_model_reads_why() {
    use std::os::unix::fs::PermissionsExt;
    let push = "git push origin HEAD:main";
    let project = Project::new(vec![
        GeminiTurn::call("run_shell_command", json!({ "command": push })),
        GeminiTurn::call("run_shell_command", json!({ "command": push })),
        GeminiTurn::Text("PUSH-DONE".into()),
    ]);
    project.spec_in_progress();
    project.checkpoint_ok(&["setup", "gemini"]);
    let home = project.env.home();
    let remote = home.join("remote.git");
    let pushes = home.join("pushes.log");
    project
        .env
        .git(&["init", "--quiet", "--bare", path_str(&remote)]);
    let hook = remote.join("hooks").join("post-receive");
    fs::write(
        &hook,
        format!(
            "#!/bin/sh\nwhile read old new ref; do echo \"$ref\" >> '{}'; done\n",
            path_str(&pushes)
        ),
    )
    .unwrap();
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    project
        .env
        .git(&["remote", "add", "origin", path_str(&remote)]);
    let output = project.env.run(
        &["--prompt=push", "--output-format", "stream-json", "--yolo"],
        &[],
    );
    assert_eq!(output.code(), Some(0), "{output}");
    let log = fs::read_to_string(&pushes).unwrap_or_default();
    assert_eq!(log.lines().count(), 1, "{log}");
    let main = project.mock.main_requests();
    let responses: Vec<String> = main
        .last()
        .unwrap()
        .function_responses()
        .iter()
        .map(|response| response.to_string())
        .collect();
    let told = responses.last().cloned().unwrap_or_default();
    // Gemini CLI gives the model an error response with its own words before the reason.
    for part in [
        "\"error\":\"Tool execution blocked: checkpoint: this call already succeeded",
        "already succeeded",
        "git push origin HEAD:main",
        "checkpoint effects allow 1",
    ] {
        assert!(told.contains(part), "{part} in {told}");
    }
    let done = project
        .journal("w")
        .iter()
        .filter(|entry| entry["transition"]["op"] == "effect" && entry["transition"]["ok"] == true)
        .count();
    assert_eq!(done, 1);
}
