//! The hooks of a Claude Code `Workflow` run at 10, 100 and 1,000 agents (issue 39): `hook
//! Stop` and `hook SubagentStop` of a run caught up, each run after the client appended one
//! line to the run's journal (the catch-up reads only that line), and `hook Stop` with the
//! catch-up removed first (the full read every hook did before), for comparison; and at 1,000
//! agents, 16 agents finishing at once: their 16 `hook SubagentStop` run concurrently, as the
//! client runs them.

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
};

use serde_json::json;

use crate::{
    Result,
    bench::{
        effects_guard::checkpoint,
        fixtures,
        harness::{Case, Expect, Setup},
        report::Target,
        stats,
        targets::Lookup,
        thousands,
    },
};

/// The numbers of agents measured.
const SIZES: [usize; 3] = [10, 100, 1_000];
/// The hooks measured.
const KINDS: [(&str, &str); 3] = [
    ("stop", "`hook Stop`"),
    ("subagent-stop", "`hook SubagentStop` of an agent"),
    (
        "stop-full",
        "`hook Stop`, the run's files read whole (no catch-up)",
    ),
];
/// The goal of each caught-up hook at 1,000 agents, in seconds: well under a second.
const GOAL_SECS: f64 = 0.25;
/// How many agents finish at once in the concurrent case (the reproduction).
const CONCURRENT: usize = 16;
/// The key of the concurrent case.
const CONCURRENT_KEY: &str = "workflow-run/1000/subagent-stop-x16";
/// Its goal, in seconds, until all are done (so each, the slowest included, under it).
const CONCURRENT_GOAL_SECS: f64 = 1.0;
const SESSION: &str = "0b3c6e0e-bench-4d5e-9f00-5e5510a5e5ab";
const RUN: &str = "wf_bench-run";

fn key(n: usize, kind: &str) -> String {
    format!("workflow-run/{n}/{kind}")
}

/// A project whose launched run has `n` agents in two phases (all started, all but the last
/// `unfinished` finished, each result a paragraph), caught up once.
struct Fixture {
    project: PathBuf,
    transcript: PathBuf,
    run_dir: PathBuf,
}

impl Fixture {
    fn new(dir: &Path, binary: &Path, name: &str, n: usize, unfinished: usize) -> Result<Self> {
        let project = dir.join(name);
        fixtures::fresh_dir(&project)?;
        fixtures::git(&project, &["init", "--quiet"])?;
        fixtures::write_file(
            &project.join("flow.js"),
            "export const meta = { name: 'bench', description: 'Many agents', phases: [{ title: 'Design' }, { title: 'Build' }] };\n",
        )?;
        // The client's files live outside the project, as under `~/.claude/projects/`.
        let home = dir.join(format!("{name}-home"));
        fixtures::fresh_dir(&home)?;
        let fixture = Self {
            transcript: home.join(format!("{SESSION}.jsonl")),
            run_dir: home.join(SESSION).join("subagents/workflows").join(RUN),
            project,
        };
        let mut journal = String::from("{\"type\":\"launched\"}\n");
        for k in 0..n {
            let phase = if k < n / 10 { "Design" } else { "Build" };
            journal.push_str(&format!(
                "{{\"type\":\"started\",\"agentId\":\"agent{k}\",\"label\":\"{}:{k}\",\"phase\":\"{phase}\"}}\n",
                phase.to_lowercase()
            ));
        }
        for k in 0..n - unfinished {
            journal.push_str(&result_line(k));
        }
        std::fs::create_dir_all(&fixture.run_dir)
            .map_err(|err| format!("failed to create `{}`: {err}", fixture.run_dir.display()))?;
        fixtures::write_file(&fixture.journal(), &journal)?;
        let launch = fixture.payload(
            "PostToolUse",
            json!({
                "tool_name": "Workflow", "tool_use_id": "toolu_bench",
                "tool_input": { "scriptPath": "flow.js" },
                "tool_response": {
                    "status": "async_launched", "runId": RUN, "transcriptDir": fixture.run_dir,
                    "scriptPath": "flow.js",
                },
            }),
        );
        checkpoint(
            binary,
            &fixture.project,
            &["hook", "PostToolUse"],
            Some(&launch),
        )?;
        Ok(fixture)
    }

    fn journal(&self) -> PathBuf {
        self.run_dir.join("journal.jsonl")
    }

    /// A hook's payload of `event`, with the fields of `extra`.
    fn payload(&self, event: &str, extra: serde_json::Value) -> String {
        let mut payload = json!({
            "session_id": SESSION,
            "transcript_path": self.transcript,
            "cwd": self.project,
            "hook_event_name": event,
        });
        payload
            .as_object_mut()
            .expect("an object")
            .extend(extra.as_object().expect("an object").clone());
        format!("{payload}\n")
    }

