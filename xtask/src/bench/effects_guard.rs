//! The never-twice guard on the hot path (issue 29): `hook PreToolUse` of a Bash call, which
//! Claude Code runs before every Bash command, with 0, 100 and 1,000 recorded effects, for a
//! command that is no effect, an effect never seen, and a repeat of a recorded one; next to
//! `/bin/true`. The effects are recorded as a session records them, by `hook PostToolUse`.
//!
//! And the writes of an effect call let through (issue 38): its intent journaled by `hook
//! PreToolUse` (`guard/<n>/intent`, the previous intent settled untimed before each run), and
//! its outcome settling the intent in `hook PostToolUse` (`record/<n>/settle`, the intent
//! journaled untimed before each run).

use std::{
    ffi::OsString,
    path::Path,
    process::{Command, Stdio},
};

use serde_json::json;

use crate::{
    Result,
    bench::{
        fixtures,
        harness::{Case, Expect, Setup},
        report::{TRUE_KEY, Target},
        targets::Lookup,
        thousands,
    },
};

/// The numbers of recorded effects measured.
const SIZES: [usize; 3] = [0, 100, 1_000];
/// The goal of each case against `/bin/true`.
const GOAL: f64 = 1.15;
/// How much slower 1,000 effects may make a case than none (paired ratio, for noise): flat.
const FLAT: f64 = 1.05;

/// The kinds of Bash command measured, with the command and what the hook must print.
const KINDS: [(&str, &str, &str, Expect); 3] = [
    (
        "other",
        "a command that is no effect",
        "cargo test --quiet",
        Expect::Nothing,
    ),
    (
        "new",
        "an effect never recorded",
        "git push origin release",
        Expect::Nothing,
    ),
    (
        "repeat",
        "a repeat of a recorded effect",
        "git push origin branch-0",
        Expect::Contains("permissionDecision"),
    ),
];

/// Whether any case of this module is wanted.
pub(crate) fn wanted(wanted: &dyn Fn(&str) -> bool) -> bool {
    SIZES
        .iter()
        .flat_map(|n| {
            KINDS
                .map(|(kind, ..)| key(*n, kind))
                .into_iter()
                .chain([format!("guard/{n}/intent"), format!("record/{n}/settle")])
        })
        .any(|key| wanted(&key))
}

/// The cases: for each size, a project whose workflow has that many recorded `git push`es on
/// its phase in progress, and each kind of command's `PreToolUse` payload.
pub(crate) fn cases(dir: &Path, binary: &Path) -> Result<Vec<Case>> {
    let payloads = dir.join("payloads");
    std::fs::create_dir_all(&payloads)
        .map_err(|err| format!("failed to create `{}`: {err}", payloads.display()))?;
    let mut cases = Vec::new();
    for n in SIZES {
        eprintln!("  the guard with {} recorded effects", thousands(n as u64));
        let project = dir.join(format!("effects-{n}"));
        fixtures::fresh_dir(&project)?;
        fixtures::git(&project, &["init", "--quiet"])?;
        checkpoint(
            binary,
            &project,
            &["init", "bench", "--phase", "deploy"],
            None,
        )?;
        checkpoint(binary, &project, &["start", "deploy"], None)?;
        for i in 0..n {
            let command = format!("git push origin branch-{i}");
            let payload = post_tool_use(&project, &command, i);
            checkpoint(binary, &project, &["hook", "PostToolUse"], Some(&payload))?;
        }
        cases.extend(write_cases(dir, binary, &project, n)?);
        for (kind, what, command, expect) in KINDS {
            if n == 0 && kind == "repeat" {
                continue;
            }
            let payload = dir
                .join("payloads")
                .join(format!("effects-{n}-{kind}.json"));
            fixtures::write_file(&payload, &pre_tool_use(&project, command))?;
            cases.push(Case {
                key: key(n, kind),
                label: format!(
                    "`hook PreToolUse` of Bash, {what}, {} recorded effects",
                    thousands(n as u64)
                ),
                program: binary.to_owned(),
                args: vec![OsString::from("hook"), OsString::from("PreToolUse")],
                cwd: project.clone(),
                stdin: Some(payload),
                setup: None,
                expect,
            });
        }
    }
    Ok(cases)
}

