//! `checkpoint watch`: the journal followed from another process, line by line or as JSON, the
//! view once, and never the workflow's lock.

use std::{
    fs::{File, OpenOptions},
    io::{BufRead, BufReader, Write},
    process::{Child, Command, Stdio},
    sync::mpsc::{self, Receiver},
    thread,
    time::{Duration, Instant},
};

use crate::support::{TestEnv, render};

/// How long a test waits for a line before it fails: generous, for a loaded machine.
const PATIENCE: Duration = Duration::from_secs(20);

/// A `checkpoint watch` running in the background, its stdout read line by line.
pub(crate) struct Watching {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
    /// Its stderr, line by line.
    errors: Receiver<String>,
    errors_seen: Vec<String>,
}

/// Waits for a line of `lines` that satisfies `want`; every line read is kept in `seen`.
#[track_caller]
fn wait_line(
    lines: &Receiver<String>,
    seen: &mut Vec<String>,
    what: &str,
    want: impl Fn(&str) -> bool,
) {
    let deadline = Instant::now() + PATIENCE;
    while !seen.iter().any(|line| want(line)) {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(_) => panic!("no line {what} within {PATIENCE:?}; saw:\n{seen:#?}"),
        }
    }
}

/// A thread that sends the lines of `from` to the receiver it returns.
fn lines_of(from: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, lines) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

impl Watching {
    pub(crate) fn start(env: &TestEnv, args: &[&str], poll: bool) -> Self {
        let mut cmd = env.cmd();
        if poll {
            cmd.env("CHECKPOINT_TEST_WATCH_POLL", "1");
        }
        let mut child = cmd
            .arg("watch")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Self {
            lines: lines_of(child.stdout.take().unwrap()),
            errors: lines_of(child.stderr.take().unwrap()),
            child,
            seen: Vec::new(),
            errors_seen: Vec::new(),
        }
    }

    /// Waits for a line on stderr that satisfies `want`.
    #[track_caller]
    fn wait_for_stderr(&mut self, what: &str, want: impl Fn(&str) -> bool) {
        wait_line(
            &self.errors,
            &mut self.errors_seen,
            &format!("on stderr {what}"),
            want,
        );
    }

    /// Waits for a line that satisfies `want`; every line read is kept in `seen`.
    #[track_caller]
    pub(crate) fn wait_for(&mut self, what: &str, want: impl Fn(&str) -> bool) {
        wait_line(&self.lines, &mut self.seen, what, want);
    }

    /// Sends `signal` and returns (exit code, stderr) once the watch ended.
    pub(crate) fn stop(self, signal: &str) -> (Option<i32>, String, Vec<String>) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        self.finish()
    }

    /// Waits for the watch to end by itself; returns (exit code, stderr, every stdout line).
    fn finish(mut self) -> (Option<i32>, String, Vec<String>) {
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                self.child.kill().unwrap();
                panic!("watch did not end; saw:\n{:#?}", self.seen);
            }
            thread::sleep(Duration::from_millis(20));
        };
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            self.seen.push(line);
        }
        while let Ok(line) = self.errors.recv_timeout(Duration::from_secs(2)) {
            self.errors_seen.push(line);
        }
        let mut stderr = self.errors_seen.join("\n");
        stderr.push('\n');
        (status.code(), stderr, self.seen)
    }
}

/// The sequence number at the start of a plain line (`    3  2026-…`).
fn seq_of(line: &str) -> Option<u64> {
    line.split_whitespace().next()?.parse().ok()
}

/// The sequence numbers of the plain lines, in order.
fn seqs(lines: &[String]) -> Vec<u64> {
    lines.iter().filter_map(|line| seq_of(line)).collect()
}

fn init(env: &TestEnv) {
    env.ok(&[
        "init",
        "payments",
        "--title",
        "Payments",
        "--phase",
        "design",
        "--phase",
        "build:design",
    ]);
    env.ok(&["start", "design"]);
}

