//! `checkpoint watch`: a live view of a workflow that follows its journal as it grows.
//!
//! It only reads, the way `status` and `log` do, and never takes the workflow's lock, so that
//! every writer goes on undisturbed. Changes are noticed through the file system's
//! notifications (`notify`: inotify, FSEvents, kqueue, ReadDirectoryChangesW), with a short
//! poll where there are none; a live view also redraws once a second for its clocks.

mod follow;
pub(crate) mod view;

use std::{
    io::IsTerminal,
    path::{Path, PathBuf},
    sync::mpsc::{self, Receiver, RecvTimeoutError, Sender},
    time::Duration,
};

use checkpoint_core::{
    Transition, WorkflowId,
    effects::Ledger,
    journal::Entry,
    snapshots::FileTally,
    store::{ARCHIVE_DIR, FAILED_DIR, JOURNAL_FILE, Loaded, STATE_FILE},
};
use chrono::{DateTime, Utc};
use clap::Args;
use miette::{IntoDiagnostic, Result};
use serde::Serialize;

use crate::{
    commands::watch::follow::{Change, Follower},
    ctx::{self, Ctx},
    env as vars,
    failure::Failure,
    json::PhaseSummary,
    output::{self, EffectCounts, Format, JSON_VERSION, Paint, Screen},
    services::writers::{Overwrite, Writers},
};

use self::view::{Frame, RunActivity, RunTracker};

/// How often a live view redraws without a change, for its clocks and countdowns.
const TICK: Duration = Duration::from_secs(1);
/// How often the journal is checked where the file system sends no notifications.
const POLL: Duration = Duration::from_millis(250);
/// How often the journal is checked anyway while notifications arrive (a safety net: a
/// notification lost to an overflowing queue is noticed this late at worst).
const SAFETY_POLL: Duration = Duration::from_secs(2);

/// Arguments of `checkpoint watch`.
#[derive(Debug, Args)]
pub(crate) struct WatchArgs {
    /// The workflow to watch (like `--workflow`; implied when only one is active)
    // An id of its own: sharing the global `--workflow`'s would make clap refuse that option
    // after the subcommand.
    #[arg(id = "watched", value_name = "WORKFLOW")]
    pub workflow: Option<String>,
    /// Print one line per journal entry as it is written, even on a terminal (the default when
    /// stdout is not a terminal; `--format json` prints one JSON object per line)
    #[arg(long)]
    pub plain: bool,
    /// Print the current view once and exit (`--format json`: one JSON document)
    #[arg(long)]
    pub once: bool,
}

/// The JSON document of `checkpoint watch --once --format json`.
#[derive(Debug, Serialize)]
struct WatchReport<'a> {
    version: u32,
    workflow: &'a checkpoint_core::Workflow,
    phases: Vec<PhaseSummary<'a>>,
    /// The last `checkpoint run`, as its journal entries tell.
    run: Option<&'a RunActivity>,
    /// Whether that runner's process is alive, where that can be told.
    runner_alive: Option<bool>,
    last_entry: Option<&'a Entry>,
    /// `writers` and `overwrites` since the workflow began, as `report` has them.
    #[serde(flatten)]
    written: &'a Writers,
}

/// One line of `checkpoint watch --format json`.
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum WatchEvent<'a> {
    /// A journal entry, as it was written.
    Entry {
        version: u32,
        workflow: &'a str,
        seq: u64,
        at: DateTime<Utc>,
        op: &'static str,
        phase: Option<String>,
        /// The entry briefly, as `checkpoint log` shows it.
        summary: String,
        transition: &'a Transition,
    },
    /// A Bash command overwrote another writer's change its session had not seen.
    Overwrite {
        version: u32,
        workflow: &'a str,
        #[serde(flatten)]
        overwrite: &'a Overwrite,
    },
    /// The workflow left the store: archived (to `archive`) or removed.
    Gone {
        version: u32,
        workflow: &'a str,
        archive: Option<PathBuf>,
    },
}