/// The intent's write (`PreToolUse` of a new effect) and the outcome's (`PostToolUse` settling
/// it), each prepared by the other, untimed.
fn write_cases(dir: &Path, binary: &Path, project: &Path, n: usize) -> Result<Vec<Case>> {
    let command = "git push origin intent";
    let pre = dir
        .join("payloads")
        .join(format!("effects-{n}-intent-pre.json"));
    let failed = dir
        .join("payloads")
        .join(format!("effects-{n}-intent-failed.json"));
    let post = dir
        .join("payloads")
        .join(format!("effects-{n}-settle-post.json"));
    fixtures::write_file(&pre, &pre_tool_use(project, command))?;
    let mut failure = hook_payload(project, "PostToolUseFailure");
    failure["tool_name"] = "Bash".into();
    failure["tool_input"] = json!({ "command": command, "description": "bench" });
    failure["tool_use_id"] = "toolu_bench_pre".into();
    failure["error"] = "Exit code 1".into();
    fixtures::write_file(&failed, &format!("{failure}\n"))?;
    let mut done = serde_json::from_str::<serde_json::Value>(&post_tool_use(project, command, 0))
        .map_err(|err| format!("a bench payload: {err}"))?;
    done["tool_use_id"] = "toolu_bench_pre".into();
    fixtures::write_file(&post, &format!("{done}\n"))?;
    // Each run's preparation is the other hook, fed its payload by a shell.
    let hook = |event: &str, payload: &Path| Setup::Run {
        program: "/bin/sh".into(),
        args: vec![
            "-c".into(),
            format!(
                "'{}' hook {event} < '{}' > /dev/null",
                binary.display(),
                payload.display()
            )
            .into(),
        ],
        cwd: project.to_owned(),
    };
    let effects = thousands(n as u64);
    Ok(vec![
        Case {
            key: format!("guard/{n}/intent"),
            label: format!(
                "`hook PreToolUse` of Bash, an effect let through (its intent journaled), {effects} recorded effects"
            ),
            program: binary.to_owned(),
            args: vec![OsString::from("hook"), OsString::from("PreToolUse")],
            cwd: project.to_owned(),
            stdin: Some(pre.clone()),
            setup: Some(hook("PostToolUseFailure", &failed)),
            expect: Expect::Nothing,
        },
        Case {
            key: format!("record/{n}/settle"),
            label: format!(
                "`hook PostToolUse` of Bash, an effect's outcome settling its intent, {effects} recorded effects"
            ),
            program: binary.to_owned(),
            args: vec![OsString::from("hook"), OsString::from("PostToolUse")],
            cwd: project.to_owned(),
            stdin: Some(post),
            setup: Some(hook("PreToolUse", &pre)),
            expect: Expect::Nothing,
        },
    ])
}

/// The goals: every case within [`GOAL`]× of `/bin/true`, and flat from 0 (or 100, for the
/// repeat) to 1,000 effects.
pub(crate) fn targets(lookup: &Lookup<'_>) -> Vec<Target> {
    let mut targets = Vec::new();
    for (kind, what, ..) in KINDS {
        let ratios: Vec<String> = SIZES
            .iter()
            .filter_map(|n| {
                let ratio = lookup.ratio(&key(*n, kind), TRUE_KEY)?;
                Some(format!("{}: {ratio:.2}×", thousands(*n as u64)))
            })
            .collect();
        let worst = SIZES
            .iter()
            .filter_map(|n| lookup.ratio(&key(*n, kind), TRUE_KEY))
            .reduce(f64::max);
        targets.push(Target::worst(
            format!("the guard (`hook PreToolUse` of Bash), {what}, within {GOAL}× of `/bin/true`"),
            &ratios,
            worst,
            GOAL,
        ));
        let smallest = if kind == "repeat" { 100 } else { 0 };
        let flat = lookup.ratio(&key(1_000, kind), &key(smallest, kind));
        targets.push(Target::flat(
            format!(
                "the guard, {what}: 1,000 effects not slower than {smallest} (paired ratio ≤ {FLAT}, for noise)"
            ),
            flat,
            FLAT,
        ));
    }
    targets
}

fn key(n: usize, kind: &str) -> String {
    format!("guard/{n}/{kind}")
}

fn hook_payload(project: &Path, event: &str) -> serde_json::Value {
    json!({
        "session_id": "0b3c6e0e-bench-4d5e-9f00-5e5510a5e5ab",
        "transcript_path": project.join("transcript.jsonl"),
        "cwd": project,
        "hook_event_name": event,
        "permission_mode": "default",
    })
}

/// Claude Code's `PreToolUse` payload for a Bash call of `command`.
fn pre_tool_use(project: &Path, command: &str) -> String {
    let mut payload = hook_payload(project, "PreToolUse");
    payload["tool_name"] = "Bash".into();
    payload["tool_input"] = json!({ "command": command, "description": "bench" });
    payload["tool_use_id"] = "toolu_bench_pre".into();
    format!("{payload}\n")
}

/// Claude Code's `PostToolUse` payload for a Bash call of `command` that succeeded.
fn post_tool_use(project: &Path, command: &str, i: usize) -> String {
    let mut payload = hook_payload(project, "PostToolUse");
    payload["tool_name"] = "Bash".into();
    payload["tool_input"] = json!({ "command": command, "description": "bench" });
    payload["tool_response"] = json!({
        "stdout": "",
        "stderr": format!("To example.invalid:bench.git\n * [new branch]      branch-{i} -> branch-{i}\n"),
        "interrupted": false,
        "isImage": false,
    });
    payload["tool_use_id"] = format!("toolu_bench_{i}").into();
    format!("{payload}\n")
}

/// Runs `checkpoint args` in `project` with `stdin`; a hook must also print no warning.
pub(crate) fn checkpoint(
    binary: &Path,
    project: &Path,
    args: &[&str],
    stdin: Option<&str>,
) -> Result {
    let mut child = Command::new(binary)
        .args(args)
        .current_dir(project)
        .env_remove("CHECKPOINT_DIR")
        .env_remove("CHECKPOINT_WORKFLOW")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| format!("failed to run `{}`: {err}", binary.display()))?;
    let mut input = child.stdin.take().expect("stdin is piped");
    std::io::Write::write_all(&mut input, stdin.unwrap_or_default().as_bytes())
        .map_err(|err| format!("failed to write a payload: {err}"))?;
    drop(input);
    let output = child
        .wait_with_output()
        .map_err(|err| format!("failed to wait for `{}`: {err}", binary.display()))?;
    if output.status.success() && output.stderr.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "`checkpoint {}` in `{}` failed ({}):\n{}",
            args.join(" "),
            project.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}
