//! The incremental catch-up of a Claude Code `Workflow` run (`claude-run.catchup`): each hook
//! reads only what the client appended since the last one, and the result is the one a full
//! read of the run's files gives, after a torn save, a save lost to a kill, a line still being
//! written, and a journal the client rewrote.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::TestEnv;

const SESSION: &str = "11111111-2222-3333-4444-555555555555";
const RUN: &str = "wf_catchup-1";
const CATCHUP: &str = "claude-run.catchup";

/// A project with a launched run of the two-phase script, its run directory empty.
struct Run {
    env: TestEnv,
}

impl Run {
    fn new() -> Self {
        let env = TestEnv::new();
        std::fs::write(
            env.project().join("flow.js"),
            "export const meta = { name: 'big', description: 'Many agents', phases: [{ title: 'Design' }, { title: 'Build' }] };\n",
        )
        .unwrap();
        let run = Self { env };
        std::fs::create_dir_all(run.run_dir()).unwrap();
        run.append("{\"type\":\"launched\"}\n");
        run.launch();
        run
    }

    /// The hook of the run's launch.
    fn launch(&self) {
        self.hook(
            "PostToolUse",
            json!({
                "tool_name": "Workflow", "tool_use_id": "toolu_1",
                "tool_input": { "scriptPath": "flow.js" },
                "tool_response": {
                    "status": "async_launched", "runId": RUN, "transcriptDir": self.run_dir(),
                    "scriptPath": "flow.js",
                },
            }),
        );
    }

    fn run_dir(&self) -> PathBuf {
        self.env
            .dir
            .path()
            .join("home/projects/p")
            .join(SESSION)
            .join("subagents/workflows")
            .join(RUN)
    }

    fn workflow_dir(&self) -> PathBuf {
        let id = self.env.json(&["list"])["workflows"][0]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        self.env.workflow_dir(&id)
    }

    fn append(&self, text: &str) {
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.run_dir().join("journal.jsonl"))
            .unwrap();
        file.write_all(text.as_bytes()).unwrap();
    }

    #[track_caller]
    fn hook(&self, event: &str, extra: Value) {
        self.hook_stderr(event, extra);
    }

    /// [`Run::hook`], returning what it said on stderr.
    #[track_caller]
    fn hook_stderr(&self, event: &str, extra: Value) -> String {
        let mut payload = json!({
            "session_id": SESSION,
            "transcript_path": self.env.dir.path().join(format!("home/projects/p/{SESSION}.jsonl")),
            "cwd": self.env.project(),
            "hook_event_name": event,
        });
        payload
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let (code, _, stderr) = self.env.hook(event, &payload.to_string()).wait();
        assert_eq!(code, 0, "{stderr}");
        stderr
    }

    /// A turn's end, which brings the run up to date from its files.
    fn stop(&self) {
        self.hook("Stop", json!({ "stop_hook_active": false }));
    }

    /// What the workflow holds of the run: each phase's status and each task's title, status,
    /// note and agent; and the kept results.
    fn seen(&self) -> (Vec<Value>, Vec<(String, String)>) {
        let dir = self.workflow_dir();
        let state: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("state.json")).unwrap())
                .unwrap();
        let phases = state["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|phase| {
                json!({
                    "id": phase["id"], "status": phase["status"],
                    "tasks": phase["tasks"].as_array().map(|tasks| tasks.iter().map(|task| json!([
                        task["title"], task["status"], task["note"], task["agent_id"]
                    ])).collect::<Vec<_>>()),
                })
            })
            .collect();
        (phases, results(&dir.join("results")))
    }
}

/// Every file under `dir` with its text, sorted.
fn results(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(results(&path));
        } else {
            out.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&path).unwrap(),
            ));
        }
    }
    out.sort();
    out
}

fn started(k: usize, phase: &str) -> String {
    format!(
        "{{\"type\":\"started\",\"agentId\":\"agent{k}\",\"label\":\"{}:{k}\",\"phase\":\"{phase}\"}}\n",
        phase.to_lowercase()
    )
}

