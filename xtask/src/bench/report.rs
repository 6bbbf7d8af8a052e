//! The Markdown report: the machine, every case's times and ratios, and the targets.

use std::{fmt::Write as _, fs, path::Path, process::Command};

use crate::bench::{
    harness::{BASELINE_SUFFIX, Case, Samples},
    stats,
};

/// The keys of the two floors every ratio is taken against.
pub(crate) const TRUE_KEY: &str = "floor/true";
pub(crate) const EXIT_KEY: &str = "floor/exit";
/// The key of the floor for a durable write (not a ratio column).
pub(crate) const DURABLE_KEY: &str = "floor/durable";

/// What the numbers were measured on.
#[derive(Debug)]
pub(crate) struct Machine {
    cpu: String,
    cores: String,
    kernel: String,
    tools: Vec<String>,
    load_before: String,
}

impl Machine {
    pub(crate) fn describe() -> Self {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|line| {
                let (key, value) = line.split_once(':')?;
                (key.trim() == "model name").then(|| value.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown".into());
        let online = cpuinfo
            .lines()
            .filter(|line| line.starts_with("processor"))
            .count();
        let usable = std::thread::available_parallelism().map_or(0, usize::from);
        let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|text| text.trim().to_owned())
            .unwrap_or_else(|_| "unknown".into());
        let tools = [
            ("rustc", "-V"),
            ("git", "--version"),
            ("jq", "--version"),
            ("bash", "--version"),
        ]
        .iter()
        .map(|(tool, flag)| {
            let version = Command::new(tool)
                .arg(flag)
                .output()
                .ok()
                .filter(|output| output.status.success())
                .and_then(|output| {
                    String::from_utf8_lossy(&output.stdout)
                        .lines()
                        .next()
                        .map(str::to_owned)
                })
                .unwrap_or_else(|| "not found".into());
            format!("`{tool}`: {version}")
        })
        .collect();
        Self {
            cpu,
            cores: format!("{online} online, {usable} usable by this process"),
            kernel: format!("Linux {kernel}"),
            tools,
            load_before: load_average(),
        }
    }
}

/// The 1-, 5- and 15-minute load averages.
fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".into())
}

/// One target of the issue, as measured.
#[derive(Debug)]
pub(crate) struct Target {
    pub text: String,
    pub measured: String,
    /// `None` when this run did not measure it.
    pub met: Option<bool>,
    /// Whether missing it fails `cargo xtask bench` (a regression it guards against).
    pub guard: bool,
}

impl Target {
    /// A target met when the worst of a case's ratios (one per size) is at most `limit`; the
    /// measured column lists the ratios.
    pub(crate) fn worst(text: String, ratios: &[String], worst: Option<f64>, limit: f64) -> Target {
        Target {
            text,
            measured: if ratios.is_empty() {
                "–".into()
            } else {
                ratios.join(", ")
            },
            met: worst.map(|ratio| ratio <= limit),
            guard: false,
        }
    }

    /// A target that the cost does not grow with the size: `text`, met by a paired ratio of the
    /// largest case to the smallest (`flat`) of at most `limit` (above 1, for noise).
    pub(crate) fn flat(text: String, flat: Option<f64>, limit: f64) -> Target {
        Target {
            text,
            measured: flat.map_or_else(|| "–".into(), |ratio| format!("{ratio:.3}×")),
            met: flat.map(|ratio| ratio <= limit),
            guard: false,
        }
    }
}

/// Everything the report shows besides the cases.
pub(crate) struct Context<'a> {
    pub command: &'a str,
    pub binary: &'a str,
    pub baseline: Option<&'a str>,
    pub machine: &'a Machine,
    pub rounds: usize,
    pub warmups: usize,
    pub targets: &'a [Target],
    pub notes: &'a [String],
}

