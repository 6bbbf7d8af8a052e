//! `checkpoint watch` in a pseudo-terminal while a real `claude` session records the second
//! phase's note through the Bash tool: the view shows the note within a second of its journal
//! entry (issue 21, test (d)), and Ctrl-C restores the terminal.

use std::{
    fs::{File, OpenOptions},
    io::Read,
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    thread,
    time::{Duration, Instant},
};

use checkpoint_e2e::Turn;
use chrono::{DateTime, Utc};
use rustix::{
    pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt},
    termios::{Winsize, tcsetwinsize},
};
use serde_json::json;

use crate::support::{NOTE, Project, WORKFLOW, checkpoint_command};

/// The note the session writes on the second phase.
const BUILD_NOTE: &str = "BUILD-NOTE-auth module done, starting billing";

/// The acceptance bound of issue 21: the note is on screen within a second of being written.
const BOUND: Duration = Duration::from_secs(1);

/// What the terminal showed, and when each needle first appeared on it.
#[derive(Default)]
struct Screen {
    bytes: Vec<u8>,
    note_seen_at: Option<DateTime<Utc>>,
}

impl Screen {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// `checkpoint watch` started on the slave side of a new pseudo-terminal of 160 × 40; the
/// master side is read into `screen` by a thread.
fn watch_in_a_pty(project: &Project, screen: &Arc<Mutex<Screen>>) -> Child {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("a pty opens");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let name = ptsname(&master, Vec::new()).expect("the pty has a name");
    tcsetwinsize(
        &master,
        Winsize {
            ws_row: 40,
            ws_col: 160,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )
    .expect("the pty takes a size");
    let slave: File = OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_str().expect("a pty name is UTF-8"))
        .expect("the pty's slave side opens");
    let mut command: Command =
        checkpoint_command(&project.plugin, project.dir(), project.env.home());
    command
        .env("TERM", "xterm-256color")
        .args(["watch", WORKFLOW])
        .stdin(Stdio::from(slave.try_clone().expect("dup")))
        .stdout(Stdio::from(slave.try_clone().expect("dup")))
        .stderr(Stdio::from(slave));
    let child = command.spawn().expect("the bundled `checkpoint` runs");
    let mut master = File::from(master);
    let screen = Arc::clone(screen);
    thread::spawn(move || {
        let mut buf = [0u8; 4096];
        // Ends with EIO once the watch exited and closed the slave side.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            let now = Utc::now();
            let mut screen = screen.lock().unwrap();
            screen.bytes.extend_from_slice(&buf[..n]);
            if screen.note_seen_at.is_none() && screen.text().contains(BUILD_NOTE) {
                screen.note_seen_at = Some(now);
            }
        }
    });
    child
}

#[track_caller]
fn wait_until(what: &str, timeout: Duration, screen: &Mutex<Screen>, done: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + timeout;
    loop {
        let text = screen.lock().unwrap().text();
        if done(&text) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the watch never showed {what} within {timeout:?}:\n{text}"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn watch_in_a_terminal_shows_the_second_phase_note_within_a_second() {
    let project = Project::interrupted(vec![
        Turn::tool_use(
            "Bash",
            json!({
                "command": format!(
                    "checkpoint complete design && checkpoint start build && checkpoint progress build \"{BUILD_NOTE}\""
                ),
                "description": "record the work",
            }),
        ),
        Turn::text("DONE"),
    ]);
    let screen = Arc::new(Mutex::new(Screen::default()));
    let mut watch = watch_in_a_pty(&project, &screen);
    // The first frame: the first phase's note, on the alternate screen.
    wait_until(
        "the first frame",
        Duration::from_secs(20),
        &screen,
        |text| text.contains(NOTE) && text.contains("\u{1b}[?1049h"),
    );

    let output = project.claude(&["-p", "record the work", "--allowedTools", "Bash"]);
    assert_eq!(output.code(), Some(0), "{output}");
    wait_until(
        "the second phase's note",
        Duration::from_secs(20),
        &screen,
        |text| text.contains(BUILD_NOTE),
    );

    // The latency from the note's journal entry (its time is taken before the write) to the
    // first bytes of the frame that shows it.
    let journal = project.journal(WORKFLOW);
    let written = journal
        .iter()
        .rev()
        .find(|entry| entry["transition"]["note"] == BUILD_NOTE)
        .and_then(|entry| entry["at"].as_str())
        .and_then(|at| DateTime::parse_from_rfc3339(at).ok())
        .expect("the journal holds the note")
        .with_timezone(&Utc);
    let seen = screen
        .lock()
        .unwrap()
        .note_seen_at
        .expect("the note was seen");
    let latency = (seen - written).to_std().unwrap_or_default();
    eprintln!("watch latency: {latency:?} from the journal entry to the screen");
    assert!(
        latency < BOUND,
        "the note took {latency:?} to reach the screen (bound {BOUND:?})"
    );

    // Ctrl-C ends the watch with exit 0 and gives the terminal back: cursor shown, main screen.
    let status = Command::new("kill")
        .args(["-INT", &watch.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let exit = loop {
        if let Some(exit) = watch.try_wait().expect("wait") {
            break exit;
        }
        assert!(Instant::now() < deadline, "the watch did not end on Ctrl-C");
        thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(exit.code(), Some(0));
    wait_until(
        "the terminal restored",
        Duration::from_secs(5),
        &screen,
        |text| text.ends_with("\u{1b}[?25h\u{1b}[?1049l"),
    );
}
