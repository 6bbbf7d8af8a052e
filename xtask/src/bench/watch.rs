//! The latency of `checkpoint watch`: from a note's journal entry to the line that shows it,
//! through file notifications and through the fallback poll.
//!
//! A `checkpoint watch --format json` follows a workflow while `checkpoint progress` writes
//! notes one after the other; each latency is the time the line reached this process minus the
//! entry's `at` (taken by the writer before it wrote, so the writer's own write is counted too).

use std::{
    io::{BufRead, BufReader},
    path::Path,
    process::{Child, Command, Stdio},
    sync::mpsc::{self, Receiver},
    thread,
    time::Duration,
};

use chrono::{DateTime, Utc};

use crate::{
    Result,
    bench::{fixtures, stats},
};

/// The key of the watch cases, for `--filter`.
pub(crate) const KEY: &str = "watch/latency";

/// How long one note may take before the measurement gives up.
const GIVE_UP: Duration = Duration::from_secs(10);

/// The latencies of one way of noticing changes, in seconds.
pub(crate) struct Latencies {
    pub secs: Vec<f64>,
}

impl Latencies {
    /// "median 2.10 ms, p90 3.00 ms, max 4.00 ms (40 notes)".
    pub(crate) fn summary(&self) -> String {
        let quantile = |q| stats::quantile(&self.secs, q);
        format!(
            "median {}, p90 {}, max {} ({} notes)",
            super::report::millis(stats::median(&self.secs)),
            super::report::millis(quantile(0.9)),
            super::report::millis(quantile(1.0)),
            self.secs.len()
        )
    }

    pub(crate) fn max(&self) -> Option<f64> {
        stats::quantile(&self.secs, 1.0)
    }
}

/// Measures `notes` notes with file notifications, then with the poll.
pub(crate) fn measure(dir: &Path, binary: &Path, notes: usize) -> Result<(Latencies, Latencies)> {
    let project = dir.join("watch");
    fixtures::fresh_dir(&project)?;
    fixtures::git(&project, &["init", "--quiet"])?;
    let checkpoint = |args: &[&str]| {
        let mut command = Command::new(binary);
        command
            .args(args)
            .current_dir(&project)
            .env("NO_COLOR", "1")
            .env_remove("CHECKPOINT_TEST_NOW");
        command
    };
    fixtures::run_quiet(&mut checkpoint(&[
        "init",
        "watched",
        "--phase",
        "design",
        "--phase",
        "build:design",
    ]))?;
    fixtures::run_quiet(&mut checkpoint(&["start", "design"]))?;
    let mut measured = Vec::new();
    for poll in [false, true] {
        let mut command = checkpoint(&["watch", "--format", "json"]);
        if poll {
            command.env("CHECKPOINT_TEST_WATCH_POLL", "1");
        }
        let watch = Watch::start(&mut command)?;
        let mut secs = Vec::with_capacity(notes);
        let result = (|| -> Result {
            for n in 0..notes {
                // Notes of their own: the watch prints the entries already there first.
                let note = format!("note {n}, poll: {poll}");
                fixtures::run_quiet(&mut checkpoint(&["progress", "design", &note]))?;
                let (at, seen) = watch.wait_for_note(&note)?;
                secs.push((seen - at).as_seconds_f64());
            }
            Ok(())
        })();
        watch.stop();
        result?;
        measured.push(Latencies { secs });
    }
    let poll = measured.pop().expect("two measurements");
    let notified = measured.pop().expect("two measurements");
    Ok((notified, poll))
}

/// A running `checkpoint watch --format json` and the lines it printed, with when each arrived.
struct Watch {
    child: Child,
    lines: Receiver<(String, DateTime<Utc>)>,
}

impl Watch {
    fn start(command: &mut Command) -> Result<Self> {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| format!("failed to start `checkpoint watch`: {err}"))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send((line, Utc::now())).is_err() {
                    break;
                }
            }
        });
        Ok(Self { child, lines })
    }

    /// Waits for the entry of progress note `note`; returns its time and when its line arrived.
    fn wait_for_note(&self, note: &str) -> Result<(DateTime<Utc>, DateTime<Utc>)> {
        loop {
            let (line, seen) = self.lines.recv_timeout(GIVE_UP).map_err(|_| {
                format!("`checkpoint watch` did not print `{note}` within {GIVE_UP:?}")
            })?;
            let event: serde_json::Value = serde_json::from_str(&line).map_err(|err| {
                format!("`checkpoint watch` printed a line that is not JSON ({err}): {line}")
            })?;
            if event["transition"]["note"] != note {
                continue;
            }
            let at = event["at"]
                .as_str()
                .and_then(|at| DateTime::parse_from_rfc3339(at).ok())
                .ok_or_else(|| format!("an entry without a time: {line}"))?;
            return Ok((at.with_timezone(&Utc), seen));
        }
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