fn result(k: usize) -> String {
    format!("{{\"type\":\"result\",\"agentId\":\"agent{k}\",\"result\":\"result of agent {k}\"}}\n")
}

/// One step of the scenario, on `run`; `full` removes the catch-up first (a full read).
fn step(run: &Run, n: usize, full: bool, damage: &dyn Fn(&Run, usize)) {
    let catchup = run.workflow_dir().join(CATCHUP);
    if full {
        let _ = std::fs::remove_file(&catchup);
    }
    damage(run, n);
    run.stop();
    if !full {
        assert!(catchup.exists(), "step {n}: the catch-up is saved");
    }
}

/// The scenario: 3 design agents, then 12 build agents, started and finished in batches, some
/// of whose lines are still being written when a hook runs.
fn scenario(run: &Run, full: bool, damage: &dyn Fn(&Run, usize)) {
    let mut n = 0;
    for k in 0..3 {
        run.append(&started(k, "Design"));
    }
    step(run, n, full, damage);
    for k in 0..3 {
        run.append(&result(k));
        n += 1;
        step(run, n, full, damage);
    }
    for batch in 0..3 {
        for k in 3 + batch * 4..7 + batch * 4 {
            run.append(&started(k, "Build"));
        }
        // A line the client is still writing when the hook reads.
        let line = result(3 + batch * 4);
        run.append(&line[..10]);
        n += 1;
        step(run, n, full, damage);
        run.append(&line[10..]);
        for k in 4 + batch * 4..7 + batch * 4 {
            run.append(&result(k));
        }
        n += 1;
        step(run, n, full, damage);
    }
}

/// What a step does to the run's files before its hook.
type Damage = dyn Fn(&Run, usize);

fn no_damage(_: &Run, _: usize) {}

