//! Claude Code's own `Workflow` runs through the hooks, on the run files of both client versions
//! (`tests/fixtures/claude-workflow/<version>/`): the launch, the agents' starts, ends and 429s,
//! the settled run, a resumed run, a new session after an interruption, and files that are
//! missing, partial or changed.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::TestEnv;

const SESSION: &str = "11111111-2222-3333-4444-555555555555";
const OTHER_SESSION: &str = "99999999-2222-3333-4444-555555555555";
const VERSIONS: [&str; 2] = ["2.1.197", "2.1.332"];

/// The name of the only entry of `dir`.
fn only_entry(dir: &Path) -> String {
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{}: {names:?}", dir.display());
    names.into_iter().next().unwrap()
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/claude-workflow")
}

/// A task as (label, status, note).
type TaskSeen = (String, String, String);
/// A phase as (id, status, tasks).
type PhaseSeen = (String, String, Vec<TaskSeen>);

/// A project where a session of client `version` runs the fixture's script.
struct Run {
    env: TestEnv,
    version: &'static str,
    /// The captured run's id.
    run_id: String,
    /// The captured agents' ids, by label.
    agents: Vec<(String, String)>,
}

impl Run {
    fn new(version: &'static str) -> Self {
        let env = TestEnv::new();
        let dir = fixtures().join(version);
        let run_id = only_entry(&dir.join("subagents/workflows"));
        let script = only_entry(&dir.join("workflows/scripts"));
        std::fs::copy(
            dir.join("workflows/scripts").join(script),
            env.project().join("flow.js"),
        )
        .unwrap();
        let file: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("workflows/{run_id}.json"))).unwrap(),
        )
        .unwrap();
        let agents = file["workflowProgress"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|entry| entry["type"] == "workflow_agent")
            .map(|entry| {
                let text = |key: &str| entry[key].as_str().unwrap().to_owned();
                (text("label"), text("agentId"))
            })
            .collect();
        let run = Self {
            env,
            version,
            run_id,
            agents,
        };
        std::fs::create_dir_all(run.run_dir()).unwrap();
        run
    }

    fn run(&self) -> &str {
        &self.run_id
    }

    /// The id of the agent labelled `label`.
    fn agent(&self, label: &str) -> &str {
        let found = self.agents.iter().find(|(l, _)| l == label);
        &found.unwrap_or_else(|| panic!("no agent `{label}`")).1
    }

    fn design(&self) -> &str {
        self.agent("design")
    }

    fn build1(&self) -> &str {
        self.agent("build:1")
    }

    fn build2(&self) -> &str {
        self.agent("build:2")
    }

    fn session_dir(&self) -> PathBuf {
        self.env.dir.path().join("home/projects/p").join(SESSION)
    }

    fn run_dir(&self) -> PathBuf {
        self.session_dir()
            .join("subagents/workflows")
            .join(self.run())
    }

    fn fixture(&self, relative: &str) -> PathBuf {
        fixtures().join(self.version).join(relative)
    }

    /// Writes the fixture journal's lines of `events` (`(type, agent id)`), in its order.
    fn journal(&self, events: &[(&str, &str)]) {
        let text = std::fs::read_to_string(
            self.fixture(&format!("subagents/workflows/{}/journal.jsonl", self.run())),
        )
        .unwrap();
        let kept: String = text
            .lines()
            .filter(|line| {
                let line: Value = serde_json::from_str(line).unwrap();
                line["type"] == "launched"
                    || events
                        .iter()
                        .any(|(kind, agent)| line["type"] == *kind && line["agentId"] == *agent)
            })
            .map(|line| format!("{line}\n"))
            .collect();
        std::fs::write(self.run_dir().join("journal.jsonl"), kept).unwrap();
    }

    /// Copies agent `agent`'s meta file and transcript.
    fn agent_files(&self, agent: &str) {
        for ext in ["meta.json", "jsonl"] {
            let name = format!("agent-{agent}.{ext}");
            std::fs::copy(
                self.fixture(&format!("subagents/workflows/{}/{name}", self.run())),
                self.run_dir().join(name),
            )
            .unwrap();
        }
    }

    /// Writes the run file, as the client does when the run settles; `edit` changes it first.
    fn settle(&self, edit: impl FnOnce(&mut Value)) {
        let mut file: Value = serde_json::from_str(
            &std::fs::read_to_string(self.fixture(&format!("workflows/{}.json", self.run())))
                .unwrap(),
        )
        .unwrap();
        edit(&mut file);
        let dir = self.session_dir().join("workflows");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{}.json", self.run())), file.to_string()).unwrap();
    }

    /// Runs hook `event` with the client's payload plus `extra` in session `session`; returns
    /// (stdout, stderr), the hook having exited 0.
    #[track_caller]
    fn hook_in(&self, session: &str, event: &str, extra: Value) -> (String, String) {
        let mut payload = json!({
            "session_id": session,
            "transcript_path": self.env.dir.path().join(format!("home/projects/p/{session}.jsonl")),
            "cwd": self.env.project(),
            "hook_event_name": event,
        });
        payload
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let (code, stdout, stderr) = self.env.hook(event, &payload.to_string()).wait();
        assert_eq!(code, 0, "{stderr}");
        (stdout, stderr)
    }

    #[track_caller]
    fn hook(&self, event: &str, extra: Value) -> (String, String) {
        self.hook_in(SESSION, event, extra)
    }

    /// `PostToolUse` of `Workflow`, as the client sends it once the run is launched.
    fn launch(&self, resume: bool) -> (String, String) {
        let mut input = json!({ "scriptPath": "flow.js" });
        if resume {
            input["resumeFromRunId"] = json!(self.run());
        }
        self.hook(
            "PostToolUse",
            json!({
                "tool_name": "Workflow",
                "tool_use_id": "toolu_wf1",
                "tool_input": input,
                "tool_response": {
                    "status": "async_launched", "taskId": "t0001", "taskType": "local_workflow",
                    "workflowName": "probe-wf", "runId": self.run(), "summary": "Two phases",
                    "transcriptDir": self.run_dir(), "scriptPath": "flow.js",
                },
            }),
        )
    }

    fn start(&self, agent: &str) -> (String, String) {
        self.hook(
            "SubagentStart",
            json!({ "agent_id": agent, "agent_type": "workflow-subagent", "prompt_id": "p1" }),
        )
    }

    fn stop(&self, agent: &str, message: &str) -> (String, String) {
        self.hook(
            "SubagentStop",
            json!({
                "agent_id": agent, "agent_type": "workflow-subagent", "stop_hook_active": false,
                "agent_transcript_path": self.run_dir().join(format!("agent-{agent}.jsonl")),
                "last_assistant_message": message,
                "background_tasks": [{"id": "t0001", "type": "workflow", "status": "running"}],
            }),
        )
    }

    fn fail(&self, agent: &str) -> (String, String) {
        self.hook(
            "StopFailure",
            json!({
                "agent_id": agent, "agent_type": "workflow-subagent", "error": "rate_limit",
                "last_assistant_message": "API Error: Request rejected (429) · rate limited",
            }),
        )
    }

    fn state(&self) -> Value {
        self.env.state(self.run())
    }

    /// (phase id, status) of every phase, and (label, status, note) of every task.
    fn phases(&self) -> Vec<PhaseSeen> {
        let state = self.state();
        state["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|phase| {
                let tasks = phase["tasks"]
                    .as_array()
                    .map(|tasks| {
                        tasks
                            .iter()
                            .map(|task| {
                                (
                                    task["title"].as_str().unwrap().to_owned(),
                                    task["status"].as_str().unwrap().to_owned(),
                                    task["note"].as_str().unwrap_or_default().to_owned(),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                (
                    phase["id"].as_str().unwrap().to_owned(),
                    phase["status"].as_str().unwrap().to_owned(),
                    tasks,
                )
            })
            .collect()
    }

    /// Design done, build:1 and build:2 started (the journal and the files as the client has
    /// them then).
    fn design_done_builds_started(&self) {
        self.launch(false);
        self.journal(&[("started", self.design())]);
        self.start(self.design());
        self.agent_files(self.design());
        self.journal(&[("started", self.design()), ("result", self.design())]);
        self.stop(self.design(), "result-design");
        self.journal(&[
            ("started", self.design()),
            ("result", self.design()),
            ("started", self.build1()),
            ("started", self.build2()),
        ]);
        self.agent_files(self.build1());
        self.start(self.build1());
        self.agent_files(self.build2());
        self.start(self.build2());
    }
}

impl Run {
    /// Design done; build:1 failed on a 429 (`StopFailure`, no result); build:2 done.
    fn build1_rate_limited(&self) {
        self.design_done_builds_started();
        self.fail(self.build1());
        self.journal(&[
            ("started", self.design()),
            ("result", self.design()),
            ("started", self.build1()),
            ("started", self.build2()),
            ("result", self.build2()),
        ]);
        self.stop(self.build2(), "result-buildtwo");
    }
}

/// The run file with agent `build:1` failed with `error`, as the client writes a 429.
fn build1_failed(file: &mut Value, error: &str) {
    let agent = file["workflowProgress"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|entry| entry["label"] == "build:1")
        .unwrap();
    agent["state"] = json!("error");
    agent["error"] = json!(error);
    agent.as_object_mut().unwrap().remove("resultPreview");
}

fn t(label: &str, status: &str, note: &str) -> TaskSeen {
    (label.into(), status.into(), note.into())
}

#[test]
fn a_two_phase_run_with_three_agents_is_recorded_phase_by_phase_with_results() {
    for version in VERSIONS {
        let run = Run::new(version);
        assert!(!run.env.store().exists());
        run.launch(false);
        // The launch makes the store, and the workflow from the script's meta.
        let state = run.state();
        assert_eq!(state["title"], "probe-wf", "{version}");
        assert_eq!(state["kind"], "claude-workflow-run");
        assert_eq!(
            state["extensions"]["claude_workflow_run"]["script_path"],
            "flow.js"
        );
        assert_eq!(state["phases"][0]["name"], "Design");
        run.journal(&[("started", run.design())]);
        run.start(run.design());
        run.agent_files(run.design());
        run.journal(&[("started", run.design()), ("result", run.design())]);
        run.stop(run.design(), "result-design");
        assert_eq!(
            run.phases()[0].1,
            "in_progress",
            "{version}: not past it yet"
        );
        run.journal(&[
            ("started", run.design()),
            ("result", run.design()),
            ("started", run.build1()),
            ("started", run.build2()),
        ]);
        run.agent_files(run.build1());
        run.agent_files(run.build2());
        run.start(run.build1());
        run.start(run.build2());
        let all = [
            ("started", run.design()),
            ("result", run.design()),
            ("started", run.build1()),
            ("started", run.build2()),
            ("result", run.build2()),
            ("result", run.build1()),
        ];
        run.journal(&all[..5]);
        run.stop(run.build2(), "result-buildtwo");
        run.journal(&all);
        run.stop(run.build1(), "result-buildone");
        assert_eq!(
            run.phases()[1].1,
            "in_progress",
            "{version}: the run has not settled"
        );
        run.settle(|_| {});
        run.hook("Stop", json!({ "stop_hook_active": false }));
        assert_eq!(
            run.phases(),
            [
                (
                    "design".into(),
                    "complete".into(),
                    vec![t("design", "done", "result-design")]
                ),
                (
                    "build".into(),
                    "complete".into(),
                    vec![
                        t("build:1", "done", "result-buildone"),
                        t("build:2", "done", "result-buildtwo")
                    ]
                ),
            ],
            "{version}"
        );
        let status = run
            .env
            .json(&["status", "--workflow", run.run(), "--format", "json"]);
        assert_eq!(status["workflow"]["status"], "complete", "{version}");
        assert_eq!(
            status["workflow"]["phases"][1]["tasks"][0]["agent_id"],
            run.build1()
        );
        let kept = run
            .env
            .workflow_dir(run.run())
            .join("results/build/build-1.md");
        assert_eq!(
            std::fs::read_to_string(kept).unwrap(),
            "result-buildone",
            "{version}"
        );
    }
}

#[test]
fn an_agents_429_fails_its_phase_though_the_run_says_completed() {
    for version in VERSIONS {
        let run = Run::new(version);
        run.build1_rate_limited();
        let phases = run.phases();
        assert_eq!(phases[1].1, "failed", "{version}");
        assert_eq!(phases[1].2[0].1, "failed");
        run.settle(|file| build1_failed(file, "API Error: Request rejected (429) · rate limited"));
        run.hook("Stop", json!({}));
        let state = run.state();
        assert_eq!(state["phases"][0]["status"], "complete", "{version}");
        assert_eq!(state["phases"][1]["status"], "failed", "{version}");
        assert!(
            state["phases"][1]["error"]
                .as_str()
                .unwrap()
                .contains("build:1")
        );
        assert!(
            state["phases"][1]["tasks"][0]["error"]
                .as_str()
                .unwrap()
                .contains("429")
        );
        assert_eq!(state["status"], "failed");
    }
}

#[test]
fn the_429_is_found_in_the_run_file_when_no_hook_told_it() {
    for version in VERSIONS {
        let run = Run::new(version);
        run.design_done_builds_started();
        run.journal(&[
            ("started", run.design()),
            ("result", run.design()),
            ("started", run.build1()),
            ("started", run.build2()),
            ("result", run.build2()),
        ]);
        run.settle(|file| build1_failed(file, "API Error: 429"));
        run.hook("Stop", json!({}));
        assert_eq!(run.phases()[1].1, "failed", "{version}");
    }
}

#[test]
fn a_new_session_after_an_interruption_is_told_the_run_its_results_and_what_is_unfinished() {
    for version in VERSIONS {
        let run = Run::new(version);
        run.design_done_builds_started();
        // The process is killed here: no run file. A new session starts.
        let (stdout, _) = run.hook_in(
            OTHER_SESSION,
            "SessionStart",
            json!({ "source": "startup" }),
        );
        let out: Value = serde_json::from_str(&stdout).unwrap();
        let context = out["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap();
        let results = format!(".claude/checkpoints/{}/results", run.run());
        for part in [
            run.run(),
            "probe-wf",
            "Phase \"Design\" (`design`): complete",
            "result-design",
            "\"build:1\" (phase \"Build\")",
            "never finished",
            "from any other session it cannot",
            "continuation script",
            results.as_str(),
        ] {
            assert!(
                context.contains(part),
                "{version}: {part} missing from:\n{context}"
            );
        }
        let resume = run.env.ok(&["resume", "--workflow", run.run()]);
        assert!(
            resume.contains("continuation script") && resume.contains("result-design"),
            "{resume}"
        );
        let prompt = run
            .env
            .ok(&["resume", "--workflow", run.run(), "--format", "prompt"]);
        assert!(prompt.contains("\"build:2\" (phase \"Build\")"), "{prompt}");
        assert_eq!(
            std::fs::read_to_string(
                run.env
                    .workflow_dir(run.run())
                    .join("results/design/design.md")
            )
            .unwrap(),
            "result-design"
        );
        // The session directory may go: the kept results stay.
        std::fs::remove_dir_all(run.session_dir()).unwrap();
        let (stdout, stderr) =
            run.hook_in(OTHER_SESSION, "SessionStart", json!({ "source": "resume" }));
        assert!(stdout.contains("result-design"), "{stdout}");
        assert!(
            stderr.is_empty() || stderr.contains("checkpoint hook"),
            "{stderr}"
        );
    }
}

#[test]
fn a_resumed_run_continues_the_same_workflow() {
    for version in VERSIONS {
        let run = Run::new(version);
        run.build1_rate_limited();
        assert_eq!(run.phases()[1].1, "failed");
        run.launch(true);
        let list = run.env.json(&["list", "--format", "json"]);
        assert_eq!(
            list["workflows"].as_array().unwrap().len(),
            1,
            "{version}: {list}"
        );
        // The re-run agent has a new id; the cached ones fire no hooks.
        let again = "a4b0000000000004";
        let journal = run.run_dir().join("journal.jsonl");
        let mut text = std::fs::read_to_string(&journal).unwrap();
        text.push_str(&format!("{}\n", json!({"type": "started", "key": "v2:2", "agentId": again, "label": "build:1", "phase": "Build"})));
        std::fs::write(&journal, &text).unwrap();
        std::fs::write(
            run.run_dir().join(format!("agent-{again}.meta.json")),
            r#"{"description":"build:1","workflowPhase":"Build"}"#,
        )
        .unwrap();
        run.start(again);
        text.push_str(&format!(
            "{}\n",
            json!({"type": "result", "key": "v2:2", "agentId": again, "result": "result-buildone"})
        ));
        std::fs::write(&journal, &text).unwrap();
        run.stop(again, "result-buildone");
        run.settle(|_| {});
        run.hook("Stop", json!({}));
        let phases = run.phases();
        assert_eq!(phases[1].1, "complete", "{version}: {phases:?}");
        assert_eq!(phases[1].2[0], t("build:1", "done", "result-buildone"));
        assert_eq!(run.state()["phases"][1]["tasks"][0]["agent_id"], again);
    }
}

#[test]
fn missing_partial_and_changed_files_are_warnings_and_change_nothing_else() {
    for version in VERSIONS {
        // No script, no run directory: the run is still recorded, with one phase.
        let run = Run::new(version);
        std::fs::remove_file(run.env.project().join("flow.js")).unwrap();
        std::fs::remove_dir_all(run.session_dir()).unwrap();
        let (_, stderr) = run.launch(false);
        assert!(
            stderr.contains("flow.js") && stderr.contains("does not exist"),
            "{stderr}"
        );
        assert_eq!(run.state()["phases"][0]["id"], "run");
        run.start(run.design());
        run.stop(run.design(), "x");
        run.hook("Stop", json!({}));

        // A torn journal line, a meta file that is not JSON, a run file of another shape.
        let run = Run::new(version);
        run.launch(false);
        run.journal(&[("started", run.design())]);
        let journal = run.run_dir().join("journal.jsonl");
        let mut text = std::fs::read_to_string(&journal).unwrap();
        text.push_str("{\"type\":\"result\",\"agentId\":\"a1d00");
        std::fs::write(&journal, text).unwrap();
        run.agent_files(run.design());
        std::fs::write(
            run.run_dir()
                .join(format!("agent-{}.meta.json", run.design())),
            "not json",
        )
        .unwrap();
        run.start(run.design());
        run.settle(|file| *file = json!(["changed"]));
        let (_, stderr) = run.hook("Stop", json!({}));
        assert!(stderr.contains("not a run file we can read"), "{stderr}");
        // A journal line of a changed shape: skipped, with a warning.
        std::fs::write(
            &journal,
            "{\"type\":42}\n{\"type\":\"started\",\"agentId\":{}}\n",
        )
        .unwrap();
        let (_, stderr) = run.stop(run.design(), "result-design");
        assert!(stderr.contains("journal lines we know"), "{stderr}");
        assert_eq!(
            run.phases()[0].2[0].1,
            "done",
            "{version}: the hook's own word still counts"
        );

        // A FIFO where the journal should be does not hang the hook.
        let fifo = run.run_dir().join("journal.jsonl");
        std::fs::remove_file(&fifo).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let (_, stderr) = run.start(run.build1());
        assert!(
            stderr.is_empty()
                || stderr.contains("not a regular file")
                || stderr.contains("checkpoint hook"),
            "{stderr}"
        );
    }
}

/// A `Workflow` run's hooks write through the store's rule like every other path: an agent's
/// start on a paused run is work, so the `unpause` is journaled before its task's start; the
/// hook's answer says nothing of it (its output is Claude Code's protocol).
#[test]
fn an_agent_starting_on_a_paused_run_lifts_the_pause_with_its_unpause() {
    let run = Run::new(VERSIONS[0]);
    run.launch(false);
    run.env
        .ok(&["--workflow", run.run(), "pause", "--reason", "rate_limit"]);
    let before = run.env.read(run.run(), "journal.jsonl").lines().count();
    run.journal(&[("started", run.design())]);
    let mut said = vec![run.start(run.design())];
    run.agent_files(run.design());
    run.journal(&[("started", run.design()), ("result", run.design())]);
    said.push(run.stop(run.design(), "result-design"));
    for (stdout, stderr) in &said {
        assert!(
            !stdout.contains("unpause") && !stderr.contains("unpause"),
            "{stdout}{stderr}"
        );
    }
    let ops: Vec<String> = run
        .env
        .read(run.run(), "journal.jsonl")
        .lines()
        .skip(before)
        .map(|line| {
            let entry: Value = serde_json::from_str(line).unwrap();
            entry["transition"]["op"].as_str().unwrap().to_owned()
        })
        .collect();
    let unpause = ops.iter().position(|op| op == "unpause");
    let work = ops
        .iter()
        .position(|op| ["task_start", "task_done", "phase_start"].contains(&op.as_str()));
    assert!(
        unpause.is_some() && unpause < work,
        "the unpause before the first work: {ops:?}"
    );
    assert_eq!(
        ops.iter().filter(|op| *op == "unpause").count(),
        1,
        "{ops:?}"
    );
    assert!(run.state()["pause"].is_null());
}

#[test]
fn an_unknown_agent_or_a_malformed_payload_changes_nothing() {
    for version in VERSIONS {
        let run = Run::new(version);
        run.design_done_builds_started();
        let before = run.phases();
        run.start("zz-unknown");
        run.stop("zz-unknown", "whatever");
        run.fail("zz-unknown");
        run.start("../../etc");
        // Only the heartbeat every `SubagentStop` records.
        assert_eq!(run.phases(), before, "{version}");
        // A launch without a run id: a warning, nothing recorded.
        let (_, stderr) = run.hook(
            "PostToolUse",
            json!({ "tool_name": "Workflow", "tool_input": {}, "tool_response": "launched" }),
        );
        assert!(stderr.contains("no `runId`"), "{stderr}");
        assert_eq!(run.phases(), before);
        assert_eq!(
            run.env.json(&["list", "--format", "json"])["workflows"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }
}

#[test]
fn a_secret_in_a_result_is_redacted_in_the_note_and_in_the_kept_result() {
    let secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    for version in VERSIONS {
        let run = Run::new(version);
        run.launch(false);
        run.journal(&[("started", run.design())]);
        run.agent_files(run.design());
        run.start(run.design());
        let message = format!("the token is {secret} and {}", "y".repeat(3000));
        run.stop(run.design(), &message);
        let state = run.state();
        let note = state["phases"][0]["tasks"][0]["note"].as_str().unwrap();
        assert!(!note.contains(secret), "{note}");
        assert_eq!(note.chars().count(), 1000, "{version}");
        let kept = std::fs::read_to_string(
            run.env
                .workflow_dir(run.run())
                .join("results/design/design.md"),
        )
        .unwrap();
        assert!(!kept.contains(secret) && kept.len() > 3000, "{version}");
        assert!(!run.env.read(run.run(), "journal.jsonl").contains(secret));
    }
}

#[test]
fn the_plugin_hears_the_launch_and_every_agent_of_a_run() {
    let hooks: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugin/hooks/hooks.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let matcher = |event: &str| {
        hooks["hooks"][event][0]["matcher"]
            .as_str()
            .map(str::to_owned)
    };
    let post = matcher("PostToolUse").unwrap();
    assert!(post.split('|').any(|tool| tool == "Workflow"), "{post}");
    // No matcher: every agent type, `workflow-subagent` included.
    for event in [
        "SubagentStart",
        "SubagentStop",
        "StopFailure",
        "Stop",
        "SessionStart",
    ] {
        assert_eq!(matcher(event), None, "{event}");
    }
}

#[test]
fn status_shows_the_run_phase_by_phase_with_its_agents() {
    for version in VERSIONS {
        let run = Run::new(version);
        run.build1_rate_limited();
        let status = run.env.ok(&["status", "--workflow", run.run()]);
        for line in [
            "agent design: done: result-design",
            "agent build:1: failed: rate_limit: API Error: Request rejected (429)",
            "agent build:2: done: result-buildtwo",
        ] {
            assert!(
                status.contains(line),
                "{version}: {line} missing from:\n{status}"
            );
        }
    }
}

#[test]
fn report_shows_the_runs_agents_as_events_in_their_phases() {
    for version in VERSIONS {
        let run = Run::new(version);
        run.build1_rate_limited();
        let report: Value = serde_json::from_str(&run.env.ok(&[
            "report",
            "--workflow",
            run.run(),
            "--format",
            "json",
        ]))
        .unwrap();
        let agents: Vec<(String, String)> = report["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|span| span["kind"] == "agent")
            .map(|span| {
                (
                    span["phase"].as_str().unwrap_or_default().to_owned(),
                    span["label"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        for (phase, label) in [
            ("design", "agent design: done: result-design"),
            (
                "build",
                "agent build:1: failed: rate_limit: API Error: Request rejected (429)",
            ),
            ("build", "agent build:2: done: result-buildtwo"),
        ] {
            assert!(
                agents
                    .iter()
                    .any(|(at, said)| at == phase && said.starts_with(label)),
                "{version}: {phase} / {label} missing from {agents:?}"
            );
        }
        let html_path = run.env.project().join("report.html");
        run.env.ok(&[
            "report",
            "--workflow",
            run.run(),
            "--html",
            html_path.to_str().unwrap(),
        ]);
        let html = std::fs::read_to_string(&html_path).unwrap();
        assert!(html.contains("agent build:2: done"), "{version}: {html}");
    }
}

/// A run's agent whose `SubagentStart` came before the client wrote its files (and its
/// journal line), as on a loaded machine: its first tool call places it, and the phase before
/// it completes then, not only when the agent ends.
#[test]
fn an_agent_started_before_its_files_is_placed_by_its_first_tool_call() {
    for version in VERSIONS {
        let run = Run::new(version);
        run.launch(false);
        run.journal(&[("started", run.design())]);
        run.start(run.design());
        run.agent_files(run.design());
        run.journal(&[("started", run.design()), ("result", run.design())]);
        run.stop(run.design(), "result-design");
        // build:1 starts before its files and its journal line exist.
        run.start(run.build1());
        let before = run.phases();
        assert_eq!(before[0].1, "in_progress", "{version}: {before:?}");
        run.journal(&[
            ("started", run.design()),
            ("result", run.design()),
            ("started", run.build1()),
        ]);
        run.agent_files(run.build1());
        run.hook(
            "PreToolUse",
            json!({
                "tool_name": "Bash", "tool_use_id": "toolu_b1",
                "tool_input": { "command": "make build" },
                "agent_id": run.build1(), "agent_type": "workflow-subagent",
            }),
        );
        let after = run.phases();
        assert_eq!(after[0].1, "complete", "{version}: {after:?}");
        assert!(
            after[1]
                .2
                .iter()
                .any(|(label, status, _)| label == "build:1" && status == "running"),
            "{version}: {after:?}"
        );
    }
}

/// The forms of secret an effect's command may hold (issue 38), each with a secret of its own,
/// in an agent's result: the kept result and the journal hold none of them.
#[test]
fn a_kept_result_holds_none_of_the_secrets_the_journal_redacts() {
    let forms = crate::sync::EFFECT_SECRET_FORMS;
    for version in VERSIONS {
        let run = Run::new(version);
        run.launch(false);
        run.journal(&[("started", run.design())]);
        run.agent_files(run.design());
        run.start(run.design());
        let message: Vec<String> = forms
            .iter()
            .map(|(form, secret)| format!("ran `{}`", form.replace("{}", secret)))
            .collect();
        run.stop(run.design(), &message.join("\n"));
        let kept = std::fs::read_to_string(
            run.env
                .workflow_dir(run.run())
                .join("results/design/design.md"),
        )
        .unwrap();
        let journal = run.env.read(run.run(), "journal.jsonl");
        for (form, secret) in forms {
            assert!(!kept.contains(secret), "{version}: {form} in {kept}");
            assert!(
                !journal.contains(secret),
                "{version}: {form} in the journal"
            );
        }
        assert!(kept.contains("curl -X POST"), "{kept}");
    }
}
