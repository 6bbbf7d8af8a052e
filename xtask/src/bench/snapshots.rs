//! Snapshots of the working tree (issue 41): a snapshot (`checkpoint snapshot`) in a repository
//! of 10,000 and of 100,000 files, with nothing changed and with 10 files changed since the last
//! snapshot, paired against `git status --porcelain` in the same repository with the same
//! change; and `hook Stop` with its snapshot, against the same hook with snapshots turned off.

use std::{ffi::OsString, path::Path};

use serde_json::json;

use crate::{
    Result,
    bench::{
        fixtures,
        harness::{Case, Expect, Setup},
        report::Target,
        targets::Lookup,
        thousands,
    },
};

/// A turn-end snapshot with 10 files changed, against `git status --porcelain`.
const CHANGED_GOAL: f64 = 1.5;
/// A snapshot with nothing changed, against `git status --porcelain`.
const UNCHANGED_GOAL: f64 = 1.2;
/// The `Stop` hook with its snapshot, at 10,000 files, in milliseconds.
const STOP_GOAL_MS: f64 = 100.0;
/// Files per directory of the fixture.
const PER_DIR: usize = 100;

/// Whether any case of this module is wanted.
pub(crate) fn wanted(wanted: &dyn Fn(&str) -> bool) -> bool {
    [10_000, 100_000]
        .iter()
        .flat_map(|n| KINDS.map(|kind| key(*n, kind)))
        .any(|key| wanted(&key))
}

const KINDS: [&str; 6] = [
    "status",
    "unchanged",
    "status-10",
    "changed-10",
    "stop-10",
    "stop-off-10",
];

/// The cases of a repository of `n` files for each size, 10,000 and 100,000 (a quick run too:
/// the issue asks for both).
pub(crate) fn cases(dir: &Path, binary: &Path) -> Result<Vec<Case>> {
    let mut cases = Vec::new();
    for n in [10_000, 100_000] {
        eprintln!(
            "  snapshots in a repository of {} files",
            thousands(n as u64)
        );
        let project = dir.join(format!("snapshots-{n}"));
        fixtures::fresh_dir(&project)?;
        for i in 0..n {
            let sub = project.join(format!("d{}", i / PER_DIR));
            if i % PER_DIR == 0 {
                std::fs::create_dir_all(&sub)
                    .map_err(|err| format!("failed to create `{}`: {err}", sub.display()))?;
            }
            fixtures::write_file(&sub.join(format!("f{i}.txt")), &format!("file {i}\nline\n"))?;
        }
        fixtures::git(&project, &["init", "--quiet"])?;
        fixtures::git(&project, &["add", "-A"])?;
        fixtures::git(&project, &["commit", "--quiet", "-m", "fixture"])?;
        let ck = binary.display().to_string();
        // A snapshot first, so that exactly what the case says changed since the last one; the
        // hooks' snapshots on, except for the hook without them.
        let prepare = |change: bool, hook_snapshots: bool| {
            let mut script = format!(
                "'{ck}' init bench --phase p >/dev/null 2>&1; '{ck}' snapshot >/dev/null 2>&1; \
                 printf '[files]\\nsnapshots = {hook_snapshots}\\n' > .claude/checkpoints/config.toml"
            );
            if change {
                script.push_str(&format!(
                    "; s=$(date +%s%N); for i in 0 1 2 3 4 5 6 7 8 9; do echo \"$s\" >> d$i/f$((i * {PER_DIR})).txt; done"
                ));
            }
            Some(Setup::Run {
                program: "sh".into(),
                args: vec!["-c".into(), script.into()],
                cwd: project.clone(),
            })
        };
        let payload = dir.join(format!("payloads/snapshots-{n}-stop.json"));
        std::fs::create_dir_all(payload.parent().expect("a payload has a directory"))
            .map_err(|err| format!("failed to create the payloads' directory: {err}"))?;
        let stop = json!({
            "session_id": "0b3c6e0e-bench-4d5e-9f00-5e5510a5e5ab",
            "transcript_path": project.join("transcript.jsonl"),
            "cwd": project,
            "hook_event_name": "Stop",
            "stop_hook_active": false,
        });
        fixtures::write_file(&payload, &format!("{stop}\n"))?;
        let size = thousands(n as u64);
        let status = |key: &str, label: String, change: bool| Case {
            key: key.to_owned(),
            label,
            program: "git".into(),
            args: vec!["status".into(), "--porcelain".into()],
            cwd: project.clone(),
            stdin: None,
            setup: prepare(change, true),
            expect: Expect::Anything,
        };
        let checkpoint = |key: &str, label: String, args: &[&str], stdin: Option<&Path>| Case {
            key: key.to_owned(),
            label,
            program: binary.to_owned(),
            args: args.iter().map(OsString::from).collect(),
            cwd: project.clone(),
            stdin: stdin.map(Path::to_path_buf),
            setup: prepare(key.ends_with("-10"), !key.contains("-off")),
            expect: Expect::Anything,
        };
        cases.push(status(
            &key(n, "status"),
            format!("`git status --porcelain`, {size} files, nothing changed"),
            false,
        ));
        cases.push(checkpoint(
            &key(n, "unchanged"),
            format!("`checkpoint snapshot`, {size} files, nothing changed"),
            &["snapshot"],
            None,
        ));
        cases.push(status(
            &key(n, "status-10"),
            format!("`git status --porcelain`, {size} files, 10 changed"),
            true,
        ));
        cases.push(checkpoint(
            &key(n, "changed-10"),
            format!("`checkpoint snapshot`, {size} files, 10 changed"),
            &["snapshot"],
            None,
        ));
        cases.push(checkpoint(
            &key(n, "stop-10"),
            format!("`hook Stop` with its snapshot, {size} files, 10 changed"),
            &["hook", "Stop"],
            Some(&payload),
        ));
        cases.push(checkpoint(
            &key(n, "stop-off-10"),
            format!("`hook Stop` with the hooks' snapshots off, {size} files, 10 changed"),
            &["hook", "Stop"],
            Some(&payload),
        ));
    }
    Ok(cases)
}

