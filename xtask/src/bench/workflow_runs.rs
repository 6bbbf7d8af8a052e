//! The hooks of a Claude Code `Workflow` run at 10, 100 and 1,000 agents (issue 39): `hook
//! Stop` and `hook SubagentStop` of a run caught up, each run after the client appended one
//! line to the run's journal (the catch-up reads only that line), and `hook Stop` with the
//! catch-up removed first (the full read every hook did before), for comparison.

use std::{ffi::OsString, path::Path};

use serde_json::json;

use crate::{
    Result,
    bench::{
        effects::checkpoint,
        fixtures,
        harness::{Case, Expect, Setup},
        report::Target,
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
const SESSION: &str = "0b3c6e0e-bench-4d5e-9f00-5e5510a5e5ab";
const RUN: &str = "wf_bench-run";

fn key(n: usize, kind: &str) -> String {
    format!("workflow-run/{n}/{kind}")
}

/// The cases: for each size, a project whose launched run has that many agents in two phases
/// (all started, all but the last finished, each result a paragraph), caught up once; none
/// unless one is `wanted`.
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
        let project = dir.join(format!("workflow-run-{n}"));
        fixtures::fresh_dir(&project)?;
        fixtures::git(&project, &["init", "--quiet"])?;
        fixtures::write_file(
            &project.join("flow.js"),
            "export const meta = { name: 'bench', description: 'Many agents', phases: [{ title: 'Design' }, { title: 'Build' }] };\n",
        )?;
        // The client's files live outside the project, as under `~/.claude/projects/`.
        let home = dir.join(format!("workflow-run-{n}-home"));
        fixtures::fresh_dir(&home)?;
        let transcript = home.join(format!("{SESSION}.jsonl"));
        let run_dir = home.join(SESSION).join("subagents/workflows").join(RUN);
        let mut journal = String::from("{\"type\":\"launched\"}\n");
        for k in 0..n {
            let phase = if k < n / 10 { "Design" } else { "Build" };
            journal.push_str(&format!(
                "{{\"type\":\"started\",\"agentId\":\"agent{k}\",\"label\":\"{}:{k}\",\"phase\":\"{phase}\"}}\n",
                phase.to_lowercase()
            ));
        }
        let result = "A paragraph of what the agent did and found. ".repeat(20);
        for k in 0..n - 1 {
            journal.push_str(&format!(
                "{{\"type\":\"result\",\"agentId\":\"agent{k}\",\"result\":\"{k}: {result}\"}}\n"
            ));
        }
        std::fs::create_dir_all(&run_dir)
            .map_err(|err| format!("failed to create `{}`: {err}", run_dir.display()))?;
        let journal_path = run_dir.join("journal.jsonl");
        fixtures::write_file(&journal_path, &journal)?;
        let payload = |event: &str, extra: serde_json::Value| {
            let mut payload = json!({
                "session_id": SESSION,
                "transcript_path": transcript,
                "cwd": project,
                "hook_event_name": event,
            });
            payload
                .as_object_mut()
                .expect("an object")
                .extend(extra.as_object().expect("an object").clone());
            format!("{payload}\n")
        };
        let launch = payload(
            "PostToolUse",
            json!({
                "tool_name": "Workflow", "tool_use_id": "toolu_bench",
                "tool_input": { "scriptPath": "flow.js" },
                "tool_response": {
                    "status": "async_launched", "runId": RUN, "transcriptDir": run_dir,
                    "scriptPath": "flow.js",
                },
            }),
        );
        checkpoint(binary, &project, &["hook", "PostToolUse"], Some(&launch))?;
        let last = n - 1;
        let payloads = [
            (
                "stop",
                payload("Stop", json!({ "stop_hook_active": false })),
            ),
            (
                "subagent-stop",
                payload(
                    "SubagentStop",
                    json!({
                        "agent_id": format!("agent{last}"), "agent_type": "workflow-subagent",
                        "stop_hook_active": false,
                        "agent_transcript_path": run_dir.join(format!("agent-agent{last}.jsonl")),
                        "last_assistant_message": "the last agent's result",
                    }),
                ),
            ),
            (
                "stop-full",
                payload("Stop", json!({ "stop_hook_active": false })),
            ),
        ];
        // A line the client appends between two hooks (a progress line of the run's own).
        let append = format!(
            "printf '%s\\n' '{{\"type\":\"progress\",\"agentId\":\"agent0\"}}' >> {}",
            crate::shell_quote(&journal_path.to_string_lossy())
        );
        let catchup = project.join(".claude/checkpoints");
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
                cwd: project.clone(),
                stdin: Some(file),
                setup: Some(Setup::Run {
                    program: "/bin/sh".into(),
                    args: vec![OsString::from("-c"), OsString::from(script)],
                    cwd: project.clone(),
                }),
                expect: Expect::Anything,
            });
        }
    }
    Ok(cases)
}

/// The goals: each caught-up hook under [`GOAL_SECS`] at 1,000 agents, and the medians at
/// each size, so that flat shows.
pub(crate) fn targets(lookup: &Lookup<'_>) -> Vec<Target> {
    KINDS
        .iter()
        .map(|(kind, label)| {
            let medians: Vec<String> = SIZES
                .iter()
                .filter_map(|n| {
                    let secs = lookup.median(&key(*n, kind))?;
                    Some(format!("{}: {:.1} ms", thousands(*n as u64), secs * 1e3))
                })
                .collect();
            let largest = lookup.median(&key(1_000, kind));
            Target {
                text: format!(
                    "{label} of a `Workflow` run, at 10, 100 and 1,000 agents (goal for the caught-up hooks: under {:.0} ms at 1,000)",
                    GOAL_SECS * 1e3
                ),
                measured: if medians.is_empty() {
                    "–".into()
                } else {
                    medians.join(", ")
                },
                met: if *kind == "stop-full" {
                    None
                } else {
                    largest.map(|secs| secs <= GOAL_SECS)
                },
                guard: false,
            }
        })
        .collect()
}