#[test]
fn the_incremental_catch_up_gives_what_a_full_read_gives() {
    let full = Run::new();
    scenario(&full, true, &no_damage);
    let expected = full.seen();
    // The scenario ends with every agent done and both phases complete.
    assert_eq!(expected.1.len(), 15, "{:?}", expected.1);
    let tasks: usize = expected
        .0
        .iter()
        .map(|phase| phase["tasks"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(tasks, 15, "{:?}", expected.0);

    let incremental = Run::new();
    scenario(&incremental, false, &no_damage);
    assert_eq!(incremental.seen(), expected);

    // A torn save (the catch-up cut anywhere, or emptied) is a full read: the same result.
    let torn = Run::new();
    scenario(&torn, false, &|run: &Run, n: usize| {
        let path = run.workflow_dir().join(CATCHUP);
        if let Ok(text) = std::fs::read(&path) {
            std::fs::write(&path, &text[..text.len() * n / 11]).unwrap();
        }
    });
    assert_eq!(torn.seen(), expected);

    // A save lost to a kill (the catch-up of an earlier hook): the lines after it are read
    // again and nothing is counted twice.
    let killed = Run::new();
    let kept = std::cell::RefCell::new(None::<Vec<u8>>);
    scenario(&killed, false, &|run: &Run, n: usize| {
        let path = run.workflow_dir().join(CATCHUP);
        if n % 3 == 1 {
            *kept.borrow_mut() = std::fs::read(&path).ok();
        } else if n.is_multiple_of(3)
            && let Some(old) = kept.borrow().as_ref()
        {
            std::fs::write(&path, old).unwrap();
        }
    });
    assert_eq!(killed.seen(), expected);

    // A journal the client rewrote (replaced by a copy of itself): read again from the start.
    let rewritten = Run::new();
    scenario(&rewritten, false, &|run: &Run, n: usize| {
        if n == 4 {
            let journal = run.run_dir().join("journal.jsonl");
            let text = std::fs::read(&journal).unwrap();
            let copy = run.run_dir().join("journal.copy");
            std::fs::write(&copy, text).unwrap();
            std::fs::rename(&copy, &journal).unwrap();
        }
    });
    assert_eq!(rewritten.seen(), expected);
}

#[test]
fn a_hook_reads_only_what_was_appended_since_the_last_one() {
    let run = Run::new();
    for k in 0..3 {
        run.append(&started(k, "Design"));
    }
    run.stop();
    let catchup: Value =
        serde_json::from_str(&std::fs::read_to_string(run.workflow_dir().join(CATCHUP)).unwrap())
            .unwrap();
    let journal_len = std::fs::metadata(run.run_dir().join("journal.jsonl"))
        .unwrap()
        .len();
    assert_eq!(catchup["offset"], journal_len);
    // The agents placed in a task are the workflow's: the catch-up keeps none of them, so it
    // does not grow with the run.
    assert_eq!(catchup["agents"], json!([]), "{catchup}");
    // A hook that reads nothing new leaves the file as it is (no rewrite: the same inode).
    let inode = |run: &Run| {
        std::os::unix::fs::MetadataExt::ino(
            &std::fs::metadata(run.workflow_dir().join(CATCHUP)).unwrap(),
        )
    };
    let before = inode(&run);
    run.stop();
    assert_eq!(
        inode(&run),
        before,
        "the unchanged catch-up was written again"
    );
    // What the catch-up says is what the next hook goes on from: an agent it names (and the
    // journal does not) is taken as seen, so the journal before the offset was not read again.
    let mut edited = catchup.clone();
    edited["agents"] = json!([{
        "id": "agent99", "label": "design:renamed", "phase": "Design", "state": "started",
    }]);
    std::fs::write(
        run.workflow_dir().join(CATCHUP),
        serde_json::to_string(&edited).unwrap(),
    )
    .unwrap();
    run.append(&result(1));
    run.stop();
    let (phases, _) = run.seen();
    let text = serde_json::to_string(&phases).unwrap();
    assert!(text.contains("agent99"), "{text}");
}

/// A journal line of `len` bytes (39, at least 48, or 1: an empty line) that names no agent's
/// state: a progress line of the client's own.
fn progress(len: usize) -> String {
    if len == 1 {
        return "\n".to_owned();
    }
    let bare = "{\"type\":\"progress\",\"agentId\":\"agent0\"}";
    if len == bare.len() + 1 {
        return format!("{bare}\n");
    }
    let pad = "x".repeat(len - bare.len() - 10);
    let line = format!("{},\"pad\":\"{pad}\"}}\n", &bare[..bare.len() - 1]);
    assert_eq!(line.len(), len);
    line
}

#[test]
fn a_hook_after_a_short_line_reads_only_what_was_appended_since() {
    let run = Run::new();
    for k in 0..3 {
        run.append(&started(k, "Design"));
    }
    run.stop();
    // Lines shorter than the bytes a saved point is checked by (64), as long and longer, and
    // an empty one: each read by a hook, then another like it by the next.
    for len in [1, 39, 50, 63, 64, 65, 200] {
        run.append(&progress(len));
        run.stop();
        // The next hook goes on from the point this one saved: an agent the catch-up names
        // (and the journal does not) is taken as seen, which a full read would not.
        let path = run.workflow_dir().join(CATCHUP);
        let mut catchup: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let planted = format!("planted{len}");
        catchup["agents"].as_array_mut().unwrap().push(json!({
            "id": planted, "label": format!("design:{planted}"), "phase": "Design",
            "state": "started",
        }));
        std::fs::write(&path, serde_json::to_string(&catchup).unwrap()).unwrap();
        run.append(&progress(len));
        run.stop();
        let (phases, _) = run.seen();
        let text = serde_json::to_string(&phases).unwrap();
        assert!(
            text.contains(&planted),
            "a line of {len} bytes: the next hook read the whole journal again: {text}"
        );
    }
}

#[test]
fn a_journal_cut_rewritten_or_replaced_is_read_again_from_the_start() {
    fn journal(run: &Run) -> PathBuf {
        run.run_dir().join("journal.jsonl")
    }
    // Cut in place to its first lines (the same file, shorter than the point read).
    let cut = |run: &Run, n: usize| {
        if n == 4 {
            let text = std::fs::read_to_string(journal(run)).unwrap();
            let kept: String = text.split_inclusive('\n').take(3).collect();
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(journal(run))
                .unwrap();
            file.set_len(kept.len() as u64).unwrap();
        }
    };
    // Rewritten in place, as long, its last lines naming other agents.
    let rewritten = |run: &Run, n: usize| {
        if n == 5 {
            let text = std::fs::read_to_string(journal(run)).unwrap();
            let at = text.len() - 100;
            let changed = format!("{}{}", &text[..at], text[at..].replace("agent", "agenT"));
            std::fs::write(journal(run), changed).unwrap();
        }
    };
    // Replaced by another file (another inode) holding the first agents only.
    let replaced = |run: &Run, n: usize| {
        if n == 6 {
            let copy = run.run_dir().join("journal.copy");
            std::fs::write(&copy, format!("{}{}", started(0, "Design"), result(0))).unwrap();
            std::fs::rename(&copy, journal(run)).unwrap();
        }
    };
    let damages: [&Damage; 3] = [&cut, &rewritten, &replaced];
    for (k, damage) in damages.into_iter().enumerate() {
        let full = Run::new();
        scenario(&full, true, damage);
        let incremental = Run::new();
        scenario(&incremental, false, damage);
        assert_eq!(incremental.seen(), full.seen(), "damage {k}");
    }
}

/// `SubagentStop` of agent `k` of the run.
fn subagent_stop(run: &Run, k: usize) -> String {
    json!({
        "session_id": SESSION,
        "transcript_path": run.env.dir.path().join(format!("home/projects/p/{SESSION}.jsonl")),
        "cwd": run.env.project(),
        "hook_event_name": "SubagentStop",
        "agent_id": format!("agent{k}"), "agent_type": "workflow-subagent",
        "stop_hook_active": false,
        "agent_transcript_path": run.run_dir().join(format!("agent-agent{k}.jsonl")),
        "last_assistant_message": format!("result of agent {k}"),
    })
    .to_string()
}

/// Agents finishing, each hook started as its result is written: all at once when `at_once`,
/// else one after the other; then a batch more, read by the next turn's end from the
/// catch-up the hooks left.
fn finishing(run: &Run, at_once: bool) {
    for k in 0..3 {
        run.append(&started(k, "Design"));
        run.append(&result(k));
    }
    for k in 3..11 {
        run.append(&started(k, "Build"));
    }
    run.stop();
    let mut hooks = Vec::new();
    for k in 3..11 {
        run.append(&result(k));
        let hook = run.env.hook("SubagentStop", &subagent_stop(run, k));
        if at_once {
            hooks.push(hook);
        } else {
            let (code, _, stderr) = hook.wait();
            assert_eq!(code, 0, "{stderr}");
        }
    }
    for hook in hooks {
        let (code, _, stderr) = hook.wait();
        assert_eq!(code, 0, "{stderr}");
        assert!(!stderr.contains("lock"), "{stderr}");
    }
    for k in 11..15 {
        run.append(&started(k, "Build"));
        run.append(&result(k));
    }
    run.stop();
}

#[test]
fn hooks_at_once_lose_nothing_and_the_next_goes_on_from_the_catch_up_they_left() {
    let one_by_one = Run::new();
    finishing(&one_by_one, false);
    let expected = one_by_one.seen();
    assert_eq!(expected.1.len(), 15, "{:?}", expected.1);
    let at_once = Run::new();
    finishing(&at_once, true);
    assert_eq!(at_once.seen(), expected);
}

/// Three design agents started and finished, read by a turn's end.
fn design_done(run: &Run) {
    for k in 0..3 {
        run.append(&started(k, "Design"));
    }
    run.stop();
    for k in 0..3 {
        run.append(&result(k));
    }
}

#[test]
fn a_catch_up_of_another_workflow_or_of_a_later_state_is_read_again_from_the_start() {
    let plain = Run::new();
    design_done(&plain);
    plain.stop();
    let expected = plain.seen();
    assert_eq!(expected.1.len(), 3, "{:?}", expected.1);

    // The workflow's store put back to an earlier state (its journal and state): the catch-up
    // saved since says lines were applied that this state lacks.
    let put_back = Run::new();
    design_done(&put_back);
    let dir = put_back.workflow_dir();
    let kept: Vec<(PathBuf, Vec<u8>)> = ["state.json", "journal.jsonl"]
        .iter()
        .map(|name| (dir.join(name), std::fs::read(dir.join(name)).unwrap()))
        .collect();
    put_back.stop();
    for (path, bytes) in &kept {
        std::fs::write(path, bytes).unwrap();
    }
    put_back.stop();
    assert_eq!(put_back.seen(), expected);

    // Another workflow of the same run (the first removed, the run launched again) finding the
    // first one's catch-up.
    let again = Run::new();
    design_done(&again);
    again.stop();
    let dir = again.workflow_dir();
    let mut catchup: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(CATCHUP)).unwrap()).unwrap();
    // Saved at the first entry, so that only the workflow it was made for tells it apart.
    catchup["seq"] = json!(0);
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(CATCHUP), catchup.to_string()).unwrap();
    again.launch();
    assert_eq!(again.seen(), expected);
}