    /// `SubagentStop` of agent `k`.
    fn subagent_stop(&self, k: usize) -> String {
        self.payload(
            "SubagentStop",
            json!({
                "agent_id": format!("agent{k}"), "agent_type": "workflow-subagent",
                "stop_hook_active": false,
                "agent_transcript_path": self.run_dir.join(format!("agent-agent{k}.jsonl")),
                "last_assistant_message": format!("the result of agent {k}"),
            }),
        )
    }
}

/// Agent `k`'s `result` line, a paragraph.
fn result_line(k: usize) -> String {
    let result = "A paragraph of what the agent did and found. ".repeat(20);
    format!("{{\"type\":\"result\",\"agentId\":\"agent{k}\",\"result\":\"{k}: {result}\"}}\n")
}

/// The cases: for each size, a [`Fixture`] whose last agent is unfinished, and at 1,000
/// agents the concurrent case; none unless one is `wanted`.
pub(crate) fn cases(dir: &Path, binary: &Path, wanted: &dyn Fn(&str) -> bool) -> Result<Vec<Case>> {
    let payloads = dir.join("payloads");
    std::fs::create_dir_all(&payloads)
        .map_err(|err| format!("failed to create `{}`: {err}", payloads.display()))?;
    let mut cases = Vec::new();
    for n in SIZES {
        if !KINDS.iter().any(|(kind, _)| wanted(&key(n, kind))) {
            continue;
        }
        eprintln!("  a `Workflow` run of {} agents", thousands(n as u64));
        let fixture = Fixture::new(dir, binary, &format!("workflow-run-{n}"), n, 1)?;
        let stop = fixture.payload("Stop", json!({ "stop_hook_active": false }));
        let payloads = [
            ("stop", stop.clone()),
            ("subagent-stop", fixture.subagent_stop(n - 1)),
            ("stop-full", stop),
        ];
        // A line the client appends between two hooks (a progress line of the run's own).
        let append = format!(
            "printf '%s\\n' '{{\"type\":\"progress\",\"agentId\":\"agent0\"}}' >> {}",
            crate::shell_quote(&fixture.journal().to_string_lossy())
        );
        let catchup = fixture.project.join(".claude/checkpoints");
        for (kind, text) in payloads {
            let file = dir
                .join("payloads")
                .join(format!("workflow-run-{n}-{kind}.json"));
            fixtures::write_file(&file, &text)?;
            let event = if kind == "subagent-stop" {
                "SubagentStop"
            } else {
                "Stop"
            };
            let script = if kind == "stop-full" {
                format!(
                    "{append} && rm -f {}/*/claude-run.catchup",
                    crate::shell_quote(&catchup.to_string_lossy())
                )
            } else {
                append.clone()
            };
            let label = KINDS
                .iter()
                .find(|(k, _)| *k == kind)
                .map_or(kind, |(_, label)| label);
            cases.push(Case {
                key: key(n, kind),
                label: format!("{label}, a run of {} agents", thousands(n as u64)),
                program: binary.to_owned(),
                args: vec![OsString::from("hook"), OsString::from(event)],
                cwd: fixture.project.clone(),
                stdin: Some(file),
                setup: Some(Setup::Run {
                    program: "/bin/sh".into(),
                    args: vec![OsString::from("-c"), OsString::from(script)],
                    cwd: fixture.project.clone(),
                }),
                expect: Expect::Anything,
            });
        }
    }
    if wanted(CONCURRENT_KEY) {
        cases.push(concurrent_case(dir, binary)?);
    }
    Ok(cases)
}

