//! `checkpoint run` and `checkpoint report` with a scripted stand-in for `claude` (a shell
//! script that prints stream-json lines and records its work with the real `checkpoint`); the
//! real client is driven in `crates/checkpoint-e2e`.

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use crate::support::{Remote, TestEnv, bin, render, silent_remote};

/// Writes an executable stand-in for `claude` into the project; `body` is shell, with
/// `$CK` the `checkpoint` binary and `$PHASE` the phase the resume plan names.
fn fake_claude(env: &TestEnv, body: &str) -> PathBuf {
    let path = env.dir.path().join("fake-claude");
    let script = format!(
        "#!/bin/sh\n\
         printf '%s|' \"$@\" | tr '\\n' ' ' >> \"$(dirname \"$0\")/claude-args.log\"; echo >> \"$(dirname \"$0\")/claude-args.log\"\n\
         echo '{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"sess-'$$'\"}}'\n\
         PHASE=$(\"$CK\" resume --dry-run --format json | sed -n 's/.*\"phase\": \"\\([a-z0-9-]*\\)\".*/\\1/p' | head -n 1)\n\
         {body}\n"
    );
    fs::write(&path, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

/// A session that does the phase the plan names: it starts the phase (which a session before it
/// may already have done) and completes it.
const DO_PHASE: &str = "echo '{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"name\":\"Bash\",\"input\":{}}]}}'\n\
    echo \"$PHASE\" >> work.log\n\
    \"$CK\" start \"$PHASE\" >/dev/null 2>&1; \"$CK\" complete \"$PHASE\" >/dev/null\n\
    echo '{\"type\":\"result\",\"is_error\":false,\"result\":\"done\"}'";

fn run_cmd(env: &TestEnv, claude: &Path, args: &[&str]) -> Command {
    let mut cmd = env.cmd();
    cmd.env("CK", bin())
        .arg("run")
        .arg("--claude")
        .arg(claude)
        .args(args);
    cmd
}

fn init(env: &TestEnv, phases: &[&str]) {
    let mut args = vec!["init", "w"];
    for phase in phases {
        args.extend(["--phase", phase]);
    }
    env.ok(&args);
}

#[test]
fn run_carries_a_workflow_to_the_end_and_journals_every_event() {
    let env = TestEnv::new();
    init(&env, &["a", "b:a", "c:b"]);
    let claude = fake_claude(&env, DO_PHASE);

    let output = run_cmd(
        &env,
        &claude,
        &["--format", "json", "--", "--allowedTools", "Bash"],
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", render(&env, &output));
    // One JSON event per line.
    let events: Vec<serde_json::Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "run_started",
            "session_started",
            "session_id",
            "tool_use",
            "session_ended",
            "session_started",
            "session_id",
            "tool_use",
            "session_ended",
            "session_started",
            "session_id",
            "tool_use",
            "session_ended",
            "stopped",
        ]
    );
    assert!(
        events
            .iter()
            .all(|e| e["version"] == 1 && e["workflow"] == "w")
    );
    assert_eq!(events[13]["kind"], "finished");
    assert_eq!(events[4]["outcome"], "progress");
    assert_eq!(events[4]["transitions"], 2);
    // Each phase was worked on exactly once, in order.
    let work = fs::read_to_string(env.project().join("work.log")).unwrap();
    assert_eq!(work, "a\nb\nc\n");
    // The user's arguments reach every session, after the headless stream-json options.
    let args = fs::read_to_string(env.dir.path().join("claude-args.log")).unwrap();
    assert_eq!(args.lines().count(), 3);
    assert!(
        args.lines()
            .all(|line| line.starts_with("-p|You are running unattended")
                && line.ends_with("|--output-format|stream-json|--verbose|--allowedTools|Bash|")),
        "{args}"
    );
    // `checkpoint log` tells the story.
    let log = env.ok(&["log"]);
    for op in [
        "run_start",
        "run_session_start",
        "run_session_end",
        "run_stop",
    ] {
        assert!(log.contains(op), "{log}");
    }
    assert!(log.contains("session 1 on a"), "{log}");
    assert!(log.contains("every phase is complete (exit 0)"), "{log}");
    // Done: nothing runs again.
    let again = run_cmd(&env, &claude, &[]).output().unwrap();
    assert_eq!(again.status.code(), Some(0), "{}", render(&env, &again));
    assert_eq!(
        fs::read_to_string(env.project().join("work.log")).unwrap(),
        "a\nb\nc\n"
    );
}

#[test]
fn sessions_without_progress_stop_for_a_person_after_two() {
    let env = TestEnv::new();
    init(&env, &["a"]);
    let claude = fake_claude(
        &env,
        "echo '{\"type\":\"result\",\"is_error\":false,\"result\":\"nothing\"}'",
    );
    fs::write(
        env.store().join("config.toml"),
        "[run]\nnotify = \"echo \\\"$CHECKPOINT_WORKFLOW|$CHECKPOINT_PHASE|$CHECKPOINT_REASON\\\" > notified.txt\"\n",
    )
    .unwrap();

    let output = run_cmd(&env, &claude, &[]).output().unwrap();
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(9), "{rendered}");
    assert!(
        rendered.contains("session 2: ended (exit 0, stall, 0 transitions"),
        "{rendered}"
    );
    assert!(
        rendered.contains("2 sessions in a row ended without recording any work"),
        "{rendered}"
    );
    let notified = fs::read_to_string(env.project().join("notified.txt")).unwrap();
    assert_eq!(
        notified,
        "w||2 sessions in a row ended without recording any work\n"
    );
}

#[test]
fn an_approval_gate_stops_with_the_commands_to_run() {
    let env = TestEnv::new();
    fs::write(
        env.project().join("plan.json"),
        r#"{"phases": [{"id": "design", "requires_approval": true}, {"id": "build", "dependencies": ["design"]}]}"#,
    )
    .unwrap();
    env.ok(&["init", "w", "--plan", "plan.json"]);
    let claude = fake_claude(&env, DO_PHASE);

    let output = run_cmd(&env, &claude, &[]).output().unwrap();
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(9), "{rendered}");
    assert!(rendered.contains("checkpoint approve design"), "{rendered}");
    assert!(rendered.contains("checkpoint run w"), "{rendered}");
    // After the approval, a later run goes on with the next phase, not the approved one.
    env.ok(&["approve", "design"]);
    let output = run_cmd(&env, &claude, &[]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", render(&env, &output));
    assert_eq!(
        fs::read_to_string(env.project().join("work.log")).unwrap(),
        "design\nbuild\n"
    );
}

#[test]
fn max_sessions_bounds_the_run_with_its_own_exit_code() {
    let env = TestEnv::new();
    init(&env, &["a", "b:a"]);
    let claude = fake_claude(&env, DO_PHASE);
    let output = run_cmd(&env, &claude, &["--max-sessions", "1"])
        .output()
        .unwrap();
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(10), "{rendered}");
    assert!(
        rendered.contains("1 sessions ran (`--max-sessions`)"),
        "{rendered}"
    );
    assert_eq!(
        fs::read_to_string(env.project().join("work.log")).unwrap(),
        "a\n"
    );
}

#[test]
fn a_crashed_session_is_retried_in_a_fresh_session() {
    let env = TestEnv::new();
    init(&env, &["a"]);
    // The first session fails; the next one works.
    let claude = fake_claude(
        &env,
        &format!("if [ ! -f crashed ]; then touch crashed; echo boom >&2; exit 3; fi\n{DO_PHASE}"),
    );
    let output = run_cmd(&env, &claude, &[]).output().unwrap();
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
    assert!(
        rendered.contains("session 1: ended (exit 3, crash"),
        "{rendered}"
    );
    assert!(
        rendered.contains("the session failed (exit 3)"),
        "{rendered}"
    );
    assert!(rendered.contains("boom"), "{rendered}");
    let args = fs::read_to_string(env.dir.path().join("claude-args.log")).unwrap();
    assert!(!args.contains("--resume"), "{args}");
}