/// What woke the loop.
enum Wake {
    /// A file of the workflow's directory changed.
    Files,
    /// A signal: Ctrl-C, SIGTERM or SIGHUP end the watch; SIGWINCH redraws.
    Signal(i32),
}

pub(crate) fn watch(ctx: &Ctx, args: &WatchArgs) -> Result<()> {
    let id = workflow_id(ctx, args.workflow.as_deref())?;
    let dir = ctx.store.workflow_dir(&id);
    // Refuses a corrupt or newer state with its exit code; a load never writes.
    let loaded = ctx.store.load(&id)?;
    output::warn_recoveries(&loaded.recoveries);
    let mut watch = Watch {
        ctx,
        id,
        follower: Follower::new(&dir.join(JOURNAL_FILE)),
        dir,
        loaded,
        run: RunTracker::default(),
        ledger: Ledger::default(),
        files: FileTally::default(),
        last_entry: None,
        problem: None,
        written: Writers::default(),
        overwrites_shown: 0,
    };
    let first = watch.read()?;
    if args.once {
        return watch.print_once();
    }
    let live = !args.plain && ctx.format != Format::Json && std::io::stdout().is_terminal();
    let wakes = Wakes::start(&watch.dir)?;
    if live {
        watch.live(&wakes)
    } else {
        watch.print_entries(&first)?;
        watch.print_overwrites()?;
        watch.events(&wakes)
    }
}

/// The workflow the command means: the argument, else `--workflow`, else the only active one;
/// an id that names no workflow is "not found" (exit code 4) with the list of workflows.
fn workflow_id(ctx: &Ctx, named: Option<&str>) -> Result<WorkflowId> {
    let Some(name) = named.or(ctx.workflow.as_deref()) else {
        return ctx.workflow_id();
    };
    let id = WorkflowId::new(name)?;
    if ctx.store.list()?.contains(&id) {
        return Ok(id);
    }
    Err(Failure::new(
        "checkpoint::store::not_found",
        format!(
            "no workflow `{}` in `{}`",
            output::escape(name),
            ctx.display_path(ctx.store.root()).display()
        ),
    )
    .with_help(ctx.known_workflows_help("watch")?)
    .into())
}

/// The state of one watch.
struct Watch<'a> {
    ctx: &'a Ctx,
    id: WorkflowId,
    dir: PathBuf,
    follower: Follower,
    loaded: Loaded,
    run: RunTracker,
    /// The effects of the entries read so far.
    ledger: Ledger,
    /// The files changed, per phase, session and agent, in the entries read so far.
    files: FileTally,
    last_entry: Option<Entry>,
    /// A problem met by the last read, shown until a read goes well.
    problem: Option<String>,
    /// What each writer wrote and the overwrites, as of the last read.
    written: Writers,
    /// How many overwrites the lines printed so far.
    overwrites_shown: usize,
}

