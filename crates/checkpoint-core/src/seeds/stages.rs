//! Every stage of every seed system, written the way its own document describes the state file
//! (`tests/fixtures/seed-stages/<format>/<stage>/`): the next action and the resume text each stage
//! must give, and an export after the import that gives back the whole document.
//!
//! Each stage's `expect.json` holds `now`, the expected `next` action (`action`, `phase`, `task`),
//! whether a person must decide, texts the resume prompt must contain, the commits the repository
//! lacks, or, for a malformed file, the `error`'s line, column and field.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

use crate::{
    Config, Error,
    resume::{PlanOptions, Probe, plan, render_prompt, validate},
    seeds::{ImportOptions, SeedFormat, export, import, locate, read_source},
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    now: Option<DateTime<Utc>>,
    next: Option<ExpectNext>,
    #[serde(default)]
    decision_required: bool,
    #[serde(default)]
    prompt: Vec<String>,
    #[serde(default)]
    missing_commits: Vec<String>,
    /// Texts the resume text must contain whatever the next action, even when every recorded
    /// commit is missing and a person must decide first: what the workflow and its step are for.
    #[serde(default)]
    text: Vec<String>,
    error: Option<ExpectError>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectNext {
    action: String,
    phase: Option<String>,
    task: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectError {
    line: usize,
    column: usize,
    field: String,
}

/// The world of a fixture: its files, and a repository that has every commit but the missing ones.
struct FixtureProbe {
    root: PathBuf,
    missing_commits: Vec<String>,
    /// Whether the repository lacks every commit (another clone).
    no_commits: bool,
}

impl Probe for FixtureProbe {
    fn file_size(&self, path: &str) -> Option<u64> {
        let meta = std::fs::metadata(self.root.join(path)).ok()?;
        Some(if meta.is_dir() { u64::MAX } else { meta.len() })
    }
    fn git_branch(&self) -> Option<String> {
        None
    }
    fn commit_exists(&self, sha: &str) -> Option<bool> {
        Some(!self.no_commits && !self.missing_commits.iter().any(|missing| missing == sha))
    }
    fn worktree(&self) -> Option<String> {
        None
    }
}

fn stages_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/seed-stages")
}

/// The stages of a format, by directory name.
fn stages(format: SeedFormat) -> Vec<(String, PathBuf)> {
    let mut stages: Vec<(String, PathBuf)> = std::fs::read_dir(stages_root().join(format.name()))
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                path,
            )
        })
        .collect();
    stages.sort();
    stages
}

fn read(path: &Path) -> Vec<u8> {
    crate::fsx::read_limited(path).unwrap().unwrap()
}

fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