pub(crate) fn render(context: &Context<'_>, cases: &[Case], samples: &[Samples]) -> String {
    let floor = |key: &str| {
        cases
            .iter()
            .position(|case| case.key == key)
            .map(|index| &samples[index].secs)
    };
    let (true_secs, exit_secs) = (floor(TRUE_KEY), floor(EXIT_KEY));
    let mut text = String::new();
    let machine = context.machine;
    let _ = writeln!(text, "# `checkpoint` benchmarks\n");
    let _ = writeln!(text, "Command: `{}`.", context.command);
    let _ = writeln!(text, "Binary: {}.", context.binary);
    if let Some(baseline) = context.baseline {
        let _ = writeln!(text, "Baseline: {baseline}.");
    }
    let _ = writeln!(text);
    let _ = writeln!(text, "## Machine\n");
    let _ = writeln!(text, "- CPU: {}", machine.cpu);
    let _ = writeln!(text, "- Cores: {}", machine.cores);
    let _ = writeln!(text, "- Kernel: {}", machine.kernel);
    for tool in &machine.tools {
        let _ = writeln!(text, "- {tool}");
    }
    let _ = writeln!(
        text,
        "- Load average (1, 5, 15 min): {} before, {} after\n",
        machine.load_before,
        load_average()
    );
    let _ = writeln!(text, "## Results\n");
    let _ = writeln!(
        text,
        "The cases ran round-robin in {} rounds, in a new random order each round, after {} untimed runs each (the first checks the output). \
         Fast cases ran in every round; slower ones every 2nd, 4th, … round, so that they fit the time budget. \
         Each time is from spawning the process to reaping it, with stdout and stderr on `/dev/null`. \
         The ratios are paired: the median over rounds of (case time / floor time in the same round).\n",
        context.rounds, context.warmups
    );
    let _ = writeln!(
        text,
        "| Case | Runs | Median | p90 | × `/bin/true` | × Rust exit |"
    );
    let _ = writeln!(text, "| --- | ---: | ---: | ---: | ---: | ---: |");
    for (case, samples) in cases.iter().zip(samples) {
        let values = stats::present(&samples.secs);
        let ratio = |floor: Option<&Vec<Option<f64>>>| {
            floor
                .and_then(|floor| stats::paired_ratio(&samples.secs, floor))
                .map_or_else(|| "–".into(), |ratio| format!("{ratio:.2}×"))
        };
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {} | {} |",
            case.label,
            samples.runs(),
            millis(stats::median(&values)),
            millis(stats::quantile(&values, 0.9)),
            ratio(true_secs),
            ratio(exit_secs)
        );
    }
    if context.baseline.is_some() {
        render_baseline(&mut text, cases, samples);
    }
    let _ = writeln!(text, "\n## Targets\n");
    let _ = writeln!(text, "| Target | Measured | Result |");
    let _ = writeln!(text, "| --- | --- | --- |");
    for target in context.targets {
        let result = match target.met {
            Some(true) => "met",
            Some(false) => "**not met**",
            // Measured, with no goal (the 100,000-file snapshots, `undo`).
            None if target.measured != "–" => "measured",
            None => "not measured",
        };
        let _ = writeln!(text, "| {} | {} | {result} |", target.text, target.measured);
    }
    if !context.notes.is_empty() {
        let _ = writeln!(text, "\n## Notes\n");
        for note in context.notes {
            let _ = writeln!(text, "- {note}");
        }
    }
    text
}

/// Each case against the same case run by the baseline binary, paired by round.
fn render_baseline(text: &mut String, cases: &[Case], samples: &[Samples]) {
    let _ = writeln!(text, "\n## Against the baseline\n");
    let _ = writeln!(
        text,
        "Each case ran back to back with its baseline twin, in either order; the paired ratio is the median over rounds of (this binary's time / the baseline's), below 1 is faster.\n"
    );
    let _ = writeln!(text, "| Case | Median | Baseline median | Paired ratio |");
    let _ = writeln!(text, "| --- | ---: | ---: | ---: |");
    for (case, own) in cases.iter().zip(samples) {
        let twin_key = format!("{}{BASELINE_SUFFIX}", case.key);
        let Some(twin) = cases.iter().position(|case| case.key == twin_key) else {
            continue;
        };
        let twin = &samples[twin].secs;
        let median = |secs: &[Option<f64>]| stats::median(&stats::present(secs));
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} |",
            case.label,
            millis(median(&own.secs)),
            millis(median(twin)),
            stats::paired_ratio(&own.secs, twin)
                .map_or_else(|| "–".into(), |ratio| format!("{ratio:.3}×"))
        );
    }
}

/// A duration in milliseconds, to two decimals.
pub(crate) fn millis(secs: Option<f64>) -> String {
    secs.map_or_else(|| "–".into(), |secs| format!("{:.2} ms", secs * 1e3))
}

/// Writes every timed run as `case,round,seconds`.
pub(crate) fn write_raw(path: &Path, cases: &[Case], samples: &[Samples]) -> crate::Result {
    let mut text = String::from("case,round,seconds\n");
    for (case, samples) in cases.iter().zip(samples) {
        for (round, secs) in samples.secs.iter().enumerate() {
            if let Some(secs) = secs {
                let _ = writeln!(text, "{},{round},{secs:.9}", case.key);
            }
        }
    }
    fs::write(path, text).map_err(|err| format!("failed to write `{}`: {err}", path.display()))
}