impl Watch<'_> {
    /// Reads the entries appended since the last read, and the state when there were any.
    fn read(&mut self) -> Result<Vec<Entry>> {
        let read = match self.follower.read_new() {
            Ok(read) => read,
            Err(err) => {
                self.problem = Some(format!(
                    "failed to read `{}`: {err}",
                    self.dir.join(JOURNAL_FILE).display()
                ));
                return Ok(Vec::new());
            }
        };
        self.problem = None;
        // Shown in the view's footer, or as a warning between the lines.
        let after = |seq: Option<u64>| {
            seq.map_or("from its start".to_owned(), |seq| {
                format!("after entry {seq}")
            })
        };
        match read.change {
            None => {}
            Some(Change::Replaced) => {
                self.problem = Some(format!(
                    "the journal of `{}` was replaced (a pull or a rebuild); following it {}",
                    self.id,
                    after(self.follower.last_seq())
                ));
            }
            Some(Change::Rewritten { from }) => {
                self.problem = Some(format!(
                    "the journal of `{}` was replaced or rewritten: its entries differ from entry {from} on, shown again as they now are",
                    self.id
                ));
            }
            Some(Change::CutBack { to }) => {
                self.problem = Some(format!(
                    "the journal of `{}` was cut back {}; following it from there",
                    self.id,
                    to.map_or("to no entry".to_owned(), |to| format!("to entry {to}"))
                ));
            }
        }
        for bad in &read.bad_lines {
            self.problem = Some(format!(
                "{bad}, not shown: a line added by hand or by another tool (the next write moves such a last line aside as `{JOURNAL_FILE}.foreign-<time>`)"
            ));
        }
        if read.change.is_some() {
            // Entries shown before may be gone or differ: the effects are read again, whole.
            (self.ledger, self.files) = match self.ctx.store.journal(&self.id) {
                Ok(journal) => (
                    Ledger::from_entries(&journal.entries),
                    FileTally::of(&journal.entries),
                ),
                Err(_) => (Ledger::default(), FileTally::default()),
            };
        } else {
            for entry in &read.entries {
                self.ledger.push(entry);
                self.files.observe(entry);
            }
        }
        for entry in &read.entries {
            self.run.observe(entry);
        }
        if let Some(last) = read.entries.last() {
            self.last_entry = Some(last.clone());
        }
        if !read.entries.is_empty() || read.change.is_some() {
            match self.ctx.store.load(&self.id) {
                Ok(loaded) => self.loaded = loaded,
                // A workflow archived between the two reads is noticed by the caller.
                Err(err) => self.problem = Some(err.to_string()),
            }
        }
        self.written = Writers::read(
            &self.ctx.store,
            &self.ctx.project_root,
            self.loaded.workflow.created_at,
        );
        Ok(read.entries)
    }

    /// The effects and the files changed of the entries read so far.
    fn counts(&self) -> EffectCounts {
        EffectCounts::of(&self.ledger).with_tally(self.files.clone())
    }

    /// The current time: the test clock when one is set, else the real one.
    fn now(&self) -> DateTime<Utc> {
        ctx::now().unwrap_or(self.ctx.now)
    }

    fn runner_alive(&self) -> Option<bool> {
        let run = self.run.last.as_ref()?;
        if run.stopped.is_some() {
            return None;
        }
        crate::process_tree::alive(run.pid)
    }

    fn print_once(&self) -> Result<()> {
        let workflow = &self.loaded.workflow;
        if self.ctx.format == Format::Json {
            return output::emit_json(&WatchReport {
                version: JSON_VERSION,
                workflow,
                phases: PhaseSummary::all(workflow, &self.counts()),
                run: self.run.last.as_ref(),
                runner_alive: self.runner_alive(),
                last_entry: self.last_entry.as_ref(),
                written: &self.written,
            })
            .into_diagnostic();
        }
        let now = self.now();
        let how = format!("as of {}", now.format("%Y-%m-%d %H:%M:%S UTC"));
        let effects = self.counts();
        let text = view::render(&self.frame(now, &how, &effects), Paint::new(self.ctx.color));
        output::emit_human(self.ctx.color, &text).into_diagnostic()
    }

    fn frame<'a>(
        &'a self,
        now: DateTime<Utc>,
        how: &'a str,
        effects: &'a EffectCounts,
    ) -> Frame<'a> {
        Frame {
            workflow: &self.loaded.workflow,
            effects,
            last_effect: self.ledger.effects.last(),
            run: self.run.last.as_ref(),
            runner_alive: self.runner_alive(),
            last_entry: self.last_entry.as_ref(),
            problem: self.problem.as_deref().or(self.follower.foreign_tail()),
            written: &self.written,
            how,
            now,
        }
    }

    /// Prints entries as lines (plain, or JSON).
    fn print_entries(&self, entries: &[Entry]) -> Result<()> {
        let paint = Paint::new(self.ctx.color);
        for entry in entries {
            if self.ctx.format == Format::Json {
                let event = WatchEvent::Entry {
                    version: JSON_VERSION,
                    workflow: self.id.as_str(),
                    seq: entry.seq,
                    at: entry.at,
                    op: entry.transition.op(),
                    phase: entry.transition.phase().map(ToString::to_string),
                    summary: output::describe(&entry.transition),
                    transition: &entry.transition,
                };
                let mut line = serde_json::to_string(&event).into_diagnostic()?;
                line.push('\n');
                output::emit(&line).into_diagnostic()?;
            } else {
                let mut line = output::entry_line(entry, paint, false);
                line.push('\n');
                output::emit_human(self.ctx.color, &line).into_diagnostic()?;
            }
        }
        Ok(())
    }

    /// One line per overwrite not printed yet (plain, or JSON).
    fn print_overwrites(&mut self) -> Result<()> {
        let paint = Paint::new(self.ctx.color);
        for overwrite in self.written.overwrites.iter().skip(self.overwrites_shown) {
            let mut line = if self.ctx.format == Format::Json {
                serde_json::to_string(&WatchEvent::Overwrite {
                    version: JSON_VERSION,
                    workflow: self.id.as_str(),
                    overwrite,
                })
                .into_diagnostic()?
            } else {
                paint.yellow(&overwrite.text())
            };
            line.push('\n');
            if self.ctx.format == Format::Json {
                output::emit(&line).into_diagnostic()?;
            } else {
                output::emit_human(self.ctx.color, &line).into_diagnostic()?;
            }
        }
        self.overwrites_shown = self.written.overwrites.len();
        Ok(())
    }

    /// One line per new entry until the workflow leaves the store or a signal ends the watch.
    fn events(&mut self, wakes: &Wakes) -> Result<()> {
        loop {
            let stop = wakes.wait(SAFETY_POLL.min(wakes.poll));
            let entries = self.read()?;
            self.print_entries(&entries)?;
            self.print_overwrites()?;
            if let Some(problem) = &self.problem {
                output::warn(problem);
            }
            if stop.is_some() {
                return Ok(());
            }
            if self.gone() {
                return self.say_gone();
            }
        }
    }

    /// The full-screen view, redrawn on every change and every second.
    fn live(&mut self, wakes: &Wakes) -> Result<()> {
        let how = if wakes.notified {
            "live".to_owned()
        } else {
            format!(
                "checking every {} ms (no file notifications here)",
                wakes.poll.as_millis()
            )
        };
        let how = format!("{how} · Ctrl-C quits");
        let mut screen = Screen::enter(self.ctx.color).into_diagnostic()?;
        loop {
            let (width, height) = terminal_size();
            let effects = self.counts();
            let text = view::render(
                &self.frame(self.now(), &how, &effects),
                Paint::new(self.ctx.color),
            );
            screen.draw(&text, width, height).into_diagnostic()?;
            match wakes.wait(TICK.min(wakes.poll)) {
                Some(signal) if signal != SIGWINCH => {
                    drop(screen);
                    return Ok(());
                }
                _ => {}
            }
            self.read()?;
            if self.gone() {
                drop(screen);
                return self.say_gone();
            }
        }
    }

    /// Whether the workflow left the store (archived, removed).
    fn gone(&self) -> bool {
        !self.dir.join(JOURNAL_FILE).exists() && !self.dir.join(STATE_FILE).exists()
    }

    fn say_gone(&self) -> Result<()> {
        let archive = find_archive(self.ctx.store.root(), &self.id);
        if self.ctx.format == Format::Json {
            let mut line = serde_json::to_string(&WatchEvent::Gone {
                version: JSON_VERSION,
                workflow: self.id.as_str(),
                archive: archive.clone(),
            })
            .into_diagnostic()?;
            line.push('\n');
            output::emit(&line).into_diagnostic()?;
        }
        match archive {
            Some(path) => output::note(&format!(
                "workflow `{}` was archived to `{}`; the watch ends",
                self.id,
                self.ctx.display_path(&path).display()
            )),
            None => output::note(&format!(
                "workflow `{}` was removed; the watch ends",
                self.id
            )),
        }
        Ok(())
    }
}