/// What is wrong with one stage, or nothing.
fn check_stage(format: SeedFormat, dir: &Path) -> Vec<String> {
    let expect: Expect = serde_json::from_slice(&read(&dir.join("expect.json"))).unwrap();
    let mut problems = Vec::new();
    let found = locate(dir, None).unwrap();
    if found.format != format {
        problems.push(format!("recognised as {}", found.format));
        return problems;
    }
    let before = read(&found.path);
    let now = expect
        .now
        .unwrap_or_else(|| "2026-03-01T12:00:00Z".parse().unwrap());
    let options = ImportOptions { id: None, now };
    let imported = read_source(format, &found.path)
        .and_then(|source| import(format, &source, &options).map(|workflow| (source, workflow)));
    if let Some(error) = &expect.error {
        match imported {
            Ok(_) => problems.push("a malformed file was imported".into()),
            Err(err @ Error::SeedParse { .. }) => {
                let Error::SeedParse { path, message, .. } = &err else {
                    unreachable!()
                };
                let wanted = [
                    format!("line {} column {}", error.line, error.column),
                    format!("field `{}`", error.field),
                ];
                for wanted in wanted {
                    if !message.contains(&wanted) {
                        problems.push(format!("the error `{message}` does not say `{wanted}`"));
                    }
                }
                if path != &found.path {
                    problems.push(format!("the error names `{}`", path.display()));
                }
            }
            Err(err) => problems.push(format!("unexpected error: {err}")),
        }
        assert_eq!(read(&found.path), before, "left untouched");
        return problems;
    }
    let (source, workflow) = match imported {
        Ok(imported) => imported,
        Err(err) => {
            problems.push(format!("import failed: {err}"));
            return problems;
        }
    };

    // The whole document comes back: numbers, nulls and key presence included.
    match export(format, &workflow) {
        Ok(exported) => {
            if parse(&exported.bytes) != parse(&source.main.bytes) {
                problems.push(format!(
                    "export differs from the file:\n{}",
                    String::from_utf8_lossy(&exported.bytes)
                ));
            }
            let companions: Vec<(&str, Value)> = exported
                .companions
                .iter()
                .map(|(name, bytes)| (name.as_str(), parse(bytes)))
                .collect();
            let expected: Vec<(&str, Value)> = source
                .execution
                .iter()
                .map(|file| ("execution.json", parse(&file.bytes)))
                .collect();
            if companions != expected {
                problems.push(format!("companions differ: {companions:?}"));
            }
        }
        Err(err) => problems.push(format!("export failed: {err}")),
    }

    let probe = FixtureProbe {
        root: dir.to_owned(),
        missing_commits: expect.missing_commits.clone(),
        no_commits: false,
    };
    let config = Config::default();
    let plan_with = |probe: &FixtureProbe| {
        let findings = validate(&workflow, &[], probe, &config, now);
        let options = PlanOptions {
            config: config.clone(),
            now,
        };
        plan(&workflow, findings, probe, &options)
    };
    for no_commits in [false, true] {
        let probe = FixtureProbe {
            root: dir.to_owned(),
            missing_commits: expect.missing_commits.clone(),
            no_commits,
        };
        let prompt = render_prompt(&plan_with(&probe), now, 100_000);
        for wanted in &expect.text {
            if !prompt.contains(wanted.as_str()) {
                problems.push(format!(
                    "the resume text (commits missing: {no_commits}) lacks `{wanted}`:\n{prompt}"
                ));
            }
        }
    }
    let plan = plan_with(&probe);
    let next = &plan.next;
    let got = (
        next.action.to_string(),
        next.phase.as_ref().map(ToString::to_string),
        next.task.as_ref().map(ToString::to_string),
    );
    if let Some(wanted) = &expect.next {
        let wanted = (
            wanted.action.clone(),
            wanted.phase.clone(),
            wanted.task.clone(),
        );
        if got != wanted {
            problems.push(format!(
                "next action {got:?}, expected {wanted:?}: {}",
                next.reason
            ));
        }
    }
    if plan.decision_required != expect.decision_required {
        problems.push(format!(
            "decision_required is {}, expected {}",
            plan.decision_required, expect.decision_required
        ));
    }
    let prompt = render_prompt(&plan, now, 100_000);
    for wanted in &expect.prompt {
        if !prompt.contains(wanted.as_str()) {
            problems.push(format!("the resume text lacks `{wanted}`:\n{prompt}"));
        }
    }
    problems
}

#[test]
fn every_stage_of_every_seed_resumes_by_its_rules_and_round_trips() {
    let mut problems = Vec::new();
    let mut n_stages = 0;
    for format in SeedFormat::ALL {
        for (stage, dir) in stages(format) {
            n_stages += 1;
            for problem in check_stage(format, &dir) {
                problems.push(format!("{format}/{stage}: {problem}"));
            }
        }
    }
    assert!(n_stages >= 35, "the stages are all there: {n_stages}");
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn every_format_has_every_stage_its_document_describes() {
    for format in SeedFormat::ALL {
        let names: Vec<String> = stages(format).into_iter().map(|(name, _)| name).collect();
        for stage in ["fresh", "mid-run", "failed", "complete", "malformed"] {
            assert!(
                names.iter().any(|name| name == stage),
                "{format} has {stage}"
            );
        }
    }
}