#[test]
fn a_corrupt_or_older_catch_up_is_rebuilt() {
    let plain = Run::new();
    design_done(&plain);
    plain.stop();
    let expected = plain.seen();
    // The catch-up a hook saved, naming an agent the journal does not (taken as seen when the
    // catch-up is trusted), in another version of the form, or cut.
    let planted = |run: &Run, version: u64| {
        let path = run.workflow_dir().join(CATCHUP);
        let mut catchup: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        catchup["version"] = json!(version);
        catchup["agents"] = json!([{
            "id": "agent99", "label": "design:99", "phase": "Design", "state": "started",
        }]);
        serde_json::to_string(&catchup).unwrap()
    };
    let damages: [&dyn Fn(&Run) -> String; 4] = [
        &|_| "not json".to_owned(),
        // The first version's form, which kept every agent seen.
        &|run| planted(run, 1),
        // A form from the future.
        &|run| planted(run, 3),
        &|run| {
            let text = planted(run, 2);
            text[..text.len() / 2].to_owned()
        },
    ];
    for (k, damage) in damages.iter().enumerate() {
        let run = Run::new();
        design_done(&run);
        let text = damage(&run);
        std::fs::write(run.workflow_dir().join(CATCHUP), text).unwrap();
        run.stop();
        assert_eq!(run.seen(), expected, "catch-up {k}");
        let saved: Value = serde_json::from_str(
            &std::fs::read_to_string(run.workflow_dir().join(CATCHUP)).unwrap(),
        )
        .unwrap();
        assert_eq!(
            saved["version"], 2,
            "catch-up {k}: rebuilt in the current form"
        );
    }
}

