//! An agent session as a child process: spawned in a process group of its own, its standard
//! output read line by line, stopped with SIGINT, then SIGTERM, then SIGKILL.
//!
//! The session ends when the client process exits, whatever its children do: what it left in
//! its group (a tool process holding the output open, a silent one that outlives it) gets
//! SIGTERM, then SIGKILL, within bounded time.

use std::{
    collections::VecDeque,
    io::{BufRead, BufReader},
    process::{Child, Command, ExitStatus, Stdio},
    sync::{
        Arc, Mutex, PoisonError,
        mpsc::{self, Receiver, RecvTimeoutError},
    },
    thread,
    time::{Duration, Instant},
};

use miette::{IntoDiagnostic, Result, WrapErr};

/// How many lines of the session's standard error are kept, for a crash report.
const STDERR_LINES: usize = 20;

/// How long the output of a client that exited is still read while its group lives.
const DRAIN: Duration = Duration::from_millis(200);

/// How long what a client left in its group gets between SIGTERM and SIGKILL, and how long
/// the output is then read before the session counts as ended anyway.
const LEFTOVER_GRACE: Duration = Duration::from_secs(2);

/// A running session.
pub(crate) struct Session {
    child: Child,
    lines: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Once the client exited: its status, and until when its output is read.
    exited: Option<Exited>,
}

struct Exited {
    status: ExitStatus,
    drain_until: Instant,
    /// Whether what it left in its group was ended.
    reaped: bool,
}

/// What [`Session::poll`] saw.
pub(crate) enum Poll {
    /// A line of standard output.
    Line(String),
    /// Nothing within the timeout.
    Idle,
    /// The process ended (its remaining output was read first).
    Exited(ExitStatus),
}

impl Session {
    /// Starts `command` with standard input closed and its output read.
    pub(crate) fn spawn(mut command: Command) -> Result<Session> {
        let program = command.get_program().to_string_lossy().into_owned();
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt as _;
            // A group of its own: the runner decides how the session stops (a terminal's
            // Ctrl-C reaches the runner, which then stops the session cleanly), and stopping
            // it reaches its tool processes too.
            command.process_group(0);
        }
        let mut child = command
            .spawn()
            .into_diagnostic()
            .wrap_err_with(|| format!("failed to start `{program}`"))?;
        let (sender, lines) = mpsc::channel();
        let stdout = child.stdout.take().expect("stdout is piped");
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let child_stderr = child.stderr.take().expect("stderr is piped");
        let tail = Arc::clone(&stderr);
        // Line by line: a child that keeps the pipe open does not hide what came before.
        thread::spawn(move || {
            let mut reader = BufReader::new(child_stderr);
            let mut line = Vec::new();
            while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                let text = String::from_utf8_lossy(&line).trim_end().to_owned();
                line.clear();
                let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
                if tail.len() == STDERR_LINES {
                    tail.pop_front();
                }
                tail.push_back(text);
            }
        });
        Ok(Session {
            child,
            lines,
            stderr,
            exited: None,
        })
    }

    /// The session's process id (also its process group's).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The next line of output, or the exit once the output is read, waiting up to `timeout`.
    /// The client's exit is seen even while lines keep coming; what it left in its group is
    /// then ended, and the session is over within bounded time.
    pub(crate) fn poll(&mut self, timeout: Duration) -> Result<Poll> {
        if self.exited.is_none()
            && let Some(status) = self.child.try_wait().into_diagnostic()?
        {
            self.exited = Some(Exited {
                status,
                drain_until: Instant::now() + DRAIN,
                reaped: false,
            });
        }
        let pid = self.pid();
        let Some(exited) = &mut self.exited else {
            return Ok(match self.lines.recv_timeout(timeout) {
                Ok(line) => Poll::Line(line),
                Err(RecvTimeoutError::Timeout) => Poll::Idle,
                Err(RecvTimeoutError::Disconnected) => {
                    // Its output closed while it runs: wait for its exit without spinning.
                    thread::sleep(timeout);
                    Poll::Idle
                }
            });
        };
        let now = Instant::now();
        if now >= exited.drain_until {
            if exited.reaped {
                // Output still held open by a process outside the group: the session is over.
                return Ok(Poll::Exited(exited.status));
            }
            exited.reap(pid);
            return Ok(Poll::Idle);
        }
        match self.lines.recv_timeout(exited.drain_until - now) {
            Ok(line) => Ok(Poll::Line(line)),
            Err(RecvTimeoutError::Disconnected) if exited.reaped || !group_alive(pid) => {
                Ok(Poll::Exited(exited.status))
            }
            Err(RecvTimeoutError::Disconnected) => {
                exited.reap(pid);
                Ok(Poll::Idle)
            }
            Err(RecvTimeoutError::Timeout) => Ok(Poll::Idle),
        }
    }

    /// The last lines the session wrote on standard error.
    pub(crate) fn stderr_tail(&self) -> Vec<String> {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// Stops the session: SIGINT, then SIGTERM after `grace`, then SIGKILL after `grace` again.
    pub(crate) fn stop(&mut self, grace: Duration) -> Result<ExitStatus> {
        let pid = self.pid();
        for signal in [Signal::Int, Signal::Term] {
            send(pid, signal);
            let deadline = Instant::now() + grace;
            while Instant::now() < deadline {
                if let Some(status) = self.child.try_wait().into_diagnostic()? {
                    send(pid, Signal::Kill);
                    return Ok(status);
                }
                thread::sleep(Duration::from_millis(20));
            }
        }
        send(pid, Signal::Kill);
        let _ = self.child.kill();
        self.child.wait().into_diagnostic()
    }
}

