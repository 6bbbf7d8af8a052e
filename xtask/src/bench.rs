//! `cargo xtask bench`: what each `checkpoint` command costs, next to the floor (`/bin/true` and
//! an empty Rust program) and to the seed systems' bash + jq scripts, measured side by side in
//! round-robin rounds; the report goes to stdout and `target/bench/report.md`.

mod effects_guard;
mod fixtures;
mod harness;
mod plugin_hook;
mod report;
mod snapshots;
mod stats;
mod sync;
mod targets;
mod watch;
mod workflow_runs;
mod writes;

use std::{
    env,
    ffi::OsString,
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use chrono::{Duration, Utc};

use crate::{
    Result,
    bench::{
        fixtures::{Fixtures, PhaseProject},
        harness::{Case, Expect, Schedule, Setup},
        report::{DURABLE_KEY, EXIT_KEY, TRUE_KEY},
        targets::{Lookup, targets, watch_target},
    },
    dist,
};

/// Options of `cargo xtask bench`.
#[derive(Debug)]
pub(crate) struct Options {
    pub quick: bool,
    pub runs: Option<usize>,
    pub binary: Option<PathBuf>,
    pub baseline: Option<PathBuf>,
    pub filter: Option<String>,
}

/// The sizes and the schedule of a run.
struct Plan {
    phases: Vec<usize>,
    journals: [u64; 2],
    worktrees: usize,
    files_per_worktree: usize,
    schedule: Schedule,
}

impl Plan {
    fn new(options: &Options) -> Self {
        if options.quick {
            Self {
                phases: vec![5, 100, 1_000],
                journals: [100, 10_000],
                worktrees: 20,
                files_per_worktree: 500,
                schedule: Schedule {
                    rounds: options.runs.unwrap_or(40),
                    warmups: 2,
                    budget_secs: 1.5,
                    min_runs: 5,
                },
            }
        } else {
            Self {
                phases: vec![5, 100, 1_000, 10_000],
                journals: [100, 100_000],
                worktrees: 20,
                files_per_worktree: 5_000,
                schedule: Schedule {
                    rounds: options.runs.unwrap_or(200),
                    warmups: 3,
                    budget_secs: 10.0,
                    min_runs: 10,
                },
            }
        }
    }
}

pub(crate) fn run(root: &Path, options: &Options) -> Result {
    let plan = Plan::new(options);
    if plan.schedule.rounds == 0 {
        return Err("`--runs` must be at least 1".into());
    }
    let dir = crate::target_dir(root).join("bench");
    let Binaries {
        original,
        bin_dir,
        binary,
        baseline,
    } = binaries(root, options, &dir)?;
    let wanted = |key: &str| {
        key.starts_with("floor/")
            || options
                .filter
                .as_deref()
                .is_none_or(|filter| key.contains(filter))
    };
    let has_jq = Command::new("jq")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    let mut notes = Vec::new();
    if !has_jq {
        notes.push("`jq` was not found: the seed systems' scripts were not measured.".to_owned());
    }

    eprintln!("generating the fixtures in {}", dir.display());
    let bench = Bench {
        dir: &dir,
        binary: &binary,
        fixtures: Fixtures {
            binary: binary.clone(),
            t0: Utc::now() - Duration::hours(3),
        },
        scripts: root.join("xtask").join("bench"),
        has_jq,
        wanted: &wanted,
    };
    let mut groups = Groups {
        floor: floor_cases(&dir, &bin_dir)?,
        ..Groups::default()
    };
    bench.no_workflow_case(&mut groups)?;
    if wanted("plugin-hook/") {
        groups.hook.extend(plugin_hook::cases(root, &dir, &binary)?);
    }
    // What takes seconds a run is left out of a quick run unless `--filter` asks for it.
    let slow = !options.quick || options.filter.is_some();
    groups.guard = guard_cases(&dir, &binary, &wanted, slow)?;
    if slow && wanted(snapshots::GROWTH_KEY) {
        eprintln!("  the object database's growth over 100 snapshots");
        notes.push(snapshots::growth(&dir, &binary)?);
    }
    for &n in &plan.phases {
        bench.phase_cases(&mut groups, n)?;
    }
    for n in plan.journals {
        bench.journal_case(&mut groups, n)?;
    }
    let list_reads = bench.list_cases(&mut groups, &plan)?;

    // Kept until the measurements end.
    let _daemon = bench.sync_cases(&mut groups)?;
    let watch_latency = if wanted(watch::KEY) {
        eprintln!("  `watch` latency");
        Some(watch::measure(
            &dir,
            &binary,
            if options.quick { 20 } else { 100 },
        )?)
    } else {
        None
    };

    let mut cases = groups.into_cases(&wanted);
    if let Some(baseline) = &baseline {
        with_baseline(&mut cases, &binary, baseline);
    }
    eprintln!("measuring {} cases", cases.len());
    let machine = report::Machine::describe();
    let samples = harness::measure(&cases, plan.schedule)?;

    let lookup = Lookup {
        cases: &cases,
        samples: &samples,
    };
    let mut targets = targets(&lookup, &plan, list_reads.as_ref(), &mut notes);
    targets.push(watch_target(watch_latency.as_ref()));
    targets.extend(plugin_hook::targets(&lookup));
    targets.extend(effects_guard::targets(&lookup));
    targets.extend(snapshots::targets(&lookup, &dir));
    targets.extend(workflow_runs::targets(&lookup));
    targets.extend(writes::targets(&lookup));
    let command = format!(
        "cargo xtask {}",
        env::args().skip(1).collect::<Vec<_>>().join(" ")
    );
    let size = fs::metadata(&binary).map_or(0, |meta| meta.len());
    let binary_text = format!(
        "`{}` ({:.1} MB)",
        original.strip_prefix(root).unwrap_or(&original).display(),
        size as f64 / 1e6
    );
    let baseline_text = options
        .baseline
        .as_ref()
        .map(|path| format!("`{}`", path.display()));
    let text = report::render(
        &report::Context {
            command: &command,
            binary: &binary_text,
            baseline: baseline_text.as_deref(),
            machine: &machine,
            rounds: plan.schedule.rounds,
            warmups: plan.schedule.warmups,
            targets: &targets,
            notes: &notes,
        },
        &cases,
        &samples,
    );
    let report_path = dir.join("report.md");
    fixtures::write_file(&report_path, &text)?;
    report::write_raw(&dir.join("raw.csv"), &cases, &samples)?;
    println!("{text}");
    eprintln!("wrote {}", report_path.display());
    guards_met(&targets)
}

/// The binaries measured, as fresh copies: how fast a binary starts depends on its file's
/// history in the page cache (a byte-identical but older copy started 0.2 ms slower here), so
/// every binary we build or measure gets the same history.
struct Binaries {
    /// The binary as built or given, for the report.
    original: PathBuf,
    bin_dir: PathBuf,
    binary: PathBuf,
    baseline: Option<PathBuf>,
}

/// Builds (or takes `--binary`) the binary to measure, and copies it and `--baseline` afresh.
fn binaries(root: &Path, options: &Options, dir: &Path) -> Result<Binaries> {
    let original = match &options.binary {
        Some(path) => path.clone(),
        None => dist::run(root, dist::Build::Shipped)?
            .join("bin")
            .join("checkpoint"),
    };
    let bin_dir = dir.join("bin");
    fixtures::fresh_dir(&bin_dir)?;
    let binary = copy_binary(&original, &bin_dir.join("checkpoint"))?;
    let baseline = match &options.baseline {
        Some(path) => Some(copy_binary(path, &bin_dir.join("checkpoint-baseline"))?),
        None => None,
    };
    Ok(Binaries {
        original,
        bin_dir,
        binary,
        baseline,
    })
}

/// An error naming the guarded targets the measurements missed.
fn guards_met(targets: &[report::Target]) -> Result {
    let missed: Vec<&str> = targets
        .iter()
        .filter(|target| target.guard && target.met == Some(false))
        .map(|target| target.text.as_str())
        .collect();
    if missed.is_empty() {
        Ok(())
    } else {
        Err(format!("targets not met: {}", missed.join("; ")))
    }
}

/// The floor: `/bin/true`, a Rust program that only exits, and one doing `complete`'s writes.
fn floor_cases(dir: &Path, bin_dir: &Path) -> Result<Vec<Case>> {
    let floors = dir.join("floors");
    let static_crt = dist::static_crt();
    // Copied like the binaries under test, for the same page-cache history.
    let exit = copy_binary(
        &fixtures::rust_program(&floors, "exit", fixtures::EXIT_SOURCE, static_crt)?,
        &bin_dir.join("exit"),
    )?;
    let durable = copy_binary(
        &fixtures::rust_program(&floors, "durable", fixtures::DURABLE_SOURCE, static_crt)?,
        &bin_dir.join("durable"),
    )?;
    let durable_dir = floors.join("durable-store");
    fixtures::fresh_dir(&durable_dir)?;
    Ok(vec![
        simple(TRUE_KEY, "`/bin/true`", Path::new("/bin/true"), &[], dir),
        simple(EXIT_KEY, "Rust program that only exits", &exit, &[], dir),
        Case {
            args: vec![durable_dir.into()],
            expect: Expect::Nothing,
            ..simple(
                DURABLE_KEY,
                "Rust program doing `complete`'s writes and syncs (journal, 50 KB state, directory)",
                &durable,
                &[],
                dir,
            )
        },
    ])
}

/// The guards on the hot path: the never-twice guard, the write guard, the snapshots.
fn guard_cases(
    dir: &Path,
    binary: &Path,
    wanted: &dyn Fn(&str) -> bool,
    slow: bool,
) -> Result<Vec<Case>> {
    let mut cases = Vec::new();
    if effects_guard::wanted(wanted) {
        cases.extend(effects_guard::cases(dir, binary)?);
    }
    if writes::wanted(wanted) {
        cases.extend(writes::cases(dir, binary)?);
    }
    cases.extend(workflow_runs::cases(dir, binary, wanted)?);
    if snapshots::wanted(wanted, slow) {
        cases.extend(snapshots::cases(dir, binary, slow)?);
    }
    Ok(cases)
}

/// What every group of cases is made with: where, which binary, the fixtures, the filter.
struct Bench<'a> {
    dir: &'a Path,
    binary: &'a Path,
    fixtures: Fixtures,
    scripts: PathBuf,
    has_jq: bool,
    wanted: &'a dyn Fn(&str) -> bool,
}