#[test]
fn dry_run_prints_the_plan_and_the_exact_command_line() {
    let env = TestEnv::new();
    init(&env, &["a"]);
    let output = env.snapshot(&[
        "run",
        "--dry-run",
        "--claude",
        "my-claude",
        "--",
        "--model",
        "opus",
    ]);
    assert!(output.starts_with("exit status: 0"), "{output}");
    assert!(
        output.contains("my-claude -p 'You are running unattended under `checkpoint run`"),
        "{output}"
    );
    assert!(
        output.contains("--output-format stream-json --verbose --model opus\n"),
        "{output}"
    );
    // Nothing ran and nothing was written.
    assert!(!env.ok(&["log"]).contains("run_start"));
    let json = env.json(&["run", "--dry-run", "--claude", "my-claude"]);
    assert_eq!(json["step"], "session");
    assert_eq!(json["plan"]["next"]["phase"], "a");
}

#[test]
fn the_workflow_may_be_named_by_the_global_option_after_run() {
    let env = TestEnv::new();
    init(&env, &["a"]);
    let json = env.json(&[
        "run",
        "--workflow",
        "w",
        "--dry-run",
        "--claude",
        "my-claude",
    ]);
    assert_eq!(json["plan"]["next"]["phase"], "a", "{json:#}");
}

#[test]
fn a_status_probing_the_runner_lock_does_not_stop_a_run_starting() {
    let env = TestEnv::new();
    init(&env, &["a"]);
    let claude = fake_claude(&env, DO_PHASE);
    // What `status` and `watch` do for an instant: take `run.lock` shared to see whether a
    // runner holds it. Held here for 100 ms while the run starts.
    let lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(env.workflow_dir("w").join("run.lock"))
        .unwrap();
    lock.lock_shared().unwrap();
    let run = run_cmd(&env, &claude, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    thread::sleep(Duration::from_millis(100));
    lock.unlock().unwrap();
    let output = run.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", render(&env, &output));
    assert_eq!(
        fs::read_to_string(env.project().join("work.log")).unwrap(),
        "a\n"
    );
}

#[test]
fn a_bad_max_wait_is_a_usage_error() {
    let env = TestEnv::new();
    let output = env.run(&["run", "--max-wait", "soon"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("`soon` is not a duration"));
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(50));
    }
}