impl Exited {
    /// Ends what the client left in its group (a tool process), then reads its last lines for
    /// a bounded time.
    fn reap(&mut self, pgid: u32) {
        end_group(pgid, LEFTOVER_GRACE);
        self.reaped = true;
        self.drain_until = Instant::now() + LEFTOVER_GRACE;
    }
}

/// The signals a runner sends.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Signal {
    Int,
    Term,
    Kill,
}

/// Sends `signal` to process group `pgid`; a group that is gone is not an error.
pub(crate) fn send(pgid: u32, signal: Signal) {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, Signal as Sig, kill_process_group};
        let Some(pid) = i32::try_from(pgid).ok().and_then(Pid::from_raw) else {
            return;
        };
        let signal = match signal {
            Signal::Int => Sig::INT,
            Signal::Term => Sig::TERM,
            Signal::Kill => Sig::KILL,
        };
        let _ = kill_process_group(pid, signal);
    }
    #[cfg(not(unix))]
    let _ = (pgid, signal);
}

/// Whether process group `pgid` still has a process.
pub(crate) fn group_alive(pgid: u32) -> bool {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, test_kill_process_group};
        i32::try_from(pgid)
            .ok()
            .and_then(Pid::from_raw)
            .is_some_and(|pid| test_kill_process_group(pid).is_ok())
    }
    #[cfg(not(unix))]
    {
        let _ = pgid;
        false
    }
}

/// Ends what a killed runner left running: the session group `pgid`, SIGTERM then SIGKILL.
pub(crate) fn end_group(pgid: u32, grace: Duration) {
    send(pgid, Signal::Term);
    let deadline = Instant::now() + grace;
    while group_alive(pgid) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    if group_alive(pgid) {
        send(pgid, Signal::Kill);
    }
}

/// The signal that interrupted the run, as people name it; `None` while none did.
pub(crate) fn signal_name(interrupted: &std::sync::atomic::AtomicUsize) -> Option<&'static str> {
    let signal = i32::try_from(interrupted.load(std::sync::atomic::Ordering::SeqCst)).ok()?;
    Some(match signal {
        0 => return None,
        signal_hook::consts::SIGINT => "Ctrl-C",
        signal_hook::consts::SIGTERM => "SIGTERM",
        signal_hook::consts::SIGHUP => "SIGHUP",
        _ => "a signal",
    })
}