impl Bench<'_> {
    /// `hook SessionStart` in a project without a workflow.
    fn no_workflow_case(&self, groups: &mut Groups) -> Result {
        if !(self.wanted)("hook/none") {
            return Ok(());
        }
        let project = self.dir.join("no-workflow");
        fixtures::fresh_dir(&project)?;
        fixtures::git(&project, &["init", "--quiet"])?;
        groups.hook.push(hook_case(
            "hook/none",
            "`hook SessionStart`, no workflow",
            self.binary,
            &project,
            self.dir,
            Expect::Nothing,
        )?);
        Ok(())
    }

    /// The commands on a workflow of `n` phases, and the seed's scripts on the same workflow.
    fn phase_cases(&self, groups: &mut Groups, n: usize) -> Result {
        let keys = [
            "hook",
            "status",
            "resume",
            "complete",
            "seed-status",
            "seed-advance",
        ]
        .map(|kind| format!("{kind}/{n}"));
        if !keys.iter().any(|key| (self.wanted)(key)) {
            return Ok(());
        }
        eprintln!("  a workflow of {n} phases");
        let (dir, binary) = (self.dir, self.binary);
        let project = self
            .fixtures
            .phase_project(&dir.join(format!("phases-{n}")), n, true)?;
        self.fixtures.validate(&project.dir)?;
        let size = format!("{} phases", thousands(n as u64));
        groups.hook.push(hook_case(
            &keys[0],
            &format!("`hook SessionStart`, {size}"),
            binary,
            &project.dir,
            dir,
            Expect::Contains("additionalContext"),
        )?);
        groups.status.push(simple(
            &keys[1],
            &format!("`status --format json`, {size}"),
            binary,
            &["status", "--format", "json"],
            &project.dir,
        ));
        groups.status.push(simple(
            &format!("status-text/{n}"),
            &format!("`status`, {size}"),
            binary,
            &["status"],
            &project.dir,
        ));
        groups.resume.push(resume_case(
            &keys[2],
            &format!("`resume --dry-run --format json`, {size}"),
            binary,
            &project.dir,
        ));
        groups
            .complete
            .push(complete_case(&keys[3], &size, binary, &project, dir)?);
        if self.has_jq {
            let (status, advance) = seed_cases(
                &keys[4],
                &keys[5],
                &size,
                &project,
                &self.fixtures,
                &self.scripts,
                dir,
            )?;
            groups.seed.push(status);
            groups.seed_advance.push(advance);
        }
        Ok(())
    }

    /// `resume` on a workflow with a journal of `n` entries.
    fn journal_case(&self, groups: &mut Groups, n: u64) -> Result {
        let key = format!("journal/{n}");
        if !(self.wanted)(&key) {
            return Ok(());
        }
        eprintln!("  a journal of {n} entries");
        let project = self
            .fixtures
            .journal_project(&self.dir.join(format!("journal-{n}")), n)?;
        self.fixtures.validate(&project.dir)?;
        groups.journal.push(resume_case(
            &key,
            &format!(
                "`resume --dry-run --format json`, 100 phases without commits, {} journal entries",
                thousands(n)
            ),
            self.binary,
            &project.dir,
        ));
        Ok(())
    }

    /// `list` across git worktrees, next to the `find` it replaces; returns which directories
    /// each reads, when that could be traced.
    /// Push and pull over a `git daemon` on 127.0.0.1, which runs until the returned guard drops.
    fn sync_cases(&self, groups: &mut Groups) -> Result<Option<sync::Daemon>> {
        if !sync::KEYS.iter().any(|key| (self.wanted)(key)) {
            return Ok(None);
        }
        eprintln!("  a 1,000-entry workflow on a `git daemon` remote");
        let (cases, daemon) = sync::cases(&self.fixtures, self.dir, self.binary)?;
        groups.sync = cases;
        Ok(Some(daemon))
    }

    fn list_cases(&self, groups: &mut Groups, plan: &Plan) -> Result<Option<DirectoryReads>> {
        let list_key = format!("list/{}", plan.worktrees);
        let find_key = format!("find/{}", plan.worktrees);
        if !(self.wanted)(&list_key) && !(self.wanted)(&find_key) {
            return Ok(None);
        }
        eprintln!(
            "  {} worktrees of {} files",
            plan.worktrees, plan.files_per_worktree
        );
        let root_dir = self.dir.join("worktrees");
        let main = self
            .fixtures
            .worktrees(&root_dir, plan.worktrees, plan.files_per_worktree)?;
        let size = format!(
            "{} worktrees of {} files",
            plan.worktrees,
            thousands(plan.files_per_worktree as u64)
        );
        let list = Case {
            expect: Expect::Lines(plan.worktrees),
            ..simple(
                &list_key,
                &format!("`list`, {size}"),
                self.binary,
                &["list"],
                &main,
            )
        };
        let find_args: Vec<OsString> = vec![
            root_dir.clone().into(),
            "-name".into(),
            "state.json".into(),
            "-path".into(),
            "*/.claude/checkpoints/*".into(),
        ];
        let find = Case {
            key: find_key,
            label: format!(
                "`find <root> -name state.json -path '*/.claude/checkpoints/*'`, {size}"
            ),
            program: "find".into(),
            args: find_args,
            cwd: self.dir.to_owned(),
            stdin: None,
            setup: None,
            expect: Expect::Lines(plan.worktrees),
        };
        let reads = DirectoryReads {
            list: directory_reads(&list),
            find: directory_reads(&find),
        };
        groups.list.push(list);
        groups.list.push(find);
        Ok(Some(reads))
    }
}