fn spawn_run(env: &TestEnv, claude: &Path) -> Child {
    run_cmd(env, claude, &["--format", "json"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn one_runner_per_workflow_and_a_sigkill_leaves_nothing_in_the_way() {
    let env = TestEnv::new();
    init(&env, &["a", "b:a"]);
    // The first session starts its phase, then hangs until it is killed.
    let claude = fake_claude(
        &env,
        &format!(
            "if [ ! -f hung ]; then touch hung; \"$CK\" start \"$PHASE\" >/dev/null; echo $$ > session.pid; exec sleep 60; fi\n{DO_PHASE}"
        ),
    );
    let mut first = spawn_run(&env, &claude);
    wait_for("the first session", || {
        env.project().join("session.pid").is_file()
    });

    let status = env.json(&["status"]);
    assert_eq!(status["runner"]["pid"], first.id(), "{status:#}");
    let human = env.ok(&["status"]);
    assert!(
        human.contains(&format!(
            "a runner is active: `checkpoint run` pid {}",
            first.id()
        )),
        "{human}"
    );

    let second = run_cmd(&env, &claude, &[]).output().unwrap();
    let rendered = render(&env, &second);
    assert_eq!(second.status.code(), Some(5), "{rendered}");
    assert!(
        rendered.contains(&format!(
            "workflow `w` already has a runner: pid {}",
            first.id()
        )),
        "{rendered}"
    );

    first.kill().unwrap();
    first.wait().unwrap();
    let session: u32 = fs::read_to_string(env.project().join("session.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        Path::new(&format!("/proc/{session}")).exists(),
        "the session outlives its runner"
    );
    assert!(env.json(&["status"])["runner"].is_null());

    let third = run_cmd(&env, &claude, &[]).output().unwrap();
    let rendered = render(&env, &third);
    assert_eq!(third.status.code(), Some(0), "{rendered}");
    assert!(
        rendered.contains(&format!(
            "ended session process {session} that a killed runner left running"
        )),
        "{rendered}"
    );
    wait_for("the leftover session to be gone", || {
        !Path::new(&format!("/proc/{session}")).exists()
            || fs::read_to_string(format!("/proc/{session}/stat"))
                .is_ok_and(|stat| stat.contains(") Z "))
    });
    // `a` was started by the killed session and finished by the next: each phase's work once.
    assert_eq!(
        fs::read_to_string(env.project().join("work.log")).unwrap(),
        "a\nb\n"
    );
}

#[test]
fn report_tells_the_story_in_text_json_and_html() {
    let env = TestEnv::new();
    init(&env, &["a", "b:a"]);
    let claude = fake_claude(&env, DO_PHASE);
    assert!(
        run_cmd(&env, &claude, &[])
            .output()
            .unwrap()
            .status
            .success()
    );

    let text = env.ok(&["report"]);
    assert!(text.contains("2 of 2 phases done"), "{text}");
    assert!(
        text.contains("session  `a` session 1: progress, exit 0, 2 transitions"),
        "{text}"
    );
    assert!(text.contains("stopped"), "{text}");
    let json = env.json(&["report"]);
    assert_eq!(json["version"], 1);
    assert_eq!(json["stopped"]["exit"], 0);
    let kinds: Vec<&str> = json["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|span| span["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "run", "session", "phase", "phase", "session", "phase", "phase"
        ]
    );

    let output = env.run(&["report", "--html", "night.html"]);
    assert!(output.status.success(), "{}", render(&env, &output));
    // Only where it wrote: the text report is not printed besides (issue 25).
    assert!(output.stdout.is_empty(), "{}", render(&env, &output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("night.html`"),
        "{}",
        render(&env, &output)
    );
    let page = fs::read_to_string(env.project().join("night.html")).unwrap();
    assert_eq!(page.matches("<svg").count(), 2);
    screenshot_is_not_blank(&env.project().join("night.html"));
}

/// Renders `page` in a headless chromium and checks the screenshot is not blank; returns the
/// screenshot's colours; without a browser, says so and checks nothing more (CI installs one:
/// `.ci/run`).
fn screenshot_is_not_blank(page: &Path) -> Option<std::collections::HashSet<(u8, u8, u8)>> {
    let Some(browser) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|name| {
            Command::new(name)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
    else {
        eprintln!(
            "SKIPPED: the HTML report's rendering check needs chromium (`apt-get install chromium`); none is installed"
        );
        return None;
    };
    let dir = page.parent().unwrap();
    let shot = dir.join("shot.png");
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg("--window-size=1200,900")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        shot.is_file(),
        "no screenshot: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let pixels = &pixels[..info.buffer_size()];
    let channels = info.color_type.samples();
    let mut colours = std::collections::HashSet::new();
    let mut not_white = 0_usize;
    for pixel in pixels.chunks(channels) {
        let rgb = (pixel[0], pixel[1], pixel[2.min(channels - 1)]);
        if rgb != (255, 255, 255) {
            not_white += 1;
        }
        colours.insert(rgb);
    }
    let total = pixels.len() / channels;
    // Text, the graph's coloured boxes and the timeline's bars: many colours, and far more
    // than a blank page's none.
    assert!(
        colours.len() > 20,
        "only {} colours: a blank page?",
        colours.len()
    );
    assert!(
        not_white * 100 > total,
        "{not_white} of {total} pixels are not white"
    );
    // The green of a completed phase and the blue of a session are on the screen.
    let near = |target: (u8, u8, u8)| {
        colours.iter().any(|&(r, g, b)| {
            r.abs_diff(target.0) < 12 && g.abs_diff(target.1) < 12 && b.abs_diff(target.2) < 12
        })
    };
    assert!(
        near((0x2e, 0x9d, 0x57)),
        "no completed-phase green in the screenshot"
    );
    assert!(
        near((0x2f, 0x6f, 0xd6)),
        "no session blue in the screenshot"
    );
    if let Ok(keep) = std::env::var("CHECKPOINT_KEEP_SCREENSHOT") {
        fs::copy(&shot, keep).unwrap();
    }
    Some(colours)
}

/// Whether a colour near `target` is among `colours`.
fn has_colour(colours: &std::collections::HashSet<(u8, u8, u8)>, target: (u8, u8, u8)) -> bool {
    colours.iter().any(|&(r, g, b)| {
        r.abs_diff(target.0) < 12 && g.abs_diff(target.1) < 12 && b.abs_diff(target.2) < 12
    })
}

/// The HTML report: failures red, successes green, a legend, and the closing banner coloured by
/// how the work ended, in the page and on the screen of a headless browser.
#[test]
fn the_html_report_colours_failures_red_and_successes_green() {
    let env = TestEnv::new();
    init(&env, &["a", "b:a"]);
    env.ok(&["start", "a"]);
    env.ok(&["fail", "a", "--reason", "tests broke"]);
    env.ok(&["start", "a"]);
    env.ok(&["complete", "a"]);
    env.ok(&["start", "b"]);
    env.ok(&["fail", "b", "--reason", "gave up"]);
    env.ok(&["report", "--html", "failed.html"]);
    let page = fs::read_to_string(env.project().join("failed.html")).unwrap();
    assert_eq!(page.matches("<tr class=\"fail\">").count(), 2, "{page}");
    assert_eq!(page.matches("<tr class=\"ok\">").count(), 1, "{page}");
    assert!(page.contains("<p class=\"legend\">"), "{page}");
    for meaning in ["success", "failure", "under way"] {
        assert!(page.contains(meaning), "the legend lacks {meaning}");
    }
    // The timeline's bar of `a`'s first attempt is red, of its second green.
    assert!(
        page.contains("fill=\"#d64545\" fill-opacity=\"0.55\""),
        "{page}"
    );
    assert!(
        page.contains("fill=\"#2e9d57\" fill-opacity=\"0.55\""),
        "{page}"
    );
    // Ended failed: a red banner.
    assert!(page.contains("<p class=\"stop fail\">Failed</p>"), "{page}");
    if let Some(colours) = screenshot_is_not_blank(&env.project().join("failed.html")) {
        // The banner's pink and the failure red are on the screen.
        assert!(
            has_colour(&colours, (0xd6, 0x45, 0x45)),
            "no failure red on the screen"
        );
        assert!(
            has_colour(&colours, (0xfd, 0xe8, 0xe8)),
            "no failure row on the screen"
        );
    }
    // Once complete, the banner is green.
    env.ok(&["start", "b"]);
    env.ok(&["complete", "b"]);
    env.ok(&["report", "--html", "done.html"]);
    let page = fs::read_to_string(env.project().join("done.html")).unwrap();
    assert!(page.contains("<p class=\"stop ok\">Complete</p>"), "{page}");
    if let Some(colours) = screenshot_is_not_blank(&env.project().join("done.html")) {
        assert!(
            has_colour(&colours, (0xe3, 0xf4, 0xea)),
            "no green banner on the screen"
        );
    }
}

#[test]
fn until_stops_after_that_phase_and_a_commit_never_holds_the_runner_lock() {
    let env = TestEnv::bare();
    let dir = env.project();
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["config", "user.name", "Test"],
        &["config", "user.email", "test@example.com"],
        &["commit", "-q", "--allow-empty", "-m", "start"],
    ] {
        assert!(
            Command::new("git")
                .args(args)
                .current_dir(&dir)
                .status()
                .unwrap()
                .success()
        );
    }
    init(&env, &["a", "b:a", "c:b"]);
    fs::write(env.store().join("config.toml"), "commit_every = 1\n").unwrap();
    let claude = fake_claude(&env, DO_PHASE);

    let output = run_cmd(&env, &claude, &["--until", "b", "--no-progress"])
        .output()
        .unwrap();
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
    assert!(
        rendered.contains("phase `b` is done (`--until`)"),
        "{rendered}"
    );
    assert_eq!(fs::read_to_string(dir.join("work.log")).unwrap(), "a\nb\n");
    // The sessions' commits ran while the runner held its lock: the store (its lock with it)
    // is in none of them.
    let files = Command::new("git")
        .args(["log", "--name-only", "--format="])
        .current_dir(&dir)
        .output()
        .unwrap();
    let files = String::from_utf8(files.stdout).unwrap();
    assert!(files.contains("work.log"), "{files}");
    assert!(!files.contains(".claude/checkpoints"), "{files}");
    assert!(!files.contains("run.lock"), "{files}");
}

#[test]
fn a_client_that_cannot_start_fails_the_run_and_says_so_in_the_journal() {
    let env = TestEnv::new();
    init(&env, &["a"]);
    let missing = env.dir.path().join("no-such-claude");
    let output = run_cmd(&env, &missing, &[]).output().unwrap();
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(1), "{rendered}");
    assert!(
        rendered.contains("failed to start `[TEMP]/no-such-claude`"),
        "{rendered}"
    );
    let log = env.ok(&["log"]);
    assert!(log.contains("failed: failed to start"), "{log}");
    // The failed start is not a session that ran.
    assert!(!log.contains("run_session_end"), "{log}");
}

/// On a terminal, a live line shows the phases, the phase, the session and its last tool;
/// `script` gives the run a terminal.
#[cfg(unix)]
#[test]
fn a_terminal_gets_a_live_line() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIPPED: needs `script` (util-linux) for a terminal");
        return;
    }
    let env = TestEnv::new();
    init(&env, &["a"]);
    let claude = fake_claude(
        &env,
        &format!(
            "echo '{{\"type\":\"assistant\",\"message\":{{\"content\":[{{\"type\":\"tool_use\",\"name\":\"Write\",\"input\":{{}}}}]}}}}'\nsleep 1\n{DO_PHASE}"
        ),
    );
    let base = env.cmd();
    let mut cmd = Command::new("script");
    cmd.env_clear()
        .envs(
            base.get_envs()
                .filter_map(|(key, value)| Some((key, value?))),
        )
        .env_remove("CHECKPOINT_NO_PROGRESS")
        .env("TERM", "xterm")
        .env("CK", bin())
        .current_dir(env.project())
        .args(["-qec"])
        .arg(format!(
            "{} run --claude {}",
            bin().display(),
            claude.display()
        ))
        .arg("/dev/null");
    let output = cmd.output().unwrap();
    let screen = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{screen}");
    assert!(
        screen.contains("0/1 phases done · phase a · session 1 ·"),
        "{screen}"
    );
    assert!(screen.contains("· Write"), "{screen}");
    // The events are still there, one per line.
    assert!(
        screen.contains("run: finished: every phase is complete (exit 0)"),
        "{screen}"
    );
    // Without a terminal there is no live line.
    let env = TestEnv::new();
    init(&env, &["a"]);
    let claude = fake_claude(&env, DO_PHASE);
    let output = run_cmd(&env, &claude, &[]).output().unwrap();
    assert!(!render(&env, &output).contains("phases done ·"));
}

#[test]
fn sync_pulls_a_teammates_entries_before_each_session_and_pushes_after() {
    let remote = Remote::bare();
    let laptop = remote.clone();
    init(&laptop, &["a", "b:a", "c:b"]);
    laptop.ok(&["push"]);
    // A teammate does phase `a` on their clone and pushes it.
    let teammate = remote.clone();
    teammate.ok(&["pull", "-w", "w"]);
    teammate.ok(&["start", "a"]);
    teammate.ok(&["complete", "a"]);
    teammate.ok(&["push"]);
    let claude = fake_claude(&laptop, DO_PHASE);

    let output = run_cmd(&laptop, &claude, &["--sync", "--max-sessions", "1"])
        .output()
        .unwrap();
    let rendered = render(&laptop, &output);
    assert_eq!(output.status.code(), Some(10), "{rendered}");
    // The pull came first: the one session did `b`, not the teammate's `a` again.
    assert_eq!(
        fs::read_to_string(laptop.project().join("work.log")).unwrap(),
        "b\n"
    );
    // The teammate's start, completion and the snapshot of the files its completion took.
    assert!(
        rendered.contains("pull: `w`: pulled 3 entries from `origin`"),
        "{rendered}"
    );
    assert!(rendered.contains("push: `w`: pushed entry"), "{rendered}");
    // The session's work (and the run's story) is on the remote: the teammate pulls it.
    teammate.ok(&["pull"]);
    let status = teammate.json(&["status"]);
    let done: Vec<&str> = status["workflow"]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|phase| phase["status"] == "complete")
        .map(|phase| phase["id"].as_str().unwrap())
        .collect();
    assert_eq!(done, ["a", "b"]);
    // Every entry, up to the run's stop (the worktree path in `init` stays local).
    assert_eq!(
        teammate.read("w", "journal.jsonl").lines().last(),
        laptop.read("w", "journal.jsonl").lines().last()
    );
    assert!(teammate.ok(&["log"]).contains("run_stop"));
}