#[test]
fn an_agent_named_by_its_meta_file_is_not_read_again_once_placed() {
    let run = Run::new();
    // 2.1.197's form: the started line names no label nor phase; the meta file does.
    run.append("{\"type\":\"started\",\"agentId\":\"agent0\"}\n");
    let meta = run.run_dir().join("agent-agent0.meta.json");
    std::fs::write(
        &meta,
        r#"{"description":"design:0","workflowPhase":"Design"}"#,
    )
    .unwrap();
    run.stop();
    let (phases, _) = run.seen();
    assert!(
        serde_json::to_string(&phases).unwrap().contains("agent0"),
        "{phases:?}"
    );
    // Its task is the workflow's now: its meta file is not read again, whatever it became,
    // with the catch-up or without it (a full read).
    std::fs::write(&meta, "not json").unwrap();
    run.append(&result(0));
    let stderr = run.hook_stderr("Stop", json!({ "stop_hook_active": false }));
    assert!(!stderr.contains("meta"), "{stderr}");
    std::fs::remove_file(run.workflow_dir().join(CATCHUP)).unwrap();
    let stderr = run.hook_stderr("Stop", json!({ "stop_hook_active": false }));
    assert!(!stderr.contains("meta"), "{stderr}");
    let (phases, results) = run.seen();
    assert_eq!(phases[0]["tasks"][0][1], "done", "{phases:?}");
    assert_eq!(results.len(), 1, "{results:?}");
}