/// Copies a binary to `to`, keeping it executable; returns `to`.
fn copy_binary(from: &Path, to: &Path) -> Result<PathBuf> {
    fs::copy(from, to).map_err(|err| {
        format!(
            "failed to copy `{}` to `{}`: {err}",
            from.display(),
            to.display()
        )
    })?;
    Ok(to.to_owned())
}

/// The cases by kind, in the order of the report.
#[derive(Default)]
struct Groups {
    floor: Vec<Case>,
    hook: Vec<Case>,
    guard: Vec<Case>,
    status: Vec<Case>,
    resume: Vec<Case>,
    complete: Vec<Case>,
    seed: Vec<Case>,
    seed_advance: Vec<Case>,
    list: Vec<Case>,
    journal: Vec<Case>,
    sync: Vec<Case>,
}

impl Groups {
    fn into_cases(self, wanted: &dyn Fn(&str) -> bool) -> Vec<Case> {
        [
            self.floor,
            self.hook,
            self.guard,
            self.status,
            self.resume,
            self.complete,
            self.seed,
            self.seed_advance,
            self.list,
            self.journal,
            self.sync,
        ]
        .into_iter()
        .flatten()
        .filter(|case| wanted(&case.key))
        .collect()
    }
}

/// Adds, after each case of `binary`, the same case run by `baseline` (its key ends in
/// `@baseline`), so both binaries are measured in the same rounds.
fn with_baseline(cases: &mut Vec<Case>, binary: &Path, baseline: &Path) {
    // The program, or an argument of a shell script that runs it (`sh -c <script> sh <binary>`).
    let swap = |program: &mut PathBuf, args: &mut Vec<OsString>| {
        if program == binary {
            baseline.clone_into(program);
        }
        for arg in args.iter_mut().filter(|arg| *arg == binary.as_os_str()) {
            *arg = baseline.into();
        }
    };
    let mut all = Vec::with_capacity(cases.len() * 2);
    for case in cases.drain(..) {
        let runs = |program: &Path, args: &[OsString]| {
            program == binary || args.iter().any(|arg| arg == binary.as_os_str())
        };
        let mut twin = runs(&case.program, &case.args).then(|| case.clone());
        all.push(case);
        if let Some(twin) = &mut twin {
            twin.key.push_str(harness::BASELINE_SUFFIX);
            twin.label.push_str(" (baseline)");
            swap(&mut twin.program, &mut twin.args);
            if let Some(Setup::Run { program, args, .. }) = &mut twin.setup {
                swap(program, args);
            }
        }
        all.extend(twin);
    }
    *cases = all;
}