/// The newest archive of workflow `id`, if any (`<id>_<time>[_<n>]` in `.archive/` or
/// `failed/`).
fn find_archive(root: &Path, id: &WorkflowId) -> Option<PathBuf> {
    let prefix = format!("{id}_");
    [ARCHIVE_DIR, FAILED_DIR]
        .iter()
        .filter_map(|parent| std::fs::read_dir(root.join(parent)).ok())
        .flatten()
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            entry.file_name().to_str().is_some_and(|name| {
                name.strip_prefix(&prefix)
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
            })
        })
        .max_by_key(|entry| entry.metadata().and_then(|meta| meta.modified()).ok())
        .map(|entry| entry.path())
}

#[cfg(unix)]
const SIGWINCH: i32 = signal_hook::consts::SIGWINCH;
#[cfg(not(unix))]
const SIGWINCH: i32 = -1;

/// Where wake-ups come from: file notifications (or none, then a poll) and signals.
struct Wakes {
    rx: Receiver<Wake>,
    /// Whether file notifications arrive.
    notified: bool,
    /// How long to wait at most between two checks.
    poll: Duration,
    _watcher: Option<notify::RecommendedWatcher>,
}

impl Wakes {
    fn start(dir: &Path) -> Result<Self> {
        let (tx, rx) = mpsc::channel();
        forward_signals(tx.clone())?;
        let forced_poll =
            std::env::var_os(vars::CHECKPOINT_TEST_WATCH_POLL).is_some_and(|v| !v.is_empty());
        let watcher = if forced_poll {
            None
        } else {
            match watch_dir(dir, tx) {
                Ok(watcher) => Some(watcher),
                Err(err) => {
                    output::warn(&format!(
                        "no file notifications for `{}` ({err}); checking every {} ms instead",
                        dir.display(),
                        POLL.as_millis()
                    ));
                    None
                }
            }
        };
        let notified = watcher.is_some();
        Ok(Self {
            rx,
            notified,
            poll: if notified { SAFETY_POLL } else { POLL },
            _watcher: watcher,
        })
    }

