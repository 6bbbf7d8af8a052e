//! `checkpoint run` driving the real `claude` with the plugin against the scripted mock: a rate
//! limit waited out, stalls, an approval gate, a runner killed with SIGKILL, and Ctrl-C.

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use checkpoint_e2e::Turn;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::support::{Project, checkpoint_command, path_str};

/// How long a runner may take in these tests before it is taken for hung.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// `checkpoint run` in the project, with the environment `claude` needs to talk to the mock,
/// the plugin loaded and the Bash tool allowed, as a user passes them after `--`.
fn runner(project: &Project, args: &[&str]) -> Command {
    let mut command = checkpoint_command(&project.plugin, project.dir(), project.env.home());
    command
        .env("ANTHROPIC_BASE_URL", project.mock.base_url())
        .env("ANTHROPIC_API_KEY", "sk-dummy")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .arg("run")
        .arg("--claude")
        .arg(project.env.claude_bin())
        .args(args)
        .args(["--", "--plugin-dir", path_str(project.plugin.dir())])
        .args(["--allowedTools", "Bash"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Runs to the end, killing a runner that outlives [`RUN_TIMEOUT`].
#[track_caller]
fn finish(mut child: Child) -> Output {
    let deadline = Instant::now() + RUN_TIMEOUT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!("`checkpoint run` hung:\n{}", show(&output));
        }
        thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn show(output: &Output) -> String {
    format!(
        "exit: {:?}\n--- stdout ---\n{}--- stderr ---\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A Bash turn that does phase `id`'s work (one line in `work.log`) and records it.
fn do_phase(id: &str) -> Turn {
    Turn::tool_use(
        "Bash",
        json!({ "command": format!("checkpoint start {id} && echo {id} >> work.log && checkpoint complete {id}") }),
    )
}

fn work_log(project: &Project) -> String {
    fs::read_to_string(project.dir().join("work.log")).unwrap_or_default()
}

fn entries<'a>(journal: &'a [Value], op: &str) -> Vec<&'a Value> {
    journal
        .iter()
        .filter(|entry| entry["transition"]["op"] == op)
        .collect()
}

fn at(entry: &Value) -> DateTime<Utc> {
    entry["at"].as_str().unwrap().parse().unwrap()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + RUN_TIMEOUT;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(50));
    }
}

/// The session process the runner of workflow `id` runs now, from its lock file.
fn session_pid(project: &Project, id: &str) -> Option<u32> {
    let text = fs::read_to_string(project.store().join(id).join("run.lock")).ok()?;
    let holder: Value = serde_json::from_str(&text).ok()?;
    holder["child_pid"].as_u64().map(|pid| pid as u32)
}

fn alive(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| !stat.contains(") Z "))
}

/// (a) Three phases across two sessions: the first does `a`, then meets a rate limit that
/// outlasts the client's own retry; the runner waits for the reset the client passed on (its
/// retry delay, the 429's `retry-after`), continues the same session, and finishes; each
/// phase's work was requested exactly once.
#[test]
fn a_rate_limit_is_waited_out_and_the_same_session_continues() {
    let project = Project::new(vec![
        do_phase("a"),
        Turn::RateLimit {
            message: "mock rate limit".to_owned(),
            retry_after: 2,
            window: Duration::from_secs(5),
            unified: false,
        },
        do_phase("b"),
        do_phase("c"),
        Turn::text("ALL-PHASES-DONE"),
    ]);
    project.checkpoint_ok(&[
        "init", "w", "--phase", "a", "--phase", "b:a", "--phase", "c:b",
    ]);

    // One retry by the client itself (its own setting), so that the limit outlasts it.
    let started = Instant::now();
    let output = finish(
        runner(&project, &[])
            .env("CLAUDE_CODE_MAX_RETRIES", "1")
            .spawn()
            .unwrap(),
    );
    let took = started.elapsed();

    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert_eq!(work_log(&project), "a\nb\nc\n", "{}", show(&output));
    let journal = project.journal("w");
    for phase in ["a", "b", "c"] {
        let starts = entries(&journal, "phase_start")
            .into_iter()
            .filter(|entry| entry["transition"]["phase"] == phase)
            .count();
        assert_eq!(starts, 1, "phase {phase} was started {starts} times");
    }
    let sessions = entries(&journal, "run_session_start");
    assert_eq!(sessions.len(), 2, "{}", show(&output));
    let ends = entries(&journal, "run_session_end");
    assert_eq!(ends[0]["transition"]["outcome"], "rate_limit");
    assert_eq!(ends[0]["transition"]["exit"], 1);
    assert_eq!(ends[1]["transition"]["outcome"], "progress");
    // The second session continues the first one.
    let first_id = ends[0]["transition"]["session_id"].as_str().unwrap();
    assert_eq!(sessions[1]["transition"]["resumed"], first_id);
    // It waited about the reset's time: the retry delay (2 s) and a margin, not minutes.
    let wait = entries(&journal, "run_wait")[0];
    let planned = wait["transition"]["until"]
        .as_str()
        .unwrap()
        .parse::<DateTime<Utc>>()
        .unwrap()
        - at(wait);
    assert!(
        (3..=6).contains(&planned.num_seconds()),
        "planned wait {planned:?}"
    );
    let waited = at(sessions[1]) - at(ends[0]);
    assert!(
        waited.num_milliseconds() >= 3000 && waited.num_seconds() < 15,
        "waited {waited:?}"
    );
    assert!(took < Duration::from_secs(90), "took {took:?}");
    // The mock refused twice (the request and the client's retry), and the continued session
    // sent the earlier conversation with the runner's prompt.
    let main = project.mock.main_requests();
    let resumed = &main[3];
    assert!(resumed.messages().len() > 3, "{:#?}", resumed.messages());
    assert!(
        resumed
            .model_text()
            .contains("The rate limit has reset: continue where you stopped"),
        "{}",
        resumed.model_text()
    );
    assert_eq!(entries(&journal, "run_stop")[0]["transition"]["exit"], 0);
    assert_eq!(project.mock.remaining_turns(), 0);
}

