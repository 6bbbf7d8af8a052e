//! The measuring loop: every case is checked once, warmed up, then timed in round-robin rounds
//! (each in a new random order), so that drift over the run hits all cases alike.

use std::{
    ffi::OsString,
    fs,
    path::PathBuf,
    process::{Command, Stdio},
    time::Instant,
};

use crate::{Result, bench::stats};

/// Environment variables of `checkpoint` that must not leak into the measured commands.
pub(crate) const CLEARED_VARS: &[&str] = &[
    "CHECKPOINT_DIR",
    "CHECKPOINT_WORKFLOW",
    "CHECKPOINT_TEST_NOW",
    "CHECKPOINT_LOCK_TIMEOUT",
];

/// The end of the key of a case run by the `--baseline` binary.
pub(crate) const BASELINE_SUFFIX: &str = "@baseline";

/// One measured command.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    /// A short stable name, for `--filter` and `raw.csv`: `status/100`.
    pub key: String,
    /// What the row of the report says.
    pub label: String,
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// A file fed on stdin (the hook payload); stdin is empty otherwise.
    pub stdin: Option<PathBuf>,
    /// Run before every timed run, untimed.
    pub setup: Option<Setup>,
    /// What the first run's stdout must look like.
    pub expect: Expect,
}

/// Untimed preparation of a run.
#[derive(Debug, Clone)]
pub(crate) enum Setup {
    /// Runs a command, which must succeed.
    Run {
        program: PathBuf,
        args: Vec<OsString>,
        cwd: PathBuf,
    },
    /// Copies a pristine file over the one the case changes.
    Copy { from: PathBuf, to: PathBuf },
}

/// The check of a case's output, run once before timing.
#[derive(Debug, Clone)]
pub(crate) enum Expect {
    /// No output at all.
    Nothing,
    /// stdout contains this text.
    Contains(&'static str),
    /// stdout has this many lines.
    Lines(usize),
    /// Any output.
    Anything,
}

/// How the rounds are run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Schedule {
    /// Rounds; the fastest cases run in every one.
    pub rounds: usize,
    /// Untimed runs of each case before the rounds (the first is the output check).
    pub warmups: usize,
    /// A case that would take longer than this over all rounds runs less often.
    pub budget_secs: f64,
    /// But at least this many times.
    pub min_runs: usize,
}

/// The times of one case, by round.
#[derive(Debug)]
pub(crate) struct Samples {
    pub secs: Vec<Option<f64>>,
}

impl Samples {
    pub(crate) fn runs(&self) -> usize {
        self.secs.iter().flatten().count()
    }
}

impl Case {
    fn command(&self) -> Result<Command> {
        let mut command = Command::new(&self.program);
        command.args(&self.args).current_dir(&self.cwd);
        for var in CLEARED_VARS {
            command.env_remove(var);
        }
        let stdin = match &self.stdin {
            Some(path) => Stdio::from(
                fs::File::open(path)
                    .map_err(|err| format!("failed to open `{}`: {err}", path.display()))?,
            ),
            None => Stdio::null(),
        };
        command.stdin(stdin);
        Ok(command)
    }

    fn describe(&self) -> String {
        let mut text = crate::describe(Command::new(&self.program).args(&self.args));
        if let Some(stdin) = &self.stdin {
            text.push_str(&format!(" < {}", stdin.display()));
        }
        format!("{text} (in {})", self.cwd.display())
    }

    /// Runs once with the output captured, and checks it.
    fn check(&self) -> Result {
        self.prepare()?;
        let output = self
            .command()?
            .output()
            .map_err(|err| format!("failed to run `{}`: {err}", self.describe()))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let fail = |why: &str| {
            Err(format!(
                "case `{}` {why}: `{}`\n--- stdout ---\n{}\n--- stderr ---\n{}",
                self.key,
                self.describe(),
                stdout.chars().take(2000).collect::<String>(),
                stderr.chars().take(2000).collect::<String>()
            ))
        };
        if !output.status.success() {
            return fail(&format!("exited with {}", output.status));
        }
        if !stderr.is_empty() {
            return fail("wrote to stderr");
        }
        match self.expect {
            Expect::Nothing if !stdout.is_empty() => fail("printed something"),
            Expect::Contains(text) if !stdout.contains(text) => {
                fail(&format!("did not print `{text}`"))
            }
            Expect::Lines(n) if stdout.lines().count() != n => {
                fail(&format!("did not print {n} lines"))
            }
            _ => Ok(()),
        }
    }