fn simple(key: &str, label: &str, program: &Path, args: &[&str], cwd: &Path) -> Case {
    Case {
        key: key.into(),
        label: label.into(),
        program: program.to_owned(),
        args: args.iter().map(OsString::from).collect(),
        cwd: cwd.to_owned(),
        stdin: None,
        setup: None,
        expect: Expect::Anything,
    }
}

/// `checkpoint hook SessionStart` with Claude Code's payload on stdin.
fn hook_case(
    key: &str,
    label: &str,
    binary: &Path,
    project: &Path,
    dir: &Path,
    expect: Expect,
) -> Result<Case> {
    let payloads = dir.join("payloads");
    fs::create_dir_all(&payloads)
        .map_err(|err| format!("failed to create `{}`: {err}", payloads.display()))?;
    let payload = payloads.join(format!("{}.json", key.replace('/', "-")));
    fixtures::write_file(&payload, &fixtures::session_start_payload(project))?;
    Ok(Case {
        stdin: Some(payload),
        expect,
        ..simple(key, label, binary, &["hook", "SessionStart"], project)
    })
}

fn resume_case(key: &str, label: &str, binary: &Path, project: &Path) -> Case {
    Case {
        expect: Expect::Contains("\"plan\""),
        ..simple(
            key,
            label,
            binary,
            &["resume", "--dry-run", "--format", "json"],
            project,
        )
    }
}

