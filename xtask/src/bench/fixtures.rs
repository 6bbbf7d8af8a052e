//! The generated data the benchmarks run against, under `target/bench/`: projects with an
//! in-progress workflow of every size, the seed's `pipeline-state.json` equivalents, long
//! journals, and a repository with many worktrees.
//!
//! Workflows are created with `checkpoint init --plan` and moved with the CLI. The first third
//! of the phases of a big workflow would take minutes to complete one command at a time, so
//! their `start` and `complete` entries are written with the core library's types instead,
//! mirroring what the transitions do, and `checkpoint validate` (which replays the journal and
//! compares it with the state) checks every fixture before it is used.

use std::{
    fmt::Write as _,
    fs,
    io::Write as _,
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

use checkpoint_core::{
    Activity, Artifact, PhaseId, PhaseStatus, Transition, Workflow, WorkflowId,
    journal::Entry,
    store::{JOURNAL_FILE, STATE_FILE, Store, StoreOptions},
};
use chrono::{DateTime, Duration, Utc};
use serde_json::json;

use crate::Result;

/// The id of every generated workflow.
pub(crate) const WORKFLOW_ID: &str = "bench";

/// Generates fixtures with one `checkpoint` binary, at one point in time.
pub(crate) struct Fixtures {
    pub binary: PathBuf,
    /// When the generated workflows were created: three hours before the run, so they are
    /// interrupted (no heartbeat for more than ten minutes) but not stale.
    pub t0: DateTime<Utc>,
}

/// A project holding an in-progress workflow.
#[derive(Debug, Clone)]
pub(crate) struct PhaseProject {
    pub dir: PathBuf,
    pub n_phases: usize,
    /// Phases `0..n_done` are complete; phase `n_done` is in progress.
    pub n_done: usize,
    /// The commit SHA recorded by phase `i`, if any.
    pub shas: Vec<Option<String>>,
}

impl PhaseProject {
    /// The phase in progress.
    pub(crate) fn current(&self) -> String {
        phase_id(self.n_done)
    }
}

impl Fixtures {
    /// A project whose workflow has `n_phases` phases, a third of them complete (every third
    /// with a commit, as the seed's mini-commit rule has it, when `commits` is set) and the
    /// next one in progress.
    pub(crate) fn phase_project(
        &self,
        dir: &Path,
        n_phases: usize,
        commits: bool,
    ) -> Result<PhaseProject> {
        assert!(n_phases >= 2, "a project has at least two phases");
        fresh_dir(dir)?;
        git(dir, &["init", "--quiet", "--initial-branch=main"])?;
        let n_done = (n_phases / 3).max(1);
        let shas = if commits {
            mini_commits(dir, n_done)?
        } else {
            vec![None; n_done]
        };
        write_file(
            &dir.join("plan.json"),
            &serde_json::to_string_pretty(&plan(n_phases)).expect("JSON serializes"),
        )?;
        fs::create_dir_all(dir.join("src"))
            .map_err(|err| format!("failed to create `src`: {err}"))?;
        for i in 0..n_done {
            write_file(
                &dir.join(output_of(i)),
                &format!("//! Module {i}.\n\npub fn run() {{}}\n"),
            )?;
        }

        let title = format!("Benchmark workflow with {n_phases} phases");
        self.checkpoint(
            dir,
            self.t0,
            &[
                "init",
                WORKFLOW_ID,
                "--plan",
                "plan.json",
                "--title",
                &title,
                "--kind",
                "implement",
            ],
        )?;

        // Phases before the last complete one: written with the library.
        let times = Timeline::new(self.t0, n_done);
        let store_dir = dir.join(".claude").join("checkpoints");
        let (mut workflow, workflow_dir) = load(&store_dir)?;
        let mut entries = Vec::new();
        for (i, sha) in shas.iter().enumerate().take(n_done - 1) {
            let id = PhaseId::new(&phase_id(i)).map_err(|err| err.to_string())?;
            let started = times.start(i);
            let done = times.complete(i);
            let artifacts = vec![output_of(i)];
            start_phase(&mut workflow, &id, started)?;
            entries.push(entry(
                &mut workflow,
                started,
                Transition::PhaseStart {
                    phase: id.clone(),
                    force: false,
                },
            ));
            complete_phase(&mut workflow, &id, &artifacts, sha.as_deref(), done)?;
            entries.push(entry(
                &mut workflow,
                done,
                Transition::PhaseComplete {
                    phase: id,
                    artifacts,
                    commit_sha: sha.clone(),
                    force: false,
                },
            ));
        }
        append(&workflow_dir, &workflow, &entries)?;

        // The last complete phase and the one in progress: with the CLI.
        let last = n_done - 1;
        let (last_id, current_id) = (phase_id(last), phase_id(n_done));
        let artifact = output_of(last);
        let mut complete = vec!["complete", &last_id, "--artifact", &artifact];
        if let Some(sha) = &shas[last] {
            complete.extend(["--commit-sha", sha]);
        }
        let cli_steps: [&[&str]; 7] = [
            &["start", &last_id],
            &["progress", &last_id, "tests pass, docs next"],
            &complete,
            &[
                "decide",
                "Keep the public API; deprecate the old entry points",
            ],
            &["note", "CI is slow on the integration suite; run it last"],
            &["start", &current_id],
            &[
                "progress",
                &current_id,
                "auth module done, starting billing",
            ],
        ];
        for (k, args) in cli_steps.iter().enumerate() {
            self.checkpoint(dir, times.cli(k), args)?;
        }
        Ok(PhaseProject {
            dir: dir.to_owned(),
            n_phases,
            n_done,
            shas,
        })
    }

    /// A project like [`Fixtures::phase_project`] with 100 phases and no commits, whose
    /// journal is then padded with heartbeats to `n_entries` entries.
    pub(crate) fn journal_project(&self, dir: &Path, n_entries: u64) -> Result<PhaseProject> {
        let project = self.phase_project(dir, 100, false)?;
        let (mut workflow, workflow_dir) = load(&dir.join(".claude").join("checkpoints"))?;
        if workflow.seq > n_entries {
            return Err(format!(
                "the journal already has {} entries, more than {n_entries}",
                workflow.seq
            ));
        }
        // Heartbeats spread over the half hour after the CLI steps.
        let n_new = n_entries - workflow.seq;
        let times = Timeline::new(self.t0, project.n_done);
        let (first, last) = (times.cli(7), times.cli(37));
        let step_us = (last - first).num_microseconds().unwrap_or(0) / n_new.max(1) as i64;
        let mut text = String::new();
        for k in 0..n_new {
            let at = first + Duration::microseconds(step_us * k as i64);
            let transition = Transition::Heartbeat {
                source: "bench".into(),
                session_id: None,
            };
            // What applying a heartbeat does.
            workflow.last_activity = Some(Activity {
                at,
                source: "bench".into(),
                session_id: None,
            });
            workflow.seq += 1;
            workflow.updated_at = at;
            text.push_str(
                &Entry {
                    seq: workflow.seq,
                    at,
                    transition,
                }
                .to_line(),
            );
        }
        append_text(&workflow_dir.join(JOURNAL_FILE), &text)?;
        write_state(&workflow_dir, &workflow)?;
        Ok(project)
    }

    /// A repository and its worktrees (the first is the main one), each with `n_files` files
    /// and a workflow.
    pub(crate) fn worktrees(
        &self,
        dir: &Path,
        n_worktrees: usize,
        n_files: usize,
    ) -> Result<PathBuf> {
        fresh_dir(dir)?;
        let main = dir.join("main");
        fs::create_dir_all(&main)
            .map_err(|err| format!("failed to create `{}`: {err}", main.display()))?;
        git(&main, &["init", "--quiet", "--initial-branch=main"])?;
        for i in 0..n_files {
            let path = main
                .join("src")
                .join(format!("dir{:03}", i / 100))
                .join(format!("file{i:05}.rs"));
            if i % 100 == 0 {
                let parent = path.parent().expect("a file has a parent");
                fs::create_dir_all(parent)
                    .map_err(|err| format!("failed to create `{}`: {err}", parent.display()))?;
            }
            write_file(&path, &format!("pub const N: usize = {i};\n"))?;
        }
        git(&main, &["add", "--all"])?;
        git(
            &main,
            &["commit", "--quiet", "--message", "Generated files"],
        )?;
        let mut roots = vec![main.clone()];
        for i in 1..n_worktrees {
            let name = format!("wt-{i:02}");
            git(
                &main,
                &[
                    "worktree",
                    "add",
                    "--quiet",
                    "-b",
                    &name,
                    &format!("../{name}"),
                ],
            )?;
            roots.push(dir.join(name));
        }
        for root in &roots {
            self.checkpoint(
                root,
                self.t0,
                &[
                    "init",
                    WORKFLOW_ID,
                    "--phase",
                    "design",
                    "--phase",
                    "build:design",
                    "--phase",
                    "docs:build",
                ],
            )?;
            self.checkpoint(root, self.t0 + Duration::minutes(5), &["start", "design"])?;
        }
        Ok(main)
    }

    /// Runs `checkpoint` in `dir` at time `now`, failing on any error.
    fn checkpoint(&self, dir: &Path, now: DateTime<Utc>, args: &[&str]) -> Result {
        let mut command = Command::new(&self.binary);
        command
            .args(args)
            .current_dir(dir)
            .env("CHECKPOINT_TEST_NOW", now.to_rfc3339())
            .env_remove("CHECKPOINT_DIR")
            .env_remove("CHECKPOINT_WORKFLOW");
        run_quiet(&mut command)
    }

    /// Checks a generated workflow: `checkpoint validate` replays its whole journal and compares
    /// the result with the state, and checks its files and commits.
    pub(crate) fn validate(&self, project: &Path) -> Result {
        let mut command = Command::new(&self.binary);
        command
            .args(["validate", "--format", "json"])
            .current_dir(project)
            .env_remove("CHECKPOINT_TEST_NOW");
        run_quiet(&mut command)
    }
}

/// The seed's `.claude/pipeline-state.json` for the same workflow: the phases completed so far
/// (with their commits), the current one with its progress, and the remaining ones.
pub(crate) fn seed_state(project: &PhaseProject, t0: DateTime<Utc>) -> serde_json::Value {
    let times = Timeline::new(t0, project.n_done);
    let completed: Vec<_> = (0..project.n_done)
        .map(|i| {
            let mut phase = json!({
                "id": phase_id(i),
                "name": phase_name(i),
                "timestamp": times.complete(i).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            });
            if let Some(sha) = &project.shas[i] {
                phase["commit_sha"] = sha[..7].into();
            }
            phase
        })
        .collect();
    let remaining: Vec<_> = (project.n_done + 1..project.n_phases)
        .map(|i| json!({ "id": phase_id(i), "name": phase_name(i), "dependencies": dependencies(i) }))
        .collect();
    let stamp = |at: DateTime<Utc>| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    json!({
        "completed_phases": completed,
        "current_phase": {
            "id": phase_id(project.n_done),
            "name": phase_name(project.n_done),
            "progress_description": "auth module done, starting billing",
        },
        "remaining_phases": remaining,
        "context_summary": {
            "branch": "main",
            "key_decisions": ["Keep the public API; deprecate the old entry points"],
            "file_paths": (0..project.n_done).map(output_of).collect::<Vec<_>>(),
        },
        "created_at": stamp(t0),
        "updated_at": stamp(times.cli(6)),
    })
}

/// The Claude Code `SessionStart` payload for a session in `project`.
pub(crate) fn session_start_payload(project: &Path) -> String {
    let payload = json!({
        "session_id": "0b3c6e0e-bench-4d5e-9f00-5e5510a5e5ab",
        "transcript_path": project.join("transcript.jsonl"),
        "cwd": project,
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    format!("{payload}\n")
}

/// The smallest Rust program: a floor for a Rust binary's start-up.
pub(crate) const EXIT_SOURCE: &str =
    "//! Exits at once: the start-up cost of a Rust binary.\n\nfn main() {}\n";

/// A floor for `checkpoint complete`: its writes and syncs, and nothing else.
pub(crate) const DURABLE_SOURCE: &str = r#"//! Does to the disk what `checkpoint complete` does at 100 phases, and nothing else: appends a
//! line to the journal and syncs it, writes a 50 KB state to a temporary file and syncs it,
//! renames it over the state, and syncs the directory.

use std::{fs, io::Write, path::PathBuf};

fn main() {
    let dir = PathBuf::from(std::env::args_os().nth(1).expect("a directory"));
    let mut journal = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("journal.jsonl"))
        .expect("the journal opens");
    journal.write_all(&[b'.'; 150]).expect("the journal is written");
    journal.sync_data().expect("the journal syncs");
    let temp = dir.join(".state.json.tmp");
    let mut state = fs::File::create(&temp).expect("the state opens");
    state.write_all(&[b' '; 50_000]).expect("the state is written");
    state.sync_all().expect("the state syncs");
    fs::rename(&temp, dir.join("state.json")).expect("the state is renamed");
    fs::File::open(&dir).and_then(|dir| dir.sync_all()).expect("the directory syncs");
}
"#;

/// Compiles a one-file Rust program in `dir`, optimized and stripped like the bundle's binary.
pub(crate) fn rust_program(
    dir: &Path,
    name: &str,
    source: &str,
    static_crt: bool,
) -> Result<PathBuf> {
    fs::create_dir_all(dir)
        .map_err(|err| format!("failed to create `{}`: {err}", dir.display()))?;
    let source_path = dir.join(format!("{name}.rs"));
    write_file(&source_path, source)?;
    let binary = dir.join(name);
    let mut command = Command::new("rustc");
    command
        .args(["--edition", "2024", "-O", "-C", "panic=abort"])
        .args(["-C", "codegen-units=1", "-C", "strip=symbols", "-o"])
        .arg(&binary)
        .arg(&source_path);
    if static_crt {
        command.args(["-C", "target-feature=+crt-static"]);
    }
    run_quiet(&mut command)?;
    Ok(binary)
}

/// When things happened in a generated workflow: library entries spread over the first two
/// hours after `t0`, then the CLI steps a minute apart, the last about an hour before the run.
struct Timeline {
    t0: DateTime<Utc>,
    step_ms: i64,
}

impl Timeline {
    fn new(t0: DateTime<Utc>, n_done: usize) -> Self {
        let slots = 2 * n_done as i64 + 1;
        Self {
            t0,
            step_ms: Duration::hours(2).num_milliseconds() / slots,
        }
    }

    fn start(&self, i: usize) -> DateTime<Utc> {
        self.t0 + Duration::milliseconds(self.step_ms * (2 * i as i64 + 1))
    }

    fn complete(&self, i: usize) -> DateTime<Utc> {
        self.t0 + Duration::milliseconds(self.step_ms * (2 * i as i64 + 2))
    }

    fn cli(&self, k: usize) -> DateTime<Utc> {
        self.t0 + Duration::hours(2) + Duration::minutes(k as i64)
    }
}

fn phase_id(i: usize) -> String {
    format!("phase-{i:05}")
}

fn phase_name(i: usize) -> String {
    const VERBS: [&str; 5] = ["Design", "Write", "Test", "Document", "Review"];
    format!("{} module {i}", VERBS[i % VERBS.len()])
}

fn output_of(i: usize) -> String {
    format!("src/module_{i:05}.rs")
}

/// A chain with some longer edges: phase `i` waits for `i - 1`, and every seventh also for `i - 7`.
fn dependencies(i: usize) -> Vec<String> {
    let mut deps = Vec::new();
    if i > 0 {
        deps.push(phase_id(i - 1));
    }
    if i >= 7 && i.is_multiple_of(7) {
        deps.push(phase_id(i - 7));
    }
    deps
}

/// A plan file with `n` phases.
fn plan(n: usize) -> serde_json::Value {
    let phases: Vec<_> = (0..n)
        .map(|i| {
            json!({
                "id": phase_id(i),
                "name": phase_name(i),
                "description": format!("Implement module {i} with its unit tests, behind the existing interface."),
                "dependencies": dependencies(i),
                "outputs": [output_of(i)],
            })
        })
        .collect();
    json!({ "title": format!("Benchmark plan with {n} phases"), "kind": "implement", "phases": phases })
}

/// One commit for every third phase of `0..n_done` (written with `git fast-import`, which
/// makes thousands a second); returns each phase's SHA.
fn mini_commits(dir: &Path, n_done: usize) -> Result<Vec<Option<String>>> {
    let committed: Vec<usize> = (0..n_done).filter(|i| i % 3 == 2).collect();
    let mut stream = String::new();
    for (mark, i) in committed.iter().enumerate() {
        let message = format!("checkpoint: phases {}-{} complete\n", i - 2, i);
        let _ = write!(
            stream,
            "commit refs/heads/main\nmark :{}\ncommitter Bench <bench@example.com> {} +0000\ndata {}\n{message}\n",
            mark + 1,
            1_700_000_000 + mark,
            message.len()
        );
    }
    let marks = dir.join(".git").join("bench-marks");
    let mut child = git_command(dir)
        .args(["fast-import", "--quiet"])
        .arg(format!("--export-marks={}", marks.display()))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .map_err(|err| format!("failed to run `git fast-import`: {err}"))?;
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stream.as_bytes())
        .map_err(|err| format!("failed to feed `git fast-import`: {err}"))?;
    let status = child
        .wait()
        .map_err(|err| format!("failed to run `git fast-import`: {err}"))?;
    if !status.success() {
        return Err(format!("`git fast-import` failed with {status}"));
    }
    let text = fs::read_to_string(&marks)
        .map_err(|err| format!("failed to read `{}`: {err}", marks.display()))?;
    let mut by_mark = vec![String::new(); committed.len()];
    for line in text.lines() {
        if let Some((mark, sha)) = line.strip_prefix(':').and_then(|line| line.split_once(' '))
            && let Ok(mark) = mark.parse::<usize>()
            && (1..=committed.len()).contains(&mark)
        {
            by_mark[mark - 1] = sha.to_owned();
        }
    }
    let mut shas = vec![None; n_done];
    for (mark, i) in committed.into_iter().enumerate() {
        shas[i] = Some(std::mem::take(&mut by_mark[mark]));
    }
    Ok(shas)
}

/// Loads the generated workflow of a store, and its directory.
fn load(store_dir: &Path) -> Result<(Workflow, PathBuf)> {
    let store = Store::new(
        store_dir,
        StoreOptions {
            lock_timeout: std::time::Duration::ZERO,
            on_lock_wait: None,
            failpoint: None,
        },
    );
    let id = WorkflowId::new(WORKFLOW_ID).map_err(|err| err.to_string())?;
    let loaded = store.load(&id).map_err(|err| err.to_string())?;
    Ok((loaded.workflow, loaded.dir))
}

/// What `PhaseStart` does to a pending phase.
fn start_phase(workflow: &mut Workflow, id: &PhaseId, at: DateTime<Utc>) -> Result {
    let phase = phase_mut(workflow, id)?;
    phase.status = PhaseStatus::InProgress;
    phase.attempts += 1;
    phase.started_at = Some(at.into());
    phase.completed_at = None;
    phase.approval = None;
    workflow.pause = None;
    Ok(())
}

/// What `PhaseComplete` does to a phase in progress without approval gate or tasks.
fn complete_phase(
    workflow: &mut Workflow,
    id: &PhaseId,
    artifacts: &[String],
    sha: Option<&str>,
    at: DateTime<Utc>,
) -> Result {
    let phase = phase_mut(workflow, id)?;
    for path in artifacts {
        phase.artifacts.push(Artifact {
            path: path.clone(),
            recorded_at: at,
        });
    }
    if let Some(sha) = sha {
        phase.commit_sha = Some(sha.to_owned());
    }
    phase.error = None;
    phase.completed_at = Some(at.into());
    phase.status = PhaseStatus::Complete;
    for path in artifacts {
        if !workflow.context.file_paths.contains(path) {
            workflow.context.file_paths.push(path.clone());
        }
    }
    Ok(())
}

fn phase_mut<'a>(
    workflow: &'a mut Workflow,
    id: &PhaseId,
) -> Result<&'a mut checkpoint_core::Phase> {
    workflow
        .phases
        .iter_mut()
        .find(|phase| &phase.id == id)
        .ok_or_else(|| format!("no phase `{id}` in the generated workflow"))
}

