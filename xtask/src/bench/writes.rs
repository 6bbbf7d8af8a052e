//! The write guard on the hot path (issue 42): `hook PreToolUse` of a `Write`, which Claude Code
//! runs before every file tool's write, with 1 file tracked and 1 session, and with 10,000
//! files tracked and 8 live sessions; for a file nobody wrote and for the writer's own file
//! (its record read, the file hashed); next to `/bin/true`.

use std::{ffi::OsString, path::Path};

use checkpoint_core::{
    store::{Store, StoreOptions},
    writes::{Write, Writer, WriterState},
};
use serde_json::json;

use crate::{
    Result,
    bench::{
        fixtures,
        harness::{Case, Expect},
        report::{TRUE_KEY, Target},
        targets::Lookup,
        thousands,
    },
};

/// (files tracked, live sessions) measured.
const SIZES: [(usize, usize); 2] = [(1, 1), (10_000, 8)];
/// The goal of each case against `/bin/true`.
const GOAL: f64 = 1.15;
/// How much slower 10,000 files and 8 sessions may make a case than 1 and 1 (paired): flat.
const FLAT: f64 = 1.05;
/// The kinds of write measured.
const KINDS: [(&str, &str); 2] = [
    ("untracked", "a file nobody wrote"),
    ("own", "the writer's own file"),
];

/// Whether any case of this module is wanted.
pub(crate) fn wanted(wanted: &dyn Fn(&str) -> bool) -> bool {
    SIZES
        .iter()
        .flat_map(|(files, _)| KINDS.map(|(kind, _)| key(*files, kind)))
        .any(|key| wanted(&key))
}

/// The cases: a project whose store records that many files written by that many sessions.
pub(crate) fn cases(dir: &Path, binary: &Path) -> Result<Vec<Case>> {
    let mut cases = Vec::new();
    for (files, sessions) in SIZES {
        eprintln!(
            "  the write guard with {} tracked files and {sessions} sessions",
            thousands(files as u64)
        );
        let project = dir.join(format!("writes-{files}"));
        fixtures::fresh_dir(&project)?;
        fixtures::git(&project, &["init", "--quiet"])?;
        let project = project
            .canonicalize()
            .map_err(|err| format!("failed to resolve `{}`: {err}", project.display()))?;
        let store_dir = project.join(".claude").join("checkpoints");
        std::fs::create_dir_all(&store_dir)
            .map_err(|err| format!("failed to create `{}`: {err}", store_dir.display()))?;
        seed(&project, &store_dir, files, sessions)?;
        for (kind, what) in KINDS {
            let file = match kind {
                "own" => project.join("src").join("f0.txt"),
                _ => project.join("untracked.txt"),
            };
            let payload = dir.join(format!("writes-{files}-{kind}.json"));
            fixtures::write_file(&payload, &pre_tool_use(&project, &file))?;
            cases.push(Case {
                key: key(files, kind),
                label: format!(
                    "`hook PreToolUse` of Write, {what}, {} files tracked, {sessions} sessions",
                    thousands(files as u64)
                ),
                program: binary.to_owned(),
                args: vec![OsString::from("hook"), OsString::from("PreToolUse")],
                cwd: project.clone(),
                stdin: Some(payload),
                setup: None,
                expect: Expect::Nothing,
            });
        }
    }
    Ok(cases)
}

/// Records `files` files, spread over `sessions` sessions (session 0 wrote `src/f0.txt`), and
/// the sessions as heard now.
fn seed(project: &Path, store_dir: &Path, files: usize, sessions: usize) -> Result {
    let store = Store::new(
        store_dir,
        StoreOptions {
            lock_timeout: std::time::Duration::from_secs(10),
            on_lock_wait: None,
            failpoint: None,
        },
    );
    let src = project.join("src");
    std::fs::create_dir_all(&src)
        .map_err(|err| format!("failed to create `{}`: {err}", src.display()))?;
    let now = chrono::Utc::now();
    let mut paths = Vec::new();
    for n in 0..files {
        let path = src.join(format!("f{n}.txt"));
        let text = format!("file {n}\n");
        fixtures::write_file(&path, &text)?;
        paths.push((
            path.display().to_string(),
            checkpoint_core::writes::content_hash(text.as_bytes()),
        ));
    }
    let keys: Vec<String> = paths.iter().map(|(path, _)| path.clone()).collect();
    let hashes: std::collections::BTreeMap<String, String> = paths.into_iter().collect();
    store
        .update_paths(&keys, |record| {
            let n: usize = record
                .path
                .rsplit('f')
                .next()
                .and_then(|rest| rest.trim_end_matches(".txt").parse().ok())
                .unwrap_or(0);
            let write = Write {
                at: now,
                path: record.path.clone(),
                session: format!("session-{}", n % sessions),
                agent: None,
                agent_type: None,
                phase: None,
                tool: "Write".into(),
                hash: hashes[&record.path].clone(),
                size: 0,
                mtime_ns: 0,
                added: Some(1),
                removed: Some(0),
                also: Vec::new(),
            };
            record.wrote(write.clone());
            vec![write]
        })
        .map_err(|err| format!("failed to seed the write records: {err}"))?;
    store
        .update_writers(|writers| {
            for n in 0..sessions {
                writers.push(WriterState {
                    writer: Writer::new(&format!("session-{n}"), None),
                    agent_type: None,
                    // Heard in the future: no timed run rewrites the table.
                    last: now + chrono::Duration::hours(1),
                    ended: false,
                    checkout: project.display().to_string(),
                    client: "claude".into(),
                });
            }
        })
        .map_err(|err| format!("failed to seed the writers: {err}"))
}

/// The goals: every case within [`GOAL`]× of `/bin/true`, and flat from 1 file and 1 session to
/// 10,000 files and 8 sessions.
pub(crate) fn targets(lookup: &Lookup<'_>) -> Vec<Target> {
    let mut targets = Vec::new();
    for (kind, what) in KINDS {
        let ratios: Vec<String> = SIZES
            .iter()
            .filter_map(|(files, _)| {
                let ratio = lookup.ratio(&key(*files, kind), TRUE_KEY)?;
                Some(format!("{}: {ratio:.2}×", thousands(*files as u64)))
            })
            .collect();
        let worst = SIZES
            .iter()
            .filter_map(|(files, _)| lookup.ratio(&key(*files, kind), TRUE_KEY))
            .reduce(f64::max);
        targets.push(Target::worst(
            format!(
                "the write guard (`hook PreToolUse` of Write), {what}, within {GOAL}× of `/bin/true`"
            ),
            &ratios,
            worst,
            GOAL,
        ));
        let flat = lookup.ratio(&key(10_000, kind), &key(1, kind));
        targets.push(Target::flat(
            format!(
                "the write guard, {what}: 10,000 files and 8 sessions not slower than 1 and 1 (paired ratio ≤ {FLAT}, for noise)"
            ),
            flat,
            FLAT,
        ));
    }
    targets
}

fn key(files: usize, kind: &str) -> String {
    format!("writes/{files}/{kind}")
}

/// Claude Code's `PreToolUse` payload for a `Write` of `file` by session 0.
fn pre_tool_use(project: &Path, file: &Path) -> String {
    let payload = json!({
        "session_id": "session-0",
        "transcript_path": project.join("transcript.jsonl"),
        "cwd": project,
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": "Write",
        "tool_input": {"file_path": file, "content": "new\n"},
        "tool_use_id": "toolu_bench_write",
    });
    format!("{payload}\n")
}