/// 16 agents of a run of 1,000 finish at once: before each run the project and the run's
/// files are put back as they were before (the last 16 agents started, the rest finished,
/// caught up) and the 16 `result` lines appended, then the 16 `hook SubagentStop` run
/// concurrently; the time is until the last is done, which bounds the slowest.
fn concurrent_case(dir: &Path, binary: &Path) -> Result<Case> {
    let n = 1_000;
    eprintln!(
        "  a `Workflow` run of {} agents, {CONCURRENT} finishing at once",
        thousands(n as u64)
    );
    let name = format!("workflow-run-{n}-x{CONCURRENT}");
    let fixture = Fixture::new(dir, binary, &name, n, CONCURRENT)?;
    let stop = fixture.payload("Stop", json!({ "stop_hook_active": false }));
    checkpoint(binary, &fixture.project, &["hook", "Stop"], Some(&stop))?;
    // The pristine copies the setup restores.
    let store = fixture.project.join(".claude/checkpoints");
    let pristine = dir.join(format!("{name}-pristine"));
    fixtures::fresh_dir(&pristine)?;
    let q = |path: &Path| crate::shell_quote(&path.to_string_lossy());
    let copy = format!(
        "cp -a {} {} && cp -a {} {}",
        q(&store),
        q(&pristine.join("store")),
        q(&fixture.run_dir),
        q(&pristine.join("run"))
    );
    fixtures::run_quiet(
        std::process::Command::new("/bin/sh")
            .args(["-c", &copy])
            .current_dir(&fixture.project),
    )?;
    let mut results = String::new();
    let mut hooks = String::new();
    for k in n - CONCURRENT..n {
        results.push_str(&result_line(k));
        let file = dir
            .join("payloads")
            .join(format!("{name}-subagent-stop-{k}.json"));
        fixtures::write_file(&file, &fixture.subagent_stop(k))?;
        hooks.push_str(&format!(
            "{} hook SubagentStop < {} > /dev/null 2>&1 &\n",
            q(binary),
            q(&file)
        ));
    }
    let results_file = pristine.join("results.jsonl");
    fixtures::write_file(&results_file, &results)?;
    // Put back in place: each file written over (so that the journals keep their inodes, as
    // between two real hooks: a copy of the run's journal is another file, which the catch-up
    // rightly reads whole, and so is a copy of the store's journal to its check), the kept
    // results replaced.
    let workflow = store.join(RUN);
    let saved = pristine.join("store").join(RUN);
    let setup = format!(
        "find {saved} -maxdepth 1 -type f -exec cp {{}} {workflow}/ \\; && rm -rf {workflow}/results && cp -a {saved}/results {workflow}/results && cp {} {} && cat {} >> {}",
        q(&pristine.join("run").join("journal.jsonl")),
        q(&fixture.journal()),
        q(&results_file),
        q(&fixture.journal()),
        saved = q(&saved),
        workflow = q(&workflow),
    );
    Ok(Case {
        key: CONCURRENT_KEY.to_owned(),
        label: format!(
            "{CONCURRENT} concurrent `hook SubagentStop` of agents that just finished, a run of {} agents (until the last is done)",
            thousands(n as u64)
        ),
        program: "/bin/sh".into(),
        args: vec![OsString::from("-c"), OsString::from(format!("{hooks}wait"))],
        cwd: fixture.project.clone(),
        stdin: None,
        setup: Some(Setup::Run {
            program: "/bin/sh".into(),
            args: vec![OsString::from("-c"), OsString::from(setup)],
            cwd: fixture.project.clone(),
        }),
        expect: Expect::Anything,
    })
}

/// The slowest run of case `key`, in seconds.
fn slowest(lookup: &Lookup<'_>, key: &str) -> Option<f64> {
    stats::present(lookup.secs(key)?)
        .into_iter()
        .reduce(f64::max)
}

/// The goals: each caught-up hook under [`GOAL_SECS`] at 1,000 agents, its slowest run too
/// (a median hides the hooks that read the whole run again), and the medians at each size, so
/// that flat shows; the concurrent hooks all done under [`CONCURRENT_GOAL_SECS`].
pub(crate) fn targets(lookup: &Lookup<'_>) -> Vec<Target> {
    let mut targets: Vec<Target> = KINDS
        .iter()
        .map(|(kind, label)| {
            let medians: Vec<String> = SIZES
                .iter()
                .filter_map(|n| {
                    let secs = lookup.median(&key(*n, kind))?;
                    Some(format!("{}: {:.1} ms", thousands(*n as u64), secs * 1e3))
                })
                .collect();
            let largest = slowest(lookup, &key(1_000, kind));
            let mut measured = if medians.is_empty() {
                "–".into()
            } else {
                medians.join(", ")
            };
            if let Some(secs) = largest {
                measured.push_str(&format!(" (slowest at 1,000: {:.1} ms)", secs * 1e3));
            }
            Target {
                text: format!(
                    "{label} of a `Workflow` run, medians at 10, 100 and 1,000 agents (goal for the caught-up hooks: every run under {:.0} ms at 1,000)",
                    GOAL_SECS * 1e3
                ),
                measured,
                met: if *kind == "stop-full" {
                    None
                } else {
                    largest.map(|secs| secs <= GOAL_SECS)
                },
                guard: false,
            }
        })
        .collect();
    let all_done = lookup.median(CONCURRENT_KEY);
    targets.push(Target {
        text: format!(
            "{CONCURRENT} concurrent `hook SubagentStop` at 1,000 agents, until the last is done (so the slowest hook too), under {:.0} ms",
            CONCURRENT_GOAL_SECS * 1e3
        ),
        measured: match (all_done, slowest(lookup, CONCURRENT_KEY)) {
            (Some(median), Some(max)) => format!(
                "median {:.1} ms, slowest {:.1} ms",
                median * 1e3,
                max * 1e3
            ),
            _ => "–".into(),
        },
        met: slowest(lookup, CONCURRENT_KEY).map(|secs| secs <= CONCURRENT_GOAL_SECS),
        guard: false,
    });
    targets
}