#[test]
fn sync_stops_the_run_for_a_person_when_the_remote_diverged() {
    let remote = Remote::bare();
    let laptop = remote.clone();
    init(&laptop, &["a", "b", "c"]);
    laptop.ok(&["push"]);
    let teammate = remote.clone();
    teammate.ok(&["pull", "-w", "w"]);
    teammate.ok(&["start", "c"]);
    teammate.ok(&["push"]);
    laptop.ok(&["start", "a"]);
    let pushed = remote.history("w");
    let claude = fake_claude(&laptop, DO_PHASE);

    let output = run_cmd(&laptop, &claude, &["--sync", "--remote", "origin"])
        .output()
        .unwrap();
    let rendered = render(&laptop, &output);
    assert_eq!(output.status.code(), Some(9), "{rendered}");
    assert!(
        rendered.contains("`w` diverged from `origin` after entry"),
        "{rendered}"
    );
    assert!(
        rendered.contains("checkpoint --workflow w pull origin --theirs"),
        "{rendered}"
    );
    assert!(rendered.contains("--merge"), "{rendered}");
    // No session ran, nothing was pushed, and our side is still here.
    assert!(!laptop.project().join("work.log").exists());
    assert_eq!(remote.history("w"), pushed);
    let log = laptop.ok(&["log"]);
    assert!(log.contains("phase_start"), "{log}");
    assert!(log.contains("run_stop"), "{log}");
    // The person's choice, then the run goes on.
    laptop.ok(&["pull", "--merge"]);
    let output = run_cmd(&laptop, &claude, &["--sync", "--max-sessions", "1"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(10),
        "{}",
        render(&laptop, &output)
    );
    assert!(laptop.project().join("work.log").exists());
}

#[test]
fn sync_is_in_help_and_remote_without_sync_is_a_usage_error() {
    let env = TestEnv::new();
    init(&env, &["a"]);
    let output = env.run(&["run", "--remote", "origin"]);
    assert_eq!(output.status.code(), Some(2), "{}", render(&env, &output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--sync"));
    let help = env.ok(&["run", "--help"]);
    assert!(
        help.contains("--sync") && help.contains("before each session and push it"),
        "{help}"
    );
    assert!(help.contains("--remote <REMOTE>"), "{help}");
}

#[test]
fn an_unknown_key_in_any_table_of_the_config_is_a_warning_and_everything_goes_on() {
    let cases = [
        (
            "[run]\nnotfy = \"echo x\"\n",
            "run.notfy",
            "line 2",
            Some("run.notify"),
        ),
        (
            "[sync]\non_complet = true\n",
            "sync.on_complet",
            "line 2",
            Some("sync.on_complete"),
        ),
        ("[gc]\nkeep_dayz = 3\n", "gc.keep_dayz", "line 2", None),
        (
            "stale_after_dayz = 3\n",
            "stale_after_dayz",
            "line 1",
            Some("stale_after_days"),
        ),
        ("[telemetry]\non = true\n", "telemetry", "line 1", None),
        (
            "[run]\nclaude = \"c\"\n[run.sandbox]\nimage = \"x\"\n",
            "run.sandbox",
            "line 3",
            None,
        ),
    ];
    for (text, key, line, closest) in cases {
        let env = TestEnv::new();
        init(&env, &["a"]);
        fs::write(env.store().join("config.toml"), text).unwrap();
        for args in [
            &["start", "a"][..],
            &["status"],
            &["run", "--dry-run", "--claude", "c"],
        ] {
            let output = env.run(args);
            let rendered = render(&env, &output);
            assert_eq!(output.status.code(), Some(0), "{text}{args:?}\n{rendered}");
            let hint = closest
                .map(|closest| format!(" (did you mean `{closest}`?)"))
                .unwrap_or_default();
            assert!(
                rendered.contains(&format!("warning: unknown key `{key}` in `"))
                    && rendered.contains(&format!("config.toml` {line}{hint}: it is ignored")),
                "{text}{args:?}\n{rendered}"
            );
        }
        // A hook records, and warns on stderr only.
        let payload = serde_json::json!({
            "session_id": "s", "transcript_path": "/t", "cwd": env.project(),
            "hook_event_name": "Stop", "stop_hook_active": false,
        });
        let (code, _, stderr) = env.hook("Stop", &payload.to_string()).wait();
        assert_eq!(code, 0, "{text}{stderr}");
        assert!(stderr.contains(key), "{text}{stderr}");
        assert_eq!(env.state("w")["last_activity"]["source"], "Stop", "{text}");
    }
}

/// The journal's entries of one kind (`run_wait`, …), parsed.
fn entries(env: &TestEnv, op: &str) -> Vec<serde_json::Value> {
    env.read("w", "journal.jsonl")
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|entry| entry["transition"]["op"] == op)
        .collect()
}

/// How long each `run_wait` of the journal waits, in seconds after its entry.
fn waits(env: &TestEnv) -> Vec<i64> {
    let time = |value: &serde_json::Value| {
        chrono::DateTime::parse_from_rfc3339(value.as_str().unwrap())
            .unwrap()
            .timestamp()
    };
    entries(env, "run_wait")
        .iter()
        .map(|entry| time(&entry["transition"]["until"]) - time(&entry["at"]))
        .collect()
}

/// A session that ends on a rate limit, printing `lines` (stream-json), the first time; the
/// next one does the phase.
fn limited_once(env: &TestEnv, lines: &[&str]) -> PathBuf {
    let echo: String = lines
        .iter()
        .map(|line| format!("echo '{line}'\n"))
        .collect();
    fake_claude(
        env,
        &format!("if [ ! -f limited ]; then touch limited; {echo} exit 1; fi\n{DO_PHASE}"),
    )
}

const LIMIT_EVENT: &str =
    r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":RESET}}"#;
const LIMIT_RESULT: &str = r#"{"type":"result","is_error":true,"api_error_status":429,"result":"5-hour limit reached ∙ resets TEXT"}"#;

fn limit_event(reset: &str) -> String {
    LIMIT_EVENT.replace("RESET", reset)
}

fn limit_result(text: &str) -> String {
    LIMIT_RESULT.replace("TEXT", text)
}

#[test]
fn a_precise_reset_beats_a_coarse_one_and_a_time_of_day_just_passed_is_now() {
    // 12:00:20: the precise reset is 12:00:25 (1772366425); "12pm" and "12:00pm" have passed
    // by less than their resolution.
    let precise = limit_event("1772366425");
    let cases: [(Vec<String>, &str); 5] = [
        (
            vec![precise.clone(), limit_result("12pm")],
            "rate limit; it resets at 2026-03-01T12:00:25+00:00",
        ),
        (
            vec![limit_result("12:00pm"), precise.clone()],
            "rate limit; it resets at 2026-03-01T12:00:25+00:00",
        ),
        (vec![limit_result("12pm")], "rate limit; it resets now"),
        (vec![limit_result("12:00pm")], "rate limit; it resets now"),
        (vec![limit_result("12:00")], "rate limit; it resets now"),
    ];
    for (lines, reason) in cases {
        let env = TestEnv::new();
        env.set_now("2026-03-01T12:00:20Z");
        init(&env, &["a"]);
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let claude = limited_once(&env, &lines);
        let output = run_cmd(&env, &claude, &[])
            .env("TZ", "UTC")
            .output()
            .unwrap();
        let rendered = render(&env, &output);
        assert_eq!(output.status.code(), Some(0), "{lines:?}\n{rendered}");
        assert!(rendered.contains(reason), "{lines:?}\n{rendered}");
        let waits = waits(&env);
        assert_eq!(waits.len(), 1, "{rendered}");
        assert!(waits[0] <= 7, "{lines:?}: waited {waits:?}");
        // The same session goes on after the wait.
        let args = fs::read_to_string(env.dir.path().join("claude-args.log")).unwrap();
        assert!(
            args.lines().nth(1).unwrap().contains("|--resume|sess-"),
            "{args}"
        );
    }
}

#[test]
fn a_reset_not_in_the_future_backs_off_as_a_missing_one() {
    for reset in ["0", "-5", "1772362800", "1772366400"] {
        let env = TestEnv::new();
        init(&env, &["a"]);
        let event = limit_event(reset);
        let claude = fake_claude(&env, &format!("echo '{event}'\nexit 1"));
        let output = run_cmd(&env, &claude, &["--max-sessions", "3"])
            .output()
            .unwrap();
        let rendered = render(&env, &output);
        assert_eq!(output.status.code(), Some(10), "{reset}\n{rendered}");
        // Three sessions, not one every 2 s: each wait backs off, doubling.
        assert_eq!(waits(&env), [60, 120, 240], "{reset}\n{rendered}");
        assert!(
            rendered.contains("is not in the future; backing off 1m00s"),
            "{rendered}"
        );
    }
}

#[test]
fn absurd_times_and_delays_in_the_stream_are_said_and_never_panic() {
    let retry = r#"{"type":"system","subtype":"api_retry","attempt":1,"retry_delay_ms":9223372036854775807,"error_status":429}"#;
    let limited = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"API Error: Request rejected (429)"}]},"error":"rate_limit"}"#;
    let text = r#"{"type":"result","is_error":true,"api_error_status":429,"result":"Claude AI usage limit reached|8210266876799"}"#;
    let huge_retry = retry.replace("9223372036854775807", "18446744073709551615");
    let negative_retry = retry.replace("9223372036854775807", "-5");
    let cases: [Vec<String>; 6] = [
        vec![limit_event("8210266876799")],
        vec![limit_event("9223372036854775807")],
        vec![text.to_owned()],
        vec![retry.to_owned(), limited.to_owned()],
        vec![huge_retry, limited.to_owned()],
        vec![negative_retry, limited.to_owned()],
    ];
    for lines in cases {
        let env = TestEnv::new();
        init(&env, &["a"]);
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let claude = limited_once(&env, &lines);
        let output = run_cmd(&env, &claude, &["--max-sessions", "1"])
            .output()
            .unwrap();
        let rendered = render(&env, &output);
        assert_eq!(output.status.code(), Some(10), "{lines:?}\n{rendered}");
        assert!(rendered.contains("taken as no reset time"), "{rendered}");
        assert!(
            rendered.contains("rate limit without a usable reset time"),
            "{rendered}"
        );
        assert_eq!(entries(&env, "run_session_end").len(), 1, "{rendered}");
        assert_eq!(waits(&env), [60], "{rendered}");
    }
}