    fn prepare(&self) -> Result {
        match &self.setup {
            None => Ok(()),
            Some(Setup::Copy { from, to }) => fs::copy(from, to).map(|_| ()).map_err(|err| {
                format!(
                    "failed to copy `{}` to `{}`: {err}",
                    from.display(),
                    to.display()
                )
            }),
            Some(Setup::Run { program, args, cwd }) => {
                let mut command = Command::new(program);
                command
                    .args(args)
                    .current_dir(cwd)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null());
                for var in CLEARED_VARS {
                    command.env_remove(var);
                }
                let output = command
                    .output()
                    .map_err(|err| format!("failed to run the setup of `{}`: {err}", self.key))?;
                if output.status.success() {
                    Ok(())
                } else {
                    Err(format!(
                        "the setup of `{}` failed: {}",
                        self.key,
                        String::from_utf8_lossy(&output.stderr)
                    ))
                }
            }
        }
    }

    /// One timed run: from spawning the process to reaping it.
    fn time(&self) -> Result<f64> {
        self.prepare()?;
        let mut command = self.command()?;
        command.stdout(Stdio::null()).stderr(Stdio::null());
        let started = Instant::now();
        let status = command
            .status()
            .map_err(|err| format!("failed to run `{}`: {err}", self.describe()))?;
        let secs = started.elapsed().as_secs_f64();
        if !status.success() {
            return Err(format!("`{}` exited with {status}", self.describe()));
        }
        Ok(secs)
    }
}

/// Checks, warms up and measures every case.
pub(crate) fn measure(cases: &[Case], schedule: Schedule) -> Result<Vec<Samples>> {
    let mut strides = Vec::with_capacity(cases.len());
    for case in cases {
        case.check()?;
        // The budget counts the untimed setup too: it takes the run's time all the same.
        let started = Instant::now();
        let mut timed = 0.0;
        for _ in 1..schedule.warmups {
            timed += case.time()?;
        }
        let n_warm = schedule.warmups.saturating_sub(1).max(1) as f64;
        let wall = started.elapsed().as_secs_f64() / n_warm;
        let stride = stats::stride(
            schedule.rounds,
            wall,
            schedule.budget_secs,
            schedule.min_runs,
        );
        eprintln!(
            "  {:<20} {:>9.2} ms warm, {} runs",
            case.key,
            timed / n_warm * 1e3,
            schedule.rounds.div_ceil(stride)
        );
        strides.push(stride);
    }
    let mut samples: Vec<Samples> = strides
        .iter()
        .map(|_| Samples {
            secs: vec![None; schedule.rounds],
        })
        .collect();
    let started = Instant::now();
    let mut units = units(cases);
    for unit in &units {
        // A case and its twin run in the same rounds.
        let stride = unit.iter().map(|&index| strides[index]).min().unwrap_or(1);
        for &index in unit {
            strides[index] = stride;
        }
    }
    let mut random = SplitMix64(0x5eed_c0ff_ee00_0001);
    for round in 0..schedule.rounds {
        // A new order every round, so that no case always follows the same one (a case that
        // walks a big tree evicts caches the next one would find warm); a case and its twin
        // run back to back, in either order.
        for i in (1..units.len()).rev() {
            units.swap(i, (random.next() % (i as u64 + 1)) as usize);
        }
        for unit in &mut units {
            if random.next() % 2 == 1 {
                unit.reverse();
            }
            for &index in unit.iter() {
                if round % strides[index] == 0 {
                    samples[index].secs[round] = Some(cases[index].time()?);
                }
            }
        }
        if (round + 1) % 10 == 0 || round + 1 == schedule.rounds {
            eprintln!(
                "  round {}/{} ({:.0} s)",
                round + 1,
                schedule.rounds,
                started.elapsed().as_secs_f64()
            );
        }
    }
    Ok(samples)
}

/// The cases that run back to back: each case with its baseline twin, if any.
fn units(cases: &[Case]) -> Vec<Vec<usize>> {
    let mut units = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        if case.key.ends_with(BASELINE_SUFFIX) {
            continue;
        }
        let twin_key = format!("{}{BASELINE_SUFFIX}", case.key);
        let mut unit = vec![index];
        unit.extend(cases.iter().position(|other| other.key == twin_key));
        units.push(unit);
    }
    units
}

/// A small deterministic pseudo-random generator (SplitMix64), for the order of the rounds.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}