/// (b) Two sessions in a row that record nothing stop for a person (exit 9).
#[test]
fn sessions_that_make_no_progress_stop_for_a_person() {
    let project = Project::new(vec![
        Turn::text("I looked around and did nothing."),
        Turn::text("Still nothing."),
        Turn::text("NEVER-REQUESTED"),
    ]);
    project.checkpoint_ok(&["init", "w", "--phase", "a"]);

    let output = finish(runner(&project, &[]).spawn().unwrap());

    assert_eq!(output.status.code(), Some(9), "{}", show(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("2 sessions in a row ended without recording any work"),
        "{stdout}"
    );
    assert_eq!(project.mock.main_requests().len(), 2);
    let journal = project.journal("w");
    let outcomes: Vec<&Value> = entries(&journal, "run_session_end")
        .iter()
        .map(|entry| &entry["transition"]["outcome"])
        .collect();
    assert_eq!(outcomes, ["stall", "stall"]);
    assert_eq!(entries(&journal, "run_stop")[0]["transition"]["exit"], 9);
}

/// (c) An approval gate stops with the "needs a person" code, and `[run] notify` runs with the
/// workflow, phase and reason in its environment.
#[test]
fn an_approval_gate_stops_for_a_person_and_notifies() {
    let project = Project::new(vec![
        do_phase("design"),
        Turn::text("design waits for approval"),
    ]);
    fs::write(
        project.dir().join("plan.json"),
        r#"{"phases": [{"id": "design", "requires_approval": true}, {"id": "build", "dependencies": ["design"]}]}"#,
    )
    .unwrap();
    project.checkpoint_ok(&["init", "w", "--plan", "plan.json"]);
    fs::write(
        project.store().join("config.toml"),
        "[run]\nnotify = 'printf \"%s|%s|%s\" \"$CHECKPOINT_WORKFLOW\" \"$CHECKPOINT_PHASE\" \"$CHECKPOINT_REASON\" > notified.txt'\n",
    )
    .unwrap();

    let output = finish(runner(&project, &[]).spawn().unwrap());

    assert_eq!(output.status.code(), Some(9), "{}", show(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("checkpoint approve design"), "{stdout}");
    let notified = fs::read_to_string(project.dir().join("notified.txt")).unwrap();
    assert!(
        notified.starts_with("w|design|phase `design` is done and waits at its approval gate"),
        "{notified}"
    );
    assert_eq!(work_log(&project), "design\n");
    assert_eq!(project.mock.remaining_turns(), 0);
}

/// (d) A runner killed with SIGKILL mid-session: the next `run` ends the session it left
/// behind, is not stopped by anything, and finishes without redoing `a`.
#[test]
fn a_runner_killed_mid_session_is_followed_by_one_that_finishes() {
    let project = Project::new(vec![
        Turn::tool_use(
            "Bash",
            json!({ "command": "checkpoint start a && echo a >> work.log && checkpoint complete a && sleep 60" }),
        ),
        do_phase("b"),
        Turn::text("B-DONE"),
    ]);
    project.checkpoint_ok(&["init", "w", "--phase", "a", "--phase", "b:a"]);

    let mut first = runner(&project, &[]).spawn().unwrap();
    wait_for("phase a to complete", || {
        project.state("w")["phases"][0]["status"] == "complete"
    });
    let session = session_pid(&project, "w").expect("the lock names the session");
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(alive(session), "the session died with its runner");

    let output = finish(runner(&project, &[]).spawn().unwrap());

    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert_eq!(work_log(&project), "a\nb\n");
    wait_for("the old session to be gone", || !alive(session));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!("ended session process {session}")),
        "{stdout}"
    );
    let journal = project.journal("w");
    assert_eq!(entries(&journal, "run_start").len(), 2);
    let phases: Vec<&Value> = entries(&journal, "run_session_start")
        .iter()
        .map(|entry| &entry["transition"]["phase"])
        .collect();
    assert_eq!(phases, ["a", "b"]);
}