#[test]
fn max_wait_zero_keeps_a_minimum_backoff_and_a_huge_one_is_refused() {
    let env = TestEnv::new();
    init(&env, &["a"]);
    let claude = fake_claude(&env, "exit 3");
    let output = run_cmd(&env, &claude, &["--max-wait", "0", "--max-sessions", "3"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(10), "{}", render(&env, &output));
    assert_eq!(waits(&env), [5, 5, 5]);
    for huge in [
        "99999999999999999999d",
        "9999999999999999s",
        "10001d",
        "1h99999999999999999999",
    ] {
        let output = env.run(&["run", "--max-wait", huge]);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{huge}: {}",
            render(&env, &output)
        );
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("too long a duration"),
            "{huge}: {}",
            render(&env, &output)
        );
    }
}

/// Waits for `child` at most `secs` seconds; kills it and fails past that.
fn finishes(mut child: Child, secs: u64, what: &str) -> std::process::Output {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not end within {secs}s");
        }
        thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// Whether process `pid` is gone (or only a zombie waiting for its parent).
fn gone(pid: &str) -> bool {
    fs::read_to_string(format!("/proc/{}/stat", pid.trim())).map_or(true, |stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

#[cfg(unix)]
#[test]
fn the_session_ends_when_the_client_exits_whatever_its_children_do() {
    let children = [
        // Keeps printing on the session's output.
        "( while :; do echo '{\"type\":\"noise\"}'; sleep 0.05; done ) & echo $! > child.pid",
        // Silent, holding the output open.
        "sleep 300 & echo $! > child.pid",
        // Silent, deaf to SIGTERM, output elsewhere.
        "( trap '' TERM; exec sleep 300 ) >/dev/null 2>&1 & echo $! > child.pid",
    ];
    for child in children {
        let env = TestEnv::new();
        init(&env, &["a"]);
        let claude = fake_claude(&env, &format!("{child}\n{DO_PHASE}"));
        let run = run_cmd(&env, &claude, &[])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let output = finishes(run, 60, child);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{child}\n{}",
            render(&env, &output)
        );
        let pid = fs::read_to_string(env.project().join("child.pid")).unwrap();
        wait_for("the session's child to be ended", || gone(&pid));
        assert_eq!(entries(&env, "run_session_end").len(), 1);
    }
}

#[cfg(unix)]
#[test]
fn ctrl_c_sigterm_and_sighup_stop_the_session_exit_130_and_are_named() {
    for (signal, name) in [("INT", "Ctrl-C"), ("TERM", "SIGTERM"), ("HUP", "SIGHUP")] {
        let env = TestEnv::new();
        init(&env, &["a"]);
        let claude = fake_claude(&env, "echo $$ > session.pid; exec sleep 60");
        let mut runner = spawn_run(&env, &claude);
        wait_for("the session", || {
            env.project().join("session.pid").is_file()
        });
        let session = fs::read_to_string(env.project().join("session.pid")).unwrap();
        Command::new("kill")
            .args([&format!("-{signal}"), &runner.id().to_string()])
            .status()
            .unwrap();
        let status = runner.wait().unwrap();
        assert_eq!(status.code(), Some(130), "{signal}");
        assert!(gone(&session), "{signal}");
        let log = env.ok(&["log"]);
        assert!(log.contains("interrupted, killed by a signal"), "{log}");
        assert!(
            log.contains(&format!(
                "interrupted ({name}); the session was stopped (exit 130)"
            )),
            "{log}"
        );
    }
}

#[test]
fn sync_goes_on_after_a_failed_first_pull_and_an_unresponsive_remote_never_hangs_it() {
    // A remote that is not there, and one that never answers.
    for url in ["/nonexistent/remote.git".to_owned(), silent_remote()] {
        let env = TestEnv::new();
        crate::support::git(&env.project(), &["init", "--quiet"]);
        crate::support::git(&env.project(), &["remote", "add", "origin", &url]);
        init(&env, &["a", "b:a"]);
        let claude = fake_claude(&env, DO_PHASE);
        let run = run_cmd(&env, &claude, &["--sync", "--max-sessions", "1"])
            .env("CHECKPOINT_SYNC_TIMEOUT", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let output = finishes(run, 90, &url);
        let rendered = render(&env, &output);
        assert_eq!(output.status.code(), Some(10), "{url}\n{rendered}");
        assert!(
            rendered.contains("--sync: could not pull `w` from `origin`, going on with this copy"),
            "{rendered}"
        );
        assert!(
            rendered.contains("--sync: could not push `w`"),
            "{rendered}"
        );
        assert_eq!(
            fs::read_to_string(env.project().join("work.log")).unwrap(),
            "a\n"
        );
        assert_eq!(entries(&env, "run_session_end").len(), 1);
    }
}

/// The CPU time process `pid` used so far, in clock ticks (user and system).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, rest) = stat.rsplit_once(')').unwrap();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3, utime 14 and stime 15 (from 1).
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn a_session_that_closes_its_output_is_waited_for_without_spinning() {
    let env = TestEnv::new();
    init(&env, &["a"]);
    let claude = fake_claude(
        &env,
        &format!("exec 1>/dev/null\necho $$ > session.pid\nsleep 3\n{DO_PHASE}"),
    );
    let run = run_cmd(&env, &claude, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let runner = run.id();
    wait_for("the session", || {
        env.project().join("session.pid").is_file()
    });
    let before = cpu_ticks(runner);
    thread::sleep(Duration::from_secs(2));
    let spent = cpu_ticks(runner) - before;
    let output = finishes(run, 60, "the run");
    assert_eq!(output.status.code(), Some(0), "{}", render(&env, &output));
    // A spinning loop burns up to a core (200 ticks in these 2 s); waiting, next to none.
    assert!(
        spent < 20,
        "the runner used {spent} ticks of CPU while its session was silent"
    );
}

/// The runner's entries of the journal, by name (`run_start`, `run_wait`, …).
fn run_ops(env: &TestEnv) -> Vec<String> {
    env.read("w", "journal.jsonl")
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter_map(|entry| entry["transition"]["op"].as_str().map(str::to_owned))
        .filter(|op| op.starts_with("run_"))
        .collect()
}

/// A session that does the plan's phase and whose result says it cost `cost` dollars and used
/// `tokens` tokens; `before` is printed first (stream-json lines, shell-quoted).
fn spending_claude(env: &TestEnv, before: &str, cost: &str, tokens: u64) -> PathBuf {
    let result = format!(
        r#"{{"type":"result","is_error":false,"result":"done","total_cost_usd":{cost},"usage":{{"input_tokens":{tokens},"output_tokens":0}}}}"#
    );
    fake_claude(
        env,
        &format!(
            "{before}\necho \"$PHASE\" >> work.log\n\"$CK\" start \"$PHASE\" >/dev/null 2>&1; \"$CK\" complete \"$PHASE\" >/dev/null\necho '{result}'"
        ),
    )
}

#[test]
fn a_cost_cap_stops_the_run_after_the_session_that_reaches_it_saying_the_total() {
    let env = TestEnv::new();
    init(&env, &["a", "b:a", "c:b", "d:c"]);
    let claude = spending_claude(&env, "", "0.6", 1500);
    let output = run_cmd(&env, &claude, &["--max-cost", "1"])
        .output()
        .unwrap();
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(10), "{rendered}");
    assert!(
        rendered.contains("the cost cap is reached: spent $1.20 and 3000 tokens in 2 sessions (`--max-cost` $1.00)"),
        "{rendered}"
    );
    // Two sessions ran, each journaled with what it spent; `report` adds them up.
    let ends = entries(&env, "run_session_end");
    assert_eq!(ends.len(), 2, "{rendered}");
    assert!(
        ends.iter()
            .all(|end| end["transition"]["cost_usd"] == 0.6 && end["transition"]["tokens"] == 1500)
    );
    let report = env.json(&["report", "--format", "json"]);
    assert_eq!(report["spent"]["cost_usd"], 1.2, "{report}");
    assert_eq!(report["spent"]["sessions"], 2, "{report}");
    assert!(
        env.ok(&["report"])
            .contains("spent $1.20 and 3000 tokens in 2 sessions")
    );
    // A token cap, from `config.toml`, stops the same way; the command line wins over it.
    let env = TestEnv::new();
    init(&env, &["a", "b:a", "c:b"]);
    fs::write(
        env.store().join("config.toml"),
        "[run]\nmax_tokens = 1000\n",
    )
    .unwrap();
    let claude = spending_claude(&env, "", "0.01", 1000);
    let output = run_cmd(&env, &claude, &[]).output().unwrap();
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(10), "{rendered}");
    assert!(
        rendered.contains("the token cap is reached: spent $0.01 and 1000 tokens in 1 session"),
        "{rendered}"
    );
    let output = run_cmd(&env, &claude, &["--max-tokens", "100000"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", render(&env, &output));
}

#[test]
fn since_counts_what_earlier_runs_spent() {
    let env = TestEnv::new();
    init(&env, &["a", "b:a", "c:b", "d:c", "e:d"]);
    let claude = spending_claude(&env, "", "0.6", 10);
    let first = run_cmd(&env, &claude, &["--max-sessions", "1"])
        .output()
        .unwrap();
    assert_eq!(first.status.code(), Some(10), "{}", render(&env, &first));
    // Counting the first run's $0.60: one more session reaches $1.
    let output = run_cmd(&env, &claude, &["--max-cost", "1", "--since", "1h"])
        .output()
        .unwrap();
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(10), "{rendered}");
    assert!(
        rendered.contains("spent $1.20 and 20 tokens in 2 sessions"),
        "{rendered}"
    );
    assert_eq!(
        fs::read_to_string(env.project().join("work.log")).unwrap(),
        "a\nb\n"
    );
    // A time after those sessions counts none of them; this run alone reaches the cap.
    let output = run_cmd(
        &env,
        &claude,
        &["--max-cost", "1", "--since", "2099-01-01T00:00:00Z"],
    )
    .output()
    .unwrap();
    let rendered = render(&env, &output);
    assert!(
        rendered.contains("spent $1.20 and 20 tokens in 2 sessions"),
        "{rendered}"
    );
    assert_eq!(
        fs::read_to_string(env.project().join("work.log")).unwrap(),
        "a\nb\nc\nd\n"
    );
}

#[test]
fn usage_above_the_cap_waits_for_the_windows_reset_then_goes_on() {
    let env = TestEnv::new();
    env.set_now("2026-03-01T12:00:00Z");
    init(&env, &["a", "b:a"]);
    // 2026-03-01T12:10:00Z.
    let event = r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1772367000,"rateLimitType":"five_hour","utilization":0.95}}"#;
    let claude = spending_claude(&env, &format!("echo '{event}'"), "0.1", 10);
    let output = run_cmd(&env, &claude, &["--max-usage", "80", "--format", "json"])
        .env("TZ", "UTC")
        .output()
        .unwrap();
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
    let waits = entries(&env, "run_wait");
    assert_eq!(waits.len(), 1, "{rendered}");
    assert_eq!(waits[0]["transition"]["kind"], "usage", "{rendered}");
    assert_eq!(
        waits[0]["transition"]["until"], "2026-03-01T12:10:02Z",
        "{rendered}"
    );
    assert!(
        waits[0]["transition"]["reason"]
            .as_str()
            .unwrap()
            .contains("the five_hour window is at 95% of its limit (`--max-usage` 80%)"),
        "{rendered}"
    );
    assert!(rendered.contains(r#""event":"usage""#), "{rendered}");
    // The wait came between the sessions: session 2 started after it.
    let ops: Vec<String> = run_ops(&env)
        .into_iter()
        .filter(|op| op == "run_session_start" || op == "run_wait")
        .collect();
    assert_eq!(
        ops,
        ["run_session_start", "run_wait", "run_session_start"],
        "{rendered}"
    );
    // Below the cap, no wait; a reset further than `--max-wait` stops (exit 10).
    let env = TestEnv::new();
    env.set_now("2026-03-01T12:00:00Z");
    init(&env, &["a", "b:a"]);
    let claude = spending_claude(&env, &format!("echo '{event}'"), "0.1", 10);
    let output = run_cmd(&env, &claude, &["--max-usage", "96"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", render(&env, &output));
    assert!(entries(&env, "run_wait").is_empty());
    let env = TestEnv::new();
    env.set_now("2026-03-01T12:00:00Z");
    init(&env, &["a", "b:a"]);
    let claude = spending_claude(&env, &format!("echo '{event}'"), "0.1", 10);
    let output = run_cmd(&env, &claude, &["--max-usage", "80%", "--max-wait", "5m"])
        .output()
        .unwrap();
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(10), "{rendered}");
    assert!(
        rendered.contains("longer than `--max-wait` (5m00s)"),
        "{rendered}"
    );
}

#[test]
fn outside_its_window_the_runner_starts_no_session_until_it_opens() {
    // Opening in 40 s, and across midnight.
    for (now, window, until) in [
        (
            "2026-03-01T12:00:20Z",
            "12:01-13:00",
            "2026-03-01T12:01:00Z",
        ),
        (
            "2026-03-01T23:59:30Z",
            "00:00-06:00",
            "2026-03-02T00:00:00Z",
        ),
        (
            "2026-03-01T08:00:00Z",
            "22:00-07:00",
            "2026-03-01T22:00:00Z",
        ),
    ] {
        let env = TestEnv::new();
        env.set_now(now);
        init(&env, &["a"]);
        let claude = fake_claude(&env, DO_PHASE);
        let output = run_cmd(&env, &claude, &["--window", window])
            .env("TZ", "UTC")
            .output()
            .unwrap();
        let rendered = render(&env, &output);
        assert_eq!(output.status.code(), Some(0), "{window}\n{rendered}");
        let ops = run_ops(&env);
        assert_eq!(
            ops,
            [
                "run_start",
                "run_wait",
                "run_session_start",
                "run_session_end",
                "run_stop"
            ],
            "{window}\n{rendered}"
        );
        let wait = &entries(&env, "run_wait")[0]["transition"];
        assert_eq!(
            (wait["kind"].as_str(), wait["until"].as_str()),
            (Some("window"), Some(until)),
            "{rendered}"
        );
    }
    // Inside the window: no wait. A bad window is a usage error saying how to write one.
    let env = TestEnv::new();
    env.set_now("2026-03-01T23:00:00Z");
    init(&env, &["a"]);
    let claude = fake_claude(&env, DO_PHASE);
    let output = run_cmd(&env, &claude, &["--window", "22:00-07:00"])
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", render(&env, &output));
    assert!(entries(&env, "run_wait").is_empty());
    for bad in ["25:00-07:00", "22:00", "7-9", "08:00-08:00"] {
        let output = run_cmd(&env, &claude, &["--window", bad]).output().unwrap();
        let rendered = render(&env, &output);
        assert_eq!(output.status.code(), Some(2), "{bad}\n{rendered}");
        assert!(rendered.contains("window"), "{rendered}");
    }
    for (flag, bad) in [
        ("--max-cost", "-1"),
        ("--max-cost", "NaN"),
        ("--max-usage", "-5"),
        ("--max-usage", "inf"),
        ("--max-tokens", "-1"),
        ("--since", "yesterday"),
    ] {
        let output = run_cmd(&env, &claude, &[flag, bad]).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(2),
            "{flag} {bad}\n{}",
            render(&env, &output)
        );
    }
}

#[test]
fn run_keys_of_the_config_are_read_checked_and_their_typos_warned() {
    let env = TestEnv::new();
    env.set_now("2026-03-01T12:00:20Z");
    init(&env, &["a"]);
    let claude = fake_claude(&env, DO_PHASE);
    // A window from the config, one string or a list.
    for window in ["\"12:01-13:00\"", "[\"20:00-21:00\", \"12:01-13:00\"]"] {
        fs::write(
            env.store().join("config.toml"),
            format!("[run]\nwindow = {window}\n"),
        )
        .unwrap();
        let output = run_cmd(&env, &claude, &["--dry-run"])
            .env("TZ", "UTC")
            .output()
            .unwrap();
        let rendered = render(&env, &output);
        assert!(
            rendered.contains("would wait: outside the run's windows"),
            "{rendered}"
        );
    }
    // A bad value names the file; a misspelt key is a warning with the closest key.
    fs::write(
        env.store().join("config.toml"),
        "[run]\nwindow = \"25:00-26:00\"\n",
    )
    .unwrap();
    let output = run_cmd(&env, &claude, &["--dry-run"]).output().unwrap();
    let rendered = render(&env, &output);
    assert_ne!(output.status.code(), Some(0), "{rendered}");
    assert!(
        rendered.contains("config.toml") && rendered.contains("HH:MM-HH:MM"),
        "{rendered}"
    );
    fs::write(env.store().join("config.toml"), "[run]\nmax_cost = -3\n").unwrap();
    let output = run_cmd(&env, &claude, &[]).output().unwrap();
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(2), "{rendered}");
    assert!(
        rendered.contains("config.toml") && rendered.contains("max_cost"),
        "{rendered}"
    );
    fs::write(env.store().join("config.toml"), "[run]\nmax_cots = 3\n").unwrap();
    let output = run_cmd(&env, &claude, &["--dry-run"]).output().unwrap();
    let rendered = render(&env, &output);
    assert!(
        rendered.contains("run.max_cots") && rendered.contains("run.max_cost"),
        "{rendered}"
    );
}

#[test]
fn notify_runs_when_the_run_finishes_too_saying_which() {
    let env = TestEnv::new();
    init(&env, &["a"]);
    let claude = fake_claude(&env, DO_PHASE);
    fs::write(
        env.store().join("config.toml"),
        "[run]\nnotify = \"echo \\\"$CHECKPOINT_STOP|$CHECKPOINT_REASON\\\" > notified.txt\"\n",
    )
    .unwrap();
    let output = run_cmd(&env, &claude, &[]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", render(&env, &output));
    let notified = fs::read_to_string(env.project().join("notified.txt")).unwrap();
    assert_eq!(notified, "finished|finished: every phase is complete\n");
}

/// A session that does the plan's phase and logs `<workflow>:<phase>` to `all.log`.
const DO_PHASE_LOGGED: &str = "echo \"$CHECKPOINT_WORKFLOW:$PHASE\" >> all.log\n\
    \"$CK\" start \"$PHASE\" >/dev/null 2>&1; \"$CK\" complete \"$PHASE\" >/dev/null\n\
    echo '{\"type\":\"result\",\"is_error\":false,\"result\":\"done\",\"total_cost_usd\":0.5}'";

fn init_plan(env: &TestEnv, id: &str, plan: &str) {
    let file = format!("{id}.json");
    fs::write(env.project().join(&file), plan).unwrap();
    env.ok(&["init", id, "--plan", &file]);
}

#[test]
fn run_all_carries_every_workflow_by_priority_and_skips_one_that_needs_a_person() {
    let env = TestEnv::new();
    init_plan(
        &env,
        "gate",
        r#"{"phases": [{"id": "design", "requires_approval": true}, {"id": "build", "dependencies": ["design"]}]}"#,
    );
    init_plan(&env, "later", r#"{"phases": [{"id": "a"}]}"#);
    init_plan(
        &env,
        "urgent",
        r#"{"priority": 5, "phases": [{"id": "a"}, {"id": "b", "dependencies": ["a"]}]}"#,
    );
    init_plan(&env, "done", r#"{"phases": [{"id": "a"}]}"#);
    env.ok(&["--workflow", "done", "start", "a"]);
    env.ok(&["--workflow", "done", "complete", "a"]);
    let claude = fake_claude(&env, DO_PHASE_LOGGED);
    // A dry run runs nothing and says so, naming the order, never "finished".
    let output = run_cmd(&env, &claude, &["--all", "--dry-run"])
        .output()
        .unwrap();
    let rendered = render(&env, &output);
    assert!(
        rendered.contains(
            "run --all --dry-run: nothing was run; it would run `urgent`, `gate`, `later` in this order"
        ),
        "{rendered}"
    );
    assert!(!rendered.contains("finished"), "{rendered}");
    assert!(!env.project().join("all.log").exists(), "{rendered}");
    let output = run_cmd(&env, &claude, &["--all"]).output().unwrap();
    let rendered = render(&env, &output);
    // The person's stop is the most serious: exit 9, after every other workflow went on.
    assert_eq!(output.status.code(), Some(9), "{rendered}");
    assert_eq!(
        fs::read_to_string(env.project().join("all.log")).unwrap(),
        "urgent:a\nurgent:b\ngate:design\nlater:a\n",
        "{rendered}"
    );
    assert!(
        rendered.contains("run --all: `urgent` finished, `gate` needs_person, `later` finished"),
        "{rendered}"
    );
    assert!(rendered.contains("checkpoint approve design"), "{rendered}");
    // After the decision, the next `--all` finishes the rest: exit 0; then nothing is left.
    env.ok(&["--workflow", "gate", "approve", "design"]);
    let output = run_cmd(&env, &claude, &["--all"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", render(&env, &output));
    let output = run_cmd(&env, &claude, &["--all"]).output().unwrap();
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(0), "{rendered}");
    assert!(rendered.contains("no unfinished workflow"), "{rendered}");
    // `--all` with a workflow named is a usage error.
    let output = run_cmd(&env, &claude, &["--all", "gate"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", render(&env, &output));
}

#[test]
fn run_all_shares_its_budget_and_a_second_one_exits_5_naming_the_first() {
    let env = TestEnv::new();
    for id in ["one", "two", "three"] {
        init_plan(&env, id, r#"{"phases": [{"id": "a"}]}"#);
    }
    let claude = fake_claude(&env, DO_PHASE_LOGGED);
    // $0.50 a session, $1 for the whole run: two workflows, then a clean stop (exit 10).
    let output = run_cmd(&env, &claude, &["--all", "--max-cost", "1"])
        .output()
        .unwrap();
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(10), "{rendered}");
    assert_eq!(
        fs::read_to_string(env.project().join("all.log"))
            .unwrap()
            .lines()
            .count(),
        2,
        "{rendered}"
    );
    assert!(rendered.contains("spent $1.00"), "{rendered}");
    assert!(
        rendered.contains("run --all: `one` finished, `three` finished, `two` limit"),
        "{rendered}"
    );
    // A second `run --all` while one runs waits for nothing: exit 5, naming the first.
    let slow = fake_claude(&env, &format!("touch started; sleep 30\n{DO_PHASE_LOGGED}"));
    let mut first = run_cmd(&env, &slow, &["--all"]).spawn().unwrap();
    wait_for("the first run's session", || {
        env.project().join("started").exists()
    });
    let second = run_cmd(&env, &claude, &["--all"]).output().unwrap();
    let rendered = render(&env, &second);
    // Ctrl-C ends the first and its session.
    Command::new("kill")
        .args(["-INT", &first.id().to_string()])
        .status()
        .unwrap();
    assert_eq!(first.wait().unwrap().code(), Some(130));
    assert_eq!(second.status.code(), Some(5), "{rendered}");
    assert!(
        rendered.contains(&format!(
            "this project's `checkpoint run --all` already has a runner: pid {}",
            first.id()
        )),
        "{rendered}"
    );
}

#[test]
fn status_and_watch_show_what_a_running_run_spent_and_its_caps() {
    let env = TestEnv::new();
    init(&env, &["a", "b:a"]);
    let claude = fake_claude(
        &env,
        &format!(
            "if [ -f first-done ]; then touch started; sleep 30; fi\n{DO_PHASE_LOGGED}\ntouch first-done"
        ),
    );
    let mut run = run_cmd(&env, &claude, &["--max-cost", "20", "--max-usage", "90"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the second session", || {
        env.project().join("started").exists()
    });
    let status = env.ok(&["status"]);
    let watch = env.ok(&["watch", "--once"]);
    Command::new("kill")
        .args(["-INT", &run.id().to_string()])
        .status()
        .unwrap();
    assert_eq!(run.wait().unwrap().code(), Some(130));
    for shown in [status, watch] {
        assert!(
            shown.contains("spent $0.50 and 0 tokens (caps: $20.00, usage 90%)"),
            "{shown}"
        );
    }
}

/// With the system's zone (`chrono::Local`, `TZ=Europe/Berlin`) on the autumn night of 2026,
/// a window opening at a time the clock shows twice opens at its first showing (00:00 UTC, not
/// the second at 01:00), as README says.
#[test]
fn the_autumn_night_opens_the_window_at_the_first_showing_in_the_systems_zone() {
    if !Path::new("/usr/share/zoneinfo/Europe/Berlin").is_file() {
        println!("skipped: no zone database here (the window tests cover the rule)");
        return;
    }
    let env = TestEnv::new();
    env.set_now("2026-10-20T00:00:00Z");
    env.ok(&["init", "w", "--phase", "a"]);
    let output = env
        .cmd()
        .args(["run", "--dry-run", "--window", "02:00-05:00"])
        .env("TZ", "Europe/Berlin")
        .env("CHECKPOINT_TEST_NOW", "2026-10-24T23:30:00Z")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("the next opens at 2026-10-25T00:00:00+00:00"),
        "{stdout}"
    );
}

/// `run --all` among workflows it cannot read (a state that is a FIFO, one of a newer schema):
/// the others run, the closing line names every one it skipped and why, and the exit code is
/// not 0.
#[cfg(unix)]
#[test]
fn run_all_names_every_workflow_it_skipped_and_exits_non_zero() {
    let env = TestEnv::new();
    init_plan(&env, "good", r#"{"phases": [{"id": "a"}]}"#);
    init_plan(&env, "fifo", r#"{"phases": [{"id": "a"}]}"#);
    init_plan(&env, "newer", r#"{"phases": [{"id": "a"}]}"#);
    let state = env.workflow_dir("fifo").join("state.json");
    fs::remove_file(&state).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(&state)
            .status()
            .unwrap()
            .success()
    );
    let newer = env.workflow_dir("newer").join("state.json");
    let mut value: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&newer).unwrap()).unwrap();
    value["schema_version"] = serde_json::json!(999);
    fs::write(&newer, value.to_string()).unwrap();
    let claude = fake_claude(&env, DO_PHASE_LOGGED);
    let output = run_cmd(&env, &claude, &["--all"]).output().unwrap();
    let rendered = render(&env, &output);
    assert_eq!(output.status.code(), Some(6), "{rendered}");
    assert!(rendered.contains("`good` finished"), "{rendered}");
    let closing = rendered
        .lines()
        .skip_while(|line| !line.contains("run --all: `good` finished"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(closing.contains("skipped 2"), "{rendered}");
    assert!(
        closing.contains("`fifo`") && closing.contains("`newer`"),
        "{closing}"
    );
}