/// Two writers append notes from other processes while `watch --plain` runs: it prints every
/// entry once, in journal order, through file notifications and through the fallback poll.
#[test]
fn plain_lines_follow_writers_in_order_with_nothing_lost_or_repeated() {
    for poll in [false, true] {
        let env = TestEnv::new();
        init(&env);
        let mut watch = Watching::start(&env, &["--plain"], poll);
        watch.wait_for("for entry 2", |line| seq_of(line) == Some(2));
        let writers: Vec<_> = (0..2)
            .map(|writer| {
                let mut cmds: Vec<Command> = (0..12)
                    .map(|n| {
                        let mut cmd = env.cmd();
                        cmd.args(["progress", "design", &format!("writer {writer} note {n}")]);
                        cmd
                    })
                    .collect();
                thread::spawn(move || {
                    for cmd in &mut cmds {
                        assert!(cmd.status().unwrap().success());
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        watch.wait_for("for entry 26", |line| seq_of(line) == Some(26));
        let (code, stderr, lines) = watch.stop("-INT");
        assert_eq!(code, Some(0), "Ctrl-C ends the watch cleanly: {stderr}");
        assert_eq!(
            seqs(&lines),
            (1..=26).collect::<Vec<_>>(),
            "poll: {poll}\n{lines:#?}"
        );
        let journal = env.read("payments", "journal.jsonl");
        for writer in 0..2 {
            for n in 0..12 {
                let note = format!("writer {writer} note {n}");
                assert!(journal.contains(&note));
                assert_eq!(
                    lines
                        .iter()
                        .filter(|line| line.ends_with(&format!("design: {note}")))
                        .count(),
                    1,
                    "{note} once\n{lines:#?}"
                );
            }
        }
        assert!(lines[2].contains("phase_progress"), "{lines:#?}");
    }
}

/// `--format json` prints one JSON object per entry, and a last one when the workflow is
/// archived, after which the watch ends by itself.
#[test]
fn json_lines_then_the_archive_ends_the_watch() {
    let env = TestEnv::new();
    env.ok(&["init", "solo", "--phase", "only"]);
    let mut watch = Watching::start(&env, &["--format", "json"], false);
    watch.wait_for("for the init", |line| line.contains("\"seq\":1"));
    env.ok(&["start", "only"]);
    env.ok(&["progress", "only", "half \u{1b}[31m way"]);
    env.ok(&["complete", "only"]);
    watch.wait_for("for the completion", |line| line.contains("phase_complete"));
    env.ok(&["archive"]);
    let (code, stderr, lines) = watch.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let events: Vec<serde_json::Value> = lines
        .iter()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let ops: Vec<&str> = events
        .iter()
        .filter_map(|event| event["op"].as_str())
        .collect();
    assert_eq!(
        ops,
        ["init", "phase_start", "phase_progress", "phase_complete"]
    );
    let progress = &events[2];
    assert_eq!(progress["version"], 1);
    assert_eq!(progress["event"], "entry");
    assert_eq!(progress["workflow"], "solo");
    assert_eq!(progress["seq"], 3);
    assert_eq!(progress["phase"], "only");
    // JSON carries the text as written.
    assert_eq!(progress["transition"]["note"], "half \u{1b}[31m way");
    let gone = events.last().unwrap();
    assert_eq!(gone["event"], "gone");
    let archive = gone["archive"].as_str().unwrap();
    assert!(archive.contains(".archive/solo_"), "{archive}");
    assert!(std::path::Path::new(archive).is_dir());
    assert!(
        stderr.contains("workflow `solo` was archived to"),
        "{stderr}"
    );
}

/// `--once` prints the view: the phases with their notes and elapsed times, and the footer.
#[test]
fn once_prints_the_view_and_exits() {
    let env = TestEnv::new();
    env.set_now("2026-03-01T11:00:00Z");
    init(&env);
    env.set_now("2026-03-01T11:10:00Z");
    env.ok(&["progress", "design", "API sketched \u{7}"]);
    env.set_now("2026-03-01T12:00:00Z");
    insta::assert_snapshot!(env.snapshot(&["watch", "--once"]), @r"
    exit status: 0
    ----- stdout -----
    payments — Payments  in progress
    0 of 2 phases done · updated 50 minutes ago

    → design  in progress  · for 1h00m
              progress: API sketched \u{7}
    · build   blocked by design

    last update: entry 3 `phase_progress` design at 11:10:00 UTC (50 minutes ago) · as of 2026-03-01 12:00:00 UTC
    ----- stderr -----
    ");
    let json = env.json(&["watch", "--once"]);
    assert_eq!(json["version"], 1);
    assert_eq!(json["phases"][0]["view"], "in_progress");
    assert_eq!(json["phases"][1]["waiting_for"][0], "design");
    assert_eq!(json["last_entry"]["seq"], 3);
    assert_eq!(json["run"], serde_json::Value::Null);
}

/// A name that matches no workflow is not found (exit 4), with the workflows listed; the
/// positional name wins over the only workflow.
#[test]
fn an_unknown_workflow_is_not_found_and_the_workflows_are_listed() {
    let env = TestEnv::new();
    init(&env);
    insta::assert_snapshot!(env.snapshot(&["watch", "paymnets", "--once"]), @r"
    exit status: 4
    ----- stdout -----
    ----- stderr -----
    checkpoint::store::not_found

      × no workflow `paymnets` in `.claude/checkpoints`
      help: the workflows are: `payments`; watch one with `checkpoint watch <id>`
    ");
    insta::assert_snapshot!(env.snapshot(&["watch", "--once", "--workflow", "nope"]), @r"
    exit status: 4
    ----- stdout -----
    ----- stderr -----
    checkpoint::store::not_found

      × no workflow `nope` in `.claude/checkpoints`
      help: the workflows are: `payments`; watch one with `checkpoint watch <id>`
    ");
}

/// While a watch runs, the workflow's lock stays free, a `start` succeeds at once, and the
/// watch writes nothing.
#[test]
fn a_watch_never_takes_the_lock_nor_writes() {
    let env = TestEnv::new();
    init(&env);
    env.ok(&["complete", "design"]);
    let dir = env.workflow_dir("payments");
    let listing = || {
        let mut names: Vec<(String, u64)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| {
                let entry = entry.unwrap();
                (
                    entry.file_name().to_string_lossy().into_owned(),
                    entry.metadata().unwrap().len(),
                )
            })
            .collect();
        names.sort();
        names
    };
    let before = (listing(), env.read("payments", "state.json"));
    let mut watch = Watching::start(&env, &["--plain"], false);
    watch.wait_for("for entry 3", |line| seq_of(line) == Some(3));
    let lock = File::open(dir.join("lock")).unwrap();
    lock.try_lock()
        .expect("the lock is free while a watch runs");
    lock.unlock().unwrap();
    assert_eq!((listing(), env.read("payments", "state.json")), before);
    let started = Instant::now();
    let output = env
        .cmd()
        .env("CHECKPOINT_LOCK_TIMEOUT", "0")
        .args(["start", "build"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", render(&env, &output));
    assert!(started.elapsed() < PATIENCE);
    watch.wait_for("for the start", |line| {
        line.ends_with("phase_start     build")
    });
    let (code, stderr, _) = watch.stop("-TERM");
    assert_eq!(code, Some(0), "{stderr}");
}

/// A writer caught mid-append leaves a torn last line: the watch shows the entries before it,
/// then the entry once its line is whole, exactly once.
#[test]
fn a_torn_last_line_is_shown_once_it_is_whole() {
    let env = TestEnv::new();
    init(&env);
    env.ok(&["note", "the whole note"]);
    let path = env.workflow_dir("payments").join("journal.jsonl");
    let journal = std::fs::read_to_string(&path).unwrap();
    let start = journal.trim_end().rfind('\n').unwrap() + 1;
    let (before, last) = journal.split_at(start);
    let (head, tail) = last.split_at(last.len() / 2);
    std::fs::write(&path, format!("{before}{head}")).unwrap();
    let mut watch = Watching::start(&env, &["--plain"], false);
    watch.wait_for("for entry 2", |line| seq_of(line) == Some(2));
    // The view of the same moment takes the torn line in its stride too.
    let once = env.run(&["watch", "--once"]);
    assert!(once.status.success(), "{}", render(&env, &once));
    OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(tail.as_bytes())
        .unwrap();
    watch.wait_for("for entry 3", |line| seq_of(line) == Some(3));
    let (code, stderr, lines) = watch.stop("-INT");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(seqs(&lines), [1, 2, 3], "{lines:#?}");
    assert!(
        lines[2].ends_with("note            the whole note"),
        "{lines:#?}"
    );
}

/// A phase a sub-agent holds shows who holds it and when it was last seen working, in the
/// view as in `status`, from the PreToolUse hook of the `Agent` dispatch.
#[test]
fn a_phase_held_by_a_sub_agent_shows_its_holder() {
    let env = TestEnv::new();
    init(&env);
    let payload = serde_json::json!({
        "session_id": "11111111-2222-3333-4444-555555555555",
        "cwd": env.project(),
        "hook_event_name": "PreToolUse",
        "tool_name": "Agent",
        "tool_use_id": "toolu_design",
        "tool_input": {
            "description": "Sketch the API",
            "prompt": "Do the work.\ncheckpoint phase: design\n",
            "subagent_type": "general-purpose",
        },
    });
    let (code, _, stderr) = env.hook("PreToolUse", &payload.to_string()).wait();
    assert_eq!(code, 0, "{stderr}");
    env.set_now("2026-03-01T12:02:00Z");
    let view = env.ok(&["watch", "--once"]);
    let held = "held by sub-agent of call `toolu_design` (Sketch the API), dispatched 2 minutes ago, last active 2 minutes ago";
    assert!(view.contains(held), "{view}");
    // The same line as `status`: one rendering for both.
    assert!(env.ok(&["status"]).contains(held));
    let json = env.json(&["watch", "--once"]);
    assert_eq!(
        json["workflow"]["phases"][0]["holder"]["tool_use_id"],
        "toolu_design"
    );
}

/// A journal replaced by another file (as a pull replaces it) is read again from its start,
/// with a warning, and no entry is printed twice.
#[test]
fn a_replaced_journal_is_followed_without_repeating_entries() {
    let env = TestEnv::new();
    init(&env);
    let path = env.workflow_dir("payments").join("journal.jsonl");
    let mut watch = Watching::start(&env, &["--plain"], false);
    watch.wait_for("for entry 2", |line| seq_of(line) == Some(2));
    let copy = path.with_extension("copy");
    std::fs::copy(&path, &copy).unwrap();
    std::fs::rename(&copy, &path).unwrap();
    env.ok(&["note", "after the replacement"]);
    watch.wait_for("for entry 3", |line| seq_of(line) == Some(3));
    let (code, stderr, lines) = watch.stop("-INT");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(seqs(&lines), [1, 2, 3], "{lines:#?}");
    assert!(
        stderr.contains("the journal of `payments` was replaced"),
        "{stderr}"
    );
}

/// Appends `text` to the journal of `payments`, as another tool or a person would.
fn append_to_journal(env: &TestEnv, text: &str) {
    OpenOptions::new()
        .append(true)
        .open(env.workflow_dir("payments").join("journal.jsonl"))
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
}

/// Issue 25: a last line that is not the next entry (numbered 999, a step back, not an entry)
/// is not shown; the next write moves it aside and continues at 3, 4, 5, which the watch
/// shows as `log` does, with file notifications and with the poll, plain and JSON.
#[test]
fn a_foreign_last_line_moved_aside_is_followed_by_the_next_entries() {
    let foreign_lines = [
        r#"{"seq":999,"at":"2026-03-01T12:00:00Z","transition":{"op":"note","text":"by hand"}}"#,
        r#"{"seq":2,"at":"2026-03-01T12:00:00Z","transition":{"op":"note","text":"a step back, and a longer line than the next entry's"}}"#,
        "a line another tool wrote",
    ];
    for (idx, foreign) in foreign_lines.into_iter().enumerate() {
        let poll = idx % 2 == 1;
        let env = TestEnv::new();
        init(&env);
        let json = idx == 2;
        let args: &[&str] = if json {
            &["--format", "json"]
        } else {
            &["--plain"]
        };
        let seq_of = |line: &str| {
            if json {
                serde_json::from_str::<serde_json::Value>(line).ok()?["seq"].as_u64()
            } else {
                seq_of(line)
            }
        };
        let mut watch = Watching::start(&env, args, poll);
        watch.wait_for("for entry 2", |line| seq_of(line) == Some(2));
        append_to_journal(&env, &format!("{foreign}\n"));
        // The watch saw the line before the next write moved it aside.
        watch.wait_for_stderr("about the foreign line", |line| line.contains("not shown"));
        for n in 3..=5 {
            env.ok(&["note", &format!("note {n}")]);
        }
        let journal = env.read("payments", "journal.jsonl");
        assert!(!journal.contains(foreign), "moved aside:\n{journal}");
        watch.wait_for("for entry 5", |line| seq_of(line) == Some(5));
        let (code, stderr, lines) = watch.stop("-INT");
        assert_eq!(code, Some(0), "{stderr}");
        let seqs: Vec<u64> = lines.iter().filter_map(|line| seq_of(line)).collect();
        assert_eq!(seqs, [1, 2, 3, 4, 5], "{foreign}:\n{lines:#?}\n{stderr}");
        assert!(
            lines.iter().all(|line| !line.contains("by hand")),
            "{lines:#?}"
        );
        let log = env.ok(&["log"]);
        assert!(log.contains("note 5"), "{log}");
    }
}

/// A journal cut back by another writer (to its first line, or emptied): the watch says so
/// and shows the entries written after, as `log` does.
#[test]
fn a_journal_cut_back_by_another_writer_is_followed_from_where_it_ends() {
    for keep_first in [true, false] {
        let env = TestEnv::new();
        init(&env);
        let path = env.workflow_dir("payments").join("journal.jsonl");
        let mut watch = Watching::start(&env, &["--plain"], false);
        watch.wait_for("for entry 2", |line| seq_of(line) == Some(2));
        let journal = std::fs::read_to_string(&path).unwrap();
        let first = &journal[..=journal.find('\n').unwrap()];
        std::fs::write(&path, if keep_first { first } else { "" }).unwrap();
        env.ok(&["note", "after the cut"]);
        let log = env.ok(&["log"]);
        watch.wait_for("for the note after the cut", |line| {
            line.ends_with("after the cut")
        });
        let (code, stderr, lines) = watch.stop("-INT");
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(
            lines
                .iter()
                .filter(|line| line.ends_with("after the cut"))
                .count(),
            1,
            "{lines:#?}"
        );
        assert!(log.contains("after the cut"), "{log}");
        assert!(stderr.contains("journal of `payments`"), "{stderr}");
    }
}

/// Issue 25: a 100,000-character note, progress, reason or title (ASCII, CJK, emoji) is cut in
/// every text view, on a character boundary, with an ellipsis and the command that prints it
/// whole; `log --full` and JSON print it whole.
#[test]
fn long_text_is_cut_in_views_and_whole_one_command_away() {
    for unit in [
        "Z",
        "漢",
        "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}",
        "e\u{301}",
    ] {
        // One argument holds at most 128 KiB.
        let long = unit.repeat(100_000 / unit.len());
        let env = TestEnv::new();
        init(&env);
        env.ok(&["note", &long]);
        env.ok(&["progress", "design", &long]);
        env.ok(&["pause", "--reason", &long]);
        let cut = |args: &[&str], output: &str| {
            let most = output.lines().map(|line| line.matches(unit).count()).max();
            assert!(
                most.unwrap() <= 200,
                "{args:?}: a line of {most:?} × {unit:?}"
            );
            assert!(output.contains("… ("), "{args:?}: {output}");
            assert!(
                output.contains(" more characters: `checkpoint "),
                "{args:?}"
            );
            for line in output.lines().filter(|line| line.contains('…')) {
                let kept = line.split('…').next().unwrap();
                let kept = kept.rsplit(' ').next().unwrap();
                let kept = kept.rsplit(": ").next().unwrap();
                assert_eq!(
                    kept.len() % unit.len(),
                    0,
                    "{args:?}: cut inside {unit:?}: {line}"
                );
            }
        };
        for args in [&["log"][..], &["status"], &["watch", "--once"], &["report"]] {
            cut(args, &env.ok(args));
        }
        let mut watch = Watching::start(&env, &["--plain"], false);
        watch.wait_for("for the pause", |line| line.contains("pause"));
        let (_, _, lines) = watch.stop("-INT");
        cut(&["watch", "--plain"], &lines.join("\n"));
        let full = env.ok(&["log", "--full"]);
        assert_eq!(
            full.matches(long.as_str()).count(),
            3,
            "log --full is whole"
        );
        let json = env.json(&["log"]);
        assert_eq!(json["entries"][2]["transition"]["text"], long.as_str());
        let state = env.ok(&["show"]);
        assert_eq!(state.matches(long.as_str()).count(), 3, "show is whole");
    }
}

/// A `checkpoint watch` on the slave side of a new pseudo-terminal of 100 × 30, as a user
/// starts it in a terminal; a thread reads the master side into `screen`.
#[cfg(unix)]
struct InTerminal {
    child: Child,
    screen: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

#[cfg(unix)]
impl InTerminal {
    fn start(env: &TestEnv, args: &[&str], poll: bool) -> Self {
        use rustix::{
            pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt},
            termios::{Winsize, tcsetwinsize},
        };
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let name = ptsname(&master, Vec::new()).unwrap();
        let size = Winsize {
            ws_row: 30,
            ws_col: 100,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        tcsetwinsize(&master, size).unwrap();
        let slave = OpenOptions::new()
            .read(true)
            .write(true)
            .open(name.to_str().unwrap())
            .unwrap();
        let mut cmd = env.cmd();
        if poll {
            cmd.env("CHECKPOINT_TEST_WATCH_POLL", "1");
        }
        let child = cmd
            .env("TERM", "xterm-256color")
            .arg("watch")
            .args(args)
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave))
            .spawn()
            .unwrap();
        let screen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut master = File::from(master);
        let filled = std::sync::Arc::clone(&screen);
        thread::spawn(move || {
            use std::io::Read as _;
            let mut buf = [0u8; 4096];
            // Ends with EIO once the watch exited and closed the slave side.
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 {
                    break;
                }
                filled.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Self { child, screen }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().unwrap()).into_owned()
    }

    #[track_caller]
    fn wait_for(&self, what: &str, want: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        while !want(&self.text()) {
            assert!(
                Instant::now() < deadline,
                "the watch never showed {what} within {PATIENCE:?}:\n{}",
                self.text()
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// The CPU time the watch used so far (user and system), from `/proc/<pid>/stat`.
    fn cpu_time(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
        // The fields after the command name, which is in parentheses and may hold spaces.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        // utime and stime are fields 14 and 15 of proc(5), the 12th and 13th after the name.
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        let per_second = rustix::param::clock_ticks_per_second();
        Duration::from_micros(ticks * 1_000_000 / per_second)
    }

    fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + PATIENCE;
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                self.child.kill().unwrap();
                panic!("watch did not end on SIGTERM:\n{}", self.text());
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

/// How long the CPU time of a watch at rest is measured.
#[cfg(unix)]
const REST: Duration = Duration::from_secs(4);

/// The share of `REST` a watch at rest may spend on the CPU: generous, so that a loaded machine
/// never fails it, yet far below a busy loop (which spent about 40% here).
#[cfg(unix)]
const AT_REST_BOUND: f64 = 0.05;

/// `checkpoint watch` with `args` in a terminal while nothing changes: after its first view,
/// it spends next to no CPU time (a redraw once a second at most, nothing to read).
#[cfg(unix)]
#[track_caller]
fn check_at_rest(args: &[&str], poll: bool, first: &str) {
    let env = TestEnv::new();
    init(&env);
    let watch = InTerminal::start(&env, args, poll);
    watch.wait_for(first, |text| text.contains(first));
    // Past the start (loading, the first frame), which is not the rest measured.
    thread::sleep(Duration::from_millis(500));
    let (cpu_before, started) = (watch.cpu_time(), Instant::now());
    thread::sleep(REST);
    let (cpu, elapsed) = (watch.cpu_time() - cpu_before, started.elapsed());
    let alive = watch.child.id();
    let text = watch.text();
    watch.stop();
    assert!(
        cpu.as_secs_f64() < AT_REST_BOUND * elapsed.as_secs_f64(),
        "`checkpoint watch {args:?}` (poll: {poll}, pid {alive}) spent {cpu:?} of CPU in \
         {elapsed:?} at rest:\n{text}"
    );
}

/// The full-screen view at rest, with file notifications.
#[cfg(unix)]
#[test]
fn the_view_at_rest_costs_no_cpu() {
    check_at_rest(&[], false, "design");
}

/// The full-screen view at rest, checking the journal by polling (no file notifications).
#[cfg(unix)]
#[test]
fn the_view_at_rest_costs_no_cpu_when_polling() {
    check_at_rest(&[], true, "design");
}

/// `--plain` and `--format json` on a terminal at rest, with notifications and polling.
#[cfg(unix)]
#[test]
fn lines_at_rest_cost_no_cpu() {
    for poll in [false, true] {
        check_at_rest(&["--plain"], poll, "phase_start");
        check_at_rest(&["--format", "json"], poll, "\"phase_start\"");
    }
}