/// (e) Ctrl-C: the runner stops its session (SIGINT, then SIGTERM after a grace), journals the
/// stop and exits 130, with the session gone.
#[test]
fn ctrl_c_stops_the_session_and_exits_130() {
    let project = Project::new(vec![
        Turn::tool_use(
            "Bash",
            json!({ "command": "checkpoint start a && sleep 60" }),
        ),
        Turn::text("NEVER"),
    ]);
    project.checkpoint_ok(&["init", "w", "--phase", "a"]);

    let runner_process = runner(&project, &[]).spawn().unwrap();
    wait_for("phase a to start", || {
        project.state("w")["phases"][0]["status"] == "in_progress"
    });
    let session = session_pid(&project, "w").expect("the lock names the session");
    let interrupted = Instant::now();
    let status = Command::new("kill")
        .args(["-INT", &runner_process.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = finish(runner_process);

    assert_eq!(output.status.code(), Some(130), "{}", show(&output));
    assert!(interrupted.elapsed() < Duration::from_secs(15));
    assert!(!alive(session), "the session outlived Ctrl-C");
    let journal = project.journal("w");
    let end = entries(&journal, "run_session_end")[0];
    assert_eq!(end["transition"]["outcome"], "interrupted");
    let stop = entries(&journal, "run_stop")[0];
    assert_eq!(stop["transition"]["exit"], 130);
    // A later run is not stopped by anything the interrupted one left.
    assert!(!Path::new(&format!("/proc/{session}")).exists() || !alive(session));
}

/// (g) Subscriber mode (`CLAUDE_CODE_OAUTH_TOKEN`, no API key): the mock's successful answers
/// carry a subscription's usage headers (`anthropic-ratelimit-unified-5h-utilization: 0.9`
/// past its `…-5h-surpassed-threshold`), the client passes them on as a `rate_limit_event`
/// with `utilization` and `rateLimitType`, and a `--max-usage` below that makes the runner wait
/// for the window's reset (`…-5h-reset`) before the next session.
#[test]
fn a_usage_cap_below_what_the_client_reports_makes_the_runner_wait_for_the_reset() {
    let resets = Utc::now() + chrono::Duration::seconds(12);
    let headers = [
        ("anthropic-ratelimit-unified-status", "allowed".to_owned()),
        (
            "anthropic-ratelimit-unified-reset",
            resets.timestamp().to_string(),
        ),
        (
            "anthropic-ratelimit-unified-representative-claim",
            "five_hour".to_owned(),
        ),
        (
            "anthropic-ratelimit-unified-5h-status",
            "allowed_warning".to_owned(),
        ),
        (
            "anthropic-ratelimit-unified-5h-utilization",
            "0.9".to_owned(),
        ),
        (
            "anthropic-ratelimit-unified-5h-reset",
            resets.timestamp().to_string(),
        ),
        (
            "anthropic-ratelimit-unified-5h-surpassed-threshold",
            "0.75".to_owned(),
        ),
    ];
    let config = checkpoint_e2e::MockConfig {
        reply_headers: headers
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.clone()))
            .collect(),
        ..checkpoint_e2e::MockConfig::default()
    };
    let project = Project::with_config(
        vec![
            do_phase("a"),
            Turn::text("A-DONE"),
            do_phase("b"),
            Turn::text("B-DONE"),
        ],
        config,
    );
    project.checkpoint_ok(&["init", "w", "--phase", "a", "--phase", "b:a"]);
    let output = finish(
        runner(&project, &["--max-usage", "50", "--format", "json"])
            .env_remove("ANTHROPIC_API_KEY")
            .env("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-mock")
            .spawn()
            .unwrap(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert_eq!(work_log(&project), "a\nb\n", "{}", show(&output));
    // The usage the client reported reached the runner.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let usage: Vec<Value> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["event"] == "usage")
        .collect();
    assert!(!usage.is_empty(), "{}", show(&output));
    assert_eq!(usage[0]["window"], "five_hour", "{}", show(&output));
    assert_eq!(usage[0]["percent"], 90.0, "{}", show(&output));
    // The runner waited for the window's reset between the two sessions, and only then went on.
    let journal = project.journal("w");
    let waits = entries(&journal, "run_wait");
    assert_eq!(waits.len(), 1, "{}", show(&output));
    assert_eq!(waits[0]["transition"]["kind"], "usage");
    let until: DateTime<Utc> = waits[0]["transition"]["until"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        until.timestamp(),
        resets.timestamp() + 2,
        "{}",
        show(&output)
    );
    let sessions = entries(&journal, "run_session_start");
    assert_eq!(sessions.len(), 2, "{}", show(&output));
    assert!(at(sessions[1]) >= until, "{}", show(&output));
}