/// The journal entry of a transition just applied by hand: what `apply` does after the change.
fn entry(workflow: &mut Workflow, at: DateTime<Utc>, transition: Transition) -> Entry {
    workflow.seq += 1;
    workflow.updated_at = at;
    workflow.status = workflow.derived_status();
    Entry {
        seq: workflow.seq,
        at,
        transition,
    }
}

/// Appends entries to a workflow's journal and writes its state, as a commit of the store does.
fn append(workflow_dir: &Path, workflow: &Workflow, entries: &[Entry]) -> Result {
    let text: String = entries.iter().map(Entry::to_line).collect();
    append_text(&workflow_dir.join(JOURNAL_FILE), &text)?;
    write_state(workflow_dir, workflow)
}

fn append_text(path: &Path, text: &str) -> Result {
    let mut file = fs::OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|err| format!("failed to open `{}`: {err}", path.display()))?;
    file.write_all(text.as_bytes())
        .map_err(|err| format!("failed to append to `{}`: {err}", path.display()))
}

/// Writes `state.json` in the store's format (pretty JSON and a newline), through a rename.
fn write_state(workflow_dir: &Path, workflow: &Workflow) -> Result {
    let mut text = serde_json::to_string_pretty(workflow).expect("a workflow serializes");
    text.push('\n');
    let temp = workflow_dir.join(".bench-state.json");
    write_file(&temp, &text)?;
    let path = workflow_dir.join(STATE_FILE);
    fs::rename(&temp, &path).map_err(|err| format!("failed to replace `{}`: {err}", path.display()))
}

pub(crate) fn write_file(path: &Path, text: &str) -> Result {
    fs::write(path, text).map_err(|err| format!("failed to write `{}`: {err}", path.display()))
}

/// Removes `dir` and everything in it, if it exists.
pub(crate) fn remove_dir(dir: &Path) -> Result {
    match fs::remove_dir_all(dir) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("failed to clean `{}`: {err}", dir.display()))
        }
        _ => Ok(()),
    }
}

/// Removes `dir` if it exists and creates it empty.
pub(crate) fn fresh_dir(dir: &Path) -> Result {
    remove_dir(dir)?;
    fs::create_dir_all(dir).map_err(|err| format!("failed to create `{}`: {err}", dir.display()))
}

fn git_command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com");
    command
}

pub(crate) fn git(dir: &Path, args: &[&str]) -> Result {
    run_quiet(git_command(dir).args(args))
}

/// Runs a command with its output captured; fails with its stderr.
pub(crate) fn run_quiet(command: &mut Command) -> Result {
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(|err| format!("failed to run `{}`: {err}", crate::describe(command)))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{}` failed with {}:\n{}{}",
            crate::describe(command),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}
