//! `cargo xtask fuzz`: a bounded run of every cargo-fuzz target (libFuzzer) over its seed corpus,
//! printing one summary line per target and keeping the full output in `target/fuzz-logs/`.

#[cfg(test)]
mod tests;

use std::{fs, path::Path, process::Stdio};

use crate::{Result, cargo, describe, run_checked};

/// The fuzz targets in `fuzz/fuzz_targets/`, one per parser.
const TARGETS: &[&str] = &["state", "journal", "plan", "redact", "seeds"];

/// What one target's run did, read from libFuzzer's output.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    /// Inputs executed (`Done <n> runs`, or the last status line's count).
    pub runs: Option<u64>,
    /// Seconds the run took, by libFuzzer's count.
    pub seconds: Option<u64>,
    /// Coverage points at the end (`cov:`).
    pub coverage: Option<u64>,
    /// Inputs that reached new coverage and were added to the corpus (`stat::new_units_added`).
    pub new_units: Option<u64>,
    /// The file libFuzzer wrote the crashing input to, or the first line of the error.
    pub crash: Option<String>,
}

/// Installs cargo-fuzz if needed (into cargo's own `bin` directory, outside the repository),
/// builds every target, then (unless `build_only`) runs each target for `seconds`.
pub(crate) fn run(root: &Path, seconds: u32, build_only: bool) -> Result {
    let installed = cargo()
        .args(["fuzz", "--version"])
        .output()
        .is_ok_and(|output| output.status.success());
    if !installed {
        run_checked(cargo().args(["install", "cargo-fuzz", "--locked"]))?;
    }
    // The lock file as committed (cargo-fuzz would update it silently), then every target in
    // one build, linking side by side, with the flags of `cargo fuzz run` below, which then
    // finds them built.
    run_checked(
        cargo()
            .args([
                "metadata",
                "--manifest-path",
                "fuzz/Cargo.toml",
                "--locked",
                "--format-version",
                "1",
            ])
            .stdout(Stdio::null()),
    )?;
    run_checked(
        cargo()
            .args(["fuzz", "build", "--fuzz-dir", "fuzz", "-O"])
            .env("RUSTC_BOOTSTRAP", "1"),
    )?;
    if build_only {
        return Ok(());
    }
    let logs = crate::target_dir(root).join("fuzz-logs");
    fs::create_dir_all(&logs)
        .map_err(|err| format!("failed to create `{}`: {err}", logs.display()))?;
    let mut failed = Vec::new();
    for target in TARGETS {
        let corpus = crate::target_dir(root).join("fuzz-corpus").join(target);
        fs::create_dir_all(&corpus)
            .map_err(|err| format!("failed to create `{}`: {err}", corpus.display()))?;
        let seeds = root.join("fuzz").join("seeds").join(target);
        let log = logs.join(format!("{target}.log"));
        let mut command = cargo();
        command
            .args(["fuzz", "run", "--fuzz-dir", "fuzz", "-O", target])
            .arg(&corpus)
            .arg(&seeds)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg("-print_final_stats=1")
            // cargo-fuzz asks for nightly flags; the stable toolchain accepts them with this.
            .env("RUSTC_BOOTSTRAP", "1");
        eprintln!("$ {}", describe(&command));
        let file = fs::File::create(&log)
            .map_err(|err| format!("failed to create `{}`: {err}", log.display()))?;
        let err_file = file
            .try_clone()
            .map_err(|err| format!("failed to open `{}`: {err}", log.display()))?;
        let status = command
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(err_file)
            .status()
            .map_err(|err| format!("failed to run `{}`: {err}", describe(&command)))?;
        let output = fs::read_to_string(&log).unwrap_or_default();
        let mut summary = summarize(&output);
        if !status.success() && summary.crash.is_none() {
            summary.crash = Some(format!("exited with {status}"));
        }
        let shown = log.strip_prefix(root).unwrap_or(&log).display().to_string();
        eprintln!(
            "fuzz {target}: {} (full log: {shown})",
            describe_summary(&summary)
        );
        if summary.crash.is_some() {
            let tail: Vec<&str> = output.lines().rev().take(30).collect();
            for line in tail.iter().rev() {
                eprintln!("  | {line}");
            }
            failed.push(*target);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("fuzz targets failed: {}", failed.join(", ")))
    }
}

/// Reads libFuzzer's output: its `-print_final_stats` lines, its status lines (`#123 DONE cov:
/// 456 …`), `Done <n> runs in <s> second(s)`, and a crash's `SUMMARY:` and artifact lines.
pub(crate) fn summarize(output: &str) -> Summary {
    let number_after = |line: &str, key: &str| -> Option<u64> {
        let rest = &line[line.find(key)? + key.len()..];
        rest.trim_start()
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    };
    let mut summary = Summary::default();
    for line in output.lines() {
        if let Some(runs) = number_after(line, "stat::number_of_executed_units:") {
            summary.runs = Some(runs);
        } else if line.starts_with("Done ") && line.contains(" runs in ") {
            summary.runs = number_after(line, "Done ");
            summary.seconds = number_after(line, " runs in ");
        } else if let Some(units) = number_after(line, "stat::new_units_added:") {
            summary.new_units = Some(units);
        }
        if line.starts_with('#') && line.contains(" cov: ") {
            summary.coverage = number_after(line, " cov: ");
            if summary.runs.is_none() {
                summary.runs = number_after(line, "#");
            }
        }
        let crashed = line.contains("ERROR: libFuzzer:")
            || line.starts_with("SUMMARY: ")
            || line.contains("panicked at");
        if crashed && summary.crash.is_none() {
            summary.crash = Some(line.trim().to_owned());
        }
        if let Some(path) = line
            .split("Test unit written to ")
            .nth(1)
            .filter(|_| summary.crash.is_some())
        {
            summary.crash = Some(format!("crash input in {}", path.trim()));
        }
    }
    summary
}

fn describe_summary(summary: &Summary) -> String {
    let known = |value: Option<u64>| value.map_or("?".to_owned(), |value| value.to_string());
    format!(
        "{} runs in {} s, coverage {}, {} new inputs, {}",
        known(summary.runs),
        known(summary.seconds),
        known(summary.coverage),
        known(summary.new_units),
        summary.crash.as_deref().unwrap_or("no crash")
    )
}
