//! The README's tour, run verbatim: every `sh` block of "A 60-second tour", line by line, in a
//! scratch git repository with `checkpoint` on PATH, as a newcomer would type it.
//!
//! `cargo xtask test` points `CHECKPOINT_TOUR_BIN_DIR` at the `checkpoint` its install step put
//! in a scratch prefix; without it, the tour runs the binary under test.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use crate::support::{TestEnv, bin};

/// The tour's heading in the README.
const TOUR_HEADING: &str = "## A 60-second tour";

/// A fenced block of the tour: its info string (`sh`, or empty for shown output) and its lines.
#[derive(Debug)]
struct Block {
    info: String,
    lines: Vec<String>,
}

/// The fenced blocks between the tour's heading and the next `## ` heading.
fn tour_blocks(readme: &str) -> Vec<Block> {
    let start = readme
        .find(TOUR_HEADING)
        .unwrap_or_else(|| panic!("the README has no `{TOUR_HEADING}` section"));
    let section = &readme[start + TOUR_HEADING.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for line in section.lines() {
        match (line.strip_prefix("```"), open.take()) {
            (Some(info), None) => {
                open = Some(Block {
                    info: info.trim().to_owned(),
                    lines: Vec::new(),
                })
            }
            (Some(_), Some(block)) => blocks.push(block),
            (None, Some(mut block)) => {
                block.lines.push(line.to_owned());
                open = Some(block);
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "an unclosed code block in the tour");
    blocks
}

/// The directory whose `checkpoint` the tour runs.
fn bin_dir() -> PathBuf {
    match std::env::var_os("CHECKPOINT_TOUR_BIN_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => bin().parent().unwrap().to_owned(),
    }
}

/// Runs one line of the README with `sh`, in the project, with `checkpoint` on PATH.
fn run_line(env: &TestEnv, bin_dir: &Path, line: &str) -> std::process::Output {
    let path = std::env::join_paths(std::iter::once(bin_dir.to_owned()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let mut command = Command::new("sh");
    command
        .args(["-c", line])
        .envs(
            env.cmd()
                .get_envs()
                .filter_map(|(key, value)| Some((key.to_owned(), value?.to_owned()))),
        )
        .env("PATH", path)
        .current_dir(env.project());
    command.output().unwrap()
}

#[test]
fn the_readme_tour_runs_verbatim_and_shows_what_it_says() {
    let readme_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(&readme_path).unwrap();
    let blocks = tour_blocks(&readme);
    assert!(
        blocks.iter().filter(|block| block.info == "sh").count() >= 2,
        "{blocks:#?}"
    );
    let env = TestEnv::bare();
    let git = Command::new("git")
        .args(["init", "--quiet"])
        .current_dir(env.project())
        .env("HOME", env.dir.path().join("home"))
        .status()
        .expect("the tour test needs git");
    assert!(git.success());
    let bin_dir = bin_dir();
    assert!(
        bin_dir.join("checkpoint").is_file(),
        "no `checkpoint` in `{}`",
        bin_dir.display()
    );

    let mut last_stdout: Option<(String, String)> = None;
    let mut n_checked = 0;
    for block in &blocks {
        if block.info == "sh" {
            for line in block.lines.iter().filter(|line| !line.trim().is_empty()) {
                let output = run_line(&env, &bin_dir, line);
                let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
                let stderr = String::from_utf8_lossy(&output.stderr);
                assert!(
                    output.status.success(),
                    "the README's `{line}` failed with {}\n{stdout}{stderr}",
                    output.status
                );
                assert!(
                    !stderr.contains("error") && !stdout.contains("error ["),
                    "the README's `{line}` reported an error\n{stdout}{stderr}"
                );
                last_stdout = Some((line.clone(), stdout));
            }
        } else {
            // Shown output: what the last command of the block before it printed.
            let (line, stdout) = last_stdout
                .take()
                .expect("an output block follows a command block");
            let shown = block.lines.join("\n");
            assert_eq!(
                stdout.trim_end(),
                shown.trim_end(),
                "the README shows other output for `{line}`"
            );
            n_checked += 1;
        }
    }
    assert!(n_checked >= 1, "the tour shows no output to check");

    let validate = run_line(&env, &bin_dir, "checkpoint validate --format json");
    let report: serde_json::Value = serde_json::from_slice(&validate.stdout)
        .unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(&validate.stdout)));
    assert_eq!(validate.status.code(), Some(0), "{report:#}");
    assert_eq!(report["findings"], serde_json::json!([]), "{report:#}");
}