/// `checkpoint complete` of the phase in progress, in a copy of the project; each run is
/// preceded by an untimed `start --force` of the same phase, so the state keeps its size.
fn complete_case(
    key: &str,
    size: &str,
    binary: &Path,
    project: &PhaseProject,
    dir: &Path,
) -> Result<Case> {
    let copy = dir.join(format!("phases-{}-write", project.n_phases));
    fixtures::remove_dir(&copy)?;
    fixtures::run_quiet(Command::new("cp").arg("-a").arg(&project.dir).arg(&copy))?;
    let phase = project.current();
    Ok(Case {
        setup: Some(Setup::Run {
            program: binary.to_owned(),
            args: vec!["start".into(), phase.clone().into(), "--force".into()],
            cwd: copy.clone(),
        }),
        expect: Expect::Contains("completed phase"),
        ..simple(
            key,
            &format!("`complete <phase> --force` (after an untimed `start --force`), {size}"),
            binary,
            // The fixture never writes the phase's declared output, which `complete` refuses
            // without `--force`.
            &["complete", &phase, "--force"],
            &copy,
        )
    })
}

/// The seed's status script and state write, over the equivalent `pipeline-state.json`.
fn seed_cases(
    status_key: &str,
    advance_key: &str,
    size: &str,
    project: &PhaseProject,
    fixtures: &Fixtures,
    scripts: &Path,
    dir: &Path,
) -> Result<(Case, Case)> {
    let state = fixtures::seed_state(project, fixtures.t0);
    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(&state).expect("JSON serializes")
    );
    let seed_dir = dir.join(format!("seed-{}", project.n_phases));
    fixtures::fresh_dir(&seed_dir.join(".claude"))?;
    let state_path = seed_dir.join(".claude").join("pipeline-state.json");
    let pristine = seed_dir.join("pipeline-state.pristine.json");
    let advanced = seed_dir.join(".claude").join("advanced-state.json");
    for path in [&state_path, &pristine, &advanced] {
        fixtures::write_file(path, &text)?;
    }
    let bash = Path::new("bash");
    let status_script = scripts.join("show-status.sh");
    let advance_script = scripts.join("advance.sh");
    let status = Case {
        args: vec![status_script.into(), state_path.into()],
        expect: Expect::Contains("Remaining ("),
        ..simple(
            status_key,
            &format!("seed: bash + jq status script, {size}"),
            bash,
            &[],
            &seed_dir,
        )
    };
    let sha = project
        .shas
        .iter()
        .flatten()
        .next()
        .map_or("0000000", |sha| &sha[..7]);
    let advance = Case {
        args: vec![
            advance_script.into(),
            advanced.clone().into(),
            sha.into(),
            format!("src/module_{:05}.rs", project.n_done).into(),
        ],
        setup: Some(Setup::Copy {
            from: pristine,
            to: advanced,
        }),
        expect: Expect::Nothing,
        ..simple(
            advance_key,
            &format!("seed: bash + jq state write after a phase (temp file + `mv`), {size}"),
            bash,
            &[],
            &seed_dir,
        )
    };
    Ok((status, advance))
}

/// The directories `list` and `find` read, where `strace` could tell.
struct DirectoryReads {
    list: Option<Vec<String>>,
    find: Option<Vec<String>>,
}

/// The directories a command lists (`getdents64` under `strace`), or `None` without strace.
fn directory_reads(case: &Case) -> Option<Vec<String>> {
    let log = env::temp_dir().join(format!(
        "checkpoint-bench-strace-{}.log",
        std::process::id()
    ));
    let status = Command::new("strace")
        .args(["-f", "-y", "-e", "trace=getdents64", "-o"])
        .arg(&log)
        .arg(&case.program)
        .args(&case.args)
        .current_dir(&case.cwd)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?;
    let text = fs::read_to_string(&log).ok();
    let _ = fs::remove_file(&log);
    if !status.success() {
        return None;
    }
    let mut dirs: Vec<String> = text?
        .lines()
        .filter_map(|line| {
            let rest = &line[line.find("getdents64(")?..];
            let start = rest.find('<')? + 1;
            let end = rest.find(">,")?;
            Some(rest[start..end].to_owned())
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    Some(dirs)
}

/// `12345` as `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut text = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
}