    /// Waits for a change, a signal, or `timeout`; returns the signal that ends the watch, or
    /// SIGWINCH. Notifications that came together count as one.
    fn wait(&self, timeout: Duration) -> Option<i32> {
        let first = match self.rx.recv_timeout(timeout) {
            Ok(wake) => wake,
            Err(RecvTimeoutError::Timeout) => return None,
            Err(RecvTimeoutError::Disconnected) => return Some(0),
        };
        let mut signal = None;
        for wake in std::iter::once(first).chain(self.rx.try_iter()) {
            match wake {
                Wake::Files => {}
                Wake::Signal(SIGWINCH) => signal = signal.or(Some(SIGWINCH)),
                Wake::Signal(other) => signal = Some(other),
            }
        }
        signal
    }
}

/// Watches the workflow's directory: its journal, state and runner lock.
fn watch_dir(dir: &Path, tx: Sender<Wake>) -> notify::Result<notify::RecommendedWatcher> {
    use notify::Watcher as _;
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.is_ok_and(|event| changes_files(&event.kind)) {
            let _ = tx.send(Wake::Files);
        }
    })?;
    watcher.watch(dir, notify::RecursiveMode::NonRecursive)?;
    Ok(watcher)
}

/// Whether a notification can mean a change: opening, reading and closing a file unwritten do
/// not. The watch itself opens the journal and the state at every check, and inotify reports
/// those opens: a wake-up for each would wake the watch again at once, a busy loop at rest.
fn changes_files(kind: &notify::EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, EventKind};
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

#[cfg(unix)]
fn forward_signals(tx: Sender<Wake>) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGWINCH])
        .into_diagnostic()?;
    std::thread::spawn(move || {
        for signal in signals.forever() {
            if tx.send(Wake::Signal(signal)).is_err() {
                break;
            }
        }
    });
    Ok(())
}

#[cfg(not(unix))]
fn forward_signals(_tx: Sender<Wake>) -> Result<()> {
    Ok(())
}

/// The terminal's width and height, 80 × 24 when it does not say.
fn terminal_size() -> (usize, usize) {
    #[cfg(unix)]
    if let Ok(size) = rustix::termios::tcgetwinsize(std::io::stdout())
        && size.ws_col > 0
        && size.ws_row > 0
    {
        return (size.ws_col.into(), size.ws_row.into());
    }
    (80, 24)
}