/// The goals of the issue, for each size measured.
pub(crate) fn targets(lookup: &Lookup<'_>) -> Vec<Target> {
    let mut targets = Vec::new();
    for n in [10_000, 100_000] {
        let size = thousands(n as u64);
        let pairs = [
            ("changed-10", "status-10", CHANGED_GOAL, "10 changed"),
            ("unchanged", "status", UNCHANGED_GOAL, "nothing changed"),
        ];
        for (case, base, goal, what) in pairs {
            let ratio = lookup.ratio(&key(n, case), &key(n, base));
            let Some(ratio) = ratio else { continue };
            targets.push(Target {
                text: format!(
                    "a snapshot, {size} files, {what}: within {goal}× of `git status --porcelain`"
                ),
                measured: format!("{ratio:.2}×"),
                // The 10,000-file goal is the issue's; 100,000 is measured and reported.
                met: (n == 10_000).then_some(ratio <= goal),
                guard: false,
            });
        }
        if let Some(secs) = lookup.median(&key(n, "stop-10")) {
            targets.push(Target {
                text: format!(
                    "`hook Stop` with its snapshot, {size} files, 10 changed: ≤ {STOP_GOAL_MS} ms"
                ),
                measured: format!("{:.1} ms", secs * 1000.0),
                met: (n == 10_000).then_some(secs * 1000.0 <= STOP_GOAL_MS),
                guard: false,
            });
        }
        if let (Some(with), Some(without)) = (
            lookup.median(&key(n, "stop-10")),
            lookup.median(&key(n, "stop-off-10")),
        ) {
            let added = (with - without) * 1000.0;
            targets.push(Target {
                text: format!(
                    "what the snapshot adds to `hook Stop`, {size} files, 10 changed: ≤ {STOP_GOAL_MS} ms"
                ),
                measured: format!("{added:.1} ms"),
                met: (n == 10_000).then_some(added <= STOP_GOAL_MS),
                guard: false,
            });
        }
    }
    targets
}

fn key(n: usize, kind: &str) -> String {
    format!("snapshot/{n}/{kind}")
}
